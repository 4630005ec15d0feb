//! The filters: `BloomFilter` and `CountingFilter`. What they share is written once: the
//! library's two filter types answer the same questions through [`Kind`], and
//! `filter_class!` writes each class and the Python methods both have over it.

use std::sync::Arc;

use bloomwire::filter::any::FilterRef;
use bloomwire::{
    AnyFilter, BitArray, BloomFilter as Bloom, CountingBloomFilter as Counting, Error, Frame,
    FrameHeader, HashFamily, Params,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use crate::args::{
    bool_column, describe, family, for_each_key, key_bytes, maybe_detach, to_pybytes, unpickler,
    DETACH_COLUMN_LEN, DETACH_FILTER_BITS,
};
use crate::columns;
use crate::errors::{Failure, IntoPyResult, Res};
use crate::header::FrameInfo;
use crate::plan_info::Plan;
use crate::settings::{encoder_settings, EncoderSettings};

/// What the two filter classes ask of the library's filter they hold.
pub(crate) trait Kind: Clone + Send + Sync {
    /// Bits of memory a position takes: one for a bit, eight for a counter's byte (what
    /// decides whether the GIL is released around work over the whole filter).
    const POSITION_BITS: u64;
    /// The function of `bloomwire._pickle` that loads a pickled filter of this kind.
    const UNPICKLER: &'static str;

    /// m, the layout with k, and the hash family.
    fn params(&self) -> &Params;
    /// `OpaqueHashFamily` for another library's bits, which refuse inserts and queries.
    fn queryable(&self) -> Result<(), Error>;
    /// Insert a key (refused by another library's bits).
    fn insert_key(&mut self, key: &[u8]) -> Result<(), Error>;
    /// Whether the key may be in the set (refused by another library's bits).
    fn contains_key(&self, key: &[u8]) -> Result<bool, Error>;
    /// The digest of the bits or counters (spec 5.1), as deltas name their base.
    fn digest(&self) -> u32;
    /// Merge `other` (same parameters) into this filter.
    fn union(&mut self, other: &Self) -> Res<()>;
    /// The full frame of the filter.
    fn frame(&self, settings: &EncoderSettings, generation: u64, restart: bool) -> Res<Frame>;

    /// Bits of memory of the filter.
    fn memory_bits(&self) -> u64 {
        self.params().m() * Self::POSITION_BITS
    }
}

impl Kind for Bloom {
    const POSITION_BITS: u64 = 1;
    const UNPICKLER: &'static str = "load_bloom_filter";

    fn params(&self) -> &Params {
        Bloom::params(self)
    }

    fn queryable(&self) -> Result<(), Error> {
        match self.is_opaque() {
            true => Err(Error::OpaqueHashFamily),
            false => Ok(()),
        }
    }

    fn insert_key(&mut self, key: &[u8]) -> Result<(), Error> {
        self.try_insert(key)
    }

    fn contains_key(&self, key: &[u8]) -> Result<bool, Error> {
        self.try_contains(key)
    }

    fn digest(&self) -> u32 {
        self.bits().digest()
    }

    fn union(&mut self, other: &Self) -> Res<()> {
        Ok(self.union_with(other)?)
    }

    fn frame(&self, settings: &EncoderSettings, generation: u64, restart: bool) -> Res<Frame> {
        settings.encode_bloom(self, generation, restart)
    }
}

impl Kind for Counting {
    const POSITION_BITS: u64 = 8;
    const UNPICKLER: &'static str = "load_counting_filter";

    fn params(&self) -> &Params {
        Counting::params(self)
    }

    fn queryable(&self) -> Result<(), Error> {
        Ok(())
    }

    fn insert_key(&mut self, key: &[u8]) -> Result<(), Error> {
        self.insert(key);
        Ok(())
    }

    fn contains_key(&self, key: &[u8]) -> Result<bool, Error> {
        Ok(self.contains(key))
    }

    fn digest(&self) -> u32 {
        Counting::digest(self)
    }

    fn union(&mut self, other: &Self) -> Res<()> {
        add_counters(self, other)
    }

    fn frame(&self, settings: &EncoderSettings, generation: u64, restart: bool) -> Res<Frame> {
        settings.encode_counting(self, generation, restart)
    }
}

/// Add `other`'s counters to `f`'s, each sum saturating at `2^width - 1`; `n` becomes the
/// sum. Both must have the same parameters and counter width (else `Incompatible`).
///
/// The library has no such call yet (see the package's notes to the library); this one is
/// written on its public API: the counters read with `counters()`, the sum rebuilt with
/// `from_counters`, which checks every counter against the width again.
fn add_counters(f: &mut Counting, other: &Counting) -> Res<()> {
    if f.params() != other.params() {
        return Err(Failure::new(
            "Incompatible",
            format!(
                "filters are not compatible: {} in this filter and {} in the other",
                describe(f.params()),
                describe(other.params())
            ),
        )
        .with_attr("reason", "parameters differ"));
    }
    if f.width() != other.width() {
        return Err(Failure::new(
            "Incompatible",
            format!(
                "filters are not compatible: counter width is {} in this filter and {} in the other",
                f.width(),
                other.width()
            ),
        )
        .with_attr("reason", "counter width differs"));
    }
    let max = f.max_count();
    let mut sum = Vec::new();
    sum.try_reserve_exact(f.counters().len())
        .map_err(|_| Error::AllocationFailed {
            bytes: f.counters().len() as u64,
        })?;
    sum.extend(
        f.counters()
            .iter()
            .zip(other.counters())
            .map(|(&a, &b)| a.saturating_add(b).min(max)),
    );
    let n = f.n().saturating_add(other.n());
    *f = Counting::from_counters(f.params().clone(), f.width(), sum, n)?;
    Ok(())
}

/// The frame of a filter as `bytes`, coded with the GIL released when the filter is large.
pub(crate) fn filter_frame<'py, K: Kind>(
    py: Python<'py>,
    filter: &K,
    settings: &EncoderSettings,
    generation: u64,
    restart: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let big = filter.memory_bits() >= DETACH_FILTER_BITS;
    let frame = maybe_detach(py, big, || filter.frame(settings, generation, restart)).into_py()?;
    to_pybytes(py, &frame)
}

