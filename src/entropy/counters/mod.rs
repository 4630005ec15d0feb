//! Coding the counters of a counting Bloom filter (Section V of *Compressed Bloom Filters*).
//!
//! A counting filter's `b`-bit counters are far from uniform: with `k n / m` around 1 most
//! are 0, 1 or 2, and a counter is close to Poisson(`k n / m`) (saturated at `2^b - 1`), so
//! its entropy is well below `b` bits. Three payload codings carry them (filter type 3):
//!
//! * **raw**: the counters packed `b` bits each
//!   ([`pack_counters`](crate::filter::counting::pack_counters), coding 0's room);
//! * **known distribution**: every counter range-coded with one [`CounterTable`], a table of
//!   integer frequencies summing to `2^16` that travels in the frame header (the sender builds
//!   it from its histogram, [`CounterTable::from_histogram`], or from the Poisson law,
//!   [`CounterTable::from_weights`]);
//! * **adaptive**: every counter range-coded with [`AdaptiveCounters`], frequency counts
//!   updated after each counter, integers only; the header carries nothing.
//!
//! Both range codings use the crate's range coder (the one of the bit codings, stepped with a
//! multi-symbol interval) with its byte-exact, canonical termination.
//!
//! ```
//! use bloomwire::CounterTable;
//! // 70% zeros, 20% ones, 10% twos among 1000 counters of 4 bits.
//! let table = CounterTable::from_histogram(&[700, 200, 100], 4).unwrap();
//! assert_eq!(table.frequencies(), &[45876, 13107, 6553]);
//! assert_eq!(table.frequencies().iter().sum::<u32>(), 1 << 16);
//! ```

use crate::entropy::codec::{per_byte, per_byte_bound, Codec, CounterCodec};
use crate::entropy::counter_table::{CounterTable, TABLE_TOTAL};
use crate::entropy::profile::{Profile, Status};
use crate::entropy::range_coder::{RangeBitDecoder, RangeBitEncoder};
use crate::entropy::PayloadError;
use crate::error::{invalid, Result};

/// The table's row of coding 4.
pub(crate) const KNOWN: Codec = Codec {
    id: 4,
    name: "known-counters",
    profile: Profile::Core,
    status: Status::Active,
    // Counters: the smaller of codings 4 and 5 is sent (no speed order among bit codings).
    speed_rank: |_| 0,
    has_q0: false,
    q0_measured: false,
    chunk_bytes: None,
    // Range-coded payloads end at any byte.
    well_formed: |_, _, _| true,
    // A table of one value decodes by filling (spec 4.7): no work per counter.
    work_bound: |m, table_len, len| table_len == Some(1) || per_byte(m, len),
    bits: None,
    counters: Some(CounterCodec {
        encode: |values, _, table| encode_known(values, table.expect("a table")),
        decode: |payload, out, _, table| decode_known_into(payload, out, table.expect("parsed")),
    }),
};

/// The table's row of coding 5.
pub(crate) const ADAPTIVE: Codec = Codec {
    id: 5,
    name: "adaptive-counters",
    profile: Profile::Core,
    status: Status::Active,
    // Counters: the smaller of codings 4 and 5 is sent (no speed order among bit codings).
    speed_rank: |_| 0,
    has_q0: false,
    q0_measured: false,
    chunk_bytes: None,
    well_formed: |_, _, _| true,
    work_bound: per_byte_bound,
    bits: None,
    counters: Some(CounterCodec {
        encode: |values, width, _| Ok(encode_adaptive(values, width)),
        decode: |payload, out, width, _| decode_adaptive_into(payload, out, width),
    }),
};

/// What [`AdaptiveCounters`] adds to a counter's count each time it is coded.
pub(crate) const ADAPTIVE_INCREMENT: u32 = 32;

/// The value the adaptive decoder decoded last and where its interval starts: the first
/// value it tries (one comparison for each counter of a run of equal values).
struct Recent {
    value: u8,
    cum: u32,
}

