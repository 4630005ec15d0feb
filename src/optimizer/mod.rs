//! The entropy-aware optimizer: choose m and k for what is sent, not for what is stored.
//!
//! # The problem (Mitzenmacher, *Compressed Bloom Filters*, Section II-B)
//!
//! With n keys, m bits and k hash functions a bit is zero with probability
//! `p = exp(-kn/m)` and the false positive rate is `f = (1 - p)^k`. A Bloom filter tuned for
//! memory takes `k = ln 2 * m/n` (`p = 1/2`), and then its bits do not compress. A filter that
//! is *sent* should instead minimise f subject to its transmitted size z:
//!
//! ```text
//! minimise f = (1 - p)^k   subject to   size(m, k) <= z,
//! ```
//!
//! where an entropy coder sends the bit array in about `m * H(p)` bits. The paper shows that
//! `p = 1/2` is then the *worst* choice; the optimum moves to fewer hash functions and a
//! larger, sparser array (Table I: z/n = 8 gives f = 0.0216 uncompressed, 0.0177 with
//! m/n = 14, k = 2). [`Optimizer::plan`] solves this problem, [`Optimizer::plan_for_fpr`]
//! its dual (fixed f, least bytes), and [`Optimizer::plan_delta`] the delta version of
//! Section IV, where the XOR of two generations has ones with probability
//! `q = 2p(1 - p^c)` when a fraction c of the keys changed, and costs `m * H(q)` bits.
//!
//! # From `m H(p)` to bytes that always fit
//!
//! The paper plans for `0.99 z` and checks by simulation. Here the frame size is modelled
//! ([`SizeModel::Frame`]): header bytes (see [`frame_bytes`]) plus the coded payload, and the
//! budget must hold with probability at least `1 - epsilon` (default `1e-6`).
//!
//! The number of zero bits Z is random. For kn balls thrown into m bins (a standard filter
//! with integer k) the occupancy moments are exact:
//!
//! ```text
//! E[Z]   = m (1 - 1/m)^(kn)
//! Var[Z] = m (1 - 1/m)^(kn) + m (m - 1) (1 - 2/m)^(kn) - E[Z]^2.
//! ```
//!
//! With a rational k every key throws `floor(k)` balls and one more with probability
//! `r = k - floor(k)`, so `(1 - j/m)^(kn)` becomes `((1 - j/m)^floor(k) (1 - j r/m))^n`;
//! partitioned and block layouts are sums of independent regions of this kind (the unused
//! tail of a partitioned filter is a constant). The difference `Var - E^2` is computed as
//! `m^2 E1^2 expm1(d)` with `d` from `ln_1p`, so it stays accurate for m up to 2^48.
//!
//! A coder that knows p (quantised to 16 bits) spends `-Z log2 p - (m - Z) log2 (1 - p)` bits,
//! which is linear in Z with slope `log2((1 - p)/p)`; an adaptive coder spends about
//! `m H(Z/m) + 0.5 log2 m + 2` bits, and since H is concave, `m H(Z/m)` lies below its
//! tangent at `E[Z]`. Both are therefore bounded by
//!
//! ```text
//! m H(p) + |log2((1 - p)/p)| * t,
//! ```
//!
//! where `P[|Z - E[Z]| > t] <= epsilon` on the side that makes the payload grow. The
//! deviation t comes from a [`TailBound`]:
//!
//! * [`TailBound::Gaussian`] (default): `t = z_(1-epsilon) * sd(Z)` with the exact variance
//!   above. Occupancy counts are asymptotically normal as their variance grows (Rényi,
//!   Weiss), and this is the tight choice: for n = 10 000, m = 140 000, k = 2 it gives a
//!   payload standard deviation of 11.3 bytes against the paper's measured 11.4. The tests
//!   check it by simulation.
//! * [`TailBound::Bernstein`]: rigorous for every m. The indicators "bin i is empty" are
//!   negatively associated (Dubhashi and Ranjan, 1998), so Chernoff-type bounds for
//!   independent Bernoulli(p) bits apply, and Bernstein's inequality gives
//!   `t = L/3 + sqrt(L^2/9 + 2 L sigma^2)` with `L = ln(1/epsilon)` and
//!   `sigma^2 = sum p(1 - p)` over the bits (at least the true variance). It costs several
//!   times the Gaussian margin because it ignores the negative correlation. The Azuma bound
//!   of the paper's appendix, `2 exp(-t^2 / 2nk)`, is looser still and not used.
//!
//! For deltas the XOR bits are close to independent; Z is replaced by the number of ones,
//! with the binomial variance `m q (1 - q)` (both tail bounds).
//!
//! The payload of an arithmetic-coded frame is a whole number of 32-bit words,
//! `ceil(bits / 32)` plus up to 2 words of coder termination (2 in the worst case, 1.5
//! expected), and the coder (precision 16) loses at most `1e-5` bit per bit. A raw frame
//! carries exactly `ceil(m/8)` bytes and needs no margin.
//!
//! # Search
//!
//! For a fixed k both the size and `1/f` grow with m, so the best m for k is the largest one
//! whose worst-case frame fits, found by binary search over the allowed m (a multiple of a
//! step, or a power of two, up to a maximum). Every integer k in the allowed range is tried
//! (the optimum is not unimodal in k: both `k -> 1` and `k -> infinity` approach
//! `f = 2^(-z/n)`). With rational k the best integer is refined by ternary search on the
//! 1/65536 grid over the neighbouring unit intervals. The uncompressed filter is always a
//! candidate, so a plan is never worse than the classic choice.
//!
//! Rational k is planned with the false positive rate a rational filter really has,
//! `(1 - p)^floor(k) (1 - r p)`, which by Bernoulli's inequality lies above `(1 - p)^k`. With
//! it the best k has so far always come out an integer (the tests show this for the paper's
//! settings; Walther et al.'s gains come from approximating the rational factor away), so
//! enabling rational k costs search time and, as far as measured, never changes f by more than
//! the grid. The dual search is the same
//! with "smallest m whose f is at most the target".
//!
//! ```
//! use bloomwire::optimizer::{Optimizer, SizeModel};
//! use bloomwire::HashCount;
//!
//! // Table I of the paper: at most 8 bits per element on the wire, m/n at most 14.
//! let n = 1_000_000;
//! let plan = Optimizer::new()
//!     .size_model(SizeModel::Ideal)
//!     .max_m(14 * n)
//!     .plan(n, n) // n bytes = 8 bits per element
//!     .unwrap();
//! assert_eq!(plan.k(), HashCount::new(2).unwrap());
//! assert_eq!(plan.m(), 14 * n);
//! assert!((plan.false_positive_rate - 0.0177).abs() < 5e-5);
//! assert!((plan.bits_per_element - 7.923).abs() < 5e-4);
//! // The best uncompressed filter for the same budget: m/n = 8, k = 6, f = 0.0216.
//! let raw = plan.uncompressed.unwrap();
//! assert_eq!((raw.m, raw.k.whole()), (8 * n, 6));
//! assert!((raw.false_positive_rate - 0.0216).abs() < 5e-5);
//! ```

