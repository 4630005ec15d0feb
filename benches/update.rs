//! The update scenario the crate exists for: a large filter whose set changes a little between
//! generations, sent again and again.
//!
//! 1 000 000 keys, 1% of them replaced per update (10 000 keys leave, 10 000 new ones come),
//! target false positive rate 0.01, under two plans: the optimizer's default
//! (`plan_for_fpr`, no memory cap) and one capped at 16 bits a key. For each, side by side in
//! the same run and on the same two generations:
//!
//! * bloomwire: the sender's `next_frame` for the new generation (it holds the previous one),
//!   and the receiver's `receive` of that frame (it holds the previous generation);
//! * bloomwire by flips: the sender's `next_frame_with_flips`, handed the changed positions
//!   (as a counting filter's sender, or an application that tracks them, has them), which
//!   makes the same frame without reading the rest of the filter; the receiver as above;
//! * zstd -3 on the raw bits: compressing the XOR of the two generations, and decompressing
//!   it and XOR-ing it into the base.
//!
//! Times are the **CPU time of the benchmarking thread** (`CLOCK_THREAD_CPUTIME_ID`), so
//! other load on a shared machine does not count; the state each iteration starts from is
//! made outside the timed part. At the end, one Markdown table with both sides' bytes and
//! CPU per update and their ratios. Run with `cargo bench -p bloomwire-benches --bench update`.
//!
//! The `scan/...` groups time the sender that compares the two generations itself
//! (`Sender::next_frame`, going from one generation to the other and back) against the
//! least any sender of the same delta does: a plain word-by-word comparison of the two bit
//! arrays collecting the changed positions, then the positional coding of those positions
//! (the delta's payload, byte for byte); and against the same with the comparison a line
//! of eight words at a time, as the sender's scan goes (a stateless comparison as fast as
//! the sender's way of comparing: the baseline not handicapped). Their ratios are also
//! printed *paired* (the two timed in alternating batches: `paired_ratio`). `-- scan/`
//! runs them alone.

use std::hint::black_box;
use std::time::Duration;

use bloomwire::internals::positional::{self, GapParams};
use bloomwire::{BloomFilter, Encoder, Limits, Optimizer, Params, Receiver, Sender};
use bloomwire_benches::{
    cell, cpu_criterion, mean_ns, paired_ratio, print_table_head, start_run, CpuTime, Paired,
};
use criterion::{BatchSize, Criterion};

const KEYS: u64 = 1_000_000;
const REPLACED: u64 = KEYS / 100;
const TARGET_FPR: f64 = 0.01;

/// The two generations of one plan and what each side holds before the update.
struct Scenario {
    name: &'static str,
    params: Params,
    base: BloomFilter,
    next: BloomFilter,
    /// The XOR of the two generations' packed bits, what zstd compresses.
    xor: Vec<u8>,
    /// The positions where the generations differ, increasing.
    flips: Vec<u64>,
}

fn key(i: u64) -> [u8; 8] {
    i.to_le_bytes()
}

fn build(params: &Params, keys: impl Iterator<Item = u64>) -> BloomFilter {
    let mut f = BloomFilter::new(params.clone());
    for i in keys {
        f.insert(key(i));
    }
    f
}

impl Scenario {
    fn new(name: &'static str, optimizer: Optimizer) -> Scenario {
        let plan = optimizer.plan_for_fpr(KEYS, TARGET_FPR).expect("plan");
        let params = plan.params.clone();
        // Generation 1 holds keys 0..KEYS; generation 2 drops the first 1% and adds as many.
        let base = build(&params, 0..KEYS);
        let next = build(&params, REPLACED..KEYS + REPLACED);
        let xor = base
            .bits()
            .to_bytes()
            .iter()
            .zip(next.bits().to_bytes().iter())
            .map(|(a, b)| a ^ b)
            .collect();
        let flips = (0..params.m())
            .filter(|&i| base.bits().get(i) != next.bits().get(i))
            .collect();
        Scenario {
            name,
            params,
            base,
            next,
            xor,
            flips,
        }
    }

