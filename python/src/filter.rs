//! The filters: `BloomFilter` and `CountingFilter`.

use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use crate::api::{self, FilterRef};
use crate::args::{
    bool_column, encoder_settings, family, key_bytes, maybe_detach, to_pybytes, unpickler,
    DETACH_COLUMN_LEN, DETACH_FILTER_BITS,
};
use crate::codec::FrameInfo;
use crate::columns;
use crate::errors::IntoPyResult;
use crate::plan::Plan;

/// A Bloom filter. Keys are `bytes` or `str` (hashed as UTF-8); `bytearray` and
/// `memoryview` work too.
///
/// `BloomFilter(m, k)` makes a standard filter of m bits and k hash functions;
/// `plan(...).new_filter()` one with planned parameters. `len(f)` is the number of keys
/// inserted (duplicates count). Filters compare equal when their parameters, bits and n do.
#[pyclass(module = "bloomwire")]
#[derive(Clone)]
pub(crate) struct BloomFilter {
    pub(crate) inner: api::Filter,
    /// The header of the frame the filter was decoded from.
    pub(crate) header: Option<Arc<api::FrameInfo>>,
}

impl BloomFilter {
    pub(crate) fn of(inner: api::Filter) -> Self {
        BloomFilter {
            inner,
            header: None,
        }
    }

    pub(crate) fn bits_m(&self) -> u64 {
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
    pub(crate) fn encode<'py>(
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
pub(crate) struct CountingFilter {
    pub(crate) inner: api::Counting,
    /// The header of the frame the filter was decoded from.
    pub(crate) header: Option<Arc<api::FrameInfo>>,
}

impl CountingFilter {
    pub(crate) fn of(inner: api::Counting) -> Self {
        CountingFilter {
            inner,
            header: None,
        }
    }

    pub(crate) fn counters_m(&self) -> u64 {
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
    pub(crate) fn encode<'py>(
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
pub(crate) enum FilterBorrow<'a> {
    Bloom(PyRef<'a, BloomFilter>),
    Counting(PyRef<'a, CountingFilter>),
}

pub(crate) fn filter_ref<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<FilterBorrow<'a>> {
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
pub(crate) fn with_filter<T>(
    obj: &Bound<'_, PyAny>,
    f: impl FnOnce(FilterRef<'_>, u64) -> T,
) -> PyResult<T> {
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
