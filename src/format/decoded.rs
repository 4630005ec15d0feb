//! What a frame decodes to: filters, deltas and their application to a base.

use crate::error::{Error, Result};
use crate::filter::counting::CountingBloomFilter;
use crate::filter::BloomFilter;

use super::encoder::{Body, Chunking, CounterBody, Frame, PSource, Settings};
use super::filters::Filter;
use super::header::FrameHeader;
use super::ids::FrameKind;

/// A delta's generation must come after its base's.
pub(super) fn check_after(base_generation: u64, generation: u64) -> Result<()> {
    if generation <= base_generation {
        return Err(crate::error::invalid(
            "generation",
            format!("{generation} is not after the base generation {base_generation}"),
        ));
    }
    Ok(())
}

/// The checks of a delta against the receiver's base, in the spec's order (5.2): the
/// generation, the shape, the base digest. Returns the result digest to check.
pub(crate) fn check_delta_base(
    header: &FrameHeader,
    difference: Option<(&'static str, String, String)>,
    base_generation: u64,
    base_digest: impl FnOnce() -> u32,
) -> Result<u32> {
    let FrameKind::Delta {
        base_generation: wanted,
        base_digest: expected,
        result_digest,
    } = header.kind
    else {
        unreachable!("a delta frame always has a delta header")
    };
    if wanted != base_generation {
        return Err(Error::GenerationGap {
            have: Some(base_generation),
            base: wanted,
        });
    }
    if let Some((field, base, delta)) = difference {
        return Err(Error::Incompatible(format!(
            "{field} is {base} in the base and {delta} in the delta"
        )));
    }
    let actual = base_digest();
    if actual != expected {
        return Err(Error::BaseMismatch {
            generation: wanted,
            expected,
            actual,
        });
    }
    Ok(result_digest)
}

/// A decoded full frame: the filter and the header it came with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded<F = BloomFilter> {
    /// The filter, ready to query.
    pub filter: F,
    /// The frame's header.
    pub header: FrameHeader,
}

/// A decoded delta frame: the XOR of two generations (of their bit arrays, or counter by
/// counter of their counters), to apply to the base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delta<F: Filter = BloomFilter> {
    /// The frame's header (its kind is [`FrameKind::Delta`]).
    pub header: FrameHeader,
    /// `result ^ base`.
    pub xor: F::Xor,
}

impl<F: Filter> Delta<F> {
    /// The generation this delta applies to.
    pub fn base_generation(&self) -> u64 {
        match self.header.kind {
            FrameKind::Delta {
                base_generation, ..
            } => base_generation,
            FrameKind::Full => unreachable!("a Delta always has a delta header"),
        }
    }

    /// Apply the delta to `base`, which the caller holds as generation `base_generation`.
    /// Returns the new generation's filter; `base` is untouched, so an error leaves the
    /// caller's state as it was.
    ///
    /// Errors, each meaning the receiver must resynchronize with a full frame:
    /// [`Error::GenerationGap`] (the delta is for another generation),
    /// [`Error::Incompatible`] (other m, layout, k, hash family or counter width),
    /// [`Error::BaseMismatch`] (same generation number, different contents),
    /// [`Error::ResultMismatch`] (the result is not what the sender had).
    pub fn apply(&self, base: &F, base_generation: u64) -> Result<F> {
        F::apply(self, base, base_generation)
    }
}

/// [`Delta::apply`] for counting filters.
pub(super) fn apply_counters(
    delta: &Delta<CountingBloomFilter>,
    base: &CountingBloomFilter,
    base_generation: u64,
) -> Result<CountingBloomFilter> {
    let width = delta.header.counter_width.unwrap_or(0);
    let difference = base.difference(&delta.header.params, width);
    let result_digest =
        check_delta_base(&delta.header, difference, base_generation, || base.digest())?;
    let result = base.apply_xor(&delta.xor, delta.header.n)?;
    let actual = result.digest();
    if actual != result_digest {
        return Err(Error::ResultMismatch {
            generation: delta.header.generation,
            expected: result_digest,
            actual,
        });
    }
    Ok(result)
}

/// [`Delta::apply`] for Bloom filters.
pub(super) fn apply_bits(
    delta: &Delta<BloomFilter>,
    base: &BloomFilter,
    base_generation: u64,
) -> Result<BloomFilter> {
    let difference = base.params().difference(&delta.header.params);
    let result_digest = check_delta_base(&delta.header, difference, base_generation, || {
        base.bits().digest()
    })?;
    let mut bits = base.bits().clone();
    bits.xor_with(&delta.xor)?;
    let actual = bits.digest();
    if actual != result_digest {
        return Err(Error::ResultMismatch {
            generation: delta.header.generation,
            expected: result_digest,
            actual,
        });
    }
    BloomFilter::from_parts(delta.header.params.clone(), bits, delta.header.n)
}

/// Any decoded frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// A full Bloom filter.
    Full(Decoded<BloomFilter>),
    /// A delta between two generations of a Bloom filter.
    Delta(Delta<BloomFilter>),
    /// A full counting filter (filter type 3).
    Counting(Decoded<CountingBloomFilter>),
    /// A delta between two generations of a counting filter.
    CountingDelta(Delta<CountingBloomFilter>),
}

impl Message {
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
    /// frequency 0 to a value a counter holds ([`Error::InvalidParameter`]).
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
        let encoder = Settings {
            coding: Some(header.coding),
            p_source: header.q0.map_or(PSource::Measured, PSource::Fixed),
            counter_table: header.counter_table.clone(),
            chunking: header.chunk_shift.map_or(Chunking::Never, Chunking::Shift),
            metadata: header.metadata.clone(),
            ..Settings::default()
        };
        let counters = |counters| -> Result<CounterBody<'_>> {
            Ok(CounterBody {
                kind: header.kind,
                params: &header.params,
                width: header
                    .counter_width
                    .ok_or_else(|| crate::error::invalid("counter width", "missing"))?,
                n: header.n,
                generation: header.generation,
                counters,
                theory_mean: None,
            })
        };
        let bits = |bits| Body {
            kind: header.kind,
            params: &header.params,
            n: header.n,
            generation: header.generation,
            bits,
            theory_p: None,
        };
        match self {
            Message::Full(d) => encoder
                .frame(&bits(d.filter.bits()), header.coding)
                .with_restart(header.restart),
            Message::Delta(d) => Ok(encoder.frame(&bits(&d.xor), header.coding)),
            Message::Counting(d) => encoder
                .counter_frame(&counters(d.filter.counters())?, header.coding)?
                .with_restart(header.restart),
            Message::CountingDelta(d) => encoder.counter_frame(&counters(&d.xor)?, header.coding),
        }
    }
}
