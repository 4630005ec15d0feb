//! The optimizer against the paper's tables, against simulation, and against bad input.
//!
//! The tables use the paper's idealised size model (`SizeModel::Ideal`: exactly `m H(p)`
//! bits, asymptotic p) through the same search code as real frames. Each printed figure is
//! asserted to the printed precision after recomputing it from the formulas.

use bloomwire::optimizer::{LayoutKind, Limit, Optimizer, SizeModel, TailBound};
use bloomwire::BitCoding;
use bloomwire::{BloomFilter, Encoder, Error, HashCount, Layout, Limits, Plan};
use bloomwire_testkit::SplitMix64;

/// Large enough that byte budgets resolve z/n to 1e-5 bits per element.
const N: u64 = 1_000_000;

fn k(k: u32) -> HashCount {
    HashCount::new(k).unwrap()
}

/// Asserts that `x` rounds to `printed` at the printed number of decimals.
#[track_caller]
fn prints_as(x: f64, printed: &str) {
    let decimals = printed.split('.').nth(1).map_or(0, str::len) as i32;
    let want: f64 = printed.parse().unwrap();
    let tol = 0.5 * 10f64.powi(-decimals) + 1e-12;
    assert!((x - want).abs() <= tol, "{x} does not print as {printed}");
}

/// The ideal optimizer with k fixed and m on a grid of `step` bits per element (m/n up to
/// 1000, beyond the default receiver's limits).
fn ideal(k_fixed: u32, m_per_n_step: f64, max_m_per_n: f64) -> Optimizer {
    Optimizer::new()
        .limits(Limits::unlimited())
        .size_model(SizeModel::Ideal)
        .k_range(k(k_fixed), k(k_fixed))
        .m_multiple_of((m_per_n_step * N as f64) as u64)
        .max_m((max_m_per_n * N as f64) as u64)
}

/// A budget of `z_per_n` bits per element, in bytes.
fn budget(z_per_n: f64) -> u64 {
    (z_per_n * N as f64 / 8.0).round() as u64
}

#[track_caller]
fn row(plan: &Plan, m_per_n: f64, z_per_n: &str, f: &str) {
    assert_eq!(plan.m(), (m_per_n * N as f64) as u64, "{plan}");
    prints_as(plan.bits_per_element, z_per_n);
    prints_as(plan.false_positive_rate, f);
}

