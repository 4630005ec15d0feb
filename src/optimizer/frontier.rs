//! The frontier of wire bytes against memory for a target rate: the few plans a user
//! chooses between.

use super::options::Optimizer;
use super::Plan;
use crate::error::Result;
use crate::format::BitCoding;

/// The memory caps of [`Optimizer::frontier`], as multiples of the memory-optimal filter's.
pub const FRONTIER_FACTORS: [u32; 3] = [1, 2, 4];

/// One plan of a frontier, with the memory cap it was planned under.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct FrontierPlan {
    /// The cap on m as a multiple of the memory-optimal m (1, 2 or 4), or `None` for the
    /// plan without a memory cap (still within the optimizer's other limits).
    pub memory_factor: Option<u32>,
    /// The plan: the fewest worst-case bytes on the wire for the target rate with m at
    /// most `memory_factor` times the memory-optimal m.
    pub plan: Plan,
}

impl Optimizer {
    /// The frontier of wire bytes against memory for n keys at a false positive rate of
    /// at most `target_fpr`: the memory-optimal plan (m and k of the standard uncompressed
    /// filter, `m = n ln(1/f) / ln(2)^2` rounded to the least m whose k reaches f), then the
    /// plans with at most 2 and 4 times its memory, then the plan without a memory cap.
    /// Each is [`Optimizer::plan_for_fpr`] under that cap (with this optimizer's settings,
    /// its limits and caps included), so each meets the target; a capped plan that the cap
    /// does not bend is the uncapped plan and left out. Memory falls and bytes on the wire
    /// rise from the last plan to the first; each plan's [`Plan::memory`] gives the memory
    /// at both sides, [`Plan::delta`] the deltas with [`Optimizer::churn`].
    ///
    /// For a fixed k the bytes grow with m, so each plan takes the least m whose k reaches
    /// the target: the plans move in steps of k, and two caps may give the same plan (at
    /// 1%, k = 2 needs 19.0 bits a key and k = 1 needs 99.5, so the caps of 2 and 4 times
    /// 9.6 bits both give k = 2).
    ///
    /// ```
    /// use bloomwire::Optimizer;
    ///
    /// let frontier = Optimizer::new().frontier(1_000_000, 0.01).unwrap();
    /// let factors: Vec<_> = frontier.iter().map(|p| p.memory_factor).collect();
    /// assert_eq!(factors, [Some(1), Some(2), Some(4), None]);
    /// for pair in frontier.windows(2) {
    ///     let (small, large) = (&pair[0].plan, &pair[1].plan);
    ///     assert!(small.m() <= large.m() && small.worst_case_bytes >= large.worst_case_bytes);
    /// }
    /// for point in &frontier {
    ///     assert!(point.plan.false_positive_rate <= 0.01);
    /// }
    /// // The memory-optimal filter: about 9.6 bits a key, 1.2 MB at each side; the
    /// // unbounded one 99.5 bits a key and 16% fewer bytes on the wire.
    /// let (least, most) = (&frontier[0].plan, &frontier[3].plan);
    /// assert!(least.memory().receiver < 1_200_000);
    /// assert!(most.memory().receiver > 10 * least.memory().receiver);
    /// assert!(most.worst_case_bytes * 100 < 85 * least.worst_case_bytes);
    /// ```
    ///
    /// Errors: those of [`Optimizer::plan_for_fpr`].
    pub fn frontier(&self, n: u64, target_fpr: f64) -> Result<Vec<FrontierPlan>> {
        // The least m reaching the target: the raw plan's, whose frame grows with m.
        let least = self
            .clone()
            .coding(BitCoding::Raw)
            .plan_for_fpr(n, target_fpr)?
            .m();
        let unbounded = self.plan_for_fpr(n, target_fpr)?;
        let mut points = Vec::with_capacity(FRONTIER_FACTORS.len() + 1);
        for factor in FRONTIER_FACTORS {
            let cap = least.saturating_mul(u64::from(factor));
            if cap >= unbounded.m() {
                break;
            }
            let mut capped = self.clone();
            capped.max_memory_bits = Some(capped.max_memory_bits.map_or(cap, |b| b.min(cap)));
            points.push(FrontierPlan {
                memory_factor: Some(factor),
                plan: capped.plan_for_fpr(n, target_fpr)?,
            });
        }
        points.push(FrontierPlan {
            memory_factor: None,
            plan: unbounded,
        });
        Ok(points)
    }
}
