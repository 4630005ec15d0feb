//! End-to-end tests of the `bloomwire` program: it is run as a user would run it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod common;

use common::{file_with, s, temp_dir};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bloomwire"))
        .args(args)
        .output()
        .unwrap()
}

/// The program's subcommands.
const COMMANDS: [&str; 10] = [
    "build", "inspect", "query", "decode", "wrap", "update", "plan", "diff", "apply", "conform",
];

/// The subcommand of a command line.
fn command<'a>(args: &[&'a str]) -> Option<&'a str> {
    args.iter().copied().find(|a| COMMANDS.contains(a))
}

/// Whether `query`'s output says some key is certainly absent (one line `KEY\tno`, or with
/// --count `no\tN` for N > 0).
fn some_key_absent(stdout: &str) -> bool {
    stdout
        .lines()
        .any(|l| l.ends_with("\tno") || l.strip_prefix("no\t").is_some_and(|n| n != "0"))
}

/// Runs and expects success; returns stdout. For `query`, success is status 0 when every
/// key answers "maybe" and 1 when some key answers "no" (grep's statuses).
fn ok(args: &[&str]) -> String {
    let out = succeeded(args, run(args));
    String::from_utf8(out.stdout).unwrap()
}

/// `out` of a run with `args`, checked to be a success (see [`ok`]).
fn succeeded(args: &[&str], out: Output) -> Output {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let expected = if command(args) == Some("query") && some_key_absent(&stdout) {
        1
    } else {
        0
    };
    assert_eq!(
        out.status.code(),
        Some(expected),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs and expects a runtime failure: exit status 1 (2 for `query`, whose 1 means a key
/// is absent) and one line on stderr.
fn fails(args: &[&str]) -> String {
    let code = if command(args) == Some("query") { 2 } else { 1 };
    common::fails_with(code, args)
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

    let garbage = file_with(&dir, "garbage.blwr", b"this is not a frame at all");
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
    let corrupted = file_with(&dir, "corrupt.blwr", &corrupt);
    assert!(fails(&["query", s(&corrupted), "key"]).contains("checksum mismatch"));
    let out = run(&["inspect", "--json", s(&corrupted)]);
    assert_eq!(out.status.code(), Some(1));
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(info["checksum"], "mismatch");
    assert_eq!(info["n"], N.to_string());
    assert!(info["ones"].is_null());

    let empty = file_with(&dir, "empty.txt", b"");
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

/// Runs with `stdin` written to standard input by a thread; returns the output and how
/// the writing ended.
fn with_stdin(args: &[&str], stdin: &[u8]) -> (Output, std::io::Result<()>) {
    let mut child = common::piped(args).spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    let writer = std::thread::spawn(move || pipe.write_all(&input));
    let out = child.wait_with_output().unwrap();
    (out, writer.join().unwrap())
}

/// Runs with `stdin` as standard input and expects success.
fn succeeds_with_stdin(args: &[&str], stdin: &[u8]) -> Output {
    let (out, written) = with_stdin(args, stdin);
    written.unwrap();
    succeeded(args, out)
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

    // `-` without `-o` has no file name to derive one from: a usage error.
    let out = run(&["build", "--keys", "-"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-o"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// 64-bit values that JavaScript and jq would round as JSON numbers are decimal strings.
#[test]
fn json_carries_64_bit_values_as_decimal_strings() {
    let dir = temp_dir("json64");
    let keys = file_with(&dir, "keys.txt", "a\nb\nc\n");
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
    std::fs::remove_dir_all(&dir).unwrap();
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
    let big = file_with(&dir, "big.blwr", zero_counters_frame(1 << 32));
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
    let over = file_with(&dir, "over.blwr", zero_counters_frame(2000));
    assert!(fails(&["--max-m", "1999", "query", s(&over), "key"]).contains("--max-m"));
    // 2000 counters take 2000 bytes: more than a Bloom filter of --max-m 2000 bits.
    let err = fails(&["--max-m", "2000", "query", s(&over), "key"]);
    assert!(err.contains("--max-filter-bytes"), "{err}");
    assert_eq!(
        ok(&[
            "query",
            "--max-m",
            "2000",
            "--max-filter-bytes",
            "2000",
            s(&over),
            "key"
        ]),
        "key\tno\n"
    );
    assert_eq!(ok(&["query", s(&over), "key"]), "key\tno\n");
    // The payload limit: the frame's payload over a limit one byte smaller, and a file
    // longer than any frame within the limit is refused unread.
    let (built, _) = built(&dir);
    let err = fails(&["--max-payload", "100", "query", s(&built), "key"]);
    assert!(err.contains("--max-payload"), "{err}");
    let long = dir.join("long.blwr");
    // (The largest frame is a payload of 3 bytes and a header with up to 4096 bytes of
    // metadata, a checksum and a tag: 8000 bytes are more.)
    std::fs::write(&long, vec![0u8; 8000]).unwrap();
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
                "-f",
                "-o",
                s(frame),
            ]);
        }
        let delta = dir.join("delta.blwr");
        let out = run(&["diff", s(&old), s(&new), "-f", "-o", s(&delta)]);
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
        ok(&["apply", s(&old), s(&delta), "-f", "-o", s(&applied)]);
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
            "-f",
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
            "-f",
            "-o",
            s(&g2),
        ]);
        ok(&["diff", s(&g1), s(&g2), "-f", "-o", s(&delta)]);
        assert_eq!(inspect(&delta)["generation"], "2");
        ok(&["apply", s(&g1), s(&delta), "-f", "-o", s(&applied)]);
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
    ok(&["build", "--keys", s(&old_keys), "-f", "-o", s(&old)]);
    ok(&["build", "--keys", s(&new_keys), "-f", "-o", s(&new)]);
    ok(&["diff", s(&old), s(&new), "-f", "-o", s(&delta)]);
    ok(&["apply", s(&old), s(&delta), "-f", "-o", s(&applied)]);
    let third = keys_file(&dir, "third.txt", 500..5500);
    let next = dir.join("third.blwr");
    ok(&["build", "--keys", s(&third), "-f", "-o", s(&next)]);
    let delta2 = dir.join("d2.blwr");
    ok(&["diff", s(&applied), s(&next), "-f", "-o", s(&delta2)]);
    assert_eq!(inspect(&delta2)["base_generation"], "1");
    let applied2 = dir.join("applied2.blwr");
    ok(&["apply", s(&applied), s(&delta2), "-f", "-o", s(&applied2)]);
    assert_eq!(decoded(&applied2), decoded(&next));
    assert_eq!(inspect(&applied2)["generation"], "2");

    // What does not apply, each one line with the library's error (spec 5.2).
    let err = fails(&["apply", s(&new), s(&delta), "-f", "-o", s(&dir.join("x"))]);
    assert!(
        err.contains("base of generation 0 differs from the sender's"),
        "{err}"
    );
    let err = fails(&[
        "apply",
        s(&applied),
        s(&delta),
        "-f",
        "-o",
        s(&dir.join("x")),
    ]);
    assert!(
        err.contains("generation 1 is not newer than the receiver's 1"),
        "{err}"
    );
    let err = fails(&["apply", s(&next), s(&delta2), "-f", "-o", s(&dir.join("x"))]);
    assert!(
        err.contains("delta applies to generation 1 but the receiver holds generation 0"),
        "{err}"
    );
    // A full frame as FRAME: applied when newer, else stale.
    let err = fails(&["apply", s(&old), s(&new), "-f", "-o", s(&dir.join("x"))]);
    assert!(
        err.contains("generation 0 is not newer than the receiver's 0"),
        "{err}"
    );
    ok(&[
        "apply",
        s(&old),
        s(&applied2),
        "-f",
        "-o",
        s(&dir.join("x")),
    ]);
    assert_eq!(decoded(&dir.join("x")), decoded(&next));
    let err = fails(&["diff", s(&delta), s(&new), "-f", "-o", s(&dir.join("x"))]);
    assert!(err.contains("delta"), "{err}");
    let err = fails(&[
        "diff",
        s(&applied2),
        s(&applied),
        "-f",
        "-o",
        s(&dir.join("x")),
    ]);
    assert!(err.contains("not after"), "{err}");
    let other = dir.join("other.blwr");
    ok(&[
        "build",
        "--keys",
        s(&new_keys),
        "--fpr",
        "0.001",
        "-f",
        "-o",
        s(&other),
    ]);
    let err = fails(&["diff", s(&old), s(&other), "-f", "-o", s(&dir.join("x"))]);
    assert!(err.contains("differ in m ("), "{err}");
    let err = fails(&["apply", s(&other), s(&delta), "-f", "-o", s(&dir.join("x"))]);
    assert!(err.contains("filters are not compatible: m is"), "{err}");
    let seeded = dir.join("seeded.blwr");
    ok(&[
        "build",
        "--keys",
        s(&new_keys),
        "--seed",
        "7",
        "-f",
        "-o",
        s(&seeded),
    ]);
    let err = fails(&["diff", s(&old), s(&seeded), "-f", "-o", s(&dir.join("x"))]);
    assert!(err.contains("differ in hash family"), "{err}");
    // A corrupted delta: the checksum.
    let mut bytes = std::fs::read(&delta).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    let corrupt = file_with(&dir, "corrupt.blwr", bytes);
    let err = fails(&["apply", s(&old), s(&corrupt), "-f", "-o", s(&dir.join("x"))]);
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
        "-f",
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
    let list = file_with(&dir, "list.txt", &mixed);
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
    let hex = file_with(&dir, "hex.txt", "6b65792d31\n6b65792d3130303030\n");
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
    let bad = file_with(&dir, "bad.blwr", &corrupt);
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
    let file = file_with(&dir, "keys.bin", &records);
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
    let out = run(&["build", "--keys", s(&file), "-f", "-o", s(&frame)]);
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
        "-f",
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
    let err = String::from_utf8(run(&["build", "--keys", s(&file), "-f", "-o", s(&frame)]).stderr)
        .unwrap();
    assert!(err.contains("100 are not UTF-8"), "{err}");
    let utf8: String = (0..100).map(|i| format!("caf\u{e9}-{i}\n")).collect();
    std::fs::write(&file, utf8).unwrap();
    let err = String::from_utf8(run(&["build", "--keys", s(&file), "-f", "-o", s(&frame)]).stderr)
        .unwrap();
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

// ---------------------------------------------------------------------------------------
// The format's vectors, read by the program as by the library.

/// `spec/vectors/` of the repository.
fn vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec/vectors")
}

/// Runs with `stdin` as standard input, whatever the outcome.
fn run_with_stdin(args: &[&str], stdin: &[u8]) -> Output {
    // The program may stop reading early (a refused input): a broken pipe is fine.
    with_stdin(args, stdin).0
}

/// A key file holding `hex` (64 hex digits) as the program reads it.
fn key_file(dir: &Path, name: &str, hex: &str) -> PathBuf {
    file_with(dir, name, format!("{hex}\n"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// The library's name of an error (`InvalidField`), and its field if it has one.
fn error_name(e: &bloomwire::Error) -> (String, Option<String>) {
    let debug = format!("{e:?}");
    let name = e.name().to_string();
    let field = debug
        .split("field: \"")
        .nth(1)
        .map(|rest| rest.split('"').next().unwrap().to_string());
    (name, field)
}

/// Every accept vector: `inspect` succeeds and reports what the manifest says (the tag
/// unverified without the key, verified with it; the restart flag; the metadata; the one
/// bits or the counter histogram), `query` gives the manifest's answers (on the result of
/// `apply` for a delta, on nothing for another library's bits) and `decode` the ones.
#[test]
fn every_accept_vector_passes_inspect_query_and_apply() {
    let dir = temp_dir("accept");
    let accept = vectors().join("accept");
    let mut manifests: Vec<PathBuf> = std::fs::read_dir(&accept)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    manifests.sort();
    assert!(manifests.len() >= 70, "{} vectors", manifests.len());
    for manifest in &manifests {
        let m: Value = serde_json::from_str(&std::fs::read_to_string(manifest).unwrap()).unwrap();
        let frame = accept.join(m["frame"].as_str().unwrap());
        let name = frame.file_name().unwrap().to_str().unwrap().to_string();
        let params = &m["params"];
        let key = m["key_hex"]
            .as_str()
            .map(|k| key_file(&dir, &format!("{name}.key"), k));
        let with_key = |args: &[&str]| -> Vec<String> {
            let mut v: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            if let Some(key) = &key {
                v.extend(["--key-file".to_string(), s(key).to_string()]);
            }
            v
        };

        // inspect, without a key and (for a tagged vector) with it.
        let info: Value = serde_json::from_str(&ok(&["inspect", "--json", s(&frame)])).unwrap();
        let tagged = params["tagged"].as_bool().unwrap_or(false);
        assert_eq!(
            info["tag"],
            if tagged { "unverified" } else { "absent" },
            "{name}"
        );
        assert!(info["problem"].is_null(), "{name}: {info}");
        assert_eq!(info["checksum"], "ok", "{name}");
        assert_eq!(info["m"], params["m"], "{name}");
        assert_eq!(info["n"], params["n"].to_string(), "{name}");
        assert_eq!(info["coding"], params["coding"], "{name}");
        assert_eq!(info["kind"], params["kind"], "{name}");
        assert_eq!(info["header_bytes"], params["header_len"], "{name}");
        assert_eq!(info["payload_bytes"], params["payload_len"], "{name}");
        assert_eq!(
            info["restart"],
            params["restart"].as_bool().unwrap_or(false),
            "{name}"
        );
        assert_eq!(info["metadata_hex"], params["metadata_hex"], "{name}");
        if m.get("ones").is_some() {
            assert_eq!(info["ones"], m["ones"], "{name}");
        }
        if m.get("counter_histogram").is_some() {
            assert_eq!(info["counter_histogram"], m["counter_histogram"], "{name}");
        }
        let text = ok(&["inspect", s(&frame)]);
        if tagged {
            assert!(text.contains("tagged, not verified"), "{name}: {text}");
            let args = with_key(&["inspect", "--json", s(&frame)]);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let info: Value = serde_json::from_str(&ok(&args)).unwrap();
            assert_eq!(info["tag"], "verified", "{name}");
        }

        // The filter to query: the frame's, or for a delta the result of applying it.
        let full = match m["base_frame"].as_str() {
            None => frame.clone(),
            Some(base) => {
                let out = dir.join(format!("{name}.applied"));
                let args = with_key(&[
                    "apply",
                    s(&accept.join(base)),
                    s(&frame),
                    "-f",
                    "-o",
                    s(&out),
                ]);
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                ok(&args);
                out
            }
        };
        if m["query_refused"].as_bool().unwrap_or(false) {
            let err = fails(&["query", s(&full), "6b6579"]);
            assert!(err.contains("opaque"), "{name}: {err}");
        } else {
            let keys: Vec<&Value> = m["member_keys"]
                .as_array()
                .unwrap()
                .iter()
                .chain(m["other_keys"].as_array().unwrap())
                .collect();
            let mut args = vec!["query", "--hex", s(&full)];
            args.extend(keys.iter().map(|k| k["key_hex"].as_str().unwrap()));
            if keys.is_empty() {
                continue;
            }
            let answers = ok(&args);
            for (line, k) in answers.lines().zip(&keys) {
                let expected = if k["expected"].as_bool().unwrap() {
                    "maybe"
                } else {
                    "no"
                };
                assert_eq!(
                    line,
                    format!("{}\t{expected}", k["key_hex"].as_str().unwrap()),
                    "{name}"
                );
            }
        }
        // decode gives the bits inspect counted.
        if params["kind"] == "full" && params["filter_type"] != "counting" {
            let bits = decoded(&frame);
            let ones: u32 = bits.iter().map(|b| b.count_ones()).sum();
            assert_eq!(Some(u64::from(ones)), m["ones"].as_u64(), "{name}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every reject vector fails `inspect` (or, for a frame that decodes but does not apply,
/// `apply`) with exit status 1 and the library's own error for it: the one its `decode`
/// (its `Receiver`) gives, which is the one the manifest names.
#[test]
fn every_reject_vector_fails_with_the_library_error() {
    use bloomwire::{AnyFilter, FrameKey, Limits, Message, Receiver, Verifier};
    let dir = temp_dir("reject");
    let reject = vectors().join("reject");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(reject.join("manifest.json")).unwrap())
            .unwrap();
    let entries = manifest.as_object().unwrap();
    assert!(entries.len() >= 100, "{} vectors", entries.len());
    for (file, entry) in entries {
        let frame = reject.join(file);
        let bytes = std::fs::read(&frame).unwrap();
        let key_hex = entry["key_hex"].as_str();
        let key = key_hex.map(|k| FrameKey::new(unhex(k).try_into().unwrap()));
        let (error, stderr) = match entry["apply_to"].as_str() {
            None => {
                let error = match &key {
                    Some(key) => bloomwire::decode::<Message>(
                        &bytes,
                        &Verifier::new(key.clone(), Limits::default()),
                    ),
                    None => bloomwire::decode::<Message>(&bytes, &Limits::default()),
                }
                .expect_err(file);
                let mut args = vec!["inspect".to_string(), s(&frame).to_string()];
                if let Some(k) = key_hex {
                    let path = key_file(&dir, &format!("{file}.key"), k);
                    args.extend(["--key-file".to_string(), s(&path).to_string()]);
                }
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                (error, fails(&args))
            }
            Some(base) => {
                let base = vectors().join(base);
                let mut receiver = Receiver::<AnyFilter>::with_limits(Limits::default());
                receiver.receive(&std::fs::read(&base).unwrap()).unwrap();
                let error = receiver.receive(&bytes).expect_err(file);
                // The frame itself is fine.
                ok(&["inspect", s(&frame)]);
                let out = dir.join("x");
                (
                    error,
                    fails(&["apply", s(&base), s(&frame), "-f", "-o", s(&out)]),
                )
            }
        };
        let (name, field) = error_name(&error);
        assert_eq!(name, entry["error"].as_str().unwrap(), "{file}: {error:?}");
        if let Some(expected) = entry["field"].as_str() {
            assert_eq!(field.as_deref(), Some(expected), "{file}: {error:?}");
        }
        assert!(
            stderr.contains(&error.to_string()),
            "{file}: the program says {stderr:?}, the library {error}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Spec 2.3: the payload is decoded before bytes after the frame are reported, so a frame
/// with a corrupt payload and bytes after it is CorruptPayload, as `decode` says. (inspect
/// once said "trailing bytes".)
#[test]
fn inspect_checks_the_payload_before_trailing_bytes() {
    let dir = temp_dir("order");
    let mut bytes = std::fs::read(vectors().join("reject/ans_data_left.bin")).unwrap();
    bytes.extend_from_slice(b"xyz");
    let frame = file_with(&dir, "f.blwr", &bytes);
    let err = fails(&["inspect", s(&frame)]);
    assert!(err.contains("corrupt payload"), "{err}");
    assert!(!err.contains("trailing"), "{err}");
    // A frame that decodes, with bytes after it: those are reported, after the fill.
    let mut bytes = std::fs::read(vectors().join("accept/std_1000_known_p.bin")).unwrap();
    bytes.extend_from_slice(b"xyz");
    std::fs::write(&frame, &bytes).unwrap();
    let out = run(&["inspect", "--json", s(&frame)]);
    assert_eq!(out.status.code(), Some(1));
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(info["ones"].as_u64().is_some(), "{info}");
    assert!(
        info["problem"]
            .as_str()
            .unwrap()
            .contains("3 trailing bytes"),
        "{info}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A raw frame whose payload is exactly --max-payload, with 2000 bytes of metadata and a
/// tag, is within the limits: the input cap is the largest frame they allow (a header with
/// metadata up to --max-metadata, the payload, the checksum and the tag), not the payload
/// and a header without metadata. (It was refused unread.)
#[test]
fn the_input_cap_counts_metadata_and_the_tag() {
    use bloomwire::{BitCoding, BloomFilter, Encoder, FrameKey, HashFamily, Params};
    let dir = temp_dir("cap");
    let mut f = BloomFilter::new(Params::standard(8000, 3, HashFamily::default()).unwrap());
    (0..500u32).for_each(|i| f.insert(i.to_le_bytes()));
    let frame = Encoder::new()
        .coding(BitCoding::Raw)
        .metadata(vec![b'm'; 2000])
        .key(FrameKey::new([9; 32]))
        .encode(&f)
        .unwrap();
    assert_eq!(frame.payload().len(), 1000);
    let path = file_with(&dir, "f.blwr", frame.to_bytes());
    let info: Value = serde_json::from_str(&ok(&[
        "--max-payload",
        "1000",
        "inspect",
        "--json",
        s(&path),
    ]))
    .unwrap();
    assert_eq!(info["payload_bytes"], 1000);
    assert_eq!(info["metadata_bytes"], 2000);
    ok(&[
        "--max-payload",
        "1000",
        "decode",
        s(&path),
        "-o",
        "/dev/null",
    ]);
    assert_eq!(
        ok(&[
            "--max-payload",
            "1000",
            "query",
            s(&path),
            "--count",
            "--keys",
            "-"
        ]),
        "maybe\t0\nno\t0\n"
    );
    // One byte less is the payload's limit, as the library says it.
    let err = fails(&["--max-payload", "999", "inspect", s(&path)]);
    assert!(
        err.contains("payload length = 1000") && err.contains("--max-payload"),
        "{err}"
    );
    // And metadata above --max-metadata.
    let err = fails(&["--max-metadata", "1999", "inspect", s(&path)]);
    assert!(
        err.contains("metadata length = 2000") && err.contains("--max-metadata"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An empty positional frame (about 30 bytes) declaring `m` bits: decoding it allocates
/// ceil(m / 8) bytes.
fn empty_frame_of_m(m: u64) -> Vec<u8> {
    let varint = |mut v: u64, b: &mut Vec<u8>| {
        while v >= 0x80 {
            b.push(v as u8 | 0x80);
            v >>= 7;
        }
        b.push(v as u8);
    };
    let mut b = b"BLWR".to_vec();
    b.extend_from_slice(&[1, 0, 0, 1, 0, 7, 0, 0]); // full, standard, xxh64, positional; seed 0
    varint(m, &mut b);
    varint(1 << 16, &mut b); // k = 1
    b.extend_from_slice(&[0, 0, 1, 0]); // n, generation, L = 1, no ones
    let crc = crc32c::crc32c(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

/// A frame that declares more bits than the machine holds, read with a raised --max-m, is
/// a one-line error, never an abort (SIGABRT). So is a filter that large to build.
#[test]
fn a_huge_m_is_an_error_not_an_abort() {
    let dir = temp_dir("huge");
    // The frame of the report: m = 2^40 (128 GiB of bits).
    let reported = "424c5752010000010007000080808080802080800400000100cecdb6ce";
    assert_eq!(hex(&empty_frame_of_m(1 << 40)), reported);
    // And m = 2^47 (16 TiB), beyond any machine that runs these tests.
    for (m, bytes) in [
        (1u64 << 40, unhex(reported)),
        (1 << 47, empty_frame_of_m(1 << 47)),
    ] {
        let frame = file_with(&dir, "huge.blwr", &bytes);
        let max_m = m.to_string();
        for args in [
            vec!["--max-m", &max_m, "inspect", s(&frame)],
            vec!["--max-m", &max_m, "decode", s(&frame), "-o", "/dev/null"],
            vec!["--max-m", &max_m, "query", s(&frame), "key"],
        ] {
            let err = fails(&args);
            assert!(err.contains("cannot allocate"), "{args:?}: {err}");
        }
        // Within the default limits it is refused unread.
        assert!(fails(&["inspect", s(&frame)]).contains("--max-m"));
    }
    let keys = keys_file(&dir, "keys.txt", 0..10);
    let m = (1u64 << 47).to_string();
    for counting in [None, Some("4")] {
        let mut args = vec![
            "--max-m",
            &m,
            "build",
            "--keys",
            s(&keys),
            "--m",
            &m,
            "--k",
            "3",
            "-o",
        ];
        let out = dir.join("out.blwr");
        args.push(s(&out));
        if let Some(width) = counting {
            args.extend(["--counting", width]);
        }
        assert!(fails(&args).contains("cannot allocate"));
        assert!(!out.exists());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The same for a counting frame: its counters are decoded by the library, whose decode
/// path allocates them infallibly for now.
#[test]
#[ignore = "needs the library's fallible decode"]
fn a_huge_counting_frame_is_an_error_not_an_abort() {
    let dir = temp_dir("huge-counting");
    let frame = file_with(&dir, "huge.blwr", zero_counters_frame(1 << 47));
    let max_m = (1u64 << 47).to_string();
    for args in [
        vec!["--max-m", &max_m, "inspect", s(&frame)],
        vec!["--max-m", &max_m, "decode", s(&frame), "-o", "/dev/null"],
        vec!["--max-m", &max_m, "query", s(&frame), "key"],
    ] {
        let err = fails(&args);
        assert!(err.contains("cannot allocate"), "{args:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---------------------------------------------------------------------------------------
// Keys, metadata, restart and limits.

/// The value of the line `name: value` of `inspect`'s text.
fn field<'a>(text: &'a str, name: &str) -> &'a str {
    let line = text.lines().find(|l| l.starts_with(&format!("{name}:")));
    line.unwrap_or_else(|| panic!("no {name} in {text}"))[name.len() + 1..].trim()
}

const KEY: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

/// `build --key-file k` and `inspect --key-file k` verify; without the key the frame is
/// "tagged, not verified"; another key is a one-line BadTag; an untagged frame read with
/// a key is MissingTag; every command that reads frames takes the key.
#[test]
fn key_files_sign_and_verify_frames() {
    let dir = temp_dir("keys");
    let keys = keys_file(&dir, "keys.txt", 0..3000);
    let key = key_file(&dir, "k", KEY);
    let other = key_file(&dir, "other", &KEY.replace("00", "ff"));
    let (tagged, plain) = (dir.join("tagged.blwr"), dir.join("plain.blwr"));
    ok(&[
        "build",
        "--keys",
        s(&keys),
        "--key-file",
        s(&key),
        "-o",
        s(&tagged),
    ]);
    ok(&["build", "--keys", s(&keys), "-o", s(&plain)]);
    // 16 bytes of tag.
    let (t, p) = (
        std::fs::metadata(&tagged).unwrap().len(),
        std::fs::metadata(&plain).unwrap().len(),
    );
    assert_eq!(t, p + 16);

    let text = ok(&["inspect", "--key-file", s(&key), s(&tagged)]);
    assert!(text.contains("tagged, verified with the key"), "{text}");
    let info: Value = serde_json::from_str(&ok(&[
        "inspect",
        "--json",
        "--key-file",
        s(&key),
        s(&tagged),
    ]))
    .unwrap();
    assert_eq!(info["tag"], "verified");
    let text = ok(&["inspect", s(&tagged)]);
    assert!(text.contains("tagged, not verified"), "{text}");
    assert_eq!(inspect(&tagged)["tag"], "unverified");
    assert_eq!(inspect(&plain)["tag"], "absent");

    // Another key: the library's BadTag, with its offset, exit 1, one line.
    let err = fails(&["inspect", "--key-file", s(&other), s(&tagged)]);
    assert!(
        err.contains(&format!(
            "authentication tag at offset {} does not match",
            t - 16
        )),
        "{err}"
    );
    let out = run(&["inspect", "--json", "--key-file", s(&other), s(&tagged)]);
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(info["tag"], "bad");
    assert!(info["ones"].is_null());
    // An untagged frame with a key: MissingTag.
    let err = fails(&["inspect", "--key-file", s(&key), s(&plain)]);
    assert!(err.contains("carries no authentication tag"), "{err}");

    // query, decode: the same checks.
    assert_eq!(
        ok(&["query", "--key-file", s(&key), s(&tagged), "key-1"]),
        "key-1\tmaybe\n"
    );
    assert_eq!(ok(&["query", s(&tagged), "key-1"]), "key-1\tmaybe\n");
    assert!(fails(&["query", "--key-file", s(&other), s(&tagged), "key-1"]).contains("tag"));
    assert!(fails(&["query", "--key-file", s(&key), s(&plain), "key-1"]).contains("no auth"));
    let bits = dir.join("bits");
    ok(&["decode", "--key-file", s(&key), s(&tagged), "-o", s(&bits)]);
    assert_eq!(std::fs::read(&bits).unwrap(), decoded(&plain));
    assert!(fails(&[
        "decode",
        "--key-file",
        s(&other),
        s(&tagged),
        "-f",
        "-o",
        s(&bits)
    ])
    .contains("does not match"));

    // A chunked frame, read whole with a key (its tag covers it all), chunk by chunk.
    let chunked = dir.join("chunked.blwr");
    ok(&[
        "build",
        "--keys",
        s(&keys),
        "--chunk-shift",
        "10",
        "--key-file",
        s(&key),
        "-o",
        s(&chunked),
    ]);
    let out = run(&["query", "-v", "--key-file", s(&key), s(&chunked), "key-7"]);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "key-7\tmaybe\n");
    assert!(String::from_utf8(out.stderr).unwrap().contains("decoded "));
    assert!(fails(&["query", "--key-file", s(&other), s(&chunked), "key-7"]).contains("tag"));
    // Without the key, from the file: the checksum is found before the tag.
    assert_eq!(ok(&["query", s(&chunked), "key-7"]), "key-7\tmaybe\n");

    // diff and apply: the inputs verified, the outputs tagged.
    let new_keys = keys_file(&dir, "new.txt", 100..3100);
    let new = dir.join("new.blwr");
    ok(&[
        "build",
        "--keys",
        s(&new_keys),
        "--key-file",
        s(&key),
        "-o",
        s(&new),
    ]);
    let delta = dir.join("delta.blwr");
    ok(&[
        "diff",
        "--key-file",
        s(&key),
        s(&tagged),
        s(&new),
        "-o",
        s(&delta),
    ]);
    let info: Value = serde_json::from_str(&ok(&[
        "inspect",
        "--json",
        "--key-file",
        s(&key),
        s(&delta),
    ]))
    .unwrap();
    assert_eq!(
        (info["kind"].as_str(), info["tag"].as_str()),
        (Some("delta"), Some("verified"))
    );
    let applied = dir.join("applied.blwr");
    ok(&[
        "apply",
        "--key-file",
        s(&key),
        s(&tagged),
        s(&delta),
        "-o",
        s(&applied),
    ]);
    assert!(decoded(&applied) == decoded(&new));
    let info: Value = serde_json::from_str(&ok(&[
        "inspect",
        "--json",
        "--key-file",
        s(&key),
        s(&applied),
    ]))
    .unwrap();
    assert_eq!(
        (info["generation"].as_str(), info["tag"].as_str()),
        (Some("1"), Some("verified"))
    );
    let err = fails(&[
        "apply",
        "--key-file",
        s(&other),
        s(&tagged),
        s(&delta),
        "-f",
        "-o",
        s(&applied),
    ]);
    assert!(err.contains("does not match"), "{err}");
    let err = fails(&[
        "diff",
        "--key-file",
        s(&key),
        s(&plain),
        s(&new),
        "-f",
        "-o",
        s(&delta),
    ]);
    assert!(err.contains("no authentication tag"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn key_files_are_32_bytes_or_64_hex_digits() {
    let dir = temp_dir("key-files");
    let keys = keys_file(&dir, "keys.txt", 0..100);
    let bytes = unhex(KEY);
    let good: Vec<(&str, Vec<u8>)> = vec![
        ("raw", bytes.clone()),
        ("hex", KEY.as_bytes().to_vec()),
        ("hex-newline", format!("{KEY}\n").into_bytes()),
        ("hex-crlf", format!("{KEY}\r\n").into_bytes()),
        ("upper", format!("{}\n", KEY.to_uppercase()).into_bytes()),
    ];
    let mut frames = Vec::new();
    for (name, contents) in &good {
        let key = file_with(&dir, name, contents);
        let frame = dir.join(format!("{name}.blwr"));
        ok(&[
            "build",
            "--keys",
            s(&keys),
            "--key-file",
            s(&key),
            "-o",
            s(&frame),
        ]);
        frames.push(std::fs::read(&frame).unwrap());
    }
    // The same key, the same tag.
    assert!(frames.windows(2).all(|w| w[0] == w[1]));
    let bad: Vec<(&str, Vec<u8>)> = vec![
        ("short", bytes[..31].to_vec()),
        ("long", [&bytes[..], b"\n"].concat()),
        ("not-hex", vec![b'g'; 64]),
        ("hex-short", KEY.as_bytes()[..62].to_vec()),
        ("hex-two-newlines", format!("{KEY}\n\n").into_bytes()),
        ("empty", Vec::new()),
    ];
    for (name, contents) in &bad {
        let key = file_with(&dir, name, contents);
        let err = fails(&[
            "build",
            "--keys",
            s(&keys),
            "--key-file",
            s(&key),
            "-o",
            "/dev/null",
        ]);
        assert!(
            err.contains("--key-file") && err.contains("32 raw bytes, or 64 hexadecimal digits"),
            "{name}: {err}"
        );
    }
    let err = fails(&[
        "inspect",
        "--key-file",
        s(&dir.join("missing")),
        s(&dir.join("raw.blwr")),
    ]);
    assert!(err.contains("--key-file"), "{err}");
    // No option takes a key's bytes on the command line.
    for command in [
        "build", "inspect", "query", "decode", "diff", "apply", "wrap", "update",
    ] {
        let help = ok(&[command, "--help"]);
        assert!(help.contains("--key-file <FILE>"), "{command}");
        assert!(!help.contains("--key <"), "{command}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--metadata FILE` and `--metadata-hex` on `build` and `diff`; `inspect` shows it as
/// hex and, when printable, as text; `diff`, `apply` and `update` carry it over unless
/// told otherwise; `decode --metadata-out` writes it.
#[test]
fn metadata_and_restart() {
    let dir = temp_dir("metadata");
    let keys = keys_file(&dir, "keys.txt", 0..2000);
    let frame = dir.join("f.blwr");
    ok(&[
        "build",
        "--keys",
        s(&keys),
        "--metadata-hex",
        "73656e6465723d37",
        "--generation",
        "3",
        "--restart",
        "-o",
        s(&frame),
    ]);
    let text = ok(&["inspect", s(&frame)]);
    assert_eq!(
        field(&text, "metadata"),
        "8 bytes: 73656e6465723d37 (text \"sender=7\")"
    );
    assert!(field(&text, "restart").starts_with("yes"), "{text}");
    let info = inspect(&frame);
    assert_eq!(info["metadata_hex"], "73656e6465723d37");
    assert_eq!(info["metadata_bytes"], 8);
    assert_eq!(info["restart"], true);
    assert_eq!(info["generation"], "3");
    // Binary metadata from a file: hex only.
    let binary = file_with(&dir, "meta.bin", [0u8, 1, 2, 0xff]);
    let other = dir.join("g.blwr");
    ok(&[
        "build",
        "--keys",
        s(&keys),
        "--metadata",
        s(&binary),
        "-o",
        s(&other),
    ]);
    let text = ok(&["inspect", s(&other)]);
    assert_eq!(field(&text, "metadata"), "4 bytes: 000102ff");
    assert_eq!(field(&text, "restart"), "no");
    let out = dir.join("meta.out");
    ok(&[
        "decode",
        s(&other),
        "-o",
        "/dev/null",
        "--metadata-out",
        s(&out),
    ]);
    assert_eq!(std::fs::read(&out).unwrap(), [0, 1, 2, 0xff]);
    // Empty, too long, not hex.
    std::fs::write(&binary, b"").unwrap();
    assert!(fails(&[
        "build",
        "--keys",
        s(&keys),
        "--metadata",
        s(&binary),
        "-f",
        "-o",
        s(&other)
    ])
    .contains("at least 1 byte"));
    std::fs::write(&binary, vec![7u8; 4097]).unwrap();
    assert!(fails(&[
        "build",
        "--keys",
        s(&keys),
        "--metadata",
        s(&binary),
        "-f",
        "-o",
        s(&other)
    ])
    .contains("--max-metadata"));
    ok(&[
        "--max-metadata",
        "5000",
        "build",
        "--keys",
        s(&keys),
        "--metadata",
        s(&binary),
        "-f",
        "-o",
        s(&other),
    ]);
    assert!(fails(&["inspect", s(&other)]).contains("--max-metadata"));
    assert!(fails(&[
        "build",
        "--keys",
        s(&keys),
        "--metadata-hex",
        "7g",
        "-f",
        "-o",
        s(&other)
    ])
    .contains("--metadata-hex"));

    // diff carries NEW's metadata, apply FRAME's: apply gives NEW back byte for byte.
    let new_keys = keys_file(&dir, "new.txt", 50..2050);
    let new = dir.join("new.blwr");
    ok(&[
        "build",
        "--keys",
        s(&new_keys),
        "--metadata-hex",
        "6e6577",
        "--generation",
        "4",
        "-o",
        s(&new),
    ]);
    let delta = dir.join("d.blwr");
    ok(&["diff", s(&frame), s(&new), "-o", s(&delta)]);
    assert_eq!(inspect(&delta)["metadata_hex"], "6e6577");
    let applied = dir.join("a.blwr");
    ok(&["apply", s(&frame), s(&delta), "-o", s(&applied)]);
    assert_eq!(
        std::fs::read(&applied).unwrap(),
        std::fs::read(&new).unwrap()
    );
    ok(&[
        "diff",
        s(&frame),
        s(&new),
        "--metadata-hex",
        "ab",
        "-f",
        "-o",
        s(&delta),
    ]);
    assert_eq!(inspect(&delta)["metadata_hex"], "ab");
    ok(&[
        "diff",
        s(&frame),
        s(&new),
        "--no-metadata",
        "-f",
        "-o",
        s(&delta),
    ]);
    assert!(inspect(&delta)["metadata_hex"].is_null());

    // A restart frame is applied whatever the receiver holds; without the flag, an older
    // full frame is stale.
    let old = dir.join("old.blwr");
    ok(&[
        "build",
        "--keys",
        s(&keys),
        "--generation",
        "2",
        "-o",
        s(&old),
    ]);
    let err = fails(&["apply", s(&new), s(&old), "-f", "-o", s(&applied)]);
    assert!(err.contains("not newer than the receiver's 4"), "{err}");
    ok(&["apply", s(&new), s(&frame), "-f", "-o", s(&applied)]);
    assert_eq!(inspect(&applied)["generation"], "3");
    assert_eq!(decoded(&applied), decoded(&frame));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn max_k_bounds_what_is_read_and_planned() {
    let dir = temp_dir("max-k");
    // k = 3.
    let frame = vectors().join("accept/partitioned_k3_known_p.bin");
    let err = fails(&["--max-k", "2", "inspect", s(&frame)]);
    assert!(err.contains("k = 3") && err.contains("--max-k"), "{err}");
    ok(&["--max-k", "3", "inspect", s(&frame)]);
    let plan: Value = serde_json::from_str(&ok(&[
        "--max-k", "2", "plan", "--n", "1000", "--fpr", "0.0001", "--coding", "raw", "--json",
    ]))
    .unwrap();
    assert!(plan["k"].as_f64().unwrap() <= 2.0, "{plan}");
    let keys = keys_file(&dir, "keys.txt", 0..100);
    assert!(fails(&[
        "--max-k",
        "2",
        "build",
        "--keys",
        s(&keys),
        "--m",
        "1000",
        "--k",
        "3"
    ])
    .contains("--max-k"));
    assert_eq!(
        run(&["--max-k", "0", "inspect", s(&frame)]).status.code(),
        Some(2)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The help says when a coding asked for comes out as another, and `build` says so when
/// it happens.
#[test]
fn a_coding_that_comes_out_as_another_is_documented_and_reported() {
    let help = ok(&["build", "--help"]);
    assert!(
        help.contains("comes out as raw (0) when compression is not smaller"),
        "{help}"
    );
    assert!(help.contains("comes out as positional (7)") && help.contains("work bound"));
    let dir = temp_dir("coding-change");
    let keys = keys_file(&dir, "keys.txt", 0..3);
    // Three keys in 2^26 bits: a known-p payload of a few bytes would code 2^26 bits.
    let frame = dir.join("f.blwr");
    let out = run(&[
        "build",
        "--keys",
        s(&keys),
        "--m",
        "67108864",
        "--k",
        "1",
        "--coding",
        "known-p",
        "--chunk-shift",
        "never",
        "-o",
        s(&frame),
    ]);
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("--coding known-p came out as positional (coding 7)"),
        "{err}"
    );
    assert_eq!(inspect(&frame)["coding"], "positional");
    // Dense bits do not compress: raw.
    // Half the bits set (n = m ln 2, k = 1) do not compress: raw.
    let frame = dir.join("raw.blwr");
    let keys = keys_file(&dir, "many.txt", 0..5545);
    let out = run(&[
        "build",
        "--keys",
        s(&keys),
        "--m",
        "8000",
        "--k",
        "1",
        "--coding",
        "adaptive",
        "-o",
        s(&frame),
    ]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("came out as raw (coding 0)"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---------------------------------------------------------------------------------------
// What a zstd user expects: `-`, `-f`, `-q`, `--json`, exit statuses.

#[test]
fn frames_from_standard_input() {
    let dir = temp_dir("stdin-frames");
    let (frame, _) = built(&dir);
    let bytes = std::fs::read(&frame).unwrap();
    let out = run_with_stdin(&["inspect", "--json", "-"], &bytes);
    assert!(out.status.success());
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(info["file"], "standard input");
    assert_eq!(info["n"], N.to_string());
    let out = run_with_stdin(&["query", "-", "key-1", "absent-key-xyz"], &bytes);
    let answers = String::from_utf8(out.stdout).unwrap();
    assert!(answers.starts_with("key-1\tmaybe\n"), "{answers}");
    assert_eq!(
        out.status.code(),
        Some(u8::from(some_key_absent(&answers)).into())
    );
    let out = run_with_stdin(&["decode", "-", "-o", "-"], &bytes);
    assert_eq!(out.stdout, decoded(&frame));
    // A chunked frame from standard input is held in memory, and decoded by chunk.
    let keys = keys_file(&dir, "keys.txt", 0..5000);
    let chunked = dir.join("chunked.blwr");
    ok(&[
        "build",
        "--keys",
        s(&keys),
        "--chunk-shift",
        "10",
        "-o",
        s(&chunked),
    ]);
    let out = run_with_stdin(
        &["query", "-v", "-", "key-3"],
        &std::fs::read(&chunked).unwrap(),
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "key-3\tmaybe\n");
    assert!(String::from_utf8(out.stderr).unwrap().contains("chunk(s)"));
    // diff and apply take one frame from standard input.
    let new = dir.join("new.blwr");
    let new_keys = keys_file(&dir, "new.txt", 10..5010);
    ok(&[
        "build",
        "--keys",
        s(&new_keys),
        "--fpr",
        "0.02",
        "-o",
        s(&new),
    ]);
    let delta = dir.join("d.blwr");
    let out = run_with_stdin(&["diff", "-", s(&new), "-o", s(&delta)], &bytes);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let applied = dir.join("a.blwr");
    let out = run_with_stdin(
        &["apply", s(&frame), "-", "-o", s(&applied)],
        &std::fs::read(&delta).unwrap(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(decoded(&applied), decoded(&new));
    // Two frames cannot both come from standard input, nor a frame and keys.
    let out = run_with_stdin(&["diff", "-", "-", "-o", s(&delta)], &bytes);
    assert_eq!(out.status.code(), Some(2));
    let out = run_with_stdin(&["query", "-", "--keys", "-"], &bytes);
    assert_eq!(out.status.code(), Some(2));
    // Garbage on standard input: one line.
    let out = run_with_stdin(&["inspect", "-"], b"not a frame");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("bloomwire: standard input: bad magic"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn outputs_are_not_overwritten_without_force() {
    let dir = temp_dir("force");
    let keys = keys_file(&dir, "keys.txt", 0..500);
    let frame = file_with(&dir, "f.blwr", b"precious");
    let err = fails(&["build", "--keys", s(&keys), "-o", s(&frame)]);
    assert!(
        err.contains("already exists") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(std::fs::read(&frame).unwrap(), b"precious");
    // The default name too.
    let default = file_with(&dir, "keys.txt.blwr", b"precious");
    assert!(fails(&["build", "--keys", s(&keys)]).contains("already exists"));
    ok(&["build", "--keys", s(&keys), "--force"]);
    assert_ne!(std::fs::read(&default).unwrap(), b"precious");
    ok(&["build", "--keys", s(&keys), "-f", "-o", s(&frame)]);
    assert!(inspect(&frame)["n"] == "500");
    // decode, diff, apply, plan --plot alike; devices are written to.
    let bits = file_with(&dir, "bits", b"precious");
    assert!(fails(&["decode", s(&frame), "-o", s(&bits)]).contains("already exists"));
    ok(&["decode", s(&frame), "-o", "/dev/null"]);
    assert!(fails(&["diff", s(&frame), s(&default), "-o", s(&bits)]).contains("already exists"));
    assert!(fails(&["apply", s(&frame), s(&frame), "-o", s(&bits)]).contains("already exists"));
    let svg = file_with(&dir, "p.svg", b"precious");
    assert!(
        fails(&["plan", "--n", "100", "--fpr", "0.01", "--plot", s(&svg)])
            .contains("already exists")
    );
    assert_eq!(std::fs::read(&bits).unwrap(), b"precious");
    assert_eq!(std::fs::read(&svg).unwrap(), b"precious");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn quiet_and_json_summaries() {
    let dir = temp_dir("quiet");
    let keys = keys_file(&dir, "keys.txt", 0..1000);
    let frame = dir.join("f.blwr");
    let out = run(&["build", "-q", "--keys", s(&keys), "-o", s(&frame)]);
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Warnings too (a binary keys file read as lines).
    let binary = file_with(&dir, "bin.txt", b"a\0b\nc\0d\n");
    let out = run(&[
        "--quiet",
        "build",
        "--keys",
        s(&binary),
        "-o",
        s(&dir.join("b.blwr")),
    ]);
    assert!(out.status.success() && out.stderr.is_empty());
    // Errors are not silenced.
    let err = fails(&["build", "-q", "--keys", s(&keys), "-o", s(&frame)]);
    assert!(err.contains("already exists"));

    // --json: the summary's figures on stdout.
    let out = run(&[
        "build",
        "--json",
        "--keys",
        s(&keys),
        "--key-file",
        s(&key_file(&dir, "k", KEY)),
        "--metadata-hex",
        "0102",
        "-f",
        "-o",
        s(&frame),
    ]);
    assert!(out.status.success());
    assert!(out.stderr.is_empty());
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    let info = inspect(&frame);
    assert_eq!(summary["n"], "1000");
    assert_eq!(summary["m"], info["m"]);
    assert_eq!(summary["k"], info["k"]);
    assert_eq!(summary["coding"], info["coding"]);
    assert_eq!(summary["frame_bytes"], info["frame_bytes"]);
    assert_eq!(summary["tagged"], true);
    assert_eq!(summary["metadata_bytes"], 2);
    assert_eq!(summary["output"], s(&frame));
    assert!(summary["false_positive_rate"].as_f64().unwrap() < 0.011);
    // With the frame on stdout, the JSON goes to stderr.
    let out = run(&["build", "--json", "--keys", s(&keys), "-o", "-"]);
    assert!(out.status.success());
    let summary: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(summary["output"], "-");
    assert_eq!(
        summary["frame_bytes"].as_u64().unwrap(),
        out.stdout.len() as u64
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// grep's exit statuses: 0 every key may be present, 1 some key is certainly absent, 2 an
/// error (a usage error too).
#[test]
fn query_exit_status_is_greps() {
    let dir = temp_dir("query-status");
    let (frame, _) = built(&dir);
    let status = |args: &[&str]| run(args).status.code().unwrap();
    assert_eq!(status(&["query", s(&frame), "key-1", "key-2"]), 0);
    let absent = (0..100).map(|i| format!("absent-{i}")).collect::<Vec<_>>();
    let mut args = vec!["query", s(&frame), "key-1"];
    args.extend(absent.iter().map(String::as_str));
    assert_eq!(status(&args), 1);
    args.push("--count");
    assert_eq!(status(&args), 1);
    assert_eq!(status(&["query", s(&frame), "key-1", "--count"]), 0);
    assert_eq!(status(&["query", s(&dir.join("missing")), "key-1"]), 2);
    assert_eq!(status(&["query", s(&frame)]), 2);
    let help = ok(&["query", "--help"]);
    assert!(
        help.contains("0 when every key may be present") && help.contains("1 when some key"),
        "{help}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---------------------------------------------------------------------------------------
// Another library's bits, and counting filters' removals.

/// `wrap` puts packed bits into an opaque frame (with metadata describing them), `decode`
/// gives them back, `query` refuses them with the library's OpaqueHashFamily, and they
/// travel as deltas like any filter's.
#[test]
fn wrap_carries_another_librarys_bits() {
    let dir = temp_dir("wrap");
    let m = 10_007u64; // not a multiple of 8: the last byte has 7 bits
    let mut bits = vec![0u8; m.div_ceil(8) as usize];
    for i in (0..m).filter(|i| i % 13 == 0 || i % 101 == 7) {
        bits[(i / 8) as usize] |= 1 << (i % 8);
    }
    let ones: u32 = bits.iter().map(|b| b.count_ones()).sum();
    let file = file_with(&dir, "bits.bin", &bits);
    let frame = dir.join("f.blwr");
    let out = run(&[
        "wrap",
        "--bits",
        s(&file),
        "--m",
        "10007",
        "--k",
        "7",
        "--n",
        "1000",
        "--metadata-hex",
        "677561766128736970293d31",
        "--generation",
        "1",
        "-o",
        s(&frame),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info = inspect(&frame);
    assert_eq!(info["base_hash"], "opaque");
    assert_eq!(info["m"], m);
    assert_eq!(info["k"], 7.0);
    assert_eq!(info["n"], "1000");
    assert_eq!(info["ones"], ones);
    assert_eq!(info["metadata_hex"], "677561766128736970293d31");
    assert!(
        (info["frame_bytes"].as_u64().unwrap() as usize) < bits.len(),
        "compressed"
    );
    assert_eq!(decoded(&frame), bits);
    let err = fails(&["query", s(&frame), "key"]);
    assert!(err.contains("opaque (base hash 0)"), "{err}");

    // From standard input, tagged; a second generation as a delta.
    let key = key_file(&dir, "k", KEY);
    let mut next = bits.clone();
    next[100] ^= 0x10;
    let tagged = dir.join("next.blwr");
    let out = run_with_stdin(
        &[
            "wrap",
            "--bits",
            "-",
            "--m",
            "10007",
            "--k",
            "7",
            "--generation",
            "2",
            "--key-file",
            s(&key),
            "-o",
            s(&tagged),
        ],
        &next,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let delta = dir.join("d.blwr");
    let err = fails(&[
        "diff",
        "--key-file",
        s(&key),
        s(&frame),
        s(&tagged),
        "-o",
        s(&delta),
    ]);
    assert!(err.contains("no authentication tag"), "{err}");
    ok(&["diff", s(&frame), s(&tagged), "-o", s(&delta)]);
    let applied = dir.join("a.blwr");
    ok(&["apply", s(&frame), s(&delta), "-o", s(&applied)]);
    assert_eq!(decoded(&applied), next);
    assert!(fails(&[
        "update",
        s(&frame),
        "--insert",
        s(&file),
        "-o",
        s(&applied),
        "-f"
    ])
    .contains("opaque"));

    // The file must hold ceil(m / 8) bytes, with no bits past m.
    let err = fails(&[
        "wrap",
        "--bits",
        s(&file),
        "--m",
        "10016",
        "-f",
        "-o",
        s(&frame),
    ]);
    assert!(
        err.contains("1251 bytes, but m = 10016 bits are 1252 bytes packed"),
        "{err}"
    );
    let err = fails(&[
        "wrap",
        "--bits",
        s(&file),
        "--m",
        "9000",
        "-f",
        "-o",
        s(&frame),
    ]);
    assert!(err.contains("1125 bytes packed"), "{err}");
    bits[(m / 8) as usize] |= 0x80;
    std::fs::write(&file, &bits).unwrap();
    let err = fails(&[
        "wrap",
        "--bits",
        s(&file),
        "--m",
        "10007",
        "-f",
        "-o",
        s(&frame),
    ]);
    assert!(err.contains("not zero"), "{err}");
    let err = fails(&[
        "wrap",
        "--bits",
        s(&file),
        "--m",
        "0",
        "-f",
        "-o",
        s(&frame),
    ]);
    assert!(err.contains("--m 0"), "{err}");
    let help = ok(&["wrap", "--help"]);
    assert!(
        help.contains("bit order") && help.contains("OpaqueHashFamily"),
        "{help}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `update --remove` takes keys out of a counting filter: the frame out is the counting
/// frame of the remaining keys; removing a key that is not there fails, naming it.
#[test]
fn update_removes_keys_from_a_counting_filter() {
    let dir = temp_dir("update");
    let all = keys_file(&dir, "all.txt", 0..3000);
    let first = keys_file(&dir, "first.txt", 0..1000);
    let rest = keys_file(&dir, "rest.txt", 1000..3000);
    let frame = dir.join("f.blwr");
    ok(&[
        "build",
        "--keys",
        s(&all),
        "--counting",
        "4",
        "--generation",
        "5",
        "--metadata-hex",
        "aa",
        "-o",
        s(&frame),
    ]);
    let removed = dir.join("removed.blwr");
    let out = run(&[
        "update",
        s(&frame),
        "--remove",
        s(&first),
        "-o",
        s(&removed),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let note = String::from_utf8(out.stderr).unwrap();
    assert!(
        note.contains("0 keys inserted, 1000 removed; n = 2000"),
        "{note}"
    );
    let info = inspect(&removed);
    assert_eq!(info["filter_type"], "counting");
    assert_eq!(info["n"], "2000");
    assert_eq!(info["generation"], "6");
    assert_eq!(info["metadata_hex"], "aa");
    // The counters of the keys that remain, as if only they had been inserted.
    let m = info["m"].as_u64().unwrap().to_string();
    let k = info["k"].as_f64().unwrap().to_string();
    let rebuilt = dir.join("rebuilt.blwr");
    ok(&[
        "build",
        "--keys",
        s(&rest),
        "--counting",
        "4",
        "--m",
        &m,
        "--k",
        &k,
        "--generation",
        "6",
        "--metadata-hex",
        "aa",
        "-o",
        s(&rebuilt),
    ]);
    assert!(decoded(&removed) == decoded(&rebuilt));
    let present: Vec<String> = (1000..3000).map(|i| format!("key-{i}")).collect();
    all_maybe(&removed, &present);
    // A delta from the old generation to the new.
    let delta = dir.join("d.blwr");
    ok(&["diff", s(&frame), s(&removed), "-o", s(&delta)]);
    assert_eq!(inspect(&delta)["base_generation"], "5");

    // Removing keys that are not there: the key named, nothing written.
    let absent = file_with(
        &dir,
        "absent.txt",
        "key-1500\nnever-inserted-1\nnever-inserted-2\n",
    );
    let out_path = dir.join("x.blwr");
    let err = fails(&[
        "update",
        s(&removed),
        "--remove",
        s(&absent),
        "-o",
        s(&out_path),
    ]);
    assert!(
        err.contains("key 2 (\"never-inserted-1\") cannot be removed")
            && err.contains("not in the filter"),
        "{err}"
    );
    assert!(!out_path.exists());
    // Twice the same key: the second time it is gone.
    let err = fails(&[
        "update",
        s(&removed),
        "--remove",
        s(&first),
        "-o",
        s(&out_path),
    ]);
    assert!(err.contains("key 1 (\"key-0\")"), "{err}");

    // Insertions, into either kind, from standard input; removals only from counting ones.
    let out = run_with_stdin(
        &[
            "update",
            s(&removed),
            "--insert",
            "-",
            "--generation",
            "9",
            "-o",
            s(&out_path),
        ],
        b"new-1\nnew-2\n",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(inspect(&out_path)["n"], "2002");
    assert_eq!(inspect(&out_path)["generation"], "9");
    assert_eq!(
        ok(&["query", s(&out_path), "new-1", "new-2"]),
        "new-1\tmaybe\nnew-2\tmaybe\n"
    );
    let bloom = dir.join("bloom.blwr");
    ok(&["build", "--keys", s(&first), "-o", s(&bloom)]);
    let err = fails(&[
        "update",
        s(&bloom),
        "--remove",
        s(&first),
        "-f",
        "-o",
        s(&out_path),
    ]);
    assert!(
        err.contains("cannot be removed") && err.contains("--counting"),
        "{err}"
    );
    ok(&[
        "update",
        s(&bloom),
        "--insert",
        s(&rest),
        "-f",
        "-o",
        s(&out_path),
    ]);
    assert_eq!(inspect(&out_path)["n"], "3000");
    // Unnumbered stays unnumbered.
    assert_eq!(inspect(&out_path)["generation"], "0");
    // Nothing to do is a usage error.
    assert_eq!(
        run(&["update", s(&bloom), "-o", s(&out_path)])
            .status
            .code(),
        Some(2)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Spec 5.2: a sender sends a delta only when it is smaller than the full frame; `diff`
/// says when it is not.
#[test]
fn diff_notes_a_delta_that_is_not_smaller() {
    let dir = temp_dir("big-delta");
    let (old, new) = (dir.join("old.blwr"), dir.join("new.blwr"));
    // Two unrelated halves-full filters: their XOR is as dense as either.
    for (range, frame) in [(0..5545, &old), (10_000..15_545, &new)] {
        let keys = keys_file(&dir, "keys.txt", range);
        ok(&[
            "build",
            "--keys",
            s(&keys),
            "--m",
            "8000",
            "--k",
            "1",
            "-f",
            "-o",
            s(frame),
        ]);
    }
    let out = run(&["diff", s(&old), s(&new), "-o", s(&dir.join("d.blwr"))]);
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("note: the delta is not smaller than the full frame"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The program's reference, `cli/README.md`, names every command and every option its
/// help lists.
#[test]
fn the_readme_documents_every_command_and_option() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    for command in COMMANDS {
        assert!(
            readme.contains(&format!("## {command}\n")),
            "no section for {command}"
        );
        let help = ok(&[command, "--help"]);
        for option in help
            .lines()
            .map(str::trim_start)
            .filter(|l| l.starts_with('-'))
            .filter_map(|l| l.split("--").nth(1))
            .filter_map(|rest| rest.split([' ', '<', ',', '=']).next())
            .filter(|o| !o.is_empty() && *o != "help")
        {
            assert!(
                readme.contains(&format!("--{option}")),
                "{command} --{option} is not in cli/README.md"
            );
        }
    }
}
