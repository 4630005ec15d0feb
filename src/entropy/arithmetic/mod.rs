//! Codings 1, *adaptive*, and 2, *known-p* (spec §4.2 to §4.4): the bits of the array one by
//! one through the range coder ([`range_coder`](super::range_coder)), with the adaptive
//! counting model of the paper's Appendix or with a fixed zero probability `q0 / 2^16` sent
//! in the header. The arithmetic coding of Section III of *Compressed Bloom Filters*: within
//! a few bytes of `m H(p) / 8`, the slowest to decode (one coder step a bit).

use crate::entropy::codec::{
    append, per_byte_bound, BitCodec, BitDecoder, Codec, Job, CHUNK_BYTES,
};
use crate::entropy::model::{Adaptive, Counts, BIT_PRECISION};
use crate::entropy::profile::{Profile, Status};
use crate::entropy::range_coder::{RangeBitDecoder, RangeBitEncoder};
use crate::entropy::PayloadError;
use crate::filter::bits::words_for;
#[cfg(test)]
use crate::filter::bits::BitArray;

/// The table's row of coding 1.
pub(crate) const ADAPTIVE: Codec = Codec {
    id: 1,
    name: "adaptive",
    profile: Profile::Core,
    status: Status::Deprecated,
    // Deprecated (read, not written): as small as known-p, a few bits of model cost against
    // its 2 bytes of q0, at half its decoding speed (25 against 46 MB/s). Last, were it asked.
    speed_rank: |_| 80,
    has_q0: false,
    q0_measured: false,
    chunk_bytes: Some(CHUNK_BYTES),
    // Range-coded payloads end at any byte.
    well_formed: |_, _, _| true,
    work_bound: per_byte_bound,
    bits: Some(BitCodec {
        predict: predict_adaptive,
        encode: |words, len, _, out| append(out, encode_adaptive(words, len)),
        decoder: |_, _| Box::new(Bits { q0: None }),
    }),
    counters: None,
};

/// The table's row of coding 2.
pub(crate) const KNOWN_P: Codec = Codec {
    id: 2,
    name: "known-p",
    profile: Profile::Core,
    status: Status::Active,
    // The binary range coder: the smallest frames at every density, the slowest to decode
    // of the codings written (46 MB/s in the README's table).
    speed_rank: |_| 70,
    has_q0: true,
    q0_measured: false,
    chunk_bytes: Some(CHUNK_BYTES),
    well_formed: |_, _, _| true,
    work_bound: per_byte_bound,
    bits: Some(BitCodec {
        // The cross entropy alone: the coder's termination is a few bytes at most.
        predict: |counts| (counts.cross_entropy_bits() / 8.0).max(0.0).ceil() as u64,
        encode: |words, len, q0, out| append(out, encode_known_p(words, len, q0)),
        decoder: |q0, _| Box::new(Bits { q0: Some(q0) }),
    }),
    counters: None,
};

/// Laplace's estimator: `log2(len + 1) + log2(len choose ones)` bits.
fn predict_adaptive(counts: &Counts) -> u64 {
    let (len, ones) = (counts.len, counts.ones);
    let ones_f = ones as f64;
    let p = ones_f / len as f64;
    let mut b = len as f64 * crate::theory::entropy(p) + (len as f64 + 1.0).log2();
    if ones > 0 && ones < len {
        b -= 0.5 * (2.0 * std::f64::consts::PI * len as f64 * p * (1.0 - p)).log2();
    }
    (b / 8.0).max(0.0).ceil() as u64
}

/// The decoder of both: with the known probability, or adaptive.
struct Bits {
    q0: Option<u16>,
}

impl BitDecoder for Bits {
    fn decode(&self, job: Job<'_>) -> Result<(), PayloadError> {
        match self.q0 {
            Some(q0) => decode_known_p_into(job.payload, job.len, q0, job.out),
            None => decode_adaptive_into(job.payload, job.len, job.out),
        }
    }
}

