//! Chunks of a filter built by chunks (spec 4.10), as the library sees them: the chunk
//! arithmetic (shifts, ranges, positions grouped by chunk), a chunk's bits (`ChunkBits`)
//! and the frame-wide choices of a chunked frame (`FramePlan`). The classes over them,
//! `Chunk` and `ChunkedFrame`, are `chunked.rs`; `Indexer` groups positions with them.

use bloomwire::format::{chunk_count, MAX_CHUNK_SHIFT, MIN_CHUNK_SHIFT};
use bloomwire::{BitArray, ChunkedFrame as LibChunkedFrame, Error, Params};

use crate::errors::Res;
use crate::settings::EncoderSettings;

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
        Self::with_bits(m, shift, index, BitArray::try_new)
    }

    /// The chunk holding these packed bits (`ceil(len / 8)` bytes).
    pub(crate) fn from_packed(m: u64, shift: u8, index: u64, packed: &[u8]) -> Res<Self> {
        Self::with_bits(m, shift, index, |len| BitArray::from_bytes(packed, len))
    }

    /// Chunk `index` (checked) with the bits `bits` makes of the chunk's length.
    fn with_bits(
        m: u64,
        shift: u8,
        index: u64,
        bits: impl FnOnce(u64) -> Result<BitArray, Error>,
    ) -> Res<Self> {
        let range = chunk_range(m, shift, index)?;
        Ok(ChunkBits {
            m,
            shift,
            index,
            start: range.start,
            bits: bits(range.end - range.start)?,
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
