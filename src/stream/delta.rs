//! Deltas between generations (Section IV of *Compressed Bloom Filters*, spec §5.2): the
//! checks of a delta against the base it applies to, and its application, to a copy of the
//! base ([`Delta::apply`]) or in place on the filter a [`Receiver`](super::Receiver) holds.
//!
//! In place, the changed positions (a positional delta's, decoded from its payload, or the
//! one bits of a decoded XOR array) are flipped in the held bits and the result's digest is
//! compared with the frame's; on a mismatch the same flips undo the change: no second array
//! is built, and an error leaves the bits exactly as they were. A positional delta's result
//! digest is the held digest brought forward by its flips ([`DigestChange`]), so applying it
//! costs what changed, whatever the filter's size; an XOR array's is computed in one pass.

use crate::error::{invalid, Error, Result};
use crate::filter::any::FilterRef;
use crate::filter::bits::BitArray;
use crate::filter::counting::CountingBloomFilter;
use crate::filter::BloomFilter;
use crate::filter::DigestChange;
use crate::format::{Delta, FrameHeader, FrameKind, FrameView};

/// The checks of a delta against a base, in the spec's order (5.2): the generation, the
/// shape (`difference`: the first field in which the base and the delta differ), the base
/// digest (asked only if the rest holds). Returns the base digest (checked) and the result
/// digest to check.
fn check_base(
    header: &FrameHeader,
    difference: Option<(&'static str, String, String)>,
    base_generation: u64,
    base_digest: impl FnOnce() -> u32,
) -> Result<(u32, u32)> {
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
    Ok((expected, result_digest))
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
            &self.xor,
            || Ok(()),
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
        let (_, result_digest) =
            check_base(&self.header, difference, base_generation, || base.digest())?;
        let result = base.apply_xor(&self.xor, self.header.n)?;
        check_result(&self.header, result_digest, result.digest())?;
        Ok(result)
    }
}

/// What a Bloom filter's delta changes: flips of bits, which flipping again undoes.
pub(crate) trait Flips {
    /// Flip the changed bits of `bits`, whose digest was `digest`, and return the digest
    /// after the flips. On an error the flips made before it stay, and a second call makes
    /// the same flips (undoing them) and ends in the same error.
    fn flip(&self, bits: &mut BitArray, digest: u32) -> Result<u32>;
}

/// A delta decoded into the XOR of two generations (any coding but positional): the
/// result's digest in one pass over the array.
impl Flips for BitArray {
    fn flip(&self, bits: &mut BitArray, _: u32) -> Result<u32> {
        bits.xor_with(self)?;
        Ok(bits.digest())
    }
}

/// A positional delta (coding 7), its positions decoded from the payload and flipped in
/// groups as they come, and the digest brought forward by them: no list of them, no XOR
/// array, no pass over the bits that did not change. A position's word is prefetched when
/// it is decoded and flipped with its group, so that in a large filter the cache misses
/// overlap the decoding.
pub(crate) struct Positions<'a, 'v>(pub(crate) &'a FrameView<'v>);

/// Positions decoded before they are flipped together.
const GROUP: usize = 64;

impl Flips for Positions<'_, '_> {
    fn flip(&self, bits: &mut BitArray, digest: u32) -> Result<u32> {
        let len = bits.len();
        let mut change = DigestChange::new(len);
        let mut group = [0u64; GROUP];
        let mut held = 0;
        let mut past_end = None;
        // The groups end at the same positions on every call, so that a second call
        // (after an error) undoes exactly what the first did.
        let decoded = self
            .0
            .for_each_delta_position(|p| {
                if p >= len {
                    past_end.get_or_insert(p);
                    return;
                }
                bits.prefetch(p);
                group[held] = p;
                held += 1;
                if held == GROUP {
                    bits.flip(&group);
                    change.flip_all(&group);
                    held = 0;
                }
            })
            .unwrap_or_else(|| Err(invalid("delta", "not a positional delta")));
        decoded?;
        if let Some(p) = past_end {
            // A decoder that checked its input against m never yields one.
            return Err(invalid(
                "delta position",
                format!("{p} is not below m = {len}"),
            ));
        }
        bits.flip(&group[..held]);
        change.flip_all(&group[..held]);
        Ok(change.apply(digest))
    }
}

/// Apply a Bloom filter's delta (its `header`, and its `change`) in place to `held`, held as
/// generation `base_generation` with the digest `held_digest` gives: the generation, shape
/// and base digest checked in the spec's order (5.2), the change made, `decoded` asked
/// (the checks of a decoded frame that come after its payload: trailing bytes), the result's
/// digest checked, and the change undone on any error. Returns the new digest; on every
/// error `held` is unchanged. Costs the change's decoding (twice on an error after it),
/// plus one digest pass over the array for an XOR array; allocates nothing.
pub(crate) fn apply_in_place(
    header: &FrameHeader,
    held: &mut BloomFilter,
    held_digest: impl FnOnce() -> u32,
    base_generation: u64,
    change: &impl Flips,
    decoded: impl FnOnce() -> Result<()>,
) -> Result<u32> {
    let difference = held.params().difference(&header.params);
    let (base_digest, result_digest) =
        check_base(header, difference, base_generation, held_digest)?;
    let bits = held.bits_mut();
    let outcome = change.flip(bits, base_digest).and_then(|actual| {
        decoded()?;
        check_result(header, result_digest, actual).map(|()| actual)
    });
    match outcome {
        Ok(digest) => {
            held.set_n(header.n);
            Ok(digest)
        }
        Err(e) => {
            // The same flips again undo the change (and end where it ended).
            let _ = change.flip(bits, base_digest);
            Err(e)
        }
    }
}

