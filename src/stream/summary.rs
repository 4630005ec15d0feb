//! Summary Cache (Section V of *Compressed Bloom Filters*): a proxy keeps a counting filter
//! of what it caches, so that it can remove keys, and its peers follow the Bloom filter that
//! counting filter stands for, by deltas. The counters say exactly which bits change: a bit
//! is set when its counter leaves zero and cleared when it returns to zero, so a step costs
//! what changed, whatever the filter's size.

use crate::error::Result;
use crate::filter::counting::CountingBloomFilter;
use crate::filter::BloomFilter;
use crate::format::{Encoder, Frame, Scratch};

use super::Sender;

/// Sends the Bloom filter of a counting filter it owns (Summary Cache): keys go in and out
/// of the counting filter through it, and each [`next_frame`](Self::next_frame) is a Bloom
/// filter's frame that a [`Receiver`](super::Receiver) of Bloom filters follows (a delta
/// when smaller, a full frame periodically or on request), made from the positions whose
/// counters left or reached zero since the last frame
/// ([`Sender::next_frame_with_flips`]): neither side reads the bits that did not change.
///
/// ```
/// use bloomwire::{CountingBloomFilter, Encoder, HashFamily, Limits, Params};
/// use bloomwire::{Receiver, SummarySender, Update};
///
/// let params = Params::standard(1 << 22, 3, HashFamily::default()).unwrap();
/// let cache = CountingBloomFilter::new(params, 4).unwrap();
/// let mut sender = SummarySender::new(cache, Encoder::new(), 1000);
/// let mut peer = Receiver::new(Limits::default());
/// for i in 0..100_000u32 {
///     sender.insert(i.to_le_bytes());
/// }
/// peer.receive(&sender.next_frame().unwrap().to_bytes()).unwrap();
/// // 1% of the cache replaced:
/// for i in 0..1_000u32 {
///     sender.remove(i.to_le_bytes()).unwrap();
///     sender.insert((100_000 + i).to_le_bytes());
/// }
/// let delta = sender.next_frame().unwrap().to_bytes();
/// assert_eq!(peer.receive(&delta).unwrap(), Update::Delta { generation: 2 });
/// assert_eq!(peer.filter().unwrap(), &sender.filter().to_bloom_filter());
/// ```
#[derive(Debug, Clone)]
pub struct SummarySender {
    counting: CountingBloomFilter,
    sender: Sender<BloomFilter>,
    /// Positions whose bit changed since the last frame: the first `sorted` increasing and
    /// each once (what the last compaction kept), then the positions toggled since, with
    /// repeats (a position listed an even number of times is back where it was). Compacted
    /// (the repeats cancelled) whenever it reaches [`COMPACT_AT`] or [`GROWTH`] times what
    /// the last compaction kept, so that it holds at most that many times the positions that
    /// changed, not one entry per operation.
    toggled: Vec<u64>,
    /// The length of the sorted front of `toggled`.
    sorted: usize,
    /// The length of `toggled` that triggers its next compaction.
    compact_at: usize,
}

/// How much the toggled positions may grow between two compactions: the bound on what they
/// hold, in positions that changed. A burst of distinct inserts (nothing cancels) pays for
/// the merges: each position is merged about 1/(GROWTH - 1) + 1 times on average, 2 times
/// at a growth of 2 and 1.33 at 4.
const GROWTH: usize = 4;

/// Entries of the toggled positions (8 bytes each, 32 KiB) below which they are never
/// compacted: an insert and a remove of one key toggle the same k positions, and a stream
/// of such pairs cancels out in a buffer this size.
const COMPACT_AT: usize = 1 << 12;

impl SummarySender {
    /// A sender of `counting`'s Bloom filter, whose frames `encoder` builds, with a full
    /// frame at least every `full_every` generations (as [`Sender::new`]).
    pub fn new(counting: CountingBloomFilter, encoder: Encoder, full_every: u64) -> Self {
        SummarySender {
            counting,
            sender: Sender::new(encoder, full_every),
            toggled: Vec::new(),
            sorted: 0,
            compact_at: COMPACT_AT,
        }
    }

    /// The counting filter.
    pub fn filter(&self) -> &CountingBloomFilter {
        &self.counting
    }

    /// Insert a key (as [`CountingBloomFilter::insert`]).
    pub fn insert(&mut self, key: impl AsRef<[u8]>) {
        let toggled = &mut self.toggled;
        self.counting
            .insert_noting(key.as_ref(), |p| toggled.push(p));
        self.compact_if_due();
    }

