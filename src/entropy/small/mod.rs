//! Coding 9, *small*: the nibbles of a bit array coded by four interleaved tabled ANS
//! (tANS) states over one bit stream, at precision 12 (spec §4.13).
//!
//! Coding 3 (one rANS state, [`symbols`](super::symbols)) costs a few bytes over the
//! entropy but decodes one dependent chain of a lookup, a 64-bit multiply and a refill per
//! byte; codings 6 and 8 run several chains but their final states cost 32 and 128 bytes,
//! too many for a frame of a few kilobytes. A tANS state is an index into a table of 4096
//! entries, so its flush is 12 bits and the encoder's starting state costs nothing, and a
//! decoding step is three lookups, a mask of the bit buffer and an add, with no multiply:
//!
//! * **Nibble symbols** with the binomial model of coding 8 at precision 12
//!   ([`nibble_frequencies`]), dealt to the 4096
//!   positions with a stride of 2563 (zstd's FSE spreads its tables the same way).
//! * **Four states**, nibble `t` on state `t mod 4`: four independent chains, and four
//!   nibbles (at most 48 bits) read from one 64-bit load of the stream.
//! * The stream is read least significant bit first; the encoder writes it backwards
//!   (last nibble first) and reverses its pushes once at the end.
//! * **The last twelve nibbles ride in the states.** The encoder's starting states are
//!   free: each starts as its chain's last three nibbles, which the decoder reads from the
//!   states it ends in instead of coding them (about 7 bits a state saved at the paper's
//!   density, 3 bytes a payload).
//!
//! A payload is canonical: the decoder accepts it only if every state ends holding no more
//! than its carried nibbles, the bits read fill the payload to its last byte and the padding
//! is zero.

use crate::entropy::codec::{per_byte_bound, BitCodec, BitDecoder, Codec, Job};
use crate::entropy::model::{nibble_frequencies, Counts};
use crate::entropy::profile::{Profile, Status};
use crate::entropy::tans_stream::{peek, run, write_runs};
use crate::entropy::PayloadError;
#[cfg(any(test, feature = "internals"))]
use crate::entropy::{ByKernel, Decoded};

// The BMI2 build of this coding's encoder and decoder, chosen at run time and held to the
// portable code here by the tests and the fuzz target `kernel_twins`.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
pub(crate) mod bmi2;

// The decoding table built sixteen positions at a time with AVX-512, held to the portable
// build by the tests.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod table_avx512;

/// The table's row of coding 9.
pub(crate) const CODEC: Codec = Codec {
    id: 9,
    name: "small",
    profile: Profile::Full,
    status: Status::Active,
    // Nibbles by four tANS states: a few bytes of states, for the small dense arrays whose
    // coding-6 states are over the margin.
    speed_rank: |_| 50,
    has_q0: true,
    q0_measured: true,
    // One stream of bits for the whole array: not chunked.
    chunk_bytes: None,
    // Four 12-bit states, then a stream of bits.
    well_formed: |_, _, len| len >= MIN_LEN as u64,
    work_bound: per_byte_bound,
    bits: Some(BitCodec {
        predict,
        encode,
        decoder: |q0, _| Box::new(DecModel::new(q0)),
    }),
    counters: None,
};

/// The size model: the cross entropy less the last nibbles, which the four 12-bit final
/// states carry uncoded; the precision-12 model's excess over the bits' own model with the
/// table's own loss (its spread of states is not the ideal one) per nibble; the states and
/// the padding.
fn predict(counts: &Counts) -> u64 {
    let len = counts.len;
    let carried = len.min(4 * CARRIED as u64) as f64;
    (counts.cross_entropy_bits() * (1.0 - carried / len as f64) / 8.0
        + len.div_ceil(4) as f64 * (counts.nibble_excess_bits(PRECISION) + SPREAD_BITS) / 8.0
        + FIXED)
        .max(0.0)
        .ceil() as u64
}

/// Bytes a payload takes over its symbols' cost: four 12-bit final states less what they
/// carry, and the padding (measured by the test `fixed_costs_are_measured`).
const FIXED: f64 = 6.0;

