//! Frames: a filter on the wire.
//!
//! A frame is a header that says everything a receiver needs to query the filter (layout,
//! hash family and seed, m, k, n, the payload coding and its parameters), the coded bit
//! array, and a CRC-32C of both. `spec/FORMAT.md` is the normative description; this module
//! implements it.
//!
//! ```
//! use bloomwire::{frame, BloomFilter, HashFamily, Params};
//! let mut f = BloomFilter::new(Params::standard(140_000, 2, HashFamily::default()).unwrap());
//! for i in 0..10_000u32 {
//!     f.insert(i.to_le_bytes());
//! }
//! let frame = frame::Encoder::new().encode(&f).unwrap();
//! let wire = frame.to_bytes();
//! assert_eq!(wire.len(), frame.encoded_len());
//! assert!(wire.len() < 10_000); // 17 500 bytes raw; m H(p) / 8 = 9904
//! let back = frame::decode(&wire, &frame::Limits::default()).unwrap();
//! assert_eq!(back.filter, f);
//! assert!(back.filter.contains(7u32.to_le_bytes()));
//! ```

use bytes::{Buf, BufMut, Bytes, BytesMut};

use crate::bits::BitArray;
use crate::coder;
use crate::error::{Error, Result};
use crate::filter::{BloomFilter, Layout, Params, MAX_M};
use crate::hashing::{BaseHash, HashFamily, IndexScheme};
use crate::model::KnownP;
use crate::rational::{HashCount, K_FRAC_BITS, MAX_K};
use crate::wire::{put_varint, varint_len, Reader};

/// The four bytes every frame starts with.
pub const MAGIC: [u8; 4] = *b"BLWR";

/// The format version this crate writes and reads.
pub const VERSION: u8 = 1;

/// Frame kind id of a full filter.
pub const KIND_FULL: u8 = 0;

/// Frame kind id of a delta between two generations.
pub const KIND_DELTA: u8 = 1;

/// What a frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameKind {
    /// A whole filter.
    Full,
    /// The XOR of two generations' bit arrays (Section IV of *Compressed Bloom Filters*).
    Delta {
        /// The generation the delta applies to.
        base_generation: u64,
        /// [`BitArray::digest`] of the base generation's bits.
        base_digest: u32,
        /// [`BitArray::digest`] of the bits after applying the delta.
        result_digest: u32,
    },
}

impl FrameKind {
    /// The wire id.
    pub fn id(&self) -> u8 {
        match self {
            FrameKind::Full => KIND_FULL,
            FrameKind::Delta { .. } => KIND_DELTA,
        }
    }

    /// Bytes of the sequencing fields a frame of this kind and generation carries: the
    /// generation, and for a delta its base generation and the two digests.
    pub fn sequence_len(&self, generation: u64) -> usize {
        varint_len(generation)
            + match self {
                FrameKind::Full => 0,
                FrameKind::Delta {
                    base_generation, ..
                } => varint_len(*base_generation) + 8,
            }
    }
}

/// Bytes of the checksum trailer.
pub const CHECKSUM_LEN: usize = 4;

/// How the bit array is coded in the payload. The wire id is the discriminant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Coding {
    /// The packed bit array, `ceil(m / 8)` bytes.
    Raw = 0,
    /// Range-coded bits with the adaptive counting model (no parameters).
    Adaptive = 1,
    /// Range-coded bits with a known zero probability `q0 / 2^16` sent in the header.
    KnownP = 2,
    /// ANS-coded bytes with the 256-symbol model built from `q0` (faster to decode).
    KnownPSymbols = 3,
}

impl Coding {
    /// Every coding, in id order.
    pub const ALL: [Coding; 4] = [
        Coding::Raw,
        Coding::Adaptive,
        Coding::KnownP,
        Coding::KnownPSymbols,
    ];

    /// The coding with a wire id.
    pub fn from_id(id: u8) -> Option<Coding> {
        Coding::ALL.get(usize::from(id)).copied()
    }

    /// The wire id.
    pub fn id(self) -> u8 {
        self as u8
    }

