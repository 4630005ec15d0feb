//! Probability models for the bits of a filter, in integers only.
//!
//! Every probability a decoder uses is computed here from integers in the frame header, by
//! arithmetic the spec writes down, so that every implementation in every language derives
//! the same numbers (no `exp`, no `ln`, no floats).
//!
//! * [`KnownP`]: a fixed probability that a bit is zero, `q0 / 2^16`, sent in the header.
//! * [`Adaptive`]: the model of the Appendix of *Compressed Bloom Filters*: counters
//!   `C0 = C1 = 1`, `P(bit = 0) = C0 / (C0 + C1)`, updated after every bit, quantized to
//!   16 bits as `q0 = max(1, floor(C0 * 2^16 / (C0 + C1)))`.
//! * [`SymbolTable`]: the multi-bit form of known-p, a model of `2^w` symbols (w = 8 for
//!   whole bytes, fewer for the last byte) whose frequencies, out of `2^24`, are the
//!   products of the bit probabilities, rounded down, at least 1, with the rounding
//!   remainder given to the most probable symbol.
//! * [`nibble_frequencies`]: the same rule on 4-bit symbols at a small precision (codings 8
//!   and 9), for coders whose tables have one entry per slot.

/// Precision of the per-bit models: probabilities are multiples of `2^-16`.
pub(crate) const BIT_PRECISION: usize = 16;

/// Precision of the multi-bit symbol models: frequencies sum to `2^24`.
pub(crate) const SYMBOL_PRECISION: usize = 24;

const BIT_TOTAL: u32 = 1 << BIT_PRECISION;
const SYMBOL_TOTAL: u32 = 1 << SYMBOL_PRECISION;

/// The bit model with `P(0) = q0 / 2^16`, `q0` in `1..=65535`: how `q0` is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KnownP {}

impl KnownP {
    /// The quantized zero probability nearest to `p0`, clamped to `1..=65535`; a NaN (a
    /// probability computed from degenerate inputs) gives `2^15`, p = 1/2, so that no
    /// caller can put the invalid `q0 = 0` in a frame.
    pub(crate) fn quantize(p0: f64) -> u16 {
        if p0.is_nan() {
            return 1 << 15;
        }
        let q = (p0 * f64::from(BIT_TOTAL)).round();
        q.clamp(1.0, f64::from(BIT_TOTAL - 1)) as u16
    }

    /// The quantized probability measured on a bit array: `round(zeros * 2^16 / m)`,
    /// computed in integers and clamped to `1..=65535`.
    pub(crate) fn measured(zeros: u64, m: u64) -> u16 {
        let q = (u128::from(zeros) * u128::from(BIT_TOTAL) + u128::from(m / 2)) / u128::from(m);
        q.clamp(1, u128::from(BIT_TOTAL - 1)) as u16
    }
}

/// The adaptive bit model: counts of zeros and ones seen so far, each starting at 1.
///
/// `q0 = floor(C0 * 2^16 / (C0 + C1))` is kept with its remainder and updated without
/// division once the total passes `2^16`: each update moves the numerator by 0 or `2^16` and
/// the denominator by 1, so the quotient moves by at most one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Adaptive {
    c0: u64,
    c1: u64,
    /// `floor(C0 * 2^16 / (C0 + C1))`.
    quotient: u64,
    /// `C0 * 2^16 - quotient * (C0 + C1)`.
    remainder: u64,
}

impl Default for Adaptive {
    fn default() -> Self {
        Adaptive {
            c0: 1,
            c1: 1,
            quotient: 1 << (BIT_PRECISION - 1),
            remainder: 0,
        }
    }
}

impl Adaptive {
    /// The current quantized zero probability, `max(1, floor(C0 * 2^16 / (C0 + C1)))`.
    ///
    /// It is at most `2^16 - 1` because `C1 >= 1`.
    #[inline]
    pub(crate) fn q0(&self) -> u32 {
        (self.quotient as u32).max(1)
    }

    /// `floor(C0 * 2^16 / (C0 + C1))` and its remainder: all a decoder needs to continue
    /// the model once `C0 + C1` is past `2^16` (the total is then the bit count plus 2).
    pub(crate) fn quotient_remainder(&self) -> (u64, u64) {
        (self.quotient, self.remainder)
    }

