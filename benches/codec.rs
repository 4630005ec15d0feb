//! Encode and decode throughput of every frame coding, side by side with general-purpose
//! compressors (zstd level 3 and 19, brotli quality 11) and a per-bit adaptive arithmetic
//! coder from the `arcode` crate, on the same filters.
//!
//! Filters are real Bloom filters (standard layout, xxh64 with double hashing, k = 2) of
//! m = 140,000 and m = 8,000,000 bits holding n = round(-m ln(p0) / k) keys, so the fraction
//! of zero bits is close to p0 for p0 in {0.5, 0.7, 0.9, 0.95, 0.99, 0.999}. Throughput is in bytes of the
//! uncompressed filter (m / 8) per second. Before the timings, a table of sizes compares each
//! coding with the entropy bound m * H(p_hat) / 8, p_hat the measured zero fraction.
//!
//! A third size, `m=140000/paper`, is the filter of the paper's simulation: n = 10 000 keys,
//! m = 140 000 bits, k = 2 (p0 about 0.867). Every case also has the `default` coder: the
//! frame `Encoder::new()` chooses (encode: the encoder's whole work, choice included, into
//! `Bytes`; decode: that frame).
//!
//! The `chunked` group codes a bit array of m = 10^9 bits (each bit one with probability
//! 26/256, p0 = 0.898) as a chunked coding-6 frame on 1 and 2 threads (encode from the
//! filter; decode from the frame into a reused array).
//!
//! The single-thread groups measure the **CPU time of the benchmarking thread**
//! (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`), not wall time: the development machine is
//! shared, and time the thread spends waiting for a core is not the coder's. The chunked
//! group measures wall time, since what it shows is how many cores a decode keeps busy.
//!
//! At the end, one Markdown table of sizes and speeds (MB/s = 10^6 bytes of uncompressed filter per
//! second, from criterion's mean times in `target/criterion`) for every case that ran, then,
//! *paired*, the default coder's speed over zstd's and coding 10's decode over zstd -19's (coding
//! 10 is the registry's fastest decoder of dense arrays: the choice of a sender who gives bytes for
//! decode speed): the two timed in alternating batches, the median of the batches' ratios
//! (criterion's means, taken seconds apart, carry a shared machine's slow phases into their ratio)
//! and the ratio of each side's fastest batch (a core shared with another thread slows the two by
//! different amounts), for every case where criterion ran both. Run with `cargo bench -p
//! bloomwire-benches --bench codec`; a filter after `--`
//! selects cases, e.g. `-- 'm=8000000/p0=0.9/|chunked'` for the README's table.

use std::hint::black_box;
use std::io::Cursor;
use std::time::Duration;

use arcode::bitbit::{BitReader, BitWriter, MSB};
use arcode::{ArithmeticDecoder, ArithmeticEncoder, Model};
use bloomwire::theory::entropy;
use bloomwire::{
    BitArray, BitCoding, BloomFilter, Chunking, Decoded, Encoder, FrameView, HashFamily, Limits,
    Params,
};
use bloomwire_benches::{
    command_line_filter, cpu_criterion, mean_ns, paired_ratio, print_table_head, start_run,
    CpuTime, Paired,
};
use bloomwire_testkit::splitmix64;
use criterion::{Criterion, SamplingMode, Throughput};

const SIZES: [u64; 2] = [140_000, 8_000_000];
const P0S: [f64; 6] = [0.5, 0.7, 0.9, 0.95, 0.99, 0.999];
const CHUNKED_M: u64 = 1_000_000_000;
const K: u32 = 2;
/// The keys of the paper's filter (m = 140 000, k = 2).
const PAPER_N: u64 = 10_000;
const ARCODE_PRECISION: u64 = 48;

/// A standard filter of m bits, k = 2, filled so that about a fraction p0 of its bits is zero
/// (with `n` keys if given).
fn filter(m: u64, p0: f64, n: Option<u64>) -> BloomFilter {
    let n = n.unwrap_or_else(|| (-(m as f64) * p0.ln() / f64::from(K)).round() as u64);
    let mut f = BloomFilter::new(Params::standard(m, K, HashFamily::default()).expect("params"));
    let mut state = m ^ p0.to_bits();
    for _ in 0..n {
        f.insert(splitmix64(&mut state).to_le_bytes());
    }
    f
}

