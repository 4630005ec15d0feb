//! The AVX-512 decoder of coding 10 (spec §4.14): a round of each half per step, each half's
//! 32 lanes as two vectors of sixteen 32-bit states in lane order.
//!
//! With two independent chains in flight the step is bound by its work, not by a chain (as
//! coding 8's kernel is, `dense::avx512`), so it is written for fewer instructions:
//!
//! * the part a slot falls in is a compare into a mask register, which then chooses the
//!   second part's table entry (`vpermd` under the mask) and its symbol; an entry holds the
//!   frequency in its low 16 bits and what a slot of the part adds in its high 16, so one
//!   multiply and two adds make the state;
//! * the buckets are the states shifted by 9: `vpermd` reads only the low four bits;
//! * each vector's lanes below `2^15` take the next 16 words of their stream widened to 32
//!   bits, spread by `vpexpandd`; the second half's stream is read backwards, its 16 words
//!   reversed by one `vpermw`.
//!
//! Measured on Zen 4 with a loop of the same instructions (garbage payload, no checks):
//! 0.25 ns a nibble for two halves, against 0.41 for coding 8's chain-bound kernel on one.
//!
//! It decodes exactly what the scalar rounds of [`wide`](crate::entropy::wide) decode: the
//! tests and the fuzz target `kernel_twins` compare the two on random and hostile payloads.

use core::arch::x86_64::*;

use crate::entropy::nibble_rans::avx512::{available, vector};
use crate::entropy::nibble_rans::{DecModel, LANES, LOWER};
use crate::entropy::wide::Rounds;

/// Decode rounds of both halves, a round of each per step, into `out_a` and `out_b` (two
/// words a round) while each stream has 64 bytes left to read at its end, as the scalar
/// rounds do; returns the rounds done in each half. Returns 0 without decoding when the
/// CPU lacks AVX-512.
pub(crate) fn decode_rounds(rounds: Rounds<'_, '_>) -> usize {
    if !available() {
        return 0;
    }
    // SAFETY: the CPU has AVX-512 F, VL, BW and VBMI2, and POPCNT (checked just above).
    unsafe { decode(rounds) }
}

/// The decoding model in four vectors of 16 entries by bucket.
#[derive(Clone, Copy)]
struct Tables {
    /// `div(b)`: where the bucket's second part starts.
    div: __m512i,
    /// `f(b)`: the first part's frequency (its slots add nothing).
    first: __m512i,
    /// `f(alias(b)) | (second(b) - div(b)) << 16`: the second part's frequency and what a
    /// slot of it adds, two's complement.
    second: __m512i,
    /// `alias(b)`: the second part's symbol.
    alias: __m512i,
}

impl Tables {
    #[target_feature(enable = "avx512f")]
    fn new(model: &DecModel) -> Self {
        let (d, a) = (&model.first, &model.second);
        let adjust = |b: usize| (((a[b] as i32) >> 18) as u32) << 16;
        Tables {
            div: vector(&core::array::from_fn::<u32, 16, _>(|b| d[b] >> 17)),
            first: vector(&core::array::from_fn::<u32, 16, _>(|b| d[b] & 0x1FFF)),
            second: vector(&core::array::from_fn::<u32, 16, _>(|b| {
                a[b] & 0x1FFF | adjust(b)
            })),
            alias: vector(&core::array::from_fn::<u32, 16, _>(|b| (a[b] >> 13) & 15)),
        }
    }
}

/// Sixteen lanes through one symbol: the states before renormalization, and the symbols
/// in the low 4 bits of each lane (bits above them are not cleared).
#[target_feature(enable = "avx512f")]
#[inline]
fn advance(t: &Tables, x: __m512i) -> (__m512i, __m512i) {
    let r = _mm512_and_si512(x, _mm512_set1_epi32(0x1FF));
    let q = _mm512_srli_epi32::<13>(x);
    let bucket = _mm512_srli_epi32::<9>(x);
    let second = _mm512_cmpge_epu32_mask(r, _mm512_permutexvar_epi32(bucket, t.div));
    let e = _mm512_mask_permutexvar_epi32(
        _mm512_permutexvar_epi32(bucket, t.first),
        second,
        bucket,
        t.second,
    );
    let y = _mm512_add_epi32(
        _mm512_mullo_epi32(_mm512_and_si512(e, _mm512_set1_epi32(0xFFFF)), q),
        _mm512_add_epi32(r, _mm512_srai_epi32::<16>(e)),
    );
    let symbol = _mm512_mask_permutexvar_epi32(bucket, second, bucket, t.alias);
    (y, symbol)
}

