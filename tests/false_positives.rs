//! Measured false positive rates against theory, with fixed seeds.
//!
//! Each measurement is compared with the rate expected *for the filter at hand*, computed
//! from its measured fill (e.g. `(ones / m)^k` for a standard filter), which removes the
//! filter-to-filter variance and leaves the binomial sampling error of the queries plus the
//! (small) effect of deriving k indexes from two hashes. Run with `--nocapture` to see the
//! figures next to the asymptotic formulas.

use bloomwire::filter::block_sizes;
use bloomwire::{
    theory, BaseHash, BloomFilter, HashCount, HashFamily, IndexScheme, Layout, Params,
};

fn key(i: u64) -> [u8; 8] {
    i.to_le_bytes()
}

/// Fraction of one bits in `[start, start + len)`.
fn ones(f: &BloomFilter, start: u64, len: u64) -> f64 {
    (start..start + len).filter(|&i| f.bits().get(i)).count() as f64 / len as f64
}

/// False positive rate of a rational-k region whose bits are one with probability `o`.
fn rational(o: f64, k: HashCount) -> f64 {
    let r = k.to_f64() - k.whole() as f64;
    o.powi(k.whole() as i32) * (1.0 - r * (1.0 - o))
}

/// The false positive rate expected for this filter given its fill.
fn conditional_fpr(f: &BloomFilter) -> f64 {
    let m = f.m();
    match f.params().layout() {
        Layout::Standard { k } => rational(ones(f, 0, m), *k),
        Layout::Partitioned { k } => {
            let parts = u64::from(k.ceil());
            let s = m / parts;
            let full: f64 = (0..u64::from(k.whole()))
                .map(|i| ones(f, i * s, s))
                .product();
            let r = k.to_f64() - k.whole() as f64;
            let last = if r > 0.0 {
                1.0 - r * (1.0 - ones(f, (parts - 1) * s, s))
            } else {
                1.0
            };
            full * last
        }
        Layout::Blocks { ks } => {
            let mut offset = 0;
            block_sizes(m)
                .zip(ks)
                .map(|(size, k)| {
                    let o = ones(f, offset, size);
                    offset += size;
                    rational(o, *k)
                })
                .product()
        }
    }
}

/// Insert `n` keys, query `queries` others; returns (measured, expected for this filter).
fn measure(params: Params, n: u64, queries: u64, salt: u64) -> (f64, f64) {
    let mut f = BloomFilter::new(params);
    let base = salt << 40;
    for i in 0..n {
        f.insert(key(base + i));
    }
    assert!((0..n).all(|i| f.contains(key(base + i))), "false negative");
    let hits = (0..queries)
        .filter(|i| f.contains(key(base + (1 << 39) + i)))
        .count();
    (hits as f64 / queries as f64, conditional_fpr(&f))
}

fn assert_close(label: &str, measured: f64, expected: f64, queries: u64) {
    let sigma = (expected * (1.0 - expected) / queries as f64).sqrt();
    let tolerance = 5.0 * sigma + 0.03 * expected;
    assert!(
        (measured - expected).abs() <= tolerance,
        "{label}: measured {measured:.6}, expected {expected:.6} (tolerance {tolerance:.6})"
    );
}

fn families() -> Vec<(&'static str, HashFamily)> {
    vec![
        (
            "xxh64/double",
            HashFamily::new(BaseHash::Xxh64 { seed: 1 }, IndexScheme::DoubleHashing),
        ),
        (
            "xxh64/enhanced",
            HashFamily::new(
                BaseHash::Xxh64 { seed: 2 },
                IndexScheme::EnhancedDoubleHashing,
            ),
        ),
        (
            "siphash/double",
            HashFamily::new(BaseHash::siphash([7; 16]), IndexScheme::DoubleHashing),
        ),
    ]
}

/// Kirsch and Mitzenmacher, Section 8: c = m/n in {4, 8, 12, 16}, k the better of
/// floor/ceil(c ln 2), n = 5000 and a larger n, for each family and layout.
#[test]
fn kirsch_mitzenmacher_grid_matches_theory() {
    let queries = 400_000;
    for n in [5_000u64, 50_000] {
        for c in [4u64, 8, 12, 16] {
            let m = c * n;
            let ideal = c as f64 * std::f64::consts::LN_2;
            let k = [ideal.floor().max(1.0), ideal.ceil()]
                .into_iter()
                .min_by(|a, b| {
                    theory::fpr(*a, n as f64, m as f64)
                        .total_cmp(&theory::fpr(*b, n as f64, m as f64))
                })
                .unwrap() as u32;
            let hk = HashCount::new(k).unwrap();
            let mut layouts: Vec<(String, Params)> = families()
                .into_iter()
                .map(|(name, fam)| {
                    (
                        name.to_string(),
                        Params::new(m, Layout::Standard { k: hk }, fam).unwrap(),
                    )
                })
                .collect();
            let fam = families()[0].1;
            layouts.push((
                "partitioned".into(),
                Params::new(m, Layout::Partitioned { k: hk }, fam).unwrap(),
            ));
            layouts.push((
                "blocks".into(),
                Params::new(m, Layout::blocks_proportional(m, hk).unwrap(), fam).unwrap(),
            ));
            for (salt, (name, params)) in layouts.into_iter().enumerate() {
                let asymptotic = theory::false_positive_rate(&params, n as f64);
                let (measured, expected) = measure(params, n, queries, salt as u64 + c);
                eprintln!(
                    "n={n:6} c={c:2} k={k:2} {name:15} measured {measured:.6} for-this-filter {expected:.6} theory {asymptotic:.6}"
                );
                assert_close(&format!("n={n} c={c} {name}"), measured, expected, queries);
                // And the filter itself is typical: within 25% of the asymptotic rate.
                assert!(
                    (measured / asymptotic - 1.0).abs() < 0.25,
                    "{name}: {measured} vs {asymptotic}"
                );
            }
        }
    }
}