fn encode_frame(filter: &BloomFilter, coding: BitCoding) -> Vec<u8> {
    Encoder::new()
        .encode_with(filter, coding)
        .unwrap()
        .to_bytes()
        .to_vec()
}

/// The default encoder's frame, as bytes to send.
fn encode_default(filter: &BloomFilter) -> bytes::Bytes {
    Encoder::new().encode(filter).unwrap().to_bytes()
}

/// zstd's compressor at `level`, its context kept across calls (as a sender of many frames
/// keeps it).
fn zstd_compressor(level: i32) -> zstd::bulk::Compressor<'static> {
    zstd::bulk::Compressor::new(level).expect("zstd")
}

/// zstd's decompressor, its context kept across calls (as a receiver of many frames keeps
/// it): `zstd::bulk::decompress` builds a context on every call, which on a 17.5 KB frame
/// costs a third of the decode.
fn zstd_decompressor() -> zstd::bulk::Decompressor<'static> {
    zstd::bulk::Decompressor::new().expect("zstd")
}

/// `data` compressed into a new vector, as the frame encoders return theirs.
fn zstd_compress(cctx: &mut zstd::bulk::Compressor<'_>, data: &[u8]) -> Vec<u8> {
    cctx.compress(data).expect("zstd")
}

/// `data` decompressed into a new vector of `len` bytes, as the frame decoders return a new
/// bit array.
fn zstd_decompress(dctx: &mut zstd::bulk::Decompressor<'_>, data: &[u8], len: usize) -> Vec<u8> {
    dctx.decompress(data, len).expect("zstd")
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
    /// `p0=...` or `paper`.
    label: String,
    filter: BloomFilter,
    packed: Vec<u8>,
    frames: Vec<(BitCoding, Vec<u8>)>,
    /// The frame the default encoder chooses.
    default: Vec<u8>,
    zstd3: Vec<u8>,
    zstd19: Vec<u8>,
    brotli11: Vec<u8>,
    arcode: Vec<u8>,
}

