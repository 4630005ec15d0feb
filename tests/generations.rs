//! A sender and a receiver over many generations: random changes round trip, every refused
//! frame leaves the receiver exactly as it was (generation, filter, digest), and a receiver
//! that accepted a forged generation number recovers with the sender's next restart frame.

use bloomwire::{
    decode, BloomFilter, Encoder, Error, HashFamily, Limits, Message, Params, Receiver, Sender,
    Update,
};
mod common;
use bloomwire_testkit::{mix64, GAMMA};
use common::keys;
use quickcheck::{QuickCheck, TestResult};

/// What a receiver holds, to compare before and after a frame.
fn state(r: &Receiver) -> (Option<u64>, Option<BloomFilter>, Option<u32>) {
    (r.generation(), r.filter().cloned(), r.digest())
}

/// The frame with one byte changed and its checksum made right again, so that it reaches
/// the checks behind the checksum.
fn forged(frame: &[u8], at: usize, xor: u8) -> Vec<u8> {
    let mut f = frame.to_vec();
    let body = f.len() - 4;
    f[at % body] ^= xor.max(1);
    let crc = crc32c::crc32c(&f[..body]);
    f[body..].copy_from_slice(&crc.to_le_bytes());
    f
}

#[test]
fn a_forged_last_generation_does_not_wedge_the_receiver() {
    let params = Params::standard(64_000, 2, HashFamily::default()).unwrap();
    let mut sender = Sender::new(Encoder::new(), 10);
    let mut receiver = Receiver::new(Limits::default());
    let mut frames = Vec::new();
    for g in 0..4u64 {
        let f = keys(&params, 1, g * 20..2000 + g * 20);
        frames.push(sender.next_frame(&f).unwrap().to_bytes());
    }
    for frame in &frames {
        receiver.receive(frame).unwrap();
    }
    assert_eq!(receiver.generation(), Some(4));

    // A forger's full frame numbered 2^64 - 1, without the restart flag.
    let forgery = Encoder::new()
        .encode_generation(&keys(&params, 99, 0..10), u64::MAX)
        .unwrap()
        .to_bytes();
    assert!(matches!(
        receiver.receive(&forgery).unwrap(),
        Update::Full {
            generation: u64::MAX,
            ..
        }
    ));
    // The sender's genuine deltas and ordinary frames are now all stale.
    let mut last = keys(&params, 1, 80..2080);
    for g in 5..8u64 {
        last = keys(&params, 1, g * 20..2000 + g * 20);
        let frame = sender.next_frame(&last).unwrap();
        assert!(!frame.is_restart());
        assert!(matches!(
            receiver.receive(&frame.to_bytes()),
            Err(Error::StaleGeneration { .. })
        ));
    }
    // The application asks for a full frame; it carries the restart flag and is applied.
    sender.request_full();
    let frame = sender.next_frame(&last).unwrap();
    assert!(frame.is_restart());
    assert_eq!(
        receiver.receive(&frame.to_bytes()).unwrap(),
        Update::Full {
            generation: 8,
            skipped: 0
        }
    );
    assert_eq!(receiver.filter(), Some(&last));
    assert_eq!(receiver.digest(), Some(last.bits().digest()));
    // And the deltas that follow apply again.
    let next = keys(&params, 1, 180..2180);
    let delta = sender.next_frame(&next).unwrap().to_bytes();
    assert_eq!(
        receiver.receive(&delta).unwrap(),
        Update::Delta { generation: 9 }
    );
    assert_eq!(receiver.filter(), Some(&next));

    // Without anyone asking, the periodic full frame (generation 10) restarts too.
    receiver.receive(&forgery).unwrap();
    let tenth = keys(&params, 1, 200..2200);
    let frame = sender.next_frame(&tenth).unwrap();
    assert!(frame.is_restart());
    receiver.receive(&frame.to_bytes()).unwrap();
    assert_eq!(receiver.generation(), Some(10));
    assert_eq!(receiver.filter(), Some(&tenth));
}

#[test]
fn a_restart_is_only_a_full_frame_and_says_so_on_the_wire() {
    let params = Params::standard(5_000, 2, HashFamily::default()).unwrap();
    let f = keys(&params, 3, 0..300);
    let mut sender = Sender::new(Encoder::new(), 100);
    let first = sender.next_frame(&f).unwrap();
    assert!(first.is_restart(), "a sender's first frame restarts");
    let wire = first.to_bytes();
    let message: Message = decode(&wire, &Limits::default()).unwrap();
    assert!(message.header().restart);
    assert_eq!(message.to_frame().unwrap().to_bytes(), wire);
    let g = keys(&params, 3, 10..310);
    let delta = sender.next_frame(&g).unwrap();
    assert!(!delta.is_restart());
    assert!(delta.with_restart(true).is_err());
    // flags bit 1 on a delta is refused by the header checks.
    let mut bytes = sender.next_frame(&f).unwrap().to_bytes().to_vec();
    assert_eq!(bytes[5], 1, "a delta");
    bytes[10] |= 2;
    let body = bytes.len() - 4;
    let crc = crc32c::crc32c(&bytes[..body]);
    bytes[body..].copy_from_slice(&crc.to_le_bytes());
    assert!(matches!(
        decode::<Message>(&bytes, &Limits::default()),
        Err(Error::InvalidField { field: "flags", .. })
    ));
}

