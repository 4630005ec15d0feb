//! The optimizer's settings, set by chained setters, and its entry points: a plan for a
//! budget or a false positive target, for a filter or for its deltas.

use super::size::{check_changed, Sent};
use super::{LayoutKind, Plan, SizeModel, TailBound, DEFAULT_EPSILON, DEFAULT_MAX_K};
use crate::error::Result;
use crate::filter::hashing::HashFamily;
use crate::filter::rational::HashCount;
use crate::format::BitCoding;
use crate::format::Limits;

/// Plans m and k for a transmission budget or a false positive target.
///
/// Built with chained setters; every setting is checked when a plan is asked for, and bad
/// settings are reported as [`Error::InvalidParameter`](crate::Error::InvalidParameter).
///
/// ```
/// use bloomwire::optimizer::Optimizer;
/// use bloomwire::BitCoding;
///
/// // One million keys in at most 1 MB (8 bits per element) on the wire, real frames.
/// let plan = Optimizer::new().plan(1_000_000, 1_000_000).unwrap();
/// assert!(plan.worst_case_bytes <= 1_000_000);
/// assert_ne!(plan.coding, BitCoding::Raw);
/// let raw = plan.uncompressed.unwrap();
/// assert!(plan.false_positive_rate < 0.9 * raw.false_positive_rate);
/// ```
#[derive(Debug, Clone)]
pub struct Optimizer {
    pub(super) max_m: Option<u64>,
    /// The memory cap in bits of m ([`Optimizer::max_memory`] times 8).
    pub(super) max_memory_bits: Option<u64>,
    pub(super) max_bits_per_element: Option<f64>,
    /// `max_bits_per_element` times the n of the plan asked for (set while planning).
    pub(super) per_element_m: Option<u64>,
    pub(super) churn: Option<f64>,
    pub(super) limits: Limits,
    pub(super) coding: Option<BitCoding>,
    pub(super) mirror_k: bool,
    pub(super) m_step: u64,
    pub(super) power_of_two_m: bool,
    pub(super) min_k: HashCount,
    pub(super) max_k: HashCount,
    pub(super) rational_k: bool,
    pub(super) layout: LayoutKind,
    pub(super) family: HashFamily,
    pub(super) model: SizeModel,
    pub(super) tail: TailBound,
    pub(super) epsilon: f64,
}

impl Default for Optimizer {
    fn default() -> Self {
        Self::new()
    }
}

