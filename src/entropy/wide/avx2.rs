//! The AVX2 decoder of coding 10 (spec §4.14): a round of each half per step, each half's
//! 32 lanes through the shared AVX2 round (`nibble_rans::decode_avx2`), the first half's
//! words read forward and the second half's backward (eight words reversed by one byte
//! shuffle).
//!
//! It decodes exactly what the scalar rounds of [`wide`](crate::entropy::wide) decode: the
//! tests and the fuzz target `kernel_twins` compare the two on random and hostile payloads.

use core::arch::x86_64::*;

use crate::entropy::nibble_rans::decode_avx2::{round, Tables};
use crate::entropy::nibble_rans::lanes_avx2::{available, load_lanes, store_lanes};
use crate::entropy::wide::Rounds;

/// Decode rounds of both halves, a round of each per step, into `out_a` and `out_b` (two
/// words a round) while each stream has 64 bytes left to read at its end, as the scalar
/// rounds do; returns the rounds done in each half. Returns 0 without decoding when the
/// CPU lacks AVX2.
pub(crate) fn decode_rounds(rounds: Rounds<'_, '_>) -> usize {
    if !available() {
        return 0;
    }
    // SAFETY: the CPU has AVX2 and POPCNT (checked just above).
    unsafe { decode(rounds) }
}

#[target_feature(enable = "avx2,popcnt")]
fn decode(rounds: Rounds<'_, '_>) -> usize {
    let Rounds {
        model,
        x,
        streams,
        out_a,
        out_b,
    } = rounds;
    let t = Tables::new(model);
    // SAFETY: this function's CPU has AVX2.
    let (mut sa, mut sb) = unsafe { (load_lanes(&x[0]), load_lanes(&x[1])) };
    // Eight words in reverse order.
    let reverse = _mm_setr_epi8(14, 15, 12, 13, 10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1);
    let payload = streams.payload;
    let (mut front, mut back) = (streams.front, streams.back);
    let mut done = 0;
    for (wa, wb) in out_a.chunks_exact_mut(2).zip(out_b.chunks_exact_mut(2)) {
        // A round of a half reads at most 32 words: 64 bytes from where its stream is.
        if front + 64 > payload.len() || back < 64 {
            break;
        }
        let (bits, k) = round(&t, &mut sa, |k| {
            // SAFETY: front + 2k + 16 <= front + 64 <= payload.len() (k <= 24).
            unsafe { _mm_loadu_si128(payload.as_ptr().add(front + 2 * k).cast()) }
        });
        wa.copy_from_slice(&bits);
        front += 2 * k;
        let (bits, k) = round(&t, &mut sb, |k| {
            // SAFETY: back - 2k - 16 >= back - 64 >= 0 (k <= 24).
            let w = unsafe { _mm_loadu_si128(payload.as_ptr().add(back - 2 * k - 16).cast()) };
            _mm_shuffle_epi8(w, reverse)
        });
        wb.copy_from_slice(&bits);
        back -= 2 * k;
        done += 1;
    }
    // SAFETY: this function's CPU has AVX2.
    unsafe {
        store_lanes(&mut x[0], sa);
        store_lanes(&mut x[1], sb);
    }
    (streams.front, streams.back) = (front, back);
    done
}
