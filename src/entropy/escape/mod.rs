//! Coding 11, *escape*: the bytes of a bit array coded by four interleaved tabled ANS
//! (tANS) states over the bytes with at most three ones and an escape, the escaped bytes by
//! a fifth state, all over one bit stream (spec §4.15).
//!
//! Coding 9 decodes a nibble a step, and its format's floor on this CPU is about 30 µs for
//! the paper's frame (17 500 bytes), where zstd -19 takes 17. A byte a step halves the
//! steps, but a table over all 256 bytes at the paper's density would waste its positions
//! on bytes that almost never occur, and building it would take longer than decoding. At
//! p0 = 0.87, 98.6% of bytes have at most three ones: those 93 bytes and an escape share a
//! table of 4096 positions, and the other 163 bytes a table of 2048 read only after an
//! escape (one group of four bytes in twenty), a branch the CPU predicts.
//!
//! * **Byte symbols**, by the binomial model of the header's `q0`, exact in integers
//!   ([`model`]).
//! * **The precise spread** ([`spread`]): each symbol's positions in the order of its
//!   states, so a table is built without counting, a few hundred merge steps and runs of
//!   equal entries.
//! * **Four primary states**, byte `t` on state `t mod 4`, four steps from one 64-bit load
//!   of the stream; then, in order, a secondary step for each of the four that escaped.
//! * **The last four bytes ride in the primary states**, as in coding 9: the encoder's
//!   starting states are free.
//!
//! A payload is canonical: the decoder accepts it only if every primary state ends holding
//! no more than its carried byte, the secondary state ends where the encoder starts it, the
//! bits read fill the payload to its last byte and the padding is zero.

use crate::entropy::codec::{per_byte_bound, BitCodec, BitDecoder, Codec, Job};
use crate::entropy::model::Counts;
use crate::entropy::profile::{Profile, Status};
use crate::entropy::tans_stream::{peek, run, write_runs};
use crate::entropy::PayloadError;
#[cfg(any(test, feature = "internals"))]
use crate::entropy::{ByKernel, Decoded};

pub(crate) mod model;
pub(crate) mod spread;

// The BMI2 build of this coding's encoder, decoder and table build, chosen at run time
// and held to the portable code here by the tests and the fuzz target `kernel_twins`.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod bmi2;

use model::{
    excess_bits, frequencies, is_primary, ESCAPE, PRIMARY, PRIMARY_BYTES, PRIMARY_PRECISION,
    PRIMARY_SYMBOL, SECONDARY, SECONDARY_BYTES, SECONDARY_PRECISION, SYMBOL,
};
use spread::{DecTable, EncTable, ESCAPE_FLAG, NB_BITS};

/// The table's row of coding 11.
pub(crate) const CODEC: Codec = Codec {
    id: 11,
    name: "escape",
    profile: Profile::Full,
    status: Status::Active,
    // A byte a step where coding 9 decodes a nibble (the paper's frame in 27.1 us against
    // 40.6), without coding 6's 32 bytes of states; but its tables cost more to build than
    // coding 9's: on an array too small to repay them (`repays_its_tables`: below about
    // 20 000 bits at the paper's density) it comes after coding 9.
    speed_rank: |c| {
        if repays_its_tables(c.len, c.q0) {
            30
        } else {
            55
        }
    },
    has_q0: true,
    q0_measured: true,
    // One stream of bits for the whole array: not chunked.
    chunk_bytes: None,
    // Five states, then a stream of bits.
    well_formed: |_, _, len| len >= MIN_LEN as u64,
    work_bound: per_byte_bound,
    bits: Some(BitCodec {
        predict,
        encode,
        decoder: |q0, _| Box::new(DecModel::new(q0)),
    }),
    counters: None,
};

/// Positions of the primary table.
const N1: usize = 1 << PRIMARY_PRECISION;

/// Positions of the secondary table.
const N2: usize = 1 << SECONDARY_PRECISION;

/// Interleaved primary states.
pub(crate) const STATES: usize = 4;