    /// Count a coded bit.
    #[inline]
    pub(crate) fn update(&mut self, bit: bool) {
        self.c1 += u64::from(bit);
        self.c0 += u64::from(!bit);
        let total = self.c0 + self.c1;
        if total <= 1 << BIT_PRECISION {
            // C0 < 2^16 here, so the numerator fits 32 bits.
            let numerator = (self.c0 << BIT_PRECISION) as u32;
            self.quotient = u64::from(numerator / total as u32);
            self.remainder = u64::from(numerator) - self.quotient * total;
        } else {
            // numerator' = quotient * total + (remainder - quotient + [bit = 0] * 2^16),
            // and 0 <= quotient < 2^16 < total, so at most one correction each way.
            let old_quotient = self.quotient;
            let r = self.remainder + (u64::from(!bit) << BIT_PRECISION);
            let down = r < old_quotient;
            let r = r + if down { total } else { 0 } - old_quotient;
            let up = r >= total;
            self.quotient = self.quotient + u64::from(up) - u64::from(down);
            self.remainder = r - if up { total } else { 0 };
        }
    }
}

/// The multi-bit form of known-p: a table of `2^width` symbol frequencies out of `2^24`.
///
/// Symbol `v` stands for `width` consecutive filter bits, bit `j` of `v` being the `j`-th bit
/// (the wire bit order, so a whole byte symbol is the packed byte itself).
#[derive(Debug, Clone)]
pub(crate) struct SymbolTable {
    /// `cum[v]` = sum of the frequencies of symbols below `v`; `cum[2^width] = 2^24`.
    cum: Vec<u32>,
}

impl SymbolTable {
    /// Build the table for symbols of `width` bits (1 to 8) from `q0 = P(0) * 2^16`.
    ///
    /// With `q1 = 2^16 - q0`, a symbol with `z` zero bits and `o` one bits has weight
    /// `q0^z * q1^o` out of `2^(16 * width)` (exact in 128-bit integers); its frequency is
    /// `max(1, floor(weight * 2^24 / 2^(16 * width)))`; then the first symbol of largest
    /// frequency absorbs `2^24 - sum` (positive or negative) so the frequencies sum to
    /// `2^24`.
    pub(crate) fn new(q0: u16, width: u32) -> Option<Self> {
        if q0 == 0 || !(1..=8).contains(&width) {
            return None;
        }
        let q0 = u128::from(q0);
        let q1 = u128::from(BIT_TOTAL) - q0;
        let n = 1usize << width;
        let shift_total = 16 * width; // weights are out of 2^(16 width)
                                      // The frequency depends on the count of ones alone: width + 1 values.
        let by_ones: Vec<u64> = (0..=width)
            .map(|ones| {
                let w = q0.pow(width - ones) * q1.pow(ones);
                let f = if shift_total >= SYMBOL_PRECISION as u32 {
                    w >> (shift_total - SYMBOL_PRECISION as u32)
                } else {
                    w << (SYMBOL_PRECISION as u32 - shift_total)
                };
                (f as u64).max(1)
            })
            .collect();
        let mut freq: Vec<u64> = (0..n)
            .map(|v| by_ones[(v as u32).count_ones() as usize])
            .collect();
        let sum: u64 = freq.iter().sum();
        let top = (0..n)
            .max_by(|&a, &b| freq[a].cmp(&freq[b]).then(b.cmp(&a)))
            .expect("n >= 2");
        freq[top] = (freq[top] + u64::from(SYMBOL_TOTAL)).checked_sub(sum)?;
        if freq[top] == 0 {
            return None;
        }
        let mut cum = Vec::with_capacity(n + 1);
        let mut acc = 0u32;
        cum.push(0);
        for f in &freq {
            acc += *f as u32;
            cum.push(acc);
        }
        debug_assert_eq!(acc, SYMBOL_TOTAL);
        Some(SymbolTable { cum })
    }

    /// `cum(v)` for `v` in `0..=2^width`: the frequencies of the symbols below `v`, summed
    /// (`cum(2^width) = 2^24`).
    pub(crate) fn cumulative(&self) -> &[u32] {
        &self.cum
    }

    /// The frequency of symbol `v` out of `2^24`.
    #[cfg(test)]
    pub(crate) fn frequency(&self, v: usize) -> u32 {
        self.cum[v + 1] - self.cum[v]
    }

    /// The symbol whose interval contains `quantile` (< 2^24), with its interval (a binary
    /// search: decoders use the tables of `rans::DecTable`).
    #[cfg(test)]
    pub(crate) fn find(&self, quantile: u32) -> (usize, u32, u32) {
        let s = self.cum.partition_point(|&c| c <= quantile) - 1;
        (s, self.cum[s], self.cum[s + 1] - self.cum[s])
    }
}

// The model as constriction's coders take it: the reference the tests hold coding 3 to.
#[cfg(test)]
impl constriction::stream::model::EntropyModel<SYMBOL_PRECISION> for &SymbolTable {
    type Symbol = usize;
    type Probability = u32;
}

