//! The formulas of the papers, for planning and for checking measurements.
//!
//! With n keys, m bits and k hash functions (Mitzenmacher, *Compressed Bloom Filters*):
//!
//! * the probability that a bit is still zero is `p = (1 - 1/m)^(kn) ~ exp(-kn/m)`;
//! * the false positive rate is `f = (1 - p)^k`;
//! * an arithmetic coder sends the bit array in about `m * H(p)` bits, `H` the binary
//!   entropy.
//!
//! For a rational k (Walther et al.) each key uses `floor(k)` hash functions and one more with
//! probability `r = k - floor(k)`, so `p` is unchanged in the limit and
//! `f = (1 - p)^floor(k) * (1 - r*p)`. Partitioned filters (Kirsch and Mitzenmacher) and
//! variably-sized block filters have their own forms, given by [`false_positive_rate`] and
//! [`zero_fraction`] per [`Layout`].
//!
//! These functions use floating point; they serve senders and planners, never a decoder.

use crate::filter::{block_sizes, Layout, Params};

/// Binary entropy `H(p) = -p log2 p - (1-p) log2 (1-p)` in bits, with `H(0) = H(1) = 0`.
pub fn entropy(p: f64) -> f64 {
    if p <= 0.0 || p >= 1.0 {
        0.0
    } else {
        -p * p.log2() - (1.0 - p) * (1.0 - p).log2()
    }
}

/// Asymptotic probability that a given bit is zero: `exp(-k n / m)`.
pub fn p_zero(k: f64, n: f64, m: f64) -> f64 {
    (-k * n / m).exp()
}

/// Exact probability that a given bit of a standard filter is zero after n insertions with
/// a rational k: `((1 - 1/m)^floor(k) * (1 - r/m))^n` with `r = k - floor(k)`.
pub fn p_zero_exact(k: f64, n: f64, m: f64) -> f64 {
    if n == 0.0 {
        // No keys: every bit is zero, even where one key would set them all (m = 1,
        // where the logarithm below is -inf and 0 * -inf is NaN).
        return 1.0;
    }
    let whole = k.floor();
    let r = k - whole;
    // A key with no whole hash function leaves a 1-bit region alone: skip 0 * ln(0).
    let whole_part = if whole > 0.0 {
        whole * (-1.0 / m).ln_1p()
    } else {
        0.0
    };
    let one_key = whole_part + (-r / m).ln_1p();
    (n * one_key).exp()
}

/// False positive rate of a standard (rational) filter whose bits are zero with
/// probability `p`: `(1 - p)^floor(k) * (1 - r*p)`. For integer k this is `(1 - p)^k`.
pub fn fpr_given_p(k: f64, p: f64) -> f64 {
    let whole = k.floor();
    let r = k - whole;
    (1.0 - p).powf(whole) * (1.0 - r * p)
}

/// Asymptotic false positive rate of a standard filter, `(1 - exp(-kn/m))^k` (rational k
/// as in [`fpr_given_p`]).
pub fn fpr(k: f64, n: f64, m: f64) -> f64 {
    fpr_given_p(k, p_zero(k, n, m))
}

/// The same with the exact finite-m zero probability.
pub fn fpr_exact(k: f64, n: f64, m: f64) -> f64 {
    fpr_given_p(k, p_zero_exact(k, n, m))
}

/// Expected fraction of ones in the XOR of two generations of a filter whose bits are zero
/// with probability `p`, when a fraction `c` of the keys was replaced (Section IV of
/// *Compressed Bloom Filters*): `q = 2p(1 - p^c)`.
pub fn delta_one_fraction(p: f64, c: f64) -> f64 {
    2.0 * p * (1.0 - p.powf(c))
}

/// Expected bits of an ideal entropy coder for a filter whose bits are zero with
/// probability `p`: `m * H(p)`.
pub fn compressed_bits(m: f64, p: f64) -> f64 {
    m * entropy(p)
}

