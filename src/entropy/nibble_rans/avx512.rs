//! What the AVX-512 kernels of codings 8 and 10 (decoders) and the AVX-512 encoder of whole
//! rounds share: the CPU check and 64-byte tables as vectors.

use core::arch::x86_64::*;

/// Whether this CPU runs the AVX-512 kernels of codings 8 and 10 (F for the 512-bit operations, VL and
/// BW for the 256-bit ones and 16-bit elements, VBMI2 for `vpexpandw`; POPCNT for the
/// word counts).
pub(crate) fn available() -> bool {
    crate::cpu::features().avx512
}

/// A 64-byte table (16 `u32`, or 32 `u16`) as one vector.
#[target_feature(enable = "avx512f")]
#[inline]
pub(crate) fn vector<T: Copy, const N: usize>(t: &[T; N]) -> __m512i {
    const { assert!(core::mem::size_of::<[T; N]>() == 64) };
    // SAFETY: `t` is 64 bytes (asserted at compile time), one unaligned load.
    unsafe { _mm512_loadu_si512(t.as_ptr().cast()) }
}
