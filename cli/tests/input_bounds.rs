//! What the program holds is bounded by its documented limits, whatever the input: a key
//! is at most 1 MiB (`update --insert /dev/zero` once read one endless line until memory
//! ran out), and `inspect` of a frame whose metadata exceeds `--max-metadata` shows no
//! more than the limit allows (it once printed 64 MiB of metadata as 134 MB of hex, holding
//! 516 MiB).

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use common::*;

const MIB: usize = 1 << 20;

/// Run the program with stdout and stderr to files; returns the exit status, stdout,
/// stderr and (on Linux) the child's peak resident memory in bytes, from `wait4`.
#[allow(clippy::zombie_processes)] // wait4 reaps it on Linux.
fn run_measured(dir: &Path, args: &[&str]) -> (Option<i32>, Vec<u8>, String, Option<u64>) {
    let (out, err) = (dir.join("stdout"), dir.join("stderr"));
    let child = Command::new(bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    #[cfg(target_os = "linux")]
    let (code, peak) = {
        let pid = child.id() as libc::pid_t;
        let mut status = 0;
        // SAFETY: rusage is plain integers, for which all zeros is a value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: waits for our own child, writing its status and usage into the two
        // locals, which live through the call.
        let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        assert_eq!(got, pid);
        let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
        // ru_maxrss is in KiB on Linux.
        (code, Some(usage.ru_maxrss as u64 * 1024))
    };
    #[cfg(not(target_os = "linux"))]
    let (code, peak) = {
        let mut child = child;
        (child.wait().unwrap().code(), None)
    };
    (
        code,
        std::fs::read(&out).unwrap(),
        std::fs::read_to_string(&err).unwrap(),
        peak,
    )
}

#[test]
fn inspect_of_a_frame_with_metadata_over_the_limit_prints_no_more_than_the_limit() {
    let dir = temp_dir("inspect-metadata");
    let keys = file_with(&dir, "k.txt", "a\nb\n");
    // 64 MiB of metadata (the reproduction), under --max-payload's input cap.
    let big = file_with(&dir, "big.bin", vec![0u8; 67_000_000]);
    let frame = dir.join("m.blwr");
    let max = "--max-metadata=67000000";
    ok(&[
        "build",
        "-q",
        "--keys",
        s(&keys),
        max,
        "--metadata",
        s(&big),
        "-o",
        s(&frame),
    ]);
    std::fs::remove_file(&big).unwrap();
    for json in [false, true] {
        let mut args = vec!["inspect", s(&frame)];
        if json {
            args.push("--json");
        }
        let (code, stdout, stderr, peak) = run_measured(&dir, &args);
        assert_eq!(code, Some(1), "{stderr}");
        assert!(stdout.len() < 4096, "{} bytes printed", stdout.len());
        assert!(
            stderr.contains("metadata length = 67000000")
                && stderr.contains("exceeds the limit 4096; raise --max-metadata"),
            "{stderr}"
        );
        if let Some(peak) = peak {
            // The frame file is read (64 MiB); nothing of its size is copied.
            assert!(peak < 100 * MIB as u64, "{json}: {peak} bytes resident");
        }
    }
    // Raised, the metadata is shown (the user asked for it).
    let out = ok(&["inspect", max, "--json", s(&frame)]);
    let info: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(info["metadata_bytes"], 67_000_000);
}

#[test]
fn keys_longer_than_a_mib_are_an_error_naming_the_line() {
    let dir = temp_dir("long-keys");
    let (_, frame) = keys_and_frame(&dir, 100, &[]);
    let (_, counting) = keys_and_frame(&dir, 50, &["--counting", "4"]);
    let out = s(&dir.join("out.blwr")).to_string();
    // One endless line, from every place the program reads keys.
    for (code, args) in [
        (
            1,
            vec!["update", s(&frame), "--insert", "/dev/zero", "-o", &out],
        ),
        (
            1,
            vec!["update", s(&counting), "--remove", "/dev/zero", "-o", &out],
        ),
        (1, vec!["build", "--keys", "/dev/zero", "-o", &out]),
        (2, vec!["query", s(&frame), "--keys", "/dev/zero"]),
    ] {
        let (got, _, stderr, peak) = run_measured(&dir, &args);
        assert_eq!(got, Some(code), "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("bloomwire: /dev/zero: line 1: a key longer than 1048576 bytes"),
            "{args:?}: {stderr}"
        );
        if let Some(peak) = peak {
            assert!(peak < 64 * MIB as u64, "{args:?}: {peak} bytes resident");
        }
    }

    // The same from a file and from standard input, at a later line; a key of 1 MiB
    // exactly (with `\r\n`) is a key.
    let mut text = b"short\n".to_vec();
    text.extend(std::iter::repeat_n(b'x', MIB));
    text.extend_from_slice(b"\r\n");
    text.extend(std::iter::repeat_n(b'y', MIB + 1));
    text.extend_from_slice(b"\nlast\n");
    let file = file_with(&dir, "long.txt", &text);
    let e = fails_with(1, &["build", "--keys", s(&file), "-o", &out]);
    assert!(
        e.contains("long.txt: line 3: a key longer than 1048576"),
        "{e}"
    );
    let mut child = Command::new(bin())
        .args(["update", s(&frame), "--insert", "-", "-o", &out, "-f"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The program may stop reading at the long line: a broken pipe is expected.
    let _ = stdin.write_all(&text);
    drop(stdin);
    let got = child.wait_with_output().unwrap();
    let e = String::from_utf8_lossy(&got.stderr);
    assert_eq!(got.status.code(), Some(1), "{e}");
    assert!(e.contains("standard input: line 3: a key longer"), "{e}");
    // Without the long line, the key of 1 MiB is inserted.
    let cut = text.len() - (MIB + 1 + b"\nlast\n".len());
    std::fs::write(&file, &text[..cut]).unwrap();
    ok(&["update", s(&frame), "--insert", s(&file), "-o", &out, "-f"]);

    // A length-prefixed record longer than 1 MiB is refused before it is read.
    let mut records = 3u32.to_le_bytes().to_vec();
    records.extend_from_slice(b"abc");
    records.extend_from_slice(&(MIB as u32 + 1).to_le_bytes());
    let file = file_with(&dir, "records.bin", &records);
    let e = fails_with(
        1,
        &[
            "build",
            "--binary-keys",
            "--keys",
            s(&file),
            "-o",
            &out,
            "-f",
        ],
    );
    assert!(
        e.contains("record 1: a key of 1048577 bytes, longer than 1048576"),
        "{e}"
    );

    // The limit is documented where users meet it.
    for command in ["build", "query", "update"] {
        let help = String::from_utf8(ok(&[command, "--help"])).unwrap();
        assert!(help.contains("at most 1 MiB"), "{command} --help");
    }
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"));
    assert!(readme.unwrap().contains("A key is at most 1 MiB"));

    // A directory is said to be one.
    let e = fails_with(1, &["build", "--keys", s(&dir), "-o", &out, "-f"]);
    assert!(e.ends_with(": is a directory\n"), "{e}");
}
