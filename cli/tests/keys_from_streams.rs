//! Keys from a stream (standard input, a pipe, a FIFO): read once, never held in memory,
//! and the same frame as from a regular file. `build` needs n before it inserts: it once
//! read a stream whole into memory to read it twice (64 MiB of keys on standard input
//! cost more than 64 MiB); now it counts the keys while it copies them into a temporary
//! file, and with --m and --k it reads them once and keeps nothing.

#![cfg(target_os = "linux")]

mod common;

use std::io::{Read, Write};
use std::path::Path;
use std::process::Command;

use common::*;

/// What a run of the program gave back.
struct Run {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
    /// Its peak resident memory, in KiB.
    peak_kib: u64,
}

/// Run the program with `input` written to its standard input by a thread, as it reads;
/// waits for it with `wait4`, which gives that one child's peak memory.
#[allow(clippy::zombie_processes)] // Waited for by `wait4`, not by `Child::wait`.
fn run_piped(args: &[&str], input: impl FnOnce(&mut dyn Write) + Send + 'static) -> Run {
    let mut child = piped(args).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        input(&mut stdin);
    });
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        stdout.read_to_end(&mut out).unwrap();
        out
    });
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let (code, peak_kib) = wait4(child.id());
    writer.join().unwrap();
    Run {
        code,
        stdout: reader.join().unwrap(),
        stderr,
        peak_kib,
    }
}

/// Wait for the child `pid`: its exit status and its peak resident memory in KiB.
fn wait4(pid: u32) -> (Option<i32>, u64) {
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is a child of this process not waited for yet (std's `Child` is never
    // waited on here); `status` and `usage` are valid for writes for the call.
    let got = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(
        got,
        pid as libc::pid_t,
        "{}",
        std::io::Error::last_os_error()
    );
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    (code, usage.ru_maxrss as u64)
}

/// `count` keys of `len` bytes each, one a line, written in pieces.
fn write_keys(out: &mut dyn Write, count: usize, len: usize) {
    let mut piece = Vec::new();
    for i in 0..count {
        piece.extend_from_slice(format!("{i:0len$}\n").as_bytes());
        if piece.len() >= 1 << 16 {
            out.write_all(&piece).unwrap();
            piece.clear();
        }
    }
    out.write_all(&piece).unwrap();
}

fn keys_file(dir: &Path, count: usize, len: usize) -> std::path::PathBuf {
    let path = dir.join(format!("keys-{count}x{len}.txt"));
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    write_keys(&mut file, count, len);
    file.flush().unwrap();
    path
}

#[test]
fn standard_input_gives_the_frame_a_file_gives() {
    let dir = temp_dir("stdin-frame");
    let keys = keys_file(&dir, 5_000, 12);
    let from_file = dir.join("file.blwr");
    for extra in [&[][..], &["--m", "60000", "--k", "3"], &["--counting", "4"]] {
        let mut args = vec!["build", "-q", "-f", "--keys", s(&keys), "-o", s(&from_file)];
        args.extend_from_slice(extra);
        ok(&args);
        let mut args = vec!["build", "-q", "--keys", "-", "-o", "-"];
        args.extend_from_slice(extra);
        let run = run_piped(&args, |out| write_keys(out, 5_000, 12));
        assert_eq!(run.code, Some(0), "{extra:?}: {}", run.stderr);
        assert_eq!(
            run.stdout,
            std::fs::read(&from_file).unwrap(),
            "{extra:?}: the same frame"
        );
    }
}

#[test]
fn a_fifo_gives_the_frame_a_file_gives() {
    let dir = temp_dir("fifo-frame");
    let keys = keys_file(&dir, 3_000, 9);
    let from_file = dir.join("file.blwr");
    ok(&["build", "-q", "--keys", s(&keys), "-o", s(&from_file)]);
    let fifo = dir.join("keys.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let mut out = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
            write_keys(&mut out, 3_000, 9);
        })
    };
    let from_fifo = dir.join("fifo.blwr");
    ok(&["build", "-q", "--keys", s(&fifo), "-o", s(&from_fifo)]);
    writer.join().unwrap();
    assert_eq!(
        std::fs::read(&from_fifo).unwrap(),
        std::fs::read(&from_file).unwrap()
    );
}

/// 64 MiB of keys on standard input: the program's peak memory stays far below the input,
/// whether it plans (counting the keys while it keeps a copy on disk) or is given m and k
/// (one pass). Held whole, the input alone took more than 64 MiB.
#[test]
fn keys_on_standard_input_are_not_held_in_memory() {
    const COUNT: usize = 64 << 10;
    const LEN: usize = 1023; // 1 KiB a line with its newline: 64 MiB.
    for extra in [&[][..], &["--m", "1000000", "--k", "2"]] {
        let mut args = vec!["build", "-q", "--keys", "-", "-o", "-"];
        args.extend_from_slice(extra);
        let run = run_piped(&args, |out| write_keys(out, COUNT, LEN));
        assert_eq!(run.code, Some(0), "{extra:?}: {}", run.stderr);
        assert!(run.stdout.len() > 1000, "{extra:?}");
        assert!(
            run.peak_kib < 32 << 10,
            "{extra:?}: {} KiB at the peak for 64 MiB of keys",
            run.peak_kib
        );
    }
    // query and update read their keys once, as they come, too.
    let dir = temp_dir("stdin-memory");
    let (_, frame) = keys_and_frame(&dir, 100, &["--m", "1000000", "--k", "2"]);
    for args in [
        vec!["update", s(&frame), "--insert", "-", "-o", "-"],
        vec!["query", s(&frame), "--keys", "-", "--count"],
    ] {
        let run = run_piped(&args, |out| write_keys(out, COUNT, LEN));
        assert!(matches!(run.code, Some(0 | 1)), "{args:?}: {}", run.stderr);
        assert!(
            run.peak_kib < 32 << 10,
            "{args:?}: {} KiB at the peak for 64 MiB of keys",
            run.peak_kib
        );
    }
}

#[test]
fn a_key_too_long_on_a_stream_is_named() {
    let run = run_piped(&["build", "--keys", "-", "-o", "-"], |out| {
        out.write_all(b"short\n").unwrap();
        // Past 1 MiB without a newline; the program stops reading there.
        let _ = out.write_all(&vec![b'x'; (1 << 20) + 10]);
    });
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("standard input: line 2: a key longer than"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty());
}

#[test]
fn an_unwritable_temporary_directory_is_said_with_the_way_out() {
    let mut child = piped(&["build", "--keys", "-", "-o", "-"])
        .env("TMPDIR", "/nonexistent/bloomwire-test")
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(b"a\nb\n");
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("/nonexistent/bloomwire-test"), "{stderr}");
    assert!(stderr.contains("--m and --k"), "{stderr}");
    // Given m and k, nothing is kept: the same input builds.
    let mut child = piped(&[
        "build", "-q", "--keys", "-", "-o", "-", "--m", "1000", "--k", "2",
    ])
    .env("TMPDIR", "/nonexistent/bloomwire-test")
    .spawn()
    .unwrap();
    child.stdin.take().unwrap().write_all(b"a\nb\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