/// Values per block of the adaptive decoder's two-level search.
const BLOCK: usize = 16;

/// The largest total [`AdaptiveCounters`] lets its counts reach before halving them.
pub(crate) const ADAPTIVE_LIMIT: u32 = 1 << 22;

/// The adaptive model of counter values (coding 5): counts `C(v) = 1` for every value
/// `0 .. 2^b - 1` at first; a value is coded with `C(v)` out of `T = sum C`, then `C(v)`
/// grows by [`ADAPTIVE_INCREMENT`]; when `T` passes [`ADAPTIVE_LIMIT`] every count is
/// halved, rounding up.
#[derive(Debug, Clone)]
pub(crate) struct AdaptiveCounters {
    counts: Vec<u32>,
    total: u32,
}

impl AdaptiveCounters {
    /// The model for counters of `width` bits (1 to 8).
    pub(crate) fn new(width: u8) -> Self {
        let n = 1usize << width.clamp(1, 8);
        AdaptiveCounters {
            counts: vec![1; n],
            total: n as u32,
        }
    }

    #[inline]
    fn interval(&self, v: u8) -> (u32, u32) {
        let v = usize::from(v);
        (self.counts[..v].iter().sum(), self.counts[v])
    }

    /// The value whose interval holds `quantile < T`, from `blocks` (the sums of the
    /// counts of values `16 i .. 16 i + 15`, [`AdaptiveCounters::blocks`]): at most 16
    /// block sums then 16 counts, whatever the values. The caller tries the last value
    /// decoded first ([`Recent`]), which a low-entropy payload repeats.
    #[inline]
    fn find_in(&self, blocks: &[u32], quantile: u32) -> (u8, u32, u32) {
        let mut cum = 0;
        let mut first = 0;
        for (i, &b) in blocks.iter().enumerate() {
            if quantile < cum + b {
                first = i * BLOCK;
                break;
            }
            cum += b;
        }
        for (v, &c) in self.counts[first..].iter().enumerate() {
            if quantile < cum + c {
                return ((first + v) as u8, cum, c);
            }
            cum += c;
        }
        unreachable!("quantile < total")
    }

    /// The sums of the counts of each run of [`BLOCK`] values.
    fn blocks(&self) -> Vec<u32> {
        self.counts.chunks(BLOCK).map(|c| c.iter().sum()).collect()
    }

    /// [`update`](Self::update), keeping `blocks` in step with the counts.
    #[inline]
    fn update_with(&mut self, blocks: &mut [u32], recent: &mut Recent, v: u8) {
        if self.total + ADAPTIVE_INCREMENT > ADAPTIVE_LIMIT {
            self.update(v);
            blocks.copy_from_slice(&self.blocks());
            recent.cum = self.counts[..usize::from(recent.value)].iter().sum();
            return;
        }
        self.update(v);
        blocks[usize::from(v) / BLOCK] += ADAPTIVE_INCREMENT;
        if v < recent.value {
            recent.cum += ADAPTIVE_INCREMENT;
        }
    }

    /// Count a coded value.
    #[inline]
    pub(crate) fn update(&mut self, v: u8) {
        self.counts[usize::from(v)] += ADAPTIVE_INCREMENT;
        self.total += ADAPTIVE_INCREMENT;
        if self.total > ADAPTIVE_LIMIT {
            for c in &mut self.counts {
                *c = (*c + 1) >> 1;
            }
            self.total = self.counts.iter().sum();
        }
    }
}

/// Range-code counters with a known table. Errors if a counter's value has no frequency.
pub(crate) fn encode_known(counters: &[u8], table: &CounterTable) -> Result<Vec<u8>> {
    let mut enc = RangeBitEncoder::with_capacity(counters.len() as u64);
    for (i, &c) in counters.iter().enumerate() {
        let (cum, f) = table.interval(c).ok_or_else(|| {
            invalid(
                "frequencies",
                format!("counter {i} holds {c}, which the table gives frequency 0"),
            )
        })?;
        enc.encode_interval(cum, f, TABLE_TOTAL);
    }
    Ok(enc.finish())
}

