//! `tokio_util` codecs for frames (feature `tokio`), so networking code can put frames on a
//! socket with `FramedRead` and `FramedWrite`.
//!
//! Three decoders, one framing rule; pick by what the application does with a frame:
//!
//! | it wants | codec | `FramedRead` yields | decoding runs |
//! |---|---|---|---|
//! | the filter of each frame, frames small (deltas, a few thousand keys) | [`FrameCodec`] | [`Message`] | in `poll`, on the runtime thread |
//! | the filter, frames large (a decode takes milliseconds or more), or to relay frames | [`FramingCodec`] | [`CheckedFrame`], payload not decoded | where the caller puts it: `spawn_blocking`, or never (a relay forwards the bytes) |
//! | to follow a [`Sender`](crate::Sender)'s generations | [`ReceiverCodec`] | what the [`Receiver`] it owns did with each frame ([`Update`]) | in `poll`, applied to the held filter |
//!
//! * [`FramingCodec`] only frames: it yields each frame as a [`CheckedFrame`] once its
//!   header has passed the [`Limits`] and its checksum matches, without decoding the payload.
//!   Decoding a large filter takes milliseconds to seconds of CPU, which does not belong on a
//!   runtime thread: hand the frame to `tokio::task::spawn_blocking` (see
//!   `examples/decode_off_runtime.rs`), or forward its bytes untouched (a relay).
//! * [`FrameCodec`] frames and decodes in `poll`, yielding a [`Message`]: simple, and right
//!   for small frames (deltas, filters of a few thousand keys).
//! * [`ReceiverCodec`] frames and applies each frame to the [`Receiver`] it owns (its limits
//!   and key given once), yielding what the receiver did: with `FramedRead`, a `Stream` of
//!   updates (see its documentation). Made by [`ReceiverCodec::new`] (limits, then
//!   [`with_key`](ReceiverCodec::with_key)), as the other two, or from a receiver already
//!   set up, [`Receiver::into_codec`].
//!
//! Every codec is built the same way: `new(limits)`, the limits frames are *decoded*
//! within, then `with_key(key)` for frames that must be tagged. Writing needs neither: the
//! write side of [`FramingCodec`] and [`FrameCodec`] writes a [`Frame`] (tagged or not, by
//! its [`Encoder`](crate::Encoder)) or forwards a [`CheckedFrame`] as they are, and
//! [`FramingCodec::writer`] / [`FrameCodec::writer`] make a codec for `FramedWrite` that
//! names no limits. (On [`Receiver`] itself, [`Receiver::new`] is the Bloom filter's
//! constructor, [`Receiver::with_limits`] the same for any kind of filter, and
//! [`Receiver::with_key`] a builder step, as on the codecs.)
//!
//! All three enforce the limits on partial input: a header that claims more than the limits
//! allow is an error as soon as the field has arrived, and the read buffer never grows beyond
//! the frame's limit-checked length. Nor does it grow on a claim alone: while a frame is
//! incomplete the codec reserves at most [`FramingCodec::RESERVE_STEP`] bytes more, so a
//! peer that sends a header claiming a large payload and then nothing holds no more than
//! that of the receiver's memory.
//!
//! ```
//! use bloomwire::{FrameCodec, FramingCodec};
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
//! let wire = buf.clone();
//! let mut partial = buf.split_to(10);
//! assert!(codec.decode(&mut partial).unwrap().is_none()); // needs more bytes
//! partial.unsplit(buf);
//! let Some(Message::Full(d)) = codec.decode(&mut partial).unwrap() else { panic!() };
//! assert!(d.filter.contains(b"key"));
//!
//! // Framing only: the payload is decoded later, where the caller chooses.
//! let mut framing = FramingCodec::new(Limits::default());
//! let frame = framing.decode(&mut wire.clone()).unwrap().unwrap();
//! assert_eq!(frame.as_bytes(), &wire);
//! let Message::Full(d) = frame.decode().unwrap() else { panic!() };
//! assert!(d.filter.contains(b"key"));
//! ```

use bytes::BytesMut;

use crate::error::Error;
use crate::filter::BloomFilter;
use crate::format::{
    CheckedFrame, Filter, Frame, FrameHeader, FrameKey, Limits, Message, Verifier,
};
use crate::stream::{Receiver, Update};

/// Errors of the codecs: a bad frame, or the transport's I/O error.
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

/// Splits a byte stream into [`CheckedFrame`]s (header within the limits, checksum and,
/// with a key, authentication tag verified), leaving the payloads undecoded; encodes
/// [`Frame`]s and forwards [`CheckedFrame`]s as they are.
#[derive(Debug, Clone, Default)]
pub struct FramingCodec {
    limits: Limits,
    /// The limits and the key, when frames must be tagged with it.
    verifier: Option<Verifier>,
}

