//! Coding 8, *dense*: the nibbles of a bit array coded by 32 interleaved 32-bit rANS
//! states at precision 13, decoded through a 16-bucket alias table (spec §4.12).
//!
//! Coding 6 ([`rans`](super::rans)) decodes byte symbols at a few hundred MB/s: four 64-bit
//! states and a lookup with a fallback. This coding is made for decoding speed where filters
//! are dense (`p0` from 0.5 to 0.95), without giving back size:
//!
//! * **Nibble symbols** (4 bits, 16 values), so that the whole decoding table is 16 entries:
//!   one AVX2 vector permutation pair looks it up for eight states at once, one AVX-512
//!   `vpermd` for sixteen, with no gather (see `dense::avx2` and
//!   `dense::avx512`).
//! * **32 lanes** of **32-bit states** in `[2^15, 2^31)` that take in 16-bit words, at most
//!   one per symbol: 32 independent chains, four vectors of eight. Lane `l` codes, in each
//!   round of 32 nibbles, nibble `4 (l mod 8) + floor(l / 8)`: the four vectors then hold the
//!   four nibbles of each 16-bit piece of the round, which a shift and an OR put in place.
//! * **Precision 13** with coding 3's model rule (floor, at least 1, remainder to the first
//!   largest) on nibbles. Over the nibble model's own entropy, the test `precision_13_costs`
//!   measures 0% at `p0 = 0.5`, 0.0002% at 0.7, 0.0006% at 0.9, 0.013% at 0.95; the rANS
//!   approximation of states at least `4 * 2^13` adds a little, and the 32 final states about
//!   100 bytes. 8 * 10^6 bits code within 0.05% + 16 bytes of `m H(p) / 8` from p0 = 0.5 to
//!   0.95 (the test `dense_payloads_are_within_0_05_percent_and_16_bytes_of_the_entropy`).
//! * **An alias table** of 16 buckets of 512 slots, each split between at most two symbols
//!   (Walker's method, as in Fabian Giesen's "rANS with static probability distributions"),
//!   every symbol's own bucket numbered first: decoding a symbol is two lookups in 128 bytes
//!   of tables, no search and no division.
//!
//! The last nibble of an array whose length is not a multiple of 4 is coded with the same
//! table; its bits past `m` must be zero. A payload is canonical: every state ends at
//! `2^15` (where the encoder starts) and every word is read.

use crate::entropy::codec::{per_byte_bound, BitCodec, BitDecoder, Codec, CHUNK_BYTES};
use crate::entropy::model::cross_entropy_bits;
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
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
pub(crate) mod encode_avx2;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
pub(crate) mod encode_avx512;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
pub(crate) mod lanes_avx2;

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
fn predict(len: u64, ones: u64, q0: u16) -> u64 {
    (cross_entropy_bits(len, ones, q0) / 8.0
        + len.div_ceil(4) as f64 * excess_bits(q0) / 8.0
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

/// Number of interleaved states.
pub(crate) const LANES: usize = 32;

/// Bytes of the final states at the start of every payload: the smallest payload.
pub(crate) const STATE_BYTES: usize = 4 * LANES;

/// Slots: frequencies sum to `2^PRECISION`.
pub(crate) const PRECISION: u32 = 13;

/// Slots per alias bucket: `2^PRECISION / 16`.
pub(crate) const BUCKET: u32 = 1 << (PRECISION - 4);

/// The lower end of the state interval `[2^15, 2^31)`.
pub(crate) const LOWER: u32 = 1 << 15;

/// Words of room the vector encoder's stores need below the last word written: each
/// writes 8 words ending where the next word goes.
pub(crate) const ROOM: usize = 8;

/// Nibbles (symbols) of a round: one per lane.
pub(crate) const ROUND: usize = LANES;

/// The nibble of its round that lane `l` codes: `4 (l mod 8) + floor(l / 8)`.
#[inline(always)]
pub(crate) const fn nibble_of_lane(l: usize) -> usize {
    4 * (l % 8) + l / 8
}

/// Which code runs the whole rounds of a payload: the portable scalar code, or a SIMD
/// kernel beside it, each only where the CPU has it. All of them read and write the same
/// bytes; the tests and the fuzz target `kernel_twins` hold each to the scalar one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kernel {
    Scalar,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Kernel {
    #[cfg(any(test, feature = "internals"))]
    /// Every kernel this CPU runs, the scalar one first and the fastest last.
    pub(crate) fn available() -> Vec<Kernel> {
        let mut all = vec![Kernel::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            if crate::entropy::dense::lanes_avx2::available() {
                all.push(Kernel::Avx2);
            }
            if crate::entropy::dense::avx512::available() {
                all.push(Kernel::Avx512);
            }
        }
        all
    }

    /// The fastest kernel this CPU runs.
    pub(crate) fn fastest() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        {
            if crate::entropy::dense::avx512::available() {
                return Kernel::Avx512;
            }
            if crate::entropy::dense::lanes_avx2::available() {
                return Kernel::Avx2;
            }
        }
        Kernel::Scalar
    }

    #[cfg(any(test, feature = "internals"))]
    /// Its name, for the tests' and the fuzz checks' messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => "avx2",
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => "avx512",
        }
    }
}

