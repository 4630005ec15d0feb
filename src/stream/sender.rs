//! The sending side: each generation as a delta or a full frame, whichever is smaller.

use crate::error::{invalid, Result};
use crate::filter::BloomFilter;
use crate::format::{Encoder, Filter, Frame};

/// Sends the generations of a filter: deltas when they are smaller, full frames every
/// `full_every` generations and on request. Independent of any runtime.
///
/// A counting filter's generations go the same way: full frames of filter type 3, or deltas
/// carrying the counter-wise XOR when they are smaller.
///
/// ```
/// use bloomwire::{CountingBloomFilter, Encoder, HashFamily, Limits, Params};
/// use bloomwire::{Receiver, Sender, Update};
///
/// let params = Params::standard(160_000, 2, HashFamily::default()).unwrap();
/// let mut filter = CountingBloomFilter::new(params, 4).unwrap();
/// for i in 0..10_000u32 {
///     filter.insert(i.to_le_bytes());
/// }
/// let mut sender = Sender::new(Encoder::new(), 100);
/// let mut receiver: Receiver<CountingBloomFilter> = Receiver::new(Limits::default());
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
pub struct Sender<F: Filter = BloomFilter> {
    encoder: Encoder<F>,
    full_every: u64,
    generation: u64,
    last: Option<F>,
    full_requested: bool,
}

impl<F: Filter> Sender<F> {
    /// A sender whose frames are built by `encoder`, with a full frame at least every
    /// `full_every` generations (1: always full; 0 is read as 1).
    pub fn new(encoder: Encoder<F>, full_every: u64) -> Self {
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
    pub fn next_frame(&mut self, filter: &F) -> Result<Frame> {
        let generation = next_generation(self.generation)?;
        let delta = match &self.last {
            Some(last)
                if !self.full_requested
                    && generation % self.full_every != 0
                    && last.same_shape(filter) =>
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
