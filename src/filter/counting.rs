//! Counting Bloom filters (Fan et al.; Section V of *Compressed Bloom Filters*): a b-bit
//! counter in place of each bit, so that keys can be deleted as well as inserted.
//!
//! A counter that reaches its largest value `2^b - 1` is *saturated*: it stays there and is
//! never decremented, because the true count is no longer known (decrementing it could make
//! a key that is still present disappear). Deleting a key whose counters include a zero is
//! refused, since that key cannot have been inserted. The counting filter summarizes to the
//! plain Bloom filter whose bit i is set where counter i is non-zero, and shares its
//! [`Params`] (m, layout, k, hash family), so a counting filter kept locally can send its
//! summary, and deltas of it, as ordinary frames; or it is sent whole as a frame of filter
//! type 3 (an [`Encoder`](crate::Encoder) of counting filters), its counters coded close
//! to their entropy.
//!
//! ```
//! use bloomwire::CountingBloomFilter;
//! use bloomwire::{HashFamily, Params};
//!
//! let params = Params::standard(1000, 3, HashFamily::default()).unwrap();
//! let mut f = CountingBloomFilter::new(params, 4).unwrap();
//! f.insert(b"a");
//! f.insert(b"b");
//! f.remove(b"a").unwrap();
//! assert!(f.contains(b"b"));
//! assert!(!f.contains(b"a")); // (barring a collision with b's counters)
//! assert!(f.remove(b"never inserted").is_err());
//! assert!(f.to_bloom_filter().contains(b"b"));
//! ```

use crate::error::{invalid, Error, Result};
use crate::filter::bits::BitArray;
use crate::filter::{walk_indexes, BloomFilter, Geometry, Params};

/// The widest counter the crate supports, in bits.
pub const MAX_COUNTER_BITS: u8 = 8;

fn check_width(width: u8) -> Result<()> {
    if (1..=MAX_COUNTER_BITS).contains(&width) {
        Ok(())
    } else {
        Err(invalid(
            "counter width",
            format!("{width} is not in 1..={MAX_COUNTER_BITS}"),
        ))
    }
}

/// A Bloom filter of `m` counters of `width` bits each.
#[derive(Debug, Clone)]
pub struct CountingBloomFilter {
    params: Params,
    geometry: Geometry,
    width: u8,
    counters: Vec<u8>,
    n: u64,
}

impl PartialEq for CountingBloomFilter {
    fn eq(&self, other: &Self) -> bool {
        self.params == other.params
            && self.width == other.width
            && self.counters == other.counters
            && self.n == other.n
    }
}

impl Eq for CountingBloomFilter {}

impl CountingBloomFilter {
    /// An empty filter with counters of `width` bits (1 to 8; 4 is the usual choice).
    pub fn new(params: Params, width: u8) -> Result<Self> {
        check_width(width)?;
        check_family(&params)?;
        Ok(CountingBloomFilter {
            geometry: Geometry::of(&params),
            counters: crate::error::try_vec(0, params.m())?,
            params,
            width,
            n: 0,
        })
    }

    /// A filter from counter values (one per bit, in bit order), each at most
    /// `2^width - 1`; `n` is the number of keys it holds.
    pub fn from_counters(params: Params, width: u8, counters: Vec<u8>, n: u64) -> Result<Self> {
        check_width(width)?;
        check_family(&params)?;
        if counters.len() as u64 != params.m() {
            return Err(Error::Incompatible(format!(
                "{} counters for m = {}",
                counters.len(),
                params.m()
            )));
        }
        let max = (((1u16) << width) - 1) as u8;
        if let Some(i) = counters.iter().position(|&c| c > max) {
            return Err(invalid(
                "counters",
                format!("counter {i} is {}, above {max}", counters[i]),
            ));
        }
        Ok(CountingBloomFilter {
            geometry: Geometry::of(&params),
            params,
            width,
            counters,
            n,
        })
    }

    /// The filter's parameters (those of the Bloom filter it summarizes to).
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Bits per counter.
    pub fn width(&self) -> u8 {
        self.width
    }

