//! The search over m and k for a budget or a false positive target.

use super::options::Optimizer;
use super::{Bent, DeltaCost, Limit, Unconstrained};
use super::{LayoutKind, Plan, SizeModel, TailBound, Uncompressed};
use crate::error::{invalid, Error, Result};
use crate::filter::rational::{HashCount, K_FRAC_BITS};
use crate::filter::{Layout, Params, MAX_M};
use crate::format::BitCoding;
use crate::format::Limits;
use crate::theory::entropy;

use super::occupancy::{for_each_region, occupancy};
use super::size::{
    check_changed, coded_payload_bytes, frame_bytes_from, k_field_bytes, normal_upper_quantile,
    Sent, CODER_LOSS_PER_BIT,
};

/// Sizes and false positive rate of one candidate (m, k).
#[derive(Debug, Clone, Copy)]
pub(super) struct Eval {
    pub(super) fpr: f64,
    /// (coding, expected bytes, worst-case bytes), the arithmetic codings first.
    pub(super) sizes: [(BitCoding, f64, f64); 3],
}

impl Eval {
    fn raw(&self) -> (BitCoding, f64, f64) {
        self.sizes[2]
    }

    /// The compressed coding with the least expected size among those that fit `budget`
    /// (or among all when `budget` is `None`), preferring known p on ties.
    /// With `only`, that coding alone (none for [`BitCoding::Raw`]).
    fn best_compressed(
        &self,
        budget: Option<f64>,
        only: Option<BitCoding>,
    ) -> Option<(BitCoding, f64, f64)> {
        self.sizes[..2]
            .iter()
            .filter(|s| only.is_none_or(|c| c == s.0))
            .filter(|s| budget.is_none_or(|b| s.2 <= b))
            .copied()
            .min_by(|a, b| a.1.total_cmp(&b.1).then(a.2.total_cmp(&b.2)))
    }
}

/// A candidate answer.
#[derive(Debug, Clone, Copy)]
pub(super) struct Candidate {
    m: u64,
    k: HashCount,
    coding: BitCoding,
    expected: f64,
    worst: f64,
    fpr: f64,
}

