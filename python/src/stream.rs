//! Generations: `Sender`, `SummarySender`, `Receiver` and their `Update`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::args::describe;
use crate::args::{
    for_each_key, frame_bytes, frame_key, key_bytes, maybe_detach, to_pybytes, DETACH_COLUMN_LEN,
    DETACH_FILTER_BITS, DETACH_FRAME_BYTES, DETACH_POSITIONS,
};
use crate::codec::{AnyDelta, Delta};
use crate::columns;
use crate::errors::IntoPyResult;
use crate::errors::{Failure, Res};
use crate::filter::{filter_object, filter_ref, with_filter, CountingFilter, FilterBorrow, Kind};
use crate::header::FrameInfo;
use crate::settings::{decode_limits, encoder_settings, EncoderSettings};
use crate::settings::{DEFAULT_MAX_K, DEFAULT_MAX_M, DEFAULT_MAX_METADATA, DEFAULT_MAX_PAYLOAD};
use bloomwire::filter::any::FilterRef;
use bloomwire::FrameHeader;
use bloomwire::{
    AnyFilter, BloomFilter as Bloom, CountingBloomFilter as Counting, Error, Frame, FrameKey,
    Limits, Message, Tag, Update as LibUpdate,
};

/// What a `Receiver` did with a frame: `kind` is "full" (the filter was replaced; `skipped`
/// generations were never seen) or "delta" (the filter advanced by one generation).
#[pyclass(module = "bloomwire", frozen)]
#[derive(Clone)]
pub(crate) struct Update {
    pub(crate) info: UpdateInfo,
    /// The header of the frame applied.
    pub(crate) header: FrameHeader,
}

#[pymethods]
impl Update {
    /// "full" or "delta".
    #[getter]
    fn kind(&self) -> &'static str {
        if self.info.full {
            "full"
        } else {
            "delta"
        }
    }

    /// Whether a full frame replaced the filter.
    #[getter]
    fn is_full(&self) -> bool {
        self.info.full
    }

    /// The receiver's new generation.
    #[getter]
    fn generation(&self) -> u64 {
        self.info.generation
    }

    /// Generations a full frame skipped (0 for a delta).
    #[getter]
    fn skipped(&self) -> u64 {
        self.info.skipped
    }

    /// The header of the frame applied (metadata, tag status, restart flag, ...).
    #[getter]
    fn header(&self) -> FrameInfo {
        FrameInfo {
            info: self.header.clone(),
        }
    }

    /// Updates compare equal when their kind, generation and skipped count do.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Update>()
            .is_ok_and(|o| o.get().info == self.info)
    }

    fn __repr__(&self) -> String {
        if self.info.full {
            format!(
                "Update(kind='full', generation={}, skipped={})",
                self.info.generation, self.info.skipped
            )
        } else {
            format!("Update(kind='delta', generation={})", self.info.generation)
        }
    }
}

/// Sends the generations of one filter (a `BloomFilter` or a `CountingFilter`): for each
/// call to `next_frame`, the smaller of a delta against the previous generation and a full
/// frame, and a full frame at least every `full_every` generations or after `request_full()`.
#[pyclass(module = "bloomwire")]
pub(crate) struct Sender {
    pub(crate) inner: SenderState,
}

#[pymethods]
impl Sender {
    /// A sender with a full frame at least every `full_every` generations (1: always full);
    /// `coding`, `budget`, `metadata` (on every frame) and `key` (every frame tagged) as in
    /// `encode`. The first frame, periodic full frames and the one after `request_full()`
    /// carry the restart flag.
    #[new]
    #[pyo3(signature = (full_every = 100, *, coding = None, budget = None, metadata = None, key = None, profile = None))]
    fn new(
        full_every: u64,
        coding: Option<&str>,
        budget: Option<usize>,
        metadata: Option<&Bound<'_, PyAny>>,
        key: Option<&Bound<'_, PyAny>>,
        profile: Option<&str>,
    ) -> PyResult<Self> {
        let settings = encoder_settings(coding, budget, metadata, key, profile)?;
        Ok(Sender {
            inner: SenderState::new(settings, full_every),
        })
    }

