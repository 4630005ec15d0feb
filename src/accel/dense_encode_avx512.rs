//! The AVX-512 encoder of coding 8 (spec §4.12): the whole rounds of a payload, sixteen
//! lanes per vector, last to first as the scalar encoder goes. Per vector: the nibbles'
//! parameters from two 16-entry tables (one `vpermd` each), the lanes at or above
//! `f * 2^18` put their low words out (gathered in lane order by `vpcompressd`, narrowed,
//! and stored under the words already written by a masked store), an exact division by a
//! reciprocal multiply, and the slot from the model's slot table (one gather).
//!
//! It writes exactly what the scalar encoder writes: the tests and the fuzz target
//! `kernel_twins` compare the payloads.

use core::arch::x86_64::*;

use super::dense_avx512::available;
use crate::entropy::dense::{EncModel, LANES, PRECISION, ROOM};

/// Encode the whole rounds `rounds - 1` down to 0 of `words` onto the states `x`, pushing
/// words (little-endian; `*at` counts words) into `buf` below `*at` as the scalar encoder
/// does (`*at >= ROOM` plus one word per nibble left). Returns false, doing nothing, when
/// the CPU lacks AVX-512.
pub(crate) fn encode_rounds(
    model: &EncModel,
    x: &mut [u32; LANES],
    words: &[u64],
    rounds: usize,
    buf: &mut [u8],
    at: &mut usize,
) -> bool {
    if !available() {
        return false;
    }
    assert!(words.len() >= 2 * rounds && *at >= ROOM + LANES * rounds && 2 * *at <= buf.len());
    assert!(model.slots.len() > 1 << PRECISION);
    // SAFETY: the CPU has AVX-512 F, VL and BW, and POPCNT (checked above); the bounds just
    // asserted.
    unsafe { rounds_avx512(model, x, words, rounds, buf, at) };
    true
}

/// One vector of sixteen lanes through one nibble each (`v`, one per lane): the words of
/// the lanes that put one out stored below `*top`, the states advanced.
///
/// # Safety
///
/// The CPU has AVX-512 F, VL and BW and POPCNT; `out` holds at least `*top` words
/// (`2 * *top` bytes) and `*top >= 16`; `slots` has more than `2^13` entries.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,popcnt")]
#[inline]
unsafe fn step(
    meta_t: __m512i,
    rcp_t: __m512i,
    slots: &[u16],
    v: __m512i,
    state: &mut __m512i,
    out: *mut u8,
    top: &mut usize,
) {
    let xv = *state;
    let meta = _mm512_permutexvar_epi32(v, meta_t);
    let rcp = _mm512_permutexvar_epi32(v, rcp_t);
    let f = _mm512_and_si512(meta, _mm512_set1_epi32(0x1FFF));
    let emit = _mm512_cmpge_epu32_mask(xv, _mm512_slli_epi32::<18>(f));
    let k = emit.count_ones() as usize;
    // The emitting lanes' low words, in lane order, at the bottom of 16 words; the k of
    // them go just below `top`.
    let packed = _mm512_cvtepi32_epi16(_mm512_maskz_compress_epi32(emit, xv));
    // SAFETY: the caller's bound: k <= 16 <= *top, and words `*top - k .. *top` are in
    // `out`; the masked store writes only those.
    unsafe {
        _mm256_mask_storeu_epi16(
            out.add(2 * (*top - k)).cast(),
            ((1u32 << k) - 1) as __mmask16,
            packed,
        )
    };
    *top -= k;
    let y = _mm512_mask_srli_epi32::<16>(xv, emit, xv);
    // floor(y / f): the high halves of y * rcp, even and odd lanes, then the shift.
    let even = _mm512_srli_epi64::<32>(_mm512_mul_epu32(y, rcp));
    let odd = _mm512_mul_epu32(_mm512_srli_epi64::<32>(y), _mm512_srli_epi64::<32>(rcp));
    let high_half = _mm512_mask_blend_epi32(0xAAAA, even, odd);
    let shift = _mm512_and_si512(_mm512_srli_epi32::<27>(meta), _mm512_set1_epi32(0xF));
    let q = _mm512_add_epi32(
        _mm512_srlv_epi32(high_half, shift),
        _mm512_srli_epi32::<31>(meta),
    );
    let rem = _mm512_sub_epi32(y, _mm512_mullo_epi32(q, f));
    let at_slot = _mm512_add_epi32(
        _mm512_and_si512(_mm512_srli_epi32::<13>(meta), _mm512_set1_epi32(0x1FFF)),
        rem,
    );
    // SAFETY: at_slot = cum(v) + rem < 2^13, and the table has more than 2^13 u16: the 4
    // bytes at 2 * at_slot are inside it.
    let slot = unsafe { _mm512_i32gather_epi32::<2>(at_slot, slots.as_ptr().cast()) };
    *state = _mm512_or_si512(
        _mm512_slli_epi32::<{ PRECISION }>(q),
        _mm512_and_si512(slot, _mm512_set1_epi32(0xFFFF)),
    );
}