/// Bits per nibble that the table costs over its model: the spread by a stride is not the
/// ideal one, and the loss depends on the frequencies. Measured at 10^6 bits: 1 to 7 bytes
/// per 250 000 nibbles, the most at skewed densities (the test `fixed_costs_are_measured`);
/// this is the high end, so that the encoder's choice errs away from coding 9.
pub(crate) const SPREAD_BITS: f64 = 0.000_25;

impl BitDecoder for DecModel {
    /// Decode with BMI2 where the CPU has it.
    fn decode(&self, job: Job<'_>) -> Result<(), PayloadError> {
        let (payload, len, out) = job.parts();
        #[cfg(target_arch = "x86_64")]
        if let Some(result) = crate::entropy::small::bmi2::decode(payload, len, self, out) {
            return result;
        }
        decode_portable(payload, len, self, out)
    }
}

/// Precision of the model: frequencies sum to `2^12`, the table's size.
pub(crate) const PRECISION: u32 = 12;

const SIZE: usize = 1 << PRECISION;

/// The stride that deals the positions to the nibbles (odd, so it visits them all).
const STRIDE: usize = 2563;

/// Interleaved states.
pub(crate) const STATES: usize = 4;

/// Bytes of the four 12-bit states every payload starts with: the smallest payload.
pub(crate) const MIN_LEN: usize = 6;

/// Nibbles the states carry: the last three of each chain.
pub(crate) const CARRIED: usize = 3 * STATES;

/// The first carried nibble of an array of `n` nibbles (the decoder's table steps stop
/// there).
fn carried_from(n: usize) -> usize {
    n.saturating_sub(CARRIED)
}

/// Where nibble `t` (at or past `from`, the first carried) sits in its state: its shift.
fn carried_shift(t: usize, from: usize) -> usize {
    4 * ((t - from) / STATES)
}

/// The nibble of each table position.
fn spread(f: &[u32; 16]) -> [u8; SIZE] {
    let mut sym = [0u8; SIZE];
    deal(f, |u, v| sym[u] = v);
    sym
}

/// Deal the positions to the nibbles: nibble `v` takes `f(v)` of them, the `j`-th dealt
/// being `j * STRIDE mod SIZE` (computed, not carried from the last), `v` in increasing
/// order; `each(u, v)` for each.
#[inline(always)]
fn deal(f: &[u32; 16], mut each: impl FnMut(usize, u8)) {
    let mut j = 0;
    for (v, &fv) in f.iter().enumerate() {
        let end = j + fv as usize;
        for j in j..end {
            each(j * STRIDE % SIZE, v as u8);
        }
        j = end;
    }
    debug_assert_eq!(j, SIZE);
}

/// The decoding tables of one `q0`: per position `u`, the count of bits its step reads
/// (`nb`, at most 12), `base` (below 4096: the next state is `base` plus the bits read)
/// and the nibble it decodes, each in its own table so that a step reads each with a load
/// and no shift or mask (a shift of the entry on a state's chain costs it three cycles of
/// the ten or so a step takes).
pub(crate) struct DecModel {
    table: Box<Table>,
}

#[derive(PartialEq, Eq, Debug)]
struct Table {
    nb: [u8; SIZE],
    base: [u16; SIZE],
    nibble: [u8; SIZE],
}

impl Table {
    /// A table of zeros, for a build to fill.
    fn zeroed() -> Box<Table> {
        Box::new(Table {
            nb: [0; SIZE],
            base: [0; SIZE],
            nibble: [0; SIZE],
        })
    }
}