    /// Whether the header carries a quantized zero probability for this coding.
    pub fn has_q0(self) -> bool {
        matches!(self, Coding::KnownP | Coding::KnownPSymbols)
    }
}

impl core::fmt::Display for Coding {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Coding::Raw => "raw",
            Coding::Adaptive => "adaptive",
            Coding::KnownP => "known-p",
            Coding::KnownPSymbols => "known-p-symbols",
        })
    }
}

/// What a decoder accepts, checked before anything is allocated.
///
/// The defaults suit cache digests and set summaries of up to tens of millions of keys:
/// m up to 2^28 bits (32 MiB of filter), k up to 64, payloads up to 64 MiB.
///
/// The limits are what bounds a decoder's memory, not the frame's size: a 30-byte frame may
/// legitimately declare the largest m allowed (a nearly empty filter codes to a few bytes).
/// Decoding one frame allocates at most twice the packed size of its m, `2 * ceil(m / 8)`
/// bytes, plus its payload length and about 128 KiB of tables; a header that claims more
/// than the limits is refused before anything is allocated. `tests/bombs.rs` measures this
/// with a counting allocator. A receiver that expects larger filters raises the limits:
///
/// ```
/// let limits = bloomwire::frame::Limits { max_m: 1 << 33, ..Default::default() };
/// assert_eq!(limits.max_k, 64);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest m (bits) accepted; at most [`MAX_M`].
    pub max_m: u64,
    /// Largest `ceil(k)` accepted; at most [`MAX_K`].
    pub max_k: u32,
    /// Largest payload accepted, in bytes.
    pub max_payload: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_m: 1 << 28,
            max_k: 64,
            max_payload: 1 << 26,
        }
    }
}

impl Limits {
    /// The hard limits of the format: anything a conforming encoder may write.
    pub fn unlimited() -> Self {
        Limits {
            max_m: MAX_M,
            max_k: MAX_K,
            max_payload: u64::MAX,
        }
    }
}

/// A parsed frame header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameHeader {
    /// Full filter or delta.
    pub kind: FrameKind,
    /// m, layout with k, hash family.
    pub params: Params,
    /// Number of keys the sender inserted (informational).
    pub n: u64,
    /// The generation of the filter this frame carries (or produces, for a delta); 0 when
    /// the sender does not number its filters.
    pub generation: u64,
    /// The payload coding.
    pub coding: Coding,
    /// The quantized zero probability, for the known-p codings.
    pub q0: Option<u16>,
    /// Payload bytes.
    pub payload_len: usize,
    /// Header bytes (everything before the payload).
    pub header_len: usize,
}

impl FrameHeader {
    /// Bytes of the whole frame: header, payload, checksum.
    pub fn frame_len(&self) -> usize {
        self.header_len + self.payload_len + CHECKSUM_LEN
    }

    fn new(
        kind: FrameKind,
        params: Params,
        n: u64,
        generation: u64,
        coding: Coding,
        q0: Option<u16>,
        payload_len: usize,
    ) -> Self {
        let mut h = FrameHeader {
            kind,
            params,
            n,
            generation,
            coding,
            q0,
            payload_len,
            header_len: 0,
        };
        h.header_len = h.encoded_len();
        h
    }

    /// Bytes of the encoded header.
    fn encoded_len(&self) -> usize {
        let p = &self.params;
        let len = frame_len(
            p.family(),
            p.m(),
            k_field_len(p.layout()),
            self.n,
            self.kind.sequence_len(self.generation),
            self.coding.has_q0(),
            self.payload_len as u64,
        );
        len as usize - self.payload_len - CHECKSUM_LEN
    }

