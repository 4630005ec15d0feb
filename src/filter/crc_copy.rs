//! A raw payload's checksum and its copy into words in one pass (spec §2.4, §4.1).
//!
//! Decoding a raw frame is checking its CRC-32C and copying its bytes into the bit array's
//! words. Done one after the other, that is two passes over the payload: the `crc32`
//! instruction runs at 8 bytes a cycle (three interleaved chains; `crc32c` does the same),
//! then the copy reads every byte again. Here each 8-byte load feeds both the checksum and
//! the store, and the words are written into the vector's spare capacity, not zeroed first.
//!
//! The payload goes in blocks of three stripes of [`STRIPE`] bytes, one `crc32` chain per
//! stripe (the instruction's latency is three cycles and it issues one a cycle). A stripe's
//! chain starts from zero; the block's checksum is then
//! `shift(a, 2 STRIPE) ^ shift(b, STRIPE) ^ c`, `shift(x, n)` being the register after `n`
//! zero bytes from `x`, a linear map applied with four table lookups (the tables are built
//! at compile time from the polynomial). What is left after the last whole block takes one
//! chain.

use crate::error::{Error, Result};

/// Bytes of each of a block's three stripes.
const STRIPE: usize = 2048;

/// CRC-32C's reflected polynomial.
const POLY: u32 = 0x82F6_3B78;

/// A linear map of the 32-bit register, as the images of its 32 bits.
type Map = [u32; 32];

const fn apply(map: &Map, x: u32) -> u32 {
    let mut r = 0;
    let mut i = 0;
    while i < 32 {
        if x >> i & 1 == 1 {
            r ^= map[i];
        }
        i += 1;
    }
    r
}

/// The map of `2^log2` zero bytes: one byte (eight shifts of the register), squared.
const fn zero_bytes(log2: u32) -> Map {
    let mut map = [0u32; 32];
    let mut i = 0;
    while i < 32 {
        let mut x = 1u32 << i;
        let mut k = 0;
        while k < 8 {
            x = if x & 1 == 1 { (x >> 1) ^ POLY } else { x >> 1 };
            k += 1;
        }
        map[i] = x;
        i += 1;
    }
    let mut s = 0;
    while s < log2 {
        let mut squared = [0u32; 32];
        let mut i = 0;
        while i < 32 {
            squared[i] = apply(&map, map[i]);
            i += 1;
        }
        map = squared;
        s += 1;
    }
    map
}

/// A map as four tables, one per byte of the register.
const fn tables(map: &Map) -> [[u32; 256]; 4] {
    let mut t = [[0u32; 256]; 4];
    let mut k = 0;
    while k < 4 {
        let mut b = 0;
        while b < 256 {
            t[k][b] = apply(map, (b as u32) << (8 * k));
            b += 1;
        }
        k += 1;
    }
    t
}

/// `shift(x, STRIPE)` and `shift(x, 2 STRIPE)`.
static SHIFT: [[[u32; 256]; 4]; 2] = [
    tables(&zero_bytes(STRIPE.trailing_zeros())),
    tables(&zero_bytes(STRIPE.trailing_zeros() + 1)),
];

#[inline(always)]
fn shift(t: &[[u32; 256]; 4], x: u32) -> u32 {
    t[0][(x & 0xFF) as usize]
        ^ t[1][(x >> 8 & 0xFF) as usize]
        ^ t[2][(x >> 16 & 0xFF) as usize]
        ^ t[3][(x >> 24) as usize]
}

