//! What an encode costs beyond its coding: the default encoder (which predicts every
//! coding's size from the array's count of ones and codes the array once, in the coding it
//! picks) against an encoder told that coding, and one-shot encodes (fresh memory for the
//! payload and the coders' scratch) against the reuse path (`Encoder::encode_into` a
//! buffer the caller keeps), with the minor page faults each call takes.
//!
//! Filters: k = 3, one key per 10 bits at m = 10^4 to 10^8 bits, and 1 000 000 keys at
//! m = 1.2, 6.2, 12.4 and 49 million bits. Times are the **CPU time of the benchmarking
//! thread**, which codes every chunk (`Encoder::threads(1)`); every timed encode ends in
//! the frame's bytes (`to_bytes`, or the caller's buffer). The ratios are also measured
//! *paired*: the two encodes timed in alternating batches, the median of the batches'
//! ratios (criterion's means, taken seconds apart, carry a shared machine's slow phases
//! into their ratio). At the end, one Markdown table.
//! Run with `cargo bench -p bloomwire-benches --bench encode`.

use std::hint::black_box;
use std::time::Duration;

use bloomwire::{BitCoding, BloomFilter, Encoder, HashFamily, Params};
use bloomwire_benches::{
    cell, cpu_criterion, faults_per_call, mean_ns, paired_ratio, print_table_head, start_run,
    CpuTime,
};
use criterion::Criterion;

struct Case {
    label: String,
    filter: BloomFilter,
}

fn case(m: u64, n: u64) -> Case {
    let params = Params::standard(m, 3, HashFamily::default()).expect("params");
    let mut filter = BloomFilter::new(params);
    for i in 0..n {
        filter.insert(i.to_le_bytes());
    }
    Case {
        label: format!("encode/m={m}/n={n}"),
        filter,
    }
}

fn cases() -> Vec<Case> {
    let per_ten = [10_000u64, 100_000, 1_000_000, 10_000_000, 100_000_000]
        .into_iter()
        .map(|m| case(m, m / 10));
    let issue = [1_200_000u64, 6_200_000, 12_400_000, 49_000_000]
        .into_iter()
        .map(|m| case(m, 1_000_000));
    per_ten.chain(issue).collect()
}

struct Row {
    label: String,
    coding: String,
    bytes: usize,
    one_shot_faults: f64,
    reuse_faults: f64,
    /// Default over chosen and reuse over chosen, paired; for the cases criterion ran.
    paired: Option<(f64, f64)>,
}

fn bench_case(c: &mut Criterion<CpuTime>, case: &Case, rows: &mut Vec<Row>) {
    let f = &case.filter;
    // One thread: the benchmarking thread's CPU time is then all of the encode's.
    let default = Encoder::new().threads(1);
    let frame = default.encode(f).expect("frame");
    let coding = frame.coding();
    let chosen = default
        .clone()
        .coding(BitCoding::try_from(coding).expect("a bit coding"));
    let bytes = frame.to_bytes();
    assert_eq!(chosen.encode(f).expect("frame").to_bytes(), bytes);
    let mut buf = Vec::new();
    default.encode_into(f, 0, &mut buf).expect("frame");
    assert_eq!(&buf[..], &bytes[..]);
    rows.push(Row {
        label: case.label.clone(),
        coding: coding.name().to_string(),
        bytes: bytes.len(),
        one_shot_faults: faults_per_call(10, || {
            black_box(default.encode(f).expect("frame").to_bytes());
        }),
        reuse_faults: faults_per_call(10, || {
            default.encode_into(f, 0, &mut buf).expect("frame");
            black_box(&buf);
        }),
        paired: None,
    });

    let mut g = c.benchmark_group(&case.label);
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    g.bench_function("default", |b| {
        b.iter(|| default.encode(black_box(f)).expect("frame").to_bytes())
    });
    g.bench_function("chosen", |b| {
        b.iter(|| chosen.encode(black_box(f)).expect("frame").to_bytes())
    });
    g.bench_function("default-reuse", |b| {
        b.iter(|| {
            default
                .encode_into(black_box(f), 0, &mut buf)
                .expect("frame");
        })
    });
    g.finish();
    if mean_ns(&case.label, "chosen").is_some() {
        let budget = Duration::from_millis(1500);
        let chosen = || {
            black_box(chosen.encode(black_box(f)).expect("frame").to_bytes());
        };
        let default_over_chosen = paired_ratio(
            budget,
            || {
                black_box(default.encode(black_box(f)).expect("frame").to_bytes());
            },
            chosen,
        )
        .median;
        let reuse_over_chosen = paired_ratio(
            budget,
            || {
                default
                    .encode_into(black_box(f), 0, &mut buf)
                    .expect("frame");
            },
            chosen,
        )
        .median;
        rows.last_mut().expect("this case's row").paired =
            Some((default_over_chosen, reuse_over_chosen));
    }
}

fn print_table(rows: &[Row]) {
    print_table_head("| case | coding | bytes | chosen µs | default µs | default / chosen | reuse µs | reuse / chosen | default / chosen, paired | reuse / chosen, paired | faults a call, one-shot | faults a call, reuse |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        let t = |f: &str| mean_ns(&r.label, f).map(|ns| ns / 1e3);
        let (chosen, default, reuse) = (t("chosen"), t("default"), t("default-reuse"));
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} | {:.1} |",
            r.label.trim_start_matches("encode/"),
            r.coding,
            r.bytes,
            cell(chosen, 1),
            cell(default, 1),
            cell(default.zip(chosen).map(|(a, b)| a / b), 2),
            cell(reuse, 1),
            cell(reuse.zip(chosen).map(|(a, b)| a / b), 2),
            cell(r.paired.map(|p| p.0), 2),
            cell(r.paired.map(|p| p.1), 2),
            r.one_shot_faults,
            r.reuse_faults,
        );
    }
}

fn main() {
    start_run();
    let mut c = cpu_criterion();
    let mut rows = Vec::new();
    for case in cases() {
        bench_case(&mut c, &case, &mut rows);
    }
    c.final_summary();
    print_table(&rows);
}