    /// A full frame of the generation sent last, numbered as that generation and carrying
    /// the restart flag, for one receiver that joins late or asks to resynchronize while
    /// the others keep taking deltas. The sender does not change; None before the first
    /// frame.
    fn full_frame<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let inner = &self.inner;
        match py.detach(|| inner.full_frame()) {
            None => Ok(None),
            Some(frame) => Ok(Some(to_pybytes(py, &frame.into_py()?)?)),
        }
    }

    /// The frame (`bytes`) of the next generation of `filter`. The sender keeps a copy of
    /// the filter to build the next delta; its generation advances only when a frame is
    /// returned. All calls pass the same kind of filter.
    fn next_frame<'py>(
        &mut self,
        py: Python<'py>,
        filter: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let sender = &mut self.inner;
        let frame = with_filter(filter, |f, bits| {
            maybe_detach(py, bits >= DETACH_FILTER_BITS, || sender.next_frame(f))
        })?
        .into_py()?;
        to_pybytes(py, &frame)
    }

    /// The frame (`bytes`) of the next generation of a `BloomFilter`, given as what changed
    /// since the generation sent last: the positions of the bits that flipped (a list of
    /// ints or a NumPy integer array; increasing, each once, below m) and the new
    /// generation's count of keys `n`. The frame is byte for byte the one `next_frame`
    /// makes for the filter with those bits flipped, and a delta costs what changed
    /// (the rest of the filter is never read), whatever m is; a full frame (smaller,
    /// periodic or requested) costs its coding. Raises `InvalidParameter` before the first
    /// frame (send the filter whole with `next_frame`) and for flips out of order,
    /// repeated or past m, `UnexpectedFilterType` for a sender of counting filters; the
    /// sender is then unchanged.
    fn next_frame_with_flips<'py>(
        &mut self,
        py: Python<'py>,
        flips: &Bound<'py, PyAny>,
        n: u64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let flips = flip_positions(flips)?;
        let sender = &mut self.inner;
        let big = flips.len() >= DETACH_POSITIONS;
        let frame = maybe_detach(py, big, || sender.next_frame_with_flips(&flips, n)).into_py()?;
        to_pybytes(py, &frame)
    }

    /// A copy of the generation sent last (the next delta's base: a `BloomFilter` or a
    /// `CountingFilter`), None before the first frame.
    #[getter]
    fn last_sent(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.inner
            .last_sent()
            .map(|f| {
                let owned = match f {
                    FilterRef::Bloom(b) => AnyFilter::Bloom(b.clone()),
                    FilterRef::Counting(c) => AnyFilter::Counting(c.clone()),
                };
                filter_object(py, owned, None)
            })
            .transpose()
    }

    /// Make the next frame a full one (a receiver asked to resynchronize).
    fn request_full(&mut self) {
        self.inner.request_full()
    }

    /// The generation of the last frame returned (0 before the first).
    #[getter]
    fn generation(&self) -> u64 {
        self.inner.generation()
    }
}

/// Bit positions from a NumPy integer array (copied out of it) or an iterable of ints.
pub(crate) fn flip_positions(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    if obj.hasattr("__array_interface__")? {
        return columns::numpy_positions(obj, |p| Ok(p.values().collect()));
    }
    if obj.cast::<PyString>().is_ok() || obj.cast::<PyBytes>().is_ok() {
        return Err(PyTypeError::new_err(
            "flips are a list of ints or a NumPy integer array, not bytes or str",
        ));
    }
    obj.try_iter()?
        .map(|p| {
            let p = p?;
            p.extract::<u64>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "a flipped bit's position is a non-negative int, not {}",
                    p.repr().map_or_else(|_| "?".into(), |r| r.to_string())
                ))
            })
        })
        .collect()
}

