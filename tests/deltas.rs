//! Delta frames and generation sync: sizes against Section IV's theory, long chains with
//! churn, and every kind of lost, repeated or reordered frame detected.

use bloomwire::theory::{delta_one_fraction, entropy, p_zero};
use bloomwire::{
    decode, BitCoding, BloomFilter, Decoded, Encoder, Error, HashFamily, Limits, Message, Params,
    Receiver, Sender, Update,
};
use bloomwire_testkit::{mix64, GAMMA};

/// splitmix64 keys, so every trial is reproducible.
fn key(seed: u64, i: u64) -> [u8; 8] {
    mix64(seed.wrapping_mul(GAMMA).wrapping_add(i)).to_le_bytes()
}

fn build(params: &Params, keys: impl Iterator<Item = [u8; 8]>) -> BloomFilter {
    let mut f = BloomFilter::new(params.clone());
    for k in keys {
        f.insert(k);
    }
    f
}

/// A set of n keys of which the first `start` are gone: keys start..start+n.
fn generation(params: &Params, seed: u64, start: u64, n: u64) -> BloomFilter {
    build(params, (start..start + n).map(|i| key(seed, i)))
}

fn delta_sizes(c: f64, trials: u64) -> (f64, f64, f64) {
    let (n, m, k) = (10_000u64, 320_000u64, 2u32);
    let params = Params::standard(m, k, HashFamily::default()).unwrap();
    let changed = (c * n as f64) as u64;
    let (mut frames, mut payloads) = (0.0, 0.0);
    for t in 0..trials {
        let old = generation(&params, t, 0, n);
        let new = generation(&params, t, changed, n);
        let frame = Encoder::new()
            .coding(BitCoding::KnownP)
            .encode_delta(&old, 1, &new, 2)
            .unwrap();
        frames += frame.encoded_len() as f64;
        payloads += frame.header().payload_len as f64;
        // And it applies.
        let Message::Delta(d) = decode::<Message>(&frame.to_bytes(), &Limits::default()).unwrap()
        else {
            panic!("not a delta")
        };
        assert_eq!(d.apply(&old, 1).unwrap(), new);
    }
    let p = p_zero(k as f64, n as f64, m as f64);
    let theory = m as f64 * entropy(delta_one_fraction(p, c)) / 8.0;
    (frames / trials as f64, payloads / trials as f64, theory)
}

/// Table VI's setting: n = 10 000, m/n = 32, k = 2, c = 0.05, 200 trials.
#[test]
fn delta_frames_match_section_iv_theory() {
    let (frame, payload, theory) = delta_sizes(0.05, 200);
    eprintln!(
        "c = 0.05: mean delta frame {frame:.1} bytes, payload {payload:.1}, m H(q)/8 = {theory:.1}"
    );
    assert!(frame <= theory * 1.02, "{frame} vs {theory}");
    assert!(payload >= theory * 0.99);
    let (frame, payload, theory) = delta_sizes(0.01, 200);
    eprintln!(
        "c = 0.01: mean delta frame {frame:.1} bytes, payload {payload:.1}, m H(q)/8 = {theory:.1}"
    );
    // The header is 7% of so small a frame; the coded XOR itself is within 2%.
    assert!(payload <= theory * 1.02, "{payload} vs {theory}");
    assert!(frame <= theory * 1.10, "{frame} vs {theory}");
}

/// 100 generations with churn: the receiver always holds exactly the sender's filter.
#[test]
fn chains_of_generations_decode_exactly() {
    let params = Params::standard(50_000, 3, HashFamily::default()).unwrap();
    let mut sender = Sender::new(Encoder::new(), 16);
    let mut receiver: Receiver = Receiver::new(Limits::default());
    let (mut deltas, mut fulls) = (0, 0);
    for g in 0..100u64 {
        // 5 000 keys; each generation replaces 50 of them (or 1 000 every 7th, so the full
        // frame sometimes wins on size).
        let churn = if g % 7 == 6 { 1_000 } else { 50 };
        let filter = generation(&params, 42, g * churn, 5_000);
        let frame = sender.next_frame(&filter).unwrap();
        let update = receiver.receive(&frame.to_bytes()).unwrap();
        assert_eq!((update.generation(), update.skipped()), (g + 1, 0));
        if update.is_full() {
            fulls += 1;
        } else {
            deltas += 1;
        }
        assert_eq!(receiver.filter().unwrap(), &filter, "generation {}", g + 1);
    }
    assert!(deltas > 50 && fulls >= 7, "{deltas} deltas, {fulls} full");
}

