//! Frames across modules: round trips for every coding, layout and size, sizes against the
//! entropy bound on the paper's case, the bytes API, and bad input.

use bloomwire::theory::entropy;
use bloomwire::{
    decode, decode_buf, decode_prefix, BaseHash, BitCoding, BloomFilter, Coding, Decoded, Encoder,
    Error, HashCount, HashFamily, IndexScheme, Layout, Limits, Params,
};
use bloomwire_testkit::SplitMix64;
use bytes::{Buf, Bytes};
use quickcheck::{quickcheck, TestResult};

fn filled(params: Params, n: u64, seed: u64) -> BloomFilter {
    let mut f = BloomFilter::new(params);
    let mut keys = SplitMix64(seed);
    for _ in 0..n {
        f.insert(keys.next_key());
    }
    f
}

fn round_trip(f: &BloomFilter, coding: BitCoding) -> usize {
    let frame = Encoder::new().encode_with(f, coding).unwrap();
    let bytes = frame.to_bytes();
    assert_eq!(bytes.len(), frame.encoded_len());
    let limits = Limits::unlimited();
    let d =
        decode::<Decoded>(&bytes, &limits).unwrap_or_else(|e| panic!("{coding} m={}: {e}", f.m()));
    assert_eq!(&d.filter, f, "{coding} m={}", f.m());
    assert_eq!(d.header.coding, Coding::from(coding));
    bytes.len()
}

#[test]
fn every_coding_round_trips_from_m_1_to_m_10_8() {
    let fam = HashFamily::default();
    for &m in &[
        1u64,
        2,
        7,
        8,
        9,
        63,
        64,
        65,
        1000,
        65_537,
        1_000_003,
        100_000_000,
    ] {
        let n = (m / 10).max(1);
        let f = filled(Params::standard(m, 3, fam).unwrap(), n, m);
        for coding in BitCoding::ALL {
            if m == 100_000_000 && coding == BitCoding::KnownP {
                continue; // same coder as adaptive, which covers this size
            }
            round_trip(&f, coding);
        }
    }
}

#[derive(Debug, Clone)]
struct Case {
    m: u64,
    k_raw: u32,
    layout: u8,
    siphash: bool,
    enhanced: bool,
    n: u16,
    seed: u64,
}

impl quickcheck::Arbitrary for Case {
    fn arbitrary(g: &mut quickcheck::Gen) -> Self {
        Case {
            m: 1 + u64::arbitrary(g) % 5000,
            k_raw: (1 << 16) + u32::arbitrary(g) % (8 << 16),
            layout: u8::arbitrary(g) % 3,
            siphash: bool::arbitrary(g),
            enhanced: bool::arbitrary(g),
            n: u16::arbitrary(g) % 2000,
            seed: u64::arbitrary(g),
        }
    }
}

impl Case {
    fn params(&self) -> Option<Params> {
        let k = HashCount::from_raw(self.k_raw).ok()?;
        let base = if self.siphash {
            BaseHash::siphash(self.seed.to_le_bytes().repeat(2).try_into().ok()?)
        } else {
            BaseHash::Xxh64 { seed: self.seed }
        };
        let scheme = if self.enhanced {
            IndexScheme::EnhancedDoubleHashing
        } else {
            IndexScheme::DoubleHashing
        };
        let layout = match self.layout {
            0 => Layout::Standard { k },
            1 => Layout::Partitioned { k },
            _ => Layout::blocks_proportional(self.m, k).ok()?,
        };
        Params::new(self.m, layout, HashFamily::new(base, scheme)).ok()
    }
}

quickcheck! {
    fn prop_frames_round_trip_for_every_layout_and_coding(case: Case) -> TestResult {
        let Some(params) = case.params() else { return TestResult::discard() };
        let f = filled(params, case.n.into(), case.seed);
        for coding in BitCoding::ALL {
            round_trip(&f, coding);
        }
        // The automatic choice is never larger than raw, and never larger than any coding.
        let auto = Encoder::new().encode(&f).unwrap().encoded_len();
        let raw = Encoder::new().encode_with(&f, BitCoding::Raw).unwrap().encoded_len();
        TestResult::from_bool(auto <= raw)
    }

    fn prop_decoded_filters_have_no_false_negatives(case: Case) -> TestResult {
        let Some(params) = case.params() else { return TestResult::discard() };
        let f = filled(params, case.n.into(), case.seed);
        let bytes = Encoder::new().encode(&f).unwrap().to_bytes();
        let d = decode::<Decoded>(&bytes, &Limits::unlimited()).unwrap();
        let mut keys = SplitMix64(case.seed);
        TestResult::from_bool((0..case.n).all(|_| d.filter.contains(keys.next_key())))
    }
}

