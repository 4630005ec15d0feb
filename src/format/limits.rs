//! What a decoder accepts.

use crate::entropy::profile::Profile;
use crate::filter::rational::MAX_K;
use crate::filter::MAX_M;

/// What a decoder accepts, checked before anything is allocated.
///
/// The defaults suit cache digests and set summaries of up to tens of millions of keys:
/// m up to 2^28 bits, decoded filters of up to 32 MiB (a Bloom filter of 2^28 bits, or a
/// counting filter of 2^25 counters, a byte each), k up to 64, payloads up to 64 MiB,
/// application metadata up to 4 KiB.
///
/// The limits are what bounds a decoder's memory, not the frame's size: a 30-byte frame may
/// legitimately declare the largest m allowed (a nearly empty filter codes to a few bytes).
/// Decoding one frame allocates at most twice its decoded filter, `2 * ceil(m / 8)` bytes
/// (a counting frame: `2 * m` bytes, a byte a counter), plus its payload length and about
/// 128 KiB of tables; a header that claims more than the limits is refused before anything
/// is allocated. `tests/bombs.rs` measures this with a counting allocator. A
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
    /// Largest decoded filter accepted, in bytes of memory: `ceil(m / 8)` for a Bloom
    /// filter, m for a counting filter (a byte a counter). `None`, the default, is
    /// `ceil(max_m / 8)`, the memory of a Bloom filter of `max_m` bits: a counting frame
    /// then costs a receiver no more than a Bloom frame does (spec §2.3), and raising
    /// `max_m` raises both.
    pub max_filter_bytes: Option<u64>,
    /// The codings decoded (spec §4.0): [`Profile::Full`], every coding of the registry, by
    /// default. A frame in a coding of the registry outside it is refused with
    /// [`Error::UnsupportedCoding`](crate::Error::UnsupportedCoding), as a decoder that
    /// implements only that profile would refuse it: a sender tests what such receivers
    /// read, and a receiver may narrow what its peers make it run.
    pub profile: Profile,
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
            max_filter_bytes: None,
            profile: Profile::Full,
        }
    }

    /// The hard limits of the format: anything a conforming encoder may write.
    pub const fn unlimited() -> Self {
        Limits {
            max_m: MAX_M,
            max_k: MAX_K,
            max_payload: u64::MAX,
            max_metadata: u64::MAX,
            max_filter_bytes: Some(u64::MAX),
            profile: Profile::Full,
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

    /// These limits with the largest decoded filter accepted, in bytes of memory.
    pub const fn max_filter_bytes(mut self, max_filter_bytes: u64) -> Self {
        self.max_filter_bytes = Some(max_filter_bytes);
        self
    }

    /// These limits decoding only the codings of `profile`.
    ///
    /// ```
    /// use bloomwire::{decode, BitCoding, BloomFilter, Encoder, Error, HashFamily, Limits};
    /// use bloomwire::{Message, Params, Profile};
    /// let mut f = BloomFilter::new(Params::standard(140_000, 2, HashFamily::default()).unwrap());
    /// (0..10_000u32).for_each(|i| f.insert(i.to_le_bytes()));
    /// let wire = Encoder::new().encode_with(&f, BitCoding::Escape).unwrap().to_bytes();
    /// let core = Limits::new().profile(Profile::Core);
    /// assert!(matches!(
    ///     decode::<Message>(&wire, &core),
    ///     Err(Error::UnsupportedCoding { coding: 11, .. })
    /// ));
    /// ```
    pub const fn profile(mut self, profile: Profile) -> Self {
        self.profile = profile;
        self
    }

    /// The largest decoded filter accepted, in bytes: [`max_filter_bytes`], or
    /// `ceil(max_m / 8)` when it is `None`.
    ///
    /// ```
    /// use bloomwire::Limits;
    /// assert_eq!(Limits::new().filter_bytes(), 1 << 25); // 32 MiB
    /// assert_eq!(Limits::new().max_m(1 << 33).filter_bytes(), 1 << 30);
    /// assert_eq!(Limits::new().max_filter_bytes(1 << 28).filter_bytes(), 1 << 28);
    /// ```
    ///
    /// [`max_filter_bytes`]: Limits::max_filter_bytes
    pub const fn filter_bytes(&self) -> u64 {
        match self.max_filter_bytes {
            Some(bytes) => bytes,
            None => self.max_m.div_ceil(8),
        }
    }
}