/// The nibble model at precision 13 (spec §4.12): `f(v)` for the 16 nibble values.
pub(crate) fn frequencies(q0: u16) -> [u32; 16] {
    crate::entropy::model::nibble_frequencies(q0, PRECISION)
}

/// Expected bits per nibble that the precision-13 model of `q0` costs over the nibble
/// model with the same `q0` (for the encoder's size model; floats, never in a decoder).
pub(crate) fn excess_bits(q0: u16) -> f64 {
    crate::entropy::model::nibble_excess_bits(q0, PRECISION)
}

/// The alias table of a frequency table: bucket `b` holds the slots `512 b .. 512 b + 511`;
/// the first `div[b]` belong to symbol `b` (its slots `0 .. div[b] - 1`), the rest to
/// `alias[b]` (its slots from `second[b]` on). Built by the spec's integer procedure
/// (§4.12), so every implementation splits the slots the same way.
pub(crate) struct Alias {
    pub(crate) div: [u32; 16],
    pub(crate) alias: [u8; 16],
    /// Where the bucket's second part starts among its symbol's slots.
    pub(crate) second: [u32; 16],
}

impl Alias {
    pub(crate) fn new(f: &[u32; 16]) -> Self {
        let mut rem = *f;
        let mut div = [BUCKET; 16];
        let mut alias: [u8; 16] = core::array::from_fn(|v| v as u8);
        let mut small: Vec<usize> = (0..16).filter(|&v| f[v] < BUCKET).collect();
        let mut large: Vec<usize> = (0..16).filter(|&v| f[v] > BUCKET).collect();
        while let Some(s) = small.pop() {
            let l = *large.last().expect("a bucket under 512 has one over");
            div[s] = rem[s];
            alias[s] = l as u8;
            rem[l] -= BUCKET - rem[s];
            if rem[l] <= BUCKET {
                large.pop();
                if rem[l] < BUCKET {
                    small.push(l);
                }
            }
        }
        // Each symbol's own part first, then the parts it takes in other buckets, in
        // bucket order.
        let mut next = div;
        let mut second = [0u32; 16];
        for b in 0..16 {
            let a = usize::from(alias[b]);
            second[b] = next[a];
            next[a] += BUCKET - div[b];
        }
        debug_assert_eq!(next, *f);
        Alias { div, alias, second }
    }
}

