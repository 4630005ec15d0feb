//! The encoder: a Bloom filter, or a delta between two generations, into a frame.

use core::marker::PhantomData;

use crate::entropy::counter_table::CounterTable;
use crate::entropy::model::{Counts, KnownP};
use crate::entropy::{chunks, coding};
use crate::error::{Error, Result};
use crate::filter::any::FilterRef;
use crate::filter::bits::BitArray;
use crate::filter::counting::CountingBloomFilter;
use crate::filter::{BloomFilter, Params};

use super::auth::{FrameKey, TAG_LEN};
use super::choice::{self, candidates, Order, Predicted};
use super::frame::Frame;
use super::header::FrameHeader;
use super::ids::{Coding, FrameKind};
use super::kind::Filter;

#[cfg(test)]
std::thread_local! {
    /// Payloads coded by this thread's encoders (whole filters or deltas, chunked or not).
    static FRAMES_CODED: core::cell::Cell<u64> = const { core::cell::Cell::new(0) };
}

/// How many payloads the encoders of the calling thread have coded so far: the test that
/// the default encoder codes a filter once reads it before and after.
#[cfg(test)]
pub(super) fn payloads_coded() -> u64 {
    FRAMES_CODED.with(|c| c.get())
}

/// Where the known-p codings take their probability from.
///
/// Codings 2, 3 and 6 take it from here; codings 9, 10 and 11 always send the measured
/// fraction of zeros, which their decoders check (spec §4.4: their models are shared by
/// neighbouring q0, and one filter has one frame per coding).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PSource {
    /// The measured fraction of zero bits (smallest payload).
    #[default]
    Measured,
    /// The theoretical `p` for the filter's n, k and m (`exp(-kn/m)` for a standard filter).
    /// Deltas have no such theory without the fraction of keys that changed: they use the
    /// measured value (or pass one with [`PSource::Fixed`], e.g. from
    /// [`theory::delta_one_fraction`](crate::theory::delta_one_fraction)).
    Theory,
    /// This quantized zero probability, `round(p0 * 2^16)` in `1..=65535`; 0 is read as 1.
    Fixed(u16),
}

/// What an [`Encoder`] was told, whatever the filter kind.
#[derive(Debug, Clone, Default)]
pub(crate) struct Settings {
    pub(super) coding: Option<Coding>,
    pub(super) p_source: PSource,
    pub(super) budget: Option<usize>,
    pub(super) counter_table: Option<CounterTable>,
    pub(super) chunking: Chunking,
    pub(super) threads: Option<usize>,
    pub(super) try_all: bool,
    pub(super) profile: crate::Profile,
    pub(super) metadata: Option<Vec<u8>>,
    pub(super) key: Option<FrameKey>,
}

/// Encodes filters, and deltas between two generations of a filter, into frames.
///
/// One encoder codes one kind of filter, `F`: a [`BloomFilter`] (the default) with the
/// [`BitCoding`](super::BitCoding)s, or a
/// [`CountingBloomFilter`] with the
/// [`CounterCoding`](super::CounterCoding)s, so that a coding of one kind cannot be asked of
/// the other.
///
/// For a Bloom filter it predicts by default the frame size of every coding it may write
/// (the active codings of its [`profile`](Encoder::profile), spec §4.0) from counts alone
/// (the ones, m, q0 and the chunking) and codes once, with the fastest coding to decode
/// whose predicted frame is within 0.08% + 6 bytes of the smallest prediction. The order of
/// speed is each coding's row of the table of codings (its place for these counts: the
/// positional coding first where at most one bit in 40 is one, the table-driven codings of
/// dense arrays next, the range coder last), so this type names no coding. A frame that
/// comes out more than 0.1% + 6 bytes over the smallest prediction (a near tie and two
/// errors) is coded once more in the next coding within the margin (then, if still over,
/// in the coding predicted smallest), and the smallest kept, so that the frame is within
/// 0.1% + 8 bytes of the smallest the crate makes. [`Encoder::smallest`] instead codes with
/// every coding it may write and keeps the smallest frame. Whatever the coding asked for,
/// it sends the raw bit array instead when compression would not be smaller.
///
/// For a counting filter it picks among [`CounterCoding::Known`](super::CounterCoding::Known)
/// and [`CounterCoding::Adaptive`](super::CounterCoding::Adaptive) by coding both, the packed
/// counters when coding is not smaller.
#[derive(Debug, Clone)]
pub struct Encoder<F: Filter = BloomFilter> {
    pub(super) settings: Settings,
    filter: PhantomData<fn(&F)>,
}