#[cfg(test)]
impl constriction::stream::model::EncoderModel<SYMBOL_PRECISION> for &SymbolTable {
    #[inline]
    fn left_cumulative_and_probability(
        &self,
        symbol: impl core::borrow::Borrow<usize>,
    ) -> Option<(u32, core::num::NonZeroU32)> {
        let v = *symbol.borrow();
        let left = *self.cum.get(v)?;
        Some((
            left,
            core::num::NonZeroU32::new(*self.cum.get(v + 1)? - left)?,
        ))
    }
}

/// The tables of the multi-bit model for a bit array of `m` bits, shared by codings 3 and 6:
/// whole bytes, then the last partial byte (its `m mod 8` bits) if any.
pub(crate) fn symbol_tables(q0: u16, m: u64) -> (SymbolTable, Option<SymbolTable>) {
    let full = SymbolTable::new(q0, 8).expect("q0 >= 1");
    let tail =
        (!m.is_multiple_of(8)).then(|| SymbolTable::new(q0, (m % 8) as u32).expect("q0 >= 1"));
    (full, tail)
}

/// The nibble model of `q0` at `precision` bits (spec §4.12 at 13, §4.13 at 12): for each
/// nibble `v` with `o` ones, `f(v) = max(1, floor(q0^(4 - o) q1^o / 2^(64 - precision)))`,
/// and the rounding remainder to the first largest.
pub(crate) fn nibble_frequencies(q0: u16, precision: u32) -> [u32; 16] {
    debug_assert!((8..=16).contains(&precision));
    let (q0, q1) = (u128::from(q0), 65536 - u128::from(q0));
    // The five weights, by count of ones (q0 and q1 are at most 2^16: the products are
    // at most 2^64).
    let (q0_2, q1_2) = (q0 * q0, q1 * q1);
    let by_ones = [
        q0_2 * q0_2,
        q0_2 * q0 * q1,
        q0_2 * q1_2,
        q0 * q1_2 * q1,
        q1_2 * q1_2,
    ]
    .map(|weight| ((weight >> (64 - precision)) as u32).max(1));
    let mut f: [u32; 16] = std::array::from_fn(|v| by_ones[v.count_ones() as usize]);
    // Each floor is at most its weight and 15 were raised to at most 1, so the sum is at
    // most 2^precision + 15 and the largest (at least 2^precision / 16) stays at least 1.
    rest_to_first_largest(&mut f, precision);
    f
}

/// Make frequencies sum to `2^precision`: the first of the largest takes the difference,
/// up or down (the caller shows that it stays at least 1).
pub(crate) fn rest_to_first_largest(f: &mut [u32], precision: u32) {
    let sum: u32 = f.iter().sum();
    let mut top = 0;
    for s in 1..f.len() {
        if f[s] > f[top] {
            top = s;
        }
    }
    f[top] = f[top] + (1 << precision) - sum;
}

/// What the codings' size predictions start from: `len` bits holding `ones` one bits and
/// the `q0` a frame would send, with the figures several codings share (the cross entropy,
/// the nibble models' excess) computed at most once. Floats, for the encoder's choice,
/// never in a decoder.
pub(crate) struct Counts {
    pub(crate) len: u64,
    pub(crate) ones: u64,
    pub(crate) q0: u16,
    cross: std::cell::OnceCell<f64>,
    /// The nibble models' excess at precisions 12 (coding 9) and 13 (codings 8 and 10).
    excess: [std::cell::OnceCell<f64>; 2],
}

impl Counts {
    pub(crate) fn new(len: u64, ones: u64, q0: u16) -> Self {
        Counts {
            len,
            ones,
            q0,
            cross: Default::default(),
            excess: Default::default(),
        }
    }

    /// [`cross_entropy_bits`] of these counts.
    pub(crate) fn cross_entropy_bits(&self) -> f64 {
        *self
            .cross
            .get_or_init(|| cross_entropy_bits(self.len, self.ones, self.q0))
    }

    /// [`nibble_excess_bits`] of this `q0` at `precision` (kept for 12 and 13, the
    /// precisions of the nibble codings).
    pub(crate) fn nibble_excess_bits(&self, precision: u32) -> f64 {
        let slot = match precision {
            12 => &self.excess[0],
            13 => &self.excess[1],
            _ => return nibble_excess_bits(self.q0, precision),
        };
        *slot.get_or_init(|| nibble_excess_bits(self.q0, precision))
    }
}