use core::fmt;

mod counting;
pub use counting::{CountingPlan, MIN_COUNTER_MEAN};

use crate::error::{invalid, Error, Result};
use crate::filter::hashing::HashFamily;
use crate::filter::rational::{HashCount, K_FRAC_BITS};
use crate::filter::{block_sizes, Layout, Params, MAX_M};
use crate::format;
use crate::theory::entropy;
use crate::wire::varint_len;

/// Default probability with which a worst-case frame may still overflow its budget.
pub const DEFAULT_EPSILON: f64 = 1e-6;

/// Default largest k tried. A query costs k hash evaluations and memory probes; raise it with
/// [`Optimizer::k_range`] (up to [`MAX_K`](crate::filter::rational::MAX_K)).
///
/// Both f and `m H(p)` are symmetric under `p <-> 1 - p` (equation (1) of the paper), so every
/// sparse solution has a dense mirror image with the same m, about the same f and size, and
/// many more hash functions: Table I's m/n = 14, k = 2 (p = 0.867) mirrors to k = 28
/// (p = 0.135, f = 0.0171, z/n = 7.995). Up to 16 the search stays clear of such mirrors for
/// the usual budgets while still covering the uncompressed optimum up to about 23 bits per
/// element.
pub const DEFAULT_MAX_K: u32 = 16;

/// Bits lost per coded bit by the range coder at precision 16 (upper bound).
const CODER_LOSS_PER_BIT: f64 = 1e-5;

/// How a planned frame's payload is coded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlanCoding {
    /// The bit array as is, `ceil(m/8)` bytes.
    Raw,
    /// Arithmetic coding with an adaptive model (counts start at one), no parameter sent.
    Adaptive,
    /// Arithmetic coding with a fixed p quantised to 16 bits and sent in the header.
    KnownP,
}

impl fmt::Display for PlanCoding {
    /// The names of the matching [`frame::Coding`]s: `raw`, `adaptive`, `known-p`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PlanCoding::Raw => "raw",
            PlanCoding::Adaptive => "adaptive",
            PlanCoding::KnownP => "known-p",
        })
    }
}

/// Which size model the optimizer plans with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SizeModel {
    /// The paper's idealised model: exactly `m H(p)` bits (`m H(q)` for deltas) with the
    /// asymptotic `p = exp(-kn/m)`, no header, no coder overhead, no variability; raw
    /// filters cost m bits. Reproduces the paper's tables.
    Ideal,
    /// bloomwire frames: header, word-aligned range-coder payload with its overheads, and a
    /// margin so that the frame fits with probability at least `1 - epsilon`.
    Frame,
}

/// How the deviation of the number of zero bits (or delta ones) is bounded at `epsilon`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TailBound {
    /// Normal quantile times the exact standard deviation: tight, asymptotically exact.
    Gaussian,
    /// Bernstein's inequality under negative association: rigorous, more conservative.
    Bernstein,
}

/// Which filter layout to plan for; k of the block layout is split with
/// [`Layout::blocks_proportional`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LayoutKind {
    /// [`Layout::Standard`].
    Standard,
    /// [`Layout::Partitioned`].
    Partitioned,
    /// [`Layout::Blocks`] with `k_j` proportional to the block sizes.
    Blocks,
}

/// The best uncompressed filter for the same budget (or target), for comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Uncompressed {
    /// Number of bits.
    pub m: u64,
    /// Hash functions.
    pub k: HashCount,
    /// Expected false positive rate.
    pub false_positive_rate: f64,
    /// Frame bytes (in the ideal model, `m/8`).
    pub bytes: f64,
}

/// What the optimizer recommends, with the figures it expects.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Plan {
    /// Number of keys planned for.
    pub n: u64,
    /// The filter's parameters (m, layout with k, hash family).
    pub params: Params,
    /// How to code the payload.
    pub coding: PlanCoding,
    /// For a delta plan, the fraction c of keys that change between updates.
    pub changed: Option<f64>,
    /// Expected frame bytes (the ideal model: `m H(p) / 8`).
    pub expected_bytes: f64,
    /// Frame bytes that are exceeded with probability at most `epsilon`.
    pub worst_case_bytes: u64,
    /// The overflow probability the worst case was computed for (0 in the ideal model).
    pub epsilon: f64,
    /// Expected false positive rate.
    pub false_positive_rate: f64,
    /// Expected bits on the wire per key, `8 * expected_bytes / n`.
    pub bits_per_element: f64,
    /// The best raw filter for the same budget or target, if there is one.
    pub uncompressed: Option<Uncompressed>,
}

impl Plan {
    /// Number of bits of the filter.
    pub fn m(&self) -> u64 {
        self.params.m()
    }

    /// Hash functions per key (for blocks, the sum of the `k_j`).
    pub fn k(&self) -> HashCount {
        self.params.k()
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        self.params.layout()
    }
}

impl fmt::Display for Plan {
    /// A small table in the style of the paper's: m/n, k, f and z/n for the plan and for the
    /// uncompressed alternative.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.n as f64;
        writeln!(f, "{:<34}{:>12}{:>14}", "", "planned", "uncompressed")?;
        let raw = self.uncompressed.as_ref();
        let cell = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        writeln!(
            f,
            "{:<28}{:<6}{:>12.3}{:>14}",
            "array bits per element",
            "m/n",
            self.m() as f64 / n,
            cell(raw.map(|r| format!("{:.3}", r.m as f64 / n)))
        )?;
        writeln!(
            f,
            "{:<28}{:<6}{:>12.4}{:>14}",
            "transmission bits/element",
            "z/n",
            self.bits_per_element,
            cell(raw.map(|r| format!("{:.4}", 8.0 * r.bytes / n)))
        )?;
        writeln!(
            f,
            "{:<28}{:<6}{:>12}{:>14}",
            "hash functions",
            "k",
            self.k().to_string(),
            cell(raw.map(|r| r.k.to_string()))
        )?;
        writeln!(
            f,
            "{:<28}{:<6}{:>12.6}{:>14}",
            "false positive probability",
            "f",
            self.false_positive_rate,
            cell(raw.map(|r| format!("{:.6}", r.false_positive_rate)))
        )?;
        write!(
            f,
            "n = {}, coding {}, {:.1} bytes expected, {} bytes worst case",
            self.n, self.coding, self.expected_bytes, self.worst_case_bytes
        )?;
        if self.epsilon > 0.0 {
            write!(f, " (epsilon {:e})", self.epsilon)?;
        }
        if let Some(c) = self.changed {
            write!(f, ", delta for c = {c}")?;
        }
        Ok(())
    }
}