/// The decoding model of one `q0`: two tables of 16 entries, by bucket.
///
/// * `first[b] = f(b) | b << 13 | div(b) << 17`: the bucket's first part;
/// * `second[b] = f(a) | a << 13 | (second(b) - div(b)) << 18`, `a = alias(b)`, the last
///   field two's complement in 14 bits: the second part, whose slot `r` is symbol `a`'s
///   slot `r + second(b) - div(b)`.
///
/// A symbol is then `(e >> 13) & 15` and the state after it
/// `(e & 0x1FFF) * (x >> 13) + r + adjust`, `e` the part the slot `r` falls in.
#[derive(Debug, Clone)]
pub(crate) struct DecModel {
    pub(crate) first: [u32; 16],
    pub(crate) second: [u32; 16],
}

impl DecModel {
    pub(crate) fn new(q0: u16) -> Self {
        let f = frequencies(q0);
        let a = Alias::new(&f);
        let mut first = [0u32; 16];
        let mut second = [0u32; 16];
        for b in 0..16 {
            let s = u32::from(a.alias[b]);
            first[b] = f[b] | (b as u32) << 13 | a.div[b] << 17;
            let adjust = a.second[b].wrapping_sub(a.div[b]);
            second[b] = f[s as usize] | s << 13 | adjust << 18;
        }
        DecModel { first, second }
    }

    /// Decode one symbol from state `x`: the symbol and the state before renormalization.
    #[inline(always)]
    pub(crate) fn symbol(&self, x: u32) -> (u32, u32) {
        let slot = x & ((1 << PRECISION) - 1);
        let b = (slot >> 9) as usize;
        let r = slot & (BUCKET - 1);
        let (d, s) = (self.first[b], self.second[b]);
        // A select without a branch: which part a slot falls in is as random as the data.
        let take = u32::from(r >= d >> 17).wrapping_neg();
        let e = d ^ ((d ^ s) & take);
        let adjust = ((s as i32) >> 18) as u32 & take;
        let y = (e & 0x1FFF) * (x >> PRECISION) + r;
        ((e >> 13) & 15, y.wrapping_add(adjust))
    }
}

/// The encoding model of one `q0`, laid out for 16-entry lookups as the decoder's is (so
/// that the vector encoders, `encode_avx2` and `encode_avx512`,
/// read the same tables).
pub(crate) struct EncModel {
    /// Per nibble `v`: `f(v) | cum(v) << 13 | shift << 27 | corr << 31`, with `cum(v)`
    /// where its slots start in `slots`, and `shift`, `corr` those of [`EncModel::rcp`].
    pub(crate) meta: [u32; 16],
    /// Per nibble: a reciprocal of `f` such that
    /// `floor(y / f) = (mulhi32(y, rcp) >> shift) + corr` for every `y < 2^31` (Fabian
    /// Giesen's `rans_byte` encoder: `shift = ceil(log2 f) - 1` and
    /// `rcp = ceil(2^(31 + ceil(log2 f)) / f)`; for `f = 1`, `rcp = 2^32 - 1`, `shift = 0`
    /// and `corr = 1`).
    pub(crate) rcp: [u32; 16],
    /// `slots[cum(v) + i]`: the slot of nibble `v`'s `i`-th slot (its numbering in §4.12),
    /// and one more entry, so that a 4-byte read at any index stays inside.
    pub(crate) slots: Vec<u16>,
    /// The alias table the slots come from (for kernels that compute a slot instead of
    /// reading it).
    pub(crate) alias: Alias,
}

