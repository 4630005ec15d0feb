//! The `bloomwire._bloomwire` extension module: Python classes over the bloomwire crate.
//!
//! Every call into the library goes through [`api`]; this file only converts between Python
//! objects and the library's values, and releases the GIL around the heavy work.

// `unsafe` is allowed in one module, `columns`, which reads Arrow and NumPy memory in place.
#![deny(unsafe_code)]

mod api;
mod columns;
mod errors;

use std::borrow::Cow;
use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyMemoryView, PyRange, PyString, PyTuple};

use api::{AnyFilter, FilterRef};
use errors::IntoPyResult;

/// Frames at least this long are decoded with the GIL released.
const DETACH_FRAME_BYTES: usize = 1 << 15;
/// Filters of at least this many bits (or counters) are encoded with the GIL released.
const DETACH_FILTER_BITS: u64 = 1 << 18;

// ---------------------------------------------------------------------------------------------
// Arguments

/// The bytes of a key: `bytes` borrowed, `str` as UTF-8, `bytearray` and `memoryview` copied.
fn key_bytes<'a>(key: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(b) = key.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    if let Ok(s) = key.cast::<PyString>() {
        return Ok(match s.to_cow()? {
            Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        });
    }
    owned_bytes(key, "a key").map(Cow::Owned)
}

/// A copy of a `bytearray` or `memoryview`.
fn owned_bytes(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u8>> {
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(b.to_vec());
    }
    if obj.cast::<PyMemoryView>().is_ok() {
        let b = obj.call_method0("tobytes")?;
        return Ok(b.cast::<PyBytes>()?.as_bytes().to_vec());
    }
    let ty = obj.get_type().name()?;
    Err(PyTypeError::new_err(format!(
        "{what} is bytes, str, bytearray or memoryview, not {ty}"
    )))
}

/// A frame's bytes: `bytes` borrowed (no copy), `bytearray` and `memoryview` copied.
enum FrameBytes<'py> {
    Shared(Bound<'py, PyBytes>),
    Owned(Vec<u8>),
}

impl FrameBytes<'_> {
    fn as_slice(&self) -> &[u8] {
        match self {
            FrameBytes::Shared(b) => b.as_bytes(),
            FrameBytes::Owned(v) => v,
        }
    }
}

fn frame_bytes<'py>(obj: &Bound<'py, PyAny>) -> PyResult<FrameBytes<'py>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(FrameBytes::Shared(b.clone()));
    }
    if obj.cast::<PyString>().is_ok() {
        return Err(PyTypeError::new_err(
            "a frame is bytes, bytearray or memoryview, not str",
        ));
    }
    owned_bytes(obj, "a frame").map(FrameBytes::Owned)
}

fn siphash_key(key: Option<&Bound<'_, PyAny>>) -> PyResult<Option<[u8; 16]>> {
    key.map(|k| {
        let bytes = key_bytes(k)?;
        <[u8; 16]>::try_from(bytes.as_ref())
            .map_err(|_| PyValueError::new_err("siphash_key is 16 bytes"))
    })
    .transpose()
}

fn family(seed: u64, key: Option<&Bound<'_, PyAny>>) -> PyResult<api::Family> {
    let key = siphash_key(key)?;
    if key.is_some() && seed != 0 {
        return Err(PyValueError::new_err(
            "give a seed (xxHash64) or a siphash_key (SipHash-2-4), not both",
        ));
    }
    Ok(api::family(seed, key))
}

/// The frame key of a `key=` argument: exactly 32 bytes (`bytes`, `bytearray` or
/// `memoryview`).
fn frame_key(key: Option<&Bound<'_, PyAny>>) -> PyResult<Option<api::Key>> {
    let Some(key) = key else {
        return Ok(None);
    };
    if key.cast::<PyString>().is_ok() {
        return Err(PyTypeError::new_err(
            "key is 32 bytes (bytes, bytearray or memoryview), not str",
        ));
    }
    let bytes: Cow<'_, [u8]> = match key.cast::<PyBytes>() {
        Ok(b) => Cow::Borrowed(b.as_bytes()),
        Err(_) => Cow::Owned(owned_bytes(key, "key").map_err(|_| key_type_error(key))?),
    };
    let bytes = <[u8; 32]>::try_from(bytes.as_ref())
        .map_err(|_| PyValueError::new_err(format!("key is 32 bytes, not {}", bytes.len())))?;
    Ok(Some(api::frame_key(bytes)))
}

fn key_type_error(key: &Bound<'_, PyAny>) -> PyErr {
    let ty = key
        .get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string());
    PyTypeError::new_err(format!(
        "key is 32 bytes (bytes, bytearray or memoryview), not {ty}"
    ))
}

/// Application metadata: bytes (`bytearray` and `memoryview` copied); empty is none.
fn metadata_bytes(metadata: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<u8>>> {
    let Some(m) = metadata else {
        return Ok(None);
    };
    if m.cast::<PyString>().is_ok() {
        return Err(PyTypeError::new_err(
            "metadata is bytes, bytearray or memoryview, not str (encode it)",
        ));
    }
    if let Ok(b) = m.cast::<PyBytes>() {
        return Ok(Some(b.as_bytes().to_vec()));
    }
    owned_bytes(m, "metadata").map(Some)
}

/// Settings of an encoder from the arguments of `encode` and `Sender`.
fn encoder_settings(
    coding: Option<&str>,
    budget: Option<usize>,
    metadata: Option<&Bound<'_, PyAny>>,
    key: Option<&Bound<'_, PyAny>>,
    profile: Option<&str>,
) -> PyResult<api::EncoderSettings> {
    Ok(api::encoder(coding, budget)
        .into_py()?
        .profile(profile)
        .into_py()?
        .metadata(metadata_bytes(metadata)?)
        .key(frame_key(key)?))
}

/// What a decoding function checks: its limits and its key.
fn checks(
    key: Option<&Bound<'_, PyAny>>,
    max_m: u64,
    max_k: u32,
    max_payload: u64,
    max_metadata: u64,
    max_filter_bytes: Option<u64>,
    profile: Option<&str>,
) -> PyResult<api::DecodeChecks> {
    let limits = api::limits(max_m, max_k, max_payload, max_metadata, max_filter_bytes);
    Ok(api::DecodeChecks::new(
        api::limits_of_profile(limits, profile).into_py()?,
        frame_key(key)?,
    ))
}

/// The function of `bloomwire._pickle` that loads a pickled object.
fn unpickler<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("bloomwire._pickle")?.getattr(name)
}

/// Run `f` with the GIL released when `big`.
fn maybe_detach<T, F>(py: Python<'_>, big: bool, f: F) -> T
where
    F: FnOnce() -> T + Send,
    T: Send,
{
    if big {
        py.detach(f)
    } else {
        f()
    }
}

fn to_pybytes<'py>(py: Python<'py>, frame: &api::Encoded) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, frame.len(), |buf| {
        frame.write_into(buf);
        Ok(())
    })
}

fn filter_object(
    py: Python<'_>,
    f: AnyFilter,
    header: Option<api::FrameInfo>,
) -> PyResult<Py<PyAny>> {
    let header = header.map(Arc::new);
    Ok(match f {
        AnyFilter::Bloom(inner) => Py::new(py, BloomFilter { inner, header })?.into_any(),
        AnyFilter::Counting(inner) => Py::new(py, CountingFilter { inner, header })?.into_any(),
    })
}

/// The result of a query of a column: a pyarrow `BooleanArray` for Arrow input, a NumPy
/// `bool` array for NumPy input; `flags` holds one byte (0 or 1) per value.
fn bool_column(py: Python<'_>, source: columns::Source, flags: &[u8]) -> PyResult<Py<PyAny>> {
    match source {
        columns::Source::NumPy => {
            let buf = PyByteArray::new(py, flags);
            let numpy = py.import("numpy")?;
            Ok(numpy
                .call_method1("frombuffer", (buf, numpy.getattr("bool_")?))?
                .unbind())
        }
        columns::Source::Arrow => {
            let mut bits = vec![0u8; flags.len().div_ceil(8)];
            for (i, &f) in flags.iter().enumerate() {
                bits[i / 8] |= f << (i % 8);
            }
            let pa = py.import("pyarrow")?;
            let buffer = pa.call_method1("py_buffer", (PyByteArray::new(py, &bits),))?;
            let buffers = PyList::new(py, [py.None().into_bound(py), buffer])?;
            let ty = pa.call_method0("bool_")?;
            Ok(pa
                .getattr("Array")?
                .call_method1("from_buffers", (ty, flags.len(), buffers))?
                .unbind())
        }
    }
}

/// Columns at least this long are hashed with the GIL released.
const DETACH_COLUMN_LEN: usize = 1 << 10;

// ---------------------------------------------------------------------------------------------
// Planning

/// A plan's figures as a pickle carries them: n, coding, fpr, expected bytes, worst-case
/// bytes, epsilon, bits per element, the table.
type PlanFigures = (u64, String, f64, f64, u64, f64, f64, String);

