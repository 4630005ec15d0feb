//! Coding 10, *wide*: coding 8's nibble lanes twice, over the two halves of the array, one
//! stream read from the front of the payload and one from the back (spec §4.14).
//!
//! Coding 8 decodes a round of 32 nibbles as one chain: every lane steps once, and the
//! lanes that take a word wait for the lanes before them to have counted theirs. On the
//! CPU it was measured on (Zen 4) that chain, not the work, sets the speed: 48 cycles a
//! round. Two halves, each with its own 32 states and its own stream of words, are two
//! chains that a decoder runs side by side, and with two chains the work binds instead
//! (about 32 cycles a round of each half with the AVX-512 kernel, `wide::avx512`; the
//! AVX2 one, `wide::avx2`, runs coding 8's AVX2 round on each half):
//!
//! * **The nibbles, model, alias table and lanes** are coding 8's
//!   ([`nibble_rans`](super::nibble_rans)), and so is the encoder of whole rounds.
//! * **Two halves.** The first `ceil(R / 2)` rounds of 32 nibbles (`R` in all) are the
//!   first half, the rest the second; each is coded as coding 8 codes an array.
//! * **Two streams, no length.** The payload is the first half's 32 states, the second
//!   half's, then 16-bit words: the first half reads them from the front, the second from
//!   the back, and a payload is whole when the two meet exactly.
//! * **The states carry the last four rounds.** A half's encoder starts each lane at
//!   `2^15` plus its last four nibbles, which its decoder then reads from the state it ends
//!   in instead of decoding them: 64 lanes times the entropy of four nibbles (about 7 bits
//!   a lane at `p0 = 0.9`) pay for most of the second half's 128 bytes of states.
//!
//! A payload is canonical: each state ends holding its carried nibbles and nothing more,
//! every word is read once, and no bit past `m` is set.

use crate::entropy::codec::{per_byte_bound, BitCodec, BitDecoder, Codec, Job, CHUNK_BYTES};
use crate::entropy::model::Counts;
use crate::entropy::nibble_rans::{
    encode_rounds, excess_bits, expected_words, nibble_of_lane, Backwards, DecModel, EncModel,
    Kernel, LANES, LOWER, ROUND,
};
use crate::entropy::profile::{Profile, Status};
use crate::entropy::PayloadError;
#[cfg(any(test, feature = "internals"))]
use crate::entropy::{ByKernel, Decoded};

// The AVX2 and AVX-512 decoders of both halves at once, chosen at run time and held to
// the scalar code here by the tests and the fuzz target `kernel_twins`.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
pub(crate) mod avx2;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
pub(crate) mod avx512;

/// The table's row of coding 10.
pub(crate) const CODEC: Codec = Codec {
    id: 10,
    name: "wide",
    profile: Profile::Full,
    status: Status::Active,
    // Two chains of 32 lanes in flight: the fastest to decode of large dense arrays (8 * 10^6
    // bits at p0 = 0.9: 0.55 ms against 0.86 for one chain), first where its 256 bytes of
    // states are within the margin.
    speed_rank: |_| 10,
    has_q0: true,
    q0_measured: true,
    // 70 to 210 bytes a chunk go to the states (less what they carry, at p0 from 0.5 to
    // 0.95): chunks four times the usual size (at least 512 KiB coded) keep that under
    // 0.05%.
    chunk_bytes: Some(4 * CHUNK_BYTES),
    // 64 32-bit final states, then whole 16-bit words.
    well_formed: |_, _, len| len.is_multiple_of(2) && len >= STATE_BYTES as u64,
    work_bound: per_byte_bound,
    bits: Some(BitCodec {
        predict,
        encode: encode_wide,
        decoder: |q0, _| Box::new(Model(DecModel::new(q0))),
    }),
    counters: None,
};

/// The size model: the cross entropy less the carried nibbles, the precision-13 model's
/// excess per nibble, and 64 final states of which a little is message.
fn predict(counts: &Counts) -> u64 {
    let len = counts.len;
    let carried = len.min(4 * carried_nibbles(len.div_ceil(4) as usize) as u64) as f64;
    (counts.cross_entropy_bits() * (1.0 - carried / len.max(1) as f64) / 8.0
        + len.div_ceil(4) as f64 * excess_bits(counts) / 8.0
        + FIXED)
        .max(0.0)
        .ceil() as u64
}

/// Bytes a payload takes over its coded symbols' cost: the 64 final states less what they
/// carry, and the half-filled last words (measured by the test
/// `dense_fixed_cost_is_measured`).
const FIXED: f64 = 207.0;

/// Bytes of the two halves' final states at the start of every payload.
pub(crate) const STATE_BYTES: usize = 8 * LANES;

