//! The committed fuzz corpus, replayed on stable: every input under `fuzz/corpus/<target>/`
//! goes through the same checks as under `cargo fuzz` (`bloomwire_fuzz_checks`), with heap
//! use measured by a counting allocator: `cargo test -p bloomwire-fuzz-checks --test
//! fuzz_corpus` (the workspace's `cargo test --all-features` runs it too).
//!
//! The seed inputs derived from the spec's test vectors are checked to be present and up to
//! date; after the vectors change, write them again with
//! `BLOOMWIRE_WRITE_SEEDS=1 cargo test -p bloomwire-fuzz-checks --test fuzz_corpus`.

use std::path::{Path, PathBuf};

use bloomwire_fuzz_checks::{self as fuzzing, Measured, Meter};
use bloomwire_testkit::{peak_during, CountingAllocator};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// The counting allocator as a [`Meter`]. Time is not reported: a test does not assert
/// timing (the fuzz targets do, with a generous linear bound).
struct HeapMeter;

impl Meter for HeapMeter {
    fn measure(&self, f: &mut dyn FnMut()) -> Option<Measured> {
        let ((), peak_bytes, _) = peak_during(f);
        Some(Measured {
            peak_bytes,
            nanos: 0,
        })
    }
}

fn fuzz_dir() -> PathBuf {
    // This package is fuzz/checks; the corpus is the fuzz crate's, fuzz/corpus.
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = fuzz_dir().join("corpus").join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect()
}

#[test]
fn seeds_from_the_spec_vectors_are_in_the_corpus() {
    let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec/vectors");
    let seeds = fuzzing::seeds(&vectors).unwrap();
    let write = std::env::var_os("BLOOMWIRE_WRITE_SEEDS").is_some();
    for (target, name, bytes) in &seeds {
        let path = fuzz_dir()
            .join("corpus")
            .join(target)
            .join(format!("seed-{name}"));
        if write {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, bytes).unwrap();
        }
        let committed = std::fs::read(&path).unwrap_or_default();
        assert!(
            &committed == bytes,
            "{} is missing or stale; run BLOOMWIRE_WRITE_SEEDS=1 cargo test -p bloomwire-fuzz-checks --test fuzz_corpus",
            path.display()
        );
    }
    // No stale seeds either (inputs the fuzzer found are named by their hash, not seed-).
    for (target, _) in fuzzing::TARGETS {
        for (path, _) in corpus(target) {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if let Some(seed) = name.strip_prefix("seed-") {
                assert!(
                    seeds.iter().any(|(t, n, _)| *t == target && n == seed),
                    "{} is no longer a seed; delete it",
                    path.display()
                );
            }
        }
    }
}

#[test]
fn every_target_has_a_corpus() {
    for (target, _) in fuzzing::TARGETS {
        assert!(
            corpus(target).len() >= 4,
            "fuzz/corpus/{target} has fewer than 4 inputs"
        );
    }
}

fn replay(target: &str) {
    let (_, run) = fuzzing::TARGETS
        .iter()
        .find(|(t, _)| *t == target)
        .expect("a target");
    for (path, bytes) in corpus(target) {
        let outcome = std::panic::catch_unwind(|| run(&bytes, &HeapMeter));
        assert!(outcome.is_ok(), "{} fails its checks", path.display());
    }
}

#[test]
fn replay_decode_frame() {
    replay("decode_frame");
}

#[test]
fn replay_forge_tagged() {
    replay("forge_tagged");
}

#[test]
fn replay_kernel_twins() {
    replay("kernel_twins");
}

#[test]
fn replay_decode_counting() {
    replay("decode_counting");
}

#[test]
fn replay_round_trip() {
    replay("round_trip");
}

#[test]
fn replay_apply_delta() {
    replay("apply_delta");
}

#[test]
fn replay_receiver_stream() {
    replay("receiver_stream");
}

#[test]
fn replay_optimizer() {
    replay("optimizer");
}
