//! Reject vectors of the header (spec sections 2 and 2.3): each field's check, in the order a
//! decoder reads them.

use bloomwire::Coding;

use super::{field, limit, plain, Case, Kit};
use crate::raw_frame::{varint, Truncated};

/// The header's cases, each a frame cut where the decoder must stop and the error it names.
pub(super) fn cases(kit: &Kit) -> Vec<Case> {
    vec![
        (
            "bad_magic",
            kit.with(&|r| r.fixed[0] = b'b'),
            plain("BadMagic"),
        ),
        (
            "version_2",
            kit.with(&|r| r.fixed[4] = 2),
            plain("UnsupportedVersion"),
        ),
        (
            "version_0",
            kit.with(&|r| r.fixed[4] = 0),
            plain("UnsupportedVersion"),
        ),
        ("kind_2", kit.with(&|r| r.fixed[5] = 2), field("frame kind")),
        (
            "delta_base_generation_not_before",
            kit.with(&|r| {
                r.fixed[5] = 1;
                r.sequence = [varint(5), varint(5), vec![0; 8]].concat();
            }),
            field("base generation"),
        ),
        // No delta has generation 0: its base generation would have to be smaller (5.2).
        (
            "delta_generation_0",
            kit.with(&|r| {
                r.fixed[5] = 1;
                r.sequence = [varint(0), varint(0), vec![0; 8]].concat();
            }),
            field("base generation"),
        ),
        (
            "filter_type_4",
            kit.with(&|r| r.fixed[6] = 4),
            field("filter type"),
        ),
        // Base hash 0 (opaque, 3.1) has no seed field: the seed byte 0 is read as m.
        (
            "opaque_with_seed",
            kit.with(&|r| r.fixed[7] = 0),
            field("m"),
        ),
        (
            "opaque_index_scheme_1",
            kit.with(&|r| {
                r.fixed[7] = 0;
                r.fixed[8] = 1;
                r.seed.clear();
            }),
            field("index scheme"),
        ),
        (
            "opaque_partitioned",
            kit.with(&|r| {
                r.fixed[6] = 1;
                r.fixed[7] = 0;
                r.seed.clear();
            }),
            field("base hash"),
        ),
        (
            "opaque_counting",
            kit.with(&|r| {
                r.fixed[6] = 3;
                r.fixed[7] = 0;
                r.seed.clear();
            }),
            field("base hash"),
        ),
        // Flags bit 3 with an empty metadata field: not canonical (2.6).
        (
            "metadata_empty",
            kit.with(&|r| {
                r.fixed[10] = 0x08;
                r.sequence.push(0);
            }),
            field("metadata length"),
        ),
        // 4097 bytes of metadata, one over the recommended limit; the frame is cut after
        // the length, which is refused before the bytes are read.
        (
            "metadata_over_limit",
            Truncated(
                {
                    let mut r = kit.base.clone();
                    r.fixed[10] = 0x08;
                    r.sequence.extend(varint(4097));
                    r
                },
                11 + 1 + 1 + 3 + 1 + 1 + 2,
            ),
            limit("metadata length"),
        ),
        (
            "hash_id_3",
            kit.with(&|r| r.fixed[7] = 3),
            field("base hash"),
        ),
        (
            "index_scheme_2",
            kit.with(&|r| r.fixed[8] = 2),
            field("index scheme"),
        ),
        ("coding_4", kit.with(&|r| r.fixed[9] = 4), field("coding")),
        // Coding 8 was withdrawn before 1.0 (spec 4.0): its id is defined by no revision,
        // here on a well-formed coding-10 payload.
        (
            "coding_8_withdrawn",
            kit.coded_with(Coding::Wide, &|r| r.fixed[9] = 8),
            field("coding"),
        ),
        // A q0 other than the measured one in codings 9 to 11 (`q0_not_measured_wide` and
        // so on) is in `states.rs`, with their other shared checks.
        (
            "coding_255",
            kit.with(&|r| r.fixed[9] = 255),
            field("coding"),
        ),
        (
            "flags_set",
            kit.with(&|r| r.fixed[10] = 0x80),
            field("flags"),
        ),
        (
            "m_zero",
            kit.with(&|r| r.varints[0] = varint(0)),
            field("m"),
        ),
        (
            "m_above_2_48",
            kit.with(&|r| r.varints[0] = varint((1 << 48) + 1)),
            field("m"),
        ),
        (
            "m_over_default_limit",
            kit.with(&|r| r.varints[0] = varint(1 << 40)),
            limit("m"),
        ),
        (
            "m_overlong_varint",
            kit.with(&|r| r.varints[0] = vec![0x90, 0x00]),
            plain("BadVarint"),
        ),
        (
            "m_varint_eleven_bytes",
            kit.with(&|r| r.varints[0] = vec![0x80; 11]),
            plain("BadVarint"),
        ),
        (
            "m_varint_above_2_64",
            kit.with(&|r| {
                r.varints[0] = vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]
            }),
            plain("BadVarint"),
        ),
        (
            "k_zero",
            kit.with(&|r| r.varints[1] = varint(0)),
            field("k"),
        ),
        (
            "k_below_one",
            kit.with(&|r| r.varints[1] = varint(65535)),
            field("k"),
        ),
        (
            "k_above_1024",
            kit.with(&|r| r.varints[1] = varint((1024 << 16) + 1)),
            field("k"),
        ),
        (
            "k_over_default_limit",
            kit.with(&|r| r.varints[1] = varint(65 << 16)),
            limit("k"),
        ),
        (
            "partitioned_m_below_k",
            kit.with(&|r| {
                r.fixed[6] = 1;
                r.varints[0] = varint(2);
                r.varints[1] = varint(3 << 16);
                r.len = varint(1);
                r.payload = vec![0];
            }),
            field("k"),
        ),
        (
            "blocks_k_sum_zero",
            kit.with(&|r| {
                r.fixed[6] = 2;
                r.varints = vec![varint(16), varint(0), varint(1)];
            }),
            field("k"),
        ),
        (
            "blocks_k_sum_above_1024",
            kit.with(&|r| {
                r.fixed[6] = 2;
                r.varints = vec![varint(3), varint(600 << 16), varint(600 << 16), varint(1)];
                r.len = varint(1);
                r.payload = vec![0];
            }),
            field("k"),
        ),
        (
            "q0_zero",
            {
                let mut r = kit.coded(Coding::KnownP);
                r.q0 = vec![0, 0];
                r.into()
            },
            field("q0"),
        ),
    ]
}