/// A planned filter: its m and k, and the false positive rate and frame size to expect.
///
/// Made by `plan` (a byte budget) and `plan_for_fpr` (a target rate). `new_filter()` and
/// `new_counting_filter()` build empty filters with the planned parameters.
#[pyclass(module = "bloomwire", frozen)]
struct Plan {
    info: api::PlanInfo,
}

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
        self.info.memory().sender
    }

    /// The memory of a sender of deltas, which keeps the generation it sent last beside
    /// its filter: `2 * ceil(m/8)` bytes.
    #[getter]
    fn delta_sender_bytes(&self) -> u64 {
        self.info.memory().delta_sender
    }

    /// The memory of a sender that keeps a counting filter (m counters of a byte each,
    /// whatever their width) and the bits it sent last: `m + ceil(m/8)` bytes.
    #[getter]
    fn counting_sender_bytes(&self) -> u64 {
        self.info.memory().counting_sender
    }

    /// The delta frames at the `churn` the plan was asked for: a dict of `changed`,
    /// `bytes` (expected) and `worst_case_bytes`; None without a churn (or for a plan
    /// restored from a pickle).
    #[getter]
    fn delta<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(d) = self.info.delta() else {
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
        let Some(b) = self.info.bent() else {
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
        self.info.chunked_build(worker_bytes)
    }

    /// An empty Bloom filter with the planned parameters (`AllocationFailed`, a
    /// `MemoryError`, when its bits cannot be allocated).
    fn new_filter(&self) -> PyResult<BloomFilter> {
        Ok(BloomFilter::of(
            api::new_filter(self.info.params.clone()).into_py()?,
        ))
    }

    /// An empty counting filter with the planned parameters and `width`-bit counters (1 to 8).
    #[pyo3(signature = (width = 4))]
    fn new_counting_filter(&self, width: u8) -> PyResult<CountingFilter> {
        Ok(CountingFilter::of(
            api::new_counting(self.info.params.clone(), width).into_py()?,
        ))
    }

    /// Plans compare equal when their parameters and figures do.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Plan>()
            .is_ok_and(|o| api::same_plan(&self.info, &o.get().info))
    }

    /// Pickled as its parameters (checked on load with the unpickling limits, as a frame's
    /// are) and its figures: nothing of the size of its filter is allocated either way.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let parts = api::params_parts(&self.info.params);
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
        parts: api::ParamParts,
        figures: PlanFigures,
        max_m: u64,
        max_k: u32,
        max_payload: u64,
        max_metadata: u64,
        max_filter_bytes: Option<u64>,
    ) -> PyResult<Self> {
        let limits = api::limits(max_m, max_k, max_payload, max_metadata, max_filter_bytes);
        let params = api::params_within(parts, &limits).into_py()?;
        Ok(Plan::restored(params, figures))
    }

    /// The plan of `filter`'s parameters with these figures (the unpickler of plans pickled
    /// as their empty filter's frame, before 0.4).
    #[staticmethod]
    fn _from_filter(filter: &BloomFilter, figures: PlanFigures) -> Self {
        Plan::restored(api::filter_params(&filter.inner).clone(), figures)
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

impl Plan {
    /// The plan of `params` with these figures.
    fn restored(params: bloomwire::Params, figures: PlanFigures) -> Self {
        let (n, coding, fpr, expected_bytes, worst_case_bytes, epsilon, bits_per_element, table) =
            figures;
        Plan {
            info: api::restore_plan(
                params,
                api::PlanFigures {
                    n,
                    coding,
                    fpr,
                    expected_bytes,
                    worst_case_bytes,
                    epsilon,
                    bits_per_element,
                    table,
                },
            ),
        }
    }
}

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
#[pyfunction]
#[pyo3(signature = (n, budget_bytes, *, seed = 0, siphash_key = None, max_m = None, max_filter_bytes = None, max_memory = None, max_bits_per_element = None, churn = None))]
#[allow(clippy::too_many_arguments)]
fn plan(
    n: u64,
    budget_bytes: u64,
    seed: u64,
    siphash_key: Option<&Bound<'_, PyAny>>,
    max_m: Option<u64>,
    max_filter_bytes: Option<u64>,
    max_memory: Option<u64>,
    max_bits_per_element: Option<f64>,
    churn: Option<f64>,
) -> PyResult<Plan> {
    let family = family(seed, siphash_key)?;
    let caps = api::Caps {
        max_memory,
        max_bits_per_element,
        churn,
    };
    Ok(Plan {
        info: api::plan(n, budget_bytes, family, max_m, max_filter_bytes, caps).into_py()?,
    })
}

/// Plan the filter of `n` keys with the smallest frame whose false positive rate is at most
/// `fpr` (in (0, 1)).
///
/// The keyword arguments are those of `plan`. Raises `InvalidParameter` for n = 0, a rate
/// outside (0, 1) or a rate that no allowed m reaches.
#[pyfunction]
#[pyo3(signature = (n, fpr, *, seed = 0, siphash_key = None, max_m = None, max_filter_bytes = None, max_memory = None, max_bits_per_element = None, churn = None))]
#[allow(clippy::too_many_arguments)]
fn plan_for_fpr(
    n: u64,
    fpr: f64,
    seed: u64,
    siphash_key: Option<&Bound<'_, PyAny>>,
    max_m: Option<u64>,
    max_filter_bytes: Option<u64>,
    max_memory: Option<u64>,
    max_bits_per_element: Option<f64>,
    churn: Option<f64>,
) -> PyResult<Plan> {
    let family = family(seed, siphash_key)?;
    let caps = api::Caps {
        max_memory,
        max_bits_per_element,
        churn,
    };
    Ok(Plan {
        info: api::plan_for_fpr(n, fpr, family, max_m, max_filter_bytes, caps).into_py()?,
    })
}

/// The plans to choose between for `n` keys at a false positive rate of at most `fpr`,
/// bytes on the wire against memory: a list of `(memory_factor, plan)`, the memory-optimal
/// plan first (the standard uncompressed filter's m, factor 1), then the plans with at most
/// 2 and 4 times its memory, then the plan without a memory cap (factor None). Every plan
/// meets `fpr`; a capped plan that its cap does not bend is left out. The keyword
/// arguments are those of `plan_for_fpr` (they bound every plan).
#[pyfunction]
#[pyo3(signature = (n, fpr, *, seed = 0, siphash_key = None, max_m = None, max_filter_bytes = None, max_memory = None, max_bits_per_element = None, churn = None))]
#[allow(clippy::too_many_arguments)]
fn frontier(
    n: u64,
    fpr: f64,
    seed: u64,
    siphash_key: Option<&Bound<'_, PyAny>>,
    max_m: Option<u64>,
    max_filter_bytes: Option<u64>,
    max_memory: Option<u64>,
    max_bits_per_element: Option<f64>,
    churn: Option<f64>,
) -> PyResult<Vec<(Option<u32>, Plan)>> {
    let family = family(seed, siphash_key)?;
    let caps = api::Caps {
        max_memory,
        max_bits_per_element,
        churn,
    };
    let plans = api::frontier(n, fpr, family, max_m, max_filter_bytes, caps).into_py()?;
    Ok(plans
        .into_iter()
        .map(|(factor, info)| (factor, Plan { info }))
        .collect())
}

// ---------------------------------------------------------------------------------------------
// Filters

/// A Bloom filter. Keys are `bytes` or `str` (hashed as UTF-8); `bytearray` and
/// `memoryview` work too.
///
/// `BloomFilter(m, k)` makes a standard filter of m bits and k hash functions;
/// `plan(...).new_filter()` one with planned parameters. `len(f)` is the number of keys
/// inserted (duplicates count). Filters compare equal when their parameters, bits and n do.
#[pyclass(module = "bloomwire")]
#[derive(Clone)]
struct BloomFilter {
    inner: api::Filter,
    /// The header of the frame the filter was decoded from.
    header: Option<Arc<api::FrameInfo>>,
}

impl BloomFilter {
    fn of(inner: api::Filter) -> Self {
        BloomFilter {
            inner,
            header: None,
        }
    }

    fn bits_m(&self) -> u64 {
        api::params_m(api::filter_params(&self.inner))
    }

    /// The frame a pickle carries: the default coding, untagged, generation 0.
    fn pickle_frame<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.encode(py, None, None, 0, None, None, false, None, None)
    }
}

#[pymethods]
impl BloomFilter {
    /// A standard Bloom filter of `m` bits and `k` hash functions, hashed with xxHash64 and
    /// `seed`, or keyed SipHash-2-4 with the 16-byte `siphash_key`. Raises
    /// `AllocationFailed` (a `MemoryError`) when the machine cannot hold m bits.
    #[new]
    #[pyo3(signature = (m, k, *, seed = 0, siphash_key = None))]
    fn new(m: u64, k: u32, seed: u64, siphash_key: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let params = api::standard_params(m, k, family(seed, siphash_key)?).into_py()?;
        Ok(BloomFilter::of(api::new_filter(params).into_py()?))
    }

    /// An empty filter with a plan's parameters (the same as `plan.new_filter()`).
    #[staticmethod]
    fn from_plan(plan: &Plan) -> PyResult<Self> {
        plan.new_filter()
    }

    /// A standard filter of `m` bits and `k` hash functions holding these packed bits
    /// (`ceil(m / 8)` bytes, bit i at `(bits[i // 8] >> (i % 8)) & 1`, the bits past m
    /// zero) and `n` keys.
    ///
    /// With `opaque=True` the bits are another library's, carried as they are (base hash 0,
    /// no seed): such a filter encodes, decodes, merges and sends deltas like any other,
    /// and refuses inserts and queries (`OpaqueHashFamily`), which only that library can
    /// answer; send its parameters in the frame's `metadata`. Otherwise the bits are a
    /// bloomwire filter's of the hash family of `seed` or `siphash_key`.
    #[staticmethod]
    #[pyo3(signature = (bits, m, k, *, n = 0, opaque = false, seed = 0, siphash_key = None))]
    fn from_bits(
        bits: &Bound<'_, PyAny>,
        m: u64,
        k: u32,
        n: u64,
        opaque: bool,
        seed: u64,
        siphash_key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let params = if opaque {
            if seed != 0 || siphash_key.is_some() {
                return Err(PyValueError::new_err(
                    "an opaque filter has no seed or siphash_key: its bits are another library's",
                ));
            }
            api::opaque_params(m, k)
        } else {
            api::standard_params(m, k, family(seed, siphash_key)?)
        }
        .into_py()?;
        if bits.cast::<PyString>().is_ok() {
            return Err(PyTypeError::new_err("bits are bytes, not str"));
        }
        let bytes = key_bytes(bits)?;
        Ok(BloomFilter::of(
            api::filter_from_bits(params, &bytes, n).into_py()?,
        ))
    }

    /// Add a key.
    fn insert(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        api::insert(&mut self.inner, &key_bytes(key)?).into_py()
    }

    /// Add every key of an iterable.
    fn insert_many(&mut self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        for key in keys.try_iter()? {
            api::insert(&mut self.inner, &key_bytes(&key?)?).into_py()?;
        }
        Ok(())
    }

    /// Add every value of a column: an Arrow array or chunked array (string, large_string,
    /// string_view, binary, large_binary, binary_view, fixed_size_binary, int8 to uint64)
    /// or a one-dimensional NumPy
    /// array (int8 to uint64, `S`), read in place and hashed with the GIL released. Each
    /// value is the key a scalar insert of it would be (integers as their little-endian
    /// bytes at the column's width); nulls are skipped.
    fn insert_array(&mut self, py: Python<'_>, values: &Bound<'_, PyAny>) -> PyResult<()> {
        let inner = &mut self.inner;
        columns::for_each_chunk(values, |col| {
            maybe_detach(py, col.len() >= DETACH_COLUMN_LEN, || {
                api::insert_keys(&mut *inner, col.present())
            })
            .into_py()
        })?;
        Ok(())
    }

    /// Whether the key may be in the set: False means certainly not. Raises
    /// `OpaqueHashFamily` for a filter of another library's bits (base hash 0).
    fn contains(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        api::contains(&self.inner, &key_bytes(key)?).into_py()
    }

