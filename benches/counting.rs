//! Encode and decode throughput of counting-filter frames (filter type 3): packed counters,
//! known-table and adaptive range-coded counters, on a standard filter of m = 160,000
//! counters with k = 2 and n = 10,000 keys, with 4-bit and 8-bit counters. Throughput is in
//! counters per second.
//!
//! Run with `cargo bench -p bloomwire-benches --bench counting`.

use std::hint::black_box;
use std::time::Duration;

use bloomwire::{CounterCoding, CountingBloomFilter, Decoded, Encoder, HashFamily, Limits, Params};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const M: u64 = 160_000;
const N: u32 = 10_000;

fn filter(width: u8) -> CountingBloomFilter {
    let params = Params::standard(M, 2, HashFamily::default()).expect("params");
    let mut f = CountingBloomFilter::new(params, width).expect("width");
    for i in 0..N {
        f.insert(i.to_le_bytes());
    }
    f
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("counting");
    group
        .throughput(Throughput::Elements(M))
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1))
        .sample_size(20);
    for width in [4u8, 8] {
        let f = filter(width);
        for coding in CounterCoding::ALL {
            let frame = Encoder::new()
                .encode_with(&f, coding)
                .expect("a counter coding");
            let wire = frame.to_bytes();
            group.bench_function(format!("encode/{coding}/b{width}"), |b| {
                b.iter(|| {
                    Encoder::new()
                        .encode_with(black_box(&f), coding)
                        .expect("a counter coding")
                })
            });
            group.bench_function(format!("decode/{coding}/b{width}"), |b| {
                b.iter(|| {
                    bloomwire::decode::<Decoded<CountingBloomFilter>>(
                        black_box(&wire),
                        &Limits::default(),
                    )
                    .expect("ok")
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
