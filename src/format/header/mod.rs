//! The frame header (spec §2): its fields, its length, and writing it; parsing is
//! [`parse`], a step per section of the spec.

mod parse;

use bytes::BufMut;

use crate::entropy::counter_table::CounterTable;
use crate::filter::hashing::{BaseHash, HashFamily};
use crate::filter::{Layout, Params};
use crate::wire::{put_varint, varint_len};

use super::auth::{FrameKey, KeyId, Tag, FLAG_TAGGED, TAG_LEN};
use super::ids::{
    Coding, FrameKind, CHECKSUM_LEN, FILTER_TYPE_COUNTING, FLAG_CHUNKED, FLAG_METADATA,
    FLAG_RESTART, MAGIC, VERSION,
};
use super::limits::Limits;

/// A parsed frame header.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
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
    /// Flags bit 1, full frames only: the sender's numbering starts again with this frame
    /// (spec §5.2); a receiver applies it whatever generation it holds.
    pub restart: bool,
    /// The application metadata field (flags bit 3, spec §2.6): bytes the sender attached
    /// with [`Encoder::metadata`](super::Encoder::metadata) (a sender id, a timestamp,
    /// another library's parameters), covered by the checksum; never empty when present.
    pub metadata: Option<Vec<u8>>,
    /// Flags bit 2 (spec §2.5): whether the frame carries an authentication tag after its
    /// checksum, and whether the decoder checked it with its key.
    pub tag: Tag,
    /// Payload bytes.
    pub payload_len: usize,
    /// The key the tag was verified with, when [`tag`](Self::tag) is [`Tag::Verified`].
    pub(crate) verified_by: Option<KeyId>,
    /// Header bytes (everything before the payload).
    pub header_len: usize,
}

impl FrameHeader {
    /// Bytes of the whole frame: header, payload, checksum and, for a tagged frame, the
    /// tag.
    pub fn frame_len(&self) -> usize {
        self.header_len + self.payload_len + CHECKSUM_LEN + self.tag_len()
    }

    /// The checksum of the frame at the start of `frame`, whose header this is: the
    /// CRC-32C stored after the payload and the one computed over the header and the
    /// payload (spec §2.4), equal for an intact frame; None when `frame` is shorter than
    /// the frame. For tools that describe a frame whatever its checksum says: a decoder
    /// checks it.
    ///
    /// ```
    /// use bloomwire::{BloomFilter, Encoder, FrameHeader, HashFamily, Limits, Params};
    /// let f = BloomFilter::try_new(Params::standard(1000, 3, HashFamily::default()).unwrap())
    ///     .unwrap();
    /// let mut wire = Encoder::new().encode(&f).unwrap().to_bytes().to_vec();
    /// let header = FrameHeader::parse(&wire, &Limits::default()).unwrap();
    /// let (stored, computed) = header.checksums(&wire).unwrap();
    /// assert_eq!(stored, computed);
    /// wire[header.header_len] ^= 1;
    /// let (stored, computed) = header.checksums(&wire).unwrap();
    /// assert_ne!(stored, computed);
    /// assert_eq!(header.checksums(&wire[..wire.len() - 1]), None);
    /// ```
    pub fn checksums(&self, frame: &[u8]) -> Option<(u32, u32)> {
        let (body_end, stored) = self.stored_checksum(frame)?;
        Some((stored, crc32c::crc32c(&frame[..body_end])))
    }

    /// Where the checksummed bytes of the frame at the start of `frame` end, and the
    /// checksum stored there; None when `frame` is shorter than the frame.
    pub(crate) fn stored_checksum(&self, frame: &[u8]) -> Option<(usize, u32)> {
        if frame.len() < self.frame_len() {
            return None;
        }
        let body_end = self.header_len + self.payload_len;
        let field: [u8; CHECKSUM_LEN] = frame
            .get(body_end..body_end + CHECKSUM_LEN)?
            .try_into()
            .ok()?;
        Some((body_end, u32::from_le_bytes(field)))
    }

    /// Bytes of the tag: [`TAG_LEN`] for a tagged frame, else 0.
    pub(crate) fn tag_len(&self) -> usize {
        if self.tag == Tag::Absent {
            0
        } else {
            TAG_LEN
        }
    }

