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

use super::lanes_avx2::{available, halves, load_lanes, lookup, store_lanes};
use super::{EncModel, LANES, PRECISION, ROOM};

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

/// Encode the whole rounds `rounds - 1` down to 0 of `words` onto the states `x`, pushing
/// words (little-endian; `*at` counts words) into `buf` below `*at` as the scalar encoder
/// does (`*at >= ROOM` plus one word per nibble left). Returns false, doing nothing, when
/// the CPU lacks AVX2.
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
    // SAFETY: the CPU has AVX2 and POPCNT (checked above); the bounds just asserted.
    unsafe { rounds_avx2(model, x, words, rounds, buf, at) };
    true
}

/// The model's two tables, each as its two halves of 8 entries, and the slot table.
struct Tables<'a> {
    meta: [__m256i; 2],
    rcp: [__m256i; 2],
    slots: &'a [u16],
}

/// One vector of eight lanes (nibble position `G` of each 16-bit piece of the round in
/// `pieces`) through one nibble: the words of the lanes that put one out stored below
/// `*top`, the states advanced.
///
/// # Safety
///
/// The CPU has AVX2 and POPCNT; `out` holds at least `*top` words (`2 * *top` bytes) and
/// `*top >= ROOM`.
#[target_feature(enable = "avx2,popcnt")]
#[inline]
unsafe fn step<const G: i32>(
    t: &Tables<'_>,
    pieces: __m256i,
    state: &mut __m256i,
    out: *mut u8,
    top: &mut usize,
) {
    let xv = *state;
    let v = _mm256_and_si256(_mm256_srli_epi32::<G>(pieces), _mm256_set1_epi32(0xF));
    // The nibble's entries: its low 3 bits index, its top bit (moved to the sign) picks
    // the half.
    let upper = _mm256_slli_epi32::<28>(v);
    // SAFETY: the caller's CPU has AVX2.
    let (meta, rcp) = unsafe { (lookup(t.meta, v, upper), lookup(t.rcp, v, upper)) };
    let f = _mm256_and_si256(meta, _mm256_set1_epi32(0x1FFF));
    // States are below 2^31: signed comparisons hold.
    let keep = _mm256_cmpgt_epi32(_mm256_slli_epi32::<18>(f), xv);
    let emit = !_mm256_movemask_ps(_mm256_castsi256_ps(keep)) as usize & 0xFF;
    // Each 32-bit lane's low word to the front of its 128-bit half, then the emitted ones
    // to the top of 16 bytes.
    let low_words = _mm256_setr_epi8(
        0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 4, 5, 8, 9, 12, 13, -1, -1,
        -1, -1, -1, -1, -1, -1,
    );
    let packed = _mm256_castsi256_si128(_mm256_permute4x64_epi64::<0b1000>(_mm256_shuffle_epi8(
        xv, low_words,
    )));
    // SAFETY: COMPRESS has 256 rows of 16 bytes; emit < 256.
    let order = unsafe { _mm_loadu_si128(COMPRESS[emit].as_ptr().cast()) };
    // SAFETY: the caller's bound: the 16 bytes below `top` are inside `out`, and the ones
    // under the new words are written again later.
    unsafe {
        _mm_storeu_si128(
            out.add(2 * (*top - ROOM)).cast(),
            _mm_shuffle_epi8(packed, order),
        )
    };
    *top -= emit.count_ones() as usize;
    let y = _mm256_blendv_epi8(_mm256_srli_epi32::<16>(xv), xv, keep);
    // floor(y / f): the high halves of y * rcp, even and odd lanes, then the shift.
    let even = _mm256_srli_epi64::<32>(_mm256_mul_epu32(y, rcp));
    let odd = _mm256_mul_epu32(_mm256_srli_epi64::<32>(y), _mm256_srli_epi64::<32>(rcp));
    let high_half = _mm256_blend_epi32::<0b1010_1010>(even, odd);
    let shift = _mm256_and_si256(_mm256_srli_epi32::<27>(meta), _mm256_set1_epi32(0xF));
    let q = _mm256_add_epi32(
        _mm256_srlv_epi32(high_half, shift),
        _mm256_srli_epi32::<31>(meta),
    );
    let rem = _mm256_sub_epi32(y, _mm256_mullo_epi32(q, f));
    let at_slot = _mm256_add_epi32(
        _mm256_and_si256(_mm256_srli_epi32::<13>(meta), _mm256_set1_epi32(0x1FFF)),
        rem,
    );
    // SAFETY: at_slot = cum(v) + rem < 2^13, and the table has 2^13 + 1 u16: the 4 bytes
    // at 2 * at_slot are inside it.
    let slot = unsafe { _mm256_i32gather_epi32::<2>(t.slots.as_ptr().cast(), at_slot) };
    *state = _mm256_or_si256(
        _mm256_slli_epi32::<{ PRECISION as i32 }>(q),
        _mm256_and_si256(slot, _mm256_set1_epi32(0xFFFF)),
    );
}

#[target_feature(enable = "avx2,popcnt")]
unsafe fn rounds_avx2(
    model: &EncModel,
    x: &mut [u32; LANES],
    words: &[u64],
    rounds: usize,
    buf: &mut [u8],
    at: &mut usize,
) {
    // SAFETY: this function's CPU has AVX2.
    let t = unsafe {
        Tables {
            meta: halves(&model.meta),
            rcp: halves(&model.rcp),
            slots: &model.slots,
        }
    };
    // SAFETY: as above.
    let [mut s0, mut s1, mut s2, mut s3] = unsafe { load_lanes(x) };
    let out = buf.as_mut_ptr();
    let mut top = *at;
    for r in (0..rounds).rev() {
        // SAFETY: r < rounds and words.len() >= 2 * rounds: 16 bytes.
        let pieces =
            _mm256_cvtepu16_epi32(unsafe { _mm_loadu_si128(words[2 * r..].as_ptr().cast()) });
        // SAFETY: top >= ROOM + the words still to come (the caller's bound).
        unsafe {
            step::<12>(&t, pieces, &mut s3, out, &mut top);
            step::<8>(&t, pieces, &mut s2, out, &mut top);
            step::<4>(&t, pieces, &mut s1, out, &mut top);
            step::<0>(&t, pieces, &mut s0, out, &mut top);
        }
    }
    // SAFETY: this function's CPU has AVX2.
    unsafe { store_lanes(x, [s0, s1, s2, s3]) };
    *at = top;
}
