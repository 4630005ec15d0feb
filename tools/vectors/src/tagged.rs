//! Vectors of authenticated frames (spec section 2.5): tagged frames read with the key, and
//! forged tags refused.

use bloomwire::format::{varint_len, FLAG_TAGGED, TAG_LEN};
use bloomwire::{BitArray, BitCoding, BloomFilter, Coding, Encoder, Frame, FrameKey};
use serde_json::{json, Value};

use crate::accept::{accept_files, delta_generations};
use crate::{hex, json_file, VectorFile};

/// The key of the authenticated vectors (section 2.5): bytes 0x00 to 0x1f.
pub(crate) fn vector_key() -> [u8; 32] {
    core::array::from_fn(|i| i as u8)
}

/// [`accept_files`] for a frame tagged with [`vector_key`]: the manifest gives the key.
pub(crate) fn tagged_accept_files(
    name: &str,
    frame: &Frame,
    bits: &BitArray,
    filter: &BloomFilter,
    members: core::ops::Range<u64>,
    base: Option<&str>,
) -> Vec<VectorFile> {
    let mut files = accept_files(name, frame, bits, filter, members, base);
    let manifest = files.last_mut().expect("the manifest");
    let mut v: Value = serde_json::from_slice(&manifest.bytes).expect("json");
    v["key_hex"] = json!(hex(&vector_key()));
    *manifest = json_file(&format!("accept/{name}.json"), &v);
    files
}

/// Authenticated frames (flags bit 2, section 2.5): a full frame, the delta from it, and a
/// counting frame, each tagged with [`vector_key`].
pub(crate) fn tagged_accept_vectors() -> Vec<VectorFile> {
    let [g7, g8, _, _] = delta_generations();
    let tagged = || Encoder::new().key(FrameKey::new(vector_key()));
    let mut out = tagged_accept_files(
        "tagged_gen7_base",
        &tagged()
            .coding(BitCoding::KnownP)
            .encode_generation(&g7, 7)
            .expect("no budget"),
        g7.bits(),
        &g7,
        0..400,
        None,
    );
    let xor = g8.xor(&g7).expect("same params");
    let delta = tagged()
        .coding(BitCoding::Positional)
        .encode_delta(&g7, 7, &g8, 8)
        .expect("no budget");
    assert_eq!(delta.coding(), Coding::Positional);
    out.extend(tagged_accept_files(
        "tagged_delta_gen8",
        &delta,
        &xor,
        &g8,
        20..420,
        Some("tagged_gen7_base.bin"),
    ));
    out
}

/// Reject vectors of authenticated frames (section 2.5); each entry's `key_hex` is the
/// decoder's key (none: a decoder without a key).
pub(crate) fn tagged_reject_vectors(
    manifest: &mut serde_json::Map<String, Value>,
    out: &mut Vec<VectorFile>,
) {
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
    let crc_fixed = |mut frame: Vec<u8>, body_end: usize| {
        let crc = crc32c::crc32c(&frame[..body_end]);
        frame[body_end..body_end + 4].copy_from_slice(&crc.to_le_bytes());
        frame
    };
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
    let relabelled = crc_fixed(relabelled, tag_at_of(&delta));
    // The genuine frame with its flag cleared (checksum recomputed): an untagged frame
    // followed by 16 bytes.
    let mut unflagged = genuine.clone();
    unflagged[10] &= !FLAG_TAGGED;
    let unflagged = crc_fixed(unflagged, tag_at - 4);
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
        let file = format!("{name}.bin");
        let mut entry = json!({"error": error});
        if keyed {
            entry["key_hex"] = json!(key_hex);
        }
        manifest.insert(file.clone(), entry);
        out.push(VectorFile {
            path: format!("reject/{file}").into(),
            bytes,
        });
    }
}

/// Where the checksum of a tagged frame ends (and its tag begins) minus 4: the end of its
/// payload.
pub(crate) fn tag_at_of(frame: &Frame) -> usize {
    frame.encoded_len() - TAG_LEN - 4
}