/// Rounds of a half that its states carry, at most.
const CARRIED: usize = 4;

/// One half of the array, in rounds of 32 nibbles.
#[derive(Clone, Copy, Debug)]
struct Half {
    /// Its first round in the array.
    first: usize,
    /// Its rounds.
    rounds: usize,
    /// Its last rounds, which its states carry.
    carried: usize,
}

impl Half {
    /// The rounds its stream codes: all but the carried ones, all whole.
    fn coded(self) -> usize {
        self.rounds - self.carried
    }
}

/// The two halves of `n` nibbles: the first `ceil(R / 2)` of the `R` rounds, and the rest.
fn halves(n: usize) -> [Half; 2] {
    let rounds = n.div_ceil(ROUND);
    let first = rounds.div_ceil(2);
    let half = |first, rounds: usize| Half {
        first,
        rounds,
        carried: rounds.min(CARRIED),
    };
    [half(0, first), half(first, rounds - first)]
}

/// The nibbles the states of an array of `n` nibbles carry.
fn carried_nibbles(n: usize) -> usize {
    halves(n)
        .iter()
        .flat_map(|h| h.first + h.coded()..h.first + h.rounds)
        .map(|r| (n - r * ROUND).min(ROUND))
        .sum()
}

/// Nibble `t` of `words`.
#[inline(always)]
fn nibble(words: &[u64], t: usize) -> u32 {
    (words[t / 16] >> (4 * (t % 16))) as u32 & 15
}

/// Code the `m` bits of `words` with coding 10.
pub(crate) fn encode_wide(words: &[u64], m: u64, q0: u16, out: &mut Vec<u8>) {
    encode_with(words, m, &EncModel::new(q0), out, Kernel::fastest());
}

/// Append the coding-10 payload of the first `m` bits of `words` to `out`, the whole
/// rounds by `kernel` (which the CPU must have).
fn encode_with(words: &[u64], m: u64, model: &EncModel, out: &mut Vec<u8>, kernel: Kernel) {
    debug_assert_eq!(words.len(), crate::filter::bits::words_for(m));
    let n = m.div_ceil(4) as usize;
    let coded = halves(n).map(|h| {
        // The lanes start at 2^15 plus their carried nibbles (0 past the array's end).
        let mut x = [LOWER; LANES];
        for (l, lane) in x.iter_mut().enumerate() {
            for i in 0..h.carried {
                let t = (h.first + h.coded() + i) * ROUND + nibble_of_lane(l);
                if t < n {
                    *lane += nibble(words, t) << (4 * i);
                }
            }
        }
        let mut buf = Backwards::new(expected_words(h.coded() * ROUND, model));
        // (Coded rounds are whole rounds, inside the array; a half may have none.)
        let rounds = words
            .get(2 * h.first..2 * (h.first + h.coded()))
            .unwrap_or(&[]);
        encode_rounds(rounds, h.coded(), model, &mut x, &mut buf, kernel);
        (x, buf)
    });
    let [(xa, a), (xb, b)] = &coded;
    out.reserve(STATE_BYTES + a.written().len() + b.written().len());
    for s in xa.iter().chain(xb) {
        out.extend_from_slice(&s.to_le_bytes());
    }
    out.extend_from_slice(a.written());
    // The second half's words from the back: its first word last (the bytes reversed,
    // then each word's two swapped back: two passes the compiler vectorizes).
    let at = out.len();
    out.extend_from_slice(b.written());
    let tail = &mut out[at..];
    tail.reverse();
    for w in tail.chunks_exact_mut(2) {
        w.swap(0, 1);
    }
}

/// Coding 10's decoder of one `q0`: coding 8's model.
struct Model(DecModel);

impl BitDecoder for Model {
    /// Decode with the fastest decoder this CPU has.
    fn decode(&self, job: Job<'_>) -> Result<(), PayloadError> {
        decode_with(job.payload, job.len, &self.0, job.out, Kernel::fastest())
    }
}

/// What a SIMD kernel's rounds work on: the model, both halves' 32 states, the two
/// streams, and the output words of each half's coded rounds.
#[cfg(target_arch = "x86_64")]
pub(crate) struct Rounds<'a, 'p> {
    pub(crate) model: &'a DecModel,
    pub(crate) x: &'a mut [[u32; LANES]; 2],
    pub(crate) streams: &'a mut Streams<'p>,
    pub(crate) out_a: &'a mut [u64],
    pub(crate) out_b: &'a mut [u64],
}

/// The two streams of words between the states and the payload's end: the first half's
/// next word at byte `front`, the second half's just below byte `back`.
pub(crate) struct Streams<'a> {
    payload: &'a [u8],
    front: usize,
    back: usize,
}

