//! The plans this package holds: the `Plan` class's object (a `PlanInfo`: a plan's figures
//! and parameters, from the optimizer or restored from a pickle) and what builds one.
//!
//! The class's methods are in `plan.rs`, above the filters that `Plan.new_filter` builds;
//! the object is here, below them, since `BloomFilter.from_plan` takes one.

use std::sync::OnceLock;

use bloomwire::{BitCoding, Optimizer, Params};
use pyo3::prelude::*;

use crate::args::layout_name;

/// A plan's figures as a pickle carries them: n, coding, fpr, expected bytes, worst-case
/// bytes, epsilon, bits per element, the table.
pub(crate) type PlanFigures = (u64, String, f64, f64, u64, f64, f64, String);

/// A planned filter: its m and k, and the false positive rate and frame size to expect.
///
/// Made by `plan` (a byte budget) and `plan_for_fpr` (a target rate). `new_filter()` and
/// `new_counting_filter()` build empty filters with the planned parameters.
#[pyclass(module = "bloomwire", frozen)]
pub(crate) struct Plan {
    pub(crate) info: PlanInfo,
}

impl Plan {
    /// The plan of `params` with these figures.
    pub(crate) fn restored(params: Params, figures: PlanFigures) -> Self {
        Plan {
            info: restore_plan(params, figures),
        }
    }
}

/// A plan's figures, and the parameters to build its filter with.
#[derive(Debug, Clone)]
pub(crate) struct PlanInfo {
    /// Keys planned for.
    pub n: u64,
    /// Bits of the filter.
    pub m: u64,
    /// Hash functions per key.
    pub k: f64,
    /// k on the 1/65536 grid.
    pub k_raw: u32,
    /// The layout's name.
    pub layout: &'static str,
    /// The planned coding's name.
    pub coding: String,
    /// Expected false positive rate.
    pub fpr: f64,
    /// Expected frame bytes.
    pub expected_bytes: f64,
    /// Frame bytes exceeded with probability at most `epsilon`.
    pub worst_case_bytes: u64,
    /// That probability.
    pub epsilon: f64,
    /// Expected bits on the wire per key.
    pub bits_per_element: f64,
    /// The receiver's memory for the decoded filter, `ceil(m/8)` bytes.
    pub receiver_bytes: u64,
    /// The library's table of the plan.
    pub table: String,
    /// The filter's parameters.
    pub params: Params,
    /// The library's plan (for a plan restored from its figures, one carrying them).
    pub(crate) plan: bloomwire::Plan,
}

/// The figures and parameters of a plan of the optimizer.
pub(crate) fn plan_info(plan: bloomwire::Plan) -> PlanInfo {
    let lib = plan.clone();
    PlanInfo {
        n: plan.n,
        m: plan.m(),
        k: plan.k().to_f64(),
        k_raw: plan.k().raw(),
        layout: layout_name(&plan.params),
        coding: plan.coding.to_string(),
        fpr: plan.false_positive_rate,
        expected_bytes: plan.expected_bytes,
        worst_case_bytes: plan.worst_case_bytes,
        epsilon: plan.epsilon,
        bits_per_element: plan.bits_per_element,
        receiver_bytes: plan.receiver_bytes,
        table: plan.to_string(),
        params: plan.params,
        plan: lib,
    }
}

/// A plan of the library, to carry the parameters and figures of a plan restored from a
/// pickle: the library's `Plan` is `non_exhaustive` (it cannot be built from its fields
/// outside the library), so a plan the optimizer made once has its public fields replaced.
fn template_plan() -> bloomwire::Plan {
    static TEMPLATE: OnceLock<bloomwire::Plan> = OnceLock::new();
    TEMPLATE
        .get_or_init(|| {
            Optimizer::new()
                .plan_for_fpr(1000, 0.01)
                .expect("a plan of 1000 keys at 1%")
        })
        .clone()
}

/// The plan of these parameters and figures.
fn restore_plan(params: Params, figures: PlanFigures) -> PlanInfo {
    let (n, coding, fpr, expected_bytes, worst_case_bytes, epsilon, bits_per_element, table) =
        figures;
    let mut plan = template_plan();
    plan.n = n;
    plan.params = params.clone();
    if let Ok(coding) = coding.parse::<BitCoding>() {
        plan.coding = coding;
    }
    plan.changed = None;
    plan.expected_bytes = expected_bytes;
    plan.worst_case_bytes = worst_case_bytes;
    plan.epsilon = epsilon;
    plan.false_positive_rate = fpr;
    plan.bits_per_element = bits_per_element;
    plan.receiver_bytes = params.m().div_ceil(8);
    plan.uncompressed = None;
    plan.delta = None;
    plan.bent = None;
    // The coding's name and the table as the pickle carried them.
    PlanInfo {
        coding,
        table,
        ..plan_info(plan)
    }
}

/// Whether two plans have the same parameters and figures.
pub(crate) fn same_plan(a: &PlanInfo, b: &PlanInfo) -> bool {
    a.params == b.params
        && (a.n, &a.coding, a.worst_case_bytes, &a.table)
            == (b.n, &b.coding, b.worst_case_bytes, &b.table)
        && [a.fpr, a.expected_bytes, a.epsilon, a.bits_per_element]
            .iter()
            .zip([b.fpr, b.expected_bytes, b.epsilon, b.bits_per_element])
            .all(|(x, y)| x.to_bits() == y.to_bits())
}