/// Bits of the five states every payload starts with.
const HEAD_BITS: u32 = STATES as u32 * PRIMARY_PRECISION + SECONDARY_PRECISION;

/// Bytes of the five states: the smallest payload.
pub(crate) const MIN_LEN: usize = HEAD_BITS.div_ceil(8) as usize;

/// Bytes the states carry: the last one of each primary chain.
pub(crate) const CARRIED: usize = STATES;

/// The size model: the cross entropy less the last bytes, which the primary states carry
/// uncoded; the model's excess over the bits' own model (its frequencies are quantized)
/// and the spread's loss per byte; the states and the padding.
fn predict(counts: &Counts) -> u64 {
    let len = counts.len.max(1);
    let carried = len.min(8 * CARRIED as u64) as f64;
    (counts.cross_entropy_bits() * (1.0 - carried / len as f64) / 8.0
        + len.div_ceil(8) as f64 * (excess_bits(counts.q0.max(1)) + SPREAD_BITS) / 8.0
        + FIXED)
        .max(0.0)
        .ceil() as u64
}

/// Bytes a payload takes over its symbols' cost: the five states (59 bits) and the padding,
/// less what the tables' spread saves over the model at most densities (measured by the
/// test `fixed_costs_are_measured`).
const FIXED: f64 = 7.0;

/// Bits per byte that the tables cost over their model: the spread is not the ideal one
/// (measured by the test `fixed_costs_are_measured`).
pub(crate) const SPREAD_BITS: f64 = 0.000_15;

/// Whether an array of `len` bits at `q0` is large enough to repay coding 11's tables,
/// against coding 9's: below, the default encoder prefers coding 9. Floats, for the
/// encoder's choice, never for decoding.
///
/// Coding 11's tables cost more to build (about 10 ns a step of their walks, less 1 µs)
/// and its steps cost less (0.84 ns a byte, less 3.5 ns a byte that escapes): fitted to
/// decodes of both at k = 3, m = 10^4 to 6 10^4 bits and p0 = 0.75, 0.87 and 0.95 (607,
/// 291 and 156 steps; crossovers near 90 000, 20 000 and 6 000 bits).
pub(crate) fn repays_its_tables(len: u64, q0: u16) -> bool {
    let q0 = q0.max(1);
    let saved = 0.84 - 3.5 * model::escape_probability(q0);
    len.div_ceil(8) as f64 * saved >= 10.0 * f64::from(model::walk_steps(q0)) - 1000.0
}

/// The decoding tables of one `q0`.
pub(crate) struct DecModel {
    primary: Box<DecTable<N1>>,
    secondary: Box<DecTable<N2>>,
}

impl DecModel {
    /// The tables of `q0`, built with BMI2 where the CPU has it.
    pub(crate) fn new(q0: u16) -> Self {
        #[cfg(target_arch = "x86_64")]
        if let Some(model) = bmi2::model(q0) {
            return model;
        }
        Self::portable(q0)
    }

    /// [`DecModel::new`] in the target's baseline instructions (inlined into the BMI2
    /// kernel too).
    #[inline(always)]
    pub(crate) fn portable(q0: u16) -> Self {
        let (primary, secondary) = frequencies(q0);
        DecModel {
            primary: DecTable::new(&primary, &PRIMARY_BYTES, Some(ESCAPE)),
            secondary: DecTable::new(&secondary, &SECONDARY_BYTES, None),
        }
    }
}

impl BitDecoder for DecModel {
    fn decode(&self, job: Job<'_>) -> Result<(), PayloadError> {
        decode(job.payload, job.len, self, job.out)
    }
}

/// Byte `t` of `words`.
#[inline(always)]
fn byte(words: &[u64], t: usize) -> u8 {
    (words[t / 8] >> (8 * (t % 8))) as u8
}

/// Whether any of the four bytes of `four` has four ones or more (escapes): their counts of
/// ones side by side, then 124 added to each (bit 7 set from 4 on, no carry out of a byte).
#[inline(always)]
fn has_escape(four: u32) -> bool {
    let c = four - ((four >> 1) & 0x5555_5555);
    let c = (c & 0x3333_3333) + ((c >> 2) & 0x3333_3333);
    let c = (c + (c >> 4)) & 0x0F0F_0F0F;
    (c + 0x7C7C_7C7C) & 0x8080_8080 != 0
}