    /// `contains` for every key of an iterable, as a list.
    fn contains_many<'py>(&self, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(keys.py());
        for key in keys.try_iter()? {
            out.append(api::contains(&self.inner, &key_bytes(&key?)?).into_py()?)?;
        }
        Ok(out)
    }

    /// `contains` for every value of a column (see `insert_array`), with the GIL released:
    /// a pyarrow `BooleanArray` for Arrow input, a NumPy `bool` array for NumPy input.
    /// A null is never in the set: False.
    fn contains_array(&self, py: Python<'_>, values: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let inner = &self.inner;
        let mut flags = Vec::new();
        let source = columns::for_each_chunk(values, |col| {
            maybe_detach(py, col.len() >= DETACH_COLUMN_LEN, || {
                flags.reserve(col.len());
                api::contains_keys(inner, col.keys(), |hit| flags.push(u8::from(hit)))
            })
            .into_py()
        })?;
        bool_column(py, source, &flags)
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.contains(key)
    }

    /// The number of keys inserted.
    fn __len__(&self) -> usize {
        api::filter_n(&self.inner) as usize
    }

    /// The number of keys inserted (the same as `len(f)`).
    #[getter]
    fn n(&self) -> u64 {
        api::filter_n(&self.inner)
    }

    /// Bits of the filter.
    #[getter]
    fn m(&self) -> u64 {
        self.bits_m()
    }

    /// Hash functions per key (a float: k may be rational).
    #[getter]
    fn k(&self) -> f64 {
        api::params_k(api::filter_params(&self.inner)).0
    }

    /// Whether the bits are another library's (the opaque hash family): inserts and
    /// queries raise `OpaqueHashFamily`.
    #[getter]
    fn opaque(&self) -> bool {
        api::is_opaque(&self.inner)
    }

    /// The header of the frame this filter was decoded from (metadata, tag status,
    /// restart flag, ...), as it was on the wire; None for a filter built here.
    #[getter]
    fn header(&self) -> Option<FrameInfo> {
        self.header.as_ref().map(|h| FrameInfo {
            info: h.as_ref().clone(),
        })
    }

    /// The fraction of bits that are zero.
    #[getter]
    fn fraction_of_zeros(&self) -> f64 {
        api::fraction_of_zeros(&self.inner)
    }

    /// The number of bits set.
    fn count_ones(&self) -> u64 {
        api::count_ones(&self.inner)
    }

    /// The digest of the bits (spec 5.1: CRC-32C of the packed bit array), as deltas name
    /// their base.
    fn digest(&self) -> u32 {
        api::digest(&self.inner)
    }

    /// The packed bit array: bit i is `(b[i // 8] >> (i % 8)) & 1`.
    fn bits<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &api::packed_bits(&self.inner))
    }

    /// Set in this filter every bit set in `other` (same parameters, else `Incompatible`);
    /// n becomes the sum, an upper bound of the keys the union holds (a key in both counts
    /// twice). The same as `self |= other`.
    fn union(&mut self, py: Python<'_>, other: &BloomFilter) -> PyResult<()> {
        let (inner, big) = (&mut self.inner, other.bits_m() >= DETACH_FILTER_BITS);
        maybe_detach(py, big, || api::union_with(inner, &other.inner)).into_py()
    }

    /// The union of two filters of the same parameters (else `Incompatible`), a new filter.
    fn __or__(&self, py: Python<'_>, other: PyRef<'_, BloomFilter>) -> PyResult<BloomFilter> {
        let mut out = BloomFilter::of(self.inner.clone());
        out.union(py, &other)?;
        Ok(out)
    }

    /// `other | self`: the union (which commutes).
    fn __ror__(&self, py: Python<'_>, other: PyRef<'_, BloomFilter>) -> PyResult<BloomFilter> {
        self.__or__(py, other)
    }

    /// `self |= other`: the union, in place.
    fn __ior__(&mut self, py: Python<'_>, other: PyRef<'_, BloomFilter>) -> PyResult<()> {
        self.union(py, &other)
    }

    /// Equal as sets: the same parameters and the same bits. n is not compared: it counts
    /// insertions (a union adds both counts), so `f | f == f` holds as for a set.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<BloomFilter>().is_ok_and(|o| {
            let o = &o.borrow().inner;
            o.params() == self.inner.params() && o.bits() == self.inner.bits()
        })
    }

    /// A copy of the filter.
    fn copy(&self) -> Self {
        self.clone()
    }

    fn __copy__(&self) -> Self {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        self.clone()
    }

    /// Pickled as its frame (the default coding: sparse filters cost their keys, not m),
    /// checked on load against the unpickling limits (see `unpickling_limits`).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let frame = self.pickle_frame(py)?;
        PyTuple::new(
            py,
            [
                unpickler(py, "load_bloom_filter")?,
                PyTuple::new(py, [frame])?.into_any(),
            ],
        )
    }

    /// The full frame of this filter, as `bytes`; see `encode`.
    #[pyo3(signature = (coding = None, *, budget = None, generation = 0, metadata = None, key = None, restart = false, chunk_shift = None, profile = None))]
    #[allow(clippy::too_many_arguments)]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        coding: Option<&str>,
        budget: Option<usize>,
        generation: u64,
        metadata: Option<&Bound<'py, PyAny>>,
        key: Option<&Bound<'py, PyAny>>,
        restart: bool,
        chunk_shift: Option<u8>,
        profile: Option<&str>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let settings =
            encoder_settings(coding, budget, metadata, key, profile)?.chunk_shift(chunk_shift);
        let inner = &self.inner;
        let big = self.bits_m() >= DETACH_FILTER_BITS;
        let frame = maybe_detach(py, big, || {
            api::encode(&settings, inner, generation, restart)
        })
        .into_py()?;
        to_pybytes(py, &frame)
    }

    fn __repr__(&self) -> String {
        format!(
            "BloomFilter({}, n={})",
            api::describe(api::filter_params(&self.inner)),
            api::filter_n(&self.inner)
        )
    }
}

/// A counting Bloom filter: a `width`-bit counter per position, so keys can be removed.
/// A saturated counter (2**width - 1) stays saturated.
#[pyclass(module = "bloomwire")]
#[derive(Clone)]
struct CountingFilter {
    inner: api::Counting,
    /// The header of the frame the filter was decoded from.
    header: Option<Arc<api::FrameInfo>>,
}

impl CountingFilter {
    fn of(inner: api::Counting) -> Self {
        CountingFilter {
            inner,
            header: None,
        }
    }

    fn counters_m(&self) -> u64 {
        api::params_m(api::counting_params(&self.inner))
    }
}

#[pymethods]
impl CountingFilter {
    /// A standard counting filter of `m` counters of `width` bits (1 to 8) and `k` hash
    /// functions; `seed` and `siphash_key` as for `BloomFilter`. Raises `AllocationFailed`
    /// (a `MemoryError`) when the machine cannot hold m counters (a byte each).
    #[new]
    #[pyo3(signature = (m, k, width = 4, *, seed = 0, siphash_key = None))]
    fn new(
        m: u64,
        k: u32,
        width: u8,
        seed: u64,
        siphash_key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let params = api::standard_params(m, k, family(seed, siphash_key)?).into_py()?;
        Ok(CountingFilter::of(
            api::new_counting(params, width).into_py()?,
        ))
    }

    /// An empty counting filter with a plan's parameters.
    #[staticmethod]
    #[pyo3(signature = (plan, width = 4))]
    fn from_plan(plan: &Plan, width: u8) -> PyResult<Self> {
        plan.new_counting_filter(width)
    }

    /// Add a key: increment its counters.
    fn insert(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        api::counting_insert(&mut self.inner, &key_bytes(key)?);
        Ok(())
    }

    /// Add every key of an iterable.
    fn insert_many(&mut self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        for key in keys.try_iter()? {
            api::counting_insert(&mut self.inner, &key_bytes(&key?)?);
        }
        Ok(())
    }

    /// Add every value of a column, as `BloomFilter.insert_array` (nulls skipped).
    fn insert_array(&mut self, py: Python<'_>, values: &Bound<'_, PyAny>) -> PyResult<()> {
        let inner = &mut self.inner;
        columns::for_each_chunk(values, |col| {
            maybe_detach(py, col.len() >= DETACH_COLUMN_LEN, || {
                api::counting_insert_keys(&mut *inner, col.present())
            });
            Ok(())
        })?;
        Ok(())
    }

    /// Remove a key: decrement its counters. Raises `InvalidParameter`, changing nothing,
    /// when the key is not in the filter (one of its counters is zero).
    fn remove(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        api::counting_remove(&mut self.inner, &key_bytes(key)?).into_py()
    }

    /// Whether the key may be in the set: False means certainly not.
    fn contains(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(api::counting_contains(&self.inner, &key_bytes(key)?))
    }

    /// `contains` for every value of a column, as `BloomFilter.contains_array`.
    fn contains_array(&self, py: Python<'_>, values: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let inner = &self.inner;
        let mut flags = Vec::new();
        let source = columns::for_each_chunk(values, |col| {
            maybe_detach(py, col.len() >= DETACH_COLUMN_LEN, || {
                flags.reserve(col.len());
                api::counting_contains_keys(inner, col.keys(), |hit| flags.push(u8::from(hit)))
            });
            Ok(())
        })?;
        bool_column(py, source, &flags)
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.contains(key)
    }

    /// The number of keys in the filter (inserted less removed).
    fn __len__(&self) -> usize {
        api::counting_n(&self.inner) as usize
    }

    /// The number of keys in the filter (the same as `len(f)`).
    #[getter]
    fn n(&self) -> u64 {
        api::counting_n(&self.inner)
    }

    /// Number of counters.
    #[getter]
    fn m(&self) -> u64 {
        self.counters_m()
    }

    /// Hash functions per key.
    #[getter]
    fn k(&self) -> f64 {
        api::params_k(api::counting_params(&self.inner)).0
    }

    /// Bits per counter.
    #[getter]
    fn width(&self) -> u8 {
        api::counting_width(&self.inner)
    }

    /// The header of the frame this filter was decoded from, as it was on the wire; None
    /// for a filter built here.
    #[getter]
    fn header(&self) -> Option<FrameInfo> {
        self.header.as_ref().map(|h| FrameInfo {
            info: h.as_ref().clone(),
        })
    }

    /// The counters, one byte each.
    fn counters<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, api::counters(&self.inner))
    }

    /// The counters packed `width` bits each, counter i from bit i * width.
    fn packed<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &api::packed_counters(&self.inner))
    }

    /// How many counters hold each value 0 .. 2**width - 1.
    fn histogram(&self) -> Vec<u64> {
        api::histogram(&self.inner)
    }

    /// The number of saturated counters.
    fn saturated(&self) -> usize {
        api::saturated(&self.inner)
    }

    /// The digest of the counters (spec 5.1), as deltas name their base.
    fn digest(&self) -> u32 {
        api::counting_digest(&self.inner)
    }

    /// The Bloom filter this one summarizes: bit i set where counter i is not zero.
    fn to_bloom_filter(&self) -> BloomFilter {
        BloomFilter::of(api::to_bloom(&self.inner))
    }

    /// Add `other`'s counters to this filter's, each sum saturating at 2**width - 1 (same
    /// parameters and width, else `Incompatible`): the counting filter of both multisets
    /// of keys. n becomes the sum. The same as `self |= other`.
    fn union(&mut self, py: Python<'_>, other: &CountingFilter) -> PyResult<()> {
        let (inner, big) = (
            &mut self.inner,
            other.counters_m() >= DETACH_FILTER_BITS / 8,
        );
        maybe_detach(py, big, || api::counting_add(inner, &other.inner)).into_py()
    }

    /// The union (counters added, saturating) of two counting filters, a new filter.
    fn __or__(&self, py: Python<'_>, other: PyRef<'_, CountingFilter>) -> PyResult<CountingFilter> {
        let mut out = CountingFilter::of(self.inner.clone());
        out.union(py, &other)?;
        Ok(out)
    }

    /// `other | self`: the union (which commutes).
    fn __ror__(
        &self,
        py: Python<'_>,
        other: PyRef<'_, CountingFilter>,
    ) -> PyResult<CountingFilter> {
        self.__or__(py, other)
    }

    /// `self |= other`: the union, in place.
    fn __ior__(&mut self, py: Python<'_>, other: PyRef<'_, CountingFilter>) -> PyResult<()> {
        self.union(py, &other)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<CountingFilter>()
            .is_ok_and(|o| o.borrow().inner == self.inner)
    }

    /// A copy of the filter.
    fn copy(&self) -> Self {
        self.clone()
    }

    fn __copy__(&self) -> Self {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
        self.clone()
    }

    /// Pickled as its frame, checked on load against the unpickling limits.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let frame = self.encode(py, None, None, 0, None, None, false, None)?;
        PyTuple::new(
            py,
            [
                unpickler(py, "load_counting_filter")?,
                PyTuple::new(py, [frame])?.into_any(),
            ],
        )
    }

    /// The full frame of this counting filter, as `bytes`; see `encode`.
    #[pyo3(signature = (coding = None, *, budget = None, generation = 0, metadata = None, key = None, restart = false, profile = None))]
    #[allow(clippy::too_many_arguments)]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        coding: Option<&str>,
        budget: Option<usize>,
        generation: u64,
        metadata: Option<&Bound<'py, PyAny>>,
        key: Option<&Bound<'py, PyAny>>,
        restart: bool,
        profile: Option<&str>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let settings = encoder_settings(coding, budget, metadata, key, profile)?;
        let inner = &self.inner;
        let big = self.counters_m() >= DETACH_FILTER_BITS / 8;
        let frame = maybe_detach(py, big, || {
            api::encode_counting(&settings, inner, generation, restart)
        })
        .into_py()?;
        to_pybytes(py, &frame)
    }

    fn __repr__(&self) -> String {
        format!(
            "CountingFilter({}, width={}, n={})",
            api::describe(api::counting_params(&self.inner)),
            api::counting_width(&self.inner),
            api::counting_n(&self.inner)
        )
    }
}

