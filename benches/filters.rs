//! Insert and query throughput of bloomwire's hash families and layouts, side by side with
//! the `fastbloom` and `bloomfilter` crates.
//!
//! Every filter has m = 10,000,000 bits and k = 7 hash functions and takes the same
//! n = 1,000,000 8-byte keys (splitmix64 of a counter). `contains` runs over n probes, half
//! members and half non-members, interleaved.
//!
//! Run with `cargo bench -p bloomwire-benches --bench filters`.

use std::hint::black_box;
use std::time::Duration;

use bloomwire::{BaseHash, BloomFilter, HashCount, HashFamily, IndexScheme, Layout, Params};
use bloomwire_testkit::splitmix64;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};

const M: u64 = 10_000_000;
const K: u32 = 7;
const N: usize = 1_000_000;

fn keys(seed: u64, count: usize) -> Vec<[u8; 8]> {
    let mut state = seed;
    (0..count)
        .map(|_| splitmix64(&mut state).to_le_bytes())
        .collect()
}

/// Half members (the even positions) and half non-members (the odd ones).
fn probes(members: &[[u8; 8]]) -> Vec<[u8; 8]> {
    let others = keys(0xDEAD_BEEF_0000_0001, members.len() / 2 + 1);
    members
        .iter()
        .step_by(2)
        .zip(&others)
        .flat_map(|(a, b)| [*a, *b])
        .take(members.len())
        .collect()
}

fn xxh64(scheme: IndexScheme) -> HashFamily {
    HashFamily::new(BaseHash::Xxh64 { seed: 0 }, scheme)
}

fn variants() -> Vec<(&'static str, Params)> {
    let k = HashCount::new(K).expect("k");
    let double = xxh64(IndexScheme::DoubleHashing);
    vec![
        (
            "bloomwire/xxh64-double",
            Params::standard(M, K, double).expect("params"),
        ),
        (
            "bloomwire/xxh64-enhanced",
            Params::standard(M, K, xxh64(IndexScheme::EnhancedDoubleHashing)).expect("params"),
        ),
        (
            "bloomwire/siphash24-double",
            Params::standard(
                M,
                K,
                HashFamily::new(
                    BaseHash::siphash(*b"bloomwire-bench!"),
                    IndexScheme::DoubleHashing,
                ),
            )
            .expect("params"),
        ),
        (
            "bloomwire/partitioned-xxh64-double",
            Params::new(M, Layout::Partitioned { k }, double).expect("params"),
        ),
        (
            "bloomwire/blocks-xxh64-double",
            Params::new(
                M,
                Layout::blocks_proportional(M, k).expect("layout"),
                double,
            )
            .expect("params"),
        ),
    ]
}

fn fastbloom_empty() -> fastbloom::BloomFilter {
    let f = fastbloom::BloomFilter::with_num_bits(M as usize)
        .seed(&7)
        .hashes(K);
    assert_eq!(f.num_hashes(), K);
    f
}

fn bloomfilter_empty() -> bloomfilter::Bloom<[u8; 8]> {
    // The crate derives k = round(m / n * ln 2) from its bitmap size (bytes) and item count:
    // 10,000,000 bits and 1,000,000 items give exactly k = 7.
    let f = bloomfilter::Bloom::new_with_seed((M / 8) as usize, N, &[7; 32]).expect("bloom");
    assert_eq!(f.number_of_hash_functions(), K);
    assert_eq!(f.len(), M);
    f
}

/// The group every benchmark of this file is in.
type Group<'a> = criterion::BenchmarkGroup<'a, criterion::measurement::WallTime>;

fn configure(c: &mut Criterion) -> Group<'_> {
    let mut g = c.benchmark_group("filters");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sampling_mode(criterion::SamplingMode::Flat)
        .throughput(Throughput::Elements(N as u64));
    g
}

/// Times inserting every member into a new filter from `empty` with `insert`, as
/// `insert/{name}`.
fn bench_inserts<F>(
    g: &mut Group<'_>,
    name: &str,
    members: &[[u8; 8]],
    empty: impl Fn() -> F,
    insert: impl Fn(&mut F, &[u8; 8]),
) {
    g.bench_function(format!("insert/{name}"), |b| {
        b.iter_batched_ref(
            &empty,
            |f| {
                for key in members {
                    insert(f, key);
                }
            },
            BatchSize::LargeInput,
        )
    });
}

fn bench_insert(c: &mut Criterion) {
    let members = keys(1, N);
    let mut g = configure(c);
    for (name, params) in variants() {
        let empty = || BloomFilter::new(params.clone());
        bench_inserts(&mut g, name, &members, empty, |f, key| f.insert(key));
    }
    bench_inserts(&mut g, "fastbloom", &members, fastbloom_empty, |f, key| {
        f.insert(key);
    });
    bench_inserts(
        &mut g,
        "bloomfilter",
        &members,
        bloomfilter_empty,
        |f, key| f.set(key),
    );
    g.finish();
}

fn bench_contains(c: &mut Criterion) {
    let members = keys(1, N);
    let probes = probes(&members);
    let mut g = configure(c);
    for (name, params) in variants() {
        let mut f = BloomFilter::new(params);
        for key in &members {
            f.insert(key);
        }
        let hits = probes.iter().filter(|p| f.contains(p)).count();
        println!(
            "{name}: zero fraction {:.4}, {hits} of {} probes positive",
            f.fraction_of_zeros(),
            probes.len()
        );
        g.bench_function(format!("contains/{name}"), |b| {
            b.iter(|| probes.iter().filter(|p| f.contains(black_box(p))).count())
        });
    }
    let mut fb = fastbloom_empty();
    for key in &members {
        fb.insert(key);
    }
    let hits = probes.iter().filter(|p| fb.contains(*p)).count();
    println!("fastbloom: {hits} of {} probes positive", probes.len());
    g.bench_function("contains/fastbloom", |b| {
        b.iter(|| probes.iter().filter(|p| fb.contains(black_box(*p))).count())
    });
    let mut bf = bloomfilter_empty();
    for key in &members {
        bf.set(key);
    }
    let hits = probes.iter().filter(|p| bf.check(p)).count();
    println!("bloomfilter: {hits} of {} probes positive", probes.len());
    g.bench_function("contains/bloomfilter", |b| {
        b.iter(|| probes.iter().filter(|p| bf.check(black_box(p))).count())
    });
    g.finish();
}

criterion_group!(benches, bench_insert, bench_contains);
criterion_main!(benches);
