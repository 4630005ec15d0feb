//! The receiving side: frames applied in order, every gap, duplicate or mismatch a typed
//! error that leaves the filter unchanged.

use crate::error::{Error, Result};
use crate::filter::bits::BitArray;
use crate::filter::counting::CountingBloomFilter;
use crate::filter::BloomFilter;
use crate::format::{
    check_delta_base, check_whole, decode_message, message_of, FrameHeader, FrameKind, FrameView,
    Limits, Message, FILTER_TYPE_COUNTING,
};

use super::in_place::{self, Refused};

/// A frame of generation `got` is stale unless it is newer than `have`.
fn check_fresh(have: Option<u64>, got: u64) -> Result<()> {
    match have {
        Some(have) if got <= have => Err(Error::StaleGeneration { have, got }),
        _ => Ok(()),
    }
}

/// What a [`Receiver`] did with a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Update {
    /// A full frame replaced the filter; `skipped` generations were never seen.
    Full {
        /// The new generation.
        generation: u64,
        /// Generations between the previous one and this one that were not received.
        skipped: u64,
    },
    /// A delta advanced the filter by one step.
    Delta {
        /// The new generation.
        generation: u64,
    },
}

/// Applies a sender's frames in order. On any error its filter, generation and digest stay
/// as they were; [`Error::GenerationGap`], [`Error::BaseMismatch`] and
/// [`Error::ResultMismatch`] mean it needs a full frame, [`Error::StaleGeneration`] that the
/// frame was a duplicate or arrived late.
///
/// It keeps the digest of the filter it holds (computed once when it accepts a full frame,
/// then the verified result digest of each delta), so a delta's base check costs nothing.
/// A delta is applied in place on the held filter: the changed bits are flipped, the
/// result's digest is computed in one pass and compared, and on a mismatch the flips are
/// undone. A full frame with the restart flag (spec §5.2) is applied whatever generation
/// the receiver holds: the sender's numbering starts again there.
#[derive(Debug, Clone)]
pub struct Receiver {
    limits: Limits,
    current: Option<Held>,
}

/// The filter a [`Receiver`] holds, its generation and its digest.
#[derive(Debug, Clone)]
struct Held {
    filter: BloomFilter,
    generation: u64,
    digest: u32,
}

/// Generations skipped between `have` and a full frame of generation `got` (0 for a
/// restart at or below `have`).
fn skipped(have: Option<u64>, got: u64) -> u64 {
    have.map_or(0, |h| got.saturating_sub(h).saturating_sub(1))
}

impl Receiver {
    /// A receiver with no filter yet, decoding within `limits`.
    pub fn new(limits: Limits) -> Self {
        Receiver {
            limits,
            current: None,
        }
    }

    /// The current filter, once a full frame has arrived.
    pub fn filter(&self) -> Option<&BloomFilter> {
        self.current.as_ref().map(|h| &h.filter)
    }

    /// The current generation.
    pub fn generation(&self) -> Option<u64> {
        self.current.as_ref().map(|h| h.generation)
    }

    /// The digest of the current filter's bits (spec §5.1), kept rather than recomputed.
    pub fn digest(&self) -> Option<u32> {
        self.current.as_ref().map(|h| h.digest)
    }

    /// Decode and apply one frame (exactly one, no trailing bytes). A positional delta
    /// goes from the payload straight into the held filter: its positions are decoded
    /// (bounded by the payload's length), the generations, shape and base digest checked,
    /// and the bits flipped in place (see [`Receiver`]); other frames are decoded, then
    /// applied as by [`Receiver::apply`].
    pub fn receive(&mut self, frame: &[u8]) -> Result<Update> {
        let view = FrameView::parse(frame, &self.limits)?;
        let len = view.frame_len();
        if let Some(positions) = view.delta_positions() {
            let positions = positions?;
            check_whole(frame, len)?;
            let header = view.header();
            check_fresh(self.generation(), header.generation)?;
            return self.apply_in_place(header, |bits, result_digest| {
                in_place::apply_positions(bits, &positions, result_digest)
            });
        }
        let message = message_of(view)?;
        check_whole(frame, len)?;
        self.apply(message)
    }

