//! Frames: `encode`, the decode functions, `frame_info` and `Delta` (`FrameInfo`, the
//! header, is `header.rs`; the settings and checks they take, `settings.rs`).

use bloomwire::filter::any::FilterRef;
use bloomwire::{AnyFilter, Decodable, Decoded, FrameHeader, Message};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::args::{frame_bytes, frame_key, maybe_detach, DETACH_FRAME_BYTES};
use crate::errors::{Failure, IntoPyResult, Res};
use crate::filter::{
    filter_frame, filter_object, filter_ref, with_filter, BloomFilter, CountingFilter,
    FilterBorrow, HoldsKind,
};
use crate::header::FrameInfo;
use crate::settings::{
    decode_limits, encoder_settings, header_of, DecodeChecks, DEFAULT_MAX_K, DEFAULT_MAX_M,
    DEFAULT_MAX_METADATA, DEFAULT_MAX_PAYLOAD,
};

/// A decoding function of the module: `frame` and the keyword arguments every decoder takes
/// (`key`, the limits, `profile`; see `decode`), given to the body as the frame's bytes and
/// the checks they ask for.
macro_rules! decoding_function {
    ($(#[$doc:meta])* fn $name:ident($py:ident, $bytes:ident, $checks:ident) -> $ret:ty $body:block) => {
        $(#[$doc])*
        #[pyfunction]
        #[pyo3(signature = (frame, *, key = None, max_m = DEFAULT_MAX_M, max_k = DEFAULT_MAX_K, max_payload = DEFAULT_MAX_PAYLOAD, max_metadata = DEFAULT_MAX_METADATA, max_filter_bytes = None, profile = None))]
        #[allow(clippy::too_many_arguments)]
        pub(crate) fn $name(
            $py: Python<'_>,
            frame: &Bound<'_, PyAny>,
            key: Option<&Bound<'_, PyAny>>,
            max_m: u64,
            max_k: u32,
            max_payload: u64,
            max_metadata: u64,
            max_filter_bytes: Option<u64>,
            profile: Option<&str>,
        ) -> PyResult<$ret> {
            let limits =
                decode_limits(max_m, max_k, max_payload, max_metadata, max_filter_bytes, profile)?;
            let $checks = DecodeChecks::new(limits, frame_key(key)?);
            let input = frame_bytes(frame)?;
            let $bytes = input.as_slice();
            $body
        }
    };
}

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
    let filter = filter_ref(filter)?;
    if chunk_shift.is_some() && matches!(filter, FilterBorrow::Counting(_)) {
        return Err(PyValueError::new_err(
            "chunk_shift is for Bloom filters: counting filters' codings are not chunked",
        ));
    }
    let settings =
        encoder_settings(coding, budget, metadata, key, profile)?.chunk_shift(chunk_shift);
    match filter {
        FilterBorrow::Bloom(f) => filter_frame(py, &f.inner, &settings, generation, restart),
        FilterBorrow::Counting(f) => filter_frame(py, &f.inner, &settings, generation, restart),
    }
}

decoding_function! {
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
    fn decode(py, bytes, checks) -> BloomFilter {
        decode_filter(py, bytes, &checks)
    }
}

decoding_function! {
    /// Decode the one full counting filter frame `frame` holds; keys, limits and errors as
    /// `decode`.
    fn decode_counting(py, bytes, checks) -> CountingFilter {
        decode_filter(py, bytes, &checks)
    }
}

decoding_function! {
    /// Decode any one frame: a `BloomFilter`, a `CountingFilter` or a `Delta`; keys, limits
    /// and errors as `decode`.
    fn decode_message(py, bytes, checks) -> Py<PyAny> {
        let big = bytes.len() >= DETACH_FRAME_BYTES;
        match maybe_detach(py, big, || decode_any(bytes, &checks)).into_py()? {
            AnyMessage::Full(f, header) => filter_object(py, f, Some(header)),
            AnyMessage::Delta(inner) => Ok(Py::new(py, Delta { inner })?.into_any()),
        }
    }
}

/// The filter of the class `C` of the one full frame `bytes` holds, decoded with the GIL
/// released when the frame is large; its `header` is the frame's.
fn decode_filter<C: HoldsKind>(py: Python<'_>, bytes: &[u8], checks: &DecodeChecks) -> PyResult<C>
where
    Decoded<C::Inner>: Decodable,
{
    let big = bytes.len() >= DETACH_FRAME_BYTES;
    let Decoded { filter, header } =
        maybe_detach(py, big, || checks.decode::<Decoded<C::Inner>>(bytes)).into_py()?;
    Ok(C::with_header(filter, Some(header)))
}

/// Bytes of memory the calling thread keeps for its next encodes (frames' payloads and
/// the coders' scratch, reused so that a sender's next encode takes no fresh memory): at
/// most 64 MiB a thread.
#[pyfunction]
pub(crate) fn thread_scratch_bytes() -> usize {
    bloomwire::thread_scratch_bytes()
}

/// Give the memory the calling thread keeps for its next encodes back to the allocator,
/// and return how many bytes that was: for a thread that will encode no more for a while.
#[pyfunction]
pub(crate) fn release_thread_scratch() -> usize {
    bloomwire::release_thread_scratch()
}

decoding_function! {
    /// The header of the frame at the start of `frame`, checked against the limits.
    ///
    /// Without a `key` nothing else is read: the payload, the checksum and a tag are not
    /// checked (use a decode function for that), and a tagged frame's `tag` is "unverified".
    /// With a key the whole frame must be there: its length, checksum and tag are checked
    /// (`MissingTag`, `BadTag`), not its payload, and `tag` is "verified".
    fn frame_info(_py, bytes, checks) -> FrameInfo {
        let info = header_of(bytes, &checks).into_py()?;
        Ok(FrameInfo { info })
    }
}

/// A decoded delta frame: the XOR of two generations of a filter, to apply to the base.
#[pyclass(module = "bloomwire", frozen)]
pub(crate) struct Delta {
    pub(crate) inner: AnyDelta,
}

#[pymethods]
impl Delta {
    /// The generation the delta produces.
    #[getter]
    fn generation(&self) -> u64 {
        self.inner.header().generation
    }

    /// The generation the delta applies to.
    #[getter]
    fn base_generation(&self) -> u64 {
        self.inner.base_generation()
    }

    /// Whether it is a counting filter's delta.
    #[getter]
    fn counting(&self) -> bool {
        self.inner.header().is_counting()
    }

    /// The frame's header (metadata, tag status, ...).
    #[getter]
    fn header(&self) -> FrameInfo {
        FrameInfo {
            info: self.inner.header().clone(),
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
            self.generation(),
            self.inner.base_generation(),
            if self.counting() { "True" } else { "False" }
        )
    }
}

/// A decoded delta frame, of either filter kind.
#[derive(Debug, Clone)]
pub(crate) enum AnyDelta {
    /// The XOR of two generations' bits.
    Bits(bloomwire::Delta),
    /// The counter-wise XOR of two generations' counters.
    Counters(bloomwire::Delta<Vec<u8>>),
}

impl AnyDelta {
    pub(crate) fn header(&self) -> &FrameHeader {
        match self {
            AnyDelta::Bits(d) => &d.header,
            AnyDelta::Counters(d) => &d.header,
        }
    }

    /// The generation it applies to.
    pub(crate) fn base_generation(&self) -> u64 {
        match self {
            AnyDelta::Bits(d) => d.base_generation(),
            AnyDelta::Counters(d) => d.base_generation(),
        }
    }

    /// The XOR, packed like the filter's bits or counters.
    pub(crate) fn packed_xor(&self) -> Vec<u8> {
        match self {
            AnyDelta::Bits(d) => d.xor.to_bytes(),
            AnyDelta::Counters(d) => bloomwire::filter::counting::pack_counters(
                &d.xor,
                d.header.counter_width.unwrap_or(8),
            ),
        }
    }

    /// Apply the delta to a filter held as `base_generation`.
    pub(crate) fn apply(&self, base: FilterRef<'_>, base_generation: u64) -> Res<AnyFilter> {
        match (self, base) {
            (AnyDelta::Bits(d), FilterRef::Bloom(f)) => {
                Ok(AnyFilter::Bloom(d.apply(f, base_generation)?))
            }
            (AnyDelta::Counters(d), FilterRef::Counting(f)) => {
                Ok(AnyFilter::Counting(d.apply(f, base_generation)?))
            }
            (AnyDelta::Bits(_), FilterRef::Counting(_)) => Err(Failure::new(
                "UnexpectedFilterType",
                "a Bloom filter's delta applies to a BloomFilter, not a CountingFilter",
            )),
            (AnyDelta::Counters(_), FilterRef::Bloom(_)) => Err(Failure::new(
                "UnexpectedFilterType",
                "a counting filter's delta applies to a CountingFilter, not a BloomFilter",
            )),
        }
    }
}

/// Any decoded frame.
#[derive(Debug, Clone)]
enum AnyMessage {
    /// A full frame of either filter kind, and its header.
    Full(AnyFilter, FrameHeader),
    /// A delta of either filter kind.
    Delta(AnyDelta),
}

/// Decode the one frame `input` holds, whatever it carries.
fn decode_any(input: &[u8], checks: &DecodeChecks) -> Res<AnyMessage> {
    Ok(match checks.decode::<Message>(input)? {
        Message::Full(d) => AnyMessage::Full(AnyFilter::Bloom(d.filter), d.header),
        Message::Counting(d) => AnyMessage::Full(AnyFilter::Counting(d.filter), d.header),
        Message::Delta(d) => AnyMessage::Delta(AnyDelta::Bits(d)),
        Message::CountingDelta(d) => AnyMessage::Delta(AnyDelta::Counters(d)),
        other => {
            return Err(Failure::new(
                "InvalidParameter",
                format!("a frame of no kind this package knows: {other:?}"),
            ))
        }
    })
}
