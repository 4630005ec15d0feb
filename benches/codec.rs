//! Encode and decode throughput of every frame coding, side by side with general-purpose
//! compressors (zstd level 3 and 19, brotli quality 11) and a per-bit adaptive arithmetic
//! coder from the `arcode` crate, on the same filters.
//!
//! Filters are real Bloom filters (standard layout, xxh64 with double hashing, k = 2) of
//! m = 140,000 and m = 8,000,000 bits holding n = round(-m ln(p0) / k) keys, so the fraction
//! of zero bits is close to p0 for p0 in {0.5, 0.87, 0.99}. Throughput is in bytes of the
//! uncompressed filter (m / 8) per second. Before the timings, a table of sizes compares each
//! coding with the entropy bound m * H(p_hat) / 8, p_hat the measured zero fraction.
//!
//! Run with `cargo bench --bench codec`.

use std::hint::black_box;
use std::io::Cursor;
use std::time::Duration;

use arcode::bitbit::{BitReader, BitWriter, MSB};
use arcode::{ArithmeticDecoder, ArithmeticEncoder, Model};
use bloomwire::frame::{self, Coding, Encoder, Limits};
use bloomwire::theory::entropy;
use bloomwire::{BloomFilter, HashFamily, Params};
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};

const SIZES: [u64; 2] = [140_000, 8_000_000];
const P0S: [f64; 3] = [0.5, 0.87, 0.99];
const K: u32 = 2;
const ARCODE_PRECISION: u64 = 48;

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A standard filter of m bits, k = 2, filled so that about a fraction p0 of its bits is zero.
fn filter(m: u64, p0: f64) -> BloomFilter {
    let n = (-(m as f64) * p0.ln() / f64::from(K)).round() as u64;
    let mut f = BloomFilter::new(Params::standard(m, K, HashFamily::default()).expect("params"));
    let mut state = m ^ p0.to_bits();
    for _ in 0..n {
        f.insert(splitmix64(&mut state).to_le_bytes());
    }
    f
}

fn encode_frame(filter: &BloomFilter, coding: Coding) -> Vec<u8> {
    Encoder::new()
        .encode_with(filter, coding)
        .to_bytes()
        .to_vec()
}

fn zstd_compress(data: &[u8], level: i32) -> Vec<u8> {
    zstd::bulk::compress(data, level).expect("zstd")
}

fn zstd_decompress(data: &[u8], len: usize) -> Vec<u8> {
    zstd::bulk::decompress(data, len).expect("zstd")
}

fn brotli_compress(data: &[u8]) -> Vec<u8> {
    let params = brotli::enc::BrotliEncoderParams {
        quality: 11,
        lgwin: 22,
        size_hint: data.len(),
        ..Default::default()
    };
    let mut out = Vec::new();
    brotli::BrotliCompress(&mut &data[..], &mut out, &params).expect("brotli");
    out
}

fn brotli_decompress(data: &[u8], len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    brotli::BrotliDecompress(&mut &data[..], &mut out).expect("brotli");
    out
}

/// The packed bits (LSB first within each byte, as `BitArray::to_bytes`), one adaptive
/// binary model for every bit.
fn arcode_encode(data: &[u8], m: u64) -> Vec<u8> {
    let mut model = Model::builder().binary().build();
    let mut encoder = ArithmeticEncoder::new(ARCODE_PRECISION);
    let mut out = BitWriter::new(Cursor::new(Vec::with_capacity(data.len())));
    for i in 0..m {
        let bit = u32::from(data[(i / 8) as usize] >> (i % 8) & 1);
        encoder.encode(bit, &model, &mut out).expect("arcode");
        model.update_symbol(bit);
    }
    encoder.finish_encode(&mut out).expect("arcode");
    out.pad_to_byte().expect("arcode");
    out.get_ref().get_ref().clone()
}

fn arcode_decode(data: &[u8], m: u64) -> Vec<u8> {
    let mut model = Model::builder().binary().build();
    let mut decoder = ArithmeticDecoder::new(ARCODE_PRECISION);
    let mut input = BitReader::<_, MSB>::new(data);
    let mut out = vec![0u8; m.div_ceil(8) as usize];
    for i in 0..m {
        let bit = decoder.decode(&model, &mut input).expect("arcode");
        model.update_symbol(bit);
        out[(i / 8) as usize] |= (bit as u8) << (i % 8);
    }
    out
}

/// Everything one (m, p0) case needs, built once.
struct Case {
    m: u64,
    p0: f64,
    filter: BloomFilter,
    packed: Vec<u8>,
    frames: Vec<(Coding, Vec<u8>)>,
    zstd3: Vec<u8>,
    zstd19: Vec<u8>,
    brotli11: Vec<u8>,
    arcode: Vec<u8>,
}