    /// Apply a decoded frame. A counting filter's frame is
    /// [`Error::UnexpectedFilterType`] (use a [`CountingReceiver`]).
    pub fn apply(&mut self, message: Message) -> Result<Update> {
        let header = message.header();
        let generation = header.generation;
        let have = self.generation();
        if header.is_counting() {
            return Err(Error::UnexpectedFilterType {
                expected: "a Bloom filter",
                got: FILTER_TYPE_COUNTING,
            });
        }
        if !header.restart {
            check_fresh(have, generation)?;
        }
        match message {
            Message::Full(d) => {
                let digest = d.filter.bits().digest();
                self.current = Some(Held {
                    filter: d.filter,
                    generation,
                    digest,
                });
                Ok(Update::Full {
                    generation,
                    skipped: skipped(have, generation),
                })
            }
            Message::Delta(delta) => self.apply_in_place(&delta.header, |bits, result_digest| {
                in_place::apply_xor(bits, &delta.xor, result_digest)
            }),
            Message::Counting(_) | Message::CountingDelta(_) => {
                unreachable!("counting frames were refused above")
            }
        }
    }

    /// Apply a delta whose header passed the freshness check, in place: the generation,
    /// shape and base digest checked against what is held, then `apply` changes the held
    /// bits and checks the result digest (restoring the bits on a mismatch).
    fn apply_in_place(
        &mut self,
        header: &FrameHeader,
        apply: impl FnOnce(&mut BitArray, u32) -> core::result::Result<u32, Refused>,
    ) -> Result<Update> {
        let generation = header.generation;
        let Some(held) = &mut self.current else {
            let FrameKind::Delta {
                base_generation, ..
            } = header.kind
            else {
                unreachable!("only deltas are applied in place")
            };
            return Err(Error::GenerationGap {
                have: None,
                base: base_generation,
            });
        };
        let same_shape = held.filter.params() == &header.params;
        let result_digest = check_delta_base(header, same_shape, held.generation, || held.digest)?;
        match apply(held.filter.bits_mut(), result_digest) {
            Ok(digest) => {
                held.digest = digest;
                held.filter.set_n(header.n);
                held.generation = generation;
                Ok(Update::Delta { generation })
            }
            Err(Refused::Digest { actual }) => Err(Error::ResultMismatch {
                generation,
                expected: result_digest,
                actual,
            }),
            Err(Refused::OutOfRange(p)) => Err(crate::error::invalid(
                "delta position",
                format!("{p} is not below m = {}", header.params.m()),
            )),
        }
    }
}

/// Applies a [`CountingSender`]'s frames in order, with the checks and errors of
/// [`Receiver`]; a Bloom filter's frame is [`Error::UnexpectedFilterType`].
#[derive(Debug, Clone)]
pub struct CountingReceiver {
    limits: Limits,
    current: Option<(CountingBloomFilter, u64)>,
}

impl CountingReceiver {
    /// A receiver with no filter yet, decoding within `limits`.
    pub fn new(limits: Limits) -> Self {
        CountingReceiver {
            limits,
            current: None,
        }
    }

    /// The current counting filter, once a full frame has arrived.
    pub fn filter(&self) -> Option<&CountingBloomFilter> {
        self.current.as_ref().map(|(f, _)| f)
    }

    /// The current generation.
    pub fn generation(&self) -> Option<u64> {
        self.current.as_ref().map(|&(_, g)| g)
    }

    /// Decode and apply one frame (exactly one, no trailing bytes).
    pub fn receive(&mut self, frame: &[u8]) -> Result<Update> {
        let message = decode_message(frame, &self.limits)?;
        self.apply(message)
    }

    /// Apply a decoded frame.
    pub fn apply(&mut self, message: Message) -> Result<Update> {
        let generation = message.header().generation;
        let have = self.generation();
        if !message.header().is_counting() {
            return Err(Error::UnexpectedFilterType {
                expected: "a counting filter",
                got: message.header().filter_type(),
            });
        }
        if !message.header().restart {
            check_fresh(have, generation)?;
        }
        match message {
            Message::Counting(d) => {
                let skipped = skipped(have, generation);
                self.current = Some((d.filter, generation));
                Ok(Update::Full {
                    generation,
                    skipped,
                })
            }
            Message::CountingDelta(delta) => {
                let Some((base, base_generation)) = &self.current else {
                    return Err(Error::GenerationGap {
                        have: None,
                        base: delta.base_generation(),
                    });
                };
                let next = delta.apply(base, *base_generation)?;
                self.current = Some((next, generation));
                Ok(Update::Delta { generation })
            }
            Message::Full(_) | Message::Delta(_) => {
                unreachable!("Bloom filter frames were refused above")
            }
        }
    }
}
