//! The exceptions: one class per variant of the library's error enum, under families.
//!
//! ```text
//! BloomwireError
//! ├── InvalidParameter, Incompatible, OverBudget, UnexpectedDelta, UnexpectedFilterType,
//! │   OpaqueHashFamily, PlanExceedsLimits
//! ├── AllocationFailed (also a MemoryError): the machine cannot hold the filter
//! ├── FrameError: the frame cannot be decoded
//! │   ├── Incomplete (read more and try again), LimitExceeded
//! │   ├── MissingTag, BadTag (a decoder with a key: no tag, a wrong tag)
//! │   ├── TagNotVerified (a receiver with a key: a message not decoded with it)
//! │   └── BadMagic, UnsupportedVersion, InvalidField, UnsupportedCoding, BadVarint,
//! │       ChecksumMismatch, TrailingBytes, CorruptPayload
//! └── SequenceError: a frame out of a receiver's order, nothing changed
//!     ├── StaleGeneration (a duplicate or late frame)
//!     └── ResyncNeeded (ask the sender for a full frame)
//!         └── GenerationGap, BaseMismatch, ResultMismatch
//! ```

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyMemoryError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

use crate::api::{Attr, Failure};

create_exception!(
    bloomwire,
    BloomwireError,
    PyException,
    "Every error of bloomwire. Attributes carry the error's fields (offset, field, ...)."
);
create_exception!(
    bloomwire,
    InvalidParameter,
    BloomwireError,
    "A parameter outside what bloomwire supports (attributes name, reason)."
);
create_exception!(
    bloomwire,
    Incompatible,
    BloomwireError,
    "Two filters that must agree on m, k, layout and hash family do not (attribute reason)."
);
create_exception!(
    bloomwire,
    OverBudget,
    BloomwireError,
    "No encoding fits the byte budget (attributes budget, compressed, raw)."
);
create_exception!(
    bloomwire,
    UnexpectedDelta,
    BloomwireError,
    "A delta frame where a full frame was expected (use decode_message or a Receiver)."
);
create_exception!(
    bloomwire,
    UnexpectedFilterType,
    BloomwireError,
    "A counting filter where a Bloom filter was expected, or the other way round \
     (attributes expected, got)."
);
create_exception!(
    bloomwire,
    OpaqueHashFamily,
    BloomwireError,
    "A query or insert on a filter of the opaque hash family (base hash 0): another library \
     placed its bits, and only that library can query them."
);
create_exception!(
    bloomwire,
    PlanExceedsLimits,
    BloomwireError,
    "A plan would exceed the receiver's limits (attributes name, needed, limit)."
);
create_exception!(
    bloomwire,
    FrameError,
    BloomwireError,
    "A frame that cannot be decoded; subclasses say why, most with the byte offset."
);
create_exception!(
    bloomwire,
    Incomplete,
    FrameError,
    "The input ends before the frame does: read at least `needed` more bytes and try again."
);
create_exception!(
    bloomwire,
    LimitExceeded,
    FrameError,
    "A header value exceeds the caller's limits (attributes field, value, limit, offset)."
);
create_exception!(
    bloomwire,
    BadMagic,
    FrameError,
    "Not a bloomwire frame: the magic bytes are wrong."
);
create_exception!(
    bloomwire,
    UnsupportedVersion,
    FrameError,
    "A format version this decoder does not implement (attribute version)."
);
create_exception!(
    bloomwire,
    InvalidField,
    FrameError,
    "A header field holds a reserved or undefined value (attributes field, value, offset)."
);
create_exception!(
    bloomwire,
    UnsupportedCoding,
    FrameError,
    "A coding of the registry outside the profile the decoder implements (attributes \
     coding, offset): the frame may be valid; send this receiver the core profile."
);
create_exception!(
    bloomwire,
    BadVarint,
    FrameError,
    "A malformed varint (attributes field, offset)."
);
create_exception!(
    bloomwire,
    ChecksumMismatch,
    FrameError,
    "The frame's CRC-32C does not match its contents (attributes stored, computed, offset)."
);
create_exception!(
    bloomwire,
    MissingTag,
    FrameError,
    "A decoder with a key was given a frame without an authentication tag; refused before its \
     payload was read (attribute offset: the flags byte)."
);
create_exception!(
    bloomwire,
    BadTag,
    FrameError,
    "The frame's authentication tag is not the one the decoder's key gives: forged, altered \
     or made with another key; refused before its payload was read (attribute offset)."
);
create_exception!(
    bloomwire,
    TagNotVerified,
    FrameError,
    "A Receiver with a key was given a filter or delta whose tag was not checked with that \
     key: decoded without a key (its tag skipped) or with another one. Decode it with the \
     receiver's key, or give the frame's bytes to `receive`; the receiver is unchanged."
);
create_exception!(
    bloomwire,
    TrailingBytes,
    FrameError,
    "Bytes follow the frame (attributes count, offset)."
);
create_exception!(
    bloomwire,
    CorruptPayload,
    FrameError,
    "The payload does not decode to exactly the filter, canonically (attributes reason, offset)."
);
create_exception!(
    bloomwire,
    SequenceError,
    BloomwireError,
    "A frame that does not follow the receiver's generation; the receiver is unchanged."
);
create_exception!(
    bloomwire,
    StaleGeneration,
    SequenceError,
    "A frame not newer than the receiver's generation: a duplicate or late frame \
     (attributes have, got)."
);
create_exception!(
    bloomwire,
    ResyncNeeded,
    SequenceError,
    "The receiver cannot apply the delta: ask the sender for a full frame."
);
create_exception!(
    bloomwire,
    GenerationGap,
    ResyncNeeded,
    "A delta for a generation the receiver does not hold (attributes have, base)."
);
create_exception!(
    bloomwire,
    BaseMismatch,
    ResyncNeeded,
    "The receiver's base differs from the sender's (attributes generation, expected, actual)."
);
create_exception!(
    bloomwire,
    ResultMismatch,
    ResyncNeeded,
    "Applying the delta did not give the sender's bits (attributes generation, expected, actual)."
);

