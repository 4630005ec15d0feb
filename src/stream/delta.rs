//! Deltas between generations (Section IV of *Compressed Bloom Filters*, spec §5.2): the
//! checks of a delta against the base it applies to, and its application, to a copy of the
//! base ([`Delta::apply`]) or in place on the filter a [`Receiver`](super::Receiver) holds.
//!
//! In place, the changed positions (a positional delta's, decoded from its payload, or the
//! one bits of a decoded XOR array) are flipped in the held bits, the result's digest is
//! computed in one pass and compared with the frame's, and on a mismatch the same flips undo
//! the change: no second array is built, and an error leaves the bits exactly as they were.

use crate::error::{invalid, Error, Result};
use crate::filter::bits::BitArray;
use crate::filter::counting::CountingBloomFilter;
use crate::filter::BloomFilter;
use crate::format::{Delta, FrameHeader, FrameKind};

/// The checks of a delta against a base, in the spec's order (5.2): the generation, the
/// shape (`difference`: the first field in which the base and the delta differ), the base
/// digest (asked only if the rest holds). Returns the result digest to check.
fn check_base(
    header: &FrameHeader,
    difference: Option<(&'static str, String, String)>,
    base_generation: u64,
    base_digest: impl FnOnce() -> u32,
) -> Result<u32> {
    let FrameKind::Delta {
        base_generation: wanted,
        base_digest: expected,
        result_digest,
    } = header.kind
    else {
        return Err(Error::UnexpectedDelta);
    };
    if wanted != base_generation {
        return Err(Error::GenerationGap {
            have: Some(base_generation),
            base: wanted,
        });
    }
    if let Some((field, base, delta)) = difference {
        return Err(Error::Incompatible(format!(
            "{field} is {base} in the base and {delta} in the delta"
        )));
    }
    let actual = base_digest();
    if actual != expected {
        return Err(Error::BaseMismatch {
            generation: wanted,
            expected,
            actual,
        });
    }
    Ok(result_digest)
}

/// [`Error::ResultMismatch`] unless the result's digest is the one the frame names.
fn check_result(header: &FrameHeader, expected: u32, actual: u32) -> Result<()> {
    if actual != expected {
        return Err(Error::ResultMismatch {
            generation: header.generation,
            expected,
            actual,
        });
    }
    Ok(())
}

impl Delta {
    /// Apply the delta to `base`, which the caller holds as generation `base_generation`.
    /// Returns the new generation's filter; `base` is untouched, so an error leaves the
    /// caller's state as it was.
    ///
    /// Errors, each meaning the receiver must resynchronize with a full frame:
    /// [`Error::GenerationGap`] (the delta is for another generation),
    /// [`Error::Incompatible`] (other m, layout, k or hash family),
    /// [`Error::BaseMismatch`] (same generation number, different contents),
    /// [`Error::ResultMismatch`] (the result is not what the sender had).
    ///
    /// ```
    /// use bloomwire::{decode, BloomFilter, Encoder, HashFamily, Limits, Message, Params};
    /// let mut f = BloomFilter::new(Params::standard(10_000, 2, HashFamily::default()).unwrap());
    /// f.insert(b"a");
    /// let old = f.clone();
    /// f.insert(b"b");
    /// let wire = Encoder::new().encode_delta(&old, 1, &f, 2).unwrap().to_bytes();
    /// let Message::Delta(delta) = decode(&wire, &Limits::default()).unwrap() else {
    ///     unreachable!("a delta frame")
    /// };
    /// assert_eq!(delta.apply(&old, 1).unwrap(), f);
    /// ```
    pub fn apply(&self, base: &BloomFilter, base_generation: u64) -> Result<BloomFilter> {
        let mut next = base.clone();
        apply_in_place(
            &self.header,
            &mut next,
            || base.bits().digest(),
            base_generation,
            Change::Xor(&self.xor),
        )?;
        Ok(next)
    }
}

impl Delta<Vec<u8>> {
    /// Apply a counting filter's delta (the counter-wise XOR of two generations) to `base`,
    /// which the caller holds as generation `base_generation`; as [`Delta::apply`], with
    /// [`Error::Incompatible`] also for another counter width.
    pub fn apply(
        &self,
        base: &CountingBloomFilter,
        base_generation: u64,
    ) -> Result<CountingBloomFilter> {
        let width = self.header.counter_width.unwrap_or(0);
        let difference = base.difference(&self.header.params, width);
        let result_digest =
            check_base(&self.header, difference, base_generation, || base.digest())?;
        let result = base.apply_xor(&self.xor, self.header.n)?;
        check_result(&self.header, result_digest, result.digest())?;
        Ok(result)
    }
}

/// What a Bloom filter's delta changes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Change<'a> {
    /// The changed positions, increasing (a positional delta's).
    Positions(&'a [u64]),
    /// The XOR of the two generations (a delta in any other coding, decoded).
    Xor(&'a BitArray),
}

/// Apply a Bloom filter's delta (its `header`, and what it changes) in place to `held`, held
/// as generation `base_generation` with the digest `held_digest` gives: the generation, shape
/// and base digest checked in the spec's order (5.2), the change made, the result's digest
/// checked and the change undone on a mismatch. Returns the new digest; on every error
/// `held` is unchanged. Costs O(changes) plus one digest pass over the array.
pub(crate) fn apply_in_place(
    header: &FrameHeader,
    held: &mut BloomFilter,
    held_digest: impl FnOnce() -> u32,
    base_generation: u64,
    change: Change<'_>,
) -> Result<u32> {
    let difference = held.params().difference(&header.params);
    let result_digest = check_base(header, difference, base_generation, held_digest)?;
    let bits = held.bits_mut();
    let flip = |bits: &mut BitArray| match change {
        Change::Positions(positions) => bits.flip(positions),
        Change::Xor(xor) => bits.xor_with(xor).expect("the lengths were checked"),
    };
    match change {
        Change::Positions(positions) => {
            if let Some(&p) = positions.iter().find(|&&p| p >= bits.len()) {
                return Err(invalid(
                    "delta position",
                    format!("{p} is not below m = {}", header.params.m()),
                ));
            }
        }
        Change::Xor(xor) if xor.len() != bits.len() => {
            return Err(Error::Incompatible(format!(
                "an XOR of {} bits for m = {}",
                xor.len(),
                bits.len()
            )));
        }
        Change::Xor(_) => {}
    }
    flip(bits);
    let actual = bits.digest();
    if let Err(e) = check_result(header, result_digest, actual) {
        flip(bits);
        return Err(e);
    }
    held.set_n(header.n);
    Ok(actual)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::hashing::HashFamily;
    use crate::filter::Params;

    fn delta_header(m: u64, base_digest: u32, result_digest: u32) -> FrameHeader {
        let mut h = crate::format::Encoder::new()
            .encode_delta(
                &BloomFilter::new(Params::standard(m, 2, HashFamily::default()).unwrap()),
                1,
                &BloomFilter::new(Params::standard(m, 2, HashFamily::default()).unwrap()),
                2,
            )
            .unwrap()
            .header()
            .clone();
        h.kind = FrameKind::Delta {
            base_generation: 1,
            base_digest,
            result_digest,
        };
        h
    }

    fn filter(m: u64, ones: &[u64]) -> BloomFilter {
        let params = Params::standard(m, 2, HashFamily::default()).unwrap();
        BloomFilter::from_parts(params, BitArray::with_ones(m, ones), 0).unwrap()
    }

    #[test]
    fn positions_flip_in_place_and_the_digest_is_the_result_s() {
        let mut held = filter(1000, &[1, 64, 999]);
        let want = BitArray::with_ones(1000, &[1, 63, 500, 999]);
        let header = delta_header(1000, held.bits().digest(), want.digest());
        let base = held.bits().digest();
        let digest = apply_in_place(
            &header,
            &mut held,
            || base,
            1,
            Change::Positions(&[63, 64, 500]),
        )
        .unwrap();
        assert_eq!(held.bits(), &want);
        assert_eq!(digest, want.digest());
    }

    #[test]
    fn a_wrong_result_digest_leaves_the_bits_unchanged() {
        let before = filter(1000, &[1, 64, 999]);
        let wrong = before.bits().digest() ^ 1;
        let header = delta_header(1000, before.bits().digest(), wrong);
        let base = before.bits().digest();
        let mut held = before.clone();
        let got = apply_in_place(&header, &mut held, || base, 1, Change::Positions(&[3, 700]));
        assert!(matches!(got, Err(Error::ResultMismatch { .. })));
        assert_eq!(held, before);
        let xor = BitArray::with_ones(1000, &[3, 700]);
        let got = apply_in_place(&header, &mut held, || base, 1, Change::Xor(&xor));
        assert!(matches!(got, Err(Error::ResultMismatch { .. })));
        assert_eq!(held, before);
    }

    #[test]
    fn a_position_past_the_end_changes_nothing() {
        let before = filter(130, &[5]);
        let header = delta_header(130, before.bits().digest(), 0);
        let base = before.bits().digest();
        let mut held = before.clone();
        let got = apply_in_place(&header, &mut held, || base, 1, Change::Positions(&[6, 130]));
        assert!(matches!(got, Err(Error::InvalidParameter { .. })));
        assert_eq!(held, before);
    }

    #[test]
    fn an_xor_array_applies_like_its_positions() {
        let mut a = filter(300, &[0, 10, 299]);
        let mut b = a.clone();
        let xor = BitArray::with_ones(300, &[10, 200]);
        let want = BitArray::with_ones(300, &[0, 200, 299]).digest();
        let header = delta_header(300, a.bits().digest(), want);
        let base = a.bits().digest();
        apply_in_place(&header, &mut a, || base, 1, Change::Xor(&xor)).unwrap();
        apply_in_place(&header, &mut b, || base, 1, Change::Positions(&[10, 200])).unwrap();
        assert_eq!(a, b);
    }
}
