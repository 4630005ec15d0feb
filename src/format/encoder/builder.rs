//! The public encoder: a builder of settings whose `encode` methods hand them to the
//! mechanism (`settings.rs`).

use core::marker::PhantomData;

use crate::entropy::counter_table::CounterTable;
use crate::error::Result;
use crate::filter::counting::CountingBloomFilter;
use crate::filter::BloomFilter;
use crate::format::auth::FrameKey;
use crate::format::frame::Frame;
use crate::format::header::FrameHeader;
use crate::format::kind::Filter;
use crate::format::scratch::Scratch;

use super::settings::{Chunking, PSource, Settings};

/// Encodes filters, and deltas between two generations of a filter, into frames.
///
/// One encoder codes one kind of filter, `F`: a [`BloomFilter`] (the default) with the
/// [`BitCoding`](crate::format::BitCoding)s, or a
/// [`CountingBloomFilter`] with the
/// [`CounterCoding`](crate::format::CounterCoding)s, so that a coding of one kind cannot be asked of
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
/// For a counting filter it picks among [`CounterCoding::Known`](crate::format::CounterCoding::Known)
/// and [`CounterCoding::Adaptive`](crate::format::CounterCoding::Adaptive) by coding both, the packed
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
    /// is refused ([`Error::InvalidParameter`](crate::Error::InvalidParameter)).
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
    /// [`Limits::max_metadata`](crate::format::Limits::max_metadata) (4 KiB by default).
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
    /// [`TAG_LEN`](crate::format::TAG_LEN) bytes after the checksum, which receivers
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

    /// Fail with [`Error::OverBudget`](crate::Error::OverBudget) unless the frame fits in `bytes`.
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
    /// [`release_thread_scratch`](crate::release_thread_scratch) gives it back). To keep
    /// that memory in a context of the caller's instead, encode with
    /// [`encode_generation_in`](Self::encode_generation_in) and
    /// [`Scratch::recycle`] each frame once written.
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
        crate::format::frame::into_buffer(out, || self.encode_generation(filter, generation))
    }

    /// [`encode`](Self::encode) through the caller's context `scratch`: the coders' memory
    /// is taken from it and given back to it, the thread's pool is left alone, and the
    /// frame's payload goes back to it when the caller [recycles](Scratch::recycle) the
    /// frame (dropped, it is freed). The frame is the one `encode` makes.
    ///
    /// ```
    /// use bloomwire::{BloomFilter, Encoder, HashFamily, Params, Scratch};
    /// let mut f = BloomFilter::new(Params::standard(1 << 20, 3, HashFamily::default()).unwrap());
    /// f.insert(b"a");
    /// let mut scratch = Scratch::new();
    /// let frame = Encoder::new().encode_in(&mut scratch, &f).unwrap();
    /// let at = frame.payload().as_ptr();
    /// scratch.recycle(frame);
    /// // The next encode codes into the recycled memory.
    /// let again = Encoder::new().encode_in(&mut scratch, &f).unwrap();
    /// assert_eq!(again.payload().as_ptr(), at);
    /// ```
    pub fn encode_in(&self, scratch: &mut Scratch, filter: &F) -> Result<Frame> {
        self.encode_generation_in(scratch, filter, 0)
    }

    /// [`encode_generation`](Self::encode_generation) through the caller's context
    /// `scratch` (as [`encode_in`](Self::encode_in)).
    pub fn encode_generation_in(
        &self,
        scratch: &mut Scratch,
        filter: &F,
        generation: u64,
    ) -> Result<Frame> {
        scratch.frame(|| self.encode_generation(filter, generation))
    }

    /// [`encode_delta`](Self::encode_delta) through the caller's context `scratch` (as
    /// [`encode_in`](Self::encode_in)).
    pub fn encode_delta_in(
        &self,
        scratch: &mut Scratch,
        base: &F,
        base_generation: u64,
        filter: &F,
        generation: u64,
    ) -> Result<Frame> {
        scratch.frame(|| self.encode_delta(base, base_generation, filter, generation))
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
    /// ([`Error::Incompatible`](crate::Error::Incompatible)); `generation <= base_generation`
    /// ([`Error::InvalidParameter`](crate::Error::InvalidParameter)); or the budget.
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
    /// The frequency table [`CounterCoding::Known`](crate::format::CounterCoding::Known) uses, instead of one built from the
    /// counters (with [`PSource::Measured`] their histogram, with [`PSource::Theory`] the
    /// Poisson law of [`theory::counter_distribution`](crate::theory::counter_distribution)).
    /// Encoding fails with [`Error::InvalidParameter`](crate::Error::InvalidParameter) if a counter holds a value the table
    /// gives frequency 0, or if the table is for wider counters than the filter's.
    pub fn counter_table(mut self, table: CounterTable) -> Self {
        self.settings.counter_table = Some(table);
        self
    }
}