/// Bytes of a bloomwire frame with these parameters and a payload of `payload_bytes`
/// (header, payload and checksum, as [`format::frame_len`] counts them).
pub fn frame_bytes(params: &Params, n: u64, coding: PlanCoding, payload_bytes: u64) -> u64 {
    format::frame_len(
        params.family(),
        params.m(),
        format::k_field_len(params.layout()),
        n,
        format::FrameKind::Full.sequence_len(0),
        coding == PlanCoding::KnownP,
        payload_bytes,
    )
}

/// The generation number plans assume for their sequencing fields: streams of up to a
/// million generations (3-byte varints) fit the worst case.
const PLANNED_GENERATION: u64 = 1 << 20;

fn frame_bytes_from(
    family: &HashFamily,
    m: u64,
    k_bytes: u64,
    n: u64,
    sent: Sent,
    coding: PlanCoding,
    payload_bytes: u64,
) -> u64 {
    let kind = match sent {
        Sent::Filter => format::FrameKind::Full,
        Sent::Delta { .. } => format::FrameKind::Delta {
            base_generation: PLANNED_GENERATION,
            base_digest: 0,
            result_digest: 0,
        },
    };
    format::frame_len(
        family,
        m,
        k_bytes as usize,
        n,
        kind.sequence_len(PLANNED_GENERATION),
        coding == PlanCoding::KnownP,
        payload_bytes,
    )
}

/// Payload bytes of a range-coded payload carrying `bits` bits of information: the coder
/// ends at a byte boundary with at most 4 termination bytes after the last whole word it
/// has emitted (`spec/FORMAT.md` 4.2), so `termination_bytes` is about 2 on average and 5
/// at most (with the byte rounding).
fn coded_payload_bytes(bits: f64, termination_bytes: f64) -> f64 {
    (bits / 8.0).ceil() + termination_bytes
}

/// `z` such that a standard normal exceeds it with probability `eps`, `0 < eps <= 1/2`
/// (Acklam's rational approximation, relative error below 1.2e-9).
fn normal_upper_quantile(eps: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let lower = if eps < 0.024_25 {
        let q = (-2.0 * eps.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else {
        let q = eps - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    };
    -lower
}

/// A set of bits that receive the same kind of balls: `count` regions of `size` bits, each
/// key throwing `w` balls and one more with probability `r` into each region.
#[derive(Debug, Clone, Copy)]
struct Region {
    size: u64,
    count: u64,
    w: u32,
    r: f64,
}

/// Calls `f` for each region of a filter with m bits and k hash functions in this layout.
fn for_each_region(kind: LayoutKind, m: u64, k: HashCount, mut f: impl FnMut(Region)) {
    let w = k.whole();
    let r = f64::from(k.frac()) / f64::from(1u32 << K_FRAC_BITS);
    match kind {
        LayoutKind::Standard => f(Region {
            size: m,
            count: 1,
            w,
            r,
        }),
        LayoutKind::Partitioned => {
            let parts = u64::from(k.ceil());
            let part = m / parts;
            if part == 0 {
                return;
            }
            f(Region {
                size: part,
                count: u64::from(w),
                w: 1,
                r: 0.0,
            });
            if k.frac() != 0 {
                f(Region {
                    size: part,
                    count: 1,
                    w: 0,
                    r,
                });
            }
            if m > parts * part {
                f(Region {
                    size: m - parts * part,
                    count: 1,
                    w: 0,
                    r: 0.0,
                });
            }
        }
        LayoutKind::Blocks => {
            for size in block_sizes(m) {
                // The same rounding as `Layout::blocks_proportional`.
                let raw =
                    (u128::from(k.raw()) * u128::from(size) + u128::from(m / 2)) / u128::from(m);
                let raw = raw as u32;
                f(Region {
                    size,
                    count: 1,
                    w: raw >> K_FRAC_BITS,
                    r: f64::from(raw & ((1 << K_FRAC_BITS) - 1)) / f64::from(1u32 << K_FRAC_BITS),
                });
            }
        }
    }
}

/// Bytes of the k field(s) in the header.
fn k_field_bytes(kind: LayoutKind, m: u64, k: HashCount) -> u64 {
    match kind {
        LayoutKind::Standard | LayoutKind::Partitioned => varint_len(u64::from(k.raw())) as u64,
        LayoutKind::Blocks => block_sizes(m)
            .map(|size| {
                let raw =
                    (u128::from(k.raw()) * u128::from(size) + u128::from(m / 2)) / u128::from(m);
                varint_len(raw as u64) as u64
            })
            .sum(),
    }
}

/// What is sent: the filter itself, or the XOR of two generations.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Sent {
    Filter,
    Delta { changed: f64 },
}

/// Sizes and false positive rate of one candidate (m, k).
#[derive(Debug, Clone, Copy)]
struct Eval {
    fpr: f64,
    /// (coding, expected bytes, worst-case bytes), the arithmetic codings first.
    sizes: [(PlanCoding, f64, f64); 3],
}

impl Eval {
    fn raw(&self) -> (PlanCoding, f64, f64) {
        self.sizes[2]
    }

    /// The compressed coding with the least expected size among those that fit `budget`
    /// (or among all when `budget` is `None`), preferring known p on ties.
    fn best_compressed(&self, budget: Option<f64>) -> Option<(PlanCoding, f64, f64)> {
        self.sizes[..2]
            .iter()
            .filter(|s| budget.map_or(true, |b| s.2 <= b))
            .copied()
            .min_by(|a, b| a.1.total_cmp(&b.1).then(a.2.total_cmp(&b.2)))
    }
}

/// A candidate answer.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    m: u64,
    k: HashCount,
    coding: PlanCoding,
    expected: f64,
    worst: f64,
    fpr: f64,
}

/// Plans m and k for a transmission budget or a false positive target.
///
/// Built with chained setters; every setting is checked when a plan is asked for, and bad
/// settings are reported as [`Error::InvalidParameter`].
///
/// ```
/// use bloomwire::optimizer::{Optimizer, PlanCoding};
///
/// // One million keys in at most 1 MB (8 bits per element) on the wire, real frames.
/// let plan = Optimizer::new().plan(1_000_000, 1_000_000).unwrap();
/// assert!(plan.worst_case_bytes <= 1_000_000);
/// assert_ne!(plan.coding, PlanCoding::Raw);
/// let raw = plan.uncompressed.unwrap();
/// assert!(plan.false_positive_rate < 0.9 * raw.false_positive_rate);
/// ```
#[derive(Debug, Clone)]
pub struct Optimizer {
    max_m: u64,
    m_step: u64,
    power_of_two_m: bool,
    min_k: HashCount,
    max_k: HashCount,
    rational_k: bool,
    layout: LayoutKind,
    family: HashFamily,
    model: SizeModel,
    tail: TailBound,
    epsilon: f64,
}