    fn write<B: BufMut>(&self, buf: &mut B) {
        let p = &self.params;
        buf.put_slice(&MAGIC);
        buf.put_u8(VERSION);
        buf.put_u8(self.kind.id());
        buf.put_u8(p.layout().id());
        buf.put_u8(p.family().base.id());
        buf.put_u8(p.family().scheme.id());
        buf.put_u8(self.coding.id());
        buf.put_u8(0); // flags
        match p.family().base {
            BaseHash::Xxh64 { seed } => put_varint(buf, seed),
            BaseHash::SipHash24 { k0, k1 } => {
                buf.put_u64_le(k0);
                buf.put_u64_le(k1);
            }
        }
        put_varint(buf, p.m());
        match p.layout() {
            Layout::Standard { k } | Layout::Partitioned { k } => put_varint(buf, k.raw().into()),
            Layout::Blocks { ks } => ks.iter().for_each(|k| put_varint(buf, k.raw().into())),
        }
        put_varint(buf, self.n);
        put_varint(buf, self.generation);
        if let FrameKind::Delta {
            base_generation,
            base_digest,
            result_digest,
        } = self.kind
        {
            put_varint(buf, base_generation);
            buf.put_u32_le(base_digest);
            buf.put_u32_le(result_digest);
        }
        if let Some(q0) = self.q0 {
            buf.put_u16_le(q0);
        }
        put_varint(buf, self.payload_len as u64);
    }

    /// Parse the header at the start of `input`, checking every field against the spec and
    /// `limits`. Needs only the header bytes: a short input gives [`Error::Incomplete`].
    pub fn parse(input: &[u8], limits: &Limits) -> Result<FrameHeader> {
        let mut r = Reader::new(input);
        let have = input.len().min(MAGIC.len());
        if input[..have] != MAGIC[..have] {
            return Err(Error::BadMagic);
        }
        r.take(MAGIC.len())?;
        let version = r.u8()?;
        if version != VERSION {
            return Err(Error::UnsupportedVersion(version));
        }
        let field = |field, value: u64, offset| Error::InvalidField {
            field,
            value,
            offset,
        };
        let off = r.offset();
        let kind = r.u8()?;
        if kind != KIND_FULL && kind != KIND_DELTA {
            return Err(field("frame kind", kind.into(), off));
        }
        let layout_off = r.offset();
        let layout_id = r.u8()?;
        if layout_id > Layout::BLOCKS_ID {
            return Err(field("filter type", layout_id.into(), layout_off));
        }
        let off = r.offset();
        let hash_id = r.u8()?;
        if hash_id != BaseHash::XXH64_ID && hash_id != BaseHash::SIPHASH24_ID {
            return Err(field("base hash", hash_id.into(), off));
        }
        let off = r.offset();
        let scheme_id = r.u8()?;
        let scheme =
            IndexScheme::from_id(scheme_id).ok_or(field("index scheme", scheme_id.into(), off))?;
        let off = r.offset();
        let coding_id = r.u8()?;
        let coding = Coding::from_id(coding_id).ok_or(field("coding", coding_id.into(), off))?;
        let off = r.offset();
        let flags = r.u8()?;
        if flags != 0 {
            return Err(field("flags", flags.into(), off));
        }
        let base = if hash_id == BaseHash::XXH64_ID {
            BaseHash::Xxh64 {
                seed: r.varint("seed")?,
            }
        } else {
            BaseHash::SipHash24 {
                k0: r.u64_le()?,
                k1: r.u64_le()?,
            }
        };
        let m_off = r.offset();
        let m = r.varint("m")?;
        if m == 0 || m > MAX_M {
            return Err(field("m", m, m_off));
        }
        if m > limits.max_m {
            return Err(Error::LimitExceeded {
                field: "m",
                value: m,
                limit: limits.max_m,
                offset: m_off,
            });
        }
        let k_off = r.offset();
        let max_raw = u64::from(MAX_K) << K_FRAC_BITS;
        let read_k = |r: &mut Reader<'_>| -> Result<HashCount> {
            let off = r.offset();
            let raw = r.varint("k")?;
            if raw > max_raw {
                return Err(field("k", raw, off));
            }
            Ok(HashCount::from_raw_allow_zero(raw as u32).expect("checked"))
        };
        let layout = match layout_id {
            Layout::STANDARD_ID => Layout::Standard { k: read_k(&mut r)? },
            Layout::PARTITIONED_ID => Layout::Partitioned { k: read_k(&mut r)? },
            _ => Layout::Blocks {
                ks: (0..m.count_ones())
                    .map(|_| read_k(&mut r))
                    .collect::<Result<_>>()?,
            },
        };
        let params = Params::new(m, layout, HashFamily::new(base, scheme))
            .map_err(|_| field("k", 0, k_off))?;
        let k = params.k();
        if k.ceil() > limits.max_k {
            return Err(Error::LimitExceeded {
                field: "k",
                value: k.ceil().into(),
                limit: limits.max_k.into(),
                offset: k_off,
            });
        }
        let n = r.varint("n")?;
        let generation = r.varint("generation")?;
        let kind = if kind == KIND_DELTA {
            let off = r.offset();
            let base_generation = r.varint("base generation")?;
            if base_generation >= generation {
                return Err(field("base generation", base_generation, off));
            }
            FrameKind::Delta {
                base_generation,
                base_digest: r.u32_le()?,
                result_digest: r.u32_le()?,
            }
        } else {
            FrameKind::Full
        };
        let q0 = if coding.has_q0() {
            let off = r.offset();
            let q0 = r.u16_le()?;
            if q0 == 0 {
                return Err(field("q0", 0, off));
            }
            Some(q0)
        } else {
            None
        };
        let len_off = r.offset();
        let payload_len = r.varint("payload length")?;
        if payload_len > limits.max_payload {
            return Err(Error::LimitExceeded {
                field: "payload length",
                value: payload_len,
                limit: limits.max_payload,
                offset: len_off,
            });
        }
        let well_formed = match coding {
            Coding::Raw => payload_len == m.div_ceil(8),
            // ANS payloads are whole words (an ANS coder ending in state 0 writes none).
            Coding::KnownPSymbols => payload_len % 4 == 0,
            // Range-coded payloads end at any byte.
            Coding::Adaptive | Coding::KnownP => true,
        };
        if !well_formed || payload_len > usize::MAX as u64 / 2 {
            return Err(field("payload length", payload_len, len_off));
        }
        Ok(FrameHeader {
            kind,
            params,
            n,
            generation,
            coding,
            q0,
            payload_len: payload_len as usize,
            header_len: r.offset(),
        })
    }
}