/// Bits that `len` bits holding `ones` one bits cost under the bit model of `q0`: their
/// cross entropy, `-(zeros log2 q + ones log2 (1 - q))` with `q = q0 / 2^16` (for the
/// encoder's size models; floats, never in a decoder).
pub(crate) fn cross_entropy_bits(len: u64, ones: u64, q0: u16) -> f64 {
    let zeros = (len - ones) as f64;
    let ones_f = ones as f64;
    let q = f64::from(q0) / 65536.0;
    -(zeros * q.log2()
        + if ones > 0 {
            ones_f * (1.0 - q).log2()
        } else {
            0.0
        })
}

/// Expected bits per nibble that the model of `q0` at `precision` costs over the nibble
/// model with the same `q0` (for the encoder's size model; floats, never in a decoder).
pub(crate) fn nibble_excess_bits(q0: u16, precision: u32) -> f64 {
    let f = nibble_frequencies(q0, precision);
    let p = f64::from(q0) / 65536.0;
    let (lp, lq) = (p.log2(), (1.0 - p).log2());
    // By count of ones: a nibble's probability and its own cost; the nibbles of one count
    // share a frequency (but the one that took the rounding remainder), so a log2 each.
    let (q, p2, q2) = (1.0 - p, p * p, (1.0 - p) * (1.0 - p));
    let pv = [p2 * p2, p2 * p * q, p2 * q2, p * q2 * q, q2 * q2];
    let own: [f64; 5] = std::array::from_fn(|o| -((4 - o) as f64 * lp + o as f64 * lq));
    let mut logs = [(0u32, 0.0f64); 5];
    let mut excess = 0.0;
    for (v, &fv) in f.iter().enumerate() {
        let o = v.count_ones() as usize;
        if logs[o].0 != fv {
            logs[o] = (fv, f64::from(fv).log2());
        }
        excess += pv[o] * (f64::from(precision) - logs[o].1 - own[o]);
    }
    excess.max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantize_never_gives_zero() {
        assert_eq!(KnownP::quantize(f64::NAN), 1 << 15);
        assert_eq!(KnownP::quantize(0.0), 1);
        assert_eq!(KnownP::quantize(-3.0), 1);
        assert_eq!(KnownP::quantize(1.0), 65535);
        assert_eq!(KnownP::quantize(f64::INFINITY), 65535);
        assert_eq!(KnownP::quantize(0.5), 1 << 15);
    }

    #[test]
    fn adaptive_model_matches_the_paper() {
        let mut m = Adaptive::default();
        assert_eq!(m.q0(), 1 << 15); // C0 = C1 = 1
        m.update(false);
        assert_eq!(m.q0(), (2 << 16) / 3);
        for _ in 0..200_000 {
            m.update(true);
        }
        assert_eq!(m.q0(), 1); // floor would be 0: clamped
    }

    #[test]
    fn incremental_quotient_equals_the_division() {
        let mut m = Adaptive::default();
        let (mut c0, mut c1) = (1u64, 1u64);
        let mut x = 12345u64;
        for i in 0..300_000u64 {
            x = crate::filter::hashing::fmix64(x + i);
            // Runs of zeros and ones, so both corrections are exercised.
            let bit = if i < 150_000 {
                x.is_multiple_of(7)
            } else {
                !x.is_multiple_of(3)
            };
            m.update(bit);
            if bit {
                c1 += 1
            } else {
                c0 += 1
            }
            let want = (((c0 << 16) / (c0 + c1)) as u32).max(1);
            assert_eq!(m.q0(), want, "after {i} bits");
        }
    }

    #[test]
    fn symbol_tables_sum_and_respect_the_bits() {
        for q0 in [1u16, 2, 300, 32768, 56789, 65000, 65535] {
            for width in 1..=8 {
                let t = SymbolTable::new(q0, width).unwrap();
                let total: u32 = (0..1usize << width).map(|v| t.frequency(v)).sum();
                assert_eq!(total, SYMBOL_TOTAL);
                for quantile in (0..SYMBOL_TOTAL).step_by(4099) {
                    let (s, left, f) = t.find(quantile);
                    assert!(left <= quantile && quantile < left + f);
                    assert_eq!(t.frequency(s), f);
                }
            }
        }
        // Width 1 is exactly the bit model, scaled.
        let t = SymbolTable::new(1000, 1).unwrap();
        assert_eq!(t.frequency(0), 1000 << 8);
        assert!(SymbolTable::new(0, 8).is_none());
        assert!(SymbolTable::new(5, 9).is_none());
    }

    #[test]
    fn measured_quantization_is_integer_rounding() {
        assert_eq!(KnownP::measured(1, 2), 32768);
        assert_eq!(KnownP::measured(0, 10), 1);
        assert_eq!(KnownP::measured(10, 10), 65535);
        assert_eq!(KnownP::measured(867, 1000), 56820);
        assert_eq!(KnownP::quantize(0.867), 56820);
    }
}
