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
fn ok_with_stdin(args: &[&str], stdin: &[u8]) -> String {
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
    String::from_utf8(out.stderr).unwrap()
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
