//! `bloomwire plan` states what a plan costs: memory beside bytes on the wire, a memory cap
//! (`--max-memory`, `--max-bits-per-element`), the frontier (`--frontier`) and the limit
//! that bent a plan.

use std::process::{Command, Output};

use bloomwire::theory;
use serde_json::Value;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bloomwire"))
        .args(args)
        .output()
        .unwrap()
}

/// The standard output of a command that must succeed.
fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The standard error of a command that must fail.
fn fails(args: &[&str]) -> String {
    let out = run(args);
    assert!(!out.status.success(), "{args:?} succeeded");
    String::from_utf8(out.stderr).unwrap()
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&ok(args)).unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

/// The false positive rate of a plan's filter from the theory's formula.
fn theory_fpr(plan: &Value, n: f64) -> f64 {
    theory::fpr_exact(f(&plan["k"]), n, u(&plan["m"]) as f64)
}

/// The memory the program reports is a function of m, and names each side.
fn check_memory(plan: &Value) {
    let m = u(&plan["m"]);
    let memory = &plan["memory"];
    assert_eq!(u(&memory["receiver"]), m.div_ceil(8));
    assert_eq!(u(&memory["receiver"]), u(&plan["receiver_bytes"]));
    assert_eq!(u(&memory["sender"]), m.div_ceil(8));
    assert_eq!(u(&memory["delta_sender"]), 2 * m.div_ceil(8));
    assert_eq!(u(&memory["counting_sender"]), m + m.div_ceil(8));
}

#[test]
fn every_frontier_plan_meets_the_target() {
    for (n, fpr) in [
        ("1000000", 0.01f64),
        ("20000", 0.001),
        ("300000", 1.0 / 65536.0),
    ] {
        let fpr_arg = fpr.to_string();
        let frontier = json(&[
            "plan",
            "--n",
            n,
            "--fpr",
            &fpr_arg,
            "--frontier",
            "--churn",
            "0.01",
            "--json",
        ]);
        let n: f64 = n.parse().unwrap();
        let plans = frontier["plans"].as_array().unwrap();
        assert_eq!(plans[0]["memory_factor"], 1);
        assert!(plans.last().unwrap()["memory_factor"].is_null());
        let least = u(&plans[0]["m"]);
        // The memory-optimal point is the standard filter: about n ln(1/f) / ln(2)^2 bits.
        let standard = n * (1.0 / fpr).ln() / std::f64::consts::LN_2.powi(2);
        assert!((least as f64 / standard - 1.0).abs() < 0.03, "{least}");
        for plan in plans {
            assert!(theory_fpr(plan, n) <= fpr * (1.0 + 1e-9), "{plan}");
            check_memory(plan);
            if let Some(factor) = plan["memory_factor"].as_u64() {
                assert!(u(&plan["m"]) <= factor * least, "{plan}");
            }
            let delta = &plan["delta"];
            assert_eq!(f(&delta["changed"]), 0.01);
            assert!(u(&delta["worst_case_bytes"]) < u(&plan["worst_case_bytes"]));
        }
        for pair in plans.windows(2) {
            assert!(u(&pair[0]["m"]) <= u(&pair[1]["m"]));
            assert!(u(&pair[0]["worst_case_bytes"]) >= u(&pair[1]["worst_case_bytes"]));
        }
    }
    // The table form: one row a memory cap.
    let table = ok(&["plan", "--n", "1000000", "--fpr", "0.01", "--frontier"]);
    for row in ["1x (optimal)", "2x", "4x", "unbounded", "receiver bytes"] {
        assert!(table.contains(row), "{table}");
    }
    // The frontier is for a target rate, not a budget.
    fails(&[
        "plan",
        "--n",
        "1000",
        "--budget-bytes",
        "1000",
        "--frontier",
    ]);
    fails(&["plan", "--n", "1000", "--frontier"]);
}

#[test]
fn the_memory_cap_holds() {
    for cap in [1_250_000u64, 2_000_000, 4_000_000] {
        for goal in [["--fpr", "0.01"], ["--budget-bytes", "1000000"]] {
            let cap_arg = cap.to_string();
            let mut args = vec!["plan", "--n", "1000000", "--max-memory", &cap_arg, "--json"];
            args.extend(goal);
            let plan = json(&args);
            check_memory(&plan);
            assert!(u(&plan["memory"]["receiver"]) <= cap, "{plan}");
            let bent = &plan["bent"];
            assert_eq!(bent["limit"], "max_memory", "{plan}");
            assert_eq!(u(&bent["max_m"]), 8 * cap);
            assert!(u(&bent["unconstrained"]["m"]) > 8 * cap);
            if goal[0] == "--fpr" {
                assert!(theory_fpr(&plan, 1e6) <= 0.01 * (1.0 + 1e-9));
                assert!(
                    u(&bent["unconstrained"]["worst_case_bytes"]) < u(&plan["worst_case_bytes"])
                );
            } else {
                assert!(u(&plan["worst_case_bytes"]) <= 1_000_000);
                assert!(
                    f(&bent["unconstrained"]["false_positive_rate"])
                        < f(&plan["false_positive_rate"])
                );
            }
        }
    }
    // In bits a key: the same cap under the name the program has had.
    let plan = json(&[
        "plan",
        "--n",
        "1000000",
        "--fpr",
        "0.01",
        "--max-bits-per-element",
        "12",
        "--json",
    ]);
    assert!(u(&plan["m"]) <= 12_000_000);
    assert_eq!(plan["bent"]["limit"], "max_bits_per_element");
    // A cap that leaves nothing is refused; one that puts the rate out of reach says so.
    let err = fails(&["plan", "--n", "1000", "--fpr", "0.01", "--max-memory", "0"]);
    assert!(err.contains("max_memory"), "{err}");
    let err = fails(&[
        "plan",
        "--n",
        "100000",
        "--fpr",
        "0.01",
        "--max-memory",
        "1000",
    ]);
    assert!(
        err.contains("out of reach") && err.contains("max_memory"),
        "{err}"
    );
}

