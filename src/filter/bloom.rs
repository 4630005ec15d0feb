//! The Bloom filter: a bit array and the keys inserted, with where each key goes fixed by its
//! [`Params`].

use crate::error::{Error, Result};
use crate::filter::bits::BitArray;

use super::params::{walk_indexes, Geometry, Params};

/// A Bloom filter: its parameters, its bits, and how many keys were inserted.
///
/// ```
/// use bloomwire::{BloomFilter, HashFamily, Params};
/// let params = Params::standard(1000, 3, HashFamily::default()).unwrap();
/// let mut f = BloomFilter::new(params);
/// f.insert(b"alpha");
/// f.insert("beta");
/// assert!(f.contains(b"alpha") && f.contains("beta"));
/// assert_eq!(f.n(), 2);
/// assert!(f.bits().count_ones() <= 6);
/// ```
#[derive(Debug, Clone)]
pub struct BloomFilter {
    params: Params,
    geometry: Geometry,
    bits: BitArray,
    n: u64,
}

impl PartialEq for BloomFilter {
    fn eq(&self, other: &Self) -> bool {
        self.params == other.params && self.bits == other.bits && self.n == other.n
    }
}

impl Eq for BloomFilter {}

impl BloomFilter {
    /// An empty filter.
    pub fn new(params: Params) -> Self {
        let bits = BitArray::new(params.m);
        Self::from_parts(params, bits, 0).expect("lengths agree")
    }

    /// An empty filter, or [`Error::AllocationFailed`] where the machine lacks the memory for
    /// its `ceil(m / 8)` bytes ([`new`](Self::new) aborts then).
    ///
    /// ```
    /// use bloomwire::{BloomFilter, Error, HashFamily, Params};
    /// let huge = Params::standard(1 << 47, 3, HashFamily::default()).unwrap(); // 16 TiB
    /// assert!(matches!(BloomFilter::try_new(huge), Err(Error::AllocationFailed { .. })));
    /// ```
    pub fn try_new(params: Params) -> Result<Self> {
        let bits = BitArray::try_new(params.m)?;
        Self::from_parts(params, bits, 0)
    }

    /// A filter from decoded bits. `n` is the number of keys the sender says it inserted
    /// (informational: queries do not use it).
    pub fn from_parts(params: Params, bits: BitArray, n: u64) -> Result<Self> {
        if bits.len() != params.m {
            return Err(Error::Incompatible(format!(
                "a bit array of {} bits for m = {}",
                bits.len(),
                params.m()
            )));
        }
        Ok(BloomFilter {
            geometry: Geometry::of(&params),
            params,
            bits,
            n,
        })
    }

    /// The bits, for a receiver that applies a delta in place (it restores them on error).
    pub(crate) fn bits_mut(&mut self) -> &mut BitArray {
        &mut self.bits
    }

    /// Set the number of keys the sender says it inserted (a delta's header carries it).
    pub(crate) fn set_n(&mut self, n: u64) {
        self.n = n;
    }

    /// The filter's parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The bits.
    pub fn bits(&self) -> &BitArray {
        &self.bits
    }

    /// Number of bits.
    pub fn m(&self) -> u64 {
        self.params.m
    }

    /// Number of insert calls (or the count the sender reported).
    pub fn n(&self) -> u64 {
        self.n
    }

    /// Fraction of bits that are zero: the measured `p` of the papers.
    pub fn fraction_of_zeros(&self) -> f64 {
        self.bits.count_zeros() as f64 / self.params.m as f64
    }

    /// Visit the bit indexes of a key, stopping when `f` returns false; returns whether `f`
    /// returned true for all of them.
    #[inline]
    fn for_each_index(&self, key: &[u8], f: impl FnMut(u64) -> bool) -> bool {
        walk_indexes(&self.geometry, &self.params, key, f)
    }

    /// Whether the filter's hash family is opaque
    /// ([`BaseHash::Opaque`](crate::BaseHash::Opaque)): another library placed its bits, bloomwire cannot query
    /// them.
    pub fn is_opaque(&self) -> bool {
        self.params.family.base.is_opaque()
    }

