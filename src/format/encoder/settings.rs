//! The encoder's settings and the mechanism that executes them: a bit array, or the delta
//! between two generations, into a frame (its header, the payload coded, the tag); the
//! predictions the choice weighs, and the choice's order carried out.

use crate::entropy::counter_table::CounterTable;
use crate::entropy::model::{Counts, KnownP};
use crate::entropy::{chunks, coding};
use crate::error::{Error, Result};
use crate::filter::any::FilterRef;
use crate::filter::bits::BitArray;
use crate::filter::{BloomFilter, Params};
use crate::format::auth::{FrameKey, TAG_LEN};
use crate::format::frame::Frame;
use crate::format::header::FrameHeader;
use crate::format::ids::{Coding, FrameKind};

use super::choice::{self, candidates, Order, Predicted};

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

/// What an [`Encoder`](super::Encoder) was told, whatever the filter kind.
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

/// Whether an [`Encoder`](super::Encoder) splits the payload into independently coded chunks (spec §4.10).
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
        Frame::new(header, payload).with_key(self.key.clone())
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
    /// [`Encoder::encode_generation`](super::Encoder::encode_generation) does.
    pub(crate) fn encode(&self, filter: FilterRef<'_>, generation: u64) -> Result<Frame> {
        match filter {
            FilterRef::Bloom(f) => self.choose(&Self::full_body(f, generation)),
            FilterRef::Counting(f) => self.choose_counters(&Self::counting_body(f, generation)),
        }
    }

    /// The full frame of `filter` in `coding`, no fallback, no budget, generation 0.
    pub(super) fn encode_with(&self, filter: FilterRef<'_>, coding: Coding) -> Result<Frame> {
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
            .map_or(0, crate::format::header::metadata_len)
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
    use crate::format::{BitCoding, Encoder};

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