impl Streams<'_> {
    /// The next word of the first half's stream (`back` false) or the second's, or an
    /// error when the streams have met.
    #[inline(always)]
    fn word(&mut self, back: bool) -> Result<u32, PayloadError> {
        if self.front >= self.back {
            return Err("wide payload ends before the last symbol");
        }
        let at = if back {
            self.back -= 2;
            self.back
        } else {
            self.front += 2;
            self.front - 2
        };
        Ok(u32::from(u16::from_le_bytes([
            self.payload[at],
            self.payload[at + 1],
        ])))
    }
}

/// Decode whole rounds of one half from `x` into `out` (two words a round), its words from
/// the back of the streams when `back`, one symbol at a time.
fn decode_rounds_scalar(
    model: &DecModel,
    x: &mut [u32; LANES],
    streams: &mut Streams<'_>,
    back: bool,
    out: &mut [u64],
) -> Result<(), PayloadError> {
    for ws in out.chunks_exact_mut(2) {
        let mut bits = 0u128;
        for (l, lane) in x.iter_mut().enumerate() {
            let (s, y) = model.symbol(*lane);
            *lane = if y < LOWER {
                (y << 16) | streams.word(back)?
            } else {
                y
            };
            bits |= u128::from(s) << (4 * nibble_of_lane(l));
        }
        ws[0] = bits as u64;
        ws[1] = (bits >> 64) as u64;
    }
    Ok(())
}

/// The states of half `h` at the start of a payload, checked: `[2^15, 2^31)`.
fn initial_states(payload: &[u8], h: usize) -> Result<[u32; LANES], PayloadError> {
    let mut x = [0u32; LANES];
    for (l, s) in x.iter_mut().enumerate() {
        let at = 4 * (LANES * h + l);
        *s = u32::from_le_bytes(payload[at..at + 4].try_into().expect("4 bytes"));
        if !(LOWER..1 << 31).contains(s) {
            return Err("wide payload starts with a state outside [2^15, 2^31)");
        }
    }
    Ok(x)
}

/// Decode a coding-10 payload of `m` bits into `out` (exactly `ceil(m / 64)` words, every
/// one overwritten; bits past `m` are zero), both halves' first rounds by `kernel` (which
/// the CPU must have). On error `out` holds garbage.
fn decode_with(
    payload: &[u8],
    m: u64,
    model: &DecModel,
    out: &mut [u64],
    kernel: Kernel,
) -> Result<(), PayloadError> {
    debug_assert_eq!(out.len(), crate::filter::bits::words_for(m));
    if !payload.len().is_multiple_of(2) || payload.len() < STATE_BYTES {
        return Err("wide payload is not whole words or too short for its states");
    }
    let mut x = [initial_states(payload, 0)?, initial_states(payload, 1)?];
    let n = m.div_ceil(4) as usize;
    let [a, b] = halves(n);
    let mut streams = Streams {
        payload,
        front: STATE_BYTES,
        back: payload.len(),
    };
    // The coded rounds' words: the first half's, then the second's (coded rounds are whole
    // rounds inside the array; the last round, which may end early, is carried).
    let (head, tail) = out.split_at_mut((2 * b.first).min(out.len()));
    let (out_a, out_b) = (&mut head[..2 * a.coded()], &mut tail[..2 * b.coded()]);
    #[cfg(target_arch = "x86_64")]
    let rounds = Rounds {
        model,
        x: &mut x,
        streams: &mut streams,
        out_a,
        out_b,
    };
    let done = match kernel {
        Kernel::Scalar => 0,
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 => avx2::decode_rounds(rounds),
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 => avx512::decode_rounds(rounds),
    };
    if streams.front > streams.back {
        return Err("wide payload ends before the last symbol");
    }
    let [xa, xb] = &mut x;
    decode_rounds_scalar(model, xa, &mut streams, false, &mut out_a[2 * done..])?;
    decode_rounds_scalar(model, xb, &mut streams, true, &mut out_b[2 * done..])?;
    if streams.front != streams.back {
        return Err("wide payload does not end where its streams meet");
    }
    // The carried rounds, from the states.
    for (h, x) in [a, b].iter().zip(&x) {
        let carried = h.first + h.coded()..h.first + h.rounds;
        for w in 2 * carried.start..(2 * carried.end).min(out.len()) {
            out[w] = 0;
        }
        for (l, &s) in x.iter().enumerate() {
            let c = s - LOWER;
            if u64::from(c) >> (4 * h.carried) != 0 {
                return Err("wide payload does not end where the encoder starts");
            }
            for (i, r) in carried.clone().enumerate() {
                let (t, v) = (r * ROUND + nibble_of_lane(l), u64::from(c >> (4 * i)) & 15);
                if t < n {
                    out[t / 16] |= v << (4 * (t % 16));
                } else if v != 0 {
                    return Err("bits past m are not zero");
                }
            }
        }
    }
    crate::entropy::check_past_m(out, m)
}