impl FramingCodec {
    /// The most bytes a decoder reserves at once for an incomplete frame: a peer that sends
    /// a header claiming a large payload and then nothing holds no more of the receiver's
    /// memory than this beyond what it sent.
    pub const RESERVE_STEP: usize = 1 << 16;

    /// A codec that checks frames against `limits`.
    pub fn new(limits: Limits) -> Self {
        FramingCodec {
            limits,
            verifier: None,
        }
    }

    /// A codec for the write side (`FramedWrite`), which writes [`Frame`]s and forwards
    /// [`CheckedFrame`]s as they are and checks nothing: the limits are a decoder's, and
    /// these are the defaults, used only if it also decodes.
    ///
    /// ```
    /// use bloomwire::{BloomFilter, Encoder, FramingCodec, HashFamily, Params};
    /// use bytes::BytesMut;
    /// use tokio_util::codec::Encoder as _;
    ///
    /// let f = BloomFilter::new(Params::standard(1000, 3, HashFamily::default()).unwrap());
    /// let frame = Encoder::new().encode(&f).unwrap();
    /// let mut wire = BytesMut::new();
    /// FramingCodec::writer().encode(&frame, &mut wire).unwrap();
    /// assert_eq!(&wire[..], &frame.to_bytes()[..]);
    /// ```
    pub fn writer() -> Self {
        FramingCodec::default()
    }

    /// The same codec, accepting only frames tagged with `key` (spec §2.5): an untagged
    /// frame is [`Error::MissingTag`], a wrong tag [`Error::BadTag`], both before the
    /// payload is read. (The frames it encodes are tagged by their
    /// [`Encoder`](crate::Encoder)'s [`key`](crate::Encoder::key).)
    pub fn with_key(mut self, key: FrameKey) -> Self {
        self.verifier = Some(Verifier::new(key, self.limits));
        self
    }
}

