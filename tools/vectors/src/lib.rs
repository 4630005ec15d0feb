//! Generates the test vectors under `spec/vectors/`.
//!
//! ```text
//! cargo run -p bloomwire-vectors         # rewrite spec/vectors/
//! ```
//!
//! The library's `tests/vectors.rs` runs the same generator ([`generate`]) and fails when
//! its output differs from the committed files, so the vectors never drift from the code
//! and are never edited by hand.
//!
//! `accept/` makes the frames a decoder must read (with `opaque`, `counting` and `tagged`
//! filters), `reject/` the frames it must refuse, one file a section of the spec they test;
//! `raw_frame` assembles frames field by field for the reject vectors.

mod accept;
mod hash_index;
mod raw_frame;
mod reject;

use std::path::{Path, PathBuf};

use bloomwire::{BaseHash, BitCoding, Coding, CounterCoding, HashFamily, IndexScheme};
use serde_json::{json, Value};

use accept::accept_vectors;
use accept::counting::counting_accept_vectors;
use accept::tagged::tagged_accept_vectors;
use hash_index::hash_index_vectors;
use reject::reject_vectors;

/// A generated file: its path under `spec/vectors/` and its bytes.
pub struct VectorFile {
    /// The path, relative to `spec/vectors/`.
    pub path: PathBuf,
    /// The file's contents.
    pub bytes: Vec<u8>,
}

pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub(crate) fn json_file(path: &str, v: &Value) -> VectorFile {
    let mut bytes = serde_json::to_vec_pretty(v).expect("json");
    bytes.push(b'\n');
    VectorFile {
        path: path.into(),
        bytes,
    }
}

pub(crate) fn family_json(f: &HashFamily) -> Value {
    let base = match f.base {
        BaseHash::Xxh64 { seed } => json!({"base_hash": "xxh64", "seed": seed.to_string()}),
        BaseHash::SipHash24 { k0, k1 } => {
            json!({"base_hash": "siphash24", "k0": k0.to_string(), "k1": k1.to_string()})
        }
        BaseHash::Opaque => json!({"base_hash": "opaque"}),
    };
    let mut v = base;
    v["index_scheme"] = json!(match f.scheme {
        IndexScheme::DoubleHashing => "double",
        IndexScheme::EnhancedDoubleHashing => "enhanced",
    });
    v
}

pub(crate) fn key(i: u64) -> Vec<u8> {
    format!("key-{i}").into_bytes()
}

pub(crate) fn siphash_family(scheme: IndexScheme) -> HashFamily {
    let mut k = [0u8; 16];
    for (i, b) in k.iter_mut().enumerate() {
        *b = i as u8;
    }
    HashFamily::new(BaseHash::siphash(k), scheme)
}

pub(crate) fn xxh(seed: u64, scheme: IndexScheme) -> HashFamily {
    HashFamily::new(BaseHash::Xxh64 { seed }, scheme)
}

/// Every vector file, in a fixed order.
pub fn generate() -> Vec<VectorFile> {
    let mut out = vec![hash_index_vectors()];
    out.extend(accept_vectors());
    out.extend(counting_accept_vectors());
    out.extend(tagged_accept_vectors());
    out.extend(reject_vectors());
    out
}

/// The committed vectors directory, `spec/vectors/` at the repository's root.
pub fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec/vectors")
}

/// The encoder's bit coding for a vector's wire coding.
pub(crate) fn bit(coding: Coding) -> BitCoding {
    BitCoding::try_from(coding).expect("a bit coding")
}

/// The encoder's counter coding for a vector's wire coding.
pub(crate) fn counter(coding: Coding) -> CounterCoding {
    CounterCoding::try_from(coding).expect("a counter coding")
}