/// Expected fraction of zero bits of a filter with these parameters after `n` insertions.
pub fn zero_fraction(params: &Params, n: f64) -> f64 {
    let m = params.m() as f64;
    match params.layout() {
        Layout::Standard { k } => p_zero_exact(k.to_f64(), n, m),
        Layout::Partitioned { k } => {
            let parts = k.ceil() as f64;
            let part = (params.m() / u64::from(k.ceil())) as f64;
            let full = p_zero_exact(1.0, n, part);
            let r = k.to_f64() - k.whole() as f64;
            let last = if r > 0.0 {
                p_zero_exact(r, n, part)
            } else {
                full
            };
            let unused = m - parts * part;
            (full * (parts - 1.0) * part + last * part + unused) / m
        }
        Layout::Blocks { ks } => {
            block_sizes(params.m())
                .zip(ks)
                .map(|(size, k)| size as f64 * p_zero_exact(k.to_f64(), n, size as f64))
                .sum::<f64>()
                / m
        }
    }
}

/// Expected false positive rate of a filter with these parameters after `n` insertions
/// (exact finite-m zero probabilities; independence between bits assumed, as in the
/// papers).
pub fn false_positive_rate(params: &Params, n: f64) -> f64 {
    match params.layout() {
        Layout::Standard { k } => fpr_exact(k.to_f64(), n, params.m() as f64),
        Layout::Partitioned { k } => {
            let part = (params.m() / u64::from(k.ceil())) as f64;
            let r = k.to_f64() - k.whole() as f64;
            let full = 1.0 - p_zero_exact(1.0, n, part);
            let last = p_zero_exact(r, n, part);
            full.powi(k.whole() as i32) * (1.0 - r * last)
        }
        Layout::Blocks { ks } => block_sizes(params.m())
            .zip(ks)
            .map(|(size, k)| fpr_exact(k.to_f64(), n, size as f64))
            .product(),
    }
}

/// Expected compressed size in bits (`sum over regions of size * H(p_region)`), the entropy
/// bound an arithmetic coder with a per-filter known p approaches.
pub fn expected_entropy_bits(params: &Params, n: f64) -> f64 {
    let m = params.m() as f64;
    match params.layout() {
        Layout::Standard { .. } | Layout::Partitioned { .. } => {
            compressed_bits(m, zero_fraction(params, n))
        }
        Layout::Blocks { ks } => block_sizes(params.m())
            .zip(ks)
            .map(|(size, k)| compressed_bits(size as f64, p_zero_exact(k.to_f64(), n, size as f64)))
            .sum(),
    }
}

/// The distribution of one counter of a counting Bloom filter whose counters receive on
/// average `mean` increments (`k n / m` for a standard filter): Poisson(`mean`), saturated
/// at `2^width - 1` (Section V of *Compressed Bloom Filters*). Entry v is `P(counter = v)`;
/// the last entry holds the whole tail `P(count >= 2^width - 1)`.
pub fn counter_distribution(mean: f64, width: u8) -> Vec<f64> {
    let top = (1usize << width.clamp(1, 8)) - 1;
    let mut p = Vec::with_capacity(top + 1);
    let mut term = (-mean).exp();
    let mut below = 0.0;
    for v in 0..top {
        p.push(term);
        below += term;
        term *= mean / (v + 1) as f64;
    }
    p.push((1.0 - below).max(0.0));
    p
}

/// Entropy of one counter ([`counter_distribution`]) in bits: what an ideal coder needs per
/// counter of a counting filter, against `width` bits packed.
pub fn counter_entropy(mean: f64, width: u8) -> f64 {
    counter_distribution(mean, width)
        .iter()
        .filter(|&&p| p > 0.0)
        .map(|&p| -p * p.log2())
        .sum()
}

/// The mean number of increments of a counter of a counting filter with these parameters
/// after `n` insertions: `-ln` of the fraction of zero bits of the Bloom filter it
/// summarizes (`k n / m` for a standard filter, up to the finite-m correction).
pub fn counter_mean(params: &Params, n: f64) -> f64 {
    -zero_fraction(params, n).ln()
}

