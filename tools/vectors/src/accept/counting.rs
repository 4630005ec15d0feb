//! Accept and reject vectors of counting filters (spec section 4.7 and 4.8): counters, their
//! histogram and the checks of codings 4 and 5.

use bloomwire::filter::counting::pack_counters;
use bloomwire::{
    Coding, CounterCoding, CountingBloomFilter, Encoder, Frame, HashCount, IndexScheme, Layout,
    PSource, Params,
};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::accept::{delta_7_to_8, header_json};
use crate::{counter, hex, json_file, key, siphash_family, xxh, VectorFile};

pub(crate) fn counting_of(
    params: &Params,
    width: u8,
    keys: core::ops::Range<u64>,
) -> CountingBloomFilter {
    let mut f = CountingBloomFilter::new(params.clone(), width).expect("valid width");
    for i in keys {
        f.insert(key(i));
    }
    f
}

pub(crate) fn histogram_json(counters: &[u8], width: u8) -> Value {
    let mut h = vec![0u64; 1 << width];
    for &c in counters {
        h[usize::from(c)] += 1;
    }
    json!(h)
}

/// The frame file and manifest of a counting frame. `counters` are the decoded payload's
/// counters (for a delta, the XOR), `filter` the filter the keys are queried on.
pub(crate) fn counting_accept_files(
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
pub(crate) fn counting_generations() -> [CountingBloomFilter; 5] {
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

pub(crate) fn counting_accept_vectors() -> Vec<VectorFile> {
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
        let frame = delta_7_to_8(Encoder::new(), counter(coding), &g7, &g8);
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
