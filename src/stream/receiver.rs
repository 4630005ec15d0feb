//! The receiving side: frames applied in order, every gap, duplicate or mismatch a typed
//! error that leaves the filter unchanged.

use crate::error::{Error, Result};
use crate::filter::BloomFilter;
use crate::format::{decode, Filter, Limits, Message, Part};

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

/// Applies a [`Sender`](super::Sender)'s frames in order, for either kind of filter `F`
/// (a [`BloomFilter`] by default). On any error its filter and generation stay as they
/// were; [`Error::GenerationGap`], [`Error::BaseMismatch`] and [`Error::ResultMismatch`]
/// mean it needs a full frame, [`Error::StaleGeneration`] that the frame was a duplicate or
/// arrived late, and a frame of the other filter kind is [`Error::UnexpectedFilterType`].
#[derive(Debug, Clone)]
pub struct Receiver<F: Filter = BloomFilter> {
    limits: Limits,
    current: Option<(F, u64)>,
}

impl<F: Filter> Receiver<F> {
    /// A receiver with no filter yet, decoding within `limits`.
    pub fn new(limits: Limits) -> Self {
        Receiver {
            limits,
            current: None,
        }
    }

    /// The current filter, once a full frame has arrived.
    pub fn filter(&self) -> Option<&F> {
        self.current.as_ref().map(|(f, _)| f)
    }

    /// The current generation.
    pub fn generation(&self) -> Option<u64> {
        self.current.as_ref().map(|&(_, g)| g)
    }

    /// Decode and apply one frame (exactly one, no trailing bytes).
    pub fn receive(&mut self, frame: &[u8]) -> Result<Update> {
        let message: Message = decode(frame, &self.limits)?;
        self.apply(message)
    }

    /// Apply a decoded frame.
    pub fn apply(&mut self, message: Message) -> Result<Update> {
        let generation = message.header().generation;
        let got = message.header().filter_type();
        let have = self.generation();
        let Some(part) = F::split(message) else {
            return Err(Error::UnexpectedFilterType {
                expected: F::KIND,
                got,
            });
        };
        check_fresh(have, generation)?;
        match part {
            Part::Full(d) => {
                let skipped = have.map_or(0, |h| generation - h - 1);
                self.current = Some((d.filter, generation));
                Ok(Update::Full {
                    generation,
                    skipped,
                })
            }
            Part::Delta(delta) => {
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
        }
    }
}