impl Case {
    fn new(m: u64, p0: f64) -> Case {
        let filter = filter(m, p0);
        let packed = filter.bits().to_bytes();
        let frames: Vec<_> = Coding::ALL
            .iter()
            .map(|&c| (c, encode_frame(&filter, c)))
            .collect();
        for (c, bytes) in &frames {
            let back = frame::decode(bytes, &Limits::default()).expect("decode");
            assert_eq!(back.filter.bits(), filter.bits(), "{c} round trip");
        }
        let zstd3 = zstd_compress(&packed, 3);
        let zstd19 = zstd_compress(&packed, 19);
        let brotli11 = brotli_compress(&packed);
        let arcode = arcode_encode(&packed, m);
        assert_eq!(zstd_decompress(&zstd3, packed.len()), packed);
        assert_eq!(zstd_decompress(&zstd19, packed.len()), packed);
        assert_eq!(brotli_decompress(&brotli11, packed.len()), packed);
        assert_eq!(arcode_decode(&arcode, m), packed);
        Case {
            m,
            p0,
            filter,
            packed,
            frames,
            zstd3,
            zstd19,
            brotli11,
            arcode,
        }
    }

    fn sizes(&self) -> Vec<(String, usize)> {
        let mut rows: Vec<_> = self
            .frames
            .iter()
            .map(|(c, b)| (c.to_string(), b.len()))
            .collect();
        rows.push(("zstd-3".into(), self.zstd3.len()));
        rows.push(("zstd-19".into(), self.zstd19.len()));
        rows.push(("brotli-11".into(), self.brotli11.len()));
        rows.push(("arcode-adaptive".into(), self.arcode.len()));
        rows
    }

    fn print_sizes(&self) {
        let p_hat = self.filter.fraction_of_zeros();
        let bound = self.m as f64 * entropy(p_hat) / 8.0;
        println!(
            "sizes m={} p0={} (n={}, p_hat={:.5}): entropy bound {:.0} bytes, packed {} bytes",
            self.m,
            self.p0,
            self.filter.n(),
            p_hat,
            bound,
            self.packed.len()
        );
        for (name, len) in self.sizes() {
            println!(
                "  {name:<16} {len:>9} bytes  {:>+8.2}% over bound",
                (len as f64 / bound - 1.0) * 100.0
            );
        }
    }
}

fn bench_codec(c: &mut Criterion) {
    let cases: Vec<Case> = SIZES
        .iter()
        .flat_map(|&m| P0S.iter().map(move |&p0| Case::new(m, p0)))
        .collect();
    println!("== frame and compressor sizes (frame bytes include header and checksum) ==");
    for case in &cases {
        case.print_sizes();
    }
    for case in &cases {
        let mut g = c.benchmark_group(format!("codec/m={}/p0={}", case.m, case.p0));
        g.sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(2))
            .sampling_mode(SamplingMode::Flat)
            .throughput(Throughput::Bytes(case.m / 8));
        let len = case.packed.len();
        let m = case.m;
        for (coding, bytes) in &case.frames {
            g.bench_function(format!("encode/{coding}"), |b| {
                b.iter(|| encode_frame(black_box(&case.filter), *coding))
            });
            g.bench_function(format!("decode/{coding}"), |b| {
                b.iter(|| frame::decode(black_box(bytes), &Limits::default()).expect("decode"))
            });
        }
        let packed = &case.packed;
        g.bench_function("encode/zstd-3", |b| {
            b.iter(|| zstd_compress(black_box(packed), 3))
        });
        g.bench_function("decode/zstd-3", |b| {
            b.iter(|| zstd_decompress(black_box(&case.zstd3), len))
        });
        g.bench_function("encode/zstd-19", |b| {
            b.iter(|| zstd_compress(black_box(packed), 19))
        });
        g.bench_function("decode/zstd-19", |b| {
            b.iter(|| zstd_decompress(black_box(&case.zstd19), len))
        });
        g.bench_function("encode/brotli-11", |b| {
            b.iter(|| brotli_compress(black_box(packed)))
        });
        g.bench_function("decode/brotli-11", |b| {
            b.iter(|| brotli_decompress(black_box(&case.brotli11), len))
        });
        g.bench_function("encode/arcode-adaptive", |b| {
            b.iter(|| arcode_encode(black_box(packed), m))
        });
        g.bench_function("decode/arcode-adaptive", |b| {
            b.iter(|| arcode_decode(black_box(&case.arcode), m))
        });
        g.finish();
    }
}

criterion_group!(benches, bench_codec);
criterion_main!(benches);