impl<F: Filter> Default for Encoder<F> {
    fn default() -> Self {
        Encoder {
            settings: Settings::default(),
            filter: PhantomData,
        }
    }
}

/// Whether an [`Encoder`] splits the payload into independently coded chunks (spec §4.10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Chunking {
    /// Chunk filters of at least [`CHUNK_FROM_BITS`](crate::entropy::chunks::CHUNK_FROM_BITS) bits,
    /// with [`default_chunk_shift`](crate::entropy::chunks::default_chunk_shift).
    #[default]
    Auto,
    /// One payload for the whole filter.
    Never,
    /// Chunks of `2^shift` bits (6 ..= 47), for any filter of more than `2^shift` bits.
    Shift(u8),
}

/// What a counting frame is being built from: a counting filter's parameters and counters
/// (or the counter-wise XOR of two generations).
pub(super) struct CounterBody<'a> {
    pub(super) kind: FrameKind,
    pub(super) params: &'a Params,
    pub(super) width: u8,
    pub(super) n: u64,
    pub(super) generation: u64,
    pub(super) counters: &'a [u8],
    /// The theoretical mean of a counter, for [`PSource::Theory`] (full frames only).
    pub(super) theory_mean: Option<f64>,
}

/// What a frame is being built from: a filter's parameters and a bit array.
pub(super) struct Body<'a> {
    pub(super) kind: FrameKind,
    pub(super) params: &'a Params,
    pub(super) n: u64,
    pub(super) generation: u64,
    pub(super) bits: &'a BitArray,
    pub(super) theory_p: Option<f64>,
}

impl<F: Filter> Encoder<F> {
    /// What this encoder was told, for the sender's step.
    pub(crate) fn settings(&self) -> &Settings {
        &self.settings
    }

    /// An encoder that picks the smallest coding.
    pub fn new() -> Self {
        Self::default()
    }

    /// Code with every coding of bits and keep the smallest frame (the fastest of equal
    /// ones), instead of predicting sizes and coding once.
    pub fn smallest(mut self) -> Self {
        self.settings.try_all = true;
        self
    }

    /// Use this coding (or raw, if it is not smaller).
    pub fn coding(mut self, coding: F::Coding) -> Self {
        self.settings.coding = Some(coding.into());
        self
    }

    /// Write only the codings of `profile` (spec §4.0; default [`Profile::Full`]): a sender
    /// that does not know what its receivers implement sends [`Profile::Core`], which every
    /// conforming decoder reads. A coding named with [`Encoder::coding`] outside the profile
    /// is refused ([`Error::InvalidParameter`]).
    ///
    /// ```
    /// use bloomwire::{BitCoding, BloomFilter, Encoder, HashFamily, Params, Profile};
    /// let mut f = BloomFilter::new(Params::standard(140_000, 2, HashFamily::default()).unwrap());
    /// (0..10_000u32).for_each(|i| f.insert(i.to_le_bytes()));
    /// let frame = Encoder::new().profile(Profile::Core).encode(&f).unwrap();
    /// assert!(Profile::Core.includes(frame.coding()));
    /// assert!(Encoder::new().profile(Profile::Core).coding(BitCoding::Escape).encode(&f).is_err());
    /// ```
    ///
    /// [`Profile::Full`]: crate::Profile::Full
    /// [`Profile::Core`]: crate::Profile::Core
    pub fn profile(mut self, profile: crate::Profile) -> Self {
        self.settings.profile = profile;
        self
    }

    /// Where known-p codings take `p` from.
    pub fn p_source(mut self, source: PSource) -> Self {
        self.settings.p_source = source;
        self
    }

    /// Whether to chunk the payload (ignored for raw frames).
    pub fn chunking(mut self, chunking: Chunking) -> Self {
        self.settings.chunking = chunking;
        self
    }

    /// Threads for coding the chunks of a chunked payload (default: all cores). Without
    /// the `parallel` feature chunks are coded on the calling thread whatever this says.
    pub fn threads(mut self, threads: usize) -> Self {
        self.settings.threads = Some(threads.max(1));
        self
    }