impl DecModel {
    /// The table of `q0`, built with AVX-512 or BMI2 where the CPU has them.
    pub(crate) fn new(q0: u16) -> Self {
        #[cfg(target_arch = "x86_64")]
        if let Some(model) = table_avx512::model(q0) {
            return model;
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(model) = crate::entropy::small::bmi2::model(q0) {
            return model;
        }
        Self::portable(q0)
    }

    /// [`DecModel::new`] in the target's baseline instructions (inlined into the BMI2
    /// kernel too, which compiles this same code with BMI2).
    ///
    /// Position `u` of nibble `v` is its `k`-th in increasing order, `k` counted from
    /// `f(v)` (§4.13). Counted in one pass, the count of the most frequent nibble (more
    /// than half the positions at the paper's density) would be one chain through memory;
    /// the positions are counted in eight sections at once instead, each section's counts
    /// starting where the sections before it end.
    #[inline(always)]
    pub(crate) fn portable(q0: u16) -> Self {
        const SECTIONS: usize = 8;
        const LEN: usize = SIZE / SECTIONS;
        let f = nibble_frequencies(q0, PRECISION);
        let mut table = Table::zeroed();
        // Each section's count of each nibble, then where its positions' `k` start.
        let mut next = [[0u32; 16]; SECTIONS];
        deal(&f, |u, v| {
            table.nibble[u] = v;
            next[u / LEN][usize::from(v)] += 1;
        });
        let mut at = f;
        for counts in next.iter_mut() {
            for (n, a) in counts.iter_mut().zip(at.iter_mut()) {
                (*n, *a) = (*a, *a + *n);
            }
        }
        for i in 0..LEN {
            for (c, counts) in next.iter_mut().enumerate() {
                let u = c * LEN + i;
                let k = &mut counts[usize::from(table.nibble[u] & 15)];
                // f(v) <= k < 2 f(v) <= 2^13: nb in 0 ..= 12, base below 4096.
                let nb = PRECISION + 1 - (u32::BITS - k.leading_zeros());
                table.nb[u] = nb as u8;
                table.base[u] = ((*k << nb) - SIZE as u32) as u16;
                *k += 1;
            }
        }
        DecModel { table }
    }
}

/// The encoding tables of one `q0`.
pub(crate) struct EncModel {
    /// Per nibble v, `(most << 16) - (f(v) << most)` with `most = 12 - floor(log2 f(v))`,
    /// the most bits it pushes: `(X + that) >> 16` is the count it pushes from state `X`
    /// (one fewer when `X >> most` falls below `f(v)`; zstd's FSE counts the same way); and
    /// `cum(v) - f(v)`, where `X >> count` (in `f(v) .. 2 f(v)`) indexes `next`.
    push: [(u32, i32); 16],
    /// `next[cum(v) + i]`: `4096 +` the `i`-th position of nibble `v`, in increasing order.
    next: Box<[u16; SIZE]>,
}

impl EncModel {
    pub(crate) fn new(q0: u16) -> Self {
        let f = nibble_frequencies(q0, PRECISION);
        let mut cum = [0u32; 16];
        for v in 1..16 {
            cum[v] = cum[v - 1] + f[v - 1];
        }
        let push = std::array::from_fn(|v| {
            let most = PRECISION - f[v].ilog2();
            ((most << 16) - (f[v] << most), cum[v] as i32 - f[v] as i32)
        });
        let mut at = cum;
        let mut next = Box::new([0u16; SIZE]);
        for (u, &v) in spread(&f).iter().enumerate() {
            next[at[usize::from(v)] as usize & (SIZE - 1)] = (SIZE + u) as u16;
            at[usize::from(v)] += 1;
        }
        EncModel { push, next }
    }

