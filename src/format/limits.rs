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
/// let limits = bloomwire::Limits::new().max_m(1 << 33);
/// assert_eq!((limits.max_m, limits.max_k), (1 << 33, 64));
/// ```
///
/// The fields are read directly and set with the builder methods of the same names (the
/// struct is `#[non_exhaustive]`: later releases add limits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
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
        Limits::new()
    }
}

impl Limits {
    /// The default limits (see above).
    pub const fn new() -> Self {
        Limits {
            max_m: 1 << 28,
            max_k: 64,
            max_payload: 1 << 26,
            max_metadata: 1 << 12,
        }
    }

    /// The hard limits of the format: anything a conforming encoder may write.
    pub const fn unlimited() -> Self {
        Limits {
            max_m: MAX_M,
            max_k: MAX_K,
            max_payload: u64::MAX,
            max_metadata: u64::MAX,
        }
    }

    /// These limits with the largest m (bits, or counters) accepted.
    pub const fn max_m(mut self, max_m: u64) -> Self {
        self.max_m = max_m;
        self
    }

    /// These limits with the largest `ceil(k)` accepted.
    pub const fn max_k(mut self, max_k: u32) -> Self {
        self.max_k = max_k;
        self
    }

    /// These limits with the largest payload accepted, in bytes.
    pub const fn max_payload(mut self, max_payload: u64) -> Self {
        self.max_payload = max_payload;
        self
    }

    /// These limits with the largest application metadata field accepted, in bytes.
    pub const fn max_metadata(mut self, max_metadata: u64) -> Self {
        self.max_metadata = max_metadata;
        self
    }
}