fn mean_sd_max(xs: &[f64]) -> (f64, f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (
        mean,
        var.sqrt(),
        xs.iter().cloned().fold(f64::MIN, f64::max),
    )
}

/// The paper's case: n = 10 000, m = 140 000, k = 2, 1000 trials with random keys.
/// Run with `--nocapture` to see the distribution.
#[test]
fn paper_case_sizes_match_the_entropy_bound() {
    let params = Params::standard(140_000, 2, HashFamily::default()).unwrap();
    let (mut adaptive, mut known) = (Vec::new(), Vec::new());
    for trial in 0..1000 {
        let f = filled(params.clone(), 10_000, 0xC0FFEE + trial);
        let a = Encoder::new().encode_with(&f, BitCoding::Adaptive).unwrap();
        let k = Encoder::new().encode_with(&f, BitCoding::KnownP).unwrap();
        let s = Encoder::new()
            .encode_with(&f, BitCoding::KnownPSymbols)
            .unwrap();
        let p_hat = f.fraction_of_zeros();
        let bound = 140_000.0 * entropy(p_hat) / 8.0;
        // Known p: within 8 bytes of m H(p_hat) / 8 plus the header and checksum, every trial.
        for frame in [&k, &s] {
            let overhead = (frame.header().header_len + bloomwire::format::CHECKSUM_LEN) as f64;
            let excess = frame.encoded_len() as f64 - overhead - bound;
            assert!(
                excess <= 8.0,
                "trial {trial}: {} bytes over m H(p)/8",
                excess
            );
        }
        adaptive.push(a.encoded_len() as f64);
        known.push(k.encoded_len() as f64);
    }
    let (mean, sd, max) = mean_sd_max(&adaptive);
    let theory = 140_000.0 * entropy((-2.0f64 * 10_000.0 / 140_000.0).exp()) / 8.0;
    eprintln!(
        "adaptive frame bytes: mean {mean:.1}, sd {sd:.2}, max {max}; m H(p)/8 = {theory:.1}"
    );
    let (kmean, ksd, kmax) = mean_sd_max(&known);
    eprintln!("known-p frame bytes:  mean {kmean:.1}, sd {ksd:.2}, max {kmax}");
    assert!(mean <= theory * 1.003, "mean {mean} vs {theory}");
    assert!(max < 10_000.0, "max {max}");
}

#[test]
fn encoder_falls_back_to_raw_and_respects_budgets() {
    // A half-full filter does not compress: the encoder sends it raw.
    let f = filled(
        Params::standard(10_000, 1, HashFamily::default()).unwrap(),
        6931,
        1,
    );
    let frame = Encoder::new().encode(&f).unwrap();
    assert_eq!(frame.coding(), Coding::Raw);
    let forced = Encoder::new()
        .coding(BitCoding::Adaptive)
        .encode(&f)
        .unwrap();
    assert_eq!(forced.coding(), Coding::Raw);

    let sparse = filled(
        Params::standard(140_000, 2, HashFamily::default()).unwrap(),
        10_000,
        2,
    );
    let frame = Encoder::new().budget(10_000).encode(&sparse).unwrap();
    assert!(frame.encoded_len() <= 10_000 && frame.coding() != Coding::Raw);
    match Encoder::new().budget(9_000).encode(&sparse) {
        Err(Error::OverBudget {
            budget,
            compressed,
            raw,
        }) => {
            assert_eq!(budget, 9_000);
            assert!(compressed > 9_000 && compressed < 10_000);
            assert!(raw > 17_500);
        }
        other => panic!("expected OverBudget, got {other:?}"),
    }
}

#[test]
fn theory_p_codes_close_to_measured_p() {
    let f = filled(
        Params::standard(140_000, 2, HashFamily::default()).unwrap(),
        10_000,
        3,
    );
    let measured = Encoder::new()
        .encode_with(&f, BitCoding::KnownP)
        .unwrap()
        .encoded_len();
    let theory = Encoder::new()
        .p_source(bloomwire::PSource::Theory)
        .encode_with(&f, BitCoding::KnownP)
        .unwrap()
        .encoded_len();
    assert!(
        measured <= theory + 4 && theory <= measured + 40,
        "{measured} vs {theory}"
    );
}

