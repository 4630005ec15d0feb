//! The decode entry points (exact, prefix and `Buf` forms) and the driver of the stages of
//! decoding, each entered once and in order: [`Checked`] (header, length, checksum, tag),
//! then [`FrameView`] (chunk table, payload decoded), then [`Message`] (the payload and the
//! header as a filter or a delta). No stage calls a later one.

use bytes::Buf;

use crate::error::{Error, Result};
use crate::filter::any::AnyFilter;
use crate::filter::bits::BitArray;

use super::auth::Checks;
use super::checked::{whole, Checked};
use super::header::{max_header_len, FrameHeader};
use super::kind::Filter;
use super::message::{Decoded, Message};
use super::view::{FrameView, Payload};

/// The stages after the checks: the message a checked frame carries. A raw bit array whose
/// words were copied in the checksum's pass ([`Checked::copying_raw`]) skips the view:
/// what is left of its decoding is the payload's one rule (spec §4.1).
pub(crate) fn finish(mut checked: Checked<'_>) -> Result<Message> {
    let Some(words) = checked.raw_words.take() else {
        return finish_view(FrameView::of_checked(checked)?);
    };
    let (m, at) = (checked.header.params.m(), checked.header.header_len);
    crate::entropy::coding::check_raw(checked.payload(), m)
        .map_err(|reason| Error::CorruptPayload { reason, offset: at })?;
    Message::of_payload(
        checked.header,
        Payload::Bits(BitArray::from_words(words, m)?),
    )
}

/// The last stages: the message a view's frame carries, its payload decoded.
pub(crate) fn finish_view(view: FrameView<'_>) -> Result<Message> {
    let payload = view.decode_payload()?;
    Message::of_payload(view.header, payload)
}

/// The frame at the start of `input`, decoded, and the bytes it took.
fn message_prefix(input: &[u8], checks: &impl Checks) -> Result<(Message, usize)> {
    let checked = Checked::copying_raw(input, checks.limits(), checks.key())?;
    let len = checked.bytes.len();
    Ok((finish(checked)?, len))
}

/// What a frame decodes into: any [`Message`], or the full frame of one filter kind,
/// [`Decoded<F>`] (sealed).
pub trait Decodable: sealed::FromMessage {}

impl Decodable for Message {}
impl<F: Filter> Decodable for Decoded<F> {}

pub(crate) mod sealed {
    use super::*;

    /// The conversion behind [`Decodable`].
    pub trait FromMessage: Sized {
        /// `message` as this type, or why not.
        fn from_message(message: Message) -> Result<Self>;
    }

    impl FromMessage for Message {
        fn from_message(message: Message) -> Result<Self> {
            Ok(message)
        }
    }

    impl<F: Filter> FromMessage for Decoded<F> {
        /// A delta is [`Error::UnexpectedDelta`], a frame of another filter kind
        /// [`Error::UnexpectedFilterType`].
        fn from_message(message: Message) -> Result<Self> {
            let (filter, header) = match message {
                Message::Full(d) => (AnyFilter::Bloom(d.filter), d.header),
                Message::Counting(d) => (AnyFilter::Counting(d.filter), d.header),
                Message::Delta(_) | Message::CountingDelta(_) => {
                    return Err(Error::UnexpectedDelta)
                }
            };
            let got = header.filter_type();
            match F::from_any(filter) {
                Some(filter) => Ok(Decoded { filter, header }),
                None => Err(Error::UnexpectedFilterType {
                    expected: F::KIND,
                    got,
                }),
            }
        }
    }
}

/// Decode an input that holds exactly one frame, into any [`Message`] or into the full
/// frame of one filter kind:
///
/// ```
/// use bloomwire::{decode, BloomFilter, Decoded, Encoder, HashFamily, Limits, Message, Params};
/// let mut f = BloomFilter::new(Params::standard(1000, 2, HashFamily::default()).unwrap());
/// f.insert(b"x");
/// let wire = Encoder::new().encode(&f).unwrap().to_bytes();
/// let back: Decoded = decode(&wire, &Limits::default()).unwrap();
/// assert_eq!(back.filter, f);
/// let message: Message = decode(&wire, &Limits::default()).unwrap();
/// assert_eq!(message.header().n, 1);
/// ```
///
/// Bytes after the frame are [`Error::TrailingBytes`]; [`decode_prefix`] leaves them alone.
///
/// `checks` is the decoder's [`Limits`](crate::Limits), or a [`Verifier`](crate::Verifier)
/// that holds the limits and a key: then only frames authenticated with the key decode
/// (spec §2.5), and the tag is checked before the payload is read. Without a key a tagged
/// frame decodes too, its tag skipped: its header's [`tag`](FrameHeader::tag) says
/// [`Tag::Unverified`](crate::Tag::Unverified).
pub fn decode<T: Decodable>(input: &[u8], checks: &impl Checks) -> Result<T> {
    let (message, len) = message_prefix(input, checks)?;
    whole(input, len)?;
    T::from_message(message)
}

