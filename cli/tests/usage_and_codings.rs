//! Messages that say what happened, usage errors with status 2 (as clap's and zstd's), and
//! codings named as the library names them (`BitCoding`'s and `CounterCoding`'s `FromStr`):
//! the program has no list of codings of its own.

mod common;

use bloomwire::{BitCoding, Coding, CounterCoding, Profile, Status};
use common::*;

#[test]
fn wrap_says_what_is_wrong_with_its_bits() {
    let dir = temp_dir("wrap-messages");
    let out = s(&dir.join("w.blwr")).to_string();
    // A device longer than ceil(m / 8): once "0 bytes" (the device's size).
    let e = fails_with(
        1,
        &[
            "wrap",
            "--bits",
            "/dev/zero",
            "--m",
            "268435456",
            "-o",
            &out,
        ],
    );
    assert!(
        e.contains("/dev/zero: more than 33554432 bytes, but m = 268435456 bits are 33554432"),
        "{e}"
    );
    // A directory: once "4096 bytes".
    let e = fails_with(1, &["wrap", "--bits", s(&dir), "--m", "100", "-o", &out]);
    assert!(e.ends_with(": is a directory\n"), "{e}");
    let short = file_with(&dir, "short", [0u8; 3]);
    let e = fails_with(1, &["wrap", "--bits", s(&short), "--m", "100", "-o", &out]);
    assert!(
        e.contains(": 3 bytes, but m = 100 bits are 13 bytes"),
        "{e}"
    );
}

