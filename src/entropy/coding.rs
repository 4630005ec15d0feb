//! A payload of any coding: the one place where a coding id meets its coder.
//!
//! [`Coding`] names the coders by their wire ids; the functions here encode and decode one
//! payload (a whole filter, or one chunk of it for [`chunks`](super::chunks)) with the coder
//! of a coding, and check a payload's length against what its coder can write.

use crate::entropy::counters::{self, packed_len, CounterTable};
use crate::entropy::{
    dense, interleaved as rans, positional, range_coder as range, small as tans, symbols,
    PayloadError,
};
use crate::error::Result;
use crate::filter::bits::BitArray;

/// How the bit array is coded in the payload. The wire id is the discriminant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Coding {
    /// The packed bit array, `ceil(m / 8)` bytes.
    Raw = 0,
    /// Range-coded bits with the adaptive counting model (no parameters).
    Adaptive = 1,
    /// Range-coded bits with a known zero probability `q0 / 2^16` sent in the header.
    KnownP = 2,
    /// ANS-coded bytes with the 256-symbol model built from `q0` (faster to decode).
    KnownPSymbols = 3,
    /// Counting filters: range-coded counters with a known frequency table sent in the
    /// header ([`CounterTable`]).
    KnownCounters = 4,
    /// Counting filters: range-coded counters with the adaptive model
    /// ([`AdaptiveCounters`](crate::entropy::counters::AdaptiveCounters)).
    AdaptiveCounters = 5,
    /// The model of [`Coding::KnownPSymbols`] coded by four interleaved rANS states with
    /// table-driven decoding: the fastest compressed coding, 32 bytes of final states larger.
    KnownPInterleaved = 6,
    /// The positions of the one bits, as gaps: a rANS-coded quotient and raw remainder bits
    /// with parameters derived from the count of ones (spec 4.11). Decodes in time proportional to the ones
    /// plus writing the array: the coding for sparse filters and deltas.
    Positional = 7,
    /// The bits as nibbles with a binomial model at precision 13, coded by 32 interleaved
    /// 32-bit rANS states decoded through a 16-bucket alias table (spec 4.12): the fastest
    /// coding of large dense filters (p0 from 0.5 to 0.95), 128 bytes of final states.
    Dense = 8,
    /// The bits as nibbles with a binomial model at precision 12, coded by four interleaved
    /// tANS states over one bit stream (spec 4.13): the fastest coding of small dense
    /// arrays, a few bytes of final states.
    Small = 9,
}

impl Coding {
    /// Every coding of a Bloom filter's bit array (filter types 0 to 2), in id order.
    #[doc(hidden)]
    pub const ALL: [Coding; 8] = [
        Coding::Raw,
        Coding::Adaptive,
        Coding::KnownP,
        Coding::KnownPSymbols,
        Coding::KnownPInterleaved,
        Coding::Positional,
        Coding::Dense,
        Coding::Small,
    ];

    /// Every coding of a counting filter's counters (filter type 3), in id order; raw means
    /// the packed counters.
    #[doc(hidden)]
    pub const COUNTERS: [Coding; 3] =
        [Coding::Raw, Coding::KnownCounters, Coding::AdaptiveCounters];

    /// The coding with a wire id.
    pub fn from_id(id: u8) -> Option<Coding> {
        Coding::ALL
            .into_iter()
            .chain(Coding::COUNTERS)
            .find(|c| c.id() == id)
    }

    /// The wire id.
    pub fn id(self) -> u8 {
        self as u8
    }

    /// Whether the header carries a quantized zero probability for this coding.
    #[doc(hidden)]
    pub fn has_q0(self) -> bool {
        matches!(
            self,
            Coding::KnownP
                | Coding::KnownPSymbols
                | Coding::KnownPInterleaved
                | Coding::Dense
                | Coding::Small
        )
    }
}

impl core::fmt::Display for Coding {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Coding::Raw => "raw",
            Coding::Adaptive => "adaptive",
            Coding::KnownP => "known-p",
            Coding::KnownPSymbols => "known-p-symbols",
            Coding::KnownCounters => "known-counters",
            Coding::AdaptiveCounters => "adaptive-counters",
            Coding::KnownPInterleaved => "known-p-interleaved",
            Coding::Positional => "positional",
            Coding::Dense => "dense",
            Coding::Small => "small",
        })
    }
}