    /// The bit indexes of a key, in the order the hash functions produce them (none for an
    /// opaque filter).
    pub fn indexes(&self, key: impl AsRef<[u8]>) -> Vec<u64> {
        let mut out = Vec::new();
        self.for_each_index(key.as_ref(), |i| {
            out.push(i);
            true
        });
        out
    }

    /// Insert a key.
    ///
    /// A filter of the opaque hash family ([`is_opaque`](Self::is_opaque)) has no place for
    /// a key: there `insert` changes nothing. [`try_insert`](Self::try_insert) says so.
    pub fn insert(&mut self, key: impl AsRef<[u8]>) {
        if self.is_opaque() {
            return;
        }
        let bits = &mut self.bits;
        walk_indexes(&self.geometry, &self.params, key.as_ref(), |i| {
            bits.set(i);
            true
        });
        self.n += 1;
    }

    /// Insert a key, or fail with [`Error::OpaqueHashFamily`] for a filter of the opaque
    /// hash family.
    pub fn try_insert(&mut self, key: impl AsRef<[u8]>) -> Result<()> {
        if self.is_opaque() {
            return Err(Error::OpaqueHashFamily);
        }
        self.insert(key);
        Ok(())
    }

    /// Whether a key may be in the set: false means certainly not.
    ///
    /// A filter decoded from a peer may be of the opaque hash family
    /// ([`is_opaque`](Self::is_opaque)), whose bits only the library that set them can
    /// query: there `contains` answers true ("maybe") for every key, never a false negative
    /// and never a panic, and tells nothing. Code that queries filters from peers it does
    /// not control calls [`try_contains`](Self::try_contains), which refuses such a query.
    pub fn contains(&self, key: impl AsRef<[u8]>) -> bool {
        self.for_each_index(key.as_ref(), |i| self.bits.get(i))
    }

    /// Whether a key may be in the set, or [`Error::OpaqueHashFamily`] for a filter of the
    /// opaque hash family (its bits were placed by another library).
    ///
    /// ```
    /// use bloomwire::{decode, BloomFilter, Decoded, Encoder, Error, HashFamily, Limits, Params};
    /// let mut f = BloomFilter::new(Params::standard(1000, 3, HashFamily::default()).unwrap());
    /// f.insert(b"alpha");
    /// assert_eq!(f.try_contains(b"alpha"), Ok(true));
    /// // Another library's bits, carried as they are.
    /// let other = BloomFilter::from_parts(
    ///     Params::standard(1000, 3, HashFamily::opaque()).unwrap(),
    ///     f.bits().clone(),
    ///     1,
    /// )
    /// .unwrap();
    /// let wire = Encoder::new().encode(&other).unwrap().to_bytes();
    /// let back: Decoded = decode(&wire, &Limits::default()).unwrap();
    /// assert_eq!(back.filter.bits(), f.bits());
    /// assert_eq!(back.filter.try_contains(b"alpha"), Err(Error::OpaqueHashFamily));
    /// ```
    pub fn try_contains(&self, key: impl AsRef<[u8]>) -> Result<bool> {
        if self.is_opaque() {
            return Err(Error::OpaqueHashFamily);
        }
        Ok(self.contains(key))
    }

    fn check_compatible(&self, other: &BloomFilter) -> Result<()> {
        if let Some((field, ours, theirs)) = self.params.difference(&other.params) {
            return Err(Error::Incompatible(format!(
                "{field} is {ours} in this filter and {theirs} in the other"
            )));
        }
        Ok(())
    }

    /// Union: a filter of both sets. `n` becomes the sum (an upper bound).
    pub fn union_with(&mut self, other: &BloomFilter) -> Result<()> {
        self.check_compatible(other)?;
        self.bits.union_with(&other.bits)?;
        self.n = self.n.saturating_add(other.n);
        Ok(())
    }

