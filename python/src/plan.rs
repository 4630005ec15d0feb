//! Planning: `Plan`'s methods, `plan`, `plan_for_fpr` and `frontier` (the `Plan` object and
//! its figures are `plan_info.rs`).

use bloomwire::{Limits, Optimizer};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::args::{family, unpickler};
use crate::errors::IntoPyResult;
use crate::filter::{BloomFilter, CountingFilter};
use crate::params::{params_parts, params_within, ParamParts};
use crate::plan_info::{plan_info, same_plan, Plan, PlanFigures};
use crate::settings::limits;

#[pymethods]
impl Plan {
    /// Number of keys planned for.
    #[getter]
    fn n(&self) -> u64 {
        self.info.n
    }

    /// Bits of the filter.
    #[getter]
    fn m(&self) -> u64 {
        self.info.m
    }

    /// Hash functions per key (a float: k may be rational on a 1/65536 grid).
    #[getter]
    fn k(&self) -> f64 {
        self.info.k
    }

    /// k times 65536, as the frame header carries it.
    #[getter]
    fn k_raw(&self) -> u32 {
        self.info.k_raw
    }

    /// The filter layout: "standard", "partitioned" or "blocks".
    #[getter]
    fn layout(&self) -> &'static str {
        self.info.layout
    }

    /// The coding the plan assumed: "raw", "adaptive" or "known-p".
    #[getter]
    fn coding(&self) -> &str {
        &self.info.coding
    }

    /// The expected false positive rate.
    #[getter]
    fn fpr(&self) -> f64 {
        self.info.fpr
    }

    /// The expected frame size in bytes (header and checksum included).
    #[getter]
    fn bytes(&self) -> f64 {
        self.info.expected_bytes
    }

    /// Frame bytes exceeded with probability at most `epsilon`.
    #[getter]
    fn worst_case_bytes(&self) -> u64 {
        self.info.worst_case_bytes
    }

    /// The probability with which a frame may exceed `worst_case_bytes`.
    #[getter]
    fn epsilon(&self) -> f64 {
        self.info.epsilon
    }

    /// Expected bits on the wire per key.
    #[getter]
    fn bits_per_element(&self) -> f64 {
        self.info.bits_per_element
    }

    /// The receiver's memory for the decoded filter, `ceil(m/8)` bytes.
    #[getter]
    fn receiver_bytes(&self) -> u64 {
        self.info.receiver_bytes
    }

    /// The sender's memory for the filter's bits, `ceil(m/8)` bytes.
    #[getter]
    fn sender_bytes(&self) -> u64 {
        self.info.plan.memory().sender
    }

    /// The memory of a sender of deltas, which keeps the generation it sent last beside
    /// its filter: `2 * ceil(m/8)` bytes.
    #[getter]
    fn delta_sender_bytes(&self) -> u64 {
        self.info.plan.memory().delta_sender
    }

    /// The memory of a sender that keeps a counting filter (m counters of a byte each,
    /// whatever their width) and the bits it sent last: `m + ceil(m/8)` bytes.
    #[getter]
    fn counting_sender_bytes(&self) -> u64 {
        self.info.plan.memory().counting_sender
    }

    /// The delta frames at the `churn` the plan was asked for: a dict of `changed`,
    /// `bytes` (expected) and `worst_case_bytes`; None without a churn (or for a plan
    /// restored from a pickle).
    #[getter]
    fn delta<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(d) = self.info.plan.delta else {
            return Ok(None);
        };
        let dict = PyDict::new(py);
        dict.set_item("changed", d.changed)?;
        dict.set_item("bytes", d.expected_bytes)?;
        dict.set_item("worst_case_bytes", d.worst_case_bytes)?;
        Ok(Some(dict))
    }

    /// The limit on m that held the plan away from its optimum, None when it is its
    /// optimum (or restored from a pickle): a dict of `limit` ("max_m", "max_payload",
    /// "max_filter_bytes", "max_memory", "max_bits_per_element"), `max_m` (the largest m
    /// it allows) and the plan without it: `m`, `k`, `coding`, `bytes`,
    /// `worst_case_bytes`, `fpr`, `receiver_bytes`.
    #[getter]
    fn bent<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(b) = self.info.plan.bent else {
            return Ok(None);
        };
        let u = b.unconstrained;
        let dict = PyDict::new(py);
        // The optimizer's own max_m is this package's `max_m` too.
        let limit = match b.limit {
            bloomwire::optimizer::Limit::PlanMaxM => "max_m",
            limit => limit.name(),
        };
        dict.set_item("limit", limit)?;
        dict.set_item("max_m", b.max_m)?;
        dict.set_item("m", u.m)?;
        dict.set_item("k", u.k.to_f64())?;
        dict.set_item("coding", u.coding.to_string())?;
        dict.set_item("bytes", u.expected_bytes)?;
        dict.set_item("worst_case_bytes", u.worst_case_bytes)?;
        dict.set_item("fpr", u.false_positive_rate)?;
        dict.set_item("receiver_bytes", u.receiver_bytes)?;
        Ok(Some(dict))
    }

    /// The chunk shift for building this filter by chunks on workers of `worker_bytes`
    /// bytes of memory each (a chunk of `2**shift` bits is about a quarter of a worker), or
    /// None when one worker holds the whole filter and its frame (`receiver_bytes` plus
    /// `worst_case_bytes`) and the partial-filter route applies.
    fn chunked_build(&self, worker_bytes: u64) -> Option<u8> {
        self.info.plan.chunked_build(worker_bytes)
    }

    /// An empty Bloom filter with the planned parameters (`AllocationFailed`, a
    /// `MemoryError`, when its bits cannot be allocated).
    pub(crate) fn new_filter(&self) -> PyResult<BloomFilter> {
        BloomFilter::from_plan(self)
    }

    /// An empty counting filter with the planned parameters and `width`-bit counters (1 to 8).
    #[pyo3(signature = (width = 4))]
    pub(crate) fn new_counting_filter(&self, width: u8) -> PyResult<CountingFilter> {
        CountingFilter::from_plan(self, width)
    }

    /// Plans compare equal when their parameters and figures do.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Plan>()
            .is_ok_and(|o| same_plan(&self.info, &o.get().info))
    }

    /// Pickled as its parameters (checked on load with the unpickling limits, as a frame's
    /// are) and its figures: nothing of the size of its filter is allocated either way.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let parts = params_parts(&self.info.params);
        let i = &self.info;
        let figures = (
            i.n,
            i.coding.clone(),
            i.fpr,
            i.expected_bytes,
            i.worst_case_bytes,
            i.epsilon,
            i.bits_per_element,
            i.table.clone(),
        );
        PyTuple::new(
            py,
            [
                unpickler(py, "load_plan")?,
                PyTuple::new(
                    py,
                    [
                        parts.into_pyobject(py)?.into_any(),
                        figures.into_pyobject(py)?.into_any(),
                    ],
                )?
                .into_any(),
            ],
        )
    }

    /// The plan of these parameters and figures, the parameters within the limits (the
    /// unpickler's).
    #[staticmethod]
    #[pyo3(signature = (parts, figures, *, max_m, max_k, max_payload, max_metadata, max_filter_bytes))]
    #[allow(clippy::too_many_arguments)]
    fn _from_parts(
        parts: ParamParts,
        figures: PlanFigures,
        max_m: u64,
        max_k: u32,
        max_payload: u64,
        max_metadata: u64,
        max_filter_bytes: Option<u64>,
    ) -> PyResult<Self> {
        let limits = limits(max_m, max_k, max_payload, max_metadata, max_filter_bytes);
        let params = params_within(parts, &limits).into_py()?;
        Ok(Plan::restored(params, figures))
    }

    /// The plan of `filter`'s parameters with these figures (the unpickler of plans pickled
    /// as their empty filter's frame, before 0.4).
    #[staticmethod]
    fn _from_filter(filter: &BloomFilter, figures: PlanFigures) -> Self {
        Plan::restored(filter.inner.params().clone(), figures)
    }

    fn __repr__(&self) -> String {
        format!(
            "Plan(n={}, m={}, k={}, layout={:?}, fpr={:.4e}, bytes={:.1}, worst_case_bytes={})",
            self.info.n,
            self.info.m,
            self.info.k,
            self.info.layout,
            self.info.fpr,
            self.info.expected_bytes,
            self.info.worst_case_bytes
        )
    }

    /// The plan as a small table, with the best uncompressed filter beside it.
    fn __str__(&self) -> String {
        self.info.table.clone()
    }
}

