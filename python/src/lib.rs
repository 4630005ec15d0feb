//! The `bloomwire._bloomwire` extension module: Python classes over the bloomwire crate.
//!
//! Every call into the library goes through [`api`]; this file only converts between Python
//! objects and the library's values, and releases the GIL around the heavy work.

#![forbid(unsafe_code)]

mod api;
mod errors;

use std::borrow::Cow;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyMemoryView, PyString};

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

fn limits(max_m: u64, max_k: u32, max_payload: u64) -> api::DecodeLimits {
    api::limits(max_m, max_k, max_payload)
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

fn filter_object(py: Python<'_>, f: AnyFilter) -> PyResult<Py<PyAny>> {
    Ok(match f {
        AnyFilter::Bloom(inner) => Py::new(py, BloomFilter { inner })?.into_any(),
        AnyFilter::Counting(inner) => Py::new(py, CountingFilter { inner })?.into_any(),
    })
}

// ---------------------------------------------------------------------------------------------
// Planning

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

    /// An empty Bloom filter with the planned parameters.
    fn new_filter(&self) -> BloomFilter {
        BloomFilter {
            inner: api::new_filter(self.info.params.clone()),
        }
    }

    /// An empty counting filter with the planned parameters and `width`-bit counters (1 to 8).
    #[pyo3(signature = (width = 4))]
    fn new_counting_filter(&self, width: u8) -> PyResult<CountingFilter> {
        Ok(CountingFilter {
            inner: api::new_counting(self.info.params.clone(), width).into_py()?,
        })
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

/// Plan the filter of `n` keys with the lowest false positive rate whose frame fits in
/// `budget_bytes` (header and checksum included).
///
/// `seed` (xxHash64) or `siphash_key` (16 bytes, keyed SipHash-2-4 for keys chosen by peers
/// you do not trust) choose the hash family; `max_m` bounds the filter's bits (the memory the
/// receiver gives it). Raises `OverBudget` when nothing fits, `InvalidParameter` for n = 0.
#[pyfunction]
#[pyo3(signature = (n, budget_bytes, *, seed = 0, siphash_key = None, max_m = None))]
fn plan(
    n: u64,
    budget_bytes: u64,
    seed: u64,
    siphash_key: Option<&Bound<'_, PyAny>>,
    max_m: Option<u64>,
) -> PyResult<Plan> {
    let family = family(seed, siphash_key)?;
    Ok(Plan {
        info: api::plan(n, budget_bytes, family, max_m).into_py()?,
    })
}

/// Plan the filter of `n` keys with the smallest frame whose false positive rate is at most
/// `fpr` (in (0, 1)).
///
/// The keyword arguments are those of `plan`. Raises `InvalidParameter` for n = 0, a rate
/// outside (0, 1) or a rate that no allowed m reaches.
#[pyfunction]
#[pyo3(signature = (n, fpr, *, seed = 0, siphash_key = None, max_m = None))]
fn plan_for_fpr(
    n: u64,
    fpr: f64,
    seed: u64,
    siphash_key: Option<&Bound<'_, PyAny>>,
    max_m: Option<u64>,
) -> PyResult<Plan> {
    let family = family(seed, siphash_key)?;
    Ok(Plan {
        info: api::plan_for_fpr(n, fpr, family, max_m).into_py()?,
    })
}

// ---------------------------------------------------------------------------------------------
// Filters

/// A Bloom filter. Keys are `bytes` or `str` (hashed as UTF-8); `bytearray` and
/// `memoryview` work too.
///
/// `BloomFilter(m, k)` makes a standard filter of m bits and k hash functions;
/// `plan(...).new_filter()` one with planned parameters. `len(f)` is the number of keys
/// inserted (duplicates count). Filters compare equal when their parameters, bits and n do.
#[pyclass(module = "bloomwire", eq)]
#[derive(Clone, PartialEq)]
struct BloomFilter {
    inner: api::Filter,
}

#[pymethods]
impl BloomFilter {
    /// A standard Bloom filter of `m` bits and `k` hash functions, hashed with xxHash64 and
    /// `seed`, or keyed SipHash-2-4 with the 16-byte `siphash_key`.
    #[new]
    #[pyo3(signature = (m, k, *, seed = 0, siphash_key = None))]
    fn new(m: u64, k: u32, seed: u64, siphash_key: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let params = api::standard_params(m, k, family(seed, siphash_key)?).into_py()?;
        Ok(BloomFilter {
            inner: api::new_filter(params),
        })
    }

    /// An empty filter with a plan's parameters (the same as `plan.new_filter()`).
    #[staticmethod]
    fn from_plan(plan: &Plan) -> Self {
        plan.new_filter()
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
        api::params_m(api::filter_params(&self.inner))
    }

    /// Hash functions per key (a float: k may be rational).
    #[getter]
    fn k(&self) -> f64 {
        api::params_k(api::filter_params(&self.inner)).0
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

    /// The packed bit array: bit i is `(b[i // 8] >> (i % 8)) & 1`.
    fn bits<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &api::packed_bits(&self.inner))
    }

    /// Set in this filter every bit set in `other` (same parameters, else `Incompatible`).
    fn union(&mut self, other: &BloomFilter) -> PyResult<()> {
        api::union_with(&mut self.inner, &other.inner).into_py()
    }

    /// A copy of the filter.
    fn copy(&self) -> Self {
        self.clone()
    }

    /// The full frame of this filter, as `bytes`; see `encode`.
    #[pyo3(signature = (coding = None, *, budget = None, generation = 0))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        coding: Option<&str>,
        budget: Option<usize>,
        generation: u64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let settings = api::encoder(coding, budget).into_py()?;
        let inner = &self.inner;
        let big = api::params_m(api::filter_params(inner)) >= DETACH_FILTER_BITS;
        let frame =
            maybe_detach(py, big, || api::encode(&settings, inner, generation)).into_py()?;
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
#[pyclass(module = "bloomwire", eq)]
#[derive(Clone, PartialEq)]
struct CountingFilter {
    inner: api::Counting,
}

#[pymethods]
impl CountingFilter {
    /// A standard counting filter of `m` counters of `width` bits (1 to 8) and `k` hash
    /// functions; `seed` and `siphash_key` as for `BloomFilter`.
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
        Ok(CountingFilter {
            inner: api::new_counting(params, width).into_py()?,
        })
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

    /// Remove a key: decrement its counters. Raises `InvalidParameter`, changing nothing,
    /// when the key is not in the filter (one of its counters is zero).
    fn remove(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        api::counting_remove(&mut self.inner, &key_bytes(key)?).into_py()
    }

    /// Whether the key may be in the set: False means certainly not.
    fn contains(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(api::counting_contains(&self.inner, &key_bytes(key)?))
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
        api::params_m(api::counting_params(&self.inner))
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

    /// The Bloom filter this one summarizes: bit i set where counter i is not zero.
    fn to_bloom_filter(&self) -> BloomFilter {
        BloomFilter {
            inner: api::to_bloom(&self.inner),
        }
    }

    /// A copy of the filter.
    fn copy(&self) -> Self {
        self.clone()
    }

    /// The full frame of this counting filter, as `bytes`; see `encode`.
    #[pyo3(signature = (coding = None, *, budget = None, generation = 0))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        coding: Option<&str>,
        budget: Option<usize>,
        generation: u64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let settings = api::encoder(coding, budget).into_py()?;
        let inner = &self.inner;
        let big = api::params_m(api::counting_params(inner)) >= DETACH_FILTER_BITS / 8;
        let frame = maybe_detach(py, big, || {
            api::encode_counting(&settings, inner, generation)
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
/// name (see `CODINGS`), that coding. Either way the raw frame is sent when compression would not be
/// smaller. `budget` raises `OverBudget` when the frame would be larger; `generation` is the
/// number the frame carries (0 outside a sender's sequence).
#[pyfunction]
#[pyo3(signature = (filter, coding = None, *, budget = None, generation = 0))]
fn encode<'py>(
    py: Python<'py>,
    filter: &Bound<'py, PyAny>,
    coding: Option<&str>,
    budget: Option<usize>,
    generation: u64,
) -> PyResult<Bound<'py, PyBytes>> {
    match filter_ref(filter)? {
        FilterBorrow::Bloom(f) => f.encode(py, coding, budget, generation),
        FilterBorrow::Counting(f) => f.encode(py, coding, budget, generation),
    }
}

/// Decode the one full Bloom filter frame `frame` holds (no trailing bytes).
///
/// Headers that claim more than `max_m` bits, `max_k` hash functions or `max_payload` bytes
/// are refused (`LimitExceeded`) before anything is allocated. Raises a `BloomwireError`
/// subclass for every malformed frame, `Incomplete` when the input ends early,
/// `UnexpectedDelta` for a delta and `UnexpectedFilterType` for a counting filter.
#[pyfunction]
#[pyo3(signature = (frame, *, max_m = DEFAULT_MAX_M, max_k = DEFAULT_MAX_K, max_payload = DEFAULT_MAX_PAYLOAD))]
fn decode(
    py: Python<'_>,
    frame: &Bound<'_, PyAny>,
    max_m: u64,
    max_k: u32,
    max_payload: u64,
) -> PyResult<BloomFilter> {
    let input = frame_bytes(frame)?;
    let bytes = input.as_slice();
    let limits = limits(max_m, max_k, max_payload);
    let big = bytes.len() >= DETACH_FRAME_BYTES;
    let inner = maybe_detach(py, big, || api::decode(bytes, &limits)).into_py()?;
    Ok(BloomFilter { inner })
}

/// Decode the one full counting filter frame `frame` holds; limits and errors as `decode`.
#[pyfunction]
#[pyo3(signature = (frame, *, max_m = DEFAULT_MAX_M, max_k = DEFAULT_MAX_K, max_payload = DEFAULT_MAX_PAYLOAD))]
fn decode_counting(
    py: Python<'_>,
    frame: &Bound<'_, PyAny>,
    max_m: u64,
    max_k: u32,
    max_payload: u64,
) -> PyResult<CountingFilter> {
    let input = frame_bytes(frame)?;
    let bytes = input.as_slice();
    let limits = limits(max_m, max_k, max_payload);
    let big = bytes.len() >= DETACH_FRAME_BYTES;
    let inner = maybe_detach(py, big, || api::decode_counting(bytes, &limits)).into_py()?;
    Ok(CountingFilter { inner })
}

/// Decode any one frame: a `BloomFilter`, a `CountingFilter` or a `Delta`; limits and
/// errors as `decode`.
#[pyfunction]
#[pyo3(signature = (frame, *, max_m = DEFAULT_MAX_M, max_k = DEFAULT_MAX_K, max_payload = DEFAULT_MAX_PAYLOAD))]
fn decode_message(
    py: Python<'_>,
    frame: &Bound<'_, PyAny>,
    max_m: u64,
    max_k: u32,
    max_payload: u64,
) -> PyResult<Py<PyAny>> {
    let input = frame_bytes(frame)?;
    let bytes = input.as_slice();
    let limits = limits(max_m, max_k, max_payload);
    let big = bytes.len() >= DETACH_FRAME_BYTES;
    match maybe_detach(py, big, || api::decode_any(bytes, &limits)).into_py()? {
        api::Decoded::Full(f) => filter_object(py, f),
        api::Decoded::Delta(inner) => Ok(Py::new(py, Delta { inner })?.into_any()),
    }
}

/// The header of the frame at the start of `frame`, checked against the limits; the payload
/// and checksum are not checked (use a decode function for that).
#[pyfunction]
#[pyo3(signature = (frame, *, max_m = DEFAULT_MAX_M, max_k = DEFAULT_MAX_K, max_payload = DEFAULT_MAX_PAYLOAD))]
fn frame_info(
    frame: &Bound<'_, PyAny>,
    max_m: u64,
    max_k: u32,
    max_payload: u64,
) -> PyResult<FrameInfo> {
    let input = frame_bytes(frame)?;
    let info = api::frame_info(input.as_slice(), &limits(max_m, max_k, max_payload)).into_py()?;
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
        filter_object(py, result.into_py()?)
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
        if self.info.delta {
            "delta"
        } else {
            "full"
        }
    }

    /// Whether the frame carries a counting filter.
    #[getter]
    fn counting(&self) -> bool {
        self.info.counting
    }

    /// The generation the frame carries (or a delta produces).
    #[getter]
    fn generation(&self) -> u64 {
        self.info.generation
    }

    /// A delta's base generation, else None.
    #[getter]
    fn base_generation(&self) -> Option<u64> {
        self.info.base_generation
    }

    /// Keys the sender inserted.
    #[getter]
    fn n(&self) -> u64 {
        self.info.n
    }

    /// Bits (or counters) of the filter.
    #[getter]
    fn m(&self) -> u64 {
        self.info.m
    }

    /// Hash functions per key.
    #[getter]
    fn k(&self) -> f64 {
        self.info.k
    }

    /// "standard", "partitioned" or "blocks".
    #[getter]
    fn layout(&self) -> &'static str {
        self.info.layout
    }

    /// The coding's name (see `CODINGS`).
    #[getter]
    fn coding(&self) -> &str {
        &self.info.coding
    }

    /// A counting filter's counter width, else None.
    #[getter]
    fn counter_width(&self) -> Option<u8> {
        self.info.counter_width
    }

    /// log2 of the bits per chunk of a chunked payload, else None.
    #[getter]
    fn chunk_shift(&self) -> Option<u8> {
        self.info.chunk_shift
    }

    /// Header bytes.
    #[getter]
    fn header_len(&self) -> usize {
        self.info.header_len
    }

    /// Payload bytes.
    #[getter]
    fn payload_len(&self) -> usize {
        self.info.payload_len
    }

    /// Bytes of the whole frame, checksum included.
    #[getter]
    fn frame_len(&self) -> usize {
        self.info.frame_len
    }

    fn __repr__(&self) -> String {
        format!(
            "FrameInfo(kind={:?}, counting={}, generation={}, m={}, k={}, n={}, coding={:?}, frame_len={})",
            self.kind(),
            if self.info.counting { "True" } else { "False" },
            self.info.generation,
            self.info.m,
            self.info.k,
            self.info.n,
            self.info.coding,
            self.info.frame_len
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Generations

/// What a `Receiver` did with a frame: `kind` is "full" (the filter was replaced; `skipped`
/// generations were never seen) or "delta" (the filter advanced by one generation).
#[pyclass(module = "bloomwire", frozen, eq)]
#[derive(Clone, PartialEq)]
struct Update {
    info: api::UpdateInfo,
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
    /// `coding` and `budget` as in `encode`.
    #[new]
    #[pyo3(signature = (full_every = 100, *, coding = None, budget = None))]
    fn new(full_every: u64, coding: Option<&str>, budget: Option<usize>) -> PyResult<Self> {
        let settings = api::encoder(coding, budget).into_py()?;
        Ok(Sender {
            inner: api::Sender::new(settings, full_every),
        })
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

/// Applies a `Sender`'s frames in order. On any error its filter and generation stay as they
/// were: `GenerationGap`, `BaseMismatch` and `ResultMismatch` (all `ResyncNeeded`) mean it
/// needs a full frame, `StaleGeneration` that the frame was a duplicate or came late.
#[pyclass(module = "bloomwire")]
struct Receiver {
    inner: api::Receiver,
}

#[pymethods]
impl Receiver {
    /// A receiver with no filter yet, decoding within the limits (see `decode`).
    #[new]
    #[pyo3(signature = (*, max_m = DEFAULT_MAX_M, max_k = DEFAULT_MAX_K, max_payload = DEFAULT_MAX_PAYLOAD))]
    fn new(max_m: u64, max_k: u32, max_payload: u64) -> Self {
        Receiver {
            inner: api::Receiver::new(limits(max_m, max_k, max_payload)),
        }
    }

    /// Decode and apply one frame (exactly one, no trailing bytes); returns an `Update`.
    fn receive(&mut self, py: Python<'_>, frame: &Bound<'_, PyAny>) -> PyResult<Update> {
        let input = frame_bytes(frame)?;
        let bytes = input.as_slice();
        let receiver = &mut self.inner;
        let big = bytes.len() >= DETACH_FRAME_BYTES;
        let info = maybe_detach(py, big, || receiver.receive(bytes)).into_py()?;
        Ok(Update { info })
    }

    /// A copy of the current filter (`BloomFilter` or `CountingFilter`), None before the
    /// first full frame.
    #[getter]
    fn filter(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.inner
            .filter()
            .map(|f| {
                filter_object(
                    py,
                    match f {
                        FilterRef::Bloom(b) => AnyFilter::Bloom(b.clone()),
                        FilterRef::Counting(c) => AnyFilter::Counting(c.clone()),
                    },
                )
            })
            .transpose()
    }

    /// The current generation, None before the first full frame.
    #[getter]
    fn generation(&self) -> Option<u64> {
        self.inner.generation()
    }
}

// ---------------------------------------------------------------------------------------------
// The module

const DEFAULT_MAX_M: u64 = 1 << 28;
const DEFAULT_MAX_K: u32 = 64;
const DEFAULT_MAX_PAYLOAD: u64 = 1 << 26;

/// Compressed Bloom filters on the wire (the compiled part of the `bloomwire` package).
#[pymodule]
fn _bloomwire(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The signature defaults above must be the library's.
    if api::default_limits() != (DEFAULT_MAX_M, DEFAULT_MAX_K, DEFAULT_MAX_PAYLOAD) {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(
            "the library's default limits differ from the module's",
        ));
    }
    m.add("DEFAULT_MAX_M", DEFAULT_MAX_M)?;
    m.add("DEFAULT_MAX_K", DEFAULT_MAX_K)?;
    m.add("DEFAULT_MAX_PAYLOAD", DEFAULT_MAX_PAYLOAD)?;
    m.add("CODINGS", api::coding_names())?;
    m.add_class::<Plan>()?;
    m.add_class::<BloomFilter>()?;
    m.add_class::<CountingFilter>()?;
    m.add_class::<Delta>()?;
    m.add_class::<FrameInfo>()?;
    m.add_class::<Update>()?;
    m.add_class::<Sender>()?;
    m.add_class::<Receiver>()?;
    m.add_function(wrap_pyfunction!(plan, m)?)?;
    m.add_function(wrap_pyfunction!(plan_for_fpr, m)?)?;
    m.add_function(wrap_pyfunction!(encode, m)?)?;
    m.add_function(wrap_pyfunction!(decode, m)?)?;
    m.add_function(wrap_pyfunction!(decode_counting, m)?)?;
    m.add_function(wrap_pyfunction!(decode_message, m)?)?;
    m.add_function(wrap_pyfunction!(frame_info, m)?)?;
    errors::register(m)
}