/// A `BloomFilter` or `CountingFilter` object, borrowed.
enum FilterBorrow<'a> {
    Bloom(PyRef<'a, BloomFilter>),
    Counting(PyRef<'a, CountingFilter>),
}

fn filter_ref<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<FilterBorrow<'a>> {
    if let Ok(f) = obj.cast::<BloomFilter>() {
        return Ok(FilterBorrow::Bloom(f.borrow()));
    }
    if let Ok(f) = obj.cast::<CountingFilter>() {
        return Ok(FilterBorrow::Counting(f.borrow()));
    }
    let ty = obj.get_type().name()?;
    Err(PyTypeError::new_err(format!(
        "expected a BloomFilter or a CountingFilter, not {ty}"
    )))
}

/// Run `f` on the library filter inside a `BloomFilter` or `CountingFilter` object, with its
/// size in bits.
fn with_filter<T>(obj: &Bound<'_, PyAny>, f: impl FnOnce(FilterRef<'_>, u64) -> T) -> PyResult<T> {
    Ok(match filter_ref(obj)? {
        FilterBorrow::Bloom(b) => f(
            FilterRef::Bloom(&b.inner),
            api::params_m(api::filter_params(&b.inner)),
        ),
        FilterBorrow::Counting(c) => f(
            FilterRef::Counting(&c.inner),
            8 * api::params_m(api::counting_params(&c.inner)),
        ),
    })
}

// ---------------------------------------------------------------------------------------------
// Encoding and decoding

/// The full frame of a `BloomFilter` or `CountingFilter`, as `bytes`.
///
/// With no `coding`, the crate's default choice: each coding's size predicted from counts,
/// then the fastest coding within 0.08% + 6 bytes of the smallest prediction (positional
/// for sparse filters, the table-driven codings for dense ones), coded once; with a coding
/// name (see `CODINGS`), that coding. Either way the raw frame is sent when compression
/// would not be smaller. `budget` raises `OverBudget` when the frame would be larger (the
/// tag counts); `generation` is the number the frame carries (0 outside a sender's
/// sequence).
///
/// `metadata` (bytes) rides in the header, covered by the checksum (decoders refuse more
/// than their `max_metadata`, 4 KiB by default); `key` (32 bytes) appends a keyed BLAKE2b
/// tag that receivers holding the key check before they read the payload; `restart` sets
/// the restart flag (the sender's numbering starts again with this frame).
///
/// `chunk_shift` (Bloom filters) codes the payload in chunks of `2**chunk_shift` bits
/// (6 to 47, fewer than m; spec 4.10) with a chunkable coding, the frame a build by chunks
/// (`ChunkedFrame`) assembles for the same coding and shift; None: the library's choice
/// (filters of 2**26 bits or more are chunked).
#[pyfunction]
#[pyo3(signature = (filter, coding = None, *, budget = None, generation = 0, metadata = None, key = None, restart = false, chunk_shift = None, profile = None))]
#[allow(clippy::too_many_arguments)]
fn encode<'py>(
    py: Python<'py>,
    filter: &Bound<'py, PyAny>,
    coding: Option<&str>,
    budget: Option<usize>,
    generation: u64,
    metadata: Option<&Bound<'py, PyAny>>,
    key: Option<&Bound<'py, PyAny>>,
    restart: bool,
    chunk_shift: Option<u8>,
    profile: Option<&str>,
) -> PyResult<Bound<'py, PyBytes>> {
    match filter_ref(filter)? {
        FilterBorrow::Bloom(f) => f.encode(
            py,
            coding,
            budget,
            generation,
            metadata,
            key,
            restart,
            chunk_shift,
            profile,
        ),
        FilterBorrow::Counting(f) => {
            if chunk_shift.is_some() {
                return Err(PyValueError::new_err(
                    "chunk_shift is for Bloom filters: counting filters' codings are not chunked",
                ));
            }
            f.encode(
                py, coding, budget, generation, metadata, key, restart, profile,
            )
        }
    }
}

/// Decode the one full Bloom filter frame `frame` holds (no trailing bytes).
///
/// Headers that claim more than `max_m` bits, `max_k` hash functions, `max_payload` bytes,
/// `max_metadata` bytes of metadata or a decoded filter of more than `max_filter_bytes`
/// bytes of memory (`ceil(m / 8)` for a Bloom filter, m for a counting filter: a byte a
/// counter; None, the default, is `ceil(max_m / 8)`, so raising `max_m` raises it) are
/// refused (`LimitExceeded`, whose `field` names the limit: "filter bytes" for the last)
/// before anything is allocated; memory that cannot be allocated within them is
/// `AllocationFailed`, a `MemoryError`. With a `key` (32 bytes) only frames tagged with it are accepted (`MissingTag`,
/// `BadTag`, checked before the payload is read); without one a tag is skipped and the
/// filter's `header.tag` says "unverified". Raises a `BloomwireError` subclass for every
/// malformed frame, `Incomplete` when the input ends early, `UnexpectedDelta` for a delta
/// and `UnexpectedFilterType` for a counting filter. The filter's `header` is the frame's.
#[pyfunction]
#[pyo3(signature = (frame, *, key = None, max_m = DEFAULT_MAX_M, max_k = DEFAULT_MAX_K, max_payload = DEFAULT_MAX_PAYLOAD, max_metadata = DEFAULT_MAX_METADATA, max_filter_bytes = None, profile = None))]
#[allow(clippy::too_many_arguments)]
fn decode(
    py: Python<'_>,
    frame: &Bound<'_, PyAny>,
    key: Option<&Bound<'_, PyAny>>,
    max_m: u64,
    max_k: u32,
    max_payload: u64,
    max_metadata: u64,
    max_filter_bytes: Option<u64>,
    profile: Option<&str>,
) -> PyResult<BloomFilter> {
    let checks = checks(
        key,
        max_m,
        max_k,
        max_payload,
        max_metadata,
        max_filter_bytes,
        profile,
    )?;
    let input = frame_bytes(frame)?;
    let bytes = input.as_slice();
    let big = bytes.len() >= DETACH_FRAME_BYTES;
    let (inner, header) = maybe_detach(py, big, || api::decode(bytes, &checks)).into_py()?;
    Ok(BloomFilter {
        inner,
        header: Some(Arc::new(header)),
    })
}

/// Decode the one full counting filter frame `frame` holds; keys, limits and errors as
/// `decode`.
#[pyfunction]
#[pyo3(signature = (frame, *, key = None, max_m = DEFAULT_MAX_M, max_k = DEFAULT_MAX_K, max_payload = DEFAULT_MAX_PAYLOAD, max_metadata = DEFAULT_MAX_METADATA, max_filter_bytes = None, profile = None))]
#[allow(clippy::too_many_arguments)]
fn decode_counting(
    py: Python<'_>,
    frame: &Bound<'_, PyAny>,
    key: Option<&Bound<'_, PyAny>>,
    max_m: u64,
    max_k: u32,
    max_payload: u64,
    max_metadata: u64,
    max_filter_bytes: Option<u64>,
    profile: Option<&str>,
) -> PyResult<CountingFilter> {
    let checks = checks(
        key,
        max_m,
        max_k,
        max_payload,
        max_metadata,
        max_filter_bytes,
        profile,
    )?;
    let input = frame_bytes(frame)?;
    let bytes = input.as_slice();
    let big = bytes.len() >= DETACH_FRAME_BYTES;
    let (inner, header) =
        maybe_detach(py, big, || api::decode_counting(bytes, &checks)).into_py()?;
    Ok(CountingFilter {
        inner,
        header: Some(Arc::new(header)),
    })
}

/// Decode any one frame: a `BloomFilter`, a `CountingFilter` or a `Delta`; keys, limits
/// and errors as `decode`.
#[pyfunction]
#[pyo3(signature = (frame, *, key = None, max_m = DEFAULT_MAX_M, max_k = DEFAULT_MAX_K, max_payload = DEFAULT_MAX_PAYLOAD, max_metadata = DEFAULT_MAX_METADATA, max_filter_bytes = None, profile = None))]
#[allow(clippy::too_many_arguments)]
fn decode_message(
    py: Python<'_>,
    frame: &Bound<'_, PyAny>,
    key: Option<&Bound<'_, PyAny>>,
    max_m: u64,
    max_k: u32,
    max_payload: u64,
    max_metadata: u64,
    max_filter_bytes: Option<u64>,
    profile: Option<&str>,
) -> PyResult<Py<PyAny>> {
    let checks = checks(
        key,
        max_m,
        max_k,
        max_payload,
        max_metadata,
        max_filter_bytes,
        profile,
    )?;
    let input = frame_bytes(frame)?;
    let bytes = input.as_slice();
    let big = bytes.len() >= DETACH_FRAME_BYTES;
    match maybe_detach(py, big, || api::decode_any(bytes, &checks)).into_py()? {
        api::Decoded::Full(f, header) => filter_object(py, f, Some(header)),
        api::Decoded::Delta(inner) => Ok(Py::new(py, Delta { inner })?.into_any()),
    }
}

/// Bytes of memory the calling thread keeps for its next encodes (frames' payloads and
/// the coders' scratch, reused so that a sender's next encode takes no fresh memory): at
/// most 64 MiB a thread.
#[pyfunction]
fn thread_scratch_bytes() -> usize {
    api::thread_scratch_bytes()
}

/// Give the memory the calling thread keeps for its next encodes back to the allocator,
/// and return how many bytes that was: for a thread that will encode no more for a while.
#[pyfunction]
fn release_thread_scratch() -> usize {
    api::release_thread_scratch()
}

/// The header of the frame at the start of `frame`, checked against the limits.
///
/// Without a `key` nothing else is read: the payload, the checksum and a tag are not
/// checked (use a decode function for that), and a tagged frame's `tag` is "unverified".
/// With a key the whole frame must be there: its length, checksum and tag are checked
/// (`MissingTag`, `BadTag`), not its payload, and `tag` is "verified".
#[pyfunction]
#[pyo3(signature = (frame, *, key = None, max_m = DEFAULT_MAX_M, max_k = DEFAULT_MAX_K, max_payload = DEFAULT_MAX_PAYLOAD, max_metadata = DEFAULT_MAX_METADATA, max_filter_bytes = None, profile = None))]
#[allow(clippy::too_many_arguments)]
fn frame_info(
    frame: &Bound<'_, PyAny>,
    key: Option<&Bound<'_, PyAny>>,
    max_m: u64,
    max_k: u32,
    max_payload: u64,
    max_metadata: u64,
    max_filter_bytes: Option<u64>,
    profile: Option<&str>,
) -> PyResult<FrameInfo> {
    let checks = checks(
        key,
        max_m,
        max_k,
        max_payload,
        max_metadata,
        max_filter_bytes,
        profile,
    )?;
    let input = frame_bytes(frame)?;
    let info = api::frame_info(input.as_slice(), &checks).into_py()?;
    Ok(FrameInfo { info })
}

