//! A rational number of hash functions (Walther et al., *Rational Bloom filter*).
//!
//! k need not be an integer: every key uses `floor(k)` hash functions, and one more is
//! activated deterministically from the key's own hash with probability `k - floor(k)`.
//! Because the activation depends only on the key, insert and query agree and there are no
//! false negatives.
//!
//! k travels in frame headers, so it is kept exactly as a fixed-point number with
//! [`K_FRAC_BITS`] fractional bits: `k = raw / 2^16`.

use crate::error::{invalid, Result};

/// Number of fractional bits in the fixed-point representation of k.
pub const K_FRAC_BITS: u32 = 16;

/// The largest k the crate accepts anywhere (its integer part). Frames cannot exceed it.
pub const MAX_K: u32 = 1024;

/// A number of hash functions, exact, with 16 fractional bits.
///
/// ```
/// use bloomwire::HashCount;
/// let k = HashCount::from_f64(2.5).unwrap();
/// assert_eq!(k.whole(), 2);
/// assert_eq!(k.frac(), 1 << 15); // one half, over 2^16
/// assert_eq!(k.to_f64(), 2.5);
/// assert_eq!(HashCount::new(3).unwrap().raw(), 3 << 16);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HashCount(u32);

/// The number of hash functions, as it is: `HashCount(2)`, `HashCount(1.5)` (the raw
/// fixed-point value is [`HashCount::raw`]).
impl core::fmt::Debug for HashCount {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "HashCount({self})")
    }
}

impl HashCount {
    /// An integer number of hash functions, `1..=MAX_K`.
    pub fn new(k: u32) -> Result<Self> {
        if k == 0 || k > MAX_K {
            return Err(invalid("k", format!("{k} is not in 1..={MAX_K}")));
        }
        Ok(Self(k << K_FRAC_BITS))
    }

    /// k from its fixed-point representation `raw / 2^16`; must be in `[1, MAX_K]`.
    pub fn from_raw(raw: u32) -> Result<Self> {
        let k = Self::from_raw_allow_zero(raw)?;
        if raw < 1 << K_FRAC_BITS {
            return Err(invalid("k", format!("{} is below 1", k.to_f64())));
        }
        Ok(k)
    }

    /// Like [`from_raw`](Self::from_raw) but accepts k in `[0, 1)` too, as a block of a
    /// variably-sized block filter may use fewer than one hash function on average.
    pub fn from_raw_allow_zero(raw: u32) -> Result<Self> {
        if raw > MAX_K << K_FRAC_BITS {
            return Err(invalid("k", format!("raw {raw} is above {MAX_K}")));
        }
        Ok(Self(raw))
    }

    /// The nearest representable k to a real number, in `[1, MAX_K]`.
    pub fn from_f64(k: f64) -> Result<Self> {
        if !k.is_finite() || !(1.0..=MAX_K as f64).contains(&k) {
            return Err(invalid("k", format!("{k} is not in [1, {MAX_K}]")));
        }
        Self::from_raw((k * (1u32 << K_FRAC_BITS) as f64).round() as u32)
    }

    /// The fixed-point representation, `k * 2^16`.
    pub fn raw(self) -> u32 {
        self.0
    }

    /// `floor(k)`: hash functions every key uses.
    pub fn whole(self) -> u32 {
        self.0 >> K_FRAC_BITS
    }

    /// `(k - floor(k)) * 2^16`: the activation threshold of the extra hash function.
    pub fn frac(self) -> u32 {
        self.0 & ((1 << K_FRAC_BITS) - 1)
    }

    /// `ceil(k)`: the most hash functions any key uses.
    pub fn ceil(self) -> u32 {
        self.whole() + u32::from(self.frac() != 0)
    }

    /// Whether k is an integer.
    pub fn is_integer(self) -> bool {
        self.frac() == 0
    }

    /// k as a real number (exact: every representable k is a dyadic rational).
    pub fn to_f64(self) -> f64 {
        self.0 as f64 / (1u32 << K_FRAC_BITS) as f64
    }

    /// Whether a key whose activation draw is `draw` uses the extra hash function: the top
    /// 16 bits of the draw, compared with the fractional part of k.
    #[inline]
    pub(crate) fn activates(self, draw: u64) -> bool {
        ((draw >> (64 - K_FRAC_BITS)) as u32) < self.frac()
    }

    /// How many hash functions a key with activation draw `draw` uses.
    #[inline]
    pub(crate) fn count_for(self, draw: u64) -> u32 {
        self.whole() + u32::from(self.activates(draw))
    }
}

impl core::fmt::Display for HashCount {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.is_integer() {
            write!(f, "{}", self.whole())
        } else {
            write!(f, "{}", self.to_f64())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_enforced() {
        assert!(HashCount::new(0).is_err());
        assert!(HashCount::new(MAX_K + 1).is_err());
        assert!(HashCount::from_raw((1 << 16) - 1).is_err());
        assert!(HashCount::from_raw_allow_zero(0).is_ok());
        assert!(HashCount::from_f64(f64::NAN).is_err());
        assert!(HashCount::from_f64(0.5).is_err());
        assert_eq!(HashCount::new(MAX_K).unwrap().ceil(), MAX_K);
    }

    #[test]
    fn activation_probability_is_exact() {
        // Over all 2^16 values of the top bits, exactly frac of them activate.
        let k = HashCount::from_f64(1.3).unwrap();
        let active = (0u64..1 << 16).filter(|&t| k.activates(t << 48)).count() as u32;
        assert_eq!(active, k.frac());
        assert_eq!(k.ceil(), 2);
    }
}