/// The pushes of a group's `len` bytes (at most four, in `four`, the rest zero), last byte
/// first: its escaped bytes' secondary pushes each as a run (read after the primary ones),
/// whose escapes (a group in twenty at the paper's density) the counts of its ones find,
/// then its primary pushes as one run (read first).
#[inline(always)]
fn put_group(
    four: u32,
    len: usize,
    (primary, x): (&EncTable<PRIMARY, N1>, &mut [u32; STATES]),
    (secondary, y): (&EncTable<SECONDARY, N2>, &mut u32),
    runs: &mut Vec<u64>,
) {
    if has_escape(four) {
        for j in (0..len).rev() {
            let b = (four >> (8 * j)) as u8;
            if !is_primary(b) {
                let (bits, c) = secondary.put(y, usize::from(SYMBOL[usize::from(b)]));
                runs.push(run(bits, c));
            }
        }
    }
    let (mut bits, mut count) = (0u64, 0u32);
    for (j, x) in x[..len].iter_mut().enumerate().rev() {
        let s = usize::from(PRIMARY_SYMBOL[(four >> (8 * j)) as usize & 0xFF]);
        let (pushed, c) = primary.put(x, s);
        (bits, count) = (bits << c | pushed, count + c);
    }
    runs.push(run(bits, count));
}

/// Append the coding-11 payload of the first `m` bits of `words` (bits past `m` zero) to
/// `out`, with BMI2 where the CPU has it.
pub(crate) fn encode(words: &[u64], m: u64, q0: u16, out: &mut Vec<u8>) {
    #[cfg(target_arch = "x86_64")]
    if bmi2::encode(words, m, q0, out) {
        return;
    }
    encode_portable(words, m, q0, out)
}

/// [`encode`] in the target's baseline instructions (inlined into the BMI2 kernel too).
#[inline(always)]
pub(crate) fn encode_portable(words: &[u64], m: u64, q0: u16, out: &mut Vec<u8>) {
    debug_assert_eq!(words.len(), crate::filter::bits::words_for(m));
    let (f1, f2) = frequencies(q0);
    let primary = EncTable::<PRIMARY, N1>::new(&f1);
    let secondary = EncTable::<SECONDARY, N2>::new(&f2);
    let n = m.div_ceil(8) as usize;
    let coded = n.saturating_sub(CARRIED);
    // The encoder's pushes, last byte first: a group's primary pushes as one run (read
    // first), its escaped bytes' secondary pushes each as a run (read after, in order).
    let mut runs = crate::entropy::scratch::take_u64(coded / 4 + coded / 32 + 4);
    // The primary states start as the carried bytes, the secondary one empty.
    let mut x = [N1 as u32; STATES];
    for t in coded..n {
        x[t % STATES] |= u32::from(byte(words, t));
    }
    let mut y = N2 as u32;
    // A last group of fewer than four bytes (those after it are carried), then the whole
    // ones, each from its four bytes at once.
    let whole = coded / STATES;
    let four = |g: usize| (words[g / 2] >> (32 * (g % 2))) as u32;
    if !coded.is_multiple_of(STATES) {
        let len = coded % STATES;
        let last = four(whole) & (u32::MAX >> (8 * (STATES - len)));
        put_group(
            last,
            len,
            (&primary, &mut x),
            (&secondary, &mut y),
            &mut runs,
        );
    }
    for g in (0..whole).rev() {
        put_group(
            four(g),
            STATES,
            (&primary, &mut x),
            (&secondary, &mut y),
            &mut runs,
        );
    }
    // The five states, primary state 0 read first.
    runs.push(run(u64::from(y) - N2 as u64, SECONDARY_PRECISION));
    let x = x.map(|s| u64::from(s) - N1 as u64);
    runs.push(run(
        x[0] | x[1] << 12 | x[2] << 24 | x[3] << 36,
        STATES as u32 * PRIMARY_PRECISION,
    ));
    write_runs(&runs, out);
    crate::entropy::scratch::give_u64(runs);
}

