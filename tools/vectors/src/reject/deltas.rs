//! Reject vectors of generations (spec sections 2 and 5.2): deltas that decode but that a
//! receiver holding the frame named by `apply_to` must refuse, and a restart flag on a delta.

use bloomwire::{BitCoding, BloomFilter, Encoder};
use serde_json::{json, Map, Value};

use crate::accept::delta_generations;
use crate::VectorFile;

/// Appends the deltas' reject files to `out` and their entries to `manifest`.
pub(super) fn reject_vectors(manifest: &mut Map<String, Value>, out: &mut Vec<VectorFile>) {
    let [g7, g8, g9, _] = delta_generations();
    let delta = |base: &BloomFilter, b: u64, next: &BloomFilter, g: u64| {
        Encoder::new()
            .coding(BitCoding::KnownP)
            .encode_delta(base, b, next, g)
            .expect("no budget")
            .to_bytes()
            .to_vec()
    };
    let mut forged = delta(&g7, 7, &g8, 8);
    let digest = g8.bits().digest().to_le_bytes();
    let at = forged
        .windows(4)
        .position(|w| w == digest)
        .expect("the result digest is in the header");
    forged[at] ^= 0x01;
    let n = forged.len();
    let crc = crc32c::crc32c(&forged[..n - 4]);
    forged[n - 4..].copy_from_slice(&crc.to_le_bytes());
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
        let file = format!("{name}.bin");
        manifest.insert(file.clone(), json!({"error": error, "apply_to": base}));
        out.push(VectorFile {
            path: format!("reject/{file}").into(),
            bytes,
        });
    }
    // Flags bit 1 (restart) is for full frames: on a delta it is refused (section 2).
    let mut restart_delta = delta(&g7, 7, &g8, 8);
    assert_eq!(restart_delta[5], 1, "a delta");
    restart_delta[10] |= 0x02;
    let n = restart_delta.len();
    let crc = crc32c::crc32c(&restart_delta[..n - 4]);
    restart_delta[n - 4..].copy_from_slice(&crc.to_le_bytes());
    manifest.insert(
        "restart_on_delta.bin".into(),
        json!({"error": "InvalidField", "field": "flags"}),
    );
    out.push(VectorFile {
        path: "reject/restart_on_delta.bin".into(),
        bytes: restart_delta,
    });
}