/// A filter class: `$class` (with its docs) holding the library's filter `$inner` (a
/// [`Kind`]) and the header of the frame it was decoded from; the methods both filter
/// classes have, with the docs that differ between them; then the class's own methods.
macro_rules! filter_class {
    (
        $(#[$attr:meta])*
        $class:ident($inner:ty),
        insert: $insert:literal,
        insert_array: $insert_array:literal,
        contains: $contains:literal,
        contains_array: $contains_array:literal,
        len: $len:literal,
        n: $n:literal,
        m: $m:literal,
        k: $k:literal,
        header: $header:literal,
        digest: $digest:literal,
        union: $union:literal,
        or: $or:literal,
        reduce: $reduce:literal,
        { $($own:tt)* }
    ) => {
        $(#[$attr])*
        #[pyclass(module = "bloomwire")]
        #[derive(Clone)]
        pub(crate) struct $class {
            pub(crate) inner: $inner,
            /// The header of the frame the filter was decoded from.
            pub(crate) header: Option<Arc<FrameHeader>>,
        }

        impl HoldsKind for $class {
            type Inner = $inner;

            fn with_header(inner: $inner, header: Option<FrameHeader>) -> Self {
                $class {
                    inner,
                    header: header.map(Arc::new),
                }
            }
        }

        impl $class {
            /// A filter built here (no frame's header).
            pub(crate) fn of(inner: $inner) -> Self {
                Self::with_header(inner, None)
            }
        }

        #[pymethods]
        impl $class {
            #[doc = $insert]
            fn insert(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
                self.inner.insert_key(&key_bytes(key)?).into_py()
            }

            /// Add every key of an iterable.
            fn insert_many(&mut self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
                for_each_key(keys, |key| self.inner.insert_key(key).into_py())
            }

            #[doc = $insert_array]
            fn insert_array(&mut self, py: Python<'_>, values: &Bound<'_, PyAny>) -> PyResult<()> {
                let inner = &mut self.inner;
                columns::for_each_chunk(values, |col| {
                    maybe_detach(py, col.len() >= DETACH_COLUMN_LEN, || {
                        inner.queryable()?;
                        col.present().try_for_each(|key| inner.insert_key(key))
                    })
                    .into_py()
                })?;
                Ok(())
            }

            #[doc = $contains]
            fn contains(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                self.inner.contains_key(&key_bytes(key)?).into_py()
            }

            #[doc = $contains_array]
            fn contains_array(
                &self,
                py: Python<'_>,
                values: &Bound<'_, PyAny>,
            ) -> PyResult<Py<PyAny>> {
                let inner = &self.inner;
                let mut flags = Vec::new();
                let source = columns::for_each_chunk(values, |col| {
                    maybe_detach(py, col.len() >= DETACH_COLUMN_LEN, || {
                        inner.queryable()?;
                        flags.reserve(col.len());
                        col.keys().try_for_each(|key| {
                            let hit = match key {
                                Some(key) => inner.contains_key(key)?,
                                None => false,
                            };
                            flags.push(u8::from(hit));
                            Ok::<(), Error>(())
                        })
                    })
                    .into_py()
                })?;
                bool_column(py, source, &flags)
            }

            fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                self.contains(key)
            }

            #[doc = $len]
            fn __len__(&self) -> usize {
                self.inner.n() as usize
            }

            #[doc = $n]
            #[getter]
            fn n(&self) -> u64 {
                self.inner.n()
            }

            #[doc = $m]
            #[getter]
            fn m(&self) -> u64 {
                self.inner.params().m()
            }

            #[doc = $k]
            #[getter]
            fn k(&self) -> f64 {
                self.inner.params().k().to_f64()
            }

            #[doc = $header]
            #[getter]
            fn header(&self) -> Option<FrameInfo> {
                self.header.as_ref().map(|h| FrameInfo {
                    info: h.as_ref().clone(),
                })
            }

            #[doc = $digest]
            fn digest(&self) -> u32 {
                self.inner.digest()
            }

            #[doc = $union]
            fn union(&mut self, py: Python<'_>, other: &$class) -> PyResult<()> {
                let (inner, big) = (&mut self.inner, other.inner.memory_bits() >= DETACH_FILTER_BITS);
                maybe_detach(py, big, || inner.union(&other.inner)).into_py()
            }

            #[doc = $or]
            fn __or__(&self, py: Python<'_>, other: PyRef<'_, $class>) -> PyResult<$class> {
                let mut out = $class::of(self.inner.clone());
                out.union(py, &other)?;
                Ok(out)
            }

            /// `other | self`: the union (which commutes).
            fn __ror__(&self, py: Python<'_>, other: PyRef<'_, $class>) -> PyResult<$class> {
                self.__or__(py, other)
            }

            /// `self |= other`: the union, in place.
            fn __ior__(&mut self, py: Python<'_>, other: PyRef<'_, $class>) -> PyResult<()> {
                self.union(py, &other)
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

            #[doc = $reduce]
            fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
                let settings = encoder_settings(None, None, None, None, None)?;
                let frame = filter_frame(py, &self.inner, &settings, 0, false)?;
                PyTuple::new(
                    py,
                    [
                        unpickler(py, <$inner as Kind>::UNPICKLER)?,
                        PyTuple::new(py, [frame])?.into_any(),
                    ],
                )
            }

            $($own)*
        }
    };
}

/// A filter class: the library filter it holds.
pub(crate) trait HoldsKind: Sized {
    /// The library's filter type.
    type Inner: Kind;

    /// The class's object of a filter and the header of the frame it was decoded from (None
    /// for a filter built here).
    fn with_header(inner: Self::Inner, header: Option<FrameHeader>) -> Self;
}

filter_class! {
    /// A Bloom filter. Keys are `bytes` or `str` (hashed as UTF-8); `bytearray` and
    /// `memoryview` work too.
    ///
    /// `BloomFilter(m, k)` makes a standard filter of m bits and k hash functions;
    /// `plan(...).new_filter()` one with planned parameters. `len(f)` is the number of keys
    /// inserted (duplicates count). Filters compare equal when their parameters and bits do.
    BloomFilter(Bloom),
    insert: "Add a key.",
    insert_array: "Add every value of a column: an Arrow array or chunked array (string, large_string,
string_view, binary, large_binary, binary_view, fixed_size_binary, int8 to uint64)
or a one-dimensional NumPy
array (int8 to uint64, `S`), read in place and hashed with the GIL released. Each
value is the key a scalar insert of it would be (integers as their little-endian
bytes at the column's width); nulls are skipped.",
    contains: "Whether the key may be in the set: False means certainly not. Raises
`OpaqueHashFamily` for a filter of another library's bits (base hash 0).",
    contains_array: "`contains` for every value of a column (see `insert_array`), with the GIL released:
a pyarrow `BooleanArray` for Arrow input, a NumPy `bool` array for NumPy input.
A null is never in the set: False.",
    len: "The number of keys inserted.",
    n: "The number of keys inserted (the same as `len(f)`).",
    m: "Bits of the filter.",
    k: "Hash functions per key (a float: k may be rational).",
    header: "The header of the frame this filter was decoded from (metadata, tag status,
restart flag, ...), as it was on the wire; None for a filter built here.",
    digest: "The digest of the bits (spec 5.1: CRC-32C of the packed bit array), as deltas name
their base.",
    union: "Set in this filter every bit set in `other` (same parameters, else `Incompatible`);
n becomes the sum, an upper bound of the keys the union holds (a key in both counts
twice). The same as `self |= other`.",
    or: "The union of two filters of the same parameters (else `Incompatible`), a new filter.",
    reduce: "Pickled as its frame (the default coding: sparse filters cost their keys, not m),
checked on load against the unpickling limits (see `unpickling_limits`).",
    {
        /// A standard Bloom filter of `m` bits and `k` hash functions, hashed with xxHash64 and
        /// `seed`, or keyed SipHash-2-4 with the 16-byte `siphash_key`. Raises
        /// `AllocationFailed` (a `MemoryError`) when the machine cannot hold m bits.
        #[new]
        #[pyo3(signature = (m, k, *, seed = 0, siphash_key = None))]
        fn new(m: u64, k: u32, seed: u64, siphash_key: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
            let params = Params::standard(m, k, family(seed, siphash_key)?).into_py()?;
            Ok(BloomFilter::of(Bloom::try_new(params).into_py()?))
        }

        /// An empty filter with a plan's parameters (the same as `plan.new_filter()`).
        #[staticmethod]
        pub(crate) fn from_plan(plan: &Plan) -> PyResult<Self> {
            Ok(BloomFilter::of(Bloom::try_new(plan.info.params.clone()).into_py()?))
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
                Params::standard(m, k, HashFamily::opaque())
            } else {
                Params::standard(m, k, family(seed, siphash_key)?)
            }
            .into_py()?;
            if bits.cast::<PyString>().is_ok() {
                return Err(PyTypeError::new_err("bits are bytes, not str"));
            }
            let bytes = key_bytes(bits)?;
            let bits = BitArray::from_bytes(&bytes, params.m()).into_py()?;
            Ok(BloomFilter::of(Bloom::from_parts(params, bits, n).into_py()?))
        }

        /// `contains` for every key of an iterable, as a list.
        fn contains_many<'py>(&self, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
            let out = PyList::empty(keys.py());
            for key in keys.try_iter()? {
                out.append(self.inner.try_contains(&key_bytes(&key?)?).into_py()?)?;
            }
            Ok(out)
        }

        /// Whether the bits are another library's (the opaque hash family): inserts and
        /// queries raise `OpaqueHashFamily`.
        #[getter]
        fn opaque(&self) -> bool {
            self.inner.is_opaque()
        }

        /// The fraction of bits that are zero.
        #[getter]
        fn fraction_of_zeros(&self) -> f64 {
            self.inner.fraction_of_zeros()
        }

        /// The number of bits set.
        fn count_ones(&self) -> u64 {
            self.inner.bits().count_ones()
        }

        /// The packed bit array: bit i is `(b[i // 8] >> (i % 8)) & 1`.
        fn bits<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
            PyBytes::new(py, &self.inner.bits().to_bytes())
        }

        /// Equal as sets: the same parameters and the same bits. n is not compared: it counts
        /// insertions (a union adds both counts), so `f | f == f` holds as for a set.
        fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
            other.cast::<BloomFilter>().is_ok_and(|o| {
                let o = &o.borrow().inner;
                o.params() == self.inner.params() && o.bits() == self.inner.bits()
            })
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
            filter_frame(py, &self.inner, &settings, generation, restart)
        }

        fn __repr__(&self) -> String {
            format!(
                "BloomFilter({}, n={})",
                describe(self.inner.params()),
                self.inner.n()
            )
        }
    }
}

