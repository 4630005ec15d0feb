//! Planning counting filters (Section V of *Compressed Bloom Filters*): m and k for a
//! counting filter of b-bit counters whose frame must fit a budget.
//!
//! A counter of a filter holding n keys receives about Poisson(`lambda`) increments,
//! `lambda = k n / m` (per region of the layout), saturated at `2^b - 1`
//! ([`theory::counter_distribution`]); an entropy coder sends it in about
//! `H_b(lambda)` bits ([`theory::counter_entropy`]). The plan codes the counters with the
//! adaptive counter model ([`Coding::AdaptiveCounters`](crate::format::Coding), no table in
//! the header) and budgets:
//!
//! * the payload: `sum over regions of size * H_b(lambda)` bits, plus the cost of learning
//!   the distribution (`(t - 1)/2 log2 m + 16` bits, t the number of values expected at
//!   least once), plus the range coder's loss and termination;
//! * a margin for the random histogram: the code length is about the sum of
//!   `-log2 P(counter)` over the counters, whose standard deviation is at most
//!   `sqrt(m Var[-log2 P(C)])` (counters are negatively associated, so the independent
//!   variance is an upper bound); the worst case adds the normal `1 - epsilon` quantile of
//!   it;
//! * the header of a counting frame (the Bloom filter's header, the counted type and the
//!   counter width).
//!
//! m is kept at most `2^10 k n` ([`MIN_COUNTER_MEAN`]). The false positive rate is that of
//! the Bloom filter the counting filter summarizes.
//! Saturation does not change it: it only keeps deleted keys present.

use super::occupancy::for_each_region;
use super::options::Optimizer;
use super::size::Sent;
use super::size::{
    coded_payload_bytes, frame_bytes_from, k_field_bytes, normal_upper_quantile, CODER_LOSS_PER_BIT,
};
use crate::error::{invalid, Error, Result};
use crate::filter::counting::packed_len;
use crate::filter::rational::HashCount;
use crate::filter::Params;
use crate::format::BitCoding;
use crate::theory;

/// The smallest mean counter value `k n / m` a counting plan uses (m at most `2^10 k n`).
///
/// Sparser counters are not worth planning for: with fewer than one counter in about a
/// thousand non-zero, the coders' integer precision (frequencies out of `2^16` for the
/// known table, counts halved at `2^22` for the adaptive model) rather than the entropy
/// sets the size, and the plan's size model would be optimistic (measured: at
/// `k n / m = 1.3e-5` adaptive frames come out 3.4% above it, at `5.6e-4` 0.2%). The
/// memory of such a filter, m bytes, is rarely affordable anyway.
pub const MIN_COUNTER_MEAN: f64 = 1.0 / 1024.0;

/// What the optimizer recommends for a counting filter, with the figures it expects.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CountingPlan {
    /// Number of keys planned for.
    pub n: u64,
    /// The filter's parameters (m counters, layout with k, hash family).
    pub params: Params,
    /// Bits per counter.
    pub width: u8,
    /// Expected entropy of a counter, in bits (averaged over the layout's regions).
    pub entropy_per_counter: f64,
    /// Expected fraction of saturated counters.
    pub saturated_fraction: f64,
    /// Expected frame bytes with adaptive counter coding.
    pub expected_bytes: f64,
    /// Frame bytes that are exceeded with probability at most `epsilon`.
    pub worst_case_bytes: u64,
    /// The overflow probability the worst case was computed for.
    pub epsilon: f64,
    /// Bytes of the frame with the counters packed `width` bits each.
    pub packed_bytes: u64,
    /// Expected false positive rate (of the summarized Bloom filter).
    pub false_positive_rate: f64,
    /// The receiver's memory for the decoded filter: m counters of one byte each, as
    /// [`CountingBloomFilter`](crate::CountingBloomFilter) holds them, plus the
    /// `ceil(m/8)` bytes of the Bloom filter it summarizes to.
    pub receiver_bytes: u64,
}

impl CountingPlan {
    /// Number of counters.
    pub fn m(&self) -> u64 {
        self.params.m()
    }

