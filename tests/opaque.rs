//! The opaque hash family (base hash 0) and application metadata (flags bit 3): another
//! library's bits carried as they are, full and delta, with queries refused; metadata bytes
//! carried, checked against the limit before anything is copied.

use bloomwire::format::FLAG_METADATA;
use bloomwire::{
    decode, BaseHash, BitArray, BitCoding, BloomFilter, CountingBloomFilter, Decoded, Encoder,
    Error, FrameView, HashFamily, IndexScheme, Layout, Limits, Message, Params, Receiver, Sender,
    Update,
};

/// An opaque filter of m bits with every `step`-th bit set from `from` on.
fn opaque(m: u64, from: u64, step: usize) -> BloomFilter {
    let mut bits = BitArray::new(m);
    (from..m).step_by(step).for_each(|i| bits.set(i));
    let params = Params::standard(m, 7, HashFamily::opaque()).unwrap();
    BloomFilter::from_parts(params, bits, 1234).unwrap()
}

#[test]
fn opaque_frames_round_trip_and_refuse_queries() {
    let f = opaque(100_000, 3, 7);
    for coding in BitCoding::ALL {
        let wire = Encoder::new().encode_with(&f, coding).unwrap().to_bytes();
        // Header bytes: base hash 0, index scheme 0, and no seed field after the flags.
        assert_eq!((wire[6], wire[7], wire[8]), (0, 0, 0), "{coding}");
        let back: Decoded = decode(&wire, &Limits::default()).unwrap();
        assert_eq!(back.filter, f, "{coding}");
        assert!(back.filter.is_opaque());
        assert_eq!(back.header.params.family().base, BaseHash::Opaque);
        assert_eq!(back.header.n, 1234);
        assert_eq!(back.filter.try_contains(b"x"), Err(Error::OpaqueHashFamily));
        // `contains` never panics and never gives a false negative: "maybe" for all.
        assert!(back.filter.contains(b"x"));
        assert!(back.filter.indexes(b"x").is_empty());
        let mut g = back.filter.clone();
        assert_eq!(g.try_insert(b"x"), Err(Error::OpaqueHashFamily));
        g.insert(b"x");
        assert_eq!(g, back.filter);
        // The frame is canonical: encoding the decoded message gives the same bytes.
        let message: Message = decode(&wire, &Limits::default()).unwrap();
        assert_eq!(message.to_frame().unwrap().to_bytes(), wire);
    }
}

#[test]
fn opaque_family_is_standard_layout_scheme_zero_only() {
    let k = bloomwire::HashCount::new(3).unwrap();
    assert!(Params::new(64, Layout::Partitioned { k }, HashFamily::opaque()).is_err());
    let enhanced = HashFamily::new(BaseHash::Opaque, IndexScheme::EnhancedDoubleHashing);
    assert!(Params::standard(64, 3, enhanced).is_err());
    assert_eq!(
        HashFamily::opaque().indexes(b"x", 3, 64),
        Err(Error::OpaqueHashFamily)
    );
    let params = Params::standard(64, 3, HashFamily::opaque()).unwrap();
    assert_eq!(
        CountingBloomFilter::new(params, 4).unwrap_err(),
        Error::OpaqueHashFamily
    );
}

#[test]
fn opaque_deltas_through_sender_and_receiver() {
    let mut sender: Sender = Sender::new(Encoder::new().metadata(b"fastbloom k=7".to_vec()), 100);
    let mut receiver: Receiver = Receiver::new(Limits::default());
    let mut bits = opaque(1 << 16, 0, 2).bits().clone();
    let params = Params::standard(1 << 16, 7, HashFamily::opaque()).unwrap();
    for round in 0..4u64 {
        for i in 0..50 {
            bits.set((round * 7919 + i * 131) % (1 << 16));
        }
        let f = BloomFilter::from_parts(params.clone(), bits.clone(), round).unwrap();
        let frame = sender.next_frame(&f).unwrap().to_bytes();
        let view = FrameView::parse(&frame, &Limits::default()).unwrap();
        assert_eq!(
            view.header().metadata.as_deref(),
            Some(&b"fastbloom k=7"[..])
        );
        let update = receiver.receive(&frame).unwrap();
        if round > 0 {
            assert!(matches!(update, Update::Delta { .. }), "{update:?}");
            // A delta of 50 changes is far below the half-full array's raw bytes.
            assert!(frame.len() < 300, "{}", frame.len());
        }
        assert_eq!(receiver.filter().unwrap().bits(), &bits);
        assert_eq!(
            receiver.filter().unwrap().try_contains(b"k"),
            Err(Error::OpaqueHashFamily)
        );
    }
    // A delta between an opaque filter and a bloomwire one of the same m is refused.
    let own = BloomFilter::new(Params::standard(1 << 16, 7, HashFamily::default()).unwrap());
    let f = BloomFilter::from_parts(params, bits, 0).unwrap();
    assert!(matches!(
        Encoder::new().encode_delta(&own, 1, &f, 2),
        Err(Error::Incompatible(_))
    ));
}

/// A frame with a byte changed at `at` and its checksum recomputed.
fn patched(wire: &[u8], f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut v = wire[..wire.len() - 4].to_vec();
    f(&mut v);
    let crc = crc32c(&v);
    v.extend_from_slice(&crc.to_le_bytes());
    v
}