impl Case {
    fn new(m: u64, p0: f64, n: Option<u64>) -> Case {
        let filter = filter(m, p0, n);
        let label = match n {
            Some(_) => "paper".to_string(),
            None => format!("p0={p0}"),
        };
        let packed = filter.bits().to_bytes();
        let frames: Vec<_> = BitCoding::ALL
            .iter()
            .map(|&c| (c, encode_frame(&filter, c)))
            .collect();
        let default = encode_default(&filter).to_vec();
        for (c, bytes) in frames
            .iter()
            .chain([(BitCoding::Raw, default.clone())].iter())
        {
            let back = bloomwire::decode::<Decoded>(bytes, &Limits::default()).expect("decode");
            assert_eq!(back.filter.bits(), filter.bits(), "{c} round trip");
        }
        let zstd3 = zstd_compress(&mut zstd_compressor(3), &packed);
        let zstd19 = zstd_compress(&mut zstd_compressor(19), &packed);
        let brotli11 = brotli_compress(&packed);
        let arcode = arcode_encode(&packed, m);
        let mut dctx = zstd_decompressor();
        assert_eq!(zstd_decompress(&mut dctx, &zstd3, packed.len()), packed);
        assert_eq!(zstd_decompress(&mut dctx, &zstd19, packed.len()), packed);
        assert_eq!(brotli_decompress(&brotli11, packed.len()), packed);
        assert_eq!(arcode_decode(&arcode, m), packed);
        Case {
            m,
            label,
            filter,
            packed,
            frames,
            default,
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
        let raw = self.frames.iter().find(|(c, _)| *c == BitCoding::Raw);
        rows.push(("raw-two-passes".into(), raw.map_or(0, |(_, b)| b.len())));
        rows.push(("default".into(), self.default.len()));
        rows.push(("zstd-3".into(), self.zstd3.len()));
        rows.push(("zstd-19".into(), self.zstd19.len()));
        rows.push(("brotli-11".into(), self.brotli11.len()));
        rows.push(("arcode-adaptive".into(), self.arcode.len()));
        rows
    }

    fn bound(&self) -> f64 {
        self.m as f64 * entropy(self.filter.fraction_of_zeros()) / 8.0
    }

    fn print_sizes(&self) {
        let p_hat = self.filter.fraction_of_zeros();
        let bound = self.bound();
        println!(
            "sizes m={} {} (n={}, p_hat={:.5}): entropy bound {:.0} bytes, packed {} bytes",
            self.m,
            self.label,
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

/// A row of the final table: a case's group, a coder's name, its bytes and the bound.
struct Row {
    group: String,
    name: String,
    bytes: usize,
    bound: f64,
}

static ROWS: std::sync::Mutex<Vec<Row>> = std::sync::Mutex::new(Vec::new());

/// Whether the command line's filter ([`command_line_filter`]) may select a benchmark of `group`, so that cases nobody asked for are
/// not built (brotli -11 alone takes seconds on 8 Mbit). Alternatives (`|` at the top level)
/// that name a case (`m=...`, `chunked`) select the cases whose name holds them up to the
/// first `(` (so `m=140000/paper/(en|de)code/(default|zstd)` builds only the paper's case);
/// any other filter builds all.
fn wanted(group: &str) -> bool {
    let Some(filter) = command_line_filter() else {
        return true;
    };
    let path = format!("{group}/");
    let case = format!("{}/", group.trim_start_matches("codec/"));
    // The alternatives at the top level (a `|` inside parentheses is part of one).
    let mut alternatives = vec![String::new()];
    let mut depth = 0i32;
    for ch in filter.chars() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            '|' if depth == 0 => {
                alternatives.push(String::new());
                continue;
            }
            _ => {}
        }
        alternatives.last_mut().expect("one at least").push(ch);
    }
    alternatives.iter().any(|alt| {
        let alt = alt.split('(').next().unwrap_or("");
        let names_a_case = alt.contains("m=") || alt.contains("chunked");
        !names_a_case || path.contains(alt) || format!("{alt}/").contains(&case)
    })
}

fn bench_codec(c: &mut Criterion<CpuTime>) {
    let paper = (SIZES[0], 0.867, Some(PAPER_N));
    let cases: Vec<Case> = SIZES
        .iter()
        .flat_map(|&m| P0S.iter().map(move |&p0| (m, p0, None)))
        .chain([paper])
        .filter(|&(m, p0, n)| match n {
            Some(_) => wanted(&format!("codec/m={m}/paper")),
            None => wanted(&format!("codec/m={m}/p0={p0}")),
        })
        .map(|(m, p0, n)| Case::new(m, p0, n))
        .collect();
    println!("== frame and compressor sizes (frame bytes include header and checksum) ==");
    for case in &cases {
        case.print_sizes();
        let group = format!("codec/m={}/{}", case.m, case.label);
        let mut rows = ROWS.lock().unwrap();
        for (name, bytes) in case.sizes() {
            rows.push(Row {
                group: group.clone(),
                name,
                bytes,
                bound: case.bound(),
            });
        }
    }
    for case in &cases {
        let mut g = c.benchmark_group(format!("codec/m={}/{}", case.m, case.label));
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
                b.iter(|| {
                    bloomwire::decode::<Decoded>(black_box(bytes), &Limits::default())
                        .expect("decode")
                })
            });
            if *coding == BitCoding::Raw {
                // The checked view's two passes (checksum, then copy) beside the one-shot
                // decoder's one.
                g.bench_function("decode/raw-two-passes", |b| {
                    b.iter(|| {
                        bloomwire::FrameView::parse(black_box(bytes), &Limits::default())
                            .and_then(|v| v.decode())
                            .expect("decode")
                    })
                });
            }
        }
        g.bench_function("encode/default", |b| {
            b.iter(|| encode_default(black_box(&case.filter)))
        });
        g.bench_function("decode/default", |b| {
            b.iter(|| {
                bloomwire::decode::<Decoded>(black_box(&case.default), &Limits::default())
                    .expect("decode")
            })
        });
        let packed = &case.packed;
        let (mut cctx3, mut cctx19) = (zstd_compressor(3), zstd_compressor(19));
        let mut dctx = zstd_decompressor();
        g.bench_function("encode/zstd-3", |b| {
            b.iter(|| zstd_compress(&mut cctx3, black_box(packed)))
        });
        g.bench_function("decode/zstd-3", |b| {
            b.iter(|| zstd_decompress(&mut dctx, black_box(&case.zstd3), len))
        });
        g.bench_function("encode/zstd-19", |b| {
            b.iter(|| zstd_compress(&mut cctx19, black_box(packed)))
        });
        g.bench_function("decode/zstd-19", |b| {
            b.iter(|| zstd_decompress(&mut dctx, black_box(&case.zstd19), len))
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
        paired_against_zstd(case);
    }
}

/// The default coder's speed over zstd's (decode against -19, encode against -3), and coding
/// 10's decode against -19, paired, where criterion ran both in this run.
static PAIRED: std::sync::Mutex<Vec<(String, &str, Paired)>> = std::sync::Mutex::new(Vec::new());

fn paired_against_zstd(case: &Case) {
    let group = format!("codec/m={}/{}", case.m, case.label);
    let ran = |a: &str, b: &str| mean_ns(&group, a).is_some() && mean_ns(&group, b).is_some();
    let budget = Duration::from_millis(1500);
    let len = case.packed.len();
    let mut paired = PAIRED.lock().unwrap();
    let (mut dctx, mut cctx3) = (zstd_decompressor(), zstd_compressor(3));
    // The default frame, and coding 10's: the fastest decode of the registry, the choice of
    // a sender who gives bytes for decode speed.
    let wide = case.frames.iter().find(|(c, _)| *c == BitCoding::Wide);
    let frames = [
        ("default", "decode, default / zstd -19", Some(&case.default)),
        ("wide", "decode, wide / zstd -19", wide.map(|(_, b)| b)),
    ];
    for (name, what, frame) in frames {
        let Some(frame) = frame.filter(|_| ran(&format!("decode/{name}"), "decode/zstd-19")) else {
            continue;
        };
        let speed = paired_ratio(
            budget,
            || {
                black_box(zstd_decompress(&mut dctx, black_box(&case.zstd19), len));
            },
            || {
                black_box(
                    bloomwire::decode::<Decoded>(black_box(frame), &Limits::default())
                        .expect("decode"),
                );
            },
        );
        paired.push((group.clone(), what, speed));
    }
    if ran("encode/default", "encode/zstd-3") {
        let speed = paired_ratio(
            budget,
            || {
                black_box(zstd_compress(&mut cctx3, black_box(&case.packed)));
            },
            || {
                black_box(encode_default(black_box(&case.filter)));
            },
        );
        paired.push((group, "encode, default / zstd -3", speed));
    }
}

/// `m` bits, each one with probability 26/256 (a random byte below 26), from a fixed seed.
fn random_bits(m: u64) -> BitArray {
    let mut state = 0x5EED;
    let words = (0..m.div_ceil(64))
        .map(|i| {
            let mut w = 0u64;
            for j in 0..8 {
                let r = splitmix64(&mut state).to_le_bytes();
                for (k, byte) in r.iter().enumerate() {
                    w |= u64::from(*byte < 26) << (8 * j + k);
                }
            }
            if (i + 1) * 64 > m {
                w &= (1u64 << (m % 64)) - 1;
            }
            w
        })
        .collect();
    BitArray::from_words(words, m).expect("bits past m cleared")
}

/// How many cores the machine gives this process right now: the wall time of a compute
/// loop on one thread, against the same loop on two threads at once.
fn spin_scaling() -> f64 {
    fn spin(n: u64) -> u64 {
        (0..n).fold(1u64, |x, i| {
            x.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17) ^ i
        })
    }
    let n = 200_000_000;
    let t = std::time::Instant::now();
    black_box(spin(black_box(n)));
    let one = t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    std::thread::scope(|s| {
        let h = s.spawn(|| black_box(spin(black_box(n))));
        black_box(spin(black_box(n)));
        h.join().expect("spin thread");
    });
    2.0 * one / t.elapsed().as_secs_f64()
}

