//! Frames: `encode`, the decode functions, `frame_info`, `FrameInfo` and `Delta`.

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::api::{self};
use crate::args::{checks, filter_object, frame_bytes, maybe_detach, DETACH_FRAME_BYTES};
use crate::errors::IntoPyResult;
use crate::filter::{filter_ref, with_filter, BloomFilter, CountingFilter, FilterBorrow};
use crate::{DEFAULT_MAX_K, DEFAULT_MAX_M, DEFAULT_MAX_METADATA, DEFAULT_MAX_PAYLOAD};

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
pub(crate) fn encode<'py>(
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
pub(crate) fn decode(
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
pub(crate) fn decode_counting(
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
pub(crate) fn decode_message(
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
pub(crate) fn thread_scratch_bytes() -> usize {
    api::thread_scratch_bytes()
}

/// Give the memory the calling thread keeps for its next encodes back to the allocator,
/// and return how many bytes that was: for a thread that will encode no more for a while.
#[pyfunction]
pub(crate) fn release_thread_scratch() -> usize {
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
pub(crate) fn frame_info(
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
pub(crate) struct Delta {
    pub(crate) inner: api::Delta,
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
pub(crate) struct FrameInfo {
    pub(crate) info: api::FrameInfo,
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