/// Budget z/n, the uncompressed column (m/n, k, f), and compressed rows (m/n, k, z/n, f).
type BudgetTable = (
    f64,
    (f64, u32, &'static str),
    &'static [(f64, u32, &'static str, &'static str)],
);

/// The standard filter (m/n, k) and rows (m/n grid, m/n, k, z/n, f).
type TargetTable = (
    (f64, u32),
    &'static [(f64, f64, u32, &'static str, &'static str)],
);

/// Tables I-III: a budget of z/n bits per element; for each k the paper gives m/n (the
/// largest that fits, or a smaller one it chose), z/n and f. The first column is the
/// uncompressed optimum for m = z.
#[test]
fn tables_one_to_three() {
    let tables: [BudgetTable; 3] = [
        (
            8.0,
            (8.0, 6, "0.0216"),
            &[(14.0, 2, "7.923", "0.0177"), (92.0, 1, "7.923", "0.0108")],
        ),
        (
            16.0,
            (16.0, 11, "0.000459"),
            &[
                (28.0, 4, "15.846", "0.000314"),
                (48.0, 3, "15.829", "0.000222"),
            ],
        ),
        (4.0, (4.0, 3, "0.147"), &[(7.0, 1, "3.962", "0.133")]),
    ];
    for (z, (raw_m, raw_k, raw_f), rows) in tables {
        for &(m, kk, zn, f) in rows {
            let plan = ideal(kk, 1.0, m).plan(N, budget(z)).unwrap();
            row(&plan, m, zn, f);
            assert_eq!(plan.coding, BitCoding::KnownP);
        }
        // The uncompressed column: the best raw filter within the same budget.
        let plan = Optimizer::new()
            .size_model(SizeModel::Ideal)
            .plan(N, budget(z))
            .unwrap();
        let raw = plan.uncompressed.unwrap();
        assert_eq!((raw.m, raw.k), ((raw_m * N as f64) as u64, k(raw_k)));
        prints_as(raw.false_positive_rate, raw_f);
        prints_as(8.0 * raw.bytes / N as f64, &format!("{z:.0}"));
    }
    // Where the budget binds, the m/n the paper prints for k = 2 (Table I), k = 4 (Table II)
    // and k = 1 (Table III) is the largest integer that fits. (For k = 1 in Table I, 96 fits;
    // the paper shows 92, which matches the k = 2 column's z/n.)
    for (z, kk, m) in [
        (8.0, 2, 14.0),
        (16.0, 4, 28.0),
        (4.0, 1, 7.0),
        (8.0, 1, 96.0),
    ] {
        let plan = ideal(kk, 1.0, 1000.0).plan(N, budget(z)).unwrap();
        assert_eq!(plan.m(), (m * N as f64) as u64, "z/n = {z}, k = {kk}");
    }
    // With the m/n limits of the tables the optimizer picks the paper's choice.
    for (z, max_m, kk) in [(8.0, 14, 2), (16.0, 28, 4), (4.0, 7, 1)] {
        let plan = Optimizer::new()
            .size_model(SizeModel::Ideal)
            .m_multiple_of(N)
            .max_m(max_m * N)
            .plan(N, budget(z))
            .unwrap();
        eprintln!("z/n = {z}, m/n <= {max_m}:\n{plan}\n");
        assert_eq!(plan.k(), k(kk));
    }
}

/// Tables IV and V: the same f as the uncompressed filter, fewer bits on the wire. The paper
/// rounds m/n to a grid that differs per column (0.1 for 12.6, 1 for 46, 0.5 for 37.5, 1 for
/// 93); with that grid the dual search returns the printed m/n. One printed f is off in the
/// last digit: Table IV, m/n = 12.6, k = 2 prints 0.0216 where `(1 - e^(-2/12.6))^2 =
/// 0.021542` rounds to 0.0215.
#[test]
fn tables_four_and_five() {
    let tables: [TargetTable; 2] = [
        (
            (8.0, 6),
            // Printed f = 0.0216 for m/n = 12.6, k = 2; the formula gives 0.021542, which
            // prints as 0.0215 (it is below the standard filter's 0.021577, as intended).
            &[
                (0.1, 12.6, 2, "7.582", "0.0215"),
                (1.0, 46.0, 1, "6.891", "0.0215"),
            ],
        ),
        (
            (16.0, 11),
            &[
                (0.5, 37.5, 3, "14.666", "0.000454"),
                (1.0, 93.0, 2, "13.815", "0.000453"),
            ],
        ),
    ];
    for ((std_m, std_k), rows) in tables {
        let standard = ideal(std_k, 1.0, std_m).plan(N, budget(std_m)).unwrap();
        let target = standard.uncompressed.unwrap().false_positive_rate;
        for &(step, m, kk, zn, f) in rows {
            let plan = ideal(kk, step, 1000.0).plan_for_fpr(N, target).unwrap();
            row(&plan, m, zn, f);
        }
    }
}

/// Tables VI and VII: deltas, c = 0.05 and 0.01.
///
/// Table VI prints the z/n (and z/(cn)) of its second and third columns swapped. From
/// `q = 2p(1 - p^c)` and `z/n = (m/n) H(q)`: m/n = 12, k = 3 gives 1.6532 (33.064 per changed
/// element), printed 1.6607 (33.214); m/n = 32, k = 2 gives 1.6607 (33.214), printed 1.6532
/// (33.064). The text's "theoretical prediction of 2066.5 bytes" for n = 10 000, m/n = 32,
/// k = 2 inherits the error: the formula gives 2075.9 bytes, which also sits closer to the
/// simulated mean of 2090. Both columns fit the standard filter's 1.6713, so the budget search
/// returns m/n = 12 and 32 with the corrected sizes.
#[test]
fn tables_six_and_seven() {
    for (c, cols) in [
        (
            0.05,
            [
                (12.0, 3, "1.6532", "33.064", "0.0108"),
                (32.0, 2, "1.6607", "33.214", "0.00367"),
            ],
        ),
        (
            0.01,
            [
                (16.0, 3, "0.4856", "48.56", "0.0050"),
                (48.0, 2, "0.4500", "45.00", "0.00167"),
            ],
        ),
    ] {
        let standard = ideal(5, 1.0, 8.0).plan_delta(N, c, N).unwrap();
        let (zn, f) = if c == 0.05 {
            ("1.6713", "0.0217")
        } else {
            ("0.4624", "0.0217")
        };
        row(&standard, 8.0, zn, f);
        let delta_budget = standard.worst_case_bytes;
        for (m, kk, zn, zcn, f) in cols {
            // Table VI: the largest m/n within the standard filter's delta size. Table VII:
            // the printed m/n as a limit (see below).
            let (limit, budget) = if c == 0.05 {
                (1000.0, delta_budget)
            } else {
                (m, budget(1.0))
            };
            let plan = ideal(kk, 1.0, limit).plan_delta(N, c, budget).unwrap();
            row(&plan, m, zn, f);
            // The paper computes z/(cn) from the rounded z/n (33.426 = 1.6713 / 0.05).
            prints_as(round4(plan.bits_per_element) / c, zcn);
        }
        // In Table VII the columns are not same-budget: the largest m/n within the standard
        // filter's 0.4624 is 13 for k = 3 and 57 for k = 2; the paper shows 16 (which needs
        // 0.4856 bits per element, more than the standard filter) and 48.
        if c == 0.01 {
            for (kk, m) in [(3, 13.0), (2, 57.0)] {
                let plan = ideal(kk, 1.0, 1000.0)
                    .plan_delta(N, c, delta_budget)
                    .unwrap();
                assert_eq!(plan.m(), (m * N as f64) as u64);
            }
        }
        // Last column: the standard filter's f with the smallest delta.
        let plan = ideal(2, 1.0, 1000.0)
            .plan_delta_for_fpr(N, c, standard.false_positive_rate)
            .unwrap();
        let zn = if c == 0.05 { "1.3124" } else { "0.3430" };
        row(&plan, 13.0, zn, "0.0203");
        let zcn = if c == 0.05 { "26.248" } else { "34.30" };
        prints_as(round4(plan.bits_per_element) / c, zcn);
    }
}

fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

/// Rational k at the Table I and II settings (same m limit).
///
/// With the false positive rate a rational filter really has, `(1 - p)^floor(k) (1 - r p)`,
/// the best rational k found is the integer one: by Bernoulli's inequality `1 - r p` is above
/// `(1 - p)^r`, so between two integers f lies above the geometric interpolation, and over
/// m/n from 1 to 40 the minimum over the 1/65536 grid is always at an integer. The gain only
/// appears under the approximation `f = (1 - p)^k` (Walther et al.'s Eq. 11), printed here for
/// comparison; the optimizer does not plan with it. The test asserts that enabling rational k
/// never loses and prints the measured gain.
#[test]
fn rational_k_against_integer_k() {
    use bloomwire::theory::{entropy, p_zero};
    for (z, max_m) in [(8.0, 14), (16.0, 28)] {
        let base = Optimizer::new()
            .size_model(SizeModel::Ideal)
            .max_m(max_m * N);
        let int = base.clone().plan(N, budget(z)).unwrap();
        let rat = base.rational_k(true).plan(N, budget(z)).unwrap();
        let gain = 1.0 - rat.false_positive_rate / int.false_positive_rate;
        // Under Eq. 11 the best k at m = max_m is where the budget binds.
        let mn = max_m as f64;
        let (mut lo, mut hi) = (int.k().to_f64(), int.k().to_f64() + 1.0);
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            if mn * entropy(p_zero(mid, 1.0, mn)) <= z {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let eq11 = (1.0 - p_zero(lo, 1.0, mn)).powf(lo);
        eprintln!(
            "z/n = {z}, m/n <= {max_m}: integer k = {} f = {:.6}; rational k = {} (m/n = {:.4}) \
             f = {:.6}, gain {:.3}%; under Eq. 11 k = {lo:.4} would give f = {eq11:.6} ({:.2}%)",
            int.k(),
            int.false_positive_rate,
            rat.k(),
            rat.m() as f64 / N as f64,
            rat.false_positive_rate,
            100.0 * gain,
            100.0 * (1.0 - eq11 / int.false_positive_rate)
        );
        assert!(rat.false_positive_rate <= int.false_positive_rate * (1.0 + 1e-12));
        assert!(rat.bits_per_element <= z + 1e-9);
        assert!(rat.m() <= max_m * N);
    }
}

/// The frame coding that carries a plan's coding.
struct Sim {
    overflows: u32,
    mean_frame: f64,
    sd_bits: f64,
}

/// Builds `trials` filters of the plan's parameters with n random keys each and encodes
/// them with the plan's coding (the measured p for known-p, as `Encoder` does by default).
fn simulate(plan: &Plan, trials: u32, seed: u64) -> Sim {
    let n = plan.n;
    let mut rng = SplitMix64(seed);
    let encoder = Encoder::new();
    let (mut overflows, mut sum, mut sum_bits, mut sum_bits2) = (0, 0.0, 0.0, 0.0);
    for _ in 0..trials {
        let mut f = BloomFilter::new(plan.params.clone());
        for _ in 0..n {
            f.insert(rng.next_key());
        }
        let frame = encoder.encode_with(&f, plan.coding).unwrap();
        let bytes = frame.encoded_len() as f64;
        if bytes > plan.worst_case_bytes as f64 {
            overflows += 1;
        }
        let bits = 8.0 * frame.header().payload_len as f64;
        sum += bytes;
        sum_bits += bits;
        sum_bits2 += bits * bits;
    }
    let t = f64::from(trials);
    let mean_bits = sum_bits / t;
    Sim {
        overflows,
        mean_frame: sum / t,
        sd_bits: (sum_bits2 / t - mean_bits * mean_bits).max(0.0).sqrt(),
    }
}

/// Real filters (built with `BloomFilter`) against the plan's worst case and mean.
#[test]
fn simulated_frames_fit_the_plan() {
    let n = 10_000;
    let cases: [(&str, Optimizer, f64, u32); 4] = [
        ("standard, integer k", Optimizer::new(), 1e-6, 300),
        ("standard, integer k", Optimizer::new(), 0.05, 400),
        (
            "partitioned, rational k",
            Optimizer::new()
                .layout(LayoutKind::Partitioned)
                .rational_k(true),
            1e-6,
            200,
        ),
        (
            "blocks, Bernstein",
            Optimizer::new()
                .layout(LayoutKind::Blocks)
                .tail_bound(TailBound::Bernstein),
            1e-6,
            200,
        ),
    ];
    for (i, (name, opt, eps, trials)) in cases.into_iter().enumerate() {
        // The paper's setting: 8 bits per element on the wire, m/n at most 14.
        let plan = opt.max_m(14 * n).epsilon(eps).plan(n, n).unwrap();
        let sim = simulate(&plan, trials, 0x5EED + i as u64);
        let rate = f64::from(sim.overflows) / f64::from(trials);
        eprintln!(
            "{name}, epsilon {eps}: m = {}, k = {}, {:?}; planned mean {:.1} / worst {} bytes; \
             simulated mean {:.1}, payload sd {:.1} bytes, {} of {trials} over",
            plan.m(),
            plan.k(),
            plan.coding,
            plan.expected_bytes,
            plan.worst_case_bytes,
            sim.mean_frame,
            sim.sd_bits / 8.0,
            sim.overflows
        );
        assert!(plan.worst_case_bytes <= n);
        if eps <= 1e-3 {
            assert_eq!(sim.overflows, 0, "{name}");
        } else {
            // Not grossly above epsilon: within three binomial standard deviations.
            let slack = 3.0 * (eps * (1.0 - eps) / f64::from(trials)).sqrt();
            assert!(rate <= eps + slack, "{name}: overflow rate {rate}");
        }
        let rel = (sim.mean_frame - plan.expected_bytes).abs() / plan.expected_bytes;
        assert!(
            rel < 2e-3,
            "{name}: mean {} vs {}",
            sim.mean_frame,
            plan.expected_bytes
        );
    }
}

#[test]
fn bad_input_is_a_typed_error() {
    let opt = Optimizer::new();
    let invalid = |r: Result<Plan, Error>, name: &str| match r {
        Err(Error::InvalidParameter { name: got, .. }) => assert_eq!(got, name),
        other => panic!("expected an invalid {name}, got {other:?}"),
    };
    invalid(opt.plan(0, 1000), "n");
    invalid(opt.plan_for_fpr(0, 0.01), "n");
    invalid(opt.clone().epsilon(f64::NAN).plan(100, 1000), "epsilon");
    invalid(opt.clone().epsilon(0.0).plan(100, 1000), "epsilon");
    invalid(opt.clone().epsilon(0.7).plan(100, 1000), "epsilon");
    for f in [0.0, 1.0, -0.1, f64::NAN, f64::INFINITY] {
        invalid(opt.plan_for_fpr(100, f), "target_fpr");
    }
    invalid(
        opt.clone().max_m(1000).plan_for_fpr(1000, 1e-30),
        "target_fpr",
    );
    for c in [0.0, 1.5, f64::NAN] {
        invalid(opt.plan_delta(100, c, 1000), "changed");
        invalid(opt.plan_delta_for_fpr(100, c, 0.01), "changed");
    }
    invalid(opt.clone().k_range(k(5), k(3)).plan(100, 1000), "k_range");
    let half = HashCount::from_f64(2.25).unwrap();
    let more = HashCount::from_f64(2.75).unwrap();
    invalid(opt.clone().k_range(half, more).plan(100, 1000), "k_range");
    invalid(
        opt.clone().m_multiple_of(0).plan(100, 1000),
        "m_multiple_of",
    );
    invalid(
        opt.clone()
            .power_of_two_m(true)
            .m_multiple_of(24)
            .plan(100, 1000),
        "m_multiple_of",
    );
    invalid(opt.clone().max_m(0).plan(100, 1000), "max_m");
    invalid(opt.clone().max_m(u64::MAX).plan(100, 1000), "max_m");

    // A budget nothing fits in says what the smallest frames are.
    match opt.plan(1000, 20) {
        Err(Error::OverBudget {
            budget,
            compressed,
            raw,
        }) => {
            assert_eq!(budget, 20);
            assert!(raw > 20 && compressed > 20, "{compressed} {raw}");
            let fits = opt.plan(1000, raw.min(compressed) as u64).unwrap();
            assert!(fits.worst_case_bytes as usize <= raw.min(compressed));
        }
        other => panic!("expected OverBudget, got {other:?}"),
    }
    assert!(matches!(opt.plan(1, 0), Err(Error::OverBudget { .. })));
    // Extreme but valid inputs do not panic.
    for n in [1, 7, 1 << 40] {
        let _ = opt.plan(n, u64::MAX);
        let _ = opt.plan(n, 64);
        let _ = opt.plan_for_fpr(n, 1e-12);
        let _ = opt.clone().rational_k(true).plan_delta(n, 1.0, 1 << 20);
    }
}

#[test]
fn constraints_are_respected() {
    let n = 100_000;
    let check = |opt: Optimizer, ok: &dyn Fn(&Plan) -> bool| {
        let plan = opt.plan(n, n).unwrap();
        assert!(plan.worst_case_bytes <= n, "{plan}");
        let raw = plan.uncompressed.unwrap();
        assert!(
            plan.false_positive_rate <= raw.false_positive_rate,
            "{plan}"
        );
        assert!(ok(&plan), "{plan}");
    };
    check(Optimizer::new().power_of_two_m(true), &|p| {
        p.m().is_power_of_two()
    });
    check(Optimizer::new().m_multiple_of(64).max_m(1 << 20), &|p| {
        p.m() % 64 == 0 && p.m() <= 1 << 20
    });
    check(
        Optimizer::new()
            .layout(LayoutKind::Partitioned)
            .rational_k(true),
        &|p| matches!(p.layout(), Layout::Partitioned { .. }),
    );
    check(Optimizer::new().layout(LayoutKind::Blocks), &|p| {
        matches!(p.layout(), Layout::Blocks { .. })
    });
    check(Optimizer::new().k_range(k(3), k(5)), &|p| {
        (3..=5).contains(&p.k().whole()) && p.k().is_integer()
    });

    // The dual: the least bytes for f = 2% are close to the paper's 1.24x over log2(1/f).
    let plan = Optimizer::new().plan_for_fpr(1_000_000, 0.02).unwrap();
    assert!(plan.false_positive_rate <= 0.02);
    let raw = plan.uncompressed.unwrap();
    eprintln!("f = 2%:\n{plan}");
    assert!(plan.bits_per_element < 8.0 * raw.bytes / 1e6);
    assert!(plan.bits_per_element < 7.2, "{}", plan.bits_per_element);

    // Where the uncompressed filter wins (a few keys, where the coder's words and margin
    // cost more than compression saves), the plan is the raw filter itself.
    let plan = Optimizer::new().plan(20, 40).unwrap();
    let raw = plan.uncompressed.unwrap();
    assert!(plan.false_positive_rate <= raw.false_positive_rate);
    if plan.coding == BitCoding::Raw {
        assert_eq!((plan.m(), plan.k()), (raw.m, raw.k));
    }
}

/// Plans stay within the receiver's limits (default `Limits::default()`, m at most 2^28):
/// constrained to fit, or refused with the m they would need and how to allow it.
#[test]
fn plans_stay_within_the_receivers_limits() {
    let defaults = Limits::default();
    // 20 million keys at 1%: without limits the sparse plan would take m of about 2^31.
    let plan = Optimizer::new().plan_for_fpr(20_000_000, 0.01).unwrap();
    assert!(plan.m() <= defaults.max_m, "{plan}");
    assert!(plan.false_positive_rate <= 0.01);
    assert_eq!(plan.receiver_bytes, plan.m().div_ceil(8));
    let wide = Optimizer::new()
        .limits(Limits::unlimited())
        .plan_for_fpr(20_000_000, 0.01)
        .unwrap();
    assert!(wide.m() > defaults.max_m, "{wide}");
    // A budget plan is constrained the same way.
    let plan = Optimizer::new().plan(20_000_000, 20_000_000).unwrap();
    assert!(plan.m() <= defaults.max_m);
    // Out of reach within the limits: refused, naming the m it needs.
    match Optimizer::new().plan_for_fpr(20_000_000, 1e-9) {
        Err(Error::PlanExceedsLimits {
            name: "max_m",
            needed,
            limit,
        }) => {
            assert_eq!(limit, defaults.max_m);
            assert!(needed > limit);
            // The least m that reaches the target with k <= 16: 50.0 bits a key, whose raw
            // payload is above max_payload too.
            let per_key = needed as f64 / 20e6;
            assert!((49.5..50.5).contains(&per_key), "{per_key}");
            let raised = Limits::new().max_m(needed);
            assert_eq!(
                Optimizer::new()
                    .limits(raised)
                    .plan_for_fpr(20_000_000, 1e-9),
                Err(Error::PlanExceedsLimits {
                    name: "max_payload",
                    needed: needed.div_ceil(8),
                    limit: defaults.max_payload
                })
            );
            let raised = Limits::new().max_m(needed).max_payload(needed.div_ceil(8));
            let plan = Optimizer::new()
                .limits(raised)
                .plan_for_fpr(20_000_000, 1e-9)
                .unwrap();
            assert!(plan.m() <= needed);
        }
        other => panic!("{other:?}"),
    }
    // An explicit max_m above the limits: m within both.
    let plan = Optimizer::new()
        .max_m(1 << 30)
        .plan_for_fpr(20_000_000, 0.01)
        .unwrap();
    assert!(plan.m() <= defaults.max_m);
    assert!(matches!(
        Optimizer::new()
            .max_m(1 << 30)
            .plan_for_fpr(20_000_000, 1e-9),
        Err(Error::PlanExceedsLimits { name: "max_m", .. })
    ));
    // The receiver's memory: refused naming max_filter_bytes when it is what binds.
    match Optimizer::new()
        .limits(Limits::new().max_filter_bytes(20_000))
        .plan_for_fpr(100_000, 0.01)
    {
        Err(Error::PlanExceedsLimits {
            name: "max_filter_bytes",
            needed,
            limit: 20_000,
        }) => {
            let plan = Optimizer::new()
                .limits(Limits::new().max_filter_bytes(needed))
                .plan_for_fpr(100_000, 0.01)
                .unwrap();
            assert!(plan.receiver_bytes <= needed, "{plan}");
        }
        other => panic!("{other:?}"),
    }
    // The limits' payload bound: a raw payload of at most max_payload bytes.
    let small = Limits::new().max_payload(1 << 10);
    let plan = Optimizer::new().limits(small).plan(100, 1 << 20).unwrap();
    assert!(plan.m() <= 8 << 10);
}

/// Every plan reports the receiver's memory; a counting plan its counters too.
#[test]
fn plans_report_the_receivers_memory() {
    let plan = Optimizer::new().plan_for_fpr(1_000_000, 0.01).unwrap();
    assert_eq!(plan.receiver_bytes, plan.m().div_ceil(8));
    assert!(plan
        .to_string()
        .contains(&format!("{} bytes of receiver memory", plan.receiver_bytes)));
    let counting = Optimizer::new().plan_counting(10_000, 4, 16_000).unwrap();
    assert_eq!(
        counting.receiver_bytes,
        counting.m() + counting.m().div_ceil(8)
    );
}

/// `coding(Raw)` plans an uncompressed filter: 4 097 keys at f = 1e-4 in about 10 KB
/// (19.2 bits a key, k = 13), not a sparse array of 5 MB sized for a coder.
#[test]
fn a_raw_plan_is_an_uncompressed_filter() {
    let plan = Optimizer::new()
        .coding(BitCoding::Raw)
        .plan_for_fpr(4_097, 1e-4)
        .unwrap();
    assert_eq!(plan.coding, BitCoding::Raw);
    assert_eq!(plan.k(), k(13));
    assert!(plan.false_positive_rate <= 1e-4);
    let m_per_n = plan.m() as f64 / 4_097.0;
    assert!((19.0..19.5).contains(&m_per_n), "{plan}");
    assert!(plan.worst_case_bytes < 10_000 + 32, "{plan}");
    assert_eq!(plan.receiver_bytes, plan.m().div_ceil(8));
    // The same budget plan: raw and within the budget.
    let plan = Optimizer::new()
        .coding(BitCoding::Raw)
        .plan(4_097, 10_000)
        .unwrap();
    assert_eq!(plan.coding, BitCoding::Raw);
    assert!(plan.worst_case_bytes <= 10_000);
    // A compressed coding asked for is the plan's coding.
    for coding in [BitCoding::Adaptive, BitCoding::KnownP] {
        let plan = Optimizer::new()
            .coding(coding)
            .plan_for_fpr(4_097, 1e-4)
            .unwrap();
        assert_eq!(plan.coding, coding);
    }
}

/// The default cap on k keeps plans on the sparse side: Table III's budget (z/n = 4,
/// m/n at most 7) gives k = 1, not its dense mirror k = 14 with about the same f and size;
/// `mirror_k(true)` allows it again.
#[test]
fn plans_do_not_take_the_dense_mirror_solution() {
    let n = 10_000;
    for model in [SizeModel::Ideal, SizeModel::Frame] {
        let o = Optimizer::new().size_model(model).max_m(7 * n);
        let plan = o.plan(n, n / 2).unwrap();
        if model == SizeModel::Ideal {
            assert_eq!(plan.k(), k(1), "{plan}");
        }
        assert!(
            plan.k().to_f64() <= std::f64::consts::LN_2 * 7.0 + 1.0,
            "{model:?}: {plan}"
        );
        let mirrored = o.mirror_k(true).plan(n, n / 2).unwrap();
        eprintln!(
            "{model:?}: capped k = {}, without the cap k = {}",
            plan.k(),
            mirrored.k()
        );
        assert!(mirrored.false_positive_rate <= plan.false_positive_rate);
    }
    // Every default plan keeps k <= ln 2 * m/n + 1.
    for (n, fpr) in [
        (1_000u64, 0.1),
        (10_000, 0.01),
        (100_000, 1e-4),
        (1_000, 1e-6),
    ] {
        let plan = Optimizer::new().plan_for_fpr(n, fpr).unwrap();
        let cap = std::f64::consts::LN_2 * plan.m() as f64 / n as f64 + 1.0;
        assert!(plan.k().to_f64() <= cap, "{plan}");
    }
}

// ---------------------------------------------------------------------------------------------
// What plans cost: memory beside bytes on the wire, memory caps, the frontier, bent plans.

/// The false positive rate of a plan's filter from the theory's formula (exact finite-m
/// zero probability), independently of the optimizer's evaluation.
fn theory_fpr(plan: &Plan) -> f64 {
    bloomwire::theory::false_positive_rate(&plan.params, plan.n as f64)
}

/// The memory cap holds, in bytes and in bits a key, for budgets, targets and deltas; a cap
/// that binds is named with the plan it kept the filter from.
#[test]
fn the_memory_cap_holds() {
    for n in [10_000u64, 1_000_000] {
        for cap in [n * 10 / 8, 2 * n, 4 * n, 8 * n] {
            let o = Optimizer::new().max_memory(cap);
            let target = o.plan_for_fpr(n, 0.01).unwrap();
            let budget = o.plan(n, n).unwrap();
            let delta = o.plan_delta_for_fpr(n, 0.05, 0.01).unwrap();
            for plan in [&target, &budget, &delta] {
                assert!(plan.memory().receiver <= cap, "cap {cap}: {plan}");
                assert_eq!(plan.memory().receiver, plan.receiver_bytes);
                assert!(plan.m() <= 8 * cap);
            }
            assert!(theory_fpr(&target) <= 0.01 * (1.0 + 1e-9), "{target}");
            assert!(budget.worst_case_bytes <= n);
            // The unconstrained plan for 1% takes 99.5 bits a key: every cap here binds.
            let bent = target.bent.expect("bent by the cap");
            assert_eq!(bent.limit, Limit::MaxMemory, "{target}");
            assert_eq!(bent.max_m, 8 * cap);
            assert!(bent.unconstrained.m > 8 * cap);
            assert!(bent.unconstrained.worst_case_bytes < target.worst_case_bytes);
        }
        for r in [9.6, 12.0, 20.0] {
            let plan = Optimizer::new()
                .max_bits_per_element(r)
                .plan_for_fpr(n, 0.01)
                .unwrap();
            assert!(plan.m() as f64 <= r * n as f64, "{plan}");
            assert!(theory_fpr(&plan) <= 0.01 * (1.0 + 1e-9));
            assert_eq!(plan.bent.unwrap().limit, Limit::MaxBitsPerElement);
        }
    }
    // The counting planner keeps its counters (a byte each) within the cap.
    let counting = Optimizer::new()
        .max_memory(100_000)
        .plan_counting(10_000, 4, 16_000)
        .unwrap();
    assert!(counting.m() <= 100_000);
    // Caps that leave nothing are refused.
    for o in [
        Optimizer::new().max_memory(0),
        Optimizer::new().max_bits_per_element(f64::NAN),
        Optimizer::new().max_bits_per_element(1e-9),
        Optimizer::new().churn(0.0),
    ] {
        assert!(
            matches!(
                o.plan_for_fpr(1_000, 0.01),
                Err(Error::InvalidParameter { .. })
            ),
            "{o:?}"
        );
    }
    // A target the cap puts out of reach names the cap, not the receiver's limits.
    match Optimizer::new()
        .max_memory(1_000)
        .plan_for_fpr(100_000, 0.01)
    {
        Err(Error::InvalidParameter { name, reason }) => {
            assert_eq!(name, "target_fpr");
            assert!(reason.contains("max_memory"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
}

/// Every plan of the frontier meets the target rate (by the theory's formula), keeps within
/// its memory cap, and trades memory for bytes on the wire.
#[test]
fn every_frontier_plan_meets_the_target() {
    for (n, target) in [
        (1_000_000u64, 0.01),
        (10_000, 1e-3),
        (100_000, 1.0 / 65_536.0),
        (5_000_000, 0.02),
    ] {
        let frontier = Optimizer::new().churn(0.01).frontier(n, target).unwrap();
        let least = Optimizer::new()
            .coding(BitCoding::Raw)
            .plan_for_fpr(n, target)
            .unwrap();
        // The memory-optimal point is the standard filter's m: about n ln(1/f) / ln(2)^2.
        let first = &frontier[0];
        assert_eq!(first.memory_factor, Some(1));
        assert_eq!(first.plan.m(), least.m());
        let standard = n as f64 * (1.0 / target).ln() / std::f64::consts::LN_2.powi(2);
        assert!((least.m() as f64 / standard - 1.0).abs() < 0.03, "{least}");
        assert_eq!(frontier.last().unwrap().memory_factor, None);
        for point in &frontier {
            let plan = &point.plan;
            assert!(theory_fpr(plan) <= target * (1.0 + 1e-9), "{plan}");
            assert!(plan.false_positive_rate <= target);
            if let Some(factor) = point.memory_factor {
                assert!(plan.m() <= u64::from(factor) * least.m(), "{plan}");
            }
            let delta = plan.delta.unwrap();
            assert!(delta.worst_case_bytes < plan.worst_case_bytes);
        }
        for pair in frontier.windows(2) {
            let (a, b) = (&pair[0].plan, &pair[1].plan);
            assert!(a.m() <= b.m() && a.worst_case_bytes >= b.worst_case_bytes);
        }
        let most = &frontier.last().unwrap().plan;
        assert!(most.worst_case_bytes < first.plan.worst_case_bytes);
    }
    // 1M keys at 1%: the table of the README. Full frames 16% smaller, deltas half the
    // size, at 10 times the memory.
    let frontier = Optimizer::new()
        .churn(0.01)
        .frontier(1_000_000, 0.01)
        .unwrap();
    let ks: Vec<u32> = frontier.iter().map(|p| p.plan.k().whole()).collect();
    assert_eq!(ks, [7, 2, 2, 1]);
    let (least, most) = (&frontier[0].plan, &frontier[3].plan);
    let wire = most.expected_bytes / least.expected_bytes;
    let deltas = most.delta.unwrap().expected_bytes / least.delta.unwrap().expected_bytes;
    let memory = most.memory().receiver as f64 / least.memory().receiver as f64;
    assert!((0.83..0.85).contains(&wire), "{wire}");
    assert!((0.45..0.5).contains(&deltas), "{deltas}");
    assert!((10.0..10.5).contains(&memory), "{memory}");
    // A memory cap of the optimizer caps the frontier too.
    let capped = Optimizer::new()
        .max_memory(2_000_000)
        .frontier(1_000_000, 0.01)
        .unwrap();
    assert!(capped.iter().all(|p| p.plan.memory().receiver <= 2_000_000));
    assert_eq!(capped.len(), 2);
}

/// A plan that a limit on m holds away from its optimum says which limit, and the optimum.
#[test]
fn a_bent_plan_reports_its_limit() {
    // The default receiver's 2^28 bits: 10^7 keys at 1%, and 10^6 keys at 2^-16.
    for (n, target) in [(10_000_000u64, 0.01), (1_000_000, 1.0 / 65_536.0)] {
        let plan = Optimizer::new().plan_for_fpr(n, target).unwrap();
        let bent = plan.bent.expect("bent by the receiver's max_m");
        assert_eq!(bent.limit, Limit::MaxM);
        assert_eq!(bent.max_m, Limits::default().max_m);
        let u = bent.unconstrained;
        assert!(u.m > bent.max_m && u.worst_case_bytes < plan.worst_case_bytes);
        assert!(u.false_positive_rate <= target);
        assert_eq!(u.receiver_bytes, u.m.div_ceil(8));
        // The unconstrained plan is the plan of an optimizer without the limit.
        let wide = Optimizer::new()
            .limits(Limits::unlimited().max_k(Limits::default().max_k))
            .plan_for_fpr(n, target)
            .unwrap();
        assert_eq!((wide.m(), wide.k(), wide.coding), (u.m, u.k, u.coding));
        assert_eq!(wide.worst_case_bytes, u.worst_case_bytes);
        assert_eq!(wide.bent, None);
        assert!(plan.to_string().contains("held by max_m"), "{plan}");
    }
    // The receiver's memory limit, named as such.
    let plan = Optimizer::new()
        .limits(Limits::new().max_filter_bytes(1_500_000))
        .plan_for_fpr(1_000_000, 0.01)
        .unwrap();
    assert!(plan.receiver_bytes <= 1_500_000);
    assert_eq!(plan.bent.unwrap().limit, Limit::MaxFilterBytes);
    // The optimizer's own max_m, for a budget: a higher rate than without it.
    let plan = Optimizer::new()
        .max_m(14 * 10_000)
        .plan(10_000, 10_000)
        .unwrap();
    let bent = plan.bent.unwrap();
    assert_eq!((bent.limit, bent.max_m), (Limit::PlanMaxM, 140_000));
    assert!(bent.unconstrained.false_positive_rate < plan.false_positive_rate);
    // Plans at their optimum say nothing.
    for plan in [
        Optimizer::new().plan_for_fpr(1_000_000, 0.01).unwrap(),
        Optimizer::new().plan(10_000, 10_000).unwrap(),
        Optimizer::new()
            .max_memory(1 << 30)
            .plan_for_fpr(1_000_000, 0.01)
            .unwrap(),
    ] {
        assert_eq!(plan.bent, None, "{plan}");
    }
}

/// The memory a plan reports is what the library's filters hold, and its delta figures
/// bound a real delta.
#[test]
fn reported_memory_and_deltas_match_real_filters() {
    use bloomwire::{CountingBloomFilter, Sender};
    let n = 100_000u64;
    let plan = Optimizer::new().churn(0.01).plan_for_fpr(n, 0.01).unwrap();
    let memory = plan.memory();
    let mut filter = BloomFilter::new(plan.params.clone());
    let counting = CountingBloomFilter::new(plan.params.clone(), 4).unwrap();
    assert_eq!(
        counting.counters().len() as u64 + memory.receiver,
        memory.counting_sender
    );
    assert_eq!(filter.bits().byte_len() as u64, memory.receiver);
    // (held in 64-bit words: at most 7 bytes more)
    assert!(filter.bits().words().len() as u64 * 8 - memory.receiver < 8);
    for i in 0..n {
        filter.insert(i.to_le_bytes());
    }
    let mut sender = Sender::new(Encoder::new(), 100);
    let full = sender.next_frame(&filter).unwrap().to_bytes();
    assert!(full.len() as u64 <= plan.worst_case_bytes);
    // 1% of the keys replaced: a fresh filter of the new key set.
    let mut next = BloomFilter::new(plan.params.clone());
    for i in n / 100..n + n / 100 {
        next.insert(i.to_le_bytes());
    }
    let delta = sender.next_frame(&next).unwrap().to_bytes();
    let planned = plan.delta.unwrap();
    assert!(
        delta.len() as u64 <= planned.worst_case_bytes,
        "{}",
        delta.len()
    );
    let off = delta.len() as f64 / planned.expected_bytes - 1.0;
    assert!(
        off.abs() < 0.03,
        "{} vs {}",
        delta.len(),
        planned.expected_bytes
    );
    // A delta plan reports its own figures as its deltas.
    let plan = Optimizer::new().plan_delta_for_fpr(n, 0.01, 0.01).unwrap();
    let d = plan.delta.unwrap();
    assert_eq!(
        (d.changed, d.worst_case_bytes),
        (0.01, plan.worst_case_bytes)
    );
}
