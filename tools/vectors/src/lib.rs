//! Generates the test vectors under `spec/vectors/`.
//!
//! ```text
//! cargo run -p bloomwire-vectors         # rewrite spec/vectors/
//! ```
//!
//! The library's `tests/vectors.rs` runs the same generator ([`generate`]) and fails when
//! its output differs from the committed files, so the vectors never drift from the code
//! and are never edited by hand.

use std::path::{Path, PathBuf};

use bloomwire::filter::counting::pack_counters;
use bloomwire::format::{put_varint, varint_len, FLAG_TAGGED, TAG_LEN};
use bloomwire::internals::positional::{self, GapParams};
use bloomwire::{
    BaseHash, BitArray, BitCoding, BloomFilter, Chunking, Coding, CounterCoding,
    CountingBloomFilter, Encoder, Frame, FrameKey, FrameKind, HashCount, HashFamily, IndexScheme,
    Layout, PSource, Params, Tag,
};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// A generated file: its path under `spec/vectors/` and its bytes.
pub struct VectorFile {
    /// The path, relative to `spec/vectors/`.
    pub path: PathBuf,
    /// The file's contents.
    pub bytes: Vec<u8>,
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn json_file(path: &str, v: &Value) -> VectorFile {
    let mut bytes = serde_json::to_vec_pretty(v).expect("json");
    bytes.push(b'\n');
    VectorFile {
        path: path.into(),
        bytes,
    }
}

fn family_json(f: &HashFamily) -> Value {
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

fn key(i: u64) -> Vec<u8> {
    format!("key-{i}").into_bytes()
}

fn siphash_family(scheme: IndexScheme) -> HashFamily {
    let mut k = [0u8; 16];
    for (i, b) in k.iter_mut().enumerate() {
        *b = i as u8;
    }
    HashFamily::new(BaseHash::siphash(k), scheme)
}

fn xxh(seed: u64, scheme: IndexScheme) -> HashFamily {
    HashFamily::new(BaseHash::Xxh64 { seed }, scheme)
}

fn hash_index_vectors() -> VectorFile {
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

struct AcceptCase {
    name: &'static str,
    params: Params,
    n: u64,
    coding: Coding,
    p_source: PSource,
}

fn accept_cases() -> Vec<AcceptCase> {
    use IndexScheme::*;
    let k = |x: f64| HashCount::from_f64(x).expect("valid k");
    let std = |m: u64, kk: f64, fam: HashFamily| {
        Params::new(m, Layout::Standard { k: k(kk) }, fam).expect("valid")
    };
    let mut v = Vec::new();
    let mut add = |name, params, n, coding, p_source| {
        v.push(AcceptCase {
            name,
            params,
            n,
            coding,
            p_source,
        })
    };
    let f0 = xxh(0, DoubleHashing);
    add("m1_raw", std(1, 1.0, f0), 1, Coding::Raw, PSource::Measured);
    add(
        "m1_adaptive",
        std(1, 1.0, f0),
        1,
        Coding::Adaptive,
        PSource::Measured,
    );
    add(
        "m1_symbols",
        std(1, 2.0, f0),
        0,
        Coding::KnownPSymbols,
        PSource::Measured,
    );
    for (name, coding) in [
        ("std_1000_raw", Coding::Raw),
        ("std_1000_adaptive", Coding::Adaptive),
        ("std_1000_known_p", Coding::KnownP),
        ("std_1000_symbols", Coding::KnownPSymbols),
        ("std_1000_interleaved", Coding::KnownPInterleaved),
        ("std_1000_positional", Coding::Positional),
        ("std_1000_small", Coding::Small),
        ("std_1000_wide", Coding::Wide),
        ("std_1000_escape", Coding::Escape),
    ] {
        add(name, std(1000, 3.0, f0), 100, coding, PSource::Measured);
    }
    add(
        "sparse_k1_positional",
        std(20_000, 1.0, f0),
        150,
        Coding::Positional,
        PSource::Measured,
    );
    // A sparse filter of 2^20 bits in a few bytes: beyond the work bound of codings 1 to 6, 8
    // and 9, which coding 7 is exempt from (spec 2.2).
    add(
        "sparse_past_work_bound_positional",
        std(1 << 20, 1.0, f0),
        3,
        Coding::Positional,
        PSource::Measured,
    );
    add(
        "empty_positional",
        std(4093, 4.0, f0),
        0,
        Coding::Positional,
        PSource::Measured,
    );
    add(
        "m13_known_p",
        std(13, 2.0, f0),
        3,
        Coding::KnownP,
        PSource::Measured,
    );
    add(
        "m13_symbols",
        std(13, 2.0, f0),
        3,
        Coding::KnownPSymbols,
        PSource::Measured,
    );
    add(
        "m13_interleaved",
        std(13, 2.0, f0),
        3,
        Coding::KnownPInterleaved,
        PSource::Measured,
    );
    add(
        "m13_small",
        std(13, 2.0, f0),
        3,
        Coding::Small,
        PSource::Measured,
    );
    add(
        "empty_small",
        std(4093, 4.0, f0),
        0,
        Coding::Small,
        PSource::Measured,
    );
    add(
        "std_small_dense",
        std(4000, 1.0, f0),
        600,
        Coding::Small,
        PSource::Measured,
    );
    // Coding 11 (4.15): the states alone (m = 13, two bytes carried), none set, the
    // paper's density with escapes, and a dense array where most bytes escape.
    add(
        "m13_escape",
        std(13, 2.0, f0),
        3,
        Coding::Escape,
        PSource::Measured,
    );
    add(
        "empty_escape",
        std(4093, 4.0, f0),
        0,
        Coding::Escape,
        PSource::Measured,
    );
    add(
        "std_escape_paper",
        std(14_000, 2.0, f0),
        1000,
        Coding::Escape,
        PSource::Measured,
    );
    add(
        "std_escape_dense",
        std(4000, 1.0, f0),
        2800,
        Coding::Escape,
        PSource::Measured,
    );
    // Coding 10 (4.14): arrays of 32 rounds (twelve coded in each half) and of 80, the
    // states alone (m = 13, and every state at 2^15).
    add(
        "std_wide_half",
        std(4000, 1.0, f0),
        2800,
        Coding::Wide,
        PSource::Measured,
    );
    add(
        "std_wide_sparse",
        std(10_000, 2.0, f0),
        700,
        Coding::Wide,
        PSource::Measured,
    );
    add(
        "m13_wide",
        std(13, 2.0, f0),
        3,
        Coding::Wide,
        PSource::Measured,
    );
    add(
        "empty_wide",
        std(4093, 4.0, f0),
        0,
        Coding::Wide,
        PSource::Measured,
    );
    add(
        "m1_interleaved",
        std(1, 2.0, f0),
        1,
        Coding::KnownPInterleaved,
        PSource::Measured,
    );
    add(
        "empty_interleaved",
        std(4093, 4.0, f0),
        0,
        Coding::KnownPInterleaved,
        PSource::Measured,
    );
    add(
        "theory_p_interleaved",
        std(20_000, 2.0, xxh(99, EnhancedDoubleHashing)),
        1500,
        Coding::KnownPInterleaved,
        PSource::Theory,
    );
    add(
        "empty_adaptive",
        std(4093, 4.0, f0),
        0,
        Coding::Adaptive,
        PSource::Measured,
    );
    add(
        "dense_known_p",
        std(777, 5.0, f0),
        400,
        Coding::KnownP,
        PSource::Measured,
    );
    add(
        "theory_p_symbols",
        std(20_000, 2.0, xxh(99, EnhancedDoubleHashing)),
        1500,
        Coding::KnownPSymbols,
        PSource::Theory,
    );
    add(
        "rational_k_siphash_enhanced_adaptive",
        std(2003, 2.5, siphash_family(EnhancedDoubleHashing)),
        200,
        Coding::Adaptive,
        PSource::Measured,
    );
    add(
        "rational_k_xxh_known_p",
        std(3000, 1.75, xxh(7, DoubleHashing)),
        300,
        Coding::KnownP,
        PSource::Measured,
    );
    add(
        "partitioned_k3_known_p",
        Params::new(1001, Layout::Partitioned { k: k(3.0) }, f0).expect("valid"),
        100,
        Coding::KnownP,
        PSource::Measured,
    );
    add(
        "partitioned_k3_25_siphash_symbols",
        Params::new(
            5000,
            Layout::Partitioned { k: k(3.25) },
            siphash_family(DoubleHashing),
        )
        .expect("valid"),
        400,
        Coding::KnownPSymbols,
        PSource::Measured,
    );
    add(
        "blocks_proportional_symbols",
        Params::new(
            1000,
            Layout::blocks_proportional(1000, k(4.0)).expect("valid"),
            xxh(5, EnhancedDoubleHashing),
        )
        .expect("valid"),
        120,
        Coding::KnownPSymbols,
        PSource::Measured,
    );
    add(
        "blocks_with_zero_k_block_adaptive",
        Params::new(
            0b1_0000_0101,
            Layout::Blocks {
                ks: vec![
                    k(2.5),
                    HashCount::from_raw_allow_zero(0).expect("0"),
                    k(1.0),
                ],
            },
            f0,
        )
        .expect("valid"),
        20,
        Coding::Adaptive,
        PSource::Measured,
    );
    v
}

fn params_json(p: &Params) -> Value {
    let mut v = family_json(p.family());
    v["m"] = json!(p.m());
    match p.layout() {
        Layout::Standard { k } => {
            v["filter_type"] = json!("standard");
            v["k_raw"] = json!(k.raw());
        }
        Layout::Partitioned { k } => {
            v["filter_type"] = json!("partitioned");
            v["k_raw"] = json!(k.raw());
        }
        Layout::Blocks { ks } => {
            v["filter_type"] = json!("blocks");
            v["block_k_raw"] = json!(ks.iter().map(|k| k.raw()).collect::<Vec<_>>());
        }
    }
    v
}

/// A frame's header fields as a manifest's `params`.
fn header_json(frame: &Frame) -> Value {
    let h = frame.header();
    let mut params = params_json(&h.params);
    if let Some(width) = h.counter_width {
        params["counted_type"] = params["filter_type"].clone();
        params["filter_type"] = json!("counting");
        params["counter_width"] = json!(width);
        params["counter_table"] = json!(h.counter_table.as_ref().map(|t| t.frequencies()));
    }
    params["n"] = json!(h.n);
    params["coding"] = json!(h.coding.to_string());
    params["q0"] = json!(h.q0);
    params["payload_len"] = json!(h.payload_len);
    params["header_len"] = json!(h.header_len);
    // Beyond 2^53 a JSON number is not exact in every reader: a decimal string.
    params["generation"] = if h.generation > 1 << 53 {
        json!(h.generation.to_string())
    } else {
        json!(h.generation)
    };
    if h.restart {
        params["restart"] = json!(true);
    }
    if h.tag != Tag::Absent {
        params["tagged"] = json!(true);
    }
    if let Some(shift) = h.chunk_shift {
        params["chunk_shift"] = json!(shift);
    }
    if let Some(metadata) = &h.metadata {
        params["metadata_hex"] = json!(hex(metadata));
    }
    if let FrameKind::Delta {
        base_generation,
        base_digest,
        result_digest,
    } = h.kind
    {
        params["kind"] = json!("delta");
        params["base_generation"] = json!(base_generation);
        params["base_digest"] = json!(base_digest);
        params["result_digest"] = json!(result_digest);
    } else {
        params["kind"] = json!("full");
    }
    params
}

fn sha256_hex(bits: &BitArray) -> String {
    hex(&Sha256::digest(bits.to_bytes()))
}

/// The frame file and its manifest. `bits` are the decoded payload bits, `filter` the
/// filter the keys are queried on (for a delta: the result of applying it to `base`).
fn accept_files(
    name: &str,
    frame: &Frame,
    bits: &BitArray,
    filter: &BloomFilter,
    members: core::ops::Range<u64>,
    base: Option<&str>,
) -> Vec<VectorFile> {
    // An opaque filter's keys are the other library's: no query to check but its refusal.
    let opaque = filter.is_opaque();
    let member_keys: Vec<Value> = members
        .take(if opaque { 0 } else { 10 })
        .map(|i| json!({"key_hex": hex(&key(i)), "expected": true}))
        .collect();
    let others = if opaque {
        0..0
    } else {
        1_000_000..1_000_020u64
    };
    let other_keys: Vec<Value> = others
        .map(|i| json!({"key_hex": hex(&key(i)), "expected": filter.contains(key(i))}))
        .collect();
    let mut manifest = json!({
        "frame": format!("{name}.bin"),
        "params": header_json(frame),
        "bits_sha256": sha256_hex(bits),
        "ones": bits.count_ones(),
        "member_keys": member_keys,
        "other_keys": other_keys,
    });
    if opaque {
        manifest["query_refused"] = json!(true);
    }
    if let Some(base) = base {
        manifest["base_frame"] = json!(base);
        manifest["result_bits_sha256"] = json!(sha256_hex(filter.bits()));
    }
    vec![
        VectorFile {
            path: format!("accept/{name}.bin").into(),
            bytes: frame.to_bytes().to_vec(),
        },
        json_file(&format!("accept/{name}.json"), &manifest),
    ]
}

fn filter_of(params: &Params, keys: core::ops::Range<u64>) -> BloomFilter {
    let mut f = BloomFilter::new(params.clone());
    for i in keys {
        f.insert(key(i));
    }
    f
}

/// The generations the delta vectors are made of: a standard filter with keys 0..400 as
/// generation 7, keys 20..420 as generation 8, keys 40..440 as generation 9, and an
/// unrelated generation 7 with keys 1000..1400.
fn delta_generations() -> [BloomFilter; 4] {
    let params = Params::standard(5000, 2, xxh(0, IndexScheme::DoubleHashing)).expect("valid");
    [0..400, 20..420, 40..440, 1000..1400].map(|keys| filter_of(&params, keys))
}

/// Generation 7 of a filter with the same m and keys but k = 3.
fn other_shape() -> BloomFilter {
    let params = Params::standard(5000, 3, xxh(0, IndexScheme::DoubleHashing)).expect("valid");
    filter_of(&params, 0..400)
}

/// Generation 7 with the same m, k and keys in another hash family: the seed 1, and
/// enhanced double hashing (whose indexes equal double hashing's for k = 2, so the bits
/// and their digest are the same: only the header tells them apart).
fn other_families() -> [(&'static str, BloomFilter); 2] {
    [
        ("gen7_other_seed", xxh(1, IndexScheme::DoubleHashing)),
        (
            "gen7_other_scheme",
            xxh(0, IndexScheme::EnhancedDoubleHashing),
        ),
    ]
    .map(|(name, family)| {
        let params = Params::standard(5000, 2, family).expect("valid");
        (name, filter_of(&params, 0..400))
    })
}

fn accept_vectors() -> Vec<VectorFile> {
    let mut out = Vec::new();
    for case in accept_cases() {
        let f = filter_of(&case.params, 0..case.n);
        let frame = Encoder::new()
            .p_source(case.p_source)
            .encode_with(&f, bit(case.coding))
            .unwrap();
        out.extend(accept_files(
            case.name,
            &frame,
            f.bits(),
            &f,
            0..case.n,
            None,
        ));
    }
    // Chunked payloads (section 4.10), with small chunks so that the files stay small.
    let f0 = xxh(0, IndexScheme::DoubleHashing);
    for (name, m, n, coding, shift) in [
        (
            "chunked_interleaved",
            5003,
            400,
            Coding::KnownPInterleaved,
            10,
        ),
        ("chunked_adaptive", 1000, 100, Coding::Adaptive, 8),
        ("chunked_known_p", 200, 20, Coding::KnownP, 6),
        ("chunked_symbols", 3001, 250, Coding::KnownPSymbols, 9),
        ("chunked_positional", 5003, 100, Coding::Positional, 10),
        ("chunked_wide", 9001, 700, Coding::Wide, 12),
    ] {
        let params = Params::standard(m, 3, f0).expect("valid");
        let f = filter_of(&params, 0..n);
        let frame = Encoder::new()
            .chunking(Chunking::Shift(shift))
            .encode_with(&f, bit(coding))
            .unwrap();
        assert_eq!(frame.header().chunk_shift, Some(shift));
        out.extend(accept_files(name, &frame, f.bits(), &f, 0..n, None));
    }
    // Coding 7 with the one bit at m - 1 (the last gap ends at the last bit).
    {
        let params = Params::standard(1000, 1, f0).expect("valid");
        let mut bits = BitArray::new(1000);
        bits.set(999);
        let f = BloomFilter::from_parts(params, bits, 0).expect("valid");
        let frame = Encoder::new()
            .encode_with(&f, BitCoding::Positional)
            .expect("a bit coding");
        out.extend(accept_files(
            "last_bit_positional",
            &frame,
            f.bits(),
            &f,
            0..0,
            None,
        ));
    }
    let [g7, g8, _, other7] = delta_generations();
    let full = |f: &BloomFilter| {
        Encoder::new()
            .coding(BitCoding::KnownP)
            .encode_generation(f, 7)
            .expect("no budget")
    };
    out.extend(accept_files(
        "gen7_base",
        &full(&g7),
        g7.bits(),
        &g7,
        0..400,
        None,
    ));
    out.extend(accept_files(
        "gen7_other_base",
        &full(&other7),
        other7.bits(),
        &other7,
        1000..1400,
        None,
    ));
    out.extend(accept_files(
        "gen8_full",
        &Encoder::new()
            .coding(BitCoding::KnownP)
            .encode_generation(&g8, 8)
            .expect("no budget"),
        g8.bits(),
        &g8,
        20..420,
        None,
    ));
    let k3 = other_shape();
    out.extend(accept_files(
        "gen7_other_shape",
        &full(&k3),
        k3.bits(),
        &k3,
        0..400,
        None,
    ));
    for (name, f) in other_families() {
        out.extend(accept_files(name, &full(&f), f.bits(), &f, 0..400, None));
    }
    // A forged full frame numbered 2^64 - 1 (another filter, no restart flag), and the
    // sender's genuine full frame of generation 8 with the restart flag, which a receiver
    // holding the forgery applies (section 5.2).
    let forged = filter_of(&g7.params().clone(), 5000..5100);
    out.extend(accept_files(
        "forged_gen_max",
        &Encoder::new()
            .coding(BitCoding::KnownP)
            .encode_generation(&forged, u64::MAX)
            .expect("no budget"),
        forged.bits(),
        &forged,
        5000..5100,
        None,
    ));
    out.extend(accept_files(
        "restart_gen8_after_forged",
        &Encoder::new()
            .coding(BitCoding::KnownP)
            .encode_generation(&g8, 8)
            .expect("no budget")
            .with_restart(true)
            .expect("a full frame"),
        g8.bits(),
        &g8,
        20..420,
        Some("forged_gen_max.bin"),
    ));
    let xor = g8.xor(&g7).expect("same params");
    for (name, coding) in [
        ("delta_gen8_known_p", Coding::KnownP),
        ("delta_gen8_symbols", Coding::KnownPSymbols),
        ("delta_gen8_raw", Coding::Raw),
        ("delta_gen8_positional", Coding::Positional),
    ] {
        let frame = Encoder::new()
            .coding(bit(coding))
            .encode_delta(&g7, 7, &g8, 8)
            .expect("no budget");
        assert_eq!(frame.coding(), coding);
        out.extend(accept_files(
            name,
            &frame,
            &xor,
            &g8,
            20..420,
            Some("gen7_base.bin"),
        ));
    }
    out.extend(opaque_accept_vectors());
    out
}

/// Two generations of another library's filter (base hash 0, spec 3.1): m = 4096 with
/// k = 7 as that library states it, half its bits set by a fixed pseudo-random rule, and
/// 60 more bits set in generation 2.
fn opaque_generations() -> [BloomFilter; 2] {
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
fn opaque_accept_vectors() -> Vec<VectorFile> {
    let mut out = Vec::new();
    let [g1, g2] = opaque_generations();
    out.extend(accept_files(
        "opaque_raw",
        &Encoder::new()
            .encode_with(&g1, BitCoding::Raw)
            .expect("a bit coding"),
        g1.bits(),
        &g1,
        0..0,
        None,
    ));
    let meta = Encoder::new()
        .coding(BitCoding::KnownPInterleaved)
        .metadata(b"fastbloom hashes=7 seed=42".to_vec());
    out.extend(accept_files(
        "opaque_gen1_metadata",
        &meta.encode_generation(&g1, 1).expect("no budget"),
        g1.bits(),
        &g1,
        0..0,
        None,
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
    out.extend(accept_files(
        "metadata_known_p",
        &Encoder::new()
            .metadata(b"sender=7".to_vec())
            .encode_with(&f, BitCoding::KnownP)
            .expect("a bit coding"),
        f.bits(),
        &f,
        0..100,
        None,
    ));
    out
}

/// A frame assembled field by field, so reject vectors can hold any value in any field.
#[derive(Clone)]
struct RawFrame {
    fixed: Vec<u8>,
    seed: Vec<u8>,
    varints: Vec<Vec<u8>>, // m, k(s), n
    sequence: Vec<u8>,     // generation, and for deltas base generation and digests
    q0: Vec<u8>,
    len: Vec<u8>,
    payload: Vec<u8>,
    crc: Option<u32>,
    trailing: Vec<u8>,
}

fn varint(v: u64) -> Vec<u8> {
    let mut b = Vec::new();
    put_varint(&mut b, v);
    b
}

impl RawFrame {
    /// A valid raw-coded standard frame: m = 16, k = 2, n = 1.
    fn valid_raw() -> RawFrame {
        RawFrame {
            fixed: vec![b'B', b'L', b'W', b'R', 1, 0, 0, 1, 0, 0, 0],
            seed: vec![0],
            varints: vec![varint(16), varint(2 << 16), varint(1)],
            sequence: varint(0),
            q0: vec![],
            len: varint(2),
            payload: vec![0x21, 0x80],
            crc: None,
            trailing: vec![],
        }
    }

    fn from_frame(f: &BloomFilter, coding: Coding) -> RawFrame {
        let frame = Encoder::new().encode_with(f, bit(coding)).unwrap();
        let bytes = frame.to_bytes();
        let h = frame.header();
        let mut r = RawFrame::valid_raw();
        r.fixed[9] = coding.id();
        r.varints = vec![
            varint(f.m()),
            varint(f.params().k().raw().into()),
            varint(f.n()),
        ];
        r.q0 = h.q0.map(|q| q.to_le_bytes().to_vec()).unwrap_or_default();
        r.len = varint(h.payload_len as u64);
        r.payload = bytes[h.header_len..h.header_len + h.payload_len].to_vec();
        r
    }

    /// A chunked frame (flags bit 0); the chunk shift byte rides after q0.
    fn chunked(f: &BloomFilter, coding: Coding, shift: u8) -> RawFrame {
        let frame = Encoder::new()
            .chunking(Chunking::Shift(shift))
            .encode_with(f, bit(coding))
            .unwrap();
        let mut r = RawFrame::from_frame(f, coding);
        let h = frame.header();
        let bytes = frame.to_bytes();
        r.fixed[10] = 1;
        r.q0.push(shift);
        r.len = varint(h.payload_len as u64);
        r.payload = bytes[h.header_len..h.header_len + h.payload_len].to_vec();
        r
    }

    fn bytes(&self) -> Vec<u8> {
        let mut b = self.fixed.clone();
        b.extend_from_slice(&self.seed);
        for v in &self.varints {
            b.extend_from_slice(v);
        }
        b.extend_from_slice(&self.sequence);
        b.extend_from_slice(&self.q0);
        b.extend_from_slice(&self.len);
        b.extend_from_slice(&self.payload);
        let crc = self.crc.unwrap_or_else(|| crc32c::crc32c(&b));
        b.extend_from_slice(&crc.to_le_bytes());
        b.extend_from_slice(&self.trailing);
        b
    }
}

/// The payload of `bits` in coding 9, 10 or 11, coded with `q0` whatever the array
/// measures: for reject vectors.
fn payload_with_q0(coding: Coding, bits: &BitArray, q0: u16) -> Vec<u8> {
    use bloomwire::internals::{escape, small, wide};
    let encoders = match coding {
        Coding::Small => small::encode_kernels,
        Coding::Wide => wide::encode_kernels,
        Coding::Escape => escape::encode_kernels,
        _ => unreachable!("codings 9, 10 and 11"),
    };
    encoders(bits.words(), bits.len(), q0).swap_remove(0).1
}

/// `f`'s frame in coding 9, 10 or 11 with q0 one off the measured value, the neighbour
/// whose model codes the array to the same payload: the hole a decoder that did not check
/// q0 would leave open (two accepted frames of one filter).
fn q0_neighbour(f: &BloomFilter, coding: Coding) -> Truncated {
    let mut r = RawFrame::from_frame(f, coding);
    let q0 = u16::from_le_bytes([r.q0[0], r.q0[1]]);
    let twin = [q0 - 1, q0 + 1]
        .into_iter()
        .find(|&other| payload_with_q0(coding, f.bits(), other) == r.payload)
        .unwrap_or_else(|| panic!("{coding}: no neighbour of q0 {q0} with the same payload"));
    r.q0 = twin.to_le_bytes().to_vec();
    r.into()
}

/// A frame cut after its first `.1` bytes (`usize::MAX`: whole).
struct Truncated(RawFrame, usize);

impl From<RawFrame> for Truncated {
    fn from(r: RawFrame) -> Self {
        Truncated(r, usize::MAX)
    }
}

fn reject_vectors() -> Vec<VectorFile> {
    let base = RawFrame::valid_raw();
    let mut small = BloomFilter::new(
        Params::standard(100, 2, xxh(0, IndexScheme::DoubleHashing)).expect("valid"),
    );
    for i in 0..10 {
        small.insert(key(i));
    }
    let coded = |c| RawFrame::from_frame(&small, c);
    // A coded frame with its payload edited, and the payload length to match.
    let coded_with = |c, f: &dyn Fn(&mut RawFrame)| -> Truncated {
        let mut r = coded(c);
        f(&mut r);
        r.len = varint(r.payload.len() as u64);
        r.into()
    };
    let with = |f: &dyn Fn(&mut RawFrame)| -> Truncated {
        let mut r = base.clone();
        f(&mut r);
        r.into()
    };
    let field = |name: &str| json!({"error": "InvalidField", "field": name});
    let limit = |name: &str| json!({"error": "LimitExceeded", "field": name});
    let plain = |name: &str| json!({"error": name});
    let mut cases: Vec<(&str, Truncated, Value)> = vec![
        ("bad_magic", with(&|r| r.fixed[0] = b'b'), plain("BadMagic")),
        (
            "version_2",
            with(&|r| r.fixed[4] = 2),
            plain("UnsupportedVersion"),
        ),
        (
            "version_0",
            with(&|r| r.fixed[4] = 0),
            plain("UnsupportedVersion"),
        ),
        ("kind_2", with(&|r| r.fixed[5] = 2), field("frame kind")),
        (
            "delta_base_generation_not_before",
            with(&|r| {
                r.fixed[5] = 1;
                r.sequence = [varint(5), varint(5), vec![0; 8]].concat();
            }),
            field("base generation"),
        ),
        // No delta has generation 0: its base generation would have to be smaller (5.2).
        (
            "delta_generation_0",
            with(&|r| {
                r.fixed[5] = 1;
                r.sequence = [varint(0), varint(0), vec![0; 8]].concat();
            }),
            field("base generation"),
        ),
        (
            "filter_type_4",
            with(&|r| r.fixed[6] = 4),
            field("filter type"),
        ),
        // Base hash 0 (opaque, 3.1) has no seed field: the seed byte 0 is read as m.
        ("opaque_with_seed", with(&|r| r.fixed[7] = 0), field("m")),
        (
            "opaque_index_scheme_1",
            with(&|r| {
                r.fixed[7] = 0;
                r.fixed[8] = 1;
                r.seed.clear();
            }),
            field("index scheme"),
        ),
        (
            "opaque_partitioned",
            with(&|r| {
                r.fixed[6] = 1;
                r.fixed[7] = 0;
                r.seed.clear();
            }),
            field("base hash"),
        ),
        (
            "opaque_counting",
            with(&|r| {
                r.fixed[6] = 3;
                r.fixed[7] = 0;
                r.seed.clear();
            }),
            field("base hash"),
        ),
        // Flags bit 3 with an empty metadata field: not canonical (2.6).
        (
            "metadata_empty",
            with(&|r| {
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
                    let mut r = base.clone();
                    r.fixed[10] = 0x08;
                    r.sequence.extend(varint(4097));
                    r
                },
                11 + 1 + 1 + 3 + 1 + 1 + 2,
            ),
            limit("metadata length"),
        ),
        ("hash_id_3", with(&|r| r.fixed[7] = 3), field("base hash")),
        (
            "index_scheme_2",
            with(&|r| r.fixed[8] = 2),
            field("index scheme"),
        ),
        ("coding_4", with(&|r| r.fixed[9] = 4), field("coding")),
        // Coding 8 was withdrawn before 1.0 (spec 4.0): its id is defined by no revision,
        // here on a well-formed coding-10 payload.
        (
            "coding_8_withdrawn",
            coded_with(Coding::Wide, &|r| r.fixed[9] = 8),
            field("coding"),
        ),
        // Codings 9 to 11 carry the measured fraction of zeros as q0 (4.4): a neighbour of
        // it whose model codes the array to the very same payload (their tables quantize
        // q0 coarsely) is refused.
        (
            "q0_not_measured_wide",
            q0_neighbour(&small, Coding::Wide),
            plain("CorruptPayload"),
        ),
        (
            "q0_not_measured_small",
            q0_neighbour(&small, Coding::Small),
            plain("CorruptPayload"),
        ),
        (
            "q0_not_measured_escape",
            q0_neighbour(&small, Coding::Escape),
            plain("CorruptPayload"),
        ),
        ("coding_255", with(&|r| r.fixed[9] = 255), field("coding")),
        ("flags_set", with(&|r| r.fixed[10] = 0x80), field("flags")),
        ("m_zero", with(&|r| r.varints[0] = varint(0)), field("m")),
        (
            "m_above_2_48",
            with(&|r| r.varints[0] = varint((1 << 48) + 1)),
            field("m"),
        ),
        (
            "m_over_default_limit",
            with(&|r| r.varints[0] = varint(1 << 40)),
            limit("m"),
        ),
        (
            "m_overlong_varint",
            with(&|r| r.varints[0] = vec![0x90, 0x00]),
            plain("BadVarint"),
        ),
        (
            "m_varint_eleven_bytes",
            with(&|r| r.varints[0] = vec![0x80; 11]),
            plain("BadVarint"),
        ),
        (
            "m_varint_above_2_64",
            with(&|r| {
                r.varints[0] = vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]
            }),
            plain("BadVarint"),
        ),
        ("k_zero", with(&|r| r.varints[1] = varint(0)), field("k")),
        (
            "k_below_one",
            with(&|r| r.varints[1] = varint(65535)),
            field("k"),
        ),
        (
            "k_above_1024",
            with(&|r| r.varints[1] = varint((1024 << 16) + 1)),
            field("k"),
        ),
        (
            "k_over_default_limit",
            with(&|r| r.varints[1] = varint(65 << 16)),
            limit("k"),
        ),
        (
            "partitioned_m_below_k",
            with(&|r| {
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
            with(&|r| {
                r.fixed[6] = 2;
                r.varints = vec![varint(16), varint(0), varint(1)];
            }),
            field("k"),
        ),
        (
            "blocks_k_sum_above_1024",
            with(&|r| {
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
                let mut r = coded(Coding::KnownP);
                r.q0 = vec![0, 0];
                r.into()
            },
            field("q0"),
        ),
        (
            "raw_length_mismatch",
            with(&|r| r.len = varint(3)),
            field("payload length"),
        ),
        (
            "ans_length_not_multiple_of_4",
            coded_with(Coding::KnownPSymbols, &|r| {
                r.payload.push(1);
            }),
            field("payload length"),
        ),
        (
            "range_trailing_zero_byte",
            coded_with(Coding::Adaptive, &|r| {
                r.payload.push(0);
            }),
            plain("CorruptPayload"),
        ),
        (
            "payload_over_default_limit",
            {
                let mut r = coded(Coding::Adaptive);
                r.len = varint(1 << 40);
                r.into()
            },
            limit("payload length"),
        ),
        (
            "truncated_header",
            Truncated(base.clone(), 14),
            plain("Incomplete"),
        ),
        // The payload length's limit is checked before its value (section 2.3): 2^40 is
        // also the wrong length for a raw payload of 16 bits.
        (
            "raw_payload_over_default_limit",
            with(&|r| r.len = varint(1 << 40)),
            limit("payload length"),
        ),
        // Cut 3 bytes into the SipHash key's k0: the key is two fields (section 2.3), so
        // 5 more bytes (the rest of k0), not 13 (the rest of the key).
        (
            "truncated_in_siphash_k0",
            {
                let mut r = base.clone();
                r.fixed[7] = 2;
                r.seed = (0u8..16).collect();
                Truncated(r, 14)
            },
            json!({"error": "Incomplete", "needed": 5}),
        ),
        (
            "truncated_payload",
            Truncated(base.clone(), 19),
            plain("Incomplete"),
        ),
        (
            "checksum_mismatch",
            with(&|r| r.crc = Some(0x1234_5678)),
            plain("ChecksumMismatch"),
        ),
        (
            "trailing_bytes",
            with(&|r| r.trailing = vec![0]),
            plain("TrailingBytes"),
        ),
        (
            "raw_padding_bit_set",
            with(&|r| r.varints[0] = varint(15)),
            plain("CorruptPayload"),
        ),
        (
            "range_byte_after_termination",
            coded_with(Coding::KnownP, &|r| {
                r.payload.push(1);
            }),
            plain("CorruptPayload"),
        ),
        (
            "range_point_outside_interval",
            {
                let mut r = coded(Coding::KnownP);
                r.payload = vec![0xff; 8];
                r.len = varint(8);
                r.q0 = 1u16.to_le_bytes().to_vec();
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "ans_last_word_zero",
            coded_with(Coding::KnownPSymbols, &|r| {
                r.payload.extend_from_slice(&[0, 0, 0, 0]);
            }),
            plain("CorruptPayload"),
        ),
        (
            "ans_data_left",
            coded_with(Coding::KnownPSymbols, &|r| {
                r.payload.splice(0..0, [7, 0, 0, 0]);
            }),
            plain("CorruptPayload"),
        ),
    ];
    // Coding 6 (section 4.9): each check of the decoder, on the small filter's payload.
    let interleaved = [
        (
            "interleaved_length_not_multiple_of_4",
            coded_with(Coding::KnownPInterleaved, &|r| {
                r.payload.push(1);
            }),
            field("payload length"),
        ),
        (
            "interleaved_shorter_than_states",
            coded_with(Coding::KnownPInterleaved, &|r| {
                r.payload.truncate(28);
            }),
            field("payload length"),
        ),
        (
            "interleaved_state_below_2_31",
            coded_with(Coding::KnownPInterleaved, &|r| {
                r.payload[8..16].copy_from_slice(&0x7FFF_FFFFu64.to_le_bytes());
            }),
            plain("CorruptPayload"),
        ),
        (
            "interleaved_state_at_2_63",
            coded_with(Coding::KnownPInterleaved, &|r| {
                r.payload[24..32].copy_from_slice(&(1u64 << 63).to_le_bytes());
            }),
            plain("CorruptPayload"),
        ),
        (
            "interleaved_word_left",
            coded_with(Coding::KnownPInterleaved, &|r| {
                r.payload.extend_from_slice(&[1, 0, 0, 0]);
            }),
            plain("CorruptPayload"),
        ),
        (
            "interleaved_ends_early",
            {
                // The small filter's payload is only its states; this one has words after.
                let mut f = BloomFilter::new(
                    Params::standard(1000, 3, xxh(0, IndexScheme::DoubleHashing)).expect("valid"),
                );
                (0..100).for_each(|i| f.insert(key(i)));
                let mut r = RawFrame::from_frame(&f, Coding::KnownPInterleaved);
                assert!(r.payload.len() > 36);
                r.payload.truncate(r.payload.len() - 4);
                r.len = varint(r.payload.len() as u64);
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "interleaved_final_state_off",
            coded_with(Coding::KnownPInterleaved, &|r| {
                r.payload[1] ^= 1;
            }),
            plain("CorruptPayload"),
        ),
    ];
    cases.extend(interleaved);
    // A filter of 102 bits whose payload, in a nibble coding (9 or 10), codes 104 with bit
    // 103 set: the last nibble's bits past m.
    let bit_past_m = |coding: BitCoding| -> Truncated {
        let xh = xxh(0, IndexScheme::DoubleHashing);
        let mut f = BloomFilter::new(Params::standard(102, 2, xh).expect("valid"));
        (0..10).for_each(|i| f.insert(key(i)));
        let mut r = RawFrame::from_frame(&f, Coding::from(coding));
        let q0 = u16::from_le_bytes([r.q0[0], r.q0[1]]);
        let mut bits = BitArray::new(104);
        (0..102)
            .filter(|&i| f.bits().get(i))
            .for_each(|i| bits.set(i));
        bits.set(103);
        let params = Params::standard(104, 2, xh).expect("valid");
        let g = BloomFilter::from_parts(params, bits, 10).expect("valid");
        r.payload = payload_with_q0(Coding::from(coding), g.bits(), q0);
        r.len = varint(r.payload.len() as u64);
        r.into()
    };
    // Coding 10 (section 4.14): each check of the decoder. The small filter's 25 nibbles
    // are one round, which the first half's states carry; the second half is empty.
    let wider = || {
        let mut f = BloomFilter::new(
            Params::standard(4000, 3, xxh(0, IndexScheme::DoubleHashing)).expect("valid"),
        );
        (0..400).for_each(|i| f.insert(key(i)));
        let r = RawFrame::from_frame(&f, Coding::Wide);
        assert!(r.payload.len() > 300, "words after the states");
        r
    };
    let wide = [
        (
            "wide_length_odd",
            coded_with(Coding::Wide, &|r| {
                r.payload.push(1);
            }),
            field("payload length"),
        ),
        (
            "wide_shorter_than_states",
            coded_with(Coding::Wide, &|r| {
                r.payload.truncate(254);
            }),
            field("payload length"),
        ),
        (
            "wide_state_below_2_15",
            coded_with(Coding::Wide, &|r| {
                r.payload[136..140].copy_from_slice(&0x7FFFu32.to_le_bytes());
            }),
            plain("CorruptPayload"),
        ),
        (
            "wide_state_at_2_31",
            {
                // In a half with coded rounds (the small filter's states carry everything).
                let mut r = wider();
                r.payload[8..12].copy_from_slice(&0x8000_0000u32.to_le_bytes());
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "wide_state_holds_more",
            // The first half carries one round: its states are below 2^15 + 16.
            coded_with(Coding::Wide, &|r| {
                r.payload[0] ^= 1 << 4;
            }),
            plain("CorruptPayload"),
        ),
        (
            "wide_empty_half_state_off",
            coded_with(Coding::Wide, &|r| {
                r.payload[128] ^= 1;
            }),
            plain("CorruptPayload"),
        ),
        (
            "wide_carried_nibble_past_m",
            // Lane 7 carries nibble 28 of round 0, past the 25 nibbles of m = 100.
            coded_with(Coding::Wide, &|r| {
                r.payload[28] ^= 1;
            }),
            plain("CorruptPayload"),
        ),
        (
            "wide_word_inserted",
            {
                let mut r = wider();
                let at = r.payload.len() / 2 / 2 * 2;
                r.payload.splice(at..at, [1, 0]);
                r.len = varint(r.payload.len() as u64);
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "wide_word_left",
            {
                // m = 4096, 32 rounds: the first half's bits of a filter, the second
                // half's all zero and nearly free at q0 = 65000 (it reads no word), so that
                // a word after the first half's is left.
                let xh = xxh(0, IndexScheme::DoubleHashing);
                let mut f = BloomFilter::new(Params::standard(2048, 3, xh).expect("valid"));
                (0..300).for_each(|i| f.insert(key(i)));
                let mut bits = BitArray::new(4096);
                (0..2048)
                    .filter(|&i| f.bits().get(i))
                    .for_each(|i| bits.set(i));
                let params = Params::standard(4096, 3, xh).expect("valid");
                let g = BloomFilter::from_parts(params, bits, 300).expect("valid");
                let mut r = RawFrame::from_frame(&g, Coding::Wide);
                r.q0 = 65000u16.to_le_bytes().to_vec();
                r.payload = payload_with_q0(Coding::Wide, g.bits(), 65000);
                assert!(r.payload.len() > 256, "the first half's words");
                r.payload.extend_from_slice(&[1, 0]);
                r.len = varint(r.payload.len() as u64);
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "wide_ends_early",
            {
                let mut r = wider();
                r.payload.truncate(r.payload.len() - 2);
                r.len = varint(r.payload.len() as u64);
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "wide_bit_past_m",
            bit_past_m(BitCoding::Wide),
            plain("CorruptPayload"),
        ),
    ];
    cases.extend(wide);
    // Coding 9 (section 4.13): each check of the decoder.
    let longer = || {
        let mut f = BloomFilter::new(
            Params::standard(1000, 3, xxh(0, IndexScheme::DoubleHashing)).expect("valid"),
        );
        (0..100).for_each(|i| f.insert(key(i)));
        RawFrame::from_frame(&f, Coding::Small)
    };
    let small_cases = [
        (
            "small_shorter_than_states",
            coded_with(Coding::Small, &|r| {
                r.payload.truncate(5);
            }),
            field("payload length"),
        ),
        (
            "small_state_off",
            {
                // m = 13: four nibbles, one in each state, whose bits 4 .. 11 must be zero;
                // state 0's bit 4 set.
                let mut f = BloomFilter::new(
                    Params::standard(13, 2, xxh(0, IndexScheme::DoubleHashing)).expect("valid"),
                );
                (0..3).for_each(|i| f.insert(key(i)));
                let mut r = RawFrame::from_frame(&f, Coding::Small);
                assert_eq!(r.payload.len(), 6, "the states alone");
                r.payload[0] ^= 1 << 4;
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "small_byte_left",
            coded_with(Coding::Small, &|r| {
                r.payload.push(0);
            }),
            plain("CorruptPayload"),
        ),
        (
            "small_ends_early",
            {
                let mut r = longer();
                r.payload.truncate(r.payload.len() - 1);
                r.len = varint(r.payload.len() as u64);
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "small_padding_set",
            {
                // The stream ends inside its last byte; the byte's top bit is padding.
                let mut r = longer();
                let last = r.payload.len() - 1;
                assert!(r.payload[last] < 0x80, "padding in the last byte");
                r.payload[last] |= 0x80;
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "small_bit_past_m",
            bit_past_m(BitCoding::Small),
            plain("CorruptPayload"),
        ),
        (
            "chunked_small",
            {
                let mut r = coded(Coding::Small);
                r.fixed[10] = 1;
                r.into()
            },
            field("flags"),
        ),
    ];
    cases.extend(small_cases);
    // Coding 11 (section 4.15): each check of the decoder.
    let escaped = || {
        let mut f = BloomFilter::new(
            Params::standard(1000, 3, xxh(0, IndexScheme::DoubleHashing)).expect("valid"),
        );
        (0..100).for_each(|i| f.insert(key(i)));
        RawFrame::from_frame(&f, Coding::Escape)
    };
    // m = 13: two bytes, carried by states 0 and 1; states 2 and 3 and the secondary
    // state must be zero. The payload is the five states alone.
    let states_alone = || {
        let mut f = BloomFilter::new(
            Params::standard(13, 2, xxh(0, IndexScheme::DoubleHashing)).expect("valid"),
        );
        (0..3).for_each(|i| f.insert(key(i)));
        let r = RawFrame::from_frame(&f, Coding::Escape);
        assert_eq!(r.payload.len(), 8, "the states alone");
        r
    };
    let escape_cases = [
        (
            "escape_shorter_than_states",
            coded_with(Coding::Escape, &|r| {
                r.payload.truncate(7);
            }),
            field("payload length"),
        ),
        (
            "escape_state_holds_more",
            {
                // State 0's bit 8, above its carried byte.
                let mut r = states_alone();
                r.payload[1] ^= 1;
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "escape_idle_state_not_zero",
            {
                // State 2 carries no byte (n = 2): u[2], bits 24 .. 35, must be 0.
                let mut r = states_alone();
                r.payload[3] ^= 1;
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "escape_secondary_state_off",
            {
                // The secondary state is bits 48 .. 58.
                let mut r = states_alone();
                r.payload[6] ^= 1;
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "escape_byte_left",
            coded_with(Coding::Escape, &|r| {
                r.payload.push(0);
            }),
            plain("CorruptPayload"),
        ),
        (
            "escape_ends_early",
            {
                let mut r = escaped();
                r.payload.truncate(r.payload.len() - 1);
                r.len = varint(r.payload.len() as u64);
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "escape_padding_set",
            {
                let mut r = escaped();
                // The stream ends inside its last byte; the byte's top bit is padding.
                let last = r.payload.len() - 1;
                assert!(r.payload[last] < 0x80, "padding in the last byte");
                r.payload[last] |= 0x80;
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "escape_bit_past_m",
            bit_past_m(BitCoding::Escape),
            plain("CorruptPayload"),
        ),
        (
            "chunked_escape",
            {
                let mut r = coded(Coding::Escape);
                r.fixed[10] = 1;
                r.into()
            },
            field("flags"),
        ),
    ];
    cases.extend(escape_cases);
    // Coding 7 (section 4.11): each check of the decoder, on the small filter's positions.
    let ones: Vec<u64> = (0..100).filter(|&i| small.bits().get(i)).collect();
    let c = ones.len() as u64;
    let gaps = |positions: &[u64]| {
        let mut p = Vec::new();
        positional::encode_positions(positions, GapParams::of(100, c), &mut p);
        p
    };
    let with_positional = |payload: Vec<u8>| -> Truncated {
        let mut r = coded(Coding::Positional);
        r.len = varint(payload.len() as u64);
        r.payload = payload;
        r.into()
    };
    let valid = gaps(&ones);
    assert_eq!(valid, coded(Coding::Positional).payload);
    assert!(
        c < 127 && valid.len() > 13,
        "one-byte count, words after the state"
    );
    let mut last_at_m = ones.clone();
    *last_at_m.last_mut().expect("ones") = 100;
    let mut past_m = ones.clone();
    *past_m.last_mut().expect("ones") = 150;
    let mut one_after_last = ones.clone();
    one_after_last.pop();
    one_after_last.pop();
    one_after_last.extend([99, 100]);
    let recount = |count: u64| {
        let mut p = varint(count);
        p.extend_from_slice(&valid[1..]);
        p
    };
    let positional_cases = [
        ("positional_count_high", with_positional(recount(c + 1))),
        ("positional_count_low", with_positional(recount(c - 1))),
        ("positional_count_above_m", with_positional(recount(101))),
        ("positional_gap_past_m", with_positional(gaps(&past_m))),
        ("positional_one_at_m", with_positional(gaps(&last_at_m))),
        (
            "positional_one_beyond_m",
            with_positional(gaps(&one_after_last)),
        ),
        (
            "positional_ends_early",
            with_positional(valid[..valid.len() - 4].to_vec()),
        ),
        (
            "positional_ends_late",
            with_positional([&valid[..], &[0, 0, 0, 0]].concat()),
        ),
        (
            "positional_ragged_stream",
            with_positional([&valid[..], &[0]].concat()),
        ),
        (
            "positional_count_not_shortest",
            with_positional([&[valid[0] | 0x80, 0][..], &valid[1..]].concat()),
        ),
        ("positional_final_state_off", {
            let mut p = valid.clone();
            p[1] ^= 1;
            with_positional(p)
        }),
        (
            "positional_state_below_2_31",
            with_positional([&[1u8][..], &0x7FFF_FFFFu64.to_le_bytes()].concat()),
        ),
        ("positional_bytes_after_empty", with_positional(vec![0, 0])),
        (
            // 65 ones in an 8-byte stream: more than a bit of stream a one (work bound).
            "positional_more_ones_than_stream_bits",
            with_positional([&[65u8][..], &(1u64 << 31).to_le_bytes()].concat()),
        ),
    ];
    cases.extend(
        positional_cases
            .into_iter()
            .map(|(name, frame)| (name, frame, plain("CorruptPayload"))),
    );
    // Chunked payloads (section 4.10): the small filter (m = 100) in two chunks of 64 bits,
    // coding 6, each chunk's length a one-byte varint at the start of the payload.
    let chunked = || RawFrame::chunked(&small, Coding::KnownPInterleaved, 6);
    let chunked_with = |f: &dyn Fn(&mut RawFrame)| -> Truncated {
        let mut r = chunked();
        assert_eq!(
            r.payload[0] as usize + r.payload[1] as usize + 2,
            r.payload.len()
        );
        f(&mut r);
        r.len = varint(r.payload.len() as u64);
        r.into()
    };
    let chunking = [
        ("chunked_raw", with(&|r| r.fixed[10] = 1), field("flags")),
        (
            "flags_reserved_bit_with_chunked",
            {
                let mut r = chunked();
                r.fixed[10] = 0x81;
                r.into()
            },
            field("flags"),
        ),
        (
            "chunk_shift_below_6",
            {
                let mut r = chunked();
                *r.q0.last_mut().expect("shift") = 5;
                r.into()
            },
            field("chunk shift"),
        ),
        (
            "chunk_shift_not_below_m",
            {
                let mut r = chunked();
                *r.q0.last_mut().expect("shift") = 7; // 128 >= m = 100
                r.into()
            },
            field("chunk shift"),
        ),
        (
            // The work bound (spec 2.2): a 4-byte payload may code up to 2^12 (4 + 64) bits.
            "work_bound_adaptive_one_bit_over",
            {
                let mut r = coded(Coding::Adaptive);
                r.payload = vec![0; 4];
                r.len = varint(4);
                r.varints[0] = varint(((4 + 64) << 12) + 1);
                r.into()
            },
            field("payload length"),
        ),
        (
            "work_bound_known_p_interleaved_over",
            {
                let mut r = coded(Coding::KnownPInterleaved);
                r.varints[0] = varint(((r.payload.len() as u64 + 64) << 12) + 1);
                r.into()
            },
            field("payload length"),
        ),
        (
            "work_bound_chunked_over",
            {
                let mut r = RawFrame::chunked(&small, Coding::KnownPSymbols, 6);
                r.varints[0] = varint(((r.payload.len() as u64 + 64) << 12) + 1);
                r.q0.pop();
                r.q0.push(18);
                r.into()
            },
            field("payload length"),
        ),
        (
            "chunk_count_above_payload_length",
            {
                let mut r = RawFrame::chunked(&small, Coding::Adaptive, 6);
                r.payload = vec![0];
                r.len = varint(1);
                r.into()
            },
            field("payload length"),
        ),
        (
            // Two coding-10 chunks whose lengths still add up, the first one byte short
            // of its 256 bytes of states (2.2's rule for each chunk, 4.10).
            "chunk_length_breaks_wide_rule",
            {
                let mut r = RawFrame::chunked(&small, Coding::Wide, 6);
                let (len0, len1) = (
                    u64::from(r.payload[0] & 0x7F) | u64::from(r.payload[1]) << 7,
                    u64::from(r.payload[2] & 0x7F) | u64::from(r.payload[3]) << 7,
                );
                assert!(len0 >= 256 && len1 >= 256 && len0 < 1 << 14 && len1 < 1 << 14);
                r.payload[..2].copy_from_slice(&varint(len0 - 1));
                r.payload[2..4].copy_from_slice(&varint(len1 + 1));
                r.into()
            },
            plain("CorruptPayload"),
        ),
        (
            "chunk_lengths_short_of_payload",
            chunked_with(&|r| r.payload.push(0)),
            plain("CorruptPayload"),
        ),
        (
            "chunk_lengths_past_payload",
            chunked_with(&|r| r.payload[1] += 4),
            plain("CorruptPayload"),
        ),
        (
            "chunk_length_bad_varint",
            chunked_with(&|r| {
                // Chunk 0's length as a two-byte varint with a redundant zero group.
                let len0 = r.payload[0];
                r.payload.splice(0..1, [len0 | 0x80, 0]);
            }),
            plain("CorruptPayload"),
        ),
        (
            "chunk_not_whole_words",
            chunked_with(&|r| {
                // Chunk 0 one byte longer (33 + ...): not a coding-6 length.
                let at = 2 + r.payload[0] as usize;
                r.payload.insert(at, 0);
                r.payload[0] += 1;
            }),
            plain("CorruptPayload"),
        ),
        (
            "chunk_final_state_off",
            chunked_with(&|r| {
                // Chunk 1's states: the second byte of its first state.
                let at = 2 + r.payload[0] as usize + 1;
                r.payload[at] ^= 1;
            }),
            plain("CorruptPayload"),
        ),
    ];
    cases.extend(chunking);
    let mut manifest = serde_json::Map::new();
    let mut out = Vec::new();
    // Deltas that decode but that a receiver holding the frame named by `apply_to` must
    // refuse (section 5.2).
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
    for (name, Truncated(frame, cut), expect) in cases {
        let mut bytes = frame.bytes();
        bytes.truncate(cut);
        let file = format!("{name}.bin");
        manifest.insert(file.clone(), expect);
        out.push(VectorFile {
            path: format!("reject/{file}").into(),
            bytes,
        });
    }
    counting_reject_vectors(&mut manifest, &mut out);
    tagged_reject_vectors(&mut manifest, &mut out);
    out.push(json_file("reject/manifest.json", &Value::Object(manifest)));
    out
}

fn counting_of(params: &Params, width: u8, keys: core::ops::Range<u64>) -> CountingBloomFilter {
    let mut f = CountingBloomFilter::new(params.clone(), width).expect("valid width");
    for i in keys {
        f.insert(key(i));
    }
    f
}

fn histogram_json(counters: &[u8], width: u8) -> Value {
    let mut h = vec![0u64; 1 << width];
    for &c in counters {
        h[usize::from(c)] += 1;
    }
    json!(h)
}

/// The frame file and manifest of a counting frame. `counters` are the decoded payload's
/// counters (for a delta, the XOR), `filter` the filter the keys are queried on.
fn counting_accept_files(
    name: &str,
    frame: &Frame,
    counters: &[u8],
    filter: &CountingBloomFilter,
    members: &[u64],
    base: Option<&str>,
) -> Vec<VectorFile> {
    let width = filter.width();
    let member_keys: Vec<Value> = members
        .iter()
        .take(10)
        .map(|&i| json!({"key_hex": hex(&key(i)), "expected": true}))
        .collect();
    let other_keys: Vec<Value> = (1_000_000..1_000_020u64)
        .map(|i| json!({"key_hex": hex(&key(i)), "expected": filter.contains(key(i))}))
        .collect();
    let mut manifest = json!({
        "frame": format!("{name}.bin"),
        "params": header_json(frame),
        "counters_sha256": hex(&Sha256::digest(pack_counters(counters, width))),
        "counter_histogram": histogram_json(counters, width),
        "member_keys": member_keys,
        "other_keys": other_keys,
    });
    if let Some(base) = base {
        manifest["base_frame"] = json!(base);
        manifest["result_counters_sha256"] = json!(hex(&Sha256::digest(filter.packed())));
    }
    vec![
        VectorFile {
            path: format!("accept/{name}.bin").into(),
            bytes: frame.to_bytes().to_vec(),
        },
        json_file(&format!("accept/{name}.json"), &manifest),
    ]
}

/// The generations of the counting delta vectors: a standard filter of 2000 4-bit counters
/// with keys 0..300 as generation 7; generation 8 deletes keys 0..20 and inserts 300..320;
/// generation 9 deletes 20..40 and inserts 320..340; an unrelated generation 7 with keys
/// 1000..1300; and generation 7 with 8-bit counters.
fn counting_generations() -> [CountingBloomFilter; 5] {
    let params = Params::standard(2000, 3, xxh(0, IndexScheme::DoubleHashing)).expect("valid");
    let g7 = counting_of(&params, 4, 0..300);
    let step =
        |f: &CountingBloomFilter, out: core::ops::Range<u64>, into: core::ops::Range<u64>| {
            let mut f = f.clone();
            for i in out {
                f.remove(key(i)).expect("present");
            }
            for i in into {
                f.insert(key(i));
            }
            f
        };
    let g8 = step(&g7, 0..20, 300..320);
    let g9 = step(&g8, 20..40, 320..340);
    [
        g7,
        g8,
        g9,
        counting_of(&params, 4, 1000..1300),
        counting_of(&params, 8, 0..300),
    ]
}

fn counting_accept_vectors() -> Vec<VectorFile> {
    use IndexScheme::*;
    let mut out = Vec::new();
    let f0 = xxh(0, DoubleHashing);
    let std = |m, k| Params::standard(m, k, f0).expect("valid");
    let k25 = HashCount::from_f64(2.5).expect("valid k");
    let partitioned = Params::new(
        120,
        Layout::Partitioned {
            k: HashCount::new(3).expect("k"),
        },
        f0,
    )
    .expect("valid");
    let blocks = Params::new(
        1000,
        Layout::blocks_proportional(1000, k25).expect("valid"),
        siphash_family(EnhancedDoubleHashing),
    )
    .expect("valid");
    // A partitioned filter of 2-bit counters with keys 0..80 inserted and 0..20 deleted:
    // some counters saturated, and stay so.
    let mut saturated = counting_of(&partitioned, 2, 0..80);
    for i in 0..20 {
        saturated.remove(key(i)).expect("present");
    }
    let cases: Vec<(&str, CountingBloomFilter, Vec<u64>, Coding, PSource)> = vec![
        (
            "counting_std_w4_raw",
            counting_of(&std(300, 3), 4, 0..60),
            (0..60).collect(),
            Coding::Raw,
            PSource::Measured,
        ),
        (
            "counting_std_w4_known",
            counting_of(&std(300, 3), 4, 0..60),
            (0..60).collect(),
            Coding::KnownCounters,
            PSource::Measured,
        ),
        (
            "counting_std_w4_adaptive",
            counting_of(&std(300, 3), 4, 0..60),
            (0..60).collect(),
            Coding::AdaptiveCounters,
            PSource::Measured,
        ),
        (
            "counting_partitioned_w2_saturated_adaptive",
            saturated.clone(),
            (20..80).collect(),
            Coding::AdaptiveCounters,
            PSource::Measured,
        ),
        (
            "counting_partitioned_w2_saturated_known",
            saturated,
            (20..80).collect(),
            Coding::KnownCounters,
            PSource::Measured,
        ),
        (
            "counting_blocks_w8_theory_known",
            counting_of(&blocks, 8, 0..150),
            (0..150).collect(),
            Coding::KnownCounters,
            PSource::Theory,
        ),
        (
            "counting_w1_known",
            counting_of(&std(64, 2), 1, 0..10),
            (0..10).collect(),
            Coding::KnownCounters,
            PSource::Measured,
        ),
        (
            "counting_m1_w3_raw",
            counting_of(&std(1, 1), 3, 0..5),
            (0..5).collect(),
            Coding::Raw,
            PSource::Measured,
        ),
        (
            "counting_m1_w3_known",
            counting_of(&std(1, 1), 3, 0..5),
            (0..5).collect(),
            Coding::KnownCounters,
            PSource::Measured,
        ),
        (
            "counting_m10_known",
            counting_of(&std(10, 2), 4, 0..4),
            (0..4).collect(),
            Coding::KnownCounters,
            PSource::Measured,
        ),
        (
            "counting_empty_known",
            counting_of(&std(100, 4), 4, 0..0),
            vec![],
            Coding::KnownCounters,
            PSource::Measured,
        ),
    ];
    for (name, filter, members, coding, source) in cases {
        let frame = Encoder::new()
            .p_source(source)
            .encode_with(&filter, counter(coding))
            .expect("a counter coding");
        out.extend(counting_accept_files(
            name,
            &frame,
            filter.counters(),
            &filter,
            &members,
            None,
        ));
    }
    let [g7, g8, _, other7, wide7] = counting_generations();
    let full = |f: &CountingBloomFilter, g| {
        Encoder::new()
            .coding(CounterCoding::Known)
            .encode_generation(f, g)
            .expect("no budget")
    };
    let g7_members: Vec<u64> = (0..300).collect();
    let g8_members: Vec<u64> = (20..320).collect();
    for (name, f, g, members) in [
        ("counting_gen7_base", &g7, 7, &g7_members),
        ("counting_gen7_other_width", &wide7, 7, &g7_members),
        ("counting_gen8_full", &g8, 8, &g8_members),
    ] {
        out.extend(counting_accept_files(
            name,
            &full(f, g),
            f.counters(),
            f,
            members,
            None,
        ));
    }
    let other_members: Vec<u64> = (1000..1300).collect();
    out.extend(counting_accept_files(
        "counting_gen7_other_base",
        &full(&other7, 7),
        other7.counters(),
        &other7,
        &other_members,
        None,
    ));
    let xor = g8.xor(&g7).expect("same shape");
    for (name, coding) in [
        ("counting_delta_gen8_known", Coding::KnownCounters),
        ("counting_delta_gen8_adaptive", Coding::AdaptiveCounters),
        ("counting_delta_gen8_raw", Coding::Raw),
    ] {
        let frame = Encoder::new()
            .coding(counter(coding))
            .encode_delta(&g7, 7, &g8, 8)
            .expect("no budget");
        assert_eq!(frame.coding(), coding);
        out.extend(counting_accept_files(
            name,
            &frame,
            &xor,
            &g8,
            &g8_members,
            Some("counting_gen7_base.bin"),
        ));
    }
    out
}

/// A counting frame assembled field by field.
#[derive(Clone)]
struct CountingRaw {
    fixed: Vec<u8>,
    m: u64,
    counted: u8,
    width: u8,
    table: Vec<u8>,
    payload: Vec<u8>,
}

impl CountingRaw {
    /// A valid raw-coded counting frame: m = 3 counters of 4 bits (1, 2, 0), k = 2, n = 1.
    fn valid_raw() -> CountingRaw {
        CountingRaw {
            fixed: vec![b'B', b'L', b'W', b'R', 1, 0, 3, 1, 0, 0, 0],
            m: 3,
            counted: 0,
            width: 4,
            table: vec![],
            payload: vec![0x21, 0x00],
        }
    }

    /// The frame the encoder writes for `f` with `coding`, as fields.
    fn from_filter(f: &CountingBloomFilter, coding: Coding) -> CountingRaw {
        let frame = Encoder::new()
            .encode_with(f, counter(coding))
            .expect("a counter coding");
        let h = frame.header();
        let mut table = vec![];
        if let Some(t) = &h.counter_table {
            table = varint(t.frequencies().len() as u64);
            for &x in t.frequencies() {
                table.extend(varint(x.into()));
            }
        }
        let mut r = CountingRaw::valid_raw();
        r.fixed[9] = coding.id();
        r.m = f.params().m();
        r.width = f.width();
        r.table = table;
        r.payload = frame.payload().to_vec();
        r
    }

    fn bytes(&self) -> Vec<u8> {
        let mut b = self.fixed.clone();
        b.push(0); // seed
        b.extend(varint(self.m));
        b.push(self.counted);
        b.push(self.width);
        b.extend(varint(2 << 16)); // k = 2
        b.extend(varint(1)); // n
        b.extend(varint(0)); // generation
        b.extend_from_slice(&self.table);
        b.extend(varint(self.payload.len() as u64));
        b.extend_from_slice(&self.payload);
        let crc = crc32c::crc32c(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        b
    }
}

fn counting_reject_vectors(
    manifest: &mut serde_json::Map<String, Value>,
    out: &mut Vec<VectorFile>,
) {
    let field = |name: &str| json!({"error": "InvalidField", "field": name});
    let plain = |name: &str| json!({"error": name});
    let params = Params::standard(100, 2, xxh(0, IndexScheme::DoubleHashing)).expect("valid");
    let small = counting_of(&params, 4, 0..10);
    let known = CountingRaw::from_filter(&small, Coding::KnownCounters);
    let adaptive = CountingRaw::from_filter(&small, Coding::AdaptiveCounters);
    let edit = |base: &CountingRaw, f: &dyn Fn(&mut CountingRaw)| {
        let mut r = base.clone();
        f(&mut r);
        r.bytes()
    };
    let raw = CountingRaw::valid_raw();
    let table = |f: &[u64]| {
        let mut t = varint(f.len() as u64);
        f.iter().for_each(|&x| t.extend(varint(x)));
        t
    };
    let cases: Vec<(&str, Vec<u8>, Value)> = vec![
        (
            "counting_coding_2",
            edit(&raw, &|r| r.fixed[9] = 2),
            field("coding"),
        ),
        (
            "counting_coding_3",
            edit(&raw, &|r| r.fixed[9] = 3),
            field("coding"),
        ),
        (
            "counting_coding_6",
            edit(&raw, &|r| r.fixed[9] = 6),
            field("coding"),
        ),
        (
            "counting_coding_10",
            edit(&raw, &|r| r.fixed[9] = 10),
            field("coding"),
        ),
        (
            "counting_counted_type_3",
            edit(&raw, &|r| r.counted = 3),
            field("counted type"),
        ),
        (
            "counting_width_0",
            edit(&raw, &|r| r.width = 0),
            field("counter width"),
        ),
        (
            "counting_width_9",
            edit(&raw, &|r| r.width = 9),
            field("counter width"),
        ),
        (
            "counting_raw_length_mismatch",
            edit(&raw, &|r| r.payload.push(0)),
            field("payload length"),
        ),
        (
            "counting_raw_padding_bits_set",
            edit(&raw, &|r| r.payload[1] = 0x10),
            plain("CorruptPayload"),
        ),
        (
            "counting_table_length_zero",
            edit(&known, &|r| r.table = varint(0)),
            field("table length"),
        ),
        (
            "counting_table_longer_than_width",
            edit(&known, &|r| {
                r.width = 2;
                r.table = table(&[1 << 14, 1 << 14, 1 << 14, (1 << 14) - 1, 1]);
            }),
            field("table length"),
        ),
        (
            "counting_frequency_above_total",
            edit(&known, &|r| r.table = table(&[65537])),
            field("frequency"),
        ),
        (
            "counting_frequencies_sum_short",
            edit(&known, &|r| r.table = table(&[32768, 32767])),
            field("frequencies"),
        ),
        (
            "counting_frequencies_sum_over",
            edit(&known, &|r| r.table = table(&[32768, 32767, 2])),
            field("frequencies"),
        ),
        (
            "counting_frequencies_last_zero",
            edit(&known, &|r| r.table = table(&[32768, 32768, 0])),
            field("frequencies"),
        ),
        (
            // The work bound (spec 2.2) for counters: a table of two values, 2^18 + 1
            // counters, an empty payload.
            "counting_work_bound_known_over",
            edit(&known, &|r| {
                r.m = (64 << 12) + 1;
                r.table = table(&[65535, 1]);
                r.payload = vec![];
            }),
            field("payload length"),
        ),
        (
            "counting_work_bound_adaptive_over",
            edit(&adaptive, &|r| {
                r.m = (64 << 12) + 1;
                r.payload = vec![];
            }),
            field("payload length"),
        ),
        (
            "counting_known_trailing_zero_byte",
            edit(&known, &|r| r.payload.push(0)),
            plain("CorruptPayload"),
        ),
        (
            "counting_known_point_outside_interval",
            edit(&known, &|r| r.payload = vec![0xff; 8]),
            plain("CorruptPayload"),
        ),
        (
            "counting_adaptive_byte_after_termination",
            edit(&adaptive, &|r| r.payload.push(1)),
            plain("CorruptPayload"),
        ),
        // 2^25 + 1 counters of a byte each: one byte over the recommended limit on a decoded
        // filter's memory (2.3), which a table of one value and an empty payload would
        // otherwise fill, exempt from the work bound.
        (
            "counting_filter_bytes_over_default_limit",
            edit(&known, &|r| {
                r.m = (1 << 25) + 1;
                r.width = 8;
                r.table = table(&[65536]);
                r.payload = vec![];
            }),
            json!({"error": "LimitExceeded", "field": "filter bytes"}),
        ),
    ];
    for (name, bytes, expect) in cases {
        let file = format!("{name}.bin");
        manifest.insert(file.clone(), expect);
        out.push(VectorFile {
            path: format!("reject/{file}").into(),
            bytes,
        });
    }
    // Counting deltas that decode, refused by a receiver holding `apply_to`.
    let [g7, g8, g9, _, _] = counting_generations();
    let delta = |base: &CountingBloomFilter, b: u64, next: &CountingBloomFilter, g: u64| {
        Encoder::new()
            .coding(CounterCoding::Known)
            .encode_delta(base, b, next, g)
            .expect("no budget")
            .to_bytes()
            .to_vec()
    };
    let mut forged = delta(&g7, 7, &g8, 8);
    let digest = g8.digest().to_le_bytes();
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
            "counting_delta_applied_to_other_base",
            delta(&g7, 7, &g8, 8),
            "BaseMismatch",
            "accept/counting_gen7_other_base.bin",
        ),
        (
            "counting_delta_gap",
            delta(&g8, 8, &g9, 9),
            "GenerationGap",
            "accept/counting_gen7_base.bin",
        ),
        (
            "counting_delta_result_forged",
            forged,
            "ResultMismatch",
            "accept/counting_gen7_base.bin",
        ),
        (
            "counting_delta_applied_to_other_width",
            delta(&g7, 7, &g8, 8),
            "Incompatible",
            "accept/counting_gen7_other_width.bin",
        ),
        (
            "counting_delta_already_applied",
            delta(&g7, 7, &g8, 8),
            "StaleGeneration",
            "accept/counting_gen8_full.bin",
        ),
    ] {
        let file = format!("{name}.bin");
        manifest.insert(file.clone(), json!({"error": error, "apply_to": base}));
        out.push(VectorFile {
            path: format!("reject/{file}").into(),
            bytes,
        });
    }
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

/// The key of the authenticated vectors (section 2.5): bytes 0x00 to 0x1f.
fn vector_key() -> [u8; 32] {
    core::array::from_fn(|i| i as u8)
}

/// [`accept_files`] for a frame tagged with [`vector_key`]: the manifest gives the key.
fn tagged_accept_files(
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
fn tagged_accept_vectors() -> Vec<VectorFile> {
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
fn tagged_reject_vectors(manifest: &mut serde_json::Map<String, Value>, out: &mut Vec<VectorFile>) {
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
fn tag_at_of(frame: &Frame) -> usize {
    frame.encoded_len() - TAG_LEN - 4
}

/// The committed vectors directory, `spec/vectors/` at the repository's root.
pub fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec/vectors")
}

/// The encoder's bit coding for a vector's wire coding.
fn bit(coding: Coding) -> BitCoding {
    BitCoding::try_from(coding).expect("a bit coding")
}

/// The encoder's counter coding for a vector's wire coding.
fn counter(coding: Coding) -> CounterCoding {
    CounterCoding::try_from(coding).expect("a counter coding")
}