/// Sends the Bloom filter of a counting filter it owns, Summary Cache's way (Section V of
/// *Compressed Bloom Filters*): keys go in and out of the counting filter through it, and
/// each `next_frame` is a Bloom filter's frame (a delta when smaller, a full frame
/// periodically or on request) that a `Receiver` follows, made from the positions whose
/// counters left or reached zero since the last frame: a step costs what changed, whatever
/// the filter's size.
///
/// `SummarySender(counting, full_every=100, *, coding=None, budget=None, metadata=None,
/// key=None)` takes a copy of `counting` (a `CountingFilter`); the options are `Sender`'s
/// (a Bloom filter's coding).
#[pyclass(module = "bloomwire")]
pub(crate) struct SummarySender {
    pub(crate) inner: bloomwire::SummarySender,
}

#[pymethods]
impl SummarySender {
    #[new]
    #[pyo3(signature = (counting, full_every = 100, *, coding = None, budget = None, metadata = None, key = None, profile = None))]
    fn new(
        counting: &CountingFilter,
        full_every: u64,
        coding: Option<&str>,
        budget: Option<usize>,
        metadata: Option<&Bound<'_, PyAny>>,
        key: Option<&Bound<'_, PyAny>>,
        profile: Option<&str>,
    ) -> PyResult<Self> {
        let settings = encoder_settings(coding, budget, metadata, key, profile)?;
        Ok(SummarySender {
            inner: bloomwire::SummarySender::new(
                counting.inner.clone(),
                settings.bloom().into_py()?,
                full_every,
            ),
        })
    }

    /// Add a key: increment its counters (a counter leaving zero sets its bit).
    fn insert(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.insert(key_bytes(key)?);
        Ok(())
    }

    /// Add every key of an iterable.
    fn insert_many(&mut self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        for_each_key(keys, |key| {
            self.inner.insert(key);
            Ok(())
        })
    }

    /// Add every value of a column, as `BloomFilter.insert_array` (nulls skipped).
    fn insert_array(&mut self, py: Python<'_>, values: &Bound<'_, PyAny>) -> PyResult<()> {
        let inner = &mut self.inner;
        columns::for_each_chunk(values, |col| {
            maybe_detach(py, col.len() >= DETACH_COLUMN_LEN, || {
                col.present().for_each(|key| inner.insert(key))
            });
            Ok(())
        })?;
        Ok(())
    }

    /// Remove a key: decrement its counters (a counter reaching zero clears its bit).
    /// Raises `InvalidParameter`, changing nothing, when the key is not in the filter.
    fn remove(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.remove(&key_bytes(key)?).into_py()
    }

    /// Remove every key of an iterable, one after the other (an error stops there: the keys
    /// before it are removed).
    fn remove_many(&mut self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        for_each_key(keys, |key| self.inner.remove(key).into_py())
    }

    /// Whether the key may be in the set.
    fn contains(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.inner.contains(&key_bytes(key)?))
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.contains(key)
    }

    /// The number of keys in the counting filter (inserted less removed).
    fn __len__(&self) -> usize {
        self.inner.filter().n() as usize
    }

    /// The frame (`bytes`) of the next generation of the counting filter's Bloom filter:
    /// the first one whole, then from the bits whose counters left or reached zero since
    /// the last frame (byte for byte what a `Sender` makes of `filter.to_bloom_filter()`).
    /// On an error nothing changes, and the next call tries again.
    fn next_frame<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let inner = &mut self.inner;
        let big = inner.filter().counters().len() as u64 >= DETACH_FILTER_BITS;
        let frame = maybe_detach(py, big, || inner.next_frame()).into_py()?;
        to_pybytes(py, &frame)
    }

    /// A full frame of the generation sent last, numbered as it and carrying the restart
    /// flag, for one receiver that joins late; None before the first frame.
    fn full_frame<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let inner = &self.inner;
        match py.detach(|| (inner.generation() > 0).then(|| inner.full_frame())) {
            None => Ok(None),
            Some(frame) => Ok(Some(to_pybytes(py, &frame.into_py()?)?)),
        }
    }

    /// Make the next frame a full one (a receiver asked to resynchronize).
    fn request_full(&mut self) {
        self.inner.request_full()
    }

    /// The generation of the last frame returned (0 before the first).
    #[getter]
    fn generation(&self) -> u64 {
        self.inner.generation()
    }

    /// A copy of the counting filter.
    #[getter]
    fn filter(&self) -> CountingFilter {
        CountingFilter::of(self.inner.filter().clone())
    }

    fn __repr__(&self) -> String {
        format!(
            "SummarySender({}, n={}, generation={})",
            describe(self.inner.filter().params()),
            self.inner.filter().n(),
            self.inner.generation()
        )
    }
}

