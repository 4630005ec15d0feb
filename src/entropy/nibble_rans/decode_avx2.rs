//! The AVX2 round of the decoders of codings 8 and 10 (spec §4.12, §4.14): the 32 lanes as
//! four vectors of eight 32-bit states. Per vector and round, with no gather: the two
//! 16-entry tables are looked up by a pair of permutations each (`vpermd` on their halves,
//! blended on the bucket's top bit), then a 32-bit multiply, and the lanes below `2^15`
//! take the next 16-bit words, spread to them by a byte shuffle from a table indexed by the
//! lanes' mask (as in Fabian Giesen's `rans_word_sse41` and htscodecs'
//! `rANS_static32x16pr_avx2`). Where the words come from is the caller's: coding 8 reads
//! one stream forward, coding 10 one forward and one backward.

use core::arch::x86_64::*;

use super::lanes_avx2::{halves, lookup};
use super::DecModel;

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

/// The decoding model's two tables, each as its two halves of 8 entries.
#[derive(Clone, Copy)]
pub(crate) struct Tables {
    first: [__m256i; 2],
    second: [__m256i; 2],
}

impl Tables {
    /// The tables of `model` in registers.
    #[target_feature(enable = "avx2")]
    pub(crate) fn new(model: &DecModel) -> Self {
        // SAFETY: this function's CPU has AVX2.
        unsafe {
            Tables {
                first: halves(&model.first),
                second: halves(&model.second),
            }
        }
    }
}

/// One vector of eight lanes through one symbol: the lanes' nibbles into `bits` (at bit
/// `13 - SHIFT` of each 32-bit lane, `SHIFT = 13 - 4g` for vector g), the states advanced
/// and refilled from `words` (the next eight words of the stream, in the order it gives
/// them); returns the words taken.
#[target_feature(enable = "avx2,popcnt")]
#[inline]
fn step<const SHIFT: i32>(
    t: &Tables,
    state: &mut __m256i,
    bits: &mut __m256i,
    words: __m128i,
) -> usize {
    let xv = *state;
    // vpermd reads the low 3 bits of the bucket (x >> 9), the blend the top one (bit 12
    // of x, shifted to the sign).
    let bucket = _mm256_srli_epi32::<9>(xv);
    let top = _mm256_slli_epi32::<19>(xv);
    // SAFETY: this function's CPU has AVX2.
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
    // SAFETY: each SPREAD row is 32 bytes.
    let spread = unsafe { _mm256_loadu_si256(SPREAD[mask].as_ptr().cast()) };
    let w = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(words), spread);
    *state = _mm256_blendv_epi8(y, _mm256_or_si256(_mm256_slli_epi32::<16>(y), w), below);
    mask.count_ones() as usize
}

/// The 32 lanes `s` through one round: the round's 16 bytes of nibbles as two words, and
/// the words taken. `words(k)` gives the eight words of the stream that follow the `k` the
/// round has taken so far (k at most 24).
#[target_feature(enable = "avx2,popcnt")]
#[inline]
pub(crate) fn round(
    t: &Tables,
    s: &mut [__m256i; 4],
    mut words: impl FnMut(usize) -> __m128i,
) -> ([u64; 2], usize) {
    // Vector g's lane i holds nibble 4i + g of the round: after the four, each 32-bit lane
    // of `bits` holds the round's 16-bit piece i.
    let mut bits = _mm256_setzero_si256();
    let mut k = step::<13>(t, &mut s[0], &mut bits, words(0));
    k += step::<9>(t, &mut s[1], &mut bits, words(k));
    k += step::<5>(t, &mut s[2], &mut bits, words(k));
    k += step::<1>(t, &mut s[3], &mut bits, words(k));
    let packed = _mm256_permute4x64_epi64::<0b1000>(_mm256_packus_epi32(bits, bits));
    let piece = _mm256_castsi256_si128(packed);
    (
        [
            _mm_cvtsi128_si64(piece) as u64,
            _mm_extract_epi64::<1>(piece) as u64,
        ],
        k,
    )
}
