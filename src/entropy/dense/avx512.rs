//! The AVX-512 decoder of coding 8 (spec §4.12): the 32 lanes as two vectors of sixteen
//! 32-bit states, where AVX2 has four of eight.
//!
//! A round is bound by each lane's chain (the 32 lanes are one round of 16 bytes of
//! filter), and on the CPU it was measured on (Zen 5) a compare into a mask register costs
//! about eight cycles before its consumer, a plain vector operation two and `vpermd` five.
//! So the chain holds one mask only:
//!
//! * the tables are looked up by `vpermd` with the bucket straight from the last round's
//!   refill, and the part a slot falls in is chosen by an arithmetic shift and
//!   `vpternlogd`, with both parts' products formed before the choice;
//! * the refill is one `vpexpandw` of the next 32 words in lane order: the two vectors hold
//!   lanes `8L + 0..3` and `8L + 4..7`, so that `vpackusdw` of them is in lane order (its
//!   saturation shows which lanes are below `2^15`) and `vpunpck{l,h}wd` takes the new
//!   states' halves back to the vectors. The word pointer follows the mask's popcount, off
//!   the chain.
//!
//! The chain is 32 cycles a round measured alone (a C loop of the same instructions), and
//! the kernel runs at about 37.
//!
//! It decodes exactly what [`decode_rounds_scalar`](crate::entropy::dense) decodes: the
//! tests and the fuzz target `kernel_twins` compare the two on random and hostile payloads.

use core::arch::x86_64::*;

use crate::entropy::nibble_rans::avx512::{available, vector};
use crate::entropy::nibble_rans::{DecModel, LANES};

/// Decode rounds of 32 symbols (two words of `out` each) while 64 bytes of the payload are
/// left at `*pos`, as `decode_rounds_scalar` does; returns the rounds done. Returns 0
/// without decoding when the CPU lacks AVX-512.
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
    // SAFETY: the CPU has AVX-512 F, VL, BW and VBMI2, and POPCNT (checked just above).
    unsafe { rounds(model, x, payload, pos, out) }
}

/// The decoding model as the kernel reads it: four 16-entry tables by bucket, each a field
/// that needs no mask or shift after its lookup. They are read from memory, so the
/// compiler cannot bound them: the choice of part stays an arithmetic shift, which it would
/// otherwise turn into a compare into a mask register (about six cycles more on the chain).
struct Tables {
    /// `f(b)`, the first part's frequency.
    first: [u32; 16],
    /// `f(alias(b))`, the second part's.
    second: [u32; 16],
    /// `second(b) - div(b)` in 16 bits, two's complement: what a slot of the second part
    /// adds (`r + adjust` is its index among its symbol's slots, below 2^13).
    adjust: [u32; 16],
    /// `16 div(b) + alias(b)`: the first part's end, and the second part's symbol.
    split: [u32; 16],
}

impl Tables {
    fn new(model: &DecModel) -> Self {
        let (d, a) = (&model.first, &model.second);
        Tables {
            first: core::array::from_fn(|b| d[b] & 0x1FFF),
            second: core::array::from_fn(|b| a[b] & 0x1FFF),
            adjust: core::array::from_fn(|b| ((a[b] as i32) >> 18) as u32 & 0xFFFF),
            split: core::array::from_fn(|b| (d[b] >> 17) << 4 | (a[b] >> 13) & 15),
        }
    }
}

/// The tables in registers.
#[derive(Clone, Copy)]
struct Registers {
    first: __m512i,
    second: __m512i,
    adjust: __m512i,
    split: __m512i,
}

