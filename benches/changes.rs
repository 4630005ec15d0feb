//! Updates that cost what changed: the same 20 000 flipped bits sent as a delta and applied,
//! in filters of 2^20 to 2^32 bits.
//!
//! The sender holds the generation it sent last and is handed the flipped positions
//! (`Sender::next_frame_with_flips`: ones and digest brought forward by the flips, a
//! positional delta coded); the receiver holds the same generation and applies the frame
//! (`Receiver::receive`: flips decoded into the held bits, digest brought forward and
//! checked). Each iteration is one genuine update on both sides; the same flips applied
//! again undo the last, so the filters never need copying. Half of every filter's bits are
//! ones, so the delta is always the smaller frame.
//!
//! Times are the **CPU time of the benchmarking thread**. At the end, one Markdown table:
//! m, the delta's bytes, sender plus receiver per update and its ratio to the smallest
//! filter's. Run with `cargo bench -p bloomwire-benches --bench changes` (about 4 GiB of
//! memory at m = 2^32: the two sides' filters and the first full frame).

use std::hint::black_box;
use std::time::Duration;

use bloomwire::filter::bits::BitArray;
use bloomwire::{BloomFilter, Encoder, HashFamily, Limits, Params, Receiver, Sender};
use bloomwire_benches::{
    cell, command_line_filter, cpu_criterion, mean_ns, print_table_head, start_run, CpuTime,
};
use criterion::Criterion;

const FLIPS: usize = 20_000;
const LOG_MS: [u32; 7] = [20, 22, 24, 26, 28, 30, 32];

/// splitmix64: the bench's bits and positions, the same every run.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A filter of `m` bits, half of them ones, at random.
fn half_full(m: u64) -> BloomFilter {
    let mut state = m;
    let words = (0..m.div_ceil(64)).map(|_| splitmix(&mut state)).collect();
    let bits = BitArray::from_words(words, m).expect("whole words");
    let params = Params::standard(m, 3, HashFamily::default()).expect("params");
    BloomFilter::from_parts(params, bits, m / 8).expect("parts")
}

/// `FLIPS` distinct positions below `m`, increasing.
fn flips(m: u64) -> Vec<u64> {
    let mut state = !m;
    let mut p: Vec<u64> = Vec::with_capacity(FLIPS + FLIPS / 8);
    while p.len() < FLIPS {
        p.extend((0..FLIPS - p.len()).map(|_| splitmix(&mut state) % m));
        p.sort_unstable();
        p.dedup();
    }
    p
}

struct Row {
    m: u64,
    bytes: usize,
}

fn group(m: u64) -> String {
    format!("changes/log2-m={}", m.trailing_zeros())
}

fn bench_m(c: &mut Criterion<CpuTime>, m: u64, rows: &mut Vec<Row>) {
    let base = half_full(m);
    let flips = flips(m);
    let n = base.n();
    let mut sender = Sender::new(Encoder::new(), u64::MAX);
    let mut receiver = Receiver::new(Limits::new().max_m(m).max_payload(m / 8 + 4096));
    let first = sender.next_frame(&base).expect("first frame").to_bytes();
    receiver.receive(&first).expect("first frame");
    drop(first);
    // Correctness before timing: a delta, applied, and both sides agree.
    let delta = sender
        .next_frame_with_flips(&flips, n)
        .expect("delta")
        .to_bytes();
    assert!(!receiver.receive(&delta).expect("delta").is_full());
    assert_eq!(receiver.filter(), sender.last_sent());
    assert_eq!(
        receiver.filter().map(|f| f.bits().digest()),
        receiver.digest()
    );
    rows.push(Row {
        m,
        bytes: delta.len(),
    });
    drop(base);

    let mut g = c.benchmark_group(group(m));
    g.sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    g.bench_function("sender+receiver", |b| {
        b.iter(|| {
            let frame = sender
                .next_frame_with_flips(black_box(&flips), n)
                .expect("delta")
                .to_bytes();
            receiver.receive(black_box(&frame)).expect("delta")
        })
    });
    g.finish();
}

fn print_table(rows: &[Row]) {
    print_table_head(
        "| m | delta bytes | sender + receiver µs per update | against m = 2^20 |",
        "|---:|---:|---:|---:|",
    );
    let first = rows
        .first()
        .and_then(|r| mean_ns(&group(r.m), "sender+receiver"));
    for r in rows {
        let t = mean_ns(&group(r.m), "sender+receiver");
        println!(
            "| 2^{} | {} | {} | {} |",
            r.m.trailing_zeros(),
            r.bytes,
            cell(t.map(|t| t / 1e3), 0),
            cell(t.zip(first).map(|(t, f)| t / f), 2),
        );
    }
}

fn main() {
    start_run();
    let mut c = cpu_criterion();
    let filter = command_line_filter();
    let mut rows = Vec::new();
    for log in LOG_MS {
        let m = 1u64 << log;
        if filter.as_deref().is_some_and(|f| !group(m).contains(f)) {
            continue;
        }
        bench_m(&mut c, m, &mut rows);
    }
    c.final_summary();
    print_table(&rows);
}