    /// Attach this application metadata to every frame (flags bit 3, spec §2.6): bytes
    /// of the application's (a sender id, a timestamp, another library's parameters),
    /// covered by the checksum, exposed as [`FrameHeader::metadata`]. An empty field is no
    /// field. A receiver refuses a field longer than its
    /// [`Limits::max_metadata`](super::Limits::max_metadata) (4 KiB by default).
    ///
    /// ```
    /// use bloomwire::{decode, BloomFilter, Encoder, HashFamily, Limits, Message, Params};
    /// let f = BloomFilter::new(Params::standard(1000, 3, HashFamily::default()).unwrap());
    /// let wire = Encoder::new().metadata(b"sender=7".to_vec()).encode(&f).unwrap().to_bytes();
    /// let back: Message = decode(&wire, &Limits::default()).unwrap();
    /// assert_eq!(back.header().metadata.as_deref(), Some(&b"sender=7"[..]));
    /// ```
    pub fn metadata(mut self, metadata: impl Into<Vec<u8>>) -> Self {
        let metadata = metadata.into();
        self.settings.metadata = (!metadata.is_empty()).then_some(metadata);
        self
    }

    /// Tag every frame with `key` (flags bit 2, spec §2.5): a keyed BLAKE2b tag of
    /// [`TAG_LEN`] bytes after the checksum, which receivers
    /// holding the key check before they decode the payload. The budget counts the tag.
    ///
    /// ```
    /// use bloomwire::{BloomFilter, Encoder, FrameKey, HashFamily, Limits, Params};
    /// use bloomwire::{Receiver, Sender, Update};
    /// let key = FrameKey::new([3; 32]);
    /// let mut f = BloomFilter::new(Params::standard(10_000, 3, HashFamily::default()).unwrap());
    /// let mut sender = Sender::new(Encoder::new().key(key.clone()), 10);
    /// let mut receiver: Receiver = Receiver::new(Limits::default()).with_key(key);
    /// f.insert(b"a");
    /// let wire = sender.next_frame(&f).unwrap().to_bytes();
    /// assert!(matches!(receiver.receive(&wire), Ok(Update::Full { .. })));
    /// ```
    pub fn key(mut self, key: FrameKey) -> Self {
        self.settings.key = Some(key);
        self
    }

    /// Fail with [`Error::OverBudget`] unless the frame fits in `bytes`.
    pub fn budget(mut self, bytes: usize) -> Self {
        self.settings.budget = Some(bytes);
        self
    }

    /// Encode a full frame (generation 0): the requested or smallest coding, raw when that is
    /// not smaller, and the budget checked.
    pub fn encode(&self, filter: &F) -> Result<Frame> {
        self.encode_generation(filter, 0)
    }

    /// Encode a full frame that carries generation number `generation`.
    pub fn encode_generation(&self, filter: &F, generation: u64) -> Result<Frame> {
        self.settings.encode(filter.as_any(), generation)
    }

    /// Encode a full frame of generation `generation` into `out`, replacing what it held,
    /// in its memory: `out` is lent to the coder as the payload's buffer, and the frame's
    /// bytes (those of [`encode_generation`](Self::encode_generation)'s
    /// [`Frame::to_bytes`]) end up in it. Returns the frame's header; on an error `out` is
    /// empty.
    ///
    /// A sender that encodes generation after generation into the same buffer takes no
    /// fresh memory once it has encoded one: no page faults, and the coders' scratch is
    /// the thread's, reused too (up to 64 MiB a thread is kept;
    /// [`release_thread_scratch`](crate::release_thread_scratch) gives it back).
    ///
    /// ```
    /// use bloomwire::{BloomFilter, Encoder, HashFamily, Params};
    /// let mut f = BloomFilter::new(Params::standard(1 << 20, 3, HashFamily::default()).unwrap());
    /// let encoder = Encoder::new();
    /// let mut buf = Vec::new();
    /// for g in 1..=3u64 {
    ///     f.insert(g.to_le_bytes());
    ///     let header = encoder.encode_into(&f, g, &mut buf).unwrap();
    ///     assert_eq!(header.generation, g);
    ///     assert_eq!(buf, encoder.encode_generation(&f, g).unwrap().to_bytes());
    /// }
    /// ```
    pub fn encode_into(
        &self,
        filter: &F,
        generation: u64,
        out: &mut Vec<u8>,
    ) -> Result<FrameHeader> {
        super::frame::into_buffer(out, || self.encode_generation(filter, generation))
    }

