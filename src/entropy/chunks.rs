//! Chunked payloads (header `flags` bit 0, spec §4.10): a large filter's bits coded as
//! independent pieces of `2^shift` bits, so that they encode and decode on all cores and a
//! receiver can decode a range of bits without the rest.
//!
//! A chunked payload is a table of chunk payload lengths (one varint per chunk) followed by
//! the chunk payloads, each the filter's coding applied to the chunk's bits alone (with the
//! header's `q0`; the adaptive model restarts). Chunks are whole 64-bit words
//! (`shift >= 6`), so each decodes straight into its slice of the caller's words.
//!
//! With the `parallel` feature, chunks are spread over `std::thread::scope` threads; without
//! it, they are coded one after the other (same bytes either way).

use core::ops::Range;

use crate::entropy::codec::CHUNK_BYTES;
use crate::entropy::coding::{self, predicted_len, predicted_len_of, Coding, Models};
use crate::entropy::model::Counts;
use crate::entropy::scratch;
use crate::entropy::PayloadError;
use crate::filter::bits::BitArray;
use crate::wire::{put_varint, Reader};

/// The smallest chunk: `2^6 = 64` bits, one word.
pub const MIN_CHUNK_SHIFT: u8 = 6;

/// The largest chunk: `2^47` bits (m is at most `2^48`, and a chunked filter has at least
/// two chunks).
pub const MAX_CHUNK_SHIFT: u8 = 47;

/// Filters of at least this many bits are chunked by default (`2^26`, 8 MiB of filter).
pub const CHUNK_FROM_BITS: u64 = 1 << 26;

/// Number of chunks of a filter of `m` bits.
pub fn chunk_count(m: u64, shift: u8) -> u64 {
    m.div_ceil(1 << shift)
}

/// The default chunk size for a filter of `m` bits whose bits are zero with probability
/// about `p0`: the smallest `2^shift` (at least `2^20` bits) whose coded chunk is expected
/// to take at least 128 KiB, so that the per-chunk cost (its length varint, coding 6's 32
/// bytes of states and its last partial word, under 48 bytes) stays under 0.04% of the
/// payload. Filters below [`CHUNK_FROM_BITS`] are not chunked (`None`).
pub fn default_chunk_shift(m: u64, p0: f64) -> Option<u8> {
    chunk_shift_for(m, p0, CHUNK_BYTES)
}

/// The default chunk size of `coding` (see [`default_chunk_shift`]): chunks whose coded
/// size reaches what the coding asks (its row's `chunk_bytes`); `None` for a coding that is
/// not chunked or a filter below [`CHUNK_FROM_BITS`].
pub(crate) fn coding_chunk_shift(coding: Coding, m: u64, p0: f64) -> Option<u8> {
    chunk_shift_for(m, p0, coding.codec().chunk_bytes?)
}

/// The smallest `2^shift` of at least `2^20` bits whose coded size at `p0` reaches `bytes`.
fn chunk_shift_for(m: u64, p0: f64, bytes: u32) -> Option<u8> {
    if m < CHUNK_FROM_BITS {
        return None;
    }
    let bits_per_bit = crate::theory::entropy(p0.clamp(1e-9, 1.0 - 1e-9)).max(1e-6);
    let target = f64::from(bytes);
    let mut shift = 20u8;
    while shift < MAX_CHUNK_SHIFT && ((1u64 << shift) as f64) * bits_per_bit / 8.0 < target {
        shift += 1;
    }
    (1u64 << shift < m).then_some(shift)
}

