//! Coding 0, *raw* (spec §4.1): the packed bit array, `ceil(m / 8)` bytes, or a counting
//! filter's packed counters, `ceil(m * width / 8)` bytes. Every frame may fall back to it,
//! and an encoder sends it whenever compression would not be smaller.

use crate::entropy::codec::{exempt, BitCodec, BitDecoder, Codec, CounterCodec, Job};
use crate::entropy::counter_table::CounterTable;
use crate::entropy::profile::{Profile, Status};
use crate::entropy::PayloadError;
use crate::error::Result;
use crate::filter::bits::{packed_words, write_packed};
use crate::filter::counting::{pack_counters, packed_len, unpack_counters_into};

/// The table's row of coding 0.
pub(crate) const CODEC: Codec = Codec {
    id: 0,
    name: "raw",
    profile: Profile::Core,
    status: Status::Active,
    // The fallback, never ranked: the encoder sends it when nothing predicted is smaller.
    speed_rank: |_| 0,
    has_q0: false,
    q0_measured: false,
    chunk_bytes: None,
    well_formed,
    // The length is fixed by m: decoding costs a copy of it.
    work_bound: exempt,
    bits: Some(BitCodec {
        predict: |counts| counts.len.div_ceil(8),
        encode: |words, len, _, out| write_packed(words, len, out),
        decoder: |_, _| Box::new(Raw),
    }),
    counters: Some(CounterCodec {
        encode: encode_counters,
        decode: decode_counters,
    }),
};

/// The one length a raw payload of `m` bits (or counters of `width` bits) has.
fn well_formed(m: u64, width: Option<u8>, payload_len: u64) -> bool {
    match width {
        Some(width) => payload_len == packed_len(m, width),
        None => payload_len == m.div_ceil(8),
    }
}

fn encode_counters(values: &[u8], width: u8, _: Option<&CounterTable>) -> Result<Vec<u8>> {
    Ok(pack_counters(values, width))
}

fn decode_counters(
    payload: &[u8],
    out: &mut [u8],
    width: u8,
    _: Option<&CounterTable>,
) -> core::result::Result<(), PayloadError> {
    unpack_counters_into(payload, out, width)
}

/// The checks of a raw payload of `len` bits: `ceil(len / 8)` bytes, bits past `len` zero.
pub(crate) fn check(payload: &[u8], len: u64) -> core::result::Result<(), PayloadError> {
    if payload.len() as u64 != len.div_ceil(8) {
        return Err("raw payload length is not ceil(m / 8)");
    }
    if !len.is_multiple_of(8) && payload[payload.len() - 1] >> (len % 8) != 0 {
        return Err("bits past m are not zero");
    }
    Ok(())
}

/// The decoder: a copy of the packed form into words.
struct Raw;

impl BitDecoder for Raw {
    fn decode(&self, job: Job<'_>) -> Result<(), PayloadError> {
        check(job.payload, job.len)?;
        for (w, v) in job.out.iter_mut().zip(packed_words(job.payload)) {
            *w = v;
        }
        Ok(())
    }
}
