//! The conformance kit (spec/conformance) run briefly against `bloomwire conform`: the
//! program's adapter answers every request of the protocol as its own oracle does, over the
//! vectors, a small seeded corpus and its mutants. Needs `python3` on the path.

use std::path::Path;
use std::process::Command;

/// Runs the kit with `adapter`, small sizes: its exit status and output.
fn run_kit(adapter: &str) -> (std::process::ExitStatus, String, String) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cli = env!("CARGO_BIN_EXE_bloomwire");
    let output = Command::new("python3")
        .current_dir(&repo)
        .arg("spec/conformance/run.py")
        .args(["--adapter", adapter])
        .args(["--oracle", &format!("{cli} conform")])
        .args(["--seed", "5", "--frames", "40", "--mutants", "300"])
        .args(["--max-m", "6000"])
        .output()
        .expect("python3 runs the conformance kit");
    (
        output.status,
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Runs the kit with the program's adapter in `profile` and returns its output after
/// checking that it passed.
fn kit(profile: &str) -> String {
    let cli = env!("CARGO_BIN_EXE_bloomwire");
    let (status, stdout, stderr) = run_kit(&format!("{cli} conform --profile {profile}"));
    assert!(
        status.success(),
        "the kit failed ({status}):\n{stdout}\n{stderr}"
    );
    let last = stdout.lines().last().unwrap_or_default();
    assert!(last.ends_with(" passed, 0 failed"), "closing line: {last}");
    stdout
}

#[test]
fn the_program_passes_the_kit_in_the_full_profile() {
    let out = kit("full");
    // every part of the kit ran: the vectors, the corpus with its sessions, the encoder's
    // checks and the mutants
    for category in [
        "vectors (core)",
        "vectors (full)",
        "corpus",
        "sessions",
        "encode",
    ] {
        assert!(
            out.lines().any(|l| l.trim_start().starts_with(category)),
            "no {category} checks:\n{out}"
        );
    }
    assert!(out.contains("mutants "), "no mutants:\n{out}");
}

#[test]
fn the_program_passes_the_kit_in_the_core_profile() {
    let out = kit("core");
    // a Core decoder refuses the vectors of the other codings, as the Core oracle does
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("vectors (full)") && l.contains(" 0 failed")),
        "{out}"
    );
    assert!(
        out.contains("UnsupportedCoding"),
        "no UnsupportedCoding:\n{out}"
    );
}

#[test]
fn the_kit_catches_an_adapter_that_lies() {
    // The program's adapter behind a proxy that changes a digest, an error's field, an
    // error's class and an encoded frame: each is a failure of its category.
    let liar = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conform_liar.py");
    let cli = env!("CARGO_BIN_EXE_bloomwire");
    let (status, stdout, _) = run_kit(&format!("python3 {} {cli} conform", liar.display()));
    assert_eq!(status.code(), Some(1), "{stdout}");
    let failed = |category: &str| {
        stdout
            .lines()
            .any(|l| l.trim_start().starts_with(category) && !l.contains(" 0 failed"))
    };
    for category in ["vectors (full)", "corpus", "sessions", "encode"] {
        assert!(failed(category), "no failure in {category}:\n{stdout}");
    }
    let last = stdout.lines().last().unwrap_or_default();
    assert!(!last.ends_with(" 0 failed"), "closing line: {last}");
}
