//! A frame that has passed every check but the payload's, owned and not yet decoded: what a
//! transport hands to the application, so that decoding can run elsewhere (another thread,
//! `spawn_blocking`) or not at all (a relay forwards the bytes as they are). It sits above
//! the stages of decoding and drives them as `decode.rs` does.

use bytes::{Bytes, BytesMut};

use crate::error::Result;

use super::auth::Checks;
use super::checked::{whole, Checked};
use super::decode::{finish, Decodable};
use super::header::FrameHeader;
use super::view::FrameView;

/// One whole frame, its header checked against the receiver's [`Limits`](super::Limits), its
/// checksum verified and, when the checks hold a key ([`Verifier`](crate::Verifier)), its
/// authentication tag too; the payload is decoded on demand with [`CheckedFrame::decode`] or
/// [`CheckedFrame::view`]. Cloning it is cheap (the bytes are shared), so one frame can be
/// forwarded to many peers.
///
/// ```
/// use bloomwire::{BloomFilter, CheckedFrame, Decoded, Encoder, HashFamily, Limits, Params};
/// use bytes::BytesMut;
///
/// let mut f = BloomFilter::new(Params::standard(10_000, 2, HashFamily::default()).unwrap());
/// f.insert(b"key");
/// let wire = Encoder::new().encode(&f).unwrap().to_bytes();
///
/// // A stream buffer holding one frame and the start of the next.
/// let mut buf = BytesMut::from(&wire[..]);
/// buf.extend_from_slice(&wire[..5]);
/// let frame = CheckedFrame::split_from(&mut buf, &Limits::default()).unwrap();
/// assert_eq!(buf.len(), 5); // the next frame's first bytes stay
/// assert_eq!(frame.header().params.m(), 10_000);
/// assert_eq!(frame.as_bytes(), &wire); // forward as is, or decode:
/// let d: Decoded = frame.decode().unwrap();
/// assert!(d.filter.contains(b"key"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedFrame {
    bytes: Bytes,
    header: FrameHeader,
}

impl CheckedFrame {
    /// Check `input`, which holds exactly one frame (bytes after it are
    /// [`Error::TrailingBytes`](crate::Error::TrailingBytes)), against `checks`
    /// ([`Limits`](super::Limits), or a [`Verifier`](crate::Verifier) with a key).
    pub fn new(input: Bytes, checks: &impl Checks) -> Result<CheckedFrame> {
        let header = Checked::new(&input, checks.limits(), checks.key())?.header;
        whole(&input, header.frame_len())?;
        Ok(CheckedFrame {
            bytes: input,
            header,
        })
    }

    /// Check the frame at the start of `buf` and split it off (without copying). On
    /// [`Error::Incomplete`](crate::Error::Incomplete) and on every other error `buf` is
    /// left as it was; the header's fields are checked against `limits` as soon as they
    /// have arrived, so `needed` is never more than the limits allow.
    pub fn split_from(buf: &mut BytesMut, checks: &impl Checks) -> Result<CheckedFrame> {
        let header = Checked::new(buf, checks.limits(), checks.key())?.header;
        let bytes = buf.split_to(header.frame_len()).freeze();
        Ok(CheckedFrame { bytes, header })
    }

    /// The frame's header.
    pub fn header(&self) -> &FrameHeader {
        &self.header
    }

    /// The frame's bytes, exactly as received (header, payload and checksum).
    pub fn as_bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The frame's bytes, exactly as received.
    pub fn into_bytes(self) -> Bytes {
        self.bytes
    }

    /// A view that decodes the payload chunk by chunk (the checksum is not computed again).
    pub fn view(&self) -> Result<FrameView<'_>> {
        FrameView::of_checked(self.borrowed())
    }

    /// Decode the payload into a [`Message`](crate::Message) or a
    /// [`Decoded<F>`](crate::Decoded), as [`decode`](crate::decode) does; the cost is the
    /// payload's decoding, the checks are done.
    pub fn decode<T: Decodable>(&self) -> Result<T> {
        T::from_message(finish(self.borrowed())?)
    }

    /// The frame as the borrowed stage it was checked as.
    fn borrowed(&self) -> Checked<'_> {
        Checked {
            header: self.header.clone(),
            bytes: &self.bytes,
            raw_words: None,
        }
    }
}
