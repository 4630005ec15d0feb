//! Updates that cost what changed: a sender handed the flipped positions
//! (`Sender::next_frame_with_flips`, `SummarySender`) and a receiver that applies a
//! positional delta with its digests brought forward by the flips, against the
//! whole-filter paths (`Sender::next_frame` on the new generation, `Delta::apply`).

use bloomwire::filter::bits::BitArray;
use bloomwire::{
    decode, BloomFilter, CountingBloomFilter, Encoder, Error, HashFamily, Limits, Message, Params,
    Receiver, Sender, SummarySender, Update,
};
use quickcheck::{quickcheck, TestResult};

fn filter(m: u64, ones: &[u64], n: u64) -> BloomFilter {
    let params = Params::standard(m, 3, HashFamily::default()).unwrap();
    let bits = BitArray::from_ones(m, ones.iter().copied()).unwrap();
    BloomFilter::from_parts(params, bits, n).unwrap()
}

fn flipped(f: &BloomFilter, flips: &[u64], n: u64) -> BloomFilter {
    let mut bits = f.bits().clone();
    let mut xor = BitArray::new(f.m());
    flips.iter().for_each(|&p| xor.set(p));
    bits.xor_with(&xor).unwrap();
    BloomFilter::from_parts(f.params().clone(), bits, n).unwrap()
}

/// A receiver that holds `base` as generation 1.
fn receiver_holding(base: &BloomFilter) -> Receiver {
    let mut receiver = Receiver::new(Limits::default());
    let first = Encoder::new()
        .encode_generation(base, 1)
        .unwrap()
        .to_bytes();
    receiver.receive(&first).unwrap();
    receiver
}

/// Random positions below `m` made increasing and distinct, with the first and the last
/// bits if asked.
fn positions(m: u64, raw: &[u32], ends: (bool, bool)) -> Vec<u64> {
    let mut p: Vec<u64> = raw.iter().map(|&r| u64::from(r) % m).collect();
    if ends.0 {
        p.push(0);
    }
    if ends.1 {
        p.push(m - 1);
    }
    p.sort_unstable();
    p.dedup();
    p
}

/// Both senders' second frames, after both sent `base` whole.
fn second_frames(base: &BloomFilter, flips: &[u64], n: u64) -> (Vec<u8>, Vec<u8>) {
    let encoder = Encoder::new();
    let (mut by_flips, mut by_filter) =
        (Sender::new(encoder.clone(), 100), Sender::new(encoder, 100));
    by_flips.next_frame(base).unwrap();
    by_filter.next_frame(base).unwrap();
    let a = by_flips.next_frame_with_flips(flips, n).unwrap().to_bytes();
    let b = by_filter
        .next_frame(&flipped(base, flips, n))
        .unwrap()
        .to_bytes();
    assert_eq!(by_flips.last_sent(), by_filter.last_sent());
    (a.to_vec(), b.to_vec())
}

