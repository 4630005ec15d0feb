//! The sender's view of one step between two generations of a Bloom filter: the changed
//! positions, the new generation's ones and its digest; sizes predicted from those counts
//! pick a delta or a full frame, so exactly one frame is coded; and the previous generation
//! is brought forward in place, O(changes), without a copy of the array.
//!
//! A sender handed the new generation whole finds the change by a single comparison of both
//! generations' words, a cache line at a time ([`scanned`]: O(m/64) word reads plus
//! O(changes); the new ones and digest follow from the old ones and the changes, the digest
//! being affine ([`DigestChange`]): a scan that also counted every word's ones and ran the
//! CRC over the new generation cost twice a word comparison plus the delta's coding on the
//! default plan for 10^6 keys, `cargo bench -p bloomwire-benches --bench update -- scan/`);
//! a sender handed the changed positions
//! ([`Sender::next_frame_with_flips`](super::Sender::next_frame_with_flips)) derives the
//! rest from them ([`flipped`]: O(changes)), so that its step, a delta's, costs what
//! changed whatever the filter's size.

use crate::error::{invalid, Result};
use crate::filter::any::FilterRef;
use crate::filter::bits::BitArray;
use crate::filter::{BloomFilter, DigestChange};
use crate::format::{DeltaStep, Frame, Settings};

/// The sender's step for a Bloom filter by `change`, `last` having been moved forward by it
/// already ([`scanned`] or [`flipped`]), from the generation whose digest is `last_digest`:
/// predict, code one frame (a full frame from `last`, the new generation). On an error
/// `last` is moved back; `last_digest` changes only when a frame is returned.
pub(crate) fn step(
    settings: &Settings,
    last: &mut BloomFilter,
    last_digest: &mut u32,
    base_generation: u64,
    change: &Change,
    generation: u64,
    delta_allowed: bool,
) -> Result<Frame> {
    let m = last.m();
    let kind = if delta_allowed {
        choose(
            predict_delta(m, change.positions.len() as u64),
            predict_full(m, change.ones),
        )
    } else {
        Kind::Full
    };
    let full = |last: &BloomFilter| settings.encode(FilterRef::Bloom(last), generation);
    let frame = match kind {
        Kind::Full => full(last),
        Kind::Delta => {
            let step = DeltaStep {
                params: last.params(),
                n: change.n,
                base_generation,
                base_digest: *last_digest,
                generation,
                result_digest: change.digest,
            };
            // Over the budget: the full frame may still fit.
            settings
                .encode_delta_positions(step, &change.positions)
                .or_else(|_| full(last))
        }
    };
    match frame {
        Ok(frame) => {
            *last_digest = change.digest;
            Ok(frame)
        }
        Err(e) => {
            last.bits_mut().flip(&change.positions);
            last.set_n(change.base_n);
            Err(e)
        }
    }
}

/// What changes from one generation of a Bloom filter to the next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    /// The positions where the two generations differ, increasing: the one bits of their
    /// XOR.
    pub(crate) positions: Vec<u64>,
    /// One bits of the new generation.
    pub(crate) ones: u64,
    /// The new generation's digest ([`BitArray::digest`]).
    pub(crate) digest: u32,
    /// Keys in the new generation.
    pub(crate) n: u64,
    /// Keys in the previous generation.
    pub(crate) base_n: u64,
}

/// Move `last` (whose digest is `last_digest` and whose ones are `last_ones`) forward in
/// place by flipping `positions` (increasing, each below m), to a generation of `n` keys,
/// and return the change: O(positions), the rest of the array unread.
/// [`Error::InvalidParameter`](crate::Error::InvalidParameter) for positions out of order,
/// repeated or past the end, and `last` unchanged.
pub(crate) fn flipped(
    last: &mut BloomFilter,
    last_digest: u32,
    last_ones: u64,
    positions: Vec<u64>,
    n: u64,
) -> Result<Change> {
    let m = last.m();
    if let Some(w) = positions.windows(2).find(|w| w[0] >= w[1]) {
        return Err(invalid(
            "flips",
            format!("{} then {}: positions must increase", w[0], w[1]),
        ));
    }
    if let Some(&p) = positions.last().filter(|&&p| p >= m) {
        return Err(invalid("flips", format!("{p} is not below m = {m}")));
    }
    let were_ones = last.bits_mut().flip(&positions);
    let base_n = last.n();
    last.set_n(n);
    let ones = last_ones - were_ones + (positions.len() as u64 - were_ones);
    let mut digest = DigestChange::new(m);
    digest.flip_all(&positions);
    Ok(Change {
        digest: digest.apply(last_digest),
        positions,
        ones,
        n,
        base_n,
    })
}

