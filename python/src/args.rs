//! Arguments: Python objects into the library's values (keys, frames, hash families,
//! frame keys, metadata, decoding checks), and the GIL released around heavy work.

use std::borrow::Cow;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyList, PyMemoryView, PyString};

use bloomwire::{BaseHash, Frame, FrameKey, HashFamily, IndexScheme, Params};

use crate::columns;

/// Frames at least this long are decoded with the GIL released.
pub(crate) const DETACH_FRAME_BYTES: usize = 1 << 15;
/// Filters of at least this many bits (or counters) are encoded with the GIL released.
pub(crate) const DETACH_FILTER_BITS: u64 = 1 << 18;
/// Positions at least this many are set (or grouped) with the GIL released.
pub(crate) const DETACH_POSITIONS: usize = 1 << 14;

/// `f` of the bytes of every key of the iterable `keys` (see [`key_bytes`]), in order; the
/// first error stops there.
pub(crate) fn for_each_key(
    keys: &Bound<'_, PyAny>,
    mut f: impl FnMut(&[u8]) -> PyResult<()>,
) -> PyResult<()> {
    for key in keys.try_iter()? {
        f(&key_bytes(&key?)?)?;
    }
    Ok(())
}

/// The bytes of a key: `bytes` borrowed, `str` as UTF-8, `bytearray` and `memoryview` copied.
pub(crate) fn key_bytes<'a>(key: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
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
pub(crate) fn owned_bytes(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u8>> {
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
pub(crate) enum FrameBytes<'py> {
    Shared(Bound<'py, PyBytes>),
    Owned(Vec<u8>),
}

impl FrameBytes<'_> {
    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            FrameBytes::Shared(b) => b.as_bytes(),
            FrameBytes::Owned(v) => v,
        }
    }
}

pub(crate) fn frame_bytes<'py>(obj: &Bound<'py, PyAny>) -> PyResult<FrameBytes<'py>> {
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

pub(crate) fn siphash_key(key: Option<&Bound<'_, PyAny>>) -> PyResult<Option<[u8; 16]>> {
    key.map(|k| {
        let bytes = key_bytes(k)?;
        <[u8; 16]>::try_from(bytes.as_ref())
            .map_err(|_| PyValueError::new_err("siphash_key is 16 bytes"))
    })
    .transpose()
}

pub(crate) fn family(seed: u64, key: Option<&Bound<'_, PyAny>>) -> PyResult<HashFamily> {
    let key = siphash_key(key)?;
    if key.is_some() && seed != 0 {
        return Err(PyValueError::new_err(
            "give a seed (xxHash64) or a siphash_key (SipHash-2-4), not both",
        ));
    }
    Ok(hash_family(seed, key))
}

/// The frame key of a `key=` argument: exactly 32 bytes (`bytes`, `bytearray` or
/// `memoryview`).
pub(crate) fn frame_key(key: Option<&Bound<'_, PyAny>>) -> PyResult<Option<FrameKey>> {
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
    Ok(Some(FrameKey::new(bytes)))
}

pub(crate) fn key_type_error(key: &Bound<'_, PyAny>) -> PyErr {
    let ty = key
        .get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string());
    PyTypeError::new_err(format!(
        "key is 32 bytes (bytes, bytearray or memoryview), not {ty}"
    ))
}

/// Application metadata: bytes (`bytearray` and `memoryview` copied); empty is none.
pub(crate) fn metadata_bytes(metadata: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<u8>>> {
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

/// The function of `bloomwire._pickle` that loads a pickled object.
pub(crate) fn unpickler<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("bloomwire._pickle")?.getattr(name)
}

/// Run `f` with the GIL released when `big`.
pub(crate) fn maybe_detach<T, F>(py: Python<'_>, big: bool, f: F) -> T
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

pub(crate) fn to_pybytes<'py>(py: Python<'py>, frame: &Frame) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, frame.encoded_len(), |mut buf| {
        frame.write_to(&mut buf);
        Ok(())
    })
}

/// The result of a query of a column: a pyarrow `BooleanArray` for Arrow input, a NumPy
/// `bool` array for NumPy input; `flags` holds one byte (0 or 1) per value.
pub(crate) fn bool_column(
    py: Python<'_>,
    source: columns::Source,
    flags: &[u8],
) -> PyResult<Py<PyAny>> {
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
pub(crate) const DETACH_COLUMN_LEN: usize = 1 << 10;

// ---------------------------------------------------------------------------------------------
// Hash families and their names

/// xxHash64 with a seed, or keyed SipHash-2-4; enhanced double hashing (the crate's
/// default index scheme) either way.
fn hash_family(seed: u64, siphash_key: Option<[u8; 16]>) -> HashFamily {
    let base = match siphash_key {
        Some(key) => BaseHash::siphash(key),
        None => BaseHash::Xxh64 { seed },
    };
    HashFamily::new(base, IndexScheme::default())
}

/// A short description of a filter's parameters: layout, m, k and hash family.
pub(crate) fn describe(params: &Params) -> String {
    let base = match &params.family().base {
        BaseHash::Xxh64 { seed } => format!("xxh64 seed {seed}"),
        BaseHash::Opaque => "opaque".to_string(),
        _ => "siphash".to_string(),
    };
    format!(
        "m={}, k={}, layout={}, hash={base}",
        params.m(),
        params.k(),
        layout_name(params)
    )
}

pub(crate) fn layout_name(params: &Params) -> &'static str {
    match params.layout().id() {
        0 => "standard",
        1 => "partitioned",
        _ => "blocks",
    }
}