    /// Hash functions per key.
    pub fn k(&self) -> HashCount {
        self.params.k()
    }
}

/// Expected sizes of one candidate.
struct CountingEval {
    entropy_bits: f64,
    saturated: f64,
    expected: f64,
    worst: f64,
    packed: f64,
}

impl Optimizer {
    /// Minimise the false positive rate of a counting filter of n keys with counters of
    /// `width` bits (1 to 8) whose frame fits in `budget_bytes` with probability
    /// `1 - epsilon`. Uses the optimizer's m grid, layout, family, integer k range and
    /// epsilon; rational k and the ideal size model are not used here.
    ///
    /// ```
    /// use bloomwire::Optimizer;
    ///
    /// // 10 000 keys, 4-bit counters, 16 kB on the wire (packed counters would allow only
    /// // m = 32 000, 3.2 counters a key).
    /// let plan = Optimizer::new().plan_counting(10_000, 4, 16_000).unwrap();
    /// assert!(plan.worst_case_bytes <= 16_000);
    /// assert!(plan.m() > 100_000);
    /// assert!(plan.entropy_per_counter < 1.0);
    /// assert!(plan.false_positive_rate < 0.005);
    /// ```
    ///
    /// Errors: [`Error::InvalidParameter`] for n = 0, a width outside 1..=8 or bad
    /// settings; [`Error::OverBudget`] when no m fits.
    pub fn plan_counting(&self, n: u64, width: u8, budget_bytes: u64) -> Result<CountingPlan> {
        self.check(n)?;
        if !(1..=8).contains(&width) {
            return Err(invalid("width", format!("{width} is not in 1..=8")));
        }
        let this = self.for_n(n);
        this.counting_within(n, width, budget_bytes)
    }

    fn counting_within(&self, n: u64, width: u8, budget_bytes: u64) -> Result<CountingPlan> {
        let budget = budget_bytes as f64;
        let mut best: Option<(f64, u64, HashCount)> = None;
        for k in self.integer_ks() {
            let Some(range) = self.counting_m_range(n, k) else {
                continue;
            };
            let fits = |i| self.counting_eval(n, self.m_at(i), k, width).worst <= budget;
            let Some(i) = Self::largest(range, fits) else {
                continue;
            };
            let m = self.m_at(i);
            let fpr = self.eval(n, m, k, Sent::Filter).fpr;
            if best.is_none_or(|(f, _, _)| fpr < f) {
                best = Some((fpr, m, k));
            }
        }
        let Some((fpr, m, k)) = best else {
            let k = self
                .integer_ks()
                .next()
                .ok_or_else(|| invalid("k_range", "empty"))?;
            let smallest = self.m_index_range(k).map_or(f64::INFINITY, |(lo, _)| {
                self.counting_eval(n, self.m_at(lo), k, width).worst
            });
            let packed = self.m_index_range(k).map_or(f64::INFINITY, |(lo, _)| {
                self.counting_eval(n, self.m_at(lo), k, width).packed
            });
            return Err(Error::OverBudget {
                budget: budget_bytes as usize,
                compressed: smallest as usize,
                raw: packed as usize,
            });
        };
        let e = self.counting_eval(n, m, k, width);
        Ok(CountingPlan {
            n,
            params: self.params(m, k)?,
            width,
            entropy_per_counter: e.entropy_bits / m as f64,
            saturated_fraction: e.saturated / m as f64,
            expected_bytes: e.expected,
            worst_case_bytes: e.worst as u64,
            epsilon: self.epsilon,
            packed_bytes: e.packed as u64,
            false_positive_rate: fpr,
            receiver_bytes: m.saturating_add(m.div_ceil(8)),
        })
    }

