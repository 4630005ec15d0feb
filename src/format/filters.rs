//! The two kinds of filter a frame carries, behind one small sealed trait, so that one
//! encoder, one sender, one receiver and one decoded type serve both.

use crate::error::Result;
use crate::filter::bits::BitArray;
use crate::filter::counting::CountingBloomFilter;
use crate::filter::BloomFilter;

use super::decoded::{apply_bits, apply_counters, check_after, Decoded, Delta, Message};
use super::encoder::{Body, CounterBody, Frame, Settings};
use super::ids::{BitCoding, Coding, CounterCoding, FrameKind};

/// A filter that goes on the wire: [`BloomFilter`] or [`CountingBloomFilter`] (sealed).
///
/// Its [`Coding`](Filter::Coding) is the type of the codings an
/// [`Encoder`](super::Encoder) of it takes, its [`Xor`](Filter::Xor) what a
/// [`Delta`] between two of its generations carries.
pub trait Filter: sealed::Sealed + Clone + PartialEq + core::fmt::Debug {
    /// The codings of its payload: [`BitCoding`] or [`CounterCoding`].
    type Coding: Copy + Into<Coding> + core::fmt::Debug + PartialEq + Eq;
    /// The XOR of two generations: a [`BitArray`], or one `u8` per counter.
    type Xor: Clone + core::fmt::Debug + PartialEq + Eq;
}

/// A decoded frame of one filter kind: full, or a delta.
#[doc(hidden)]
#[derive(Debug)]
pub enum Part<F: Filter> {
    Full(Decoded<F>),
    Delta(Delta<F>),
}

pub(crate) mod sealed {
    use super::*;

    /// The machinery behind [`Filter`], out of reach of other crates.
    pub trait Sealed: Sized {
        /// What a caller expecting this kind calls it, for errors.
        const KIND: &'static str;

        /// The requested or smallest coding, raw when not smaller, budget checked.
        fn encode(settings: &Settings, filter: &Self, generation: u64) -> Result<Frame>;

        /// One coding, no fallback, generation 0.
        fn encode_with(settings: &Settings, filter: &Self, coding: Coding) -> Result<Frame>;

        /// The delta from `base` to `filter`.
        fn encode_delta(
            settings: &Settings,
            base: &Self,
            base_generation: u64,
            filter: &Self,
            generation: u64,
        ) -> Result<Frame>;

        /// Whether a delta between the two can be sent.
        fn same_shape(&self, other: &Self) -> bool;

        /// The message as a frame of this kind, if it is one.
        fn split(message: Message) -> Option<Part<Self>>
        where
            Self: Filter;

        /// Apply a delta to `base`, held as generation `base_generation`.
        fn apply(delta: &Delta<Self>, base: &Self, base_generation: u64) -> Result<Self>
        where
            Self: Filter;

        /// Whether a receiver of this kind applies positional deltas straight from the
        /// payload ([`FrameView::delta_positions`](super::super::view::FrameView)).
        const IN_PLACE_POSITIONS: bool;

        /// The digest of spec §5.1.
        fn digest_of(&self) -> u32;

        /// The frame for the step from `last` (digest `last_digest`, generation
        /// `base_generation`) to `filter`: a delta when `delta_allowed` and smaller, else a
        /// full frame. Only when it returns a frame are `last` and `last_digest` moved
        /// forward to `filter`.
        fn step(
            settings: &Settings,
            last: &mut Self,
            last_digest: &mut u32,
            base_generation: u64,
            filter: &Self,
            generation: u64,
            delta_allowed: bool,
        ) -> Result<Frame>;

        /// Apply a delta to `held` (digest `held_digest`, generation `base_generation`) in
        /// place; returns the new digest. On error `held` is unchanged.
        fn apply_in_place(
            delta: &Delta<Self>,
            held: &mut Self,
            held_digest: u32,
            base_generation: u64,
        ) -> Result<u32>
        where
            Self: Filter;

        /// Apply a positional delta's changed positions to `held` in place (Bloom filters
        /// only); returns the new digest. On error `held` is unchanged.
        fn apply_positions(
            header: &super::super::header::FrameHeader,
            positions: &[u64],
            held: &mut Self,
            held_digest: u32,
            base_generation: u64,
        ) -> Result<u32>;
    }
}

impl Filter for BloomFilter {
    type Coding = BitCoding;
    type Xor = BitArray;
}

impl sealed::Sealed for BloomFilter {
    const KIND: &'static str = "a Bloom filter";

    fn encode(settings: &Settings, filter: &Self, generation: u64) -> Result<Frame> {
        settings.choose(&Settings::full_body(filter, generation))
    }

    fn encode_with(settings: &Settings, filter: &Self, coding: Coding) -> Result<Frame> {
        Ok(settings.frame(&Settings::full_body(filter, 0), coding))
    }

    fn encode_delta(
        settings: &Settings,
        base: &Self,
        base_generation: u64,
        filter: &Self,
        generation: u64,
    ) -> Result<Frame> {
        check_after(base_generation, generation)?;
        let xor = filter.xor(base)?;
        settings.choose(&Body {
            kind: FrameKind::Delta {
                base_generation,
                base_digest: base.bits().digest(),
                result_digest: filter.bits().digest(),
            },
            params: filter.params(),
            n: filter.n(),
            generation,
            bits: &xor,
            theory_p: None,
        })
    }

