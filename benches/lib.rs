//! The package of bloomwire's benchmarks (`cargo bench -p bloomwire-benches --bench NAME`),
//! kept apart from the library so that its tests and demo compile none of the comparison
//! crates. The benchmarks are the files beside this one (`README.md` says what each measures
//! and holds the figures of the last runs); what they share is here: a criterion
//! measurement of the thread's CPU time, the mean times of the run that is going on (for
//! the tables the benchmarks print at the end), and the ratio of two functions timed in
//! alternating batches.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;
use std::time::SystemTime;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::Criterion;

use bloomwire_testkit::{thread_cpu_nanos, thread_minor_faults};

/// A criterion measurement of the benchmarking thread's CPU time, in nanoseconds: time the
/// thread spends waiting for a core on a shared machine is not the code's.
pub struct CpuTime;

static WALL: WallTime = WallTime;

impl Measurement for CpuTime {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        thread_cpu_nanos()
    }

    fn end(&self, start: u64) -> u64 {
        thread_cpu_nanos() - start
    }

    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }

    fn zero(&self) -> u64 {
        0
    }

    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        // Nanoseconds, like wall time.
        WALL.formatter()
    }
}

static STARTED: OnceLock<SystemTime> = OnceLock::new();

/// Marks the start of this run: [`mean_ns`] reports only results written after it. Call it
/// first in a benchmark's `main`.
pub fn start_run() {
    STARTED.get_or_init(SystemTime::now);
}

/// Criterion's mean time of one benchmark of this run, in nanoseconds, if it ran (a
/// benchmark that a filter left out keeps an older file, which does not count).
pub fn mean_ns(group: &str, function: &str) -> Option<f64> {
    let dir = |s: &str| s.replace('/', "_");
    // Where criterion writes: the workspace's target directory (benchmarks run in the
    // package's directory, one below it), unless CARGO_TARGET_DIR moves it.
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"),
        PathBuf::from,
    );
    let path = target
        .join("criterion")
        .join(dir(group))
        .join(dir(function))
        .join("new")
        .join("estimates.json");
    let modified = std::fs::metadata(&path).ok()?.modified().ok()?;
    if modified < *STARTED.get()? {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["mean"]["point_estimate"].as_f64()
}

/// The criterion the benchmarks share: the thread's CPU time ([`CpuTime`]), and the
/// command line's options.
pub fn cpu_criterion() -> Criterion<CpuTime> {
    Criterion::default()
        .with_measurement(CpuTime)
        .configure_from_args()
}

/// Prints the head of a markdown table after an empty line: its `columns` (`| a | b |`) and
/// their `align`ment (`|---|---:|`).
pub fn print_table_head(columns: &str, align: &str) {
    println!();
    println!("{columns}");
    println!("{align}");
}

/// A table cell: `v` with `digits` decimals, or a dash where the figure is missing (a
/// benchmark that a filter left out).
pub fn cell(v: Option<f64>, digits: usize) -> String {
    v.map_or("–".into(), |v| format!("{v:.digits$}"))
}

/// Two functions' thread CPU times compared in alternating batches: see [`paired_ratio`].
#[derive(Clone, Copy, Debug)]
pub struct Paired {
    /// The median of the pairs' ratios.
    pub median: f64,
    /// The ratio of each function's fastest batch: the least disturbed figure of each, where
    /// a core shared with another thread slows the two by different amounts.
    pub best: f64,
}

/// `a`'s thread CPU time over `b`'s, measured in alternating batches (which of the two goes
/// first alternating too) for about `budget` of CPU time. On a shared machine a slow phase
/// lasts longer than a pair, so it falls on both sides of one; criterion's means, taken
/// seconds apart, carry it into the ratio of the two.
pub fn paired_ratio(budget: Duration, mut a: impl FnMut(), mut b: impl FnMut()) -> Paired {
    let time = |f: &mut dyn FnMut(), calls: u64| {
        let start = thread_cpu_nanos();
        for _ in 0..calls {
            f();
        }
        (thread_cpu_nanos() - start).max(1)
    };
    // Batches of at least 200 µs, from one warm call of each.
    a();
    b();
    let one = time(&mut a, 1).max(time(&mut b, 1));
    let calls = (200_000 / one).max(1);
    let (mut ratios, mut spent, mut best) = (Vec::new(), 0, (u64::MAX, u64::MAX));
    while ratios.len() < 5 || (spent < budget.as_nanos() as u64 && ratios.len() < 1001) {
        let (ta, tb) = match ratios.len() % 2 {
            0 => (time(&mut a, calls), time(&mut b, calls)),
            _ => {
                let tb = time(&mut b, calls);
                (time(&mut a, calls), tb)
            }
        };
        spent += ta + tb;
        best = (best.0.min(ta), best.1.min(tb));
        ratios.push(ta as f64 / tb as f64);
    }
    ratios.sort_by(f64::total_cmp);
    Paired {
        median: ratios[ratios.len() / 2],
        best: best.0 as f64 / best.1 as f64,
    }
}

/// Criterion's options that take a value (criterion 0.5's command line), which a filter
/// must not be mistaken for.
const OPTIONS_WITH_VALUES: &[&str] = &[
    "-c",
    "--color",
    "-s",
    "--save-baseline",
    "-b",
    "--baseline",
    "--baseline-lenient",
    "--format",
    "--profile-time",
    "--load-baseline",
    "--sample-size",
    "--warm-up-time",
    "--measurement-time",
    "--nresamples",
    "--noise-threshold",
    "--confidence-level",
    "--significance-level",
    "--plotting-backend",
    "--output-format",
];

/// The filter of the command line as criterion reads it: the first argument that is not an
/// option or an option's value (`--profile-time 6` is no filter "6"), if any. A benchmark
/// that builds its cases lazily asks it which to build.
pub fn command_line_filter() -> Option<String> {
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if OPTIONS_WITH_VALUES.contains(&a.as_str()) {
            args.next();
        } else if !a.starts_with('-') {
            return Some(a);
        }
    }
    None
}

/// Minor page faults per call of `f`, over `calls` calls after one to warm up.
pub fn faults_per_call(calls: u64, mut f: impl FnMut()) -> f64 {
    f();
    let before = thread_minor_faults();
    for _ in 0..calls {
        f();
    }
    (thread_minor_faults() - before) as f64 / calls as f64
}
