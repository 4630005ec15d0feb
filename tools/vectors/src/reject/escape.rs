//! Reject vectors of coding 11, escape (spec section 4.15).

use bloomwire::{BitCoding, Coding};

use super::{ends_early, field, framed, padding_set, plain, Case, Kit};

/// Each check of coding 11's decoder.
pub(super) fn cases(kit: &Kit) -> Vec<Case> {
    let escaped = || framed(1000, 3, 100, Coding::Escape);
    // m = 13: two bytes, carried by states 0 and 1; states 2 and 3 and the secondary
    // state must be zero. The payload is the five states alone.
    let states_alone = || {
        let r = framed(13, 2, 3, Coding::Escape);
        assert_eq!(r.payload.len(), 8, "the states alone");
        r
    };
    vec![
        (
            "escape_shorter_than_states",
            kit.coded_with(Coding::Escape, &|r| {
                r.payload.truncate(7);
            }),
            field("payload length"),
        ),
        (
            "escape_state_holds_more",
            {
                // State 0's bit 8, above its carried byte.
                let mut r = states_alone();
                r.payload[1] ^= 1;
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "escape_idle_state_not_zero",
            {
                // State 2 carries no byte (n = 2): u[2], bits 24 .. 35, must be 0.
                let mut r = states_alone();
                r.payload[3] ^= 1;
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "escape_secondary_state_off",
            {
                // The secondary state is bits 48 .. 58.
                let mut r = states_alone();
                r.payload[6] ^= 1;
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "escape_byte_left",
            kit.coded_with(Coding::Escape, &|r| {
                r.payload.push(0);
            }),
            plain("CorruptPayload"),
        ),
        (
            "escape_ends_early",
            ends_early(escaped(), 1),
            plain("CorruptPayload"),
        ),
        (
            "escape_padding_set",
            padding_set(escaped()),
            plain("CorruptPayload"),
        ),
        (
            "escape_bit_past_m",
            kit.bit_past_m(BitCoding::Escape),
            plain("CorruptPayload"),
        ),
        (
            "chunked_escape",
            kit.flagged_chunked(Coding::Escape),
            field("flags"),
        ),
    ]
}