impl Default for Optimizer {
    fn default() -> Self {
        Self::new()
    }
}

impl Optimizer {
    /// Defaults: m up to [`MAX_M`], any m, integer k in `1..=`[`DEFAULT_MAX_K`], standard
    /// layout, the default hash family, frame sizes, Gaussian tail, epsilon
    /// [`DEFAULT_EPSILON`].
    pub fn new() -> Self {
        Optimizer {
            max_m: MAX_M,
            m_step: 1,
            power_of_two_m: false,
            min_k: HashCount::new(1).expect("1 is a valid k"),
            max_k: HashCount::new(DEFAULT_MAX_K).expect("a valid k"),
            rational_k: false,
            layout: LayoutKind::Standard,
            family: HashFamily::default(),
            model: SizeModel::Frame,
            tail: TailBound::Gaussian,
            epsilon: DEFAULT_EPSILON,
        }
    }

    /// The largest m the receiver accepts (memory after decoding), at most [`MAX_M`].
    pub fn max_m(mut self, max_m: u64) -> Self {
        self.max_m = max_m;
        self
    }

    /// Only m that are multiples of `step` (e.g. 8 for whole bytes, 64 for whole words).
    pub fn m_multiple_of(mut self, step: u64) -> Self {
        self.m_step = step;
        self
    }

    /// Only powers of two for m (they must also be multiples of the step, which must then
    /// be a power of two).
    pub fn power_of_two_m(mut self, yes: bool) -> Self {
        self.power_of_two_m = yes;
        self
    }

    /// The allowed range of k; `k_range(k, k)` fixes k.
    pub fn k_range(mut self, min: HashCount, max: HashCount) -> Self {
        self.min_k = min;
        self.max_k = max;
        self
    }

    /// Whether k may be rational (on the 1/65536 grid), or must be an integer.
    pub fn rational_k(mut self, yes: bool) -> Self {
        self.rational_k = yes;
        self
    }

    /// The filter layout.
    pub fn layout(mut self, kind: LayoutKind) -> Self {
        self.layout = kind;
        self
    }

    /// The hash family (its seed size is part of the frame header).
    pub fn family(mut self, family: HashFamily) -> Self {
        self.family = family;
        self
    }

    /// The size model.
    pub fn size_model(mut self, model: SizeModel) -> Self {
        self.model = model;
        self
    }

    /// The tail bound used for the size margin.
    pub fn tail_bound(mut self, tail: TailBound) -> Self {
        self.tail = tail;
        self
    }

    /// The probability, in `[2^-1022, 1/2]` (positive and not subnormal), with which a frame
    /// may exceed its worst case.
    pub fn epsilon(mut self, epsilon: f64) -> Self {
        self.epsilon = epsilon;
        self
    }

    /// Minimise the false positive rate of a filter of n keys whose frame fits in
    /// `budget_bytes` (with probability `1 - epsilon`).
    ///
    /// Errors: [`Error::InvalidParameter`] for n = 0 or bad settings;
    /// [`Error::OverBudget`] with the smallest possible frames when nothing fits.
    pub fn plan(&self, n: u64, budget_bytes: u64) -> Result<Plan> {
        self.plan_budget(n, budget_bytes, Sent::Filter)
    }

    /// The dual: the fewest worst-case bytes for a filter of n keys whose false positive rate
    /// is at most `target_fpr`.
    ///
    /// Errors: [`Error::InvalidParameter`] for n = 0, a target outside `(0, 1)`, bad
    /// settings, or a target that no allowed m reaches (the message gives the best f).
    pub fn plan_for_fpr(&self, n: u64, target_fpr: f64) -> Result<Plan> {
        self.plan_target(n, target_fpr, Sent::Filter)
    }

    /// Deltas (Section IV): minimise f for n keys of which a fraction `changed` changes
    /// between updates, so that the XOR of two generations fits in `budget_bytes`.
    pub fn plan_delta(&self, n: u64, changed: f64, budget_bytes: u64) -> Result<Plan> {
        check_changed(changed)?;
        self.plan_budget(n, budget_bytes, Sent::Delta { changed })
    }

    /// The dual for deltas: the smallest delta frame with a false positive rate of at most
    /// `target_fpr`.
    pub fn plan_delta_for_fpr(&self, n: u64, changed: f64, target_fpr: f64) -> Result<Plan> {
        check_changed(changed)?;
        self.plan_target(n, target_fpr, Sent::Delta { changed })
    }

    fn check(&self, n: u64) -> Result<()> {
        if n == 0 {
            return Err(invalid("n", "a plan needs at least one key"));
        }
        if self.max_m == 0 || self.max_m > MAX_M {
            return Err(invalid(
                "max_m",
                format!("{} is not in 1..={MAX_M}", self.max_m),
            ));
        }
        if self.m_step == 0 || self.m_step > self.max_m {
            return Err(invalid(
                "m_multiple_of",
                format!("{} is not in 1..=max_m ({})", self.m_step, self.max_m),
            ));
        }
        if self.power_of_two_m && !self.m_step.is_power_of_two() {
            return Err(invalid(
                "m_multiple_of",
                format!("{} is not a power of two", self.m_step),
            ));
        }
        if self.min_k > self.max_k {
            return Err(invalid(
                "k_range",
                format!("min {} is above max {}", self.min_k, self.max_k),
            ));
        }
        if !self.rational_k && self.min_k.ceil() > self.max_k.whole() {
            return Err(invalid(
                "k_range",
                format!(
                    "no integer k in [{}, {}] and rational k is off",
                    self.min_k, self.max_k
                ),
            ));
        }
        // Subnormal epsilons are refused: 1 / epsilon overflows, the tail bound is infinite
        // and the frame sizes are not numbers.
        if self.model == SizeModel::Frame
            && !(self.epsilon.is_finite()
                && self.epsilon >= f64::MIN_POSITIVE
                && self.epsilon <= 0.5)
        {
            return Err(invalid(
                "epsilon",
                format!("{} is not in [2^-1022, 1/2]", self.epsilon),
            ));
        }
        Ok(())
    }

