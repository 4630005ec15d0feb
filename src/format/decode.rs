//! The decode entry points: exact, prefix and `Buf` forms.

use bytes::{Buf, Bytes};

use crate::entropy::payload;
use crate::error::{Error, Result};
use crate::filter::counting::CountingBloomFilter;
use crate::filter::BloomFilter;

use super::decoded::{CountingDecoded, CountingDeltaFrame, Decoded, DeltaFrame, Message};
use super::header::{FrameHeader, MAX_HEADER_LEN};
use super::ids::{FrameKind, FILTER_TYPE_COUNTING};
use super::limits::Limits;
use super::view::FrameView;

/// Decode the frame at the start of `input`, full or delta; returns it and the bytes it
/// took. Bytes after the frame are left alone (for streams). A short input gives
/// [`Error::Incomplete`] with how many more bytes are needed.
pub fn decode_message_prefix(input: &[u8], limits: &Limits) -> Result<(Message, usize)> {
    let view = FrameView::parse(input, limits)?;
    let len = view.frame_len();
    Ok((message_of(view)?, len))
}

/// The message a checked frame carries, its payload decoded.
pub(crate) fn message_of(view: FrameView<'_>) -> Result<Message> {
    if let Some(width) = view.header.counter_width {
        let (header, payload) = (view.header, view.payload);
        let m = header.params.m();
        let counters = payload::decode_counters(
            header.coding,
            payload,
            m,
            width,
            header.counter_table.as_ref(),
        )
        .map_err(|reason| Error::CorruptPayload {
            reason,
            offset: header.header_len,
        })?;
        let message = match header.kind {
            FrameKind::Full => Message::Counting(CountingDecoded {
                filter: CountingBloomFilter::from_counters(
                    header.params.clone(),
                    width,
                    counters,
                    header.n,
                )?,
                header,
            }),
            FrameKind::Delta { .. } => Message::CountingDelta(CountingDeltaFrame {
                header,
                xor: counters,
            }),
        };
        return Ok(message);
    }
    let bits = view.decode()?;
    let header = view.header;
    let message = match header.kind {
        FrameKind::Full => Message::Full(Decoded {
            filter: BloomFilter::from_parts(header.params.clone(), bits, header.n)?,
            header,
        }),
        FrameKind::Delta { .. } => Message::Delta(DeltaFrame { header, xor: bits }),
    };
    Ok(message)
}

/// [`Error::TrailingBytes`] unless the frame is all of `input`.
pub(crate) fn check_whole(input: &[u8], len: usize) -> Result<()> {
    if len != input.len() {
        return Err(Error::TrailingBytes {
            count: input.len() - len,
            offset: len,
        });
    }
    Ok(())
}

/// Decode an input that holds exactly one frame, full or delta.
pub fn decode_message(input: &[u8], limits: &Limits) -> Result<Message> {
    let (message, len) = decode_message_prefix(input, limits)?;
    if len != input.len() {
        return Err(Error::TrailingBytes {
            count: input.len() - len,
            offset: len,
        });
    }
    Ok(message)
}

fn expect_full(message: Message) -> Result<Decoded> {
    match message {
        Message::Full(d) => Ok(d),
        Message::Delta(_) | Message::CountingDelta(_) => Err(Error::UnexpectedDelta),
        Message::Counting(_) => Err(Error::UnexpectedFilterType {
            expected: "a Bloom filter",
            got: FILTER_TYPE_COUNTING,
        }),
    }
}

/// Decode an input that holds exactly one full frame of a counting filter (filter type 3).
/// A Bloom filter's frame is [`Error::UnexpectedFilterType`], a delta
/// [`Error::UnexpectedDelta`].
pub fn decode_counting(input: &[u8], limits: &Limits) -> Result<CountingDecoded> {
    match decode_message(input, limits)? {
        Message::Counting(d) => Ok(d),
        Message::Delta(_) | Message::CountingDelta(_) => Err(Error::UnexpectedDelta),
        Message::Full(d) => Err(Error::UnexpectedFilterType {
            expected: "a counting filter",
            got: d.header.filter_type(),
        }),
    }
}

/// Decode the full frame at the start of `input`; returns it and the bytes it took (see
/// [`decode_message_prefix`]). A delta frame is [`Error::UnexpectedDelta`].
pub fn decode_prefix(input: &[u8], limits: &Limits) -> Result<(Decoded, usize)> {
    let (message, len) = decode_message_prefix(input, limits)?;
    Ok((expect_full(message)?, len))
}

/// Decode an input that holds exactly one full frame.
pub fn decode(input: &[u8], limits: &Limits) -> Result<Decoded> {
    expect_full(decode_message(input, limits)?)
}

/// Decode exactly one frame held in `Bytes`.
pub fn decode_bytes(input: &Bytes, limits: &Limits) -> Result<Decoded> {
    decode(input, limits)
}

/// Decode the next frame from a buffer and advance past it. On [`Error::Incomplete`] the
/// buffer is left untouched so more input can be appended.
///
/// The frame is found through the chunks `buf` exposes with [`Buf::chunks_vectored`]
/// (every byte for `Bytes`, `BytesMut`, `VecDeque<u8>` and chains of them); a frame split
/// across chunks is gathered into one allocation of its limit-checked length. Bytes a buffer
/// does not expose count as not yet received.
pub fn decode_buf<B: Buf>(buf: &mut B, limits: &Limits) -> Result<Decoded> {
    let mut slices = [std::io::IoSlice::new(&[]); 64];
    let count = buf.chunks_vectored(&mut slices);
    let chunks: Vec<&[u8]> = slices[..count].iter().map(|s| &s[..]).collect();
    let first = chunks.first().copied().unwrap_or(&[]);
    let header = match FrameHeader::parse(first, limits) {
        Err(Error::Incomplete { .. }) if chunks.len() > 1 => {
            FrameHeader::parse(&gather(&chunks, MAX_HEADER_LEN), limits)?
        }
        other => other?,
    };
    let len = header.frame_len();
    let exposed: usize = chunks.iter().map(|c| c.len()).sum();
    if exposed < len {
        return Err(Error::Incomplete {
            needed: len - exposed,
        });
    }
    let decoded = if first.len() >= len {
        decode_prefix(&first[..len], limits)?.0
    } else {
        decode_prefix(&gather(&chunks, len), limits)?.0
    };
    buf.advance(len);
    Ok(decoded)
}

/// The first `len` bytes of a sequence of chunks (fewer if they hold fewer).
fn gather(chunks: &[&[u8]], len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    for c in chunks {
        let take = c.len().min(len - out.len());
        out.extend_from_slice(&c[..take]);
    }
    out
}