/// Predicted payload bytes of an array of `counts.len` bits holding `counts.ones` one bits in
/// `coding` (with `counts.q0` for the codings that have one), chunked with `shift` or not,
/// from the counts alone: the whole array's prediction, or each chunk's ([`predicted_len`])
/// and its length varint, the ones spread evenly over the chunks. So a frame assembled from
/// chunks coded apart, whose builder knows only the summed counts, is chosen as one process
/// chooses it (spec §4.10). Floats; for choosing a coding, never for decoding.
pub(crate) fn predicted_payload_len(coding: Coding, counts: &Counts, shift: Option<u8>) -> u64 {
    let m = counts.len;
    match shift {
        None => predicted_len_of(coding, counts),
        Some(s) => {
            let size = 1u64 << s;
            let chunk = |bits: u64| {
                let ones = (u128::from(counts.ones) * u128::from(bits) / u128::from(m)) as u64;
                let len = predicted_len(coding, Some(counts.q0), bits, ones);
                len + crate::wire::varint_len(len) as u64
            };
            let (whole, last) = (m / size, m % size);
            whole * chunk(size) + if last > 0 { chunk(last) } else { 0 }
        }
    }
}

/// Run `f` on every item, on up to `threads` threads when the `parallel` feature is on.
fn for_each<I: Send>(items: &mut [I], threads: usize, f: impl Fn(&mut I) + Sync) {
    #[cfg(feature = "parallel")]
    if threads > 1 && items.len() > 1 {
        let per = items.len().div_ceil(threads);
        std::thread::scope(|s| {
            for group in items.chunks_mut(per) {
                let f = &f;
                s.spawn(move || group.iter_mut().for_each(f));
            }
        });
        return;
    }
    let _ = threads;
    items.iter_mut().for_each(f);
}

/// The chunked payload of `bits`: the table of chunk lengths, then the chunks.
pub(crate) fn encode_chunked(
    coding: Coding,
    q0: Option<u16>,
    bits: &BitArray,
    shift: u8,
    threads: usize,
) -> Vec<u8> {
    let m = bits.len();
    let chunk_words = 1usize << (shift - MIN_CHUNK_SHIFT);
    // The chunks' payloads in this thread's scratch memory, coded on any thread.
    let mut parts: Vec<(usize, Vec<u8>)> = (0..chunk_count(m, shift) as usize)
        .map(|i| (i, scratch::take_bytes(0)))
        .collect();
    for_each(&mut parts, threads, |(i, out)| {
        let start = *i as u64 * (1 << shift);
        let len = (m - start).min(1 << shift);
        let words = &bits.words()[*i * chunk_words..][..crate::filter::bits::words_for(len)];
        coding::encode_bits(coding, q0, words, len, out);
    });
    let payload = assemble(parts.iter().map(|(_, p)| p));
    parts.into_iter().for_each(|(_, p)| scratch::give_bytes(p));
    payload
}

/// A chunked payload from its chunks' payloads, in chunk order: the table of their lengths,
/// then the payloads.
pub(crate) fn assemble<P: AsRef<[u8]>>(parts: impl IntoIterator<Item = P> + Clone) -> Vec<u8> {
    let coded: usize = parts
        .clone()
        .into_iter()
        .map(|p| p.as_ref().len() + 10)
        .sum();
    let mut out = scratch::take_bytes(coded);
    for p in parts.clone() {
        put_varint(&mut out, p.as_ref().len() as u64);
    }
    for p in parts {
        out.extend_from_slice(p.as_ref());
    }
    out
}

/// Chunks between two marks of a [`ChunkTable`].
const MARK_EVERY: usize = 64;

/// Where each chunk's payload is, without a record per chunk: the chunk lengths are read
/// again from the payload's table when needed, from a mark kept for every [`MARK_EVERY`]th
/// chunk (where its length varint is, and where its bytes begin). Sixteen bytes per 64
/// chunks, at most one chunk per 64 bits of m: at most `m / 256` bytes, a sixty-fourth of
/// the decoded filter, however small the chunks (spec 2.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChunkTable<'a> {
    payload: &'a [u8],
    /// Where chunk 0's bytes begin in `payload` (the end of the table of lengths).
    start: usize,
    count: usize,
    /// For chunks 0, 64, 128, ...: the offset of its length varint in `payload`, and of its
    /// bytes after `start`. Empty for an unchunked payload.
    marks: Vec<(usize, usize)>,
}

