//! The AVX2 encoder of coding 8 (spec §4.12): the whole rounds of a payload, eight lanes
//! (one nibble position of each 16-bit piece of the round) per vector, last to first as the
//! scalar encoder goes. Per vector: the nibbles' parameters from two 16-entry tables (a pair
//! of permutations each, as in the decoder), the lanes at or above `f * 2^18` put their low
//! words out (packed by a byte shuffle from a table indexed by the lanes' mask, stored
//! below the words already written), an exact division by a reciprocal multiply, and the
//! slot from the model's slot table (one gather).
//!
//! It writes exactly what the scalar encoder writes: the tests compare the two payloads.

use core::arch::x86_64::*;

use crate::entropy::dense::{EncModel, LANES, PRECISION, ROOM};

/// For each mask of 8 lanes: a byte shuffle of the lanes' 8 low words that puts the masked
/// ones, in lane order, at the top of 16 bytes (words `8 - k .. 7`, k of them).
static COMPRESS: [[u8; 16]; 256] = {
    let mut t = [[0x80u8; 16]; 256];
    let mut mask = 0;
    while mask < 256 {
        let k = (mask as u32).count_ones() as usize;
        let (mut i, mut j) = (0, 0);
        while i < 8 {
            if mask >> i & 1 == 1 {
                let to = 8 - k + j;
                t[mask][2 * to] = 2 * i as u8;
                t[mask][2 * to + 1] = 2 * i as u8 + 1;
                j += 1;
            }
            i += 1;
        }
        mask += 1;
    }
    t
};

/// Whether this CPU runs [`encode_rounds`].
pub(crate) fn available() -> bool {
    std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("popcnt")
}

/// Encode the whole rounds `rounds - 1` down to 0 of `words` onto the states `x`, pushing
/// words into `buf` below `*at` as the scalar encoder does (`*at >= ROOM` plus one word per
/// nibble left). Returns false, doing nothing, when the CPU lacks AVX2.
pub(crate) fn encode_rounds(
    model: &EncModel,
    x: &mut [u32; LANES],
    words: &[u64],
    rounds: usize,
    buf: &mut [u16],
    at: &mut usize,
) -> bool {
    if !available() {
        return false;
    }
    assert!(words.len() >= 2 * rounds && *at >= ROOM + LANES * rounds && *at <= buf.len());
    // SAFETY: the CPU has AVX2 and POPCNT (checked above); the bounds just asserted.
    unsafe { rounds_avx2(model, x, words, rounds, buf, at) };
    true
}

