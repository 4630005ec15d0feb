//! Reject vectors of coding 9, small (spec section 4.13).

use bloomwire::{BitCoding, Coding};

use super::{ends_early, field, framed, padding_set, plain, Case, Kit};

/// Each check of coding 9's decoder.
pub(super) fn cases(kit: &Kit) -> Vec<Case> {
    let longer = || framed(1000, 3, 100, Coding::Small);
    vec![
        (
            "small_shorter_than_states",
            kit.coded_with(Coding::Small, &|r| {
                r.payload.truncate(5);
            }),
            field("payload length"),
        ),
        (
            "small_state_off",
            {
                // m = 13: four nibbles, one in each state, whose bits 4 .. 11 must be zero;
                // state 0's bit 4 set.
                let mut r = framed(13, 2, 3, Coding::Small);
                assert_eq!(r.payload.len(), 6, "the states alone");
                r.payload[0] ^= 1 << 4;
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "small_byte_left",
            kit.coded_with(Coding::Small, &|r| {
                r.payload.push(0);
            }),
            plain("CorruptPayload"),
        ),
        (
            "small_ends_early",
            ends_early(longer(), 1),
            plain("CorruptPayload"),
        ),
        (
            "small_padding_set",
            padding_set(longer()),
            plain("CorruptPayload"),
        ),
        (
            "small_bit_past_m",
            kit.bit_past_m(BitCoding::Small),
            plain("CorruptPayload"),
        ),
        (
            "chunked_small",
            kit.flagged_chunked(Coding::Small),
            field("flags"),
        ),
    ]
}