/// Applies a `Sender`'s frames in order. On any error its filter and generation stay as they
/// were: `GenerationGap`, `BaseMismatch` and `ResultMismatch` (all `ResyncNeeded`) mean it
/// needs a full frame, `StaleGeneration` that the frame was a duplicate or came late. It
/// holds the filter kind of the first frame it accepts (`UnexpectedFilterType` for the
/// other kind).
#[pyclass(module = "bloomwire")]
pub(crate) struct Receiver {
    pub(crate) inner: ReceiverState,
}

#[pymethods]
impl Receiver {
    /// A receiver with no filter yet, decoding within the limits (see `decode`). With a
    /// `key` (32 bytes) it accepts only frames tagged with that key: an untagged frame is
    /// `MissingTag`, a forged or altered one `BadTag`, both refused before the payload is
    /// read and before any generation rule.
    #[new]
    #[pyo3(signature = (*, key = None, max_m = DEFAULT_MAX_M, max_k = DEFAULT_MAX_K, max_payload = DEFAULT_MAX_PAYLOAD, max_metadata = DEFAULT_MAX_METADATA, max_filter_bytes = None, profile = None))]
    fn new(
        key: Option<&Bound<'_, PyAny>>,
        max_m: u64,
        max_k: u32,
        max_payload: u64,
        max_metadata: u64,
        max_filter_bytes: Option<u64>,
        profile: Option<&str>,
    ) -> PyResult<Self> {
        let limits = decode_limits(
            max_m,
            max_k,
            max_payload,
            max_metadata,
            max_filter_bytes,
            profile,
        )?;
        Ok(Receiver {
            inner: ReceiverState::new(limits, frame_key(key)?),
        })
    }

    /// Decode and apply one frame (exactly one, no trailing bytes); returns an `Update`,
    /// whose `header` is the frame's.
    fn receive(&mut self, py: Python<'_>, frame: &Bound<'_, PyAny>) -> PyResult<Update> {
        let input = frame_bytes(frame)?;
        let bytes = input.as_slice();
        let receiver = &mut self.inner;
        let big = bytes.len() >= DETACH_FRAME_BYTES;
        let (info, header) = maybe_detach(py, big, || receiver.receive(bytes)).into_py()?;
        Ok(Update { info, header })
    }