    /// The integer k to scan.
    fn integer_ks(&self) -> impl Iterator<Item = HashCount> {
        (self.min_k.ceil()..=self.max_k.whole()).filter_map(|k| HashCount::new(k).ok())
    }

    /// Smallest and largest index of the m grid valid for k; m(i) is [`Self::m_at`].
    fn m_index_range(&self, k: HashCount) -> Option<(u64, u64)> {
        let min_m = match self.layout {
            LayoutKind::Partitioned => u64::from(k.ceil()),
            _ => 1,
        };
        let (lo, hi) = if self.power_of_two_m {
            let lo = min_m.max(self.m_step).next_power_of_two().trailing_zeros();
            (u64::from(lo), u64::from(63 - self.max_m.leading_zeros()))
        } else {
            (min_m.div_ceil(self.m_step), self.max_m / self.m_step)
        };
        (lo <= hi && self.m_at(hi) <= self.max_m).then_some((lo, hi))
    }

    fn m_at(&self, i: u64) -> u64 {
        if self.power_of_two_m {
            1 << i
        } else {
            i * self.m_step
        }
    }

    /// The sizes and false positive rate of a filter with m bits and k hash functions.
    fn eval(&self, n: u64, m: u64, k: HashCount, sent: Sent) -> Eval {
        let nf = n as f64;
        let ideal = self.model == SizeModel::Ideal;
        let (mut mean, mut var, mut var_bernoulli, mut ln_fpr) = (0.0, 0.0, 0.0, 0.0);
        for_each_region(self.layout, m, k, |reg| {
            let s = reg.size as f64;
            let c = reg.count as f64;
            let w = f64::from(reg.w);
            let (p, v) = if ideal {
                ((-(w + reg.r) * nf / s).exp(), 0.0)
            } else {
                occupancy(reg, nf)
            };
            let whole = if reg.w == 0 { 0.0 } else { w * (-p).ln_1p() };
            ln_fpr += c * (whole + (-reg.r * p).ln_1p());
            match sent {
                Sent::Filter => {
                    mean += c * s * p;
                    var += c * v;
                    var_bernoulli += c * s * p * (1.0 - p);
                }
                Sent::Delta { changed } => {
                    let q = 2.0 * p * (1.0 - p.powf(changed));
                    mean += c * s * q;
                    var += c * s * q * (1.0 - q);
                    var_bernoulli += c * s * q * (1.0 - q);
                }
            }
        });
        let fpr = ln_fpr.exp();
        let mf = m as f64;
        let rate = (mean / mf).clamp(0.0, 1.0);
        let bits = mf * entropy(rate);
        let raw_bytes = m.div_ceil(8);
        if ideal {
            let b = bits / 8.0;
            return Eval {
                fpr,
                sizes: [
                    (PlanCoding::KnownP, b, b),
                    (PlanCoding::Adaptive, b, b),
                    (PlanCoding::Raw, mf / 8.0, mf / 8.0),
                ],
            };
        }
        let t = match self.tail {
            TailBound::Gaussian => normal_upper_quantile(self.epsilon) * var.max(0.0).sqrt(),
            TailBound::Bernstein => {
                let l = (1.0 / self.epsilon).ln();
                l / 3.0 + (l * l / 9.0 + 2.0 * l * var_bernoulli).sqrt()
            }
        };
        let slope = if rate > 0.0 && rate < 1.0 {
            ((1.0 - rate) / rate).log2().abs()
        } else {
            0.0
        };
        let margin = slope * t;
        let base = bits + mf * CODER_LOSS_PER_BIT;
        let learning = 0.5 * mf.log2() + 2.0;
        let k_bytes = k_field_bytes(self.layout, m, k);
        let frame = |coding, payload: f64| {
            frame_bytes_from(&self.family, m, k_bytes, n, sent, coding, payload as u64) as f64
        };
        let arith = |coding, extra: f64| {
            let expected = coded_payload_bytes(base + extra, 2.0);
            let worst = coded_payload_bytes(base + extra + margin, 5.0);
            // The header's payload-length varint is taken at the worst case for both.
            let header = frame(coding, worst) - worst;
            (coding, header + expected, header + worst)
        };
        let raw = frame(PlanCoding::Raw, raw_bytes as f64);
        Eval {
            fpr,
            sizes: [
                arith(PlanCoding::KnownP, 0.0),
                arith(PlanCoding::Adaptive, learning),
                (PlanCoding::Raw, raw, raw),
            ],
        }
    }

    /// Largest grid index in `range` whose `fits` holds, assuming `fits` is monotone
    /// (true, then false).
    fn largest(range: (u64, u64), mut fits: impl FnMut(u64) -> bool) -> Option<u64> {
        let (mut lo, mut hi) = range;
        if !fits(lo) {
            return None;
        }
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        Some(lo)
    }

    /// Smallest grid index in `range` whose `ok` holds, assuming `ok` is monotone (false,
    /// then true).
    fn smallest(range: (u64, u64), mut ok: impl FnMut(u64) -> bool) -> Option<u64> {
        let (mut lo, mut hi) = range;
        if !ok(hi) {
            return None;
        }
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if ok(mid) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Some(lo)
    }

    /// Best compressed and best raw candidates for a fixed k within a budget.
    fn for_k_budget(
        &self,
        n: u64,
        k: HashCount,
        budget: f64,
        sent: Sent,
    ) -> (Option<Candidate>, Option<Candidate>) {
        let Some(range) = self.m_index_range(k) else {
            return (None, None);
        };
        let compressed = Self::largest(range, |i| {
            let e = self.eval(n, self.m_at(i), k, sent);
            e.best_compressed(Some(budget)).is_some()
        })
        .and_then(|i| {
            let m = self.m_at(i);
            let e = self.eval(n, m, k, sent);
            let (coding, expected, worst) = e.best_compressed(Some(budget))?;
            Some(Candidate {
                m,
                k,
                coding,
                expected,
                worst,
                fpr: e.fpr,
            })
        });
        let raw = self.raw_for_k_budget(n, k, budget, sent, range);
        (compressed, raw)
    }

    fn raw_for_k_budget(
        &self,
        n: u64,
        k: HashCount,
        budget: f64,
        sent: Sent,
        range: (u64, u64),
    ) -> Option<Candidate> {
        let raw_worst = |m: u64| match self.model {
            SizeModel::Ideal => m as f64 / 8.0,
            SizeModel::Frame => frame_bytes_from(
                &self.family,
                m,
                k_field_bytes(self.layout, m, k),
                n,
                sent,
                PlanCoding::Raw,
                m.div_ceil(8),
            ) as f64,
        };
        let i = Self::largest(range, |i| raw_worst(self.m_at(i)) <= budget)?;
        let m = self.m_at(i);
        let e = self.eval(n, m, k, sent);
        let (coding, expected, worst) = e.raw();
        Some(Candidate {
            m,
            k,
            coding,
            expected,
            worst,
            fpr: e.fpr,
        })
    }

