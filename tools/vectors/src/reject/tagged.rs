//! Reject vectors of authenticated frames (spec section 2.5).

use bloomwire::format::{varint_len, FLAG_TAGGED, TAG_LEN};
use bloomwire::{BitCoding, Encoder, Frame, FrameKey};
use serde_json::json;

use super::{checksum_fixed_at, Rejects};
use crate::accept::delta_generations;
use crate::accept::tagged::vector_key;
use crate::hex;

/// Reject vectors of authenticated frames (section 2.5); each entry's `key_hex` is the
/// decoder's key (none: a decoder without a key).
pub(super) fn reject_vectors(rejects: &mut Rejects) {
    let [g7, g8, _, _] = delta_generations();
    let key = FrameKey::new(vector_key());
    let key_hex = hex(&vector_key());
    let full = |key: Option<FrameKey>| {
        Encoder::new()
            .coding(BitCoding::KnownP)
            .encode_generation(&g7, 7)
            .expect("no budget")
            .with_key(key)
            .to_bytes()
            .to_vec()
    };
    let genuine = full(Some(key.clone()));
    let tag_at = genuine.len() - TAG_LEN;
    // The tag's last byte changed.
    let mut wrong = genuine.clone();
    wrong[tag_at + TAG_LEN - 1] ^= 0x80;
    // The delta relabelled from generation 8 to 87 (issue: generations are not covered by
    // the digests), its checksum recomputed: the tag covers the generation.
    let delta = Encoder::new()
        .key(key.clone())
        .coding(BitCoding::KnownP)
        .encode_delta(&g7, 7, &g8, 8)
        .expect("no budget");
    let mut relabelled = delta.to_bytes().to_vec();
    let h = delta.header();
    let at = 11
        + varint_len(0)
        + varint_len(h.params.m())
        + varint_len(u64::from(h.params.k().raw()))
        + varint_len(h.n);
    assert_eq!(
        (relabelled[at], relabelled[at + 1]),
        (8, 7),
        "generation, base"
    );
    relabelled[at] = 87;
    let relabelled = checksum_fixed_at(relabelled, tag_at_of(&delta));
    // The genuine frame with its flag cleared (checksum recomputed): an untagged frame
    // followed by 16 bytes.
    let mut unflagged = genuine.clone();
    unflagged[10] &= !FLAG_TAGGED;
    let unflagged = checksum_fixed_at(unflagged, tag_at - 4);
    let other = full(Some(FrameKey::new([0xEE; 32])));
    let cases: [(&str, Vec<u8>, &str, bool); 8] = [
        ("tag_wrong", wrong, "BadTag", true),
        ("tag_other_key", other, "BadTag", true),
        ("tag_missing", full(None), "MissingTag", true),
        ("tag_relabelled_generation", relabelled, "BadTag", true),
        (
            "tag_without_flag",
            unflagged.clone(),
            "TrailingBytes",
            false,
        ),
        ("tag_without_flag_keyed", unflagged, "MissingTag", true),
        (
            "tag_truncated",
            genuine[..genuine.len() - 5].to_vec(),
            "Incomplete",
            false,
        ),
        (
            "tag_truncated_keyed",
            genuine[..genuine.len() - 5].to_vec(),
            "Incomplete",
            true,
        ),
    ];
    for (name, bytes, error, keyed) in cases {
        let mut entry = json!({"error": error});
        if keyed {
            entry["key_hex"] = json!(key_hex);
        }
        rejects.push(name, bytes, entry);
    }
}

/// Where the checksum of a tagged frame ends (and its tag begins) minus 4: the end of its
/// payload.
fn tag_at_of(frame: &Frame) -> usize {
    frame.encoded_len() - TAG_LEN - 4
}
