//! Coding 11's model (spec §4.15): the bytes of the array under the binomial bit model of
//! the header's `q0`, split into two alphabets. The *primary* one holds the 93 bytes with at
//! most three ones and an escape; the *secondary* one the other 163, coded after an escape.
//! Each alphabet lists its bytes by count of ones, then by value, so that the bytes of
//! equal probability (and equal frequency) are neighbours.

use super::spread::WIDE;
use crate::entropy::model::rest_to_first_largest;

/// Symbols of the primary alphabet: the 93 bytes with at most three ones, then the escape.
pub(crate) const PRIMARY: usize = 94;

/// Symbols of the secondary alphabet: the 163 bytes with four ones or more.
pub(crate) const SECONDARY: usize = 163;

/// The primary symbol that says "the byte is in the secondary alphabet".
pub(crate) const ESCAPE: usize = PRIMARY - 1;

/// The byte the decoding table writes for the escape: 0xFF has eight ones, so it is never a
/// primary byte.
pub(crate) const ESCAPE_BYTE: u8 = 0xFF;

/// Precision of the primary frequencies: they sum to `2^12`.
pub(crate) const PRIMARY_PRECISION: u32 = 12;

/// Precision of the secondary frequencies: they sum to `2^11`.
pub(crate) const SECONDARY_PRECISION: u32 = 11;

/// The 256 bytes by count of ones, then by value: the primary bytes are the first 93, the
/// secondary bytes the other 163.
#[cfg(test)]
pub(crate) const BYTES: [u8; 256] = by_ones();

/// The bytes the primary symbols decode to, the escape's [`ESCAPE_BYTE`], padded with
/// [`WIDE`] zeros for the table build.
pub(crate) const PRIMARY_BYTES: [u8; PRIMARY + WIDE] = padded(0, ESCAPE, Some(ESCAPE_BYTE));

/// The bytes the secondary symbols decode to, padded with [`WIDE`] zeros.
pub(crate) const SECONDARY_BYTES: [u8; SECONDARY + WIDE] = padded(ESCAPE, 256, None);

/// Per byte, its symbol: its index in `BYTES`, less 93 for a secondary byte.
pub(crate) const SYMBOL: [u8; 256] = symbols();

/// Per byte, its primary symbol: its [`SYMBOL`] if it is a primary byte, else the escape.
pub(crate) const PRIMARY_SYMBOL: [u8; 256] = primary_symbols();

/// Whether byte `b` is in the primary alphabet.
#[inline(always)]
pub(crate) const fn is_primary(b: u8) -> bool {
    b.count_ones() <= 3
}

const fn by_ones() -> [u8; 256] {
    let mut out = [0u8; 256];
    let (mut i, mut ones) = (0, 0);
    while ones <= 8 {
        let mut b = 0;
        while b < 256 {
            if (b as u8).count_ones() == ones {
                out[i] = b as u8;
                i += 1;
            }
            b += 1;
        }
        ones += 1;
    }
    out
}

/// `BYTES[from..to]`, then `last` if any, then zeros.
const fn padded<const L: usize>(from: usize, to: usize, last: Option<u8>) -> [u8; L] {
    let bytes = by_ones();
    let mut out = [0u8; L];
    let mut i = from;
    while i < to {
        out[i - from] = bytes[i];
        i += 1;
    }
    if let Some(b) = last {
        out[to - from] = b;
    }
    out
}

const fn symbols() -> [u8; 256] {
    let bytes = by_ones();
    let mut out = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        out[bytes[i] as usize] = if i < ESCAPE {
            i as u8
        } else {
            (i - ESCAPE) as u8
        };
        i += 1;
    }
    out
}

const fn primary_symbols() -> [u8; 256] {
    let symbol = symbols();
    let mut out = [ESCAPE as u8; 256];
    let mut b = 0;
    while b < 256 {
        if is_primary(b as u8) {
            out[b] = symbol[b];
        }
        b += 1;
    }
    out
}

/// `C(8, c)`: the bytes with `c` ones.
const CHOOSE: [u128; 9] = [1, 8, 28, 56, 70, 56, 28, 8, 1];

/// The frequencies of `q0` by count of ones before the rounding's rest: a symbol's 1 and its
/// share of the rest, rounded down. Integers only.
struct Shares {
    /// The primary bytes' with 0 ..= 3 ones.
    primary: [u32; 4],
    escape: u32,
    /// The secondary bytes' with 4 ..= 8 ones.
    secondary: [u32; 5],
}