    fn group(&self) -> String {
        format!("update/{}", self.name)
    }

    /// A sender that has sent the base generation, and the frame it sends for the next.
    fn sender(&self) -> Sender {
        let mut sender = Sender::new(Encoder::new(), u64::MAX);
        sender.next_frame(&self.base).expect("first frame");
        sender
    }

    fn receiver(&self, first: &[u8]) -> Receiver {
        let mut receiver = Receiver::new(Limits::default());
        receiver.receive(first).expect("first frame");
        receiver
    }
}

fn apply_xor(base: &mut [u8], xor: &[u8]) {
    for (b, x) in base.iter_mut().zip(xor) {
        *b ^= x;
    }
}

fn bench_update(c: &mut Criterion<CpuTime>, s: &Scenario, rows: &mut Vec<Row>) {
    let mut first_sender = Sender::new(Encoder::new(), u64::MAX);
    let first = first_sender.next_frame(&s.base).expect("frame").to_bytes();
    let update = s.sender().next_frame(&s.next).expect("frame").to_bytes();
    let by_flips = s
        .sender()
        .next_frame_with_flips(&s.flips, s.next.n())
        .expect("frame")
        .to_bytes();
    assert_eq!(by_flips, update, "the same frame from the flips");
    let zstd = zstd::bulk::compress(&s.xor, 3).expect("zstd");
    let base_bytes = s.base.bits().to_bytes();
    {
        // Correctness before timing: both sides end with the next generation.
        let mut receiver = s.receiver(&first);
        receiver.receive(&update).expect("update");
        assert_eq!(receiver.filter(), Some(&s.next));
        let mut bits = base_bytes.clone();
        apply_xor(
            &mut bits,
            &zstd::bulk::decompress(&zstd, s.xor.len()).expect("zstd"),
        );
        assert_eq!(bits, s.next.bits().to_bytes());
    }
    rows.push(Row {
        group: s.group(),
        m: s.params.m(),
        k: s.params.k().to_string(),
        bloomwire_bytes: update.len(),
        zstd_bytes: zstd.len(),
    });

    let mut g = c.benchmark_group(s.group());
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    g.bench_function("bloomwire/sender", |b| {
        b.iter_batched(
            || s.sender(),
            |mut sender| sender.next_frame(black_box(&s.next)).expect("frame"),
            BatchSize::LargeInput,
        )
    });
    g.bench_function("bloomwire-flips/sender", |b| {
        b.iter_batched(
            || s.sender(),
            |mut sender| {
                sender
                    .next_frame_with_flips(black_box(&s.flips), s.next.n())
                    .expect("frame")
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("bloomwire/receiver", |b| {
        b.iter_batched(
            || s.receiver(&first),
            |mut receiver| {
                receiver.receive(black_box(&update)).expect("update");
                receiver
            },
            BatchSize::LargeInput,
        )
    });
    // zstd's contexts kept across calls, as a sender and a receiver of many updates keep
    // them.
    let mut cctx = zstd::bulk::Compressor::new(3).expect("zstd");
    g.bench_function("zstd-3/sender", |b| {
        b.iter(|| cctx.compress(black_box(&s.xor)).expect("zstd"))
    });
    let mut dctx = zstd::bulk::Decompressor::new().expect("zstd");
    g.bench_function("zstd-3/receiver", |b| {
        b.iter_batched(
            || base_bytes.clone(),
            |mut bits| {
                let xor = dctx
                    .decompress(black_box(&zstd), s.xor.len())
                    .expect("zstd");
                apply_xor(&mut bits, &xor);
                bits
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

/// The positions of the ones of `d`, word `i` of a generation's XOR, onto `positions`.
#[inline]
fn push_ones(positions: &mut Vec<u64>, i: usize, mut d: u64) {
    while d != 0 {
        positions.push(i as u64 * 64 + u64::from(d.trailing_zeros()));
        d &= d - 1;
    }
}

/// `positions` (of m bits) coded as the positional coding does a delta's: the payload.
fn code_positions(positions: &[u64], m: u64) -> Vec<u8> {
    let mut out = Vec::new();
    positional::encode_positions(
        positions,
        GapParams::of(m, positions.len() as u64),
        &mut out,
    );
    out
}

/// The least work of a sender that compares two generations: the positions where the
/// words of `prev` and `next` differ, found word by word, then coded as the positional
/// coding does a delta's (the frame's payload).
fn compare_and_code(prev: &[u64], next: &[u64], m: u64) -> Vec<u8> {
    let mut positions = Vec::new();
    for (i, (&o, &w)) in prev.iter().zip(next).enumerate() {
        push_ones(&mut positions, i, o ^ w);
    }
    code_positions(&positions, m)
}

/// [`compare_and_code`] with the comparison a line of eight words at a time (one test of
/// the eight XORs, in vector registers, then the positions of a line that differs), as
/// the sender scans: the least a sender that keeps no state does, no handicap to it.
fn compare_lines_and_code(prev: &[u64], next: &[u64], m: u64) -> Vec<u8> {
    let mut positions = Vec::new();
    let mut push = |i: usize, d: u64| push_ones(&mut positions, i, d);
    // The lines of `prev`'s cache lines, as the sender's scan takes those of the
    // generation it holds, and the words before and after them.
    let head = prev.as_ptr().align_offset(64).min(prev.len());
    let tail = head + (prev.len() - head) / 8 * 8;
    for i in 0..head {
        push(i, prev[i] ^ next[i]);
    }
    let (prev_lines, _) = prev[head..tail].as_chunks::<8>();
    let (next_lines, _) = next[head..tail].as_chunks::<8>();
    for (l, (o, w)) in prev_lines.iter().zip(next_lines).enumerate() {
        let mut any = 0;
        for j in 0..8 {
            any |= o[j] ^ w[j];
        }
        if any != 0 {
            for j in 0..8 {
                push(head + l * 8 + j, o[j] ^ w[j]);
            }
        }
    }
    for i in tail..prev.len() {
        push(i, prev[i] ^ next[i]);
    }
    code_positions(&positions, m)
}

/// `code` from `base` to `next`, then from `next` back to `base`, turn about: the baseline
/// side of the scan, which goes back and forth as the sender does.
fn back_and_forth<'a>(
    base: &'a [u64],
    next: &'a [u64],
    m: u64,
    code: impl Fn(&[u64], &[u64], u64) -> Vec<u8> + 'a,
) -> impl FnMut() -> Vec<u8> + 'a {
    let mut flip = 0;
    move || {
        let (a, b) = if flip % 2 == 0 {
            (base, next)
        } else {
            (next, base)
        };
        flip += 1;
        code(black_box(a), black_box(b), m)
    }
}

/// The paired ratios of one plan's `next_frame` to the two comparisons.
struct ScanRatios {
    words: Paired,
    lines: Paired,
}

/// `Sender::next_frame` from one generation to the other and back, against
/// [`compare_and_code`] and [`compare_lines_and_code`] of the same two generations;
/// returns the paired ratios.
fn bench_scan(c: &mut Criterion<CpuTime>, s: &Scenario) -> ScanRatios {
    let (base, next) = (s.base.bits().words(), s.next.bits().words());
    let m = s.params.m();
    let payload = compare_and_code(base, next, m);
    assert_eq!(compare_lines_and_code(base, next, m), payload);
    let mut sender = s.sender();
    let frame = sender.next_frame(&s.next).expect("frame");
    assert_eq!(
        frame.header().payload_len,
        payload.len(),
        "the sender's delta carries the baseline's payload"
    );
    // The sender holds `next` now: its next step goes back to `base`.
    let gens = [&s.base, &s.next];
    let mut turn = 0;
    let mut step = move || {
        let frame = sender.next_frame(black_box(gens[turn % 2])).expect("frame");
        turn += 1;
        frame
    };
    let mut baseline = back_and_forth(base, next, m, compare_and_code);
    let mut by_lines = back_and_forth(base, next, m, compare_lines_and_code);
    let mut g = c.benchmark_group(format!("scan/{}", s.name));
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    g.bench_function("next_frame", |b| b.iter(&mut step));
    g.bench_function("compare+positional", |b| b.iter(&mut baseline));
    g.bench_function("compare-lines+positional", |b| b.iter(&mut by_lines));
    g.finish();
    let words = paired_over_3s(&mut step, &mut baseline);
    let lines = paired_over_3s(&mut step, &mut by_lines);
    ScanRatios { words, lines }
}

/// [`paired_ratio`] of `a` to `b` over 3 s of CPU time, their results kept from the
/// optimizer.
fn paired_over_3s<A, B>(mut a: impl FnMut() -> A, mut b: impl FnMut() -> B) -> Paired {
    paired_ratio(
        Duration::from_secs(3),
        || {
            black_box(a());
        },
        || {
            black_box(b());
        },
    )
}

struct Row {
    group: String,
    m: u64,
    k: String,
    bloomwire_bytes: usize,
    zstd_bytes: usize,
}

fn print_table(rows: &[Row]) {
    print_table_head("| plan | m | k | bloomwire bytes | zstd -3 bytes | bytes ratio | bloomwire sender + receiver ms | by flips ms | zstd -3 ms | CPU ratio | by flips CPU ratio |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        let ms = |sender: &str, receiver: &str| {
            let s = mean_ns(&r.group, &format!("{sender}/sender"))?;
            let t = mean_ns(&r.group, &format!("{receiver}/receiver"))?;
            Some((s + t) / 1e6)
        };
        let (ours, flips, theirs) = (
            ms("bloomwire", "bloomwire"),
            ms("bloomwire-flips", "bloomwire"),
            ms("zstd-3", "zstd-3"),
        );
        println!(
            "| {} | {} | {} | {} | {} | {:.2} | {} | {} | {} | {} | {} |",
            r.group.trim_start_matches("update/"),
            r.m,
            r.k,
            r.bloomwire_bytes,
            r.zstd_bytes,
            r.bloomwire_bytes as f64 / r.zstd_bytes as f64,
            cell(ours, 2),
            cell(flips, 2),
            cell(theirs, 2),
            cell(ours.zip(theirs).map(|(a, b)| a / b), 2),
            cell(flips.zip(theirs).map(|(a, b)| a / b), 2),
        );
    }
}

fn main() {
    start_run();
    let mut c = cpu_criterion();
    let mut rows = Vec::new();
    let mut scans = Vec::new();
    for s in [
        Scenario::new("default-plan", Optimizer::new()),
        Scenario::new("16-bits-a-key", Optimizer::new().max_m(16 * KEYS)),
    ] {
        bench_update(&mut c, &s, &mut rows);
        scans.push((s.name, bench_scan(&mut c, &s)));
    }
    c.final_summary();
    print_table(&rows);
    print_table_head("| plan | next_frame / (word compare + positional), paired | fastest batches | next_frame / (line compare + positional), paired | fastest batches |", "|---|---:|---:|---:|---:|");
    for (name, r) in scans {
        let group = format!("scan/{name}");
        let means = |baseline: &str| {
            mean_ns(&group, "next_frame")
                .zip(mean_ns(&group, baseline))
                .map(|(a, b)| a / b)
        };
        println!(
            "| {name} | {:.2} (criterion's means: {}) | {:.2} | {:.2} (criterion's means: {}) | {:.2} |",
            r.words.median,
            cell(means("compare+positional"), 2),
            r.words.best,
            r.lines.median,
            cell(means("compare-lines+positional"), 2),
            r.lines.best,
        );
    }
}
