//! The committed test vectors are exactly what the generator produces, and the crate
//! decodes every accept vector and rejects every reject vector with the named error.

use bloomwire::{
    decode, Coding, CountingBloomFilter, Decoded, Error, FrameKey, Limits, Message, Profile,
    Receiver, Tag, Verifier,
};
use bloomwire_vectors as generator;
use serde_json::Value;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn committed_vectors_match_the_generator() {
    let dir = generator::vectors_dir();
    let files = generator::generate();
    for f in &files {
        let committed = std::fs::read(dir.join(&f.path)).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; run `cargo run -p bloomwire-vectors`",
                f.path.display()
            )
        });
        assert!(
            committed == f.bytes,
            "{} differs from the generator; run `cargo run -p bloomwire-vectors`",
            f.path.display()
        );
    }
    // No stale files either.
    for sub in ["accept", "reject"] {
        let count = std::fs::read_dir(dir.join(sub)).unwrap().count();
        let expected = files.iter().filter(|f| f.path.starts_with(sub)).count();
        assert_eq!(count, expected, "stale files in spec/vectors/{sub}");
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn read(sub: &str, file: &str) -> Vec<u8> {
    std::fs::read(generator::vectors_dir().join(sub).join(file)).unwrap()
}

/// Whether a decoded filter holds a key.
type Query = Box<dyn Fn(&[u8]) -> bool>;

#[test]
fn accept_vectors_decode_to_their_manifests() {
    let mut seen = 0;
    for f in generator::generate() {
        let name = f.path.to_string_lossy().into_owned();
        if !(name.starts_with("accept") && name.ends_with(".json")) {
            continue;
        }
        let manifest: Value = serde_json::from_slice(&f.bytes).unwrap();
        let frame = read("accept", manifest["frame"].as_str().unwrap());
        let message =
            decode::<Message>(&frame, &Limits::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        // An authenticated vector (spec 2.5): with its key it decodes to the same message,
        // verified; without one its tag is skipped.
        if let Some(key) = key_of(&manifest) {
            let verified = decode::<Message>(&frame, &Verifier::new(key, Limits::default()))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(verified.header().tag, Tag::Verified, "{name}");
            assert_eq!(message.header().tag, Tag::Unverified, "{name}");
            assert_eq!(
                verified.to_frame().unwrap(),
                message.to_frame().unwrap(),
                "{name}"
            );
        }
        // Queries: a Bloom filter, or a counting filter (a key is in it when all its
        // counters are non-zero).
        let contains: Query = match message {
            Message::Counting(d) => {
                assert_eq!(
                    sha256_hex(&d.filter.packed()),
                    manifest["counters_sha256"],
                    "{name}"
                );
                assert_eq!(
                    serde_json::to_value(d.filter.histogram()).unwrap(),
                    manifest["counter_histogram"],
                    "{name}"
                );
                Box::new(move |k| d.filter.contains(k))
            }
            Message::CountingDelta(d) => {
                let width = d.header.counter_width.unwrap();
                assert_eq!(
                    sha256_hex(&bloomwire::filter::counting::pack_counters(&d.xor, width)),
                    manifest["counters_sha256"],
                    "{name}"
                );
                let base_file = manifest["base_frame"].as_str().unwrap();
                let base = decode::<Decoded<CountingBloomFilter>>(
                    &read("accept", base_file),
                    &Limits::default(),
                )
                .unwrap();
                let result = d.apply(&base.filter, base.header.generation).unwrap();
                assert_eq!(
                    sha256_hex(&result.packed()),
                    manifest["result_counters_sha256"],
                    "{name}"
                );
                Box::new(move |k| result.contains(k))
            }
            Message::Full(d) => {
                assert_eq!(
                    sha256_hex(&d.filter.bits().to_bytes()),
                    manifest["bits_sha256"],
                    "{name}"
                );
                if let Some(held) = manifest["base_frame"].as_str() {
                    // A restart frame, applied by a receiver holding `base_frame`.
                    let mut receiver = Receiver::new(Limits::default());
                    receiver.receive(&read("accept", held)).unwrap();
                    receiver
                        .receive(&frame)
                        .unwrap_or_else(|e| panic!("{name}: {e}"));
                    assert_eq!(receiver.filter(), Some(&d.filter), "{name}");
                }
                Box::new(move |k| d.filter.contains(k))
            }
            Message::Delta(d) => {
                assert_eq!(
                    sha256_hex(&d.xor.to_bytes()),
                    manifest["bits_sha256"],
                    "{name}"
                );
                let base_file = manifest["base_frame"].as_str().unwrap();
                let base =
                    decode::<Decoded>(&read("accept", base_file), &Limits::default()).unwrap();
                let result = d.apply(&base.filter, base.header.generation).unwrap();
                assert_eq!(
                    sha256_hex(&result.bits().to_bytes()),
                    manifest["result_bits_sha256"],
                    "{name}"
                );
                Box::new(move |k| result.contains(k))
            }
            other => panic!("{name}: a message of no known kind: {other:?}"),
        };
        for list in ["member_keys", "other_keys"] {
            for k in manifest[list].as_array().unwrap() {
                let key = unhex(k["key_hex"].as_str().unwrap());
                assert_eq!(contains(&key), k["expected"].as_bool().unwrap(), "{name}");
            }
        }
        seen += 1;
    }
    assert!(seen >= 20, "{seen} accept vectors");
}

/// The key of an authenticated vector's manifest or manifest entry (`key_hex`).
fn key_of(manifest: &Value) -> Option<FrameKey> {
    let bytes = unhex(manifest.get("key_hex")?.as_str()?);
    Some(FrameKey::new(bytes.try_into().expect("a 32-byte key")))
}

/// An error's name and the field it names, as the manifests write them.
fn error_name(e: &Error) -> (&'static str, Option<&'static str>) {
    let field = match e {
        Error::InvalidField { field, .. } | Error::LimitExceeded { field, .. } => Some(*field),
        _ => None,
    };
    (e.name(), field)
}

#[test]
fn reject_vectors_fail_with_the_named_error() {
    let dir = generator::vectors_dir().join("reject");
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let entries = manifest.as_object().unwrap();
    assert!(entries.len() >= 30);
    for (file, expect) in entries {
        let frame = std::fs::read(dir.join(file)).unwrap();
        let err = match expect.get("apply_to") {
            // A delta that decodes, refused by a receiver holding `apply_to`.
            Some(base) => {
                let base = read(".", base.as_str().unwrap());
                if base[6] == bloomwire::format::FILTER_TYPE_COUNTING {
                    let mut receiver =
                        Receiver::<CountingBloomFilter>::with_limits(Limits::default());
                    receiver.receive(&base).unwrap();
                    let before = receiver.filter().cloned();
                    let err = receiver.receive(&frame).expect_err(file);
                    assert_eq!(receiver.filter().cloned(), before, "{file}");
                    err
                } else {
                    let mut receiver: Receiver = Receiver::new(Limits::default());
                    receiver.receive(&base).unwrap();
                    let before = receiver.filter().cloned();
                    let err = receiver.receive(&frame).expect_err(file);
                    assert_eq!(receiver.filter().cloned(), before, "{file}");
                    err
                }
            }
            None => match key_of(expect) {
                Some(key) => decode::<Decoded>(&frame, &Verifier::new(key, Limits::default()))
                    .expect_err(file),
                None => decode::<Decoded>(&frame, &Limits::default()).expect_err(file),
            },
        };
        let (name, field) = error_name(&err);
        assert_eq!(name, expect["error"].as_str().unwrap(), "{file}: {err}");
        if let Some(want) = expect.get("field") {
            assert_eq!(field, want.as_str(), "{file}: {err}");
        }
        if let Some(want) = expect.get("needed") {
            let needed = usize::try_from(want.as_u64().unwrap()).unwrap();
            assert_eq!(err, bloomwire::Error::Incomplete { needed }, "{file}");
        }
    }
}

#[test]
fn a_core_decoder_reads_every_core_vector_and_refuses_the_others() {
    // Spec 4.0 and 6: a decoder restricted to the Core profile decodes every vector whose
    // coding is Core exactly as a Full one does, and answers UnsupportedCoding for the
    // others, accept and reject vectors alike, where the frame gets as far as its coding.
    let core = Limits::default().profile(Profile::Core);
    let full = Limits::default();
    let (mut same, mut unsupported) = (0, 0);
    for sub in ["accept", "reject"] {
        for entry in std::fs::read_dir(generator::vectors_dir().join(sub)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "bin") {
                continue;
            }
            let frame = std::fs::read(&path).unwrap();
            let name = path.display().to_string();
            let outside = frame.len() > 9
                && frame[..4] == *b"BLWR"
                && Coding::from_id(frame[9]).is_some_and(|c| !Profile::Core.includes(c));
            let (a, b) = (
                decode::<Message>(&frame, &core),
                decode::<Message>(&frame, &full),
            );
            match a {
                Err(Error::UnsupportedCoding { coding, offset: 9 }) => {
                    assert!(outside, "{name}");
                    assert_eq!(coding, frame[9], "{name}");
                    unsupported += 1;
                }
                a => {
                    // Only a frame refused before its coding byte is read (a wrong magic,
                    // version, kind, filter type, base hash or index scheme, or too short)
                    // gets past the profile with a coding outside it.
                    assert!(!outside || a.is_err(), "{name}");
                    assert_eq!(a.is_ok(), b.is_ok(), "{name}");
                    if let (Ok(a), Ok(b)) = (&a, &b) {
                        assert_eq!(a.to_frame().unwrap(), b.to_frame().unwrap(), "{name}");
                    }
                    same += 1;
                }
            }
        }
    }
    assert!(
        same > 150 && unsupported > 60,
        "{same} same, {unsupported} unsupported"
    );
}

/// The first hex block after `heading` in the spec.
fn hex_block_after(spec: &str, heading: &str) -> Vec<u8> {
    let section = &spec[spec.find(heading).expect("section")..];
    let block = section
        .split("```text\n")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    block
        .split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect()
}

/// The spec's worked examples dissect committed vectors: their hex dumps must be those files.
#[test]
fn worked_example_in_the_spec_is_the_vector() {
    let spec = std::fs::read_to_string(generator::vectors_dir().join("../FORMAT.md")).unwrap();
    assert_eq!(
        hex_block_after(&spec, "## 7. Worked example"),
        read("accept", "m13_known_p.bin")
    );
    assert_eq!(
        hex_block_after(&spec, "### 7.1 A counting frame"),
        read("accept", "counting_m10_known.bin")
    );
}