/// Move `last` (whose digest is `last_digest` and whose ones are `last_ones`) forward in
/// place to `next` (the same shape) and return the change, found by one scan of both
/// generations' words ([`scan`]); the new generation's ones and digest follow from the
/// changed words and positions, as [`flipped`] derives them, so the scan does no more than
/// compare words.
pub(crate) fn scanned(
    last: &mut BloomFilter,
    last_digest: u32,
    last_ones: u64,
    next: &BloomFilter,
) -> Change {
    let (positions, gained, lost) = scan(last.bits_mut(), next.bits());
    let base_n = last.n();
    last.set_n(next.n());
    let mut digest = DigestChange::new(last.m());
    digest.flip_all(&positions);
    Change {
        digest: digest.apply(last_digest),
        positions,
        ones: last_ones + gained - lost,
        n: next.n(),
        base_n,
    }
}

/// Scan `prev` and `next` (the same length) once, copying into `prev` the words that
/// differ: the changed positions (increasing), and the ones gained and lost (counted bit by
/// bit as the positions are, which needs no `popcnt`).
///
/// The scan goes a cache line of `prev` at a time (eight words, aligned to 64 bytes in
/// `prev`): one test for the line's eight XORs, which the compiler does in vector
/// registers, and when one differs, its positions and the whole line copied (that line
/// is written back to memory anyway). Word by word, with a test and a store per changed
/// word, the same scan cost 1.15x a stateless word-by-word comparison; by lines it costs
/// about what a stateless comparison by lines does (`benches/update.rs`, `scan/`).
fn scan(prev: &mut BitArray, next: &BitArray) -> (Vec<u64>, u64, u64) {
    assert_eq!(prev.len(), next.len(), "generations of one shape");
    scan_words(prev.words_mut(), next.words())
}

/// [`scan`] of the words `held` (copied into where they differ) and `new`, of one length.
fn scan_words(held: &mut [u64], new: &[u64]) -> (Vec<u64>, u64, u64) {
    let mut positions = Vec::new();
    let mut gained = 0u64;
    let mut changed = |i: usize, mut d: u64, w: u64| {
        let base = i as u64 * 64;
        while d != 0 {
            let bit = d.trailing_zeros();
            gained += w >> bit & 1;
            positions.push(base + u64::from(bit));
            d &= d - 1;
        }
    };
    // Words before `prev`'s first whole cache line, the lines, and the words after.
    let head = held.as_ptr().align_offset(64).min(held.len());
    let lines = (held.len() - head) / 8;
    let tail = head + lines * 8;
    let word = |held: &mut [u64], i: usize, changed: &mut dyn FnMut(usize, u64, u64)| {
        let d = held[i] ^ new[i];
        if d != 0 {
            held[i] = new[i];
            changed(i, d, new[i]);
        }
    };
    for i in 0..head {
        word(held, i, &mut changed);
    }
    let (held_lines, _) = held[head..tail].as_chunks_mut::<8>();
    let (new_lines, _) = new[head..tail].as_chunks::<8>();
    for (l, (h, w)) in held_lines.iter_mut().zip(new_lines).enumerate() {
        let mut any = 0;
        for j in 0..8 {
            any |= h[j] ^ w[j];
        }
        if any == 0 {
            continue;
        }
        let first = head + l * 8;
        for j in 0..8 {
            let d = h[j] ^ w[j];
            if d != 0 {
                changed(first + j, d, w[j]);
            }
        }
        *h = *w;
    }
    for i in tail..held.len() {
        word(held, i, &mut changed);
    }
    let lost = positions.len() as u64 - gained;
    (positions, gained, lost)
}

/// The kind of frame that carries a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A delta (the changed positions).
    Delta,
    /// A full frame.
    Full,
}

/// The smaller predicted frame: a delta only when its predicted size is below the full
/// frame's (a tie goes to the full frame, which a late joiner can use too).
pub(crate) fn choose(predicted_delta: u64, predicted_full: u64) -> Kind {
    if predicted_delta < predicted_full {
        Kind::Delta
    } else {
        Kind::Full
    }
}

/// Bytes of `m * H(ones / m) / 8`: what `ones` one bits among `m` carry, the size every
/// compressing coding approaches.
fn information_bytes(m: u64, ones: u64) -> u64 {
    if ones == 0 || ones >= m {
        return 0;
    }
    let p = ones as f64 / m as f64;
    let h = -(p * p.log2() + (1.0 - p) * (1.0 - p).log2());
    (m as f64 * h / 8.0).ceil() as u64
}