impl Optimizer {
    /// Defaults: the receiver's limits are [`Limits::default()`] (so m is at most `2^28`
    /// bits, 32 MiB of receiver memory), any m, integer k in `1..=`[`DEFAULT_MAX_K`] and at
    /// most `ln 2 * m/n + 1` (no mirror solutions, see [`Optimizer::mirror_k`]), any
    /// coding, standard layout, the default hash family, frame sizes, Gaussian tail,
    /// epsilon [`DEFAULT_EPSILON`].
    pub fn new() -> Self {
        Optimizer {
            max_m: None,
            max_memory_bits: None,
            max_bits_per_element: None,
            per_element_m: None,
            churn: None,
            limits: Limits::default(),
            coding: None,
            mirror_k: false,
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

    /// The largest m to plan for (memory after decoding), at most [`MAX_M`](crate::filter::MAX_M). Plans also
    /// keep within the receiver's [`Limits::max_m`] (see [`Optimizer::limits`]): m is at
    /// most the smaller of the two.
    pub fn max_m(mut self, max_m: u64) -> Self {
        self.max_m = Some(max_m);
        self
    }

    /// The memory cap: the decoded filter, `ceil(m/8)` bytes at the receiver (and the
    /// sender's bits, see [`Plan::memory`](crate::Plan::memory)), at most `bytes`, so m is
    /// at most `8 * bytes`. It holds beside [`Optimizer::max_m`], the receiver's limits and
    /// [`Optimizer::max_bits_per_element`]: the smallest binds, and a plan it holds away from
    /// its optimum says so in [`Plan::bent`](crate::Plan::bent). A sender that keeps a
    /// counting filter ([`SummarySender`](crate::SummarySender)) holds a byte a counter on
    /// top: cap its memory at `c` bytes with `max_memory(c / 9)`. For a counting plan
    /// ([`Optimizer::plan_counting`]) the cap bounds the counters, a byte each.
    ///
    /// ```
    /// use bloomwire::optimizer::{Limit, Optimizer};
    ///
    /// // 1M keys at 1% in at most 2.4 MB of memory (the default plan takes 12.4 MB).
    /// let plan = Optimizer::new().max_memory(2_400_000).plan_for_fpr(1_000_000, 0.01).unwrap();
    /// assert!(plan.memory().receiver <= 2_400_000);
    /// assert!(plan.false_positive_rate <= 0.01);
    /// let bent = plan.bent.unwrap();
    /// assert_eq!(bent.limit, Limit::MaxMemory);
    /// assert!(bent.unconstrained.worst_case_bytes < plan.worst_case_bytes);
    /// ```
    pub fn max_memory(mut self, bytes: u64) -> Self {
        self.max_memory_bits = Some(bytes.saturating_mul(8));
        self
    }

    /// The cap on m/n, the memory bits per key of the decoded filter (not the bits per key
    /// on the wire, [`Plan::bits_per_element`](crate::Plan::bits_per_element)): m is at most
    /// `floor(r * n)`. It must be finite and leave at least one bit for the plan's n keys,
    /// else [`Error::InvalidParameter`](crate::Error::InvalidParameter) when a plan is asked
    /// for.
    ///
    /// ```
    /// use bloomwire::Optimizer;
    ///
    /// let plan = Optimizer::new().max_bits_per_element(14.0).plan(10_000, 10_000).unwrap();
    /// assert_eq!(plan.m(), 140_000); // the paper's Table I: m/n = 14, k = 2
    /// ```
    pub fn max_bits_per_element(mut self, r: f64) -> Self {
        self.max_bits_per_element = Some(r);
        self
    }

    /// Plans of filters also report their delta frames when a fraction `changed` (in
    /// `(0, 1]`) of the keys is replaced between generations, in
    /// [`Plan::delta`](crate::Plan::delta). Delta plans ([`Optimizer::plan_delta`]) report
    /// their own figures there.
    ///
    /// ```
    /// use bloomwire::Optimizer;
    ///
    /// let plan = Optimizer::new().churn(0.01).plan_for_fpr(1_000_000, 0.01).unwrap();
    /// let delta = plan.delta.unwrap();
    /// assert_eq!(delta.changed, 0.01);
    /// assert!(delta.expected_bytes < plan.expected_bytes / 10.0);
    /// assert!(Optimizer::new().plan_for_fpr(1_000_000, 0.01).unwrap().delta.is_none());
    /// ```
    pub fn churn(mut self, changed: f64) -> Self {
        self.churn = Some(changed);
        self
    }

    /// The receiver's [`Limits`] (default [`Limits::default()`]): plans stay within them.
    /// m is at most `max_m`, `ceil(k)` at most `max_k`, and the raw payload `ceil(m/8)` at
    /// most `max_payload`. A plan that needs more is refused with
    /// [`Error::PlanExceedsLimits`](crate::Error::PlanExceedsLimits); raise the limits here, and give the receiver the same
    /// ones, to allow it.
    ///
    /// ```
    /// use bloomwire::{Error, Limits, Optimizer};
    ///
    /// // 20 million keys at f = 1e-9 need more than the 2^28 bits a default receiver takes.
    /// let err = Optimizer::new().plan_for_fpr(20_000_000, 1e-9).unwrap_err();
    /// assert!(matches!(err, Error::PlanExceedsLimits { name: "max_m", .. }));
    /// let limits = Limits::new().max_m(1 << 31).max_payload(1 << 28);
    /// let plan = Optimizer::new().limits(limits).plan_for_fpr(20_000_000, 1e-9).unwrap();
    /// assert!(plan.m() > 1 << 28 && plan.m() <= 1 << 31);
    /// // The default plan for 20 million keys at 1% stays within the default limits.
    /// assert!(Optimizer::new().plan_for_fpr(20_000_000, 0.01).unwrap().m() <= 1 << 28);
    /// ```
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Plan for this coding only. Without it the plan takes the smallest of the arithmetic
    /// codings and the raw filter; with [`BitCoding::Raw`] it plans an uncompressed filter
    /// (`ceil(m/8)` payload bytes, k about `ln 2 * m/n`). The plans size raw, adaptive and
    /// known-p frames, whose worst case they bound; another coding is
    /// [`Error::InvalidParameter`](crate::Error::InvalidParameter)(crate::Error::InvalidParameter) when a plan is asked for
    /// (the other codings' frames come within their margins of these, and the encoder
    /// checks a budget frame by frame).
    ///
    /// ```
    /// use bloomwire::optimizer::Optimizer;
    /// use bloomwire::BitCoding;
    ///
    /// let plan = Optimizer::new().coding(BitCoding::Raw).plan_for_fpr(4_097, 1e-4).unwrap();
    /// assert_eq!(plan.coding, BitCoding::Raw);
    /// assert!(plan.worst_case_bytes < 10_000); // 19.2 bits a key, k = 13
    /// assert_eq!(plan.receiver_bytes, plan.m().div_ceil(8));
    /// ```
    pub fn coding(mut self, coding: BitCoding) -> Self {
        self.coding = Some(coding);
        self
    }

    /// Whether plans may use more than `ln 2 * m/n + 1` hash functions (default: no).
    ///
    /// Both f and `m H(p)` are symmetric under `p <-> 1 - p`, so every sparse plan
    /// (`p > 1/2`, k below the uncompressed optimum `ln 2 * m/n`) has a dense mirror image
    /// with the same m, about the same f and size, and many more hash functions: with at
    /// most 4 bits a key on the wire and m/n at most 7 (Table III of the paper) the mirror
    /// of k = 1 is k = 14. The paper recommends `k < ln 2 * m/n` for compressed filters;
    /// the default keeps to it, with one hash function of slack for integer rounding, so
    /// queries cost as few hashes as the sparse solution needs.
    ///
    /// ```
    /// use bloomwire::optimizer::{Optimizer, SizeModel};
    ///
    /// let n = 10_000;
    /// let o = Optimizer::new().size_model(SizeModel::Ideal).max_m(7 * n);
    /// assert_eq!(o.plan(n, n / 2).unwrap().k().whole(), 1);
    /// ```
    pub fn mirror_k(mut self, yes: bool) -> Self {
        self.mirror_k = yes;
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
    /// Errors: [`Error::InvalidParameter`](crate::Error::InvalidParameter) for n = 0 or bad settings;
    /// [`Error::OverBudget`](crate::Error::OverBudget) with the smallest possible frames when nothing fits.
    pub fn plan(&self, n: u64, budget_bytes: u64) -> Result<Plan> {
        self.plan_budget(n, budget_bytes, Sent::Filter)
    }

    /// The dual: the fewest worst-case bytes for a filter of n keys whose false positive rate
    /// is at most `target_fpr`.
    ///
    /// Errors: [`Error::InvalidParameter`](crate::Error::InvalidParameter) for n = 0, a target outside `(0, 1)`, bad
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
}