    /// Apply a filter or delta decoded elsewhere (by `decode`, `decode_counting` or
    /// `decode_message`: a `BloomFilter`, `CountingFilter` or `Delta` whose `header` is its
    /// frame's) by the rules of `receive`, and return the `Update`. The filter is applied as
    /// it is now, and copied; a filter built here has no frame (`ValueError`: encode it and
    /// `receive` the frame). A receiver with a `key` applies only what was decoded with that
    /// key: an untagged frame's message is `MissingTag`, one decoded without the key (its
    /// tag skipped) or with another key `TagNotVerified`. On any error nothing changes.
    fn apply(&mut self, py: Python<'_>, message: &Bound<'_, PyAny>) -> PyResult<Update> {
        let receiver = &mut self.inner;
        let (info, header) = if let Ok(delta) = message.cast::<Delta>() {
            let delta = &delta.get().inner;
            let header = delta.header();
            let bits = header.params.m() * if header.is_counting() { 8 } else { 1 };
            maybe_detach(py, bits >= DETACH_FILTER_BITS, || {
                receiver.apply_delta(delta)
            })
        } else {
            let unframed = || {
                PyValueError::new_err(
                    "this filter was not decoded from a frame: encode it and receive the frame",
                )
            };
            match filter_ref(message).map_err(|_| {
                PyTypeError::new_err(format!(
                    "expected a BloomFilter, a CountingFilter or a Delta, not {}",
                    message
                        .get_type()
                        .name()
                        .map_or("?".into(), |n| n.to_string())
                ))
            })? {
                FilterBorrow::Bloom(b) => {
                    let (inner, big) = (&b.inner, b.inner.memory_bits() >= DETACH_FILTER_BITS);
                    let header = b.header.as_deref().ok_or_else(unframed)?;
                    maybe_detach(py, big, || {
                        receiver.apply_filter(FilterRef::Bloom(inner), header)
                    })
                }
                FilterBorrow::Counting(c) => {
                    let (inner, big) = (&c.inner, c.inner.memory_bits() >= DETACH_FILTER_BITS);
                    let header = c.header.as_deref().ok_or_else(unframed)?;
                    maybe_detach(py, big, || {
                        receiver.apply_filter(FilterRef::Counting(inner), header)
                    })
                }
            }
        }
        .into_py()?;
        Ok(Update { info, header })
    }

    /// A copy of the current filter (`BloomFilter` or `CountingFilter`), None before the
    /// first full frame.
    #[getter]
    fn filter(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.inner
            .inner
            .filter()
            .map(|f| filter_object(py, f.clone(), None))
            .transpose()
    }

    /// The current generation, None before the first full frame.
    #[getter]
    fn generation(&self) -> Option<u64> {
        self.inner.inner.generation()
    }
}

// ---------------------------------------------------------------------------------------------
// The library's senders and receiver of either kind

/// What a receiver did with a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UpdateInfo {
    /// A full frame (else a delta).
    pub full: bool,
    /// The new generation.
    pub generation: u64,
    /// Generations a full frame skipped.
    pub skipped: u64,
}

fn update_info(u: LibUpdate) -> UpdateInfo {
    UpdateInfo {
        full: u.is_full(),
        generation: u.generation(),
        skipped: u.skipped(),
    }
}

/// A sender of one kind. Not the library's `Sender<AnyFilter>`: its `next_frame` takes an
/// `&AnyFilter`, and the Python objects hold a `BloomFilter` or a `CountingBloomFilter`, so
/// every generation would copy the whole filter into one (m/8 bytes, or m) where these
/// borrow it.
#[derive(Debug, Clone)]
enum SenderKind {
    Bloom(bloomwire::Sender<Bloom>),
    Counting(bloomwire::Sender<Counting>),
}

/// Sends the generations of one filter of either kind; the kind is that of the first filter.
#[derive(Debug, Clone)]
pub(crate) struct SenderState {
    encoder: EncoderSettings,
    full_every: u64,
    full_requested: bool,
    inner: Option<SenderKind>,
}

impl SenderState {
    /// A sender with a full frame at least every `full_every` generations.
    pub(crate) fn new(settings: EncoderSettings, full_every: u64) -> Self {
        SenderState {
            encoder: settings,
            full_every,
            full_requested: false,
            inner: None,
        }
    }

    /// The generation of the last frame sent (0 before the first).
    pub(crate) fn generation(&self) -> u64 {
        match &self.inner {
            None => 0,
            Some(SenderKind::Bloom(s)) => s.generation(),
            Some(SenderKind::Counting(s)) => s.generation(),
        }
    }

    /// Make the next frame a full one.
    pub(crate) fn request_full(&mut self) {
        match &mut self.inner {
            None => self.full_requested = true,
            Some(SenderKind::Bloom(s)) => s.request_full(),
            Some(SenderKind::Counting(s)) => s.request_full(),
        }
    }