/// Bytes of the k field(s) of a layout.
pub fn k_field_len(layout: &Layout) -> usize {
    match layout {
        Layout::Standard { k } | Layout::Partitioned { k } => varint_len(k.raw().into()),
        Layout::Blocks { ks } => ks.iter().map(|k| varint_len(k.raw().into())).sum(),
    }
}

/// Exact bytes of a frame from the parts of its header that vary: the hash family (its
/// seed), m, the k field's length ([`k_field_len`]), n, the sequencing fields' length
/// ([`FrameKind::sequence_len`]), whether the coding sends q0, and the payload length.
/// Planners use it to budget frames before building them. Saturates at `u64::MAX`.
pub fn frame_len(
    family: &HashFamily,
    m: u64,
    k_field_len: usize,
    n: u64,
    sequence_len: usize,
    has_q0: bool,
    payload_len: u64,
) -> u64 {
    let seed = match family.base {
        BaseHash::Xxh64 { seed } => varint_len(seed),
        BaseHash::SipHash24 { .. } => 16,
    };
    let fixed = MAGIC.len() + 7 + seed + varint_len(m) + k_field_len + varint_len(n) + sequence_len;
    let q0 = if has_q0 { 2 } else { 0 };
    // Saturating: planners ask about payloads of any size, even sizes no frame can have.
    ((fixed + q0 + varint_len(payload_len) + CHECKSUM_LEN) as u64).saturating_add(payload_len)
}

/// An encoded frame, ready to write; its exact length is known before writing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    header: FrameHeader,
    payload: Vec<u8>,
}

impl Frame {
    /// The header.
    pub fn header(&self) -> &FrameHeader {
        &self.header
    }

    /// The coded payload.
    pub fn payload(&self) -> &[u8] {
        &self.payload
    }

