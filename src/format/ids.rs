//! The fixed values of the wire format: magic, version, frame kinds, flags and coding ids.

use crate::wire::varint_len;

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
