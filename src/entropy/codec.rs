//! What the rest of the crate knows of a coding: one row of the table of codings
//! (`CODINGS` in `coding.rs`), exported by the coding's own folder.
//!
//! A row holds the coding's facts (wire id, name, whether the header sends q0, how its
//! payloads chunk), its rules (which payload lengths are well formed, the work bound of spec
//! §2.2) and its functions (size model, encoder, decoder), so that the frame layer, the
//! encoder's choice and the chunked payloads ask the table and never name a coding's coder.

use crate::entropy::counter_table::CounterTable;
use crate::entropy::model::Counts;
use crate::entropy::profile::{Profile, Status};
use crate::entropy::PayloadError;
use crate::error::Result;

/// One coding, as the table lists it.
pub(crate) struct Codec {
    /// The wire id (spec §4): the coding's row in the table.
    pub(crate) id: u8,
    /// Its name in the spec, the program and the Python package.
    pub(crate) name: &'static str,
    /// The smallest profile whose decoders implement it (spec §4.0).
    pub(crate) profile: Profile,
    /// Whether encoders write it (spec §4.0): the default encoder chooses only active ones.
    pub(crate) status: Status,
    /// Its place in the order of decoding speed for an array of these counts, lower first:
    /// the default encoder takes the first coding, in this order, whose predicted frame is
    /// within its margin of the smallest prediction (equal places by wire id). Each row says
    /// what its place was measured on, and holds its own setup cost (coding 11's tables).
    pub(crate) speed_rank: fn(&Counts) -> u8,
    /// Whether the header carries a quantized zero probability `q0` for it.
    pub(crate) has_q0: bool,
    /// Whether that q0 must be the array's measured fraction of zeros, checked by decoders
    /// (spec §4.4): codings whose models many neighbouring q0 share.
    pub(crate) q0_measured: bool,
    /// For a coding that may be chunked (spec §4.10), the coded bytes a chunk of the default
    /// chunk size should reach, so that its fixed costs stay small beside it.
    pub(crate) chunk_bytes: Option<u32>,
    /// Whether `payload_len` bytes can be an unchunked payload of `m` symbols: bits, or
    /// counters of `width` bits.
    pub(crate) well_formed: fn(m: u64, width: Option<u8>, payload_len: u64) -> bool,
    /// The work bound of spec §2.2: whether a payload of `payload_len` bytes may code `m`
    /// symbols (`table_len`: the length of a known-counters table).
    pub(crate) work_bound: fn(m: u64, table_len: Option<usize>, payload_len: u64) -> bool,
    /// Its coder of bit arrays (filter types 0 to 2), if it codes bits.
    pub(crate) bits: Option<BitCodec>,
    /// Its coder of counters (filter type 3), if it codes counters.
    pub(crate) counters: Option<CounterCodec>,
}

/// A coder of bit arrays.
pub(crate) struct BitCodec {
    /// Predicted payload bytes of `len` bits holding `ones` one bits (with `q0`, for the
    /// codings that send one; the others ignore it): the cross entropy of the bits under
    /// the coding's model plus its fixed costs. Floats; for the encoder's choice, never for
    /// decoding.
    pub(crate) predict: fn(&Counts) -> u64,
    /// Append the payload of the first `len` bits of `words` (bits past `len` zero) to `out`.
    pub(crate) encode: fn(words: &[u64], len: u64, q0: u16, out: &mut Vec<u8>),
    /// The decoder of payloads of `len` bits with `q0` (its tables built once, for every
    /// chunk of the same `len mod 8`).
    pub(crate) decoder: fn(q0: u16, len: u64) -> Box<dyn BitDecoder>,
}

/// A coding's decoder, its tables built: decodes any number of payloads (chunks) of the
/// length it was built for (the same `len mod 8`), on any thread.
pub(crate) trait BitDecoder: Send + Sync {
    /// Decode `job.payload` into `job.out`. On error `out` holds garbage.
    fn decode(&self, job: Job<'_>) -> core::result::Result<(), PayloadError>;
}

/// One payload for a [`BitDecoder`] and the words it fills.
pub(crate) struct Job<'a> {
    /// The payload's bytes.
    pub(crate) payload: &'a [u8],
    /// The bits it codes.
    pub(crate) len: u64,
    /// `ceil(len / 64)` words, all overwritten (bits past `len` zero).
    pub(crate) out: &'a mut [u64],
    /// `out` is all zeros already (a coder that writes only one bits then need not clear
    /// it).
    pub(crate) zeroed: bool,
}

impl<'a> Job<'a> {
    /// The payload, its bits and the words to fill (in debug builds, checked to be
    /// `ceil(len / 64)`).
    pub(crate) fn parts(self) -> (&'a [u8], u64, &'a mut [u64]) {
        debug_assert_eq!(self.out.len(), crate::filter::bits::words_for(self.len));
        (self.payload, self.len, self.out)
    }
}

/// The payload of `values`, counters of `width` bits (`table` for known-counters).
pub(crate) type EncodeCounters =
    fn(values: &[u8], width: u8, table: Option<&CounterTable>) -> Result<Vec<u8>>;

/// The counters of `width` bits a payload holds into `out`, one per counter, every one
/// overwritten (`table` from the header).
pub(crate) type DecodeCounters = fn(
    payload: &[u8],
    out: &mut [u8],
    width: u8,
    table: Option<&CounterTable>,
) -> core::result::Result<(), PayloadError>;

/// A coder of counters.
pub(crate) struct CounterCodec {
    /// Its encoder.
    pub(crate) encode: EncodeCounters,
    /// Its decoder.
    pub(crate) decode: DecodeCounters,
}

/// `log2` of the symbols a payload byte may code at most: the work bound of spec §2.2.
pub const WORK_SHIFT: u32 = 12;

/// Bytes added to the payload length in the work bound (spec §2.2): small filters
/// (`m <= 2^18`) meet it whatever their payload.
pub const WORK_SLACK: u64 = 64;

/// The work bound of the codings that decode symbol by symbol (spec §2.2):
/// `m <= 2^12 * (L + 64)`, so that decoding costs at most a constant per payload byte.
pub(crate) fn per_byte(m: u64, payload_len: u64) -> bool {
    m <= payload_len
        .saturating_add(WORK_SLACK)
        .saturating_mul(1 << WORK_SHIFT)
}

/// The work bound of a coding whose payload length is fixed by m (raw), or that carries a
/// bound of its own, checked before its loop (positional): none here.
pub(crate) fn exempt(_m: u64, _table_len: Option<usize>, _payload_len: u64) -> bool {
    true
}

/// [`Codec::work_bound`] of the codings bound per payload byte.
pub(crate) fn per_byte_bound(m: u64, _table_len: Option<usize>, payload_len: u64) -> bool {
    per_byte(m, payload_len)
}

/// The coded bytes a default chunk reaches (spec §4.10): 128 KiB, so that the per-chunk cost
/// (its length varint and a coder's final states, under 48 bytes) stays under 0.04% of it.
pub(crate) const CHUNK_BYTES: u32 = 128 << 10;

/// A coder's payload appended to `out`: the vector itself when `out` is empty (the usual
/// case, a whole filter), else a copy.
pub(crate) fn append(out: &mut Vec<u8>, payload: Vec<u8>) {
    if out.is_empty() {
        *out = payload;
    } else {
        out.extend_from_slice(&payload);
    }
}
