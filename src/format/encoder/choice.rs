//! The default encoder's choice of a coding for a bit array: the policy, a function of
//! what the mechanism measured that returns a decision the mechanism executes. The
//! mechanism (the encoder's settings) predicts every candidate coding's frame size from
//! counts (each coding's size model, in the table of codings); the choice orders the
//! codings: the fastest coding whose predicted frame is within the margin of the smallest
//! prediction first, so that the array is coded once. The candidates and their order come
//! from the table's rows (spec §4.0): the active codings of the encoder's profile, in the
//! order of each row's place in decoding speed for these counts.

use crate::entropy::coding::speed_rank;
use crate::entropy::model::Counts;
use crate::entropy::profile::{Profile, Status};
use crate::error::{invalid, Result};

use crate::format::ids::Coding;

/// The codings of bits the default encoder may write (active, in `profile`, not raw, which
/// is the fallback), fastest to decode first for an array of `counts` (equal places by
/// wire id).
pub(crate) fn candidates(profile: Profile, counts: &Counts) -> Vec<Coding> {
    let mut order: Vec<Coding> = Coding::ALL
        .into_iter()
        .filter(|&c| {
            c.codes_bits()
                && c != Coding::Raw
                && c.status() == Status::Active
                && profile.includes(c)
        })
        .collect();
    order.sort_by_key(|&c| (speed_rank(c, counts), c.id()));
    order
}

/// How far over the smallest predicted frame (`smallest` bytes) a faster coding may be:
/// 0.08% + 6 bytes.
fn margin(smallest: usize) -> usize {
    smallest / 1250 + 6
}

/// What the choice weighs: the candidates' predicted frames and what every frame adds.
#[derive(Debug, Clone, Copy)]
pub(super) struct Predicted<'a> {
    /// Each candidate coding with its predicted frame length, without the metadata and the
    /// tag (the same bytes in every coding), fastest to decode first.
    pub(super) lens: &'a [(Coding, usize)],
    /// The bytes of the metadata field and the tag the encoder adds to every frame.
    pub(super) extra: usize,
    /// The encoder's budget for a whole frame, if it has one.
    pub(super) budget: Option<usize>,
}

/// The decision for an array: the codings to code it with, in order, and when to code it
/// once more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Order {
    /// The chosen coding, then the others from the smallest prediction up: a payload that
    /// breaks the work bound (spec 2.2) comes back in another coding (an all-ones array codes
    /// to a few bytes that may not carry its m bits), and the next one is tried. Almost
    /// always the first is kept, and the array is coded once.
    pub(super) codings: Vec<Coding>,
    /// The codings to code the array with once more, in order, while the chosen coding's
    /// frame is longer than `promise` (the smallest frame kept).
    pub(super) recheck: Vec<Coding>,
    /// Predictions err by a few bytes either way (the test `fixed_costs_are_measured`): the
    /// longest frame the choice promises, 0.1% + 8 bytes over the smallest prediction, less
    /// 2 bytes for that prediction's own error. Going over it takes a near tie and an error:
    /// 32 of 902 choices over the property test's filters, all positional frames 1 or 2
    /// bytes over.
    pub(super) promise: usize,
}

/// Of the predictions, the codings within the margin of the smallest prediction (0.08% + 6
/// bytes) whose whole frame fits the budget, fastest first, then the smallest; `None` for no
/// candidate.
fn within_margin(p: &Predicted<'_>) -> Option<(Vec<Coding>, (Coding, usize))> {
    let smallest = p.lens.iter().copied().min_by_key(|&(_, len)| len)?;
    let margin = margin(smallest.1);
    let fits = |len: usize| p.budget.is_none_or(|b| len <= b);
    let within = p
        .lens
        .iter()
        .filter(|&&(_, len)| len <= smallest.1 + margin && fits(len + p.extra))
        .map(|&(c, _)| c)
        .collect();
    Some((within, smallest))
}

/// The order in which to code an array whose raw frame is `raw_len` bytes (metadata and tag
/// included): `None` when no coding is smaller than raw by the margin (the array is sent
/// raw).
pub(super) fn order(p: &Predicted<'_>, raw_len: usize) -> Option<Order> {
    let (within, (smallest_coding, smallest)) = within_margin(p)?;
    if raw_len <= smallest + p.extra + margin(smallest) {
        return None;
    }
    // The codings within the margin, fastest first; the smallest if none is.
    let coding = within.first().copied().unwrap_or(smallest_coding);
    let second = within.get(1).copied().unwrap_or(smallest_coding);
    let mut rest: Vec<(Coding, usize)> = p
        .lens
        .iter()
        .copied()
        .filter(|&(c, _)| c != coding)
        .collect();
    rest.sort_by_key(|&(_, len)| len);
    let mut recheck = Vec::new();
    for other in [second, smallest_coding] {
        if other != coding && !recheck.contains(&other) {
            recheck.push(other);
        }
    }
    Some(Order {
        codings: std::iter::once(coding)
            .chain(rest.iter().map(|&(c, _)| c))
            .collect(),
        recheck,
        promise: smallest + p.extra + smallest / 1000 + 6,
    })
}

/// The coding one process would choose first for a whole filter coded in chunks (spec
/// §4.10), for a frame assembled from chunks coded apart; `raw_len` is its raw frame's
/// length without metadata and tag. Where the single process would then fall back (raw,
/// or positional past the work bound), the assembly refuses instead.
pub(super) fn chunked(p: &Predicted<'_>, raw_len: usize) -> Result<Coding> {
    let (within, (smallest_coding, smallest)) =
        within_margin(p).ok_or_else(|| invalid("coding", "no coding of the profile is chunked"))?;
    // Where one process sends the raw array (no coding smaller by the margin), no assembly
    // of coded chunks is its frame.
    if raw_len <= smallest + margin(smallest) {
        return Err(invalid(
            "coding",
            "one process sends this filter raw (no coding is smaller): send it whole",
        ));
    }
    Ok(within.first().copied().unwrap_or(smallest_coding))
}

#[cfg(test)]
mod tests {
    use crate::filter::bits::BitArray;
    use crate::filter::hashing::{fmix64, HashFamily};
    use crate::filter::{BloomFilter, Params};
    use crate::format::{decode, Decoded, Encoder, Limits};

    #[test]
    fn the_default_encoder_codes_a_filter_once() {
        // From empty to full, the paper's filter among them: one payload coded per frame
        // (the prediction chooses, the chosen coding codes), and the prediction is the
        // coding the frame carries.
        for (m, p1) in [
            (140_000u64, 0.133),
            (8_000_000, 0.5),
            (8_000_000, 0.1),
            (1_000_000, 0.01),
            (1_000_000, 0.001),
            (100_000, 0.0),
            (100_000, 1.0),
        ] {
            let threshold = (p1 * 2f64.powi(64)).min(u64::MAX as f64) as u64;
            let mut bits = BitArray::new(m);
            for i in 0..m {
                if fmix64(m ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15)) < threshold || p1 >= 1.0 {
                    bits.set(i);
                }
            }
            let params = Params::standard(m, 1, HashFamily::default()).unwrap();
            let f = BloomFilter::from_parts(params, bits, 0).unwrap();
            let before = super::super::settings::payloads_coded();
            let frame = Encoder::new().encode(&f).unwrap();
            assert_eq!(
                super::super::settings::payloads_coded() - before,
                1,
                "m {m} p1 {p1}: {}",
                frame.coding()
            );
            let back = decode::<Decoded>(&frame.to_bytes(), &Limits::default()).unwrap();
            assert_eq!(back.filter, f);
        }
    }
}
