//! Reject vectors of coding 11, escape (spec section 4.15); the checks it shares with codings
//! 6, 9 and 10 (`escape_shorter_than_states`, `escape_ends_early`, `escape_padding_set`,
//! `escape_bit_past_m`, `chunked_escape`) are in `states.rs`.

use bloomwire::Coding;

use super::{framed, plain, state_flipped, Case, Kit};

/// Each check of coding 11's decoder of its own.
pub(super) fn cases(kit: &Kit) -> Vec<Case> {
    // m = 13: two bytes, carried by states 0 and 1; states 2 and 3 and the secondary
    // state must be zero. The payload is the five states alone.
    let states_alone = || {
        let r = framed(13, 2, 3, Coding::Escape);
        assert_eq!(r.payload.len(), 8, "the states alone");
        r
    };
    let mut cases: Vec<Case> = [
        // State 0's bit 8, above its carried byte.
        ("escape_state_holds_more", 1),
        // State 2 carries no byte (n = 2): u[2], bits 24 .. 35, must be 0.
        ("escape_idle_state_not_zero", 3),
        // The secondary state is bits 48 .. 58.
        ("escape_secondary_state_off", 6),
    ]
    .into_iter()
    .map(|(name, byte)| {
        let frame = state_flipped(states_alone(), byte, 1);
        (name, frame, plain("CorruptPayload"))
    })
    .collect();
    cases.push((
        "escape_byte_left",
        kit.appended(Coding::Escape, &[0]),
        plain("CorruptPayload"),
    ));
    cases
}
