//! What a frame decodes to: a filter, or a delta between two generations, with its header.

use crate::error::Result;
use crate::filter::bits::BitArray;
use crate::filter::counting::CountingBloomFilter;
use crate::filter::BloomFilter;

use super::encoder::{reframe, Contents};
use super::frame::Frame;
use super::header::FrameHeader;
use super::ids::FrameKind;
use super::view::Payload;

/// A decoded full frame: the filter and the header it came with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded<F = BloomFilter> {
    /// The filter, ready to query.
    pub filter: F,
    /// The frame's header.
    pub header: FrameHeader,
}

/// A decoded delta frame: the XOR of two generations, of their bit arrays (`X` is a
/// [`BitArray`]) or counter by counter of their counters (`X` is one `u8` per counter), to
/// apply to the base (`Delta::apply`, of the stream layer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delta<X = BitArray> {
    /// The frame's header (its kind is [`FrameKind::Delta`]).
    pub header: FrameHeader,
    /// `result ^ base`.
    pub xor: X,
}

impl<X> Delta<X> {
    /// The generation this delta applies to.
    pub fn base_generation(&self) -> u64 {
        match self.header.kind {
            FrameKind::Delta {
                base_generation, ..
            } => base_generation,
            FrameKind::Full => unreachable!("a Delta always has a delta header"),
        }
    }
}

/// Any decoded frame.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Message {
    /// A full Bloom filter.
    Full(Decoded<BloomFilter>),
    /// A delta between two generations of a Bloom filter.
    Delta(Delta),
    /// A full counting filter (filter type 3).
    Counting(Decoded<CountingBloomFilter>),
    /// A delta between two generations of a counting filter.
    CountingDelta(Delta<Vec<u8>>),
}

impl Message {
    /// The message a frame carries: its header and its decoded payload.
    pub(crate) fn of_payload(header: FrameHeader, payload: Payload) -> Result<Message> {
        let (counters, width) = match (payload, header.counter_width) {
            (Payload::Bits(bits), _) => return Message::of_bits(header, bits),
            (Payload::Counters(counters), Some(width)) => (counters, width),
            (Payload::Counters(_), None) => {
                return Err(crate::error::invalid("counter width", "missing"))
            }
        };
        Ok(match header.kind {
            FrameKind::Full => Message::Counting(Decoded {
                filter: CountingBloomFilter::from_counters(
                    header.params.clone(),
                    width,
                    counters,
                    header.n,
                )?,
                header,
            }),
            FrameKind::Delta { .. } => Message::CountingDelta(Delta {
                header,
                xor: counters,
            }),
        })
    }

    /// The message of a bit array's frame: a filter, or the XOR a delta carries.
    fn of_bits(header: FrameHeader, bits: BitArray) -> Result<Message> {
        Ok(match header.kind {
            FrameKind::Full => Message::Full(Decoded {
                filter: BloomFilter::from_parts(header.params.clone(), bits, header.n)?,
                header,
            }),
            FrameKind::Delta { .. } => Message::Delta(Delta { header, xor: bits }),
        })
    }

    /// The frame's header.
    pub fn header(&self) -> &FrameHeader {
        match self {
            Message::Full(d) => &d.header,
            Message::Delta(d) => &d.header,
            Message::Counting(d) => &d.header,
            Message::CountingDelta(d) => &d.header,
        }
    }

    /// The frame that carries this message: the same header fields, coding, q0, counter
    /// table and chunk shift, the payload coded again. Every frame a decoder accepts is
    /// canonical (spec section 2.3), so for a decoded message these are exactly the bytes it
    /// was decoded from; a relay can forward what it decoded without keeping the input.
    /// The frame is untagged whatever the message's [`tag`](FrameHeader::tag): a relay
    /// that holds the key tags it again with [`Frame::with_key`] (the same bytes as the
    /// tagged frame it decoded).
    ///
    /// Errors only for a message put together by hand whose header does not fit its
    /// contents: a counting message without a counter width, or whose counter table gives
    /// frequency 0 to a value a counter holds ([`Error::InvalidParameter`](crate::Error::InvalidParameter)).
    ///
    /// ```
    /// use bloomwire::{decode, BitCoding, BloomFilter, Encoder, HashFamily, Limits, Message, Params};
    /// let mut f = BloomFilter::new(Params::standard(500, 2, HashFamily::default()).unwrap());
    /// f.insert(b"x");
    /// let wire = Encoder::new().encode_with(&f, BitCoding::KnownP).unwrap().to_bytes();
    /// let message: Message = decode(&wire, &Limits::default()).unwrap();
    /// assert_eq!(message.to_frame().unwrap().to_bytes(), wire);
    /// ```
    pub fn to_frame(&self) -> Result<Frame> {
        let header = self.header();
        reframe(
            header,
            match self {
                Message::Full(d) => Contents::Bits(d.filter.bits()),
                Message::Delta(d) => Contents::Bits(&d.xor),
                Message::Counting(d) => Contents::Counters(d.filter.counters()),
                Message::CountingDelta(d) => Contents::Counters(&d.xor),
            },
        )
    }
}
