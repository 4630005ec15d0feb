//! Building by chunk (spec 4.10): `Chunk` and `ChunkedFrame`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyRange, PyString, PyTuple};

use crate::args::describe;
use crate::args::{frame_bytes, maybe_detach, to_pybytes, FrameBytes};
use crate::codec::{encoder_settings, EncoderSettings};
use crate::columns;
use crate::errors::IntoPyResult;
use crate::errors::Res;
use crate::indexer::{params_from_parts, params_parts, ParamParts, Positions};
use crate::indexer::{params_of, Indexer, DETACH_POSITIONS};
use bloomwire::format::{chunk_count, MAX_CHUNK_SHIFT, MIN_CHUNK_SHIFT};
use bloomwire::{BitArray, ChunkedFrame as LibChunkedFrame, Error, Params};

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
        Ok(ChunkedFrame {
            inner: chunked_frame(settings, params, n, ones, shift, generation).into_py()?,
        })
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
        Ok(ChunkedFrame {
            inner: chunked_frame(settings, params, n, ones, shift, generation).into_py()?,
        })
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

// ---------------------------------------------------------------------------------------------
// Chunks and chunked frames of the library

/// Check a chunk shift for a filter of m bits: 6 to 47, and `2^shift < m` (spec 4.10).
pub(crate) fn check_chunk_shift(m: u64, shift: u8) -> Res<()> {
    if !(MIN_CHUNK_SHIFT..=MAX_CHUNK_SHIFT).contains(&shift) || 1u64 << shift >= m {
        return Err(Error::InvalidParameter {
            name: "shift",
            reason: format!(
                "{shift}: chunks of 2^{MIN_CHUNK_SHIFT} to 2^{MAX_CHUNK_SHIFT} bits, fewer than m = {m}"
            ),
        }
        .into());
    }
    Ok(())
}

/// The number of chunks of `2^shift` bits of a filter of m bits (the shift checked).
pub(crate) fn chunks_of(m: u64, shift: u8) -> Res<u64> {
    check_chunk_shift(m, shift)?;
    Ok(chunk_count(m, shift))
}

/// The bits chunk `i` holds, checked to be a chunk of the filter.
pub(crate) fn chunk_range(m: u64, shift: u8, i: u64) -> Res<std::ops::Range<u64>> {
    let count = chunks_of(m, shift)?;
    if i >= count {
        return Err(Error::InvalidParameter {
            name: "chunk",
            reason: format!(
                "chunk {i} of a filter of {count} chunks (0 to {})",
                count - 1
            ),
        }
        .into());
    }
    Ok(i << shift..((i + 1) << shift).min(m))
}

/// The chunk that holds bit `position` of a filter of m bits (below m).
pub(crate) fn chunk_of(m: u64, shift: u8, position: u64) -> Res<u64> {
    check_chunk_shift(m, shift)?;
    if position >= m {
        return Err(Error::InvalidParameter {
            name: "position",
            reason: format!("bit {position} of a filter of {m} bits"),
        }
        .into());
    }
    Ok(position >> shift)
}

/// Positions grouped by chunk: the chunks that have any, each chunk's run of positions
/// (`offsets[j]..offsets[j + 1]`), the positions relative to their chunk's first bit.
#[derive(Debug, Default)]
pub(crate) struct ByChunk {
    /// The chunks that hold positions, increasing.
    pub chunks: Vec<u64>,
    /// `chunks.len() + 1` offsets into the positions.
    pub offsets: Vec<u64>,
    /// The positions relative to their chunk (below `2^shift`), chunk after chunk, each
    /// chunk's in the order they were given.
    pub relative: Vec<u64>,
}

/// Group absolute positions (below m) by chunk of `2^shift` bits (the shift checked), a
/// counting sort when the chunks are few against the positions, else a sort by chunk.
pub(crate) fn group_by_chunk(positions: &[u64], m: u64, shift: u8) -> Res<ByChunk> {
    let count = chunks_of(m, shift)?;
    let mask = (1u64 << shift) - 1;
    if let Some(&p) = positions.iter().find(|&&p| p >= m) {
        return Err(Error::InvalidParameter {
            name: "positions",
            reason: format!("position {p} of a filter of {m} bits"),
        }
        .into());
    }
    let mut out = ByChunk::default();
    if count <= (positions.len() as u64).max(1 << 16) {
        let mut counts = vec![0u64; count as usize + 1];
        for &p in positions {
            counts[(p >> shift) as usize + 1] += 1;
        }
        for c in 0..count as usize {
            if counts[c + 1] > 0 {
                out.chunks.push(c as u64);
            }
            counts[c + 1] += counts[c];
        }
        out.offsets.push(0);
        out.offsets
            .extend(out.chunks.iter().map(|&c| counts[c as usize + 1]));
        let mut next = counts;
        out.relative = vec![0; positions.len()];
        for &p in positions {
            let c = (p >> shift) as usize;
            out.relative[next[c] as usize] = p & mask;
            next[c] += 1;
        }
    } else {
        let mut sorted = positions.to_vec();
        sorted.sort_by_key(|&p| p >> shift);
        out.offsets.push(0);
        for (i, &p) in sorted.iter().enumerate() {
            if out.chunks.last() != Some(&(p >> shift)) {
                if i > 0 {
                    out.offsets.push(i as u64);
                }
                out.chunks.push(p >> shift);
            }
        }
        if !sorted.is_empty() {
            out.offsets.push(sorted.len() as u64);
        }
        out.relative = sorted.into_iter().map(|p| p & mask).collect();
    }
    Ok(out)
}