/// A planning function of the module: `n`, its target (`$arg`) and the keyword arguments
/// every planner takes (see `plan`), given to the body as the library's optimizer they make.
macro_rules! planning_function {
    ($(#[$doc:meta])* fn $name:ident($n:ident, $arg:ident: $ty:ty, $o:ident) -> $ret:ty $body:block) => {
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = ($n, $arg, *, seed = 0, siphash_key = None, max_m = None, max_filter_bytes = None, max_memory = None, max_bits_per_element = None, churn = None))]
        #[allow(clippy::too_many_arguments)]
        pub(crate) fn $name(
            $n: u64,
            $arg: $ty,
            seed: u64,
            siphash_key: Option<&Bound<'_, PyAny>>,
            max_m: Option<u64>,
            max_filter_bytes: Option<u64>,
            max_memory: Option<u64>,
            max_bits_per_element: Option<f64>,
            churn: Option<f64>,
        ) -> PyResult<$ret> {
            let $o = optimizer(
                seed,
                siphash_key,
                max_m,
                max_filter_bytes,
                max_memory,
                max_bits_per_element,
                churn,
            )?;
            $body
        }
    };
}

planning_function! {
    /// Plan the filter of `n` keys with the lowest false positive rate whose frame fits in
    /// `budget_bytes` (header and checksum included).
    ///
    /// `seed` (xxHash64) or `siphash_key` (16 bytes, keyed SipHash-2-4 for keys chosen by peers
    /// you do not trust) choose the hash family; `max_m` bounds the filter's bits (the memory the
    /// receiver gives it). Without `max_m` plans stay within a default receiver's limits
    /// (`DEFAULT_MAX_M` bits), and a target they cannot meet raises `PlanExceedsLimits`; a
    /// larger `max_m` allows larger filters, whose receivers decode with that `max_m`.
    /// `max_filter_bytes` bounds the receiver's memory for the filter, `ceil(m / 8)` bytes, as
    /// a receiver's limit of that name does (None: `ceil(max_m / 8)`). `max_memory` caps the
    /// same memory for the plan alone (the receivers' limits unchanged), `max_bits_per_element`
    /// caps m/n (memory bits a key, not bits on the wire); a plan a limit holds away from its
    /// optimum says so in `bent`. `churn` (a fraction in (0, 1]) has the plan give its delta
    /// frames at that churn in `delta`. Raises `OverBudget` when nothing fits,
    /// `InvalidParameter` for n = 0 or a cap that leaves no bits.
    fn plan(n, budget_bytes: u64, o) -> Plan {
        Ok(Plan {
            info: plan_info(o.plan(n, budget_bytes).into_py()?),
        })
    }
}