    /// The coding used.
    pub fn coding(&self) -> Coding {
        self.header.coding
    }

    /// Exact bytes [`write_to`](Self::write_to) writes.
    pub fn encoded_len(&self) -> usize {
        self.header.frame_len()
    }

    /// Write the frame into any buffer.
    pub fn write_to<B: BufMut>(&self, buf: &mut B) {
        let mut head = Vec::with_capacity(self.header.header_len);
        self.header.write(&mut head);
        debug_assert_eq!(head.len(), self.header.header_len);
        let crc = crc32c::crc32c_append(crc32c::crc32c(&head), &self.payload);
        buf.put_slice(&head);
        buf.put_slice(&self.payload);
        buf.put_u32_le(crc);
    }

    /// The frame as bytes.
    pub fn to_bytes(&self) -> Bytes {
        let mut b = BytesMut::with_capacity(self.encoded_len());
        self.write_to(&mut b);
        debug_assert_eq!(b.len(), self.encoded_len());
        b.freeze()
    }
}

/// Where the known-p codings take their probability from.
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
    /// This quantized zero probability (see [`KnownP::quantize`]); 0 is read as 1.
    Fixed(u16),
}

/// Encodes filters, and deltas between two generations of a filter, into frames.
///
/// By default it tries the compressed codings ([`Coding::KnownPSymbols`] and
/// [`Coding::Adaptive`]) and keeps the smallest frame; whatever the coding asked for, it
/// sends the raw bit array instead when compression would not be smaller.
#[derive(Debug, Clone, Default)]
pub struct Encoder {
    coding: Option<Coding>,
    p_source: PSource,
    budget: Option<usize>,
}

/// What a frame is being built from: a filter's parameters and a bit array.
struct Body<'a> {
    kind: FrameKind,
    params: &'a Params,
    n: u64,
    generation: u64,
    bits: &'a BitArray,
    theory_p: Option<f64>,
}

impl Encoder {
    /// An encoder that picks the smallest coding.
    pub fn new() -> Self {
        Self::default()
    }

    /// Use this coding (or raw, if it is not smaller).
    pub fn coding(mut self, coding: Coding) -> Self {
        self.coding = Some(coding);
        self
    }

    /// Where known-p codings take `p` from.
    pub fn p_source(mut self, source: PSource) -> Self {
        self.p_source = source;
        self
    }

    /// Fail with [`Error::OverBudget`] unless the frame fits in `bytes`.
    pub fn budget(mut self, bytes: usize) -> Self {
        self.budget = Some(bytes);
        self
    }

    fn q0(&self, body: &Body<'_>) -> u16 {
        let measured = || KnownP::measured(body.bits.count_zeros(), body.bits.len());
        match self.p_source {
            PSource::Measured => measured(),
            PSource::Theory => body.theory_p.map_or_else(measured, KnownP::quantize),
            PSource::Fixed(q0) => q0.max(1),
        }
    }

    fn frame(&self, body: &Body<'_>, coding: Coding) -> Frame {
        let bits = body.bits;
        let (q0, payload) = match coding {
            Coding::Raw => (None, bits.to_bytes()),
            Coding::Adaptive => (None, coder::encode_adaptive(bits)),
            Coding::KnownP => {
                let q0 = self.q0(body);
                (Some(q0), coder::encode_known_p(bits, q0))
            }
            Coding::KnownPSymbols => {
                let q0 = self.q0(body);
                (Some(q0), coder::encode_symbols(bits, q0))
            }
        };
        let header = FrameHeader::new(
            body.kind,
            body.params.clone(),
            body.n,
            body.generation,
            coding,
            q0,
            payload.len(),
        );
        Frame { header, payload }
    }

