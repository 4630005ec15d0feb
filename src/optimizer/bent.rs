//! Plans bent by a limit: which limit held the plan away from its optimum, and that optimum.

use core::fmt;

use crate::filter::rational::HashCount;
use crate::format::BitCoding;

/// A limit on m that a plan keeps within. The smallest of them is the one that binds; on a
/// tie the first in this order is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// The receiver's [`Limits::max_m`](crate::Limits::max_m).
    MaxM,
    /// The receiver's [`Limits::max_payload`](crate::Limits::max_payload): a raw frame's
    /// payload, `ceil(m/8)` bytes.
    MaxPayload,
    /// The receiver's [`Limits::max_filter_bytes`](crate::Limits::max_filter_bytes): the
    /// decoded filter, `ceil(m/8)` bytes.
    MaxFilterBytes,
    /// The optimizer's own [`Optimizer::max_m`](crate::Optimizer::max_m).
    PlanMaxM,
    /// The memory cap [`Optimizer::max_memory`](crate::Optimizer::max_memory) (or a point
    /// of [`Optimizer::frontier`](crate::Optimizer::frontier)).
    MaxMemory,
    /// The cap on m/n, [`Optimizer::max_bits_per_element`](crate::Optimizer::max_bits_per_element).
    MaxBitsPerElement,
}

impl Limit {
    /// The setting's name: `max_m`, `max_payload`, `max_filter_bytes` (the receiver's
    /// [`Limits`](crate::Limits)), `plan_max_m`, `max_memory`, `max_bits_per_element` (the
    /// optimizer's).
    pub const fn name(self) -> &'static str {
        match self {
            Limit::MaxM => "max_m",
            Limit::MaxPayload => "max_payload",
            Limit::MaxFilterBytes => "max_filter_bytes",
            Limit::PlanMaxM => "plan_max_m",
            Limit::MaxMemory => "max_memory",
            Limit::MaxBitsPerElement => "max_bits_per_element",
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The plan the optimizer would make with no limit on m (the receiver's `max_m`,
/// `max_payload` and `max_filter_bytes`, and the optimizer's `max_m`, memory and
/// per-element caps all lifted; every other setting kept).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Unconstrained {
    /// Number of bits.
    pub m: u64,
    /// Hash functions.
    pub k: HashCount,
    /// The coding it would use.
    pub coding: BitCoding,
    /// Expected frame bytes.
    pub expected_bytes: f64,
    /// Frame bytes exceeded with probability at most epsilon.
    pub worst_case_bytes: u64,
    /// Expected false positive rate.
    pub false_positive_rate: f64,
    /// The receiver's memory, `ceil(m/8)` bytes.
    pub receiver_bytes: u64,
}

/// Why a plan is not the optimizer's optimum: a limit on m held it to a smaller filter, and
/// without it the plan would be [`Bent::unconstrained`] (fewer bytes for a target rate, a
/// lower rate for a budget).
///
/// ```
/// use bloomwire::optimizer::{Limit, Optimizer};
///
/// // 10 million keys at 1%: the sparse optimum needs about 10^9 bits, above the default
/// // receiver's 2^28.
/// let plan = Optimizer::new().plan_for_fpr(10_000_000, 0.01).unwrap();
/// let bent = plan.bent.unwrap();
/// assert_eq!(bent.limit, Limit::MaxM);
/// assert_eq!(bent.max_m, 1 << 28);
/// assert!(bent.unconstrained.m > 1 << 28);
/// assert!(bent.unconstrained.worst_case_bytes < plan.worst_case_bytes);
/// // 1 million keys fit: the plan is its optimum.
/// assert_eq!(Optimizer::new().plan_for_fpr(1_000_000, 0.01).unwrap().bent, None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Bent {
    /// The limit that binds (the smallest).
    pub limit: Limit,
    /// The largest m it allows.
    pub max_m: u64,
    /// The plan without limits on m.
    pub unconstrained: Unconstrained,
}