    /// A full frame of the generation sent last, with the restart flag, for one receiver
    /// that joins late; None before the first frame. The sender does not change.
    pub(crate) fn full_frame(&self) -> Option<Res<Frame>> {
        let frame = match self.inner.as_ref()? {
            SenderKind::Bloom(s) => s.full_frame(),
            SenderKind::Counting(s) => s.full_frame(),
        };
        Some(frame.map_err(Failure::from))
    }

    /// The frame of the next generation of the filter.
    pub(crate) fn next_frame(&mut self, filter: FilterRef<'_>) -> Res<Frame> {
        let every = self.full_every;
        let inner = match &mut self.inner {
            Some(inner) => inner,
            None => self.inner.insert(match filter {
                FilterRef::Bloom(_) => {
                    SenderKind::Bloom(bloomwire::Sender::new(self.encoder.bloom()?, every))
                }
                FilterRef::Counting(_) => {
                    SenderKind::Counting(bloomwire::Sender::new(self.encoder.counting()?, every))
                }
            }),
        };
        if std::mem::take(&mut self.full_requested) {
            match inner {
                SenderKind::Bloom(s) => s.request_full(),
                SenderKind::Counting(s) => s.request_full(),
            }
        }
        let frame = match (inner, filter) {
            (SenderKind::Bloom(s), FilterRef::Bloom(f)) => s.next_frame(f)?,
            (SenderKind::Counting(s), FilterRef::Counting(f)) => s.next_frame(f)?,
            (SenderKind::Bloom(_), FilterRef::Counting(_)) => {
                return Err(Failure::new(
                    "UnexpectedFilterType",
                    "this sender sends a BloomFilter's generations, not a CountingFilter's",
                ))
            }
            (SenderKind::Counting(_), FilterRef::Bloom(_)) => {
                return Err(Failure::new(
                    "UnexpectedFilterType",
                    "this sender sends a CountingFilter's generations, not a BloomFilter's",
                ))
            }
        };
        Ok(frame)
    }
}

impl SenderState {
    /// The frame of the next generation of a Bloom filter given as the positions of the
    /// bits that flipped since the generation sent last (increasing, each once, below m)
    /// and its count of keys: the frame `next_frame` makes for the filter with those bits
    /// flipped, in time proportional to the flips (the library's
    /// `Sender::next_frame_with_flips`). Refused before the first frame and by a sender of
    /// counting filters.
    pub(crate) fn next_frame_with_flips(&mut self, flips: &[u64], n: u64) -> Res<Frame> {
        match &mut self.inner {
            None => Err(Error::InvalidParameter {
                name: "generation",
                reason: "nothing has been sent yet: send the first generation whole with \
                         next_frame"
                    .into(),
            }
            .into()),
            Some(SenderKind::Bloom(s)) => {
                if std::mem::take(&mut self.full_requested) {
                    s.request_full();
                }
                Ok(s.next_frame_with_flips(flips, n)?)
            }
            Some(SenderKind::Counting(_)) => Err(Failure::new(
                "UnexpectedFilterType",
                "flips are a Bloom filter's bits: this sender sends a CountingFilter's generations",
            )),
        }
    }

    /// The generation sent last (the next delta's base), None before the first frame.
    pub(crate) fn last_sent(&self) -> Option<FilterRef<'_>> {
        match self.inner.as_ref()? {
            SenderKind::Bloom(s) => s.last_sent().map(FilterRef::Bloom),
            SenderKind::Counting(s) => s.last_sent().map(FilterRef::Counting),
        }
    }
}

/// Applies a sender's frames in order: the library's receiver of either kind of filter, held
/// to the kind of the first frame it accepts.
#[derive(Debug, Clone)]
pub(crate) struct ReceiverState {
    pub(crate) inner: bloomwire::Receiver<AnyFilter>,
    key: Option<FrameKey>,
}

/// A frame, or a message decoded elsewhere, for a receiver.
enum Input<'a> {
    Frame(&'a [u8]),
    Message(Box<Message>),
}

