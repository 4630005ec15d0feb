//! Coding 8, *dense*: the nibbles of a bit array coded by 32 interleaved 32-bit rANS
//! states at precision 13, decoded through a 16-bucket alias table (spec §4.12).
//!
//! Coding 6 ([`rans`](super::rans)) decodes byte symbols at a few hundred MB/s: four 64-bit
//! states and a lookup with a fallback. This coding is made for decoding speed where filters
//! are dense (`p0` from 0.5 to 0.95), without giving back size:
//!
//! * The nibbles, the model, the alias table, the 32 lanes and the encoder of whole rounds
//!   are shared with coding 10 ([`nibble_rans`](super::nibble_rans)): this room lays out
//!   the payload (the 32 final states, then one stream of 16-bit words) and decodes it,
//!   with its AVX2 and AVX-512 decoders beside the scalar one (`dense::avx2`,
//!   `dense::avx512`).
//! * Over the nibble model's own entropy, the test `precision_13_costs` measures 0% at
//!   `p0 = 0.5`, 0.0002% at 0.7, 0.0006% at 0.9, 0.013% at 0.95; the rANS approximation of
//!   states at least `4 * 2^13` adds a little, and the 32 final states about 100 bytes.
//!   8 * 10^6 bits code within 0.05% + 16 bytes of `m H(p) / 8` from p0 = 0.5 to 0.95 (the
//!   test `dense_payloads_are_within_0_05_percent_and_16_bytes_of_the_entropy`).
//!
//! The last nibble of an array whose length is not a multiple of 4 is coded with the same
//! table; its bits past `m` must be zero. A payload is canonical: every state ends at
//! `2^15` (where the encoder starts) and every word is read.

use crate::entropy::codec::{per_byte_bound, BitCodec, BitDecoder, Codec, CHUNK_BYTES};
use crate::entropy::model::Counts;
use crate::entropy::nibble_rans::{
    encode_rounds, excess_bits, expected_words, nibble_of_lane, round_bits, Backwards, DecModel,
    EncModel, Kernel, LANES, LOWER, ROUND,
};
use crate::entropy::PayloadError;
#[cfg(any(test, feature = "internals"))]
use crate::entropy::{ByKernel, Decoded};

// The SIMD kernels of this coding, each behind runtime feature detection and held to the
// scalar code here by the tests and the fuzz target `kernel_twins`.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
pub(crate) mod avx2;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
pub(crate) mod avx512;

/// The table's row of coding 8.
pub(crate) const CODEC: Codec = Codec {
    id: 8,
    name: "dense",
    has_q0: true,
    // About 110 bytes a chunk go to the states: chunks twice the usual size (at least
    // 256 KiB coded) keep that under 0.05%, and a filter of 2^26 bits still in 8 chunks.
    chunk_bytes: Some(2 * CHUNK_BYTES),
    // 32 32-bit final states, then whole 16-bit words.
    well_formed: |_, _, len| len.is_multiple_of(2) && len >= STATE_BYTES as u64,
    work_bound: per_byte_bound,
    bits: Some(BitCodec {
        predict,
        encode: encode_dense,
        decoder: |q0, _| Box::new(DecModel::new(q0)),
    }),
    counters: None,
};

/// The size model: the cross entropy, the precision-13 model's excess over the bits' own
/// model per nibble, and 32 final states of which a little is message.
fn predict(counts: &Counts) -> u64 {
    (counts.cross_entropy_bits() / 8.0
        + counts.len.div_ceil(4) as f64 * excess_bits(counts) / 8.0
        + FIXED)
        .max(0.0)
        .ceil() as u64
}

/// Bytes a payload takes over its symbols' cost: the 32 final states less what they carry,
/// and the half-filled last words (measured by the test `dense_fixed_cost_is_measured`).
const FIXED: f64 = 112.0;

impl BitDecoder for DecModel {
    fn decode(
        &self,
        payload: &[u8],
        len: u64,
        out: &mut [u64],
        _zeroed: bool,
    ) -> Result<(), PayloadError> {
        decode(payload, len, self, out)
    }
}

/// Bytes of the final states at the start of every payload: the smallest payload.
pub(crate) const STATE_BYTES: usize = 4 * LANES;

