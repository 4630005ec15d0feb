//! Generations of a filter on the wire: delta frames, and a sender/receiver pair that never
//! drifts silently (Section IV of *Compressed Bloom Filters*).
//!
//! A proxy that broadcasts its cache digest sends, for each new generation, whichever is
//! smaller of a full frame and a delta (the XOR of the two generations' bit arrays, which is
//! sparse when few keys changed), and a full frame every N generations or when a receiver
//! asks. Every frame carries its generation number; a delta also names its base generation
//! and the digests of the base and the result. A [`Receiver`] applies frames in order and
//! turns every gap, duplicate, reordering or mismatch into a typed error with its filter
//! unchanged, so the application knows to ask for a full frame.
//!
//! Filters whose sets lose keys as well as gain them are rebuilt from the set, or kept as a
//! counting filter and sent as one: a [`CountingSender`] and [`CountingReceiver`] do the same
//! for counting filters, whose deltas carry the counter-wise XOR of two generations.
//!
//! ```
//! use bloomwire::delta::{Receiver, Sender, Update};
//! use bloomwire::frame::{Encoder, Limits};
//! use bloomwire::{BloomFilter, HashFamily, Params};
//!
//! let params = Params::standard(320_000, 2, HashFamily::default()).unwrap();
//! let mut sender = Sender::new(Encoder::new(), 100);
//! let mut receiver = Receiver::new(Limits::default());
//!
//! let mut filter = BloomFilter::new(params);
//! for i in 0..10_000u32 {
//!     filter.insert(i.to_le_bytes());
//! }
//! let first = sender.next_frame(&filter).unwrap().to_bytes();
//! assert_eq!(receiver.receive(&first).unwrap(), Update::Full { generation: 1, skipped: 0 });
//!
//! for i in 10_000..10_100u32 {
//!     filter.insert(i.to_le_bytes()); // 1% more keys
//! }
//! let second = sender.next_frame(&filter).unwrap().to_bytes();
//! assert!(second.len() < first.len() / 10); // a delta
//! assert_eq!(receiver.receive(&second).unwrap(), Update::Delta { generation: 2 });
//! assert_eq!(receiver.filter().unwrap(), &filter);
//!
//! // The same frame again is detected, and changes nothing.
//! assert!(receiver.receive(&second).is_err());
//! assert_eq!(receiver.generation(), Some(2));
//! ```

use crate::error::{invalid, Error, Result};
use crate::filter::counting::CountingBloomFilter;
use crate::filter::BloomFilter;
use crate::format::{decode_message, Encoder, Frame, Limits, Message, FILTER_TYPE_COUNTING};

/// Sends the generations of a filter: deltas when they are smaller, full frames every
/// `full_every` generations and on request. Independent of any runtime.
#[derive(Debug, Clone)]
pub struct Sender {
    encoder: Encoder,
    full_every: u64,
    generation: u64,
    last: Option<BloomFilter>,
    full_requested: bool,
}

impl Sender {
    /// A sender whose frames are built by `encoder`, with a full frame at least every
    /// `full_every` generations (1: always full; 0 is read as 1).
    pub fn new(encoder: Encoder, full_every: u64) -> Self {
        Sender {
            encoder,
            full_every: full_every.max(1),
            generation: 0,
            last: None,
            full_requested: false,
        }
    }

    /// Make the next frame a full one (a receiver asked to resynchronize).
    pub fn request_full(&mut self) {
        self.full_requested = true;
    }

    /// The generation of the last frame returned (0 before the first).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The frame for the next generation of the filter: a delta against the previous
    /// generation when one is allowed and smaller, a full frame otherwise. The sender's
    /// state advances only when a frame is returned.
    pub fn next_frame(&mut self, filter: &BloomFilter) -> Result<Frame> {
        let generation = next_generation(self.generation)?;
        let delta = match &self.last {
            Some(last)
                if !self.full_requested
                    && generation % self.full_every != 0
                    && last.params() == filter.params() =>
            {
                Some(
                    self.encoder
                        .encode_delta(last, self.generation, filter, generation),
                )
            }
            _ => None,
        };
        let full = self.encoder.encode_generation(filter, generation);
        let frame = smaller(delta, full)?;
        self.generation = generation;
        self.last = Some(filter.clone());
        self.full_requested = false;
        Ok(frame)
    }
}

