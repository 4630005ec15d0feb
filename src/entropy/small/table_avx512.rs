//! Coding 9's decoding table (spec §4.13) built sixteen positions at a time with AVX-512:
//! the same table as [`DecModel::portable`], in about a third of its time (a C prototype
//! of each on Zen 4: 2.7 against 7.8 µs; a decode of the paper's filter, 140 000 bits,
//! went from 44.4 to 39.7 µs).
//!
//! Position `u` of nibble `v` gets `k`, its rank among the positions of `v` counted from
//! `f(v)`. The portable build counts in eight sections to break the chain of the most
//! frequent nibble's count; here the positions go sixteen at a time, in order: the counts
//! of all sixteen nibbles live in one vector, a position's `k` is its nibble's count plus
//! the number of earlier positions of the sixteen with the same nibble (`vpconflictd`,
//! then `vpopcntd`), and the counts move on by the sixteen's histogram (each position's
//! nibble as a one-hot byte, summed). `nb` and `base` follow from `k` as in the portable
//! build (`vplzcntd`, `vpsllvd`).

use core::arch::x86_64::*;

use super::{deal, DecModel, Table, PRECISION, SIZE};
use crate::entropy::model::nibble_frequencies;

/// The table of `q0` with AVX-512, or `None` without it.
pub(super) fn model(q0: u16) -> Option<DecModel> {
    // SAFETY: the CPU has AVX-512 F, BW, CD and VPOPCNTDQ (detected first).
    crate::cpu::features()
        .avx512_table
        .then(|| unsafe { build(q0) })
}

#[target_feature(enable = "avx512f,avx512bw,avx512cd,avx512vpopcntdq")]
fn build(q0: u16) -> DecModel {
    let f = nibble_frequencies(q0, PRECISION);
    let mut table = Table::zeroed();
    deal(&f, |u, v| table.nibble[u] = v);
    // SAFETY (the loads): `f` is 16 u32, 64 bytes.
    let mut counts = unsafe { _mm512_loadu_si512(f.as_ptr().cast()) };
    // Byte i of 128-bit lane l selects the lane's nibble l (then l + 4, + 8, + 12) and
    // compares it with i: its one-hot byte.
    let pick = _mm512_set_epi32(
        0x0303_0303,
        0x0303_0303,
        0x0303_0303,
        0x0303_0303,
        0x0202_0202,
        0x0202_0202,
        0x0202_0202,
        0x0202_0202,
        0x0101_0101,
        0x0101_0101,
        0x0101_0101,
        0x0101_0101,
        0,
        0,
        0,
        0,
    );
    let iota = _mm512_set4_epi32(0x0f0e_0d0c, 0x0b0a_0908, 0x0706_0504, 0x0302_0100);
    let (four, one) = (_mm512_set1_epi8(4), _mm512_set1_epi8(1));
    let t = &mut *table;
    for ((nibbles, nb), base) in t
        .nibble
        .chunks_exact(16)
        .zip(t.nb.chunks_exact_mut(16))
        .zip(t.base.chunks_exact_mut(16))
    {
        // SAFETY: 16 bytes from a chunk of 16.
        let bytes = unsafe { _mm_loadu_si128(nibbles.as_ptr().cast()) };
        let v = _mm512_cvtepu8_epi32(bytes);
        let earlier = _mm512_popcnt_epi32(_mm512_conflict_epi32(v));
        // f(v) <= k < 2 f(v) <= 2^13: nb = 13 - bits of k = lzcnt(k) - 19, base below 4096.
        let k = _mm512_add_epi32(_mm512_permutexvar_epi32(v, counts), earlier);
        let nbs = _mm512_sub_epi32(_mm512_lzcnt_epi32(k), _mm512_set1_epi32(19));
        let bases = _mm512_sub_epi32(_mm512_sllv_epi32(k, nbs), _mm512_set1_epi32(SIZE as i32));
        // SAFETY: 16 bytes into a chunk of 16 u8, 32 bytes into a chunk of 16 u16.
        unsafe {
            _mm_storeu_si128(nb.as_mut_ptr().cast(), _mm512_cvtepi32_epi8(nbs));
            _mm256_storeu_si256(base.as_mut_ptr().cast(), _mm512_cvtepi32_epi16(bases));
        }
        // The sixteen's histogram: lane l of `hot` sums the one-hot bytes of nibbles l,
        // l + 4, l + 8 and l + 12 (at most 4 a byte), the four lanes' sum is the histogram.
        let each = _mm512_broadcast_i32x4(bytes);
        let mut hot = _mm512_setzero_si512();
        let mut at = pick;
        for _ in 0..4 {
            let is = _mm512_cmpeq_epi8_mask(_mm512_shuffle_epi8(each, at), iota);
            hot = _mm512_mask_add_epi8(hot, is, hot, one);
            at = _mm512_add_epi8(at, four);
        }
        let half = _mm256_add_epi8(
            _mm512_castsi512_si256(hot),
            _mm512_extracti64x4_epi64::<1>(hot),
        );
        let histogram = _mm_add_epi8(
            _mm256_castsi256_si128(half),
            _mm256_extracti128_si256::<1>(half),
        );
        counts = _mm512_add_epi32(counts, _mm512_cvtepu8_epi32(histogram));
    }
    DecModel { table }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_the_portable_one_for_every_q0() {
        if !crate::cpu::features().avx512_table {
            eprintln!("no AVX-512 CD and VPOPCNTDQ here: nothing compared");
            return;
        }
        for q0 in 1..=u16::MAX {
            let fast = model(q0).expect("the CPU has it");
            assert!(*fast.table == *DecModel::portable(q0).table, "q0 {q0}");
        }
    }
}