    /// The saturation value `2^width - 1`.
    pub fn max_count(&self) -> u8 {
        (((1u16) << self.width) - 1) as u8
    }

    /// The counters, in bit order.
    pub fn counters(&self) -> &[u8] {
        &self.counters
    }

    /// Keys inserted minus keys removed.
    pub fn n(&self) -> u64 {
        self.n
    }

    /// Number of saturated counters.
    pub fn saturated(&self) -> usize {
        let max = self.max_count();
        self.counters.iter().filter(|&&c| c == max).count()
    }

    /// Insert a key: increment its counters, saturating at `2^width - 1`.
    pub fn insert(&mut self, key: impl AsRef<[u8]>) {
        self.insert_noting(key.as_ref(), |_| {});
    }

    /// Insert a key, calling `set` with the position of each counter that leaves zero (a bit
    /// the filter's Bloom filter gains).
    pub(crate) fn insert_noting(&mut self, key: &[u8], mut set: impl FnMut(u64)) {
        let max = self.max_count();
        let counters = &mut self.counters;
        walk_indexes(&self.geometry, &self.params, key, |i| {
            let c = &mut counters[i as usize];
            if *c < max {
                if *c == 0 {
                    set(i);
                }
                *c += 1;
            }
            true
        });
        self.n += 1;
    }

    /// Remove a key: decrement its counters, leaving saturated ones alone. Refused with
    /// [`Error::InvalidParameter`], and nothing changed, when one of its counters is zero
    /// (the key is not in the filter).
    pub fn remove(&mut self, key: impl AsRef<[u8]>) -> Result<()> {
        self.remove_noting(key.as_ref(), |_| {})
    }

    /// Remove a key as [`remove`](Self::remove) does, calling `cleared` with the position of
    /// each counter that reaches zero (a bit the filter's Bloom filter loses).
    pub(crate) fn remove_noting(&mut self, key: &[u8], mut cleared: impl FnMut(u64)) -> Result<()> {
        if !self.contains(key) {
            return Err(invalid(
                "key",
                "not in the filter: one of its counters is zero",
            ));
        }
        let max = self.max_count();
        let counters = &mut self.counters;
        walk_indexes(&self.geometry, &self.params, key, |i| {
            let c = &mut counters[i as usize];
            if *c != max {
                // Non-zero: a key's indexes may repeat, but each repeat was counted too
                // (or the counter saturated on the way).
                *c = c.saturating_sub(1);
                if *c == 0 {
                    cleared(i);
                }
            }
            true
        });
        self.n = self.n.saturating_sub(1);
        Ok(())
    }

    /// Whether a key may be in the set: false means certainly not.
    pub fn contains(&self, key: impl AsRef<[u8]>) -> bool {
        walk_indexes(&self.geometry, &self.params, key.as_ref(), |i| {
            self.counters[i as usize] != 0
        })
    }

    /// The plain Bloom filter this one summarizes: bit i set where counter i is non-zero.
    pub fn to_bloom_filter(&self) -> BloomFilter {
        let mut words = vec![0u64; self.counters.len().div_ceil(64)];
        for (i, &c) in self.counters.iter().enumerate() {
            if c != 0 {
                words[i / 64] |= 1 << (i % 64);
            }
        }
        let bits = BitArray::from_words(words, self.params.m()).expect("one bit per counter");
        BloomFilter::from_parts(self.params.clone(), bits, self.n).expect("lengths agree")
    }

    /// The packed counters, `width` bits each (see
    /// [`pack_counters`]): the raw payload of a
    /// counting frame.
    pub fn packed(&self) -> Vec<u8> {
        pack_counters(&self.counters, self.width)
    }

    /// CRC-32C of [`packed`](Self::packed): the digest delta frames name generations by.
    pub fn digest(&self) -> u32 {
        crc32c::crc32c(&self.packed())
    }