/// Append the words of `bytes` (little-endian, the last one padded with zero bytes) to
/// `words`, and return the CRC-32C of `bytes` continued from `crc` (as
/// `crc32c::crc32c_append` does), in one pass where the CPU has SSE 4.2;
/// [`Error::AllocationFailed`] where the words cannot be allocated.
pub(crate) fn append_words(crc: u32, bytes: &[u8], words: &mut Vec<u64>) -> Result<u32> {
    let n = bytes.len().div_ceil(8);
    words
        .try_reserve_exact(n)
        .map_err(|_| Error::AllocationFailed {
            bytes: 8 * n as u64,
        })?;
    super::memory::huge_pages(words);
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::features().vpclmul && bytes.len() >= FOLD_MIN {
        let spare = &mut words.spare_capacity_mut()[..n];
        // SAFETY: `one_pass_folded` needs AVX-512 F, VPCLMULQDQ, PCLMULQDQ and SSE 4.2,
        // which the CPU has (detected just above).
        let crc = unsafe { one_pass_folded(crc, bytes, spare) };
        // SAFETY: `one_pass_folded` wrote every one of the `n` words after the initialized
        // ones, and `reserve` made room for them.
        unsafe { words.set_len(words.len() + n) };
        return Ok(crc);
    }
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::features().sse42 {
        let spare = &mut words.spare_capacity_mut()[..n];
        // SAFETY: `one_pass` only needs SSE 4.2, which the CPU has (detected just above).
        let crc = unsafe { one_pass(crc, bytes, spare) };
        // SAFETY: `one_pass` wrote every one of the `n` words after the initialized ones,
        // and `reserve` made room for them.
        unsafe { words.set_len(words.len() + n) };
        return Ok(crc);
    }
    Ok(append_words_scalar(crc, bytes, words))
}

/// The two passes, the twin the kernel is tested against.
pub(crate) fn append_words_scalar(crc: u32, bytes: &[u8], words: &mut Vec<u64>) -> u32 {
    words.extend(crate::filter::bits::packed_words(bytes));
    crc32c::crc32c_append(crc, bytes)
}

/// The kernel: every one of `out`'s `ceil(bytes.len() / 8)` words written.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
fn one_pass(crc: u32, bytes: &[u8], out: &mut [core::mem::MaybeUninit<u64>]) -> u32 {
    use core::arch::x86_64::{_mm_crc32_u64, _mm_crc32_u8};
    debug_assert_eq!(out.len(), bytes.len().div_ceil(8));
    const WORDS: usize = STRIPE / 8;
    let mut reg = !crc;
    let blocks = bytes.chunks_exact(3 * STRIPE);
    let rest = blocks.remainder();
    let (out_blocks, out_rest) = out.split_at_mut(bytes.len() / (3 * STRIPE) * 3 * WORDS);
    for (block, o) in blocks.zip(out_blocks.chunks_exact_mut(3 * WORDS)) {
        let (a_in, rest) = block.split_at(STRIPE);
        let (b_in, c_in) = rest.split_at(STRIPE);
        let (a_out, rest) = o.split_at_mut(WORDS);
        let (b_out, c_out) = rest.split_at_mut(WORDS);
        let (mut a, mut b, mut c) = (u64::from(reg), 0u64, 0u64);
        for (i, ((wa, wb), wc)) in a_in
            .chunks_exact(8)
            .zip(b_in.chunks_exact(8))
            .zip(c_in.chunks_exact(8))
            .enumerate()
        {
            let wa = u64::from_le_bytes(wa.try_into().expect("8 bytes"));
            let wb = u64::from_le_bytes(wb.try_into().expect("8 bytes"));
            let wc = u64::from_le_bytes(wc.try_into().expect("8 bytes"));
            a = _mm_crc32_u64(a, wa);
            b = _mm_crc32_u64(b, wb);
            c = _mm_crc32_u64(c, wc);
            a_out[i].write(wa);
            b_out[i].write(wb);
            c_out[i].write(wc);
        }
        reg = shift(&SHIFT[1], a as u32) ^ shift(&SHIFT[0], b as u32) ^ c as u32;
    }
    let whole = rest.chunks_exact(8);
    let tail = whole.remainder();
    let mut r = u64::from(reg);
    for (w, o) in whole.zip(out_rest.iter_mut()) {
        let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        r = _mm_crc32_u64(r, w);
        o.write(w);
    }
    let mut reg = r as u32;
    if !tail.is_empty() {
        let mut last = [0u8; 8];
        last[..tail.len()].copy_from_slice(tail);
        for &byte in tail {
            reg = _mm_crc32_u8(reg, byte);
        }
        out_rest[out_rest.len() - 1].write(u64::from_le_bytes(last));
    }
    !reg
}

