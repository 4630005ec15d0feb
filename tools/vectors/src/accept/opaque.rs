//! Accept vectors of opaque filters (base hash 0, spec 3.1): another library's bits carried as
//! they are.

use bloomwire::{BitArray, BitCoding, BloomFilter, Encoder, HashFamily, IndexScheme, Params};

use crate::accept::{accept_files, filter_files, filter_of};
use crate::{xxh, VectorFile};

/// Two generations of another library's filter (base hash 0, spec 3.1): m = 4096 with
/// k = 7 as that library states it, half its bits set by a fixed pseudo-random rule, and
/// 60 more bits set in generation 2.
pub(crate) fn opaque_generations() -> [BloomFilter; 2] {
    let params = Params::standard(4096, 7, HashFamily::opaque()).expect("valid");
    let mut bits = BitArray::new(4096);
    for i in 0..4096u64 {
        if bloomwire::filter::hashing::fmix64(i) & 1 == 1 {
            bits.set(i);
        }
    }
    let g1 = BloomFilter::from_parts(params.clone(), bits.clone(), 300).expect("valid");
    for i in 0..60u64 {
        bits.set(i * 67 % 4096);
    }
    let g2 = BloomFilter::from_parts(params, bits, 310).expect("valid");
    [g1, g2]
}

/// Opaque frames (spec 3.1) and application metadata (flags bit 3, spec 2.6).
pub(crate) fn opaque_accept_vectors() -> Vec<VectorFile> {
    let mut out = Vec::new();
    let [g1, g2] = opaque_generations();
    out.extend(filter_files(
        "opaque_raw",
        &Encoder::new()
            .encode_with(&g1, BitCoding::Raw)
            .expect("a bit coding"),
        &g1,
        0..0,
    ));
    let meta = Encoder::new()
        .coding(BitCoding::KnownPInterleaved)
        .metadata(b"fastbloom hashes=7 seed=42".to_vec());
    out.extend(filter_files(
        "opaque_gen1_metadata",
        &meta.encode_generation(&g1, 1).expect("no budget"),
        &g1,
        0..0,
    ));
    let delta = Encoder::new()
        .coding(BitCoding::Positional)
        .metadata(b"t=1700000060".to_vec())
        .encode_delta(&g1, 1, &g2, 2)
        .expect("no budget");
    out.extend(accept_files(
        "opaque_delta_gen2_metadata",
        &delta,
        &g2.xor(&g1).expect("same params"),
        &g2,
        0..0,
        Some("opaque_gen1_metadata.bin"),
    ));
    // A filter of bloomwire's own family with metadata: queried as usual.
    let params = Params::standard(1000, 3, xxh(0, IndexScheme::DoubleHashing)).expect("valid");
    let f = filter_of(&params, 0..100);
    out.extend(filter_files(
        "metadata_known_p",
        &Encoder::new()
            .metadata(b"sender=7".to_vec())
            .encode_with(&f, BitCoding::KnownP)
            .expect("a bit coding"),
        &f,
        0..100,
    ));
    out
}
