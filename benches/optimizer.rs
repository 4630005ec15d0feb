//! Time per plan: n in {10^4, 10^6, 10^9}, a budget of 8 bits per element.

use bloomwire::optimizer::Optimizer;
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};

fn plan(c: &mut Criterion) {
    let mut group = c.benchmark_group("plan");
    for (name, rational) in [("integer k", false), ("rational k", true)] {
        let opt = Optimizer::new().rational_k(rational);
        for n in [10_000u64, 1_000_000, 1_000_000_000] {
            // z = 8n bits = n bytes.
            group.bench_with_input(BenchmarkId::new(name, n), &n, |b, &n| {
                b.iter(|| opt.plan(black_box(n), black_box(n)).unwrap())
            });
        }
    }
    let opt = Optimizer::new();
    group.bench_function("dual f = 1%, n = 10^6", |b| {
        b.iter(|| {
            opt.plan_for_fpr(black_box(1_000_000), black_box(0.01))
                .unwrap()
        })
    });
    group.bench_function("delta c = 5%, n = 10^6", |b| {
        b.iter(|| opt.plan_delta(black_box(1_000_000), 0.05, 250_000).unwrap())
    });
    group.finish();
}

criterion_group!(benches, plan);
criterion_main!(benches);
