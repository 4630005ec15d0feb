//! Reject vectors of coding 7, positional (spec section 4.11).

use bloomwire::internals::positional::{self, GapParams};
use bloomwire::Coding;

use super::{plain, Case, Kit};
use crate::raw_frame::{varint, Truncated};

/// Each check of coding 7's decoder, on the small filter's positions.
pub(super) fn cases(kit: &Kit) -> Vec<Case> {
    let ones: Vec<u64> = (0..100).filter(|&i| kit.small.bits().get(i)).collect();
    let c = ones.len() as u64;
    let gaps = |positions: &[u64]| {
        let mut p = Vec::new();
        positional::encode_positions(positions, GapParams::of(100, c), &mut p);
        p
    };
    let with_positional = |payload: Vec<u8>| -> Truncated {
        let mut r = kit.coded(Coding::Positional);
        r.len = varint(payload.len() as u64);
        r.payload = payload;
        r.into()
    };
    let valid = gaps(&ones);
    assert_eq!(valid, kit.coded(Coding::Positional).payload);
    assert!(
        c < 127 && valid.len() > 13,
        "one-byte count, words after the state"
    );
    let mut last_at_m = ones.clone();
    *last_at_m.last_mut().expect("ones") = 100;
    let mut past_m = ones.clone();
    *past_m.last_mut().expect("ones") = 150;
    let mut one_after_last = ones.clone();
    one_after_last.pop();
    one_after_last.pop();
    one_after_last.extend([99, 100]);
    let recount = |count: u64| {
        let mut p = varint(count);
        p.extend_from_slice(&valid[1..]);
        p
    };
    let cases = [
        ("positional_count_high", with_positional(recount(c + 1))),
        ("positional_count_low", with_positional(recount(c - 1))),
        ("positional_count_above_m", with_positional(recount(101))),
        ("positional_gap_past_m", with_positional(gaps(&past_m))),
        ("positional_one_at_m", with_positional(gaps(&last_at_m))),
        (
            "positional_one_beyond_m",
            with_positional(gaps(&one_after_last)),
        ),
        (
            "positional_ends_early",
            with_positional(valid[..valid.len() - 4].to_vec()),
        ),
        (
            "positional_ends_late",
            with_positional([&valid[..], &[0, 0, 0, 0]].concat()),
        ),
        (
            "positional_ragged_stream",
            with_positional([&valid[..], &[0]].concat()),
        ),
        (
            "positional_count_not_shortest",
            with_positional([&[valid[0] | 0x80, 0][..], &valid[1..]].concat()),
        ),
        ("positional_final_state_off", {
            let mut p = valid.clone();
            p[1] ^= 1;
            with_positional(p)
        }),
        (
            "positional_state_below_2_31",
            with_positional([&[1u8][..], &0x7FFF_FFFFu64.to_le_bytes()].concat()),
        ),
        ("positional_bytes_after_empty", with_positional(vec![0, 0])),
        (
            // 65 ones in an 8-byte stream: more than a bit of stream a one (work bound).
            "positional_more_ones_than_stream_bits",
            with_positional([&[65u8][..], &(1u64 << 31).to_le_bytes()].concat()),
        ),
    ];
    cases
        .into_iter()
        .map(|(name, frame)| (name, frame, plain("CorruptPayload")))
        .collect()
}
