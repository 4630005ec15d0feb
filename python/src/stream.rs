//! Generations: `Sender`, `SummarySender`, `Receiver` and their `Update`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::api::{self, AnyFilter, FilterRef};
use crate::args::{
    encoder_settings, filter_object, frame_bytes, frame_key, key_bytes, maybe_detach, to_pybytes,
    DETACH_COLUMN_LEN, DETACH_FILTER_BITS, DETACH_FRAME_BYTES,
};
use crate::codec::{Delta, FrameInfo};
use crate::errors::IntoPyResult;
use crate::filter::{filter_ref, with_filter, CountingFilter, FilterBorrow};
use crate::indexer::DETACH_POSITIONS;
use crate::{columns, DEFAULT_MAX_K, DEFAULT_MAX_M, DEFAULT_MAX_METADATA, DEFAULT_MAX_PAYLOAD};

/// What a `Receiver` did with a frame: `kind` is "full" (the filter was replaced; `skipped`
/// generations were never seen) or "delta" (the filter advanced by one generation).
#[pyclass(module = "bloomwire", frozen)]
#[derive(Clone)]
pub(crate) struct Update {
    pub(crate) info: api::UpdateInfo,
    /// The header of the frame applied.
    pub(crate) header: api::FrameInfo,
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
    pub(crate) inner: api::Sender,
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
            inner: api::Sender::new(settings, full_every),
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
    pub(crate) inner: api::SummarySender,
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
            inner: api::SummarySender::new(counting.inner.clone(), &settings, full_every)
                .into_py()?,
        })
    }

    /// Add a key: increment its counters (a counter leaving zero sets its bit).
    fn insert(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.insert(std::iter::once(key_bytes(key)?.as_ref()));
        Ok(())
    }

    /// Add every key of an iterable.
    fn insert_many(&mut self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        for key in keys.try_iter()? {
            self.inner
                .insert(std::iter::once(key_bytes(&key?)?.as_ref()));
        }
        Ok(())
    }

    /// Add every value of a column, as `BloomFilter.insert_array` (nulls skipped).
    fn insert_array(&mut self, py: Python<'_>, values: &Bound<'_, PyAny>) -> PyResult<()> {
        let inner = &mut self.inner;
        columns::for_each_chunk(values, |col| {
            maybe_detach(py, col.len() >= DETACH_COLUMN_LEN, || {
                inner.insert(col.present())
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
        for key in keys.try_iter()? {
            self.inner.remove(&key_bytes(&key?)?).into_py()?;
        }
        Ok(())
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
        api::counting_n(self.inner.filter()) as usize
    }

    /// The frame (`bytes`) of the next generation of the counting filter's Bloom filter:
    /// the first one whole, then from the bits whose counters left or reached zero since
    /// the last frame (byte for byte what a `Sender` makes of `filter.to_bloom_filter()`).
    /// On an error nothing changes, and the next call tries again.
    fn next_frame<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let inner = &mut self.inner;
        let big = api::counters(inner.filter()).len() as u64 >= DETACH_FILTER_BITS;
        let frame = maybe_detach(py, big, || inner.next_frame()).into_py()?;
        to_pybytes(py, &frame)
    }

    /// A full frame of the generation sent last, numbered as it and carrying the restart
    /// flag, for one receiver that joins late; None before the first frame.
    fn full_frame<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let inner = &self.inner;
        match py.detach(|| inner.full_frame()) {
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
            api::describe(api::counting_params(self.inner.filter())),
            api::counting_n(self.inner.filter()),
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
    pub(crate) inner: api::Receiver,
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
        let limits = api::limits(max_m, max_k, max_payload, max_metadata, max_filter_bytes);
        let limits = api::limits_of_profile(limits, profile).into_py()?;
        Ok(Receiver {
            inner: api::Receiver::new(limits, frame_key(key)?),
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
            let bits = delta.m() * if delta.is_counting() { 8 } else { 1 };
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
                    let (inner, big) = (&b.inner, b.bits_m() >= DETACH_FILTER_BITS);
                    let header = b.header.as_deref().ok_or_else(unframed)?;
                    maybe_detach(py, big, || {
                        receiver.apply_filter(FilterRef::Bloom(inner), header)
                    })
                }
                FilterBorrow::Counting(c) => {
                    let (inner, big) = (&c.inner, c.counters_m() >= DETACH_FILTER_BITS / 8);
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
            .filter()
            .map(|f| filter_object(py, f.clone(), None))
            .transpose()
    }

    /// The current generation, None before the first full frame.
    #[getter]
    fn generation(&self) -> Option<u64> {
        self.inner.generation()
    }
}
