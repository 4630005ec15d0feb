//! What a `SummarySender` keeps between two frames is bounded by the counters that changed,
//! not by the operations: a million inserts and removals of one key between two frames
//! once held 64 MiB for a filter of 5 KB. A counting global allocator (per thread)
//! measures its peak heap; the frames it sends are compared, byte for byte, with those of a
//! `Sender` handed the counting filter's Bloom filter whole.

use bloomwire::{
    CountingBloomFilter, Encoder, HashFamily, Limits, Params, Receiver, Sender, SummarySender,
};
use bloomwire_testkit::{peak_during, CountingAllocator};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const MIB: usize = 1 << 20;

/// A Summary Cache sender of 5,000 counters (5 KB), and a plain sender to check it against.
fn senders() -> (SummarySender, Sender) {
    let params = Params::standard(5_000, 3, HashFamily::default()).unwrap();
    let counting = CountingBloomFilter::new(params, 4).unwrap();
    (
        SummarySender::new(counting, Encoder::new(), 100),
        Sender::new(Encoder::new(), 100),
    )
}

/// The next frame of both senders, which must be the same bytes; a receiver follows it.
fn same_next_frame(summary: &mut SummarySender, plain: &mut Sender, receiver: &mut Receiver) {
    let frame = summary.next_frame().unwrap().to_bytes();
    let expected = plain
        .next_frame(&summary.filter().to_bloom_filter())
        .unwrap()
        .to_bytes();
    assert_eq!(frame, expected, "generation {}", summary.generation());
    receiver.receive(&frame).unwrap();
    assert_eq!(receiver.filter(), Some(&summary.filter().to_bloom_filter()));
}

#[test]
fn a_million_insert_remove_pairs_of_one_key_hold_under_a_mib() {
    let (mut summary, mut plain) = senders();
    let mut receiver = Receiver::new(Limits::default());
    for i in 0..300u32 {
        summary.insert(i.to_le_bytes());
    }
    same_next_frame(&mut summary, &mut plain, &mut receiver);

    // A key the filter does not hold: each insert sets some counters from 0 and each
    // removal clears them again, toggling the same bits back and forth.
    let key = b"a key that comes and goes";
    assert!(!summary.contains(key));
    let ((), peak, _) = peak_during(|| {
        for _ in 0..1_000_000 {
            summary.insert(key);
            summary.remove(key).unwrap();
        }
    });
    assert!(peak < MIB, "{peak} bytes held for 10^6 insert+remove pairs");
    // Nothing changed: the next frame is a delta of no change, as the plain sender's.
    same_next_frame(&mut summary, &mut plain, &mut receiver);

    // The same between real changes, in the middle of a generation.
    let ((), peak, _) = peak_during(|| {
        for i in 300..400u32 {
            summary.insert(i.to_le_bytes());
            for _ in 0..10_000 {
                summary.insert(key);
                summary.remove(key).unwrap();
            }
            summary.remove((i - 300).to_le_bytes()).unwrap();
        }
    });
    assert!(peak < MIB, "{peak} bytes held");
    same_next_frame(&mut summary, &mut plain, &mut receiver);
}

#[test]
fn many_changes_between_frames_send_the_same_frames() {
    let params = Params::standard(1 << 20, 3, HashFamily::default()).unwrap();
    let counting = CountingBloomFilter::new(params, 4).unwrap();
    let mut summary = SummarySender::new(counting, Encoder::new(), 100);
    let mut plain = Sender::new(Encoder::new(), 100);
    let mut receiver = Receiver::new(Limits::default());
    same_next_frame(&mut summary, &mut plain, &mut receiver);
    // Tens of thousands of changed positions between two frames: the toggled positions
    // are compacted many times on the way, and what they say is unchanged.
    for round in 0..3u32 {
        for i in 0..20_000u32 {
            summary.insert((round * 20_000 + i).to_le_bytes());
            if round > 0 && i % 2 == 0 {
                summary
                    .remove(((round - 1) * 20_000 + i).to_le_bytes())
                    .unwrap();
            }
        }
        same_next_frame(&mut summary, &mut plain, &mut receiver);
    }
}
