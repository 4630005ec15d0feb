//! Decompression bombs: frames of under 64 bytes that claim m = 2^40, k = 2^20 or a payload
//! of 2^40 bytes are rejected with a typed error before anything proportional to the claim
//! is allocated. A counting global allocator (per thread) measures the decoder's peak heap.
//!
//! Default limits (`Limits::default()`): m up to 2^28 bits, k up to 64, payloads up to
//! 2^26 bytes. A receiver that expects larger filters raises them, e.g.
//! `Limits { max_m: 1 << 33, ..Default::default() }`; the decoder then allocates up to
//! twice the packed size of the largest m it accepts.

use bloomwire::frame::{self, decode_buf, decode_message, Coding, Encoder, Limits, MAGIC};
use bloomwire::wire::put_varint;
use bloomwire::{BloomFilter, Error, HashFamily, Params};
use bloomwire_testkit::{peak_during, CountingAllocator};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Heap the decoder may use for a frame it rejects in its header.
const SMALL: usize = 1024;

/// A standard-layout frame with xxHash64 seed 0, the given coding and fields, a payload of
/// `payload_len` declared bytes of which `payload` are present, and a correct checksum when
/// the whole payload is present.
fn frame(coding: Coding, m: u64, k_raw: u64, payload_len: u64, payload: &[u8]) -> Vec<u8> {
    let mut b = MAGIC.to_vec();
    b.extend_from_slice(&[frame::VERSION, frame::KIND_FULL, 0, 1, 0, coding.id(), 0]);
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
    let (result, peak, _) = peak_during(|| decode_message(bytes, limits));
    (result.expect_err("a bomb must be rejected"), peak)
}

#[test]
fn m_of_2_to_the_40_is_refused_before_allocation() {
    for coding in Coding::ALL {
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
    for coding in Coding::ALL {
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
        let (result, peak, _) = peak_during(|| decode_buf(&mut buf, &Limits::unlimited()));
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
    // 2^20 zero bits in a few dozen bytes: legitimate, and the decoder's heap is bounded by
    // m, which the limits bound.
    let m = 1u64 << 20;
    let f = BloomFilter::new(Params::standard(m, 2, HashFamily::default()).unwrap());
    for coding in Coding::ALL.into_iter().filter(|&c| c != Coding::Raw) {
        let bytes = Encoder::new().encode_with(&f, coding).to_bytes();
        if matches!(coding, Coding::Adaptive | Coding::KnownP) {
            assert!(bytes.len() < 64, "{coding}: {} bytes", bytes.len());
        }
        let limits = Limits {
            max_m: m,
            ..Limits::default()
        };
        let (result, peak, _) = peak_during(|| decode_message(&bytes, &limits));
        result.unwrap();
        let packed = (m / 8) as usize;
        assert!(peak >= packed, "{coding}: {peak}");
        assert!(peak <= 2 * packed + (1 << 17), "{coding}: {peak} bytes");
        // One bit fewer in the limit and the same frame is refused up front.
        let tight = Limits {
            max_m: m - 1,
            ..limits
        };
        let (result, peak, _) = peak_during(|| decode_message(&bytes, &tight));
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
    use bloomwire::codec::FrameCodec;
    use tokio_util::codec::Decoder;
    // Within the default limits: 2^26 - 1 bytes of payload claimed, 3 sent.
    let bytes = frame(Coding::Adaptive, 1000, 1 << 16, (1 << 26) - 1, &[1, 2, 3]);
    let mut codec = FrameCodec::new(Limits::default());
    let mut buf = bytes::BytesMut::from(&bytes[..]);
    let (result, peak, _) = peak_during(|| codec.decode(&mut buf));
    assert!(matches!(result, Ok(None)));
    assert!(
        buf.capacity() <= bytes.len() + bloomwire::codec::RESERVE_STEP,
        "reserved {}",
        buf.capacity()
    );
    assert!(peak <= 1 << 17, "{peak}");
}