impl<'a> ChunkTable<'a> {
    /// The table of an unchunked payload: one chunk, all of it.
    pub(crate) fn whole(payload: &'a [u8]) -> Self {
        ChunkTable {
            payload,
            start: 0,
            count: 1,
            marks: Vec::new(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// The bytes of chunk `i` in the payload, if there is such a chunk.
    pub(crate) fn range(&self, i: usize) -> Option<Range<usize>> {
        if i >= self.count {
            return None;
        }
        self.ranges_from(i).next()
    }

    /// The bytes of chunks `first`, `first + 1`, ... in the payload: at most `MARK_EVERY`
    /// varints read to find the first, one for each after.
    fn ranges_from(&self, first: usize) -> impl Iterator<Item = Range<usize>> + '_ {
        let whole = self.marks.is_empty();
        let (pos, mut begin) = if whole {
            (0, 0)
        } else {
            self.marks[first / MARK_EVERY]
        };
        let mut i = if whole {
            first
        } else {
            first / MARK_EVERY * MARK_EVERY
        };
        let mut r = Reader::new(&self.payload[pos..]);
        core::iter::from_fn(move || {
            if i >= self.count {
                return None;
            }
            if whole {
                i += 1;
                return Some(0..self.payload.len());
            }
            loop {
                let len = r.varint("chunk length").ok()? as usize;
                let range = self.start + begin..self.start + begin + len;
                begin += len;
                i += 1;
                if i > first {
                    return Some(range);
                }
            }
        })
    }
}

/// Read the table of `chunk_count(m, shift)` lengths at the start of a chunked payload and
/// check that the chunks fill the rest of the payload exactly. The count is checked
/// against the payload length first (a length takes at least a byte), which bounds the
/// loop by the input; the table keeps a mark per 64 chunks only.
pub(crate) fn parse_table(
    payload: &[u8],
    m: u64,
    shift: u8,
) -> Result<ChunkTable<'_>, PayloadError> {
    let count = chunk_count(m, shift);
    if count > payload.len() as u64 {
        return Err("chunk table longer than the payload");
    }
    let mut r = Reader::new(payload);
    let mut marks = Vec::with_capacity((count as usize).div_ceil(MARK_EVERY));
    let mut end = 0u64;
    for i in 0..count as usize {
        if i % MARK_EVERY == 0 {
            marks.push((r.offset(), end as usize));
        }
        let len = r
            .varint("chunk length")
            .map_err(|_| "malformed or truncated chunk length")?;
        end = end.saturating_add(len);
        if end > payload.len() as u64 {
            return Err("chunk lengths exceed the payload");
        }
    }
    let start = r.offset();
    if start as u64 + end != payload.len() as u64 {
        return Err("chunk lengths do not add up to the payload");
    }
    Ok(ChunkTable {
        payload,
        start,
        count: count as usize,
        marks,
    })
}

/// One share of the chunks to decode: its first chunk, how many, its words of the output,
/// the outcome. One per thread, not one per chunk.
struct DecodeJob<'a> {
    first: usize,
    count: usize,
    words: &'a mut [u64],
    result: Result<(), PayloadError>,
}