    /// The full frame for `filter` with one coding, no fallback to raw, no budget,
    /// generation 0.
    pub fn encode_with(&self, filter: &F, coding: F::Coding) -> Result<Frame> {
        self.settings.encode_with(filter.as_any(), coding.into())
    }

    /// Encode the delta that turns generation `base_generation` (`base`) into generation
    /// `generation` (`filter`): the XOR of their bit arrays (the counter-wise XOR of their
    /// counters), coded like a filter, with the digests of both so a receiver can tell
    /// whether it applies.
    ///
    /// Errors: the filters differ in m, layout, k, hash family or counter width
    /// ([`Error::Incompatible`]); `generation <= base_generation`
    /// ([`Error::InvalidParameter`]); or the budget.
    pub fn encode_delta(
        &self,
        base: &F,
        base_generation: u64,
        filter: &F,
        generation: u64,
    ) -> Result<Frame> {
        self.settings
            .encode_delta(base.as_any(), base_generation, filter.as_any(), generation)
    }
}

impl Encoder<CountingBloomFilter> {
    /// The frequency table [`CounterCoding::Known`](super::CounterCoding::Known) uses, instead of one built from the
    /// counters (with [`PSource::Measured`] their histogram, with [`PSource::Theory`] the
    /// Poisson law of [`theory::counter_distribution`](crate::theory::counter_distribution)).
    /// Encoding fails with [`Error::InvalidParameter`] if a counter holds a value the table
    /// gives frequency 0, or if the table is for wider counters than the filter's.
    pub fn counter_table(mut self, table: CounterTable) -> Self {
        self.settings.counter_table = Some(table);
        self
    }
}

impl Settings {
    /// The chunk shift this encoder uses for an array of `m` bits holding `zeros` zero bits
    /// coded with `coding`, if it chunks (the count matters only to the default chunk size,
    /// spec §4.10).
    pub(super) fn chunk_shift(&self, m: u64, coding: Coding, zeros: u64) -> Option<u8> {
        if !coding.is_chunkable() {
            return None;
        }
        match self.chunking {
            Chunking::Never => None,
            Chunking::Shift(s) => {
                let range = chunks::MIN_CHUNK_SHIFT..=chunks::MAX_CHUNK_SHIFT;
                (range.contains(&s) && 1u64 << s < m).then_some(s)
            }
            Chunking::Auto if m < chunks::CHUNK_FROM_BITS => None,
            Chunking::Auto => chunks::coding_chunk_shift(coding, m, zeros as f64 / m as f64),
        }
    }

    /// The q0 of an array of `m` bits holding `zeros` zero bits in `coding`: the measured
    /// fraction of zeros where the coding requires it (codings 9 to 11, spec §4.4), else
    /// from the encoder's [`PSource`] (`theory_p`: the filter's theoretical fraction, for
    /// full frames).
    pub(super) fn q0(&self, m: u64, zeros: u64, theory_p: Option<f64>, coding: Coding) -> u16 {
        let measured = || KnownP::measured(zeros, m);
        match self.p_source {
            _ if coding.q0_is_measured() => measured(),
            PSource::Measured => measured(),
            PSource::Theory => theory_p.map_or_else(measured, KnownP::quantize),
            PSource::Fixed(q0) => q0.max(1),
        }
    }

    pub(super) fn frame(&self, body: &Body<'_>, coding: Coding) -> Frame {
        self.frame_counted(body, coding, None)
    }

