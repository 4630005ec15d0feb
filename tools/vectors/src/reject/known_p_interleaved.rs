//! Reject vectors of coding 6, known p interleaved (spec section 4.9); the checks it shares
//! with codings 9, 10 and 11 (`interleaved_shorter_than_states`, `interleaved_ends_early`)
//! are in `states.rs`.

use bloomwire::Coding;

use super::{field, plain, state_flipped, state_set, Case, Kit};

/// Each check of coding 6's decoder of its own, on the small filter's payload.
pub(super) fn cases(kit: &Kit) -> Vec<Case> {
    let coded = || kit.coded(Coding::KnownPInterleaved);
    vec![
        (
            "interleaved_length_not_multiple_of_4",
            kit.appended(Coding::KnownPInterleaved, &[1]),
            field("payload length"),
        ),
        (
            "interleaved_state_below_2_31",
            state_set(coded(), 8, &0x7FFF_FFFFu64.to_le_bytes()),
            plain("CorruptPayload"),
        ),
        (
            "interleaved_state_at_2_63",
            state_set(coded(), 24, &(1u64 << 63).to_le_bytes()),
            plain("CorruptPayload"),
        ),
        (
            "interleaved_word_left",
            kit.appended(Coding::KnownPInterleaved, &[1, 0, 0, 0]),
            plain("CorruptPayload"),
        ),
        (
            "interleaved_final_state_off",
            state_flipped(coded(), 1, 1),
            plain("CorruptPayload"),
        ),
    ]
}