#[test]
fn a_bent_plan_reports_its_limit() {
    // 10^7 keys at 1%: the default receiver's 2^28 bits hold the plan to k = 2.
    let plan = json(&["plan", "--n", "10000000", "--fpr", "0.01", "--json"]);
    let bent = &plan["bent"];
    assert_eq!(bent["limit"], "max_m");
    assert_eq!(u(&bent["max_m"]), 1 << 28);
    let free = &bent["unconstrained"];
    assert!(u(&free["m"]) > 1 << 28);
    assert!(u(&free["worst_case_bytes"]) < u(&plan["worst_case_bytes"]));
    assert_eq!(u(&free["receiver_bytes"]), u(&free["m"]).div_ceil(8));
    // Raising the limit to the unconstrained m gives the unconstrained plan, unbent.
    let m = u(&free["m"]).to_string();
    let payload = u(&free["receiver_bytes"]).to_string();
    let wide = json(&[
        "plan",
        "--n",
        "10000000",
        "--fpr",
        "0.01",
        "--max-m",
        &m,
        "--max-payload",
        &payload,
        "--json",
    ]);
    assert!(wide["bent"].is_null(), "{wide}");
    assert_eq!(wide["m"], free["m"]);
    assert_eq!(wide["worst_case_bytes"], free["worst_case_bytes"]);
    // The receiver's memory limit, by its option's name.
    let plan = json(&[
        "plan",
        "--n",
        "1000000",
        "--fpr",
        "0.01",
        "--max-filter-bytes",
        "1500000",
        "--json",
    ]);
    assert_eq!(plan["bent"]["limit"], "max_filter_bytes");
    // The table says it too; a plan at its optimum says nothing.
    let table = ok(&["plan", "--n", "10000000", "--fpr", "0.01"]);
    assert!(table.contains("held by max_m"), "{table}");
    let table = ok(&["plan", "--n", "1000000", "--fpr", "0.01"]);
    assert!(!table.contains("held by"), "{table}");
    assert!(table.contains("sender memory"), "{table}");
    let plan = json(&["plan", "--n", "1000000", "--fpr", "0.01", "--json"]);
    assert!(plan["bent"].is_null() && plan["delta"].is_null());
}

/// `build --max-memory` caps the decoded filter as `plan --max-memory` does: the frame's m
/// is the capped plan's, within the cap, and still meets the rate.
#[test]
fn build_takes_the_memory_cap() {
    let dir = std::env::temp_dir().join(format!("bloomwire-cli-{}-buildcap", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let keys = dir.join("keys.txt");
    let text: String = (0..20_000).map(|i| format!("key-{i}\n")).collect();
    std::fs::write(&keys, text).unwrap();
    let keys = keys.to_str().unwrap();
    let cap = "40000";
    let planned = json(&[
        "plan",
        "--n",
        "20000",
        "--fpr",
        "0.01",
        "--max-memory",
        cap,
        "--json",
    ]);
    let unbounded = json(&["plan", "--n", "20000", "--fpr", "0.01", "--json"]);
    assert!(
        u(&unbounded["m"]) > 8 * 40_000,
        "the cap must bind: {unbounded}"
    );

    let frame = dir.join("capped.blwr");
    let frame = frame.to_str().unwrap();
    ok(&[
        "build",
        "--keys",
        keys,
        "--fpr",
        "0.01",
        "--max-memory",
        cap,
        "-o",
        frame,
    ]);
    let info = json(&["inspect", "--json", frame]);
    let m = u(&info["m"]);
    assert_eq!(m, u(&planned["m"]));
    assert!(m.div_ceil(8) <= 40_000);
    assert!(theory_fpr(&planned, 20_000.0) <= 0.01);

    // A counting filter's counters, a byte each, keep within the cap too.
    let counting = dir.join("counting.blwr");
    let counting = counting.to_str().unwrap();
    ok(&[
        "build",
        "--keys",
        keys,
        "--fpr",
        "0.01",
        "--counting",
        "4",
        "--max-memory",
        "250000",
        "-o",
        counting,
    ]);
    let info = json(&["inspect", "--json", counting]);
    assert!(u(&info["m"]) <= 250_000, "{info}");

    // With explicit parameters there is nothing to cap.
    let err = fails(&[
        "build",
        "--keys",
        keys,
        "--m",
        "1000",
        "--k",
        "3",
        "--max-memory",
        cap,
    ]);
    assert!(err.contains("--max-memory"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