/// Bytes a folding iteration takes: four 512-bit registers.
const FOLD_BLOCK: usize = 256;

/// Payloads from which the folding kernel runs (below, its setup and final reduction cost
/// more than the `crc32` chains take).
const FOLD_MIN: usize = 4 * FOLD_BLOCK;

/// `x^n mod P`, P being CRC-32C's polynomial in its normal (not reflected) order.
const fn x_pow_mod(n: u32) -> u32 {
    const NORMAL: u64 = 0x1_1EDC_6F41;
    let mut r: u64 = 1;
    let mut i = 0;
    while i < n {
        r <<= 1;
        if r >> 32 & 1 == 1 {
            r ^= NORMAL;
        }
        i += 1;
    }
    r as u32
}

/// A remainder of degree below 32 in the reflected order of a 64-bit register: the
/// coefficient of `x^d` at bit `63 - d`.
const fn reflect64(c: u32) -> u64 {
    (c.reverse_bits() as u64) << 32
}

/// The two constants that fold 128 bits of the stream `d` bits forward (onto the 128 bits
/// that start `d` bits later), as (low register, high register). A 128-bit chunk loaded
/// little-endian is `lo x^64 + hi` (bit `j` of `lo` the coefficient of `x^(127 - j)`), so
/// moving it `d` bits on is `lo (x^(64 + d) mod P) + hi (x^d mod P)`; a carry-less product
/// of two reflected registers comes out one degree short (`x^(126 - k)` at bit `k`), which
/// the constants make up for being of one degree less.
const fn fold_constants(d: u32) -> (u64, u64) {
    (reflect64(x_pow_mod(63 + d)), reflect64(x_pow_mod(d - 1)))
}

/// Folding 256 bytes on (each 128-bit lane onto the lane 2048 bits later), and 16 bytes on.
const FOLD_256: (u64, u64) = fold_constants(8 * FOLD_BLOCK as u32);
const FOLD_16: (u64, u64) = fold_constants(128);

