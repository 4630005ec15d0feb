//! Decompression bombs: frames of under 64 bytes that claim m = 2^40, k = 2^20 or a payload
//! of 2^40 bytes are rejected with a typed error before anything proportional to the claim
//! is allocated. A counting global allocator (per thread) measures the decoder's peak heap.
//!
//! Default limits (`Limits::default()`): m up to 2^28 bits, k up to 64, payloads up to
//! 2^26 bytes. A receiver that expects larger filters raises them, e.g.
//! `Limits::new().max_m(1 << 33)`; the decoder then allocates up to
//! twice the packed size of the largest m it accepts.

use bloomwire::format::{put_varint, MAGIC};
use bloomwire::{
    decode, decode_buf, BitCoding, BloomFilter, Coding, Decoded, Encoder, Error, HashFamily,
    Limits, Message, Params,
};
use bloomwire_testkit::{peak_during, CountingAllocator};

mod common;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Heap the decoder may use for a frame it rejects in its header.
const SMALL: usize = 1024;

/// A standard-layout frame with xxHash64 seed 0, the given coding and fields, a payload of
/// `payload_len` declared bytes of which `payload` are present, and a correct checksum when
/// the whole payload is present.
fn frame(coding: Coding, m: u64, k_raw: u64, payload_len: u64, payload: &[u8]) -> Vec<u8> {
    let mut b = MAGIC.to_vec();
    b.extend_from_slice(&[
        bloomwire::format::VERSION,
        bloomwire::format::KIND_FULL,
        0,
        1,
        0,
        coding.id(),
        0,
    ]);
    put_varint(&mut b, 0); // seed
    put_varint(&mut b, m);
    put_varint(&mut b, k_raw);
    put_varint(&mut b, 0); // n
    put_varint(&mut b, 0); // generation
    if coding.has_q0() {
        b.extend_from_slice(&0x8000u16.to_le_bytes());
    }
    put_varint(&mut b, payload_len);
    b.extend_from_slice(payload);
    let crc = crc32c::crc32c(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

/// Decode `bytes` as one frame within `limits`; returns the error and the peak heap.
fn reject(bytes: &[u8], limits: &Limits) -> (Error, usize) {
    assert!(bytes.len() < 64, "{} bytes", bytes.len());
    let (result, peak, _) = peak_during(|| decode::<Message>(bytes, limits));
    (result.expect_err("a bomb must be rejected"), peak)
}

#[test]
fn m_of_2_to_the_40_is_refused_before_allocation() {
    for coding in BitCoding::ALL.map(Coding::from) {
        let bytes = frame(coding, 1 << 40, 1 << 16, 0, &[]);
        let (err, peak) = reject(&bytes, &Limits::default());
        assert!(
            matches!(err, Error::LimitExceeded { field: "m", value, limit, .. }
                if value == 1 << 40 && limit == 1 << 28),
            "{coding}: {err}"
        );
        assert!(peak <= SMALL, "{coding}: {peak} bytes");
        // Above the format's hard limit it is invalid whatever the caller's limits.
        let bytes = frame(coding, (1 << 48) + 1, 1 << 16, 0, &[]);
        let (err, peak) = reject(&bytes, &Limits::unlimited());
        assert!(
            matches!(err, Error::InvalidField { field: "m", .. }),
            "{coding}: {err}"
        );
        assert!(peak <= SMALL);
    }
}

#[test]
fn k_of_2_to_the_20_is_refused_before_any_index_is_computed() {
    for coding in BitCoding::ALL.map(Coding::from) {
        // k = 2^20 is above the format's 1024: invalid under any limits.
        let bytes = frame(coding, 1000, (1 << 20) << 16, 0, &[]);
        for limits in [Limits::default(), Limits::unlimited()] {
            let (err, peak) = reject(&bytes, &limits);
            assert!(
                matches!(err, Error::InvalidField { field: "k", value, .. } if value == 1 << 36),
                "{coding}: {err}"
            );
            assert!(peak <= SMALL);
        }
        // k = 1000 is valid but above the default limit of 64.
        let bytes = frame(coding, 1000, 1000 << 16, 0, &[]);
        let (err, _) = reject(&bytes, &Limits::default());
        assert!(
            matches!(
                err,
                Error::LimitExceeded {
                    field: "k",
                    value: 1000,
                    limit: 64,
                    ..
                }
            ),
            "{coding}: {err}"
        );
    }
}

#[test]
fn a_payload_of_2_to_the_40_bytes_is_refused_or_awaited_without_allocation() {
    for coding in [Coding::Adaptive, Coding::KnownP, Coding::KnownPSymbols] {
        let bytes = frame(coding, 1000, 1 << 16, 1 << 40, &[1, 2, 3]);
        let (err, peak) = reject(&bytes, &Limits::default());
        assert!(
            matches!(err, Error::LimitExceeded { field: "payload length", value, limit, .. }
                if value == 1 << 40 && limit == 1 << 26),
            "{coding}: {err}"
        );
        assert!(peak <= SMALL);
        // A caller that lifts every limit is told how much is missing; nothing is
        // allocated for it.
        let (err, peak) = reject(&bytes, &Limits::unlimited());
        assert!(
            matches!(err, Error::Incomplete { needed } if needed as u64 > 1 << 39),
            "{coding}: {err}"
        );
        assert!(peak <= SMALL);
        let mut buf = bytes::Bytes::from(bytes.clone());
        let (result, peak, _) =
            peak_during(|| decode_buf::<Decoded, _>(&mut buf, &Limits::unlimited()));
        assert!(matches!(result, Err(Error::Incomplete { .. })));
        assert!(peak <= SMALL);
    }
    // Raw payloads must be exactly ceil(m / 8) bytes.
    let bytes = frame(Coding::Raw, 1000, 1 << 16, 1 << 40, &[]);
    let (err, _) = reject(&bytes, &Limits::unlimited());
    assert!(
        matches!(
            err,
            Error::InvalidField {
                field: "payload length",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_frame_within_the_limits_allocates_in_proportion_to_m_only() {
    // 2^18 zero bits in a few dozen bytes (the most the work bound of spec 2.2 lets a
    // near-empty payload code): legitimate, and the decoder's heap is bounded by m, which
    // the limits bound.
    let m = 1u64 << 18;
    let f = BloomFilter::new(Params::standard(m, 2, HashFamily::default()).unwrap());
    for coding in BitCoding::ALL.into_iter().filter(|&c| c != BitCoding::Raw) {
        let bytes = Encoder::new().encode_with(&f, coding).unwrap().to_bytes();
        if matches!(coding, BitCoding::Adaptive | BitCoding::KnownP) {
            assert!(bytes.len() < 64, "{coding}: {} bytes", bytes.len());
        }
        let limits = Limits::new().max_m(m);
        let (result, peak, _) = peak_during(|| decode::<Message>(&bytes, &limits));
        result.unwrap();
        let packed = (m / 8) as usize;
        assert!(peak >= packed, "{coding}: {peak}");
        assert!(peak <= 2 * packed + (1 << 17), "{coding}: {peak} bytes");
        // One bit fewer in the limit and the same frame is refused up front.
        let tight = Limits::new().max_m(m - 1);
        let (result, peak, _) = peak_during(|| decode::<Message>(&bytes, &tight));
        assert!(matches!(
            result,
            Err(Error::LimitExceeded { field: "m", .. })
        ));
        assert!(peak <= SMALL);
    }
}

#[cfg(feature = "tokio")]
#[test]
fn the_codec_does_not_reserve_what_a_header_claims() {
    use bloomwire::FrameCodec;
    use tokio_util::codec::Decoder;
    // Within the default limits: 2^26 - 1 bytes of payload claimed, 3 sent.
    let bytes = frame(Coding::Adaptive, 1000, 1 << 16, (1 << 26) - 1, &[1, 2, 3]);
    let mut codec = FrameCodec::new(Limits::default());
    let mut buf = bytes::BytesMut::from(&bytes[..]);
    let (result, peak, _) = peak_during(|| codec.decode(&mut buf));
    assert!(matches!(result, Ok(None)));
    assert!(
        buf.capacity() <= bytes.len() + bloomwire::FramingCodec::RESERVE_STEP,
        "reserved {}",
        buf.capacity()
    );
    assert!(peak <= 1 << 17, "{peak}");
}

/// A counting frame (filter type 3, standard counted type, k = 1) with `width`-bit counters,
/// the given coding and table, and `payload_len` bytes of payload (`payload` then zeros),
/// with a correct checksum.
fn counting_frame(
    coding: Coding,
    m: u64,
    width: u8,
    table: Option<&[u64]>,
    payload_len: u64,
    payload: &[u8],
) -> Vec<u8> {
    let mut b = MAGIC.to_vec();
    let counting = bloomwire::format::FILTER_TYPE_COUNTING;
    b.extend_from_slice(&[
        bloomwire::format::VERSION,
        bloomwire::format::KIND_FULL,
        counting,
        1,
        0,
        coding.id(),
        0,
    ]);
    put_varint(&mut b, 0); // seed
    put_varint(&mut b, m);
    b.extend_from_slice(&[0, width]); // counted type, counter width
    put_varint(&mut b, 1 << 16); // k = 1
    put_varint(&mut b, 0); // n
    put_varint(&mut b, 0); // generation
    if let Some(table) = table {
        put_varint(&mut b, table.len() as u64);
        table.iter().for_each(|&f| put_varint(&mut b, f));
    }
    put_varint(&mut b, payload_len);
    b.extend_from_slice(payload);
    b.resize(b.len() + payload_len as usize - payload.len(), 0);
    let crc = crc32c::crc32c(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

/// The CPU bombs of the format before the work bound (spec 2.2), all legal under
/// `Limits::default()` until then: 2^28 symbols from a payload of a few dozen to a few
/// hundred bytes (measured: 33.5 s for the saturated known-counters frame, 2.2 s adaptive
/// counters, 1.4 s adaptive bits, 0.8 s known-p). Each is now refused by the header check,
/// before the payload is read, with the payload length it rejects and no allocation.
#[test]
fn cpu_bombs_are_refused_by_the_work_bound() {
    let m = 1u64 << 28;
    // 2^28 saturated 8-bit counters with a 256-entry table that makes 255 nearly free.
    let mut saturated = vec![1u64; 255];
    saturated.push(65536 - 255);
    let bombs = [
        (
            "known counters, saturated",
            counting_frame(Coding::KnownCounters, m, 8, Some(&saturated), 16, &[]),
            16,
        ),
        (
            "adaptive counters",
            counting_frame(Coding::AdaptiveCounters, m, 8, None, 4, &[]),
            4,
        ),
        (
            "adaptive bits",
            frame(Coding::Adaptive, m, 1 << 16, 2, &[0, 0]),
            2,
        ),
        ("known-p", frame(Coding::KnownP, m, 1 << 16, 2, &[0, 0]), 2),
        (
            "known-p symbols",
            frame(Coding::KnownPSymbols, m, 1 << 16, 4, &[0; 4]),
            4,
        ),
        (
            "known-p interleaved",
            frame(Coding::KnownPInterleaved, m, 1 << 16, 32, &[0; 32]),
            32,
        ),
    ];
    // Limits that take 2^28 counters (2^28 bits take 32 MiB, the default).
    let limits = Limits::new().max_filter_bytes(m);
    for (name, bytes, len) in bombs {
        assert!(bytes.len() <= 400, "{name}: {} bytes", bytes.len());
        let (result, peak, _) = peak_during(|| decode::<Message>(&bytes, &limits));
        let err = result.expect_err(name);
        assert!(
            matches!(err, Error::InvalidField { field: "payload length", value, .. } if value == len),
            "{name}: {err}"
        );
        // Nothing but the header's own fields (a 256-entry table: 2 KiB).
        assert!(peak <= 4 * SMALL, "{name}: {peak} bytes");
        // A format rule, not a receiver's limit: refused under any limits.
        let err = decode::<Message>(&bytes, &Limits::unlimited()).expect_err(name);
        assert!(
            matches!(
                err,
                Error::InvalidField {
                    field: "payload length",
                    ..
                }
            ),
            "{name}: {err}"
        );
    }
    // The largest m a payload of L bytes may code, and one more.
    for l in [0u64, 2, 1000] {
        let edge = (l + bloomwire::format::WORK_SLACK) << bloomwire::format::WORK_SHIFT;
        assert!(Coding::Adaptive.within_work_bound(edge, None, l));
        assert!(!Coding::Adaptive.within_work_bound(edge + 1, None, l));
        assert!(Coding::Raw.within_work_bound(edge + 1, None, l));
        assert!(Coding::KnownCounters.within_work_bound(edge + 1, Some(1), l));
        assert!(!Coding::KnownCounters.within_work_bound(edge + 1, Some(2), l));
    }
}

/// Thread CPU milliseconds `f` takes (printed with `--nocapture`; never asserted).
fn cpu_ms<T>(name: &str, bytes: usize, f: impl FnOnce() -> T) -> T {
    let start = bloomwire_testkit::thread_cpu_nanos();
    let out = f();
    let ms = (bloomwire_testkit::thread_cpu_nanos() - start) as f64 / 1e6;
    println!("{name}: {bytes}-byte frame decoded in {ms:.1} ms of CPU");
    out
}

/// The all-zero counting frame of one table value (t = 1) is exempt from the bound: it
/// decodes by filling m counters, one range-decoder step in all (before: 1.1 s for 2^28
/// counters, one step per counter).
#[test]
fn a_single_value_table_decodes_by_filling() {
    let m = 1u64 << 24;
    let params = Params::standard(m, 1, HashFamily::default()).unwrap();
    let f = bloomwire::CountingBloomFilter::new(params, 8).unwrap();
    let bytes = Encoder::new()
        .encode_with(&f, bloomwire::CounterCoding::Known)
        .unwrap()
        .to_bytes();
    assert!(bytes.len() < 40, "{} bytes", bytes.len());
    let back = cpu_ms("known counters, t = 1, m = 2^24", bytes.len(), || {
        decode::<Decoded<bloomwire::CountingBloomFilter>>(&bytes, &Limits::default()).unwrap()
    });
    assert_eq!(back.filter, f);
}

/// The costliest legal frames of at most 1 KiB the encoder writes for each coding: sparse
/// filters at the edge of the work bound, about `2^12 * (L + 64)` symbols. Each decodes (the
/// decoder's steps are at most that many symbols); `--nocapture` prints their CPU time.
#[test]
fn the_densest_legal_frames_of_a_kibibyte_decode() {
    let m = 4_000_000u64;
    let spread = |ones: u64, i: u64| i * (m / ones);
    for coding in [
        BitCoding::Adaptive,
        BitCoding::KnownP,
        BitCoding::KnownPSymbols,
        BitCoding::KnownPInterleaved,
    ] {
        let params = Params::standard(m, 1, HashFamily::default()).unwrap();
        let mut ones = 300;
        let bytes = loop {
            let mut bits = bloomwire::BitArray::new(m);
            (0..ones).for_each(|i| bits.set(spread(ones, i) + (bloomwire_testkit::mix64(i) % 97)));
            let f = BloomFilter::from_parts(params.clone(), bits, ones).unwrap();
            let fr = Encoder::new().encode_with(&f, coding).unwrap();
            if fr.coding() == Coding::from(coding) {
                break fr.to_bytes();
            }
            ones += 20;
        };
        assert!(bytes.len() <= 1024, "{coding}: {} bytes", bytes.len());
        cpu_ms(&format!("{coding}, m = {m}"), bytes.len(), || {
            decode::<Message>(&bytes, &Limits::default()).unwrap()
        });
    }
    for (coding, background) in [
        (bloomwire::CounterCoding::Known, 0u8),
        (bloomwire::CounterCoding::Known, 255),
        (bloomwire::CounterCoding::Adaptive, 0),
        (bloomwire::CounterCoding::Adaptive, 255),
    ] {
        // The counter codings' headers are longer (a table of up to 256 frequencies).
        let m = if background == 0 {
            3_600_000u64
        } else {
            2_900_000
        };
        let spread = |ones: u64, i: u64| i * (m / ones);
        let params = Params::standard(m, 1, HashFamily::default()).unwrap();
        let mut ones = 2;
        let bytes = loop {
            let mut counters = vec![background; m as usize];
            for i in 0..ones {
                counters[(spread(ones, i) + bloomwire_testkit::mix64(i) % 97) as usize] =
                    (1 + i % 254) as u8;
            }
            let f =
                bloomwire::CountingBloomFilter::from_counters(params.clone(), 8, counters, ones)
                    .unwrap();
            let fr = Encoder::new().encode_with(&f, coding).unwrap();
            if fr.coding() == Coding::from(coding) {
                break fr.to_bytes();
            }
            ones += 20;
        };
        assert!(bytes.len() <= 1024, "{coding}: {} bytes", bytes.len());
        let name = format!("{coding}, m = {m}, most counters {background}");
        cpu_ms(&name, bytes.len(), || {
            decode::<Decoded<bloomwire::CountingBloomFilter>>(&bytes, &Limits::default()).unwrap()
        });
    }
}

/// A chunked frame of the smallest chunks (2^6 bits) and m = 2^28 whose 4 MiB payload is
/// empty chunks (coding 3 codes 64 zero bits in no bytes): 2^22 chunks. Its decoder keeps
/// no record per chunk, so it stays within the documented bound, twice the packed filter
/// plus the payload and 128 KiB (before: 288 MiB of heap against 68 MiB).
#[test]
fn a_frame_of_many_tiny_chunks_stays_within_the_memory_bound() {
    let m = 1u64 << 28;
    // The header of `frame` with flags bit 0 and chunk shift 6, then 2^22 zero lengths.
    let mut bytes = MAGIC.to_vec();
    let coding = Coding::KnownPSymbols.id();
    bytes.extend_from_slice(&[
        bloomwire::format::VERSION,
        bloomwire::format::KIND_FULL,
        0,
        1,
        0,
        coding,
        1,
    ]);
    for v in [0, m, 1 << 16, 0, 0] {
        put_varint(&mut bytes, v); // seed, m, k, n, generation
    }
    bytes.extend_from_slice(&0x8000u16.to_le_bytes());
    bytes.push(6);
    put_varint(&mut bytes, 1 << 22);
    bytes.resize(bytes.len() + (1 << 22), 0);
    let crc = crc32c::crc32c(&bytes);
    bytes.extend_from_slice(&crc.to_le_bytes());
    let payload = 1usize << 22;
    assert!(
        bytes.len() > payload && bytes.len() < payload + 64,
        "{}",
        bytes.len()
    );
    let (result, peak, _) = peak_during(|| decode::<Message>(&bytes, &Limits::default()));
    let bound = 2 * (m / 8) as usize + payload + (1 << 17);
    println!("2^22 chunks of 2^6 bits: peak heap {peak} bytes, bound {bound}");
    assert!(peak <= bound, "peak {peak} bytes, bound {bound}");
    match result.unwrap() {
        Message::Full(d) => assert_eq!(d.filter.bits().count_ones(), 0),
        _ => panic!("a full frame"),
    }
}

/// A delta costs a receiver no memory before its checks (generation, shape, base digest:
/// spec 5.2), and a positional delta none beyond its chunk table's marks when it applies:
/// its positions are flipped as they are decoded. (A receiver used to reserve 8 bytes per
/// one bit the payload claimed before any check: 512 MiB for an 8.4 MB frame at m = 2^26.)
#[test]
fn a_delta_costs_a_receiver_no_memory_before_its_checks() {
    use bloomwire::{BitArray, Receiver};
    let m = 1u64 << 26;
    let params = Params::standard(m, 1, HashFamily::default()).unwrap();
    let base = BloomFilter::new(params.clone());
    // One bit in 16 changes: 4.2 million positions, which as a list would be 33 MB, twice
    // the documented bound (2 * m / 8 = 16 MiB) before the frame is checked at all.
    let mut s = 0x1234_5678u64;
    let words: Vec<u64> = (0..m / 64)
        .map(|_| {
            let mut w = 0u64;
            for b in 0..64 {
                s = bloomwire::filter::hashing::fmix64(s.wrapping_add(0x9E37_79B9_7F4A_7C15));
                w |= u64::from(s.is_multiple_of(16)) << b;
            }
            w
        })
        .collect();
    let next = BloomFilter::from_parts(params.clone(), BitArray::from_words(words, m).unwrap(), 1)
        .unwrap();
    let wire = Encoder::new()
        .coding(BitCoding::Positional)
        .encode_delta(&base, 1, &next, 2)
        .unwrap()
        .to_bytes();
    let ones = next.bits().count_ones();
    assert!(ones * 8 > 2 * (m / 8), "{ones} positions");
    // Nothing held: a gap, found in the header.
    let mut empty: Receiver = Receiver::new(Limits::default());
    let (got, peak, _) = peak_during(|| empty.receive(&wire));
    assert!(matches!(got, Err(Error::GenerationGap { .. })), "{got:?}");
    assert!(peak <= SMALL, "{peak} bytes for a delta to nothing");
    // Another filter held as the base generation: a base mismatch, found in the header.
    let mut other: Receiver = Receiver::new(Limits::default());
    let mut held = base.clone();
    held.insert(b"not the sender's");
    other
        .apply(Message::Full(
            decode(
                &Encoder::new()
                    .encode_generation(&held, 1)
                    .unwrap()
                    .to_bytes(),
                &Limits::default(),
            )
            .unwrap(),
        ))
        .unwrap();
    let (got, peak, _) = peak_during(|| other.receive(&wire));
    assert!(matches!(got, Err(Error::BaseMismatch { .. })), "{got:?}");
    assert!(peak <= SMALL, "{peak} bytes for a delta to another base");
    // The base held: applied in place, the positions never held as a list.
    let mut receiver = common::holding(&base, 1);
    let (got, peak, _) = peak_during(|| receiver.receive(&wire));
    assert_eq!(got.unwrap().generation(), 2);
    assert_eq!(receiver.filter(), Some(&next));
    println!(
        "applying {} bytes of delta, {ones} positions: peak {peak} bytes",
        wire.len()
    );
    assert!(
        peak <= 64 * SMALL,
        "{peak} bytes to apply a positional delta in place"
    );
}

/// A receiver that raised its limits past the machine's memory gets an error, never an
/// abort: the decoded filter is reserved fallibly (`Error::AllocationFailed`). The frames
/// are a few dozen bytes claiming m = 2^47 (16 TiB of bits, 128 TiB of counters).
#[test]
fn a_filter_larger_than_the_machine_is_an_error_not_an_abort() {
    let huge = 1u64 << 47;
    let unlimited = Limits::unlimited();
    let empty_positional = frame(Coding::Positional, huge, 1 << 16, 1, &[0]);
    for limits in [unlimited, Limits::new().max_m(huge)] {
        let got = decode::<Message>(&empty_positional, &limits);
        assert!(
            matches!(got, Err(Error::AllocationFailed { .. })),
            "{got:?}"
        );
    }
    // The same frame through a view and a receiver.
    let view = bloomwire::FrameView::parse(&empty_positional, &unlimited).unwrap();
    assert!(matches!(view.decode(), Err(Error::AllocationFailed { .. })));
    let mut receiver: bloomwire::Receiver = bloomwire::Receiver::new(unlimited);
    let got = receiver.receive(&empty_positional);
    assert!(
        matches!(got, Err(Error::AllocationFailed { .. })),
        "{got:?}"
    );
    // Counters: a table of one value (they decode by filling), 2^47 counters of 8 bits.
    let counters = counting_frame(Coding::KnownCounters, huge, 8, Some(&[1 << 16]), 0, &[]);
    let got = decode::<Message>(&counters, &unlimited);
    assert!(
        matches!(got, Err(Error::AllocationFailed { .. })),
        "{got:?}"
    );
    // And a filter built that large.
    let params = Params::standard(huge, 3, HashFamily::default()).unwrap();
    assert!(matches!(
        BloomFilter::try_new(params.clone()),
        Err(Error::AllocationFailed { .. })
    ));
    assert!(matches!(
        bloomwire::CountingBloomFilter::new(params, 4),
        Err(Error::AllocationFailed { .. })
    ));
}

/// A counting frame costs a default receiver no more memory than a Bloom frame: the decoded
/// filter's bytes are bounded (`Limits::filter_bytes`, 32 MiB by default: 2^28 bits, or 2^25
/// counters of a byte each), before anything is allocated. (A 33-byte coding-4 frame whose
/// table has one value, exempt from the work bound, made a default receiver allocate
/// 512 MiB for 2^28 counters and spend 0.7 s filling them.)
#[test]
fn a_counting_frame_costs_no_more_than_a_bloom_frame() {
    let m = 1u64 << 28;
    let bytes = counting_frame(Coding::KnownCounters, m, 8, Some(&[1 << 16]), 0, &[]);
    assert!(bytes.len() <= 40, "{} bytes", bytes.len());
    let (result, peak, _) = peak_during(|| decode::<Message>(&bytes, &Limits::default()));
    assert!(
        matches!(
            result,
            Err(Error::LimitExceeded { field: "filter bytes", value, limit, .. })
                if value == m && limit == 1 << 25
        ),
        "{result:?}"
    );
    assert!(peak <= SMALL, "{peak} bytes");
    // The same m of bits is a Bloom filter of 32 MiB: within the default limits.
    let bloom = frame(Coding::Positional, m, 1 << 16, 1, &[0]);
    let decoded: Decoded = decode(&bloom, &Limits::default()).unwrap();
    assert_eq!(decoded.filter.m(), m);
    // 2^25 counters are: the largest counting filter a default receiver decodes.
    let largest = counting_frame(Coding::KnownCounters, 1 << 25, 8, Some(&[1 << 16]), 0, &[]);
    assert!(decode::<Message>(&largest, &Limits::default()).is_ok());
}