/// One decoding step of state `u` (below the table's size) from the low bits of `bits`:
/// the next state.
#[inline(always)]
fn step<const N: usize>(table: &DecTable<N>, u: usize, bits: u64) -> usize {
    usize::from(table.base[u]) + (bits & ((1 << (table.nb[u] & NB_BITS)) - 1)) as usize
}

/// [`step`] for a state known to be below `N`, the tables' length: with no bounds check.
#[inline(always)]
#[allow(unsafe_code)]
fn step_unchecked<const N: usize>(table: &DecTable<N>, u: usize, bits: u64) -> usize {
    debug_assert!(u < N);
    // SAFETY: `u < N`, the length of `base` and `nb` (the caller's contract; see
    // `group`).
    let (base, nb) = unsafe { (*table.base.get_unchecked(u), *table.nb.get_unchecked(u)) };
    usize::from(base) + (bits & ((1 << (nb & NB_BITS)) - 1)) as usize
}

/// Where a step reads its bits: the payload, or a window of it known to hold them.
#[derive(Clone, Copy)]
enum Bits<'a> {
    /// The whole payload, zeros past its end.
    Payload(&'a [u8]),
    /// [`WINDOW`] bytes of the payload from bit `origin` (a multiple of 8), with every read
    /// within its first `WINDOW - 8`: read with no check of the payload's end (the mask of
    /// the offset only spares a bounds check).
    Window(&'a [u8; WINDOW], u64),
}

/// Bytes of a [`Bits::Window`]: two groups' bits and a load of 8 bytes.
const WINDOW: usize = 40;

impl Bits<'_> {
    /// The 64 bits of the stream from bit `at` on.
    #[inline(always)]
    fn peek(self, at: u64) -> u64 {
        match self {
            Bits::Payload(payload) => peek(payload, at),
            Bits::Window(window, origin) => {
                let i = ((at - origin) / 8) as usize & (WINDOW - 8 - 1);
                let word: [u8; 8] = window[i..i + 8].try_into().expect("8 bytes");
                u64::from_le_bytes(word) >> (at % 8)
            }
        }
    }
}

/// The secondary step of an escaped byte: its byte, the secondary state moved on and
/// `at` past the bits read.
#[inline(always)]
fn escaped(table: &DecTable<N2>, y: &mut usize, bits: Bits<'_>, at: &mut u64) -> u8 {
    // A state is below 2048 (the mask only spares a bounds check).
    let u = *y & (N2 - 1);
    *y = step(table, u, bits.peek(*at));
    *at += u64::from(table.nb[u] & NB_BITS);
    table.byte[u]
}

/// Four primary steps from one load of the stream at `at`, then a secondary step for each
/// escape among them, in order: the group's four bytes, `at` moved past the bits read.
///
/// The four states are positions of the primary table (below 4096): each starts as 12 bits
/// of the payload and each step makes it `base + read(nb)` of a position, below 4096 by the
/// table's invariant ([`DecTable`]), whatever the payload: the tables come from q0 alone,
/// built by [`DecModel::new`] (its fields are private to this module), and the test
/// `every_state_stays_a_position` checks the invariant. So the steps index the table with
/// no bounds check (a mask or a check a state costs a group four of the sixty or so
/// instructions that bound its speed).
#[inline(always)]
#[allow(unsafe_code)]
fn group(
    model: &DecModel,
    u: &mut [usize; STATES],
    y: &mut usize,
    stream: Bits<'_>,
    at: &mut u64,
) -> u32 {
    let p = &*model.primary;
    let bits = stream.peek(*at);
    let s = *u;
    debug_assert!(s.iter().all(|&s| s < N1));
    // SAFETY: each state is below 4096, the tables' length (above).
    let nb = s.map(|s| u32::from(unsafe { *p.nb.get_unchecked(s) }));
    // The bits the steps before a state's read (the flags above bit 5 are past a shift's
    // six bits); the total's bits above them count the escapes.
    let (b, c, d) = (nb[0], nb[0] + nb[1], nb[0] + nb[1] + nb[2]);
    let all = d + nb[3];
    const SHIFT: u32 = NB_BITS as u32;
    *u = [
        step_unchecked(p, s[0], bits),
        step_unchecked(p, s[1], bits >> (b & SHIFT)),
        step_unchecked(p, s[2], bits >> (c & SHIFT)),
        step_unchecked(p, s[3], bits >> (d & SHIFT)),
    ];
    *at += u64::from(all & SHIFT);
    // SAFETY: as above.
    let v = s.map(|s| u32::from(unsafe { *p.byte.get_unchecked(s) }));
    let bytes = v[0] | v[1] << 8 | v[2] << 16 | v[3] << 24;
    if all & !SHIFT != 0 {
        let flags = nb.map(|nb| nb & u32::from(ESCAPE_FLAG) != 0);
        let (bytes, y_after, at_after) = escapes(&model.secondary, *y, stream, *at, bytes, flags);
        (*y, *at) = (y_after, at_after);
        return bytes;
    }
    bytes
}

