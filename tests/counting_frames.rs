//! Counting filters on the wire (filter type 3): sizes against the entropy of the counter
//! histogram, round trips and no false negatives under random insert/delete sequences, deltas
//! through a sender and receiver, and typed errors for bad input.

use std::collections::HashMap;

use bloomwire::theory::histogram_entropy;
use bloomwire::{
    decode, BloomFilter, Coding, CounterCoding, CounterTable, CountingBloomFilter, Decoded,
    Encoder, Error, FrameView, HashCount, HashFamily, Layout, Limits, Message, Params, Receiver,
    Sender, Update,
};
use quickcheck::{quickcheck, TestResult};

fn filled(m: u64, k: u32, width: u8, n: u32, seed: u32) -> CountingBloomFilter {
    let params = Params::standard(m, k, HashFamily::default()).unwrap();
    let mut f = CountingBloomFilter::new(params, width).unwrap();
    for i in 0..n {
        f.insert([seed.to_le_bytes(), i.to_le_bytes()].concat());
    }
    f
}

/// The size table of the issue: n = 10 000 keys, 4-bit counters, m/n in {8, 16, 32} and k
/// in {1, 2, 4}; every coded frame within 0.5% of the empirical entropy of its counters
/// (m H(histogram) / 8) plus its header and checksum, and never below the entropy.
/// `cargo run --release --example counting_sizes` prints the same table.
#[test]
fn coded_sizes_are_within_half_a_percent_of_the_entropy() {
    let n = 10_000u32;
    for ratio in [8u64, 16, 32] {
        for k in [1u32, 2, 4] {
            let f = filled(ratio * u64::from(n), k, 4, n, 0);
            let m = f.params().m();
            let bound = m as f64 * histogram_entropy(&f.histogram()) / 8.0;
            let packed = Encoder::new()
                .encode_with(&f, CounterCoding::Raw)
                .unwrap()
                .payload()
                .len() as u64;
            assert_eq!(packed, m / 2, "4 bits a counter");
            for coding in [CounterCoding::Known, CounterCoding::Adaptive] {
                let frame = Encoder::new().encode_with(&f, coding).unwrap();
                let h = frame.header();
                let overhead = (h.header_len + 4) as f64;
                let total = frame.encoded_len() as f64;
                assert!(
                    total <= bound * 1.005 + overhead,
                    "m/n={ratio} k={k} {coding}: {total} bytes, bound {bound:.1} + {overhead}"
                );
                assert!(
                    h.payload_len as f64 >= bound - 4.0,
                    "m/n={ratio} k={k} {coding}: {} bytes beat the entropy {bound:.1}",
                    h.payload_len
                );
                let back =
                    decode::<Decoded<CountingBloomFilter>>(&frame.to_bytes(), &Limits::default())
                        .unwrap();
                assert_eq!(back.filter, f);
            }
        }
    }
}

#[test]
fn the_encoder_picks_a_coded_frame_and_raw_when_nothing_is_smaller() {
    let f = filled(160_000, 2, 4, 10_000, 1);
    let frame = Encoder::new().encode(&f).unwrap();
    assert!(matches!(
        frame.coding(),
        Coding::KnownCounters | Coding::AdaptiveCounters
    ));
    // Uniformly random 8-bit counters do not compress: the packed counters are sent.
    let mut s = 7u64;
    let counters: Vec<u8> = (0..4000)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 56) as u8
        })
        .collect();
    let params = Params::standard(4000, 3, HashFamily::default()).unwrap();
    let noise = CountingBloomFilter::from_counters(params, 8, counters, 1000).unwrap();
    let frame = Encoder::new().encode(&noise).unwrap();
    assert_eq!(frame.coding(), Coding::Raw);
    assert_eq!(frame.payload(), &noise.packed()[..]);
    // A budget below the smallest frame is refused with both sizes.
    let err = Encoder::new().budget(100).encode(&f).unwrap_err();
    assert!(matches!(err, Error::OverBudget { raw, .. } if raw > 80_000));
}

