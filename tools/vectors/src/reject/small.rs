//! Reject vectors of coding 9, small (spec section 4.13); the checks it shares with codings
//! 6, 10 and 11 (`small_shorter_than_states`, `small_ends_early`, `small_padding_set`,
//! `small_bit_past_m`, `chunked_small`) are in `states.rs`.

use bloomwire::Coding;

use super::{framed, plain, state_flipped, Case, Kit};

/// Each check of coding 9's decoder of its own.
pub(super) fn cases(kit: &Kit) -> Vec<Case> {
    vec![
        (
            "small_state_off",
            {
                // m = 13: four nibbles, one in each state, whose bits 4 .. 11 must be zero;
                // state 0's bit 4 set.
                let r = framed(13, 2, 3, Coding::Small);
                assert_eq!(r.payload.len(), 6, "the states alone");
                state_flipped(r, 0, 1 << 4)
            },
            plain("CorruptPayload"),
        ),
        (
            "small_byte_left",
            kit.appended(Coding::Small, &[0]),
            plain("CorruptPayload"),
        ),
    ]
}