impl EncModel {
    pub(crate) fn new(q0: u16) -> Self {
        let f = frequencies(q0);
        let a = Alias::new(&f);
        let mut meta = [0u32; 16];
        let mut rcp = [0u32; 16];
        let mut cum = [0u32; 16];
        let mut next = 0u32;
        for v in 0..16 {
            let fv = f[v];
            cum[v] = next;
            next += fv;
            let (r, shift, corr) = if fv == 1 {
                (u32::MAX, 0, 1)
            } else {
                let s = 32 - (fv - 1).leading_zeros();
                let r = (1u64 << (s + 31)).div_ceil(u64::from(fv));
                (r as u32, s - 1, 0)
            };
            rcp[v] = r;
            meta[v] = fv | cum[v] << 13 | shift << 27 | corr << 31;
        }
        let mut slots = vec![0u16; (1 << PRECISION) + 1];
        for b in 0..16 {
            let (d, bucket) = (a.div[b] as usize, b * BUCKET as usize);
            let own = cum[b] as usize;
            for k in 0..d {
                slots[own + k] = (bucket + k) as u16;
            }
            let other = cum[usize::from(a.alias[b])] as usize + a.second[b] as usize;
            for k in d..BUCKET as usize {
                slots[other + k - d] = (bucket + k) as u16;
            }
        }
        EncModel {
            meta,
            rcp,
            slots,
            alias: a,
        }
    }

    /// Code nibble `v` onto state `x`, its word, if any, into `buf[*at - 1]`. The word is
    /// written whatever the state, and `*at` moves only when it is one: no branch to
    /// mispredict.
    #[inline(always)]
    fn put(&self, x: &mut u32, v: usize, buf: &mut [u8], at: &mut usize) {
        let (meta, rcp) = (self.meta[v], self.rcp[v]);
        let f = meta & 0x1FFF;
        let emit = *x >= f << 18;
        buf[2 * *at - 2..2 * *at].copy_from_slice(&(*x as u16).to_le_bytes());
        *at -= usize::from(emit);
        let y = if emit { *x >> 16 } else { *x };
        let q = ((u64::from(y) * u64::from(rcp)) >> 32) as u32 >> ((meta >> 27) & 15);
        let q = q + (meta >> 31);
        let r = y - q * f;
        let i = ((meta >> 13) & 0x1FFF) + r;
        *x = (q << PRECISION) | u32::from(self.slots[i as usize & 0x1FFF]);
    }
}

/// The 16 bytes of round `r` of `words` as one integer: nibble `i` of the round is bits
/// `4i .. 4i + 3`.
#[inline(always)]
fn round_bits(words: &[u64], r: usize) -> u128 {
    u128::from(words[2 * r]) | u128::from(*words.get(2 * r + 1).unwrap_or(&0)) << 64
}

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
    // The whole rounds in blocks, each with room for a word per nibble below it (the
    // vector encoders' tables built once).
    #[cfg(target_arch = "x86_64")]
    let avx512 = match kernel {
        Kernel::Avx512 => crate::entropy::dense::encode_avx512::Encoder::new(model),
        _ => None,
    };
    let mut end = whole;
    while end > 0 {
        let start = end.saturating_sub(BLOCK_ROUNDS);
        buf.reserve(ROUND * (end - start));
        let block = &words[2 * start..2 * end];
        let (b, at) = (&mut buf.buf, &mut buf.at);
        let vector = match kernel {
            Kernel::Scalar => false,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => crate::entropy::dense::encode_avx2::encode_rounds(
                model,
                &mut x,
                block,
                end - start,
                b,
                at,
            ),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => match &avx512 {
                Some(encoder) => {
                    encoder.encode_rounds(&mut x, block, end - start, b, at);
                    true
                }
                None => false,
            },
        };
        if !vector {
            // Eight lanes (one nibble position of each 16-bit piece) at a time, the lanes
            // in locals so that their chains overlap.
            for r in (0..end - start).rev() {
                let bits = round_bits(block, r);
                for g in (0..4).rev() {
                    let mut lanes: [u32; 8] = x[8 * g..8 * g + 8].try_into().expect("8 lanes");
                    for (i, lane) in lanes.iter_mut().enumerate().rev() {
                        model.put(lane, (bits >> (16 * i + 4 * g)) as usize & 15, b, at);
                    }
                    x[8 * g..8 * g + 8].copy_from_slice(&lanes);
                }
            }
        }
        end = start;
    }
    let payload = buf.written();
    out.reserve(STATE_BYTES + payload.len());
    for s in x {
        out.extend_from_slice(&s.to_le_bytes());
    }
    out.extend_from_slice(payload);
}