/// Header bytes a delta has and a full frame has not: the base generation (a varint) and
/// the two digests.
const DELTA_HEADER: u64 = 10 + 8;

/// The predicted size of a delta that changes `changes` of `m` bits (the positional
/// coding's estimate), beyond what a full frame's header costs.
pub(crate) fn predict_delta(m: u64, changes: u64) -> u64 {
    crate::entropy::coding::estimate_positions_len(m, changes) + DELTA_HEADER
}

/// The predicted payload of a full frame of `m` bits holding `ones` one bits: the
/// smallest of the raw array, the positional coding's estimate and the table-driven
/// codings' (the information plus their final states).
pub(crate) fn predict_full(m: u64, ones: u64) -> u64 {
    let table_driven = information_bytes(m, ones) + 28;
    crate::entropy::coding::estimate_positions_len(m, ones)
        .min(table_driven)
        .min(m.div_ceil(8))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(len: u64, ones: &[u64], n: u64) -> BloomFilter {
        let params = crate::filter::Params::standard(len, 1, Default::default()).unwrap();
        BloomFilter::from_parts(params, BitArray::with_ones(len, ones), n).unwrap()
    }

    #[test]
    fn one_scan_gives_positions_ones_and_digest() {
        for len in [1, 63, 64, 65, 511, 512, 513, 70_001] {
            let old: Vec<u64> = (0..len).filter(|i| i % 97 == 3).collect();
            let new: Vec<u64> = (0..len).filter(|i| i % 89 == 5 || *i == len - 1).collect();
            let (a, b) = (filter(len, &old, 3), filter(len, &new, 4));
            let mut moved = a.clone();
            let change = scanned(&mut moved, a.bits().digest(), a.bits().count_ones(), &b);
            let mut xor = a.bits().clone();
            xor.xor_with(b.bits()).unwrap();
            let want: Vec<u64> = (0..len).filter(|&i| xor.get(i)).collect();
            assert_eq!(change.positions, want, "{len}");
            assert_eq!(change.ones, b.bits().count_ones(), "{len}");
            assert_eq!(change.digest, b.bits().digest(), "{len}");
            assert_eq!((change.n, change.base_n), (4, 3));
            assert_eq!(moved, b, "{len}");
        }
    }

    /// Every place of the first whole cache line in the held words, and lengths around
    /// a line's.
    #[test]
    fn the_scan_by_lines_finds_every_change_wherever_the_lines_start() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut random = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for len in [0usize, 1, 7, 8, 9, 15, 16, 17, 40, 333] {
            for skip in 0..8 {
                let old: Vec<u64> = (0..len + skip).map(|_| random()).collect();
                // Some words equal, some differing in one bit, some in many.
                let new: Vec<u64> = old
                    .iter()
                    .map(|&w| match random() % 4 {
                        0 | 1 => w,
                        2 => w ^ 1 << (random() % 64),
                        _ => random(),
                    })
                    .collect();
                let mut held = old.clone();
                let (positions, gained, lost) = scan_words(&mut held[skip..], &new[skip..]);
                let want: Vec<u64> = (0..len as u64 * 64)
                    .filter(|&p| {
                        let i = skip + (p / 64) as usize;
                        (old[i] ^ new[i]) >> (p % 64) & 1 == 1
                    })
                    .collect();
                assert_eq!(positions, want, "{len} {skip}");
                let ones = |v: &[u64]| v.iter().map(|w| u64::from(w.count_ones())).sum::<u64>();
                let (before, after) = (ones(&old[skip..]), ones(&new[skip..]));
                assert_eq!(before + gained - lost, after, "{len} {skip}");
                assert_eq!(held[skip..], new[skip..], "{len} {skip}");
                assert_eq!(held[..skip], old[..skip], "{len} {skip}");
            }
        }
    }

    #[test]
    fn equal_generations_change_nothing() {
        for len in [1, 63, 64, 65, 4096 * 8 + 3] {
            let a = filter(len, &[0, len - 1], 2);
            let mut moved = a.clone();
            let change = scanned(&mut moved, a.bits().digest(), 2.min(len), &a);
            assert!(change.positions.is_empty());
            assert_eq!(change.digest, a.bits().digest());
            assert_eq!(change.ones, a.bits().count_ones());
            assert_eq!(moved, a);
        }
    }

    #[test]
    fn the_smaller_prediction_wins() {
        assert_eq!(choose(10, 11), Kind::Delta);
        assert_eq!(choose(11, 11), Kind::Full);
    }
}
