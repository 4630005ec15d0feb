//! Building by chunk (spec 4.10): `Chunk` and `ChunkedFrame`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyRange, PyString, PyTuple};

use crate::args::describe;
use crate::args::{frame_bytes, maybe_detach, to_pybytes, FrameBytes, DETACH_POSITIONS};
use crate::chunks::{chunk_of, chunk_range, chunked_frame, ChunkBits, FramePlan};
use crate::columns;
use crate::errors::IntoPyResult;
use crate::indexer::{params_of, Indexer};
use crate::params::{params_from_parts, params_parts, ParamParts, Positions};
use crate::settings::encoder_settings;

/// Set the bits of the positions `positions` holds in `chunk`: a NumPy integer array (read
/// in place, with the GIL released when large), an int, or an iterable of ints and arrays
/// (the pieces a shuffle delivers). Each array is checked before its bits are set.
pub(crate) fn add_positions(
    py: Python<'_>,
    chunk: &mut ChunkBits,
    positions: &Bound<'_, PyAny>,
    relative: bool,
) -> PyResult<()> {
    let array = |chunk: &mut ChunkBits, obj: &Bound<'_, PyAny>| {
        columns::numpy_positions(obj, |p| {
            maybe_detach(py, p.len() >= DETACH_POSITIONS, || {
                chunk.set(p.values(), relative)
            })
            .into_py()
        })
    };
    if positions.hasattr("__array_interface__")? {
        return array(chunk, positions);
    }
    if let Ok(p) = positions.extract::<u64>() {
        return chunk.set(std::iter::once(p), relative).into_py();
    }
    if positions.cast::<PyString>().is_ok()
        || positions.cast::<PyBytes>().is_ok()
        || positions.cast::<PyByteArray>().is_ok()
    {
        return Err(PyTypeError::new_err(
            "bit positions are a NumPy integer array, an int, or an iterable of ints and \
             arrays, not bytes or str (numpy.frombuffer(b, '<u4') reads packed ones)",
        ));
    }
    let mut buffer: Vec<u64> = Vec::new();
    for item in positions.try_iter()? {
        let item = item?;
        if item.hasattr("__array_interface__")? {
            chunk.set(buffer.iter().copied(), relative).into_py()?;
            buffer.clear();
            array(chunk, &item)?;
        } else {
            buffer.push(item.extract::<u64>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "a bit position is a non-negative int or an integer array, not {}",
                    item.repr().map_or_else(|_| "?".into(), |r| r.to_string())
                ))
            })?);
        }
    }
    let big = buffer.len() >= DETACH_POSITIONS;
    maybe_detach(py, big, || chunk.set(buffer.iter().copied(), relative)).into_py()
}

/// One chunk of a filter built by chunks: bits `range` of a filter of `m` bits in chunks of
/// `2**shift` bits, set from the positions of the keys' bits that land there (`add`), then
/// counted (`count_ones`, the first phase) and coded with the frame-wide choices
/// (`encode(frame)`, the second). It holds `2**shift` bits, never the filter's m.
///
/// Pickled as its packed bits.
#[pyclass(module = "bloomwire")]
#[derive(Clone)]
pub(crate) struct Chunk {
    pub(crate) inner: ChunkBits,
}

#[pymethods]
impl Chunk {
    /// Chunk `index` of a filter of `m` bits in chunks of `2**shift` bits, all zero.
    /// `InvalidParameter` for a shift outside 6 to 47 or not below m, or an index past the
    /// last chunk; `AllocationFailed` (a `MemoryError`) when its bits cannot be allocated.
    #[new]
    fn new(m: u64, shift: u8, index: u64) -> PyResult<Self> {
        Ok(Chunk {
            inner: ChunkBits::new(m, shift, index).into_py()?,
        })
    }

    /// The chunk's index.
    #[getter]
    fn index(&self) -> u64 {
        self.inner.index
    }

    /// Bits of the whole filter.
    #[getter]
    fn m(&self) -> u64 {
        self.inner.m
    }