    /// [`Settings::frame`] with the count of zero bits if the caller has it (so that the
    /// array is not counted again for `q0` and the chunk shift).
    pub(super) fn frame_counted(
        &self,
        body: &Body<'_>,
        coding: Coding,
        zeros: Option<u64>,
    ) -> Frame {
        let (bits, m) = (body.bits, body.bits.len());
        // The array is counted (once) only where q0 or the default chunk size need it.
        let counted = coding.has_q0()
            || (self.chunking == Chunking::Auto
                && coding.is_chunkable()
                && m >= chunks::CHUNK_FROM_BITS);
        let zeros = match zeros {
            Some(zeros) => zeros,
            None if counted => bits.count_zeros(),
            None => 0,
        };
        let q0 = coding
            .has_q0()
            .then(|| self.q0(m, zeros, body.theory_p, coding));
        let shift = self.chunk_shift(m, coding, zeros);
        #[cfg(test)]
        FRAMES_CODED.with(|c| c.set(c.get() + 1));
        let payload = match shift {
            Some(shift) => {
                let threads = self.threads.unwrap_or_else(crate::cpu::cores);
                chunks::encode_chunked(coding, q0, bits, shift, threads)
            }
            None => {
                // The thread's warm memory: a buffer an encode_into lent, or an earlier
                // frame's (a payload is at most the raw array's size, in practice).
                let mut payload = crate::entropy::scratch::take_bytes(bits.byte_len());
                coding::encode_bits(coding, q0, bits.words(), bits.len(), &mut payload);
                payload
            }
        };
        // A filter so sparse that its payload would code more bits a byte than the work
        // bound allows (spec §2.2) is sent with the positional coding, which has a bound of
        // its own and is the small coding of such arrays (the usual raw fallback follows).
        if !coding.within_work_bound(bits.len(), None, payload.len() as u64) {
            return self.frame_counted(body, Coding::Positional, counted.then_some(zeros));
        }
        let header = FrameHeader::new(
            body.kind,
            body.params.clone(),
            body.n,
            body.generation,
            (coding, q0, shift),
            payload.len(),
        )
        .with_metadata(self.metadata.as_deref());
        self.sealed(header, payload)
    }

    /// The frame of `header` and `payload`, tagged when this encoder has a key.
    pub(super) fn sealed(&self, header: FrameHeader, payload: Vec<u8>) -> Frame {
        Frame {
            header,
            payload,
            key: None,
        }
        .with_key(self.key.clone())
    }

    /// Bytes of the tag this encoder adds to every frame.
    pub(super) fn tag_len(&self) -> usize {
        if self.key.is_some() {
            TAG_LEN
        } else {
            0
        }
    }

    pub(super) fn full_body(filter: &BloomFilter, generation: u64) -> Body<'_> {
        Body {
            kind: FrameKind::Full,
            params: filter.params(),
            n: filter.n(),
            generation,
            bits: filter.bits(),
            theory_p: Some(crate::theory::zero_fraction(
                filter.params(),
                filter.n() as f64,
            )),
        }
    }
}

impl Settings {
    /// The full frame of `filter` as generation `generation`, the coding chosen as
    /// [`Encoder::encode_generation`] does.
    pub(crate) fn encode(&self, filter: FilterRef<'_>, generation: u64) -> Result<Frame> {
        match filter {
            FilterRef::Bloom(f) => self.choose(&Self::full_body(f, generation)),
            FilterRef::Counting(f) => self.choose_counters(&Self::counting_body(f, generation)),
        }
    }

    /// The full frame of `filter` in `coding`, no fallback, no budget, generation 0.
    fn encode_with(&self, filter: FilterRef<'_>, coding: Coding) -> Result<Frame> {
        self.check_profile(coding)?;
        match filter {
            FilterRef::Bloom(f) => {
                if !coding.codes_bits() {
                    return Err(counters_not_bits(coding));
                }
                Ok(self.frame(&Self::full_body(f, 0), coding))
            }
            FilterRef::Counting(f) => self.counter_frame(&Self::counting_body(f, 0), coding),
        }
    }

    /// The delta frame from `base` (generation `base_generation`) to `filter`: the XOR of
    /// their bits or counters, with both digests.
    pub(crate) fn encode_delta(
        &self,
        base: FilterRef<'_>,
        base_generation: u64,
        filter: FilterRef<'_>,
        generation: u64,
    ) -> Result<Frame> {
        check_after(base_generation, generation)?;
        let kind = FrameKind::Delta {
            base_generation,
            base_digest: base.digest(),
            result_digest: filter.digest(),
        };
        match (base, filter) {
            (FilterRef::Bloom(base), FilterRef::Bloom(filter)) => self.choose(&Body {
                kind,
                params: filter.params(),
                n: filter.n(),
                generation,
                bits: &filter.xor(base)?,
                theory_p: None,
            }),
            (FilterRef::Counting(base), FilterRef::Counting(filter)) => {
                self.choose_counters(&CounterBody {
                    kind,
                    params: filter.params(),
                    width: filter.width(),
                    n: filter.n(),
                    generation,
                    counters: &filter.xor(base)?,
                    theory_mean: None,
                })
            }
            _ => Err(Error::Incompatible(
                "a delta between a Bloom filter and a counting filter".into(),
            )),
        }
    }