/// [`Shares`] of `q0` (1 ..= 65535).
fn shares(q0: u16) -> Shares {
    debug_assert!(q0 >= 1);
    let (q0, q1) = (u128::from(q0), 65536 - u128::from(q0));
    let mut p0 = [1u128; 9];
    let mut p1 = [1u128; 9];
    for i in 1..9 {
        p0[i] = p0[i - 1] * q0;
        p1[i] = p1[i - 1] * q1;
    }
    // A byte with c ones has probability weight(c) / 2^128: q0 and q1 are below 2^16, so
    // the weights are exact, and they and their sums over bytes stay below 2^128.
    let weight = |c: usize| p0[8 - c] * p1[c];
    let escape: u128 = (4..9).map(|c| CHOOSE[c] * weight(c)).sum();
    let rest = (1 << PRIMARY_PRECISION) - PRIMARY as u64;
    // floor(w rest / 2^128), the product taken in two halves.
    let share = |w: u128| {
        let (hi, lo) = (w >> 64, w & u128::from(u64::MAX));
        1 + ((hi * u128::from(rest) + ((lo * u128::from(rest)) >> 64)) >> 64) as u32
    };
    // The secondary weights without their common factor q1^4: below 2^64, their sum below
    // 2^71, and a weight times the rest below 2^75.
    let part = |c: usize| p0[8 - c] * p1[c - 4];
    let total: u128 = (4..9).map(|c| CHOOSE[c] * part(c)).sum();
    let secondary_rest = (1 << SECONDARY_PRECISION) - SECONDARY as u128;
    Shares {
        primary: std::array::from_fn(|c| share(weight(c))),
        escape: share(escape),
        secondary: std::array::from_fn(|i| 1 + (part(i + 4) * secondary_rest / total) as u32),
    }
}

/// Steps the two tables' walks take at `q0` (1 ..= 65535), about: the groups of every run
/// of equal frequency but the largest (rounding's rest aside). A table build's cost.
pub(crate) fn walk_steps(q0: u16) -> u32 {
    let shares = shares(q0);
    let steps = |f: &[u32]| f.iter().sum::<u32>() - f.iter().max().copied().unwrap_or(0);
    let primary = [
        shares.primary[0],
        shares.primary[1],
        shares.primary[2],
        shares.primary[3],
        shares.escape,
    ];
    steps(&primary) + steps(&shares.secondary)
}

/// The frequencies of `q0` (1 ..= 65535): the primary symbols' (sum `2^12`) and the
/// secondary symbols' (sum `2^11`), each at least 1 (spec §4.15). Integers only.
///
/// Each symbol gets 1 and its share of the rest, rounded down; the first of the largest
/// takes what rounding left (under one per symbol). Raising the rare symbols to 1 first
/// and taking the excess from the largest, as coding 9 does, fails here: far from the
/// paper's density the secondary alphabet's 93 rare bytes take more than its largest
/// frequency holds.
pub(crate) fn frequencies(q0: u16) -> ([u32; PRIMARY], [u32; SECONDARY]) {
    let shares = shares(q0);
    // The alphabets list their bytes by count of ones: a range of symbols a count.
    let mut primary = [0u32; PRIMARY];
    let mut at = 0;
    for (c, &f) in shares.primary.iter().enumerate() {
        primary[at..at + CHOOSE[c] as usize].fill(f);
        at += CHOOSE[c] as usize;
    }
    primary[ESCAPE] = shares.escape;
    let mut secondary = [0u32; SECONDARY];
    let mut at = 0;
    for (c, &f) in (4..9).zip(&shares.secondary) {
        secondary[at..at + CHOOSE[c] as usize].fill(f);
        at += CHOOSE[c] as usize;
    }
    // Each f is at least 1 and the shares sum to at most the rest: the sums are at most
    // 2^precision, and the largest only grows.
    rest_to_first_largest(&mut primary, PRIMARY_PRECISION);
    rest_to_first_largest(&mut secondary, SECONDARY_PRECISION);
    (primary, secondary)
}

/// Bits per byte that the quantized frequencies of `q0` cost over the bit model's own
/// entropy (the Kullback-Leibler divergence of the frequencies from the model's byte
/// probabilities, the escape's share included). Floats, for the encoder's size model; from
/// the frequencies by count of ones, ten logarithms.
pub(crate) fn excess_bits(q0: u16) -> f64 {
    let shares = shares(q0);
    let prob = |c: usize| byte_probability(q0, c);
    let escape = escape_probability(q0);
    let mut primary = [(0, 0, 0.0); 5];
    for c in 0..4 {
        primary[c] = (CHOOSE[c] as u32, shares.primary[c], prob(c));
    }
    primary[4] = (1, shares.escape, escape);
    let mut bits = divergence(&primary, PRIMARY_PRECISION);
    if escape > 0.0 {
        let secondary: [(u32, u32, f64); 5] = std::array::from_fn(|i| {
            (
                CHOOSE[i + 4] as u32,
                shares.secondary[i],
                prob(i + 4) / escape,
            )
        });
        bits += escape * divergence(&secondary, SECONDARY_PRECISION);
    }
    bits
}