/// A counting frame's payload is counters: the bit-array view checks it (checksum and
/// all) but refuses to decode it as bits, with every coding, raw included.
#[test]
fn the_bit_array_view_refuses_counting_frames() {
    let f = filled(4000, 2, 4, 300, 3);
    for coding in CounterCoding::ALL {
        let wire = Encoder::new().encode_with(&f, coding).unwrap().to_bytes();
        let view = FrameView::parse(&wire, &Limits::default()).unwrap();
        assert_eq!(view.payload().len(), view.header().payload_len);
        let refused =
            |e: Option<Error>| matches!(e, Some(Error::UnexpectedFilterType { got: 3, .. }));
        assert!(refused(view.decode().err()), "{coding}");
        assert!(refused(view.decode_bits(0..10).err()), "{coding}");
        let mut words = [0u64; 63];
        assert!(
            refused(view.decode_chunk_into(0, &mut words).err()),
            "{coding}"
        );
    }
}

/// A decoded counting message re-encodes to its bytes; one whose header was edited by hand
/// to lose its counter width, or to give an occurring value frequency 0, is an error.
#[test]
fn counting_messages_re_encode_or_refuse() {
    let f = filled(4000, 2, 4, 300, 4);
    let wire = Encoder::new()
        .encode_with(&f, CounterCoding::Known)
        .unwrap()
        .to_bytes();
    let message = decode::<Message>(&wire, &Limits::default()).unwrap();
    assert_eq!(message.to_frame().unwrap().to_bytes(), wire);
    let Message::Counting(mut d) = message else {
        panic!("a counting frame")
    };
    let refuses = |d: &Decoded<CountingBloomFilter>| {
        let refused = Message::Counting(d.clone()).to_frame();
        assert!(
            matches!(refused, Err(Error::InvalidParameter { .. })),
            "{refused:?}"
        );
    };
    d.header.counter_table = Some(CounterTable::new(vec![65536], 4).unwrap());
    refuses(&d);
    d.header.counter_width = None;
    refuses(&d);
}

#[test]
fn theory_tables_cost_little_more_than_measured_ones() {
    let f = filled(160_000, 2, 4, 10_000, 2);
    let measured = Encoder::new()
        .encode_with(&f, CounterCoding::Known)
        .unwrap();
    let theory = Encoder::new()
        .p_source(bloomwire::PSource::Theory)
        .encode_with(&f, CounterCoding::Known)
        .unwrap();
    assert_ne!(
        measured.header().counter_table,
        theory.header().counter_table
    );
    let (a, b) = (measured.encoded_len() as f64, theory.encoded_len() as f64);
    assert!(b >= a && b < a * 1.002, "measured {a}, theory {b}");
    let back =
        decode::<Decoded<CountingBloomFilter>>(&theory.to_bytes(), &Limits::default()).unwrap();
    assert_eq!(back.filter, f);
}

/// Apply `ops` (true = insert, false = delete a key the multiset holds) to `f`.
fn run(f: &mut CountingBloomFilter, set: &mut HashMap<u8, u32>, keys: u8, ops: &[(bool, u8)]) {
    for &(insert, key) in ops {
        let key = key % keys.max(1);
        if insert {
            f.insert([key]);
            *set.entry(key).or_default() += 1;
        } else if let Some(c) = set.get_mut(&key) {
            f.remove([key]).expect("a present key can be removed");
            *c -= 1;
            if *c == 0 {
                set.remove(&key);
            }
        }
    }
}

fn layout(which: u8, m: u64, k: u32) -> Option<Layout> {
    let k = HashCount::new(k).ok()?;
    match which % 3 {
        0 => Some(Layout::Standard { k }),
        1 if m >= u64::from(k.ceil()) => Some(Layout::Partitioned { k }),
        1 => None,
        _ => Layout::blocks_proportional(m, k).ok(),
    }
}

