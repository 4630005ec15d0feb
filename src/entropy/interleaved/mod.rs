//! Coding 6, *known-p interleaved*: the byte-symbol model of coding 3 (spec §4.5) coded by
//! four interleaved rANS states, for encoding and decoding at hundreds of MB/s.
//!
//! The model is [`SymbolTable`]: 256 byte symbols (and one symbol of `m mod 8` bits at the
//! end) whose frequencies out of `2^24` come from the header's `q0` by integer arithmetic.
//! Symbol `t` is coded by state `t mod 4`, so a decoder has four independent dependency
//! chains to overlap; all four share one stream of 32-bit words. Each state is 64 bits and
//! lives in `[2^31, 2^63)`; a state that falls below `2^31` after decoding a symbol takes in
//! one word (at most one per symbol). This is the `rans64` construction of Fabian Giesen's
//! `ryg_rans`, with the interleaving of his "Interleaved entropy coders" note.
//!
//! * **Decoding** needs no division and no search over the alphabet: the top 12 bits of a
//!   state's 24-bit slot index a 4096-entry table of the first symbol of that slice of
//!   `[0, 2^24)`; a slice that holds a symbol boundary takes a step or two along the
//!   cumulative table (a few percent of the symbols at `p0 = 0.9`). Words are read in place
//!   from the payload bytes, and decoded bytes go straight into the caller's 64-bit words.
//! * **Encoding** replaces the per-symbol division by a multiplication with a precomputed
//!   reciprocal (Alverson's method as in `rans64`), writes into one growing `Vec<u32>` and
//!   reverses it once at the end.
//!
//! `constriction` has no interleaved coder, and its lookup decoder models keep a table entry
//! per slot, which limits them to small precisions (12 bits in its `Small...` aliases, 16 with
//! `u16` probabilities). Those are too coarse for this model: with the same rules (floor, at
//! least 1, remainder to the largest), the expected cost over the entropy is 1.09% at
//! precision 12 and 0.024% at 16 for `p0 = 0.9`, 12.7% and 0.70% for `p0 = 0.99`, against
//! 0.0000% and 0.0018% at precision 24 (computed from the symbol probabilities by the test
//! `precision_24_costs_nothing_where_16_would_not_do`).
//! This module is the small coder that fills that gap; its tests check it against a
//! direct, division-based implementation of the spec's pseudocode.
//!
//! The payload is canonical: a decoder accepts it only if every state ends at `2^31` (where
//! the encoder starts) and every word has been read, so each bit array has one payload.

use crate::entropy::codec::{per_byte_bound, BitCodec, BitDecoder, Codec, Job, CHUNK_BYTES};
use crate::entropy::model::{symbol_tables, SymbolTable, SYMBOL_PRECISION};
use crate::entropy::profile::{Profile, Status};
use crate::entropy::symbol_lookup::{DecModel, DecTable};
use crate::entropy::PayloadError;

/// The table's row of coding 6.
pub(crate) const CODEC: Codec = Codec {
    id: 6,
    name: "known-p-interleaved",
    profile: Profile::Full,
    status: Status::Active,
    // Coding 3's model by four rANS states, table-driven: about as fast as coding 9 to decode
    // (298 against 281 MB/s at m = 10^6, p0 = 0.9) and twice as fast to encode, for 32
    // bytes of states: before coding 9, which takes the arrays whose states are over the
    // margin.
    speed_rank: |_| 40,
    has_q0: true,
    q0_measured: false,
    chunk_bytes: Some(CHUNK_BYTES),
    // Four 64-bit final states, then whole words.
    well_formed: |_, _, len| len.is_multiple_of(4) && len >= STATE_BYTES as u64,
    work_bound: per_byte_bound,
    bits: Some(BitCodec {
        predict: |counts| (counts.cross_entropy_bits() / 8.0 + FIXED).max(0.0).ceil() as u64,
        encode: encode_interleaved,
        decoder: |q0, len| Box::new(DecModel::new(q0, len)),
    }),
    counters: None,
};

/// Bytes a payload takes over its symbols' cost: four 64-bit final states less what they
/// carry, and the last word (measured by the test `fixed_costs_are_measured`).
const FIXED: f64 = 24.0;

impl BitDecoder for DecModel {
    fn decode(&self, job: Job<'_>) -> Result<(), PayloadError> {
        decode(job, self)
    }
}

