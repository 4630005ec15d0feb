//! Frames: `encode`, the decode functions, `frame_info`, `FrameInfo` and `Delta`.

use std::sync::Arc;

use bloomwire::filter::any::FilterRef;
use bloomwire::{
    AnyFilter, BaseHash, BitCoding, BloomFilter as Bloom, Chunking, Coding, CounterCoding,
    CountingBloomFilter as Counting, Decodable, Decoded, Encoder, Error, Frame, FrameHeader,
    FrameKey, FrameKind, FrameView, Limits, Message, Tag, Verifier,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::args::layout_name;
use crate::args::{frame_bytes, frame_key, maybe_detach, metadata_bytes, DETACH_FRAME_BYTES};
use crate::errors::{Attr, Failure, IntoPyResult, Res};
use crate::filter::{
    filter_object, filter_ref, with_filter, BloomFilter, CountingFilter, FilterBorrow,
};
use crate::{DEFAULT_MAX_K, DEFAULT_MAX_M, DEFAULT_MAX_METADATA, DEFAULT_MAX_PAYLOAD};

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
            let $checks = checks(
                key,
                max_m,
                max_k,
                max_payload,
                max_metadata,
                max_filter_bytes,
                profile,
            )?;
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
        let big = bytes.len() >= DETACH_FRAME_BYTES;
        let Decoded { filter, header } =
            maybe_detach(py, big, || checks.decode::<Decoded<Bloom>>(bytes)).into_py()?;
        Ok(BloomFilter {
            inner: filter,
            header: Some(Arc::new(header)),
        })
    }
}