/// The checks of a delta's header against what a receiver holds, before its payload is
/// decoded: the generation, the shape and the base digest of spec 5.2, so that a delta that
/// does not apply costs neither memory nor work beyond its header and checksum. Returns the
/// result digest the frame names.
pub(crate) fn check_header(
    header: &FrameHeader,
    held: FilterRef<'_>,
    held_digest: u32,
    base_generation: u64,
) -> Result<u32> {
    let difference = match held {
        FilterRef::Bloom(f) => f.params().difference(&header.params),
        FilterRef::Counting(f) => f.difference(&header.params, header.counter_width.unwrap_or(0)),
    };
    check_base(header, difference, base_generation, || held_digest).map(|(_, result)| result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::hashing::HashFamily;
    use crate::filter::Params;
    use crate::format::{BitCoding, Checked, Encoder, Limits};

    fn filter(m: u64, ones: &[u64]) -> BloomFilter {
        let params = Params::standard(m, 2, HashFamily::default()).unwrap();
        BloomFilter::from_parts(params, BitArray::with_ones(m, ones), 0).unwrap()
    }

    /// A positional delta frame from `a` (generation 1) to `b` (generation 2).
    fn positional_delta(a: &BloomFilter, b: &BloomFilter) -> Vec<u8> {
        let frame = Encoder::new()
            .coding(BitCoding::Positional)
            .encode_delta(a, 1, b, 2)
            .unwrap();
        assert_eq!(frame.coding(), crate::format::Coding::Positional);
        frame.to_bytes().to_vec()
    }

    fn view(wire: &[u8]) -> FrameView<'_> {
        FrameView::of_checked(Checked::trusting(wire, &Limits::default()).unwrap()).unwrap()
    }

    #[test]
    fn positions_flip_in_place_and_the_digest_is_the_result_s() {
        let (a, b) = (
            filter(1000, &[1, 64, 999]),
            filter(1000, &[1, 63, 500, 999]),
        );
        let wire = positional_delta(&a, &b);
        let v = view(&wire);
        let mut held = a.clone();
        let base = a.bits().digest();
        let digest =
            apply_in_place(v.header(), &mut held, || base, 1, &Positions(&v), || Ok(())).unwrap();
        assert_eq!(held.bits(), b.bits());
        assert_eq!(digest, b.bits().digest());
    }

    #[test]
    fn every_failure_after_the_flips_leaves_the_bits_unchanged() {
        let (a, b) = (
            filter(1000, &[1, 64, 999]),
            filter(1000, &[3, 64, 700, 999]),
        );
        let wire = positional_delta(&a, &b);
        let v = view(&wire);
        let base = a.bits().digest();
        let mut held = a.clone();
        // A wrong result digest.
        let mut header = v.header().clone();
        if let FrameKind::Delta { result_digest, .. } = &mut header.kind {
            *result_digest ^= 1;
        }
        let got = apply_in_place(&header, &mut held, || base, 1, &Positions(&v), || Ok(()));
        assert!(matches!(got, Err(Error::ResultMismatch { .. })), "{got:?}");
        assert_eq!(held, a);
        // A check of the decoded frame (trailing bytes) that fails.
        let trailing = || {
            Err(Error::TrailingBytes {
                count: 1,
                offset: 0,
            })
        };
        let got = apply_in_place(v.header(), &mut held, || base, 1, &Positions(&v), trailing);
        assert!(matches!(got, Err(Error::TrailingBytes { .. })), "{got:?}");
        assert_eq!(held, a);
        // The same with the XOR array.
        let mut xor = a.bits().clone();
        xor.xor_with(b.bits()).unwrap();
        let got = apply_in_place(&header, &mut held, || base, 1, &xor, || Ok(()));
        assert!(matches!(got, Err(Error::ResultMismatch { .. })));
        assert_eq!(held, a);
    }

    #[test]
    fn a_payload_that_fails_halfway_leaves_the_bits_unchanged() {
        // Many changed positions, then a byte of the payload's stream altered: the decoder
        // flips some positions before it finds the error, and undoes them.
        let a = filter(100_000, &[]);
        let ones: Vec<u64> = (0..2_000).map(|i| i * 37 + 5).collect();
        let b = filter(100_000, &ones);
        let wire = positional_delta(&a, &b);
        let header_len = view(&wire).header().header_len;
        let base = a.bits().digest();
        let mut failed = 0;
        for at in (header_len + 4..wire.len() - 4).step_by(97) {
            let mut bad = wire.clone();
            bad[at] ^= 0x5a;
            let v = view(&bad);
            let mut held = a.clone();
            let got = apply_in_place(v.header(), &mut held, || base, 1, &Positions(&v), || Ok(()));
            if got.is_err() {
                failed += 1;
                assert_eq!(held, a, "altered byte {at}: {got:?}");
            }
        }
        assert!(failed > 10, "{failed} altered payloads refused");
    }

    #[test]
    fn an_xor_array_applies_like_its_positions() {
        let (a, b) = (filter(300, &[0, 10, 299]), filter(300, &[0, 200, 299]));
        let wire = positional_delta(&a, &b);
        let v = view(&wire);
        let base = a.bits().digest();
        let (mut x, mut y) = (a.clone(), a.clone());
        let mut xor = a.bits().clone();
        xor.xor_with(b.bits()).unwrap();
        apply_in_place(v.header(), &mut x, || base, 1, &xor, || Ok(())).unwrap();
        apply_in_place(v.header(), &mut y, || base, 1, &Positions(&v), || Ok(())).unwrap();
        assert_eq!((&x, &y), (&b, &b));
    }
}