/// A decoded delta frame: the XOR of two generations of a filter, to apply to the base.
#[pyclass(module = "bloomwire", frozen)]
struct Delta {
    inner: api::Delta,
}

#[pymethods]
impl Delta {
    /// The generation the delta produces.
    #[getter]
    fn generation(&self) -> u64 {
        self.inner.generation()
    }

    /// The generation the delta applies to.
    #[getter]
    fn base_generation(&self) -> u64 {
        self.inner.base_generation()
    }

    /// Whether it is a counting filter's delta.
    #[getter]
    fn counting(&self) -> bool {
        self.inner.is_counting()
    }

    /// The frame's header (metadata, tag status, ...).
    #[getter]
    fn header(&self) -> FrameInfo {
        FrameInfo {
            info: self.inner.info(),
        }
    }

    /// The XOR, packed like the filter's bits (or its counters, `width` bits each).
    fn xor<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.packed_xor())
    }

    /// The filter of the next generation: this delta applied to `base`, held as
    /// `base_generation`. `base` is unchanged. Raises `GenerationGap`, `Incompatible`,
    /// `BaseMismatch` or `ResultMismatch` when it does not apply.
    fn apply(
        &self,
        py: Python<'_>,
        base: &Bound<'_, PyAny>,
        base_generation: u64,
    ) -> PyResult<Py<PyAny>> {
        let result = with_filter(base, |f, _| self.inner.apply(f, base_generation))?;
        filter_object(py, result.into_py()?, None)
    }

    fn __repr__(&self) -> String {
        format!(
            "Delta(generation={}, base_generation={}, counting={})",
            self.inner.generation(),
            self.inner.base_generation(),
            if self.inner.is_counting() {
                "True"
            } else {
                "False"
            }
        )
    }
}

/// The header fields of a frame (see `frame_info`).
#[pyclass(module = "bloomwire", frozen)]
struct FrameInfo {
    info: api::FrameInfo,
}

#[pymethods]
impl FrameInfo {
    /// "full" or "delta".
    #[getter]
    fn kind(&self) -> &'static str {
        if self.info.delta() {
            "delta"
        } else {
            "full"
        }
    }

    /// Whether the frame carries a counting filter.
    #[getter]
    fn counting(&self) -> bool {
        self.info.counting()
    }

    /// The generation the frame carries (or a delta produces).
    #[getter]
    fn generation(&self) -> u64 {
        self.info.generation()
    }

    /// A delta's base generation, else None.
    #[getter]
    fn base_generation(&self) -> Option<u64> {
        self.info.base_generation()
    }

    /// Keys the sender inserted.
    #[getter]
    fn n(&self) -> u64 {
        self.info.n()
    }

    /// Bits (or counters) of the filter.
    #[getter]
    fn m(&self) -> u64 {
        self.info.m()
    }

    /// Hash functions per key.
    #[getter]
    fn k(&self) -> f64 {
        self.info.k()
    }

    /// "standard", "partitioned" or "blocks".
    #[getter]
    fn layout(&self) -> &'static str {
        self.info.layout()
    }

    /// The coding's name (see `CODINGS`).
    #[getter]
    fn coding(&self) -> String {
        self.info.coding()
    }

    /// A counting filter's counter width, else None.
    #[getter]
    fn counter_width(&self) -> Option<u8> {
        self.info.counter_width()
    }

    /// log2 of the bits per chunk of a chunked payload, else None.
    #[getter]
    fn chunk_shift(&self) -> Option<u8> {
        self.info.chunk_shift()
    }

    /// Header bytes.
    #[getter]
    fn header_len(&self) -> usize {
        self.info.header_len()
    }

    /// Payload bytes.
    #[getter]
    fn payload_len(&self) -> usize {
        self.info.payload_len()
    }

    /// Bytes of the whole frame, checksum and tag included.
    #[getter]
    fn frame_len(&self) -> usize {
        self.info.frame_len()
    }

    /// The base hash: "xxh64", "siphash24" or "opaque" (another library's bits, which
    /// bloomwire carries and does not query).
    #[getter]
    fn hash(&self) -> &'static str {
        self.info.hash()
    }

    /// The application metadata the sender attached, as bytes; None when there is none.
    #[getter]
    fn metadata<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.info.metadata().map(|m| PyBytes::new(py, m))
    }

    /// The authentication tag: "absent" (the frame has none), "unverified" (it has one, not
    /// checked: no key was given) or "verified" (checked with the key).
    #[getter]
    fn tag(&self) -> &'static str {
        self.info.tag()
    }

    /// The restart flag: the sender's numbering starts again with this full frame, and a
    /// receiver applies it whatever generation it holds.
    #[getter]
    fn restart(&self) -> bool {
        self.info.restart()
    }

    fn __repr__(&self) -> String {
        format!(
            "FrameInfo(kind={:?}, counting={}, generation={}, m={}, k={}, n={}, coding={:?}, tag={:?}, restart={}, frame_len={})",
            self.kind(),
            if self.info.counting() { "True" } else { "False" },
            self.info.generation(),
            self.info.m(),
            self.info.k(),
            self.info.n(),
            self.info.coding(),
            self.info.tag(),
            if self.info.restart() { "True" } else { "False" },
            self.info.frame_len()
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Generations

/// What a `Receiver` did with a frame: `kind` is "full" (the filter was replaced; `skipped`
/// generations were never seen) or "delta" (the filter advanced by one generation).
#[pyclass(module = "bloomwire", frozen)]
#[derive(Clone)]
struct Update {
    info: api::UpdateInfo,
    /// The header of the frame applied.
    header: api::FrameInfo,
}

#[pymethods]
impl Update {
    /// "full" or "delta".
    #[getter]
    fn kind(&self) -> &'static str {
        if self.info.full {
            "full"
        } else {
            "delta"
        }
    }

    /// Whether a full frame replaced the filter.
    #[getter]
    fn is_full(&self) -> bool {
        self.info.full
    }

    /// The receiver's new generation.
    #[getter]
    fn generation(&self) -> u64 {
        self.info.generation
    }

    /// Generations a full frame skipped (0 for a delta).
    #[getter]
    fn skipped(&self) -> u64 {
        self.info.skipped
    }

    /// The header of the frame applied (metadata, tag status, restart flag, ...).
    #[getter]
    fn header(&self) -> FrameInfo {
        FrameInfo {
            info: self.header.clone(),
        }
    }

    /// Updates compare equal when their kind, generation and skipped count do.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Update>()
            .is_ok_and(|o| o.get().info == self.info)
    }

    fn __repr__(&self) -> String {
        if self.info.full {
            format!(
                "Update(kind='full', generation={}, skipped={})",
                self.info.generation, self.info.skipped
            )
        } else {
            format!("Update(kind='delta', generation={})", self.info.generation)
        }
    }
}

/// Sends the generations of one filter (a `BloomFilter` or a `CountingFilter`): for each
/// call to `next_frame`, the smaller of a delta against the previous generation and a full
/// frame, and a full frame at least every `full_every` generations or after `request_full()`.
#[pyclass(module = "bloomwire")]
struct Sender {
    inner: api::Sender,
}

#[pymethods]
impl Sender {
    /// A sender with a full frame at least every `full_every` generations (1: always full);
    /// `coding`, `budget`, `metadata` (on every frame) and `key` (every frame tagged) as in
    /// `encode`. The first frame, periodic full frames and the one after `request_full()`
    /// carry the restart flag.
    #[new]
    #[pyo3(signature = (full_every = 100, *, coding = None, budget = None, metadata = None, key = None, profile = None))]
    fn new(
        full_every: u64,
        coding: Option<&str>,
        budget: Option<usize>,
        metadata: Option<&Bound<'_, PyAny>>,
        key: Option<&Bound<'_, PyAny>>,
        profile: Option<&str>,
    ) -> PyResult<Self> {
        let settings = encoder_settings(coding, budget, metadata, key, profile)?;
        Ok(Sender {
            inner: api::Sender::new(settings, full_every),
        })
    }

    /// A full frame of the generation sent last, numbered as that generation and carrying
    /// the restart flag, for one receiver that joins late or asks to resynchronize while
    /// the others keep taking deltas. The sender does not change; None before the first
    /// frame.
    fn full_frame<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let inner = &self.inner;
        match py.detach(|| inner.full_frame()) {
            None => Ok(None),
            Some(frame) => Ok(Some(to_pybytes(py, &frame.into_py()?)?)),
        }
    }

    /// The frame (`bytes`) of the next generation of `filter`. The sender keeps a copy of
    /// the filter to build the next delta; its generation advances only when a frame is
    /// returned. All calls pass the same kind of filter.
    fn next_frame<'py>(
        &mut self,
        py: Python<'py>,
        filter: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let sender = &mut self.inner;
        let frame = with_filter(filter, |f, bits| {
            maybe_detach(py, bits >= DETACH_FILTER_BITS, || sender.next_frame(f))
        })?
        .into_py()?;
        to_pybytes(py, &frame)
    }

    /// The frame (`bytes`) of the next generation of a `BloomFilter`, given as what changed
    /// since the generation sent last: the positions of the bits that flipped (a list of
    /// ints or a NumPy integer array; increasing, each once, below m) and the new
    /// generation's count of keys `n`. The frame is byte for byte the one `next_frame`
    /// makes for the filter with those bits flipped, and a delta costs what changed
    /// (the rest of the filter is never read), whatever m is; a full frame (smaller,
    /// periodic or requested) costs its coding. Raises `InvalidParameter` before the first
    /// frame (send the filter whole with `next_frame`) and for flips out of order,
    /// repeated or past m, `UnexpectedFilterType` for a sender of counting filters; the
    /// sender is then unchanged.
    fn next_frame_with_flips<'py>(
        &mut self,
        py: Python<'py>,
        flips: &Bound<'py, PyAny>,
        n: u64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let flips = flip_positions(flips)?;
        let sender = &mut self.inner;
        let big = flips.len() >= DETACH_POSITIONS;
        let frame = maybe_detach(py, big, || sender.next_frame_with_flips(&flips, n)).into_py()?;
        to_pybytes(py, &frame)
    }

    /// A copy of the generation sent last (the next delta's base: a `BloomFilter` or a
    /// `CountingFilter`), None before the first frame.
    #[getter]
    fn last_sent(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.inner
            .last_sent()
            .map(|f| {
                let owned = match f {
                    FilterRef::Bloom(b) => AnyFilter::Bloom(b.clone()),
                    FilterRef::Counting(c) => AnyFilter::Counting(c.clone()),
                };
                filter_object(py, owned, None)
            })
            .transpose()
    }

    /// Make the next frame a full one (a receiver asked to resynchronize).
    fn request_full(&mut self) {
        self.inner.request_full()
    }

    /// The generation of the last frame returned (0 before the first).
    #[getter]
    fn generation(&self) -> u64 {
        self.inner.generation()
    }
}

/// Bit positions from a NumPy integer array (copied out of it) or an iterable of ints.
fn flip_positions(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    if obj.hasattr("__array_interface__")? {
        return columns::numpy_positions(obj, |p| Ok(p.values().collect()));
    }
    if obj.cast::<PyString>().is_ok() || obj.cast::<PyBytes>().is_ok() {
        return Err(PyTypeError::new_err(
            "flips are a list of ints or a NumPy integer array, not bytes or str",
        ));
    }
    obj.try_iter()?
        .map(|p| {
            let p = p?;
            p.extract::<u64>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "a flipped bit's position is a non-negative int, not {}",
                    p.repr().map_or_else(|_| "?".into(), |r| r.to_string())
                ))
            })
        })
        .collect()
}

