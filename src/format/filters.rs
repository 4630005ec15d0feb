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
}
