//! Authenticated frames (flags bit 2, spec §2.5): a receiver with a key refuses forged,
//! relabelled, altered and untagged frames with typed errors, before their payload is read,
//! and keeps accepting the sender's genuine frames; a decoder without a key reads a tagged
//! frame and says it did not check it.

use bloomwire::format::{FLAG_TAGGED, TAG_LEN};
use bloomwire::{
    decode, decode_buf, decode_prefix, BloomFilter, Chunking, CountingBloomFilter, Decoded,
    Encoder, Error, FrameKey, FrameView, HashFamily, Limits, Message, Params, Receiver, Sender,
    Tag, Update, Verifier,
};
mod common;
use common::{key, keys};

fn frame_key() -> FrameKey {
    FrameKey::new(core::array::from_fn(|i| i as u8 * 7 + 1))
}

/// [`frame_key`], and a decoder that checks it, with the default limits.
fn keyed() -> (FrameKey, Verifier) {
    (frame_key(), Verifier::new(frame_key(), Limits::default()))
}

/// The checksum of a tagged frame made right again after a change (the tag is not).
fn fix_crc(frame: &mut [u8]) {
    let body = frame.len() - TAG_LEN - 4;
    let crc = crc32c::crc32c(&frame[..body]);
    frame[body..body + 4].copy_from_slice(&crc.to_le_bytes());
}

fn state(r: &Receiver) -> (Option<u64>, Option<BloomFilter>, Option<u32>) {
    (r.generation(), r.filter().cloned(), r.digest())
}

/// Issue 16's sequence against a receiver with a key: a forged full frame numbered
/// 2^64 - 1 (untagged, or tagged with another key) is refused, and every genuine frame
/// that follows, delta or full, applies.
#[test]
fn forged_generations_are_refused_and_genuine_frames_keep_applying() {
    let params = Params::standard(64_000, 2, HashFamily::default()).unwrap();
    let k = frame_key();
    let mut sender = Sender::new(Encoder::new().key(k.clone()), 50);
    let mut receiver: Receiver = Receiver::new(Limits::default()).with_key(k.clone());
    let forgeries = [
        Encoder::new()
            .encode_generation(&keys(&params, 99, 0..10), u64::MAX)
            .unwrap()
            .to_bytes()
            .to_vec(),
        Encoder::new()
            .key(FrameKey::new([0xA5; 32]))
            .encode_generation(&keys(&params, 99, 0..10), u64::MAX)
            .unwrap()
            .with_restart(true)
            .unwrap()
            .to_bytes()
            .to_vec(),
    ];
    let mut accepted = 0;
    for g in 1..=40u64 {
        let f = keys(&params, 1, g * 20..2000 + g * 20);
        let frame = sender.next_frame(&f).unwrap().to_bytes();
        for forgery in &forgeries {
            let before = state(&receiver);
            let refused = receiver.receive(forgery).unwrap_err();
            assert!(
                matches!(
                    refused,
                    Error::MissingTag { offset: 10 } | Error::BadTag { .. }
                ),
                "{refused}"
            );
            assert_eq!(state(&receiver), before);
        }
        // The genuine delta relabelled to generation g + 1000 (checksum recomputed).
        if g > 1 {
            let mut relabelled = frame.to_vec();
            let message: Message = decode(&frame, &Limits::default()).unwrap();
            if let Message::Delta(_) = message {
                let at = generation_offset(&relabelled);
                assert_eq!(relabelled[at], g as u8);
                relabelled[at] = (g + 1000) as u8 | 0x80;
                relabelled.insert(at + 1, ((g + 1000) >> 7) as u8);
                fix_crc(&mut relabelled);
                // Without a key the relabelled frame is a valid delta frame...
                let plain: Message = decode(&relabelled, &Limits::default()).unwrap();
                assert_eq!(plain.header().generation, g + 1000);
                assert_eq!(plain.header().tag, Tag::Unverified);
                // ...with one it is refused.
                assert!(matches!(
                    receiver.receive(&relabelled),
                    Err(Error::BadTag { .. })
                ));
            }
        }
        let update = receiver.receive(&frame).unwrap();
        assert_eq!(receiver.generation(), Some(g), "{update:?}");
        assert_eq!(receiver.filter(), Some(&f));
        accepted += 1;
    }
    assert_eq!(accepted, 40);
}