impl ReceiverState {
    /// A receiver with no filter yet, decoding within `limits` and, with a key, accepting
    /// only frames tagged with it.
    pub(crate) fn new(limits: Limits, key: Option<FrameKey>) -> Self {
        let inner = bloomwire::Receiver::<AnyFilter>::with_limits(limits);
        let inner = match &key {
            Some(key) => inner.with_key(key.clone()),
            None => inner,
        };
        ReceiverState { inner, key }
    }

    /// Whether a frame of this kind (counting or not) is refused: the receiver holds a
    /// filter of the other kind.
    fn other_kind(&self, counting: bool) -> bool {
        self.inner
            .filter()
            .is_some_and(|f| f.is_counting() != counting)
    }

    /// What a receiver of the kind held says to an input of the other kind: the errors of
    /// its checks of the frame (checksum, tag: what the library checks before the kind), and
    /// then `UnexpectedFilterType`. It changes nothing.
    fn refuse(&self, input: Input<'_>) -> Failure {
        fn refused<F: bloomwire::Filter>(r: &ReceiverState, input: Input<'_>) -> Option<Error> {
            let typed = bloomwire::Receiver::<F>::with_limits(*r.inner.limits());
            let mut typed = match &r.key {
                Some(key) => typed.with_key(key.clone()),
                None => typed,
            };
            match input {
                Input::Frame(bytes) => typed.receive(bytes).err(),
                Input::Message(message) => typed.apply(*message).err(),
            }
        }
        let error = match self.inner.filter() {
            Some(AnyFilter::Counting(_)) => refused::<Counting>(self, input),
            _ => refused::<Bloom>(self, input),
        };
        error.map_or_else(
            || Failure::new("UnexpectedFilterType", "a frame of the other filter kind"),
            Failure::from,
        )
    }

    /// Decode and apply one frame; on any error nothing changes. Returns what was done and
    /// the frame's header.
    pub(crate) fn receive(&mut self, input: &[u8]) -> Res<(UpdateInfo, FrameHeader)> {
        // The header, parsed as the receiver parses it first: the kind, and the Update's.
        let mut header = FrameHeader::parse(input, self.inner.limits())?;
        if self.other_kind(header.is_counting()) {
            return Err(self.refuse(Input::Frame(input)));
        }
        let update = self.inner.receive(input)?;
        // The frame was accepted: with a key its tag was verified.
        if self.key.is_some() {
            header.tag = Tag::Verified;
        }
        Ok((update_info(update), header))
    }

    /// Apply a full frame's filter decoded elsewhere, with that frame's header, as
    /// [`Receiver::receive`] applies the frame; the filter is cloned. With a key only a
    /// message that key verified: an untagged frame's is `MissingTag`, one decoded without
    /// the key or with another `TagNotVerified`.
    pub(crate) fn apply_filter(
        &mut self,
        filter: FilterRef<'_>,
        header: &FrameHeader,
    ) -> Res<(UpdateInfo, FrameHeader)> {
        let header = header.clone();
        self.apply(match filter {
            FilterRef::Bloom(f) => Message::Full(bloomwire::Decoded {
                filter: f.clone(),
                header,
            }),
            FilterRef::Counting(f) => Message::Counting(bloomwire::Decoded {
                filter: f.clone(),
                header,
            }),
        })
    }

    /// Apply a delta decoded elsewhere, as [`ReceiverState::apply_filter`] a filter.
    pub(crate) fn apply_delta(&mut self, delta: &AnyDelta) -> Res<(UpdateInfo, FrameHeader)> {
        self.apply(match delta {
            AnyDelta::Bits(d) => Message::Delta(d.clone()),
            AnyDelta::Counters(d) => Message::CountingDelta(d.clone()),
        })
    }

    fn apply(&mut self, message: Message) -> Res<(UpdateInfo, FrameHeader)> {
        let header = message.header().clone();
        if self.other_kind(header.is_counting()) {
            return Err(self.refuse(Input::Message(Box::new(message))));
        }
        let update = self.inner.apply(message)?;
        Ok((update_info(update), header))
    }
}
