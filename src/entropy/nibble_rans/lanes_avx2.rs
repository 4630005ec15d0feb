//! What coding 8's AVX2 decoder and encoder share: the CPU check, the 32 lanes as four
//! vectors of eight, and 16-entry tables held in two registers and looked up without a
//! gather.

use core::arch::x86_64::*;

/// Whether this CPU runs coding 8's AVX2 kernels (they count mask bits with POPCNT).
pub(crate) fn available() -> bool {
    crate::cpu::features().avx2
}

/// The 32 lanes' states as four vectors: lanes `8g .. 8g + 7` in vector g.
///
/// # Safety
///
/// The CPU has AVX2.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn load_lanes(x: &[u32; 32]) -> [__m256i; 4] {
    // SAFETY: `x` is 32 u32, four unaligned vectors.
    core::array::from_fn(|g| unsafe { _mm256_loadu_si256(x[8 * g..].as_ptr().cast()) })
}

/// The inverse of [`load_lanes`].
///
/// # Safety
///
/// The CPU has AVX2.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn store_lanes(x: &mut [u32; 32], s: [__m256i; 4]) {
    for (g, v) in s.iter().enumerate() {
        // SAFETY: `x` is 32 u32, four unaligned vectors.
        unsafe { _mm256_storeu_si256(x[8 * g..].as_mut_ptr().cast(), *v) };
    }
}

/// A 16-entry table as its two halves of 8.
///
/// # Safety
///
/// The CPU has AVX2.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn halves(t: &[u32; 16]) -> [__m256i; 2] {
    // SAFETY: `t` is 16 u32; each half is 8, one unaligned vector.
    core::array::from_fn(|h| unsafe { _mm256_loadu_si256(t[8 * h..].as_ptr().cast()) })
}

/// Entry `i` of a 16-entry table for each lane, `i` given by the low 3 bits of `index`
/// (which `vpermd` reads) and the sign bit of `upper` (set for entries 8 to 15).
///
/// # Safety
///
/// The CPU has AVX2.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn lookup(t: [__m256i; 2], index: __m256i, upper: __m256i) -> __m256i {
    _mm256_castps_si256(_mm256_blendv_ps(
        _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(t[0], index)),
        _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(t[1], index)),
        _mm256_castsi256_ps(upper),
    ))
}
