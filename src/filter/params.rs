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

use crate::error::{invalid, Result};
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
        let ks = proportional_block_ks(m, k)
            .map(|(_, raw)| HashCount::from_raw_allow_zero(raw))
            .collect::<Result<Vec<_>>>()?;
        Ok(Layout::Blocks { ks })
    }
}

/// The blocks of a variably-sized block filter of m bits with k split in proportion to their
/// sizes, as `(size, raw k_j)`: `k_j = k * m_j / m` rounded to the nearest point of the
/// fixed-point grid (halves up), 0 for blocks too small to get any. The one rounding that
/// [`Layout::blocks_proportional`] and the optimizer's size and occupancy models share.
pub(crate) fn proportional_block_ks(m: u64, k: HashCount) -> impl Iterator<Item = (u64, u32)> {
    block_sizes(m).map(move |size| {
        let raw = (u128::from(k.raw()) * u128::from(size) + u128::from(m / 2)) / u128::from(m);
        (size, raw as u32)
    })
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
    pub(super) m: u64,
    pub(super) layout: Layout,
    pub(super) family: HashFamily,
}

impl Params {
    /// The first of m, layout, k, base hash (with its seed) and index scheme in which
    /// `other` differs from these parameters: its name, its value here and in `other`, for
    /// the errors that refuse to combine two filters (`None` when the parameters are equal).
    pub(crate) fn difference(&self, other: &Params) -> Option<(&'static str, String, String)> {
        let (a, b) = (self, other);
        if a.m != b.m {
            Some(("m", a.m.to_string(), b.m.to_string()))
        } else if a.layout.id() != b.layout.id() {
            Some((
                "layout",
                a.layout.id().to_string(),
                b.layout.id().to_string(),
            ))
        } else if a.layout != b.layout {
            Some(("k", a.k().to_string(), b.k().to_string()))
        } else if a.family.base != b.family.base {
            let base = |f: &HashFamily| format!("{:?}", f.base);
            Some(("base hash", base(&a.family), base(&b.family)))
        } else if a.family.scheme != b.family.scheme {
            let scheme = |f: &HashFamily| format!("{:?}", f.scheme);
            Some(("index scheme", scheme(&a.family), scheme(&b.family)))
        } else {
            None
        }
    }

    /// Check and assemble filter parameters.
    ///
    /// Errors: m = 0 or above [`MAX_M`]; a partitioned layout whose sub-arrays would be
    /// empty (m < ceil(k)); a block layout with the wrong number of `k_j` or a total k
    /// outside `[1, MAX_K]`; the opaque family ([`HashFamily::opaque`]) with another layout
    /// than the standard one or another index scheme than double hashing (its frames have
    /// filter type 0 and index scheme 0; its k is the other library's number of hashes,
    /// informational).
    pub fn new(m: u64, layout: Layout, family: HashFamily) -> Result<Self> {
        check_m(m)?;
        if family.base.is_opaque() {
            if !matches!(layout, Layout::Standard { .. }) {
                return Err(invalid(
                    "layout",
                    "the opaque hash family has the standard layout only",
                ));
            }
            if family.scheme != crate::filter::hashing::IndexScheme::DoubleHashing {
                return Err(invalid(
                    "index scheme",
                    "the opaque hash family has index scheme 0 (double hashing) only",
                ));
            }
        }
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

    /// The bit indexes of a key, in the order the hash functions produce them: the same as
    /// [`BloomFilter::indexes`](crate::BloomFilter::indexes), without a bit array, so that a
    /// receiver can find which parts of a large frame to decode
    /// ([`FrameView::decode_chunk_into`](crate::FrameView::decode_chunk_into)).
    ///
    /// ```
    /// use bloomwire::{BloomFilter, HashFamily, Params};
    /// let params = Params::standard(1 << 20, 3, HashFamily::default()).unwrap();
    /// let mut f = BloomFilter::new(params.clone());
    /// f.insert(b"alpha");
    /// assert_eq!(params.indexes(b"alpha"), f.indexes(b"alpha"));
    /// assert_eq!(params.indexes(b"alpha").len(), 3);
    /// ```
    pub fn indexes(&self, key: impl AsRef<[u8]>) -> Vec<u64> {
        let mut out = Vec::new();
        Indexer::new(self).for_each(key, |i| out.push(i));
        out
    }
}

/// The bit indexes of keys under one filter's parameters, its geometry worked out once: for
/// code that places keys without the bit array, such as a cluster's workers that send each
/// key's positions to the owners of a large filter's chunks
/// ([`ChunkedFrame`](crate::ChunkedFrame)).
///
/// ```
/// use bloomwire::filter::Indexer;
/// use bloomwire::{HashFamily, Params};
/// let params = Params::standard(1 << 20, 3, HashFamily::default()).unwrap();
/// let indexer = Indexer::new(&params);
/// let mut found = Vec::new();
/// indexer.for_each(b"alpha", |i| found.push(i));
/// assert_eq!(found, params.indexes(b"alpha"));
/// ```
#[derive(Debug, Clone)]
pub struct Indexer {
    params: Params,
    geometry: Geometry,
}

impl Indexer {
    /// The indexer of filters of `params`.
    pub fn new(params: &Params) -> Self {
        Indexer {
            params: params.clone(),
            geometry: Geometry::of(params),
        }
    }

    /// Call `f` with each bit index of `key`, in the order the hash functions produce them
    /// (none for the opaque family).
    pub fn for_each(&self, key: impl AsRef<[u8]>, mut f: impl FnMut(u64)) {
        walk_indexes(&self.geometry, &self.params, key.as_ref(), |i| {
            f(i);
            true
        });
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

/// The bit indexes of a key under `params`, fed to `f` until it returns false.
#[inline]
pub(crate) fn walk_indexes(
    geometry: &Geometry,
    params: &Params,
    key: &[u8],
    mut f: impl FnMut(u64) -> bool,
) -> bool {
    if params.family.base.is_opaque() {
        // No index bloomwire knows (spec §3.1): a key has no bits to visit.
        return true;
    }
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