    /// The requested or smallest coding, raw when that is not smaller, budget checked.
    fn choose(&self, body: &Body<'_>) -> Result<Frame> {
        let raw = self.frame(body, Coding::Raw);
        let candidates = match self.coding {
            Some(Coding::Raw) => vec![],
            Some(c) => vec![c],
            None => vec![Coding::KnownPSymbols, Coding::Adaptive],
        };
        let best = candidates
            .into_iter()
            .map(|c| self.frame(body, c))
            .min_by_key(Frame::encoded_len);
        let compressed_len = best.as_ref().map(Frame::encoded_len);
        let frame = match best {
            Some(f) if f.encoded_len() < raw.encoded_len() => f,
            _ => raw.clone(),
        };
        if let Some(budget) = self.budget {
            if frame.encoded_len() > budget {
                return Err(Error::OverBudget {
                    budget,
                    compressed: compressed_len.unwrap_or(raw.encoded_len()),
                    raw: raw.encoded_len(),
                });
            }
        }
        Ok(frame)
    }

    fn full_body(filter: &BloomFilter, generation: u64) -> Body<'_> {
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

    /// The full frame for `filter` with one coding, no fallback, generation 0.
    pub fn encode_with(&self, filter: &BloomFilter, coding: Coding) -> Frame {
        self.frame(&Self::full_body(filter, 0), coding)
    }

    /// Encode a full frame (generation 0): the requested or smallest coding, raw when that is
    /// not smaller, and the budget checked.
    pub fn encode(&self, filter: &BloomFilter) -> Result<Frame> {
        self.encode_generation(filter, 0)
    }

    /// Encode a full frame that carries generation number `generation`.
    pub fn encode_generation(&self, filter: &BloomFilter, generation: u64) -> Result<Frame> {
        self.choose(&Self::full_body(filter, generation))
    }

    /// Encode the delta that turns generation `base_generation` (`base`) into generation
    /// `generation` (`filter`): the XOR of their bit arrays, coded like a filter, with the
    /// digests of both so a receiver can tell whether it applies.
    ///
    /// Errors: the filters differ in m, layout, k or hash family
    /// ([`Error::Incompatible`]); `generation <= base_generation`
    /// ([`Error::InvalidParameter`]); or the budget.
    pub fn encode_delta(
        &self,
        base: &BloomFilter,
        base_generation: u64,
        filter: &BloomFilter,
        generation: u64,
    ) -> Result<Frame> {
        if generation <= base_generation {
            return Err(crate::error::invalid(
                "generation",
                format!("{generation} is not after the base generation {base_generation}"),
            ));
        }
        let xor = filter.xor(base)?;
        self.choose(&Body {
            kind: FrameKind::Delta {
                base_generation,
                base_digest: base.bits().digest(),
                result_digest: filter.bits().digest(),
            },
            params: filter.params(),
            n: filter.n(),
            generation,
            bits: &xor,
            theory_p: None,
        })
    }
}

/// A decoded full frame: the filter and the header it came with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// The filter, ready to query.
    pub filter: BloomFilter,
    /// The frame's header.
    pub header: FrameHeader,
}

/// A decoded delta frame: the XOR of two generations, to apply to the base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeltaFrame {
    /// The frame's header (its kind is [`FrameKind::Delta`]).
    pub header: FrameHeader,
    /// The XOR of the base generation's bits and the result's.
    pub xor: BitArray,
}

impl DeltaFrame {
    /// The generation this delta applies to.
    pub fn base_generation(&self) -> u64 {
        match self.header.kind {
            FrameKind::Delta {
                base_generation, ..
            } => base_generation,
            FrameKind::Full => unreachable!("a DeltaFrame always has a delta header"),
        }
    }