/// A half's 32 lanes through one round: the new states, and the round's 16 bytes of
/// nibbles. `words(k, n)` gives the 16 words that follow the `n` the half's lanes have
/// taken this round, for lanes mask `k` (read forward or backward).
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512vbmi2,popcnt")]
#[inline]
fn round(
    t: &Tables,
    s: [__m512i; 2],
    mut words: impl FnMut(usize) -> __m256i,
) -> ([__m512i; 2], __m128i, usize) {
    let (y0, e0) = advance(t, s[0]);
    let (y1, e1) = advance(t, s[1]);
    let low = _mm512_set1_epi32(LOWER as i32);
    let (k0, k1) = (
        _mm512_cmplt_epu32_mask(y0, low),
        _mm512_cmplt_epu32_mask(y1, low),
    );
    let n0 = k0.count_ones() as usize;
    let w0 = _mm512_maskz_expand_epi32(k0, _mm512_cvtepu16_epi32(words(0)));
    let w1 = _mm512_maskz_expand_epi32(k1, _mm512_cvtepu16_epi32(words(n0)));
    let s = [
        _mm512_or_si512(_mm512_mask_slli_epi32(y0, k0, y0, 16), w0),
        _mm512_or_si512(_mm512_mask_slli_epi32(y1, k1, y1, 16), w1),
    ];
    // Lane l's nibble is nibble 4 (l mod 8) + floor(l / 8) of the round: with vector 0's
    // symbols in byte 0 and vector 1's in byte 1 of 16 words, word i (i < 8) holds nibbles
    // 4i and 4i + 2, word 8 + i nibbles 4i + 1 and 4i + 3 (`vpternlogd` 0xF8: a | b & c).
    let both = _mm512_ternarylogic_epi32::<0xF8>(
        _mm512_and_si512(e0, _mm512_set1_epi32(15)),
        _mm512_slli_epi32::<8>(e1),
        _mm512_set1_epi32(0x0F00),
    );
    let both = _mm512_cvtepi32_epi16(both);
    let pieces = _mm_or_si128(
        _mm256_castsi256_si128(both),
        _mm_slli_epi16::<4>(_mm256_extracti128_si256::<1>(both)),
    );
    (s, pieces, n0 + k1.count_ones() as usize)
}

#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512vbmi2,popcnt")]
fn decode(rounds: Rounds<'_, '_>) -> usize {
    let Rounds {
        model,
        x,
        streams,
        out_a,
        out_b,
    } = rounds;
    let t = Tables::new(model);
    let load = |x: &[u32; LANES]| {
        [
            vector::<u32, 16>(x[..16].try_into().expect("16")),
            vector::<u32, 16>(x[16..].try_into().expect("16")),
        ]
    };
    let (mut sa, mut sb) = (load(&x[0]), load(&x[1]));
    let reverse = _mm256_setr_epi16(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    let payload = streams.payload;
    let (mut front, mut back) = (streams.front, streams.back);
    let mut done = 0;
    for (wa, wb) in out_a.chunks_exact_mut(2).zip(out_b.chunks_exact_mut(2)) {
        // A round of a half reads at most 32 words: 64 bytes from where its stream is.
        if front + 64 > payload.len() || back < 64 {
            break;
        }
        let (s, pieces, n) = round(&t, sa, |k| {
            // SAFETY: front + 2k + 32 <= front + 64 <= payload.len() (k <= 16).
            unsafe { _mm256_loadu_si256(payload.as_ptr().add(front + 2 * k).cast()) }
        });
        sa = s;
        front += 2 * n;
        // SAFETY: `wa` is two u64, 16 bytes.
        unsafe { _mm_storeu_si128(wa.as_mut_ptr().cast(), pieces) };
        let (s, pieces, n) = round(&t, sb, |k| {
            // SAFETY: back - 2k - 32 >= back - 64 >= 0 (k <= 16).
            let w = unsafe { _mm256_loadu_si256(payload.as_ptr().add(back - 2 * k - 32).cast()) };
            _mm256_permutexvar_epi16(reverse, w)
        });
        sb = s;
        back -= 2 * n;
        // SAFETY: `wb` is two u64, 16 bytes.
        unsafe { _mm_storeu_si128(wb.as_mut_ptr().cast(), pieces) };
        done += 1;
    }
    for (x, s) in x.iter_mut().zip([sa, sb]) {
        // SAFETY: the lanes are 32 u32: two unaligned 64-byte stores in bounds.
        unsafe {
            _mm512_storeu_si512(x[..16].as_mut_ptr().cast(), s[0]);
            _mm512_storeu_si512(x[16..].as_mut_ptr().cast(), s[1]);
        }
    }
    (streams.front, streams.back) = (front, back);
    done
}