fn bench_chunked(c: &mut Criterion) {
    let group = format!("chunked/m={CHUNKED_M}/p0=0.9");
    if !wanted(&group) {
        return;
    }
    let bits = random_bits(CHUNKED_M);
    let params = Params::standard(CHUNKED_M, K, HashFamily::default()).expect("params");
    let filter = BloomFilter::from_parts(params, bits, 0).expect("m bits");
    let wire = Encoder::new().encode(&filter).expect("frame").to_bytes();
    let limits = Limits::unlimited();
    let view = FrameView::parse(&wire, &limits).expect("frame");
    let h = view.header();
    // The coding the default encoder chunks such an array with (coding 10 since it came,
    // coding 6 before).
    assert!(h.chunk_shift.is_some(), "a chunked frame");
    let coding = h.coding;
    let bound = CHUNKED_M as f64 * entropy(filter.fraction_of_zeros()) / 8.0;
    println!(
        "chunked m={CHUNKED_M}: p_hat={:.5}, {} chunks of 2^{} bits, {} bytes, {:+.4}% over bound {:.0}",
        filter.fraction_of_zeros(),
        view.chunk_count(),
        h.chunk_shift.unwrap_or(0),
        wire.len(),
        (wire.len() as f64 / bound - 1.0) * 100.0,
        bound
    );
    let unchunked = Encoder::new()
        .chunking(Chunking::Never)
        .encode_with(&filter, BitCoding::KnownPInterleaved)
        .unwrap()
        .encoded_len();
    println!(
        "  unchunked coding 6: {unchunked} bytes; the chunked frame {:+.4}% against it",
        (wire.len() as f64 / unchunked as f64 - 1.0) * 100.0
    );
    for threads in [1, 2] {
        ROWS.lock().unwrap().push(Row {
            group: group.clone(),
            name: format!(
                "{coding}, chunked, {threads} thread{}",
                if threads > 1 { "s" } else { "" }
            ),
            bytes: wire.len(),
            bound,
        });
    }
    println!(
        "  machine check: 2 threads of a plain compute loop do {:.2} times the work of 1 \
         in the same wall time (2.0 on two idle cores)",
        spin_scaling()
    );
    let mut g = c.benchmark_group(&group);
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .sampling_mode(SamplingMode::Flat)
        .throughput(Throughput::Bytes(CHUNKED_M / 8));
    let mut out = BitArray::new(0);
    for threads in [1, 2] {
        let name = format!(
            "{coding}, chunked, {threads} thread{}",
            if threads > 1 { "s" } else { "" }
        );
        g.bench_function(format!("encode/{name}"), |b| {
            b.iter(|| Encoder::new().threads(threads).encode(black_box(&filter)))
        });
        g.bench_function(format!("decode/{name}"), |b| {
            b.iter(|| {
                let view = FrameView::parse(black_box(&wire), &limits).expect("frame");
                view.decode_into_threads(&mut out, threads).expect("decode");
            })
        });
    }
    g.finish();
    if !out.is_empty() {
        assert_eq!(&out, filter.bits());
    }
}