    /// Code nibble `v` onto state `x` (in `[2^12, 2^13)`): the bits it pushes and their
    /// count.
    #[inline(always)]
    fn put(&self, x: &mut u32, v: usize) -> (u64, u32) {
        let (delta_bits, delta_find) = self.push[v];
        // x - (f(v) << most) is in (-2^13, 2^13) and most >= 1 (f(v) < 2^12): the sum is
        // positive and its top half is most or most - 1; the index is in
        // cum(v) .. cum(v) + f(v), below 4096.
        let c = (*x + delta_bits) >> 16;
        let bits = u64::from(*x & ((1 << c) - 1));
        let i = (*x >> c) as i32 + delta_find;
        *x = u32::from(self.next[i as usize & (SIZE - 1)]);
        (bits, c)
    }
}

/// Nibble `t` of `words`.
#[inline(always)]
fn nibble(words: &[u64], t: usize) -> usize {
    (words[t / 16] >> (4 * (t % 16))) as usize & 15
}

/// Append the coding-9 payload of the first `m` bits of `words` (bits past `m` zero) to
/// `out`, with BMI2 where the CPU has it.
pub(crate) fn encode(words: &[u64], m: u64, q0: u16, out: &mut Vec<u8>) {
    #[cfg(target_arch = "x86_64")]
    if crate::entropy::small::bmi2::encode(words, m, q0, out) {
        return;
    }
    encode_portable(words, m, q0, out)
}

/// [`encode`] in the target's baseline instructions (inlined into the BMI2 kernel too).
#[inline(always)]
pub(crate) fn encode_portable(words: &[u64], m: u64, q0: u16, out: &mut Vec<u8>) {
    debug_assert_eq!(words.len(), crate::filter::bits::words_for(m));
    let model = EncModel::new(q0);
    let n = m.div_ceil(4) as usize;
    // The encoder's pushes, last nibble first; a group of four nibbles as one run, whose
    // first pushed bits the decoder reads last.
    let mut runs = crate::entropy::scratch::take_u64(n / 4 + 4);
    // The states start as the carried nibbles.
    let coded = carried_from(n);
    let mut x = [SIZE as u32; STATES];
    for t in coded..n {
        x[t % STATES] |= (nibble(words, t) << carried_shift(t, coded)) as u32;
    }
    for t in (4 * (coded / 4)..coded).rev() {
        let (bits, c) = model.put(&mut x[t % STATES], nibble(words, t));
        runs.push(run(bits, c));
    }
    let [mut x0, mut x1, mut x2, mut x3] = x;
    for g in (0..coded / 4).rev() {
        let v = (words[g / 4] >> (16 * (g % 4))) as usize;
        let (b3, c3) = model.put(&mut x3, v >> 12 & 15);
        let (b2, c2) = model.put(&mut x2, v >> 8 & 15);
        let (b1, c1) = model.put(&mut x1, v >> 4 & 15);
        let (b0, c0) = model.put(&mut x0, v & 15);
        let bits = b0 | b1 << c0 | b2 << (c0 + c1) | b3 << (c0 + c1 + c2);
        runs.push(run(bits, c0 + c1 + c2 + c3));
    }
    // The four states, state 0 read first.
    let states = [x0, x1, x2, x3].map(|s| u64::from(s) - SIZE as u64);
    runs.push(run(
        states[0] | states[1] << 12 | states[2] << 24 | states[3] << 36,
        4 * PRECISION,
    ));
    write_runs(&runs, out);
    crate::entropy::scratch::give_u64(runs);
}

/// One decoding step of state `u` (below 4096) from the low bits of `bits`: the next
/// state.
#[inline(always)]
fn step(table: &Table, u: usize, bits: u64) -> usize {
    usize::from(table.base[u]) + (bits & ((1 << table.nb[u]) - 1)) as usize
}

/// Four steps, one per state, from the low bits of `bits`: the group's four nibbles as 16
/// bits, and the count of bits read. The states' bits start where the counts of the
/// states before them end: sums of the counts, so that no state waits for the shifts of
/// the others.
#[inline(always)]
fn group(table: &Table, s: &mut [usize; STATES], bits: u64) -> (u64, u32) {
    // A state is below 4096: `base + read(nb)` is below `(k + 1) 2^nb <= 8192`, less
    // 4096 (the mask only spares a bounds check).
    let u = s.map(|s| s & (SIZE - 1));
    let nb = u.map(|u| u32::from(table.nb[u]));
    let (b, c, d) = (nb[0], nb[0] + nb[1], nb[0] + nb[1] + nb[2]);
    *s = [
        step(table, u[0], bits),
        step(table, u[1], bits >> b),
        step(table, u[2], bits >> c),
        step(table, u[3], bits >> d),
    ];
    let v = u.map(|u| u64::from(table.nibble[u]));
    (v[0] | v[1] << 4 | v[2] << 8 | v[3] << 12, d + nb[3])
}

/// Decode a coding-9 payload of `m` bits into `out` (exactly `ceil(m / 64)` words, every
/// one overwritten; bits past `m` are zero) in the target's baseline instructions (inlined
/// into the BMI2 kernel too). On error `out` holds garbage.
#[inline(always)]
pub(crate) fn decode_portable(
    payload: &[u8],
    m: u64,
    model: &DecModel,
    out: &mut [u64],
) -> Result<(), PayloadError> {
    debug_assert_eq!(out.len(), crate::filter::bits::words_for(m));
    if payload.len() < MIN_LEN {
        return Err("small payload is shorter than its four states");
    }
    let table = &*model.table;
    let mut at = 0u64;
    let mut u = [0usize; STATES];
    for s in u.iter_mut() {
        *s = (peek(payload, at) & ((1 << PRECISION) - 1)) as usize;
        at += u64::from(PRECISION);
    }
    let n = m.div_ceil(4) as usize;
    let coded = carried_from(n);
    // Whole words (16 nibbles, four groups of four, each group from one load of the
    // stream at its position).
    let whole = coded / 16;
    for word in out[..whole].iter_mut() {
        let mut v = 0u64;
        for q in 0..4 {
            let (nibbles, read) = group(table, &mut u, peek(payload, at));
            v |= nibbles << (16 * q);
            at += u64::from(read);
        }
        *word = v;
    }
    // The rest (under 28 nibbles, in at most two words): coded a nibble at a time up to
    // the carried ones, which the states hold.
    out[whole..].fill(0);
    for k in 16 * whole..coded {
        let s = &mut u[k % STATES];
        let u = *s & (SIZE - 1);
        *s = step(table, u, peek(payload, at));
        out[k / 16] |= u64::from(table.nibble[u]) << (4 * (k % 16));
        at += u64::from(table.nb[u]);
    }
    let mut left = u;
    for t in coded..n {
        let s = t % STATES;
        out[t / 16] |= ((u[s] >> carried_shift(t, coded)) as u64 & 15) << (4 * (t % 16));
        left[s] >>= 4;
    }
    let len = payload.len() as u64;
    if at > 8 * len {
        return Err("small payload ends before the last nibble");
    }
    if left != [0; STATES] {
        return Err("small payload's states hold more than the nibbles they carry");
    }
    if at.div_ceil(8) != len {
        return Err("small payload does not end at its last byte");
    }
    if !at.is_multiple_of(8) && payload[payload.len() - 1] >> (at % 8) != 0 {
        return Err("small payload's padding bits are not zero");
    }
    crate::entropy::check_past_m(out, m)
}

#[cfg(any(test, feature = "internals"))]
/// The coding-9 payloads of the first `m` bits of `words` by the portable encoder and, where
/// the CPU has BMI2, by the BMI2 one, `q0` at least 1: all must be equal.
pub fn encode_kernels(words: &[u64], m: u64, q0: u16) -> ByKernel<Vec<u8>> {
    let mut portable = Vec::new();
    encode_portable(words, m, q0.max(1), &mut portable);
    let mut all = vec![("portable", portable)];
    #[cfg(target_arch = "x86_64")]
    {
        let mut bmi2 = Vec::new();
        if crate::entropy::small::bmi2::encode(words, m, q0.max(1), &mut bmi2) {
            all.push(("bmi2", bmi2));
        }
    }
    all
}

#[cfg(any(test, feature = "internals"))]
/// A payload of `m` bits decoded by the portable decoder (its table built portably) and,
/// where the CPU has BMI2, by the BMI2 one (its table built with BMI2), `q0` at least 1:
/// all results must be equal, words or error.
pub fn decode_kernels(payload: &[u8], m: u64, q0: u16) -> ByKernel<Decoded> {
    let words = crate::filter::bits::words_for(m);
    let mut a = vec![0u64; words];
    let ra = decode_portable(payload, m, &DecModel::portable(q0.max(1)), &mut a).map(|()| a);
    let mut all = vec![("portable", ra)];
    #[cfg(target_arch = "x86_64")]
    {
        let mut b = vec![0u64; words];
        let model = DecModel::new(q0.max(1));
        if let Some(rb) = crate::entropy::small::bmi2::decode(payload, m, &model, &mut b) {
            all.push(("bmi2", rb.map(|()| b)));
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::bits::words_for;

    use crate::entropy::testing::{pseudo_random_words as random_words, SpecBits, Tans};

    fn enc(words: &[u64], m: u64, q0: u16) -> Vec<u8> {
        let mut out = Vec::new();
        encode(words, m, q0, &mut out);
        out
    }

    fn dec(payload: &[u8], m: u64, q0: u16) -> Result<Vec<u64>, PayloadError> {
        let mut out = vec![0u64; words_for(m)];
        let job = Job {
            payload,
            len: m,
            out: &mut out,
            zeroed: false,
        };
        DecModel::new(q0).decode(job).map(|()| out)
    }

    /// The decoder of §4.13 as written: the table built by its pseudocode, one bit at a
    /// time, every check.
    fn spec_decode(payload: &[u8], m: u64, q0: u16) -> Option<Vec<u64>> {
        let f = nibble_frequencies(q0, 12);
        let mut sym = [0usize; 4096];
        let mut pos = 0;
        for (v, &fv) in f.iter().enumerate() {
            for _ in 0..fv {
                sym[pos] = v;
                pos = (pos + 2563) % 4096;
            }
        }
        let mut next = f;
        let (mut nb, mut base) = ([0u32; 4096], [0u32; 4096]);
        for u in 0..4096 {
            let k = next[sym[u]];
            next[sym[u]] += 1;
            nb[u] = 12 - (31 - k.leading_zeros());
            base[u] = k * (1 << nb[u]) - 4096;
        }
        let mut bits = SpecBits::new(payload);
        let mut read = |c: u32| bits.read(c);
        let mut u = [0u32; 4];
        for s in u.iter_mut() {
            *s = read(12)?;
        }
        let mut words = vec![0u64; words_for(m)];
        let n = m.div_ceil(4) as usize;
        let from = n.saturating_sub(12);
        for t in 0..from {
            let s = t % 4;
            let v = sym[u[s] as usize];
            u[s] = base[u[s] as usize] + read(nb[u[s] as usize])?;
            words[t / 16] |= (v as u64) << (4 * (t % 16));
        }
        let mut r = [0u32; 4];
        for t in from..n {
            let v = (u[t % 4] >> (4 * ((t - from) / 4))) & 15;
            r[t % 4] += 1;
            words[t / 16] |= u64::from(v) << (4 * (t % 16));
        }
        let ok = (0..4).all(|s| u[s] >> (4 * r[s]) == 0)
            && bits.ends_at_last_byte()
            && (m.is_multiple_of(64) || words[words.len() - 1] >> (m % 64) == 0);
        ok.then_some(words)
    }

    const TANS: Tans = Tans {
        enc,
        dec,
        spec_decode,
        encode_kernels,
        decode_kernels,
        min_len: MIN_LEN,
    };

    #[test]
    fn round_trips_and_agrees_with_the_spec_decoder() {
        TANS.round_trips(&[
            (1u64, 512),
            (3, 307),
            (4, 102),
            (5, 512),
            (63, 205),
            (64, 136),
            (65, 136),
            (1000, 512),
            (4099, 51),
            (140_000, 136),
            (100_003, 10),
        ]);
    }

    #[test]
    fn the_bmi2_and_portable_kernels_agree() {
        for q0 in (1..=65535u16).step_by(97).chain([65535]) {
            assert_eq!(
                DecModel::new(q0).table,
                DecModel::portable(q0).table,
                "q0 {q0}"
            );
        }
        TANS.kernels_agree();
    }

    #[test]
    fn every_flip_is_rejected_or_another_array_with_another_payload() {
        TANS.every_flip_is_rejected_or_another_array();
    }

    #[test]
    fn the_table_deals_every_position_and_sizes_hold() {
        for q0 in [1u16, 2, 1000, 32768, 57000, 65000, 65535] {
            let f = nibble_frequencies(q0, PRECISION);
            let sym = spread(&f);
            for (v, &fv) in f.iter().enumerate() {
                let dealt = sym.iter().filter(|&&s| usize::from(s) == v).count();
                assert_eq!(dealt as u32, fv, "q0 {q0} nibble {v}");
            }
        }
        // A 17.5 KB array of the paper's density: a few bytes over the bound.
        let m = 140_000;
        let words = random_words(m, 137, 3);
        let ones: u64 = words.iter().map(|w| u64::from(w.count_ones())).sum();
        let q0 = ((m - ones) * 65536 / m) as u16;
        let p = (ones as f64) / m as f64;
        let bound = m as f64 * crate::theory::entropy(p) / 8.0;
        let len = enc(&words, m, q0).len() as f64;
        assert!(len > bound && len < bound + 16.0, "{len} against {bound}");
    }
}
