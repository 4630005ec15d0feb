//! Positions of keys without a filter's bits: `Indexer`.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString, PyTuple};

use crate::args::describe;
use crate::args::{key_bytes, maybe_detach, DETACH_COLUMN_LEN, DETACH_POSITIONS};
use crate::chunks::{chunks_of, group_by_chunk};
use crate::columns;
use crate::errors::IntoPyResult;
use crate::filter::{BloomFilter, CountingFilter};
use crate::params::{params_from_parts, params_parts, ParamParts, Positions};
use crate::plan_info::Plan;

/// A one-dimensional NumPy array of `values`, each written as `W` little-endian bytes by
/// `to_le` (`dtype` says which: `<u4`, `<u8`), over a `bytearray` it owns.
pub(crate) fn numpy_array_of<T: Copy, const W: usize>(
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

pub(crate) fn u64_array(py: Python<'_>, values: &[u64]) -> PyResult<Py<PyAny>> {
    numpy_array_of(py, values, "<u8", u64::to_le_bytes)
}

/// The parameters of a `Plan`, a `BloomFilter`, a `CountingFilter` or an `Indexer`.
pub(crate) fn params_of(obj: &Bound<'_, PyAny>) -> PyResult<bloomwire::Params> {
    if let Ok(p) = obj.cast::<Plan>() {
        return Ok(p.get().info.params.clone());
    }
    if let Ok(i) = obj.cast::<Indexer>() {
        return Ok(i.get().inner.params.clone());
    }
    if let Ok(f) = obj.cast::<BloomFilter>() {
        return Ok(f.borrow().inner.params().clone());
    }
    if let Ok(f) = obj.cast::<CountingFilter>() {
        return Ok(f.borrow().inner.params().clone());
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
pub(crate) fn key_positions(
    py: Python<'_>,
    indexer: &Positions,
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
pub(crate) struct Indexer {
    pub(crate) inner: Positions,
}

#[pymethods]
impl Indexer {
    /// The indexer of the filter of a `Plan`, a `BloomFilter` or a `CountingFilter`.
    #[new]
    fn new(filter: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Indexer {
            inner: Positions::new(params_of(filter)?).into_py()?,
        })
    }

    /// Bits of the filter.
    #[getter]
    fn m(&self) -> u64 {
        self.inner.params.m()
    }

    /// Hash functions per key.
    #[getter]
    fn k(&self) -> f64 {
        self.inner.params.k().to_f64()
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
        let m = self.inner.params.m();
        chunks_of(m, shift).into_py()?;
        let mut positions = Vec::new();
        let count = key_positions(py, &self.inner, keys, &mut positions)?;
        let big = positions.len() >= DETACH_POSITIONS;
        let grouped = maybe_detach(py, big, || group_by_chunk(&positions, m, shift)).into_py()?;
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
            .is_ok_and(|o| o.get().inner.params == self.inner.params)
    }

    /// Pickled as its parameters.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let parts = params_parts(&slf.get().inner.params);
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
    fn _from_parts(parts: ParamParts) -> PyResult<Self> {
        let params = params_from_parts(parts).into_py()?;
        Ok(Indexer {
            inner: Positions::new(params).into_py()?,
        })
    }

    fn __repr__(&self) -> String {
        format!("Indexer({})", describe(&self.inner.params))
    }
}
