//! Accept and reject vectors of counting filters (spec section 4.7 and 4.8): counters, their
//! histogram and the checks of codings 4 and 5.

use bloomwire::filter::counting::pack_counters;
use bloomwire::{
    Coding, CounterCoding, CountingBloomFilter, Encoder, Frame, HashCount, IndexScheme, Layout,
    PSource, Params,
};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::accept::header_json;
use crate::raw_frame::varint;
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
pub(crate) struct CountingRaw {
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

pub(crate) fn counting_reject_vectors(
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