/// Rounds coded between two checks of the room for words (16 KiB of nibbles).
const BLOCK_ROUNDS: usize = 1024;

/// Words written little-endian from the end of a buffer backwards (so that the payload's
/// words come out in order, in one copy), which grows at its front when a block of rounds
/// might not fit: a word per nibble is the most a payload can have, but four times or
/// more what a dense filter's has, and zeroing that much cost a tenth of an encode.
struct Backwards {
    buf: Vec<u8>,
    /// Where the last word written starts, in words.
    at: usize,
}

impl Backwards {
    /// Room for `words` (and `ROOM`), in the thread's scratch memory: what an earlier encode
    /// left there is overwritten before it is read, so it is not zeroed again.
    fn new(words: usize) -> Self {
        let len = ROOM + words;
        let mut buf = crate::entropy::scratch::take_bytes_unzeroed(2 * len);
        buf.truncate(buf.len() / 2 * 2);
        let at = buf.len() / 2;
        Backwards { buf, at }
    }

    /// Make room for `words` more below the ones written, and the vector encoders' `ROOM`.
    fn reserve(&mut self, words: usize) {
        if self.at >= ROOM + words {
            return;
        }
        let written = self.buf.len() - 2 * self.at;
        // In words: twice what it had (its length in bytes), or what is asked if more.
        let len = self.buf.len().max(ROOM + words + written / 2);
        let mut grown = vec![0; 2 * len];
        grown[2 * len - written..].copy_from_slice(&self.buf[2 * self.at..]);
        self.at = len - written / 2;
        self.buf = grown;
    }

    fn written(&self) -> &[u8] {
        &self.buf[2 * self.at..]
    }
}

impl Drop for Backwards {
    fn drop(&mut self) {
        crate::entropy::scratch::give_bytes(std::mem::take(&mut self.buf));
    }
}

