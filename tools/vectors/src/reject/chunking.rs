//! Reject vectors of chunked payloads (spec section 4.10).

use bloomwire::Coding;

use super::{field, plain, Case, Kit};
use crate::raw_frame::{varint, RawFrame, Truncated};

/// The small filter (m = 100) in two chunks of 64 bits, coding 6, each chunk's length a one-
/// byte varint at the start of the payload, edited.
pub(super) fn cases(kit: &Kit) -> Vec<Case> {
    let chunked = || RawFrame::chunked(&kit.small, Coding::KnownPInterleaved, 6);
    let chunked_with = |f: &dyn Fn(&mut RawFrame)| -> Truncated {
        let mut r = chunked();
        assert_eq!(
            r.payload[0] as usize + r.payload[1] as usize + 2,
            r.payload.len()
        );
        f(&mut r);
        r.len = varint(r.payload.len() as u64);
        r.into()
    };
    vec![
        (
            "chunked_raw",
            kit.with(&|r| r.fixed[10] = 1),
            field("flags"),
        ),
        (
            "flags_reserved_bit_with_chunked",
            {
                let mut r = chunked();
                r.fixed[10] = 0x81;
                r.into()
            },
            field("flags"),
        ),
        (
            "chunk_shift_below_6",
            {
                let mut r = chunked();
                *r.q0.last_mut().expect("shift") = 5;
                r.into()
            },
            field("chunk shift"),
        ),
        (
            "chunk_shift_not_below_m",
            {
                let mut r = chunked();
                *r.q0.last_mut().expect("shift") = 7; // 128 >= m = 100
                r.into()
            },
            field("chunk shift"),
        ),
        (
            // The work bound (spec 2.2): a 4-byte payload may code up to 2^12 (4 + 64) bits.
            "work_bound_adaptive_one_bit_over",
            {
                let mut r = kit.coded(Coding::Adaptive);
                r.payload = vec![0; 4];
                r.len = varint(4);
                r.varints[0] = varint(((4 + 64) << 12) + 1);
                r.into()
            },
            field("payload length"),
        ),
        (
            "work_bound_known_p_interleaved_over",
            {
                let mut r = kit.coded(Coding::KnownPInterleaved);
                r.varints[0] = varint(((r.payload.len() as u64 + 64) << 12) + 1);
                r.into()
            },
            field("payload length"),
        ),
        (
            "work_bound_chunked_over",
            {
                let mut r = RawFrame::chunked(&kit.small, Coding::KnownPSymbols, 6);
                r.varints[0] = varint(((r.payload.len() as u64 + 64) << 12) + 1);
                r.q0.pop();
                r.q0.push(18);
                r.into()
            },
            field("payload length"),
        ),
        (
            "chunk_count_above_payload_length",
            {
                let mut r = RawFrame::chunked(&kit.small, Coding::Adaptive, 6);
                r.payload = vec![0];
                r.len = varint(1);
                r.into()
            },
            field("payload length"),
        ),
        (
            // Two coding-10 chunks whose lengths still add up, the first one byte short
            // of its 256 bytes of states (2.2's rule for each chunk, 4.10).
            "chunk_length_breaks_wide_rule",
            {
                let mut r = RawFrame::chunked(&kit.small, Coding::Wide, 6);
                let (len0, len1) = (
                    u64::from(r.payload[0] & 0x7F) | u64::from(r.payload[1]) << 7,
                    u64::from(r.payload[2] & 0x7F) | u64::from(r.payload[3]) << 7,
                );
                assert!(len0 >= 256 && len1 >= 256 && len0 < 1 << 14 && len1 < 1 << 14);
                r.payload[..2].copy_from_slice(&varint(len0 - 1));
                r.payload[2..4].copy_from_slice(&varint(len1 + 1));
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "chunk_lengths_short_of_payload",
            chunked_with(&|r| r.payload.push(0)),
            plain("CorruptPayload"),
        ),
        (
            "chunk_lengths_past_payload",
            chunked_with(&|r| r.payload[1] += 4),
            plain("CorruptPayload"),
        ),
        (
            "chunk_length_bad_varint",
            chunked_with(&|r| {
                // Chunk 0's length as a two-byte varint with a redundant zero group.
                let len0 = r.payload[0];
                r.payload.splice(0..1, [len0 | 0x80, 0]);
            }),
            plain("CorruptPayload"),
        ),
        (
            "chunk_not_whole_words",
            chunked_with(&|r| {
                // Chunk 0 one byte longer (33 + ...): not a coding-6 length.
                let at = 2 + r.payload[0] as usize;
                r.payload.insert(at, 0);
                r.payload[0] += 1;
            }),
            plain("CorruptPayload"),
        ),
        (
            "chunk_final_state_off",
            chunked_with(&|r| {
                // Chunk 1's states: the second byte of its first state.
                let at = 2 + r.payload[0] as usize + 1;
                r.payload[at] ^= 1;
            }),
            plain("CorruptPayload"),
        ),
    ]
}