/// Number of interleaved states.
pub(crate) const LANES: usize = 4;

/// Bytes of the final states at the start of every payload: the smallest payload.
pub(crate) const STATE_BYTES: usize = 8 * LANES;

const PRECISION: u32 = SYMBOL_PRECISION as u32;
/// The lower end of the state interval `[2^31, 2^63)`.
const LOWER: u64 = 1 << 31;

/// Decode one symbol from state `x` and renormalize from `payload` at `*pos`. A read
/// past the end sets `*short` and reads zero (the caller rejects the payload).
#[inline(always)]
fn step(table: &DecTable, x: &mut u64, payload: &[u8], pos: &mut usize, short: &mut bool) -> u64 {
    let (s, y) = table.symbol(*x);
    *x = y;
    if y < LOWER {
        let word = match payload.get(*pos..*pos + 4) {
            Some(w) => u32::from_le_bytes([w[0], w[1], w[2], w[3]]),
            None => {
                *short = true;
                0
            }
        };
        *pos += 4;
        *x = (y << 32) | u64::from(word);
    }
    s
}

/// [`step`] for a caller that holds the next 8 words in `next` (`*k` of them
/// taken): the read happens whether or not it is needed, and arithmetic replaces the
/// unpredictable branch (no compiler turns it back into one).
#[inline(always)]
fn step_block(table: &DecTable, x: &mut u64, next: &[u32; 8], k: &mut usize) -> u64 {
    let (s, y) = table.symbol(*x);
    let word = next[*k & 7];
    let refill = u64::from(y < LOWER);
    *x = (y << (refill << 5)) | (u64::from(word) & refill.wrapping_neg());
    *k += refill as usize;
    s
}

/// Encoding parameters of one symbol (`rans64`'s `Rans64EncSymbol`).
#[derive(Debug, Clone, Copy, Default)]
struct EncSymbol {
    /// A state at or above this emits a word before coding the symbol: `f * 2^39`.
    x_max: u64,
    /// Reciprocal of the frequency, so that `q = mulhi(x, rcp) >> shift = floor(x / f)`.
    rcp: u64,
    shift: u32,
    /// `cum`, plus `2^24 - 1` for frequency 1 (whose reciprocal is `2^64 - 1`).
    bias: u64,
    /// `2^24 - f`.
    cmpl: u64,
}

impl EncSymbol {
    fn new(cum: u32, freq: u32) -> Self {
        let x_max = u64::from(freq) << (63 - PRECISION);
        let cmpl = u64::from((1u32 << PRECISION) - freq);
        if freq < 2 {
            return EncSymbol {
                x_max,
                rcp: u64::MAX,
                shift: 0,
                bias: u64::from(cum) + (1 << PRECISION) - 1,
                cmpl,
            };
        }
        // Alverson, "Integer division using reciprocals": shift = ceil(log2(freq)).
        let shift = 32 - (freq - 1).leading_zeros();
        let f = u64::from(freq);
        let x1 = 1u64 << (shift + 31);
        let t1 = x1 / f;
        let x0 = (f - 1) + ((x1 % f) << 32);
        let t0 = x0 / f;
        EncSymbol {
            x_max,
            rcp: t0 + (t1 << 32),
            shift: shift - 1,
            bias: u64::from(cum),
            cmpl,
        }
    }

    #[inline(always)]
    fn put(&self, x: &mut u64, out: &mut Vec<u32>) {
        if *x >= self.x_max {
            out.push(*x as u32);
            *x >>= 32;
        }
        let q = ((u128::from(*x) * u128::from(self.rcp)) >> 64) as u64 >> self.shift;
        *x += self.bias + q * self.cmpl;
    }
}

/// Encoding table for one symbol width.
struct EncTable {
    symbols: [EncSymbol; 256],
}

impl EncTable {
    fn new(table: &SymbolTable) -> Box<Self> {
        let cum = table.cumulative();
        let mut symbols = [EncSymbol::default(); 256];
        for (v, s) in symbols.iter_mut().enumerate().take(cum.len() - 1) {
            *s = EncSymbol::new(cum[v], cum[v + 1] - cum[v]);
        }
        Box::new(EncTable { symbols })
    }
}

/// The encoding model for bit arrays of a given `q0` and length.
pub(crate) struct EncModel {
    full: Box<EncTable>,
    tail: Option<Box<EncTable>>,
}