/// The probability of one byte with `c` ones under the bit model of `q0`. Floats.
fn byte_probability(q0: u16, c: usize) -> f64 {
    let q = f64::from(q0) / 65536.0;
    q.powi(8 - c as i32) * (1.0 - q).powi(c as i32)
}

/// The probability that a byte escapes (has four ones or more) under the bit model of
/// `q0`. Floats.
pub(crate) fn escape_probability(q0: u16) -> f64 {
    (4..9)
        .map(|c| CHOOSE[c] as f64 * byte_probability(q0, c))
        .sum()
}

/// The Kullback-Leibler divergence, in bits a symbol, of an alphabet's frequencies (summing
/// to `2^precision` after the rounding's rest) from its probabilities, the symbols given in
/// classes `(symbols, frequency, probability of each)` in symbol order. The rest goes to
/// the first symbol of the first largest class, as [`rest_to_first_largest`] gives it.
fn divergence(classes: &[(u32, u32, f64)], precision: u32) -> f64 {
    let total = 1u32 << precision;
    let rest = total - classes.iter().map(|&(n, f, _)| n * f).sum::<u32>();
    let mut top = 0;
    for (i, class) in classes.iter().enumerate() {
        if class.1 > classes[top].1 {
            top = i;
        }
    }
    let bits = |n: u32, f: u32, p: f64| {
        if p > 0.0 {
            f64::from(n) * p * (p * f64::from(total) / f64::from(f)).log2()
        } else {
            0.0
        }
    };
    classes
        .iter()
        .enumerate()
        .map(|(i, &(n, f, p))| match i == top {
            true => bits(n - 1, f, p) + bits(1, f + rest, p),
            false => bits(n, f, p),
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_alphabets_list_every_byte_once() {
        let mut seen = [false; 256];
        for (i, &b) in BYTES.iter().enumerate() {
            assert!(!seen[usize::from(b)]);
            seen[usize::from(b)] = true;
            assert_eq!(is_primary(b), i < ESCAPE, "byte {b:#04x}");
            let s = usize::from(SYMBOL[usize::from(b)]);
            assert_eq!(if i < ESCAPE { s } else { s + ESCAPE }, i);
            let primary = usize::from(PRIMARY_SYMBOL[usize::from(b)]);
            assert_eq!(primary, if i < ESCAPE { s } else { ESCAPE });
        }
        assert_eq!(&BYTES[..10], &[0, 1, 2, 4, 8, 16, 32, 64, 128, 3]);
        assert_eq!(BYTES[255], 0xFF);
    }

    #[test]
    fn every_q0_gives_frequencies_that_sum_and_stay_positive() {
        for q0 in 1..=65535u16 {
            let (p, s) = frequencies(q0);
            assert_eq!(p.iter().sum::<u32>(), 4096, "q0 {q0}");
            assert_eq!(s.iter().sum::<u32>(), 2048, "q0 {q0}");
            assert!(p.iter().chain(&s).all(|&f| f >= 1), "q0 {q0}");
        }
    }

    #[test]
    fn the_excess_is_the_divergence_over_every_symbol() {
        // By classes of equal ones against symbol by symbol, from the frequencies.
        for q0 in (1..=65535u16).step_by(7).chain([65535]) {
            let (primary, secondary) = frequencies(q0);
            let q = f64::from(q0) / 65536.0;
            let prob = |b: u8| {
                let c = b.count_ones() as i32;
                q.powi(8 - c) * (1.0 - q).powi(c)
            };
            let escape: f64 = BYTES[ESCAPE..].iter().map(|&b| prob(b)).sum();
            let term = |p: f64, f: u32, n: u32| match p > 0.0 {
                true => p * (p * f64::from(n) / f64::from(f)).log2(),
                false => 0.0,
            };
            let mut bits: f64 = (0..ESCAPE)
                .map(|s| term(prob(BYTES[s]), primary[s], 4096))
                .sum();
            bits += term(escape, primary[ESCAPE], 4096);
            if escape > 0.0 {
                bits += (0..SECONDARY)
                    .map(|s| escape * term(prob(BYTES[ESCAPE + s]) / escape, secondary[s], 2048))
                    .sum::<f64>();
            }
            let e = excess_bits(q0);
            assert!(
                (e - bits).abs() <= 1e-9 * bits.abs().max(1.0),
                "q0 {q0}: {e} {bits}"
            );
        }
    }

    #[test]
    fn the_excess_is_small_where_the_coding_is_meant_for() {
        // The paper's density (p0 = 0.867): a few thousandths of a bit a byte.
        let e = excess_bits(56_820);
        assert!(e > 0.0 && e < 0.005, "{e}");
        // Sparse arrays pay for the rare bytes' frequencies of 1.
        assert!(excess_bits(65_000) > e);
    }
}