    /// log2 of the bits of a chunk (the last may have fewer).
    #[getter]
    fn shift(&self) -> u8 {
        self.inner.shift
    }

    /// The bits of the filter this chunk holds, a `range`.
    #[getter]
    fn range<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyRange>> {
        range_of(py, self.inner.range())
    }

    /// Set the bit of every position: a NumPy integer array (read in place, with the GIL
    /// released), an int, or an iterable of ints and arrays (a shuffle's pieces), in any
    /// order, repeats allowed. Positions count from the filter's first bit, or from the
    /// chunk's with `relative=True`. A position outside the chunk is `InvalidParameter`,
    /// and the array (or the ints) holding it sets nothing.
    #[pyo3(signature = (positions, *, relative = false))]
    fn add(
        &mut self,
        py: Python<'_>,
        positions: &Bound<'_, PyAny>,
        relative: bool,
    ) -> PyResult<()> {
        add_positions(py, &mut self.inner, positions, relative)
    }

    /// The number of bits set: summed over the chunks, the `ones` of the `ChunkedFrame`.
    fn count_ones(&self) -> u64 {
        self.inner.bits.count_ones()
    }

    /// The chunk's payload in `frame`, a `ChunkedFrame` of the same m and shift (else
    /// `InvalidParameter`), coded with the GIL released.
    fn encode<'py>(&self, py: Python<'py>, frame: &ChunkedFrame) -> PyResult<Bound<'py, PyBytes>> {
        let (chunk, plan) = (&self.inner, &frame.inner);
        let payload = py.detach(|| chunk.encode(plan)).into_py()?;
        Ok(PyBytes::new(py, &payload))
    }

    /// The packed bits of the chunk: its bit i is `(b[i // 8] >> (i % 8)) & 1`.
    fn bits<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.bits.to_bytes())
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Chunk>().is_ok_and(|o| {
            let o = o.borrow();
            (o.inner.m, o.inner.shift, o.inner.index)
                == (self.inner.m, self.inner.shift, self.inner.index)
                && o.inner.bits == self.inner.bits
        })
    }

    /// Pickled as its shape and packed bits.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let this = slf.borrow();
        let (m, shift, index) = (this.inner.m, this.inner.shift, this.inner.index);
        let bits = PyBytes::new(py, &this.inner.bits.to_bytes());
        let args = (m, shift, index, bits).into_pyobject(py)?;
        PyTuple::new(py, [slf.get_type().getattr("_from_bits")?, args.into_any()])
    }

    /// The chunk of these packed bits (the unpickler's).
    #[staticmethod]
    fn _from_bits(m: u64, shift: u8, index: u64, bits: &Bound<'_, PyBytes>) -> PyResult<Self> {
        Ok(Chunk {
            inner: ChunkBits::from_packed(m, shift, index, bits.as_bytes()).into_py()?,
        })
    }

    fn __repr__(&self) -> String {
        let (m, shift, index) = (self.inner.m, self.inner.shift, self.inner.index);
        let r = self.inner.range();
        format!(
            "Chunk(index={index}, bits={}..{}, m={m}, shift={shift})",
            r.start, r.end
        )
    }
}

