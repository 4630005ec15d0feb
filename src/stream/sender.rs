//! The sending side: each generation as a delta or a full frame, whichever is smaller.

use crate::error::{invalid, Result};
use crate::filter::any::{FilterMut, FilterRef};
use crate::filter::counting::CountingBloomFilter;
use crate::filter::BloomFilter;
use crate::format::{
    into_buffer, Encoder, Filter, Frame, FrameHeader, FrameKind, Scratch, Settings,
};

use super::change;

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
/// let mut receiver: Receiver<CountingBloomFilter> = Receiver::with_limits(Limits::default());
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
///
/// Each step of a Bloom filter costs one scan of the previous and the new generation's
/// words (which finds the changed positions, the new filter's ones and its digest), the
/// coding of ONE frame, chosen by predicting both sizes from those counts; the scan copies
/// the cache lines that changed into the previous generation it keeps as it finds them
/// (no copy of the whole filter). A
/// counting filter's step codes both frames and keeps the smaller. The first frame, the
/// full frame after [`request_full`](Self::request_full) and the periodic full frames carry
/// the restart flag (spec §5.2), so a receiver that accepted a forged or stray generation
/// number recovers with them.
#[derive(Debug, Clone)]
pub struct Sender<F: Filter = BloomFilter> {
    encoder: Encoder<F>,
    full_every: u64,
    generation: u64,
    /// The generation sent last.
    last: Option<Last<F>>,
    full_requested: bool,
}

/// The generation a [`Sender`] sent last: the next delta's base.
#[derive(Debug, Clone)]
struct Last<F> {
    filter: F,
    /// Its digest (the next delta's base digest).
    digest: u32,
    /// Its one bits, for a Bloom filter (0 for a counting filter).
    ones: u64,
}

impl<F: Filter> Last<F> {
    fn of(filter: &F) -> Self {
        let ones = match filter.as_any() {
            FilterRef::Bloom(f) => f.bits().count_ones(),
            FilterRef::Counting(_) => 0,
        };
        Last {
            digest: filter.as_any().digest(),
            filter: filter.clone(),
            ones,
        }
    }
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

    /// Make the next frame a full one (a receiver asked to resynchronize); it carries the
    /// restart flag.
    pub fn request_full(&mut self) {
        self.full_requested = true;
    }

    /// The generation of the last frame returned (0 before the first).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// A full frame of the generation sent last, numbered as that generation and carrying
    /// the restart flag, for one receiver that joins late or asks to resynchronize while the
    /// others keep taking deltas (with [`request_full`](Self::request_full) every receiver
    /// would get the next full frame). The sender's state does not change;
    /// [`Error::InvalidParameter`](crate::Error::InvalidParameter) before the first frame.
    ///
    /// ```
    /// use bloomwire::{BloomFilter, Encoder, HashFamily, Limits, Params, Receiver, Sender, Update};
    ///
    /// let mut filter = BloomFilter::new(Params::standard(100_000, 2, HashFamily::default()).unwrap());
    /// for i in 0..5_000u32 {
    ///     filter.insert(i.to_le_bytes());
    /// }
    /// let mut sender = Sender::new(Encoder::new(), 100);
    /// let mut early: Receiver = Receiver::new(Limits::default());
    /// for g in 0..3u32 {
    ///     filter.insert(format!("generation {g}"));
    ///     early.receive(&sender.next_frame(&filter).unwrap().to_bytes()).unwrap();
    /// }
    /// // A receiver that joins now gets generation 3 whole, then the deltas everyone gets.
    /// let mut late: Receiver = Receiver::new(Limits::default());
    /// let join = sender.full_frame().unwrap().to_bytes();
    /// assert_eq!(late.receive(&join).unwrap(), Update::Full { generation: 3, skipped: 0 });
    /// filter.insert(b"fourth");
    /// let delta = sender.next_frame(&filter).unwrap().to_bytes();
    /// assert_eq!(late.receive(&delta).unwrap(), Update::Delta { generation: 4 });
    /// assert_eq!(early.receive(&delta).unwrap(), Update::Delta { generation: 4 });
    /// assert_eq!(late.filter(), early.filter());
    /// ```
    pub fn full_frame(&self) -> Result<Frame> {
        let last = self.sent()?;
        self.encoder
            .encode_generation(&last.filter, self.generation)?
            .with_restart(true)
    }

    /// The generation sent last, which the next frame's delta applies to; `None` before the
    /// first frame.
    pub fn last_sent(&self) -> Option<&F> {
        self.last.as_ref().map(|l| &l.filter)
    }

    fn sent(&self) -> Result<&Last<F>> {
        self.last
            .as_ref()
            .ok_or_else(|| invalid("generation", "nothing has been sent yet"))
    }