filter_class! {
    /// A counting Bloom filter: a `width`-bit counter per position, so keys can be removed.
    /// A saturated counter (2**width - 1) stays saturated.
    CountingFilter(Counting),
    insert: "Add a key: increment its counters.",
    insert_array: "Add every value of a column, as `BloomFilter.insert_array` (nulls skipped).",
    contains: "Whether the key may be in the set: False means certainly not.",
    contains_array: "`contains` for every value of a column, as `BloomFilter.contains_array`.",
    len: "The number of keys in the filter (inserted less removed).",
    n: "The number of keys in the filter (the same as `len(f)`).",
    m: "Number of counters.",
    k: "Hash functions per key.",
    header: "The header of the frame this filter was decoded from, as it was on the wire; None
for a filter built here.",
    digest: "The digest of the counters (spec 5.1), as deltas name their base.",
    union: "Add `other`'s counters to this filter's, each sum saturating at 2**width - 1 (same
parameters and width, else `Incompatible`): the counting filter of both multisets
of keys. n becomes the sum. The same as `self |= other`.",
    or: "The union (counters added, saturating) of two counting filters, a new filter.",
    reduce: "Pickled as its frame, checked on load against the unpickling limits.",
    {
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
            let params = Params::standard(m, k, family(seed, siphash_key)?).into_py()?;
            Ok(CountingFilter::of(Counting::new(params, width).into_py()?))
        }

        /// An empty counting filter with a plan's parameters.
        #[staticmethod]
        #[pyo3(signature = (plan, width = 4))]
        pub(crate) fn from_plan(plan: &Plan, width: u8) -> PyResult<Self> {
            Ok(CountingFilter::of(Counting::new(plan.info.params.clone(), width).into_py()?))
        }

        /// Remove a key: decrement its counters. Raises `InvalidParameter`, changing nothing,
        /// when the key is not in the filter (one of its counters is zero).
        fn remove(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
            self.inner.remove(&*key_bytes(key)?).into_py()
        }

        /// Bits per counter.
        #[getter]
        fn width(&self) -> u8 {
            self.inner.width()
        }

        /// The counters, one byte each.
        fn counters<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
            PyBytes::new(py, self.inner.counters())
        }

        /// The counters packed `width` bits each, counter i from bit i * width.
        fn packed<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
            PyBytes::new(py, &self.inner.packed())
        }

        /// How many counters hold each value 0 .. 2**width - 1.
        fn histogram(&self) -> Vec<u64> {
            self.inner.histogram()
        }

        /// The number of saturated counters.
        fn saturated(&self) -> usize {
            self.inner.saturated()
        }

        /// The Bloom filter this one summarizes: bit i set where counter i is not zero.
        fn to_bloom_filter(&self) -> BloomFilter {
            BloomFilter::of(self.inner.to_bloom_filter())
        }

        fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
            other
                .cast::<CountingFilter>()
                .is_ok_and(|o| o.borrow().inner == self.inner)
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
            filter_frame(py, &self.inner, &settings, generation, restart)
        }

        fn __repr__(&self) -> String {
            format!(
                "CountingFilter({}, width={}, n={})",
                describe(self.inner.params()),
                self.inner.width(),
                self.inner.n()
            )
        }
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
        FilterBorrow::Bloom(b) => f(FilterRef::Bloom(&b.inner), b.inner.memory_bits()),
        FilterBorrow::Counting(c) => f(FilterRef::Counting(&c.inner), c.inner.memory_bits()),
    })
}

/// The Python object of a decoded filter of either kind, with its frame's header.
pub(crate) fn filter_object(
    py: Python<'_>,
    f: AnyFilter,
    header: Option<FrameHeader>,
) -> PyResult<Py<PyAny>> {
    Ok(match f {
        AnyFilter::Bloom(f) => Py::new(py, BloomFilter::with_header(f, header))?.into_any(),
        AnyFilter::Counting(f) => Py::new(py, CountingFilter::with_header(f, header))?.into_any(),
    })
}