/// Whether `payload_len` bytes can be an unchunked payload of `m` bits (or `m` counters of
/// `counter_width` bits) in `coding`.
pub(crate) fn well_formed_len(
    coding: Coding,
    m: u64,
    counter_width: Option<u8>,
    payload_len: u64,
) -> bool {
    match coding {
        Coding::Raw => match counter_width {
            Some(width) => payload_len == packed_len(m, width),
            None => payload_len == m.div_ceil(8),
        },
        // ANS payloads are whole words (an ANS coder ending in state 0 writes none).
        Coding::KnownPSymbols => payload_len.is_multiple_of(4),
        // Four 64-bit final states, then whole words.
        Coding::KnownPInterleaved => {
            payload_len.is_multiple_of(4) && payload_len >= rans::STATE_BYTES as u64
        }
        // 32 32-bit final states, then whole 16-bit words.
        Coding::Dense => payload_len.is_multiple_of(2) && payload_len >= dense::STATE_BYTES as u64,
        // Four 12-bit states, then a stream of bits.
        Coding::Small => payload_len >= tans::MIN_LEN as u64,
        // The count of ones, at least one byte.
        Coding::Positional => payload_len >= 1,
        // Range-coded payloads end at any byte.
        Coding::Adaptive | Coding::KnownP | Coding::KnownCounters | Coding::AdaptiveCounters => {
            true
        }
    }
}

/// Code the bit array `bits` with `coding` (and `q0`, for the codings that have one),
/// appending the payload to `out`. Counter codings do not apply to bit arrays: the encoder
/// refuses them, and writes the raw bits where it is asked for one.
pub(crate) fn encode_bits(coding: Coding, q0: Option<u16>, bits: &BitArray, out: &mut Vec<u8>) {
    let q0 = q0.unwrap_or(1);
    let payload = match coding {
        Coding::Raw | Coding::KnownCounters | Coding::AdaptiveCounters => bits.to_bytes(),
        Coding::Adaptive => range::encode_adaptive(bits),
        Coding::KnownP => range::encode_known_p(bits, q0),
        Coding::KnownPSymbols => return symbols::encode_symbols(bits, q0, out),
        Coding::KnownPInterleaved => {
            return rans::encode_interleaved(bits.words(), bits.len(), q0, out)
        }
        Coding::Positional => return positional::encode(bits.words(), bits.len(), out),
        Coding::Dense => return dense::encode_dense(bits.words(), bits.len(), q0, out),
        Coding::Small => return tans::encode(bits.words(), bits.len(), q0, out),
    };
    // The usual case, a whole filter into an empty payload, takes the vector without a copy.
    if out.is_empty() {
        *out = payload;
    } else {
        out.extend_from_slice(&payload);
    }
}

/// [`encode_bits`] for `len` bits held in `words` (a chunk of a larger array).
pub(crate) fn encode_words(
    coding: Coding,
    q0: Option<u16>,
    words: &[u64],
    len: u64,
    out: &mut Vec<u8>,
) {
    if coding == Coding::KnownPInterleaved {
        // Codes the words in place, without a copy.
        return rans::encode_interleaved(words, len, q0.unwrap_or(1), out);
    }
    if coding == Coding::Positional {
        return positional::encode(words, len, out);
    }
    if coding == Coding::Dense {
        return dense::encode_dense(words, len, q0.unwrap_or(1), out);
    }
    let bits = BitArray::from_words(words.to_vec(), len).expect("bits past len are zero");
    encode_bits(coding, q0, &bits, out);
}

/// Code `m` counters of `width` bits with a counter coding (`table` for
/// [`Coding::KnownCounters`]); raw means the packed counters.
pub(crate) fn encode_counters(
    coding: Coding,
    values: &[u8],
    width: u8,
    table: Option<&CounterTable>,
) -> Result<Vec<u8>> {
    Ok(match coding {
        Coding::KnownCounters => counters::encode_known(values, table.expect("a table"))?,
        Coding::AdaptiveCounters => counters::encode_adaptive(values, width),
        _ => counters::pack_counters(values, width),
    })
}

/// Decode the `m` counters of `width` bits of a payload in `coding` (`table` from the
/// header for [`Coding::KnownCounters`]).
pub(crate) fn decode_counters(
    coding: Coding,
    payload: &[u8],
    m: u64,
    width: u8,
    table: Option<&CounterTable>,
) -> Result<Vec<u8>, PayloadError> {
    match coding {
        Coding::KnownCounters => counters::decode_known(payload, m, table.expect("parsed")),
        Coding::AdaptiveCounters => counters::decode_adaptive(payload, m, width),
        _ => counters::unpack_counters(payload, m, width),
    }
}

/// The decoding model of one chunk length (its `len mod 8` matters, nothing else).
enum Model {
    /// Codings without tables to build.
    Plain,
    Interleaved(rans::DecModel),
    Dense(dense::DecModel),
    Small(tans::DecModel),
    Symbols(rans::DecModel),
}