/// Empirical entropy of a histogram (`histogram[v]` symbols of value `v`), in bits per
/// symbol: what a counting filter's counters cost at best when coded one by one.
///
/// ```
/// let h = bloomwire::theory::histogram_entropy(&[50, 50]);
/// assert!((h - 1.0).abs() < 1e-12);
/// ```
pub fn histogram_entropy(histogram: &[u64]) -> f64 {
    let m: u64 = histogram.iter().sum();
    if m == 0 {
        return 0.0;
    }
    let m = m as f64;
    histogram
        .iter()
        .filter(|&&h| h != 0)
        .map(|&h| {
            let p = h as f64 / m;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HashCount, HashFamily};

    #[test]
    fn no_keys_leave_every_bit_zero() {
        // m = 1: one key sets the only bit (ln(1 - 1/m) = -inf), so 0 * -inf must not
        // turn into NaN. Found by fuzzing the round trip with PSource::Theory.
        assert_eq!(p_zero_exact(1.0, 0.0, 1.0), 1.0);
        assert_eq!(p_zero_exact(1.0, 1.0, 1.0), 0.0);
        let one = Params::standard(1, 1, HashFamily::default()).unwrap();
        assert_eq!(zero_fraction(&one, 0.0), 1.0);
    }

    #[test]
    fn paper_reference_points() {
        // Compressed Bloom Filters, Table I: m/n = 14, k = 2 gives f = 0.0177; the
        // uncompressed optimum m/n = 8, k = 6 gives 0.0216 (rounded as printed).
        assert!((fpr(2.0, 1.0, 14.0) - 0.0177).abs() < 5e-5);
        assert!((fpr(6.0, 1.0, 8.0) - 0.0216).abs() < 5e-5);
        // n = 10 000, m = 140 000, k = 2: m H(p) / 8 = 9904 bytes (paper, Section III).
        let bytes = compressed_bits(140_000.0, p_zero(2.0, 10_000.0, 140_000.0)) / 8.0;
        assert!((bytes - 9904.0).abs() < 1.0, "{bytes}");
        assert_eq!(entropy(0.5), 1.0);
        assert_eq!(entropy(0.0), 0.0);
    }

    #[test]
    fn exact_forms_approach_the_asymptotic_ones() {
        let (k, n, m) = (3.0, 1e5, 1e6);
        assert!((p_zero_exact(k, n, m) - p_zero(k, n, m)).abs() < 1e-6);
        assert!((fpr_exact(k, n, m) / fpr(k, n, m) - 1.0).abs() < 1e-4);
        // Rational k interpolates the zero probability exactly in the exponent.
        assert!((p_zero_exact(2.5, n, m) - p_zero(2.5, n, m)).abs() < 1e-6);
    }

    #[test]
    fn layouts_agree_in_the_limit() {
        let fam = HashFamily::default();
        let k = HashCount::new(4).unwrap();
        let n = 100_000.0;
        let m = 1_000_000;
        let std = Params::new(m, Layout::Standard { k }, fam).unwrap();
        let part = Params::new(m, Layout::Partitioned { k }, fam).unwrap();
        let blocks = Params::new(m, Layout::blocks_proportional(m, k).unwrap(), fam).unwrap();
        let f = false_positive_rate(&std, n);
        assert!((false_positive_rate(&part, n) / f - 1.0).abs() < 0.01);
        // Rational k_j cost false positives: (1-p)^floor(k_j) (1 - r_j p) > (1-p)^k_j, so
        // proportional blocks lose against the standard filter (Walther et al.'s Eq. 11
        // approximates the rational factor away). At m/n = 10, k = 4 the loss is 40%.
        let ratio = false_positive_rate(&blocks, n) / f;
        eprintln!("block/standard fpr ratio {ratio}");
        assert!((1.0..1.5).contains(&ratio), "{ratio}");
        assert!((zero_fraction(&part, n) - zero_fraction(&std, n)).abs() < 1e-3);
    }

    #[test]
    fn counter_entropy_reference_points() {
        // Wide counters: the entropy of Poisson(1/2) is 1.3383 bits (sum -p log2 p).
        assert!((counter_entropy(0.5, 8) - 1.3383).abs() < 1e-3);
        // One-bit counters are the Bloom filter's bits: H(e^-mean).
        let mean = 2.0 * 10_000.0 / 140_000.0;
        assert!((counter_entropy(mean, 1) - entropy((-mean).exp())).abs() < 1e-12);
        // Saturation moves the tail onto the last value; the probabilities sum to 1.
        let d = counter_distribution(3.0, 2);
        assert!((d.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(d[3] > d[2]);
        assert!(counter_entropy(0.1, 4) < 0.6);
    }
}
