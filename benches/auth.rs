//! The cost of authenticated frames (spec 2.5) on frames of about 1 MiB, side by side in one
//! run: decoding without a key, decoding with a `Verifier` (keyed BLAKE2b-128 checked
//! before the payload), the BLAKE2b tag alone, and keyed BLAKE3 (the alternative) over the
//! same bytes.
//!
//! Two frames: a compressed one (m = 2^24 bits, 1M keys, k = 2: the default encoder's
//! coding, about 1 MiB) and a raw one (m = 2^23 bits, 1 MiB of payload, which decodes by
//! copying). Times are the CPU time of the benchmarking thread. At the end, one Markdown
//! table with the tag's cost as a fraction of decoding and BLAKE3's as a fraction of
//! BLAKE2b's. Run with `cargo bench -p bloomwire-benches --bench auth`.

use std::hint::black_box;
use std::time::Duration;

use blake2::digest::consts::U16;
use blake2::digest::{KeyInit, Mac};
use bloomwire::{
    decode, BitCoding, BloomFilter, Decoded, Encoder, FrameKey, HashFamily, Limits, Params,
    Verifier,
};
use bloomwire_benches::{cell, cpu_criterion, mean_ns, print_table_head, start_run};

const KEY: [u8; 32] = [0x42; 32];

fn frames() -> Vec<(&'static str, Vec<u8>)> {
    // A filter of m bits holding a million keys, tagged, as `encoder` frames it.
    let frame = |m: u64, encoder: Encoder| {
        let params = Params::standard(m, 2, HashFamily::default()).expect("valid");
        let mut f = BloomFilter::new(params);
        for i in 0..1_000_000u64 {
            f.insert(i.to_le_bytes());
        }
        let tagged = encoder.key(FrameKey::new(KEY));
        tagged.encode(&f).expect("frame").to_bytes().to_vec()
    };
    vec![
        ("compressed", frame(1 << 24, Encoder::new())),
        ("raw", frame(1 << 23, Encoder::new().coding(BitCoding::Raw))),
    ]
}

fn blake2b_tag(bytes: &[u8]) -> [u8; 16] {
    let mut mac = <blake2::Blake2bMac<U16> as KeyInit>::new_from_slice(&KEY).expect("key");
    mac.update(bytes);
    mac.finalize().into_bytes().into()
}

fn blake3_tag(bytes: &[u8]) -> [u8; 16] {
    let full = blake3::keyed_hash(&KEY, bytes);
    full.as_bytes()[..16].try_into().expect("16 bytes")
}

fn main() {
    start_run();
    let mut c = cpu_criterion();
    let limits = Limits::new().max_m(1 << 28);
    let verifier = Verifier::new(FrameKey::new(KEY), limits);
    let mut rows = Vec::new();
    for (name, frame) in frames() {
        let group = format!("auth/{name}");
        let _: Decoded = decode(&frame, &verifier).expect("a genuine frame");
        let covered = &frame[..frame.len() - 16];
        assert_eq!(blake2b_tag(covered)[..], frame[frame.len() - 16..]);
        let mut g = c.benchmark_group(&group);
        g.sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(3));
        g.bench_function("decode", |b| {
            b.iter(|| decode::<Decoded>(black_box(&frame), &limits).expect("frame"))
        });
        g.bench_function("decode-verified", |b| {
            b.iter(|| decode::<Decoded>(black_box(&frame), &verifier).expect("frame"))
        });
        g.bench_function("blake2b-tag", |b| {
            b.iter(|| blake2b_tag(black_box(covered)))
        });
        g.bench_function("blake3-keyed", |b| {
            b.iter(|| blake3_tag(black_box(covered)))
        });
        g.finish();
        rows.push((group, frame.len()));
    }
    c.final_summary();
    print_table_head("| frame | bytes | decode ms | decode with key ms | BLAKE2b tag ms | BLAKE3 keyed ms | tag / decode | BLAKE3 / BLAKE2b |", "|---|---:|---:|---:|---:|---:|---:|---:|");
    for (group, len) in rows {
        let ms = |f: &str| mean_ns(&group, f).map(|ns| ns / 1e6);
        let (d, dv, b2, b3) = (
            ms("decode"),
            ms("decode-verified"),
            ms("blake2b-tag"),
            ms("blake3-keyed"),
        );
        println!(
            "| {} | {len} | {} | {} | {} | {} | {} | {} |",
            group.trim_start_matches("auth/"),
            cell(d, 3),
            cell(dv, 3),
            cell(b2, 3),
            cell(b3, 3),
            cell(b2.zip(d).map(|(a, b)| a / b), 3),
            cell(b3.zip(b2).map(|(a, b)| a / b), 3),
        );
    }
}
