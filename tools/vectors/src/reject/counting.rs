//! Reject vectors of counting filters (spec sections 4.7 and 4.8): the checks of their
//! header and of codings 4 and 5, and counting deltas a receiver must refuse.

use bloomwire::{Coding, CounterCoding, CountingBloomFilter, Encoder, IndexScheme, Params};
use serde_json::{json, Value};

use super::deltas::stale_deltas;
use super::{checksum_fixed, field, plain, Rejects};
use crate::accept::counting::{counting_generations, counting_of};
use crate::raw_frame::varint;
use crate::{counter, xxh};

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
        b.extend([0; 4]);
        checksum_fixed(b)
    }
}

/// Appends the counting filters' reject files.
pub(super) fn reject_vectors(rejects: &mut Rejects) {
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
    // Codings of bits only: `counting_coding_2` and so on.
    for coding in [2, 3, 6, 10] {
        rejects.push(
            &format!("counting_coding_{coding}"),
            edit(&raw, &|r| r.fixed[9] = coding),
            field("coding"),
        );
    }
    let cases: Vec<(&str, Vec<u8>, Value)> = vec![
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
        rejects.push(name, bytes, expect);
    }
    // Counting deltas that decode, refused by a receiver holding `apply_to`.
    let [g7, g8, g9, _, _] = counting_generations();
    stale_deltas(
        rejects,
        "counting_",
        &Encoder::new().coding(CounterCoding::Known),
        [&g7, &g8, &g9],
        g8.digest(),
        &["other_width"],
    );
}
