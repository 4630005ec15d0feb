//! The fixed values of the wire format: magic, version, frame kinds, flags and coding ids.

use crate::wire::varint_len;

pub use crate::entropy::coding::Coding;

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
    #[doc(hidden)]
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
    /// Whether frames of this filter type may use this coding: [`Coding::ALL`] for filter
    /// types 0 to 2, [`Coding::COUNTERS`] for type 3 ([`FILTER_TYPE_COUNTING`]).
    #[doc(hidden)]
    pub fn valid_for(self, filter_type: u8) -> bool {
        if filter_type == FILTER_TYPE_COUNTING {
            Coding::COUNTERS.contains(&self)
        } else {
            Coding::ALL.contains(&self)
        }
    }
}

/// A coding of a Bloom filter's bit array (filter types 0 to 2), for the [`Encoder`](super::Encoder)
/// of a [`BloomFilter`](crate::BloomFilter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BitCoding {
    /// The packed bit array, `ceil(m / 8)` bytes (coding 0).
    Raw,
    /// Range-coded bits with the adaptive counting model (coding 1).
    Adaptive,
    /// Range-coded bits with a known zero probability sent in the header (coding 2).
    KnownP,
    /// ANS-coded bytes with the 256-symbol model built from the header's q0 (coding 3).
    KnownPSymbols,
    /// The model of coding 3 coded by four interleaved rANS states (coding 6).
    KnownPInterleaved,
    /// The positions of the one bits, as gaps (coding 7): a rANS-coded quotient and
    /// remainder bits, parameters derived from the count of ones. For sparse filters and
    /// deltas, at the cost of their ones.
    Positional,
    /// Nibbles at precision 13 coded by 32 interleaved 32-bit rANS states with a 16-bucket
    /// alias table (coding 8): the fastest to decode for large dense filters.
    Dense,
    /// Nibbles at precision 12 coded by four interleaved tANS states (coding 9): the
    /// fastest to decode for small dense filters, a few bytes over the bound.
    Small,
}

impl BitCoding {
    /// Every bit coding, in wire id order.
    pub const ALL: [BitCoding; 8] = [
        BitCoding::Raw,
        BitCoding::Adaptive,
        BitCoding::KnownP,
        BitCoding::KnownPSymbols,
        BitCoding::KnownPInterleaved,
        BitCoding::Positional,
        BitCoding::Dense,
        BitCoding::Small,
    ];
}

impl From<BitCoding> for Coding {
    fn from(c: BitCoding) -> Coding {
        match c {
            BitCoding::Raw => Coding::Raw,
            BitCoding::Adaptive => Coding::Adaptive,
            BitCoding::KnownP => Coding::KnownP,
            BitCoding::KnownPSymbols => Coding::KnownPSymbols,
            BitCoding::KnownPInterleaved => Coding::KnownPInterleaved,
            BitCoding::Positional => Coding::Positional,
            BitCoding::Dense => Coding::Dense,
            BitCoding::Small => Coding::Small,
        }
    }
}

impl TryFrom<Coding> for BitCoding {
    type Error = Coding;

    /// The bit coding of a wire coding; a counter coding is returned as the error.
    fn try_from(c: Coding) -> Result<BitCoding, Coding> {
        BitCoding::ALL
            .into_iter()
            .find(|&b| Coding::from(b) == c)
            .ok_or(c)
    }
}

impl core::fmt::Display for BitCoding {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        Coding::from(*self).fmt(f)
    }
}

/// A coding of a counting filter's counters (filter type 3), for the
/// [`Encoder`](super::Encoder) of a [`CountingBloomFilter`](crate::CountingBloomFilter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CounterCoding {
    /// The packed counters, `ceil(m * width / 8)` bytes (coding 0).
    Raw,
    /// Range-coded counters with a frequency table sent in the header (coding 4).
    Known,
    /// Range-coded counters with the adaptive model (coding 5).
    Adaptive,
}

impl CounterCoding {
    /// Every counter coding, in wire id order.
    pub const ALL: [CounterCoding; 3] = [
        CounterCoding::Raw,
        CounterCoding::Known,
        CounterCoding::Adaptive,
    ];
}

impl From<CounterCoding> for Coding {
    fn from(c: CounterCoding) -> Coding {
        match c {
            CounterCoding::Raw => Coding::Raw,
            CounterCoding::Known => Coding::KnownCounters,
            CounterCoding::Adaptive => Coding::AdaptiveCounters,
        }
    }
}

impl TryFrom<Coding> for CounterCoding {
    type Error = Coding;

    /// The counter coding of a wire coding; a bit coding (other than raw) is returned as
    /// the error.
    fn try_from(c: Coding) -> Result<CounterCoding, Coding> {
        CounterCoding::ALL
            .into_iter()
            .find(|&b| Coding::from(b) == c)
            .ok_or(c)
    }
}

impl core::fmt::Display for CounterCoding {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        Coding::from(*self).fmt(f)
    }
}
