//! Which coding the default encoder writes over random filters of every size and density,
//! and how far its frames are from the smallest the crate makes (`Encoder::smallest()`),
//! for the Full profile and for Core (spec 4.0).
//!
//! `cargo run --release --example coding_sweep -- [FILTERS] [MAX_M]` (default 1025 filters,
//! m up to 3 * 10^7 bits).

use std::collections::BTreeMap;

use bloomwire::filter::hashing::fmix64;
use bloomwire::{BitArray, BloomFilter, Encoder, HashFamily, Params, Profile};

fn main() {
    let mut args = std::env::args().skip(1);
    let filters: u64 = args.next().map_or(1025, |a| a.parse().expect("FILTERS"));
    let max_m: f64 = args.next().map_or(3e7, |a| a.parse().expect("MAX_M"));
    let mut emitted: BTreeMap<(Profile, String), u64> = BTreeMap::new();
    // (frames, sum of excess in %, worst excess in %, worst excess in bytes, over the bar)
    let mut excess: BTreeMap<Profile, (u64, f64, f64, i64, u64)> = BTreeMap::new();
    for i in 0..filters {
        // m log-uniform from 100 to MAX_M bits; the fraction of ones log-uniform from
        // 10^-5 to 1/2 (every density the optimizer plans, and denser).
        let u = |j: u64| (fmix64(i * 0x9E37_79B9 + j) >> 11) as f64 / (1u64 << 53) as f64;
        let m = (100f64 * (max_m / 100.0).powf(u(1))) as u64;
        let p1 = 1e-5 * (0.5f64 / 1e-5).powf(u(2));
        let threshold = (p1 * 2f64.powi(64)) as u64;
        let mut bits = BitArray::new(m);
        for b in 0..m {
            if fmix64(i.wrapping_mul(0x1234_5678_9ABC) ^ b) < threshold {
                bits.set(b);
            }
        }
        let params = Params::standard(m, 1, HashFamily::default()).expect("m > 0");
        let f = BloomFilter::from_parts(params, bits, 0).expect("valid");
        let smallest = Encoder::new().smallest().encode(&f).expect("no budget");
        for profile in [Profile::Full, Profile::Core] {
            let frame = Encoder::new()
                .profile(profile)
                .encode(&f)
                .expect("no budget");
            *emitted
                .entry((profile, frame.coding().to_string()))
                .or_default() += 1;
            let (len, best) = (frame.encoded_len() as i64, smallest.encoded_len() as i64);
            let pct = (len - best) as f64 / best as f64 * 100.0;
            let e = excess.entry(profile).or_default();
            e.0 += 1;
            e.1 += pct;
            e.2 = e.2.max(pct);
            e.3 = e.3.max(len - best);
            // The bar of format 1.0: within 0.1% or 30 bytes, whichever is larger.
            if len - best > (best / 1000).max(30) {
                e.4 += 1;
            }
        }
    }
    println!("{filters} random filters, m from 100 to {max_m:.0} bits, ones from 1e-5 to 1/2");
    println!("\ncodings the default encoder wrote:");
    for ((profile, coding), count) in &emitted {
        println!("  {profile:<5} {coding:<20} {count:>6}");
    }
    println!("\nexcess over Encoder::smallest() (Full):");
    for (profile, (n, sum, worst, worst_bytes, over)) in &excess {
        println!(
            "  {profile:<5} mean {:+.4}%, worst {worst:+.4}% / {worst_bytes:+} bytes, \
             {over} of {n} over max(0.1%, 30 bytes)",
            sum / *n as f64
        );
    }
}
