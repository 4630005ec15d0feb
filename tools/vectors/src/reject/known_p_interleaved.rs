//! Reject vectors of coding 6, known p interleaved (spec section 4.9).

use bloomwire::Coding;

use super::{ends_early, field, framed, plain, Case, Kit};

/// Each check of coding 6's decoder, on the small filter's payload.
pub(super) fn cases(kit: &Kit) -> Vec<Case> {
    // Coding 6 (section 4.9): each check of the decoder, on the small filter's payload.
    vec![
        (
            "interleaved_length_not_multiple_of_4",
            kit.coded_with(Coding::KnownPInterleaved, &|r| {
                r.payload.push(1);
            }),
            field("payload length"),
        ),
        (
            "interleaved_shorter_than_states",
            kit.coded_with(Coding::KnownPInterleaved, &|r| {
                r.payload.truncate(28);
            }),
            field("payload length"),
        ),
        (
            "interleaved_state_below_2_31",
            kit.coded_with(Coding::KnownPInterleaved, &|r| {
                r.payload[8..16].copy_from_slice(&0x7FFF_FFFFu64.to_le_bytes());
            }),
            plain("CorruptPayload"),
        ),
        (
            "interleaved_state_at_2_63",
            kit.coded_with(Coding::KnownPInterleaved, &|r| {
                r.payload[24..32].copy_from_slice(&(1u64 << 63).to_le_bytes());
            }),
            plain("CorruptPayload"),
        ),
        (
            "interleaved_word_left",
            kit.coded_with(Coding::KnownPInterleaved, &|r| {
                r.payload.extend_from_slice(&[1, 0, 0, 0]);
            }),
            plain("CorruptPayload"),
        ),
        (
            "interleaved_ends_early",
            {
                // The small filter's payload is only its states; this one has words after.
                let r = framed(1000, 3, 100, Coding::KnownPInterleaved);
                assert!(r.payload.len() > 36);
                ends_early(r, 4)
            },
            plain("CorruptPayload"),
        ),
        (
            "interleaved_final_state_off",
            kit.coded_with(Coding::KnownPInterleaved, &|r| {
                r.payload[1] ^= 1;
            }),
            plain("CorruptPayload"),
        ),
    ]
}