quickcheck! {
    fn prop_frames_round_trip_without_false_negatives(
        m: u16, k: u8, width: u8, which: u8, keys: u8, ops: Vec<(bool, u8)>
    ) -> TestResult {
        let (m, k, width) = (1 + u64::from(m % 3000), 1 + u32::from(k % 5), 1 + width % 8);
        let Some(layout) = layout(which, m, k) else { return TestResult::discard() };
        // (Proportional blocks of a small m can round k below 1.)
        let Ok(params) = Params::new(m, layout, HashFamily::default()) else {
            return TestResult::discard();
        };
        let mut f = CountingBloomFilter::new(params, width).unwrap();
        let mut set = HashMap::new();
        run(&mut f, &mut set, keys, &ops);
        for coding in CounterCoding::ALL {
            let wire = Encoder::new().encode_with(&f, coding).unwrap().to_bytes();
            let back = decode::<Decoded<CountingBloomFilter>>(&wire, &Limits::default()).unwrap().filter;
            if back != f || !set.keys().all(|key| back.contains([*key])) {
                return TestResult::failed();
            }
        }
        TestResult::passed()
    }

    fn prop_deltas_reproduce_the_next_generation(
        m: u16, width: u8, keys: u8, first: Vec<(bool, u8)>, second: Vec<(bool, u8)>
    ) -> TestResult {
        let (m, width) = (1 + u64::from(m % 3000), 1 + width % 8);
        let params = Params::standard(m, 3, HashFamily::default()).unwrap();
        let mut f = CountingBloomFilter::new(params, width).unwrap();
        let mut set = HashMap::new();
        run(&mut f, &mut set, keys, &first);
        let base = f.clone();
        run(&mut f, &mut set, keys, &second);
        for coding in CounterCoding::ALL {
            let frame = Encoder::new().coding(coding).encode_delta(&base, 1, &f, 2);
            let Ok(Message::CountingDelta(d)) =
                decode::<Message>(&frame.unwrap().to_bytes(), &Limits::default())
            else {
                return TestResult::failed();
            };
            let next = d.apply(&base, 1).unwrap();
            if next != f || !set.keys().all(|key| next.contains([*key])) {
                return TestResult::failed();
            }
        }
        TestResult::passed()
    }
}

quickcheck! {
    fn prop_edited_frames_never_panic(edits: Vec<(u16, u8)>, which: u8) -> bool {
        // Any bytes after the magic, with a valid checksum so that the payload decoders
        // run: a typed error or a filter, never a panic.
        let f = filled(300, 3, 1 + which % 8, 60, 9);
        let coding = CounterCoding::ALL[usize::from(which) % 3];
        let frame = Encoder::new().encode_with(&f, coding).unwrap();
        let mut wire = frame.to_bytes().to_vec();
        let body = wire.len() - 4;
        // Half the cases edit only the payload, so the counter decoders see the edits.
        let start = if which & 0x80 != 0 { frame.header().header_len } else { 4 };
        for (at, value) in edits {
            let at = start + usize::from(at) % (body - start);
            wire[at] = value;
        }
        let crc = crc32c::crc32c(&wire[..body]);
        wire[body..].copy_from_slice(&crc.to_le_bytes());
        let _ = decode::<Message>(&wire, &Limits::default());
        true
    }
}

#[test]
fn a_counting_stream_survives_deletions_and_detects_loss() {
    let mut f = filled(80_000, 3, 4, 5000, 3);
    let mut sender = Sender::<CountingBloomFilter>::new(Encoder::new(), 10);
    let mut receiver = Receiver::<CountingBloomFilter>::with_limits(Limits::default());
    let first = sender.next_frame(&f).unwrap().to_bytes();
    assert_eq!(
        receiver.receive(&first).unwrap(),
        Update::Full {
            generation: 1,
            skipped: 0
        }
    );
    let mut frames = Vec::new();
    for g in 0..4u32 {
        for i in 0..50u32 {
            f.remove([3u32.to_le_bytes(), (g * 50 + i).to_le_bytes()].concat())
                .unwrap();
            f.insert([4u32.to_le_bytes(), (g * 50 + i).to_le_bytes()].concat());
        }
        frames.push((sender.next_frame(&f).unwrap().to_bytes(), f.clone()));
    }
    // Deltas, far smaller than the full frame.
    assert!(frames.iter().all(|(b, _)| b.len() * 5 < first.len()));
    assert_eq!(
        receiver.receive(&frames[0].0).unwrap(),
        Update::Delta { generation: 2 }
    );
    assert_eq!(receiver.filter(), Some(&frames[0].1));
    // The same frame again is stale, a skipped one a gap; the filter stays as it was.
    assert!(matches!(
        receiver.receive(&frames[0].0),
        Err(Error::StaleGeneration { .. })
    ));
    assert!(matches!(
        receiver.receive(&frames[2].0),
        Err(Error::GenerationGap { .. })
    ));
    assert_eq!(receiver.generation(), Some(2));
    assert_eq!(receiver.filter(), Some(&frames[0].1));
    // A full frame on request resynchronizes.
    sender.request_full();
    let full = sender.next_frame(&f).unwrap().to_bytes();
    assert!(matches!(
        receiver.receive(&full).unwrap(),
        Update::Full { generation: 6, .. }
    ));
    assert_eq!(receiver.filter(), Some(&f));
}

