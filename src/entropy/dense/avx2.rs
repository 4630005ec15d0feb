//! The AVX2 decoder of coding 8 (spec §4.12): the 32 lanes as four vectors of eight 32-bit
//! states. Per vector and round, with no gather: the two 16-entry tables are looked up by
//! a pair of permutations each (`vpermd` on their halves, blended on the bucket's top bit),
//! then a 32-bit multiply, and the lanes below `2^15` take the next 16-bit words, spread to
//! them by a byte shuffle from a table indexed by the lanes' mask (as in Fabian Giesen's
//! `rans_word_sse41` and htscodecs' `rANS_static32x16pr_avx2`).
//!
//! It decodes exactly what [`decode_rounds_scalar`](crate::entropy::dense) decodes: the
//! tests and the fuzz target `kernel_twins` compare the two on random and hostile payloads.

use core::arch::x86_64::*;

use crate::entropy::nibble_rans::lanes_avx2::{available, halves, load_lanes, lookup, store_lanes};
use crate::entropy::nibble_rans::{DecModel, LANES};

/// For each mask of 8 lanes: a byte shuffle that puts lane `i`'s word (word
/// `popcount(mask & ((1 << i) - 1))` of the 16 bytes read) in its low half and zeros
/// elsewhere, and zero in lanes outside the mask.
static SPREAD: [[u8; 32]; 256] = {
    let mut t = [[0x80u8; 32]; 256];
    let mut mask = 0;
    while mask < 256 {
        let (mut i, mut k) = (0, 0u8);
        while i < 8 {
            if mask >> i & 1 == 1 {
                t[mask][4 * i] = 2 * k;
                t[mask][4 * i + 1] = 2 * k + 1;
                k += 1;
            }
            i += 1;
        }
        mask += 1;
    }
    t
};

/// Decode rounds of 32 symbols (two words of `out` each) while 64 bytes of the payload are
/// left at `*pos`, as `decode_rounds_scalar` does; returns the rounds done. Returns 0
/// without decoding when the CPU lacks AVX2.
pub(crate) fn decode_rounds(
    model: &DecModel,
    x: &mut [u32; LANES],
    payload: &[u8],
    pos: &mut usize,
    out: &mut [u64],
) -> usize {
    if !available() {
        return 0;
    }
    // SAFETY: the CPU has AVX2 and POPCNT (checked just above).
    unsafe { rounds(model, x, payload, pos, out) }
}

/// The decoding model's two tables, each as its two halves of 8 entries.
#[derive(Clone, Copy)]
struct Tables {
    first: [__m256i; 2],
    second: [__m256i; 2],
}

/// One vector of eight lanes through one symbol: the lanes' nibbles into `bits` (at bit
/// `13 - SHIFT` of each 32-bit lane, `SHIFT = 13 - 4g` for vector g), the states advanced
/// and refilled from the words at `*p`.
///
/// # Safety
///
/// The CPU has AVX2 and POPCNT, and 16 bytes of `payload` from `*p` are in bounds.
#[target_feature(enable = "avx2,popcnt")]
#[inline]
unsafe fn step<const SHIFT: i32>(
    t: &Tables,
    state: &mut __m256i,
    bits: &mut __m256i,
    payload: &[u8],
    p: &mut usize,
) {
    let xv = *state;
    // vpermd reads the low 3 bits of the bucket (x >> 9), the blend the top one (bit 12
    // of x, shifted to the sign).
    let bucket = _mm256_srli_epi32::<9>(xv);
    let top = _mm256_slli_epi32::<19>(xv);
    // SAFETY: the caller's CPU has AVX2.
    let (d, a) = unsafe { (lookup(t.first, bucket, top), lookup(t.second, bucket, top)) };
    let r = _mm256_and_si256(xv, _mm256_set1_epi32(0x1FF));
    let own = _mm256_cmpgt_epi32(_mm256_srli_epi32::<17>(d), r);
    let e = _mm256_blendv_epi8(a, d, own);
    let adjust = _mm256_srai_epi32::<18>(_mm256_andnot_si256(own, a));
    // The nibble, bits 13 to 16 of e, to its place in the round's 16-bit piece.
    let sym = _mm256_srli_epi32::<SHIFT>(_mm256_and_si256(e, _mm256_set1_epi32(0xF << 13)));
    *bits = _mm256_or_si256(*bits, sym);
    let y = _mm256_add_epi32(
        _mm256_mullo_epi32(
            _mm256_and_si256(e, _mm256_set1_epi32(0x1FFF)),
            _mm256_srli_epi32::<13>(xv),
        ),
        _mm256_add_epi32(r, adjust),
    );
    // States are below 2^31: a signed comparison finds the lanes below 2^15.
    let below = _mm256_cmpgt_epi32(_mm256_set1_epi32(1 << 15), y);
    let mask = _mm256_movemask_ps(_mm256_castsi256_ps(below)) as usize;
    // SAFETY: the caller's bound.
    let words =
        unsafe { _mm256_broadcastsi128_si256(_mm_loadu_si128(payload.as_ptr().add(*p).cast())) };
    // SAFETY: each SPREAD row is 32 bytes.
    let spread = unsafe { _mm256_loadu_si256(SPREAD[mask].as_ptr().cast()) };
    let w = _mm256_shuffle_epi8(words, spread);
    *state = _mm256_blendv_epi8(y, _mm256_or_si256(_mm256_slli_epi32::<16>(y), w), below);
    *p += 2 * mask.count_ones() as usize;
}

#[target_feature(enable = "avx2,popcnt")]
unsafe fn rounds(
    model: &DecModel,
    x: &mut [u32; LANES],
    payload: &[u8],
    pos: &mut usize,
    out: &mut [u64],
) -> usize {
    // SAFETY: this function's CPU has AVX2.
    let t = unsafe {
        Tables {
            first: halves(&model.first),
            second: halves(&model.second),
        }
    };
    // SAFETY: as above.
    let [mut s0, mut s1, mut s2, mut s3] = unsafe { load_lanes(x) };
    let mut p = *pos;
    let mut done = 0;
    for ws in out.chunks_exact_mut(2) {
        if p + 2 * LANES > payload.len() {
            break;
        }
        // Vector g's lane i holds nibble 4i + g of the round: after the four, each 32-bit
        // lane of `bits` holds the round's 16-bit piece i.
        let mut bits = _mm256_setzero_si256();
        // SAFETY: p + 64 <= payload.len() at the round's start and a round's first three
        // vectors take at most 24 words, so each reads 16 bytes in bounds.
        unsafe {
            step::<13>(&t, &mut s0, &mut bits, payload, &mut p);
            step::<9>(&t, &mut s1, &mut bits, payload, &mut p);
            step::<5>(&t, &mut s2, &mut bits, payload, &mut p);
            step::<1>(&t, &mut s3, &mut bits, payload, &mut p);
        }
        let packed = _mm256_permute4x64_epi64::<0b1000>(_mm256_packus_epi32(bits, bits));
        let piece = _mm256_castsi256_si128(packed);
        ws[0] = _mm_cvtsi128_si64(piece) as u64;
        ws[1] = _mm_extract_epi64::<1>(piece) as u64;
        done += 1;
    }
    // SAFETY: this function's CPU has AVX2.
    unsafe { store_lanes(x, [s0, s1, s2, s3]) };
    *pos = p;
    done
}
