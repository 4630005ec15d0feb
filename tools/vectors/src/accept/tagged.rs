//! Vectors of authenticated frames (spec section 2.5): tagged frames read with the key, and
//! forged tags refused.

use bloomwire::{BitCoding, Encoder, FrameKey};
use serde_json::{json, Value};

use crate::accept::{
    accept_files, delta_7_to_8, delta_generations, filter_files, known_p_generation,
};
use crate::{hex, json_file, VectorFile};

/// The key of the authenticated vectors (section 2.5): bytes 0x00 to 0x1f.
pub(crate) fn vector_key() -> [u8; 32] {
    core::array::from_fn(|i| i as u8)
}

/// The files of [`accept_files`] for a frame tagged with [`vector_key`]: the manifest
/// gives the key.
fn with_key(mut files: Vec<VectorFile>) -> Vec<VectorFile> {
    let manifest = files.last_mut().expect("the manifest");
    let mut v: Value = serde_json::from_slice(&manifest.bytes).expect("json");
    v["key_hex"] = json!(hex(&vector_key()));
    let path = manifest.path.to_str().expect("a UTF-8 path").to_string();
    *manifest = json_file(&path, &v);
    files
}

/// Authenticated frames (flags bit 2, section 2.5): a full frame, the delta from it, and a
/// counting frame, each tagged with [`vector_key`].
pub(crate) fn tagged_accept_vectors() -> Vec<VectorFile> {
    let [g7, g8, _, _] = delta_generations();
    let tagged = || Encoder::new().key(FrameKey::new(vector_key()));
    let mut out = with_key(filter_files(
        "tagged_gen7_base",
        &known_p_generation(tagged(), &g7, 7),
        &g7,
        0..400,
    ));
    let xor = g8.xor(&g7).expect("same params");
    let delta = delta_7_to_8(tagged(), BitCoding::Positional, &g7, &g8);
    out.extend(with_key(accept_files(
        "tagged_delta_gen8",
        &delta,
        &xor,
        &g8,
        20..420,
        Some("tagged_gen7_base.bin"),
    )));
    out
}
