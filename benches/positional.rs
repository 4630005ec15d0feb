//! The positional (gap) coding against zstd on the same bits.
//!
//! Bit arrays of m = 8,000,000 bits, each bit one with probability 1 - p0 for p0 in
//! {0.9, 0.99, 0.999}. Decoding: the positional payload into the words of the array, against
//! zstd -19 decompressing the packed bits; encoding: the positional payload from the words
//! (parameters chosen from the count), against zstd -3 compressing the packed bits.
//! Throughput is in bytes of the array (m / 8) per second; time is the **CPU time of the
//! benchmarking thread** (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`), so other load on a shared
//! machine does not count. Sizes against m * H(p_hat) / 8 are printed first.
//!
//! Run with `cargo bench -p bloomwire-benches --bench positional`.

use std::hint::black_box;
use std::time::Duration;

use bloomwire::internals::positional::{self, GapParams};
use bloomwire_benches::{cpu_criterion, CpuTime};
use criterion::{Criterion, SamplingMode, Throughput};

const M: u64 = 8_000_000;
const P0S: [f64; 3] = [0.9, 0.99, 0.999];

/// m bits, each one with probability p1 (xorshift64*, fixed seed).
fn bits(m: u64, p1: f64) -> Vec<u64> {
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let threshold = (p1 * 2f64.powi(64)) as u64;
    let mut words = vec![0u64; m.div_ceil(64) as usize];
    for i in 0..m {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        if s.wrapping_mul(0x2545_f491_4f6c_dd1d) < threshold {
            words[(i >> 6) as usize] |= 1 << (i & 63);
        }
    }
    words
}

fn packed(words: &[u64], m: u64) -> Vec<u8> {
    let mut out: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    out.truncate(m.div_ceil(8) as usize);
    out
}

fn entropy_bytes(m: u64, ones: u64) -> f64 {
    let p = ones as f64 / m as f64;
    m as f64 * -(p * p.log2() + (1.0 - p) * (1.0 - p).log2()) / 8.0
}

fn bench(c: &mut Criterion<CpuTime>) {
    for p0 in P0S {
        let words = bits(M, 1.0 - p0);
        let ones = positional::count_ones(&words, M);
        let params = GapParams::of(M, ones);
        let mut payload = Vec::new();
        positional::encode(&words, M, &mut payload);
        let raw = packed(&words, M);
        let z19 = zstd::bulk::compress(&raw, 19).expect("zstd");
        let z3 = zstd::bulk::compress(&raw, 3).expect("zstd");
        let bound = entropy_bytes(M, ones);
        println!(
            "m={M} p0={p0}: ones {ones}, m*H/8 {bound:.1} B; positional (r {} a {}) {} B ({:+.3}%); \
             zstd -19 {} B ({:+.1}%); zstd -3 {} B",
            params.r,
            params.a,
            payload.len(),
            (payload.len() as f64 / bound - 1.0) * 100.0,
            z19.len(),
            (z19.len() as f64 / bound - 1.0) * 100.0,
            z3.len()
        );
        let mut g = c.benchmark_group(format!("positional/m={M}/p0={p0}"));
        g.sample_size(20)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(2))
            .sampling_mode(SamplingMode::Flat)
            .throughput(Throughput::Bytes(M / 8));
        let mut out = vec![0u64; M.div_ceil(64) as usize];
        g.bench_function("decode/positional", |b| {
            b.iter(|| positional::decode_into(black_box(&payload), M, &mut out).unwrap())
        });
        let mut unpacked = Vec::with_capacity(raw.len());
        let mut dctx = zstd::bulk::Decompressor::new().unwrap();
        g.bench_function("decode/zstd-19", |b| {
            b.iter(|| {
                unpacked.clear();
                dctx.decompress_to_buffer(black_box(&z19), &mut unpacked)
                    .unwrap()
            })
        });
        assert_eq!(unpacked, raw);
        let mut enc = Vec::with_capacity(payload.len() + 64);
        g.bench_function("encode/positional", |b| {
            b.iter(|| {
                enc.clear();
                positional::encode(black_box(&words), M, &mut enc);
            })
        });
        let mut cctx = zstd::bulk::Compressor::new(3).unwrap();
        let mut compressed = Vec::with_capacity(raw.len() + 1024);
        g.bench_function("encode/zstd-3", |b| {
            b.iter(|| {
                compressed.clear();
                cctx.compress_to_buffer(black_box(&raw), &mut compressed)
                    .unwrap()
            })
        });
        g.finish();
    }
}

fn main() {
    let mut c = cpu_criterion();
    bench(&mut c);
    c.final_summary();
}
