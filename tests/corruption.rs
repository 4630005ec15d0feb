//! Corruption: every accept vector (and a frame of every coding in `BitCoding::ALL`) cut at
//! every length and with every single-bit flip, and with 2- and 3-bit flips sampled with a
//! fixed-seed generator, is rejected with a typed error; none decodes to a filter.
//!
//! Which errors are right:
//!
//! * a truncation is `Incomplete` (the input ends before the frame does), always;
//! * a flip in the payload or the checksum is `ChecksumMismatch` (CRC-32C detects every
//!   error of up to 3 bits in frames this size), never `Incomplete`;
//! * a flip in the header is whatever the changed field gives: an invalid or over-limit
//!   field, `ChecksumMismatch` when the header still parses to the same frame length,
//!   `TrailingBytes` when it now declares a shorter frame, and `Incomplete` only when it
//!   declares a longer one than the input holds (a stream decoder must then wait for more;
//!   a caller decoding one whole frame rejects it). That last case is checked to be honest:
//!   the mutated header really declares more than the input holds.
//!
//! The normal run checks about 1.2 * 10^5 mutations; the full run 2.4 * 10^6:
//! `cargo test --release --test corruption -- --ignored`.

use std::collections::BTreeMap;
use std::path::Path;

use bloomwire::format::{FLAG_TAGGED, TAG_LEN};
use bloomwire::{
    decode, BitCoding, BloomFilter, Coding, Encoder, Error, FrameHeader, FrameKey, HashFamily,
    Limits, Message, Params, Verifier,
};
use bloomwire_testkit::SplitMix64;

/// A frame to corrupt: its name and bytes.
fn frames() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("spec/vectors/accept");
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    out.sort();
    assert!(out.len() >= 20, "accept vectors missing");
    let mut f = BloomFilter::new(Params::standard(2000, 3, HashFamily::default()).unwrap());
    for i in 0..150u32 {
        f.insert(i.to_le_bytes());
    }
    for c in BitCoding::ALL {
        let frame = Encoder::new().encode_with(&f, c).unwrap();
        assert_eq!(frame.coding(), Coding::from(c));
        out.push((format!("built {c}"), frame.to_bytes().to_vec()));
    }
    out
}

/// `count` distinct bit positions below `bits`, from a fixed-seed generator, so every run
/// checks the same mutations.
fn distinct(rng: &mut SplitMix64, bits: usize, count: usize) -> Vec<usize> {
    let mut v: Vec<usize> = Vec::with_capacity(count);
    while v.len() < count {
        let b = rng.below(bits);
        if !v.contains(&b) {
            v.push(b);
        }
    }
    v
}

#[derive(Default)]
struct Tally {
    mutations: usize,
    errors: BTreeMap<&'static str, usize>,
}

/// Decode a frame with `flips` bits flipped; it must be rejected, with an error that fits
/// where the flips are.
fn check_flips(name: &str, frame: &[u8], header_len: usize, flips: &[usize], tally: &mut Tally) {
    let mut bad = frame.to_vec();
    for &b in flips {
        bad[b / 8] ^= 1 << (b % 8);
    }
    let limits = Limits::default();
    // An authenticated vector (spec 2.5) is decoded with its key, bytes 0 to 31: without
    // one its tag is not checked, and a flip there would go unseen.
    let tagged = frame[10] & FLAG_TAGGED != 0;
    let verifier = Verifier::new(FrameKey::new(core::array::from_fn(|i| i as u8)), limits);
    let decoded = if tagged {
        decode::<Message>(&bad, &verifier)
    } else {
        decode::<Message>(&bad, &limits)
    };
    let err = match decoded {
        Ok(m) => panic!(
            "{name} with bits {flips:?} flipped decodes to a frame: {:?}",
            m.header()
        ),
        Err(e) => e,
    };
    if let Error::Incomplete { needed } = err {
        let first = *flips.iter().min().unwrap();
        assert!(
            first / 8 < header_len,
            "{name}: flip {flips:?} past the header gives Incomplete"
        );
        match FrameHeader::parse(&bad, &limits) {
            Ok(h) => assert_eq!(
                h.frame_len(),
                bad.len() + needed,
                "{name}: flips {flips:?}: dishonest Incomplete"
            ),
            Err(Error::Incomplete { .. }) => {}
            Err(e) => panic!("{name}: flips {flips:?}: parse says {e}, decode Incomplete"),
        }
    }
    let tag_start = frame.len() - if tagged { TAG_LEN } else { 0 };
    if tagged && flips.iter().all(|&b| b / 8 >= tag_start) {
        assert!(
            matches!(err, Error::BadTag { .. }),
            "{name}: flips {flips:?} in the tag give {err}"
        );
    } else if flips.iter().all(|&b| b / 8 >= header_len) {
        assert!(
            matches!(err, Error::ChecksumMismatch { .. }),
            "{name}: flips {flips:?} outside the header give {err}"
        );
    }
    tally.mutations += 1;
    *tally.errors.entry(err.name()).or_default() += 1;
}

