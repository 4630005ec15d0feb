//! Decoding an 8 Mbit frame (p0 = 0.9, the default coding) through the C entry point
//! `bw_decode` against the Rust call `bloomwire::decode`, paired: the same frame, batches
//! of each side alternating (which side goes first alternates too), timed by the thread's
//! CPU clock (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`), so that the machine's other load
//! falls on both sides alike.
//!
//!     cargo bench -p bloomwire-capi --bench decode
//!
//! Prints the median time of a call on each side, the ratio of their totals, and the
//! median of the per-round ratios. Both sides free what they decoded inside the timing
//! (the C caller's `bw_filter_free`, the Rust value's drop).

use core::ptr::{null, null_mut};
use std::hint::black_box;

use bloomwire::{decode, BloomFilter, Decoded, Encoder, HashFamily, Limits, Params};
use bloomwire_capi::{bw_decode, bw_filter_free, Status};
use bloomwire_testkit::thread_cpu_nanos;

const M: u64 = 8_000_000;
const ROUNDS: usize = 60;
const BATCH: usize = 10;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    // k = 2 and n keys such that p0 = exp(-k n / m) = 0.9.
    let n = (M as f64 * (1.0f64 / 0.9).ln() / 2.0) as u64;
    let mut f = BloomFilter::new(Params::standard(M, 2, HashFamily::default()).unwrap());
    for i in 0..n {
        f.insert(i.to_le_bytes());
    }
    let frame = Encoder::new().encode(&f).unwrap();
    let (coding, wire) = (frame.coding(), frame.to_bytes());
    let limits = Limits::default();
    let rust = || {
        let d: Decoded = decode(black_box(&wire), &limits).unwrap();
        black_box(&d);
    };
    let c = || {
        let mut out = null_mut();
        // SAFETY: `wire` is a live buffer of its length, `out` a live local; the filter
        // is freed once.
        unsafe {
            let status = bw_decode(
                black_box(wire.as_ptr()),
                wire.len(),
                null(),
                null(),
                0,
                &mut out,
            );
            assert_eq!(status, Status::Ok);
            bw_filter_free(black_box(out));
        }
    };
    let batch = |f: &dyn Fn()| {
        let start = thread_cpu_nanos();
        for _ in 0..BATCH {
            f();
        }
        (thread_cpu_nanos() - start) as f64 / BATCH as f64
    };
    // Warm-up: the thread's scratch, the caches, the page tables.
    batch(&rust);
    batch(&c);
    let (mut rs, mut cs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let (r, c) = if round % 2 == 0 {
            let r = batch(&rust);
            (r, batch(&c))
        } else {
            let c = batch(&c);
            (batch(&rust), c)
        };
        rs.push(r);
        cs.push(c);
        ratios.push(c / r);
    }
    let (total_r, total_c): (f64, f64) = (rs.iter().sum(), cs.iter().sum());
    println!(
        "decode {M} bits, p0 = {:.3}, coding {coding} ({} bytes), {ROUNDS} rounds of {BATCH} calls each side",
        f.fraction_of_zeros(),
        wire.len()
    );
    println!(
        "  Rust decode: median {:.1} us ({:.0} MB/s of filter)",
        median(rs.clone()) / 1e3,
        M as f64 / 8.0 / median(rs.clone()) * 1e3
    );
    println!("  C bw_decode: median {:.1} us", median(cs.clone()) / 1e3);
    println!(
        "  C / Rust: {:.3} (totals), {:.3} (median of the rounds' ratios)",
        total_c / total_r,
        median(ratios)
    );
}