#[cfg(any(test, feature = "internals"))]
/// The coding-10 payloads of the first `m` bits of `words` by each encoder this CPU runs,
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
    use crate::entropy::testing::{agreed, nearby_payloads, pseudo_random_bits};
    use crate::filter::bits::BitArray;

    fn enc(bits: &BitArray, q0: u16) -> Vec<u8> {
        agreed(encode_kernels(bits.words(), bits.len(), q0), "encode")
    }

    fn dec(payload: &[u8], m: u64, q0: u16) -> Decoded {
        agreed(decode_kernels(payload, m, q0), "decode")
    }

    #[test]
    fn halves_split_the_rounds() {
        for n in [0usize, 1, 31, 32, 33, 64, 200, 255, 256, 257, 1000, 100_000] {
            let [a, b] = halves(n);
            let rounds = n.div_ceil(ROUND);
            assert_eq!(
                (a.first, a.rounds + b.rounds, b.first),
                (0, rounds, a.rounds)
            );
            assert!(a.rounds >= b.rounds && a.rounds - b.rounds <= 1);
        }
        // Four rounds a half once each has four; fewer (and the last one part) below.
        assert_eq!(carried_nibbles(100_000), 256);
        assert_eq!(carried_nibbles(33), 33);
        assert_eq!(carried_nibbles(8 * 32 + 1), 32 * 4 + 32 * 3 + 1);
    }

    #[test]
    fn round_trips_at_every_size_and_density() {
        for seed in 0..40u64 {
            let m = 1 + seed * 1_777 + (seed % 7) * 8_192;
            let density = crate::filter::hashing::fmix64(seed) % 1025;
            let bits = pseudo_random_bits(m, density, seed);
            let q0 = crate::entropy::model::KnownP::measured(bits.count_zeros(), m);
            let payload = enc(&bits, q0);
            assert!(payload.len() >= STATE_BYTES && payload.len().is_multiple_of(2));
            assert_eq!(dec(&payload, m, q0).unwrap(), bits.words(), "m {m}");
        }
    }

    #[test]
    fn large_arrays_round_trip_through_the_kernel() {
        for (m, density) in [(8_000_000u64, 102u64), (1_000_003, 512), (640_001, 30)] {
            let bits = pseudo_random_bits(m, density, m);
            let q0 = crate::entropy::model::KnownP::measured(bits.count_zeros(), m);
            let payload = enc(&bits, q0);
            assert_eq!(dec(&payload, m, q0).unwrap(), bits.words(), "m {m}");
        }
    }

    #[test]
    fn rejects_what_the_encoder_never_writes() {
        for (m, density) in [(3_001u64, 100u64), (20_000, 300), (130, 500)] {
            let bits = pseudo_random_bits(m, density, 9);
            let q0 = crate::entropy::model::KnownP::measured(bits.count_zeros(), m);
            let payload = enc(&bits, q0);
            for near in nearby_payloads(&payload) {
                if let Ok(words) = dec(&near, m, q0) {
                    assert_ne!(
                        words,
                        bits.words(),
                        "m {m}: another payload decodes the same"
                    );
                }
            }
        }
        // Too short, odd, or states outside their interval.
        assert!(dec(&[0; 254], 100, 30000).is_err());
        assert!(dec(&[0; 257], 100, 30000).is_err());
        assert!(dec(&[0; 256], 100, 30000).is_err());
    }

    #[test]
    fn carried_nibbles_past_m_must_be_zero() {
        let m = 130;
        let bits = pseudo_random_bits(m, 300, 4);
        let q0 = 40000;
        let mut payload = enc(&bits, q0);
        // 33 nibbles, two rounds: each half carries one. The second half's lane 1 carries
        // nibble 32 + 4 = 36, past the array: set it.
        let at = 4 * (LANES + 1);
        let x1 = u32::from_le_bytes(payload[at..at + 4].try_into().unwrap()) + 1;
        payload[at..at + 4].copy_from_slice(&x1.to_le_bytes());
        assert_eq!(dec(&payload, m, q0), Err("bits past m are not zero"));
    }

    #[test]
    fn empty_and_tiny_arrays() {
        for m in [1u64, 3, 4, 5, 64, 127, 128, 129] {
            for density in [0u64, 512, 1024] {
                let bits = pseudo_random_bits(m, density, m);
                let payload = enc(&bits, 30000);
                // Everything rides in the states.
                assert_eq!(payload.len(), STATE_BYTES);
                assert_eq!(dec(&payload, m, 30000).unwrap(), bits.words());
            }
        }
    }
}