/// Decoding models for the chunks of a frame, built once and shared by all chunks (and
/// threads): chunks differ at most in their last one's `len mod 8`. A peer's frame of many
/// small chunks therefore costs no more model building than one chunk.
pub(crate) struct Models {
    coding: Coding,
    q0: u16,
    /// `(len mod 8, model)`, at most two entries.
    by_tail: Vec<(u64, Model)>,
}

impl Models {
    /// The models for chunks of the lengths `lens` (any number, few distinct `len mod 8`).
    pub(crate) fn new(coding: Coding, q0: Option<u16>, lens: &[u64]) -> Self {
        let q0 = q0.unwrap_or(1);
        let mut by_tail: Vec<(u64, Model)> = Vec::new();
        for &len in lens {
            if by_tail.iter().any(|(r, _)| *r == len % 8) {
                continue;
            }
            let model = match coding {
                Coding::KnownPInterleaved => Model::Interleaved(rans::DecModel::new(q0, len)),
                Coding::Dense => Model::Dense(dense::DecModel::new(q0)),
                Coding::Small => Model::Small(tans::DecModel::new(q0)),
                Coding::KnownPSymbols => Model::Symbols(rans::DecModel::new(q0, len)),
                // (Counting frames never get here: `FrameView` decodes bit arrays only.)
                Coding::Raw
                | Coding::Positional
                | Coding::Adaptive
                | Coding::KnownP
                | Coding::KnownCounters
                | Coding::AdaptiveCounters => Model::Plain,
            };
            by_tail.push((len % 8, model));
        }
        Models {
            coding,
            q0,
            by_tail,
        }
    }

    fn get(&self, len: u64) -> &Model {
        &self
            .by_tail
            .iter()
            .find(|(r, _)| *r == len % 8)
            .expect("models built for every chunk length")
            .1
    }
}

/// Decode a payload of `len` bits into `out` (`ceil(len / 64)` words, all overwritten),
/// with the frame's models (built for a chunk of this `len mod 8`).
pub(crate) fn decode_bits(
    models: &Models,
    payload: &[u8],
    len: u64,
    out: &mut [u64],
) -> Result<(), PayloadError> {
    decode_bits_over(models, payload, len, out, false)
}

/// [`decode_bits`] into an `out` the caller has just zeroed: the positional coding then
/// writes only its one bits (the frame decoder's fresh array is not zeroed twice).
pub(crate) fn decode_bits_zeroed(
    models: &Models,
    payload: &[u8],
    len: u64,
    out: &mut [u64],
) -> Result<(), PayloadError> {
    decode_bits_over(models, payload, len, out, true)
}

fn decode_bits_over(
    models: &Models,
    payload: &[u8],
    len: u64,
    out: &mut [u64],
    zeroed: bool,
) -> Result<(), PayloadError> {
    let bits = match (models.coding, models.get(len)) {
        (Coding::KnownPInterleaved, Model::Interleaved(model)) => {
            return rans::decode(payload, len, model, out)
        }
        (Coding::Dense, Model::Dense(model)) => return dense::decode(payload, len, model, out),
        (Coding::Small, Model::Small(model)) => return tans::decode(payload, len, model, out),
        (Coding::KnownPSymbols, Model::Symbols(model)) => {
            return symbols::decode_symbols_into(payload, len, model, out)
        }
        (Coding::Raw, _) => return raw_into(payload, len, out),
        (Coding::Positional, _) if zeroed => {
            return positional::decode_into_zeroed(payload, len, out)
        }
        (Coding::Positional, _) => return positional::decode_into(payload, len, out),
        (Coding::Adaptive, _) => range::decode_adaptive(payload, len)?,
        (Coding::KnownP, _) => range::decode_known_p(payload, len, models.q0)?,
        _ => unreachable!("models are built for their coding"),
    };
    out.copy_from_slice(bits.words());
    Ok(())
}

/// The checks of a raw payload of `len` bits: `ceil(len / 8)` bytes, bits past `len` zero.
pub(crate) fn check_raw(payload: &[u8], len: u64) -> Result<(), PayloadError> {
    if payload.len() as u64 != len.div_ceil(8) {
        return Err("raw payload length is not ceil(m / 8)");
    }
    if !len.is_multiple_of(8) && payload[payload.len() - 1] >> (len % 8) != 0 {
        return Err("bits past m are not zero");
    }
    Ok(())
}

/// Copy a raw payload (the packed form, `ceil(len / 8)` bytes) into words.
fn raw_into(payload: &[u8], len: u64, out: &mut [u64]) -> Result<(), PayloadError> {
    check_raw(payload, len)?;
    for (w, v) in out
        .iter_mut()
        .zip(crate::filter::bits::packed_words(payload))
    {
        *w = v;
    }
    Ok(())
}