    fn same_shape(&self, other: &Self) -> bool {
        self.params() == other.params()
    }

    fn split(message: Message) -> Option<Part<Self>> {
        match message {
            Message::Full(d) => Some(Part::Full(d)),
            Message::Delta(d) => Some(Part::Delta(d)),
            Message::Counting(_) | Message::CountingDelta(_) => None,
        }
    }

    fn apply(delta: &Delta<Self>, base: &Self, base_generation: u64) -> Result<Self> {
        apply_bits(delta, base, base_generation)
    }

    const IN_PLACE_POSITIONS: bool = true;

    fn digest_of(&self) -> u32 {
        self.bits().digest()
    }

    fn step(
        settings: &Settings,
        last: &mut Self,
        last_digest: &mut u32,
        base_generation: u64,
        filter: &Self,
        generation: u64,
        delta_allowed: bool,
    ) -> Result<Frame> {
        crate::stream::change::step(
            settings,
            last,
            last_digest,
            base_generation,
            filter,
            generation,
            delta_allowed,
        )
    }

    fn apply_in_place(
        delta: &Delta<Self>,
        held: &mut Self,
        held_digest: u32,
        base_generation: u64,
    ) -> Result<u32> {
        crate::stream::in_place::apply(&delta.header, held, held_digest, base_generation, |b, d| {
            crate::stream::in_place::apply_xor(b, &delta.xor, d)
        })
    }

    fn apply_positions(
        header: &super::header::FrameHeader,
        positions: &[u64],
        held: &mut Self,
        held_digest: u32,
        base_generation: u64,
    ) -> Result<u32> {
        crate::stream::in_place::apply(header, held, held_digest, base_generation, |b, d| {
            crate::stream::in_place::apply_positions(b, positions, d)
        })
    }
}

impl Filter for CountingBloomFilter {
    type Coding = CounterCoding;
    type Xor = Vec<u8>;
}

impl sealed::Sealed for CountingBloomFilter {
    const KIND: &'static str = "a counting filter";

    fn encode(settings: &Settings, filter: &Self, generation: u64) -> Result<Frame> {
        settings.choose_counters(&Settings::counting_body(filter, generation))
    }

    fn encode_with(settings: &Settings, filter: &Self, coding: Coding) -> Result<Frame> {
        settings.counter_frame(&Settings::counting_body(filter, 0), coding)
    }

    fn encode_delta(
        settings: &Settings,
        base: &Self,
        base_generation: u64,
        filter: &Self,
        generation: u64,
    ) -> Result<Frame> {
        check_after(base_generation, generation)?;
        let xor = filter.xor(base)?;
        settings.choose_counters(&CounterBody {
            kind: FrameKind::Delta {
                base_generation,
                base_digest: base.digest(),
                result_digest: filter.digest(),
            },
            params: filter.params(),
            width: filter.width(),
            n: filter.n(),
            generation,
            counters: &xor,
            theory_mean: None,
        })
    }

    fn same_shape(&self, other: &Self) -> bool {
        self.params() == other.params() && self.width() == other.width()
    }

    fn split(message: Message) -> Option<Part<Self>> {
        match message {
            Message::Counting(d) => Some(Part::Full(d)),
            Message::CountingDelta(d) => Some(Part::Delta(d)),
            Message::Full(_) | Message::Delta(_) => None,
        }
    }

    fn apply(delta: &Delta<Self>, base: &Self, base_generation: u64) -> Result<Self> {
        apply_counters(delta, base, base_generation)
    }

    // Counting deltas keep the decode-then-apply path: their XOR is of counters, which a
    // list of positions does not carry.
    const IN_PLACE_POSITIONS: bool = false;

    fn digest_of(&self) -> u32 {
        self.digest()
    }

    fn step(
        settings: &Settings,
        last: &mut Self,
        last_digest: &mut u32,
        base_generation: u64,
        filter: &Self,
        generation: u64,
        delta_allowed: bool,
    ) -> Result<Frame> {
        let delta = delta_allowed
            .then(|| Self::encode_delta(settings, last, base_generation, filter, generation));
        let full = Self::encode(settings, filter, generation);
        let frame = match (delta, full) {
            (Some(Ok(d)), Ok(f)) => {
                if d.encoded_len() < f.encoded_len() {
                    d
                } else {
                    f
                }
            }
            (Some(Ok(d)), Err(_)) => d,
            (_, full) => full?,
        };
        *last = filter.clone();
        *last_digest = filter.digest();
        Ok(frame)
    }

    fn apply_in_place(
        delta: &Delta<Self>,
        held: &mut Self,
        _held_digest: u32,
        base_generation: u64,
    ) -> Result<u32> {
        let next = apply_counters(delta, held, base_generation)?;
        let digest = next.digest();
        *held = next;
        Ok(digest)
    }

    fn apply_positions(
        header: &super::header::FrameHeader,
        _positions: &[u64],
        _held: &mut Self,
        _held_digest: u32,
        _base_generation: u64,
    ) -> Result<u32> {
        Err(crate::error::Error::UnexpectedFilterType {
            expected: Self::KIND,
            got: header.filter_type(),
        })
    }
}