/// Append the coding-8 payload of the first `m` bits of `words` to `out`, with the fastest
/// encoder this CPU has.
pub(crate) fn encode(words: &[u64], m: u64, model: &EncModel, out: &mut Vec<u8>) {
    encode_with(words, m, model, out, Kernel::fastest())
}

/// [`encode`], the whole rounds by `kernel` (which the CPU must have).
fn encode_with(words: &[u64], m: u64, model: &EncModel, out: &mut Vec<u8>, kernel: Kernel) {
    debug_assert_eq!(words.len(), crate::filter::bits::words_for(m));
    let n = m.div_ceil(4) as usize;
    let mut x = [LOWER; LANES];
    let mut buf = Backwards::new(expected_words(n, model));
    // Last to first: the last round's lanes whose nibble is past the end skipped, then the
    // whole rounds, the lanes of each in reverse order.
    let whole = n / ROUND;
    buf.reserve(ROUND);
    for r in (whole..n.div_ceil(ROUND)).rev() {
        let bits = round_bits(words, r);
        for l in (0..LANES).rev() {
            let i = nibble_of_lane(l);
            if i < n - r * ROUND {
                model.put(
                    &mut x[l],
                    (bits >> (4 * i)) as usize & 15,
                    &mut buf.buf,
                    &mut buf.at,
                );
            }
        }
    }
    encode_rounds(words, whole, model, &mut x, &mut buf, kernel);
    let payload = buf.written();
    out.reserve(STATE_BYTES + payload.len());
    for s in x {
        out.extend_from_slice(&s.to_le_bytes());
    }
    out.extend_from_slice(payload);
}

/// Code the `m` bits of `words` with coding 8.
pub(crate) fn encode_dense(words: &[u64], m: u64, q0: u16, out: &mut Vec<u8>) {
    encode(words, m, &EncModel::new(q0), out);
}

/// The states at the start of a payload, checked: `[2^15, 2^31)`.
pub(crate) fn initial_states(payload: &[u8]) -> Result<[u32; LANES], PayloadError> {
    if !payload.len().is_multiple_of(2) || payload.len() < STATE_BYTES {
        return Err("dense payload is not whole words or too short for its states");
    }
    let mut x = [0u32; LANES];
    for (j, s) in x.iter_mut().enumerate() {
        *s = u32::from_le_bytes(payload[4 * j..4 * j + 4].try_into().expect("4 bytes"));
        if !(LOWER..1 << 31).contains(s) {
            return Err("dense payload starts with a state outside [2^15, 2^31)");
        }
    }
    Ok(x)
}

/// The checks after the last symbol: every state back at `2^15`, every word read, and no
/// bit set past `m`.
pub(crate) fn final_checks(
    x: &[u32; LANES],
    pos: usize,
    payload: &[u8],
    m: u64,
    out: &[u64],
) -> Result<(), PayloadError> {
    if pos > payload.len() {
        return Err("dense payload ends before the last symbol");
    }
    if x.iter().any(|&s| s != LOWER) || pos != payload.len() {
        return Err("dense payload does not end where the encoder starts");
    }
    crate::entropy::check_past_m(out, m)
}

/// Decode whole rounds (two output words each) while 64 bytes of words are left at `*pos`:
/// a round reads at most 32 words. Returns the rounds done.
#[inline(always)]
pub(crate) fn decode_rounds_scalar(
    model: &DecModel,
    x: &mut [u32; LANES],
    payload: &[u8],
    pos: &mut usize,
    out: &mut [u64],
) -> usize {
    let mut done = 0;
    for ws in out.chunks_exact_mut(2) {
        if *pos + 2 * LANES > payload.len() {
            break;
        }
        let block: &[u8; 2 * LANES] = payload[*pos..*pos + 2 * LANES]
            .try_into()
            .expect("64 bytes");
        let mut k = 0usize;
        let mut bits = 0u128;
        for (l, lane) in x.iter_mut().enumerate() {
            let (s, y) = model.symbol(*lane);
            let at = 2 * (k & (LANES - 1));
            let word = u32::from(u16::from_le_bytes([block[at], block[at + 1]]));
            let refill = y < LOWER;
            *lane = if refill { (y << 16) | word } else { y };
            k += usize::from(refill);
            bits |= u128::from(s) << (4 * nibble_of_lane(l));
        }
        ws[0] = bits as u64;
        ws[1] = (bits >> 64) as u64;
        *pos += 2 * k;
        done += 1;
    }
    done
}