/// A group's escaped bytes, in order, out of line: one group in twenty at the paper's
/// density, and the steps of the other nineteen keep their registers.
#[cold]
#[inline(never)]
fn escapes(
    table: &DecTable<N2>,
    mut y: usize,
    stream: Bits<'_>,
    mut at: u64,
    bytes: u32,
    flags: [bool; STATES],
) -> (u32, usize, u64) {
    let mut out = bytes.to_le_bytes();
    for (b, escape) in out.iter_mut().zip(flags) {
        if escape {
            *b = escaped(table, &mut y, stream, &mut at);
        }
    }
    (u32::from_le_bytes(out), y, at)
}

/// Decode a coding-11 payload of `m` bits into `out` (exactly `ceil(m / 64)` words, every
/// one overwritten; bits past `m` are zero), with BMI2 where the CPU has it. On error
/// `out` holds garbage.
pub(crate) fn decode(
    payload: &[u8],
    m: u64,
    model: &DecModel,
    out: &mut [u64],
) -> Result<(), PayloadError> {
    #[cfg(target_arch = "x86_64")]
    if let Some(result) = bmi2::decode(payload, m, model, out) {
        return result;
    }
    decode_portable(payload, m, model, out)
}

/// [`decode`] in the target's baseline instructions (inlined into the BMI2 kernel too).
#[inline(always)]
pub(crate) fn decode_portable(
    payload: &[u8],
    m: u64,
    model: &DecModel,
    out: &mut [u64],
) -> Result<(), PayloadError> {
    debug_assert_eq!(out.len(), crate::filter::bits::words_for(m));
    if payload.len() < MIN_LEN {
        return Err("escape payload is shorter than its five states");
    }
    let head = peek(payload, 0);
    let mut u: [usize; STATES] =
        std::array::from_fn(|s| (head >> (PRIMARY_PRECISION as usize * s)) as usize & (N1 - 1));
    let mut y = (head >> (STATES as u32 * PRIMARY_PRECISION)) as usize & (N2 - 1);
    let mut at = u64::from(HEAD_BITS);
    let n = m.div_ceil(8) as usize;
    let coded = n.saturating_sub(CARRIED);
    // Whole words: two groups of four bytes each (at most 184 bits), each word's from a
    // window of the payload while it holds one.
    let whole = coded / 8;
    let mut w = 0;
    while w < whole {
        let origin = at / 8;
        let Some(window) = payload
            .get(origin as usize..)
            .and_then(|rest| rest.first_chunk::<WINDOW>())
        else {
            break;
        };
        let stream = Bits::Window(window, 8 * origin);
        let lo = group(model, &mut u, &mut y, stream, &mut at);
        let hi = group(model, &mut u, &mut y, stream, &mut at);
        out[w] = u64::from(lo) | u64::from(hi) << 32;
        w += 1;
    }
    let stream = Bits::Payload(payload);
    for word in out[w..whole].iter_mut() {
        let lo = group(model, &mut u, &mut y, stream, &mut at);
        let hi = group(model, &mut u, &mut y, stream, &mut at);
        *word = u64::from(lo) | u64::from(hi) << 32;
    }
    // The rest (under 12 bytes, in at most two words): the coded ones a group at a time,
    // a step at a time, then the carried ones, which the states hold.
    out[whole..].fill(0);
    let p = &*model.primary;
    for start in (8 * whole..coded).step_by(STATES) {
        let end = (start + STATES).min(coded);
        let mut bytes = [(0u8, false); STATES];
        for t in start..end {
            let s = &mut u[t % STATES];
            let k = *s & (N1 - 1);
            *s = step(p, k, peek(payload, at));
            at += u64::from(p.nb[k] & NB_BITS);
            bytes[t - start] = (p.byte[k], p.nb[k] & ESCAPE_FLAG != 0);
        }
        for t in start..end {
            let (mut b, escape) = bytes[t - start];
            if escape {
                b = escaped(&model.secondary, &mut y, Bits::Payload(payload), &mut at);
            }
            out[t / 8] |= u64::from(b) << (8 * (t % 8));
        }
    }
    let mut left = u;
    for t in coded..n {
        let s = t % STATES;
        out[t / 8] |= (u[s] as u64 & 0xFF) << (8 * (t % 8));
        left[s] >>= 8;
    }
    let len = payload.len() as u64;
    if at > 8 * len {
        return Err("escape payload ends before the last byte");
    }
    if left != [0; STATES] {
        return Err("escape payload's states hold more than the bytes they carry");
    }
    if y != 0 {
        return Err("escape payload's secondary state does not end where it starts");
    }
    if at.div_ceil(8) != len {
        return Err("escape payload does not end at its last byte");
    }
    if !at.is_multiple_of(8) && payload[payload.len() - 1] >> (at % 8) != 0 {
        return Err("escape payload's padding bits are not zero");
    }
    crate::entropy::check_past_m(out, m)
}

