//! Bloom filters of any length m, with an integer or rational k, in three layouts:
//!
//! * [`Layout::Standard`]: every hash function maps into all m bits;
//! * [`Layout::Partitioned`]: the partition scheme of Kirsch and Mitzenmacher, `ceil(k)`
//!   disjoint sub-arrays of `floor(m / ceil(k))` bits, hash function `i` maps into sub-array
//!   `i` (the last `m mod ceil(k)` bits are never set);
//! * [`Layout::Blocks`]: the Variably-Sized Block Bloom filter of Walther et al., m split into
//!   power-of-two blocks by its binary digits (largest first), block `j` a rational Bloom
//!   filter of its own with `k_j` hash functions, every key inserted into every block.
//!
//! Where each key goes is fixed by [`Params`] (m, layout, hash family), which is what a frame
//! header carries; see [`crate::filter::hashing`] for how indexes are derived.

use crate::error::{invalid, Error, Result};
use crate::filter::bits::BitArray;
use crate::filter::hashing::{stream, HashFamily, IndexIter};
use crate::filter::rational::{HashCount, MAX_K};

/// The largest m the crate accepts (2^48 bits, 32 TiB). Frames cannot exceed it.
pub const MAX_M: u64 = 1 << 48;

/// How the bits of a filter are divided among its hash functions. The wire id is
/// [`Layout::id`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Layout {
    /// One array of m bits; wire id 0.
    Standard {
        /// Hash functions per key (rational allowed).
        k: HashCount,
    },
    /// `ceil(k)` disjoint sub-arrays of `floor(m / ceil(k))` bits; wire id 1.
    Partitioned {
        /// Hash functions per key (rational allowed: the last sub-array serves the extra one).
        k: HashCount,
    },
    /// Power-of-two blocks from the binary digits of m, largest first; wire id 2.
    Blocks {
        /// `k_j` of each block, in block order; `popcount(m)` entries, each in `[0, MAX_K]`,
        /// summing to a k in `[1, MAX_K]`.
        ks: Vec<HashCount>,
    },
}

impl Layout {
    /// Wire id of the standard layout.
    pub const STANDARD_ID: u8 = 0;
    /// Wire id of the partitioned layout.
    pub const PARTITIONED_ID: u8 = 1;
    /// Wire id of the variably-sized block layout.
    pub const BLOCKS_ID: u8 = 2;

    /// The layout's id in frame headers (the "filter type").
    pub fn id(&self) -> u8 {
        match self {
            Layout::Standard { .. } => Self::STANDARD_ID,
            Layout::Partitioned { .. } => Self::PARTITIONED_ID,
            Layout::Blocks { .. } => Self::BLOCKS_ID,
        }
    }

    /// Blocks whose `k_j` are proportional to their sizes (`k_j = k * m_j / m`, Walther et
    /// al.'s optimum when k is optimal for m), rounded to the fixed-point grid.
    pub fn blocks_proportional(m: u64, k: HashCount) -> Result<Layout> {
        check_m(m)?;
        let ks = block_sizes(m)
            .map(|size| {
                let raw =
                    (u128::from(k.raw()) * u128::from(size) + u128::from(m / 2)) / u128::from(m);
                HashCount::from_raw_allow_zero(raw as u32)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Layout::Blocks { ks })
    }
}

/// The sizes of the blocks of a variably-sized block filter of m bits: the powers of two of
/// m's binary digits, largest first.
pub fn block_sizes(m: u64) -> impl Iterator<Item = u64> {
    (0..64)
        .rev()
        .filter(move |b| m >> b & 1 == 1)
        .map(|b| 1u64 << b)
}

fn check_m(m: u64) -> Result<()> {
    if m == 0 || m > MAX_M {
        return Err(invalid("m", format!("{m} is not in 1..={MAX_M}")));
    }
    Ok(())
}

/// Everything that fixes where a key's bits go: m, the layout with its k, the hash family.
/// Validated on construction, so every `Params` describes a usable filter.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Params {
    m: u64,
    layout: Layout,
    family: HashFamily,
}

impl Params {
    /// Check and assemble filter parameters.
    ///
    /// Errors: m = 0 or above [`MAX_M`]; a partitioned layout whose sub-arrays would be
    /// empty (m < ceil(k)); a block layout with the wrong number of `k_j` or a total k
    /// outside `[1, MAX_K]`.
    pub fn new(m: u64, layout: Layout, family: HashFamily) -> Result<Self> {
        check_m(m)?;
        match &layout {
            Layout::Standard { k } => {
                HashCount::from_raw(k.raw())?;
            }
            Layout::Partitioned { k } => {
                HashCount::from_raw(k.raw())?;
                if m < u64::from(k.ceil()) {
                    return Err(invalid(
                        "m",
                        format!("{m} bits cannot hold {} partitions", k.ceil()),
                    ));
                }
            }
            Layout::Blocks { ks } => {
                if ks.len() != m.count_ones() as usize {
                    return Err(invalid(
                        "ks",
                        format!("{} entries for {} blocks", ks.len(), m.count_ones()),
                    ));
                }
                let total: u64 = ks.iter().map(|k| u64::from(k.raw())).sum();
                if total > u64::from(MAX_K) << 16 {
                    return Err(invalid("k", "the blocks' k_j sum above the maximum"));
                }
                HashCount::from_raw(total as u32)?;
            }
        }
        Ok(Params { m, layout, family })
    }