quickcheck! {
    /// The frame made from the flips is the frame made from the new generation, and a
    /// receiver (flips and digest brought forward) and `Delta::apply` (a copy and a whole
    /// digest) both turn the base into the new generation.
    fn flips_make_the_frame_the_new_generation_makes(
        m: u16, ones: Vec<u32>, raw: Vec<u32>, ends: (bool, bool)
    ) -> TestResult {
        let m = u64::from(m) * 13 + 64;
        let base = filter(m, &positions(m, &ones, (false, false)), 40);
        let flips = positions(m, &raw, ends);
        let (by_flips, by_filter) = second_frames(&base, &flips, 41);
        if by_flips != by_filter {
            return TestResult::error("the two senders' frames differ");
        }
        let want = flipped(&base, &flips, 41);
        let mut receiver = receiver_holding(&base);
        let got = receiver.receive(&by_flips).unwrap();
        let whole = match decode(&by_flips, &Limits::default()).unwrap() {
            Message::Delta(delta) => delta.apply(&base, 1).unwrap(),
            Message::Full(full) => full.filter,
            other => return TestResult::error(format!("{other:?}")),
        };
        TestResult::from_bool(
            got.generation() == 2
                && receiver.filter() == Some(&want)
                && receiver.digest() == Some(want.bits().digest())
                && whole == want,
        )
    }

    /// A receiver holding another base of the same generation refuses the delta as
    /// `Delta::apply` does, and keeps its filter.
    fn a_wrong_base_is_refused_by_both_paths(raw: Vec<u32>, other: u32) -> TestResult {
        let m = 100_000;
        let base = filter(m, &positions(m, &[1, 2, 3, 50_000, 99_999], (false, false)), 5);
        let flips = positions(m, &raw, (false, false));
        let (frame, _) = second_frames(&base, &flips, 6);
        let Ok(Message::Delta(delta)) = decode(&frame, &Limits::default()) else {
            return TestResult::discard(); // a full frame was smaller
        };
        let wrong = flipped(&base, &[u64::from(other) % m], 5);
        let mut receiver = receiver_holding(&wrong);
        let in_place = receiver.receive(&frame);
        let whole = delta.apply(&wrong, 1);
        TestResult::from_bool(
            matches!(in_place, Err(Error::BaseMismatch { .. }))
                && matches!(whole, Err(Error::BaseMismatch { .. }))
                && receiver.filter() == Some(&wrong)
                && receiver.generation() == Some(1),
        )
    }

    /// A Summary Cache sender's frames keep a receiver on the counting filter's Bloom
    /// filter through random inserts and removals.
    fn a_summary_sender_keeps_its_peer_on_the_counters(steps: Vec<Vec<(bool, u16)>>) -> bool {
        let params = Params::standard(4096, 3, HashFamily::default()).unwrap();
        let mut sender =
            SummarySender::new(CountingBloomFilter::new(params, 4).unwrap(), Encoder::new(), 5);
        let mut receiver = Receiver::new(Limits::default());
        let mut held = Vec::new();
        for step in steps.iter().take(12) {
            for &(insert, key) in step {
                if insert || held.is_empty() {
                    sender.insert(key.to_le_bytes());
                    held.push(key);
                } else {
                    let k = held.swap_remove(usize::from(key) % held.len());
                    sender.remove(k.to_le_bytes()).unwrap();
                }
            }
            let frame = sender.next_frame().unwrap().to_bytes();
            if receiver.receive(&frame).is_err()
                || receiver.filter() != Some(&sender.filter().to_bloom_filter())
            {
                return false;
            }
        }
        true
    }
}

#[test]
fn flips_out_of_order_repeated_or_past_m_are_refused_and_change_nothing() {
    let base = filter(1000, &[1, 500], 2);
    let mut sender = Sender::new(Encoder::new(), 100);
    assert!(matches!(
        sender.next_frame_with_flips(&[3], 3),
        Err(Error::InvalidParameter { .. })
    ));
    sender.next_frame(&base).unwrap();
    for bad in [&[5u64, 3][..], &[3, 3], &[999, 1000]] {
        let got = sender.next_frame_with_flips(bad, 3);
        assert!(
            matches!(got, Err(Error::InvalidParameter { .. })),
            "{bad:?}"
        );
        assert_eq!(sender.generation(), 1);
        assert_eq!(sender.last_sent(), Some(&base));
    }
    let next = sender.next_frame_with_flips(&[3, 999], 4).unwrap();
    assert_eq!(next.header().generation, 2);
}

#[test]
fn periodic_and_requested_full_frames_follow_the_flips() {
    let base = filter(
        1 << 16,
        &(0..3000).map(|i| i * 21).collect::<Vec<_>>(),
        1000,
    );
    let mut sender = Sender::new(Encoder::new(), 3);
    let mut receiver = Receiver::new(Limits::default());
    receiver
        .receive(&sender.next_frame(&base).unwrap().to_bytes())
        .unwrap();
    let mut want = base.clone();
    for g in 2..8u64 {
        if g == 5 {
            sender.request_full();
        }
        let flips = [g * 7, g * 1000 + 1];
        want = flipped(&want, &flips, 1000 + g);
        let frame = sender.next_frame_with_flips(&flips, 1000 + g).unwrap();
        let full = g % 3 == 0 || g == 5;
        assert_eq!(frame.header().restart, full, "generation {g}");
        let update = receiver.receive(&frame.to_bytes()).unwrap();
        assert_eq!(update.is_full(), full, "generation {g}: {update:?}");
        assert_eq!(receiver.filter(), Some(&want));
    }
    assert!(matches!(
        receiver.receive(&sender.full_frame().unwrap().to_bytes()),
        Ok(Update::Full { generation: 7, .. })
    ));
}

#[test]
fn no_flips_and_every_bit_flipped() {
    let m = 1000;
    let base = filter(m, &[0, 10, 999], 3);
    let all: Vec<u64> = (0..m).collect();
    for flips in [&[][..], &all[..], &[0][..], &[m - 1][..]] {
        let (by_flips, by_filter) = second_frames(&base, flips, 3);
        assert_eq!(by_flips, by_filter, "{} flips", flips.len());
        let mut receiver = receiver_holding(&base);
        receiver.receive(&by_flips).unwrap();
        assert_eq!(receiver.filter(), Some(&flipped(&base, flips, 3)));
    }
}
