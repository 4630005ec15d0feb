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

use bloomwire::Error;

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

impl<T> IntoPyResult<T> for Result<T, Error> {
    fn into_py(self) -> PyResult<T> {
        self.map_err(|e| to_pyerr(e.into()))
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

/// A value attached to an error, for the Python exception's attributes.
#[derive(Debug, Clone)]
pub enum Attr {
    /// An integer.
    Int(u64),
    /// A string.
    Str(String),
    /// Nothing (for example a receiver that holds no generation yet).
    None,
}

/// A library error, as the exception class name, the message and the named fields.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The error variant's name; the Python exception class of the same name.
    pub kind: &'static str,
    /// The library's message.
    pub message: String,
    /// The variant's fields.
    pub attrs: Vec<(&'static str, Attr)>,
}

/// Results of this file.
pub type Res<T> = Result<T, Failure>;

impl Failure {
    /// A failure that is not one of the library's errors (a wrong argument).
    pub fn new(kind: &'static str, message: impl Into<String>) -> Self {
        Failure {
            kind,
            message: message.into(),
            attrs: Vec::new(),
        }
    }

    /// The same failure with one more string attribute.
    pub fn with_attr(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.attrs.push((name, text(value)));
        self
    }
}

fn int(v: impl TryInto<u64>) -> Attr {
    v.try_into().map_or(Attr::None, Attr::Int)
}

fn text(s: impl Into<String>) -> Attr {
    Attr::Str(s.into())
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let message = e.to_string();
        let (kind, attrs): (&'static str, Vec<(&'static str, Attr)>) = match e {
            Error::InvalidParameter { name, reason } => (
                "InvalidParameter",
                vec![("name", text(name)), ("reason", text(reason))],
            ),
            Error::Incompatible(reason) => ("Incompatible", vec![("reason", text(reason))]),
            Error::Incomplete { needed } => ("Incomplete", vec![("needed", int(needed))]),
            Error::BadMagic { byte, offset } => (
                "BadMagic",
                vec![
                    ("byte", int(u64::from(byte))),
                    ("offset", int(offset as u64)),
                ],
            ),
            Error::UnsupportedVersion(v) => ("UnsupportedVersion", vec![("version", int(v))]),
            Error::InvalidField {
                field,
                value,
                offset,
            } => (
                "InvalidField",
                vec![
                    ("field", text(field)),
                    ("value", int(value)),
                    ("offset", int(offset)),
                ],
            ),
            Error::UnsupportedCoding { coding, offset } => (
                "UnsupportedCoding",
                vec![("coding", int(coding)), ("offset", int(offset))],
            ),
            Error::BadVarint { field, offset } => (
                "BadVarint",
                vec![("field", text(field)), ("offset", int(offset))],
            ),
            Error::LimitExceeded {
                field,
                value,
                limit,
                offset,
            } => (
                "LimitExceeded",
                vec![
                    ("field", text(field)),
                    ("value", int(value)),
                    ("limit", int(limit)),
                    ("offset", int(offset)),
                ],
            ),
            Error::ChecksumMismatch {
                stored,
                computed,
                offset,
            } => (
                "ChecksumMismatch",
                vec![
                    ("stored", int(stored)),
                    ("computed", int(computed)),
                    ("offset", int(offset)),
                ],
            ),
            Error::MissingTag { offset } => ("MissingTag", vec![("offset", int(offset))]),
            Error::BadTag { offset } => ("BadTag", vec![("offset", int(offset))]),
            Error::TagNotVerified => ("TagNotVerified", vec![]),
            Error::PlanExceedsLimits {
                name,
                needed,
                limit,
            } => (
                "PlanExceedsLimits",
                vec![
                    ("name", text(name)),
                    ("needed", int(needed)),
                    ("limit", int(limit)),
                ],
            ),
            Error::TrailingBytes { count, offset } => (
                "TrailingBytes",
                vec![("count", int(count)), ("offset", int(offset))],
            ),
            Error::CorruptPayload { reason, offset } => (
                "CorruptPayload",
                vec![("reason", text(reason)), ("offset", int(offset))],
            ),
            Error::UnexpectedDelta => ("UnexpectedDelta", vec![]),
            Error::OpaqueHashFamily => ("OpaqueHashFamily", vec![]),
            Error::UnexpectedFilterType { expected, got } => (
                "UnexpectedFilterType",
                vec![("expected", text(expected)), ("got", int(got))],
            ),
            Error::GenerationGap { have, base } => (
                "GenerationGap",
                vec![
                    ("have", have.map_or(Attr::None, Attr::Int)),
                    ("base", int(base)),
                ],
            ),
            Error::StaleGeneration { have, got } => (
                "StaleGeneration",
                vec![("have", int(have)), ("got", int(got))],
            ),
            Error::BaseMismatch {
                generation,
                expected,
                actual,
            } => (
                "BaseMismatch",
                vec![
                    ("generation", int(generation)),
                    ("expected", int(expected)),
                    ("actual", int(actual)),
                ],
            ),
            Error::ResultMismatch {
                generation,
                expected,
                actual,
            } => (
                "ResultMismatch",
                vec![
                    ("generation", int(generation)),
                    ("expected", int(expected)),
                    ("actual", int(actual)),
                ],
            ),
            Error::OverBudget {
                budget,
                compressed,
                raw,
            } => (
                "OverBudget",
                vec![
                    ("budget", int(budget)),
                    ("compressed", int(compressed)),
                    ("raw", int(raw)),
                ],
            ),
            Error::AllocationFailed { bytes } => ("AllocationFailed", vec![("bytes", int(bytes))]),
            // Variants of later library versions: the base class.
            _ => ("BloomwireError", vec![]),
        };
        Failure {
            kind,
            message,
            attrs,
        }
    }
}
