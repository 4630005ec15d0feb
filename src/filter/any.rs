//! Either kind of filter: for code that takes what arrives (a program that reads frames of
//! both kinds, a receiver that follows either), one type instead of a match at every use.

use crate::error::Result;

use super::bits::BitArray;
use super::bloom::BloomFilter;
use super::counting::CountingBloomFilter;
use super::params::Params;

/// A [`BloomFilter`] or a [`CountingBloomFilter`].
///
/// It is a [`Filter`](crate::Filter) itself: an `Encoder<AnyFilter>` codes either kind, a
/// `Receiver<AnyFilter>` follows a sender of either kind, and `decode` gives a
/// `Decoded<AnyFilter>` for a full frame of either.
///
/// ```
/// use bloomwire::{decode, AnyFilter, CountingBloomFilter, Decoded, Encoder, HashFamily};
/// use bloomwire::{Limits, Params};
/// let mut c = CountingBloomFilter::new(Params::standard(1000, 3, HashFamily::default()).unwrap(), 4)
///     .unwrap();
/// c.insert(b"key");
/// let wire = Encoder::new().encode(&c).unwrap().to_bytes();
/// let back: Decoded<AnyFilter> = decode(&wire, &Limits::default()).unwrap();
/// assert!(back.filter.is_counting());
/// assert!(back.filter.contains(b"key"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnyFilter {
    /// A Bloom filter (filter types 0 to 2).
    Bloom(BloomFilter),
    /// A counting filter (filter type 3).
    Counting(CountingBloomFilter),
}

impl AnyFilter {
    /// m, the layout with k, and the hash family.
    pub fn params(&self) -> &Params {
        match self {
            AnyFilter::Bloom(f) => f.params(),
            AnyFilter::Counting(f) => f.params(),
        }
    }

    /// The number of keys inserted (the sender's, for a decoded filter).
    pub fn n(&self) -> u64 {
        match self {
            AnyFilter::Bloom(f) => f.n(),
            AnyFilter::Counting(f) => f.n(),
        }
    }

    /// Whether it is a counting filter.
    pub fn is_counting(&self) -> bool {
        matches!(self, AnyFilter::Counting(_))
    }

    /// Insert a key.
    pub fn insert(&mut self, key: impl AsRef<[u8]>) {
        match self {
            AnyFilter::Bloom(f) => f.insert(key),
            AnyFilter::Counting(f) => f.insert(key),
        }
    }

    /// Whether a key may be in the set (see [`BloomFilter::contains`] for opaque filters).
    pub fn contains(&self, key: impl AsRef<[u8]>) -> bool {
        match self {
            AnyFilter::Bloom(f) => f.contains(key),
            AnyFilter::Counting(f) => f.contains(key),
        }
    }

    /// Whether a key may be in the set, or
    /// [`Error::OpaqueHashFamily`](crate::Error::OpaqueHashFamily) for a filter whose bits
    /// another library placed.
    pub fn try_contains(&self, key: impl AsRef<[u8]>) -> Result<bool> {
        match self {
            AnyFilter::Bloom(f) => f.try_contains(key),
            AnyFilter::Counting(f) => Ok(f.contains(key)),
        }
    }

    /// The digest of spec §5.1 that delta frames name generations by.
    pub fn digest(&self) -> u32 {
        self.as_ref_any().digest()
    }

    /// The Bloom filter's bits, or for a counting filter the bits of its non-zero
    /// counters (what a query reads).
    pub fn to_bits(&self) -> BitArray {
        match self {
            AnyFilter::Bloom(f) => f.bits().clone(),
            AnyFilter::Counting(f) => f.to_bloom_filter().bits().clone(),
        }
    }
}

impl From<BloomFilter> for AnyFilter {
    fn from(f: BloomFilter) -> Self {
        AnyFilter::Bloom(f)
    }
}

impl From<CountingBloomFilter> for AnyFilter {
    fn from(f: CountingBloomFilter) -> Self {
        AnyFilter::Counting(f)
    }
}

/// A borrowed filter of either kind: what the frame and stream layers match on.
#[derive(Debug, Clone, Copy)]
pub enum FilterRef<'a> {
    /// A Bloom filter.
    Bloom(&'a BloomFilter),
    /// A counting filter.
    Counting(&'a CountingBloomFilter),
}

/// A mutably borrowed filter of either kind.
#[derive(Debug)]
pub enum FilterMut<'a> {
    /// A Bloom filter.
    Bloom(&'a mut BloomFilter),
    /// A counting filter.
    Counting(&'a mut CountingBloomFilter),
}

impl FilterRef<'_> {
    /// The digest of spec §5.1.
    pub(crate) fn digest(self) -> u32 {
        match self {
            FilterRef::Bloom(f) => f.bits().digest(),
            FilterRef::Counting(f) => f.digest(),
        }
    }
}

impl AnyFilter {
    /// The filter, borrowed as either kind.
    pub(crate) fn as_ref_any(&self) -> FilterRef<'_> {
        match self {
            AnyFilter::Bloom(f) => FilterRef::Bloom(f),
            AnyFilter::Counting(f) => FilterRef::Counting(f),
        }
    }

    /// The filter, mutably borrowed as either kind.
    pub(crate) fn as_mut_any(&mut self) -> FilterMut<'_> {
        match self {
            AnyFilter::Bloom(f) => FilterMut::Bloom(f),
            AnyFilter::Counting(f) => FilterMut::Counting(f),
        }
    }
}