decoding_function! {
    /// Decode the one full counting filter frame `frame` holds; keys, limits and errors as
    /// `decode`.
    fn decode_counting(py, bytes, checks) -> CountingFilter {
        let big = bytes.len() >= DETACH_FRAME_BYTES;
        let Decoded { filter, header } =
            maybe_detach(py, big, || checks.decode::<Decoded<Counting>>(bytes)).into_py()?;
        Ok(CountingFilter {
            inner: filter,
            header: Some(Arc::new(header)),
        })
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

// ---------------------------------------------------------------------------------------------
// Encoder settings

/// The names of the codings, Bloom filters' first (raw, which both kinds have, once).
pub(crate) fn coding_names() -> Vec<String> {
    let mut names: Vec<String> = BitCoding::ALL.iter().map(|c| c.to_string()).collect();
    for c in CounterCoding::ALL {
        let name = c.to_string();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

fn unknown_coding(name: &str, kind: &str, names: Vec<String>) -> Failure {
    let reason = format!(
        "{name:?} is not a coding of {kind}; expected one of {}",
        names.join(", ")
    );
    Failure {
        kind: "InvalidParameter",
        message: format!("invalid parameter coding: {reason}"),
        attrs: vec![
            ("name", Attr::Str("coding".into())),
            ("reason", Attr::Str(reason)),
        ],
    }
}

/// The encoder settings of a frame: a named coding or the library's choice, a budget, the
/// application metadata and the key that tags the frames.
#[derive(Debug, Clone, Default)]
pub(crate) struct EncoderSettings {
    pub(crate) coding: Option<Coding>,
    pub(crate) budget: Option<usize>,
    pub(crate) metadata: Option<Vec<u8>>,
    pub(crate) key: Option<FrameKey>,
    pub(crate) chunk_shift: Option<u8>,
    pub(crate) profile: Option<bloomwire::Profile>,
}

impl EncoderSettings {
    fn apply<F: bloomwire::Filter>(&self, mut e: Encoder<F>) -> Encoder<F> {
        if let Some(b) = self.budget {
            e = e.budget(b);
        }
        if let Some(shift) = self.chunk_shift {
            e = e.chunking(Chunking::Shift(shift));
        }
        if let Some(m) = &self.metadata {
            e = e.metadata(m.clone());
        }
        if let Some(k) = &self.key {
            e = e.key(k.clone());
        }
        if let Some(p) = self.profile {
            e = e.profile(p);
        }
        e
    }

    /// The full frame of a Bloom filter carrying `generation`, with the restart flag if
    /// asked.
    pub(crate) fn encode_bloom(&self, f: &Bloom, generation: u64, restart: bool) -> Res<Frame> {
        let frame = self.bloom()?.encode_generation(f, generation)?;
        Ok(frame.with_restart(restart)?)
    }

    /// The full frame of a counting filter carrying `generation`, with the restart flag if
    /// asked.
    pub(crate) fn encode_counting(
        &self,
        f: &Counting,
        generation: u64,
        restart: bool,
    ) -> Res<Frame> {
        let frame = self.counting()?.encode_generation(f, generation)?;
        Ok(frame.with_restart(restart)?)
    }

    /// The library's encoder of Bloom filters with these settings; a coding of counters is
    /// refused.
    pub(crate) fn bloom(&self) -> Res<Encoder<Bloom>> {
        let mut e = Encoder::new();
        if let Some(coding) = self.coding {
            let names = BitCoding::ALL.iter().map(|c| c.to_string()).collect();
            e = e.coding(
                BitCoding::try_from(coding)
                    .map_err(|c| unknown_coding(&c.to_string(), "a Bloom filter", names))?,
            );
        }
        Ok(self.apply(e))
    }

    /// The library's encoder of counting filters with these settings; a coding of bits is
    /// refused.
    pub(crate) fn counting(&self) -> Res<Encoder<Counting>> {
        let mut e = Encoder::new();
        if let Some(coding) = self.coding {
            let names = CounterCoding::ALL.iter().map(|c| c.to_string()).collect();
            e = e.coding(
                CounterCoding::try_from(coding)
                    .map_err(|c| unknown_coding(&c.to_string(), "a counting filter", names))?,
            );
        }
        Ok(self.apply(e))
    }

    /// The same settings with this application metadata on every frame (empty: none).
    pub(crate) fn metadata(mut self, metadata: Option<Vec<u8>>) -> Self {
        self.metadata = metadata.filter(|m| !m.is_empty());
        self
    }

    /// The same settings tagging every frame with `key`.
    pub(crate) fn key(mut self, key: Option<FrameKey>) -> Self {
        self.key = key;
        self
    }

    /// The same settings writing only the codings of the named profile ("core" or "full";
    /// None: the library's default, full).
    pub(crate) fn profile(mut self, profile: Option<&str>) -> Res<Self> {
        self.profile = profile.map(str::parse).transpose()?;
        Ok(self)
    }

    /// The same settings with payloads in chunks of `2^shift` bits (None: the library's
    /// choice).
    pub(crate) fn chunk_shift(mut self, shift: Option<u8>) -> Self {
        self.chunk_shift = shift;
        self
    }
}

/// Encoder settings; a name that is no coding at all is refused here, one of the other filter
/// kind when encoding.
pub(crate) fn encoder(coding: Option<&str>, budget: Option<usize>) -> Res<EncoderSettings> {
    let coding = coding
        .map(|name| {
            name.parse::<Coding>()
                .map_err(|_| unknown_coding(name, "any filter", coding_names()))
        })
        .transpose()?;
    Ok(EncoderSettings {
        coding,
        budget,
        ..EncoderSettings::default()
    })
}

// ---------------------------------------------------------------------------------------------
// Decoding

/// Limits from their values; `max_filter_bytes` None is the library's default,
/// `ceil(max_m / 8)`.
pub(crate) fn limits(
    max_m: u64,
    max_k: u32,
    max_payload: u64,
    max_metadata: u64,
    max_filter_bytes: Option<u64>,
) -> Limits {
    let limits = Limits::new()
        .max_m(max_m)
        .max_k(max_k)
        .max_payload(max_payload)
        .max_metadata(max_metadata);
    match max_filter_bytes {
        Some(bytes) => limits.max_filter_bytes(bytes),
        None => limits,
    }
}

/// `limits` decoding only the codings of the named profile ("core" or "full"; None: full).
pub(crate) fn limits_of_profile(limits: Limits, profile: Option<&str>) -> Res<Limits> {
    Ok(match profile {
        Some(name) => limits.profile(name.parse()?),
        None => limits,
    })
}

/// What a decoder checks: the limits, and the key frames must be tagged with (if any).
#[derive(Debug, Clone)]
pub(crate) struct DecodeChecks {
    limits: Limits,
    verifier: Option<Verifier>,
}

impl DecodeChecks {
    /// Frames within `limits`, tagged with `key` when there is one (a tag is otherwise
    /// skipped, and reported as unverified).
    pub(crate) fn new(limits: Limits, key: Option<FrameKey>) -> Self {
        DecodeChecks {
            limits,
            verifier: key.map(|k| Verifier::new(k, limits)),
        }
    }

    fn decode<T: Decodable>(&self, input: &[u8]) -> Result<T, Error> {
        match &self.verifier {
            Some(v) => bloomwire::decode(input, v),
            None => bloomwire::decode(input, &self.limits),
        }
    }

    fn view<'a>(&self, input: &'a [u8]) -> Result<FrameView<'a>, Error> {
        match &self.verifier {
            Some(v) => FrameView::parse(input, v),
            None => FrameView::parse(input, &self.limits),
        }
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

/// The header of the frame at the start of `input`. Without a key it is checked against the
/// limits and nothing else (the payload, the checksum and a tag are not read); with one, the
/// whole frame's length, checksum and tag are checked too (not its payload).
fn header_of(input: &[u8], checks: &DecodeChecks) -> Res<FrameHeader> {
    if checks.verifier.is_some() {
        return Ok(checks.view(input)?.header().clone());
    }
    Ok(FrameHeader::parse(input, &checks.limits)?)
}

/// Settings of an encoder from the arguments of `encode` and `Sender`.
pub(crate) fn encoder_settings(
    coding: Option<&str>,
    budget: Option<usize>,
    metadata: Option<&Bound<'_, PyAny>>,
    key: Option<&Bound<'_, PyAny>>,
    profile: Option<&str>,
) -> PyResult<EncoderSettings> {
    Ok(encoder(coding, budget)
        .into_py()?
        .profile(profile)
        .into_py()?
        .metadata(metadata_bytes(metadata)?)
        .key(frame_key(key)?))
}

/// What a decoding function checks: its limits and its key.
pub(crate) fn checks(
    key: Option<&Bound<'_, PyAny>>,
    max_m: u64,
    max_k: u32,
    max_payload: u64,
    max_metadata: u64,
    max_filter_bytes: Option<u64>,
    profile: Option<&str>,
) -> PyResult<DecodeChecks> {
    let limits = limits(max_m, max_k, max_payload, max_metadata, max_filter_bytes);
    Ok(DecodeChecks::new(
        limits_of_profile(limits, profile).into_py()?,
        frame_key(key)?,
    ))
}