/// Sends the Bloom filter of a counting filter it owns, Summary Cache's way (Section V of
/// *Compressed Bloom Filters*): keys go in and out of the counting filter through it, and
/// each `next_frame` is a Bloom filter's frame (a delta when smaller, a full frame
/// periodically or on request) that a `Receiver` follows, made from the positions whose
/// counters left or reached zero since the last frame: a step costs what changed, whatever
/// the filter's size.
///
/// `SummarySender(counting, full_every=100, *, coding=None, budget=None, metadata=None,
/// key=None)` takes a copy of `counting` (a `CountingFilter`); the options are `Sender`'s
/// (a Bloom filter's coding).
#[pyclass(module = "bloomwire")]
struct SummarySender {
    inner: api::SummarySender,
}

#[pymethods]
impl SummarySender {
    #[new]
    #[pyo3(signature = (counting, full_every = 100, *, coding = None, budget = None, metadata = None, key = None, profile = None))]
    fn new(
        counting: &CountingFilter,
        full_every: u64,
        coding: Option<&str>,
        budget: Option<usize>,
        metadata: Option<&Bound<'_, PyAny>>,
        key: Option<&Bound<'_, PyAny>>,
        profile: Option<&str>,
    ) -> PyResult<Self> {
        let settings = encoder_settings(coding, budget, metadata, key, profile)?;
        Ok(SummarySender {
            inner: api::SummarySender::new(counting.inner.clone(), &settings, full_every)
                .into_py()?,
        })
    }

    /// Add a key: increment its counters (a counter leaving zero sets its bit).
    fn insert(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.insert(std::iter::once(key_bytes(key)?.as_ref()));
        Ok(())
    }

    /// Add every key of an iterable.
    fn insert_many(&mut self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        for key in keys.try_iter()? {
            self.inner
                .insert(std::iter::once(key_bytes(&key?)?.as_ref()));
        }
        Ok(())
    }

    /// Add every value of a column, as `BloomFilter.insert_array` (nulls skipped).
    fn insert_array(&mut self, py: Python<'_>, values: &Bound<'_, PyAny>) -> PyResult<()> {
        let inner = &mut self.inner;
        columns::for_each_chunk(values, |col| {
            maybe_detach(py, col.len() >= DETACH_COLUMN_LEN, || {
                inner.insert(col.present())
            });
            Ok(())
        })?;
        Ok(())
    }

    /// Remove a key: decrement its counters (a counter reaching zero clears its bit).
    /// Raises `InvalidParameter`, changing nothing, when the key is not in the filter.
    fn remove(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.remove(&key_bytes(key)?).into_py()
    }

    /// Remove every key of an iterable, one after the other (an error stops there: the keys
    /// before it are removed).
    fn remove_many(&mut self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        for key in keys.try_iter()? {
            self.inner.remove(&key_bytes(&key?)?).into_py()?;
        }
        Ok(())
    }

    /// Whether the key may be in the set.
    fn contains(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.inner.contains(&key_bytes(key)?))
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.contains(key)
    }

    /// The number of keys in the counting filter (inserted less removed).
    fn __len__(&self) -> usize {
        api::counting_n(self.inner.filter()) as usize
    }

    /// The frame (`bytes`) of the next generation of the counting filter's Bloom filter:
    /// the first one whole, then from the bits whose counters left or reached zero since
    /// the last frame (byte for byte what a `Sender` makes of `filter.to_bloom_filter()`).
    /// On an error nothing changes, and the next call tries again.
    fn next_frame<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let inner = &mut self.inner;
        let big = api::counters(inner.filter()).len() as u64 >= DETACH_FILTER_BITS;
        let frame = maybe_detach(py, big, || inner.next_frame()).into_py()?;
        to_pybytes(py, &frame)
    }

    /// A full frame of the generation sent last, numbered as it and carrying the restart
    /// flag, for one receiver that joins late; None before the first frame.
    fn full_frame<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let inner = &self.inner;
        match py.detach(|| inner.full_frame()) {
            None => Ok(None),
            Some(frame) => Ok(Some(to_pybytes(py, &frame.into_py()?)?)),
        }
    }

    /// Make the next frame a full one (a receiver asked to resynchronize).
    fn request_full(&mut self) {
        self.inner.request_full()
    }

    /// The generation of the last frame returned (0 before the first).
    #[getter]
    fn generation(&self) -> u64 {
        self.inner.generation()
    }

    /// A copy of the counting filter.
    #[getter]
    fn filter(&self) -> CountingFilter {
        CountingFilter::of(self.inner.filter().clone())
    }

    fn __repr__(&self) -> String {
        format!(
            "SummarySender({}, n={}, generation={})",
            api::describe(api::counting_params(self.inner.filter())),
            api::counting_n(self.inner.filter()),
            self.inner.generation()
        )
    }
}

/// Applies a `Sender`'s frames in order. On any error its filter and generation stay as they
/// were: `GenerationGap`, `BaseMismatch` and `ResultMismatch` (all `ResyncNeeded`) mean it
/// needs a full frame, `StaleGeneration` that the frame was a duplicate or came late. It
/// holds the filter kind of the first frame it accepts (`UnexpectedFilterType` for the
/// other kind).
#[pyclass(module = "bloomwire")]
struct Receiver {
    inner: api::Receiver,
}

#[pymethods]
impl Receiver {
    /// A receiver with no filter yet, decoding within the limits (see `decode`). With a
    /// `key` (32 bytes) it accepts only frames tagged with that key: an untagged frame is
    /// `MissingTag`, a forged or altered one `BadTag`, both refused before the payload is
    /// read and before any generation rule.
    #[new]
    #[pyo3(signature = (*, key = None, max_m = DEFAULT_MAX_M, max_k = DEFAULT_MAX_K, max_payload = DEFAULT_MAX_PAYLOAD, max_metadata = DEFAULT_MAX_METADATA, max_filter_bytes = None, profile = None))]
    fn new(
        key: Option<&Bound<'_, PyAny>>,
        max_m: u64,
        max_k: u32,
        max_payload: u64,
        max_metadata: u64,
        max_filter_bytes: Option<u64>,
        profile: Option<&str>,
    ) -> PyResult<Self> {
        let limits = api::limits(max_m, max_k, max_payload, max_metadata, max_filter_bytes);
        let limits = api::limits_of_profile(limits, profile).into_py()?;
        Ok(Receiver {
            inner: api::Receiver::new(limits, frame_key(key)?),
        })
    }

    /// Decode and apply one frame (exactly one, no trailing bytes); returns an `Update`,
    /// whose `header` is the frame's.
    fn receive(&mut self, py: Python<'_>, frame: &Bound<'_, PyAny>) -> PyResult<Update> {
        let input = frame_bytes(frame)?;
        let bytes = input.as_slice();
        let receiver = &mut self.inner;
        let big = bytes.len() >= DETACH_FRAME_BYTES;
        let (info, header) = maybe_detach(py, big, || receiver.receive(bytes)).into_py()?;
        Ok(Update { info, header })
    }

    /// Apply a filter or delta decoded elsewhere (by `decode`, `decode_counting` or
    /// `decode_message`: a `BloomFilter`, `CountingFilter` or `Delta` whose `header` is its
    /// frame's) by the rules of `receive`, and return the `Update`. The filter is applied as
    /// it is now, and copied; a filter built here has no frame (`ValueError`: encode it and
    /// `receive` the frame). A receiver with a `key` applies only what was decoded with that
    /// key: an untagged frame's message is `MissingTag`, one decoded without the key (its
    /// tag skipped) or with another key `TagNotVerified`. On any error nothing changes.
    fn apply(&mut self, py: Python<'_>, message: &Bound<'_, PyAny>) -> PyResult<Update> {
        let receiver = &mut self.inner;
        let (info, header) = if let Ok(delta) = message.cast::<Delta>() {
            let delta = &delta.get().inner;
            let bits = delta.m() * if delta.is_counting() { 8 } else { 1 };
            maybe_detach(py, bits >= DETACH_FILTER_BITS, || {
                receiver.apply_delta(delta)
            })
        } else {
            let unframed = || {
                PyValueError::new_err(
                    "this filter was not decoded from a frame: encode it and receive the frame",
                )
            };
            match filter_ref(message).map_err(|_| {
                PyTypeError::new_err(format!(
                    "expected a BloomFilter, a CountingFilter or a Delta, not {}",
                    message
                        .get_type()
                        .name()
                        .map_or("?".into(), |n| n.to_string())
                ))
            })? {
                FilterBorrow::Bloom(b) => {
                    let (inner, big) = (&b.inner, b.bits_m() >= DETACH_FILTER_BITS);
                    let header = b.header.as_deref().ok_or_else(unframed)?;
                    maybe_detach(py, big, || {
                        receiver.apply_filter(FilterRef::Bloom(inner), header)
                    })
                }
                FilterBorrow::Counting(c) => {
                    let (inner, big) = (&c.inner, c.counters_m() >= DETACH_FILTER_BITS / 8);
                    let header = c.header.as_deref().ok_or_else(unframed)?;
                    maybe_detach(py, big, || {
                        receiver.apply_filter(FilterRef::Counting(inner), header)
                    })
                }
            }
        }
        .into_py()?;
        Ok(Update { info, header })
    }

    /// A copy of the current filter (`BloomFilter` or `CountingFilter`), None before the
    /// first full frame.
    #[getter]
    fn filter(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.inner
            .filter()
            .map(|f| filter_object(py, f.clone(), None))
            .transpose()
    }

    /// The current generation, None before the first full frame.
    #[getter]
    fn generation(&self) -> Option<u64> {
        self.inner.generation()
    }
}

// ---------------------------------------------------------------------------------------------
// Building by chunk (spec 4.10)

/// Positions at least this many are set (or grouped) with the GIL released.
const DETACH_POSITIONS: usize = 1 << 14;

/// A one-dimensional NumPy array of `values`, each written as `W` little-endian bytes by
/// `to_le` (`dtype` says which: `<u4`, `<u8`), over a `bytearray` it owns.
fn numpy_array_of<T: Copy, const W: usize>(
    py: Python<'_>,
    values: &[T],
    dtype: &str,
    to_le: impl Fn(T) -> [u8; W],
) -> PyResult<Py<PyAny>> {
    let buf = PyByteArray::new_with(py, values.len() * W, |buf| {
        for (out, &v) in buf.chunks_exact_mut(W).zip(values) {
            out.copy_from_slice(&to_le(v));
        }
        Ok(())
    })?;
    let numpy = py.import("numpy").map_err(|e| {
        pyo3::exceptions::PyImportError::new_err(format!(
            "bit positions are returned as NumPy arrays: install numpy ({e})"
        ))
    })?;
    Ok(numpy.call_method1("frombuffer", (buf, dtype))?.unbind())
}

fn u64_array(py: Python<'_>, values: &[u64]) -> PyResult<Py<PyAny>> {
    numpy_array_of(py, values, "<u8", u64::to_le_bytes)
}

/// The parameters of a `Plan`, a `BloomFilter`, a `CountingFilter` or an `Indexer`.
fn params_of(obj: &Bound<'_, PyAny>) -> PyResult<bloomwire::Params> {
    if let Ok(p) = obj.cast::<Plan>() {
        return Ok(p.get().info.params.clone());
    }
    if let Ok(i) = obj.cast::<Indexer>() {
        return Ok(i.get().inner.params().clone());
    }
    if let Ok(f) = obj.cast::<BloomFilter>() {
        return Ok(api::filter_params(&f.borrow().inner).clone());
    }
    if let Ok(f) = obj.cast::<CountingFilter>() {
        return Ok(api::counting_params(&f.borrow().inner).clone());
    }
    let ty = obj.get_type().name()?;
    Err(PyTypeError::new_err(format!(
        "expected a Plan, a BloomFilter, a CountingFilter or an Indexer (the filter's \
         parameters), not {ty}"
    )))
}