    /// Best compressed and raw candidates for a fixed k reaching the target.
    fn for_k_target(
        &self,
        n: u64,
        k: HashCount,
        target: f64,
        sent: Sent,
    ) -> (Option<Candidate>, Option<Candidate>) {
        let Some(range) = self.m_index_range(k) else {
            return (None, None);
        };
        let Some(i) = Self::smallest(range, |i| self.eval(n, self.m_at(i), k, sent).fpr <= target)
        else {
            return (None, None);
        };
        let m = self.m_at(i);
        let e = self.eval(n, m, k, sent);
        let cand = |(coding, expected, worst)| Candidate {
            m,
            k,
            coding,
            expected,
            worst,
            fpr: e.fpr,
        };
        (e.best_compressed(None).map(cand), Some(cand(e.raw())))
    }

    /// The best compressed and the best uncompressed candidate over k: every integer k in
    /// range (and its ends, with rational k), then, with rational k, a golden-section
    /// refinement of `objective` around the best of each.
    fn search(
        &self,
        better: impl Fn(&Candidate, &Candidate) -> bool,
        compressed_for: impl Fn(HashCount) -> Option<Candidate>,
        raw_for: impl Fn(HashCount) -> Option<Candidate>,
        objective: impl Fn(&Candidate) -> f64,
    ) -> (Option<Candidate>, Option<Candidate>) {
        let consider = |c: Option<Candidate>, slot: &mut Option<Candidate>| {
            if let Some(c) = c {
                if slot.as_ref().map_or(true, |b| better(&c, b)) {
                    *slot = Some(c);
                }
            }
        };
        let (mut best, mut best_raw) = (None, None);
        let mut ks: Vec<HashCount> = self.integer_ks().collect();
        if self.rational_k {
            ks.push(self.min_k);
            ks.push(self.max_k);
        }
        for &k in &ks {
            consider(compressed_for(k), &mut best);
            consider(raw_for(k), &mut best_raw);
        }
        if self.rational_k {
            for (slot, candidate_for) in [
                (
                    &mut best,
                    &compressed_for as &dyn Fn(HashCount) -> Option<Candidate>,
                ),
                (&mut best_raw, &raw_for),
            ] {
                if let Some(b) = *slot {
                    let refined = self.refine(b.k, |k| {
                        let c = candidate_for(k);
                        (c.as_ref().map_or(f64::INFINITY, &objective), c)
                    });
                    consider(refined, slot);
                }
            }
        }
        (best, best_raw)
    }

    fn plan_budget(&self, n: u64, budget_bytes: u64, sent: Sent) -> Result<Plan> {
        self.check(n)?;
        let budget = budget_bytes as f64;
        let better = |a: &Candidate, b: &Candidate| {
            a.fpr
                .total_cmp(&b.fpr)
                .then(a.expected.total_cmp(&b.expected))
                .then(a.k.cmp(&b.k))
                .is_lt()
        };
        let (best, best_raw) = self.search(
            better,
            |k| self.for_k_budget(n, k, budget, sent).0,
            |k| {
                self.m_index_range(k)
                    .and_then(|range| self.raw_for_k_budget(n, k, budget, sent, range))
            },
            |c| c.fpr,
        );
        // The uncompressed filter is always a candidate.
        let chosen = match (best, best_raw) {
            (Some(c), Some(r)) => Some(if better(&r, &c) { r } else { c }),
            (c, r) => c.or(r),
        };
        let Some(chosen) = chosen else {
            return Err(self.over_budget(n, budget_bytes, sent));
        };
        self.finish(n, sent, chosen, best_raw)
    }

    fn plan_target(&self, n: u64, target: f64, sent: Sent) -> Result<Plan> {
        self.check(n)?;
        if !(target.is_finite() && target > 0.0 && target < 1.0) {
            return Err(invalid("target_fpr", format!("{target} is not in (0, 1)")));
        }
        let better = |a: &Candidate, b: &Candidate| {
            a.worst
                .total_cmp(&b.worst)
                .then(a.expected.total_cmp(&b.expected))
                .then(a.fpr.total_cmp(&b.fpr))
                .then(a.k.cmp(&b.k))
                .is_lt()
        };
        // Expected bytes are a smoother objective than the integer worst case.
        let (best, best_raw) = self.search(
            better,
            |k| self.for_k_target(n, k, target, sent).0,
            |k| self.for_k_target(n, k, target, sent).1,
            |c| c.expected,
        );
        let chosen = match (best, best_raw) {
            (Some(c), Some(r)) => Some(if better(&r, &c) { r } else { c }),
            (c, r) => c.or(r),
        };
        let Some(chosen) = chosen else {
            let m = self.max_m;
            let best_f = self
                .integer_ks()
                .chain([self.min_k, self.max_k])
                .filter(|&k| self.m_index_range(k).is_some())
                .map(|k| self.eval(n, m, k, sent).fpr)
                .fold(1.0, f64::min);
            return Err(invalid(
                "target_fpr",
                format!("{target} is out of reach with m <= {m}: the best is about {best_f:.3e}"),
            ));
        };
        self.finish(n, sent, chosen, best_raw)
    }

    /// Golden-section search on the 1/65536 grid of k around `center` (one unit either
    /// side, within the allowed range) for the least `objective`: one new evaluation per
    /// step, about 25 in all.
    fn refine(
        &self,
        center: HashCount,
        mut objective: impl FnMut(HashCount) -> (f64, Option<Candidate>),
    ) -> Option<Candidate> {
        const INV_PHI: f64 = 0.618_033_988_749_894_9;
        let one = 1u32 << K_FRAC_BITS;
        let mut a = center.raw().saturating_sub(one).max(self.min_k.raw());
        let mut b = center.raw().saturating_add(one).min(self.max_k.raw());
        let mut seen: Vec<(u32, f64, Option<Candidate>)> = Vec::new();
        let mut eval = |raw: u32| -> f64 {
            if let Some(&(_, v, _)) = seen.iter().find(|e| e.0 == raw) {
                return v;
            }
            let (v, c) = HashCount::from_raw(raw).map_or((f64::INFINITY, None), &mut objective);
            seen.push((raw, v, c));
            v
        };
        let inner = |a: u32, b: u32| {
            let step = (f64::from(b - a) * INV_PHI) as u32;
            (b - step, a + step)
        };
        let (mut c, mut d) = inner(a, b);
        let (mut fc, mut fd) = (eval(c), eval(d));
        while c < d {
            if fc <= fd {
                b = d;
                (c, d) = (inner(a, b).0, c);
                fd = fc;
                fc = eval(c);
            } else {
                a = c;
                (c, d) = (d, inner(a, b).1);
                fc = fd;
                fd = eval(d);
            }
        }
        for raw in a..=b {
            eval(raw);
        }
        seen.into_iter()
            .filter(|e| (a..=b).contains(&e.0))
            .filter_map(|e| e.2)
            .min_by(|x, y| {
                x.fpr
                    .total_cmp(&y.fpr)
                    .then(x.expected.total_cmp(&y.expected))
            })
    }

