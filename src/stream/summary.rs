//! Summary Cache (Section V of *Compressed Bloom Filters*): a proxy keeps a counting filter
//! of what it caches, so that it can remove keys, and its peers follow the Bloom filter that
//! counting filter stands for, by deltas. The counters say exactly which bits change: a bit
//! is set when its counter leaves zero and cleared when it returns to zero, so a step costs
//! what changed, whatever the filter's size.

use crate::error::Result;
use crate::filter::counting::CountingBloomFilter;
use crate::filter::BloomFilter;
use crate::format::{Encoder, Frame};

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
    /// Positions whose bit changed since the last frame, with repeats: a position listed
    /// an even number of times is back where it was. Compacted (the repeats cancelled)
    /// whenever it reaches [`COMPACT_AT`] or twice what the last compaction kept, so that it
    /// holds at most about twice the positions that changed, not one entry per operation.
    toggled: Vec<u64>,
    /// The length of `toggled` that triggers its next compaction.
    compact_at: usize,
}

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

    /// Cancel the repeated positions once the list has doubled since the last time (or
    /// reached [`COMPACT_AT`]): each entry is sorted O(log) times on average, and the list
    /// stays within twice the positions that changed since the last frame (plus
    /// [`COMPACT_AT`]), whatever the number of operations.
    fn compact_if_due(&mut self) {
        if self.toggled.len() < self.compact_at {
            return;
        }
        let kept = odd_ones_in_place(&mut self.toggled);
        self.toggled.truncate(kept);
        self.toggled.shrink_to(COMPACT_AT.max(2 * kept));
        self.compact_at = COMPACT_AT.max(2 * kept);
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
        let kept = odd_ones_in_place(&mut self.toggled);
        self.toggled.truncate(kept);
        let frame = self
            .sender
            .next_frame_with_flips(&self.toggled, self.counting.n());
        if frame.is_ok() {
            self.clear_toggled();
        } else {
            // The flips stay (once each), for the next call.
            self.compact_at = COMPACT_AT.max(2 * kept);
        }
        frame
    }

    /// Forget the toggled positions (a frame carried them), and their memory.
    fn clear_toggled(&mut self) {
        self.toggled = Vec::new();
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

/// Sort `toggled` and move the positions listed an odd number of times in it to its front,
/// increasing; returns how many there are.
fn odd_ones_in_place(toggled: &mut [u64]) -> usize {
    toggled.sort_unstable();
    let (mut read, mut kept) = (0, 0);
    while read < toggled.len() {
        let p = toggled[read];
        let run = toggled[read..].iter().take_while(|&&q| q == p).count();
        if run % 2 == 1 {
            toggled[kept] = p;
            kept += 1;
        }
        read += run;
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_position_toggled_twice_is_unchanged() {
        let mut toggled = [5, 3, 5, 9, 3, 3, 1];
        let kept = odd_ones_in_place(&mut toggled);
        assert_eq!(toggled[..kept], [1, 3, 9]);
        assert_eq!(odd_ones_in_place(&mut []), 0);
    }
}