/// Every bit position of the keys `keys` holds (an Arrow or NumPy column read in place
/// with the GIL released, nulls skipped; or an iterable of str and bytes), appended to
/// `out`; the number of keys.
fn key_positions(
    py: Python<'_>,
    indexer: &api::Indexer,
    keys: &Bound<'_, PyAny>,
    out: &mut Vec<u64>,
) -> PyResult<u64> {
    let column = keys.hasattr("__arrow_c_array__")?
        || keys.hasattr("__arrow_c_stream__")?
        || keys.hasattr("__array_interface__")?;
    let mut count = 0;
    if column {
        columns::for_each_chunk(keys, |col| {
            count += maybe_detach(py, col.len() >= DETACH_COLUMN_LEN, || {
                indexer.positions(col.present(), &mut *out)
            });
            Ok(())
        })?;
    } else {
        if keys.cast::<PyString>().is_ok() || keys.cast::<PyBytes>().is_ok() {
            return Err(PyTypeError::new_err(
                "keys are an iterable of keys or a column, not one key: pass [key]",
            ));
        }
        for key in keys.try_iter()? {
            count += indexer.positions(std::iter::once(key_bytes(&key?)?.as_ref()), out);
        }
    }
    Ok(count)
}

/// The bit positions of keys under one filter's parameters, without the filter: what a
/// worker sends the owners of a large filter's chunks (see `ChunkedFrame`).
///
/// `Indexer(plan)` (or a `BloomFilter`, `CountingFilter`): `positions(keys)` gives the bits
/// `insert` sets for each key, the same hashing. Pickled as the parameters alone (a few
/// dozen bytes, whatever m is). Another library's parameters (the opaque hash family) are
/// `OpaqueHashFamily`.
#[pyclass(module = "bloomwire", frozen)]
struct Indexer {
    inner: api::Indexer,
}

#[pymethods]
impl Indexer {
    /// The indexer of the filter of a `Plan`, a `BloomFilter` or a `CountingFilter`.
    #[new]
    fn new(filter: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Indexer {
            inner: api::Indexer::new(params_of(filter)?).into_py()?,
        })
    }

    /// Bits of the filter.
    #[getter]
    fn m(&self) -> u64 {
        api::params_m(self.inner.params())
    }

    /// Hash functions per key.
    #[getter]
    fn k(&self) -> f64 {
        api::params_k(self.inner.params()).0
    }

    /// The bit positions of every key, key after key (each key's as `insert` sets them), as
    /// a NumPy `uint64` array. `keys` is an Arrow or NumPy column (read in place, hashed
    /// with the GIL released, nulls skipped; keys as `insert_array` reads them) or an
    /// iterable of str and bytes (as `insert_many`). A key may give fewer distinct
    /// positions than k (two hash functions on one bit).
    fn positions(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let mut out = Vec::new();
        key_positions(py, &self.inner, keys, &mut out)?;
        u64_array(py, &out)
    }

    /// The keys' bit positions grouped by chunk of `2**shift` bits: a tuple `(keys,
    /// chunks, offsets, positions)`: the number of keys, the chunks that hold any position
    /// (increasing, `uint64`), `len(chunks) + 1` offsets (`uint64`) and the positions
    /// relative to their chunk's first bit, chunk after chunk (`uint32` when `shift <= 32`,
    /// else `uint64`): chunk `chunks[j]` has `positions[offsets[j]:offsets[j + 1]]`.
    /// The keys as in `positions`; the shift as in `ChunkedFrame`.
    fn positions_by_chunk<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        shift: u8,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let m = api::params_m(self.inner.params());
        api::chunks_of(m, shift).into_py()?;
        let mut positions = Vec::new();
        let count = key_positions(py, &self.inner, keys, &mut positions)?;
        let big = positions.len() >= DETACH_POSITIONS;
        let grouped =
            maybe_detach(py, big, || api::group_by_chunk(&positions, m, shift)).into_py()?;
        drop(positions);
        let relative = if shift <= 32 {
            // Below 2^shift <= 2^32: each fits 32 bits.
            numpy_array_of(py, &grouped.relative, "<u4", |v| (v as u32).to_le_bytes())?
        } else {
            u64_array(py, &grouped.relative)?
        };
        PyTuple::new(
            py,
            [
                count.into_pyobject(py)?.into_any().unbind(),
                u64_array(py, &grouped.chunks)?,
                u64_array(py, &grouped.offsets)?,
                relative,
            ],
        )
    }

    /// Indexers compare equal when their parameters do.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Indexer>()
            .is_ok_and(|o| o.get().inner.params() == self.inner.params())
    }

    /// Pickled as its parameters.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let parts = api::params_parts(slf.get().inner.params());
        let from_parts = slf.get_type().getattr("_from_parts")?;
        PyTuple::new(
            slf.py(),
            [
                from_parts,
                PyTuple::new(slf.py(), [parts.into_pyobject(slf.py())?])?.into_any(),
            ],
        )
    }

    /// The indexer of these parameters (the unpickler's).
    #[staticmethod]
    fn _from_parts(parts: api::ParamParts) -> PyResult<Self> {
        let params = api::params_from_parts(parts).into_py()?;
        Ok(Indexer {
            inner: api::Indexer::new(params).into_py()?,
        })
    }

    fn __repr__(&self) -> String {
        format!("Indexer({})", api::describe(self.inner.params()))
    }
}

/// Set the bits of the positions `positions` holds in `chunk`: a NumPy integer array (read
/// in place, with the GIL released when large), an int, or an iterable of ints and arrays
/// (the pieces a shuffle delivers). Each array is checked before its bits are set.
fn add_positions(
    py: Python<'_>,
    chunk: &mut api::Chunk,
    positions: &Bound<'_, PyAny>,
    relative: bool,
) -> PyResult<()> {
    let array = |chunk: &mut api::Chunk, obj: &Bound<'_, PyAny>| {
        columns::numpy_positions(obj, |p| {
            maybe_detach(py, p.len() >= DETACH_POSITIONS, || {
                chunk.set(p.values(), relative)
            })
            .into_py()
        })
    };
    if positions.hasattr("__array_interface__")? {
        return array(chunk, positions);
    }
    if let Ok(p) = positions.extract::<u64>() {
        return chunk.set(std::iter::once(p), relative).into_py();
    }
    if positions.cast::<PyString>().is_ok()
        || positions.cast::<PyBytes>().is_ok()
        || positions.cast::<PyByteArray>().is_ok()
    {
        return Err(PyTypeError::new_err(
            "bit positions are a NumPy integer array, an int, or an iterable of ints and \
             arrays, not bytes or str (numpy.frombuffer(b, '<u4') reads packed ones)",
        ));
    }
    let mut buffer: Vec<u64> = Vec::new();
    for item in positions.try_iter()? {
        let item = item?;
        if item.hasattr("__array_interface__")? {
            chunk.set(buffer.iter().copied(), relative).into_py()?;
            buffer.clear();
            array(chunk, &item)?;
        } else {
            buffer.push(item.extract::<u64>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "a bit position is a non-negative int or an integer array, not {}",
                    item.repr().map_or_else(|_| "?".into(), |r| r.to_string())
                ))
            })?);
        }
    }
    let big = buffer.len() >= DETACH_POSITIONS;
    maybe_detach(py, big, || chunk.set(buffer.iter().copied(), relative)).into_py()
}

/// One chunk of a filter built by chunks: bits `range` of a filter of `m` bits in chunks of
/// `2**shift` bits, set from the positions of the keys' bits that land there (`add`), then
/// counted (`count_ones`, the first phase) and coded with the frame-wide choices
/// (`encode(frame)`, the second). It holds `2**shift` bits, never the filter's m.
///
/// Pickled as its packed bits.
#[pyclass(module = "bloomwire")]
#[derive(Clone)]
struct Chunk {
    inner: api::Chunk,
}

#[pymethods]
impl Chunk {
    /// Chunk `index` of a filter of `m` bits in chunks of `2**shift` bits, all zero.
    /// `InvalidParameter` for a shift outside 6 to 47 or not below m, or an index past the
    /// last chunk; `AllocationFailed` (a `MemoryError`) when its bits cannot be allocated.
    #[new]
    fn new(m: u64, shift: u8, index: u64) -> PyResult<Self> {
        Ok(Chunk {
            inner: api::Chunk::new(m, shift, index).into_py()?,
        })
    }

    /// The chunk's index.
    #[getter]
    fn index(&self) -> u64 {
        self.inner.shape().2
    }

    /// Bits of the whole filter.
    #[getter]
    fn m(&self) -> u64 {
        self.inner.shape().0
    }

    /// log2 of the bits of a chunk (the last may have fewer).
    #[getter]
    fn shift(&self) -> u8 {
        self.inner.shape().1
    }

    /// The bits of the filter this chunk holds, a `range`.
    #[getter]
    fn range<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyRange>> {
        range_of(py, self.inner.range())
    }

    /// Set the bit of every position: a NumPy integer array (read in place, with the GIL
    /// released), an int, or an iterable of ints and arrays (a shuffle's pieces), in any
    /// order, repeats allowed. Positions count from the filter's first bit, or from the
    /// chunk's with `relative=True`. A position outside the chunk is `InvalidParameter`,
    /// and the array (or the ints) holding it sets nothing.
    #[pyo3(signature = (positions, *, relative = false))]
    fn add(
        &mut self,
        py: Python<'_>,
        positions: &Bound<'_, PyAny>,
        relative: bool,
    ) -> PyResult<()> {
        add_positions(py, &mut self.inner, positions, relative)
    }

    /// The number of bits set: summed over the chunks, the `ones` of the `ChunkedFrame`.
    fn count_ones(&self) -> u64 {
        self.inner.ones()
    }

    /// The chunk's payload in `frame`, a `ChunkedFrame` of the same m and shift (else
    /// `InvalidParameter`), coded with the GIL released.
    fn encode<'py>(&self, py: Python<'py>, frame: &ChunkedFrame) -> PyResult<Bound<'py, PyBytes>> {
        let (chunk, plan) = (&self.inner, &frame.inner);
        let payload = py.detach(|| chunk.encode(plan)).into_py()?;
        Ok(PyBytes::new(py, &payload))
    }

    /// The packed bits of the chunk: its bit i is `(b[i // 8] >> (i % 8)) & 1`.
    fn bits<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.packed())
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Chunk>().is_ok_and(|o| {
            let o = o.borrow();
            o.inner.shape() == self.inner.shape() && o.inner.packed() == self.inner.packed()
        })
    }

    /// Pickled as its shape and packed bits.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let this = slf.borrow();
        let (m, shift, index) = this.inner.shape();
        let bits = PyBytes::new(py, &this.inner.packed());
        let args = (m, shift, index, bits).into_pyobject(py)?;
        PyTuple::new(py, [slf.get_type().getattr("_from_bits")?, args.into_any()])
    }

    /// The chunk of these packed bits (the unpickler's).
    #[staticmethod]
    fn _from_bits(m: u64, shift: u8, index: u64, bits: &Bound<'_, PyBytes>) -> PyResult<Self> {
        Ok(Chunk {
            inner: api::Chunk::from_packed(m, shift, index, bits.as_bytes()).into_py()?,
        })
    }

    fn __repr__(&self) -> String {
        let (m, shift, index) = self.inner.shape();
        let r = self.inner.range();
        format!(
            "Chunk(index={index}, bits={}..{}, m={m}, shift={shift})",
            r.start, r.end
        )
    }
}