#[test]
fn streams_report_how_much_more_they_need() {
    let f = filled(
        Params::standard(5000, 3, HashFamily::default()).unwrap(),
        400,
        4,
    );
    let a = Encoder::new().encode(&f).unwrap().to_bytes();
    let b = Encoder::new()
        .coding(BitCoding::Raw)
        .encode(&f)
        .unwrap()
        .to_bytes();
    let stream: Vec<u8> = [&a[..], &b[..]].concat();
    let limits = Limits::default();
    for cut in 0..a.len() {
        match decode_prefix::<Decoded>(&stream[..cut], &limits) {
            Err(Error::Incomplete { needed }) => {
                assert!(
                    needed >= 1 && cut + needed <= a.len(),
                    "cut {cut}: {needed}"
                )
            }
            other => panic!("cut {cut}: {other:?}"),
        }
    }
    let (first, used) = decode_prefix::<Decoded>(&stream, &limits).unwrap();
    assert_eq!(used, a.len());
    let (second, _) = decode_prefix::<Decoded>(&stream[used..], &limits).unwrap();
    assert_eq!(first.filter, second.filter);
    assert!(matches!(
        decode::<Decoded>(&stream, &limits),
        Err(Error::TrailingBytes { count, .. }) if count == b.len()
    ));

    // A Buf made of two chunks, split at every byte: nothing consumed until a frame is whole.
    for split in 0..stream.len() {
        let mut buf = Bytes::copy_from_slice(&stream[..split])
            .chain(Bytes::copy_from_slice(&stream[split..]));
        let d1 = decode_buf::<Decoded, _>(&mut buf, &limits).unwrap();
        let d2 = decode_buf::<Decoded, _>(&mut buf, &limits).unwrap();
        assert_eq!(d1.filter, f);
        assert_eq!(d2.filter, f);
        assert!(!buf.has_remaining());
        let mut short = Bytes::copy_from_slice(&stream[..split.min(a.len() - 1)]);
        let before = short.remaining();
        assert!(matches!(
            decode_buf::<Decoded, _>(&mut short, &limits),
            Err(Error::Incomplete { .. })
        ));
        assert_eq!(short.remaining(), before);
    }
    assert_eq!(bloomwire::decode::<Decoded>(&a, &limits).unwrap().filter, f);
}

#[test]
fn tiny_frames_claiming_huge_sizes_are_rejected_before_allocation() {
    let f = filled(
        Params::standard(64, 2, HashFamily::default()).unwrap(),
        5,
        5,
    );
    let frame = Encoder::new()
        .coding(BitCoding::Raw)
        .encode(&f)
        .unwrap()
        .to_bytes();
    // m = 2^40 in a frame of a few dozen bytes: rejected by the default limits.
    let mut big = frame.to_vec();
    big.splice(12..13, [0x80, 0x80, 0x80, 0x80, 0x80, 0x20]);
    assert!(big.len() < 64);
    assert!(matches!(
        decode::<Decoded>(&big, &Limits::default()),
        Err(Error::LimitExceeded { field: "m", .. })
    ));
    // k = 2^20 is beyond the format itself.
    let mut k = frame.to_vec();
    k.splice(13..16, [0x80, 0x80, 0x80, 0x80, 0x01]);
    assert!(matches!(
        decode::<Decoded>(&k, &Limits::default()),
        Err(Error::InvalidField { field: "k", .. })
    ));
}

#[test]
fn every_truncation_and_bit_flip_of_a_frame_is_rejected() {
    let f = filled(
        Params::standard(2000, 3, HashFamily::default()).unwrap(),
        150,
        6,
    );
    for coding in BitCoding::ALL {
        let bytes = Encoder::new().encode_with(&f, coding).unwrap().to_bytes();
        let limits = Limits::default();
        for cut in 0..bytes.len() {
            assert!(decode::<Decoded>(&bytes[..cut], &limits).is_err());
        }
        for bit in 0..bytes.len() * 8 {
            let mut b = bytes.to_vec();
            b[bit / 8] ^= 1 << (bit % 8);
            if let Ok(d) = decode::<Decoded>(&b, &limits) {
                panic!(
                    "{coding}: flip of bit {bit} accepted (m = {})",
                    d.filter.m()
                );
            }
        }
    }
}

