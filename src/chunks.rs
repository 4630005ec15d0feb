//! Chunked payloads (header `flags` bit 0, spec §4.7): a large filter's bits coded as
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

use crate::bits::BitArray;
use crate::coder::{self, PayloadError};
use crate::frame::Coding;
use crate::rans;
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
    if m < CHUNK_FROM_BITS {
        return None;
    }
    let bits_per_bit = crate::theory::entropy(p0.clamp(1e-9, 1.0 - 1e-9)).max(1e-6);
    let mut shift = 20u8;
    while shift < MAX_CHUNK_SHIFT && ((1u64 << shift) as f64) * bits_per_bit / 8.0 < 131_072.0 {
        shift += 1;
    }
    (1u64 << shift < m).then_some(shift)
}

/// Whether a coding may be chunked: the compressed ones.
pub fn chunkable(coding: Coding) -> bool {
    !matches!(coding, Coding::Raw)
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

/// The number of threads "all cores" means here.
pub(crate) fn all_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Code `len` bits held in `words` with `coding`, appending the payload to `out`.
pub(crate) fn encode_part(
    coding: Coding,
    q0: Option<u16>,
    words: &[u64],
    len: u64,
    out: &mut Vec<u8>,
) {
    let q0 = q0.unwrap_or(1);
    if coding == Coding::KnownPInterleaved {
        rans::encode(words, len, &rans::EncModel::new(q0, len), out);
        return;
    }
    let bits = BitArray::from_words(words.to_vec(), len).expect("bits past len are zero");
    let payload = match coding {
        Coding::Raw => bits.to_bytes(),
        Coding::Adaptive => coder::encode_adaptive(&bits),
        Coding::KnownP => coder::encode_known_p(&bits, q0),
        Coding::KnownPSymbols => coder::encode_symbols(&bits, q0),
        Coding::KnownPInterleaved => unreachable!("handled above"),
    };
    out.extend_from_slice(&payload);
}

/// Decode a payload of `len` bits coded with `coding` into `out` (`ceil(len / 64)` words,
/// all overwritten).
pub(crate) fn decode_part(
    coding: Coding,
    q0: Option<u16>,
    payload: &[u8],
    len: u64,
    out: &mut [u64],
) -> Result<(), PayloadError> {
    let q0 = q0.unwrap_or(1);
    let bits = match coding {
        Coding::KnownPInterleaved => {
            return rans::decode(payload, len, &rans::DecModel::new(q0, len), out)
        }
        Coding::Raw => return raw_into(payload, len, out),
        Coding::Adaptive => coder::decode_adaptive(payload, len)?,
        Coding::KnownP => coder::decode_known_p(payload, len, q0)?,
        Coding::KnownPSymbols => coder::decode_symbols(payload, len, q0)?,
    };
    out.copy_from_slice(bits.words());
    Ok(())
}

/// Copy a raw payload (the packed form, `ceil(len / 8)` bytes) into words.
fn raw_into(payload: &[u8], len: u64, out: &mut [u64]) -> Result<(), PayloadError> {
    if payload.len() as u64 != len.div_ceil(8) {
        return Err("raw payload length is not ceil(m / 8)");
    }
    if len % 8 != 0 && payload[payload.len() - 1] >> (len % 8) != 0 {
        return Err("bits past m are not zero");
    }
    for (w, bytes) in out.iter_mut().zip(payload.chunks(8)) {
        let mut b = [0u8; 8];
        b[..bytes.len()].copy_from_slice(bytes);
        *w = u64::from_le_bytes(b);
    }
    Ok(())
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
    let mut parts: Vec<(usize, Vec<u8>)> = (0..chunk_count(m, shift) as usize)
        .map(|i| (i, Vec::new()))
        .collect();
    for_each(&mut parts, threads, |(i, out)| {
        let start = *i as u64 * (1 << shift);
        let len = (m - start).min(1 << shift);
        let words = &bits.words()[*i * chunk_words..][..crate::bits::words_for(len)];
        encode_part(coding, q0, words, len, out);
    });
    let coded: usize = parts.iter().map(|(_, p)| p.len() + 10).sum();
    let mut out = Vec::with_capacity(coded);
    for (_, p) in &parts {
        put_varint(&mut out, p.len() as u64);
    }
    for (_, p) in &parts {
        out.extend_from_slice(p);
    }
    out
}

/// Where each chunk's payload is in a chunked payload: reads the table of `chunk_count(m,
/// shift)` lengths and checks that the chunks fill the rest of the payload exactly. The
/// caller has checked that the count is at most the payload length (a length takes at least
/// a byte), which bounds the allocation.
pub(crate) fn parse_table(
    payload: &[u8],
    m: u64,
    shift: u8,
) -> Result<Vec<Range<usize>>, PayloadError> {
    let count = chunk_count(m, shift);
    if count > payload.len() as u64 {
        return Err("chunk table longer than the payload");
    }
    let mut r = Reader::new(payload);
    let mut lengths = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let len = r
            .varint("chunk length")
            .map_err(|_| "malformed or truncated chunk length")?;
        lengths.push(len);
    }
    let mut start = r.offset();
    let mut ranges = Vec::with_capacity(count as usize);
    for len in lengths {
        if len > (payload.len() - start) as u64 {
            return Err("chunk lengths exceed the payload");
        }
        ranges.push(start..start + len as usize);
        start += len as usize;
    }
    if start != payload.len() {
        return Err("chunk lengths do not add up to the payload");
    }
    Ok(ranges)
}

