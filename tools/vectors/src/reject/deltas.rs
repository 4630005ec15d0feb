//! Reject vectors of generations (spec sections 2 and 5.2): deltas that decode but that a
//! receiver holding the frame named by `apply_to` must refuse, and a restart flag on a delta.

use bloomwire::{BitCoding, Encoder, Filter};
use serde_json::json;

use super::{checksum_fixed, result_forged, Rejects};
use crate::accept::delta_generations;

/// Appends the deltas' reject files.
pub(super) fn reject_vectors(rejects: &mut Rejects) {
    let [g7, g8, g9, _] = delta_generations();
    let encoder = Encoder::new().coding(BitCoding::KnownP);
    stale_deltas(
        rejects,
        "",
        &encoder,
        [&g7, &g8, &g9],
        g8.bits().digest(),
        // "Hash family" in section 5.2 covers the seed and the index scheme.
        &["other_shape", "other_seed", "other_scheme"],
    );
    rejects.push(
        "full_without_restart_after_forged",
        encoder
            .encode_generation(&g8, 8)
            .expect("no budget")
            .to_bytes()
            .to_vec(),
        json!({"error": "StaleGeneration", "apply_to": "accept/forged_gen_max.bin"}),
    );
    // Flags bit 1 (restart) is for full frames: on a delta it is refused (section 2).
    let mut restart_delta = delta(&encoder, &g7, 7, &g8, 8);
    assert_eq!(restart_delta[5], 1, "a delta");
    restart_delta[10] |= 0x02;
    rejects.push(
        "restart_on_delta",
        checksum_fixed(restart_delta),
        json!({"error": "InvalidField", "field": "flags"}),
    );
}

/// The delta from generation `b` (`base`) to `g` (`next`), as `encoder` writes it.
fn delta<F: Filter>(encoder: &Encoder<F>, base: &F, b: u64, next: &F, g: u64) -> Vec<u8> {
    encoder
        .encode_delta(base, b, next, g)
        .expect("no budget")
        .to_bytes()
        .to_vec()
}

/// The deltas between generations 7, 8 and 9 (`gens`, the digest of 8's bits `digest8`)
/// that a receiver holding the frame `apply_to` names must refuse, for either kind of
/// filter (`kind`: "" or "counting_", before the file names and the accept files they apply
/// to): 8 on 7 applied to another base, forged, already applied, and applied to each
/// accept file `gen7_{other}` (incompatible); 9 on 8, after a gap.
pub(super) fn stale_deltas<F: Filter>(
    rejects: &mut Rejects,
    kind: &str,
    encoder: &Encoder<F>,
    [g7, g8, g9]: [&F; 3],
    digest8: u32,
    others: &[&str],
) {
    let d78 = delta(encoder, g7, 7, g8, 8);
    let d89 = delta(encoder, g8, 8, g9, 9);
    let mut cases = vec![
        (
            "delta_applied_to_other_base",
            d78.to_vec(),
            "BaseMismatch",
            "gen7_other_base",
        ),
        ("delta_gap", d89, "GenerationGap", "gen7_base"),
        (
            "delta_result_forged",
            result_forged(d78.to_vec(), digest8),
            "ResultMismatch",
            "gen7_base",
        ),
        (
            "delta_already_applied",
            d78.to_vec(),
            "StaleGeneration",
            "gen8_full",
        ),
    ]
    .into_iter()
    .map(|(name, bytes, error, base)| (name.to_string(), bytes, error, base.to_string()))
    .collect::<Vec<_>>();
    for o in others {
        let (name, base) = (format!("delta_applied_to_{o}"), format!("gen7_{o}"));
        cases.push((name, d78.to_vec(), "Incompatible", base));
    }
    for (name, bytes, error, base) in cases {
        let apply_to = format!("accept/{kind}{base}.bin");
        let entry = json!({"error": error, "apply_to": apply_to});
        rejects.push(&format!("{kind}{name}"), bytes, entry);
    }
}