/// Range-code the first `m` bits of `words`, each with the probability `q0_of` gives before
/// it is coded (`update` is told every coded bit, for adaptive models).
fn range_encode(
    words: &[u64],
    m: u64,
    mut q0_of: impl FnMut() -> u32,
    mut update: impl FnMut(bool),
) -> Vec<u8> {
    let mut enc = RangeBitEncoder::with_capacity(m);
    for (wi, &word) in words[..words_for(m)].iter().enumerate() {
        let count = (m - wi as u64 * 64).min(64);
        for j in 0..count {
            let bit = (word >> j) & 1 == 1;
            enc.encode(bit, q0_of());
            update(bit);
        }
    }
    enc.finish()
}

/// Encode with a fixed zero probability `q0 / 2^16`.
pub(crate) fn encode_known_p(words: &[u64], m: u64, q0: u16) -> Vec<u8> {
    let q0 = u32::from(q0);
    range_encode(words, m, || q0, |_| {})
}

/// Encode with the adaptive counting model.
pub(crate) fn encode_adaptive(words: &[u64], m: u64) -> Vec<u8> {
    let model = core::cell::Cell::new(Adaptive::default());
    range_encode(
        words,
        m,
        || model.get().q0(),
        |b| {
            let mut a = model.get();
            a.update(b);
            model.set(a);
        },
    )
}

/// Decode `m` bits into `words` (`ceil(m / 64)` of them, every one overwritten), each with
/// the probability `q0_of` gives before it is decoded (`update` is told every bit).
fn range_decode(
    payload: &[u8],
    m: u64,
    words: &mut [u64],
    mut q0_of: impl FnMut() -> u32,
    mut update: impl FnMut(bool),
) -> Result<(), PayloadError> {
    let mut dec = RangeBitDecoder::new(payload);
    for (wi, word) in words.iter_mut().enumerate() {
        let count = (m - wi as u64 * 64).min(64);
        let mut w = 0u64;
        for j in 0..count {
            let bit = dec.decode(q0_of())?;
            update(bit);
            w |= u64::from(bit) << j;
        }
        *word = w;
    }
    dec.finish()
}

/// Decode `m` bits coded with a fixed zero probability into `words` (`ceil(m / 64)` of
/// them, every one overwritten).
fn decode_known_p_into(
    payload: &[u8],
    m: u64,
    q0: u16,
    words: &mut [u64],
) -> Result<(), PayloadError> {
    let q0 = u32::from(q0);
    range_decode(payload, m, words, || q0, |_| {})
}

/// Decode `m` bits coded with the adaptive model.
///
/// The first 65 534 bits use [`Adaptive`] as it is; after them `C0 + C1` is past `2^16` and
/// the model is just its quotient and remainder, updated as [`Adaptive::update`] does with
/// the total taken from the bit count, in registers: the counts need not be kept.
fn decode_adaptive_into(payload: &[u8], m: u64, words: &mut [u64]) -> Result<(), PayloadError> {
    let mut dec = RangeBitDecoder::new(payload);
    words.fill(0);
    let mut model = Adaptive::default();
    let first = m.min((1 << BIT_PRECISION) - 2);
    for i in 0..first {
        let bit = dec.decode(model.q0())?;
        model.update(bit);
        words[(i / 64) as usize] |= u64::from(bit) << (i % 64);
    }
    let (mut q, mut r) = model.quotient_remainder();
    let mut i = first;
    let mut acc = words.get((i / 64) as usize).copied().unwrap_or(0);
    // Both successors of the model are computed while the bit is decoded and the right one
    // is picked without a branch: the update is off the critical path.
    let next = |q: u64, r: u64, total: u64, zero: u64| {
        let r1 = r + (zero << BIT_PRECISION);
        let down = u64::from(r1 < q);
        let r2 = r1 + (down.wrapping_neg() & total) - q;
        let up = u64::from(r2 >= total);
        (q + up - down, r2 - (up.wrapping_neg() & total))
    };
    while i < m {
        let total = i + 3; // C0 + C1 after this bit
        let (q_if0, r_if0) = next(q, r, total, 1);
        let (q_if1, r_if1) = next(q, r, total, 0);
        let bit = dec.decode((q as u32).max(1))?;
        let mask = u64::from(bit).wrapping_neg();
        q = (q_if0 & !mask) | (q_if1 & mask);
        r = (r_if0 & !mask) | (r_if1 & mask);
        acc |= u64::from(bit) << (i % 64);
        i += 1;
        if i.is_multiple_of(64) {
            words[(i / 64 - 1) as usize] = acc;
            acc = 0;
        }
    }
    if !i.is_multiple_of(64) {
        words[(i / 64) as usize] = acc;
    }
    dec.finish()
}

