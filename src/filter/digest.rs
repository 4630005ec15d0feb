//! A bit array's digest (spec §5.1) brought forward by the bits that flipped, in time
//! proportional to the flips, not to the array.
//!
//! The digest is the CRC-32C of the packed array, and a CRC is affine over GF(2): for arrays
//! of one length, `crc(A ^ D) = crc(A) ^ lin(D)`, where `lin` is the CRC's linear part (no
//! initial value, no final inversion), the same for every `A`. And `lin(D)` is the XOR, over
//! the one bits `j` of `D`, of what a single one bit at `j` contributes: the register after
//! that bit and the `N - 1 - j` zero bits behind it (`N` bits in the packed array), which is
//! the polynomial `x^(N + 31 - j) mod P`. So a flip costs one power of `x` modulo CRC-32C's
//! polynomial, computed from four tables of `x^(d * 2^(11 i))` (11-bit digits `d` of the
//! exponent, 32 KiB in all) multiplied together: three carry-less multiplications (one,
//! for flips in a run that shares the exponent's high digits), each reduced by one
//! `crc32` instruction, where the CPU has PCLMULQDQ and SSE 4.2 (zlib's
//! `crc32_combine` does the same arithmetic a bit at a time, which is the scalar twin here).
//!
//! Polynomials are in the CRC's reflected form: bit `i` of a `u32` is the coefficient of
//! `x^(31 - i)`, so `1` is `0x8000_0000`.

use std::sync::OnceLock;

/// CRC-32C's reflected polynomial (without its `x^32` term).
const POLY: u32 = 0x82F6_3B78;

/// The polynomial `1`.
const ONE: u32 = 1 << 31;

/// Bits of the exponent each table covers.
const DIGIT: u32 = 11;

/// Tables, so exponents below `2^(DIGIT * TABLES)` take one entry from each.
const TABLES: usize = 4;

/// `a * b mod P`, a bit at a time (zlib's `multmodp`).
fn mul_scalar(a: u32, mut b: u32) -> u32 {
    let mut product = 0;
    let mut bit = ONE;
    while bit != 0 {
        if a & bit != 0 {
            product ^= b;
        }
        bit >>= 1;
        b = if b & 1 != 0 { (b >> 1) ^ POLY } else { b >> 1 };
    }
    product
}

/// `a * b mod P` with one carry-less multiplication and one `crc32`: the product's 63 bits,
/// moved up one place, are a reflected polynomial of degree below 64 whose low word is
/// reduced by `crc32` (which multiplies the word by `x^32` modulo P) and whose high word
/// is already reduced.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "pclmulqdq,sse4.2")]
#[inline]
unsafe fn mul_clmul(a: u32, b: u32) -> u32 {
    use std::arch::x86_64::{
        _mm_clmulepi64_si128, _mm_crc32_u32, _mm_cvtsi128_si64, _mm_cvtsi64_si128,
    };
    let product = _mm_clmulepi64_si128(
        _mm_cvtsi64_si128(i64::from(a)),
        _mm_cvtsi64_si128(i64::from(b)),
        0,
    );
    let p = (_mm_cvtsi128_si64(product) as u64) << 1;
    _mm_crc32_u32(0, p as u32) ^ (p >> 32) as u32
}

/// `x^(d * 2^(DIGIT * i))` for every digit `d`, table `i`.
type Powers = [[u32; 1 << DIGIT]; TABLES];

fn powers() -> &'static Powers {
    static POWERS: OnceLock<Box<Powers>> = OnceLock::new();
    POWERS.get_or_init(|| {
        let mut t = Box::new([[0u32; 1 << DIGIT]; TABLES]);
        // x^(2^(DIGIT * i)): x squared DIGIT * i times.
        let mut base = ONE >> 1;
        for table in t.iter_mut() {
            table[0] = ONE;
            for d in 1..table.len() {
                table[d] = mul_scalar(table[d - 1], base);
            }
            for _ in 0..DIGIT {
                base = mul_scalar(base, base);
            }
        }
        t
    })
}

/// `x^e mod P` for an exponent past the tables (a filter of more than 2^43 bits): the
/// tables' part times `x^(2^(DIGIT * TABLES))` raised to the rest, by squaring.
fn pow_large(t: &Powers, e: u64) -> u32 {
    let low_bits = DIGIT * TABLES as u32;
    let mut r = pow_scalar(t, e & ((1 << low_bits) - 1));
    let mut square = mul_scalar(t[TABLES - 1][(1 << DIGIT) - 1], t[TABLES - 1][1]);
    let mut high = e >> low_bits;
    while high != 0 {
        if high & 1 != 0 {
            r = mul_scalar(r, square);
        }
        square = mul_scalar(square, square);
        high >>= 1;
    }
    r
}