    /// Apply the delta to `base`, which the caller holds as generation `base_generation`.
    /// Returns the new generation's filter; `base` is untouched, so an error leaves the
    /// caller's state as it was.
    ///
    /// Errors, each meaning the receiver must resynchronize with a full frame:
    /// [`Error::GenerationGap`] (the delta is for another generation),
    /// [`Error::Incompatible`] (other m, layout, k or hash family),
    /// [`Error::BaseMismatch`] (same generation number, different bits),
    /// [`Error::ResultMismatch`] (the result is not what the sender had).
    pub fn apply(&self, base: &BloomFilter, base_generation: u64) -> Result<BloomFilter> {
        let FrameKind::Delta {
            base_generation: wanted,
            base_digest,
            result_digest,
        } = self.header.kind
        else {
            unreachable!("a DeltaFrame always has a delta header")
        };
        if wanted != base_generation {
            return Err(Error::GenerationGap {
                have: Some(base_generation),
                base: wanted,
            });
        }
        if base.params() != &self.header.params {
            return Err(Error::Incompatible(
                "delta and base differ in m, layout, k or hash family",
            ));
        }
        let actual = base.bits().digest();
        if actual != base_digest {
            return Err(Error::BaseMismatch {
                generation: wanted,
                expected: base_digest,
                actual,
            });
        }
        let mut bits = base.bits().clone();
        bits.xor_with(&self.xor)?;
        let actual = bits.digest();
        if actual != result_digest {
            return Err(Error::ResultMismatch {
                generation: self.header.generation,
                expected: result_digest,
                actual,
            });
        }
        BloomFilter::from_parts(self.header.params.clone(), bits, self.header.n)
    }
}

/// Any decoded frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// A full filter.
    Full(Decoded),
    /// A delta between two generations.
    Delta(DeltaFrame),
}

impl Message {
    /// The frame's header.
    pub fn header(&self) -> &FrameHeader {
        match self {
            Message::Full(d) => &d.header,
            Message::Delta(d) => &d.header,
        }
    }

    /// The frame that carries this message: the same header fields, coding and q0, the
    /// payload coded again. Every frame a decoder accepts is canonical (spec section 2.3),
    /// so for a decoded message these are exactly the bytes it was decoded from; a relay can
    /// forward what it decoded without keeping the input.
    ///
    /// ```
    /// use bloomwire::frame::{decode_message, Coding, Encoder, Limits};
    /// use bloomwire::{BloomFilter, HashFamily, Params};
    /// let mut f = BloomFilter::new(Params::standard(500, 2, HashFamily::default()).unwrap());
    /// f.insert(b"x");
    /// let wire = Encoder::new().encode_with(&f, Coding::KnownP).to_bytes();
    /// let message = decode_message(&wire, &Limits::default()).unwrap();
    /// assert_eq!(message.to_frame().to_bytes(), wire);
    /// ```
    pub fn to_frame(&self) -> Frame {
        let (header, bits) = match self {
            Message::Full(d) => (&d.header, d.filter.bits()),
            Message::Delta(d) => (&d.header, &d.xor),
        };
        let encoder = Encoder {
            coding: Some(header.coding),
            p_source: header.q0.map_or(PSource::Measured, PSource::Fixed),
            budget: None,
        };
        encoder.frame(
            &Body {
                kind: header.kind,
                params: &header.params,
                n: header.n,
                generation: header.generation,
                bits,
                theory_p: None,
            },
            header.coding,
        )
    }
}

/// Decode the frame at the start of `input`, full or delta; returns it and the bytes it
/// took. Bytes after the frame are left alone (for streams). A short input gives
/// [`Error::Incomplete`] with how many more bytes are needed.
pub fn decode_message_prefix(input: &[u8], limits: &Limits) -> Result<(Message, usize)> {
    let header = FrameHeader::parse(input, limits)?;
    let len = header.frame_len();
    if input.len() < len {
        return Err(Error::Incomplete {
            needed: len - input.len(),
        });
    }
    let body_end = len - CHECKSUM_LEN;
    let stored = u32::from_le_bytes(input[body_end..len].try_into().expect("4 bytes"));
    let computed = crc32c::crc32c(&input[..body_end]);
    if stored != computed {
        return Err(Error::ChecksumMismatch {
            stored,
            computed,
            offset: body_end,
        });
    }
    let payload = &input[header.header_len..body_end];
    let m = header.params.m();
    let bits = match header.coding {
        Coding::Raw => BitArray::from_bytes(payload, m).map_err(|_| "bits past m are not zero"),
        Coding::Adaptive => coder::decode_adaptive(payload, m),
        Coding::KnownP => coder::decode_known_p(payload, m, header.q0.expect("parsed")),
        Coding::KnownPSymbols => coder::decode_symbols(payload, m, header.q0.expect("parsed")),
    }
    .map_err(|reason| Error::CorruptPayload {
        reason,
        offset: header.header_len,
    })?;
    let message = match header.kind {
        FrameKind::Full => Message::Full(Decoded {
            filter: BloomFilter::from_parts(header.params.clone(), bits, header.n)?,
            header,
        }),
        FrameKind::Delta { .. } => Message::Delta(DeltaFrame { header, xor: bits }),
    };
    Ok((message, len))
}