/// [`decode_known_p_into`] into a new array (for the tests).
#[cfg(test)]
pub(crate) fn decode_known_p(payload: &[u8], m: u64, q0: u16) -> Result<BitArray, PayloadError> {
    let mut words = vec![0u64; crate::filter::bits::words_for(m)];
    decode_known_p_into(payload, m, q0, &mut words)?;
    Ok(BitArray::from_words(words, m).expect("only m bits were set"))
}

/// [`decode_adaptive_into`] into a new array (for the tests).
#[cfg(test)]
pub(crate) fn decode_adaptive(payload: &[u8], m: u64) -> Result<BitArray, PayloadError> {
    let mut words = vec![0u64; crate::filter::bits::words_for(m)];
    decode_adaptive_into(payload, m, &mut words)?;
    Ok(BitArray::from_words(words, m).expect("only m bits were set"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entropy::symbols::{decode_symbols, encode_symbols_constriction as encode_symbols};
    use crate::entropy::testing::pseudo_random_bits;

    #[test]
    fn adaptive_decoder_agrees_with_the_model_past_2_16_bits() {
        for (m, density) in [(65_533, 100), (65_534, 900), (65_600, 3), (200_000, 100)] {
            let bits = pseudo_random_bits(m, density, m);
            let p = encode_adaptive(bits.words(), m);
            assert_eq!(decode_adaptive(&p, m).unwrap(), bits, "m={m}");
            // The generic decoder with the model as it is.
            let model = core::cell::Cell::new(Adaptive::default());
            let mut generic = vec![0u64; words_for(m)];
            range_decode(
                &p,
                m,
                &mut generic,
                || model.get().q0(),
                |b| {
                    let mut a = model.get();
                    a.update(b);
                    model.set(a);
                },
            )
            .unwrap();
            assert_eq!(generic, bits.words());
            let mut flipped = p.clone();
            let at = flipped.len() / 2;
            flipped[at] ^= 4;
            assert!(decode_adaptive(&flipped, m).map_or(true, |b| b != bits));
        }
    }

    #[test]
    fn round_trips_at_every_small_length() {
        for m in 1..200 {
            for density in [0, 5, 200, 512, 1024] {
                let bits = pseudo_random_bits(m, density, m);
                let q0 = crate::entropy::model::KnownP::measured(bits.count_zeros(), m);
                let p = encode_known_p(bits.words(), m, q0);
                assert_eq!(decode_known_p(&p, m, q0).unwrap(), bits, "known-p m={m}");
                let p = encode_adaptive(bits.words(), m);
                assert_eq!(decode_adaptive(&p, m).unwrap(), bits, "adaptive m={m}");
                let p = encode_symbols(&bits, q0);
                assert_eq!(decode_symbols(&p, m, q0).unwrap(), bits, "symbols m={m}");
            }
        }
    }

    #[test]
    fn every_bit_array_has_one_payload() {
        type Decode = fn(&[u8], u64, u16) -> Result<BitArray, PayloadError>;
        let adaptive: Decode = |p, m, _| decode_adaptive(p, m);
        for seed in 0..20 {
            let m = 300 + seed * 37;
            let bits = pseudo_random_bits(m, 30 + seed * 40, seed);
            let q0 = crate::entropy::model::KnownP::measured(bits.count_zeros(), m);
            let cases: [(Vec<u8>, Decode); 3] = [
                (encode_known_p(bits.words(), m, q0), decode_known_p),
                (encode_adaptive(bits.words(), m), adaptive),
                (encode_symbols(&bits, q0), decode_symbols),
            ];
            for (payload, decode) in cases {
                assert_eq!(decode(&payload, m, q0).unwrap(), bits);
                // Any other payload of nearby length that decodes gives other bits.
                for v in crate::entropy::testing::nearby_payloads(&payload) {
                    if let Ok(other) = decode(&v, m, q0) {
                        assert_ne!(
                            other, bits,
                            "seed {seed}: a second payload for the same bits"
                        );
                    }
                }
            }
        }
    }
}