/// One chunk to decode: its bit count, its words of the output, its payload, the outcome.
struct DecodeJob<'a> {
    len: u64,
    words: &'a mut [u64],
    payload: &'a [u8],
    result: Result<(), PayloadError>,
}

/// Decode every chunk of a chunked payload (`ranges` from [`parse_table`]) of `m` bits
/// into `out` (`ceil(m / 64)` words), with the frame's coding and `q0`.
pub(crate) fn decode_chunked(
    (coding, q0): (Coding, Option<u16>),
    payload: &[u8],
    ranges: &[Range<usize>],
    m: u64,
    shift: u8,
    out: &mut [u64],
    threads: usize,
) -> Result<(), PayloadError> {
    let chunk_words = 1usize << (shift - MIN_CHUNK_SHIFT);
    let mut jobs: Vec<DecodeJob<'_>> = out
        .chunks_mut(chunk_words)
        .zip(ranges)
        .enumerate()
        .map(|(i, (words, range))| DecodeJob {
            len: (m - ((i as u64) << shift)).min(1 << shift),
            words,
            payload: &payload[range.clone()],
            result: Ok(()),
        })
        .collect();
    for_each(&mut jobs, threads, |job| {
        job.result = decode_part(coding, q0, job.payload, job.len, job.words);
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
            s = crate::hashing::fmix64(s + 1);
            if s % 10 == 0 {
                b.set(i);
            }
        }
        b
    }

    #[test]
    fn chunked_payloads_round_trip_for_every_compressed_coding() {
        for (m, shift) in [(64 * 3, 6), (1000, 6), (1000, 8), (5000, 10), (4097, 12)] {
            let b = bits(m, m);
            let ranges_of = |p: &[u8]| parse_table(p, m, shift).unwrap();
            for coding in Coding::ALL.into_iter().filter(|&c| chunkable(c)) {
                let q0 = coding.has_q0().then_some(58982);
                let p = encode_chunked(coding, q0, &b, shift, 1);
                assert_eq!(p, encode_chunked(coding, q0, &b, shift, 3), "{coding}");
                let ranges = ranges_of(&p);
                assert_eq!(ranges.len() as u64, chunk_count(m, shift));
                let mut out = vec![u64::MAX; crate::bits::words_for(m)];
                decode_chunked((coding, q0), &p, &ranges, m, shift, &mut out, 2).unwrap();
                assert_eq!(out, b.words(), "{coding} m={m} shift={shift}");
                // Every chunk alone gives its words.
                let cw = 1usize << (shift - 6);
                for (i, r) in ranges.iter().enumerate() {
                    let len = (m - ((i as u64) << shift)).min(1 << shift);
                    let mut w = vec![0; crate::bits::words_for(len)];
                    decode_part(coding, q0, &p[r.clone()], len, &mut w).unwrap();
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