impl EncModel {
    pub(crate) fn new(q0: u16, m: u64) -> Self {
        let (full, tail) = symbol_tables(q0, m);
        EncModel {
            full: EncTable::new(&full),
            tail: tail.as_ref().map(EncTable::new),
        }
    }
}

/// Byte `t` of the packed form of `words`.
#[inline(always)]
fn byte_at(words: &[u64], t: u64) -> usize {
    ((words[(t / 8) as usize] >> (8 * (t % 8))) & 0xFF) as usize
}

/// Append the coding-6 payload of the first `m` bits of `words` to `out`. `model` must
/// have been built for the same `m mod 8`.
pub(crate) fn encode(words: &[u64], m: u64, model: &EncModel, out: &mut Vec<u8>) {
    debug_assert_eq!(words.len(), crate::filter::bits::words_for(m));
    let whole = m / 8;
    let mut x = [LOWER; LANES];
    // About the size of the coded data at p0 = 0.9; the vector grows if it needs to.
    let mut stack = crate::entropy::scratch::take_u32((m / 128) as usize + 2 * LANES);
    if let Some(tail) = &model.tail {
        let v = byte_at(words, whole);
        tail.symbols[v].put(&mut x[(whole % LANES as u64) as usize], &mut stack);
    }
    let whole_words = whole / 8;
    for t in (whole_words * 8..whole).rev() {
        let v = byte_at(words, t);
        model.full.symbols[v].put(&mut x[(t % LANES as u64) as usize], &mut stack);
    }
    let syms = &model.full.symbols;
    for &word in words[..whole_words as usize].iter().rev() {
        let [x0, x1, x2, x3] = &mut x;
        syms[(word >> 56) as usize].put(x3, &mut stack);
        syms[((word >> 48) & 0xFF) as usize].put(x2, &mut stack);
        syms[((word >> 40) & 0xFF) as usize].put(x1, &mut stack);
        syms[((word >> 32) & 0xFF) as usize].put(x0, &mut stack);
        syms[((word >> 24) & 0xFF) as usize].put(x3, &mut stack);
        syms[((word >> 16) & 0xFF) as usize].put(x2, &mut stack);
        syms[((word >> 8) & 0xFF) as usize].put(x1, &mut stack);
        syms[(word & 0xFF) as usize].put(x0, &mut stack);
    }
    for &state in x.iter().rev() {
        stack.push((state >> 32) as u32);
        stack.push(state as u32);
    }
    out.reserve(stack.len() * 4);
    for w in stack.iter().rev() {
        out.extend_from_slice(&w.to_le_bytes());
    }
    crate::entropy::scratch::give_u32(stack);
}