fn crc32c(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[test]
fn opaque_header_rules() {
    let f = opaque(1000, 0, 5);
    let wire = Encoder::new()
        .encode_with(&f, BitCoding::Raw)
        .unwrap()
        .to_bytes();
    let limits = Limits::default();
    for (at, set, field, value, offset) in [
        // Index scheme 1 with base hash 0.
        (8, 1, "index scheme", 1, 8),
        // Base hash 0 with filter type 1 (partitioned).
        (6, 1, "base hash", 0, 7),
    ] {
        let bad = patched(&wire, |v| v[at] = set);
        assert_eq!(
            decode::<Message>(&bad, &limits).err(),
            Some(Error::InvalidField {
                field,
                value,
                offset
            })
        );
    }
    // A seed-sized byte inserted after the flags is read as m, and the frame no longer holds.
    let bad = patched(&wire, |v| v.insert(11, 0));
    assert!(decode::<Message>(&bad, &limits).is_err());
}

#[test]
fn metadata_round_trips_and_is_checked_against_the_limit() {
    let mut f = BloomFilter::new(Params::standard(10_000, 3, HashFamily::default()).unwrap());
    (0..300u32).for_each(|i| f.insert(i.to_le_bytes()));
    let meta = vec![0xA5u8; 4096];
    let wire = Encoder::new().metadata(meta.clone()).encode(&f).unwrap();
    let plain = Encoder::new().encode(&f).unwrap();
    assert_eq!(wire.encoded_len(), plain.encoded_len() + 2 + 4096);
    let wire = wire.to_bytes();
    let back: Decoded = decode(&wire, &Limits::default()).unwrap();
    assert_eq!(back.filter, f);
    assert_eq!(back.header.metadata.as_deref(), Some(&meta[..]));
    assert_eq!(back.header.frame_len(), wire.len());
    let message: Message = decode(&wire, &Limits::default()).unwrap();
    assert_eq!(message.to_frame().unwrap().to_bytes(), wire);
    // One byte over the limit: refused at the length field, before the bytes are read.
    let tight = Limits::new().max_metadata(4095);
    let offset = wire.len() - 4 - plain.payload().len();
    let err = decode::<Message>(&wire[..30], &tight).unwrap_err();
    assert!(
        matches!(
            err,
            Error::LimitExceeded {
                field: "metadata length",
                value: 4096,
                limit: 4095,
                ..
            }
        ),
        "{err:?} ({offset})"
    );
    // An empty field with the flag set is not canonical.
    let small = Encoder::new()
        .metadata(b"ab".to_vec())
        .encode(&f)
        .unwrap()
        .to_bytes();
    let at = small.windows(3).position(|w| w == [2, b'a', b'b']).unwrap();
    let empty = patched(&small, |v| {
        v.drain(at + 1..at + 3);
        v[at] = 0;
    });
    assert!(matches!(
        decode::<Message>(&empty, &Limits::default()),
        Err(Error::InvalidField {
            field: "metadata length",
            value: 0,
            ..
        })
    ));
    // An empty field asked of the encoder is no field.
    let none = Encoder::new()
        .metadata(Vec::new())
        .encode(&f)
        .unwrap()
        .to_bytes();
    assert_eq!(none[10] & FLAG_METADATA, 0);
    assert_eq!(none, plain.to_bytes());
    // Short input inside the metadata asks for the rest of the field.
    let cut = &small[..at + 2];
    assert_eq!(
        decode::<Message>(cut, &Limits::default()).unwrap_err(),
        Error::Incomplete { needed: 1 }
    );
}

#[test]
fn metadata_on_counting_frames_and_deltas() {
    let params = Params::standard(2000, 3, HashFamily::default()).unwrap();
    let mut c = CountingBloomFilter::new(params.clone(), 4).unwrap();
    c.insert(b"a");
    let enc: Encoder<CountingBloomFilter> = Encoder::new().metadata(b"m".to_vec());
    let wire = enc.encode(&c).unwrap().to_bytes();
    let back: Decoded<CountingBloomFilter> = decode(&wire, &Limits::default()).unwrap();
    assert_eq!(back.header.metadata.as_deref(), Some(&b"m"[..]));
    let mut a = BloomFilter::new(params);
    a.insert(b"a");
    let mut b = a.clone();
    b.insert(b"b");
    let delta = Encoder::new()
        .metadata(b"t=1".to_vec())
        .encode_delta(&a, 1, &b, 2)
        .unwrap()
        .to_bytes();
    let Message::Delta(d) = decode(&delta, &Limits::default()).unwrap() else {
        panic!("a delta")
    };
    assert_eq!(d.header.metadata.as_deref(), Some(&b"t=1"[..]));
    assert_eq!(d.apply(&a, 1).unwrap(), b);
}

#[test]
fn decode_buf_reads_metadata_frames_in_pieces_under_any_limits() {
    use bytes::Buf;
    let mut f = BloomFilter::new(Params::standard(5000, 3, HashFamily::default()).unwrap());
    (0..100u32).for_each(|i| f.insert(i.to_le_bytes()));
    let wire = Encoder::new()
        .metadata(vec![7u8; 300])
        .encode(&f)
        .unwrap()
        .to_bytes();
    for limits in [Limits::default(), Limits::unlimited()] {
        for cut in [1, 20, 200, wire.len() - 1] {
            let mut chain = (&wire[..cut]).chain(&wire[cut..]);
            let back: Decoded = bloomwire::decode_buf(&mut chain, &limits).unwrap();
            assert_eq!(back.filter, f);
            assert_eq!(back.header.metadata.as_deref(), Some(&[7u8; 300][..]));
        }
    }
}