/// The tables' entries for the digits of `e` (below `2^(DIGIT * TABLES)`).
#[inline(always)]
fn entries(t: &Powers, e: u64) -> [u32; TABLES] {
    let mask = (1 << DIGIT) - 1;
    std::array::from_fn(|i| t[i][(e >> (DIGIT as usize * i)) as usize & mask])
}

/// `x^e mod P`, a bit at a time (below the tables' reach).
fn pow_scalar(t: &Powers, e: u64) -> u32 {
    let [a, b, c, d] = entries(t, e);
    mul_scalar(mul_scalar(a, b), mul_scalar(c, d))
}

/// What flipping the bits at `positions` (each below `bits`, a flip listed twice undoing
/// itself) does to the digest of an array of `bits` bits: XOR it into the digest.
fn change(bits: u64, positions: &[u64]) -> u32 {
    let t = powers();
    // N + 31, N the bits of the packed array.
    let top = bits.div_ceil(8) * 8 + 31;
    let reach = 1u64 << (DIGIT * TABLES as u32);
    if top >= reach {
        return positions
            .iter()
            .fold(0, |acc, &p| acc ^ pow_large(t, top - p));
    }
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::features().clmul {
        // SAFETY: the CPU has PCLMULQDQ and SSE 4.2 (probed just above).
        return unsafe { change_clmul(t, top, positions) };
    }
    positions
        .iter()
        .fold(0, |acc, &p| acc ^ pow_scalar(t, top - p))
}

/// Bits of the exponent below the high digits that [`change_clmul`] groups flips by.
const LOW_DIGITS: u32 = 2 * DIGIT;

/// [`change`] with carry-less multiplications. Flips in a run of equal high digits (the
/// exponent's bits from [`LOW_DIGITS`] on: runs of 2^22 bits, so an increasing list of
/// positions in an array of 10^8 bits has at most 24 of them) share the factor those
/// digits contribute: `x^e` for the run's exponents is `x^(high) x^(low)`, so each flip
/// costs one product (`x^low` from two tables) and each run one more, where a flip alone
/// costs three. The products of a run are summed as they come from the multiplier, 63
/// bits each, and reduced once at the run's end (reduction is linear): a flip is two table
/// reads, one carry-less multiplication and an XOR, with no `crc32` and no pass ahead to
/// find the run.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "pclmulqdq,sse4.2")]
unsafe fn change_clmul(t: &Powers, top: u64, positions: &[u64]) -> u32 {
    use std::arch::x86_64::{
        __m128i, _mm_clmulepi64_si128, _mm_cvtsi128_si64, _mm_cvtsi32_si128, _mm_setzero_si128,
        _mm_xor_si128,
    };
    let mask = (1 << DIGIT) - 1;
    let (t0, t1) = (&t[0], &t[1]);
    // The run's summed products, reduced and multiplied by the run's factor.
    let fold = |sum: __m128i, high: u64| {
        let p = (_mm_cvtsi128_si64(sum) as u64) << 1;
        let low = std::arch::x86_64::_mm_crc32_u32(0, p as u32) ^ (p >> 32) as u32;
        let [_, _, c, d] = entries(t, high << LOW_DIGITS);
        mul_clmul(low, mul_clmul(c, d))
    };
    let product = |e: usize| {
        _mm_clmulepi64_si128(
            _mm_cvtsi32_si128(t0[e & mask] as i32),
            _mm_cvtsi32_si128(t1[(e >> DIGIT) & mask] as i32),
            0,
        )
    };
    let mut total = 0u32;
    let Some(&first) = positions.first() else {
        return 0;
    };
    let mut high = (top - first) >> LOW_DIGITS;
    // Two sums, so that consecutive flips' products overlap.
    let (mut a, mut b) = (_mm_setzero_si128(), _mm_setzero_si128());
    let mut pairs = positions.chunks_exact(2);
    for pair in &mut pairs {
        let (e, f) = (top - pair[0], top - pair[1]);
        if (e >> LOW_DIGITS) != high || (f >> LOW_DIGITS) != high {
            // A run ends within the pair (24 times at most for an increasing list of 10^8
            // bits): finish it flip by flip.
            for e in [e, f] {
                if e >> LOW_DIGITS != high {
                    total ^= fold(_mm_xor_si128(a, b), high);
                    (a, b) = (_mm_setzero_si128(), _mm_setzero_si128());
                    high = e >> LOW_DIGITS;
                }
                a = _mm_xor_si128(a, product(e as usize));
            }
            continue;
        }
        a = _mm_xor_si128(a, product(e as usize));
        b = _mm_xor_si128(b, product(f as usize));
    }
    for &p in pairs.remainder() {
        let e = top - p;
        if e >> LOW_DIGITS != high {
            total ^= fold(_mm_xor_si128(a, b), high);
            (a, b) = (_mm_setzero_si128(), _mm_setzero_si128());
            high = e >> LOW_DIGITS;
        }
        a = _mm_xor_si128(a, product(e as usize));
    }
    total ^ fold(_mm_xor_si128(a, b), high)
}

