//! The fixed values of the wire format: magic, version, frame kinds, flags and coding ids.

use crate::wire::varint_len;

pub use crate::entropy::coding::{BitCoding, Coding, CounterCoding};

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
        /// [`BitArray::digest`](crate::BitArray::digest) of the base generation's bits.
        base_digest: u32,
        /// [`BitArray::digest`](crate::BitArray::digest) of the bits after applying the delta.
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

/// Header `flags` bit 1, on full frames only: the sender's numbering starts again here
/// (spec §5.2), so a receiver applies the frame whatever generation it holds. A sender sets
/// it on its first frame, on the full frame that answers a request for one, and on its
/// periodic full frames, so that a receiver that accepted a forged or stray generation
/// recovers.
pub const FLAG_RESTART: u8 = 0x02;

/// Flags bit 3: the header carries an application metadata field (spec §2.6).
pub const FLAG_METADATA: u8 = 0x08;

/// Which frames may use which coding: the coding ids themselves are the entropy coders'
/// ([`Coding`]).
impl Coding {
    /// Whether frames of this filter type may use this coding: the codings of counters for
    /// type 3 ([`FILTER_TYPE_COUNTING`]), the codings of bits for types 0 to 2.
    pub fn valid_for(self, filter_type: u8) -> bool {
        if filter_type == FILTER_TYPE_COUNTING {
            self.codes_counters()
        } else {
            self.codes_bits()
        }
    }
}
