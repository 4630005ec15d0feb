//! The tokio codecs over a real loopback socket, with frames split at every byte boundary,
//! and its limits enforced on partial input.
#![cfg(feature = "tokio")]

use bloomwire::{
    BloomFilter, CheckedFrame, CodecError, Encoder, Error, FrameCodec, FramingCodec, HashFamily,
    Limits, Message, Params, Receiver, Sender,
};
use bytes::BytesMut;
use futures::StreamExt;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::codec::{Decoder, Encoder as _, FramedRead};

/// Three frames of one stream: a full frame and two deltas.
fn stream() -> (Vec<u8>, Vec<BloomFilter>) {
    let params = Params::standard(3_000, 2, HashFamily::default()).unwrap();
    let mut sender = Sender::new(Encoder::new(), 100);
    let mut bytes = Vec::new();
    let mut filters = Vec::new();
    for g in 0..3u32 {
        let mut f = BloomFilter::new(params.clone());
        for i in g * 5..g * 5 + 100 {
            f.insert(i.to_le_bytes());
        }
        bytes.extend_from_slice(&sender.next_frame(&f).unwrap().to_bytes());
        filters.push(f);
    }
    (bytes, filters)
}

fn check(messages: Vec<Message>, filters: &[BloomFilter]) {
    let mut receiver: Receiver = Receiver::new(Limits::default());
    assert_eq!(messages.len(), filters.len());
    for (m, f) in messages.into_iter().zip(filters) {
        receiver.apply(m).unwrap();
        assert_eq!(receiver.filter().unwrap(), f);
    }
}

/// Everything `codec` decodes from `bytes` arriving in two pieces, cut at `split`; nothing
/// may be left over.
fn decode_split<D>(codec: &mut D, bytes: &[u8], split: usize) -> Vec<D::Item>
where
    D: Decoder,
    D::Error: std::fmt::Debug,
{
    let mut buf = BytesMut::from(&bytes[..split]);
    let mut out = Vec::new();
    while let Some(item) = codec.decode(&mut buf).unwrap() {
        out.push(item);
    }
    buf.extend_from_slice(&bytes[split..]);
    while let Some(item) = codec.decode(&mut buf).unwrap() {
        out.push(item);
    }
    assert!(buf.is_empty());
    out
}

/// The first 18 bytes of a frame whose m field claims 2^40 bits.
fn claim_over_max_m() -> BytesMut {
    let f = BloomFilter::new(Params::standard(64, 2, HashFamily::default()).unwrap());
    let mut bytes = Encoder::new().encode(&f).unwrap().to_bytes().to_vec();
    bytes.splice(12..13, [0x80, 0x80, 0x80, 0x80, 0x80, 0x20]);
    BytesMut::from(&bytes[..18])
}

/// `codec` refuses a header claiming m = 2^40 as soon as m has arrived, with nothing
/// buffered.
fn refuses_a_claim_over_max_m<D>(codec: &mut D)
where
    D: Decoder<Error = CodecError>,
    D::Item: core::fmt::Debug,
{
    let mut buf = claim_over_max_m();
    assert!(matches!(
        codec.decode(&mut buf),
        Err(CodecError::Frame(Error::LimitExceeded { field: "m", .. }))
    ));
    assert!(buf.capacity() < 1024);
}

#[test]
fn decoder_handles_every_split_point() {
    let (bytes, filters) = stream();
    for split in 0..=bytes.len() {
        let out = decode_split(&mut FrameCodec::new(Limits::default()), &bytes, split);
        check(out, &filters);
    }
}

#[tokio::test]
async fn frames_cross_a_loopback_socket_split_at_every_byte() {
    let (bytes, filters) = stream();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    for split in 0..=bytes.len() {
        let mut client = TcpStream::connect(addr).await.unwrap();
        client.set_nodelay(true).unwrap();
        let (server, _) = listener.accept().await.unwrap();
        let reader = tokio::spawn(async move {
            FramedRead::new(server, FrameCodec::new(Limits::default()))
                .map(|m| m.unwrap())
                .collect::<Vec<_>>()
                .await
        });
        client.write_all(&bytes[..split]).await.unwrap();
        client.flush().await.unwrap();
        tokio::task::yield_now().await;
        client.write_all(&bytes[split..]).await.unwrap();
        client.shutdown().await.unwrap();
        check(reader.await.unwrap(), &filters);
    }
}

