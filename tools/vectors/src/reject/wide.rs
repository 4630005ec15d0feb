//! Reject vectors of coding 10, wide (spec section 4.14); the checks it shares with codings
//! 6, 9 and 11 (`wide_shorter_than_states`, `wide_ends_early`, `wide_bit_past_m`) are in
//! `states.rs`.

use bloomwire::{BitArray, BloomFilter, Coding, Params};

use super::{field, framed, plain, relength, standard, state_flipped, state_set, Case, Kit};
use crate::raw_frame::{payload_with_q0, RawFrame};

/// A filter whose frame in coding 10 has words after its states.
pub(super) fn wider() -> RawFrame {
    let r = framed(4000, 3, 400, Coding::Wide);
    assert!(r.payload.len() > 300, "words after the states");
    r
}

/// Each check of coding 10's decoder of its own. The small filter's 25 nibbles are one
/// round, which the first half's states carry; the second half is empty.
pub(super) fn cases(kit: &Kit) -> Vec<Case> {
    let coded = || kit.coded(Coding::Wide);
    vec![
        (
            "wide_length_odd",
            kit.appended(Coding::Wide, &[1]),
            field("payload length"),
        ),
        (
            "wide_state_below_2_15",
            state_set(coded(), 136, &0x7FFFu32.to_le_bytes()),
            plain("CorruptPayload"),
        ),
        (
            "wide_state_at_2_31",
            // In a half with coded rounds (the small filter's states carry everything).
            state_set(wider(), 8, &0x8000_0000u32.to_le_bytes()),
            plain("CorruptPayload"),
        ),
        (
            "wide_state_holds_more",
            // The first half carries one round: its states are below 2^15 + 16.
            state_flipped(coded(), 0, 1 << 4),
            plain("CorruptPayload"),
        ),
        (
            "wide_empty_half_state_off",
            state_flipped(coded(), 128, 1),
            plain("CorruptPayload"),
        ),
        (
            "wide_carried_nibble_past_m",
            // Lane 7 carries nibble 28 of round 0, past the 25 nibbles of m = 100.
            state_flipped(coded(), 28, 1),
            plain("CorruptPayload"),
        ),
        (
            "wide_word_inserted",
            relength(wider(), |r| {
                let at = r.payload.len() / 2 / 2 * 2;
                r.payload.splice(at..at, [1, 0]);
            }),
            plain("CorruptPayload"),
        ),
        (
            "wide_word_left",
            {
                // m = 4096, 32 rounds: the first half's bits of a filter, the second
                // half's all zero and nearly free at q0 = 65000 (it reads no word), so that
                // a word after the first half's is left.
                let f = standard(2048, 3, 300);
                let mut bits = BitArray::new(4096);
                (0..2048)
                    .filter(|&i| f.bits().get(i))
                    .for_each(|i| bits.set(i));
                let params = Params::standard(4096, 3, *f.params().family()).expect("valid");
                let g = BloomFilter::from_parts(params, bits, 300).expect("valid");
                relength(RawFrame::from_frame(&g, Coding::Wide), |r| {
                    r.q0 = 65000u16.to_le_bytes().to_vec();
                    r.payload = payload_with_q0(Coding::Wide, g.bits(), 65000);
                    assert!(r.payload.len() > 256, "the first half's words");
                    r.payload.extend_from_slice(&[1, 0]);
                })
            },
            plain("CorruptPayload"),
        ),
    ]
}
