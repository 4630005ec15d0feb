//! Sizes of counting filters on the wire, against the entropy of their counters and against
//! packing them 4 bits each; and the two candidate delta payloads, the counter-wise XOR the
//! format uses and the difference mod 2^b it does not.
//!
//! ```text
//! cargo run --release --example counting_sizes
//! ```

use bloomwire::theory::histogram_entropy;
use bloomwire::{CounterCoding, CountingBloomFilter, Encoder, HashFamily, Optimizer, Params};

fn key(tag: u32, i: u32) -> Vec<u8> {
    [tag.to_le_bytes(), i.to_le_bytes()].concat()
}

fn filled(m: u64, k: u32, n: u32) -> CountingBloomFilter {
    let params = Params::standard(m, k, HashFamily::default()).expect("valid");
    let mut f = CountingBloomFilter::new(params, 4).expect("valid width");
    for i in 0..n {
        f.insert(key(0, i));
    }
    f
}

/// Bytes of the smallest full frame of counters `c` (shape of `like`).
fn coded(like: &CountingBloomFilter, c: Vec<u8>) -> usize {
    let f = CountingBloomFilter::from_counters(like.params().clone(), like.width(), c, 0)
        .expect("counters within the width");
    Encoder::new().encode(&f).expect("no budget").encoded_len()
}

fn main() {
    let n = 10_000u32;
    println!("n = {n}, 4-bit counters; bytes");
    println!(
        "| m/n | k | raw packed | m H(histogram)/8 | known-counters frame | adaptive-counters frame | header (known / adaptive) |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for ratio in [8u64, 16, 32] {
        for k in [1u32, 2, 4] {
            let f = filled(ratio * u64::from(n), k, n);
            let bound = f.params().m() as f64 * histogram_entropy(&f.histogram()) / 8.0;
            let frame = |c| Encoder::new().encode_with(&f, c).expect("a counter coding");
            let (raw, known, adaptive) = (
                frame(CounterCoding::Raw),
                frame(CounterCoding::Known),
                frame(CounterCoding::Adaptive),
            );
            println!(
                "| {ratio} | {k} | {} | {bound:.1} | {} ({:+.3}%) | {} ({:+.3}%) | {} / {} |",
                raw.payload().len(),
                known.encoded_len(),
                100.0 * (known.encoded_len() as f64 / bound - 1.0),
                adaptive.encoded_len(),
                100.0 * (adaptive.encoded_len() as f64 / bound - 1.0),
                known.header().header_len,
                adaptive.header().header_len,
            );
        }
    }
    println!();
    println!("deltas, m/n = 16, k = 2: bytes of the smallest frame of each payload");
    println!("| change | difference mod 16 | XOR |");
    println!("|---|---:|---:|");
    let base = filled(160_000, 2, n);
    let cases: [(&str, u32, u32); 4] = [
        ("100 keys inserted", 0, 100),
        ("100 keys deleted", 100, 0),
        ("100 replaced (1%)", 100, 100),
        ("1000 replaced (10%)", 1000, 1000),
    ];
    for (name, out, into) in cases {
        let mut next = base.clone();
        for i in 0..out {
            next.remove(key(0, i)).expect("present");
        }
        for i in 0..into {
            next.insert(key(1, i));
        }
        let diff: Vec<u8> = next
            .counters()
            .iter()
            .zip(base.counters())
            .map(|(a, b)| a.wrapping_sub(*b) & 15)
            .collect();
        let xor = next.xor(&base).expect("same shape");
        println!(
            "| {name} | {} | {} |",
            coded(&base, diff),
            coded(&base, xor)
        );
    }
    println!();
    println!("counting plans for n = {n}, 4-bit counters, against 12 simulated filters each");
    println!("| budget | m | k | H per counter | f | expected | worst case | simulated mean | simulated max |");
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for budget in [12_000u64, 16_000, 24_000] {
        let plan = Optimizer::new()
            .plan_counting(n.into(), 4, budget)
            .expect("fits");
        let sizes: Vec<usize> = (0..12u32)
            .map(|seed| {
                let mut f = CountingBloomFilter::new(plan.params.clone(), 4).expect("valid");
                for i in 0..n {
                    f.insert(key(1000 + seed, i));
                }
                Encoder::new()
                    .encode_with(&f, CounterCoding::Adaptive)
                    .expect("a counter coding")
                    .encoded_len()
            })
            .collect();
        let mean = sizes.iter().sum::<usize>() as f64 / sizes.len() as f64;
        println!(
            "| {budget} | {} | {} | {:.4} | {:.5} | {:.1} | {} | {mean:.1} | {} |",
            plan.m(),
            plan.k(),
            plan.entropy_per_counter,
            plan.false_positive_rate,
            plan.expected_bytes,
            plan.worst_case_bytes,
            sizes.iter().max().expect("12 sizes"),
        );
    }
}