#[target_feature(enable = "avx512f,avx512vl,avx512bw,popcnt")]
unsafe fn rounds_avx512(
    model: &EncModel,
    x: &mut [u32; LANES],
    words: &[u64],
    rounds: usize,
    buf: &mut [u8],
    at: &mut usize,
) {
    // SAFETY: each table is 16 u32 and the lanes 32: unaligned 64-byte loads in bounds.
    let (meta, rcp, mut s0, mut s1) = unsafe {
        (
            _mm512_loadu_si512(model.meta.as_ptr().cast()),
            _mm512_loadu_si512(model.rcp.as_ptr().cast()),
            _mm512_loadu_si512(x[..16].as_ptr().cast()),
            _mm512_loadu_si512(x[16..].as_ptr().cast()),
        )
    };
    // Lane l codes nibble 4 (l mod 8) + floor(l / 8): bits 4 floor(l / 8) of the round's
    // 16-bit piece l mod 8. With each piece in lanes i and i + 8 of a vector, vector g
    // takes them from bits 8g (its low eight lanes) and 8g + 4 (its high eight).
    let from_piece = |g: i32| {
        let (lo, hi) = (8 * g, 8 * g + 4);
        _mm512_setr_epi32(
            lo, lo, lo, lo, lo, lo, lo, lo, hi, hi, hi, hi, hi, hi, hi, hi,
        )
    };
    let (f0, f1) = (from_piece(0), from_piece(1));
    let nibble = _mm512_set1_epi32(0xF);
    let out = buf.as_mut_ptr();
    let mut top = *at;
    for r in (0..rounds).rev() {
        // SAFETY: r < rounds and words.len() >= 2 * rounds: 16 bytes.
        let pieces = _mm512_broadcast_i64x4(_mm256_cvtepu16_epi32(unsafe {
            _mm_loadu_si128(words[2 * r..].as_ptr().cast())
        }));
        let v1 = _mm512_and_si512(_mm512_srlv_epi32(pieces, f1), nibble);
        let v0 = _mm512_and_si512(_mm512_srlv_epi32(pieces, f0), nibble);
        // SAFETY: top >= ROOM + the words still to come (the caller's bound), the slot
        // table's length asserted by the caller.
        unsafe {
            step(meta, rcp, &model.slots, v1, &mut s1, out, &mut top);
            step(meta, rcp, &model.slots, v0, &mut s0, out, &mut top);
        }
    }
    // SAFETY: the lanes are 32 u32: two unaligned 64-byte stores in bounds.
    unsafe {
        _mm512_storeu_si512(x[..16].as_mut_ptr().cast(), s0);
        _mm512_storeu_si512(x[16..].as_mut_ptr().cast(), s1);
    }
    *at = top;
}