/// Decode the counters coded with a known table into `out` (one per counter, every one
/// overwritten).
pub(crate) fn decode_known_into(
    payload: &[u8],
    out: &mut [u8],
    table: &CounterTable,
) -> core::result::Result<(), PayloadError> {
    let mut dec = RangeBitDecoder::new(payload);
    let by_quantile = table.lookup();
    // With one value (t = 1) the first counter leaves the coder in a state every further
    // counter keeps (its interval is the whole range): decode one, fill the rest (4.7).
    let decoded = if table.frequencies().len() == 1 {
        out.len().min(1)
    } else {
        out.len()
    };
    for c in &mut out[..decoded] {
        *c = dec.decode_interval(TABLE_TOTAL, |q| {
            let v = by_quantile[q as usize];
            (
                v,
                table.cum()[usize::from(v)],
                table.frequencies()[usize::from(v)],
            )
        })?;
    }
    out[decoded..].fill(0);
    dec.finish()
}

/// Range-code counters of `width` bits with the adaptive model.
pub(crate) fn encode_adaptive(counters: &[u8], width: u8) -> Vec<u8> {
    let mut model = AdaptiveCounters::new(width);
    let mut enc = RangeBitEncoder::with_capacity(counters.len() as u64);
    for &c in counters {
        let (cum, f) = model.interval(c);
        enc.encode_interval(cum, f, model.total);
        model.update(c);
    }
    enc.finish()
}

/// Decode counters of `width` bits coded with the adaptive model into `out` (one per
/// counter, every one overwritten).
pub(crate) fn decode_adaptive_into(
    payload: &[u8],
    out: &mut [u8],
    width: u8,
) -> core::result::Result<(), PayloadError> {
    let mut model = AdaptiveCounters::new(width);
    let mut dec = RangeBitDecoder::new(payload);
    let mut blocks = model.blocks();
    let mut recent = Recent { value: 0, cum: 0 };
    for out in out.iter_mut() {
        let v = dec.decode_interval(model.total, |q| {
            let c = model.counts[usize::from(recent.value)];
            if recent.cum <= q && q < recent.cum + c {
                return (recent.value, recent.cum, c);
            }
            let (v, cum, c) = model.find_in(&blocks, q);
            recent = Recent { value: v, cum };
            (v, cum, c)
        })?;
        model.update_with(&mut blocks, &mut recent, v);
        *out = v;
    }
    dec.finish()
}

/// [`decode_known_into`] into a new vector of `m` counters (for the tests).
#[cfg(test)]
fn decode_known(
    payload: &[u8],
    m: u64,
    table: &CounterTable,
) -> core::result::Result<Vec<u8>, PayloadError> {
    let mut out = vec![0; m as usize];
    decode_known_into(payload, &mut out, table).map(|()| out)
}