    /// Remove a key (as [`CountingBloomFilter::remove`], with its errors).
    pub fn remove(&mut self, key: impl AsRef<[u8]>) -> Result<()> {
        let toggled = &mut self.toggled;
        let removed = self
            .counting
            .remove_noting(key.as_ref(), |p| toggled.push(p));
        self.compact_if_due();
        removed
    }

    /// Cancel the repeated positions once the list has grown [`GROWTH`] times since the last
    /// time (or reached [`COMPACT_AT`]), so that it stays within [`GROWTH`] times the
    /// positions that changed since the last frame (or [`COMPACT_AT`]), whatever the number
    /// of operations.
    fn compact_if_due(&mut self) {
        if self.toggled.len() >= self.compact_at {
            self.compact();
        }
    }

    /// Sort the positions toggled since the last compaction and merge them into the sorted
    /// front, each position listed an odd number of times kept once: every entry is sorted
    /// once, in the tail it arrived in, and merged O(1) times on average (the list grows
    /// geometrically between compactions).
    fn compact(&mut self) {
        let (front, tail) = self.toggled.split_at_mut(self.sorted);
        tail.sort_unstable();
        let mut kept = Vec::with_capacity(front.len() + tail.len());
        merge_odd(front, tail, &mut kept);
        kept.shrink_to(COMPACT_AT.max(GROWTH * kept.len()));
        self.sorted = kept.len();
        self.compact_at = COMPACT_AT.max(GROWTH * kept.len());
        self.toggled = kept;
    }

    /// Whether a key may be in the set (as [`CountingBloomFilter::contains`]).
    pub fn contains(&self, key: impl AsRef<[u8]>) -> bool {
        self.counting.contains(key)
    }

    /// The frame of the next generation of the counting filter's Bloom filter: the first
    /// one whole (the counters read once), then from the bits whose counters left or
    /// reached zero since the last frame, in time proportional to the changes between
    /// frames. On an error nothing changes, and the next call tries again.
    pub fn next_frame(&mut self) -> Result<Frame> {
        if self.sender.last_sent().is_none() {
            let frame = self.sender.next_frame(&self.counting.to_bloom_filter())?;
            self.clear_toggled();
            return Ok(frame);
        }
        self.compact();
        let frame = self
            .sender
            .next_frame_with_flips(&self.toggled, self.counting.n());
        if frame.is_ok() {
            self.clear_toggled();
        }
        // On an error the flips stay (compacted), for the next call.
        frame
    }

    /// [`next_frame`](Self::next_frame) through the caller's context `scratch` (as
    /// [`Sender::next_frame_in`]).
    pub fn next_frame_in(&mut self, scratch: &mut Scratch) -> Result<Frame> {
        scratch.frame(|| self.next_frame())
    }

    /// Forget the toggled positions (a frame carried them), and their memory.
    fn clear_toggled(&mut self) {
        self.toggled = Vec::new();
        self.sorted = 0;
        self.compact_at = COMPACT_AT;
    }

    /// A full frame of the generation sent last, for one receiver that joins late (as
    /// [`Sender::full_frame`]).
    pub fn full_frame(&self) -> Result<Frame> {
        self.sender.full_frame()
    }

    /// Make the next frame a full one (as [`Sender::request_full`]).
    pub fn request_full(&mut self) {
        self.sender.request_full();
    }

    /// The generation of the last frame returned (0 before the first).
    pub fn generation(&self) -> u64 {
        self.sender.generation()
    }
}

/// Push to `out`, increasing, each position listed an odd number of times in `front`
/// (increasing, each once) and `tail` (increasing, with repeats) together.
fn merge_odd(front: &[u64], tail: &[u64], out: &mut Vec<u64>) {
    let (mut i, mut j) = (0, 0);
    loop {
        let p = match (front.get(i), tail.get(j)) {
            (Some(&a), Some(&b)) => a.min(b),
            (Some(&a), None) => a,
            (None, Some(&b)) => b,
            (None, None) => return,
        };
        let mut times = 0;
        if front.get(i) == Some(&p) {
            times += 1;
            i += 1;
        }
        while tail.get(j) == Some(&p) {
            times += 1;
            j += 1;
        }
        if times % 2 == 1 {
            out.push(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_position_toggled_twice_is_unchanged() {
        let merged = |front: &[u64], tail: &[u64]| {
            let mut out = Vec::new();
            merge_odd(front, tail, &mut out);
            out
        };
        assert_eq!(merged(&[], &[1, 3, 3, 3, 5, 5, 9]), [1, 3, 9]);
        assert_eq!(merged(&[2, 3, 8], &[1, 3, 3, 3, 5, 5, 9]), [1, 2, 8, 9]);
        assert_eq!(merged(&[2, 3, 8], &[]), [2, 3, 8]);
        assert_eq!(merged(&[], &[]), Vec::<u64>::new());
    }
}