#[test]
fn counter_xor_codes_smaller_than_differences_when_keys_are_replaced() {
    // The choice the spec makes for counting deltas: with 1% of the keys replaced, the XOR
    // (0 -> 1 and 1 -> 0 both give 1) codes smaller than the difference mod 2^b (+1, -1).
    let base = filled(160_000, 2, 4, 10_000, 5);
    let mut next = base.clone();
    for i in 0..100u32 {
        next.remove([5u32.to_le_bytes(), i.to_le_bytes()].concat())
            .unwrap();
        next.insert([6u32.to_le_bytes(), i.to_le_bytes()].concat());
    }
    let xor = Encoder::new().encode_delta(&base, 1, &next, 2).unwrap();
    let diff: Vec<u8> = next
        .counters()
        .iter()
        .zip(base.counters())
        .map(|(a, b)| a.wrapping_sub(*b) & 15)
        .collect();
    let diff = CountingBloomFilter::from_counters(base.params().clone(), 4, diff, 0).unwrap();
    let diff = Encoder::new().encode(&diff).unwrap();
    assert!(
        xor.encoded_len() < diff.encoded_len(),
        "difference {} bytes, xor {}",
        diff.encoded_len(),
        xor.encoded_len()
    );
}

#[test]
fn bad_input_gets_typed_errors() {
    let params = Params::standard(100, 2, HashFamily::default()).unwrap();
    // Counter widths out of range; counters above the width.
    for width in [0u8, 9] {
        assert!(matches!(
            CountingBloomFilter::new(params.clone(), width),
            Err(Error::InvalidParameter { .. })
        ));
    }
    assert!(matches!(
        CountingBloomFilter::from_counters(params.clone(), 2, vec![4; 100], 1),
        Err(Error::InvalidParameter { .. })
    ));
    // Tables that do not sum to 2^16, end in zero, or are longer than the width allows.
    assert!(CounterTable::new(vec![30_000, 30_000], 4).is_err());
    assert!(CounterTable::new(vec![65_536, 0], 4).is_err());
    assert!(CounterTable::new(vec![16_384; 4], 1).is_err());
    let f = filled(100, 2, 4, 10, 6);
    // A table that gives frequency 0 to a value a counter holds cannot code it.
    let zeros_only = CounterTable::new(vec![65_536], 4).unwrap();
    assert!(matches!(
        Encoder::new()
            .counter_table(zeros_only)
            .encode_with(&f, CounterCoding::Known),
        Err(Error::InvalidParameter { .. })
    ));
    let wide = CounterTable::new(vec![4096; 16], 4).unwrap();
    assert!(Encoder::new()
        .counter_table(wide)
        .encode_with(&filled(100, 2, 2, 10, 6), CounterCoding::Known)
        .is_err());
    // Bit codings do not code counters, and counter codings do not code bits: the encoder
    // of a counting filter takes only `CounterCoding`s, that of a Bloom filter only
    // `BitCoding`s, so asking for the other kind does not compile.
    // A counting frame where a Bloom filter is expected, and the other way round.
    let wire = Encoder::new().encode(&f).unwrap().to_bytes();
    assert!(matches!(
        decode::<Decoded>(&wire, &Limits::default()),
        Err(Error::UnexpectedFilterType { got: 3, .. })
    ));
    assert!(matches!(
        Receiver::<BloomFilter>::with_limits(Limits::default()).receive(&wire),
        Err(Error::UnexpectedFilterType { got: 3, .. })
    ));
    let plain = Encoder::new()
        .encode(&f.to_bloom_filter())
        .unwrap()
        .to_bytes();
    assert!(matches!(
        decode::<Decoded<CountingBloomFilter>>(&plain, &Limits::default()),
        Err(Error::UnexpectedFilterType { got: 0, .. })
    ));
    // m is checked against the caller's limit before the counters are allocated.
    let small = Limits::new().max_m(99);
    assert!(matches!(
        decode::<Decoded<CountingBloomFilter>>(&wire, &small),
        Err(Error::LimitExceeded { field: "m", .. })
    ));
    // Every truncation of a counting frame is Incomplete, never a panic.
    for cut in 0..wire.len() {
        assert!(matches!(
            decode::<Decoded<CountingBloomFilter>>(&wire[..cut], &Limits::default()),
            Err(Error::Incomplete { .. })
        ));
    }
}