    fn params(&self, m: u64, k: HashCount) -> Result<Params> {
        let layout = match self.layout {
            LayoutKind::Standard => Layout::Standard { k },
            LayoutKind::Partitioned => Layout::Partitioned { k },
            LayoutKind::Blocks => Layout::blocks_proportional(m, k)?,
        };
        Params::new(m, layout, self.family)
    }

    fn finish(
        &self,
        n: u64,
        sent: Sent,
        chosen: Candidate,
        raw: Option<Candidate>,
    ) -> Result<Plan> {
        let params = self.params(chosen.m, chosen.k)?;
        Ok(Plan {
            n,
            params,
            coding: chosen.coding,
            changed: match sent {
                Sent::Filter => None,
                Sent::Delta { changed } => Some(changed),
            },
            expected_bytes: chosen.expected,
            worst_case_bytes: chosen.worst.ceil() as u64,
            epsilon: match self.model {
                SizeModel::Ideal => 0.0,
                SizeModel::Frame => self.epsilon,
            },
            false_positive_rate: chosen.fpr,
            bits_per_element: 8.0 * chosen.expected / n as f64,
            uncompressed: raw.map(|r| Uncompressed {
                m: r.m,
                k: r.k,
                false_positive_rate: r.fpr,
                bytes: r.expected,
            }),
        })
    }

    /// The error for a budget nothing fits in, with the smallest frames there are.
    fn over_budget(&self, n: u64, budget: u64, sent: Sent) -> Error {
        let k = if self.rational_k {
            self.min_k
        } else {
            HashCount::new(self.min_k.ceil()).unwrap_or(self.min_k)
        };
        let (compressed, raw) = match self.m_index_range(k) {
            Some((lo, _)) => {
                let e = self.eval(n, self.m_at(lo), k, sent);
                let c = e.best_compressed(None).map_or(f64::INFINITY, |c| c.2);
                (c, e.raw().2)
            }
            None => (f64::INFINITY, f64::INFINITY),
        };
        let size = |b: f64| {
            if b.is_finite() {
                usize::try_from(b.ceil() as u64).unwrap_or(usize::MAX)
            } else {
                usize::MAX
            }
        };
        Error::OverBudget {
            budget: usize::try_from(budget).unwrap_or(usize::MAX),
            compressed: size(compressed),
            raw: size(raw),
        }
    }
}

fn check_changed(changed: f64) -> Result<()> {
    if !(changed.is_finite() && changed > 0.0 && changed <= 1.0) {
        return Err(invalid(
            "changed",
            format!("{changed} is not a fraction in (0, 1]"),
        ));
    }
    Ok(())
}

