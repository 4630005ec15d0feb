//! The hash index vectors (`spec/vectors/hash_index.json`): the bit positions of keys under
//! every hash family and index scheme.

use bloomwire::IndexScheme;
use serde_json::json;

use crate::{family_json, hex, json_file, siphash_family, xxh, VectorFile};

pub(crate) fn hash_index_vectors() -> VectorFile {
    let keys: Vec<Vec<u8>> = vec![
        vec![],
        b"a".to_vec(),
        b"bloomwire".to_vec(),
        (0..=255u8).collect(),
    ];
    let families = [
        xxh(0, IndexScheme::DoubleHashing),
        xxh(0x0123_4567_89ab_cdef, IndexScheme::EnhancedDoubleHashing),
        siphash_family(IndexScheme::DoubleHashing),
        siphash_family(IndexScheme::EnhancedDoubleHashing),
    ];
    let shapes: [(u32, u64); 5] = [
        (1, 1),
        (5, 13),
        (4, 1000),
        (12, 1 << 20),
        (7, (1 << 48) - 59),
    ];
    let mut cases = Vec::new();
    for fam in &families {
        for k in &keys {
            for &(count, range) in &shapes {
                let idx = fam.indexes(k, count, range).expect("range >= 1");
                let mut case = family_json(fam);
                case["key_hex"] = json!(hex(k));
                case["hash"] = json!(fam.base.hash(k).to_string());
                case["k"] = json!(count);
                case["m"] = json!(range.to_string());
                case["indexes"] = json!(idx.iter().map(|i| i.to_string()).collect::<Vec<_>>());
                cases.push(case);
            }
        }
    }
    json_file(
        "hash_indexes.json",
        &json!({
            "description": "Indexes g_0..g_{k-1} of section 3.2 for a standard filter of m bits \
                            with integer k (a = stream(h, 0), b = stream(h, 1)). 64-bit numbers are \
                            decimal strings.",
            "cases": cases,
        }),
    )
}