    /// [`Params::difference`], then the counter width: what keeps two counting filters
    /// from being combined, named with its two values.
    pub(crate) fn difference(
        &self,
        other_params: &Params,
        other_width: u8,
    ) -> Option<(&'static str, String, String)> {
        self.params.difference(other_params).or_else(|| {
            (self.width != other_width).then(|| {
                let width = self.width.to_string();
                ("counter width", width, other_width.to_string())
            })
        })
    }

    /// The counter-wise XOR `self ^ base`: what a delta frame carries. Errors with
    /// [`Error::Incompatible`] unless both filters have the same parameters and counter
    /// width.
    ///
    /// (XOR rather than the difference mod `2^width`: when keys are replaced, a counter going
    /// 0 -> 1 and one going 1 -> 0 give the same XOR, 1, where the difference sends +1 and
    /// -1; the receiver's base tells which. Measured with `examples/counting_sizes.rs`, XOR
    /// frames are 4-7% smaller for replaced keys, differences 3-5% smaller when keys are
    /// only inserted or only deleted.)
    pub fn xor(&self, base: &CountingBloomFilter) -> Result<Vec<u8>> {
        if let Some((field, ours, theirs)) = self.difference(&base.params, base.width) {
            return Err(Error::Incompatible(format!(
                "{field} is {ours} in this filter and {theirs} in the base"
            )));
        }
        Ok(self
            .counters
            .iter()
            .zip(&base.counters)
            .map(|(&a, &b)| a ^ b)
            .collect())
    }

    /// The filter whose counters are these XOR `xor` (counter by counter, each value kept
    /// within the width), holding `n` keys: the inverse of [`xor`](Self::xor).
    pub fn apply_xor(&self, xor: &[u8], n: u64) -> Result<CountingBloomFilter> {
        if xor.len() != self.counters.len() {
            return Err(Error::Incompatible(format!(
                "an XOR of {} counters for m = {}",
                xor.len(),
                self.counters.len()
            )));
        }
        let mask = self.max_count();
        let mut counters = crate::error::try_vec(0u8, xor.len() as u64)?;
        for ((c, &a), &d) in counters.iter_mut().zip(&self.counters).zip(xor) {
            *c = (a ^ d) & mask;
        }
        Ok(CountingBloomFilter {
            params: self.params.clone(),
            geometry: self.geometry.clone(),
            width: self.width,
            counters,
            n,
        })
    }

    /// How many counters hold each value `0..=2^width - 1`: the distribution whose
    /// entropy bounds what a coder needs per counter.
    pub fn histogram(&self) -> Vec<u64> {
        let mut h = vec![0u64; usize::from(self.max_count()) + 1];
        for &c in &self.counters {
            h[usize::from(c)] += 1;
        }
        h
    }
}

/// Bytes of `m` counters of `width` bits packed: `ceil(m * width / 8)`.
pub fn packed_len(m: u64, width: u8) -> u64 {
    (m * u64::from(width)).div_ceil(8)
}

/// The packed form of counters of `width` bits: counter i is bits `i * width .. i * width +
/// width - 1` of the bytes, least significant bit first (bit j of the packing is bit `j mod
/// 8` of byte `floor(j / 8)`); bits past the last counter are zero.
pub fn pack_counters(counters: &[u8], width: u8) -> Vec<u8> {
    let w = u32::from(width);
    let mut out = Vec::with_capacity(packed_len(counters.len() as u64, width) as usize);
    let mut acc = 0u32;
    let mut have = 0u32;
    for &c in counters {
        acc |= u32::from(c) << have;
        have += w;
        while have >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            have -= 8;
        }
    }
    if have > 0 {
        out.push(acc as u8);
    }
    out
}