/// Positions a [`DigestChange`] holds before it works them into its sum.
const BATCH: usize = 64;

/// A bit array's digest ([`BitArray::digest`](super::bits::BitArray::digest), spec §5.1)
/// brought forward by the bits that flip, at a cost per flip (tens of nanoseconds) that
/// does not depend on the array's length: a sender that knows which bits changed, and a
/// receiver that applies a positional delta, check the generations' digests without
/// reading the rest of the array.
///
/// ```
/// use bloomwire::filter::bits::BitArray;
/// use bloomwire::filter::DigestChange;
///
/// let mut bits = BitArray::new(1 << 20);
/// bits.set(7);
/// let before = bits.digest();
/// let mut change = DigestChange::new(bits.len());
/// for p in [3, 7, 999_999] {
///     change.flip(p); // 3 and 999 999 become ones, 7 a zero
/// }
/// let after = BitArray::from_ones(1 << 20, [3, 999_999]).unwrap();
/// assert_eq!(change.apply(before), after.digest());
/// ```
#[derive(Debug, Clone)]
pub struct DigestChange {
    bits: u64,
    sum: u32,
    pending: [u64; BATCH],
    held: usize,
}

impl DigestChange {
    /// No flips yet, in an array of `bits` bits.
    pub fn new(bits: u64) -> Self {
        DigestChange {
            bits,
            sum: 0,
            pending: [0; BATCH],
            held: 0,
        }
    }

    /// Flip bit `p` (below the array's length; a bit flipped twice is as it was).
    ///
    /// # Panics
    ///
    /// When `p` is not below the length given to [`new`](Self::new).
    #[inline]
    pub fn flip(&mut self, p: u64) {
        assert!(p < self.bits, "bit {p} of {}", self.bits);
        self.pending[self.held] = p;
        self.held += 1;
        if self.held == BATCH {
            self.sum ^= change(self.bits, &self.pending);
            self.held = 0;
        }
    }

    /// Flip the bit at each of `positions`, as [`flip`](Self::flip) does.
    pub fn flip_all(&mut self, positions: &[u64]) {
        if let Some(&p) = positions.iter().find(|&&p| p >= self.bits) {
            panic!("bit {p} of {}", self.bits);
        }
        self.sum ^= change(self.bits, positions);
    }