/// log2 of the bits of a region a chunk's positions are set by (2^23 bits, 1 MiB: a few
/// hundred pages, within the caches and the TLB).
const REGION_SHIFT: u32 = 23;

/// One chunk of a filter built by chunks: its bits, set from the positions of its keys'
/// bits where the chunk is built.
#[derive(Debug, Clone)]
pub(crate) struct ChunkBits {
    pub(crate) m: u64,
    pub(crate) shift: u8,
    pub(crate) index: u64,
    pub(crate) start: u64,
    pub(crate) bits: BitArray,
}

impl ChunkBits {
    /// Chunk `index` of a filter of m bits in chunks of `2^shift` bits, all zero;
    /// `AllocationFailed` when its bits cannot be allocated.
    pub(crate) fn new(m: u64, shift: u8, index: u64) -> Res<Self> {
        let range = chunk_range(m, shift, index)?;
        Ok(ChunkBits {
            m,
            shift,
            index,
            start: range.start,
            bits: BitArray::try_new(range.end - range.start)?,
        })
    }

    /// The chunk holding these packed bits (`ceil(len / 8)` bytes).
    pub(crate) fn from_packed(m: u64, shift: u8, index: u64, packed: &[u8]) -> Res<Self> {
        let range = chunk_range(m, shift, index)?;
        Ok(ChunkBits {
            m,
            shift,
            index,
            start: range.start,
            bits: BitArray::from_bytes(packed, range.end - range.start)?,
        })
    }

    /// The chunk's bits within the filter.
    pub(crate) fn range(&self) -> std::ops::Range<u64> {
        self.start..self.start + self.bits.len()
    }

    /// Set the bit of every position; `relative` positions count from the chunk's first
    /// bit, the others from the filter's. Every position is checked to be in the chunk
    /// before any bit is set: on an error the chunk is unchanged.
    pub(crate) fn set<I>(&mut self, positions: I, relative: bool) -> Res<()>
    where
        I: Iterator<Item = u64> + Clone,
    {
        let (start, len) = (self.start, self.bits.len());
        let offset = if relative { 0 } else { start };
        if let Some(p) = positions.clone().find(|&p| p.wrapping_sub(offset) >= len) {
            let within = if relative {
                format!("0..{len}, relative to the chunk")
            } else {
                format!("{start}..{}", start + len)
            };
            return Err(Error::InvalidParameter {
                name: "positions",
                reason: format!(
                    "position {p} is not in chunk {}'s bits {within}",
                    self.index
                ),
            }
            .into());
        }
        let relative = positions.map(|p| p - offset);
        if len < 1 << (REGION_SHIFT + 2) {
            relative.for_each(|p| self.bits.set(p));
            return Ok(());
        }
        // Bits set in random order across a large chunk miss the cache and the TLB at every
        // position (measured here: 170 ns a position in 2^30 bits, against 17 ns in order):
        // the positions are set region by region (2^23 bits, 1 MiB), after a counting sort
        // by region.
        let unsorted: Vec<u64> = relative.collect();
        let regions = (len >> REGION_SHIFT) as usize + 1;
        if unsorted.len() < 4096 || regions > unsorted.len() {
            unsorted.iter().for_each(|&p| self.bits.set(p));
            return Ok(());
        }
        let mut next = vec![0usize; regions + 1];
        for &p in &unsorted {
            next[(p >> REGION_SHIFT) as usize + 1] += 1;
        }
        for r in 0..regions {
            next[r + 1] += next[r];
        }
        let mut by_region = vec![0u64; unsorted.len()];
        for &p in &unsorted {
            let r = (p >> REGION_SHIFT) as usize;
            by_region[next[r]] = p;
            next[r] += 1;
        }
        drop(unsorted);
        by_region.into_iter().for_each(|p| self.bits.set(p));
        Ok(())
    }

    /// The chunk's payload in `frame` (a frame of the same m and shift).
    pub(crate) fn encode(&self, frame: &FramePlan) -> Res<Vec<u8>> {
        if (frame.params.m(), frame.shift) != (self.m, self.shift) {
            return Err(Error::InvalidParameter {
                name: "chunk",
                reason: format!(
                    "a chunk of a filter of {} bits in chunks of 2^{} for a frame of {} bits in chunks of 2^{}",
                    self.m,
                    self.shift,
                    frame.params.m(),
                    frame.shift
                ),
            }
            .into());
        }
        Ok(frame.inner.encode_chunk(self.index, &self.bits)?)
    }
}

/// The frame-wide choices of a chunked frame whose chunks are coded apart (the library's
/// `ChunkedFrame`), with what made it, for pickles.
#[derive(Debug, Clone)]
pub(crate) struct FramePlan {
    pub(crate) inner: LibChunkedFrame,
    pub(crate) settings: EncoderSettings,
    pub(crate) params: Params,
    pub(crate) n: u64,
    pub(crate) ones: u64,
    pub(crate) shift: u8,
    pub(crate) generation: u64,
}

/// The chunked frame of a filter of `params` holding `n` keys and `ones` one bits, in
/// chunks of `2^shift` bits, as the encoder of `settings` writes it (its coding named and
/// chunkable), carrying `generation`.
pub(crate) fn chunked_frame(
    settings: EncoderSettings,
    params: Params,
    n: u64,
    ones: u64,
    shift: u8,
    generation: u64,
) -> Res<FramePlan> {
    let inner = settings
        .bloom()?
        .chunked_frame(params.clone(), n, ones, shift)?
        .with_generation(generation);
    Ok(FramePlan {
        inner,
        settings,
        params,
        n,
        ones,
        shift,
        generation,
    })
}

impl FramePlan {}