fn range_of(py: Python<'_>, r: std::ops::Range<u64>) -> PyResult<Bound<'_, PyRange>> {
    let at = |v: u64| {
        isize::try_from(v).map_err(|_| PyValueError::new_err("a bit index beyond this platform"))
    };
    PyRange::new(py, at(r.start)?, at(r.end)?)
}

/// A chunked frame written a chunk at a time (spec 4.10), for a filter larger than one
/// machine: its chunks are built and coded where their bits are, and the frame is
/// assembled from their payloads without decoding them, byte for byte the frame one
/// process encodes for the whole filter with the same coding and chunk shift
/// (`f.encode(coding, chunk_shift=shift)`).
///
/// `ChunkedFrame(params, n, ones, shift, coding)`: the frame-wide choices of a filter of the
/// parameters of `params` (a `Plan`, `BloomFilter` or `Indexer`) holding `n` keys and `ones`
/// one bits (the sum of its chunks' `count_ones()`), in chunks of `2**shift` bits, coded
/// with `coding` (chunkable: adaptive, known-p, known-p-symbols, known-p-interleaved,
/// positional or wide; or "auto", the library's choice from n and ones, the one
/// `encode(chunk_shift=shift)` of the whole filter makes); `metadata`, `key`, `budget` and
/// `profile` as in `encode`. Pickled with everything it was made with (the key too); a chunk's payload does
/// not depend on n, the metadata or the key.
#[pyclass(module = "bloomwire", frozen)]
struct ChunkedFrame {
    inner: api::ChunkPlan,
}

#[pymethods]
impl ChunkedFrame {
    /// Raises `InvalidParameter` for a coding that is not chunked or not in the profile, a
    /// shift outside 6 to 47 or not below m, or more ones than bits.
    #[new]
    #[pyo3(signature = (params, n, ones, shift, coding, *, metadata = None, key = None, budget = None, generation = 0, profile = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        params: &Bound<'_, PyAny>,
        n: u64,
        ones: u64,
        shift: u8,
        coding: &str,
        metadata: Option<&Bound<'_, PyAny>>,
        key: Option<&Bound<'_, PyAny>>,
        budget: Option<usize>,
        generation: u64,
        profile: Option<&str>,
    ) -> PyResult<Self> {
        // "auto": the library's choice from n and ones, as one process would choose.
        let coding = (coding != "auto").then_some(coding);
        let settings = encoder_settings(coding, budget, metadata, key, profile)?;
        let params = params_of(params)?;
        Ok(ChunkedFrame {
            inner: api::chunked_frame(settings, params, n, ones, shift, generation).into_py()?,
        })
    }

    /// Bits of the filter.
    #[getter]
    fn m(&self) -> u64 {
        api::params_m(self.inner.params())
    }

    /// Keys of the filter, as the header carries them.
    #[getter]
    fn n(&self) -> u64 {
        self.inner.figures().0
    }

    /// One bits of the whole filter.
    #[getter]
    fn ones(&self) -> u64 {
        self.inner.figures().1
    }

    /// log2 of the bits of a chunk.
    #[getter]
    fn shift(&self) -> u8 {
        self.inner.figures().2
    }

    /// The generation the frame carries.
    #[getter]
    fn generation(&self) -> u64 {
        self.inner.figures().3
    }

    /// The number of chunks, `ceil(m / 2**shift)`.
    #[getter]
    fn chunk_count(&self) -> u64 {
        self.inner.chunk_count()
    }

    /// The coding of every chunk.
    #[getter]
    fn coding(&self) -> String {
        self.inner.coding()
    }

    /// The frame's q0 (the quantized fraction of zeros, from `ones`), for the codings that
    /// carry one, else None: a chunk's payload depends on its bits, the coding and q0.
    #[getter]
    fn q0(&self) -> Option<u16> {
        self.inner.q0()
    }

    /// The application metadata of the frame, None when there is none.
    #[getter]
    fn metadata<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.inner
            .settings()
            .metadata_bytes()
            .map(|m| PyBytes::new(py, m))
    }

    /// Whether the frame is tagged with a key.
    #[getter]
    fn keyed(&self) -> bool {
        self.inner.settings().key_bytes().is_some()
    }

    /// The bits chunk `i` holds, a `range` (`InvalidParameter` past the last chunk).
    fn chunk_bits<'py>(&self, py: Python<'py>, i: u64) -> PyResult<Bound<'py, PyRange>> {
        let (m, shift) = (self.m(), self.shift());
        range_of(py, api::chunk_range(m, shift, i).into_py()?)
    }

    /// The chunk that holds bit `position` (`InvalidParameter` past m).
    fn chunk_of(&self, position: u64) -> PyResult<u64> {
        api::chunk_of(self.m(), self.shift(), position).into_py()
    }

    /// The indexer of the filter's parameters.
    fn indexer(&self) -> PyResult<Indexer> {
        Ok(Indexer {
            inner: api::Indexer::new(self.inner.params().clone()).into_py()?,
        })
    }

    /// The payload of chunk `i`, built from the positions of its keys' bits (`positions` as
    /// `Chunk.add` takes them: unsorted, repeated, absolute or with `relative=True` counted
    /// from the chunk's first bit) and coded with the frame's coding and q0, with the GIL
    /// released. `InvalidParameter` for an index past the last chunk or a position outside
    /// the chunk.
    #[pyo3(signature = (i, positions, *, relative = false))]
    fn encode_chunk<'py>(
        &self,
        py: Python<'py>,
        i: u64,
        positions: &Bound<'py, PyAny>,
        relative: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mut chunk = api::Chunk::new(self.m(), self.shift(), i).into_py()?;
        add_positions(py, &mut chunk, positions, relative)?;
        let plan = &self.inner;
        let payload = py.detach(|| chunk.encode(plan)).into_py()?;
        Ok(PyBytes::new(py, &payload))
    }

    /// The frame (`bytes`), from every chunk's payload (`bytes`, `bytearray` or
    /// `memoryview`) in chunk order: its header, table of lengths, the payloads, checksum
    /// and, with a key, tag. `InvalidParameter` for another number of payloads than
    /// chunks, or where one process would not have written this frame (a payload over the
    /// work bound, or a frame no smaller than the raw filter's); `OverBudget` past the
    /// budget.
    fn assemble<'py>(
        &self,
        py: Python<'py>,
        payloads: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let held: Vec<FrameBytes<'py>> = payloads
            .try_iter()?
            .map(|p| {
                let p = p?;
                if p.cast::<PyString>().is_ok() {
                    return Err(PyTypeError::new_err("a chunk's payload is bytes, not str"));
                }
                frame_bytes(&p)
            })
            .collect::<PyResult<_>>()?;
        let slices: Vec<&[u8]> = held.iter().map(FrameBytes::as_slice).collect();
        let plan = &self.inner;
        let frame = py.detach(|| plan.assemble(&slices)).into_py()?;
        to_pybytes(py, &frame)
    }

    /// Pickled with its parameters, figures and encoder settings (metadata and key too).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let inner = &slf.get().inner;
        let settings = inner.settings();
        let (n, ones, shift, generation) = inner.figures();
        let args = (
            api::params_parts(inner.params()),
            n,
            ones,
            shift,
            settings.coding_name().unwrap_or_default().to_string(),
            settings.metadata_bytes().map(|m| PyBytes::new(py, m)),
            settings.key_bytes().map(|k| PyBytes::new(py, &k)),
            settings.budget_bytes(),
            generation,
        )
            .into_pyobject(py)?;
        PyTuple::new(
            py,
            [slf.get_type().getattr("_from_parts")?, args.into_any()],
        )
    }

    /// The chunked frame of these parts (the unpickler's).
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    fn _from_parts(
        params: api::ParamParts,
        n: u64,
        ones: u64,
        shift: u8,
        coding: &str,
        metadata: Option<&Bound<'_, PyAny>>,
        key: Option<&Bound<'_, PyAny>>,
        budget: Option<usize>,
        generation: u64,
    ) -> PyResult<Self> {
        let settings = encoder_settings(Some(coding), budget, metadata, key, None)?;
        let params = api::params_from_parts(params).into_py()?;
        Ok(ChunkedFrame {
            inner: api::chunked_frame(settings, params, n, ones, shift, generation).into_py()?,
        })
    }

    fn __repr__(&self) -> String {
        let (n, ones, shift, generation) = self.inner.figures();
        format!(
            "ChunkedFrame({}, n={n}, ones={ones}, shift={shift}, chunks={}, coding={:?}, q0={}, generation={generation})",
            api::describe(self.inner.params()),
            self.inner.chunk_count(),
            self.inner.coding(),
            self.inner.q0().map_or("None".to_string(), |q| q.to_string())
        )
    }
}

// ---------------------------------------------------------------------------------------------
// The module

const DEFAULT_MAX_M: u64 = 1 << 28;
const DEFAULT_MAX_K: u32 = 64;
const DEFAULT_MAX_PAYLOAD: u64 = 1 << 26;
const DEFAULT_MAX_METADATA: u64 = 1 << 12;

/// Compressed Bloom filters on the wire (the compiled part of the `bloomwire` package).
#[pymodule]
fn _bloomwire(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The signature defaults above must be the library's.
    let defaults = (
        DEFAULT_MAX_M,
        DEFAULT_MAX_K,
        DEFAULT_MAX_PAYLOAD,
        DEFAULT_MAX_METADATA,
    );
    if api::default_limits() != defaults {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(
            "the library's default limits differ from the module's",
        ));
    }
    m.add("DEFAULT_MAX_M", DEFAULT_MAX_M)?;
    m.add("DEFAULT_MAX_K", DEFAULT_MAX_K)?;
    m.add("DEFAULT_MAX_PAYLOAD", DEFAULT_MAX_PAYLOAD)?;
    m.add("DEFAULT_MAX_METADATA", DEFAULT_MAX_METADATA)?;
    m.add("CODINGS", api::coding_names())?;
    m.add_class::<Plan>()?;
    m.add_class::<BloomFilter>()?;
    m.add_class::<CountingFilter>()?;
    m.add_class::<Delta>()?;
    m.add_class::<FrameInfo>()?;
    m.add_class::<Update>()?;
    m.add_class::<Sender>()?;
    m.add_class::<Receiver>()?;
    m.add_class::<SummarySender>()?;
    m.add_class::<Indexer>()?;
    m.add_class::<Chunk>()?;
    m.add_class::<ChunkedFrame>()?;
    m.add_function(wrap_pyfunction!(plan, m)?)?;
    m.add_function(wrap_pyfunction!(plan_for_fpr, m)?)?;
    m.add_function(wrap_pyfunction!(frontier, m)?)?;
    m.add_function(wrap_pyfunction!(encode, m)?)?;
    m.add_function(wrap_pyfunction!(decode, m)?)?;
    m.add_function(wrap_pyfunction!(decode_counting, m)?)?;
    m.add_function(wrap_pyfunction!(decode_message, m)?)?;
    m.add_function(wrap_pyfunction!(frame_info, m)?)?;
    m.add_function(wrap_pyfunction!(thread_scratch_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(release_thread_scratch, m)?)?;
    errors::register(m)
}