    /// The digest of the array after the flips, `digest` being the digest before them.
    pub fn apply(&self, digest: u32) -> u32 {
        digest ^ self.sum ^ change(self.bits, &self.pending[..self.held])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::bits::BitArray;
    use quickcheck::{QuickCheck, TestResult};

    fn flipped(a: &BitArray, positions: &[u64]) -> BitArray {
        let mut b = a.clone();
        b.flip(positions);
        b
    }

    #[test]
    fn the_kernel_multiplies_as_the_scalar_twin() {
        let mut x = 0x1234_5678u32;
        for _ in 0..10_000 {
            x = x.wrapping_mul(0x9E37_79B9).rotate_left(7) ^ 0x5bd1_e995;
            let y = x.rotate_left(13).wrapping_add(0x7F4A_7C15);
            let want = mul_scalar(x, y);
            assert_eq!(mul_scalar(y, x), want);
            #[cfg(target_arch = "x86_64")]
            if crate::cpu::features().clmul {
                // SAFETY: the CPU has the features (probed).
                assert_eq!(unsafe { mul_clmul(x, y) }, want, "{x:08x} * {y:08x}");
            }
        }
        assert_eq!(mul_scalar(ONE, 0xDEAD_BEEF), 0xDEAD_BEEF);
    }

    #[test]
    fn the_kernel_sums_as_the_scalar_twin() {
        let t = powers();
        let top = (1u64 << 33) + 31;
        let positions: Vec<u64> = (0..1001u64).map(|i| i * 8_589_869 % (1 << 33)).collect();
        let want = positions
            .iter()
            .fold(0, |acc, &p| acc ^ pow_scalar(t, top - p));
        assert_eq!(change(1 << 33, &positions), want);
        // Increasing, in runs of equal high digits (and one repeated flip), as a sender's
        // and a receiver's lists are.
        let mut sorted = positions.clone();
        sorted.extend([5, 5, (1 << 22) - 1, 1 << 22]);
        sorted.sort_unstable();
        let want = sorted
            .iter()
            .fold(0, |acc, &p| acc ^ pow_scalar(t, top - p));
        assert_eq!(change(1 << 33, &sorted), want);
        assert_eq!(
            change(1 << 33, &sorted[..1]),
            pow_scalar(t, top - sorted[0])
        );
        assert_eq!(change(1 << 33, &[]), 0);
        // Many flips a run, the runs' ends at odd and even places of the list.
        for (len, step) in [(1u64 << 25, 6_701u64), ((1 << 25) + 9, 4_099), (1 << 24, 1)] {
            let top = len.div_ceil(8) * 8 + 31;
            for skip in [0, 1] {
                let dense: Vec<u64> = (skip..len).step_by(step as usize).take(9_000).collect();
                let want = dense.iter().fold(0, |acc, &p| acc ^ pow_scalar(t, top - p));
                assert_eq!(change(len, &dense), want, "{len} {step} {skip}");
            }
        }
    }

    #[test]
    fn one_flip_changes_the_digest_as_the_crc_says() {
        for len in [1u64, 7, 8, 9, 63, 64, 65, 1000, 4096 * 8 + 3] {
            let a = BitArray::with_ones(len, &[0, len / 2]);
            for p in [0, len / 3, len / 2, len - 1] {
                let mut change = DigestChange::new(len);
                change.flip(p);
                assert_eq!(
                    change.apply(a.digest()),
                    flipped(&a, &[p]).digest(),
                    "len {len} bit {p}"
                );
            }
        }
    }

    #[test]
    fn exponents_past_the_tables_take_the_long_way() {
        // pow_large against the tables for an exponent both can reach.
        let t = powers();
        for e in [0u64, 1, 2047, 2048, 123_456_789, (1 << 43) + 5] {
            assert_eq!(pow_large(t, e), pow_scalar(t, e), "{e}");
        }
        let reach = 1u64 << (DIGIT * TABLES as u32);
        let (e, f) = (reach + 12_345, 6_789);
        // x^(e + f) = x^e * x^f.
        assert_eq!(
            pow_large(t, e + f),
            mul_scalar(pow_large(t, e), pow_scalar(t, f))
        );
    }

    #[test]
    fn no_flips_change_nothing_and_all_flips_complement() {
        for len in [1u64, 64, 100, 5000] {
            let a = BitArray::with_ones(len, &[len - 1]);
            assert_eq!(DigestChange::new(len).apply(a.digest()), a.digest());
            let all: Vec<u64> = (0..len).collect();
            let mut change = DigestChange::new(len);
            change.flip_all(&all);
            assert_eq!(change.apply(a.digest()), flipped(&a, &all).digest());
        }
    }

    /// Random arrays and random flip sets (repeats, the first and the last bits among
    /// them), flipped one at a time and all at once.
    #[test]
    fn incremental_digests_equal_full_digests() {
        fn prop(len: u16, ones: Vec<u16>, flips: Vec<u32>, ends: (bool, bool)) -> TestResult {
            let len = u64::from(len) * 7 + 1;
            let ones: Vec<u64> = ones.iter().map(|&o| u64::from(o) % len).collect();
            let a = BitArray::from_ones(len, ones).unwrap();
            let mut flips: Vec<u64> = flips.iter().map(|&f| u64::from(f) % len).collect();
            if ends.0 {
                flips.push(0);
            }
            if ends.1 {
                flips.push(len - 1);
            }
            let want = flipped(&a, &flips).digest();
            let mut one_by_one = DigestChange::new(len);
            flips.iter().for_each(|&p| one_by_one.flip(p));
            let mut at_once = DigestChange::new(len);
            at_once.flip_all(&flips);
            TestResult::from_bool(
                one_by_one.apply(a.digest()) == want && at_once.apply(a.digest()) == want,
            )
        }
        QuickCheck::new()
            .tests(300)
            .quickcheck(prop as fn(u16, Vec<u16>, Vec<u32>, (bool, bool)) -> TestResult);
    }
}