impl Decoded {
    /// Decode an input that holds exactly one full frame of a Bloom filter: [`decode`] with
    /// the type named, for the common case.
    ///
    /// ```
    /// use bloomwire::{BloomFilter, Decoded, Encoder, HashFamily, Limits, Params};
    /// let mut f = BloomFilter::new(Params::standard(1000, 2, HashFamily::default()).unwrap());
    /// f.insert(b"x");
    /// let wire = Encoder::new().encode(&f).unwrap().to_bytes();
    /// let d = Decoded::from_frame(&wire, &Limits::default()).unwrap();
    /// assert!(d.filter.contains(b"x"));
    /// ```
    pub fn from_frame(input: &[u8], checks: &impl Checks) -> Result<Decoded> {
        decode(input, checks)
    }
}

/// Decode the frame at the start of `input` (see [`decode`]); returns it and the bytes it
/// took. Bytes after the frame are left alone (for streams). A short input gives
/// [`Error::Incomplete`] with how many more bytes are needed.
pub fn decode_prefix<T: Decodable>(input: &[u8], checks: &impl Checks) -> Result<(T, usize)> {
    let (message, len) = message_prefix(input, checks)?;
    Ok((T::from_message(message)?, len))
}

/// Decode the next frame from a buffer (see [`decode`]) and advance past it. On
/// [`Error::Incomplete`] the buffer is left untouched so more input can be appended.
///
/// The frame is found through the chunks `buf` exposes with [`Buf::chunks_vectored`]
/// (every byte for `Bytes`, `BytesMut`, `VecDeque<u8>` and chains of them, in any number of
/// chunks); a frame split across chunks is gathered into one allocation of its
/// limit-checked length. Bytes a buffer does not expose count as not yet received.
pub fn decode_buf<T: Decodable, B: Buf>(buf: &mut B, checks: &impl Checks) -> Result<T> {
    let limits = checks.limits();
    let (len, decoded) = {
        let max_header = max_header_len(limits);
        let slices = exposed(buf, max_header);
        let chunks: Vec<&[u8]> = slices.iter().map(|s| &s[..]).collect();
        let first = chunks.first().copied().unwrap_or(&[]);
        let header = match FrameHeader::parse(first, limits) {
            Err(Error::Incomplete { .. }) if chunks.len() > 1 => {
                FrameHeader::parse(&gather(&chunks, max_header), limits)?
            }
            other => other?,
        };
        let len = header.frame_len();
        let decoded = if first.len() >= len {
            decode_prefix(&first[..len], checks)?.0
        } else {
            let slices = exposed(buf, len);
            let chunks: Vec<&[u8]> = slices.iter().map(|s| &s[..]).collect();
            let shown: usize = chunks.iter().map(|c| c.len()).sum();
            if shown < len {
                return Err(Error::Incomplete {
                    needed: len - shown,
                });
            }
            decode_prefix(&gather(&chunks, len), checks)?.0
        };
        (len, decoded)
    };
    buf.advance(len);
    Ok(decoded)
}

/// The chunks `buf` exposes, covering at least `want` bytes when it holds that many: the
/// array of slices grows while it comes back full (a fixed array of 64 reported a frame in
/// 65 pieces as incomplete), to at most one slice a byte wanted.
fn exposed<B: Buf>(buf: &B, want: usize) -> Vec<std::io::IoSlice<'_>> {
    // Small to start with: a frame in one or a few pieces costs a few hundred bytes of
    // bookkeeping, within what the bomb tests allow a refused frame.
    let mut cap = 8;
    loop {
        let mut slices = vec![std::io::IoSlice::new(&[]); cap];
        let count = buf.chunks_vectored(&mut slices);
        let shown: usize = slices[..count].iter().map(|s| s.len()).sum();
        if count < cap || shown >= want || cap > want {
            slices.truncate(count);
            return slices;
        }
        cap *= 2;
    }
}

/// The first `len` bytes of a sequence of chunks (fewer if they hold fewer).
fn gather(chunks: &[&[u8]], len: usize) -> Vec<u8> {
    // No more than the chunks hold: `len` may be a bound far above them (the largest header
    // that unlimited limits allow, with metadata, is `usize::MAX`).
    let shown: usize = chunks.iter().map(|c| c.len()).sum();
    let mut out = Vec::with_capacity(len.min(shown));
    for c in chunks {
        let take = c.len().min(len - out.len());
        out.extend_from_slice(&c[..take]);
    }
    out
}
