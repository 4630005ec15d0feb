//! The kinds of filter a frame carries, behind one small sealed trait, so that one encoder,
//! one sender, one receiver and one decoded type serve them all: [`BloomFilter`] (filter types
//! 0 to 2), [`CountingBloomFilter`] (type 3) and [`AnyFilter`] (either).

use crate::filter::any::{AnyFilter, FilterMut, FilterRef};
use crate::filter::counting::CountingBloomFilter;
use crate::filter::BloomFilter;

use super::header::FrameHeader;
use super::ids::{BitCoding, Coding, CounterCoding};

/// A filter that goes on the wire: [`BloomFilter`], [`CountingBloomFilter`] or
/// [`AnyFilter`] (sealed). Its [`Coding`](Filter::Coding) is the type of the codings an
/// [`Encoder`](super::Encoder) of it takes.
pub trait Filter: sealed::Sealed + Clone + PartialEq + core::fmt::Debug {
    /// The codings of its payload: [`BitCoding`], [`CounterCoding`], or for
    /// [`AnyFilter`] any [`Coding`] (one of the other kind is
    /// [`Error::InvalidParameter`](crate::Error::InvalidParameter) when encoding).
    type Coding: Copy + Into<Coding> + core::fmt::Debug + core::fmt::Display + Eq;
}

pub(crate) mod sealed {
    use super::*;

    /// What differs between the kinds, out of reach of other crates.
    #[allow(unreachable_pub)]
    pub trait Sealed: Sized {
        /// What a caller expecting this kind calls it, for errors.
        const KIND: &'static str;

        /// Whether a frame with this header carries this kind.
        fn admits(header: &FrameHeader) -> bool;

        /// The filter, borrowed as one of the two kinds.
        fn as_any(&self) -> FilterRef<'_>;

        /// The filter, mutably borrowed as one of the two kinds.
        fn as_any_mut(&mut self) -> FilterMut<'_>;

        /// The filter of this kind a decoded filter is, if it is one.
        fn from_any(filter: AnyFilter) -> Option<Self>;
    }
}

/// [`Filter`] and [`sealed::Sealed`] for a filter type that is the variant `$variant` of
/// [`AnyFilter`] (the other variant `$other`), whose frames are those with
/// `is_counting() == $counting`.
macro_rules! one_kind {
    ($filter:ty, $coding:ty, $kind:literal, $variant:ident, $other:ident, $counting:literal) => {
        impl Filter for $filter {
            type Coding = $coding;
        }

        impl sealed::Sealed for $filter {
            const KIND: &'static str = $kind;

            fn admits(header: &FrameHeader) -> bool {
                header.is_counting() == $counting
            }

            fn as_any(&self) -> FilterRef<'_> {
                FilterRef::$variant(self)
            }

            fn as_any_mut(&mut self) -> FilterMut<'_> {
                FilterMut::$variant(self)
            }

            fn from_any(filter: AnyFilter) -> Option<Self> {
                match filter {
                    AnyFilter::$variant(f) => Some(f),
                    AnyFilter::$other(_) => None,
                }
            }
        }
    };
}

one_kind!(
    BloomFilter,
    BitCoding,
    "a Bloom filter",
    Bloom,
    Counting,
    false
);
one_kind!(
    CountingBloomFilter,
    CounterCoding,
    "a counting filter",
    Counting,
    Bloom,
    true
);

impl Filter for AnyFilter {
    type Coding = Coding;
}

impl sealed::Sealed for AnyFilter {
    const KIND: &'static str = "a Bloom filter or a counting filter";

    fn admits(_: &FrameHeader) -> bool {
        true
    }

    fn as_any(&self) -> FilterRef<'_> {
        self.as_ref_any()
    }

    fn as_any_mut(&mut self) -> FilterMut<'_> {
        self.as_mut_any()
    }

    fn from_any(filter: AnyFilter) -> Option<Self> {
        Some(filter)
    }
}