/// Decode the rounds from `from` on, one symbol at a time with bounds checks: the last
/// (partial) round, or what is left when fewer than 64 bytes remain. A read past the end
/// moves `*pos` past the payload (the final checks reject it).
pub(crate) fn decode_tail(
    model: &DecModel,
    x: &mut [u32; LANES],
    payload: &[u8],
    pos: &mut usize,
    out: &mut [u64],
    from: usize,
    n: usize,
) {
    for r in from..n.div_ceil(ROUND) {
        let here = (n - r * ROUND).min(ROUND);
        let mut bits = 0u128;
        for (l, lane) in x.iter_mut().enumerate() {
            let i = nibble_of_lane(l);
            if i >= here {
                continue;
            }
            let (s, y) = model.symbol(*lane);
            *lane = y;
            if y < LOWER {
                let word = match payload.get(*pos..*pos + 2) {
                    Some(w) => u32::from(u16::from_le_bytes([w[0], w[1]])),
                    None => 0,
                };
                *pos += 2;
                *lane = (y << 16) | word;
            }
            bits |= u128::from(s) << (4 * i);
        }
        out[2 * r] = bits as u64;
        if let Some(w) = out.get_mut(2 * r + 1) {
            *w = (bits >> 64) as u64;
        }
    }
}

/// Decode a coding-8 payload of `m` bits into `out` (exactly `ceil(m / 64)` words, every one
/// overwritten; bits past `m` are zero), with the fastest decoder this CPU has. On error
/// `out` holds garbage.
pub(crate) fn decode(
    payload: &[u8],
    m: u64,
    model: &DecModel,
    out: &mut [u64],
) -> Result<(), PayloadError> {
    decode_with(payload, m, model, out, Kernel::fastest())
}

/// [`decode`], the whole rounds by `kernel` (which the CPU must have).
fn decode_with(
    payload: &[u8],
    m: u64,
    model: &DecModel,
    out: &mut [u64],
    kernel: Kernel,
) -> Result<(), PayloadError> {
    debug_assert_eq!(out.len(), crate::filter::bits::words_for(m));
    let mut x = initial_states(payload)?;
    let mut pos = STATE_BYTES;
    let n = m.div_ceil(4) as usize;
    let rounds = n / ROUND;
    let whole = &mut out[..rounds * 2];
    let done = match kernel {
        Kernel::Scalar => 0,
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 => avx2::decode_rounds(model, &mut x, payload, &mut pos, whole),
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 => avx512::decode_rounds(model, &mut x, payload, &mut pos, whole),
    };
    // The scalar rounds: all of them, or those near the payload's end.
    let done =
        done + decode_rounds_scalar(model, &mut x, payload, &mut pos, &mut whole[done * 2..]);
    decode_tail(model, &mut x, payload, &mut pos, out, done, n);
    final_checks(&x, pos, payload, m, out)
}

#[cfg(any(test, feature = "internals"))]
/// The payload of coding 8 for the first `m` bits of `words` (`ceil(m / 64)` words, bits
/// past `m` zero) with the model of `q0` (at least 1): for fuzzing and benches.
pub fn encode_payload(words: &[u64], m: u64, q0: u16) -> Vec<u8> {
    let mut out = Vec::new();
    encode_dense(words, m, q0.max(1), &mut out);
    out
}

#[cfg(any(test, feature = "internals"))]
/// The coding-8 payloads of the first `m` bits of `words` by each encoder this CPU runs,
/// the scalar one first, `q0` at least 1: all must be equal.
pub fn encode_kernels(words: &[u64], m: u64, q0: u16) -> ByKernel<Vec<u8>> {
    let model = EncModel::new(q0.max(1));
    Kernel::available()
        .into_iter()
        .map(|k| {
            let mut out = Vec::new();
            encode_with(words, m, &model, &mut out, k);
            (k.name(), out)
        })
        .collect()
}

#[cfg(any(test, feature = "internals"))]
/// A coding-8 payload of `m` bits decoded with the model of `q0` (at least 1), by the
/// fastest decoder this CPU has: for benches.
pub fn decode_payload(payload: &[u8], m: u64, q0: u16) -> Result<Vec<u64>, &'static str> {
    let mut out = vec![0u64; crate::filter::bits::words_for(m)];
    decode(payload, m, &DecModel::new(q0.max(1)), &mut out).map(|()| out)
}

