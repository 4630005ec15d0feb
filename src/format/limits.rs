//! What a decoder accepts.

use crate::filter::rational::MAX_K;
use crate::filter::MAX_M;

/// What a decoder accepts, checked before anything is allocated.
///
/// The defaults suit cache digests and set summaries of up to tens of millions of keys:
/// m up to 2^28 bits (32 MiB of filter; a counting filter of m counters takes m bytes), k up
/// to 64, payloads up to 64 MiB, application metadata up to 4 KiB.
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
/// let limits = bloomwire::Limits { max_m: 1 << 33, ..Default::default() };
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
    /// Largest application metadata field accepted (flags bit 3, spec §2.6), in bytes.
    pub max_metadata: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_m: 1 << 28,
            max_k: 64,
            max_payload: 1 << 26,
            max_metadata: 1 << 12,
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
            max_metadata: u64::MAX,
        }
    }
}
