//! The accept vectors of standard, partitioned and blocked filters (`spec/vectors/accept/`):
//! frames a decoder must read, with the header and the bits they carry.

pub(crate) mod counting;
mod opaque;
pub(crate) mod tagged;

use bloomwire::{
    BitArray, BitCoding, BloomFilter, Chunking, Coding, Encoder, Filter, Frame, FrameKind,
    HashCount, HashFamily, IndexScheme, Layout, PSource, Params, Tag,
};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::{bit, family_json, hex, json_file, key, siphash_family, xxh, VectorFile};
use opaque::opaque_accept_vectors;

pub(crate) struct AcceptCase {
    pub(crate) name: &'static str,
    pub(crate) params: Params,
    pub(crate) n: u64,
    pub(crate) coding: Coding,
    pub(crate) p_source: PSource,
}

pub(crate) fn accept_cases() -> Vec<AcceptCase> {
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

pub(crate) fn params_json(p: &Params) -> Value {
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
pub(crate) fn header_json(frame: &Frame) -> Value {
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

pub(crate) fn sha256_hex(bits: &BitArray) -> String {
    hex(&Sha256::digest(bits.to_bytes()))
}

/// The frame file and its manifest. `bits` are the decoded payload bits, `filter` the
/// filter the keys are queried on (for a delta: the result of applying it to `base`).
pub(crate) fn accept_files(
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

/// [`accept_files`] of a frame that carries the whole of `f` (not a delta).
pub(crate) fn filter_files(
    name: &str,
    frame: &Frame,
    f: &BloomFilter,
    members: core::ops::Range<u64>,
) -> Vec<VectorFile> {
    accept_files(name, frame, f.bits(), f, members, None)
}

/// `f` as full frame `generation` in coding 1 (known p), by `encoder`.
pub(crate) fn known_p_generation(encoder: Encoder, f: &BloomFilter, generation: u64) -> Frame {
    encoder
        .coding(BitCoding::KnownP)
        .encode_generation(f, generation)
        .expect("no budget")
}

/// `next` as the delta from generation 7 (`base`) to 8, by `encoder` in `coding`, which
/// it keeps.
pub(crate) fn delta_7_to_8<F: Filter>(
    encoder: Encoder<F>,
    coding: F::Coding,
    base: &F,
    next: &F,
) -> Frame {
    let frame = encoder
        .coding(coding)
        .encode_delta(base, 7, next, 8)
        .expect("no budget");
    assert_eq!(frame.coding(), coding.into());
    frame
}

pub(crate) fn filter_of(params: &Params, keys: core::ops::Range<u64>) -> BloomFilter {
    let mut f = BloomFilter::new(params.clone());
    for i in keys {
        f.insert(key(i));
    }
    f
}

/// The generations the delta vectors are made of: a standard filter with keys 0..400 as
/// generation 7, keys 20..420 as generation 8, keys 40..440 as generation 9, and an
/// unrelated generation 7 with keys 1000..1400.
pub(crate) fn delta_generations() -> [BloomFilter; 4] {
    let params = Params::standard(5000, 2, xxh(0, IndexScheme::DoubleHashing)).expect("valid");
    [0..400, 20..420, 40..440, 1000..1400].map(|keys| filter_of(&params, keys))
}

/// Generation 7 of a filter with the same m and keys but k = 3.
pub(crate) fn other_shape() -> BloomFilter {
    let params = Params::standard(5000, 3, xxh(0, IndexScheme::DoubleHashing)).expect("valid");
    filter_of(&params, 0..400)
}

/// Generation 7 with the same m, k and keys in another hash family: the seed 1, and
/// enhanced double hashing (whose indexes equal double hashing's for k = 2, so the bits
/// and their digest are the same: only the header tells them apart).
pub(crate) fn other_families() -> [(&'static str, BloomFilter); 2] {
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

pub(crate) fn accept_vectors() -> Vec<VectorFile> {
    let mut out = Vec::new();
    for case in accept_cases() {
        let f = filter_of(&case.params, 0..case.n);
        let frame = Encoder::new()
            .p_source(case.p_source)
            .encode_with(&f, bit(case.coding))
            .unwrap();
        out.extend(filter_files(case.name, &frame, &f, 0..case.n));
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
        out.extend(filter_files(name, &frame, &f, 0..n));
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
        out.extend(filter_files("last_bit_positional", &frame, &f, 0..0));
    }
    let [g7, g8, _, other7] = delta_generations();
    let full = |f: &BloomFilter, generation| known_p_generation(Encoder::new(), f, generation);
    out.extend(filter_files("gen7_base", &full(&g7, 7), &g7, 0..400));
    out.extend(filter_files(
        "gen7_other_base",
        &full(&other7, 7),
        &other7,
        1000..1400,
    ));
    out.extend(filter_files("gen8_full", &full(&g8, 8), &g8, 20..420));
    let k3 = other_shape();
    out.extend(filter_files("gen7_other_shape", &full(&k3, 7), &k3, 0..400));
    for (name, f) in other_families() {
        out.extend(filter_files(name, &full(&f, 7), &f, 0..400));
    }
    // A forged full frame numbered 2^64 - 1 (another filter, no restart flag), and the
    // sender's genuine full frame of generation 8 with the restart flag, which a receiver
    // holding the forgery applies (section 5.2).
    let forged = filter_of(&g7.params().clone(), 5000..5100);
    out.extend(filter_files(
        "forged_gen_max",
        &full(&forged, u64::MAX),
        &forged,
        5000..5100,
    ));
    out.extend(accept_files(
        "restart_gen8_after_forged",
        &full(&g8, 8).with_restart(true).expect("a full frame"),
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
        let frame = delta_7_to_8(Encoder::new(), bit(coding), &g7, &g8);
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