    /// A standard filter with integer k.
    pub fn standard(m: u64, k: u32, family: HashFamily) -> Result<Self> {
        Self::new(
            m,
            Layout::Standard {
                k: HashCount::new(k)?,
            },
            family,
        )
    }

    /// Number of bits.
    pub fn m(&self) -> u64 {
        self.m
    }

    /// The layout and its k.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The hash family.
    pub fn family(&self) -> &HashFamily {
        &self.family
    }

    /// The expected number of hash functions per key (for blocks, the sum of the `k_j`).
    pub fn k(&self) -> HashCount {
        match &self.layout {
            Layout::Standard { k } | Layout::Partitioned { k } => *k,
            Layout::Blocks { ks } => {
                let total: u32 = ks.iter().map(|k| k.raw()).sum();
                HashCount::from_raw(total).expect("checked in Params::new")
            }
        }
    }
}

/// Precomputed geometry, so that insert and query never divide.
#[derive(Debug, Clone)]
pub(crate) enum Geometry {
    Standard {
        k: HashCount,
    },
    Partitioned {
        k: HashCount,
        part: u64,
    },
    Blocks {
        /// (offset, size, k_j) per block.
        blocks: Vec<(u64, u64, HashCount)>,
    },
}

impl Geometry {
    pub(crate) fn of(params: &Params) -> Geometry {
        match &params.layout {
            Layout::Standard { k } => Geometry::Standard { k: *k },
            Layout::Partitioned { k } => Geometry::Partitioned {
                k: *k,
                part: params.m / u64::from(k.ceil()),
            },
            Layout::Blocks { ks } => {
                let mut offset = 0;
                let blocks = block_sizes(params.m)
                    .zip(ks)
                    .map(|(size, k)| {
                        let b = (offset, size, *k);
                        offset += size;
                        b
                    })
                    .collect();
                Geometry::Blocks { blocks }
            }
        }
    }
}

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

    /// A filter from decoded bits. `n` is the number of keys the sender says it inserted
    /// (informational: queries do not use it).
    pub fn from_parts(params: Params, bits: BitArray, n: u64) -> Result<Self> {
        if bits.len() != params.m {
            return Err(Error::Incompatible("bit array length differs from m"));
        }
        Ok(BloomFilter {
            geometry: Geometry::of(&params),
            params,
            bits,
            n,
        })
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

    /// The bit indexes of a key, in the order the hash functions produce them.
    pub fn indexes(&self, key: impl AsRef<[u8]>) -> Vec<u64> {
        let mut out = Vec::new();
        self.for_each_index(key.as_ref(), |i| {
            out.push(i);
            true
        });
        out
    }

    /// Insert a key.
    pub fn insert(&mut self, key: impl AsRef<[u8]>) {
        let bits = &mut self.bits;
        walk_indexes(&self.geometry, &self.params, key.as_ref(), |i| {
            bits.set(i);
            true
        });
        self.n += 1;
    }

    /// Whether a key may be in the set: false means certainly not.
    pub fn contains(&self, key: impl AsRef<[u8]>) -> bool {
        self.for_each_index(key.as_ref(), |i| self.bits.get(i))
    }

    fn check_compatible(&self, other: &BloomFilter) -> Result<()> {
        if self.params != other.params {
            return Err(Error::Incompatible(
                "filters differ in m, layout, k or hash family",
            ));
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

/// The bit indexes of a key under `params`, fed to `f` until it returns false.
#[inline]
pub(crate) fn walk_indexes(
    geometry: &Geometry,
    params: &Params,
    key: &[u8],
    mut f: impl FnMut(u64) -> bool,
) -> bool {
    let h = params.family.base.hash(key);
    let scheme = params.family.scheme;
    let m = params.m;
    match geometry {
        Geometry::Standard { k } => {
            let count = if k.is_integer() {
                k.whole()
            } else {
                k.count_for(stream(h, 2))
            };
            IndexIter::new(scheme, stream(h, 0), stream(h, 1), m).take_into(count, f)
        }
        Geometry::Partitioned { k, part } => {
            let count = if k.is_integer() {
                k.whole()
            } else {
                k.count_for(stream(h, 2))
            };
            let mut offset = 0;
            IndexIter::new(scheme, stream(h, 0), stream(h, 1), *part).take_into(count, |g| {
                let ok = f(offset + g);
                offset += part;
                ok
            })
        }
        Geometry::Blocks { blocks } => {
            for (j, &(offset, size, k)) in blocks.iter().enumerate() {
                let s = 3 * j as u64;
                let count = if k.is_integer() {
                    k.whole()
                } else {
                    k.count_for(stream(h, s + 2))
                };
                if count == 0 {
                    continue;
                }
                let it = IndexIter::new(scheme, stream(h, s), stream(h, s + 1), size);
                if !it.take_into(count, |g| f(offset + g)) {
                    return false;
                }
            }
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::hashing::{BaseHash, IndexScheme};

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
