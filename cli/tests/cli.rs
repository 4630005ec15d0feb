//! End-to-end tests of the `bloomwire` program: it is run as a user would run it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// A fresh directory for one test, removed when the test passes.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bloomwire-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bloomwire"))
        .args(args)
        .output()
        .unwrap()
}

/// Runs and expects success; returns stdout.
fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs and expects a runtime failure: exit status 1 and one line on stderr.
fn fails(args: &[&str]) -> String {
    let out = run(args);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
    assert!(stderr.starts_with("bloomwire: "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    stderr
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

const N: usize = 5000;

/// Writes N keys with CRLF line ends (the program strips the `\r`) and builds a frame.
fn built(dir: &Path) -> (PathBuf, Value) {
    let keys = dir.join("keys.txt");
    let text: String = (0..N).map(|i| format!("key-{i}\r\n")).collect();
    std::fs::write(&keys, text).unwrap();
    let out = run(&["build", "--keys", s(&keys), "--fpr", "0.02"]);
    assert!(out.status.success());
    let summary = String::from_utf8(out.stderr).unwrap();
    assert!(summary.contains(&format!("{N} keys")), "{summary}");
    let frame = dir.join("keys.txt.blwr");
    let info: Value = serde_json::from_str(&ok(&["inspect", "--json", s(&frame)])).unwrap();
    (frame, info)
}

#[test]
fn build_inspect_query_decode() {
    let dir = temp_dir("roundtrip");
    let (frame, info) = built(&dir);
    let file_len = std::fs::metadata(&frame).unwrap().len();

    assert_eq!(info["n"], N.to_string());
    assert_eq!(info["version"], 1);
    assert_eq!(info["filter_type"], "standard");
    assert_eq!(info["base_hash"], "xxh64");
    assert_eq!(info["seed"], "0");
    assert_eq!(info["checksum"], "ok");
    assert_eq!(info["frame_bytes"], file_len);
    assert!(info["problem"].is_null());
    let coding = info["coding"].as_str().unwrap();
    assert!(
        ["adaptive", "known-p-symbols", "positional"].contains(&coding),
        "{coding}"
    );
    let m = info["m"].as_u64().unwrap();
    let k = info["k"].as_f64().unwrap();
    assert!(k >= 1.0 && m > N as u64, "m {m}, k {k}");
    // The coded payload is within a few percent of m H(p) for the measured p.
    let bound = info["entropy_bound_bytes"].as_f64().unwrap();
    let payload = info["payload_bytes"].as_f64().unwrap();
    assert!(
        bound <= payload && payload <= 1.02 * bound + 16.0,
        "{payload} vs {bound}"
    );
    let fpr = info["false_positive_rate"].as_f64().unwrap();
    assert!(fpr > 0.01 && fpr < 0.03, "{fpr}");

    // The text form has the same fields.
    let text = ok(&["inspect", s(&frame)]);
    let field = |name: &str| {
        let line = text.lines().find(|l| l.starts_with(&format!("{name}:")));
        line.unwrap_or_else(|| panic!("no {name} in {text}"))[name.len() + 1..].trim()
    };
    assert_eq!(field("m"), format!("{m} bits"));
    assert!(field("checksum").starts_with("ok"), "{text}");
    assert_eq!(field("n"), format!("{N} keys"));

    // No false negatives.
    let present: Vec<String> = (0..N).map(|i| format!("key-{i}")).collect();
    let mut args = vec!["query", s(&frame)];
    args.extend(present.iter().map(String::as_str));
    let answers = ok(&args);
    assert_eq!(answers.lines().count(), N);
    for (line, key) in answers.lines().zip(&present) {
        assert_eq!(line, format!("{key}\tmaybe"));
    }

    // Absent keys: false positives at about the planned rate (4 standard deviations).
    let absent: Vec<String> = (0..4000).map(|i| format!("absent-{i}")).collect();
    let mut args = vec!["query", s(&frame)];
    args.extend(absent.iter().map(String::as_str));
    let answers = ok(&args);
    let maybes = answers.lines().filter(|l| l.ends_with("\tmaybe")).count();
    let no = answers.lines().filter(|l| l.ends_with("\tno")).count();
    assert_eq!(maybes + no, absent.len());
    let expected = absent.len() as f64 * 0.02;
    assert!(
        (maybes as f64) < expected + 4.0 * expected.sqrt(),
        "{maybes} false positives"
    );

    // Hex keys: "key-1" is 6b65792d31.
    assert_eq!(
        ok(&["query", "--hex", s(&frame), "6b65792d31"]),
        "6b65792d31\tmaybe\n"
    );
    fails(&["query", "--hex", s(&frame), "6b6"]);

    // decode writes the packed bit array.
    let bits = dir.join("bits");
    ok(&["decode", s(&frame), "-o", s(&bits)]);
    let bytes = std::fs::read(&bits).unwrap();
    assert_eq!(bytes.len() as u64, m.div_ceil(8));
    let ones: u32 = bytes.iter().map(|b| b.count_ones()).sum();
    assert_eq!(u64::from(ones), info["ones"].as_u64().unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn plan_json_and_plot() {
    // Table I of the paper: 8 bits per element on the wire, m/n at most 14.
    let dir = temp_dir("plan");
    let svg = dir.join("plan.svg");
    let out = ok(&[
        "plan",
        "--n",
        "10000",
        "--budget-bytes",
        "10000",
        "--max-bits-per-element",
        "14",
        "--json",
        "--plot",
        s(&svg),
    ]);
    let plan: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(plan["n"], "10000");
    assert_eq!(plan["k"], 2.0);
    assert_eq!(plan["m"], 140_000);
    assert!(plan["worst_case_bytes"].as_u64().unwrap() <= 10_000);
    let f = plan["false_positive_rate"].as_f64().unwrap();
    assert!((f - 0.0177).abs() < 5e-4, "{f}");
    let raw = &plan["uncompressed"];
    assert_eq!(raw["k"], 6.0);
    assert!(raw["false_positive_rate"].as_f64().unwrap() > f);

    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("hash functions k"));

    // The table form, and the dual.
    let table = ok(&["plan", "--n", "10000", "--fpr", "0.01"]);
    assert!(table.contains("false positive probability"), "{table}");
    assert!(table.contains("uncompressed"), "{table}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_fails_with_one_line() {
    let dir = temp_dir("errors");
    let missing = dir.join("missing.blwr");
    for cmd in ["inspect", "query", "decode"] {
        let mut args = vec![cmd, s(&missing)];
        match cmd {
            "query" => args.push("key"),
            "decode" => args.extend(["-o", "/dev/null"]),
            _ => {}
        }
        fails(&args);
    }
    fails(&["build", "--keys", s(&missing)]);

    let garbage = dir.join("garbage.blwr");
    std::fs::write(&garbage, b"this is not a frame at all").unwrap();
    assert!(fails(&["inspect", s(&garbage)]).contains("not a bloomwire frame"));
    fails(&["query", s(&garbage), "key"]);

    let (frame, _) = built(&dir);
    let bytes = std::fs::read(&frame).unwrap();
    let truncated = dir.join("truncated.blwr");
    for len in [3, 12, bytes.len() / 2, bytes.len() - 1] {
        std::fs::write(&truncated, &bytes[..len]).unwrap();
        assert!(fails(&["query", s(&truncated), "key"]).contains("truncated"));
        assert!(fails(&["inspect", s(&truncated)]).contains("truncated"));
    }

    // A corrupted payload: inspect still prints the header, and says what is wrong.
    let mut corrupt = bytes.clone();
    corrupt[bytes.len() / 2] ^= 0x10;
    let corrupted = dir.join("corrupt.blwr");
    std::fs::write(&corrupted, &corrupt).unwrap();
    assert!(fails(&["query", s(&corrupted), "key"]).contains("checksum mismatch"));
    let out = run(&["inspect", "--json", s(&corrupted)]);
    assert_eq!(out.status.code(), Some(1));
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(info["checksum"], "mismatch");
    assert_eq!(info["n"], N.to_string());
    assert!(info["ones"].is_null());

    let empty = dir.join("empty.txt");
    std::fs::write(&empty, b"").unwrap();
    assert!(fails(&["build", "--keys", s(&empty)]).contains("no keys"));

    // Usage errors are clap's: exit status 2.
    assert_eq!(run(&["plan", "--n", "10"]).status.code(), Some(2));
    assert_eq!(run(&[]).status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn counting_frames_inspect_query_decode() {
    // A committed vector: a partitioned counting filter of 2-bit counters, keys 20..80 in it.
    let frame = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../spec/vectors/accept/counting_partitioned_w2_saturated_known.bin");
    let text = ok(&["inspect", s(&frame)]);
    assert!(
        text.contains("3 (counting, counters of a partitioned filter)"),
        "{text}"
    );
    assert!(text.contains("counter width:       2 bits"), "{text}");
    assert!(
        text.contains("coding:              4 (known-counters)"),
        "{text}"
    );
    assert!(text.contains("counter histogram:   22 44 16 38"), "{text}");
    let info: Value = serde_json::from_str(&ok(&["inspect", "--json", s(&frame)])).unwrap();
    assert_eq!(info["filter_type"], "counting");
    assert_eq!(info["counted_type"], "partitioned");
    assert_eq!(info["counter_width"], 2);
    assert_eq!(info["counter_histogram"].as_array().unwrap().len(), 4);
    assert_eq!(info["ones"], 98);
    let answers = ok(&["query", s(&frame), "key-20", "key-79"]);
    assert_eq!(answers, "key-20\tmaybe\nkey-79\tmaybe\n");
    let dir = temp_dir("counting");
    let out = dir.join("counters.bin");
    ok(&["decode", s(&frame), "-o", s(&out)]);
    assert_eq!(std::fs::read(&out).unwrap().len(), 120 * 2 / 8);
    // A delta is not a filter to query.
    let delta = frame.with_file_name("counting_delta_gen8_known.bin");
    assert!(fails(&["query", s(&delta), "key-1"]).contains("delta"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs with `stdin` as standard input and expects success.
fn succeeds_with_stdin(args: &[&str], stdin: &[u8]) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bloomwire"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    let writer = std::thread::spawn(move || pipe.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs with `stdin` as standard input and expects success; returns stderr.
fn ok_with_stdin(args: &[&str], stdin: &[u8]) -> String {
    String::from_utf8(succeeds_with_stdin(args, stdin).stderr).unwrap()
}

/// Every key answers "maybe" in the frame.
fn all_maybe(frame: &Path, keys: &[String]) {
    for batch in keys.chunks(5_000) {
        let mut args = vec!["query", s(frame)];
        args.extend(batch.iter().map(String::as_str));
        let answers = ok(&args);
        assert_eq!(answers.lines().count(), batch.len());
        assert!(
            answers.lines().all(|l| l.ends_with("\tmaybe")),
            "a key answers no"
        );
    }
}

#[test]
fn keys_from_a_pipe_are_read_once_and_all_inserted() {
    // `seq -f key-%g 0 99999 | bloomwire build --keys - -o f.blwr`: the keys were once read
    // twice, the second time from an empty pipe, giving a filter of 0 keys and status 0.
    let dir = temp_dir("stdin-keys");
    let keys: Vec<String> = (0..100_000).map(|i| format!("key-{i}")).collect();
    let input = keys.iter().map(|k| format!("{k}\n")).collect::<String>();
    let frame = dir.join("f.blwr");
    let note = ok_with_stdin(&["build", "--keys", "-", "-o", s(&frame)], input.as_bytes());
    assert!(note.starts_with("standard input: 100000 keys;"), "{note}");
    all_maybe(&frame, &keys);
    let info: Value = serde_json::from_str(&ok(&["inspect", "--json", s(&frame)])).unwrap();
    assert!(info["ones"].as_u64().unwrap() > 0, "{info}");

    // The same through a path that names a pipe.
    #[cfg(unix)]
    {
        let frame = dir.join("g.blwr");
        let note = ok_with_stdin(
            &["build", "--keys", "/dev/stdin", "-o", s(&frame)],
            input.as_bytes(),
        );
        assert!(note.contains(": 100000 keys;"), "{note}");
        all_maybe(&frame, &keys);
    }

    // `-` without `-o` has no file name to derive one from.
    assert!(fails(&["build", "--keys", "-"]).contains("-o"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// 64-bit values that JavaScript and jq would round as JSON numbers are decimal strings.
#[test]
fn json_carries_64_bit_values_as_decimal_strings() {
    let dir = temp_dir("json64");
    let keys = dir.join("keys.txt");
    std::fs::write(&keys, "a\nb\nc\n").unwrap();
    let frame = dir.join("f.blwr");
    ok(&[
        "build",
        "--keys",
        s(&keys),
        "--seed",
        "18446744073709551615",
        "-o",
        s(&frame),
    ]);
    let text = ok(&["inspect", "--json", s(&frame)]);
    assert!(text.contains("\"seed\":\"18446744073709551615\""), "{text}");
    let info: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(info["generation"], "0");
    assert_eq!(info["n"], "3");
    assert!(info["base_generation"].is_null());
}

/// A counting frame of `m` zero 8-bit counters: a known-counters table of one value and an
/// empty payload (about 30 bytes in all). Decoding it fills m bytes.
fn zero_counters_frame(m: u64) -> Vec<u8> {
    let varint = |mut v: u64, b: &mut Vec<u8>| {
        while v >= 0x80 {
            b.push(v as u8 | 0x80);
            v >>= 7;
        }
        b.push(v as u8);
    };
    let mut b = b"BLWR".to_vec();
    b.extend_from_slice(&[1, 0, 3, 1, 0, 4, 0, 0]); // version .. flags, seed 0
    varint(m, &mut b);
    b.extend_from_slice(&[0, 8]); // counted type, counter width
    varint(1 << 16, &mut b); // k = 1
    b.extend_from_slice(&[0, 0, 1]); // n, generation, table length
    varint(1 << 16, &mut b); // f(0)
    let payload = bloomwire_payload_of_zero_counters();
    varint(payload.len() as u64, &mut b);
    b.extend_from_slice(&payload);
    let crc = crc32c::crc32c(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

/// The payload the library writes for zero counters with a table of one value (the same for
/// every m).
fn bloomwire_payload_of_zero_counters() -> Vec<u8> {
    use bloomwire::{CounterCoding, CountingBloomFilter, Encoder};
    let params = bloomwire::Params::standard(100, 1, bloomwire::HashFamily::default()).unwrap();
    let f = CountingBloomFilter::new(params, 8).unwrap();
    let frame = Encoder::new()
        .encode_with(&f, CounterCoding::Known)
        .unwrap();
    frame.payload().to_vec()
}

#[test]
fn the_program_reads_frames_within_the_library_limits_unless_raised() {
    let dir = temp_dir("limits");
    // m = 2^32 counters would take 4 GiB to decode (8 GiB before the limits): refused.
    let big = dir.join("big.blwr");
    std::fs::write(&big, zero_counters_frame(1 << 32)).unwrap();
    for args in [
        vec!["decode", s(&big), "-o", "/dev/null"],
        vec!["query", s(&big), "key"],
    ] {
        let err = fails(&args);
        assert!(
            err.contains("--max-m") && err.contains("268435456"),
            "{err}"
        );
    }
    // One over the default limit, and the same frame within a raised one.
    let over = dir.join("over.blwr");
    std::fs::write(&over, zero_counters_frame(2000)).unwrap();
    assert!(fails(&["--max-m", "1999", "query", s(&over), "key"]).contains("--max-m"));
    assert_eq!(
        ok(&["query", "--max-m", "2000", s(&over), "key"]),
        "key\tno\n"
    );
    assert_eq!(ok(&["query", s(&over), "key"]), "key\tno\n");
    // The payload limit: the frame's payload over a limit one byte smaller, and a file
    // longer than any frame within the limit is refused unread.
    let (built, _) = built(&dir);
    let err = fails(&["--max-payload", "100", "query", s(&built), "key"]);
    assert!(err.contains("--max-payload"), "{err}");
    let long = dir.join("long.blwr");
    std::fs::write(&long, vec![0u8; 5000]).unwrap();
    let err = fails(&["--max-payload", "3", "inspect", s(&long)]);
    assert!(err.contains("--max-payload"), "{err}");
    // Documented in --help.
    let help = ok(&["--help"]);
    assert!(
        help.contains("--max-m") && help.contains("--max-payload"),
        "{help}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn query_refuses_an_opaque_frame() {
    // Another library's bits (base hash 0): inspect shows them, query refuses to guess.
    use bloomwire::{BitArray, BloomFilter, Encoder, HashFamily, Params};
    let dir = temp_dir("opaque");
    let mut bits = BitArray::new(4096);
    (0..4096).step_by(3).for_each(|i| bits.set(i));
    let params = Params::standard(4096, 7, HashFamily::opaque()).unwrap();
    let filter = BloomFilter::from_parts(params, bits, 500).unwrap();
    let frame = dir.join("opaque.blwr");
    let wire = Encoder::new().encode(&filter).unwrap().to_bytes();
    std::fs::write(&frame, &wire).unwrap();
    assert!(ok(&["inspect", s(&frame)]).contains("opaque"));
    let err = fails(&["query", s(&frame), "key-1"]);
    assert!(err.contains("opaque"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
/// Writes the keys `prefix-i` for i in `range`, one per line.
fn keys_file(dir: &Path, name: &str, range: std::ops::Range<usize>) -> PathBuf {
    let path = dir.join(name);
    let text: String = range.map(|i| format!("key-{i}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// The packed bits (or counters) a frame decodes to.
fn decoded(frame: &Path) -> Vec<u8> {
    let out = run(&["decode", s(frame), "-o", "-"]);
    assert!(out.status.success());
    out.stdout
}

fn inspect(frame: &Path) -> Value {
    serde_json::from_str(&ok(&["inspect", "--json", s(frame)])).unwrap()
}

/// Runs with `stdin` as standard input and expects success; returns stdout.
fn stdout_with_stdin(args: &[&str], stdin: &[u8]) -> String {
    String::from_utf8(succeeds_with_stdin(args, stdin).stdout).unwrap()
}

#[test]
fn diff_then_apply_reproduces_the_new_filter_bit_for_bit() {
    let dir = temp_dir("delta");
    let old_keys = keys_file(&dir, "old.txt", 0..5000);
    let new_keys = keys_file(&dir, "new.txt", 250..5250);
    for layout in ["standard", "partitioned", "blocks"] {
        // Unnumbered frames (generation 0): the delta goes from 0 to 1.
        let (old, new) = (dir.join("old.blwr"), dir.join("new.blwr"));
        for (keys, frame) in [(&old_keys, &old), (&new_keys, &new)] {
            ok(&[
                "build",
                "--keys",
                s(keys),
                "--layout",
                layout,
                "-o",
                s(frame),
            ]);
        }
        let delta = dir.join("delta.blwr");
        let out = run(&["diff", s(&old), s(&new), "-o", s(&delta)]);
        assert!(out.status.success());
        let note = String::from_utf8(out.stderr).unwrap();
        assert!(note.contains("from generation 0 to 1"), "{note}");
        assert!(note.contains("carries generation 0: numbered 1"), "{note}");
        let info = inspect(&delta);
        assert_eq!(info["kind"], "delta");
        assert_eq!(info["base_generation"], "0");
        assert_eq!(info["generation"], "1");
        assert_eq!(info["filter_type"], layout);
        // 250 keys out, 250 in: far smaller than the new frame.
        let delta_len = std::fs::metadata(&delta).unwrap().len();
        let new_len = std::fs::metadata(&new).unwrap().len();
        assert!(4 * delta_len < new_len, "{delta_len} vs {new_len}");

        let applied = dir.join("applied.blwr");
        ok(&["apply", s(&old), s(&delta), "-o", s(&applied)]);
        assert_eq!(decoded(&applied), decoded(&new), "{layout}");
        let (a, b) = (inspect(&applied), inspect(&new));
        assert_eq!(a["generation"], "1");
        for field in ["n", "m", "k", "filter_type", "coding", "payload_bytes"] {
            assert_eq!(a[field], b[field], "{layout} {field}");
        }
        // The frames differ only in the generation: with it, byte for byte.
        let (g1, g2) = (dir.join("g1.blwr"), dir.join("g2.blwr"));
        ok(&[
            "build",
            "--keys",
            s(&old_keys),
            "--layout",
            layout,
            "--generation",
            "1",
            "-o",
            s(&g1),
        ]);
        ok(&[
            "build",
            "--keys",
            s(&new_keys),
            "--layout",
            layout,
            "--generation",
            "2",
            "-o",
            s(&g2),
        ]);
        ok(&["diff", s(&g1), s(&g2), "-o", s(&delta)]);
        assert_eq!(inspect(&delta)["generation"], "2");
        ok(&["apply", s(&g1), s(&delta), "-o", s(&applied)]);
        assert_eq!(
            std::fs::read(&applied).unwrap(),
            std::fs::read(&g2).unwrap(),
            "{layout}"
        );
    }

    // The next generation from an applied frame: 1 to 2.
    let (old, new, delta) = (
        dir.join("old.blwr"),
        dir.join("new.blwr"),
        dir.join("d.blwr"),
    );
    let applied = dir.join("applied.blwr");
    ok(&["build", "--keys", s(&old_keys), "-o", s(&old)]);
    ok(&["build", "--keys", s(&new_keys), "-o", s(&new)]);
    ok(&["diff", s(&old), s(&new), "-o", s(&delta)]);
    ok(&["apply", s(&old), s(&delta), "-o", s(&applied)]);
    let third = keys_file(&dir, "third.txt", 500..5500);
    let next = dir.join("third.blwr");
    ok(&["build", "--keys", s(&third), "-o", s(&next)]);
    let delta2 = dir.join("d2.blwr");
    ok(&["diff", s(&applied), s(&next), "-o", s(&delta2)]);
    assert_eq!(inspect(&delta2)["base_generation"], "1");
    let applied2 = dir.join("applied2.blwr");
    ok(&["apply", s(&applied), s(&delta2), "-o", s(&applied2)]);
    assert_eq!(decoded(&applied2), decoded(&next));
    assert_eq!(inspect(&applied2)["generation"], "2");

    // What does not apply, each one line naming what differs.
    let err = fails(&["apply", s(&new), s(&delta), "-o", s(&dir.join("x"))]);
    assert!(err.contains("base digest mismatch"), "{err}");
    let err = fails(&["apply", s(&applied), s(&delta), "-o", s(&dir.join("x"))]);
    assert!(
        err.contains("generation mismatch") && err.contains("generation 0"),
        "{err}"
    );
    let err = fails(&["apply", s(&old), s(&new), "-o", s(&dir.join("x"))]);
    assert!(err.contains("not a delta"), "{err}");
    let err = fails(&["diff", s(&delta), s(&new), "-o", s(&dir.join("x"))]);
    assert!(err.contains("delta"), "{err}");
    let err = fails(&["diff", s(&applied2), s(&applied), "-o", s(&dir.join("x"))]);
    assert!(err.contains("not after"), "{err}");
    let other = dir.join("other.blwr");
    ok(&[
        "build",
        "--keys",
        s(&new_keys),
        "--fpr",
        "0.001",
        "-o",
        s(&other),
    ]);
    let err = fails(&["diff", s(&old), s(&other), "-o", s(&dir.join("x"))]);
    assert!(err.contains("differ in m ("), "{err}");
    let err = fails(&["apply", s(&other), s(&delta), "-o", s(&dir.join("x"))]);
    assert!(
        err.contains("parameter mismatch") && err.contains("m ("),
        "{err}"
    );
    let seeded = dir.join("seeded.blwr");
    ok(&[
        "build",
        "--keys",
        s(&new_keys),
        "--seed",
        "7",
        "-o",
        s(&seeded),
    ]);
    let err = fails(&["diff", s(&old), s(&seeded), "-o", s(&dir.join("x"))]);
    assert!(err.contains("differ in hash family"), "{err}");
    // A corrupted delta: the checksum.
    let mut bytes = std::fs::read(&delta).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    let corrupt = dir.join("corrupt.blwr");
    std::fs::write(&corrupt, bytes).unwrap();
    let err = fails(&["apply", s(&old), s(&corrupt), "-o", s(&dir.join("x"))]);
    assert!(err.contains("checksum mismatch"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn counting_builds_diff_and_apply() {
    let dir = temp_dir("counting-build");
    let old_keys = keys_file(&dir, "old.txt", 0..4000);
    let new_keys = keys_file(&dir, "new.txt", 100..4100);
    let (old, new) = (dir.join("old.blwr"), dir.join("new.blwr"));
    for (keys, frame, generation) in [(&old_keys, &old, "5"), (&new_keys, &new, "6")] {
        let out = run(&[
            "build",
            "--keys",
            s(keys),
            "--counting",
            "4",
            "--layout",
            "partitioned",
            "--generation",
            generation,
            "-o",
            s(frame),
        ]);
        assert!(out.status.success());
        let note = String::from_utf8(out.stderr).unwrap();
        assert!(
            note.contains("counters of 4 bits") && note.contains("layout partitioned"),
            "{note}"
        );
    }
    let info = inspect(&old);
    assert_eq!(info["filter_type"], "counting");
    assert_eq!(info["counted_type"], "partitioned");
    assert_eq!(info["counter_width"], 4);
    assert_eq!(info["generation"], "5");
    assert_eq!(info["n"], "4000");
    // Planned for the default rate of 0.01.
    let fpr = info["false_positive_rate"].as_f64().unwrap();
    assert!(fpr > 0.003 && fpr <= 0.012, "{fpr}");
    let present: Vec<String> = (0..4000).map(|i| format!("key-{i}")).collect();
    all_maybe(&old, &present);

    let delta = dir.join("delta.blwr");
    ok(&["diff", s(&old), s(&new), "-o", s(&delta)]);
    let info = inspect(&delta);
    assert_eq!(
        (info["kind"].as_str(), info["filter_type"].as_str()),
        (Some("delta"), Some("counting"))
    );
    let applied = dir.join("applied.blwr");
    ok(&["apply", s(&old), s(&delta), "-o", s(&applied)]);
    assert_eq!(decoded(&applied), decoded(&new));
    assert_eq!(
        std::fs::read(&applied).unwrap(),
        std::fs::read(&new).unwrap()
    );

    // A counting frame and a Bloom frame do not mix.
    let bloom = dir.join("bloom.blwr");
    ok(&["build", "--keys", s(&old_keys), "-o", s(&bloom)]);
    assert!(fails(&["diff", s(&bloom), s(&new), "-o", s(&dir.join("x"))]).contains("kind"));
    assert!(fails(&["apply", s(&bloom), s(&delta), "-o", s(&dir.join("x"))]).contains("counting"));
    // A budget, and codings of bits refused for counters.
    ok(&[
        "build",
        "--keys",
        s(&old_keys),
        "--counting",
        "2",
        "--budget-bytes",
        "3000",
        "-o",
        s(&old),
    ]);
    assert!(std::fs::metadata(&old).unwrap().len() <= 3000);
    assert_eq!(inspect(&old)["counter_width"], 2);
    assert!(fails(&[
        "build",
        "--keys",
        s(&old_keys),
        "--counting",
        "2",
        "--coding",
        "adaptive"
    ])
    .contains("--coding"));
    assert_eq!(
        run(&["build", "--keys", s(&old_keys), "--counting", "9"])
            .status
            .code(),
        Some(2)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn layouts() {
    let dir = temp_dir("layouts");
    let keys = keys_file(&dir, "keys.txt", 0..3000);
    let present: Vec<String> = (0..3000).map(|i| format!("key-{i}")).collect();
    for (layout, id) in [("standard", 0), ("partitioned", 1), ("blocks", 2)] {
        let frame = dir.join(format!("{layout}.blwr"));
        ok(&[
            "build",
            "--keys",
            s(&keys),
            "--layout",
            layout,
            "--fpr",
            "0.02",
            "-o",
            s(&frame),
        ]);
        let info = inspect(&frame);
        assert_eq!(info["filter_type"], layout);
        let text = ok(&["inspect", s(&frame)]);
        assert!(
            text.contains(&format!("filter type:         {id} ({layout})")),
            "{text}"
        );
        let fpr = info["false_positive_rate"].as_f64().unwrap();
        assert!(fpr > 0.01 && fpr < 0.03, "{layout}: {fpr}");
        if layout == "blocks" {
            // One block per binary digit of m, summing to m.
            let m = info["m"].as_u64().unwrap();
            let blocks = info["blocks"].as_array().unwrap();
            assert_eq!(blocks.len() as u32, m.count_ones());
            let total: u64 = blocks.iter().map(|b| b["bits"].as_u64().unwrap()).sum();
            assert_eq!(total, m);
        }
        all_maybe(&frame, &present);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn query_keys_from_files_and_stdin_decodes_only_the_chunks_needed() {
    let dir = temp_dir("query-keys");
    let keys = keys_file(&dir, "keys.txt", 0..20_000);
    // Chunks of 2^12 bits, and the same filter unchunked.
    let (chunked, whole) = (dir.join("chunked.blwr"), dir.join("whole.blwr"));
    ok(&[
        "build",
        "--keys",
        s(&keys),
        "--chunk-shift",
        "12",
        "-o",
        s(&chunked),
    ]);
    ok(&[
        "build",
        "--keys",
        s(&keys),
        "--chunk-shift",
        "never",
        "-o",
        s(&whole),
    ]);
    let info = inspect(&chunked);
    let chunks = info["m"].as_u64().unwrap().div_ceil(1 << 12);
    assert_eq!(info["chunk_shift"], 12);
    assert!(inspect(&whole)["chunk_shift"].is_null());
    assert_eq!(decoded(&chunked), decoded(&whole));

    // Present and absent keys, from a file and from standard input: the same answers from
    // both frames, every present key "maybe".
    let mixed: String = (0..2000)
        .map(|i| {
            if i % 2 == 0 {
                format!("key-{i}\n")
            } else {
                format!("absent-{i}\n")
            }
        })
        .collect();
    let list = dir.join("list.txt");
    std::fs::write(&list, &mixed).unwrap();
    let from_file = ok(&["query", s(&chunked), "--keys", s(&list)]);
    let from_stdin = stdout_with_stdin(&["query", s(&whole), "--keys", "-"], mixed.as_bytes());
    assert_eq!(from_file, from_stdin);
    assert_eq!(from_file.lines().count(), 2000);
    for (line, key) in from_file.lines().zip(mixed.lines()) {
        let (k, answer) = line.split_once('\t').unwrap();
        assert_eq!(k, key);
        if key.starts_with("key-") {
            assert_eq!(answer, "maybe");
        }
    }
    let nos = from_file.lines().filter(|l| l.ends_with("\tno")).count();
    assert!(nos > 900, "{nos} of 1000 absent keys answer no");
    // --count.
    let counted = ok(&["query", s(&chunked), "--keys", s(&list), "--count"]);
    assert_eq!(counted, format!("maybe\t{}\nno\t{nos}\n", 2000 - nos));

    // One key decodes at most k chunks; all the keys decode each chunk once.
    let out = run(&["query", "-v", s(&chunked), "key-7"]);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "key-7\tmaybe\n");
    let note = String::from_utf8(out.stderr).unwrap();
    let k = info["k"].as_f64().unwrap().ceil() as u64;
    let decodes: u64 = note
        .split("decoded ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(decodes >= 1 && decodes <= k, "{note}");
    assert!(note.contains(&format!("of {chunks} ")), "{note}");
    let out = run(&["query", "-v", s(&chunked), "--keys", s(&keys), "--count"]);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "maybe\t20000\nno\t0\n"
    );
    let note = String::from_utf8(out.stderr).unwrap();
    assert!(
        note.contains(&format!("decoded {chunks} chunk(s) of {chunks} ")),
        "{note}"
    );
    let note = String::from_utf8(run(&["query", "-v", s(&whole), "key-7"]).stderr).unwrap();
    assert!(note.contains("decoded whole"), "{note}");

    // Hex lines are printed as given; a line that is not hex fails.
    let hex = dir.join("hex.txt");
    std::fs::write(&hex, "6b65792d31\n6b65792d3130303030\n").unwrap();
    assert_eq!(
        ok(&["query", s(&chunked), "--hex", "--keys", s(&hex)]),
        ok(&[
            "query",
            s(&chunked),
            "--hex",
            "6b65792d31",
            "6b65792d3130303030"
        ])
    );
    std::fs::write(&hex, "6b65792d31\nkey-1\n").unwrap();
    assert!(fails(&["query", s(&chunked), "--hex", "--keys", s(&hex)]).contains("key 2 is not hex"));
    // Keys as arguments and --keys together, or neither, are usage errors.
    assert_eq!(
        run(&["query", s(&chunked), "--keys", s(&list), "key-1"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(run(&["query", s(&chunked)]).status.code(), Some(2));
    // A corrupted chunk fails when a key needs it.
    let bytes = std::fs::read(&chunked).unwrap();
    let mut corrupt = bytes.clone();
    corrupt[bytes.len() / 2] ^= 0x40;
    let bad = dir.join("bad.blwr");
    std::fs::write(&bad, &corrupt).unwrap();
    assert!(fails(&["query", s(&bad), "--keys", s(&keys)]).contains("checksum"));
    // The file is read in pieces, so its length is checked against the header's.
    std::fs::write(&bad, &bytes[..bytes.len() - 1]).unwrap();
    assert!(fails(&["query", s(&bad), "key-1"]).contains("truncated"));
    std::fs::write(&bad, [&bytes[..], b"x"].concat()).unwrap();
    assert!(fails(&["query", s(&bad), "key-1"]).contains("trailing"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn binary_keys_files() {
    let dir = temp_dir("binary-keys");
    // Keys with NUL bytes and newlines: as length-prefixed records they are what they are.
    let keys: Vec<Vec<u8>> = (0u32..3000)
        .map(|i| {
            let mut k = i.to_le_bytes().to_vec();
            k.extend_from_slice(b"\n\0x");
            k
        })
        .collect();
    let mut records = Vec::new();
    for k in &keys {
        records.extend_from_slice(&(k.len() as u32).to_le_bytes());
        records.extend_from_slice(k);
    }
    let file = dir.join("keys.bin");
    std::fs::write(&file, &records).unwrap();
    let frame = dir.join("f.blwr");
    let out = run(&[
        "build",
        "--keys",
        s(&file),
        "--binary-keys",
        "-o",
        s(&frame),
    ]);
    assert!(out.status.success());
    let note = String::from_utf8(out.stderr).unwrap();
    assert!(
        note.starts_with(&format!("{}: 3000 keys;", s(&file))),
        "{note}"
    );
    assert!(!note.contains("warning"), "{note}");
    let answers = ok(&[
        "query",
        s(&frame),
        "--binary-keys",
        "--keys",
        s(&file),
        "--count",
    ]);
    assert_eq!(answers, "maybe\t3000\nno\t0\n");
    let hex: Vec<String> = keys[..50]
        .iter()
        .map(|k| k.iter().map(|b| format!("{b:02x}")).collect())
        .collect();
    let mut args = vec!["query", "--hex", s(&frame)];
    args.extend(hex.iter().map(String::as_str));
    assert!(ok(&args).lines().all(|l| l.ends_with("\tmaybe")));
    // A truncated record.
    std::fs::write(&file, &records[..records.len() - 2]).unwrap();
    assert!(fails(&["build", "--keys", s(&file), "--binary-keys"]).contains("record 2999"));

    // The same file read as lines: built, with a warning that says what it read.
    std::fs::write(&file, &records).unwrap();
    let out = run(&["build", "--keys", s(&file), "-o", s(&frame)]);
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    let warning = err.lines().next().unwrap();
    assert!(warning.starts_with("bloomwire: warning: "), "{err}");
    assert!(
        warning.contains("looks binary") && warning.contains("--binary-keys"),
        "{warning}"
    );
    let lines = records.iter().filter(|&&b| b == b'\n').count() + 1;
    assert!(
        warning.contains(&format!("read as {lines} keys")),
        "{warning}"
    );
    let out = run(&[
        "build",
        "--keys",
        s(&file),
        "--allow-binary",
        "-o",
        s(&frame),
    ]);
    assert!(!String::from_utf8(out.stderr).unwrap().contains("warning"));
    // query --keys warns alike.
    let out = run(&["query", s(&frame), "--keys", s(&file), "--count"]);
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .contains("looks binary"));

    // Latin-1 text, most lines not UTF-8: a warning; UTF-8 text: none.
    let latin1: Vec<u8> = (0..100)
        .flat_map(|i| {
            format!("caf\u{e9}-{i}\n")
                .chars()
                .map(|c| c as u8)
                .collect::<Vec<u8>>()
        })
        .collect();
    std::fs::write(&file, &latin1).unwrap();
    let err =
        String::from_utf8(run(&["build", "--keys", s(&file), "-o", s(&frame)]).stderr).unwrap();
    assert!(err.contains("100 are not UTF-8"), "{err}");
    let utf8: String = (0..100).map(|i| format!("caf\u{e9}-{i}\n")).collect();
    std::fs::write(&file, utf8).unwrap();
    let err =
        String::from_utf8(run(&["build", "--keys", s(&file), "-o", s(&frame)]).stderr).unwrap();
    assert!(!err.contains("warning"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The progress bar is for terminals: with stderr a pipe, a large build writes its one
/// summary line and nothing else (no carriage returns, no escape sequences).
#[test]
fn no_progress_bytes_when_stderr_is_not_a_terminal() {
    let dir = temp_dir("progress");
    let keys = keys_file(&dir, "keys.txt", 0..150_000);
    assert!(std::fs::metadata(&keys).unwrap().len() >= 1 << 20);
    let out = run(&["build", "--keys", s(&keys), "-o", s(&dir.join("f.blwr"))]);
    assert!(out.status.success());
    let err = out.stderr;
    assert!(
        !err.contains(&b'\r') && !err.contains(&0x1b),
        "{:?}",
        String::from_utf8_lossy(&err)
    );
    let err = String::from_utf8(err).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(": 150000 keys;"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn help_describes_the_commands() {
    let help = ok(&["--help"]);
    for command in ["build", "query", "diff", "apply"] {
        assert!(help.contains(&format!("  {command} ")), "{help}");
    }
    let query = ok(&["query", "--help"]);
    assert!(
        query.contains("--keys <FILE>") && query.contains("decoded whole"),
        "{query}"
    );
    assert!(query.contains("Exit status"), "{query}");
    let build = ok(&["build", "--help"]);
    for option in [
        "--counting <BITS>",
        "--layout",
        "--binary-keys",
        "--chunk-shift",
    ] {
        assert!(build.contains(option), "{build}");
    }
}