#[test]
fn chunks_of_a_coding_that_is_never_chunked_are_not_silently_ignored() {
    let dir = temp_dir("chunk-shift");
    let (keys, frame) = keys_and_frame(&dir, 1000, &[]);
    let (_, counting) = keys_and_frame(&dir, 100, &["--counting", "4"]);
    let out = s(&dir.join("out.blwr")).to_string();
    let never: Vec<Coding> = BitCoding::ALL
        .map(Coding::from)
        .into_iter()
        .filter(|c| !c.is_chunkable())
        .collect();
    assert!(never.contains(&Coding::Raw));
    for coding in never {
        let name = coding.to_string();
        for args in [
            vec!["build", "--keys", s(&keys), "-o", &out],
            vec!["update", s(&frame), "--insert", s(&keys), "-o", &out],
            vec!["diff", s(&frame), s(&frame), "-o", &out],
        ] {
            let mut args = args.clone();
            args.extend(["--coding", &name, "--chunk-shift", "10"]);
            let e = usage_error(&args);
            assert!(
                e.contains(&format!(
                    "--chunk-shift 10: --coding {name} is never chunked"
                )),
                "{e}"
            );
        }
    }
    // Counting frames are never chunked.
    let e = fails_with(
        1,
        &[
            "update",
            s(&counting),
            "--insert",
            s(&keys),
            "--chunk-shift",
            "10",
            "-o",
            &out,
        ],
    );
    assert!(
        e.contains("--chunk-shift 10: counting frames are never chunked"),
        "{e}"
    );
    // Auto coding that picks an unchunked coding says so.
    let out = run(&[
        "build",
        "--keys",
        s(&keys),
        "--chunk-shift",
        "8",
        "-f",
        "-o",
        &out,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let info = String::from_utf8(ok(&["inspect", "--json", s(&dir.join("out.blwr"))])).unwrap();
    let info: serde_json::Value = serde_json::from_str(&info).unwrap();
    if info["chunk_shift"].is_null() {
        assert!(
            stderr.contains("--chunk-shift 8: the frame is not chunked: coding"),
            "{stderr}"
        );
    }
}

#[test]
fn argument_conflicts_are_usage_errors() {
    let dir = temp_dir("usage");
    let (keys, frame) = keys_and_frame(&dir, 100, &[]);
    let (k, f) = (s(&keys), s(&frame));
    for (args, says) in [
        (vec!["build", "--keys", "-"], "--keys -: name the output"),
        (
            vec!["update", "-", "--insert", "-", "-o", "x"],
            "only one of",
        ),
        (
            vec!["decode", f, "-o", "-", "--metadata-out", "-"],
            "cannot both go",
        ),
        (
            vec!["diff", "-", "-", "-o", "x"],
            "only one of the two frames",
        ),
        (
            vec!["apply", "-", "-", "-o", "x"],
            "only one of the two frames",
        ),
        (vec!["query", "-", "--keys", "-"], "cannot both come"),
        (
            vec!["plan", "--n", "9", "--fpr", "0.1", "--plot", "-"],
            "the plot goes to a file",
        ),
        (
            vec!["--max-m", "0", "plan", "--n", "10", "--fpr", "0.1"],
            "--max-m",
        ),
        (
            vec!["--max-k", "0", "plan", "--n", "10", "--fpr", "0.1"],
            "--max-k",
        ),
        (vec!["--max-k", "1025", "build", "--keys", k], "--max-k"),
        (
            vec!["build", "--keys", k, "--coding", "nothing"],
            "expected auto, a coding",
        ),
        (
            vec![
                "plan",
                "--n",
                "9",
                "--fpr",
                "0.1",
                "--coding",
                "known-counters",
            ],
            "of bits",
        ),
    ] {
        let e = usage_error(&args);
        assert!(e.contains(says), "{args:?}: {e}");
    }
}

#[test]
fn codings_are_the_librarys_names() {
    let dir = temp_dir("coding-names");
    let (keys, _) = keys_and_frame(&dir, 2000, &[]);
    let help = String::from_utf8(ok(&["build", "--help"])).unwrap();
    let out = s(&dir.join("out.blwr")).to_string();
    for coding in BitCoding::ALL {
        let name = coding.to_string();
        let c = Coding::from(coding);
        let listed = match c.status() {
            Status::Deprecated => format!("{name} ({}, deprecated)", c.id()),
            _ => format!("{name} ({})", c.id()),
        };
        assert!(help.contains(&listed), "{listed} is not in the help");
        let args = [
            "build",
            "--json",
            "--keys",
            s(&keys),
            "--coding",
            &name,
            "-f",
            "-o",
            &out,
        ];
        let summary: serde_json::Value = serde_json::from_slice(&ok(&args)).unwrap();
        assert_eq!(summary["coding_asked"], name);
        let got: Coding = summary["coding"].as_str().unwrap().parse().unwrap();
        assert!(
            [Coding::from(coding), Coding::Raw, Coding::Positional].contains(&got),
            "{name}: {got}"
        );
        // A counting filter takes no coding of bits but raw.
        let args = [
            "build",
            "--counting",
            "4",
            "--keys",
            s(&keys),
            "--coding",
            &name,
        ];
        if coding != BitCoding::Raw {
            let e = fails_with(1, &[&args[..], &["-f", "-o", &out]].concat());
            assert!(
                e.contains("a counting filter is coded auto or by raw"),
                "{e}"
            );
        }
    }
    for coding in CounterCoding::ALL {
        let name = coding.to_string();
        assert!(help.contains(&format!("{name} ({})", Coding::from(coding).id())));
        let args = [
            "build",
            "--json",
            "--counting",
            "4",
            "--keys",
            s(&keys),
            "--coding",
            &name,
            "-f",
            "-o",
            &out,
        ];
        let summary: serde_json::Value = serde_json::from_slice(&ok(&args)).unwrap();
        let got: Coding = summary["coding"].as_str().unwrap().parse().unwrap();
        assert!(
            [Coding::from(coding), Coding::Raw].contains(&got),
            "{name}: {got}"
        );
        if coding != CounterCoding::Raw {
            let e = fails_with(
                1,
                &[
                    "build",
                    "--keys",
                    s(&keys),
                    "--coding",
                    &name,
                    "-f",
                    "-o",
                    &out,
                ],
            );
            assert!(
                e.contains("a coding of counters; a Bloom filter is coded auto"),
                "{e}"
            );
        }
    }
    // plan takes the library's names; its planner sizes some of them.
    for coding in BitCoding::ALL {
        let name = coding.to_string();
        let got = run(&["plan", "--n", "1000", "--fpr", "0.01", "--coding", &name]);
        let stderr = String::from_utf8_lossy(&got.stderr);
        match coding {
            BitCoding::Raw | BitCoding::Adaptive | BitCoding::KnownP => {
                assert!(got.status.success(), "{name}: {stderr}")
            }
            _ => assert!(
                got.status.code() == Some(1) && stderr.contains("invalid parameter coding"),
                "{name}: {stderr}"
            ),
        }
    }
}

/// The coding of a frame file, as `inspect --json` names it.
fn coding_of(frame: &std::path::Path) -> Coding {
    let info: serde_json::Value =
        serde_json::from_slice(&ok(&["inspect", "--json", s(frame)])).unwrap();
    info["coding"].as_str().unwrap().parse().unwrap()
}

#[test]
fn profile_core_writes_only_core_codings() {
    let dir = temp_dir("profile");
    // The paper's filter: 10 000 keys in 140 000 bits, k = 2, which the full profile
    // codes with a coding made for decoding speed.
    let paper = ["--m", "140000", "--k", "2", "--generation", "1"];
    let (keys, full) = keys_and_frame(&dir, 10_000, &paper);
    assert!(
        !Profile::Core.includes(coding_of(&full)),
        "{}",
        coding_of(&full)
    );
    let core = dir.join("core.blwr");
    let mut args = vec![
        "build",
        "-q",
        "--keys",
        s(&keys),
        "--profile",
        "core",
        "-o",
        s(&core),
    ];
    args.extend_from_slice(&paper);
    ok(&args);
    assert!(
        Profile::Core.includes(coding_of(&core)),
        "{}",
        coding_of(&core)
    );

    // Every command that encodes takes it.
    let more = file_with(&dir, "more.txt", "one more\n");
    let (updated, delta, applied, bits, wrapped) = (
        dir.join("updated.blwr"),
        dir.join("delta.blwr"),
        dir.join("applied.blwr"),
        dir.join("bits"),
        dir.join("wrapped.blwr"),
    );
    ok(&["decode", s(&full), "-o", s(&bits)]);
    let (f, u, d) = (s(&full), s(&updated), s(&delta));
    for args in [
        vec!["update", f, "--insert", s(&more), "-o", u],
        vec!["diff", f, u, "-o", d],
        vec!["apply", f, d, "-o", s(&applied)],
        vec![
            "wrap",
            "--bits",
            s(&bits),
            "--m",
            "140000",
            "-o",
            s(&wrapped),
        ],
    ] {
        // Outside the profile by name: a usage error.
        let mut refused = args.clone();
        refused.extend(["--profile", "core", "--coding", "escape"]);
        let e = usage_error(&refused);
        assert!(
            e.contains("--coding escape: not a coding of --profile core"),
            "{e}"
        );
        let mut args = args.clone();
        args.extend(["-q", "--profile", "core"]);
        ok(&args);
        let out = args[args.iter().position(|&a| a == "-o").unwrap() + 1];
        let coding = coding_of(std::path::Path::new(out));
        assert!(Profile::Core.includes(coding), "{args:?}: {coding}");
    }
    let e = usage_error(&["build", "--keys", s(&keys), "--profile", "tiny"]);
    assert!(e.contains("expected core or full"), "{e}");
    // The help names core's codings, from the library.
    let help = String::from_utf8(ok(&["build", "--help"])).unwrap();
    let listed = help.split("every decoder implements (").nth(1).unwrap();
    let listed: Vec<&str> = listed
        .split(", and chunks)")
        .next()
        .unwrap()
        .split(", ")
        .collect();
    let core: Vec<String> = Coding::ALL
        .into_iter()
        .filter(|&c| Profile::Core.includes(c))
        .map(|c| c.to_string())
        .collect();
    assert_eq!(listed, core);
}