    /// The delta frame that turns a base (its generation and digest) into the generation
    /// whose bits differ from the base's at `positions` (increasing, each below m), for a
    /// sender that found the changes itself and knows both digests.
    pub(crate) fn encode_delta_positions(
        &self,
        step: DeltaStep<'_>,
        positions: &[u64],
    ) -> Result<Frame> {
        check_after(step.base_generation, step.generation)?;
        let kind = FrameKind::Delta {
            base_generation: step.base_generation,
            base_digest: step.base_digest,
            result_digest: step.result_digest,
        };
        let m = step.params.m();
        if matches!(self.coding, None | Some(Coding::Positional)) {
            let mut payload = Vec::new();
            coding::encode_positions(positions, m, &mut payload);
            if (payload.len() as u64) < m.div_ceil(8) {
                let header = FrameHeader::new(
                    kind,
                    step.params.clone(),
                    step.n,
                    step.generation,
                    (Coding::Positional, None, None),
                    payload.len(),
                )
                .with_metadata(self.metadata.as_deref());
                let frame = self.sealed(header, payload);
                if self.budget.is_none_or(|b| frame.encoded_len() <= b) {
                    return Ok(frame);
                }
            }
        }
        let mut xor = BitArray::new(m);
        for &p in positions {
            xor.set(p);
        }
        self.choose(&Body {
            kind: FrameKind::Delta {
                base_generation: step.base_generation,
                base_digest: step.base_digest,
                result_digest: step.result_digest,
            },
            params: step.params,
            n: step.n,
            generation: step.generation,
            bits: &xor,
            theory_p: None,
        })
    }
}

impl Settings {
    /// The requested or smallest coding, raw when that is not smaller, budget checked.
    pub(super) fn choose(&self, body: &Body<'_>) -> Result<Frame> {
        if let Some(c) = self.coding.filter(|c| !c.codes_bits()) {
            return Err(counters_not_bits(c));
        }
        if let Some(c) = self.coding {
            self.check_profile(c)?;
        }
        // The raw frame's length without building it (a copy of the whole filter).
        let raw_len = FrameHeader::new(
            body.kind,
            body.params.clone(),
            body.n,
            body.generation,
            (Coding::Raw, None, None),
            body.bits.byte_len(),
        )
        .with_metadata(self.metadata.as_deref())
        .frame_len()
            + self.tag_len();
        let best = match self.coding {
            Some(Coding::Raw) => None,
            Some(c) => Some(self.frame(body, c)),
            None if self.try_all => {
                // Every coding it may write, the smallest frame; of equal ones the earliest
                // (fastest).
                let (m, ones) = (body.bits.len(), body.bits.count_ones());
                candidates(
                    self.profile,
                    &Counts::new(m, ones, KnownP::measured(m - ones, m)),
                )
                .into_iter()
                .map(|c| self.frame(body, c))
                .min_by_key(Frame::encoded_len)
            }
            None => self.predicted_choice(body, raw_len),
        };
        let compressed_len = best.as_ref().map(Frame::encoded_len);
        if let Some(budget) = self.budget {
            let len = compressed_len.map_or(raw_len, |c| c.min(raw_len));
            if len > budget {
                return Err(Error::OverBudget {
                    budget,
                    compressed: compressed_len.unwrap_or(raw_len),
                    raw: raw_len,
                });
            }
        }
        Ok(match best {
            Some(f) if f.encoded_len() < raw_len => f,
            _ => self.frame(body, Coding::Raw),
        })
    }

