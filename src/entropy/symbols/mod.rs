//! Coding 3, *known-p symbols*: the packed bytes of a bit array ANS-coded with the multi-bit
//! known-p model ([`SymbolTable`]).
//!
//! The ANS coder is a stack: the encoder codes symbols last to first, the decoder pops words
//! from the end; words little-endian. The payload is what
//! `constriction::stream::stack::DefaultAnsCoder` (precision 24) writes and reads, but both
//! directions are this module's own loops (the tests hold them to constriction): encoding
//! multiplies by a reciprocal where constriction divides, decoding reads the payload in
//! place with the table-driven symbol lookup of coding 6 (no division, no search) and a
//! refill without a branch while words remain. A decoded payload must leave the coder
//! exactly empty (state 0, no words left).

use crate::entropy::codec::{per_byte_bound, BitCodec, BitDecoder, Codec, Job, CHUNK_BYTES};
use crate::entropy::model::{symbol_tables, SymbolTable};
use crate::entropy::profile::{Profile, Status};
use crate::entropy::symbol_lookup::{DecModel, DecTable};
use crate::entropy::PayloadError;
#[cfg(test)]
use crate::filter::bits::BitArray;

/// The table's row of coding 3.
pub(crate) const CODEC: Codec = Codec {
    id: 3,
    name: "known-p-symbols",
    profile: Profile::Full,
    status: Status::Active,
    // Coding 2's model by bytes: a byte a step (several times coding 2's speed), a few bytes
    // over it; for arrays too small for the faster codings' states and tables.
    speed_rank: |_| 60,
    has_q0: true,
    q0_measured: false,
    chunk_bytes: Some(CHUNK_BYTES),
    // ANS payloads are whole words (an ANS coder ending in state 0 writes none).
    well_formed: |_, _, len| len.is_multiple_of(4),
    work_bound: per_byte_bound,
    bits: Some(BitCodec {
        predict: |counts| (counts.cross_entropy_bits() / 8.0 + FIXED).max(0.0).ceil() as u64,
        encode: encode_symbols,
        decoder: |q0, len| Box::new(Symbols(DecModel::new(q0, len))),
    }),
    counters: None,
};

/// Bytes a payload takes over its symbols' cost: its final state (measured by the test
/// `fixed_costs_are_measured`).
const FIXED: f64 = 4.0;

/// The decoder: the byte model's tables.
struct Symbols(DecModel);

impl BitDecoder for Symbols {
    fn decode(&self, job: Job<'_>) -> Result<(), PayloadError> {
        decode_symbols_into(job, &self.0)
    }
}

/// Encoding parameters of one symbol: its interval and an exact division by its frequency.
#[derive(Debug, Clone, Copy, Default)]
struct EncSymbol {
    /// A state at or above `f * 2^40` puts its low word out before coding the symbol.
    x_max: u64,
    /// `floor(x / f) = (mulhi(x, magic) + x) >> shift` for every 64-bit x: the multiplier
    /// `2^64 + magic = floor(2^(64 + shift) / f) + 1`, `shift = ceil(log2 f)` (Granlund and
    /// Montgomery, "Division by invariant integers using multiplication", 4.1).
    magic: u64,
    shift: u32,
    freq: u64,
    cum: u64,
}

impl EncSymbol {
    fn new(cum: u32, freq: u32) -> Self {
        let shift = 32 - (freq - 1).leading_zeros();
        let f = u128::from(freq);
        let multiplier = (1u128 << (64 + shift)) / f + 1;
        EncSymbol {
            x_max: u64::from(freq) << 40,
            magic: multiplier as u64,
            shift,
            freq: u64::from(freq),
            cum: u64::from(cum),
        }
    }

    /// `floor(x / f)`.
    #[inline(always)]
    fn quotient(&self, x: u64) -> u64 {
        let t = (u128::from(x) * u128::from(self.magic)) >> 64;
        ((t + u128::from(x)) >> self.shift) as u64
    }

    /// Code the symbol onto state `x` (constriction's `AnsCoder<u32, u64>` step), its
    /// word, if any, into `stack[*top]`. The word is written whatever the state, and `*top`
    /// moves only when it is one: no branch to mispredict.
    #[inline(always)]
    fn put(&self, x: &mut u64, stack: &mut [u32], top: &mut usize) {
        let emit = *x >= self.x_max;
        stack[*top] = *x as u32;
        *top += usize::from(emit);
        let y = if emit { *x >> 32 } else { *x };
        let q = self.quotient(y);
        *x = q << 24 | (self.cum + (y - q * self.freq));
    }
}

