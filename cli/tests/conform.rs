//! The conformance kit (spec/conformance) run briefly against `bloomwire conform`: the
//! program's adapter answers every request of the protocol as its own oracle does, over the
//! vectors, a small seeded corpus and its mutants. Needs `python3` on the path.

use std::path::Path;
use std::process::Command;

/// Runs the kit with the program's adapter in `profile`, small sizes, and returns its
/// output after checking that it passed.
fn kit(profile: &str) -> String {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cli = env!("CARGO_BIN_EXE_bloomwire");
    let output = Command::new("python3")
        .current_dir(&repo)
        .arg("spec/conformance/run.py")
        .args(["--adapter", &format!("{cli} conform --profile {profile}")])
        .args(["--oracle", &format!("{cli} conform")])
        .args(["--seed", "5", "--frames", "40", "--mutants", "300"])
        .args(["--max-m", "6000"])
        .output()
        .expect("python3 runs the conformance kit");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the kit failed ({}):\n{stdout}\n{stderr}",
        output.status
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