    /// Every coding this encoder may write, with its predicted frame length for an array of
    /// `m` bits holding `ones` one bits, fastest to decode first: `header` (the frame's
    /// fields) recoded for each, without the metadata and the tag (the same bytes in every
    /// coding, which the choice does not depend on). `theory_p` is the filter's theoretical
    /// fraction of zeros, for a [`PSource::Theory`] encoder.
    fn predictions(
        &self,
        header: &mut FrameHeader,
        m: u64,
        ones: u64,
        theory_p: Option<f64>,
    ) -> Vec<(Coding, usize)> {
        let zeros = m - ones;
        let measured_q0 = KnownP::measured(zeros, m);
        // A frame the caller wants in chunks (or large enough for them by default) gets a
        // coding that chunks (codings 9 and 11 do not).
        let chunks_wanted = match self.chunking {
            Chunking::Never => false,
            Chunking::Shift(_) => true,
            Chunking::Auto => m >= chunks::CHUNK_FROM_BITS,
        };
        // The counts every prediction starts from, the figures they share computed once
        // (the codings without a q0 ignore it).
        let counts = Counts::new(m, ones, measured_q0);
        candidates(self.profile, &counts)
            .into_iter()
            .filter(|&c| c.is_chunkable() || !chunks_wanted)
            .map(|c| {
                let q0 = c.has_q0().then(|| self.q0(m, zeros, theory_p, c));
                let shift = self.chunk_shift(m, c, zeros);
                // Codings 2, 3 and 6 may be told another q0 (`PSource`): its own counts.
                let other;
                let counts = match q0 {
                    Some(q0) if q0 != measured_q0 => {
                        other = Counts::new(m, ones, q0);
                        &other
                    }
                    _ => &counts,
                };
                let len = chunks::predicted_payload_len(c, counts, shift);
                header.recode((c, q0, shift), len as usize);
                (c, header.frame_len())
            })
            .collect()
    }

    /// What the choice weighs for these predictions.
    fn predicted<'a>(&self, lens: &'a [(Coding, usize)]) -> Predicted<'a> {
        Predicted {
            lens,
            extra: self.extra_len(),
            budget: self.budget,
        }
    }

    /// The coding one process would choose for a whole filter of `params` holding `n` keys
    /// and `ones` one bits in chunks of `2^shift` bits, from those counts alone (spec
    /// §4.10): the first choice of the default encoder, for a frame assembled from chunks
    /// coded apart ([`choice::chunked`]).
    pub(super) fn chunked_choice(
        &self,
        params: &Params,
        n: u64,
        ones: u64,
        shift: u8,
    ) -> Result<Coding> {
        let settings = Settings {
            chunking: Chunking::Shift(shift),
            ..self.clone()
        };
        let kind = FrameKind::Full;
        let mut header = FrameHeader::new(kind, params.clone(), n, 0, (Coding::Raw, None, None), 0);
        let theory_p = crate::theory::zero_fraction(params, n as f64);
        let lens = settings.predictions(&mut header, params.m(), ones, Some(theory_p));
        header.recode((Coding::Raw, None, None), params.m().div_ceil(8) as usize);
        choice::chunked(&settings.predicted(&lens), header.frame_len())
    }

    /// The bytes of the metadata field and the tag this encoder adds to every frame.
    fn extra_len(&self) -> usize {
        self.metadata
            .as_deref()
            .filter(|m| !m.is_empty())
            .map_or(0, super::header::metadata_len)
            + self.tag_len()
    }

    /// The frame the choice orders ([`choice::order`]) from this array's predictions, coded
    /// once (almost always); `None`: raw.
    fn predicted_choice(&self, body: &Body<'_>, raw_len: usize) -> Option<Frame> {
        let bits = body.bits;
        // The one pass over the array before coding: every prediction, q0 and the chunk
        // shift come from this count.
        let (m, ones) = (bits.len(), bits.count_ones());
        // One header, recoded for each prediction.
        let mut header = FrameHeader::new(
            body.kind,
            body.params.clone(),
            body.n,
            body.generation,
            (Coding::Raw, None, None),
            0,
        );
        let lens = self.predictions(&mut header, m, ones, body.theory_p);
        let order = choice::order(&self.predicted(&lens), raw_len)?;
        self.code_in_order(body, &order, Some(m - ones))
    }

    /// The choice executed: the array coded in the order's first coding that keeps it (the
    /// work bound), coded again in the recheck codings while the chosen frame is over the
    /// promise (the smallest frame kept); the first fallback frame if none keeps it.
    fn code_in_order(&self, body: &Body<'_>, order: &Order, zeros: Option<u64>) -> Option<Frame> {
        let mut fallback = None;
        for (i, &c) in order.codings.iter().enumerate() {
            let mut frame = self.frame_counted(body, c, zeros);
            if frame.coding() != c {
                fallback.get_or_insert(frame);
                continue;
            }
            if i == 0 {
                for &other in &order.recheck {
                    if frame.encoded_len() <= order.promise {
                        break;
                    }
                    let other = self.frame_counted(body, other, zeros);
                    if other.encoded_len() < frame.encoded_len() {
                        frame = other;
                    }
                }
            }
            return Some(frame);
        }
        fallback
    }

    /// A named coding outside the encoder's profile is refused: its receivers may not read it.
    pub(super) fn check_profile(&self, coding: Coding) -> Result<()> {
        if self.profile.includes(coding) {
            Ok(())
        } else {
            Err(crate::error::invalid(
                "coding",
                format!("{coding} is not in the {} profile", self.profile),
            ))
        }
    }
}