    /// The frame for the next generation of the filter: a delta against the previous
    /// generation when one is allowed and smaller (predicted, for a Bloom filter), a full
    /// frame otherwise. The sender's state advances only when a frame is returned.
    pub fn next_frame(&mut self, filter: &F) -> Result<Frame> {
        let generation = next_generation(self.generation)?;
        let forced = self.forced(generation);
        let settings = self.encoder.settings();
        let base_generation = self.generation;
        // A step from the generation sent last, if it has the new one's shape.
        let step = match &mut self.last {
            Some(last) => match (last.filter.as_any_mut(), filter.as_any()) {
                (FilterMut::Bloom(held), FilterRef::Bloom(f)) if held.params() == f.params() => {
                    let change = change::scanned(held, last.digest, last.ones, f);
                    let frame = change::step(
                        settings,
                        held,
                        &mut last.digest,
                        base_generation,
                        &change,
                        generation,
                        !forced,
                    );
                    if frame.is_ok() {
                        last.ones = change.ones;
                    }
                    Some(frame)
                }
                (FilterMut::Counting(held), FilterRef::Counting(f))
                    if held.params() == f.params() && held.width() == f.width() =>
                {
                    Some(counting_step(
                        settings,
                        held,
                        &mut last.digest,
                        base_generation,
                        f,
                        generation,
                        !forced,
                    ))
                }
                _ => None,
            },
            None => None,
        };
        let frame = match step {
            Some(frame) => frame?,
            None => {
                let frame = self.encoder.encode_generation(filter, generation)?;
                self.last = Some(Last::of(filter));
                frame
            }
        };
        self.advance(frame, generation, forced)
    }

    /// [`next_frame`](Self::next_frame) into `out`, replacing what it held, in its memory
    /// (as [`Encoder::encode_into`]): a sender that writes every generation into the same
    /// buffer takes no fresh memory once it has sent one. Returns the frame's header; on
    /// an error `out` is empty and the sender's state as it was.
    ///
    /// ```
    /// use bloomwire::{BloomFilter, Encoder, HashFamily, Limits, Params, Receiver, Sender};
    ///
    /// let mut filter = BloomFilter::new(Params::standard(100_000, 2, HashFamily::default()).unwrap());
    /// let mut sender = Sender::new(Encoder::new(), 100);
    /// let mut receiver = Receiver::new(Limits::default());
    /// let mut buf = Vec::new();
    /// for g in 1..=3u32 {
    ///     filter.insert(g.to_le_bytes());
    ///     let header = sender.next_frame_into(&filter, &mut buf).unwrap();
    ///     assert_eq!(receiver.receive(&buf).unwrap().generation(), header.generation);
    /// }
    /// ```
    pub fn next_frame_into(&mut self, filter: &F, out: &mut Vec<u8>) -> Result<FrameHeader> {
        into_buffer(out, || self.next_frame(filter))
    }

    /// [`next_frame`](Self::next_frame) through the caller's context `scratch` (as
    /// [`Encoder::encode_in`]): the coders' memory is the context's, and the frame's
    /// payload goes back to it when the caller [recycles](Scratch::recycle) the frame.
    ///
    /// ```
    /// use bloomwire::{BloomFilter, Encoder, HashFamily, Limits, Params, Receiver, Scratch, Sender};
    ///
    /// let mut filter = BloomFilter::new(Params::standard(100_000, 2, HashFamily::default()).unwrap());
    /// let mut sender = Sender::new(Encoder::new(), 100);
    /// let mut receiver = Receiver::new(Limits::default());
    /// let mut scratch = Scratch::new();
    /// for g in 1..=3u32 {
    ///     filter.insert(g.to_le_bytes());
    ///     let frame = sender.next_frame_in(&mut scratch, &filter).unwrap();
    ///     assert_eq!(receiver.receive(&frame.to_bytes()).unwrap().generation(), g as u64);
    ///     scratch.recycle(frame);
    /// }
    /// ```
    pub fn next_frame_in(&mut self, scratch: &mut Scratch, filter: &F) -> Result<Frame> {
        scratch.frame(|| self.next_frame(filter))
    }

    /// Whether the frame of `generation` must be full (asked for, or periodic).
    fn forced(&self, generation: u64) -> bool {
        self.full_requested || generation.is_multiple_of(self.full_every)
    }

    /// The sender's state after `frame`, of `generation`, was made: a full frame carries
    /// the restart flag when forced or first.
    fn advance(&mut self, frame: Frame, generation: u64, forced: bool) -> Result<Frame> {
        let frame = if frame.header().kind == FrameKind::Full {
            frame.with_restart(forced || self.generation == 0)?
        } else {
            frame
        };
        self.generation = generation;
        self.full_requested = false;
        Ok(frame)
    }
}