/// Decode a coding-6 payload of `m` bits into `out` (exactly `ceil(m / 64)` words, every one
/// overwritten; bits past `m` are zero). `model` must have been built for the same
/// `m mod 8`. On error `out` holds garbage.
pub(crate) fn decode(job: Job<'_>, model: &DecModel) -> Result<(), PayloadError> {
    let (payload, m, out) = job.parts();
    if !payload.len().is_multiple_of(4) || payload.len() < STATE_BYTES {
        return Err("interleaved payload is not whole words or too short for its states");
    }
    let mut x = [0u64; LANES];
    for (j, state) in x.iter_mut().enumerate() {
        let b: [u8; 8] = payload[8 * j..8 * j + 8].try_into().expect("8 bytes");
        *state = u64::from_le_bytes(b);
        if !(LOWER..1 << 63).contains(state) {
            return Err("interleaved payload starts with a state outside [2^31, 2^63)");
        }
    }
    let mut pos = STATE_BYTES;
    let mut short = false;
    let whole = m / 8;
    let whole_words = (whole / 8) as usize;
    let full = &*model.full;
    // A word of output reads at most 8 words of input: while 8 are left, take them at once
    // and let the steps pick from them without checks.
    let mut done = 0;
    for w in out[..whole_words].iter_mut() {
        let Some(block) = payload.get(pos..pos + 32) else {
            break;
        };
        let mut next = [0u32; 8];
        for (n, b) in next.iter_mut().zip(block.chunks_exact(4)) {
            *n = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        let mut k = 0;
        let [x0, x1, x2, x3] = &mut x;
        let mut v = step_block(full, x0, &next, &mut k);
        v |= step_block(full, x1, &next, &mut k) << 8;
        v |= step_block(full, x2, &next, &mut k) << 16;
        v |= step_block(full, x3, &next, &mut k) << 24;
        v |= step_block(full, x0, &next, &mut k) << 32;
        v |= step_block(full, x1, &next, &mut k) << 40;
        v |= step_block(full, x2, &next, &mut k) << 48;
        v |= step_block(full, x3, &next, &mut k) << 56;
        *w = v;
        pos += 4 * k;
        done += 1;
    }
    for w in out[done..whole_words].iter_mut() {
        let [x0, x1, x2, x3] = &mut x;
        let mut v = step(full, x0, payload, &mut pos, &mut short);
        v |= step(full, x1, payload, &mut pos, &mut short) << 8;
        v |= step(full, x2, payload, &mut pos, &mut short) << 16;
        v |= step(full, x3, payload, &mut pos, &mut short) << 24;
        v |= step(full, x0, payload, &mut pos, &mut short) << 32;
        v |= step(full, x1, payload, &mut pos, &mut short) << 40;
        v |= step(full, x2, payload, &mut pos, &mut short) << 48;
        v |= step(full, x3, payload, &mut pos, &mut short) << 56;
        *w = v;
    }
    if let Some(last) = out.get_mut(whole_words) {
        let mut v = 0u64;
        for t in whole_words as u64 * 8..whole {
            let lane = &mut x[(t % LANES as u64) as usize];
            v |= step(full, lane, payload, &mut pos, &mut short) << (8 * (t % 8));
        }
        if let Some(tail) = &model.tail {
            let lane = &mut x[(whole % LANES as u64) as usize];
            v |= step(tail, lane, payload, &mut pos, &mut short) << (8 * (whole % 8));
        }
        *last = v;
    }
    if short {
        return Err("interleaved payload ends before the last symbol");
    }
    if x.iter().any(|&s| s != LOWER) || pos != payload.len() {
        return Err("interleaved payload does not end where the encoder starts");
    }
    Ok(())
}

/// Code the `m` bits of `words` with the multi-bit known-p model and interleaved rANS (coding 6).
pub(crate) fn encode_interleaved(words: &[u64], m: u64, q0: u16, out: &mut Vec<u8>) {
    encode(words, m, &EncModel::new(q0, m), out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entropy::symbol_lookup::SLOT_MASK;
    use crate::entropy::testing::pseudo_random_bits;
    use crate::filter::bits::BitArray;

    /// The symbols of a bit array, each with the table it is coded with.
    fn symbols<'a>(
        m: u64,
        bytes: &[u8],
        tables: &'a (SymbolTable, Option<SymbolTable>),
    ) -> Vec<(usize, &'a SymbolTable)> {
        (0..m.div_ceil(8))
            .map(|t| {
                let table = if t < m / 8 {
                    &tables.0
                } else {
                    tables.1.as_ref().unwrap()
                };
                (usize::from(bytes[t as usize]), table)
            })
            .collect()
    }

    fn cum_freq(t: &SymbolTable, v: usize) -> (u64, u64) {
        let c = t.cumulative();
        (u64::from(c[v]), u64::from(c[v + 1] - c[v]))
    }

    /// The encoder written directly from the spec: divisions, one symbol at a time.
    fn naive_encode(bits: &BitArray, q0: u16) -> Vec<u8> {
        let tables = symbol_tables(q0, bits.len());
        let syms = symbols(bits.len(), &bits.to_bytes(), &tables);
        let mut x = [LOWER; LANES];
        let mut stack = Vec::new();
        for (t, (v, table)) in syms.iter().enumerate().rev() {
            let (c, f) = cum_freq(table, *v);
            let s = &mut x[t % LANES];
            if *s >= f << 39 {
                stack.push(*s as u32);
                *s >>= 32;
            }
            *s = ((*s / f) << 24) + c + *s % f;
        }
        for s in x.iter().rev() {
            stack.push((s >> 32) as u32);
            stack.push(*s as u32);
        }
        stack.iter().rev().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// The decoder written directly from the spec: a linear search for the symbol.
    fn naive_decode(payload: &[u8], m: u64, q0: u16) -> Option<BitArray> {
        let mut words = payload
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()));
        let mut x = [0u64; LANES];
        for s in x.iter_mut() {
            *s = u64::from(words.next()?) | u64::from(words.next()?) << 32;
            if !(LOWER..1 << 63).contains(s) {
                return None;
            }
        }
        let mut bytes = Vec::new();
        let tables = symbol_tables(q0, m);
        let zeros = vec![0; m.div_ceil(8) as usize];
        for (t, (_, table)) in symbols(m, &zeros, &tables).iter().enumerate() {
            let s = &mut x[t % LANES];
            let slot = *s & SLOT_MASK;
            let v = (0..).find(|&v| cum_freq(table, v).0 + cum_freq(table, v).1 > slot)?;
            let (c, f) = cum_freq(table, v);
            *s = f * (*s >> 24) + slot - c;
            if *s < LOWER {
                *s = *s << 32 | u64::from(words.next()?);
            }
            bytes.push(v as u8);
        }
        (x == [LOWER; LANES] && words.next().is_none()).then_some(())?;
        BitArray::from_bytes(&bytes, m).ok()
    }

    fn fast_encode(bits: &BitArray, q0: u16) -> Vec<u8> {
        let mut out = Vec::new();
        encode(
            bits.words(),
            bits.len(),
            &EncModel::new(q0, bits.len()),
            &mut out,
        );
        out
    }

    fn fast_decode(payload: &[u8], m: u64, q0: u16) -> Result<BitArray, PayloadError> {
        let mut words = vec![0u64; crate::filter::bits::words_for(m)];
        decode(
            Job {
                payload,
                len: m,
                out: &mut words,
                zeroed: false,
            },
            &DecModel::new(q0, m),
        )?;
        Ok(BitArray::from_words(words, m).expect("only m bits"))
    }

    /// Expected bits per byte symbol of the spec's model (floor, at least 1, remainder to
    /// the first largest) at `precision`, over the entropy of 8 bits with zero probability
    /// `q0 / 2^16`, as a fraction.
    fn model_cost(q0: u16, precision: u32) -> f64 {
        let f = model_at(q0, precision);
        let p = f64::from(q0) / 65536.0;
        let (mut cost, mut entropy) = (0.0, 0.0);
        for (v, &fv) in f.iter().enumerate() {
            let o = (v as u32).count_ones() as i32;
            let pv = p.powi(8 - o) * (1.0 - p).powi(o);
            cost -= pv * (fv as f64 / f64::from(1u32 << precision)).log2();
            entropy -= pv * pv.log2();
        }
        cost / entropy - 1.0
    }

    /// The spec's byte model (section 4.5) at another precision.
    fn model_at(q0: u16, precision: u32) -> Vec<u128> {
        let (q0, q1) = (u128::from(q0), 65536 - u128::from(q0));
        let mut f: Vec<u128> = (0..256u32)
            .map(|v| {
                let o = v.count_ones();
                ((q0.pow(8 - o) * q1.pow(o)) >> (128 - precision)).max(1)
            })
            .collect();
        let top = (0..256)
            .max_by(|&a, &b| f[a].cmp(&f[b]).then(b.cmp(&a)))
            .unwrap();
        let sum: u128 = f.iter().sum();
        f[top] = f[top] + (1 << precision) - sum;
        f
    }

    #[test]
    fn precision_24_costs_nothing_where_16_would_not_do() {
        // Print with `cargo test --lib precision_24 -- --nocapture`.
        for p0 in [0.5, 0.9, 0.99] {
            let q0 = (p0 * 65536.0f64).round() as u16;
            let costs: Vec<f64> = [12, 16, 24].map(|b| model_cost(q0, b)).to_vec();
            println!(
                "p0 = {p0}: over the entropy at precision 12: {:.4}%, 16: {:.4}%, 24: {:.4}%",
                costs[0] * 100.0,
                costs[1] * 100.0,
                costs[2] * 100.0
            );
            assert!(costs[2] < 0.00005, "precision 24 at p0 = {p0}");
        }
        assert!(
            model_cost(64880, 16) > 0.005,
            "16 bits lose over 0.5% at p0 = 0.99"
        );
        // At precision 24 the model here is the crate's (and the spec's).
        for q0 in [1, 6554, 32768, 58982, 64880, 65535] {
            let t = SymbolTable::new(q0, 8).unwrap();
            let f: Vec<u128> = (0..256).map(|v| u128::from(t.frequency(v))).collect();
            assert_eq!(model_at(q0, 24), f, "q0 = {q0}");
        }
    }

    #[test]
    fn reciprocal_division_is_exact() {
        let mut s = 1u64;
        for freq in (1..=4096u32).chain([65535, 65536, 65537, (1 << 24) - 255, (1 << 23) + 1]) {
            let e = EncSymbol::new(0, freq);
            let f = u64::from(freq);
            // States the encoder divides: [2^31, f * 2^39) after renormalization; check the
            // ends and random points.
            let hi = f << 39;
            let mut xs = vec![LOWER, LOWER + 1, hi - 1, hi - f, hi - f - 1];
            for _ in 0..64 {
                s = crate::filter::hashing::fmix64(s + 1);
                xs.push(LOWER + s % (hi - LOWER));
            }
            for x in xs {
                let q = ((u128::from(x) * u128::from(e.rcp)) >> 64) as u64 >> e.shift;
                let want = x / f;
                if freq == 1 {
                    assert_eq!(q, x - 1);
                } else {
                    assert_eq!(q, want, "x={x} f={freq}");
                }
                let mut y = x;
                e.put(&mut y, &mut Vec::new());
                assert_eq!(y, ((x / f) << 24) + x % f, "x={x} f={freq}");
            }
        }
    }

    #[test]
    fn agrees_with_the_naive_coder_both_ways() {
        for seed in 0..120u64 {
            let m = 1 + seed * seed * 3 + seed % 7;
            let density = crate::filter::hashing::fmix64(seed) % 1025;
            let bits = pseudo_random_bits(m, density, seed);
            let q0 = crate::entropy::model::KnownP::measured(bits.count_zeros(), m);
            let fast = fast_encode(&bits, q0);
            let naive = naive_encode(&bits, q0);
            assert_eq!(fast, naive, "seed {seed} m {m}");
            assert_eq!(naive_decode(&fast, m, q0).as_ref(), Some(&bits));
            assert_eq!(fast_decode(&naive, m, q0).unwrap(), bits);
            // A q0 far from the data still round-trips.
            let other = fast_encode(&bits, 60000);
            assert_eq!(fast_decode(&other, m, 60000).unwrap(), bits);
        }
    }

    #[test]
    fn rejects_what_the_encoder_never_writes() {
        let m = 3000;
        let bits = pseudo_random_bits(m, 100, 5);
        let q0 = crate::entropy::model::KnownP::measured(bits.count_zeros(), m);
        let p = fast_encode(&bits, q0);
        assert!(fast_decode(&p[..p.len() - 4], m, q0).is_err());
        assert!(fast_decode(&p[..p.len() - 1], m, q0).is_err());
        assert!(fast_decode(&[&p[..], &[0, 0, 0, 0]].concat(), m, q0).is_err());
        assert!(fast_decode(&p[..STATE_BYTES - 4], m, q0).is_err());
        let mut high = p.clone();
        high[7] |= 0x80; // state 0 at or above 2^63
        assert!(fast_decode(&high, m, q0).is_err());
        let (mut accepted, mut tried) = (0, 0);
        for i in 0..p.len() {
            for bit in [0, 3, 7] {
                let mut v = p.clone();
                v[i] ^= 1 << bit;
                tried += 1;
                match fast_decode(&v, m, q0) {
                    Ok(other) => {
                        assert_ne!(other, bits, "two payloads for one bit array");
                        accepted += 1;
                    }
                    Err(_) => {
                        assert!(naive_decode(&v, m, q0).is_none(), "naive accepts byte {i}")
                    }
                }
            }
        }
        // A flip that moves a slot into a neighbouring symbol of the same frequency decodes
        // (to other bits); almost every flip leaves some state off its start.
        assert!(accepted * 100 < tried, "{accepted} of {tried} flips decode");
    }

    #[test]
    fn empty_and_tiny_arrays() {
        for m in 1..=80 {
            for bits in [BitArray::new(m), pseudo_random_bits(m, 1024, m)] {
                for q0 in [1u16, 30000, 65535] {
                    let p = fast_encode(&bits, q0);
                    assert_eq!(p.len() % 4, 0);
                    assert!(p.len() >= STATE_BYTES);
                    assert_eq!(fast_decode(&p, m, q0).unwrap(), bits, "m={m} q0={q0}");
                }
            }
        }
    }
}