pub(crate) fn range_of(py: Python<'_>, r: std::ops::Range<u64>) -> PyResult<Bound<'_, PyRange>> {
    let at = |v: u64| {
        isize::try_from(v).map_err(|_| PyValueError::new_err("a bit index beyond this platform"))
    };
    PyRange::new(py, at(r.start)?, at(r.end)?)
}

/// A chunked frame written a chunk at a time (spec 4.10), for a filter larger than one
/// machine: its chunks are built and coded where their bits are, and the frame is
/// assembled from their payloads without decoding them, byte for byte the frame one
/// process encodes for the whole filter with the same coding and chunk shift
/// (`f.encode(coding, chunk_shift=shift)`).
///
/// `ChunkedFrame(params, n, ones, shift, coding)`: the frame-wide choices of a filter of the
/// parameters of `params` (a `Plan`, `BloomFilter` or `Indexer`) holding `n` keys and `ones`
/// one bits (the sum of its chunks' `count_ones()`), in chunks of `2**shift` bits, coded
/// with `coding` (chunkable: adaptive, known-p, known-p-symbols, known-p-interleaved,
/// positional or wide; or "auto", the library's choice from n and ones, the one
/// `encode(chunk_shift=shift)` of the whole filter makes); `metadata`, `key`, `budget` and
/// `profile` as in `encode`. Pickled with everything it was made with (the key too); a chunk's payload does
/// not depend on n, the metadata or the key.
#[pyclass(module = "bloomwire", frozen)]
pub(crate) struct ChunkedFrame {
    pub(crate) inner: FramePlan,
}

#[pymethods]
impl ChunkedFrame {
    /// Raises `InvalidParameter` for a coding that is not chunked or not in the profile, a
    /// shift outside 6 to 47 or not below m, or more ones than bits.
    #[new]
    #[pyo3(signature = (params, n, ones, shift, coding, *, metadata = None, key = None, budget = None, generation = 0, profile = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        params: &Bound<'_, PyAny>,
        n: u64,
        ones: u64,
        shift: u8,
        coding: &str,
        metadata: Option<&Bound<'_, PyAny>>,
        key: Option<&Bound<'_, PyAny>>,
        budget: Option<usize>,
        generation: u64,
        profile: Option<&str>,
    ) -> PyResult<Self> {
        // "auto": the library's choice from n and ones, as one process would choose.
        let coding = (coding != "auto").then_some(coding);
        let settings = encoder_settings(coding, budget, metadata, key, profile)?;
        let params = params_of(params)?;
        let inner = chunked_frame(settings, params, n, ones, shift, generation).into_py()?;
        Ok(ChunkedFrame { inner })
    }

    /// Bits of the filter.
    #[getter]
    fn m(&self) -> u64 {
        self.inner.params.m()
    }

    /// Keys of the filter, as the header carries them.
    #[getter]
    fn n(&self) -> u64 {
        self.inner.n
    }

    /// One bits of the whole filter.
    #[getter]
    fn ones(&self) -> u64 {
        self.inner.ones
    }

    /// log2 of the bits of a chunk.
    #[getter]
    fn shift(&self) -> u8 {
        self.inner.shift
    }

    /// The generation the frame carries.
    #[getter]
    fn generation(&self) -> u64 {
        self.inner.generation
    }

    /// The number of chunks, `ceil(m / 2**shift)`.
    #[getter]
    fn chunk_count(&self) -> u64 {
        self.inner.inner.chunk_count()
    }

    /// The coding of every chunk.
    #[getter]
    fn coding(&self) -> String {
        self.inner.inner.coding().to_string()
    }

    /// The frame's q0 (the quantized fraction of zeros, from `ones`), for the codings that
    /// carry one, else None: a chunk's payload depends on its bits, the coding and q0.
    #[getter]
    fn q0(&self) -> Option<u16> {
        self.inner.inner.q0()
    }

    /// The application metadata of the frame, None when there is none.
    #[getter]
    fn metadata<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.inner
            .settings
            .metadata
            .as_deref()
            .map(|m| PyBytes::new(py, m))
    }

    /// Whether the frame is tagged with a key.
    #[getter]
    fn keyed(&self) -> bool {
        self.inner.settings.key.is_some()
    }

    /// The bits chunk `i` holds, a `range` (`InvalidParameter` past the last chunk).
    fn chunk_bits<'py>(&self, py: Python<'py>, i: u64) -> PyResult<Bound<'py, PyRange>> {
        let (m, shift) = (self.m(), self.shift());
        range_of(py, chunk_range(m, shift, i).into_py()?)
    }

    /// The chunk that holds bit `position` (`InvalidParameter` past m).
    fn chunk_of(&self, position: u64) -> PyResult<u64> {
        chunk_of(self.m(), self.shift(), position).into_py()
    }

    /// The indexer of the filter's parameters.
    fn indexer(&self) -> PyResult<Indexer> {
        Ok(Indexer {
            inner: Positions::new(self.inner.params.clone()).into_py()?,
        })
    }

    /// The payload of chunk `i`, built from the positions of its keys' bits (`positions` as
    /// `Chunk.add` takes them: unsorted, repeated, absolute or with `relative=True` counted
    /// from the chunk's first bit) and coded with the frame's coding and q0, with the GIL
    /// released. `InvalidParameter` for an index past the last chunk or a position outside
    /// the chunk.
    #[pyo3(signature = (i, positions, *, relative = false))]
    fn encode_chunk<'py>(
        &self,
        py: Python<'py>,
        i: u64,
        positions: &Bound<'py, PyAny>,
        relative: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mut chunk = ChunkBits::new(self.m(), self.shift(), i).into_py()?;
        add_positions(py, &mut chunk, positions, relative)?;
        let plan = &self.inner;
        let payload = py.detach(|| chunk.encode(plan)).into_py()?;
        Ok(PyBytes::new(py, &payload))
    }

    /// The frame (`bytes`), from every chunk's payload (`bytes`, `bytearray` or
    /// `memoryview`) in chunk order: its header, table of lengths, the payloads, checksum
    /// and, with a key, tag. `InvalidParameter` for another number of payloads than
    /// chunks, or where one process would not have written this frame (a payload over the
    /// work bound, or a frame no smaller than the raw filter's); `OverBudget` past the
    /// budget.
    fn assemble<'py>(
        &self,
        py: Python<'py>,
        payloads: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let held: Vec<FrameBytes<'py>> = payloads
            .try_iter()?
            .map(|p| {
                let p = p?;
                if p.cast::<PyString>().is_ok() {
                    return Err(PyTypeError::new_err("a chunk's payload is bytes, not str"));
                }
                frame_bytes(&p)
            })
            .collect::<PyResult<_>>()?;
        let slices: Vec<&[u8]> = held.iter().map(FrameBytes::as_slice).collect();
        let plan = &self.inner;
        let frame = py.detach(|| plan.inner.assemble(&slices)).into_py()?;
        to_pybytes(py, &frame)
    }

    /// Pickled with its parameters, figures and encoder settings (metadata and key too).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let inner = &slf.get().inner;
        let settings = &inner.settings;
        let (n, ones, shift, generation) = (inner.n, inner.ones, inner.shift, inner.generation);
        let args = (
            params_parts(&inner.params),
            n,
            ones,
            shift,
            settings.coding.map(|c| c.to_string()).unwrap_or_default(),
            settings.metadata.as_deref().map(|m| PyBytes::new(py, m)),
            settings
                .key
                .as_ref()
                .map(|k| PyBytes::new(py, k.as_bytes())),
            settings.budget,
            generation,
        )
            .into_pyobject(py)?;
        PyTuple::new(
            py,
            [slf.get_type().getattr("_from_parts")?, args.into_any()],
        )
    }

    /// The chunked frame of these parts (the unpickler's).
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    fn _from_parts(
        params: ParamParts,
        n: u64,
        ones: u64,
        shift: u8,
        coding: &str,
        metadata: Option<&Bound<'_, PyAny>>,
        key: Option<&Bound<'_, PyAny>>,
        budget: Option<usize>,
        generation: u64,
    ) -> PyResult<Self> {
        let settings = encoder_settings(Some(coding), budget, metadata, key, None)?;
        let params = params_from_parts(params).into_py()?;
        let inner = chunked_frame(settings, params, n, ones, shift, generation).into_py()?;
        Ok(ChunkedFrame { inner })
    }

    fn __repr__(&self) -> String {
        let (n, ones, shift, generation) = (
            self.inner.n,
            self.inner.ones,
            self.inner.shift,
            self.inner.generation,
        );
        format!(
            "ChunkedFrame({}, n={n}, ones={ones}, shift={shift}, chunks={}, coding={:?}, q0={}, generation={generation})",
            describe(&self.inner.params),
            self.inner.inner.chunk_count(),
            self.inner.inner.coding(),
            self.inner.inner.q0().map_or("None".to_string(), |q| q.to_string())
        )
    }
}