/// The encoding parameters of a symbol table's symbols.
fn enc_symbols(table: &SymbolTable) -> Vec<EncSymbol> {
    let cum = table.cumulative();
    cum.windows(2)
        .map(|c| EncSymbol::new(c[0], c[1] - c[0]))
        .collect()
}

/// ANS-code the packed bytes of `bits` with the multi-bit known-p model, appending the
/// payload to `out`: the words constriction's `AnsCoder<u32, u64>` writes for the same
/// symbols (spec 4.5), by a loop over the words of the array with a multiplication in place
/// of each division.
pub(crate) fn encode_symbols(words: &[u64], m: u64, q0: u16, out: &mut Vec<u8>) {
    let (full, tail) = symbol_tables(q0, m);
    let full = enc_symbols(&full);
    let mut x = 0u64;
    // Every symbol puts out at most one word: the stack grows 8 words ahead of each word
    // of the array coded. The size of a payload near the entropy to start with.
    let mut stack = vec![0u32; (m / 32) as usize + 16];
    let mut top = 0usize;
    let whole = m / 8;
    let byte = |t: u64| ((words[(t / 8) as usize] >> (8 * (t % 8))) & 0xFF) as usize;
    if let Some(t) = &tail {
        enc_symbols(t)[byte(whole)].put(&mut x, &mut stack, &mut top);
    }
    let whole_words = whole / 8;
    for t in (whole_words * 8..whole).rev() {
        if top + 8 > stack.len() {
            stack.resize(stack.len() * 2, 0);
        }
        full[byte(t)].put(&mut x, &mut stack, &mut top);
    }
    for &word in words[..whole_words as usize].iter().rev() {
        if top + 8 > stack.len() {
            stack.resize(stack.len() * 2, 0);
        }
        for j in (0..8).rev() {
            full[((word >> (8 * j)) & 0xFF) as usize].put(&mut x, &mut stack, &mut top);
        }
    }
    // The final state, low word first, only the words that hold its significant bits.
    stack.truncate(top);
    if x != 0 {
        stack.push(x as u32);
        if x >> 32 != 0 {
            stack.push((x >> 32) as u32);
        }
    }
    out.reserve(stack.len() * 4);
    for w in &stack {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

/// The payload of [`encode_symbols`] as constriction writes it: the reference the tests
/// hold the fast encoder to.
#[cfg(test)]
pub(crate) fn encode_symbols_constriction(bits: &BitArray, q0: u16) -> Vec<u8> {
    use constriction::stream::stack::DefaultAnsCoder;
    use constriction::stream::Encode;
    let bytes = bits.to_bytes();
    let (full, tail) = symbol_tables(q0, bits.len());
    let mut ans = DefaultAnsCoder::new();
    let whole = (bits.len() / 8) as usize;
    if let Some(t) = &tail {
        ans.encode_symbol(usize::from(bytes[whole]), t)
            .expect("every symbol has a frequency");
    }
    for &b in bytes[..whole].iter().rev() {
        ans.encode_symbol(usize::from(b), &full)
            .expect("every symbol has a frequency");
    }
    let words = ans.into_compressed().expect("Vec backend cannot fail");
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Decode `m` bits coded with the multi-bit known-p model.
#[cfg(test)]
pub(crate) fn decode_symbols(payload: &[u8], m: u64, q0: u16) -> Result<BitArray, PayloadError> {
    let model = DecModel::new(q0, m);
    let mut words = vec![0u64; crate::filter::bits::words_for(m)];
    decode_symbols_into(
        Job {
            payload,
            len: m,
            out: &mut words,
            zeroed: false,
        },
        &model,
    )?;
    Ok(BitArray::from_words(words, m).expect("symbols hold only m bits"))
}

/// Word `i` of the payload (little-endian).
#[inline(always)]
fn word(payload: &[u8], i: usize) -> u64 {
    let b: [u8; 4] = payload[4 * i..4 * i + 4].try_into().expect("4 bytes");
    u64::from(u32::from_le_bytes(b))
}

/// Decode `m` bits coded with the multi-bit known-p model into `out` (`ceil(m / 64)` words,
/// all overwritten), with the tables of `model` (built for the same `m mod 8`): the
/// decoder of spec 4.5, one state, words popped from the end of the payload in place, each
/// symbol found by the table of the first symbol of each slice of `[0, 2^24)` and a short
/// step along `cum` (no division, no search), eight symbols assembled into each word of
/// `out`. On error `out` holds garbage.
pub(crate) fn decode_symbols_into(job: Job<'_>, model: &DecModel) -> Result<(), PayloadError> {
    let (payload, m, out) = job.parts();
    if !payload.len().is_multiple_of(4) {
        return Err("payload length is not a multiple of 4");
    }
    // Words w[0] .. w[left - 1] remain on the stack.
    let mut left = payload.len() / 4;
    let mut x = 0u64;
    if left > 0 {
        left -= 1;
        x = word(payload, left);
        if x == 0 {
            return Err("ANS payload ends with a zero word");
        }
        if left > 0 {
            left -= 1;
            x = x << 32 | word(payload, left);
        }
    }
    let full = &*model.full;
    let whole = m / 8;
    let whole_words = (whole / 8) as usize;
    // A word of output takes at most 8 words of input: while more than 8 remain, the
    // refill needs no check that a word is left. The next word is loaded ahead, so that the
    // state's dependency chain holds no load whose address waits on the refill, and taken
    // with a select (no branch to mispredict).
    let mut done = 0;
    if left > 8 {
        let mut next = word(payload, left - 1);
        for w in out[..whole_words].iter_mut() {
            if left <= 8 {
                break;
            }
            let mut v = 0u64;
            let mut step = |shift: u32| {
                let (s, y) = full.symbol(x);
                let refill = y < 1 << 32;
                x = if refill { y << 32 | next } else { y };
                left -= usize::from(refill);
                next = word(payload, left - 1);
                v |= s << shift;
            };
            // Unrolled: constant shifts, no loop counter.
            step(0);
            step(8);
            step(16);
            step(24);
            step(32);
            step(40);
            step(48);
            step(56);
            *w = v;
            done += 1;
        }
    }
    let mut step = |table: &DecTable, x: &mut u64| -> u64 {
        let (s, y) = table.symbol(*x);
        *x = y;
        if y < 1 << 32 && left > 0 {
            left -= 1;
            *x = y << 32 | word(payload, left);
        }
        s
    };
    for w in out[done..whole_words].iter_mut() {
        let mut v = 0u64;
        for j in 0..8 {
            v |= step(full, &mut x) << (8 * j);
        }
        *w = v;
    }
    if let Some(last) = out.get_mut(whole_words) {
        let mut v = 0u64;
        for t in whole_words as u64 * 8..whole {
            v |= step(full, &mut x) << (8 * (t % 8));
        }
        if let Some(tail) = &model.tail {
            // The last symbol has `m mod 8` bits: nothing lands past m.
            v |= step(tail, &mut x) << (8 * (whole % 8));
        }
        *last = v;
    }
    if x != 0 || left != 0 {
        return Err("ANS payload has data left after the last symbol");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entropy::testing::pseudo_random_bits;

    #[test]
    fn the_reciprocal_divides_exactly() {
        let mut x = 0x1234_5678_9ABC_DEF0u64;
        for f in (1u32..64).chain([255, 256, 257, 4095, 4096, 65_537, (1 << 24) - 1]) {
            let e = EncSymbol::new(0, f);
            for v in [
                0,
                1,
                u64::MAX,
                u64::MAX - 1,
                u64::from(f) << 40,
                (u64::from(f) << 40) - 1,
            ] {
                assert_eq!(e.quotient(v), v / u64::from(f), "{v} / {f}");
            }
            for _ in 0..2000 {
                x = crate::filter::hashing::fmix64(x.wrapping_add(u64::from(f)));
                let v = x >> (x % 64);
                assert_eq!(e.quotient(v), v / u64::from(f), "{v} / {f}");
            }
        }
    }

    #[test]
    fn the_payload_is_constrictions_and_decodes() {
        for m in [0u64, 1, 7, 8, 9, 63, 64, 65, 1000, 4099, 140_000] {
            for q0 in [1u16, 2, 1000, 32768, 56_820, 65_000, 65_535] {
                let ones_per_1024 = u64::from(65_536 - u32::from(q0)) / 64;
                let bits = pseudo_random_bits(m, ones_per_1024, u64::from(q0) ^ m);
                let mut fast = Vec::new();
                encode_symbols(bits.words(), m, q0, &mut fast);
                assert_eq!(
                    fast,
                    encode_symbols_constriction(&bits, q0),
                    "m={m} q0={q0}"
                );
                assert_eq!(decode_symbols(&fast, m, q0).unwrap(), bits, "m={m} q0={q0}");
            }
        }
    }
}