/// The `m` counters of a packed form (the inverse of [`pack_counters`]); the bytes must be
/// exactly [`packed_len`] long with the bits past the last counter zero.
pub(crate) fn unpack_counters_into(
    bytes: &[u8],
    out: &mut [u8],
    width: u8,
) -> core::result::Result<(), &'static str> {
    if bytes.len() as u64 != packed_len(out.len() as u64, width) {
        return Err("packed counters have the wrong length");
    }
    let w = u32::from(width);
    let mask = (1u32 << w) - 1;
    let mut acc = 0u32;
    let mut have = 0u32;
    let mut bytes_iter = bytes.iter();
    for c in out.iter_mut() {
        while have < w {
            acc |= u32::from(*bytes_iter.next().expect("length checked")) << have;
            have += 8;
        }
        *c = (acc & mask) as u8;
        acc >>= w;
        have -= w;
    }
    if acc != 0 {
        return Err("bits past the last counter are not zero");
    }
    Ok(())
}

/// Counting filters are bloomwire's own: the opaque family has no counters (spec §3.1).
fn check_family(params: &Params) -> Result<()> {
    if params.family().base.is_opaque() {
        return Err(Error::OpaqueHashFamily);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HashFamily;

    #[test]
    fn packing_round_trips_and_rejects_padding() {
        for width in 1..=8 {
            for m in [1usize, 2, 3, 7, 8, 9, 100] {
                let c: Vec<u8> = (0..m)
                    .map(|i| ((i as u16 * 37) % (1 << width)) as u8)
                    .collect();
                let p = pack_counters(&c, width);
                assert_eq!(p.len() as u64, packed_len(m as u64, width));
                let mut back = vec![0; m];
                unpack_counters_into(&p, &mut back, width).unwrap();
                assert_eq!(back, c);
            }
        }
        assert_eq!(pack_counters(&[1, 2, 3], 4), vec![0x21, 0x03]);
        assert!(unpack_counters_into(&[0x21, 0x13], &mut [0; 3], 4).is_err());
        assert!(unpack_counters_into(&[0x21], &mut [0; 3], 4).is_err());
    }

    fn params(m: u64, k: u32) -> Params {
        Params::standard(m, k, HashFamily::default()).unwrap()
    }

    #[test]
    fn widths_are_checked() {
        assert!(CountingBloomFilter::new(params(10, 2), 0).is_err());
        assert!(CountingBloomFilter::new(params(10, 2), 9).is_err());
        assert_eq!(
            CountingBloomFilter::new(params(10, 2), 8)
                .unwrap()
                .max_count(),
            255
        );
        assert!(CountingBloomFilter::from_counters(params(2, 1), 2, vec![0, 4], 0).is_err());
        assert!(CountingBloomFilter::from_counters(params(2, 1), 2, vec![0], 0).is_err());
    }

    #[test]
    fn saturated_counters_stay_saturated() {
        // One-bit counters saturate at once: deletions never clear anything.
        let mut f = CountingBloomFilter::new(params(64, 2), 1).unwrap();
        f.insert(b"x");
        let before = f.counters().to_vec();
        f.remove(b"x").unwrap();
        assert_eq!(f.counters(), &before[..]);
        assert!(f.contains(b"x"));
        // A 2-bit counter hit five times stays at 3 through any number of deletions.
        let mut f = CountingBloomFilter::new(params(1, 1), 2).unwrap();
        for _ in 0..5 {
            f.insert(b"k");
        }
        assert_eq!(f.counters(), &[3]);
        for _ in 0..5 {
            f.remove(b"k").unwrap();
        }
        assert_eq!(f.counters(), &[3]);
        assert_eq!(f.saturated(), 1);
    }

    #[test]
    fn removing_an_absent_key_changes_nothing() {
        let mut f = CountingBloomFilter::new(params(1000, 3), 4).unwrap();
        f.insert(b"present");
        let before = f.clone();
        assert!(f.remove(b"absent").is_err());
        assert_eq!(f, before);
    }

    #[test]
    fn the_summary_is_the_plain_filter_of_the_same_keys() {
        let mut c = CountingBloomFilter::new(params(5000, 4), 4).unwrap();
        let mut b = BloomFilter::new(params(5000, 4));
        for i in 0u32..500 {
            c.insert(i.to_le_bytes());
            b.insert(i.to_le_bytes());
        }
        assert_eq!(c.to_bloom_filter(), b);
        assert_eq!(c.histogram().iter().sum::<u64>(), 5000);
    }
}
