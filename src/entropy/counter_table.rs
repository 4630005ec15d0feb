//! The known-distribution model of counter values (spec §4.7): the frequency table that
//! coding 4 sends in the header and range-codes counters with, and that the frame layer
//! parses and writes.

use crate::error::{invalid, Result};

/// The total of a [`CounterTable`]'s frequencies: `2^16`.
pub(crate) const TABLE_TOTAL: u32 = 1 << 16;

/// The known-distribution model of counter values: frequencies `f(0) .. f(t-1)` summing to
/// `2^16`, `f(t-1) > 0`, values `t` and above (and values with `f(v) = 0`) impossible.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterTable {
    freq: Vec<u32>,
    /// `cum[v]` = `f(0) + .. + f(v-1)`, `cum[t] = 2^16`.
    cum: Vec<u32>,
}

impl CounterTable {
    /// The table with these frequencies, for counters of `width` bits: at most `2^width`
    /// entries, the last one non-zero, summing to `2^16`.
    pub fn new(frequencies: Vec<u32>, width: u8) -> Result<Self> {
        if !(1..=8).contains(&width) {
            return Err(invalid("counter width", format!("{width} is not in 1..=8")));
        }
        let t = frequencies.len();
        if t == 0 || t > 1 << width {
            return Err(invalid(
                "frequencies",
                format!("{t} entries for counters of {width} bits"),
            ));
        }
        if frequencies[t - 1] == 0 {
            return Err(invalid("frequencies", "the last entry is zero"));
        }
        let mut cum = Vec::with_capacity(t + 1);
        let mut acc = 0u64;
        cum.push(0);
        for &f in &frequencies {
            acc += u64::from(f);
            if acc > u64::from(TABLE_TOTAL) {
                break;
            }
            cum.push(acc as u32);
        }
        if acc != u64::from(TABLE_TOTAL) {
            return Err(invalid(
                "frequencies",
                format!("they sum to {acc}, not {TABLE_TOTAL}"),
            ));
        }
        Ok(CounterTable {
            freq: frequencies,
            cum,
        })
    }

    /// The table a sender builds from its counter histogram (`histogram[v]` counters hold
    /// `v`), in integers (the spec's section 4.7):
    /// `f(v) = 0` where no counter holds v, else `max(1, floor(histogram[v] * 2^16 / m))`
    /// with `m` the number of counters; the first largest `f` then absorbs `2^16 - sum`;
    /// the table ends at the largest value held.
    pub fn from_histogram(histogram: &[u64], width: u8) -> Result<Self> {
        let m: u64 = histogram.iter().sum();
        let t = histogram.iter().rposition(|&h| h != 0).map_or(1, |i| i + 1);
        if m == 0 {
            return Self::new(vec![TABLE_TOTAL], width);
        }
        let weights: Vec<u128> = histogram[..t].iter().map(|&h| u128::from(h)).collect();
        Self::new(quantize(&weights, u128::from(m)), width)
    }

    /// The table of integer weights `weights[v]` (proportional to the probability of v, all
    /// positive), quantized like [`from_histogram`](Self::from_histogram): e.g. the Poisson
    /// law of counters scaled to integers, cut after the largest value that occurs.
    pub fn from_weights(weights: &[u64], width: u8) -> Result<Self> {
        if weights.is_empty() || weights.contains(&0) {
            return Err(invalid("weights", "empty, or a weight is zero"));
        }
        let w: Vec<u128> = weights.iter().map(|&x| u128::from(x)).collect();
        let total = w.iter().sum();
        Self::new(quantize(&w, total), width)
    }

    /// The frequencies `f(0) .. f(t-1)`.
    pub fn frequencies(&self) -> &[u32] {
        &self.freq
    }

    /// `cum[v] = f(0) + .. + f(v - 1)`, then `2^16`.
    pub(crate) fn cum(&self) -> &[u32] {
        &self.cum
    }

    /// The interval of value `v`, if it can be coded (`f(v) > 0`).
    #[inline]
    pub(crate) fn interval(&self, v: u8) -> Option<(u32, u32)> {
        let f = *self.freq.get(usize::from(v))?;
        (f != 0).then(|| (self.cum[usize::from(v)], f))
    }

    /// The table from quantile to value a decoder looks values up in: `2^16` bytes, one per
    /// quantile, built in one pass over the table (no search per decoded counter, whatever
    /// the values: a table of 256 entries decodes as fast as one of 2).
    pub(crate) fn lookup(&self) -> Vec<u8> {
        let mut by_quantile = vec![0u8; TABLE_TOTAL as usize];
        for (v, w) in self.cum.windows(2).enumerate() {
            by_quantile[w[0] as usize..w[1] as usize].fill(v as u8);
        }
        by_quantile
    }

    /// The code length of a histogram under this table, in bits (`None` if some value that
    /// occurs has frequency 0).
    pub fn cost_bits(&self, histogram: &[u64]) -> Option<f64> {
        let mut bits = 0.0;
        for (v, &h) in histogram.iter().enumerate() {
            if h == 0 {
                continue;
            }
            let f = *self.freq.get(v).filter(|&&f| f != 0)?;
            bits += h as f64 * (f64::from(TABLE_TOTAL) / f64::from(f)).log2();
        }
        Some(bits)
    }
}

/// `f(v) = max(1, floor(w(v) * 2^16 / total))`, the first largest absorbing the rest.
fn quantize(weights: &[u128], total: u128) -> Vec<u32> {
    let mut f: Vec<u64> = weights
        .iter()
        .map(|&w| {
            if w == 0 {
                0
            } else {
                ((w << 16) / total).max(1) as u64
            }
        })
        .collect();
    let sum: u64 = f.iter().sum();
    let top = (0..f.len())
        .max_by(|&a, &b| f[a].cmp(&f[b]).then(b.cmp(&a)))
        .expect("at least one weight");
    // f(top) >= 2^16 / t - 1 >= 255 while the excess is at most the number of entries
    // raised to 1, so f(top) stays positive.
    f[top] = f[top] + u64::from(TABLE_TOTAL) - sum;
    f.into_iter().map(|x| x as u32).collect()
}
