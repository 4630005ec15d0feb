//! What the program's test files share: running it, and a directory per test.

#![allow(dead_code)] // Each test file uses some of these.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A fresh directory for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bloomwire-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The program.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_bloomwire")
}

/// The program with `args`, its standard input, output and error piped, to spawn.
pub fn piped(args: &[&str]) -> Command {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Run the program with `args`, standard input empty.
pub fn run(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Run the program with `args` and its standard output closed (`>&-`), through `sh`.
pub fn run_stdout_closed(args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(r#"exec "$@" >&-"#)
        .arg("sh")
        .arg(bin())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Run and expect success; returns stdout.
pub fn ok(args: &[&str]) -> Vec<u8> {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Run and expect exit status `code` with one line on stderr starting `bloomwire: `
/// (a runtime error); returns that line.
pub fn fails_with(code: i32, args: &[&str]) -> String {
    let out = run(args);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
    assert!(stderr.starts_with("bloomwire: "), "{args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    stderr
}

/// Run and expect a usage error: status 2 and clap's `error: ...` message; returns it.
pub fn usage_error(args: &[&str]) -> String {
    let out = run(args);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty());
    stderr
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The file `name` in `dir`, written with `contents`.
pub fn file_with(dir: &Path, name: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

/// A keys file of `n` keys `key-0` ... and its frame, built with `extra` options.
pub fn keys_and_frame(dir: &Path, n: usize, extra: &[&str]) -> (PathBuf, PathBuf) {
    let keys = dir.join(format!("keys-{n}.txt"));
    let text: String = (0..n).map(|i| format!("key-{i}\n")).collect();
    std::fs::write(&keys, text).unwrap();
    let frame = dir.join(format!("keys-{n}.blwr"));
    let mut args = vec!["build", "-q", "-f", "--keys", s(&keys), "-o", s(&frame)];
    args.extend_from_slice(extra);
    ok(&args);
    (keys, frame)
}