/// Sixteen lanes through one symbol, from their states `xv` and their buckets (`x >> 9`
/// in the low 4 bits of each lane of `bucket`, which `vpermd` reads): the states before
/// renormalization and the symbols (in the low 4 bits of each lane).
///
/// # Safety
///
/// The CPU has AVX-512 F.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn advance(t: &Registers, xv: __m512i, bucket: __m512i) -> (__m512i, __m512i) {
    let r = _mm512_and_si512(xv, _mm512_set1_epi32(0x1FF));
    let q = _mm512_srli_epi32::<13>(xv);
    // All ones where the slot is in the bucket's first part: r < div(b), that is
    // 16 r + 15 < 16 div(b) + alias(b) (`vpternlogd` 0xEA: a & b | c).
    let r16 = _mm512_ternarylogic_epi32::<0xEA>(
        _mm512_slli_epi32::<4>(xv),
        _mm512_set1_epi32(0x1FF0),
        _mm512_set1_epi32(15),
    );
    let split = _mm512_permutexvar_epi32(bucket, t.split);
    let own = _mm512_srai_epi32::<31>(_mm512_sub_epi32(r16, split));
    // Both parts' states, then the one that applies (`vpternlogd` 0xCA: own ? a : b).
    let first = _mm512_add_epi32(
        _mm512_mullo_epi32(_mm512_permutexvar_epi32(bucket, t.first), q),
        r,
    );
    // (r + adjust in 16 bits, where it is right for the lanes it is for: the compiler
    // cannot move its add after the multiply's, as it does with a 32-bit one.)
    let second = _mm512_add_epi32(
        _mm512_mullo_epi32(_mm512_permutexvar_epi32(bucket, t.second), q),
        _mm512_add_epi16(r, _mm512_permutexvar_epi32(bucket, t.adjust)),
    );
    let y = _mm512_ternarylogic_epi32::<0xCA>(own, first, second);
    let symbol = _mm512_ternarylogic_epi32::<0xCA>(own, bucket, split);
    (y, symbol)
}