#[target_feature(enable = "avx2,popcnt")]
unsafe fn rounds_avx2(
    model: &EncModel,
    x: &mut [u32; LANES],
    words: &[u64],
    rounds: usize,
    buf: &mut [u16],
    at: &mut usize,
) {
    let half = |t: &[u32; 16], h: usize| {
        // SAFETY: `t` is 16 u32; each half is 8, one unaligned vector.
        unsafe { _mm256_loadu_si256(t[8 * h..].as_ptr().cast()) }
    };
    let (meta_lo, meta_hi) = (half(&model.meta, 0), half(&model.meta, 1));
    let (rcp_lo, rcp_hi) = (half(&model.rcp, 0), half(&model.rcp, 1));
    let slots = model.slots.as_ptr().cast::<i32>();
    // SAFETY (loads and stores of the states): `x` is 32 u32, four unaligned vectors.
    let xp = x.as_mut_ptr().cast::<__m256i>();
    let mut s = unsafe {
        [
            _mm256_loadu_si256(xp),
            _mm256_loadu_si256(xp.add(1)),
            _mm256_loadu_si256(xp.add(2)),
            _mm256_loadu_si256(xp.add(3)),
        ]
    };
    let nibble = _mm256_set1_epi32(0xF);
    let eight = _mm256_set1_epi32(8);
    let zero = _mm256_setzero_si256();
    let low13 = _mm256_set1_epi32(0x1FFF);
    let one = _mm256_set1_epi32(1);
    // Each 32-bit lane's low word to the front of its 128-bit half.
    let low_words = _mm256_setr_epi8(
        0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 4, 5, 8, 9, 12, 13, -1, -1,
        -1, -1, -1, -1, -1, -1,
    );
    let out = buf.as_mut_ptr();
    let mut top = *at;
    for r in (0..rounds).rev() {
        // SAFETY: r < rounds and words.len() >= 2 * rounds: 16 bytes.
        let pieces =
            _mm256_cvtepu16_epi32(unsafe { _mm_loadu_si128(words[2 * r..].as_ptr().cast()) });
        for (g, state) in s.iter_mut().enumerate().rev() {
            let xv = *state;
            let v = _mm256_and_si256(
                _mm256_srlv_epi32(pieces, _mm256_set1_epi32(4 * g as i32)),
                nibble,
            );
            let low_half = _mm256_cmpeq_epi32(_mm256_and_si256(v, eight), zero);
            let look = |lo: __m256i, hi: __m256i| {
                _mm256_blendv_epi8(
                    _mm256_permutevar8x32_epi32(hi, v),
                    _mm256_permutevar8x32_epi32(lo, v),
                    low_half,
                )
            };
            let meta = look(meta_lo, meta_hi);
            let rcp = look(rcp_lo, rcp_hi);
            let f = _mm256_and_si256(meta, low13);
            // States are below 2^31: signed comparisons hold.
            let keep = _mm256_cmpgt_epi32(_mm256_slli_epi32::<18>(f), xv);
            let emit = !_mm256_movemask_ps(_mm256_castsi256_ps(keep)) as usize & 0xFF;
            let packed = _mm256_castsi256_si128(_mm256_permute4x64_epi64::<0b1000>(
                _mm256_shuffle_epi8(xv, low_words),
            ));
            // SAFETY: COMPRESS has 256 rows of 16 bytes; emit < 256.
            let order = unsafe { _mm_loadu_si128(COMPRESS[emit].as_ptr().cast()) };
            // SAFETY: top >= ROOM + (the words still to come) >= 8: the 16 bytes below
            // `top` are inside `buf`, and the ones under the new words are written again.
            unsafe {
                _mm_storeu_si128(out.add(top - ROOM).cast(), _mm_shuffle_epi8(packed, order))
            };
            top -= emit.count_ones() as usize;
            let y = _mm256_blendv_epi8(_mm256_srli_epi32::<16>(xv), xv, keep);
            // floor(y / f): the high halves of y * rcp, even and odd lanes, then the shift.
            let even = _mm256_srli_epi64::<32>(_mm256_mul_epu32(y, rcp));
            let odd = _mm256_mul_epu32(_mm256_srli_epi64::<32>(y), _mm256_srli_epi64::<32>(rcp));
            let high = _mm256_blend_epi32::<0b1010_1010>(even, odd);
            let shift = _mm256_and_si256(_mm256_srli_epi32::<27>(meta), nibble);
            let q = _mm256_add_epi32(
                _mm256_srlv_epi32(high, shift),
                _mm256_and_si256(_mm256_srli_epi32::<31>(meta), one),
            );
            let rem = _mm256_sub_epi32(y, _mm256_mullo_epi32(q, f));
            let at_slot =
                _mm256_add_epi32(_mm256_and_si256(_mm256_srli_epi32::<13>(meta), low13), rem);
            // SAFETY: at_slot = cum(v) + rem < 2^13, and the table has 2^13 + 1 u16: the
            // 4 bytes at 2 * at_slot are inside it.
            let slot = unsafe { _mm256_i32gather_epi32::<2>(slots, at_slot) };
            *state = _mm256_or_si256(
                _mm256_slli_epi32::<{ PRECISION as i32 }>(q),
                _mm256_and_si256(slot, _mm256_set1_epi32(0xFFFF)),
            );
        }
    }
    // SAFETY: as for the loads.
    unsafe {
        for (g, state) in s.iter().enumerate() {
            _mm256_storeu_si256(xp.add(g), *state);
        }
    }
    *at = top;
}
