//! A chunked frame built a chunk at a time (spec §4.10), for filters larger than one
//! machine: a chunk's payload is a function of its bits, the coding and the frame's q0
//! alone, so the chunks are coded where their bits are (a cluster's workers, each holding a
//! share of the filter) and the frame is assembled from the coded chunks without decoding
//! them: byte for byte the frame one process writes for the whole filter with the same chunk
//! shift and coding.

use crate::entropy::chunks::{self, chunk_count, MAX_CHUNK_SHIFT, MIN_CHUNK_SHIFT};
use crate::entropy::coding;
use crate::error::{invalid, Error, Result};
use crate::filter::bits::BitArray;
use crate::filter::{BloomFilter, Params};
use crate::format::frame::Frame;
use crate::format::header::FrameHeader;
use crate::format::ids::{Coding, FrameKind};
use crate::format::scratch::Scratch;

use super::builder::Encoder;
use super::settings::Settings;

/// The frame-wide choices of a chunked frame whose chunks are coded apart: made from the
/// whole filter's parameters and count of ones ([`Encoder::chunked_frame`]), then given to
/// every place that codes a chunk ([`encode_chunk`](Self::encode_chunk)) and to the one that
/// assembles the frame ([`assemble`](Self::assemble)). Cloning it is cheap; it holds no bits.
///
/// ```
/// use bloomwire::{BitCoding, BloomFilter, Chunking, Encoder, HashFamily, Params};
/// let mut f = BloomFilter::new(Params::standard(1 << 16, 1, HashFamily::default()).unwrap());
/// for i in 0..500u32 {
///     f.insert(i.to_le_bytes());
/// }
/// let encoder = Encoder::new().coding(BitCoding::Positional);
/// // One process, chunks of 2^12 bits:
/// let whole = encoder.clone().chunking(Chunking::Shift(12)).encode(&f).unwrap();
/// // The same frame from chunks coded apart (here from slices of the filter; on a cluster,
/// // from the positions of the keys' bits each worker received):
/// let plan = encoder
///     .chunked_frame(f.params().clone(), f.n(), f.bits().count_ones(), 12)
///     .unwrap();
/// let coded: Vec<Vec<u8>> = (0..plan.chunk_count())
///     .map(|i| {
///         let bits = plan.chunk_bits(i);
///         let chunk = f.bits().slice(bits.start, bits.end - bits.start);
///         plan.encode_chunk(i, &chunk).unwrap()
///     })
///     .collect();
/// let assembled = plan.assemble(&coded).unwrap();
/// assert_eq!(assembled.to_bytes(), whole.to_bytes());
/// ```
#[derive(Debug, Clone)]
pub struct ChunkedFrame {
    settings: Settings,
    params: Params,
    n: u64,
    generation: u64,
    coding: Coding,
    q0: Option<u16>,
    shift: u8,
}

impl Encoder<BloomFilter> {
    /// The chunked frame of a filter of `params` holding `n` keys and `ones` one bits (the
    /// sum of its chunks' counts of ones), in chunks of `2^shift` bits coded apart: the
    /// frame this encoder writes for the whole filter with
    /// [`Chunking::Shift(shift)`](super::Chunking::Shift), its [`coding`](Encoder::coding)
    /// (which must be chunkable), its [`p_source`](Encoder::p_source) (q0 from `ones`, by
    /// default), profile, metadata, key and budget. Without a named coding it chooses from
    /// `n` and `ones` exactly as the default encoder chooses for the whole filter in chunks
    /// of `2^shift` bits (spec §4.10); where that encoder would then send raw or positional
    /// instead, [`assemble`](ChunkedFrame::assemble) refuses.
    ///
    /// Errors: [`Error::InvalidParameter`] for a coding that is not chunked or not in the
    /// profile, a shift outside `6..=47` or not below m, or more ones than bits.
    pub fn chunked_frame(
        &self,
        params: Params,
        n: u64,
        ones: u64,
        shift: u8,
    ) -> Result<ChunkedFrame> {
        let settings = self.settings().clone();
        let m = params.m();
        if !(MIN_CHUNK_SHIFT..=MAX_CHUNK_SHIFT).contains(&shift) || 1u64 << shift >= m {
            return Err(invalid(
                "shift",
                format!("{shift}: chunks of 2^{MIN_CHUNK_SHIFT} to 2^{MAX_CHUNK_SHIFT} bits, fewer than m = {m}"),
            ));
        }
        if ones > m {
            return Err(invalid("ones", format!("{ones} one bits of {m}")));
        }
        let coding = match settings.coding {
            Some(coding) => {
                settings.check_profile(coding)?;
                coding
            }
            None => settings.chunked_choice(&params, n, ones, shift)?,
        };
        if !coding.codes_bits() || !coding.is_chunkable() {
            return Err(invalid("coding", format!("{coding} is not chunked")));
        }
        let theory_p = crate::theory::zero_fraction(&params, n as f64);
        let q0 = coding
            .has_q0()
            .then(|| settings.q0(m, m - ones, Some(theory_p), coding));
        Ok(ChunkedFrame {
            settings,
            params,
            n,
            generation: 0,
            coding,
            q0,
            shift,
        })
    }
}

