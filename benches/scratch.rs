//! Whose memory an encode reuses: a caller's context (`Scratch`, through
//! `Encoder::encode_in` and `Scratch::recycle`), the thread's pool (the default context of
//! `Encoder::encode`, a frame's payload going back to it on drop), and no reuse at all (a
//! new context for each encode, dropped with its frame, so that every encode takes fresh
//! memory from the allocator, as it would without a pool).
//!
//! Filters: k = 3, one key per 10 bits at m = 10^8 bits (a chunked frame), and 1 000 000
//! keys at m = 12.4 million bits (coding 8, the case the pool was made for). Every encode
//! runs on the benchmarking thread (`Encoder::threads(1)`) and ends in the frame's bytes
//! written into a buffer the caller keeps (the same for the three, so that only the
//! encoder's memory differs). Times are the CPU time of the benchmarking thread; the
//! ratios to the default are also measured paired (alternating batches, the median of the
//! batches' ratios); the minor page faults are those of the thread, a call, after a warm
//! call. At the end, one Markdown table.
//! Run with `cargo bench -p bloomwire-benches --bench scratch`.

use std::hint::black_box;
use std::time::Duration;

use bloomwire::{BloomFilter, Encoder, HashFamily, Params, Scratch};
use bloomwire_benches::{
    cell, cpu_criterion, faults_per_call, mean_ns, paired_ratio, print_table_head, start_run,
    CpuTime,
};
use criterion::Criterion;

fn filter(m: u64, n: u64) -> BloomFilter {
    let mut f = BloomFilter::new(Params::standard(m, 3, HashFamily::default()).expect("params"));
    for i in 0..n {
        f.insert(i.to_le_bytes());
    }
    f
}

/// The three ways, each one encode ending in `out`.
struct Ways<'a> {
    f: &'a BloomFilter,
    encoder: Encoder,
    scratch: Scratch,
    out: Vec<u8>,
}

impl Ways<'_> {
    fn context(&mut self) {
        let frame = self.encoder.encode_in(&mut self.scratch, black_box(self.f));
        let frame = frame.expect("frame");
        self.out.clear();
        frame.write_to(&mut self.out);
        self.scratch.recycle(frame);
    }

    fn default(&mut self) {
        let frame = self.encoder.encode(black_box(self.f)).expect("frame");
        self.out.clear();
        frame.write_to(&mut self.out);
    }

    fn no_reuse(&mut self) {
        // A context of its own for one encode, dropped with the frame: nothing is reused,
        // and the thread's pool (the default's, in the paired runs) is left warm.
        let mut fresh = Scratch::new();
        let frame = self.encoder.encode_in(&mut fresh, black_box(self.f));
        let frame = frame.expect("frame");
        self.out.clear();
        frame.write_to(&mut self.out);
    }
}

struct Row {
    label: String,
    bytes: usize,
    faults: [f64; 3],
    paired: [f64; 2],
}

fn bench_case(c: &mut Criterion<CpuTime>, label: &str, f: &BloomFilter) -> Row {
    let mut ways = Ways {
        f,
        encoder: Encoder::new().threads(1),
        scratch: Scratch::new(),
        out: Vec::new(),
    };
    ways.context();
    let with = ways.out.clone();
    ways.default();
    assert_eq!(ways.out, with, "the same bytes through a context");
    let faults = [
        faults_per_call(5, || ways.context()),
        faults_per_call(5, || ways.default()),
        faults_per_call(5, || ways.no_reuse()),
    ];
    let mut g = c.benchmark_group(label);
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    g.bench_function("context", |b| b.iter(|| ways.context()));
    g.bench_function("default", |b| b.iter(|| ways.default()));
    g.bench_function("no-reuse", |b| b.iter(|| ways.no_reuse()));
    g.finish();
    let budget = Duration::from_secs(2);
    let ways = std::cell::RefCell::new(ways);
    let context = paired_ratio(
        budget,
        || ways.borrow_mut().context(),
        || ways.borrow_mut().default(),
    );
    let none = paired_ratio(
        budget,
        || ways.borrow_mut().no_reuse(),
        || ways.borrow_mut().default(),
    );
    Row {
        label: label.to_string(),
        bytes: with.len(),
        faults,
        paired: [context.median, none.median],
    }
}

fn main() {
    start_run();
    let mut c = cpu_criterion();
    let rows: Vec<Row> = [(100_000_000u64, 10_000_000u64), (12_400_000, 1_000_000)]
        .into_iter()
        .map(|(m, n)| bench_case(&mut c, &format!("scratch/m={m}/n={n}"), &filter(m, n)))
        .collect();
    c.final_summary();
    print_table_head("| case | bytes | default ms | context ms | no reuse ms | context / default | no reuse / default | context / default, paired | no reuse / default, paired | faults a call: context, default, no reuse |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    for r in &rows {
        let t = |f: &str| mean_ns(&r.label, f).map(|ns| ns / 1e6);
        let (context, default, none) = (t("context"), t("default"), t("no-reuse"));
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {:.3} | {:.3} | {:.0}, {:.0}, {:.0} |",
            r.label.trim_start_matches("scratch/"),
            r.bytes,
            cell(default, 1),
            cell(context, 1),
            cell(none, 1),
            cell(context.zip(default).map(|(a, b)| a / b), 3),
            cell(none.zip(default).map(|(a, b)| a / b), 3),
            r.paired[0],
            r.paired[1],
            r.faults[0],
            r.faults[1],
            r.faults[2],
        );
    }
}