impl Optimizer {
    pub(super) fn check(&self, n: u64) -> Result<()> {
        if let Some(c) = self
            .coding
            .filter(|c| !matches!(c, BitCoding::Raw | BitCoding::Adaptive | BitCoding::KnownP))
        {
            return Err(invalid(
                "coding",
                format!("plans size raw, adaptive and known-p frames, not {c}"),
            ));
        }
        if n == 0 {
            return Err(invalid("n", "a plan needs at least one key"));
        }
        if self.max_memory_bits == Some(0) {
            return Err(invalid("max_memory", "0 bytes leave no bits"));
        }
        if let Some(r) = self.max_bits_per_element {
            if !(r.is_finite() && r * n as f64 >= 1.0) {
                return Err(invalid(
                    "max_bits_per_element",
                    format!("{r} leaves no bits for {n} keys"),
                ));
            }
        }
        if let Some(c) = self.churn {
            check_changed(c)?;
        }
        if self.limits.max_m == 0 || self.limits.max_m > MAX_M {
            return Err(invalid(
                "limits.max_m",
                format!("{} is not in 1..={MAX_M}", self.limits.max_m),
            ));
        }
        if let Some(max_m) = self.max_m {
            if max_m == 0 || max_m > MAX_M {
                return Err(invalid("max_m", format!("{max_m} is not in 1..={MAX_M}")));
            }
        }
        let max_m = self.max_m_allowed();
        if self.m_step == 0 || self.m_step > max_m {
            return Err(invalid(
                "m_multiple_of",
                format!("{} is not in 1..=max_m ({max_m})", self.m_step),
            ));
        }
        if self.min_k.ceil() > self.limits.max_k {
            return Err(Error::PlanExceedsLimits {
                name: "max_k",
                needed: u64::from(self.min_k.ceil()),
                limit: u64::from(self.limits.max_k),
            });
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
        if !self.rational_k && self.min_k.ceil() > self.max_k_allowed().whole() {
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

    /// The largest m allowed: the caller's [`Optimizer::max_m`] within the limits, a raw
    /// payload of at most `max_payload` bytes, and a decoded filter of at most
    /// [`Limits::filter_bytes`].
    pub(super) fn max_m_allowed(&self) -> u64 {
        self.binding_limit().1
    }

    /// The limit on m that binds (the smallest; the first of [`Limit`]'s order on a tie)
    /// and the largest m it allows: the receiver's `max_m`, `max_payload` (raw payload
    /// bytes) and `max_filter_bytes`, and the optimizer's `max_m`, memory cap and m/n cap.
    pub(super) fn binding_limit(&self) -> (Limit, u64) {
        let by_payload = self.limits.max_payload.saturating_mul(8).max(1);
        let by_memory = self.limits.filter_bytes().saturating_mul(8).max(1);
        [
            (Limit::MaxM, Some(self.limits.max_m)),
            (Limit::MaxPayload, Some(by_payload)),
            (Limit::MaxFilterBytes, Some(by_memory)),
            (Limit::PlanMaxM, self.max_m),
            (Limit::MaxMemory, self.max_memory_bits.map(|b| b.max(1))),
            (Limit::MaxBitsPerElement, self.per_element_m),
        ]
        .into_iter()
        .filter_map(|(limit, m)| Some((limit, m?)))
        .fold((Limit::MaxM, u64::MAX), |best, next| {
            if next.1 < best.1 {
                next
            } else {
                best
            }
        })
    }

    /// This optimizer for a plan of n keys: the m/n cap turned into a cap on m.
    pub(super) fn for_n(&self, n: u64) -> Self {
        let mut o = self.clone();
        o.per_element_m = self
            .max_bits_per_element
            .filter(|r| r.is_finite() && *r > 0.0)
            .map(|r| (r * n as f64).min(u64::MAX as f64) as u64);
        o
    }

    /// This optimizer with no limit on m but the format's (every other setting kept).
    fn unconstrained(&self) -> Self {
        let mut wide = self.clone();
        wide.limits = Limits::unlimited()
            .max_k(self.limits.max_k)
            .max_metadata(self.limits.max_metadata);
        wide.max_m = None;
        wide.max_memory_bits = None;
        wide.max_bits_per_element = None;
        wide.per_element_m = None;
        wide
    }

    /// How a limit on m bent the plan `chosen`: the optimum without limits on m, when
    /// it needs more m than the binding limit allows and is better by `better`.
    fn bent(
        &self,
        chosen: &Candidate,
        better: impl Fn(&Candidate, &Candidate) -> bool,
        search: impl Fn(&Self) -> (Option<Candidate>, Option<Candidate>),
    ) -> Option<Bent> {
        let (limit, max_m) = self.binding_limit();
        if max_m >= MAX_M {
            return None;
        }
        let wide = self.unconstrained();
        let (best, best_raw) = search(&wide);
        let optimum = wide.choose(best, best_raw, &better)?;
        (optimum.m > max_m && better(&optimum, chosen)).then(|| Bent {
            limit,
            max_m,
            unconstrained: Unconstrained {
                m: optimum.m,
                k: optimum.k,
                coding: optimum.coding,
                expected_bytes: optimum.expected,
                worst_case_bytes: optimum.worst.ceil() as u64,
                false_positive_rate: optimum.fpr,
                receiver_bytes: optimum.m.div_ceil(8),
            },
        })
    }

    /// The largest k allowed: the caller's range within the limits' `ceil(k) <= max_k`.
    pub(super) fn max_k_allowed(&self) -> HashCount {
        match HashCount::new(self.limits.max_k) {
            Ok(cap) if cap < self.max_k => cap,
            _ => self.max_k,
        }
    }

    /// The integer k to scan.
    pub(super) fn integer_ks(&self) -> impl Iterator<Item = HashCount> {
        (self.min_k.ceil()..=self.max_k_allowed().whole()).filter_map(|k| HashCount::new(k).ok())
    }

    /// Smallest and largest index of the m grid valid for k; m(i) is [`Self::m_at`].
    pub(super) fn m_index_range(&self, k: HashCount) -> Option<(u64, u64)> {
        self.m_index_range_from(k, 1)
    }

    /// [`Self::m_index_range`] for a plan of n keys: without [`Optimizer::mirror_k`], m is
    /// at least `(k - 1) n / ln 2` so that k is at most `ln 2 * m/n + 1`.
    pub(super) fn m_index_range_for(&self, n: u64, k: HashCount) -> Option<(u64, u64)> {
        let least = if self.mirror_k {
            1
        } else {
            let m = (k.to_f64() - 1.0) * n as f64 / core::f64::consts::LN_2;
            (m.ceil().min(u64::MAX as f64) as u64).max(1)
        };
        self.m_index_range_from(k, least)
    }

    fn m_index_range_from(&self, k: HashCount, least: u64) -> Option<(u64, u64)> {
        let max_m = self.max_m_allowed();
        let min_m = match self.layout {
            LayoutKind::Partitioned => u64::from(k.ceil()),
            _ => 1,
        }
        .max(least);
        if min_m > max_m {
            return None;
        }
        let (lo, hi) = if self.power_of_two_m {
            let lo = min_m.max(self.m_step).next_power_of_two().trailing_zeros();
            (u64::from(lo), u64::from(63 - max_m.leading_zeros()))
        } else {
            (min_m.div_ceil(self.m_step), max_m / self.m_step)
        };
        (lo <= hi && self.m_at(hi) <= max_m).then_some((lo, hi))
    }

    pub(super) fn m_at(&self, i: u64) -> u64 {
        if self.power_of_two_m {
            1 << i
        } else {
            i * self.m_step
        }
    }

    /// The sizes and false positive rate of a filter with m bits and k hash functions.
    pub(super) fn eval(&self, n: u64, m: u64, k: HashCount, sent: Sent) -> Eval {
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
                    (BitCoding::KnownP, b, b),
                    (BitCoding::Adaptive, b, b),
                    (BitCoding::Raw, mf / 8.0, mf / 8.0),
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
        let raw = frame(BitCoding::Raw, raw_bytes as f64);
        Eval {
            fpr,
            sizes: [
                arith(BitCoding::KnownP, 0.0),
                arith(BitCoding::Adaptive, learning),
                (BitCoding::Raw, raw, raw),
            ],
        }
    }

    /// Largest grid index in `range` whose `fits` holds, assuming `fits` is monotone
    /// (true, then false).
    pub(super) fn largest(range: (u64, u64), mut fits: impl FnMut(u64) -> bool) -> Option<u64> {
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
        let Some(range) = self.m_index_range_for(n, k) else {
            return (None, None);
        };
        let compressed = Self::largest(range, |i| {
            let e = self.eval(n, self.m_at(i), k, sent);
            e.best_compressed(Some(budget), self.coding).is_some()
        })
        .and_then(|i| {
            let m = self.m_at(i);
            let e = self.eval(n, m, k, sent);
            let (coding, expected, worst) = e.best_compressed(Some(budget), self.coding)?;
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
                BitCoding::Raw,
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
        let Some(range) = self.m_index_range_for(n, k) else {
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
        (
            e.best_compressed(None, self.coding).map(cand),
            Some(cand(e.raw())),
        )
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
                if slot.as_ref().is_none_or(|b| better(&c, b)) {
                    *slot = Some(c);
                }
            }
        };
        let (mut best, mut best_raw) = (None, None);
        let mut ks: Vec<HashCount> = self.integer_ks().collect();
        if self.rational_k {
            ks.push(self.min_k);
            ks.push(self.max_k_allowed());
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

    /// The best compressed and raw candidates within a budget.
    fn search_budget(
        &self,
        n: u64,
        budget: f64,
        sent: Sent,
    ) -> (Option<Candidate>, Option<Candidate>) {
        self.search(
            better_for_budget,
            |k| self.for_k_budget(n, k, budget, sent).0,
            |k| {
                self.m_index_range_for(n, k)
                    .and_then(|range| self.raw_for_k_budget(n, k, budget, sent, range))
            },
            |c| c.fpr,
        )
    }

    /// The best compressed and raw candidates reaching a target.
    fn search_target(
        &self,
        n: u64,
        target: f64,
        sent: Sent,
    ) -> (Option<Candidate>, Option<Candidate>) {
        // Expected bytes are a smoother objective than the integer worst case.
        self.search(
            better_for_target,
            |k| self.for_k_target(n, k, target, sent).0,
            |k| self.for_k_target(n, k, target, sent).1,
            |c| c.expected,
        )
    }

    pub(super) fn plan_budget(&self, n: u64, budget_bytes: u64, sent: Sent) -> Result<Plan> {
        self.check(n)?;
        let this = self.for_n(n);
        let budget = budget_bytes as f64;
        let (best, best_raw) = this.search_budget(n, budget, sent);
        // The uncompressed filter is always a candidate.
        let chosen = this.choose(best, best_raw, better_for_budget);
        let Some(chosen) = chosen else {
            return Err(this.over_budget(n, budget_bytes, sent));
        };
        let bent = this.bent(&chosen, better_for_budget, |wide| {
            wide.search_budget(n, budget, sent)
        });
        this.finish(n, sent, chosen, best_raw, bent)
    }

    pub(super) fn plan_target(&self, n: u64, target: f64, sent: Sent) -> Result<Plan> {
        self.check(n)?;
        if !(target.is_finite() && target > 0.0 && target < 1.0) {
            return Err(invalid("target_fpr", format!("{target} is not in (0, 1)")));
        }
        let this = self.for_n(n);
        let (best, best_raw) = this.search_target(n, target, sent);
        let chosen = this.choose(best, best_raw, better_for_target);
        let Some(chosen) = chosen else {
            return Err(this.out_of_reach(n, target, sent));
        };
        let bent = this.bent(&chosen, better_for_target, |wide| {
            wide.search_target(n, target, sent)
        });
        this.finish(n, sent, chosen, best_raw, bent)
    }

    /// The plan: the better of the best compressed and the best raw candidate, or the one
    /// of the coding asked for.
    fn choose(
        &self,
        best: Option<Candidate>,
        best_raw: Option<Candidate>,
        better: impl Fn(&Candidate, &Candidate) -> bool,
    ) -> Option<Candidate> {
        match (self.coding, best, best_raw) {
            (Some(BitCoding::Raw), _, r) => r,
            (Some(_), c, _) => c,
            (None, Some(c), Some(r)) => Some(if better(&r, &c) { r } else { c }),
            (None, c, r) => c.or(r),
        }
    }

    /// The error for a target no allowed m reaches: when the receiver's limits are what
    /// stops it, [`Error::PlanExceedsLimits`] with the least m (or raw payload) that reaches
    /// the target; otherwise the best false positive rate there is.
    fn out_of_reach(&self, n: u64, target: f64, sent: Sent) -> Error {
        let by_memory = self.limits.filter_bytes().saturating_mul(8);
        let (binding, limit) = self.binding_limit();
        let receivers = matches!(
            binding,
            Limit::MaxM | Limit::MaxPayload | Limit::MaxFilterBytes
        );
        if limit < MAX_M && receivers {
            let mut wide = self.unconstrained();
            wide.limits = Limits::unlimited();
            let mut ks: Vec<HashCount> = wide.integer_ks().collect();
            if wide.rational_k {
                ks.extend([wide.min_k, wide.max_k_allowed()]);
            }
            let least = ks
                .into_iter()
                .filter_map(|k| {
                    let range = wide.m_index_range_for(n, k)?;
                    let i = Self::smallest(range, |i| {
                        wide.eval(n, wide.m_at(i), k, sent).fpr <= target
                    })?;
                    Some(wide.m_at(i))
                })
                .min();
            if let Some(needed) = least {
                return if needed > self.limits.max_m {
                    Error::PlanExceedsLimits {
                        name: "max_m",
                        needed,
                        limit: self.limits.max_m,
                    }
                } else if needed > by_memory {
                    Error::PlanExceedsLimits {
                        name: "max_filter_bytes",
                        needed: needed.div_ceil(8),
                        limit: self.limits.filter_bytes(),
                    }
                } else {
                    Error::PlanExceedsLimits {
                        name: "max_payload",
                        needed: needed.div_ceil(8),
                        limit: self.limits.max_payload,
                    }
                };
            }
        }
        let (binding, m) = self.binding_limit();
        let best_f = self
            .integer_ks()
            .chain([self.min_k, self.max_k_allowed()])
            .filter(|&k| self.m_index_range_for(n, k).is_some())
            .map(|k| self.eval(n, m, k, sent).fpr)
            .fold(1.0, f64::min);
        invalid(
            "target_fpr",
            format!(
                "{target} is out of reach with m <= {m} ({binding}): the best is about \
                 {best_f:.3e}"
            ),
        )
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
        let mut b = center
            .raw()
            .saturating_add(one)
            .min(self.max_k_allowed().raw());
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

    pub(super) fn params(&self, m: u64, k: HashCount) -> Result<Params> {
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
        bent: Option<Bent>,
    ) -> Result<Plan> {
        let params = self.params(chosen.m, chosen.k)?;
        let delta = match sent {
            Sent::Delta { changed } => Some(DeltaCost {
                changed,
                expected_bytes: chosen.expected,
                worst_case_bytes: chosen.worst.ceil() as u64,
            }),
            Sent::Filter => self.churn.map(|changed| {
                let e = self.eval(n, chosen.m, chosen.k, Sent::Delta { changed });
                let (_, expected, worst) = e
                    .sizes
                    .into_iter()
                    .min_by(|a, b| a.1.total_cmp(&b.1).then(a.2.total_cmp(&b.2)))
                    .expect("three codings");
                DeltaCost {
                    changed,
                    expected_bytes: expected,
                    worst_case_bytes: worst.ceil() as u64,
                }
            }),
        };
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
            receiver_bytes: chosen.m.div_ceil(8),
            uncompressed: raw.map(|r| Uncompressed {
                m: r.m,
                k: r.k,
                false_positive_rate: r.fpr,
                bytes: r.expected,
            }),
            delta,
            bent,
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
                let c = e
                    .best_compressed(None, self.coding)
                    .map_or(f64::INFINITY, |c| c.2);
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

/// Whether `a` is a better plan for a budget than `b`: a lower rate, then fewer bytes.
fn better_for_budget(a: &Candidate, b: &Candidate) -> bool {
    a.fpr
        .total_cmp(&b.fpr)
        .then(a.expected.total_cmp(&b.expected))
        .then(a.k.cmp(&b.k))
        .is_lt()
}

/// Whether `a` is a better plan for a target than `b`: fewer worst-case bytes, then fewer
/// expected bytes, then a lower rate.
fn better_for_target(a: &Candidate, b: &Candidate) -> bool {
    a.worst
        .total_cmp(&b.worst)
        .then(a.expected.total_cmp(&b.expected))
        .then(a.fpr.total_cmp(&b.fpr))
        .then(a.k.cmp(&b.k))
        .is_lt()
}