/// Decode an input that holds exactly one frame, full or delta.
pub fn decode_message(input: &[u8], limits: &Limits) -> Result<Message> {
    let (message, len) = decode_message_prefix(input, limits)?;
    if len != input.len() {
        return Err(Error::TrailingBytes {
            count: input.len() - len,
            offset: len,
        });
    }
    Ok(message)
}

fn expect_full(message: Message) -> Result<Decoded> {
    match message {
        Message::Full(d) => Ok(d),
        Message::Delta(_) => Err(Error::UnexpectedDelta),
    }
}

/// Decode the full frame at the start of `input`; returns it and the bytes it took (see
/// [`decode_message_prefix`]). A delta frame is [`Error::UnexpectedDelta`].
pub fn decode_prefix(input: &[u8], limits: &Limits) -> Result<(Decoded, usize)> {
    let (message, len) = decode_message_prefix(input, limits)?;
    Ok((expect_full(message)?, len))
}

/// Decode an input that holds exactly one full frame.
pub fn decode(input: &[u8], limits: &Limits) -> Result<Decoded> {
    expect_full(decode_message(input, limits)?)
}

/// Decode exactly one frame held in `Bytes`.
pub fn decode_bytes(input: &Bytes, limits: &Limits) -> Result<Decoded> {
    decode(input, limits)
}

/// Decode the next frame from a buffer and advance past it. On [`Error::Incomplete`] the
/// buffer is left untouched so more input can be appended.
///
/// The frame is found through the chunks `buf` exposes with [`Buf::chunks_vectored`]
/// (every byte for `Bytes`, `BytesMut`, `VecDeque<u8>` and chains of them); a frame split
/// across chunks is gathered into one allocation of its limit-checked length. Bytes a buffer
/// does not expose count as not yet received.
pub fn decode_buf<B: Buf>(buf: &mut B, limits: &Limits) -> Result<Decoded> {
    let mut slices = [std::io::IoSlice::new(&[]); 64];
    let count = buf.chunks_vectored(&mut slices);
    let chunks: Vec<&[u8]> = slices[..count].iter().map(|s| &s[..]).collect();
    let first = chunks.first().copied().unwrap_or(&[]);
    let header = match FrameHeader::parse(first, limits) {
        Err(Error::Incomplete { .. }) if chunks.len() > 1 => {
            FrameHeader::parse(&gather(&chunks, MAX_HEADER_LEN), limits)?
        }
        other => other?,
    };
    let len = header.frame_len();
    let exposed: usize = chunks.iter().map(|c| c.len()).sum();
    if exposed < len {
        return Err(Error::Incomplete {
            needed: len - exposed,
        });
    }
    let decoded = if first.len() >= len {
        decode_prefix(&first[..len], limits)?.0
    } else {
        decode_prefix(&gather(&chunks, len), limits)?.0
    };
    buf.advance(len);
    Ok(decoded)
}

/// The largest header the format allows: fixed fields, a 16-byte SipHash key (an XXH64
/// seed takes at most 10), m and n as 10-byte varints, 48 block k's of up to 4 bytes, two
/// generations and two digests, q0, and the payload length.
pub const MAX_HEADER_LEN: usize = 4 + 7 + 16 + 10 + 48 * 4 + 10 + 2 * 10 + 8 + 2 + 10;

/// The first `len` bytes of a sequence of chunks (fewer if they hold fewer).
fn gather(chunks: &[&[u8]], len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    for c in chunks {
        let take = c.len().min(len - out.len());
        out.extend_from_slice(&c[..take]);
    }
    out
}