/// Words that a payload of `n` nibbles coded with `model` is expected to have (the model's
/// cost of its own density, and 1% more), and the most a block of rounds can add, which
/// each block makes room for. Only the buffer's first size: a payload that needs more
/// gets it.
fn expected_words(n: usize, model: &EncModel) -> usize {
    // The model's q0, from its frequencies: f(0) / 2^13 = q0^4.
    let f0 = f64::from(model.meta[0] & 0x1FFF) / f64::from(1u32 << PRECISION);
    let p0 = f0.powf(0.25).clamp(1e-9, 1.0 - 1e-9);
    let bits = n as f64 * 4.0 * crate::theory::entropy(p0) * 1.01;
    ((bits / 16.0) as usize + ROUND * BLOCK_ROUNDS).min(n + 1)
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
        Kernel::Avx2 => {
            crate::entropy::dense::avx2::decode_rounds(model, &mut x, payload, &mut pos, whole)
        }
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx512 => {
            crate::entropy::dense::avx512::decode_rounds(model, &mut x, payload, &mut pos, whole)
        }
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
    fn the_alias_table_splits_every_symbol_exactly() {
        for q0 in [
            1u16, 2, 100, 20000, 32768, 45875, 58982, 62259, 65000, 65535,
        ] {
            let f = frequencies(q0);
            assert_eq!(f.iter().sum::<u32>(), 1 << 13, "q0 {q0}");
            assert!(f.iter().all(|&v| (1..1 << 13).contains(&v)));
            let a = Alias::new(&f);
            let mut count = [0u32; 16];
            for b in 0..16 {
                assert!((1..=512).contains(&a.div[b]));
                count[b] += a.div[b];
                count[usize::from(a.alias[b])] += 512 - a.div[b];
                // The second part's slots lie within its symbol's, after its own part.
                let s = usize::from(a.alias[b]);
                assert!(a.div[b] == 512 || (a.second[b] >= a.div[s] && a.second[b] < f[s]));
            }
            assert_eq!(count, f, "q0 {q0}");
            // The encoder's slots (less the padding entry) are a permutation of all slots.
            let e = EncModel::new(q0);
            let mut seen = vec![false; 1 << 13];
            for &s in &e.slots[..1 << 13] {
                assert!(!seen[usize::from(s)]);
                seen[usize::from(s)] = true;
            }
        }
    }

    #[test]
    fn reciprocal_division_is_exact() {
        // Every frequency a model can hold, against states up to the largest an encoder
        // divides (below f * 2^18 <= 2^31), at and around multiples of f.
        let mut s = 7u64;
        let e = EncModel::new(30000);
        for fv in 1..1u32 << PRECISION {
            let (r, shift, corr) = if fv == 1 {
                (u32::MAX, 0, 1)
            } else {
                let b = 32 - (fv - 1).leading_zeros();
                ((1u64 << (b + 31)).div_ceil(u64::from(fv)) as u32, b - 1, 0)
            };
            let top = (fv << 18) - 1;
            let mut ys = vec![4, 4 * fv, top, top - fv, top / fv * fv, top / fv * fv - 1];
            for _ in 0..8 {
                s = crate::filter::hashing::fmix64(s + 1);
                let k = 4 + (s % u64::from(top / fv - 4)) as u32;
                ys.extend([k * fv - 1, k * fv, k * fv + fv - 1]);
            }
            for y in ys {
                let q = (((u64::from(y) * u64::from(r)) >> 32) as u32 >> shift) + corr;
                assert_eq!(q, y / fv, "y={y} f={fv}");
            }
        }
        // The model's own entries are these.
        for v in 0..16 {
            let f = e.meta[v] & 0x1FFF;
            let y = (f << 18) - 1;
            let q = (((u64::from(y) * u64::from(e.rcp[v])) >> 32) as u32
                >> ((e.meta[v] >> 27) & 15))
                + (e.meta[v] >> 31);
            assert_eq!(q, y / f);
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
    fn this_cpu_runs_every_kernel_it_has() {
        // On a CPU with AVX-512 (the development machine's), all three kernels are
        // compared above; elsewhere, those it has.
        let names: Vec<_> = Kernel::available().iter().map(|k| k.name()).collect();
        println!("coding 8's kernels on this CPU: {names:?}");
        assert_eq!(names[0], "scalar");
        assert_eq!(Kernel::fastest().name(), *names.last().unwrap());
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

    /// Expected bits per nibble of the precision-13 model over the entropy, as a fraction.
    fn model_cost(q0: u16) -> f64 {
        let f = frequencies(q0);
        let p = f64::from(q0) / 65536.0;
        let (mut cost, mut entropy) = (0.0, 0.0);
        for (v, &fv) in f.iter().enumerate() {
            let o = (v as u32).count_ones() as i32;
            let pv = p.powi(4 - o) * (1.0 - p).powi(o);
            cost -= pv * (f64::from(fv) / 8192.0).log2();
            entropy -= pv * pv.log2();
        }
        cost / entropy - 1.0
    }

    #[test]
    fn precision_13_costs() {
        // Print with `cargo test --lib precision_13_costs -- --nocapture`.
        for (p0, most) in [
            (0.5, 1e-9),
            (0.7, 0.000005),
            (0.9, 0.00002),
            (0.95, 0.0002),
            (0.99, 0.01),
        ] {
            let q0 = (p0 * 65536.0f64).round() as u16;
            let c = model_cost(q0);
            println!(
                "p0 = {p0}: precision 13 over the entropy: {:.4}%",
                c * 100.0
            );
            assert!(c < most, "p0 = {p0}: {c}");
            let h = crate::theory::entropy(f64::from(q0) / 65536.0);
            assert!((excess_bits(q0) / (4.0 * h) - c).abs() < 1e-9);
        }
    }
}