#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512vbmi2,popcnt")]
unsafe fn rounds(
    model: &DecModel,
    x: &mut [u32; LANES],
    payload: &[u8],
    pos: &mut usize,
    out: &mut [u64],
) -> usize {
    let tables = Tables::new(model);
    let t = Registers {
        first: vector(&tables.first),
        second: vector(&tables.second),
        adjust: vector(&tables.adjust),
        split: vector(&tables.split),
    };
    // The two vectors hold the lanes 8L + j (L = 0 .. 3), vector 0 those with j < 4 and
    // vector 1 those with j >= 4, at element 4L + j mod 4: `vpackusdw` of the two then
    // puts the 32 lanes in order (its 128-bit lane L takes four elements of each), and
    // `vpunpck{l,h}wd` takes them back.
    let (to_v0, to_v1, back_lo, back_hi) = lane_orders();
    let (lo, hi) = (
        vector::<u32, 16>(x[..16].try_into().expect("16")),
        vector::<u32, 16>(x[16..].try_into().expect("16")),
    );
    let mut s0 = _mm512_permutex2var_epi32(lo, to_v0, hi);
    let mut s1 = _mm512_permutex2var_epi32(lo, to_v1, hi);
    // The buckets, and nothing above them (they are also the first parts' symbols).
    let bucket = |s: __m512i| _mm512_and_si512(_mm512_srli_epi32::<9>(s), _mm512_set1_epi32(15));
    let (mut b0, mut b1) = (bucket(s0), bucket(s1));
    // Lane j's nibble is nibble 4 (j mod 8) + floor(j / 8) of the round: with the 32
    // symbols as words in lane order, 128-bit lane L holds nibble L of each of the round's
    // eight 16-bit pieces.
    let to_nibble = _mm512_setr_epi64(
        0,
        0,
        0x0004_0004_0004_0004,
        0x0004_0004_0004_0004,
        0x0008_0008_0008_0008,
        0x0008_0008_0008_0008,
        0x000C_000C_000C_000C,
        0x000C_000C_000C_000C,
    );
    // The low and the high halves of the two vectors' lanes as words in lane order
    // (`vpermt2w` indexes: vector 1's words from 32).
    let half_of = |high: usize| {
        core::array::from_fn::<u16, 32, _>(|j| {
            let (l, i) = (j / 8, j % 8);
            (32 * (i / 4) + 2 * (4 * l + i % 4) + high) as u16
        })
    };
    let (low_words, high_words) = (vector(&half_of(0)), vector(&half_of(1)));
    let zero = _mm512_setzero_si512();
    let mut p = *pos;
    let mut done = 0;
    for ws in out.chunks_exact_mut(2) {
        if p + 2 * LANES > payload.len() {
            break;
        }
        // SAFETY: this function's CPU has AVX-512 F.
        let ((y0, e0), (y1, e1)) = unsafe { (advance(&t, s0, b0), advance(&t, s1, b1)) };
        // The 32 lanes as 16-bit words in lane order. The pack saturates (states stay
        // below 2^31, so it sees no sign): bit 15 of a lane's word is set unless y < 2^15,
        // where the lane takes a word.
        let pack = |a: __m512i, b: __m512i| _mm512_packus_epi32(a, b);
        let below = _mm512_testn_epi16_mask(pack(y0, y1), _mm512_set1_epi16(i16::MIN));
        let y_low = _mm512_permutex2var_epi16(y0, low_words, y1);
        let y_high = _mm512_permutex2var_epi16(y0, high_words, y1);
        // SAFETY: p + 64 <= payload.len().
        let words = unsafe { _mm512_loadu_si512(payload.as_ptr().add(p).cast()) };
        // A lane below 2^15 becomes y << 16 | its word: low half the next word (in lane
        // order), high half y's low half; the others keep y. The next buckets come from
        // the low halves shifted before the spread, so that no shift follows it on the
        // chain.
        let low = _mm512_mask_expand_epi16(y_low, below, words);
        let buckets = _mm512_mask_expand_epi16(
            _mm512_srli_epi16::<9>(y_low),
            below,
            _mm512_srli_epi16::<9>(words),
        );
        let high = _mm512_mask_mov_epi16(y_high, below, y_low);
        s0 = _mm512_unpacklo_epi16(low, high);
        s1 = _mm512_unpackhi_epi16(low, high);
        b0 = _mm512_unpacklo_epi16(buckets, zero);
        b1 = _mm512_unpackhi_epi16(buckets, zero);
        p += 2 * _cvtmask32_u32(below).count_ones() as usize;
        // The nibbles: each to its place in its piece, the four 128-bit lanes ORed. (The
        // symbols are the low 4 bits of the lanes, below 2^14: the pack keeps them.)
        let nibbles = _mm512_sllv_epi16(
            _mm512_and_si512(pack(e0, e1), _mm512_set1_epi16(0xF)),
            to_nibble,
        );
        let half = _mm256_or_si256(
            _mm512_castsi512_si256(nibbles),
            _mm512_extracti64x4_epi64::<1>(nibbles),
        );
        let pieces = _mm_or_si128(
            _mm256_castsi256_si128(half),
            _mm256_extracti128_si256::<1>(half),
        );
        // SAFETY: `ws` is two u64, 16 bytes.
        unsafe { _mm_storeu_si128(ws.as_mut_ptr().cast(), pieces) };
        done += 1;
    }
    // SAFETY: the lanes are 32 u32: two unaligned 64-byte stores in bounds.
    unsafe {
        _mm512_storeu_si512(
            x[..16].as_mut_ptr().cast(),
            _mm512_permutex2var_epi32(s0, back_lo, s1),
        );
        _mm512_storeu_si512(
            x[16..].as_mut_ptr().cast(),
            _mm512_permutex2var_epi32(s0, back_hi, s1),
        );
    }
    *pos = p;
    done
}

/// The indexes (for `vpermt2d`) that take the lanes in order, 0 .. 15 in the first source
/// and 16 .. 31 in the second, to the two vectors, and back: element `4L + i` of vector 0
/// is lane `8L + i`, of vector 1 lane `8L + 4 + i`.
#[target_feature(enable = "avx512f")]
#[inline]
fn lane_orders() -> (__m512i, __m512i, __m512i, __m512i) {
    let to =
        |v: usize| core::array::from_fn::<u32, 16, _>(|e| (8 * (e / 4) + 4 * v + e % 4) as u32);
    let back = |half: usize| {
        core::array::from_fn::<u32, 16, _>(|j| {
            let l = 16 * half + j;
            (16 * (l % 8 / 4) + 4 * (l / 8) + l % 4) as u32
        })
    };
    (
        vector(&to(0)),
        vector(&to(1)),
        vector(&back(0)),
        vector(&back(1)),
    )
}