fn next_generation(generation: u64) -> Result<u64> {
    generation
        .checked_add(1)
        .ok_or_else(|| invalid("generation", "the generation counter is exhausted"))
}

/// The delta if it was allowed, built and smaller, else the full frame.
fn smaller(delta: Option<Result<Frame>>, full: Result<Frame>) -> Result<Frame> {
    Ok(match (delta, full) {
        (Some(Ok(d)), Ok(f)) => {
            if d.encoded_len() < f.encoded_len() {
                d
            } else {
                f
            }
        }
        (Some(Ok(d)), Err(_)) => d,
        (_, full) => full?,
    })
}

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

/// Sends the generations of a counting filter, like [`Sender`]: full frames of filter type
/// 3, or deltas carrying the counter-wise XOR when they are smaller.
///
/// ```
/// use bloomwire::counting::CountingBloomFilter;
/// use bloomwire::delta::{CountingReceiver, CountingSender, Update};
/// use bloomwire::frame::{Encoder, Limits};
/// use bloomwire::{HashFamily, Params};
///
/// let params = Params::standard(160_000, 2, HashFamily::default()).unwrap();
/// let mut filter = CountingBloomFilter::new(params, 4).unwrap();
/// for i in 0..10_000u32 {
///     filter.insert(i.to_le_bytes());
/// }
/// let mut sender = CountingSender::new(Encoder::new(), 100);
/// let mut receiver = CountingReceiver::new(Limits::default());
/// let first = sender.next_frame(&filter).unwrap().to_bytes();
/// receiver.receive(&first).unwrap();
/// for i in 0..100u32 {
///     filter.remove(i.to_le_bytes()).unwrap(); // 1% of the keys leave
/// }
/// let second = sender.next_frame(&filter).unwrap().to_bytes();
/// assert!(second.len() < first.len() / 10);
/// assert_eq!(receiver.receive(&second).unwrap(), Update::Delta { generation: 2 });
/// assert_eq!(receiver.filter().unwrap(), &filter);
/// ```
#[derive(Debug, Clone)]
pub struct CountingSender {
    encoder: Encoder,
    full_every: u64,
    generation: u64,
    last: Option<CountingBloomFilter>,
    full_requested: bool,
}

impl CountingSender {
    /// A sender whose frames are built by `encoder`, with a full frame at least every
    /// `full_every` generations (1: always full; 0 is read as 1).
    pub fn new(encoder: Encoder, full_every: u64) -> Self {
        CountingSender {
            encoder,
            full_every: full_every.max(1),
            generation: 0,
            last: None,
            full_requested: false,
        }
    }

    /// Make the next frame a full one (a receiver asked to resynchronize).
    pub fn request_full(&mut self) {
        self.full_requested = true;
    }

    /// The generation of the last frame returned (0 before the first).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The frame for the next generation of the counting filter (see
    /// [`Sender::next_frame`]).
    pub fn next_frame(&mut self, filter: &CountingBloomFilter) -> Result<Frame> {
        let generation = next_generation(self.generation)?;
        let delta = match &self.last {
            Some(last)
                if !self.full_requested
                    && generation % self.full_every != 0
                    && last.params() == filter.params()
                    && last.width() == filter.width() =>
            {
                Some(
                    self.encoder
                        .encode_counting_delta(last, self.generation, filter, generation),
                )
            }
            _ => None,
        };
        let full = self.encoder.encode_counting_generation(filter, generation);
        let frame = smaller(delta, full)?;
        self.generation = generation;
        self.last = Some(filter.clone());
        self.full_requested = false;
        Ok(frame)
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