/// [`decode_adaptive_into`] into a new vector of `m` counters (for the tests).
#[cfg(test)]
fn decode_adaptive(
    payload: &[u8],
    m: u64,
    width: u8,
) -> core::result::Result<Vec<u8>, PayloadError> {
    let mut out = vec![0; m as usize];
    decode_adaptive_into(payload, &mut out, width).map(|()| out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(m: usize, width: u8, seed: u64) -> Vec<u8> {
        // Roughly geometric values, saturated at the width's maximum.
        let max = ((1u16 << width) - 1) as u8;
        let mut s = seed;
        (0..m)
            .map(|_| {
                s = crate::filter::hashing::fmix64(s.wrapping_add(0x9E37_79B9_7F4A_7C15));
                ((s.trailing_ones() / 2) as u8).min(max)
            })
            .collect()
    }

    fn histogram(c: &[u8], width: u8) -> Vec<u64> {
        let mut h = vec![0u64; 1 << width];
        for &v in c {
            h[usize::from(v)] += 1;
        }
        h
    }

    #[test]
    fn codings_round_trip_at_every_width() {
        for width in 1..=8u8 {
            for m in [0usize, 1, 2, 5, 64, 1000, 5000] {
                let c = counters(m, width, u64::from(width) * 1000 + m as u64);
                let table = CounterTable::from_histogram(&histogram(&c, width), width).unwrap();
                let p = encode_known(&c, &table).unwrap();
                assert_eq!(decode_known(&p, m as u64, &table).unwrap(), c);
                let p = encode_adaptive(&c, width);
                assert_eq!(decode_adaptive(&p, m as u64, width).unwrap(), c);
            }
        }
    }

    #[test]
    fn tables_are_checked() {
        assert!(CounterTable::new(vec![1 << 16], 1).is_ok());
        assert!(CounterTable::new(vec![], 4).is_err());
        assert!(CounterTable::new(vec![1 << 15, 1 << 15, 0], 4).is_err()); // last is zero
        assert!(CounterTable::new(vec![1 << 15, (1 << 15) - 1], 4).is_err()); // sum
        assert!(CounterTable::new(vec![1 << 15, (1 << 15) + 1], 4).is_err());
        assert!(CounterTable::new(vec![1 << 14; 4], 1).is_err()); // above the width
        assert!(CounterTable::new(vec![1 << 14; 4], 2).is_ok());
        // A counter whose value has frequency zero cannot be coded.
        let t = CounterTable::new(vec![1 << 15, 0, 1 << 15], 2).unwrap();
        assert!(encode_known(&[0, 2, 1], &t).is_err());
        assert!(encode_known(&[0, 2, 3], &t).is_err());
        let p = encode_known(&[0, 2, 2, 0], &t).unwrap();
        assert_eq!(decode_known(&p, 4, &t).unwrap(), vec![0, 2, 2, 0]);
    }

    #[test]
    fn quantization_keeps_every_occurring_value() {
        // Adversarial histograms: one huge count and many singletons.
        for t in 1..=256usize {
            let mut h = vec![1u64; t];
            h[t / 2] = 1 << 40;
            let table = CounterTable::from_histogram(&h, 8).unwrap();
            assert!(table.frequencies().iter().all(|&f| f >= 1), "t = {t}");
            let flat = CounterTable::from_histogram(&vec![3u64; t], 8).unwrap();
            assert_eq!(flat.frequencies().len(), t);
        }
    }

    #[test]
    fn coded_sizes_are_near_the_entropy() {
        let m = 200_000;
        let c = counters(m, 4, 9);
        let h = histogram(&c, 4);
        let bound = crate::theory::histogram_entropy(&h) * m as f64 / 8.0;
        let table = CounterTable::from_histogram(&h, 4).unwrap();
        let known = encode_known(&c, &table).unwrap().len() as f64;
        let adaptive = encode_adaptive(&c, 4).len() as f64;
        assert!(
            known >= bound - 8.0 && known < bound * 1.001 + 8.0,
            "{known} vs {bound}"
        );
        assert!(
            adaptive >= bound - 8.0 && adaptive < bound * 1.002 + 8.0,
            "{adaptive} vs {bound}"
        );
    }

    #[test]
    fn every_counter_array_has_one_payload() {
        let c = counters(700, 3, 5);
        let table = CounterTable::from_histogram(&histogram(&c, 3), 3).unwrap();
        let known = encode_known(&c, &table).unwrap();
        let adaptive = encode_adaptive(&c, 3);
        type Dec<'a> = Box<dyn Fn(&[u8]) -> core::result::Result<Vec<u8>, PayloadError> + 'a>;
        let cases: [(Vec<u8>, Dec<'_>); 2] = [
            (known, Box::new(|p| decode_known(p, 700, &table))),
            (adaptive, Box::new(|p| decode_adaptive(p, 700, 3))),
        ];
        for (payload, decode) in cases {
            for v in crate::entropy::testing::nearby_payloads(&payload) {
                if let Ok(other) = decode(&v) {
                    assert_ne!(other, c, "a second payload for the same counters");
                }
            }
        }
    }
}