/// Generations of random changes (keys replaced, added, removed by rebuilding), sent and
/// received; each frame also arrives forged (one byte changed, the checksum recomputed) or
/// repeated before the genuine one. Every refusal leaves the receiver as it was; every
/// genuine frame makes it hold the sender's filter with its digest.
fn generations_round_trip(seed: u64, steps: u8, m_choice: u16, full_every: u8) -> TestResult {
    let m = 64 + u64::from(m_choice % 4000) * 37;
    let params = Params::standard(m, 1 + (seed % 3) as u32, HashFamily::default()).unwrap();
    let mut sender = Sender::new(Encoder::new(), u64::from(full_every % 12));
    let mut receiver = Receiver::new(Limits::default());
    let (mut lo, mut hi) = (0u64, m / 10);
    let mut previous: Option<Vec<u8>> = None;
    for step in 0..u64::from(steps % 24) + 1 {
        let r = mix64(seed ^ step.wrapping_mul(GAMMA));
        lo += r % 7;
        hi = (hi + (r >> 8) % 9).max(lo);
        let filter = keys(&params, seed, lo..hi);
        let frame = sender.next_frame(&filter).unwrap().to_bytes();
        let saved = receiver.clone();
        let bad = forged(&frame, (r >> 16) as usize, (r >> 40) as u8);
        match receiver.receive(&bad) {
            Err(_) if state(&receiver) != state(&saved) => {
                return TestResult::error(format!(
                    "a refused forgery changed the receiver at {step}"
                ));
            }
            Err(_) => {}
            // A forgery that is still a valid frame (another n, seed or generation) is
            // applied like any frame: forget it.
            Ok(_) => receiver = saved,
        }
        if let Some(old) = &previous {
            // The frame applied last, again: refused as stale, or (a restart frame) applied
            // to the same effect.
            let before = state(&receiver);
            let _ = receiver.receive(old);
            if state(&receiver) != before {
                return TestResult::error("a repeated frame changed the receiver");
            }
        }
        if let Err(e) = receiver.receive(&frame) {
            return TestResult::error(format!("genuine frame {step} refused: {e}"));
        }
        if receiver.filter() != Some(&filter) || receiver.digest() != Some(filter.bits().digest()) {
            return TestResult::error(format!("wrong filter after step {step}"));
        }
        previous = Some(frame.to_vec());
    }
    TestResult::passed()
}

#[test]
fn many_generations_round_trip_and_refusals_change_nothing() {
    QuickCheck::new()
        .tests(150)
        .quickcheck(generations_round_trip as fn(u64, u8, u16, u8) -> TestResult);
}

#[test]
fn positional_deltas_apply_in_place_chunked_or_not() {
    use bloomwire::{BitCoding, Chunking, Coding};
    let params = Params::standard(300_000, 2, HashFamily::default()).unwrap();
    let base = keys(&params, 5, 0..10_000);
    let next = keys(&params, 5, 100..10_100);
    for chunking in [Chunking::Never, Chunking::Shift(12)] {
        let delta = Encoder::new()
            .coding(BitCoding::Positional)
            .chunking(chunking)
            .encode_delta(&base, 1, &next, 2)
            .unwrap();
        assert_eq!(delta.coding(), Coding::Positional);
        assert_eq!(
            delta.header().chunk_shift.is_some(),
            chunking != Chunking::Never
        );
        let wire = delta.to_bytes();
        let mut receiver = common::holding(&base, 1);
        // A forged result digest: refused, and nothing changes.
        let digest = next.bits().digest().to_le_bytes();
        let at = wire.windows(4).position(|w| w == digest).unwrap();
        let before = state(&receiver);
        let bad = forged(&wire, at, 0x10);
        assert!(matches!(
            receiver.receive(&bad),
            Err(Error::ResultMismatch { .. })
        ));
        assert_eq!(state(&receiver), before);
        assert_eq!(
            receiver.receive(&wire).unwrap(),
            Update::Delta { generation: 2 }
        );
        assert_eq!(receiver.filter(), Some(&next));
        assert_eq!(receiver.digest(), Some(next.bits().digest()));
    }
    // The sender's own deltas of this step are positional.
    let mut sender = Sender::new(Encoder::new(), 100);
    sender.next_frame(&base).unwrap();
    let frame = sender.next_frame(&next).unwrap();
    assert_eq!(frame.coding(), Coding::Positional);
    assert!(matches!(
        frame.header().kind,
        bloomwire::FrameKind::Delta { .. }
    ));
}