    /// Intersection of the bit arrays: contains every key of both sets (and may answer yes
    /// more often than a filter built from the intersection). `n` becomes the smaller.
    pub fn intersect_with(&mut self, other: &BloomFilter) -> Result<()> {
        self.check_compatible(other)?;
        self.bits.intersect_with(&other.bits)?;
        self.n = self.n.min(other.n);
        Ok(())
    }

    /// The XOR of two generations' bit arrays: what a delta frame carries.
    pub fn xor(&self, other: &BloomFilter) -> Result<BitArray> {
        self.check_compatible(other)?;
        let mut d = self.bits.clone();
        d.xor_with(&other.bits)?;
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::hashing::HashFamily;
    use crate::filter::hashing::{BaseHash, IndexScheme};
    use crate::filter::params::{block_sizes, Layout, MAX_M};
    use crate::filter::rational::{HashCount, MAX_K};

    fn fam() -> HashFamily {
        HashFamily::default()
    }

    #[test]
    fn bad_parameters_are_typed_errors() {
        assert!(Params::standard(0, 2, fam()).is_err());
        assert!(Params::standard(MAX_M + 1, 2, fam()).is_err());
        assert!(Params::standard(10, 0, fam()).is_err());
        assert!(Params::standard(10, MAX_K + 1, fam()).is_err());
        let k3 = HashCount::new(3).unwrap();
        assert!(Params::new(2, Layout::Partitioned { k: k3 }, fam()).is_err());
        assert!(Params::new(3, Layout::Blocks { ks: vec![k3] }, fam()).is_err());
        let zero = HashCount::from_raw_allow_zero(0).unwrap();
        assert!(Params::new(
            3,
            Layout::Blocks {
                ks: vec![zero, zero]
            },
            fam()
        )
        .is_err());
    }

    #[test]
    fn partitioned_indexes_land_in_their_partition() {
        let k = HashCount::from_f64(3.5).unwrap();
        let p = Params::new(1003, Layout::Partitioned { k }, fam()).unwrap();
        let f = BloomFilter::new(p);
        let part = 1003 / 4;
        for key in 0u32..500 {
            let idx = f.indexes(key.to_le_bytes());
            assert!(idx.len() == 3 || idx.len() == 4);
            for (i, &x) in idx.iter().enumerate() {
                assert_eq!(x / part, i as u64, "key {key}");
            }
        }
    }

    #[test]
    fn block_indexes_land_in_their_blocks() {
        let m = 0b1011_0001; // blocks 128, 32, 16, 1
        let layout = Layout::blocks_proportional(m, HashCount::new(4).unwrap()).unwrap();
        let Layout::Blocks { ks } = &layout else {
            unreachable!()
        };
        assert_eq!(ks.len(), 4);
        let p = Params::new(m, layout.clone(), fam()).unwrap();
        let f = BloomFilter::new(p);
        for key in 0u32..200 {
            for x in f.indexes(key.to_le_bytes()) {
                assert!(x < m);
            }
        }
        assert_eq!(block_sizes(m).collect::<Vec<_>>(), vec![128, 32, 16, 1]);
    }

    #[test]
    fn m_equals_one_works() {
        for layout in [
            Layout::Standard {
                k: HashCount::new(2).unwrap(),
            },
            Layout::Blocks {
                ks: vec![HashCount::new(1).unwrap()],
            },
        ] {
            let mut f = BloomFilter::new(Params::new(1, layout, fam()).unwrap());
            assert!(!f.contains(b"x"));
            f.insert(b"x");
            assert!(f.contains(b"y"));
        }
    }

    #[test]
    fn incompatible_filters_refuse_set_operations() {
        let a = BloomFilter::new(Params::standard(64, 2, fam()).unwrap());
        let fam2 = HashFamily::new(BaseHash::Xxh64 { seed: 1 }, IndexScheme::DoubleHashing);
        let b = BloomFilter::new(Params::standard(64, 2, fam2).unwrap());
        assert!(a.clone().union_with(&b).is_err());
        assert!(a.xor(&b).is_err());
    }
}