#[test]
fn limits_apply_before_the_frame_is_complete() {
    refuses_a_claim_over_max_m(&mut FrameCodec::new(Limits::default()));
}

#[test]
fn framing_codec_splits_checks_and_forwards_without_decoding() {
    let (bytes, filters) = stream();
    for split in 0..=bytes.len() {
        let mut codec = FramingCodec::new(Limits::default());
        let frames = decode_split(&mut codec, &bytes, split);
        // Forwarded as they are, the frames are the stream byte for byte.
        let mut out = BytesMut::new();
        for f in &frames {
            codec.encode(f.clone(), &mut out).unwrap();
        }
        assert_eq!(&out[..], &bytes[..]);
        check(
            frames.iter().map(|f| f.decode().unwrap()).collect(),
            &filters,
        );
    }
}

#[test]
fn framing_codec_refuses_a_bad_checksum_and_a_claim_over_the_limits() {
    let (mut bytes, _) = stream();
    let first = CheckedFrame::new(bytes::Bytes::copy_from_slice(&bytes), &Limits::default());
    assert!(matches!(first, Err(Error::TrailingBytes { .. })));
    // A flipped payload bit is a checksum error in the framing, before any decoding.
    bytes[30] ^= 4;
    let mut codec = FramingCodec::new(Limits::default());
    let mut buf = BytesMut::from(&bytes[..]);
    assert!(matches!(
        codec.decode(&mut buf),
        Err(CodecError::Frame(Error::ChecksumMismatch { .. }))
    ));
    assert_eq!(buf.len(), bytes.len(), "the buffer is left as it was");
    refuses_a_claim_over_max_m(&mut codec);
}

/// A receiver's codec yields what happened to each frame: a gap is an item, not the
/// stream's end, and the next full frame brings the receiver back.
#[test]
fn a_receivers_codec_reports_a_gap_and_goes_on() {
    use bloomwire::{Receiver, Sender, Update};
    use tokio_util::codec::Decoder;
    let params = Params::standard(20_000, 2, HashFamily::default()).unwrap();
    let mut sender = Sender::new(Encoder::new(), 4);
    let mut f = BloomFilter::new(params);
    for i in 0..3_000u32 {
        f.insert(i.to_le_bytes());
    }
    let mut frames = Vec::new();
    for i in 0..6u32 {
        f.insert(format!("generation {i}"));
        frames.push(sender.next_frame(&f).unwrap().to_bytes());
    }
    // Generation 2 is lost on the way; 4 is a full frame (every 4th).
    let mut wire = BytesMut::new();
    for (i, frame) in frames.iter().enumerate() {
        if i != 1 {
            wire.extend_from_slice(frame);
        }
    }
    let mut codec = Receiver::new(Limits::default()).into_codec();
    let mut seen = Vec::new();
    while let Some(item) = codec.decode(&mut wire).unwrap() {
        seen.push(item);
    }
    assert_eq!(
        seen[0],
        Ok(Update::Full {
            generation: 1,
            skipped: 0
        })
    );
    assert!(
        matches!(seen[1], Err(Error::GenerationGap { .. })),
        "{:?}",
        seen[1]
    );
    assert!(seen[1].as_ref().unwrap_err().is_sequence_error());
    assert_eq!(
        seen[2],
        Ok(Update::Full {
            generation: 4,
            skipped: 2
        })
    );
    assert_eq!(seen[4], Ok(Update::Delta { generation: 6 }));
    assert_eq!(codec.receiver().filter(), Some(&f));
    // A frame that does not decode ends the stream.
    let mut bad = BytesMut::from(&frames[5][..]);
    let last = bad.len() - 1;
    bad[last] ^= 1;
    let mut codec = Receiver::new(Limits::default()).into_codec();
    assert!(codec.decode(&mut bad).is_err());
}
