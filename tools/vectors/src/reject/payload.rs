//! Reject vectors of the payload's framing (length, limit, checksum, trailing bytes) and of
//! codings 0 to 3 (spec sections 2.3 and 4.1 to 4.6).

use bloomwire::Coding;
use serde_json::json;

use super::{field, limit, plain, Case, Kit};
use crate::raw_frame::{varint, Truncated};

/// The cases of the payload's framing and of codings 0 to 3.
pub(super) fn cases(kit: &Kit) -> Vec<Case> {
    vec![
        (
            "raw_length_mismatch",
            kit.with(&|r| r.len = varint(3)),
            field("payload length"),
        ),
        (
            "ans_length_not_multiple_of_4",
            kit.appended(Coding::KnownPSymbols, &[1]),
            field("payload length"),
        ),
        (
            "range_trailing_zero_byte",
            kit.appended(Coding::Adaptive, &[0]),
            plain("CorruptPayload"),
        ),
        (
            "payload_over_default_limit",
            {
                let mut r = kit.coded(Coding::Adaptive);
                r.len = varint(1 << 40);
                r.into()
            },
            limit("payload length"),
        ),
        (
            "truncated_header",
            Truncated(kit.base.clone(), 14),
            plain("Incomplete"),
        ),
        // The payload length's limit is checked before its value (section 2.3): 2^40 is
        // also the wrong length for a raw payload of 16 bits.
        (
            "raw_payload_over_default_limit",
            kit.with(&|r| r.len = varint(1 << 40)),
            limit("payload length"),
        ),
        // Cut 3 bytes into the SipHash key's k0: the key is two fields (section 2.3), so
        // 5 more bytes (the rest of k0), not 13 (the rest of the key).
        (
            "truncated_in_siphash_k0",
            {
                let mut r = kit.base.clone();
                r.fixed[7] = 2;
                r.seed = (0u8..16).collect();
                Truncated(r, 14)
            },
            json!({"error": "Incomplete", "needed": 5}),
        ),
        (
            "truncated_payload",
            Truncated(kit.base.clone(), 19),
            plain("Incomplete"),
        ),
        (
            "checksum_mismatch",
            kit.with(&|r| r.crc = Some(0x1234_5678)),
            plain("ChecksumMismatch"),
        ),
        (
            "trailing_bytes",
            kit.with(&|r| r.trailing = vec![0]),
            plain("TrailingBytes"),
        ),
        (
            "raw_padding_bit_set",
            kit.with(&|r| r.varints[0] = varint(15)),
            plain("CorruptPayload"),
        ),
        (
            "range_byte_after_termination",
            kit.appended(Coding::KnownP, &[1]),
            plain("CorruptPayload"),
        ),
        (
            "range_point_outside_interval",
            {
                let mut r = kit.coded(Coding::KnownP);
                r.payload = vec![0xff; 8];
                r.len = varint(8);
                r.q0 = 1u16.to_le_bytes().to_vec();
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "ans_last_word_zero",
            kit.appended(Coding::KnownPSymbols, &[0, 0, 0, 0]),
            plain("CorruptPayload"),
        ),
        (
            "ans_data_left",
            kit.coded_with(Coding::KnownPSymbols, &|r| {
                r.payload.splice(0..0, [7, 0, 0, 0]);
            }),
            plain("CorruptPayload"),
        ),
    ]
}
