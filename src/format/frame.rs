//! Frames: a filter on the wire.
//!
//! A frame is a header that says everything a receiver needs to query the filter (layout,
//! hash family and seed, m, k, n, the payload coding and its parameters), the coded bit
//! array, and a CRC-32C of both; a frame of filter type 3 carries a counting filter's
//! counters instead ([`Encoder::encode_counting`], [`decode_counting`]). `spec/FORMAT.md` is
//! the normative description; this module implements it.
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

use crate::entropy::counters::{self, packed_len, CounterTable};
use crate::entropy::model::KnownP;
use crate::entropy::range;
use crate::error::{Error, Result};
use crate::filter::bits::BitArray;
use crate::filter::counting::CountingBloomFilter;
use crate::filter::hashing::{BaseHash, HashFamily, IndexScheme};
use crate::filter::rational::{HashCount, K_FRAC_BITS, MAX_K};
use crate::filter::{BloomFilter, Layout, Params, MAX_M};
use crate::wire::{put_varint, varint_len, Reader};

/// The four bytes every frame starts with.
pub const MAGIC: [u8; 4] = *b"BLWR";

/// The format version this crate writes and reads.
pub const VERSION: u8 = 1;

/// Frame kind id of a full filter.
pub const KIND_FULL: u8 = 0;

/// Frame kind id of a delta between two generations.
pub const KIND_DELTA: u8 = 1;

/// Filter type id of a counting Bloom filter (its counters follow the index rule of the
/// filter type in the header's `counted type` field).
pub const FILTER_TYPE_COUNTING: u8 = 3;

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

/// Header `flags` bit 0: the payload is chunked (spec §4.10), and a `chunk shift` byte
/// follows q0 in the header.
pub const FLAG_CHUNKED: u8 = 0x01;

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
    /// Counting filters: range-coded counters with a known frequency table sent in the
    /// header ([`CounterTable`]).
    KnownCounters = 4,
    /// Counting filters: range-coded counters with the adaptive model
    /// ([`AdaptiveCounters`](crate::entropy::counters::AdaptiveCounters)).
    AdaptiveCounters = 5,
    /// The model of [`Coding::KnownPSymbols`] coded by four interleaved rANS states with
    /// table-driven decoding: the fastest compressed coding, 32 bytes of final states larger.
    KnownPInterleaved = 6,
}

impl Coding {
    /// Every coding of a Bloom filter's bit array (filter types 0 to 2), in id order.
    pub const ALL: [Coding; 5] = [
        Coding::Raw,
        Coding::Adaptive,
        Coding::KnownP,
        Coding::KnownPSymbols,
        Coding::KnownPInterleaved,
    ];

    /// Every coding of a counting filter's counters (filter type 3), in id order; raw means
    /// the packed counters.
    pub const COUNTERS: [Coding; 3] =
        [Coding::Raw, Coding::KnownCounters, Coding::AdaptiveCounters];

    /// The coding with a wire id.
    pub fn from_id(id: u8) -> Option<Coding> {
        Coding::ALL
            .into_iter()
            .chain(Coding::COUNTERS)
            .find(|c| c.id() == id)
    }

    /// Whether frames of this filter type may use this coding: [`Coding::ALL`] for filter
    /// types 0 to 2, [`Coding::COUNTERS`] for type 3 ([`FILTER_TYPE_COUNTING`]).
    pub fn valid_for(self, filter_type: u8) -> bool {
        if filter_type == FILTER_TYPE_COUNTING {
            Coding::COUNTERS.contains(&self)
        } else {
            Coding::ALL.contains(&self)
        }
    }

    /// The wire id.
    pub fn id(self) -> u8 {
        self as u8
    }

    /// Whether the header carries a quantized zero probability for this coding.
    pub fn has_q0(self) -> bool {
        matches!(
            self,
            Coding::KnownP | Coding::KnownPSymbols | Coding::KnownPInterleaved
        )
    }
}

impl core::fmt::Display for Coding {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Coding::Raw => "raw",
            Coding::Adaptive => "adaptive",
            Coding::KnownP => "known-p",
            Coding::KnownPSymbols => "known-p-symbols",
            Coding::KnownCounters => "known-counters",
            Coding::AdaptiveCounters => "adaptive-counters",
            Coding::KnownPInterleaved => "known-p-interleaved",
        })
    }
}