planning_function! {
    /// Plan the filter of `n` keys with the smallest frame whose false positive rate is at most
    /// `fpr` (in (0, 1)).
    ///
    /// The keyword arguments are those of `plan`. Raises `InvalidParameter` for n = 0, a rate
    /// outside (0, 1) or a rate that no allowed m reaches.
    fn plan_for_fpr(n, fpr: f64, o) -> Plan {
        Ok(Plan {
            info: plan_info(o.plan_for_fpr(n, fpr).into_py()?),
        })
    }
}

planning_function! {
    /// The plans to choose between for `n` keys at a false positive rate of at most `fpr`,
    /// bytes on the wire against memory: a list of `(memory_factor, plan)`, the memory-optimal
    /// plan first (the standard uncompressed filter's m, factor 1), then the plans with at most
    /// 2 and 4 times its memory, then the plan without a memory cap (factor None). Every plan
    /// meets `fpr`; a capped plan that its cap does not bend is left out. The keyword
    /// arguments are those of `plan_for_fpr` (they bound every plan).
    fn frontier(n, fpr: f64, o) -> Vec<(Option<u32>, Plan)> {
        Ok(o.frontier(n, fpr)
            .into_py()?
            .into_iter()
            .map(|p| {
                let info = plan_info(p.plan);
                (p.memory_factor, Plan { info })
            })
            .collect())
    }
}

/// The optimizer of a hash family with the largest m to plan for: `max_m` is the receiver's
/// memory for the filter, so above the default limits it raises them (m, and the payload
/// of the raw filter) for the plan; the plan's receivers decode with that `max_m`.
/// `max_filter_bytes` bounds that memory in bytes (`ceil(m / 8)`) as a receiver's limit
/// does; None derives it from m's limit, as the library does.
///
/// The other caps are the library's `Optimizer::max_memory`, `max_bits_per_element` and
/// `churn` (the churn to report deltas at).
#[allow(clippy::too_many_arguments)]
fn optimizer(
    seed: u64,
    siphash_key: Option<&Bound<'_, PyAny>>,
    max_m: Option<u64>,
    max_filter_bytes: Option<u64>,
    max_memory: Option<u64>,
    max_bits_per_element: Option<f64>,
    churn: Option<f64>,
) -> PyResult<Optimizer> {
    let mut o = Optimizer::new().family(family(seed, siphash_key)?);
    if let Some(bytes) = max_memory {
        o = o.max_memory(bytes);
    }
    if let Some(r) = max_bits_per_element {
        o = o.max_bits_per_element(r);
    }
    if let Some(c) = churn {
        o = o.churn(c);
    }
    let mut limits = Limits::default();
    if let Some(max_m) = max_m {
        o = o.max_m(max_m);
        limits = limits
            .max_m(max_m.max(limits.max_m))
            .max_payload(max_m.div_ceil(8).max(limits.max_payload));
    }
    if let Some(bytes) = max_filter_bytes {
        limits = limits.max_filter_bytes(bytes);
    }
    Ok(o.limits(limits))
}
