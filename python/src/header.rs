//! A frame's header as Python sees it: `FrameInfo`.

use bloomwire::{BaseHash, FrameHeader, FrameKind, Tag};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::args::layout_name;

/// The header fields of a frame (see `frame_info`).
#[pyclass(module = "bloomwire", frozen)]
pub(crate) struct FrameInfo {
    pub(crate) info: FrameHeader,
}

#[pymethods]
impl FrameInfo {
    /// "full" or "delta".
    #[getter]
    fn kind(&self) -> &'static str {
        match self.info.kind {
            FrameKind::Delta { .. } => "delta",
            FrameKind::Full => "full",
        }
    }

    /// Whether the frame carries a counting filter.
    #[getter]
    fn counting(&self) -> bool {
        self.info.is_counting()
    }

    /// The generation the frame carries (or a delta produces).
    #[getter]
    fn generation(&self) -> u64 {
        self.info.generation
    }

    /// A delta's base generation, else None.
    #[getter]
    fn base_generation(&self) -> Option<u64> {
        match self.info.kind {
            FrameKind::Delta {
                base_generation, ..
            } => Some(base_generation),
            FrameKind::Full => None,
        }
    }

    /// Keys the sender inserted.
    #[getter]
    fn n(&self) -> u64 {
        self.info.n
    }

    /// Bits (or counters) of the filter.
    #[getter]
    fn m(&self) -> u64 {
        self.info.params.m()
    }

    /// Hash functions per key.
    #[getter]
    fn k(&self) -> f64 {
        self.info.params.k().to_f64()
    }

    /// "standard", "partitioned" or "blocks".
    #[getter]
    fn layout(&self) -> &'static str {
        layout_name(&self.info.params)
    }

    /// The coding's name (see `CODINGS`).
    #[getter]
    fn coding(&self) -> String {
        self.info.coding.to_string()
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

    /// Bytes of the whole frame, checksum and tag included.
    #[getter]
    fn frame_len(&self) -> usize {
        self.info.frame_len()
    }

    /// The base hash: "xxh64", "siphash24" or "opaque" (another library's bits, which
    /// bloomwire carries and does not query).
    #[getter]
    fn hash(&self) -> &'static str {
        match self.info.params.family().base {
            BaseHash::Xxh64 { .. } => "xxh64",
            BaseHash::Opaque => "opaque",
            _ => "siphash24",
        }
    }

    /// The application metadata the sender attached, as bytes; None when there is none.
    #[getter]
    fn metadata<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.info.metadata.as_deref().map(|m| PyBytes::new(py, m))
    }

    /// The authentication tag: "absent" (the frame has none), "unverified" (it has one, not
    /// checked: no key was given) or "verified" (checked with the key).
    #[getter]
    fn tag(&self) -> &'static str {
        match self.info.tag {
            Tag::Absent => "absent",
            Tag::Unverified => "unverified",
            Tag::Verified => "verified",
        }
    }

    /// The restart flag: the sender's numbering starts again with this full frame, and a
    /// receiver applies it whatever generation it holds.
    #[getter]
    fn restart(&self) -> bool {
        self.info.restart
    }

    fn __repr__(&self) -> String {
        format!(
            "FrameInfo(kind={:?}, counting={}, generation={}, m={}, k={}, n={}, coding={:?}, tag={:?}, restart={}, frame_len={})",
            self.kind(),
            if self.counting() { "True" } else { "False" },
            self.generation(),
            self.m(),
            self.k(),
            self.n(),
            self.coding(),
            self.tag(),
            if self.restart() { "True" } else { "False" },
            self.frame_len()
        )
    }
}
