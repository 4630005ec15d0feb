//! `tokio_util` codecs for frames (feature `tokio`), so networking code can put frames on a
//! socket with `FramedRead` and `FramedWrite`.
//!
//! The decoder yields every frame as a [`Message`] (full or delta) and enforces its
//! [`Limits`] on partial input: a header that claims more than the limits allow is an error
//! as soon as the field has arrived, and the read buffer never grows beyond the frame's
//! limit-checked length. Nor does it grow on a claim alone: while a frame is incomplete the
//! codec reserves at most [`RESERVE_STEP`] bytes more, so a peer that sends a header
//! claiming a large payload and then nothing holds no more than that of the receiver's
//! memory.
//!
//! ```
//! use bloomwire::FrameCodec;
//! use bloomwire::{Encoder, Limits, Message};
//! use bloomwire::{BloomFilter, HashFamily, Params};
//! use bytes::BytesMut;
//! use tokio_util::codec::{Decoder, Encoder as _};
//!
//! let mut f = BloomFilter::new(Params::standard(1000, 3, HashFamily::default()).unwrap());
//! f.insert(b"key");
//! let mut codec = FrameCodec::new(Limits::default());
//! let mut buf = BytesMut::new();
//! codec.encode(Encoder::new().encode(&f).unwrap(), &mut buf).unwrap();
//! let mut partial = buf.split_to(10);
//! assert!(codec.decode(&mut partial).unwrap().is_none()); // needs more bytes
//! partial.unsplit(buf);
//! let Some(Message::Full(d)) = codec.decode(&mut partial).unwrap() else { panic!() };
//! assert!(d.filter.contains(b"key"));
//! ```

use bytes::{Buf, BytesMut};

use crate::error::Error;
use crate::format::{decode_prefix, Frame, FrameKey, Limits, Message, Verifier};

/// The most bytes the decoder reserves at once for an incomplete frame.
pub const RESERVE_STEP: usize = 1 << 16;

/// Errors of the codec: a bad frame, or the transport's I/O error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// The peer sent a frame that does not decode.
    #[error(transparent)]
    Frame(#[from] Error),
    /// Reading or writing the transport failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Encodes [`Frame`]s and decodes [`Message`]s.
#[derive(Debug, Clone, Default)]
pub struct FrameCodec {
    limits: Limits,
    /// The limits and the key, when frames must be tagged with it.
    verifier: Option<Verifier>,
}

impl FrameCodec {
    /// A codec that decodes within `limits`.
    pub fn new(limits: Limits) -> Self {
        FrameCodec {
            limits,
            verifier: None,
        }
    }

    /// The same codec, decoding only frames tagged with `key` (spec §2.5): an untagged
    /// frame is [`Error::MissingTag`], a wrong tag [`Error::BadTag`], both before the
    /// payload is read. (The frames it encodes are tagged by their
    /// [`Encoder`](crate::Encoder)'s [`key`](crate::Encoder::key).)
    pub fn with_key(mut self, key: FrameKey) -> Self {
        self.verifier = Some(Verifier::new(key, self.limits));
        self
    }
}

impl tokio_util::codec::Decoder for FrameCodec {
    type Item = Message;
    type Error = CodecError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Message>, CodecError> {
        let decoded = match &self.verifier {
            None => decode_prefix::<Message>(src, &self.limits),
            Some(verifier) => decode_prefix::<Message>(src, verifier),
        };
        match decoded {
            Ok((message, len)) => {
                src.advance(len);
                Ok(Some(message))
            }
            Err(Error::Incomplete { needed }) => {
                // `needed` is bounded by the limit-checked header fields, but it is only a
                // claim until the bytes arrive: reserve in steps.
                src.reserve(needed.min(RESERVE_STEP));
                Ok(None)
            }
            Err(e) => Err(e.into()),
        }
    }
}

impl tokio_util::codec::Encoder<Frame> for FrameCodec {
    type Error = CodecError;

    fn encode(&mut self, frame: Frame, dst: &mut BytesMut) -> Result<(), CodecError> {
        self.encode(&frame, dst)
    }
}

impl tokio_util::codec::Encoder<&Frame> for FrameCodec {
    type Error = CodecError;

    fn encode(&mut self, frame: &Frame, dst: &mut BytesMut) -> Result<(), CodecError> {
        dst.reserve(frame.encoded_len());
        frame.write_to(dst);
        Ok(())
    }
}