/// Walther et al.'s Figure 7 setting: m = 8192 and m = 131072, k between integers. The
/// measured rate of a rational k follows `(1-p)^floor(k) (1 - r p)` (which is what the
/// construction gives), not `(1-p)^k`; with that, a rational k does not beat the better
/// integer neighbour at the same m and n. Printed for the record, asserted against theory.
#[test]
fn rational_k_against_integer_neighbours() {
    let fam = HashFamily::default();
    for m in [8192u64, 131_072] {
        let n = m / 5; // c = 5: optimal real k = 5 ln 2 = 3.47
        let mut results = Vec::new();
        for k in [3.0, 3.25, 3.47, 3.75, 4.0] {
            let hk = HashCount::from_f64(k).unwrap();
            let params = Params::new(m, Layout::Standard { k: hk }, fam).unwrap();
            let (mut measured, mut expected) = (0.0, 0.0);
            let trials = 20;
            let queries = 100_000;
            for t in 0..trials {
                let (a, b) = measure(params.clone(), n, queries, 1000 + t);
                measured += a / trials as f64;
                expected += b / trials as f64;
            }
            let p = theory::p_zero(k, n as f64, m as f64);
            eprintln!(
                "m={m:6} n={n:5} k={k:4}: measured {measured:.5}, (1-p)^floor(k)(1-rp) {:.5}, Walther's (1-p)^k {:.5}",
                theory::fpr_given_p(k, p),
                (1.0 - p).powf(k)
            );
            assert_close(
                &format!("m={m} k={k}"),
                measured,
                expected,
                queries * trials,
            );
            results.push((k, measured));
        }
        let best_integer = results
            .iter()
            .filter(|(k, _)| k.fract() == 0.0)
            .map(|r| r.1)
            .fold(f64::MAX, f64::min);
        let best_rational = results
            .iter()
            .filter(|(k, _)| k.fract() != 0.0)
            .map(|r| r.1)
            .fold(f64::MAX, f64::min);
        eprintln!("m={m}: best integer {best_integer:.5}, best rational {best_rational:.5}");
        // No gain beyond noise: the rational construction's rate is a convex combination.
        assert!(best_rational > best_integer * 0.97);
    }
}

/// The default index scheme at small n and large k (Kirsch and Mitzenmacher, Section 8):
/// m/n = 16, n = 5 000, k = 11. Plain double hashing measures about 4% above the false
/// positive rate its filters' fill predicts, enhanced double hashing (the default) within
/// the error of the measurement. 200 filters of 250 000 queries each for the default: about
/// 23 000 false positives, a relative standard error of 0.66% (measured +0.35% with 400
/// filters, double hashing +4.11%); 100 filters for double hashing.
#[test]
fn the_default_index_scheme_keeps_its_false_positive_rate_at_small_n() {
    assert_eq!(
        HashFamily::default().scheme,
        IndexScheme::EnhancedDoubleHashing
    );
    let (n, m, k) = (5_000u64, 80_000u64, 11);
    let queries = 250_000u64;
    let excess = |family: HashFamily, filters: u64| {
        let params = Params::standard(m, k, family).unwrap();
        let (mut hits, mut expected) = (0.0, 0.0);
        for salt in 0..filters {
            let (measured, predicted) = measure(params.clone(), n, queries, salt + 1);
            hits += measured;
            expected += predicted;
        }
        hits / expected - 1.0
    };
    let default = excess(HashFamily::default(), 200);
    let double = excess(
        HashFamily::new(BaseHash::Xxh64 { seed: 0 }, IndexScheme::DoubleHashing),
        100,
    );
    eprintln!(
        "m/n = 16, n = 5000, k = 11: enhanced {:+.2}%, double {:+.2}% against the fill's rate",
        100.0 * default,
        100.0 * double
    );
    assert!(default.abs() < 0.015, "enhanced: {default}");
    // The measurement resolves the difference the default is chosen for.
    assert!(double > 0.02, "double: {double}");
}