/// What a decoder accepts, checked before anything is allocated.
///
/// The defaults suit cache digests and set summaries of up to tens of millions of keys:
/// m up to 2^28 bits (32 MiB of filter; a counting filter of m counters takes m bytes), k up
/// to 64, payloads up to 64 MiB.
///
/// The limits are what bounds a decoder's memory, not the frame's size: a 30-byte frame may
/// legitimately declare the largest m allowed (a nearly empty filter codes to a few bytes).
/// Decoding one frame allocates at most twice the packed size of its m, `2 * ceil(m / 8)`
/// bytes (a counting frame: twice its m counters, `2 * m` bytes), plus its payload length
/// and about 128 KiB of tables; a header that claims more than the limits is refused before
/// anything is allocated. `tests/bombs.rs` measures this with a counting allocator. A
/// receiver that expects larger filters raises the limits:
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
    /// Bits per counter, for counting filters (filter type 3); `params` then gives the
    /// counters' layout (the `counted type`), m and k.
    pub counter_width: Option<u8>,
    /// The frequency table of [`Coding::KnownCounters`].
    pub counter_table: Option<CounterTable>,
    /// For a chunked payload (flags bit 0), `log2` of the chunk size in bits.
    pub chunk_shift: Option<u8>,
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
        (coding, q0, chunk_shift): (Coding, Option<u16>, Option<u8>),
        payload_len: usize,
    ) -> Self {
        let mut h = FrameHeader {
            kind,
            params,
            n,
            generation,
            coding,
            q0,
            counter_width: None,
            counter_table: None,
            chunk_shift,
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
        let counting = match self.counter_width {
            Some(_) => 2 + self.counter_table.as_ref().map_or(0, table_len),
            None => 0,
        };
        len as usize - self.payload_len - CHECKSUM_LEN
            + counting
            + usize::from(self.chunk_shift.is_some())
    }

    /// Whether the frame carries a counting filter (filter type 3).
    pub fn is_counting(&self) -> bool {
        self.counter_width.is_some()
    }

    /// The filter type id on the wire.
    pub fn filter_type(&self) -> u8 {
        match self.counter_width {
            Some(_) => FILTER_TYPE_COUNTING,
            None => self.params.layout().id(),
        }
    }

    /// Number of independently coded chunks: 1 for an unchunked payload.
    pub fn chunk_count(&self) -> u64 {
        self.chunk_shift.map_or(1, |s| {
            crate::entropy::chunks::chunk_count(self.params.m(), s)
        })
    }

    /// The bits chunk `i` covers.
    pub fn chunk_bits(&self, i: u64) -> core::ops::Range<u64> {
        let m = self.params.m();
        match self.chunk_shift {
            None => 0..m,
            Some(s) => (i << s).min(m)..((i + 1) << s).min(m),
        }
    }

    fn write<B: BufMut>(&self, buf: &mut B) {
        let p = &self.params;
        buf.put_slice(&MAGIC);
        buf.put_u8(VERSION);
        buf.put_u8(self.kind.id());
        buf.put_u8(self.filter_type());
        buf.put_u8(p.family().base.id());
        buf.put_u8(p.family().scheme.id());
        buf.put_u8(self.coding.id());
        buf.put_u8(if self.chunk_shift.is_some() {
            FLAG_CHUNKED
        } else {
            0
        });
        match p.family().base {
            BaseHash::Xxh64 { seed } => put_varint(buf, seed),
            BaseHash::SipHash24 { k0, k1 } => {
                buf.put_u64_le(k0);
                buf.put_u64_le(k1);
            }
        }
        put_varint(buf, p.m());
        if let Some(width) = self.counter_width {
            buf.put_u8(p.layout().id());
            buf.put_u8(width);
        }
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
        if let Some(table) = &self.counter_table {
            let f = table.frequencies();
            put_varint(buf, f.len() as u64);
            f.iter().for_each(|&x| put_varint(buf, x.into()));
        }
        if let Some(shift) = self.chunk_shift {
            buf.put_u8(shift);
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
        let type_id = r.u8()?;
        if type_id > FILTER_TYPE_COUNTING {
            return Err(field("filter type", type_id.into(), layout_off));
        }
        let counting = type_id == FILTER_TYPE_COUNTING;
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
        let coding = Coding::from_id(coding_id)
            .filter(|c| c.valid_for(type_id))
            .ok_or(field("coding", coding_id.into(), off))?;
        let off = r.offset();
        let flags = r.u8()?;
        let chunked = flags == FLAG_CHUNKED;
        if (flags != 0 && !chunked) || (chunked && !crate::entropy::chunks::chunkable(coding)) {
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
        let (layout_id, counter_width) = if counting {
            let off = r.offset();
            let counted = r.u8()?;
            if counted > Layout::BLOCKS_ID {
                return Err(field("counted type", counted.into(), off));
            }
            let off = r.offset();
            let width = r.u8()?;
            if !(1..=crate::filter::counting::MAX_COUNTER_BITS).contains(&width) {
                return Err(field("counter width", width.into(), off));
            }
            (counted, Some(width))
        } else {
            (type_id, None)
        };
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
        let counter_table = match (coding, counter_width) {
            (Coding::KnownCounters, Some(width)) => {
                let off = r.offset();
                let t = r.varint("table length")?;
                if t == 0 || t > 1 << width {
                    return Err(field("table length", t, off));
                }
                let mut freq = Vec::with_capacity(t as usize);
                let mut sum = 0u64;
                for _ in 0..t {
                    let f_off = r.offset();
                    let f = r.varint("frequency")?;
                    if f > u64::from(counters::TABLE_TOTAL) {
                        return Err(field("frequency", f, f_off));
                    }
                    sum += f;
                    freq.push(f as u32);
                }
                Some(CounterTable::new(freq, width).map_err(|_| field("frequencies", sum, off))?)
            }
            _ => None,
        };
        let chunk_shift = if chunked {
            let off = r.offset();
            let shift = r.u8()?;
            let range =
                crate::entropy::chunks::MIN_CHUNK_SHIFT..=crate::entropy::chunks::MAX_CHUNK_SHIFT;
            if !range.contains(&shift) || 1u64 << shift >= m {
                return Err(field("chunk shift", shift.into(), off));
            }
            Some(shift)
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
        let well_formed = match (coding, chunk_shift) {
            // A length of at least one byte per chunk; each chunk is checked when decoded.
            (_, Some(shift)) => payload_len >= crate::entropy::chunks::chunk_count(m, shift),
            (coding, None) => match coding {
                Coding::Raw => match counter_width {
                    Some(width) => payload_len == packed_len(m, width),
                    None => payload_len == m.div_ceil(8),
                },
                // ANS payloads are whole words (an ANS coder ending in state 0 writes none).
                Coding::KnownPSymbols => payload_len % 4 == 0,
                // Four 64-bit final states, then whole words.
                Coding::KnownPInterleaved => {
                    payload_len % 4 == 0 && payload_len >= crate::entropy::rans::STATE_BYTES as u64
                }
                // Range-coded payloads end at any byte.
                Coding::Adaptive
                | Coding::KnownP
                | Coding::KnownCounters
                | Coding::AdaptiveCounters => true,
            },
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
            counter_width,
            counter_table,
            chunk_shift,
            payload_len: payload_len as usize,
            header_len: r.offset(),
        })
    }
}

/// Bytes of a [`CounterTable`] in the header: its length and its frequencies as varints.
pub fn table_len(table: &CounterTable) -> usize {
    let f = table.frequencies();
    varint_len(f.len() as u64) + f.iter().map(|&x| varint_len(x.into())).sum::<usize>()
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
/// By default it tries the compressed codings ([`Coding::KnownPInterleaved`],
/// [`Coding::KnownPSymbols`] and [`Coding::Adaptive`]) and keeps the smallest frame, except
/// that it prefers [`Coding::KnownPInterleaved`] (several times faster to decode) when that
/// frame is at most 0.05% larger than the smallest and within the budget (its final states
/// cost about 20 bytes more than coding 3's end, so from about 40 kB of compressed frame
/// on). Whatever the coding asked for, it sends the raw bit array instead
/// when compression would not be smaller.
///
/// Counting filters go through the `encode_counting*` methods, which pick among
/// [`Coding::COUNTERS`] the same way.
#[derive(Debug, Clone, Default)]
pub struct Encoder {
    coding: Option<Coding>,
    p_source: PSource,
    budget: Option<usize>,
    counter_table: Option<CounterTable>,
    chunking: Chunking,
    threads: Option<usize>,
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
struct CounterBody<'a> {
    kind: FrameKind,
    params: &'a Params,
    width: u8,
    n: u64,
    generation: u64,
    counters: &'a [u8],
    /// The theoretical mean of a counter, for [`PSource::Theory`] (full frames only).
    theory_mean: Option<f64>,
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

    /// Whether to chunk the payload (ignored for raw frames).
    pub fn chunking(mut self, chunking: Chunking) -> Self {
        self.chunking = chunking;
        self
    }

    /// Threads for coding the chunks of a chunked payload (default: all cores). Without
    /// the `parallel` feature chunks are coded on the calling thread whatever this says.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads.max(1));
        self
    }

    /// The chunk shift this encoder uses for `bits` coded with `coding`, if it chunks.
    fn chunk_shift(&self, bits: &BitArray, coding: Coding) -> Option<u8> {
        let m = bits.len();
        if !crate::entropy::chunks::chunkable(coding) {
            return None;
        }
        match self.chunking {
            Chunking::Never => None,
            Chunking::Shift(s) => {
                let range = crate::entropy::chunks::MIN_CHUNK_SHIFT
                    ..=crate::entropy::chunks::MAX_CHUNK_SHIFT;
                (range.contains(&s) && 1u64 << s < m).then_some(s)
            }
            Chunking::Auto if m < crate::entropy::chunks::CHUNK_FROM_BITS => None,
            Chunking::Auto => {
                crate::entropy::chunks::default_chunk_shift(m, bits.count_zeros() as f64 / m as f64)
            }
        }
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

    /// The frequency table [`Coding::KnownCounters`] uses, instead of one built from the
    /// counters (with [`PSource::Measured`] their histogram, with [`PSource::Theory`] the
    /// Poisson law of [`theory::counter_distribution`](crate::theory::counter_distribution)).
    /// Encoding fails with [`Error::InvalidParameter`] if a counter holds a value the table
    /// gives frequency 0, or if the table is for wider counters than the filter's.
    pub fn counter_table(mut self, table: CounterTable) -> Self {
        self.counter_table = Some(table);
        self
    }

    fn frame(&self, body: &Body<'_>, coding: Coding) -> Frame {
        let bits = body.bits;
        if let Some(shift) = self.chunk_shift(bits, coding) {
            let q0 = coding.has_q0().then(|| self.q0(body));
            let threads = self
                .threads
                .unwrap_or_else(crate::entropy::chunks::all_cores);
            let payload = crate::entropy::chunks::encode_chunked(coding, q0, bits, shift, threads);
            let header = FrameHeader::new(
                body.kind,
                body.params.clone(),
                body.n,
                body.generation,
                (coding, q0, Some(shift)),
                payload.len(),
            );
            return Frame { header, payload };
        }
        let (q0, payload) = match coding {
            // Counter codings do not apply to bit arrays: `choose` refuses them, and
            // `encode_with` sends the raw bits.
            Coding::Raw | Coding::KnownCounters | Coding::AdaptiveCounters => {
                (None, bits.to_bytes())
            }
            Coding::Adaptive => (None, range::encode_adaptive(bits)),
            Coding::KnownP => {
                let q0 = self.q0(body);
                (Some(q0), range::encode_known_p(bits, q0))
            }
            Coding::KnownPSymbols => {
                let q0 = self.q0(body);
                (Some(q0), range::encode_symbols(bits, q0))
            }
            Coding::KnownPInterleaved => {
                let q0 = self.q0(body);
                (Some(q0), range::encode_interleaved(bits, q0))
            }
        };
        let header = FrameHeader::new(
            body.kind,
            body.params.clone(),
            body.n,
            body.generation,
            (coding, q0, None),
            payload.len(),
        );
        Frame { header, payload }
    }

    /// The requested or smallest coding, raw when that is not smaller, budget checked.
    fn choose(&self, body: &Body<'_>) -> Result<Frame> {
        if let Some(c) = self.coding.filter(|c| !c.valid_for(Layout::STANDARD_ID)) {
            return Err(crate::error::invalid(
                "coding",
                format!("{c} codes the counters of counting filters, not bits"),
            ));
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
        .frame_len();
        let candidates = match self.coding {
            Some(Coding::Raw) => vec![],
            Some(c) => vec![c],
            // Large filters: the coding that encodes and decodes fastest, chunked.
            None if body.bits.len() >= crate::entropy::chunks::CHUNK_FROM_BITS => {
                vec![Coding::KnownPInterleaved]
            }
            None => vec![
                Coding::KnownPInterleaved,
                Coding::KnownPSymbols,
                Coding::Adaptive,
            ],
        };
        let frames: Vec<Frame> = candidates
            .into_iter()
            .map(|c| self.frame(body, c))
            .collect();
        let smallest = frames.iter().map(Frame::encoded_len).min();
        let best = frames.into_iter().min_by_key(|f| {
            let len = f.encoded_len();
            let fast = f.header.coding == Coding::KnownPInterleaved
                && smallest.is_some_and(|s| len <= s + s / 2000)
                && self.budget.map_or(true, |b| len <= b);
            (!fast, len)
        });
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

    /// The full frame for `filter` with one coding, no fallback, generation 0 (a counter
    /// coding, which does not apply to bits, gives the raw frame).
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
        check_after(base_generation, generation)?;
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

impl Encoder {
    fn table(&self, body: &CounterBody<'_>) -> Result<CounterTable> {
        let width = body.width;
        if let Some(t) = &self.counter_table {
            // Rebuilt for this width, so a table longer than 2^width entries is refused.
            return CounterTable::new(t.frequencies().to_vec(), width);
        }
        let mut histogram = vec![0u64; 1 << width];
        for &c in body.counters {
            histogram[usize::from(c)] += 1;
        }
        match (self.p_source, body.theory_mean) {
            (PSource::Theory, Some(mean)) => {
                // The Poisson law in integers (2^40 per unit, at least 1), cut after the
                // largest value a counter holds.
                let t = histogram.iter().rposition(|&h| h != 0).map_or(1, |i| i + 1);
                let weights: Vec<u64> = crate::theory::counter_distribution(mean, width)[..t]
                    .iter()
                    .map(|&p| ((p * (1u64 << 40) as f64).round() as u64).max(1))
                    .collect();
                CounterTable::from_weights(&weights, width)
            }
            _ => CounterTable::from_histogram(&histogram, width),
        }
    }

    fn counter_frame(&self, body: &CounterBody<'_>, coding: Coding) -> Result<Frame> {
        let (table, payload) = match coding {
            Coding::Raw => (None, counters::pack_counters(body.counters, body.width)),
            Coding::KnownCounters => {
                let table = self.table(body)?;
                let payload = counters::encode_known(body.counters, &table)?;
                (Some(table), payload)
            }
            Coding::AdaptiveCounters => {
                (None, counters::encode_adaptive(body.counters, body.width))
            }
            other => {
                return Err(crate::error::invalid(
                    "coding",
                    format!("{other} codes bits, not the counters of counting filters"),
                ))
            }
        };
        let mut header = FrameHeader::new(
            body.kind,
            body.params.clone(),
            body.n,
            body.generation,
            (coding, None, None),
            payload.len(),
        );
        header.counter_width = Some(body.width);
        header.counter_table = table;
        header.header_len = header.encoded_len();
        Ok(Frame { header, payload })
    }

    /// The requested or smallest counter coding, raw when that is not smaller, budget
    /// checked.
    fn choose_counters(&self, body: &CounterBody<'_>) -> Result<Frame> {
        let raw = self.counter_frame(body, Coding::Raw)?;
        let candidates = match self.coding {
            Some(Coding::Raw) => vec![],
            Some(c) => vec![c],
            None => vec![Coding::KnownCounters, Coding::AdaptiveCounters],
        };
        let mut best: Option<Frame> = None;
        for c in candidates {
            let f = self.counter_frame(body, c)?;
            if best
                .as_ref()
                .map_or(true, |b| f.encoded_len() < b.encoded_len())
            {
                best = Some(f);
            }
        }
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

    fn counting_body(filter: &CountingBloomFilter, generation: u64) -> CounterBody<'_> {
        CounterBody {
            kind: FrameKind::Full,
            params: filter.params(),
            width: filter.width(),
            n: filter.n(),
            generation,
            counters: filter.counters(),
            theory_mean: Some(crate::theory::counter_mean(
                filter.params(),
                filter.n() as f64,
            )),
        }
    }

    /// The full frame (generation 0) of a counting filter: filter type 3, the requested or
    /// smallest of [`Coding::COUNTERS`], the packed counters when coding is not smaller, and
    /// the budget checked.
    ///
    /// ```
    /// use bloomwire::counting::CountingBloomFilter;
    /// use bloomwire::frame::{self, Encoder, Limits};
    /// use bloomwire::{HashFamily, Params};
    ///
    /// let params = Params::standard(160_000, 2, HashFamily::default()).unwrap();
    /// let mut f = CountingBloomFilter::new(params, 4).unwrap();
    /// for i in 0..10_000u32 {
    ///     f.insert(i.to_le_bytes());
    /// }
    /// let wire = Encoder::new().encode_counting(&f).unwrap().to_bytes();
    /// assert!(wire.len() < 13_000); // 80 000 bytes packed, m H / 8 = 12 840
    /// let back = frame::decode_counting(&wire, &Limits::default()).unwrap();
    /// assert_eq!(back.filter, f);
    /// ```
    pub fn encode_counting(&self, filter: &CountingBloomFilter) -> Result<Frame> {
        self.encode_counting_generation(filter, 0)
    }

    /// Encode a counting filter's full frame that carries generation number `generation`.
    pub fn encode_counting_generation(
        &self,
        filter: &CountingBloomFilter,
        generation: u64,
    ) -> Result<Frame> {
        self.choose_counters(&Self::counting_body(filter, generation))
    }

    /// The full frame of a counting filter with one coding (of [`Coding::COUNTERS`]), no
    /// fallback, no budget, generation 0.
    pub fn encode_counting_with(
        &self,
        filter: &CountingBloomFilter,
        coding: Coding,
    ) -> Result<Frame> {
        self.counter_frame(&Self::counting_body(filter, 0), coding)
    }

    /// Encode the delta that turns generation `base_generation` (`base`) of a counting
    /// filter into generation `generation` (`filter`): the counter-wise XOR of their
    /// counters ([`CountingBloomFilter::xor`]), coded like counters, with the digests of
    /// both.
    ///
    /// Errors: the filters differ in m, layout, k, hash family or counter width
    /// ([`Error::Incompatible`]); `generation <= base_generation`
    /// ([`Error::InvalidParameter`]); or the budget.
    pub fn encode_counting_delta(
        &self,
        base: &CountingBloomFilter,
        base_generation: u64,
        filter: &CountingBloomFilter,
        generation: u64,
    ) -> Result<Frame> {
        check_after(base_generation, generation)?;
        let xor = filter.xor(base)?;
        self.choose_counters(&CounterBody {
            kind: FrameKind::Delta {
                base_generation,
                base_digest: base.digest(),
                result_digest: filter.digest(),
            },
            params: filter.params(),
            width: filter.width(),
            n: filter.n(),
            generation,
            counters: &xor,
            theory_mean: None,
        })
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

/// The checks of a delta against the receiver's base, in the spec's order (5.2): the
/// generation, the shape, the base digest. Returns the result digest to check.
fn check_delta_base(
    header: &FrameHeader,
    same_shape: bool,
    base_generation: u64,
    base_digest: impl FnOnce() -> u32,
) -> Result<u32> {
    let FrameKind::Delta {
        base_generation: wanted,
        base_digest: expected,
        result_digest,
    } = header.kind
    else {
        unreachable!("a delta frame always has a delta header")
    };
    if wanted != base_generation {
        return Err(Error::GenerationGap {
            have: Some(base_generation),
            base: wanted,
        });
    }
    if !same_shape {
        return Err(Error::Incompatible(
            "delta and base differ in m, layout, k, hash family or counter width",
        ));
    }
    let actual = base_digest();
    if actual != expected {
        return Err(Error::BaseMismatch {
            generation: wanted,
            expected,
            actual,
        });
    }
    Ok(result_digest)
}

/// A decoded full frame of a counting filter (filter type 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountingDecoded {
    /// The counting filter.
    pub filter: CountingBloomFilter,
    /// The frame's header.
    pub header: FrameHeader,
}

/// A decoded delta frame of a counting filter: the counter-wise XOR of two generations'
/// counters, to apply to the base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountingDeltaFrame {
    /// The frame's header (its kind is [`FrameKind::Delta`]).
    pub header: FrameHeader,
    /// `result ^ base`, counter by counter.
    pub xor: Vec<u8>,
}

impl CountingDeltaFrame {
    /// The generation this delta applies to.
    pub fn base_generation(&self) -> u64 {
        match self.header.kind {
            FrameKind::Delta {
                base_generation, ..
            } => base_generation,
            FrameKind::Full => unreachable!("a CountingDeltaFrame always has a delta header"),
        }
    }

    /// Apply the delta to `base`, held as generation `base_generation`; `base` is untouched.
    /// The errors are those of [`DeltaFrame::apply`], with a different counter width also
    /// [`Error::Incompatible`].
    pub fn apply(
        &self,
        base: &CountingBloomFilter,
        base_generation: u64,
    ) -> Result<CountingBloomFilter> {
        let same_shape =
            base.params() == &self.header.params && Some(base.width()) == self.header.counter_width;
        let result_digest =
            check_delta_base(&self.header, same_shape, base_generation, || base.digest())?;
        let result = base.apply_xor(&self.xor, self.header.n)?;
        let actual = result.digest();
        if actual != result_digest {
            return Err(Error::ResultMismatch {
                generation: self.header.generation,
                expected: result_digest,
                actual,
            });
        }
        Ok(result)
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
        let same_shape = base.params() == &self.header.params;
        let result_digest = check_delta_base(&self.header, same_shape, base_generation, || {
            base.bits().digest()
        })?;
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
    /// A full counting filter (filter type 3).
    Counting(CountingDecoded),
    /// A delta between two generations of a counting filter.
    CountingDelta(CountingDeltaFrame),
}

impl Message {
    /// The frame's header.
    pub fn header(&self) -> &FrameHeader {
        match self {
            Message::Full(d) => &d.header,
            Message::Delta(d) => &d.header,
            Message::Counting(d) => &d.header,
            Message::CountingDelta(d) => &d.header,
        }
    }

    /// The frame that carries this message: the same header fields, coding, q0, counter
    /// table and chunk shift, the payload coded again. Every frame a decoder accepts is
    /// canonical (spec section 2.3), so for a decoded message these are exactly the bytes it
    /// was decoded from; a relay can forward what it decoded without keeping the input.
    ///
    /// Errors only for a message put together by hand whose header does not fit its
    /// contents: a counting message without a counter width, or whose counter table gives
    /// frequency 0 to a value a counter holds ([`Error::InvalidParameter`]).
    ///
    /// ```
    /// use bloomwire::frame::{decode_message, Coding, Encoder, Limits};
    /// use bloomwire::{BloomFilter, HashFamily, Params};
    /// let mut f = BloomFilter::new(Params::standard(500, 2, HashFamily::default()).unwrap());
    /// f.insert(b"x");
    /// let wire = Encoder::new().encode_with(&f, Coding::KnownP).to_bytes();
    /// let message = decode_message(&wire, &Limits::default()).unwrap();
    /// assert_eq!(message.to_frame().unwrap().to_bytes(), wire);
    /// ```
    pub fn to_frame(&self) -> Result<Frame> {
        let header = self.header();
        let encoder = Encoder {
            coding: Some(header.coding),
            p_source: header.q0.map_or(PSource::Measured, PSource::Fixed),
            counter_table: header.counter_table.clone(),
            chunking: header.chunk_shift.map_or(Chunking::Never, Chunking::Shift),
            ..Encoder::default()
        };
        let counters = |counters| -> Result<CounterBody<'_>> {
            Ok(CounterBody {
                kind: header.kind,
                params: &header.params,
                width: header
                    .counter_width
                    .ok_or_else(|| crate::error::invalid("counter width", "missing"))?,
                n: header.n,
                generation: header.generation,
                counters,
                theory_mean: None,
            })
        };
        let bits = |bits| Body {
            kind: header.kind,
            params: &header.params,
            n: header.n,
            generation: header.generation,
            bits,
            theory_p: None,
        };
        match self {
            Message::Full(d) => Ok(encoder.frame(&bits(d.filter.bits()), header.coding)),
            Message::Delta(d) => Ok(encoder.frame(&bits(&d.xor), header.coding)),
            Message::Counting(d) => {
                encoder.counter_frame(&counters(d.filter.counters())?, header.coding)
            }
            Message::CountingDelta(d) => encoder.counter_frame(&counters(&d.xor)?, header.coding),
        }
    }
}

/// A frame whose header, length, checksum and chunk table have been checked, its payload
/// borrowed from the input (no copy): decode it whole, into a buffer the caller reuses, on
/// several threads, or one chunk (a range of bits) at a time.
///
/// ```
/// use bloomwire::frame::{self, Chunking, Encoder, FrameView, Limits};
/// use bloomwire::{BitArray, BloomFilter, HashFamily, Params};
/// let mut f = BloomFilter::new(Params::standard(100_000, 2, HashFamily::default()).unwrap());
/// for i in 0..5_000u32 {
///     f.insert(i.to_le_bytes());
/// }
/// // Chunks of 2^14 bits: 7 of them.
/// let wire = Encoder::new().chunking(Chunking::Shift(14)).encode(&f).unwrap().to_bytes();
/// let view = FrameView::parse(&wire, &Limits::default()).unwrap();
/// assert_eq!(view.chunk_count(), 7);
/// // Bits 20 000 .. 20 100 without decoding the other six chunks.
/// let part = view.decode_bits(20_000..20_100).unwrap();
/// assert_eq!(part, f.bits().slice(20_000, 100));
/// // The whole filter, into an array the caller keeps between frames.
/// let mut bits = BitArray::new(0);
/// view.decode_into(&mut bits).unwrap();
/// assert_eq!(&bits, f.bits());
/// ```
#[derive(Debug, Clone)]
pub struct FrameView<'a> {
    header: FrameHeader,
    payload: &'a [u8],
    /// Where the chunks are in `payload`; one chunk for an unchunked payload.
    chunks: crate::entropy::chunks::ChunkTable,
}

impl<'a> FrameView<'a> {
    /// Check the frame at the start of `input` (bytes after it are left alone, see
    /// [`FrameView::frame_len`]): its header against `limits`, its length, its checksum
    /// and, for a chunked payload, its table of chunk lengths. The payload itself is
    /// checked as it is decoded.
    pub fn parse(input: &'a [u8], limits: &Limits) -> Result<Self> {
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
        let chunks = match header.chunk_shift {
            None => crate::entropy::chunks::ChunkTable::whole(payload.len()),
            Some(shift) => crate::entropy::chunks::parse_table(payload, header.params.m(), shift)
                .map_err(|reason| Error::CorruptPayload {
                reason,
                offset: header.header_len,
            })?,
        };
        Ok(FrameView {
            header,
            payload,
            chunks,
        })
    }

    /// The frame's header.
    pub fn header(&self) -> &FrameHeader {
        &self.header
    }

    /// Bytes of the frame in the input.
    pub fn frame_len(&self) -> usize {
        self.header.frame_len()
    }

    /// The payload, borrowed from the input. For a raw frame this is the packed bit array
    /// (spec §1), readable in place; [`BitArray`] keeps 64-bit words, so making one from
    /// it is the one copy a raw frame costs.
    pub fn payload(&self) -> &'a [u8] {
        self.payload
    }

    /// Number of independently decodable chunks (1 if the payload is not chunked).
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// The bits chunk `i` holds.
    pub fn chunk_bits(&self, i: usize) -> core::ops::Range<u64> {
        self.header.chunk_bits(i as u64)
    }

    /// The decoding models for chunks of the lengths `lens`; a counting frame's payload is
    /// counters, not bits ([`Error::UnexpectedFilterType`]: use [`decode_message`]).
    fn models(&self, lens: &[u64]) -> Result<crate::entropy::chunks::Models> {
        let h = &self.header;
        if h.is_counting() {
            return Err(Error::UnexpectedFilterType {
                expected: "a Bloom filter",
                got: FILTER_TYPE_COUNTING,
            });
        }
        Ok(crate::entropy::chunks::Models::new(h.coding, h.q0, lens))
    }

    fn corrupt(&self, chunk: usize) -> impl Fn(&'static str) -> Error {
        let offset = self.header.header_len + self.chunks.range(chunk).map_or(0, |r| r.start);
        move |reason| Error::CorruptPayload { reason, offset }
    }

    /// Decode chunk `i` into `out`, which must have exactly `ceil(len / 64)` words for the
    /// chunk's `len` bits ([`FrameView::chunk_bits`]); the chunk's first bit lands in bit 0
    /// of `out[0]`.
    pub fn decode_chunk_into(&self, i: usize, out: &mut [u64]) -> Result<()> {
        let bits = self.chunk_bits(i);
        let models = self.models(&[bits.end - bits.start])?;
        self.decode_chunk_with(&models, i, out)
    }

    fn decode_chunk_with(
        &self,
        models: &crate::entropy::chunks::Models,
        i: usize,
        out: &mut [u64],
    ) -> Result<()> {
        let Some(range) = self.chunks.range(i) else {
            return Err(crate::error::invalid(
                "chunk",
                format!("{i} of {} chunks", self.chunks.len()),
            ));
        };
        let bits = self.chunk_bits(i);
        let len = bits.end - bits.start;
        if out.len() != crate::filter::bits::words_for(len) {
            return Err(crate::error::invalid(
                "out",
                format!("{} words for a chunk of {len} bits", out.len()),
            ));
        }
        crate::entropy::chunks::decode_part(models, &self.payload[range], len, out)
            .map_err(self.corrupt(i))
    }

    /// Decode bits `bits.start .. bits.end`, decoding only the chunks that hold them.
    pub fn decode_bits(&self, bits: core::ops::Range<u64>) -> Result<BitArray> {
        let m = self.header.params.m();
        if bits.start > bits.end || bits.end > m {
            return Err(crate::error::invalid(
                "bits",
                format!("{bits:?} is not a range inside 0..{m}"),
            ));
        }
        if bits.is_empty() {
            return Ok(BitArray::new(0));
        }
        let shift = self.header.chunk_shift.unwrap_or(63);
        let (first, last) = (
            (bits.start >> shift) as usize,
            ((bits.end - 1) >> shift) as usize + 1,
        );
        let start = self.chunk_bits(first).start;
        let len_of = |i: usize| self.chunk_bits(i).end - self.chunk_bits(i).start;
        let models = self.models(&[len_of(first), len_of(last - 1)])?;
        let mut span = BitArray::new(self.chunk_bits(last - 1).end - start);
        let mut at = 0;
        for i in first..last {
            let words = crate::filter::bits::words_for(len_of(i));
            self.decode_chunk_with(&models, i, &mut span.words_mut()[at..at + words])?;
            at += words;
        }
        Ok(span.slice(bits.start - start, bits.end - bits.start))
    }

    /// Decode the whole bit array into `out`, which is resized to m bits (reusing its
    /// allocation); chunks are decoded on all cores with the `parallel` feature. On error
    /// `out` is all zeros.
    pub fn decode_into(&self, out: &mut BitArray) -> Result<()> {
        self.decode_into_threads(out, crate::entropy::chunks::all_cores())
    }

    /// [`FrameView::decode_into`] on at most `threads` threads (1 without the `parallel`
    /// feature).
    pub fn decode_into_threads(&self, out: &mut BitArray, threads: usize) -> Result<()> {
        let h = &self.header;
        let m = h.params.m();
        out.reset(m);
        let result = match h.chunk_shift {
            None => {
                let models = self.models(&[m])?;
                crate::entropy::chunks::decode_part(&models, self.payload, m, out.words_mut())
            }
            Some(shift) => crate::entropy::chunks::decode_chunked(
                (h.coding, h.q0),
                self.payload,
                &self.chunks,
                m,
                shift,
                out.words_mut(),
                threads.max(1),
            ),
        };
        if let Err(reason) = result {
            out.reset(m);
            return Err(self.corrupt(0)(reason));
        }
        Ok(())
    }

    /// Decode the whole bit array.
    pub fn decode(&self) -> Result<BitArray> {
        let mut bits = BitArray::new(0);
        self.decode_into(&mut bits)?;
        Ok(bits)
    }
}

/// Decode the frame at the start of `input`, full or delta; returns it and the bytes it
/// took. Bytes after the frame are left alone (for streams). A short input gives
/// [`Error::Incomplete`] with how many more bytes are needed.
pub fn decode_message_prefix(input: &[u8], limits: &Limits) -> Result<(Message, usize)> {
    let view = FrameView::parse(input, limits)?;
    let len = view.frame_len();
    if let Some(width) = view.header.counter_width {
        let (header, payload) = (view.header, view.payload);
        let m = header.params.m();
        let counters = match header.coding {
            Coding::KnownCounters => {
                let table = header.counter_table.as_ref().expect("parsed");
                counters::decode_known(payload, m, table)
            }
            Coding::AdaptiveCounters => counters::decode_adaptive(payload, m, width),
            _ => counters::unpack_counters(payload, m, width),
        }
        .map_err(|reason| Error::CorruptPayload {
            reason,
            offset: header.header_len,
        })?;
        let message = match header.kind {
            FrameKind::Full => Message::Counting(CountingDecoded {
                filter: CountingBloomFilter::from_counters(
                    header.params.clone(),
                    width,
                    counters,
                    header.n,
                )?,
                header,
            }),
            FrameKind::Delta { .. } => Message::CountingDelta(CountingDeltaFrame {
                header,
                xor: counters,
            }),
        };
        return Ok((message, len));
    }
    let bits = view.decode()?;
    let header = view.header;
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
        Message::Delta(_) | Message::CountingDelta(_) => Err(Error::UnexpectedDelta),
        Message::Counting(_) => Err(Error::UnexpectedFilterType {
            expected: "a Bloom filter",
            got: FILTER_TYPE_COUNTING,
        }),
    }
}

/// Decode an input that holds exactly one full frame of a counting filter (filter type 3).
/// A Bloom filter's frame is [`Error::UnexpectedFilterType`], a delta
/// [`Error::UnexpectedDelta`].
pub fn decode_counting(input: &[u8], limits: &Limits) -> Result<CountingDecoded> {
    match decode_message(input, limits)? {
        Message::Counting(d) => Ok(d),
        Message::Delta(_) | Message::CountingDelta(_) => Err(Error::UnexpectedDelta),
        Message::Full(d) => Err(Error::UnexpectedFilterType {
            expected: "a counting filter",
            got: d.header.filter_type(),
        }),
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
/// seed takes at most 10), m and n as 10-byte varints, the counted type and counter width,
/// 48 block k's of up to 4 bytes, two generations and two digests, q0 or a counter table of
/// 256 frequencies of up to 3 bytes, the chunk shift, and the payload length.
pub const MAX_HEADER_LEN: usize =
    4 + 7 + 16 + 10 + 2 + 48 * 4 + 10 + 2 * 10 + 8 + 2 + 256 * 3 + 1 + 10;

/// The first `len` bytes of a sequence of chunks (fewer if they hold fewer).
fn gather(chunks: &[&[u8]], len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    for c in chunks {
        let take = c.len().min(len - out.len());
        out.extend_from_slice(&c[..take]);
    }
    out
}
