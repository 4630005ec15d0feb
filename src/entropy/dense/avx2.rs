//! The AVX2 decoder of coding 8 (spec §4.12): the shared AVX2 round
//! (`nibble_rans::decode_avx2`) over the payload's one stream of words.
//!
//! It decodes exactly what [`decode_rounds_scalar`](crate::entropy::dense) decodes: the
//! tests and the fuzz target `kernel_twins` compare the two on random and hostile payloads.

use core::arch::x86_64::*;

use crate::entropy::nibble_rans::decode_avx2::{round, Tables};
use crate::entropy::nibble_rans::lanes_avx2::{available, load_lanes, store_lanes};
use crate::entropy::nibble_rans::{DecModel, LANES};

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

#[target_feature(enable = "avx2,popcnt")]
fn rounds(
    model: &DecModel,
    x: &mut [u32; LANES],
    payload: &[u8],
    pos: &mut usize,
    out: &mut [u64],
) -> usize {
    let t = Tables::new(model);
    // SAFETY: this function's CPU has AVX2.
    let mut s = unsafe { load_lanes(x) };
    let mut p = *pos;
    let mut done = 0;
    for ws in out.chunks_exact_mut(2) {
        if p + 2 * LANES > payload.len() {
            break;
        }
        let (bits, k) = round(&t, &mut s, |k| {
            // SAFETY: p + 64 <= payload.len() at the round's start and a round's first
            // three vectors take at most 24 words, so each reads 16 bytes in bounds.
            unsafe { _mm_loadu_si128(payload.as_ptr().add(p + 2 * k).cast()) }
        });
        ws.copy_from_slice(&bits);
        p += 2 * k;
        done += 1;
    }
    // SAFETY: this function's CPU has AVX2.
    unsafe { store_lanes(x, s) };
    *pos = p;
    done
}