/// The offset of the generation varint in a delta frame of this test's filters (XXH64 seed
/// 0 in one byte, m = 64 000 in three, k = 2 in three, n in two).
fn generation_offset(frame: &[u8]) -> usize {
    let mut at = 11;
    for _ in 0..4 {
        while frame[at] & 0x80 != 0 {
            at += 1;
        }
        at += 1;
    }
    at
}

/// Every single-bit flip of a tagged frame (header, payload, checksum, tag), with or
/// without the checksum made right again, is refused by a keyed decoder; none panics.
#[test]
fn every_bit_flip_of_a_tagged_frame_is_refused() {
    let params = Params::standard(20_000, 3, HashFamily::default()).unwrap();
    let (k, verifier) = keyed();
    let base = keys(&params, 2, 0..1000);
    let next = keys(&params, 2, 10..1010);
    let full = Encoder::new()
        .key(k.clone())
        .encode_generation(&base, 3)
        .unwrap();
    let delta = Encoder::new()
        .key(k.clone())
        .encode_delta(&base, 3, &next, 4)
        .unwrap();
    for frame in [full.to_bytes(), delta.to_bytes()] {
        let _: Message = decode(&frame, &verifier).unwrap();
        for bit in 0..frame.len() * 8 {
            let mut bad = frame.to_vec();
            bad[bit / 8] ^= 1 << (bit % 8);
            assert!(decode::<Message>(&bad, &verifier).is_err(), "bit {bit}");
            if bit / 8 < frame.len() - TAG_LEN - 4 {
                fix_crc(&mut bad);
                assert!(decode::<Message>(&bad, &verifier).is_err(), "bit {bit}");
                assert!(decode::<Message>(&bad[..], &verifier)
                    .err()
                    .is_some_and(|e| !matches!(e, Error::CorruptPayload { .. })));
            }
        }
    }
}

/// The tag is checked after the checksum and before the payload: a tagged frame whose
/// payload is garbage (checksum recomputed) is `BadTag`, not `CorruptPayload`, and an
/// untagged frame of any content is `MissingTag`.
#[test]
fn the_tag_is_checked_before_the_payload() {
    let params = Params::standard(50_000, 2, HashFamily::default()).unwrap();
    let (k, verifier) = keyed();
    let f = keys(&params, 4, 0..3000);
    let frame = Encoder::new().key(k).encode(&f).unwrap();
    let header_len = frame.header().header_len;
    let mut bad = frame.to_bytes().to_vec();
    let end = bad.len() - TAG_LEN - 4;
    bad[header_len..end].fill(0xFF);
    fix_crc(&mut bad);
    let plain = decode::<Message>(&bad, &Limits::default()).unwrap_err();
    assert!(matches!(plain, Error::CorruptPayload { .. }), "{plain}");
    assert_eq!(
        decode::<Message>(&bad, &verifier).unwrap_err(),
        Error::BadTag { offset: end + 4 }
    );
    let mut untagged = Encoder::new().encode(&f).unwrap().to_bytes().to_vec();
    let end = untagged.len() - 4;
    untagged[header_len..end].fill(0xFF);
    let crc = crc32c::crc32c(&untagged[..end]);
    untagged[end..].copy_from_slice(&crc.to_le_bytes());
    assert_eq!(
        decode::<Message>(&untagged, &verifier).unwrap_err(),
        Error::MissingTag { offset: 10 }
    );
}