/// What a frame carries, borrowed, for [`reframe`]: a bit array (a filter's, or a delta's
/// XOR), or one `u8` a counter (a counting filter's, or a delta's XOR).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Contents<'a> {
    /// The bits of a Bloom filter, or of a delta's XOR.
    Bits(&'a BitArray),
    /// The counters of a counting filter, or of a delta's XOR.
    Counters(&'a [u8]),
}

/// The frame of `header`'s fields carrying `contents`: the same kind, parameters, n,
/// generation, coding, q0, counter table, chunk shift, metadata and restart flag, the
/// payload coded again (untagged). For a header a decoder accepted these are the bytes it
/// was decoded from (every accepted frame is canonical, spec section 2.3).
///
/// Errors for counters without a counter width, or a counter table that gives frequency 0
/// to a value a counter holds ([`Error::InvalidParameter`]).
pub(crate) fn reframe(header: &FrameHeader, contents: Contents<'_>) -> Result<Frame> {
    let encoder = Settings {
        coding: Some(header.coding),
        p_source: header.q0.map_or(PSource::Measured, PSource::Fixed),
        counter_table: header.counter_table.clone(),
        chunking: header.chunk_shift.map_or(Chunking::Never, Chunking::Shift),
        metadata: header.metadata.clone(),
        ..Settings::default()
    };
    let frame = match contents {
        Contents::Bits(bits) => encoder.frame(
            &Body {
                kind: header.kind,
                params: &header.params,
                n: header.n,
                generation: header.generation,
                bits,
                theory_p: None,
            },
            header.coding,
        ),
        Contents::Counters(counters) => encoder.counter_frame(
            &CounterBody {
                kind: header.kind,
                params: &header.params,
                width: header
                    .counter_width
                    .ok_or_else(|| crate::error::invalid("counter width", "missing"))?,
                n: header.n,
                generation: header.generation,
                counters,
                theory_mean: None,
            },
            header.coding,
        )?,
    };
    match header.kind {
        FrameKind::Full => frame.with_restart(header.restart),
        FrameKind::Delta { .. } => Ok(frame),
    }
}

/// A delta's generation must come after its base's.
fn check_after(base_generation: u64, generation: u64) -> Result<()> {
    if generation <= base_generation {
        return Err(crate::error::invalid(
            "generation",
            format!("{generation} is not after the base generation {base_generation}"),
        ));
    }
    Ok(())
}

/// The error for a coding of counters asked of a bit array.
pub(super) fn counters_not_bits(coding: Coding) -> Error {
    crate::error::invalid(
        "coding",
        format!("{coding} codes the counters of counting filters, not bits"),
    )
}

/// The header fields of a delta a sender builds from what it knows of both generations.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DeltaStep<'a> {
    /// m, layout, k and hash family of both generations.
    pub(crate) params: &'a Params,
    /// Keys in the new generation.
    pub(crate) n: u64,
    /// The base's generation and digest.
    pub(crate) base_generation: u64,
    pub(crate) base_digest: u32,
    /// The new generation and its digest.
    pub(crate) generation: u64,
    pub(crate) result_digest: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::hashing::HashFamily;
    use crate::filter::Params;
    use crate::format::BitCoding;

    #[test]
    fn the_theoretical_p_of_an_empty_one_bit_filter_codes() {
        // m = 1, no keys: the theory's p must not be NaN (see theory::p_zero_exact). Found
        // by fuzzing the round trip with PSource::Theory.
        let one = Params::standard(1, 1, HashFamily::default()).unwrap();
        let f = BloomFilter::new(one);
        let frame = Encoder::new()
            .coding(BitCoding::KnownP)
            .p_source(PSource::Theory)
            .encode(&f)
            .unwrap();
        let back: crate::format::Decoded =
            crate::format::decode(&frame.to_bytes(), &crate::format::Limits::default()).unwrap();
        assert_eq!(back.filter, f);
    }
}