/// [`one_pass`] for payloads of [`FOLD_MIN`] bytes or more: the whole 256-byte blocks
/// loaded into four 512-bit registers, stored, and folded into four accumulators (two
/// carry-less products a 128-bit lane, PCLMULQDQ's folding of a CRC), whose sixteen lanes
/// are then folded into one and passed through `crc32`; [`one_pass`] continues with the
/// rest. Every one of `out`'s `ceil(bytes.len() / 8)` words is written.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,vpclmulqdq,pclmulqdq,sse4.2")]
fn one_pass_folded(crc: u32, bytes: &[u8], out: &mut [core::mem::MaybeUninit<u64>]) -> u32 {
    use core::arch::x86_64::*;
    debug_assert!(bytes.len() >= FOLD_MIN);
    debug_assert_eq!(out.len(), bytes.len().div_ceil(8));
    let blocks = bytes.len() / FOLD_BLOCK;
    let (head, rest) = bytes.split_at(blocks * FOLD_BLOCK);
    let (out_head, out_rest) = out.split_at_mut(blocks * FOLD_BLOCK / 8);
    let k = _mm512_set_epi64(
        FOLD_256.1 as i64,
        FOLD_256.0 as i64,
        FOLD_256.1 as i64,
        FOLD_256.0 as i64,
        FOLD_256.1 as i64,
        FOLD_256.0 as i64,
        FOLD_256.1 as i64,
        FOLD_256.0 as i64,
    );
    // One block into the registers and the output.
    let mut load_store = |i: usize, j: usize| {
        let src = &head[i * FOLD_BLOCK + 64 * j..i * FOLD_BLOCK + 64 * (j + 1)];
        let dst = &mut out_head[i * FOLD_BLOCK / 8 + 8 * j..i * FOLD_BLOCK / 8 + 8 * (j + 1)];
        // SAFETY: `src` is 64 bytes and `dst` 8 words (64 bytes) of the output, both
        // checked by the slicing above; the load and the store are unaligned ones.
        unsafe {
            let v = _mm512_loadu_si512(src.as_ptr().cast());
            _mm512_storeu_si512(dst.as_mut_ptr().cast(), v);
            v
        }
    };
    let mut acc = [
        load_store(0, 0),
        load_store(0, 1),
        load_store(0, 2),
        load_store(0, 3),
    ];
    // The register before the stream, added to its first four bytes.
    acc[0] = _mm512_xor_si512(
        acc[0],
        _mm512_castsi128_si512(_mm_cvtsi32_si128(!crc as i32)),
    );
    for i in 1..blocks {
        for (j, a) in acc.iter_mut().enumerate() {
            let v = load_store(i, j);
            let lo = _mm512_clmulepi64_epi128(*a, k, 0x00);
            let hi = _mm512_clmulepi64_epi128(*a, k, 0x11);
            *a = _mm512_ternarylogic_epi64(lo, hi, v, 0x96);
        }
    }
    // The sixteen lanes, in stream order, folded 16 bytes at a time into the last one.
    let k16 = _mm_set_epi64x(FOLD_16.1 as i64, FOLD_16.0 as i64);
    let lanes = acc.map(|a| {
        [
            _mm512_extracti32x4_epi32::<0>(a),
            _mm512_extracti32x4_epi32::<1>(a),
            _mm512_extracti32x4_epi32::<2>(a),
            _mm512_extracti32x4_epi32::<3>(a),
        ]
    });
    let mut x = lanes[0][0];
    for lane in lanes.iter().flatten().skip(1) {
        let lo = _mm_clmulepi64_si128(x, k16, 0x00);
        let hi = _mm_clmulepi64_si128(x, k16, 0x11);
        x = _mm_xor_si128(_mm_xor_si128(lo, hi), *lane);
    }
    // What the stream so far leaves in the register is the checksum of these 16 bytes from
    // a zero register.
    let reg = _mm_crc32_u64(0, _mm_cvtsi128_si64(x) as u64);
    let reg = _mm_crc32_u64(reg, _mm_extract_epi64::<1>(x) as u64) as u32;
    one_pass(!reg, rest, out_rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_copies_and_checks_as_the_two_passes() {
        let mut x = 1u64;
        let bytes: Vec<u8> = (0..4 * 3 * STRIPE + 4096)
            .map(|i| {
                x = crate::filter::hashing::fmix64(x + i as u64);
                x as u8
            })
            .collect();
        let block = 3 * STRIPE;
        let lens = [
            0,
            1,
            7,
            8,
            9,
            63,
            block - 1,
            block,
            block + 1,
            block + 8,
            2 * block + 13,
            4 * block + 99,
            FOLD_MIN - 1,
            FOLD_MIN,
            FOLD_MIN + 1,
            FOLD_MIN + 255,
            FOLD_MIN + 256,
            4096 + 17,
        ];
        for len in lens {
            for start in [0u32, 0xFFFF_FFFF, 0x1234_5678] {
                let b = &bytes[..len];
                let (mut fast, mut slow) = (vec![7u64], vec![7u64]);
                let crc = append_words(start, b, &mut fast).unwrap();
                assert_eq!(crc, append_words_scalar(start, b, &mut slow), "{len}");
                assert_eq!(crc, crc32c::crc32c_append(start, b), "{len}");
                assert_eq!(fast, slow, "{len}");
            }
        }
    }

    #[test]
    fn the_shift_tables_are_zero_bytes() {
        let x = 0xDEAD_BEEFu32;
        let mut r = x;
        for _ in 0..8 * STRIPE {
            r = if r & 1 == 1 { (r >> 1) ^ POLY } else { r >> 1 };
        }
        assert_eq!(shift(&SHIFT[0], x), r);
        for _ in 0..8 * STRIPE {
            r = if r & 1 == 1 { (r >> 1) ^ POLY } else { r >> 1 };
        }
        assert_eq!(shift(&SHIFT[1], x), r);
    }
}