impl Sender<BloomFilter> {
    /// The frame for the next generation, given as what changed since the generation sent
    /// last ([`last_sent`](Self::last_sent)): the positions of the bits that flipped
    /// (increasing, each once, below m) and the new generation's count of keys `n`. A
    /// sender that knows its changes (a counting filter knows when a counter leaves or
    /// reaches zero, see [`SummarySender`](super::SummarySender)) so never reads the rest of
    /// the filter: the new generation's ones and digest are brought forward from the old
    /// ones by the flips ([`DigestChange`](crate::filter::DigestChange)), and a delta's step
    /// costs what changed (tens of nanoseconds a flip) whatever m is. A full frame, when
    /// it is smaller, periodic or requested, costs its coding as
    /// [`next_frame`](Self::next_frame)'s does.
    ///
    /// The frame is byte for byte the one [`next_frame`](Self::next_frame) makes for the
    /// filter with those bits flipped. Errors: [`Error::InvalidParameter`] before the
    /// first frame (send the filter whole with `next_frame`) and for positions out of
    /// order, repeated or past m, the encoder's errors otherwise; the sender's state then
    /// stays as it was.
    ///
    /// ```
    /// use bloomwire::{BloomFilter, Encoder, HashFamily, Limits, Params, Receiver, Sender, Update};
    ///
    /// let mut filter = BloomFilter::new(Params::standard(1 << 24, 2, HashFamily::default()).unwrap());
    /// for i in 0..10_000u32 {
    ///     filter.insert(i.to_le_bytes());
    /// }
    /// let mut sender = Sender::new(Encoder::new(), 100);
    /// let mut receiver = Receiver::new(Limits::default());
    /// receiver.receive(&sender.next_frame(&filter).unwrap().to_bytes()).unwrap();
    /// // 20 bits flipped by whatever the application tracks:
    /// let flips: Vec<u64> = (0..20).map(|i| i * 800_000 + 7).collect();
    /// let delta = sender.next_frame_with_flips(&flips, 10_010).unwrap().to_bytes();
    /// assert!(delta.len() < 100);
    /// assert_eq!(receiver.receive(&delta).unwrap(), Update::Delta { generation: 2 });
    /// assert_ne!(receiver.filter().unwrap().bits().get(800_007), filter.bits().get(800_007));
    /// assert_eq!(receiver.filter(), sender.last_sent());
    /// ```
    ///
    /// [`Error::InvalidParameter`]: crate::Error::InvalidParameter
    pub fn next_frame_with_flips(&mut self, flips: &[u64], n: u64) -> Result<Frame> {
        let generation = next_generation(self.generation)?;
        let forced = self.forced(generation);
        let base_generation = self.generation;
        let last = self.last.as_mut().ok_or_else(|| {
            invalid(
                "generation",
                "nothing has been sent yet: send the first generation whole with next_frame",
            )
        })?;
        let change = change::flipped(&mut last.filter, last.digest, last.ones, flips.to_vec(), n)?;
        let frame = change::step(
            self.encoder.settings(),
            &mut last.filter,
            &mut last.digest,
            base_generation,
            &change,
            generation,
            !forced,
        )?;
        last.ones = change.ones;
        self.advance(frame, generation, forced)
    }
}

impl Sender<BloomFilter> {
    /// [`next_frame_with_flips`](Self::next_frame_with_flips) through the caller's context
    /// `scratch` (as [`next_frame_in`](Self::next_frame_in)).
    pub fn next_frame_with_flips_in(
        &mut self,
        scratch: &mut Scratch,
        flips: &[u64],
        n: u64,
    ) -> Result<Frame> {
        scratch.frame(|| self.next_frame_with_flips(flips, n))
    }
}

/// A counting filter's step from `last` (digest `last_digest`, generation
/// `base_generation`) to `filter`: both frames coded, the smaller kept (a delta only when
/// `delta_allowed`). `last` and `last_digest` move forward only when a frame is returned.
fn counting_step(
    settings: &Settings,
    last: &mut CountingBloomFilter,
    last_digest: &mut u32,
    base_generation: u64,
    filter: &CountingBloomFilter,
    generation: u64,
    delta_allowed: bool,
) -> Result<Frame> {
    let delta = delta_allowed.then(|| {
        settings.encode_delta(
            FilterRef::Counting(last),
            base_generation,
            FilterRef::Counting(filter),
            generation,
        )
    });
    let full = settings.encode(FilterRef::Counting(filter), generation);
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

fn next_generation(generation: u64) -> Result<u64> {
    generation
        .checked_add(1)
        .ok_or_else(|| invalid("generation", "the generation counter is exhausted"))
}