/// Every skipped, duplicated or reordered frame is detected, and leaves the receiver as it
/// was.
#[test]
fn gaps_duplicates_and_reordering_are_detected_every_time() {
    let params = Params::standard(20_000, 2, HashFamily::default()).unwrap();
    let mut sender = Sender::new(Encoder::new(), 1_000);
    let frames: Vec<Vec<u8>> = (0..30u64)
        .map(|g| {
            let f = generation(&params, 7, g * 20, 1_000);
            sender.next_frame(&f).unwrap().to_bytes().to_vec()
        })
        .collect();
    let limits = Limits::default();
    let is_delta = |b: &[u8]| matches!(decode::<Message>(b, &limits), Ok(Message::Delta(_)));
    assert!(frames[1..].iter().all(|f| is_delta(f)));

    let synced = |upto: usize| {
        let mut r: Receiver = Receiver::new(limits);
        for f in &frames[..=upto] {
            r.receive(f).unwrap();
        }
        r
    };
    for i in 1..frames.len() - 1 {
        // Skip frame i: frame i+1 names a base the receiver does not have.
        let mut r = synced(i - 1);
        let before = r.filter().cloned();
        let err = r.receive(&frames[i + 1]).unwrap_err();
        assert!(
            matches!(err, Error::GenerationGap { have: Some(h), base } if h == i as u64 && base == i as u64 + 1),
            "{err}"
        );
        assert_eq!(r.filter().cloned(), before);
        // Duplicate frame i.
        let mut r = synced(i);
        let err = r.receive(&frames[i]).unwrap_err();
        assert!(matches!(err, Error::StaleGeneration { .. }), "{err}");
        // Reorder: i+1 before i, then i (late).
        let mut r = synced(i - 1);
        assert!(r.receive(&frames[i + 1]).is_err());
        r.receive(&frames[i]).unwrap();
        r.receive(&frames[i + 1]).unwrap();
        assert_eq!(r.generation(), Some(i as u64 + 2));
        // A full frame resynchronizes after any gap.
        let mut r = synced(0);
        let full = Encoder::new()
            .encode_generation(
                &generation(&params, 7, (i as u64 + 1) * 20, 1_000),
                i as u64 + 2,
            )
            .unwrap();
        assert_eq!(
            r.receive(&full.to_bytes()).unwrap(),
            Update::Full {
                generation: i as u64 + 2,
                skipped: i as u64
            }
        );
        // And a full frame from the past is refused.
        let old = Encoder::new()
            .encode_generation(&generation(&params, 7, 0, 1_000), 1)
            .unwrap();
        assert!(matches!(
            r.receive(&old.to_bytes()),
            Err(Error::StaleGeneration { .. })
        ));
    }
}

fn rewrite_crc(frame: &mut [u8]) {
    let n = frame.len();
    let crc = crc32c::crc32c(&frame[..n - 4]);
    frame[n - 4..].copy_from_slice(&crc.to_le_bytes());
}

/// A receiver that has applied `f`'s full frame numbered `number`.
fn holding(f: &BloomFilter, number: u64) -> Receiver {
    let mut r: Receiver = Receiver::new(Limits::default());
    let full = Encoder::new().encode_generation(f, number).unwrap();
    r.receive(&full.to_bytes()).unwrap();
    r
}

#[test]
fn mismatched_deltas_are_typed_errors_and_change_nothing() {
    let params = Params::standard(10_000, 2, HashFamily::default()).unwrap();
    let base = generation(&params, 1, 0, 500);
    let next = generation(&params, 1, 10, 500);
    let delta = Encoder::new().encode_delta(&base, 1, &next, 2).unwrap();
    let bytes = delta.to_bytes().to_vec();

    // Another base with the same generation number.
    let other = generation(&params, 2, 0, 500);
    let mut r = holding(&other, 1);
    assert!(matches!(
        r.receive(&bytes),
        Err(Error::BaseMismatch { generation: 1, .. })
    ));
    assert_eq!(r.filter(), Some(&other));

    // A result digest that does not match what applying gives.
    let mut forged = bytes.clone();
    let digest = next.bits().digest().to_le_bytes();
    let at = forged.windows(4).position(|w| w == digest).unwrap();
    forged[at] ^= 1;
    rewrite_crc(&mut forged);
    let mut r = holding(&base, 1);
    assert!(matches!(
        r.receive(&forged),
        Err(Error::ResultMismatch { generation: 2, .. })
    ));
    assert_eq!(r.filter(), Some(&base));
    r.receive(&bytes).unwrap();
    assert_eq!(r.filter(), Some(&next));

    // Deltas between filters of different shapes are refused at both ends.
    let wider = BloomFilter::new(Params::standard(10_001, 2, HashFamily::default()).unwrap());
    // The error names the field and both values.
    let Err(Error::Incompatible(why)) = Encoder::new().encode_delta(&base, 1, &wider, 2) else {
        panic!("a delta between filters of different m")
    };
    assert_eq!(why, "m is 10001 in this filter and 10000 in the other");
    let Message::Delta(d) = decode::<Message>(&bytes, &Limits::default()).unwrap() else {
        panic!()
    };
    let k3 = BloomFilter::new(Params::standard(10_000, 3, HashFamily::default()).unwrap());
    let Err(Error::Incompatible(why)) = d.apply(&k3, 1) else {
        panic!("a delta applied to a filter of another k")
    };
    assert_eq!(why, "k is 3 in the base and 2 in the delta");
    assert!(Encoder::new().encode_delta(&base, 2, &next, 2).is_err());

    // A delta decoded where a full frame is expected.
    assert!(matches!(
        bloomwire::decode::<Decoded>(&bytes, &Limits::default()),
        Err(Error::UnexpectedDelta)
    ));
}