/// A `Buf` of many pieces that exposes all of them through `chunks_vectored`, like a chain
/// of `Bytes` or a queue of received segments.
struct Pieces(std::collections::VecDeque<Bytes>);

impl Buf for Pieces {
    fn remaining(&self) -> usize {
        self.0.iter().map(Bytes::len).sum()
    }

    fn chunk(&self) -> &[u8] {
        self.0.front().map_or(&[], |b| &b[..])
    }

    fn advance(&mut self, mut cnt: usize) {
        while cnt > 0 {
            let front = self.0.front_mut().expect("advance within remaining");
            let take = cnt.min(front.len());
            front.advance(take);
            cnt -= take;
            if front.is_empty() {
                self.0.pop_front();
            }
        }
    }

    fn chunks_vectored<'a>(&'a self, dst: &mut [std::io::IoSlice<'a>]) -> usize {
        let mut n = 0;
        for (slot, piece) in dst.iter_mut().zip(&self.0) {
            *slot = std::io::IoSlice::new(piece);
            n += 1;
        }
        n
    }
}

/// `decode_buf` over a frame cut into 1 to 1 000 pieces gives what `decode` gives (a fixed
/// array of 64 slices once reported 65 pieces as incomplete), and a frame missing its last
/// byte is `Incomplete` with nothing consumed, however many pieces it comes in.
#[test]
fn decode_buf_takes_a_frame_in_any_number_of_pieces() {
    let f = filled(
        Params::standard(20_000, 2, HashFamily::default()).unwrap(),
        1_000,
        11,
    );
    let wire = Encoder::new().encode(&f).unwrap().to_bytes();
    let limits = Limits::default();
    let whole = decode::<Decoded>(&wire, &limits).unwrap();
    for pieces in (1..=1_000).filter(|p| *p <= 70 || p % 37 == 0 || *p == 1_000) {
        let cut = |bytes: &[u8]| {
            let size = bytes.len().div_ceil(pieces).max(1);
            Pieces(bytes.chunks(size).map(Bytes::copy_from_slice).collect())
        };
        let mut buf = cut(&wire);
        let got = decode_buf::<Decoded, _>(&mut buf, &limits).unwrap();
        assert_eq!(got.filter, whole.filter, "{pieces} pieces");
        assert!(!buf.has_remaining());
        let mut short = cut(&wire[..wire.len() - 1]);
        assert!(matches!(
            decode_buf::<Decoded, _>(&mut short, &limits),
            Err(Error::Incomplete { needed: 1 })
        ));
        assert_eq!(short.remaining(), wire.len() - 1);
    }
}

/// A raw frame is decoded in one pass over its payload, checksum and copy together: the
/// same filter, and on a flipped bit the same error, as the checked view decodes, at lengths
/// around the kernel's blocks of 6 144 bytes (three stripes of 2 048).
#[test]
fn raw_frames_decode_in_one_pass_as_the_view_does() {
    let block_bits = 8 * 6144;
    let mut rng = SplitMix64(41);
    for m in [
        1,
        63,
        64,
        65,
        block_bits - 3,
        block_bits,
        3 * block_bits + 77,
        1_000_003,
    ] {
        let f = filled(
            Params::standard(m, 1, HashFamily::default()).unwrap(),
            m / 3,
            m,
        );
        let bytes = Encoder::new()
            .encode_with(&f, BitCoding::Raw)
            .unwrap()
            .to_bytes();
        let limits = Limits::default();
        let one_pass = decode::<Decoded>(&bytes, &limits).unwrap();
        assert_eq!(one_pass.filter, f, "m = {m}");
        let view = bloomwire::FrameView::parse(&bytes, &limits).unwrap();
        assert_eq!(view.decode().unwrap(), *f.bits(), "m = {m}");
        // A flip anywhere in the payload: the checksum's error, the same one.
        let header_len = one_pass.header.header_len;
        let payload_bits = 8 * (bytes.len() - header_len - 4) as u64;
        let mut bad = bytes.to_vec();
        let bit = 8 * header_len as u64 + rng.next_u64() % payload_bits;
        bad[(bit / 8) as usize] ^= 1 << (bit % 8);
        let err = decode::<Decoded>(&bad, &limits).unwrap_err();
        assert!(
            matches!(err, Error::ChecksumMismatch { .. }),
            "m = {m}: {err}"
        );
        assert_eq!(
            err,
            bloomwire::FrameView::parse(&bad, &limits).unwrap_err(),
            "m = {m}"
        );
    }
}