fn print_table() {
    print_table_head(
        "| case | coder | bytes | over m H(p)/8 | encode MB/s | decode MB/s |",
        "|---|---|---:|---:|---:|---:|",
    );
    for row in ROWS.lock().unwrap().iter() {
        let m: f64 = row
            .group
            .split("m=")
            .nth(1)
            .and_then(|s| s.split('/').next())
            .and_then(|s| s.parse().ok())
            .unwrap_or(0.0);
        let speed = |what: &str| {
            mean_ns(&row.group, &format!("{what}/{}", row.name))
                .map_or("–".to_string(), |ns| format!("{:.0}", m / 8.0 / ns * 1e3))
        };
        println!(
            "| {} | {} | {} | {:+.2}% | {} | {} |",
            row.group.replace("codec/", ""),
            row.name,
            row.bytes,
            (row.bytes as f64 / row.bound - 1.0) * 100.0,
            speed("encode"),
            speed("decode")
        );
    }
    let paired = PAIRED.lock().unwrap();
    if !paired.is_empty() {
        print_table_head(
            "| case | speed, paired | median of the pairs | fastest batches |",
            "|---|---|---:|---:|",
        );
        for (group, what, speed) in paired.iter() {
            println!(
                "| {} | {what} | {:.2} | {:.2} |",
                group.replace("codec/", ""),
                speed.median,
                speed.best
            );
        }
    }
}

fn main() {
    start_run();
    let mut cpu = cpu_criterion();
    bench_codec(&mut cpu);
    let mut wall = Criterion::default().configure_from_args();
    bench_chunked(&mut wall);
    cpu.final_summary();
    print_table();
}