impl ChunkedFrame {
    /// The same frame, carrying generation number `generation` (as
    /// [`Encoder::encode_generation`] writes it).
    pub fn with_generation(mut self, generation: u64) -> Self {
        self.generation = generation;
        self
    }

    /// The number of chunks.
    pub fn chunk_count(&self) -> u64 {
        chunk_count(self.params.m(), self.shift)
    }

    /// The bits chunk `i` holds, `i << shift` up to the next chunk or m.
    pub fn chunk_bits(&self, i: u64) -> core::ops::Range<u64> {
        let m = self.params.m();
        (i << self.shift).min(m)..((i + 1) << self.shift).min(m)
    }

    /// The chunk that holds bit `position`; `None` at or past m.
    pub fn chunk_of(&self, position: u64) -> Option<u64> {
        (position < self.params.m()).then_some(position >> self.shift)
    }

    /// The coding of every chunk.
    pub fn coding(&self) -> Coding {
        self.coding
    }

    /// The frame's q0, for the codings that send one.
    pub fn q0(&self) -> Option<u16> {
        self.q0
    }

    /// The payload of chunk `i`, whose bits ([`chunk_bits`](Self::chunk_bits)) are `bits`
    /// (bit 0 of `bits` is the chunk's first bit).
    pub fn encode_chunk(&self, i: u64, bits: &BitArray) -> Result<Vec<u8>> {
        let range = self.chunk_bits(i);
        if i >= self.chunk_count() || bits.len() != range.end - range.start {
            return Err(invalid(
                "chunk",
                format!(
                    "{} bits for chunk {i} of {} (its bits are {range:?})",
                    bits.len(),
                    self.chunk_count()
                ),
            ));
        }
        let mut out = Vec::new();
        coding::encode_bits(self.coding, self.q0, bits.words(), bits.len(), &mut out);
        Ok(out)
    }

    /// [`encode_chunk`](Self::encode_chunk) with the coders' memory taken from and given
    /// back to the caller's context `scratch` (a worker coding chunk after chunk keeps one).
    pub fn encode_chunk_in(
        &self,
        scratch: &mut Scratch,
        i: u64,
        bits: &BitArray,
    ) -> Result<Vec<u8>> {
        scratch.run(|| self.encode_chunk(i, bits))
    }

    /// [`assemble`](Self::assemble) with the frame's payload taken from the caller's
    /// context `scratch`, where it goes back when [recycled](Scratch::recycle).
    pub fn assemble_in<P: AsRef<[u8]>>(
        &self,
        scratch: &mut Scratch,
        payloads: impl IntoIterator<Item = P>,
    ) -> Result<Frame> {
        scratch.frame(|| self.assemble(payloads))
    }

    /// The frame, from every chunk's payload in chunk order, with its header, table of
    /// lengths, checksum and, with the encoder's key, tag.
    ///
    /// Errors: [`Error::InvalidParameter`] for another number of payloads than chunks, or
    /// where one process would not have written this frame: its payload breaks the work
    /// bound (spec §2.2; such an array codes better in the positional coding) or is no
    /// smaller than the raw filter (send that instead); [`Error::OverBudget`] past the
    /// encoder's budget.
    pub fn assemble<P: AsRef<[u8]>>(&self, payloads: impl IntoIterator<Item = P>) -> Result<Frame> {
        let payloads: Vec<P> = payloads.into_iter().collect();
        if payloads.len() as u64 != self.chunk_count() {
            return Err(invalid(
                "payloads",
                format!(
                    "{} payloads for {} chunks",
                    payloads.len(),
                    self.chunk_count()
                ),
            ));
        }
        let payload = chunks::assemble(payloads.iter());
        let m = self.params.m();
        if !self.coding.within_work_bound(m, None, payload.len() as u64) {
            return Err(invalid(
                "payloads",
                format!(
                    "{} bytes code more than the work bound allows for {m} bits",
                    payload.len()
                ),
            ));
        }
        let settings = &self.settings;
        let header = FrameHeader::new(
            FrameKind::Full,
            self.params.clone(),
            self.n,
            self.generation,
            (self.coding, self.q0, Some(self.shift)),
            payload.len(),
        )
        .with_metadata(settings.metadata.as_deref());
        let frame = settings.sealed(header, payload);
        let raw = FrameHeader::new(
            FrameKind::Full,
            self.params.clone(),
            self.n,
            self.generation,
            (Coding::Raw, None, None),
            m.div_ceil(8) as usize,
        )
        .with_metadata(settings.metadata.as_deref())
        .frame_len()
            + settings.tag_len();
        if frame.encoded_len() >= raw {
            return Err(invalid(
                "payloads",
                format!(
                    "the frame of {} bytes is no smaller than the raw filter's {raw}",
                    frame.encoded_len()
                ),
            ));
        }
        if let Some(budget) = settings.budget.filter(|&b| frame.encoded_len() > b) {
            return Err(Error::OverBudget {
                budget,
                compressed: frame.encoded_len(),
                raw,
            });
        }
        Ok(frame)
    }
}