/// Exact probability that a bit of the region is zero, and the variance of the number of
/// zero bits in one region (Z), for n keys.
///
/// With `E_j = ((1 - j/s)^w (1 - j r/s))^n`, `E[Z] = s E_1` and
/// `Var[Z] = s E_1 + s (s - 1) E_2 - s^2 E_1^2 = s (E_1 - E_2) + s^2 E_1^2 expm1(d)`, where
/// `E_2 / E_1^2 = exp(d)` and `d = n (w ln(1 - 1/(s-1)^2) + ln(1 - r^2/(s-r)^2))`.
fn occupancy(reg: Region, n: f64) -> (f64, f64) {
    let s = reg.size as f64;
    let w = f64::from(reg.w);
    let term = |x: f64| if x == 0.0 { 0.0 } else { x.ln_1p() };
    let ln_e = |j: f64| {
        let whole = if reg.w == 0 { 0.0 } else { w * term(-j / s) };
        n * (whole + term(-j * reg.r / s))
    };
    let e1 = ln_e(1.0).exp();
    if reg.size < 2 {
        return (e1, e1 * (1.0 - e1));
    }
    let e2 = ln_e(2.0).exp();
    let whole = if reg.w == 0 {
        0.0
    } else {
        w * term(-1.0 / ((s - 1.0) * (s - 1.0)))
    };
    let d = n * (whole + term(-reg.r * reg.r / ((s - reg.r) * (s - reg.r))));
    let var = s * (e1 - e2) + s * s * e1 * e1 * d.exp_m1();
    (e1, var.max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theory;

    #[test]
    fn subnormal_epsilons_are_refused_and_the_smallest_normal_one_plans() {
        // Found by the optimizer fuzz target: epsilon = 1.4e-316 passed the (0, 1/2] check,
        // 1 / epsilon overflowed, and the plan came back with expected_bytes = -inf and
        // worst_case_bytes = 0.
        let o = |epsilon: f64| {
            Optimizer::new()
                .power_of_two_m(true)
                .k_range(HashCount::new(1).unwrap(), HashCount::new(257).unwrap())
                .rational_k(true)
                .layout(LayoutKind::Partitioned)
                .tail_bound(TailBound::Bernstein)
                .epsilon(epsilon)
        };
        for epsilon in [
            1.421_256_46e-316,
            f64::MIN_POSITIVE / 2.0,
            0.0,
            -1.0,
            0.6,
            f64::NAN,
        ] {
            assert!(
                matches!(
                    o(epsilon).plan_for_fpr(40_611, 7.99e-310),
                    Err(Error::InvalidParameter {
                        name: "epsilon",
                        ..
                    })
                ),
                "{epsilon}"
            );
        }
        for tail in [TailBound::Bernstein, TailBound::Gaussian] {
            let plan = o(f64::MIN_POSITIVE)
                .tail_bound(tail)
                .plan_for_fpr(40_611, 1e-6)
                .unwrap();
            assert!(plan.expected_bytes.is_finite() && plan.expected_bytes > 0.0);
            assert!(plan.worst_case_bytes as f64 >= plan.expected_bytes);
            assert!(plan.false_positive_rate <= 1e-6);
        }
    }

    #[test]
    fn huge_budgets_do_not_overflow_frame_sizes() {
        // Found by the optimizer fuzz target: a worst-case payload estimate past 2^64
        // overflowed the frame length sum (a panic with overflow checks on).
        let o = Optimizer::new()
            .max_m(6_094_850)
            .power_of_two_m(true)
            .k_range(
                HashCount::from_raw(1_662_600).unwrap(),
                HashCount::from_raw(66_191_360).unwrap(),
            )
            .rational_k(true)
            .layout(LayoutKind::Partitioned)
            .family(HashFamily::new(
                crate::filter::hashing::BaseHash::SipHash24 { k0: 1, k1: 2 },
                crate::IndexScheme::DoubleHashing,
            ))
            .epsilon(2.5e-8);
        let budget = 15_638_154_143_597_594_068;
        let plan = o.plan_delta(84_376, 0.485734, budget).unwrap();
        assert!(plan.m().is_power_of_two() && plan.m() <= 6_094_850);
        assert!(plan.worst_case_bytes <= budget);
        let huge = format::frame_len(&HashFamily::default(), 1, 1, 0, 1, false, u64::MAX - 3);
        assert_eq!(huge, u64::MAX);
    }

    #[test]
    fn frame_bytes_is_the_real_frame_length() {
        use crate::filter::hashing::BaseHash;
        use crate::format::{Coding, Encoder};
        use crate::BloomFilter;
        let families = [
            HashFamily::default(),
            HashFamily::new(
                BaseHash::siphash([3; 16]),
                crate::IndexScheme::DoubleHashing,
            ),
        ];
        for fam in families {
            for (m, k) in [(140_000, 2), (1000, 7)] {
                let mut f = BloomFilter::new(Params::standard(m, k, fam).unwrap());
                for i in 0..m / 14 {
                    f.insert(i.to_le_bytes());
                }
                for (coding, plan) in [
                    (Coding::Raw, PlanCoding::Raw),
                    (Coding::Adaptive, PlanCoding::Adaptive),
                    (Coding::KnownP, PlanCoding::KnownP),
                ] {
                    // A plan names its coding as the frame does.
                    assert_eq!(plan.to_string(), coding.to_string());
                    let frame = Encoder::new().encode_with(&f, coding);
                    let payload = frame.header().payload_len as u64;
                    assert_eq!(
                        frame_bytes(f.params(), f.n(), plan, payload),
                        frame.encoded_len() as u64
                    );
                }
            }
        }
    }

    #[test]
    fn normal_quantiles() {
        assert!((normal_upper_quantile(1e-6) - 4.753_424_3).abs() < 1e-6);
        assert!((normal_upper_quantile(0.05) - 1.644_853_6).abs() < 1e-6);
        assert!((normal_upper_quantile(0.5)).abs() < 1e-9);
        assert!((normal_upper_quantile(1e-12) - 7.034_484).abs() < 1e-5);
    }

    #[test]
    fn occupancy_matches_theory_and_closed_form() {
        // Integer k: compare with the textbook formula evaluated directly at small m.
        let (m, k, n) = (1000u64, 3u32, 200.0);
        let reg = Region {
            size: m,
            count: 1,
            w: k,
            r: 0.0,
        };
        let (p, var) = occupancy(reg, n);
        let mf = m as f64;
        let balls = f64::from(k) * n;
        let e1 = (1.0 - 1.0 / mf).powf(balls);
        let e2 = (1.0 - 2.0 / mf).powf(balls);
        let direct = mf * e1 + mf * (mf - 1.0) * e2 - (mf * e1).powi(2);
        assert!((p - e1).abs() < 1e-12);
        assert!((var / direct - 1.0).abs() < 1e-6, "{var} vs {direct}");
        // Rational k: the mean is theory's exact zero probability.
        let k = HashCount::from_f64(2.5).unwrap();
        let reg = Region {
            size: m,
            count: 1,
            w: 2,
            r: 0.5,
        };
        assert!((occupancy(reg, n).0 - theory::p_zero_exact(k.to_f64(), n, mf)).abs() < 1e-12);
        // Huge m stays finite and positive: Var ~ m e^-x (1 - (1 + x) e^-x).
        let reg = Region {
            size: 1 << 40,
            count: 1,
            w: 2,
            r: 0.0,
        };
        let n = (1u64 << 36) as f64;
        let (p, var) = occupancy(reg, n);
        let x: f64 = 2.0 / 16.0;
        let approx = (1u64 << 40) as f64 * (-x).exp() * (1.0 - (1.0 + x) * (-x).exp());
        assert!((p - (-x).exp()).abs() < 1e-9);
        assert!((var / approx - 1.0).abs() < 1e-3, "{var} vs {approx}");
        // Two bins, one ball or more: Z is 0 or 1.
        let reg = Region {
            size: 2,
            count: 1,
            w: 1,
            r: 0.0,
        };
        let (p, var) = occupancy(reg, 3.0);
        assert!((var - (2.0 * p - 4.0 * p * p)).abs() < 1e-12);
    }

    #[test]
    fn false_positive_rates_match_theory_per_layout() {
        let n = 10_000u64;
        // An even m: `theory::p_zero_exact` returns NaN for a block of one bit whose k_j is
        // below one (0 * ln(0)), so odd m would compare against NaN.
        let m = 123_456u64;
        let k = HashCount::from_f64(3.3).unwrap();
        for kind in [
            LayoutKind::Standard,
            LayoutKind::Partitioned,
            LayoutKind::Blocks,
        ] {
            let opt = Optimizer::new().layout(kind);
            let e = opt.eval(n, m, k, Sent::Filter);
            let params = opt.params(m, k).unwrap();
            let f = theory::false_positive_rate(&params, n as f64);
            assert!((e.fpr / f - 1.0).abs() < 1e-9, "{kind:?}: {} vs {f}", e.fpr);
        }
    }

    #[test]
    fn size_grows_with_m_for_fixed_k() {
        let opt = Optimizer::new();
        let k = HashCount::new(3).unwrap();
        let mut last = 0.0;
        for m in (1_000..400_000).step_by(997) {
            let w = opt.eval(10_000, m, k, Sent::Filter).sizes[0].2;
            assert!(w >= last, "m = {m}");
            last = w;
        }
    }

    #[test]
    fn paper_simulation_figures() {
        // n = 10 000, m = 140 000, k = 2: the paper measured a mean of 9920 bytes with an
        // adaptive coder and a standard deviation of 11.4 bytes. Our payload standard
        // deviation is slope * sd(Z) / 8.
        let n = 10_000.0;
        let reg = Region {
            size: 140_000,
            count: 1,
            w: 2,
            r: 0.0,
        };
        let (p, var) = occupancy(reg, n);
        let sd_bytes = ((1.0 - p) / p).log2().abs() * var.sqrt() / 8.0;
        assert!((sd_bytes - 11.4).abs() < 0.5, "{sd_bytes}");
    }
}