/// Decode every chunk of a chunked payload (`table` from [`parse_table`]) of `m` bits
/// into `out` (`ceil(m / 64)` words), with the frame's coding and `q0`.
pub(crate) fn decode_chunked(
    (coding, q0): (Coding, Option<u16>),
    table: &ChunkTable<'_>,
    m: u64,
    shift: u8,
    out: &mut [u64],
    threads: usize,
) -> Result<(), PayloadError> {
    let chunk_words = 1usize << (shift - MIN_CHUNK_SHIFT);
    let last = m - ((table.len() as u64 - 1) << shift);
    let models = Models::new(coding, q0, &[1 << shift, last]).ok_or("a coding of counters")?;
    // Shares of whole runs of MARK_EVERY chunks, one per thread.
    let runs = table.len().div_ceil(MARK_EVERY);
    let per = runs.div_ceil(threads.max(1)) * MARK_EVERY;
    let mut jobs: Vec<DecodeJob<'_>> = out
        .chunks_mut(per * chunk_words)
        .enumerate()
        .map(|(j, words)| DecodeJob {
            first: j * per,
            count: per.min(table.len() - j * per),
            words,
            result: Ok(()),
        })
        .collect();
    for_each(&mut jobs, threads, |job| {
        let mut ranges = table.ranges_from(job.first);
        for (i, words) in job
            .words
            .chunks_mut(chunk_words)
            .enumerate()
            .take(job.count)
        {
            let Some(range) = ranges.next() else {
                job.result = Err("malformed or truncated chunk length");
                return;
            };
            let len = (m - (((job.first + i) as u64) << shift)).min(1 << shift);
            job.result = coding::decode_bits(&models, &table.payload[range], len, words);
            if job.result.is_err() {
                return;
            }
        }
    });
    jobs.into_iter().try_for_each(|j| j.result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(m: u64, seed: u64) -> BitArray {
        let mut b = BitArray::new(m);
        let mut s = seed;
        for i in 0..m {
            s = crate::filter::hashing::fmix64(s + 1);
            if s.is_multiple_of(10) {
                b.set(i);
            }
        }
        b
    }

    #[test]
    fn chunked_payloads_round_trip_for_every_compressed_coding() {
        for (m, shift) in [(64 * 3, 6), (1000, 6), (1000, 8), (5000, 10), (4097, 12)] {
            let b = bits(m, m);
            for coding in Coding::ALL.into_iter().filter(|c| c.is_chunkable()) {
                let q0 = coding.has_q0().then_some(58982);
                let p = encode_chunked(coding, q0, &b, shift, 1);
                assert_eq!(p, encode_chunked(coding, q0, &b, shift, 3), "{coding}");
                let table = parse_table(&p, m, shift).unwrap();
                assert_eq!(table.len() as u64, chunk_count(m, shift));
                let mut out = vec![u64::MAX; crate::filter::bits::words_for(m)];
                decode_chunked((coding, q0), &table, m, shift, &mut out, 2).unwrap();
                assert_eq!(out, b.words(), "{coding} m={m} shift={shift}");
                // Every chunk alone gives its words.
                let cw = 1usize << (shift - 6);
                for i in 0..table.len() {
                    let r = table.range(i).unwrap();
                    let len = (m - ((i as u64) << shift)).min(1 << shift);
                    let mut w = vec![0; crate::filter::bits::words_for(len)];
                    let models = Models::new(coding, q0, &[len]).unwrap();
                    coding::decode_bits(&models, &p[r], len, &mut w).unwrap();
                    assert_eq!(w, b.words()[i * cw..][..w.len()]);
                }
            }
        }
    }

    #[test]
    fn tables_that_do_not_fill_the_payload_are_rejected() {
        let b = bits(1000, 3);
        let p = encode_chunked(Coding::KnownPInterleaved, Some(58982), &b, 8, 1);
        assert!(parse_table(&p, 1000, 8).is_ok());
        assert!(parse_table(&p[..p.len() - 1], 1000, 8).is_err());
        assert!(parse_table(&[&p[..], &[0]].concat(), 1000, 8).is_err());
        assert!(parse_table(&p[..3], 1000, 8).is_err());
        let mut long = p.clone();
        long[0] += 1; // first chunk one byte longer: the sum exceeds the payload
        assert!(parse_table(&long, 1000, 8).is_err());
    }

    #[test]
    fn default_chunks_are_large_enough() {
        assert_eq!(default_chunk_shift(1 << 25, 0.9), None);
        // p0 = 0.9: H = 0.469 bits per bit, 2^22 bits give 246 KiB.
        assert_eq!(default_chunk_shift(1_000_000_000, 0.9), Some(22));
        // Sparse filters code to fewer bytes per bit, so their chunks span more bits.
        assert_eq!(default_chunk_shift(1_000_000_000, 0.999), Some(27));
        assert_eq!(default_chunk_shift(1 << 27, 0.9999), None);
    }
}