    /// The optimizer's m grid for k, cut at `m <= 2^10 k n` (see [`MIN_COUNTER_MEAN`]) and
    /// at the receiver's [`Limits::filter_bytes`](crate::Limits::filter_bytes) counters and
    /// the memory cap's.
    fn counting_m_range(&self, n: u64, k: HashCount) -> Option<(u64, u64)> {
        let (lo, hi) = self.m_index_range(k)?;
        // A byte a counter in the receiver's memory, within its limit on a filter's bytes.
        let cap = (k.to_f64() * n as f64 / MIN_COUNTER_MEAN)
            .min(u64::MAX as f64)
            .min(self.limits.filter_bytes() as f64)
            .min(
                self.max_memory_bits
                    .map_or(f64::INFINITY, |b| (b / 8) as f64),
            ) as u64;
        let hi = Self::largest((lo, hi), |i| self.m_at(i) <= cap)?;
        Some((lo, hi))
    }

    fn counting_eval(&self, n: u64, m: u64, k: HashCount, width: u8) -> CountingEval {
        let nf = n as f64;
        let mf = m as f64;
        let (mut bits, mut var, mut saturated) = (0.0, 0.0, 0.0);
        let mut expected_values = vec![0.0; 1 << width];
        for_each_region(self.layout, m, k, |reg| {
            let cells = (reg.size * reg.count) as f64;
            let lambda = (f64::from(reg.w) + reg.r) * nf / reg.size as f64;
            let dist = theory::counter_distribution(lambda, width);
            let (mut h, mut h2) = (0.0, 0.0);
            for (v, &p) in dist.iter().enumerate() {
                if p > 0.0 {
                    let info = -p.log2();
                    h += p * info;
                    h2 += p * info * info;
                    expected_values[v] += cells * p;
                }
            }
            bits += cells * h;
            var += cells * (h2 - h * h).max(0.0);
            saturated += cells * dist[dist.len() - 1];
        });
        let values = expected_values.iter().filter(|&&e| e >= 1.0).count().max(1) as f64;
        let learning = (values - 1.0) / 2.0 * mf.log2() + 16.0;
        let base = bits + learning + mf * CODER_LOSS_PER_BIT;
        let margin = normal_upper_quantile(self.epsilon) * var.sqrt();
        let k_bytes = k_field_bytes(self.layout, m, k);
        // The counted type and counter width follow m in a counting frame's header.
        let frame = |coding, payload: f64| {
            frame_bytes_from(
                &self.family,
                m,
                k_bytes,
                n,
                Sent::Filter,
                coding,
                payload as u64,
            ) as f64
                + 2.0
        };
        let worst_payload = coded_payload_bytes(base + margin, 5.0);
        let header = frame(BitCoding::Adaptive, worst_payload) - worst_payload;
        let packed = packed_len(m, width) as f64;
        CountingEval {
            entropy_bits: bits,
            saturated,
            expected: header + coded_payload_bytes(base, 2.0),
            worst: header + worst_payload,
            packed: frame(BitCoding::Raw, packed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_bit_counters_plan_like_a_bloom_filter() {
        // A counting filter of 1-bit counters is a Bloom filter: with m/n at most 14 and
        // 8 bits per key on the wire both planners pick Table I's k = 2, m = 14 n.
        let n = 100_000;
        let o = Optimizer::new().max_m(14 * n);
        let bloom = o.plan(n, n).unwrap();
        let counting = o.plan_counting(n, 1, n).unwrap();
        assert_eq!(counting.k(), bloom.k());
        assert_eq!(counting.m(), bloom.m());
        assert!((counting.false_positive_rate / bloom.false_positive_rate - 1.0).abs() < 1e-12);
        assert!((counting.expected_bytes / bloom.expected_bytes - 1.0).abs() < 0.005);
    }

    #[test]
    fn plans_fit_and_keep_counters_dense_enough() {
        let n = 10_000;
        for budget in [6_000, 12_000, 24_000, 100_000] {
            let plan = Optimizer::new().plan_counting(n, 4, budget).unwrap();
            assert!(plan.worst_case_bytes <= budget);
            assert!(plan.expected_bytes < plan.worst_case_bytes as f64);
            assert!(plan.m() as f64 <= plan.k().to_f64() * n as f64 / MIN_COUNTER_MEAN);
            // A smaller frame than the packed counters of the same filter.
            assert!(plan.worst_case_bytes * 2 < plan.packed_bytes);
        }
    }
}