#[cfg(any(test, feature = "internals"))]
/// The coding-11 payloads of the first `m` bits of `words` by the portable encoder and,
/// where the CPU has BMI2, by the BMI2 one, `q0` at least 1: all must be equal.
pub fn encode_kernels(words: &[u64], m: u64, q0: u16) -> ByKernel<Vec<u8>> {
    let mut portable = Vec::new();
    encode_portable(words, m, q0.max(1), &mut portable);
    let mut all = vec![("portable", portable)];
    #[cfg(target_arch = "x86_64")]
    {
        let mut bmi2 = Vec::new();
        if bmi2::encode(words, m, q0.max(1), &mut bmi2) {
            all.push(("bmi2", bmi2));
        }
    }
    all
}

#[cfg(any(test, feature = "internals"))]
/// A payload of `m` bits decoded by the portable decoder (its tables built portably) and,
/// where the CPU has BMI2, by the BMI2 one (its tables built with BMI2), `q0` at least 1:
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
        if let Some(rb) = bmi2::decode(payload, m, &model, &mut b) {
            all.push(("bmi2", rb.map(|()| b)));
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::bits::words_for;
    use model::{BYTES, ESCAPE};

    use crate::entropy::testing::{pseudo_random_words as random_words, SpecBits, Tans};

    fn enc(words: &[u64], m: u64, q0: u16) -> Vec<u8> {
        let mut out = Vec::new();
        encode(words, m, q0, &mut out);
        out
    }

    fn dec(payload: &[u8], m: u64, q0: u16) -> Result<Vec<u64>, PayloadError> {
        let mut out = vec![0u64; words_for(m)];
        decode(payload, m, &DecModel::new(q0), &mut out).map(|()| out)
    }

    /// The decoder of §4.15 as written: the tables built by sorting, one bit at a time,
    /// every check.
    fn spec_decode(payload: &[u8], m: u64, q0: u16) -> Option<Vec<u64>> {
        let (f1, f2) = frequencies(q0);
        // sym, nb, base per position.
        let table = |f: &[u32], p: u32| -> Vec<(usize, u32, u32)> {
            spread::spec_spread(f)
                .into_iter()
                .map(|(s, i)| {
                    let k = f[s] + i;
                    let nb = p - k.ilog2();
                    (s, nb, (k << nb) - (1 << p))
                })
                .collect()
        };
        let (t1, t2) = (table(&f1, 12), table(&f2, 11));
        let mut bits = SpecBits::new(payload);
        let mut read = |c: u32| bits.read(c);
        let mut u = [0u32; 4];
        for s in u.iter_mut() {
            *s = read(12)?;
        }
        let mut y = read(11)?;
        let n = m.div_ceil(8) as usize;
        let from = n.saturating_sub(4);
        let mut bytes = vec![0u8; n];
        for g in 0..from.div_ceil(4) {
            let mut escapes = Vec::new();
            for t in 4 * g..(4 * g + 4).min(from) {
                let (s, nb, base) = t1[u[t % 4] as usize];
                u[t % 4] = base + read(nb)?;
                if s == ESCAPE {
                    escapes.push(t);
                } else {
                    bytes[t] = BYTES[s];
                }
            }
            for t in escapes {
                let (s, nb, base) = t2[y as usize];
                y = base + read(nb)?;
                bytes[t] = BYTES[ESCAPE + s];
            }
        }
        let mut r = [0u32; 4];
        for t in from..n {
            bytes[t] = u[t % 4] as u8;
            r[t % 4] += 1;
        }
        let mut words = vec![0u64; words_for(m)];
        for (t, &b) in bytes.iter().enumerate() {
            words[t / 8] |= u64::from(b) << (8 * (t % 8));
        }
        let ok = (0..4).all(|s| u[s] >> (8 * r[s]) == 0)
            && y == 0
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
            (7, 307),
            (8, 102),
            (31, 512),
            (32, 300),
            (33, 136),
            (63, 205),
            (64, 136),
            (65, 136),
            (1000, 512),
            (4099, 51),
            (140_000, 136),
            (100_003, 10),
            (20_011, 900),
        ]);
    }

    #[test]
    fn the_bmi2_and_portable_kernels_agree() {
        for q0 in (1..=65535u16).step_by(97).chain([65535]) {
            let (a, b) = (DecModel::new(q0), DecModel::portable(q0));
            assert_eq!(a.primary, b.primary, "q0 {q0}");
            assert_eq!(a.secondary, b.secondary, "q0 {q0}");
        }
        TANS.kernels_agree();
    }

    #[test]
    fn every_flip_is_rejected_or_another_array_with_another_payload() {
        TANS.every_flip_is_rejected_or_another_array();
    }

    #[test]
    fn a_group_has_an_escape_where_a_byte_has() {
        for b in 0..=255u8 {
            for lane in 0..STATES {
                // The byte among others that do not escape (0x07: three ones) and that do
                // (0x0F: four).
                let alone = u32::from(b) << (8 * lane);
                let rest = !(0xFF << (8 * lane));
                assert_eq!(
                    has_escape(alone | 0x0707_0707 & rest),
                    !is_primary(b),
                    "{b:#04x}"
                );
                assert!(has_escape(alone | 0x0F0F_0F0F & rest), "{b:#04x} in {lane}");
            }
        }
    }

    #[test]
    fn the_paper_array_is_within_the_bound() {
        // 17.5 KB arrays of the paper's density: within 0.05% + 16 bytes of m H(p) / 8.
        let m = 140_000;
        for seed in 0..8 {
            let words = random_words(m, 137, seed);
            let ones: u64 = words.iter().map(|w| u64::from(w.count_ones())).sum();
            let q0 = ((m - ones) * 65536 / m) as u16;
            let p = (ones as f64) / m as f64;
            let bound = m as f64 * crate::theory::entropy(p) / 8.0;
            let len = enc(&words, m, q0).len() as f64;
            assert!(
                len > bound && len < bound * 1.0005 + 16.0,
                "seed {seed}: {len} against {bound}"
            );
        }
    }
}
