//! The sending side: each generation as a delta or a full frame, whichever is smaller.

use crate::error::{invalid, Result};
use crate::filter::counting::CountingBloomFilter;
use crate::filter::BloomFilter;
use crate::format::{DeltaStep, Encoder, Frame};

use super::change::{self, Kind};

/// Sends the generations of a filter: deltas when they are smaller, full frames every
/// `full_every` generations and on request. Independent of any runtime.
///
/// Each step costs one scan of the previous and the new generation's words (which finds the
/// changed positions, the new filter's ones and its digest), the coding of ONE frame, chosen
/// by predicting both sizes from those counts, and flipping the changed positions in the
/// previous generation it keeps (no copy of the filter). Its first frame, the full frame
/// after [`request_full`](Self::request_full) and its periodic full frames carry the restart
/// flag (spec §5.2), so a receiver that accepted a forged or stray generation number
/// recovers with them.
#[derive(Debug, Clone)]
pub struct Sender {
    encoder: Encoder,
    full_every: u64,
    generation: u64,
    last: Option<Last>,
    full_requested: bool,
}

/// The generation a sender sent last, with its digest (the next delta's base digest).
#[derive(Debug, Clone)]
struct Last {
    filter: BloomFilter,
    digest: u32,
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

    /// Make the next frame a full one (a receiver asked to resynchronize); it carries the
    /// restart flag.
    pub fn request_full(&mut self) {
        self.full_requested = true;
    }

    /// The generation of the last frame returned (0 before the first).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The frame for the next generation of the filter: a delta against the previous
    /// generation when one is allowed and predicted smaller, a full frame otherwise. The
    /// sender's state advances only when a frame is returned.
    pub fn next_frame(&mut self, filter: &BloomFilter) -> Result<Frame> {
        let generation = next_generation(self.generation)?;
        let forced = self.full_requested || generation % self.full_every == 0;
        let restart = forced || self.last.is_none();
        let full = |encoder: &Encoder| -> Result<Frame> {
            encoder
                .encode_generation(filter, generation)?
                .with_restart(restart)
        };
        let frame = match &mut self.last {
            Some(last) if last.filter.params() == filter.params() => {
                let change = change::scan(last.filter.bits(), filter.bits());
                let m = filter.m();
                let kind = if forced {
                    Kind::Full
                } else {
                    change::choose(
                        change::predict_delta(m, change.positions.len() as u64),
                        change::predict_full(m, change.ones),
                    )
                };
                let frame = match kind {
                    Kind::Full => full(&self.encoder)?,
                    Kind::Delta => {
                        let step = DeltaStep {
                            params: filter.params(),
                            n: filter.n(),
                            base_generation: self.generation,
                            base_digest: last.digest,
                            generation,
                            result_digest: change.digest,
                        };
                        match self.encoder.encode_delta_positions(step, &change.positions) {
                            Ok(frame) => frame,
                            // Over the budget: the full frame may still fit.
                            Err(_) => full(&self.encoder)?,
                        }
                    }
                };
                change::advance(last.filter.bits_mut(), &change);
                last.filter.set_n(filter.n());
                last.digest = change.digest;
                frame
            }
            _ => {
                let frame = full(&self.encoder)?;
                self.last = Some(Last {
                    filter: filter.clone(),
                    digest: filter.bits().digest(),
                });
                frame
            }
        };
        self.generation = generation;
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
        let restart = self.last.is_none()
            || self.full_requested
            || generation % self.full_every == 0
            || delta.is_none();
        let full = self.encoder.encode_counting_generation(filter, generation);
        let frame = smaller(delta, full)?;
        let restart = restart && frame.header().kind == crate::format::FrameKind::Full;
        let frame = frame.with_restart(restart)?;
        self.generation = generation;
        self.last = Some(filter.clone());
        self.full_requested = false;
        Ok(frame)
    }
}
