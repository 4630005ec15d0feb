//! A write that fails fails the command: standard output closed (`>&-`), a full disk, a
//! reader that closed the pipe early. `decode f -o - >&-` once exited 0 having written
//! nothing (the Rust runtime puts /dev/null on a closed standard descriptor).

mod common;

use std::io::Read;
use std::process::{Command, Stdio};

use common::*;

/// Every command that writes to stdout, by `-o -` or by printing what it was asked for.
fn commands_writing_to_stdout(dir: &std::path::Path) -> Vec<Vec<String>> {
    let (keys, frame) = keys_and_frame(dir, 200, &["--generation", "1"]);
    let more = file_with(dir, "more.txt", "more-1\nmore-2\n");
    let next = dir.join("next.blwr");
    ok(&[
        "update",
        "-q",
        s(&frame),
        "--insert",
        s(&more),
        "-o",
        s(&next),
    ]);
    let delta = dir.join("delta.blwr");
    ok(&["diff", "-q", s(&frame), s(&next), "-o", s(&delta)]);
    let bits = dir.join("bits");
    ok(&["decode", s(&frame), "-o", s(&bits)]);
    let m = ok(&["inspect", "--json", s(&frame)]);
    let m = serde_json::from_slice::<serde_json::Value>(&m).unwrap()["m"].to_string();
    let (k, f, d, b) = (s(&keys), s(&frame), s(&delta), s(&bits));
    [
        vec!["decode", f, "-o", "-"],
        vec!["inspect", f],
        vec!["inspect", "--json", f],
        vec!["query", f, "key-1"],
        vec!["query", f, "--keys", k],
        vec!["plan", "--n", "1000", "--fpr", "0.01"],
        vec!["plan", "--n", "1000", "--fpr", "0.01", "--json"],
        vec!["build", "--keys", k, "-o", "-"],
        vec![
            "build",
            "--keys",
            k,
            "--json",
            "-f",
            "-o",
            s(&dir.join("j.blwr")),
        ],
        vec!["update", f, "--insert", k, "-o", "-"],
        vec!["diff", f, s(&next), "-o", "-"],
        vec!["apply", f, d, "-o", "-"],
        vec!["wrap", "--bits", b, "--m", &m, "-o", "-"],
    ]
    .iter()
    .map(|args| args.iter().map(|a| a.to_string()).collect())
    .collect()
}

#[test]
fn a_closed_stdout_fails_every_command_that_writes_to_it() {
    let dir = temp_dir("closed-stdout");
    for args in commands_writing_to_stdout(&dir) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run_stdout_closed(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code = if args[0] == "query" { 2 } else { 1 };
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(
            stderr.contains("bloomwire: stdout: closed"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn stdout_to_dev_null_is_written_to() {
    // The check above is of a closed descriptor, not of /dev/null (the runtime's
    // replacement for one): `> /dev/null` succeeds.
    let dir = temp_dir("dev-null");
    let (_, frame) = keys_and_frame(&dir, 100, &[]);
    let out = Command::new(bin())
        .args(["decode", s(&frame), "-o", "-"])
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_fails_the_command() {
    let dir = temp_dir("full-disk");
    let (_, frame) = keys_and_frame(&dir, 100, &[]);
    // To a file (a device: written to without --force).
    let e = fails_with(1, &["decode", s(&frame), "-o", "/dev/full"]);
    assert!(e.contains("/dev/full: No space left on device"), "{e}");
    // To stdout.
    for args in [
        &["decode", s(&frame), "-o", "-"][..],
        &["inspect", s(&frame)],
        &["plan", "--n", "10", "--fpr", "0.1"],
    ] {
        let out = Command::new(bin())
            .args(args)
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("stdout: No space left on device"),
            "{stderr}"
        );
    }
}

/// Every command that writes a file with `-o` reports a full disk there and exits 1.
#[cfg(target_os = "linux")]
#[test]
fn every_output_file_reports_a_full_disk() {
    let dir = temp_dir("full-disk-every-output");
    let mut checked = 0;
    for mut args in commands_writing_to_stdout(&dir) {
        let Some(at) = args.windows(2).position(|w| w[0] == "-o" && w[1] == "-") else {
            continue;
        };
        args[at + 1] = "/dev/full".into();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let e = fails_with(1, &args);
        assert!(
            e.contains("/dev/full: No space left on device"),
            "{args:?}: {e}"
        );
        checked += 1;
    }
    assert_eq!(checked, 6, "decode, build, update, diff, apply, wrap");
}

#[test]
fn a_reader_that_closes_the_pipe_early_fails_the_command() {
    let dir = temp_dir("broken-pipe");
    // 2^21 bits: 256 KiB of bits, more than a pipe holds.
    let (_, frame) = keys_and_frame(&dir, 100, &["--m", "2097152", "--k", "1"]);
    let mut child = Command::new(bin())
        .args(["decode", s(&frame), "-o", "-"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read one byte, then close the pipe (as `| head -c 1` does).
    let mut stdout = child.stdout.take().unwrap();
    stdout.read_exact(&mut [0u8]).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("stdout: the reader closed the pipe"),
        "{stderr}"
    );
}

#[test]
fn plot_goes_through_the_checked_output() {
    let dir = temp_dir("plot");
    let plot = dir.join("p.svg");
    let plan = ["plan", "--n", "1000", "--fpr", "0.01", "--plot", s(&plot)];
    ok(&plan);
    assert!(std::fs::read_to_string(&plot).unwrap().starts_with("<svg"));
    let e = fails_with(1, &plan);
    assert!(e.contains("already exists"), "{e}");
    #[cfg(target_os = "linux")]
    {
        let e = fails_with(
            1,
            &[
                "plan",
                "--n",
                "1000",
                "--fpr",
                "0.01",
                "--plot",
                "/dev/full",
            ],
        );
        assert!(e.contains("No space left on device"), "{e}");
    }
}