/// Short input counts the tag's bytes; a tag cut short, or a tag on a frame whose flag
/// says none (trailing bytes), is refused; the stream forms find the frame's end.
#[test]
fn lengths_incomplete_and_prefix_count_the_tag() {
    let params = Params::standard(10_000, 2, HashFamily::default()).unwrap();
    let (k, verifier) = keyed();
    let f = keys(&params, 5, 0..500);
    let frame = Encoder::new().key(k.clone()).encode(&f).unwrap();
    let wire = frame.to_bytes();
    assert_eq!(wire.len(), frame.encoded_len());
    assert_eq!(wire[10] & FLAG_TAGGED, FLAG_TAGGED);
    let untagged = frame.clone().with_key(None);
    assert_eq!(untagged.encoded_len() + TAG_LEN, wire.len());
    // The same bytes but for the flag, the checksum and the tag.
    let plain = untagged.to_bytes();
    assert_eq!(plain[..10], wire[..10]);
    assert_eq!(plain[10], wire[10] & !FLAG_TAGGED);
    assert_eq!(plain[11..plain.len() - 4], wire[11..plain.len() - 4]);
    for cut in 1..=TAG_LEN {
        let short = &wire[..wire.len() - cut];
        for result in [
            decode::<Message>(short, &verifier).err(),
            decode::<Message>(short, &Limits::default()).err(),
            FrameView::parse(short, &verifier).err(),
        ] {
            assert_eq!(result, Some(Error::Incomplete { needed: cut }));
        }
    }
    // Two frames back to back: the prefix form takes exactly the tagged one.
    let mut two = wire.to_vec();
    two.extend_from_slice(&Encoder::new().key(k.clone()).encode(&f).unwrap().to_bytes());
    let (m, used): (Message, usize) = decode_prefix(&two, &verifier).unwrap();
    assert_eq!(used, wire.len());
    assert_eq!(m.header().tag, Tag::Verified);
    // decode_buf over a buffer in many pieces.
    let mut pieces: std::collections::VecDeque<u8> = two.iter().copied().collect();
    let d: Decoded = decode_buf(&mut pieces, &verifier).unwrap();
    assert_eq!(d.filter, f);
    assert_eq!(pieces.len(), wire.len());
    // A tag after an untagged frame is trailing bytes; with a key the frame is untagged.
    let mut trailing = untagged.to_bytes().to_vec();
    trailing.extend_from_slice(&wire[wire.len() - TAG_LEN..]);
    assert!(matches!(
        decode::<Message>(&trailing, &Limits::default()),
        Err(Error::TrailingBytes { count: TAG_LEN, .. })
    ));
    assert!(matches!(
        decode::<Message>(&trailing, &verifier),
        Err(Error::MissingTag { .. })
    ));
}

/// A budget counts the tag; a counting filter's frames are tagged the same way; a relay
/// that decoded a tagged frame re-tags what it forwards.
#[test]
fn budgets_counting_frames_and_relays() {
    let params = Params::standard(30_000, 3, HashFamily::default()).unwrap();
    let (k, verifier) = keyed();
    let f = keys(&params, 6, 0..2000);
    let plain_len = Encoder::new().encode(&f).unwrap().encoded_len();
    assert!(matches!(
        Encoder::new().key(k.clone()).budget(plain_len).encode(&f),
        Err(Error::OverBudget { .. })
    ));
    let fits = Encoder::new()
        .key(k.clone())
        .budget(plain_len + TAG_LEN)
        .encode(&f)
        .unwrap();
    // (Within a budget the encoder may pick a smaller coding than its fastest choice.)
    assert!(fits.encoded_len() <= plain_len + TAG_LEN);

    let mut c = CountingBloomFilter::new(params.clone(), 4).unwrap();
    for i in 0..500u64 {
        c.insert(key(7, i));
    }
    let wire = Encoder::new().key(k.clone()).encode(&c).unwrap().to_bytes();
    let back: Decoded<CountingBloomFilter> = decode(&wire, &verifier).unwrap();
    assert_eq!(back.filter, c);
    assert_eq!(back.header.tag, Tag::Verified);
    let mut rc: Receiver<CountingBloomFilter> =
        Receiver::with_limits(Limits::default()).with_key(k.clone());
    let plain = Encoder::new().encode(&c).unwrap().to_bytes();
    assert!(matches!(rc.receive(&plain), Err(Error::MissingTag { .. })));
    assert!(matches!(rc.receive(&wire), Ok(Update::Full { .. })));

    let message: Message = decode(&fits.to_bytes(), &verifier).unwrap();
    assert_eq!(message.header().tag, Tag::Verified);
    let relayed = message.to_frame().unwrap();
    assert_eq!(relayed.header().tag, Tag::Absent);
    assert_eq!(relayed.with_key(Some(k)).to_bytes(), fits.to_bytes());
}

