//! Reject vectors of generations (spec sections 2 and 5.2): deltas that decode but that a
//! receiver holding the frame named by `apply_to` must refuse, and a restart flag on a delta.

use bloomwire::{BitCoding, BloomFilter, Encoder};
use serde_json::json;

use super::{checksum_fixed, result_forged, Rejects};
use crate::accept::delta_generations;

/// Appends the deltas' reject files.
pub(super) fn reject_vectors(rejects: &mut Rejects) {
    let [g7, g8, g9, _] = delta_generations();
    let delta = |base: &BloomFilter, b: u64, next: &BloomFilter, g: u64| {
        Encoder::new()
            .coding(BitCoding::KnownP)
            .encode_delta(base, b, next, g)
            .expect("no budget")
            .to_bytes()
            .to_vec()
    };
    let forged = result_forged(delta(&g7, 7, &g8, 8), g8.bits().digest());
    for (name, bytes, error, base) in [
        (
            "delta_applied_to_other_base",
            delta(&g7, 7, &g8, 8),
            "BaseMismatch",
            "accept/gen7_other_base.bin",
        ),
        (
            "delta_gap",
            delta(&g8, 8, &g9, 9),
            "GenerationGap",
            "accept/gen7_base.bin",
        ),
        (
            "delta_result_forged",
            forged,
            "ResultMismatch",
            "accept/gen7_base.bin",
        ),
        (
            "delta_applied_to_other_shape",
            delta(&g7, 7, &g8, 8),
            "Incompatible",
            "accept/gen7_other_shape.bin",
        ),
        (
            "delta_already_applied",
            delta(&g7, 7, &g8, 8),
            "StaleGeneration",
            "accept/gen8_full.bin",
        ),
        // "Hash family" in section 5.2 covers the seed and the index scheme.
        (
            "delta_applied_to_other_seed",
            delta(&g7, 7, &g8, 8),
            "Incompatible",
            "accept/gen7_other_seed.bin",
        ),
        (
            "delta_applied_to_other_scheme",
            delta(&g7, 7, &g8, 8),
            "Incompatible",
            "accept/gen7_other_scheme.bin",
        ),
        (
            "full_without_restart_after_forged",
            Encoder::new()
                .coding(BitCoding::KnownP)
                .encode_generation(&g8, 8)
                .expect("no budget")
                .to_bytes()
                .to_vec(),
            "StaleGeneration",
            "accept/forged_gen_max.bin",
        ),
    ] {
        rejects.push(name, bytes, json!({"error": error, "apply_to": base}));
    }
    // Flags bit 1 (restart) is for full frames: on a delta it is refused (section 2).
    let mut restart_delta = delta(&g7, 7, &g8, 8);
    assert_eq!(restart_delta[5], 1, "a delta");
    restart_delta[10] |= 0x02;
    rejects.push(
        "restart_on_delta",
        checksum_fixed(restart_delta),
        json!({"error": "InvalidField", "field": "flags"}),
    );
}