/// Every truncation and 1-bit flip of every frame, and `sampled` 2-bit and 3-bit flips of
/// each.
fn corrupt_everything(sampled: usize) -> Tally {
    let mut tally = Tally::default();
    let mut rng = SplitMix64(0x0B10_03F1_2026);
    let limits = Limits::default();
    for (name, frame) in frames() {
        let header = FrameHeader::parse(&frame, &limits).unwrap();
        assert_eq!(header.frame_len(), frame.len(), "{name}");
        for cut in 0..frame.len() {
            match decode::<Message>(&frame[..cut], &limits) {
                Err(Error::Incomplete { needed }) => {
                    assert!(
                        needed >= 1 && needed <= frame.len() - cut,
                        "{name} cut {cut}"
                    )
                }
                other => panic!("{name} cut at {cut}: {other:?}"),
            }
            tally.mutations += 1;
            *tally.errors.entry("Incomplete").or_default() += 1;
        }
        let bits = frame.len() * 8;
        for b in 0..bits {
            check_flips(&name, &frame, header.header_len, &[b], &mut tally);
        }
        for count in [2, 3] {
            for _ in 0..sampled {
                let flips = distinct(&mut rng, bits, count);
                check_flips(&name, &frame, header.header_len, &flips, &mut tally);
            }
        }
    }
    tally
}

#[test]
fn every_truncation_and_flip_is_rejected() {
    let tally = corrupt_everything(1000);
    eprintln!("{} mutations: {:?}", tally.mutations, tally.errors);
    assert!(tally.mutations > 100_000, "{}", tally.mutations);
    // The checksum does most of the work.
    let crc = tally.errors["ChecksumMismatch"];
    assert!(crc * 2 > tally.mutations, "{:?}", tally.errors);
}

/// Over a million mutations: `cargo test --release --test corruption -- --ignored`.
#[test]
#[ignore = "a million mutations; run with --ignored"]
fn a_million_mutations_are_rejected() {
    let tally = corrupt_everything(40_000);
    eprintln!("{} mutations: {:?}", tally.mutations, tally.errors);
    assert!(tally.mutations >= 1_000_000, "{}", tally.mutations);
}

/// A k field below 1 (raw 8530, k = 0.13) is reported with the value the frame holds, not
/// 0: every error names the value it rejects.
#[test]
fn an_invalid_k_is_reported_with_its_raw_value() {
    let bytes: Vec<u8> = (0..18)
        .map(|i| {
            u8::from_str_radix(
                &"424c57520100000100020100c801d2423054"[2 * i..2 * i + 2],
                16,
            )
            .unwrap()
        })
        .collect();
    let err =
        bloomwire::decode::<bloomwire::Message>(&bytes, &bloomwire::Limits::default()).unwrap_err();
    assert!(
        matches!(
            err,
            bloomwire::Error::InvalidField {
                field: "k",
                value: 8530,
                offset: 14
            }
        ),
        "{err}"
    );
}

#[test]
fn bad_magic_names_the_first_byte_that_differs() {
    let f = BloomFilter::new(Params::standard(1000, 2, HashFamily::default()).unwrap());
    let mut wire = Encoder::new().encode(&f).unwrap().to_bytes().to_vec();
    wire[2] = b'X';
    let err = decode::<Message>(&wire, &Limits::default()).unwrap_err();
    assert_eq!(
        err,
        Error::BadMagic {
            byte: b'X',
            offset: 2
        }
    );
    assert_eq!(
        err.to_string(),
        "bad magic: byte 0x58 at offset 2, not a bloomwire frame"
    );
    // Two bytes are enough to tell.
    assert!(matches!(
        decode::<Message>(b"BX", &Limits::default()),
        Err(Error::BadMagic { offset: 1, .. })
    ));
}