/// `AllocationFailed`, made once: a subclass of both `BloomwireError` and the built-in
/// `MemoryError` (which `create_exception!`, of one base, cannot make), so that
/// `except MemoryError` and `except BloomwireError` both catch it.
static ALLOCATION_FAILED: PyOnceLock<Py<PyType>> = PyOnceLock::new();

fn allocation_failed(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    let class = ALLOCATION_FAILED.get_or_try_init(py, || -> PyResult<_> {
        let bases = PyTuple::new(
            py,
            [
                py.get_type::<BloomwireError>(),
                py.get_type::<PyMemoryError>(),
            ],
        )?;
        let namespace = PyDict::new(py);
        namespace.set_item("__module__", "bloomwire")?;
        namespace.set_item(
            "__doc__",
            "Memory for a filter (or a decoded payload) could not be allocated: the machine \
             lacks it (attribute bytes, what was asked for). A MemoryError too. Decoders' \
             limits keep allocations to what the receiver chose; this is what a caller that \
             raised them, or built a filter that large, meets instead of an abort.",
        )?;
        let class = py
            .get_type::<PyType>()
            .call1(("AllocationFailed", bases, namespace))?
            .cast_into::<PyType>()?;
        Ok(class.unbind())
    })?;
    Ok(class.bind(py).clone())
}

/// The exception class of a failure's kind.
fn class<'py>(py: Python<'py>, kind: &str) -> PyResult<Bound<'py, PyType>> {
    Ok(match kind {
        "AllocationFailed" => return allocation_failed(py),
        "InvalidParameter" => py.get_type::<InvalidParameter>(),
        "Incompatible" => py.get_type::<Incompatible>(),
        "OverBudget" => py.get_type::<OverBudget>(),
        "UnexpectedDelta" => py.get_type::<UnexpectedDelta>(),
        "UnexpectedFilterType" => py.get_type::<UnexpectedFilterType>(),
        "OpaqueHashFamily" => py.get_type::<OpaqueHashFamily>(),
        "Incomplete" => py.get_type::<Incomplete>(),
        "LimitExceeded" => py.get_type::<LimitExceeded>(),
        "BadMagic" => py.get_type::<BadMagic>(),
        "UnsupportedVersion" => py.get_type::<UnsupportedVersion>(),
        "InvalidField" => py.get_type::<InvalidField>(),
        "UnsupportedCoding" => py.get_type::<UnsupportedCoding>(),
        "BadVarint" => py.get_type::<BadVarint>(),
        "ChecksumMismatch" => py.get_type::<ChecksumMismatch>(),
        "MissingTag" => py.get_type::<MissingTag>(),
        "BadTag" => py.get_type::<BadTag>(),
        "TagNotVerified" => py.get_type::<TagNotVerified>(),
        "PlanExceedsLimits" => py.get_type::<PlanExceedsLimits>(),
        "TrailingBytes" => py.get_type::<TrailingBytes>(),
        "CorruptPayload" => py.get_type::<CorruptPayload>(),
        "StaleGeneration" => py.get_type::<StaleGeneration>(),
        "GenerationGap" => py.get_type::<GenerationGap>(),
        "BaseMismatch" => py.get_type::<BaseMismatch>(),
        "ResultMismatch" => py.get_type::<ResultMismatch>(),
        _ => py.get_type::<BloomwireError>(),
    })
}

fn to_pyerr(f: Failure) -> PyErr {
    Python::attach(|py| {
        let class = match class(py, f.kind) {
            Ok(class) => class,
            Err(e) => return e,
        };
        let err = PyErr::from_type(class, f.message);
        let value = err.value(py);
        for (name, attr) in f.attrs {
            let set = match attr {
                Attr::Int(v) => value.setattr(name, v),
                Attr::Str(s) => value.setattr(name, s),
                Attr::None => value.setattr(name, py.None()),
            };
            if let Err(e) = set {
                return e;
            }
        }
        err
    })
}

/// Results of the library, as Python results.
pub trait IntoPyResult<T> {
    /// The value, or the failure as its exception.
    fn into_py(self) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for Result<T, Failure> {
    fn into_py(self) -> PyResult<T> {
        self.map_err(to_pyerr)
    }
}

/// Add the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("BloomwireError", py.get_type::<BloomwireError>())?;
    m.add("FrameError", py.get_type::<FrameError>())?;
    m.add("SequenceError", py.get_type::<SequenceError>())?;
    m.add("ResyncNeeded", py.get_type::<ResyncNeeded>())?;
    for kind in [
        "InvalidParameter",
        "Incompatible",
        "OverBudget",
        "UnexpectedDelta",
        "UnexpectedFilterType",
        "OpaqueHashFamily",
        "Incomplete",
        "LimitExceeded",
        "BadMagic",
        "UnsupportedVersion",
        "InvalidField",
        "UnsupportedCoding",
        "BadVarint",
        "ChecksumMismatch",
        "MissingTag",
        "BadTag",
        "TagNotVerified",
        "AllocationFailed",
        "PlanExceedsLimits",
        "TrailingBytes",
        "CorruptPayload",
        "StaleGeneration",
        "GenerationGap",
        "BaseMismatch",
        "ResultMismatch",
    ] {
        m.add(kind, class(py, kind)?)?;
    }
    Ok(())
}