#[cfg(any(test, feature = "internals"))]
/// A payload of `m` bits decoded by each decoder this CPU runs, the scalar one first, `q0`
/// at least 1: all results must be equal, words or error.
pub fn decode_kernels(payload: &[u8], m: u64, q0: u16) -> ByKernel<Decoded> {
    let model = DecModel::new(q0.max(1));
    Kernel::available()
        .into_iter()
        .map(|k| {
            let mut out = vec![0u64; crate::filter::bits::words_for(m)];
            let r = decode_with(payload, m, &model, &mut out, k).map(|()| out);
            (k.name(), r)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entropy::nibble_rans::{frequencies, Alias};
    use crate::entropy::testing::pseudo_random_bits;
    use crate::filter::bits::BitArray;

    fn enc(bits: &BitArray, q0: u16) -> Vec<u8> {
        let mut out = Vec::new();
        encode_dense(bits.words(), bits.len(), q0, &mut out);
        out
    }

    fn dec(payload: &[u8], m: u64, q0: u16) -> Result<BitArray, PayloadError> {
        let mut words = vec![0u64; crate::filter::bits::words_for(m)];
        decode(payload, m, &DecModel::new(q0), &mut words)?;
        Ok(BitArray::from_words(words, m).expect("only m bits"))
    }

    /// The decoder written from the spec: frequencies and the alias table, one symbol at a
    /// time, a division-free step read off the pseudocode.
    fn naive_decode(payload: &[u8], m: u64, q0: u16) -> Option<BitArray> {
        let f = frequencies(q0);
        let a = Alias::new(&f);
        if !payload.len().is_multiple_of(2) || payload.len() < STATE_BYTES {
            return None;
        }
        let mut x: Vec<u32> = payload[..STATE_BYTES]
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        if x.iter().any(|&s| !(LOWER..1 << 31).contains(&s)) {
            return None;
        }
        let mut words = payload[STATE_BYTES..]
            .chunks(2)
            .map(|c| u32::from(u16::from_le_bytes(c.try_into().unwrap())));
        let n = m.div_ceil(4) as usize;
        let mut nibbles = vec![0u8; n.div_ceil(32) * 32];
        for t0 in (0..n).step_by(32) {
            for (l, s) in x.iter_mut().enumerate() {
                let t = t0 + 4 * (l % 8) + l / 8;
                if t >= n {
                    continue;
                }
                let slot = *s % 8192;
                let (b, r) = ((slot / 512) as usize, slot % 512);
                let (v, i) = if r < a.div[b] {
                    (b, r)
                } else {
                    (usize::from(a.alias[b]), a.second[b] + r - a.div[b])
                };
                *s = f[v] * (*s / 8192) + i;
                if *s < LOWER {
                    *s = (*s << 16) | words.next()?;
                }
                nibbles[t] = v as u8;
            }
        }
        (x.iter().all(|&s| s == LOWER) && words.next().is_none()).then_some(())?;
        let bytes: Vec<u8> = nibbles.chunks(2).map(|p| p[0] | p[1] << 4).collect();
        BitArray::from_bytes(&bytes[..m.div_ceil(8) as usize], m).ok()
    }

    /// Decode `payload` with every kernel: all must agree; returns the scalar one's result.
    fn agreed(payload: &[u8], m: u64, q0: u16, what: &str) -> Decoded {
        crate::entropy::testing::agreed(decode_kernels(payload, m, q0), what)
    }

    #[test]
    fn every_decoder_agrees_with_the_scalar_one() {
        for seed in 0..60u64 {
            let m = 1 + seed * 997 + (seed % 5) * 4096;
            let density = crate::filter::hashing::fmix64(seed) % 1025;
            let bits = pseudo_random_bits(m, density, seed);
            let q0 = crate::entropy::model::KnownP::measured(bits.count_zeros(), m);
            let mut p = encode_payload(bits.words(), m, q0);
            let what = format!("seed {seed}");
            assert_eq!(
                agreed(&p, m, q0, &what).as_deref(),
                Ok(bits.words()),
                "{what}"
            );
            // Hostile payloads, flipped bytes and cut: any result, so long as all agree.
            let mut s = seed;
            for _ in 0..20 {
                s = crate::filter::hashing::fmix64(s + 1);
                let i = (s as usize >> 8) % p.len();
                p[i] ^= s as u8 | 1;
                let _ = agreed(&p, m, q0, &what);
                let _ = agreed(&p[..p.len() - 2 * (i % 8).min(p.len() / 4)], m, q0, &what);
            }
        }
    }

    #[test]
    fn every_encoder_agrees_with_the_scalar_one() {
        for seed in 0..80u64 {
            let m = 1 + seed * 3331 + (seed % 7) * 40_000;
            let density = crate::filter::hashing::fmix64(seed) % 1025;
            let bits = pseudo_random_bits(m, density, seed);
            for q0 in [
                crate::entropy::model::KnownP::measured(bits.count_zeros(), m),
                1,
                65535,
            ] {
                crate::entropy::testing::agreed(
                    encode_kernels(bits.words(), m, q0),
                    &format!("seed {seed} q0 {q0}"),
                );
            }
        }
    }

    #[test]
    fn round_trips_and_agrees_with_the_spec_decoder() {
        for seed in 0..100u64 {
            let m = 1 + seed * seed * 7 + seed % 13;
            let density = crate::filter::hashing::fmix64(seed) % 1025;
            let bits = pseudo_random_bits(m, density, seed);
            let q0 = crate::entropy::model::KnownP::measured(bits.count_zeros(), m);
            let p = enc(&bits, q0);
            assert_eq!(p.len() % 2, 0);
            assert_eq!(dec(&p, m, q0).unwrap(), bits, "seed {seed} m {m}");
            assert_eq!(naive_decode(&p, m, q0).as_ref(), Some(&bits));
            let other = enc(&bits, 60000);
            assert_eq!(dec(&other, m, 60000).unwrap(), bits);
        }
    }

    #[test]
    fn rejects_what_the_encoder_never_writes() {
        let m = 20_000;
        let bits = pseudo_random_bits(m, 100, 5);
        let q0 = crate::entropy::model::KnownP::measured(bits.count_zeros(), m);
        let p = enc(&bits, q0);
        assert!(dec(&p[..p.len() - 2], m, q0).is_err());
        assert!(dec(&p[..p.len() - 1], m, q0).is_err());
        assert!(dec(&[&p[..], &[0, 0]].concat(), m, q0).is_err());
        assert!(dec(&p[..STATE_BYTES - 4], m, q0).is_err());
        let mut low = p.clone();
        low[..4].copy_from_slice(&0x7FFFu32.to_le_bytes()); // state 0 below 2^15
        assert!(dec(&low, m, q0).is_err());
        let mut high = p.clone();
        high[..4].copy_from_slice(&(1u32 << 31).to_le_bytes()); // state 0 at 2^31
        assert!(dec(&high, m, q0).is_err());
        let (mut accepted, mut tried) = (0, 0);
        for i in 0..p.len() {
            for bit in [0, 5] {
                let mut v = p.clone();
                v[i] ^= 1 << bit;
                tried += 1;
                match dec(&v, m, q0) {
                    Ok(other) => {
                        assert_ne!(other, bits, "two payloads for one bit array");
                        accepted += 1;
                    }
                    Err(_) => assert!(naive_decode(&v, m, q0).is_none(), "byte {i}"),
                }
            }
        }
        assert!(accepted * 100 < tried, "{accepted} of {tried} flips decode");
    }

    #[test]
    fn bits_past_m_must_be_zero() {
        // A payload of the 8-bit array 0xFF read as a 3-bit array.
        let full = BitArray::from_bytes(&[0xFF], 8).unwrap();
        let p = enc(&full, 30000);
        assert!(dec(&p, 3, 30000).is_err());
        assert!(dec(&p, 8, 30000).is_ok());
    }

    #[test]
    fn empty_and_tiny_arrays() {
        for m in 1..=300 {
            for bits in [BitArray::new(m), pseudo_random_bits(m, 1024, m)] {
                for q0 in [1u16, 30000, 65535] {
                    let p = enc(&bits, q0);
                    assert!(p.len() >= STATE_BYTES);
                    assert_eq!(dec(&p, m, q0).unwrap(), bits, "m={m} q0={q0}");
                }
            }
        }
    }
}