/// A keyed receiver's `apply` takes only messages whose tag was verified.
#[test]
fn apply_needs_a_verified_message() {
    let params = Params::standard(10_000, 2, HashFamily::default()).unwrap();
    let k = frame_key();
    let f = keys(&params, 8, 0..300);
    let wire = Encoder::new()
        .key(k.clone())
        .encode_generation(&f, 1)
        .unwrap()
        .to_bytes();
    let mut receiver: Receiver = Receiver::new(Limits::default()).with_key(k.clone());
    let unchecked: Message = decode(&wire, &Limits::default()).unwrap();
    assert_eq!(unchecked.header().tag, Tag::Unverified);
    assert_eq!(receiver.apply(unchecked), Err(Error::TagNotVerified));
    // Verified, but with another key: its holder made it, not the receiver's sender
    // (this was applied before).
    let other = FrameKey::new([0x55; 32]);
    let forged = Encoder::new()
        .key(other.clone())
        .encode_generation(&f, 1)
        .unwrap()
        .to_bytes();
    let other_verified: Message =
        decode(&forged, &Verifier::new(other, Limits::default())).unwrap();
    assert_eq!(other_verified.header().tag, Tag::Verified);
    assert_eq!(receiver.apply(other_verified), Err(Error::TagNotVerified));
    assert_eq!(receiver.generation(), None);
    // Untagged: missing.
    let plain = Encoder::new().encode_generation(&f, 1).unwrap().to_bytes();
    let plain: Message = decode(&plain, &Limits::default()).unwrap();
    assert!(matches!(
        receiver.apply(plain),
        Err(Error::MissingTag { .. })
    ));
    let checked: Message = decode(&wire, &Verifier::new(k, Limits::default())).unwrap();
    assert!(receiver.apply(checked).is_ok());
    // A receiver without a key takes tagged frames, unchecked.
    let mut open: Receiver = Receiver::new(Limits::default());
    assert!(open.receive(&wire).is_ok());
}

/// Chunked and unchunked payloads of every size class are tagged and verified.
#[test]
fn chunked_frames_are_tagged_too() {
    let params = Params::standard(1 << 20, 2, HashFamily::default()).unwrap();
    let k = frame_key();
    let f = keys(&params, 9, 0..40_000);
    let frame = Encoder::new()
        .key(k.clone())
        .chunking(Chunking::Shift(16))
        .encode(&f)
        .unwrap();
    assert!(frame.header().chunk_shift.is_some());
    let view = FrameView::parse(&frame.to_bytes(), &Verifier::new(k, Limits::default()))
        .unwrap()
        .decode()
        .unwrap();
    assert_eq!(&view, f.bits());
}

/// The tokio codec with a key: a tagged frame arriving a byte at a time decodes once whole
/// (the tag's bytes awaited), an untagged one is refused.
#[cfg(feature = "tokio")]
#[test]
fn the_codec_with_a_key_waits_for_the_tag_and_refuses_untagged_frames() {
    use bloomwire::{CodecError, FrameCodec};
    use tokio_util::codec::Decoder;
    let params = Params::standard(8_000, 2, HashFamily::default()).unwrap();
    let k = frame_key();
    let f = keys(&params, 10, 0..400);
    let wire = Encoder::new().key(k.clone()).encode(&f).unwrap().to_bytes();
    let mut codec = FrameCodec::new(Limits::default()).with_key(k);
    let mut buf = bytes::BytesMut::new();
    for (i, b) in wire.iter().enumerate() {
        buf.extend_from_slice(&[*b]);
        let got = codec.decode(&mut buf).unwrap();
        assert_eq!(got.is_some(), i + 1 == wire.len(), "byte {i}");
        if let Some(m) = got {
            assert_eq!(m.header().tag, Tag::Verified);
        }
    }
    let mut plain = bytes::BytesMut::from(&Encoder::new().encode(&f).unwrap().to_bytes()[..]);
    assert!(matches!(
        codec.decode(&mut plain),
        Err(CodecError::Frame(Error::MissingTag { .. }))
    ));
}