#[test]
fn counter_entropy_matches_simulated_histograms() {
    // theory::counter_entropy of Poisson(kn/m) against the empirical entropy of real
    // filters' counters, saturation included (2-bit counters saturate at 3).
    use bloomwire::theory::{counter_entropy, counter_mean};
    for (m, k, width) in [(80_000u64, 4u32, 4u8), (160_000, 2, 4), (40_000, 3, 2)] {
        let mut empirical = 0.0;
        for seed in 0..4 {
            let f = filled(m, k, width, 10_000, 100 + seed);
            empirical += histogram_entropy(&f.histogram()) / 4.0;
        }
        let f = filled(m, k, width, 0, 0);
        let theory = counter_entropy(counter_mean(f.params(), 10_000.0), width);
        assert!(
            (empirical / theory - 1.0).abs() < 0.005,
            "m={m} k={k} b={width}: simulated {empirical:.5} bits, theory {theory:.5}"
        );
    }
}

#[test]
fn counting_plans_hold_in_simulation() {
    // Plan 10 000 keys with 4-bit counters into 16 kB, build 12 filters with the planned
    // parameters and other keys, and code them: every frame fits the worst case, and the
    // mean is within 0.5% of the expected size.
    let n = 10_000u32;
    let plan = bloomwire::Optimizer::new()
        .plan_counting(n.into(), 4, 16_000)
        .unwrap();
    assert!(plan.worst_case_bytes <= 16_000);
    let raw_m = 2 * 16_000; // packed counters fit at most 32 000 counters
    assert!(plan.m() > 3 * raw_m, "{}", plan.m());
    let trials = 12u32;
    let mut total = 0.0;
    for seed in 0..trials {
        let mut f = CountingBloomFilter::new(plan.params.clone(), 4).unwrap();
        for i in 0..n {
            f.insert([(1000 + seed).to_le_bytes(), i.to_le_bytes()].concat());
        }
        let bytes = Encoder::new()
            .encode_with(&f, CounterCoding::Adaptive)
            .unwrap()
            .encoded_len();
        assert!(
            bytes as u64 <= plan.worst_case_bytes,
            "{bytes} > {}",
            plan.worst_case_bytes
        );
        total += bytes as f64;
    }
    let mean = total / f64::from(trials);
    assert!(
        (mean / plan.expected_bytes - 1.0).abs() < 0.005,
        "simulated {mean}, planned {}",
        plan.expected_bytes
    );
    // More bytes buy a lower false positive rate; too few bytes are refused.
    let bigger = bloomwire::Optimizer::new()
        .plan_counting(n.into(), 4, 24_000)
        .unwrap();
    assert!(bigger.false_positive_rate < plan.false_positive_rate);
    assert!(matches!(
        bloomwire::Optimizer::new().plan_counting(n.into(), 4, 20),
        Err(Error::OverBudget { .. })
    ));
    assert!(bloomwire::Optimizer::new()
        .plan_counting(n.into(), 9, 16_000)
        .is_err());
}