impl tokio_util::codec::Decoder for FramingCodec {
    type Item = CheckedFrame;
    type Error = CodecError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<CheckedFrame>, CodecError> {
        let checked = match &self.verifier {
            None => CheckedFrame::split_from(src, &self.limits),
            Some(verifier) => CheckedFrame::split_from(src, verifier),
        };
        match checked {
            Ok(frame) => Ok(Some(frame)),
            Err(Error::Incomplete { needed }) => {
                // `needed` is bounded by the limit-checked header fields, but it is only a
                // claim until the bytes arrive: reserve in steps.
                src.reserve(needed.min(FramingCodec::RESERVE_STEP));
                Ok(None)
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// Decodes [`Message`]s (framing as [`FramingCodec`] does, then decoding the payload in
/// `poll`) and encodes [`Frame`]s.
#[derive(Debug, Clone, Default)]
pub struct FrameCodec {
    framing: FramingCodec,
}

impl FrameCodec {
    /// A codec that decodes within `limits`.
    pub fn new(limits: Limits) -> Self {
        FrameCodec {
            framing: FramingCodec::new(limits),
        }
    }

    /// A codec for the write side (`FramedWrite`), as [`FramingCodec::writer`]: writing a
    /// frame needs no decoding limits.
    pub fn writer() -> Self {
        FrameCodec::default()
    }

    /// The same codec, decoding only frames tagged with `key`, as
    /// [`FramingCodec::with_key`] checks them.
    pub fn with_key(mut self, key: FrameKey) -> Self {
        self.framing = self.framing.with_key(key);
        self
    }
}

impl tokio_util::codec::Decoder for FrameCodec {
    type Item = Message;
    type Error = CodecError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Message>, CodecError> {
        match self.framing.decode(src)? {
            Some(frame) => Ok(Some(frame.decode()?)),
            None => Ok(None),
        }
    }
}
/// A [`Receiver`] as a `tokio_util` decoder: it splits a byte stream into frames within the
/// receiver's limits and applies each to the receiver (checked with its key, if it has one),
/// so that `FramedRead::new(socket, receiver.into_codec())` is a `Stream` of what happened
/// to the filter, one item per frame.
///
/// An item is `Ok(update)`, or `Err(error)` for a frame that the receiver refused for where
/// it stands in the sequence ([`Error::is_sequence_error`]: a duplicate, a gap, a base or
/// result mismatch): the stream goes on, the filter is unchanged, and the application asks
/// the sender for a full frame. A frame that does not decode (a bad checksum or tag, a
/// header over the limits, a corrupt payload), or a failure of the transport, is the
/// stream's error ([`CodecError`]), after which it ends. The filter is read with
/// `framed.decoder().receiver()`.
///
/// ```
/// use bloomwire::{BloomFilter, Encoder, FrameKey, HashFamily, Limits, Params, Receiver};
/// use bloomwire::{Sender, Update};
/// use bytes::BytesMut;
/// use tokio_util::codec::Decoder;
///
/// let key = FrameKey::new([4; 32]);
/// let mut sender = Sender::new(Encoder::new().key(key.clone()), 10);
/// let mut codec = Receiver::new(Limits::default()).with_key(key).into_codec();
/// let mut f = BloomFilter::new(Params::standard(20_000, 2, HashFamily::default()).unwrap());
/// (0..2_000u32).for_each(|i| f.insert(i.to_le_bytes()));
/// let mut wire = BytesMut::new();
/// for g in 0..3 {
///     f.insert(format!("generation {g}"));
///     wire.extend_from_slice(&sender.next_frame(&f).unwrap().to_bytes());
/// }
/// let mut updates = Vec::new();
/// while let Some(update) = codec.decode(&mut wire).unwrap() {
///     updates.push(update.unwrap());
/// }
/// assert_eq!(updates.last(), Some(&Update::Delta { generation: 3 }));
/// assert_eq!(codec.receiver().filter(), Some(&f));
/// ```
#[derive(Debug, Clone)]
pub struct ReceiverCodec<F: Filter = BloomFilter> {
    receiver: Receiver<F>,
}

impl<F: Filter> Receiver<F> {
    /// This receiver as a `tokio_util` decoder of a stream of frames ([`ReceiverCodec`]).
    pub fn into_codec(self) -> ReceiverCodec<F> {
        ReceiverCodec { receiver: self }
    }
}

impl<F: Filter> ReceiverCodec<F> {
    /// A codec whose receiver of frames of the kind `F` has no filter yet and decodes
    /// within `limits`, built as the other codecs are: `ReceiverCodec::<AnyFilter>::new(
    /// limits).with_key(key)` ([`Receiver::with_limits`] and [`Receiver::with_key`]).
    ///
    /// ```
    /// use bloomwire::{FrameKey, Limits, ReceiverCodec};
    /// let codec: ReceiverCodec = ReceiverCodec::new(Limits::default()).with_key(FrameKey::new([1; 32]));
    /// assert_eq!(codec.receiver().generation(), None);
    /// ```
    pub fn new(limits: Limits) -> Self {
        Receiver::with_limits(limits).into_codec()
    }

    /// The same codec, its receiver accepting only frames tagged with `key`
    /// ([`Receiver::with_key`]).
    pub fn with_key(self, key: FrameKey) -> Self {
        self.receiver.with_key(key).into_codec()
    }

    /// The receiver: its filter, generation and digest.
    pub fn receiver(&self) -> &Receiver<F> {
        &self.receiver
    }

    /// The receiver, to change.
    pub fn receiver_mut(&mut self) -> &mut Receiver<F> {
        &mut self.receiver
    }

    /// The receiver, the codec given up.
    pub fn into_receiver(self) -> Receiver<F> {
        self.receiver
    }
}

impl<F: Filter> tokio_util::codec::Decoder for ReceiverCodec<F> {
    type Item = Result<Update, Error>;
    type Error = CodecError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Self::Item>, CodecError> {
        // The frame's length from its header, within the limits, before anything is
        // reserved for it; then the whole frame, checked and applied by the receiver.
        let needed = match FrameHeader::parse(src, self.receiver.limits()) {
            Ok(header) => header.frame_len().saturating_sub(src.len()),
            Err(Error::Incomplete { needed }) => needed,
            Err(e) => return Err(e.into()),
        };
        if needed > 0 {
            src.reserve(needed.min(FramingCodec::RESERVE_STEP));
            return Ok(None);
        }
        let len = FrameHeader::parse(src, self.receiver.limits())?.frame_len();
        let frame = src.split_to(len);
        match self.receiver.receive(&frame) {
            Ok(update) => Ok(Some(Ok(update))),
            Err(e) if e.is_sequence_error() => Ok(Some(Err(e))),
            Err(e) => Err(e.into()),
        }
    }
}

/// Both codecs write frames the same way.
macro_rules! frame_encoders {
    ($codec:ty) => {
        impl tokio_util::codec::Encoder<Frame> for $codec {
            type Error = CodecError;

            fn encode(&mut self, frame: Frame, dst: &mut BytesMut) -> Result<(), CodecError> {
                self.encode(&frame, dst)
            }
        }

        impl tokio_util::codec::Encoder<&Frame> for $codec {
            type Error = CodecError;

            fn encode(&mut self, frame: &Frame, dst: &mut BytesMut) -> Result<(), CodecError> {
                dst.reserve(frame.encoded_len());
                frame.write_to(dst);
                Ok(())
            }
        }

        impl tokio_util::codec::Encoder<CheckedFrame> for $codec {
            type Error = CodecError;

            /// Forward a received frame byte for byte.
            fn encode(
                &mut self,
                frame: CheckedFrame,
                dst: &mut BytesMut,
            ) -> Result<(), CodecError> {
                dst.extend_from_slice(frame.as_bytes());
                Ok(())
            }
        }
    };
}

frame_encoders!(FramingCodec);
frame_encoders!(FrameCodec);
