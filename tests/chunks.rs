//! Coding 6 and chunked payloads across modules: sizes against the entropy bound, chunked
//! frames decoded whole, in parallel and by bit range, and the chunking overhead.
//!
//! The heaviest check, a filter of 10^9 bits, is ignored by default:
//! `cargo test --release --all-features --test chunks -- --ignored`.

use bloomwire::filter::hashing::fmix64;
use bloomwire::format::{chunk_count, CHUNK_FROM_BITS};
use bloomwire::theory::entropy;
use bloomwire::{
    BitArray, BitCoding, BloomFilter, Chunking, Coding, Decoded, Encoder, FrameView, HashFamily,
    Limits, Params,
};
use quickcheck::{quickcheck, TestResult};

/// `m` bits, each one with probability `ones_per_1024 / 1024`, from a fixed seed.
fn random_bits(m: u64, ones_per_1024: u64, seed: u64) -> BitArray {
    let mut b = BitArray::new(m);
    for i in 0..m {
        if fmix64(seed ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15)) % 1024 < ones_per_1024 {
            b.set(i);
        }
    }
    b
}

/// About 1/8 of the bits one (p0 = 0.875), a word at a time: fast for large m.
fn sparse_words(m: u64, seed: u64) -> BitArray {
    let mut words: Vec<u64> = (0..m.div_ceil(64))
        .map(|i| {
            let r = |j: u64| fmix64(seed ^ (3 * i + j).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            r(0) & r(1) & r(2)
        })
        .collect();
    if !m.is_multiple_of(64) {
        *words.last_mut().unwrap() &= (1 << (m % 64)) - 1;
    }
    BitArray::from_words(words, m).unwrap()
}

fn filter_with(bits: BitArray) -> BloomFilter {
    let params = Params::standard(bits.len(), 2, HashFamily::default()).unwrap();
    BloomFilter::from_parts(params, bits, 0).unwrap()
}

fn limits() -> Limits {
    Limits::unlimited()
}

#[test]
fn interleaved_is_within_0_05_percent_of_the_bound() {
    // m = 8 000 000 at p0 = 0.5, 0.9 and 0.99: the payload against m H(p_hat) / 8.
    for (ones, seed) in [(512, 1), (102, 2), (10, 3)] {
        let f = filter_with(random_bits(8_000_000, ones, seed));
        let frame = Encoder::new()
            .encode_with(&f, BitCoding::KnownPInterleaved)
            .unwrap();
        let bound = 8e6 * entropy(f.fraction_of_zeros()) / 8.0;
        let over = frame.header().payload_len as f64 / bound - 1.0;
        assert!(over < 0.0005, "p1 = {ones}/1024: {:.4}% over", over * 100.0);
        assert!(over > -0.0005, "below the entropy bound: {over}");
        let back = bloomwire::decode::<Decoded>(&frame.to_bytes(), &limits()).unwrap();
        assert_eq!(back.filter.bits(), f.bits());
    }
}

#[test]
fn default_encoder_prefers_interleaved_for_large_frames_only() {
    // Coding 11 decodes faster than coding 6 and its states cost 59 bits: it comes first
    // where it is within the margin (here).
    let large = filter_with(random_bits(1_000_000, 102, 4));
    assert_eq!(
        Encoder::new().encode(&large).unwrap().coding(),
        Coding::Escape
    );

    let small = filter_with(random_bits(10_000, 102, 5));
    assert_ne!(
        Encoder::new().encode(&small).unwrap().coding(),
        Coding::KnownPInterleaved
    );
}

#[test]
fn a_budget_the_smallest_coding_fits_is_met() {
    let f = filter_with(random_bits(1_000_000, 102, 4));
    let preferred = Encoder::new().encode(&f).unwrap();
    assert_eq!(preferred.coding(), Coding::Escape);
    let smallest = [BitCoding::KnownPSymbols, BitCoding::KnownP]
        .map(|c| Encoder::new().encode_with(&f, c).unwrap().encoded_len())
        .into_iter()
        .min()
        .unwrap();
    assert!(smallest < preferred.encoded_len());
    let within = Encoder::new().budget(smallest).encode(&f).unwrap();
    assert_eq!(within.encoded_len(), smallest);
}

#[test]
fn chunking_costs_under_0_05_percent() {
    // The smallest filter the encoder chunks by default, against the same coding unchunked.
    let m = CHUNK_FROM_BITS;
    let f = filter_with(sparse_words(m, 6));
    let chunked = Encoder::new().threads(2).encode(&f).unwrap();
    let whole = Encoder::new()
        .chunking(Chunking::Never)
        .encode_with(&f, BitCoding::KnownPInterleaved)
        .unwrap();
    let shift = chunked.header().chunk_shift.expect("chunked by default");
    assert!(chunk_count(m, shift) >= 8, "enough chunks for 8 cores");
    let over = chunked.encoded_len() as f64 / whole.encoded_len() as f64 - 1.0;
    assert!(over < 0.0005, "chunking costs {:.4}%", over * 100.0);
    let wire = chunked.to_bytes();
    let view = FrameView::parse(&wire, &limits()).unwrap();
    let mut bits = BitArray::new(3);
    view.decode_into_threads(&mut bits, 2).unwrap();
    assert_eq!(&bits, f.bits());
}

#[test]
fn many_small_chunks_share_their_models() {
    // An empty filter in 64-bit chunks: coding 3 codes each chunk in zero bytes, so the
    // frame is mostly its table of 16 384 one-byte lengths. Each chunk is cheap to decode
    // because the symbol tables are built once per frame, not per chunk.
    let f = filter_with(BitArray::new(1 << 20));
    let frame = Encoder::new()
        .chunking(Chunking::Shift(6))
        .encode_with(&f, BitCoding::KnownPSymbols)
        .unwrap();
    assert_eq!(frame.header().payload_len, 1 << 14);
    let wire = frame.to_bytes();
    let view = FrameView::parse(&wire, &Limits::default()).unwrap();
    assert_eq!(view.chunk_count(), 1 << 14);
    assert_eq!(view.decode().unwrap(), *f.bits());
    assert_eq!(view.decode_bits(1000..300_000).unwrap().count_ones(), 0);
}

#[test]
fn parallel_and_sequential_coding_agree() {
    let f = filter_with(random_bits(300_000, 200, 7));
    for coding in [BitCoding::KnownPInterleaved, BitCoding::Adaptive] {
        let enc = Encoder::new().chunking(Chunking::Shift(14));
        let one = enc
            .clone()
            .threads(1)
            .encode_with(&f, coding)
            .unwrap()
            .to_bytes();
        let four = enc.threads(4).encode_with(&f, coding).unwrap().to_bytes();
        assert_eq!(one, four);
        let view = FrameView::parse(&one, &limits()).unwrap();
        assert_eq!(view.chunk_count(), 19);
        let (mut a, mut b) = (BitArray::new(0), BitArray::new(0));
        view.decode_into_threads(&mut a, 1).unwrap();
        view.decode_into_threads(&mut b, 3).unwrap();
        assert_eq!((&a, &b), (f.bits(), f.bits()));
    }
}

#[test]
fn a_corrupt_chunk_fails_the_whole_decode_and_only_its_own_range() {
    let f = filter_with(random_bits(100_000, 100, 8));
    let frame = Encoder::new()
        .chunking(Chunking::Shift(14))
        .encode_with(&f, BitCoding::KnownPInterleaved)
        .unwrap();
    let mut wire = frame.to_bytes().to_vec();
    let view = FrameView::parse(&wire, &limits()).unwrap();
    // A byte inside chunk 3's states; fix the checksum so the payload is what fails.
    let start = view.header().header_len + chunk_start(&view, 3);
    drop(view);
    wire[start + 2] ^= 0x10;
    let n = wire.len();
    let crc = crc32c_of(&wire[..n - 4]);
    wire[n - 4..].copy_from_slice(&crc.to_le_bytes());
    let view = FrameView::parse(&wire, &limits()).unwrap();
    let mut out = BitArray::new(0);
    assert!(matches!(
        view.decode_into(&mut out),
        Err(bloomwire::Error::CorruptPayload { .. })
    ));
    assert_eq!(out.count_ones(), 0, "a failed decode leaves zeros");
    assert!(view.decode_bits(3 << 14..(3 << 14) + 10).is_err());
    assert_eq!(
        view.decode_bits(0..3 << 14).unwrap(),
        f.bits().slice(0, 3 << 14)
    );
}

/// Offset in the payload of chunk `i`'s bytes (after the table of lengths).
fn chunk_start(view: &FrameView<'_>, i: usize) -> usize {
    let p = view.payload();
    let mut pos = 0;
    let mut lengths = Vec::new();
    for _ in 0..view.chunk_count() {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let b = p[pos];
            pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        lengths.push(v as usize);
    }
    pos + lengths[..i].iter().sum::<usize>()
}

/// CRC-32C, bit by bit (spec section 2.4).
fn crc32c_of(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

quickcheck! {
    fn chunked_frames_decode_whole_and_by_range(
        m: u32, shift: u8, ones: u16, coding: u8, a: u32, b: u32
    ) -> TestResult {
        let m = u64::from(m % 20_000) + 65;
        let shift = 6 + shift % 8;
        if 1u64 << shift >= m {
            return TestResult::discard();
        }
        let codings = [
            BitCoding::Adaptive,
            BitCoding::KnownP,
            BitCoding::KnownPSymbols,
            BitCoding::KnownPInterleaved,
        ];
        let coding = codings[usize::from(coding) % 4];
        let f = filter_with(random_bits(m, u64::from(ones % 1025), u64::from(a)));
        let frame = Encoder::new()
            .chunking(Chunking::Shift(shift))
            .encode_with(&f, coding).unwrap();
        let wire = frame.to_bytes();
        let back = bloomwire::decode::<Decoded>(&wire, &Limits::default()).unwrap();
        let view = FrameView::parse(&wire, &Limits::default()).unwrap();
        let (lo, hi) = {
            let (x, y) = (u64::from(a) % (m + 1), u64::from(b) % (m + 1));
            (x.min(y), x.max(y))
        };
        let part = view.decode_bits(lo..hi).unwrap();
        TestResult::from_bool(
            back.filter == f
                && view.chunk_count() as u64 == chunk_count(m, shift)
                && part == f.bits().slice(lo, hi - lo),
        )
    }
}

#[test]
#[ignore = "a 10^9-bit filter: run with --release --ignored"]
fn a_billion_bits_in_chunks() {
    let m = 1_000_000_000;
    let f = filter_with(sparse_words(m, 9));
    let frame = Encoder::new().encode(&f).unwrap();
    let h = frame.header();
    assert_eq!(h.coding, Coding::KnownPInterleaved);
    let bound = m as f64 * entropy(f.fraction_of_zeros()) / 8.0;
    let over = h.payload_len as f64 / bound - 1.0;
    assert!(over < 0.0005, "{:.4}% over the bound", over * 100.0);
    let wire = frame.to_bytes();
    let back = bloomwire::decode::<Decoded>(&wire, &limits()).unwrap();
    assert_eq!(back.filter.bits(), f.bits());
}

/// A chunked frame built a chunk at a time (each chunk built from the positions of its
/// keys' bits, as a cluster's workers build it, its ones counted, then coded with the
/// frame-wide q0) and assembled without decoding is byte for byte the frame one process
/// writes for the same keys, chunk shift and coding: for every chunked coding, with
/// metadata, a key and a generation, and for every p source.
#[test]
fn a_frame_assembled_from_chunks_is_the_frame_one_process_writes() {
    use bloomwire::filter::Indexer;
    use bloomwire::{FrameKey, PSource};
    let params = Params::standard(300_007, 2, HashFamily::default()).unwrap();
    let keys: Vec<Vec<u8>> = (0..9_000u32)
        .map(|i| format!("key-{i}").into_bytes())
        .collect();
    let mut whole = BloomFilter::new(params.clone());
    keys.iter().for_each(|k| whole.insert(k));
    let shift = 14;
    // The keys' positions, shuffled by chunk.
    let indexer = Indexer::new(&params);
    let chunks = params.m().div_ceil(1 << shift);
    let mut shares: Vec<Vec<u64>> = vec![Vec::new(); chunks as usize];
    for k in &keys {
        indexer.for_each(k, |p| shares[(p >> shift) as usize].push(p));
    }
    // Phase 1: each chunk's bits and ones, where the chunk lands.
    let built: Vec<BitArray> = shares
        .iter()
        .enumerate()
        .map(|(i, positions)| {
            let start = (i as u64) << shift;
            let len = (params.m() - start).min(1 << shift);
            BitArray::from_ones(len, positions.iter().map(|p| p - start)).unwrap()
        })
        .collect();
    let ones: u64 = built.iter().map(BitArray::count_ones).sum();
    assert_eq!(ones, whole.bits().count_ones());
    let codings = [
        BitCoding::Adaptive,
        BitCoding::KnownP,
        BitCoding::KnownPSymbols,
        BitCoding::KnownPInterleaved,
        BitCoding::Positional,
        BitCoding::Wide,
    ];
    let key = FrameKey::new([3; 32]);
    for coding in codings {
        for p_source in [PSource::Measured, PSource::Theory, PSource::Fixed(60_000)] {
            for keyed in [false, true] {
                let mut encoder = Encoder::new()
                    .coding(coding)
                    .p_source(p_source)
                    .metadata(b"chunks".to_vec());
                if keyed {
                    encoder = encoder.key(key.clone());
                }
                let one = encoder
                    .clone()
                    .chunking(Chunking::Shift(shift))
                    .encode_generation(&whole, 9)
                    .unwrap();
                assert_eq!(one.coding(), coding.into());
                // Phase 2: the frame-wide choices from the count, each chunk coded apart.
                let plan = encoder
                    .chunked_frame(params.clone(), whole.n(), ones, shift)
                    .unwrap()
                    .with_generation(9);
                let coded: Vec<Vec<u8>> = built
                    .iter()
                    .enumerate()
                    .map(|(i, bits)| plan.encode_chunk(i as u64, bits).unwrap())
                    .collect();
                let assembled = plan.assemble(&coded).unwrap();
                assert_eq!(
                    assembled.to_bytes(),
                    one.to_bytes(),
                    "{coding} {p_source:?} keyed {keyed}"
                );
            }
        }
    }
    // The calls that cannot make the frame one process makes are refused.
    let plan = Encoder::new()
        .coding(BitCoding::Positional)
        .chunked_frame(params.clone(), whole.n(), ones, shift)
        .unwrap();
    let m = params.m();
    assert_eq!(plan.chunk_of(0), Some(0));
    assert_eq!(plan.chunk_of(m - 1), Some(plan.chunk_count() - 1));
    assert_eq!(plan.chunk_of(m), None);
    assert!(plan.assemble(Vec::<Vec<u8>>::new()).is_err());
    assert!(plan.encode_chunk(0, &BitArray::new(5)).is_err());
    assert!(Encoder::new()
        .coding(BitCoding::Small)
        .chunked_frame(params.clone(), whole.n(), ones, shift)
        .is_err());
    assert!(Encoder::new()
        .coding(BitCoding::Wide)
        .chunked_frame(params, whole.n(), ones, 19)
        .is_err());
}

/// The frame of chunks coded apart, from `plan`, for the bits of `f`.
fn assembled(plan: &bloomwire::ChunkedFrame, f: &BloomFilter) -> Option<bytes::Bytes> {
    let coded: Vec<Vec<u8>> = (0..plan.chunk_count())
        .map(|i| {
            let bits = plan.chunk_bits(i);
            let chunk = f.bits().slice(bits.start, bits.end - bits.start);
            plan.encode_chunk(i, &chunk).unwrap()
        })
        .collect();
    plan.assemble(&coded).ok().map(|frame| frame.to_bytes())
}

#[test]
fn an_assembly_without_a_coding_chooses_as_one_process_does() {
    // From the summed counts alone, the coding the default encoder chooses for the whole
    // filter in the same chunks (spec 4.10), at every density it codes in chunks; the
    // profile and the metadata are the encoder's in both.
    for (m, ones_per_1024, shift) in [
        (3_000_000u64, 1, 18),
        (3_000_000, 10, 18),
        (3_000_000, 100, 20),
        (3_000_000, 300, 20),
        (8_000_000, 500, 21),
    ] {
        let f = filter_with(random_bits(m, ones_per_1024, 7));
        for encoder in [
            Encoder::new(),
            Encoder::new().profile(bloomwire::Profile::Core),
            Encoder::new().metadata(b"node-7".to_vec()),
        ] {
            let one = encoder
                .clone()
                .chunking(Chunking::Shift(shift))
                .encode(&f)
                .unwrap();
            let plan =
                encoder.chunked_frame(f.params().clone(), f.n(), f.bits().count_ones(), shift);
            // Where one process sends the raw array (nothing coded is smaller by the
            // margin), no assembly is its frame, and the plan is refused.
            if one.coding() == Coding::Raw {
                assert!(plan.is_err(), "m {m} ones {ones_per_1024}/1024");
                continue;
            }
            let plan = plan.unwrap();
            assert_eq!(
                plan.coding(),
                one.coding(),
                "m {m} ones {ones_per_1024}/1024"
            );
            assert!(
                assembled(&plan, &f) == Some(one.to_bytes()),
                "m {m} ones {ones_per_1024}/1024: the assembled frame differs"
            );
        }
    }
}
