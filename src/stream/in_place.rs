//! A delta applied in place on the filter a receiver holds (spec §5.2): the changed
//! positions are flipped in the held bits, the result's digest is computed in one pass and
//! compared with the frame's, and on a mismatch the same flips undo the change. No second
//! array is built and no XOR is decoded into scratch memory, and an error leaves the bits
//! exactly as they were.

use crate::error::{Error, Result};
use crate::filter::bits::BitArray;
use crate::filter::BloomFilter;
use crate::format::{check_delta_base, FrameHeader};

/// Apply a delta (its `header`) to the Bloom filter a receiver holds as generation
/// `base_generation` with digest `held_digest`, in place: the generation, shape and base
/// digest checked in the spec's order (5.2, the base digest from memory), then `change`
/// changes the bits and checks the result digest, restoring them on a mismatch. Returns the
/// new digest; on every error `held` is unchanged.
pub(crate) fn apply(
    header: &FrameHeader,
    held: &mut BloomFilter,
    held_digest: u32,
    base_generation: u64,
    change: impl FnOnce(&mut BitArray, u32) -> core::result::Result<u32, Refused>,
) -> Result<u32> {
    let difference = held.params().difference(&header.params);
    let result_digest = check_delta_base(header, difference, base_generation, || held_digest)?;
    match change(held.bits_mut(), result_digest) {
        Ok(digest) => {
            held.set_n(header.n);
            Ok(digest)
        }
        Err(Refused::Digest { actual }) => Err(Error::ResultMismatch {
            generation: header.generation,
            expected: result_digest,
            actual,
        }),
        Err(Refused::OutOfRange(p)) => Err(crate::error::invalid(
            "delta position",
            format!("{p} is not below m = {}", header.params.m()),
        )),
    }
}

/// Why an in-place application was refused; the bits are unchanged in both cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// A position at or past the array's length (a decoder that checked its input against
    /// m never yields one).
    OutOfRange(u64),
    /// The result's digest is `actual`, not the one the frame names.
    Digest { actual: u32 },
}

/// Flip bit `p` of `bits` for every `p` in `positions`, all below `bits.len()`.
fn flip(bits: &mut BitArray, positions: &[u64]) {
    let words = bits.words_mut();
    for &p in positions {
        words[(p / 64) as usize] ^= 1u64 << (p % 64);
    }
}

/// Flip `positions` (distinct, each below `bits.len()`) in `bits` and check the digest of
/// the result against `result_digest`. On a match the bits stay changed and the result's
/// digest is returned; otherwise the flips are undone. Costs O(positions) plus one digest
/// pass over the array.
pub(crate) fn apply_positions(
    bits: &mut BitArray,
    positions: &[u64],
    result_digest: u32,
) -> Result<u32, Refused> {
    let len = bits.len();
    if let Some(&p) = positions.iter().find(|&&p| p >= len) {
        return Err(Refused::OutOfRange(p));
    }
    flip(bits, positions);
    let actual = bits.digest();
    if actual != result_digest {
        flip(bits, positions);
        return Err(Refused::Digest { actual });
    }
    Ok(actual)
}

/// The same for a delta decoded into an XOR array (the codings other than positional): XOR
/// it into `bits` word by word, check the digest, XOR it again on a mismatch. `xor` has the
/// length of `bits` (the caller checked the shape).
pub(crate) fn apply_xor(
    bits: &mut BitArray,
    xor: &BitArray,
    result_digest: u32,
) -> Result<u32, Refused> {
    debug_assert_eq!(bits.len(), xor.len());
    let xor_into = |bits: &mut BitArray| {
        for (w, x) in bits.words_mut().iter_mut().zip(xor.words()) {
            *w ^= x;
        }
    };
    xor_into(bits);
    let actual = bits.digest();
    if actual != result_digest {
        xor_into(bits);
        return Err(Refused::Digest { actual });
    }
    Ok(actual)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_flip_in_place_and_the_digest_is_the_result_s() {
        let mut held = BitArray::with_ones(1000, &[1, 64, 999]);
        let want = BitArray::with_ones(1000, &[1, 63, 500, 999]);
        let digest = apply_positions(&mut held, &[63, 64, 500], want.digest()).unwrap();
        assert_eq!(held, want);
        assert_eq!(digest, want.digest());
    }

    #[test]
    fn a_wrong_result_digest_leaves_the_bits_unchanged() {
        let before = BitArray::with_ones(1000, &[1, 64, 999]);
        let mut held = before.clone();
        let wrong = before.digest() ^ 1;
        assert!(matches!(
            apply_positions(&mut held, &[3, 700], wrong),
            Err(Refused::Digest { .. })
        ));
        assert_eq!(held, before);
        let xor = BitArray::with_ones(1000, &[3, 700]);
        assert!(matches!(
            apply_xor(&mut held, &xor, wrong),
            Err(Refused::Digest { .. })
        ));
        assert_eq!(held, before);
    }

    #[test]
    fn a_position_past_the_end_changes_nothing() {
        let before = BitArray::with_ones(130, &[5]);
        let mut held = before.clone();
        assert_eq!(
            apply_positions(&mut held, &[6, 130], 0),
            Err(Refused::OutOfRange(130))
        );
        assert_eq!(held, before);
    }

    #[test]
    fn an_xor_array_applies_like_its_positions() {
        let mut a = BitArray::with_ones(300, &[0, 10, 299]);
        let mut b = a.clone();
        let xor = BitArray::with_ones(300, &[10, 200]);
        let want = BitArray::with_ones(300, &[0, 200, 299]).digest();
        apply_xor(&mut a, &xor, want).unwrap();
        apply_positions(&mut b, &[10, 200], want).unwrap();
        assert_eq!(a, b);
    }
}