    pub(super) fn new(
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
            restart: false,
            metadata: None,
            tag: Tag::Absent,
            payload_len,
            verified_by: None,
            header_len: 0,
        };
        h.header_len = h.encoded_len();
        h
    }

    /// The same header for another coding and payload length (what the encoder's
    /// predictions compare, without a header each).
    pub(super) fn recode(
        &mut self,
        (coding, q0, chunk_shift): (Coding, Option<u16>, Option<u8>),
        payload_len: usize,
    ) {
        let before = self.coding_fields_len();
        (self.coding, self.q0, self.chunk_shift) = (coding, q0, chunk_shift);
        self.payload_len = payload_len;
        self.header_len = self.header_len - before + self.coding_fields_len();
        debug_assert_eq!(self.header_len, self.encoded_len());
    }

    /// Bytes of the header's fields that depend on the coding and the payload: q0, the
    /// chunk shift and the payload's length.
    fn coding_fields_len(&self) -> usize {
        2 * usize::from(self.coding.has_q0())
            + usize::from(self.chunk_shift.is_some())
            + crate::wire::varint_len(self.payload_len as u64)
    }

    /// Bytes of the encoded header.
    pub(super) fn encoded_len(&self) -> usize {
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
            + self.metadata.as_deref().map_or(0, metadata_len)
            + counting
            + usize::from(self.chunk_shift.is_some())
    }

    /// The header with this application metadata (`None`, or an empty field, for none).
    pub(super) fn with_metadata(mut self, metadata: Option<&[u8]>) -> Self {
        self.metadata = metadata.filter(|m| !m.is_empty()).map(<[u8]>::to_vec);
        self.header_len = self.encoded_len();
        self
    }

    /// Whether the frame's tag was verified with `key` (by a decoder holding it, or because
    /// the frame was made with it).
    pub(crate) fn verified_with(&self, key: &FrameKey) -> bool {
        self.tag == Tag::Verified && self.verified_by == Some(key.id())
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

    pub(super) fn write<B: BufMut>(&self, buf: &mut B) {
        let p = &self.params;
        buf.put_slice(&MAGIC);
        buf.put_u8(VERSION);
        buf.put_u8(self.kind.id());
        buf.put_u8(self.filter_type());
        buf.put_u8(p.family().base.id());
        buf.put_u8(p.family().scheme.id());
        buf.put_u8(self.coding.id());
        let chunked = if self.chunk_shift.is_some() {
            FLAG_CHUNKED
        } else {
            0
        };
        let restart = if self.restart { FLAG_RESTART } else { 0 };
        let metadata = if self.metadata.is_some() {
            FLAG_METADATA
        } else {
            0
        };
        let tagged = if self.tag == Tag::Absent {
            0
        } else {
            FLAG_TAGGED
        };
        buf.put_u8(chunked | restart | tagged | metadata);
        match p.family().base {
            BaseHash::Xxh64 { seed } => put_varint(buf, seed),
            BaseHash::SipHash24 { k0, k1 } => {
                buf.put_u64_le(k0);
                buf.put_u64_le(k1);
            }
            BaseHash::Opaque => {}
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
        if let Some(metadata) = &self.metadata {
            put_varint(buf, metadata.len() as u64);
            buf.put_slice(metadata);
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
}

/// Bytes of a [`CounterTable`] in the header: its length and its frequencies as varints.
pub fn table_len(table: &CounterTable) -> usize {
    let f = table.frequencies();
    varint_len(f.len() as u64) + f.iter().map(|&x| varint_len(x.into())).sum::<usize>()
}

/// Bytes of an application metadata field of these bytes in the header: its length and the
/// bytes (spec §2.5).
pub fn metadata_len(metadata: &[u8]) -> usize {
    varint_len(metadata.len() as u64) + metadata.len()
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
        BaseHash::Opaque => 0,
    };
    let fixed = MAGIC.len() + 7 + seed + varint_len(m) + k_field_len + varint_len(n) + sequence_len;
    let q0 = if has_q0 { 2 } else { 0 };
    // Saturating: planners ask about payloads of any size, even sizes no frame can have.
    ((fixed + q0 + varint_len(payload_len) + CHECKSUM_LEN) as u64).saturating_add(payload_len)
}

/// The largest header the format allows: fixed fields, a 16-byte SipHash key (an XXH64
/// seed takes at most 10), m and n as 10-byte varints, the counted type and counter width,
/// 48 block k's of up to 4 bytes, two generations and two digests, q0 or a counter table of
/// 256 frequencies of up to 3 bytes, the chunk shift, and the payload length; plus, in a
/// frame with application metadata (spec §2.6), that field: at most
/// [`max_header_len`] for a receiver's limits.
pub const MAX_HEADER_LEN: usize =
    4 + 7 + 16 + 10 + 2 + 48 * 4 + 10 + 2 * 10 + 8 + 2 + 256 * 3 + 1 + 10;

/// The largest header a receiver with these limits accepts: [`MAX_HEADER_LEN`] and an
/// application metadata field of up to `limits.max_metadata` bytes.
pub fn max_header_len(limits: &Limits) -> usize {
    let metadata = usize::try_from(limits.max_metadata).unwrap_or(usize::MAX);
    MAX_HEADER_LEN
        .saturating_add(crate::wire::MAX_VARINT_LEN)
        .saturating_add(metadata)
}
