//! The receiving side: frames applied in order, every gap, duplicate or mismatch a typed
//! error that leaves the filter unchanged.

use crate::error::{Error, Result};
use crate::filter::counting::CountingBloomFilter;
use crate::filter::BloomFilter;
use crate::format::{decode_message, Limits, Message, FILTER_TYPE_COUNTING};

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

/// Applies a sender's frames in order. On any error its filter and generation stay as they
/// were; [`Error::GenerationGap`], [`Error::BaseMismatch`] and [`Error::ResultMismatch`]
/// mean it needs a full frame, [`Error::StaleGeneration`] that the frame was a duplicate or
/// arrived late.
#[derive(Debug, Clone)]
pub struct Receiver {
    limits: Limits,
    current: Option<(BloomFilter, u64)>,
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

    /// Apply a decoded frame. A counting filter's frame is
    /// [`Error::UnexpectedFilterType`] (use a [`CountingReceiver`]).
    pub fn apply(&mut self, message: Message) -> Result<Update> {
        let generation = message.header().generation;
        let have = self.generation();
        if message.header().is_counting() {
            return Err(Error::UnexpectedFilterType {
                expected: "a Bloom filter",
                got: FILTER_TYPE_COUNTING,
            });
        }
        check_fresh(have, generation)?;
        match message {
            Message::Full(d) => {
                let skipped = have.map_or(0, |h| generation - h - 1);
                self.current = Some((d.filter, generation));
                Ok(Update::Full {
                    generation,
                    skipped,
                })
            }
            Message::Delta(delta) => {
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
            Message::Counting(_) | Message::CountingDelta(_) => {
                unreachable!("counting frames were refused above")
            }
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
        check_fresh(have, generation)?;
        match message {
            Message::Counting(d) => {
                let skipped = have.map_or(0, |h| generation - h - 1);
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
