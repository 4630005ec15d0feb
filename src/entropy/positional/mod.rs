//! Positional coding of sparse bit arrays: the positions of the one bits, as gaps.
//!
//! A sparse filter is cheaper to describe by where its ones are than bit by bit. The gap
//! before each one bit (the number of zeros since the previous one) is close to geometric
//! with parameter `p1 = 1 - p0`; each gap `g` is split as `q = g >> r`, `rem = g mod 2^r`.
//! The quotient `q` is coded with a static rANS model of precision 16 whose table is derived
//! by integer arithmetic from one 16-bit parameter `a` (the probability that a quotient goes
//! on, `q >= j + 1` given `q >= j`, in units of 2^-16), with an escape symbol for the tail
//! (the geometric law is memoryless, so an escape adds `Q` to the quotient and the same model
//! codes the rest exactly). The remainder is `r` uniform bits folded into the same rANS state.
//!
//! `r` is chosen so that `x = 2^r * p1` is in `(1/16, 1/8]`: coding the remainder as
//! uniform then costs about `x^2 / 24` nats a gap (below 0.02% of a gap's information), and
//! the quotient alphabet has at most a few dozen symbols that matter, so every frequency is
//! large enough for 16-bit precision to cost nothing measurable.
//!
//! Work: decoding costs one rANS step per one bit (plus an escape per 128 gaps on average)
//! plus zero-filling `ceil(m / 64)` words; encoding scans the words and codes each one bit.
//! The rule `c <= 8 * (stream bytes)` is checked before any loop, and every symbol of the
//! model costs at least 1.09 bits, so no payload makes the decoder step more than
//! `8 * payload bytes` times.
//!
//! Payload (spec 4.11): `varint(c)` (the number of one bits, shortest form, `c <= m`); if
//! `c = 0` nothing follows. Otherwise 32-bit little-endian words of one rANS stream (64-bit
//! states, 32-bit renormalization, lower bound 2^31, the coder of coding 6), with one lane
//! if `c < 16384` and two lanes taking turns (gap `i` in lane `i mod 2`) otherwise. `r`
//! and `a` follow from `m` and `c` by integer arithmetic ([`GapParams::of`]), so they cost
//! no bytes and leave no choice. The decoder checks that the states end at 2^31 with every
//! word read, so each set of positions has exactly one payload.

use super::codec::{exempt, BitCodec, BitDecoder, Codec, Job, CHUNK_BYTES};
use super::PayloadError;
use crate::entropy::profile::{Profile, Status};

/// The table's row of coding 7.
pub(crate) const CODEC: Codec = Codec {
    id: 7,
    name: "positional",
    profile: Profile::Core,
    status: Status::Active,
    // Its work grows with the ones: first where at most one bit in 40 is one (at 1 in 40 it
    // decodes about as fast as 32 rANS lanes: 216 MB/s at 5% ones against 505, 1 140 MB/s
    // at 1%), after the table-driven codings above that.
    speed_rank: |c| if c.ones <= c.len / 40 { 0 } else { 65 },
    has_q0: false,
    q0_measured: false,
    chunk_bytes: Some(CHUNK_BYTES),
    // The count of ones, at least one byte.
    well_formed: |_, _, len| len >= 1,
    // Its own bound, checked before its loop: at most 8 one bits per payload byte.
    work_bound: exempt,
    bits: Some(BitCodec {
        predict: |counts| estimate_len(counts.len, counts.ones),
        encode: |words, len, _, out| encode(words, len, out),
        decoder: |_, _| Box::new(Positions),
    }),
    counters: None,
};

/// The decoder: no tables (the quotient model follows from each payload's count of ones).
struct Positions;

impl BitDecoder for Positions {
    fn decode(&self, job: Job<'_>) -> Result<(), PayloadError> {
        if job.zeroed {
            decode_into_zeroed(job.payload, job.len, job.out)
        } else {
            decode_into(job.payload, job.len, job.out)
        }
    }
}

/// Precision of the quotient model (frequencies sum to 2^16).
const PRECISION: u32 = 16;
/// Lower bound of a normalized rANS state.
const LOWER: u64 = 1 << 31;
/// Remainder bits coded in the same step as the quotient; more go in a second uniform step.
const R_JOINT: u32 = 15;
/// The escape symbol is reached when the tail probability `a^Q` falls below 2^-7.
const TAIL: u64 = 1 << 25;
/// Slots per bucket of the decoder's symbol table.
const BUCKET_SHIFT: u32 = 4;
/// A gap count from which the payload uses two interleaved lanes.
pub const TWO_LANES_MIN: u64 = 16384;
/// Smallest accepted `a`: the largest quotient frequency is then `2^16 - A_MIN = 30720`,
/// below `2^16 / 2`, so every symbol costs more than one bit.
pub const A_MIN: u16 = 34816;
/// Largest accepted `a` (31/32): the smallest frequency of the model is then 16.
pub const A_MAX: u16 = 63488;
/// Largest accepted `r` (remainder bits).
pub const R_MAX: u8 = 46;
/// Symbols of the largest model (153 quotients and the escape), rounded up for indexing.
const TABLE: usize = 256;

/// Parameters of a positional payload, carried as integers in front of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GapParams {
    /// Remainder bits per gap, `0..=R_MAX`.
    pub r: u8,
    /// Continuation probability of the quotient in units of 2^-16, `A_MIN..=A_MAX`.
    pub a: u16,
}

impl GapParams {
    /// Checks the ranges a decoder accepts.
    pub fn check(self) -> Result<(), PayloadError> {
        if self.r > R_MAX {
            return Err("positional: r above 46");
        }
        if !(A_MIN..=A_MAX).contains(&self.a) {
            return Err("positional: a outside 34816..=63488");
        }
        Ok(())
    }

    /// The parameters of a payload of `ones` one bits among `m`, by integer arithmetic
    /// (spec 4.11): the largest `r <= 46` with `ones * 2^(r + 3) <= m` (so that
    /// `x = 2^r * p1 <= 1/8`), and `a = (1 - ones / m)^(2^r)` in units of 2^-16 from 64-bit
    /// fixed point, clamped to `A_MIN..=A_MAX`.
    pub fn of(m: u64, ones: u64) -> GapParams {
        if ones == 0 || m == 0 {
            return GapParams { r: 0, a: A_MAX };
        }
        let ones = ones.min(m);
        let mut r = 0u8;
        while r < R_MAX && u128::from(ones) << (r + 4) <= u128::from(m) {
            r += 1;
        }
        // t = floor(2^64 * (m - ones) / m) < 2^64, squared r times with rounding.
        let mut t: u128 = (u128::from(m - ones) << 64) / u128::from(m);
        for _ in 0..r {
            t = (t * t + (1 << 63)) >> 64;
        }
        let a = ((t + (1 << 47)) >> 48).clamp(u128::from(A_MIN), u128::from(A_MAX)) as u16;
        GapParams { r, a }
    }
}

/// The quotient model's frequencies and cumulative frequencies of `Q + 1` symbols
/// (quotients `0 .. Q - 1` and the escape `Q`), derived from `a` alone by integer
/// arithmetic: all that the encoder and the size estimate need.
struct Frequencies {
    /// Index of the escape symbol.
    q: usize,
    /// `(cum << 16) | f` per symbol.
    info: [u32; TABLE],
}

impl Frequencies {
    /// The frequencies of parameter `a` (`A_MIN..=A_MAX`, else clamped).
    fn new(a: u16) -> Frequencies {
        let a = u64::from(a.clamp(A_MIN, A_MAX));
        // tails[j] = round(2^16 * P(q >= j)), with P(q >= j) = a^j in 2^-32 steps.
        let mut tails = [0u32; TABLE];
        tails[0] = 1 << PRECISION;
        let mut s: u64 = 1 << 32;
        let mut q = 0;
        loop {
            s = (s * a) >> 16;
            q += 1;
            tails[q] = ((s + (1 << 15)) >> 16) as u32;
            if s < TAIL {
                break;
            }
        }
        let mut info = [0u32; TABLE];
        for (j, slot) in info.iter_mut().enumerate().take(q + 1) {
            let f = if j < q {
                tails[j] - tails[j + 1]
            } else {
                tails[q]
            };
            let cum = (1 << PRECISION) - tails[j];
            *slot = (cum << 16) | f;
        }
        Frequencies { q, info }
    }

    /// `(f, cum)` of symbol `s`.
    fn sym(&self, s: usize) -> (u64, u64) {
        let e = self.info[s];
        (u64::from(e & 0xffff), u64::from(e >> 16))
    }

    /// Expected cost of a quotient in bits under the model's own frequencies, given that
    /// quotients follow the model's geometric law.
    fn quotient_bits(&self) -> f64 {
        let mut bits = 0.0;
        let mut p_esc = 0.0;
        for s in 0..=self.q {
            let (f, _) = self.sym(s);
            let p = f as f64 / 65536.0;
            let cost = -(p.log2());
            if s < self.q {
                bits += p * cost;
            } else {
                p_esc = p;
                bits += p * cost;
            }
        }
        // Each escape is followed by another quotient: a geometric number of rounds.
        bits / (1.0 - p_esc)
    }
}

/// The quotient model of the decoder: the quotients' frequencies and, for each bucket of
/// `2^BUCKET_SHIFT` slots, its first symbol.
pub struct Model {
    /// Index of the escape symbol.
    q: usize,
    /// `(cum << 16) | f` per symbol.
    info: [u32; TABLE],
    /// First symbol of each bucket of `2^BUCKET_SHIFT` slots.
    bucket: [u8; 1 << (PRECISION - BUCKET_SHIFT)],
}

impl Model {
    /// The model of parameter `a` (`A_MIN..=A_MAX`, else clamped).
    pub fn new(a: u16) -> Model {
        let Frequencies { q, info } = Frequencies::new(a);
        let mut bucket = [0u8; 1 << (PRECISION - BUCKET_SHIFT)];
        let mut sym = 0usize;
        for (b, entry) in bucket.iter_mut().enumerate() {
            let slot = (b as u32) << BUCKET_SHIFT;
            while slot >= end(info[sym]) {
                sym += 1;
            }
            *entry = sym as u8;
        }
        Model { q, info, bucket }
    }

    /// `(f, cum)` of symbol `s`.
    #[cfg(test)]
    fn sym(&self, s: usize) -> (u64, u64) {
        let e = self.info[s];
        (u64::from(e & 0xffff), u64::from(e >> 16))
    }

    #[inline(always)]
    fn decode(&self, x: &mut u64) -> usize {
        let slot = (*x & 0xffff) as u32;
        let mut s = usize::from(self.bucket[(slot >> BUCKET_SHIFT) as usize]);
        let mut e = self.info[s];
        while slot >= end(e) {
            s = (s + 1) & (TABLE - 1);
            e = self.info[s];
        }
        *x = u64::from(e & 0xffff) * (*x >> PRECISION) + u64::from(slot - (e >> 16));
        s
    }
}

#[inline(always)]
fn end(e: u32) -> u32 {
    (e >> 16) + (e & 0xffff)
}

/// Bytes of `v` as a LEB128 varint.
fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros()).div_ceil(7) as usize
}

fn put_varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A shortest-form LEB128 varint at the front of `b`, and its length.
fn get_varint(b: &[u8]) -> Result<(u64, usize), PayloadError> {
    let mut v = 0u64;
    for (i, &byte) in b.iter().enumerate().take(10) {
        let bits = u64::from(byte & 0x7f);
        if i == 9 && byte > 1 {
            return Err("positional: count varint above 2^64 - 1");
        }
        v |= bits << (7 * i);
        if byte & 0x80 == 0 {
            if i > 0 && byte == 0 {
                return Err("positional: count varint not in shortest form");
            }
            return Ok((v, i + 1));
        }
    }
    Err("positional: payload ends inside the count varint")
}

/// Number of lanes for `c` gaps.
fn lanes(c: u64) -> usize {
    if c >= TWO_LANES_MIN {
        2
    } else {
        1
    }
}

/// Estimated payload bytes for `ones` one bits among `m`, from the counts only (with the
/// parameters [`GapParams::of`] gives).
pub fn estimate_len(m: u64, ones: u64) -> u64 {
    if ones == 0 {
        return 1;
    }
    let params = GapParams::of(m, ones);
    // The frequencies alone: the decoder's buckets cost more than the rest of the estimate.
    let model = Frequencies::new(params.a);
    let bits = ones as f64 * (f64::from(params.r) + model.quotient_bits());
    // States flushed (8 bytes a lane) carry about 4 bytes of the message each.
    let fixed = varint_len(ones) as f64 + 4.0 * lanes(ones) as f64 + 2.0;
    (bits / 8.0 + fixed).ceil() as u64
}

/// Encoder side of one symbol.
#[derive(Clone, Copy, Default)]
struct EncSym {
    f: u64,
    cum: u64,
}

/// Encodes the one bits of the first `m` bits of `words` (bits past m are ignored), with
/// parameters chosen from their count, appending the payload to `out`.
///
/// # Panics
/// If `words` holds fewer than `m` bits.
pub fn encode(words: &[u64], m: u64, out: &mut Vec<u8>) {
    assert!(
        words.len() as u64 >= m.div_ceil(64),
        "fewer words than m bits"
    );
    let mut positions = crate::entropy::scratch::take_u64(0);
    ones_into(words, m, &mut positions);
    let params = GapParams::of(m, positions.len() as u64);
    encode_positions(&positions, params, out);
    crate::entropy::scratch::give_u64(positions);
}

#[cfg(any(test, feature = "internals"))]
/// [`encode`] with given parameters.
///
/// # Panics
/// If `params` fail [`GapParams::check`] or `words` holds fewer than `m` bits.
pub fn encode_with(words: &[u64], m: u64, params: GapParams, out: &mut Vec<u8>) {
    assert!(
        words.len() as u64 >= m.div_ceil(64),
        "fewer words than m bits"
    );
    encode_positions(&ones(words, m), params, out);
}

/// Encodes a strictly increasing list of positions (all below the receiver's m).
///
/// # Panics
/// If `params` fail [`GapParams::check`] or the positions are not strictly increasing.
pub fn encode_positions(positions: &[u64], params: GapParams, out: &mut Vec<u8>) {
    params.check().expect("positional parameters");
    let c = positions.len() as u64;
    put_varint(c, out);
    if c == 0 {
        return;
    }

    let model = Frequencies::new(params.a);
    let mut syms = [EncSym::default(); TABLE];
    for (s, e) in syms.iter_mut().enumerate().take(model.q + 1) {
        let (f, cum) = model.sym(s);
        *e = EncSym { f, cum };
    }
    let esc = syms[model.q];
    let qn = model.q as u64;
    let r = u32::from(params.r);
    let rj = r.min(R_JOINT);
    let k = r - rj;
    let nl = lanes(c);
    let mut x = [LOWER; 2];
    let mut stack = crate::entropy::scratch::take_u32(positions.len() / 2 + 4);
    for i in (0..positions.len()).rev() {
        let prev = if i == 0 { 0 } else { positions[i - 1] + 1 };
        assert!(positions[i] >= prev, "positions not strictly increasing");
        let g = positions[i] - prev;
        let st = &mut x[i % nl];
        let q = g >> r;
        let rem = g & ((1u64 << r) - 1);
        if k > 0 {
            if *st >= 1u64 << (63 - k) {
                stack.push(*st as u32);
                *st >>= 32;
            }
            *st = (*st << k) | (rem >> rj);
        }
        let (escapes, last) = if q < qn { (0, q) } else { (q / qn, q % qn) };
        let e = syms[last as usize];
        if *st >= e.f << (47 - rj) {
            stack.push(*st as u32);
            *st >>= 32;
        }
        let y = (*st << rj) | (rem & ((1u64 << rj) - 1));
        *st = ((y / e.f) << PRECISION) + y % e.f + e.cum;
        for _ in 0..escapes {
            if *st >= esc.f << 47 {
                stack.push(*st as u32);
                *st >>= 32;
            }
            *st = ((*st / esc.f) << PRECISION) + *st % esc.f + esc.cum;
        }
    }
    for j in (0..nl).rev() {
        stack.push((x[j] >> 32) as u32);
        stack.push(x[j] as u32);
    }
    out.reserve(stack.len() * 4);
    for w in stack.iter().rev() {
        out.extend_from_slice(&w.to_le_bytes());
    }
    crate::entropy::scratch::give_u32(stack);
}

/// Positions of the one bits among the first `m` bits of `words`.
#[cfg(any(test, feature = "internals"))]
pub fn ones(words: &[u64], m: u64) -> Vec<u64> {
    let mut out = Vec::new();
    ones_into(words, m, &mut out);
    out
}

/// [`ones`], appended to `out`.
fn ones_into(words: &[u64], m: u64, out: &mut Vec<u64>) {
    let full = (m / 64) as usize;
    let mut scan = |i: usize, mut w: u64| {
        while w != 0 {
            out.push(((i as u64) << 6) | u64::from(w.trailing_zeros()));
            w &= w - 1;
        }
    };
    for (i, &w) in words[..full].iter().enumerate() {
        if w != 0 {
            scan(i, w);
        }
    }
    if !m.is_multiple_of(64) {
        scan(full, words[full] & ((1u64 << (m % 64)) - 1));
    }
}

#[cfg(any(test, feature = "internals"))]
/// Counts the one bits among the first `m` bits of `words`.
pub fn count_ones(words: &[u64], m: u64) -> u64 {
    let full = (m / 64) as usize;
    let mut c: u64 = words[..full]
        .iter()
        .map(|w| u64::from(w.count_ones()))
        .sum();
    if !m.is_multiple_of(64) {
        c += u64::from((words[full] & ((1u64 << (m % 64)) - 1)).count_ones());
    }
    c
}

/// The stream of 32-bit words after the count.
struct Reader<'a> {
    body: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    #[inline(always)]
    fn renorm(&mut self, x: &mut u64) -> Result<(), PayloadError> {
        if *x < LOWER {
            let Some(w) = self.body.get(self.pos..self.pos + 4) else {
                return Err("positional: payload ends before the last gap");
            };
            *x = (*x << 32) | u64::from(u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
            self.pos += 4;
        }
        Ok(())
    }

    fn state(&mut self) -> Result<u64, PayloadError> {
        let b = &self.body[self.pos..self.pos + 8];
        self.pos += 8;
        let x = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        if !(LOWER..1 << 63).contains(&x) {
            return Err("positional: initial state outside 2^31..2^63");
        }
        Ok(x)
    }
}

/// Checked header of a payload: the count and where the stream starts.
struct Header<'a> {
    c: u64,
    params: GapParams,
    body: &'a [u8],
}

fn header(payload: &[u8], m: u64) -> Result<Header<'_>, PayloadError> {
    let (c, n) = get_varint(payload)?;
    let rest = &payload[n..];
    if c > m {
        return Err("positional: more ones than bits");
    }
    if c == 0 {
        if !rest.is_empty() {
            return Err("positional: bytes after the count of an empty array");
        }
        return Ok(Header {
            c,
            params: GapParams { r: 0, a: A_MAX },
            body: rest,
        });
    }
    let body = rest;
    let params = GapParams::of(m, c);
    if !body.len().is_multiple_of(4) {
        return Err("positional: stream not a whole number of words");
    }
    if body.len() < 8 * lanes(c) {
        return Err("positional: payload ends before the states");
    }
    // Every gap costs more than one bit of the stream; see the module documentation.
    if c > 8 * body.len() as u64 {
        return Err("positional: more ones than the payload can carry");
    }
    Ok(Header { c, params, body })
}

/// Decodes one gap, with `avail` bits left from the first position it may land on (the
/// gap must be below `avail`).
#[inline(always)]
fn gap(
    x: &mut u64,
    rd: &mut Reader,
    model: &Model,
    r: u32,
    avail: u64,
) -> Result<u64, PayloadError> {
    if avail == 0 {
        return Err("positional: gap past m");
    }
    let rj = r.min(R_JOINT);
    let mut q = 0u64;
    let mut s = model.decode(x);
    while s == model.q {
        rd.renorm(x)?;
        q += model.q as u64;
        if q > (avail - 1) >> r {
            return Err("positional: gap past m");
        }
        s = model.decode(x);
    }
    let lo = *x & ((1u64 << rj) - 1);
    *x >>= rj;
    rd.renorm(x)?;
    let mut rem = lo;
    if r > rj {
        let k = r - rj;
        rem |= (*x & ((1u64 << k) - 1)) << rj;
        *x >>= k;
        rd.renorm(x)?;
    }
    // q <= (avail - 1) >> r here, so this does not overflow.
    let q = q + s as u64;
    if q > (avail - 1) >> r {
        return Err("positional: gap past m");
    }
    let g = (q << r) | rem;
    if g >= avail {
        return Err("positional: gap past m");
    }
    Ok(g)
}

/// Decodes the positions of the one bits in order, calling `f` for each, and returns their
/// number. `f` may be called for some positions before an error is found later in the
/// payload: use [`check`] first, or [`positions`], to act only on a valid payload.
pub fn for_each_one(payload: &[u8], m: u64, f: impl FnMut(u64)) -> Result<u64, PayloadError> {
    run(header(payload, m)?, m, f)
}

/// [`for_each_one`] with other parameters than the payload's own (tests of the coder).
#[cfg(test)]
fn for_each_one_with(
    payload: &[u8],
    m: u64,
    params: GapParams,
    f: impl FnMut(u64),
) -> Result<u64, PayloadError> {
    let mut h = header(payload, m)?;
    h.params = params;
    run(h, m, f)
}

fn run(h: Header<'_>, m: u64, mut f: impl FnMut(u64)) -> Result<u64, PayloadError> {
    let params = h.params;
    if h.c == 0 {
        return Ok(0);
    }
    let model = Model::new(params.a);
    let r = u32::from(params.r);
    let mut rd = Reader {
        body: h.body,
        pos: 0,
    };
    let mut next = 0u64; // first position the next one bit may take
    let mut x0 = rd.state()?;
    if lanes(h.c) == 1 {
        for _ in 0..h.c {
            let g = gap(&mut x0, &mut rd, &model, r, m - next)?;
            f(next + g);
            next += g + 1;
        }
        finish(&[x0], &rd)?;
    } else {
        let mut x1 = rd.state()?;
        for _ in 0..h.c / 2 {
            let g = gap(&mut x0, &mut rd, &model, r, m - next)?;
            f(next + g);
            next += g + 1;
            let g = gap(&mut x1, &mut rd, &model, r, m - next)?;
            f(next + g);
            next += g + 1;
        }
        if h.c % 2 == 1 {
            let g = gap(&mut x0, &mut rd, &model, r, m - next)?;
            f(next + g);
        }
        finish(&[x0, x1], &rd)?;
    }
    Ok(h.c)
}

/// The final check: every state back at 2^31 and every word read.
fn finish(x: &[u64], rd: &Reader) -> Result<(), PayloadError> {
    if x.iter().any(|&s| s != LOWER) || rd.pos != rd.body.len() {
        return Err("positional: stream does not end where the last gap does");
    }
    Ok(())
}

#[cfg(any(test, feature = "internals"))]
/// Validates a payload without writing anything; returns the number of one bits.
pub fn check(payload: &[u8], m: u64) -> Result<u64, PayloadError> {
    for_each_one(payload, m, |_| {})
}

/// The positions of the one bits of a valid payload, in increasing order. The list grows
/// as positions are decoded, never ahead of them from the count the payload claims.
#[cfg(any(test, feature = "internals"))]
pub fn positions(payload: &[u8], m: u64) -> Result<Vec<u64>, PayloadError> {
    let mut out = Vec::new();
    for_each_one(payload, m, |p| out.push(p))?;
    Ok(out)
}

/// Decodes a payload into the words of exactly `m` bits: `out` has `ceil(m / 64)` words, is
/// overwritten entirely (zeros, then the one bits), and bits past `m` are zero. On error the
/// contents of `out` are unspecified.
pub fn decode_into(payload: &[u8], m: u64, out: &mut [u64]) -> Result<(), PayloadError> {
    out.fill(0);
    decode_into_zeroed(payload, m, out)
}

/// [`decode_into`] for an `out` the caller has just zeroed (a frame decoder's fresh array):
/// only the one bits are written, so the array is not zeroed twice.
pub(crate) fn decode_into_zeroed(
    payload: &[u8],
    m: u64,
    out: &mut [u64],
) -> Result<(), PayloadError> {
    if out.len() as u64 != m.div_ceil(64) {
        return Err("positional: output is not ceil(m / 64) words");
    }
    debug_assert!(out.iter().all(|&w| w == 0), "out must be zeroed");
    for_each_one(payload, m, |p| out[(p >> 6) as usize] |= 1u64 << (p & 63))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64*: the tests' bit generator.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
    }

    /// m bits, each one with probability p1, as words.
    fn bits(m: u64, p1: f64, seed: u64) -> Vec<u64> {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut words = vec![0u64; m.div_ceil(64) as usize];
        let threshold = (p1 * 2f64.powi(64)) as u64;
        if p1 < 0.01 {
            // Geometric skips: O(ones).
            let lnq = (-p1).ln_1p();
            let mut pos = 0u64;
            loop {
                let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
                let skip = ((1.0 - u).ln() / lnq).floor();
                if skip >= (m - pos) as f64 {
                    break;
                }
                pos += skip as u64;
                words[(pos >> 6) as usize] |= 1 << (pos & 63);
                pos += 1;
                if pos >= m {
                    break;
                }
            }
        } else {
            for i in 0..m {
                if rng.next() < threshold {
                    words[(i >> 6) as usize] |= 1 << (i & 63);
                }
            }
        }
        words
    }

    fn entropy_bytes(m: u64, ones: u64) -> f64 {
        if ones == 0 || ones == m {
            return 0.0;
        }
        let p = ones as f64 / m as f64;
        m as f64 * -(p * p.log2() + (1.0 - p) * (1.0 - p).log2()) / 8.0
    }

    fn round_trip(words: &[u64], m: u64, params: GapParams) -> Vec<u8> {
        let mut payload = Vec::new();
        encode_with(words, m, params, &mut payload);
        let mut out = vec![0u64; m.div_ceil(64) as usize];
        for_each_one_with(&payload, m, params, |p| {
            out[(p >> 6) as usize] |= 1 << (p & 63)
        })
        .expect("decodes");
        let mut want = words[..out.len()].to_vec();
        if !m.is_multiple_of(64) {
            *want.last_mut().unwrap() &= (1u64 << (m % 64)) - 1;
        }
        assert!(out == want, "m {m} params {params:?}: decoded bits differ");
        let c = count_ones(words, m);
        if params == GapParams::of(m, c) {
            let mut again = vec![u64::MAX; out.len()];
            decode_into(&payload, m, &mut again).unwrap();
            assert!(again == out);
            assert_eq!(check(&payload, m), Ok(c));
            assert_eq!(positions(&payload, m).unwrap(), ones(words, m));
        }
        payload
    }

    #[test]
    fn every_model_is_sound() {
        let mut largest_q = 0;
        let mut smallest_f = u64::MAX;
        for a in A_MIN..=A_MAX {
            let model = Model::new(a);
            let mut sum = 0;
            for s in 0..=model.q {
                let (f, cum) = model.sym(s);
                assert_eq!(cum, sum, "a {a} symbol {s}");
                assert!((16..=30720).contains(&f), "a {a} symbol {s}: f {f}");
                smallest_f = smallest_f.min(f);
                sum += f;
            }
            assert_eq!(sum, 1 << 16, "a {a}");
            largest_q = largest_q.max(model.q);
            // The bucket table points at the symbol of each bucket's first slot.
            for (b, &s) in model.bucket.iter().enumerate() {
                let slot = (b as u64) << BUCKET_SHIFT;
                let (f, cum) = model.sym(s as usize);
                assert!(cum <= slot && slot < cum + f, "a {a} bucket {b}");
            }
        }
        assert!(largest_q < 255);
        println!("largest Q {largest_q}, smallest frequency {smallest_f}");
    }

    #[test]
    fn round_trips_over_densities_and_lengths() {
        let densities = [1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5];
        let lengths = [
            1u64, 2, 3, 63, 64, 65, 127, 128, 1000, 4097, 65_537, 100_003, 1_000_000,
        ];
        for (i, &p1) in densities.iter().enumerate() {
            for (j, &m) in lengths.iter().enumerate() {
                let words = bits(m, p1, (i * 100 + j) as u64);
                let c = count_ones(&words, m);
                round_trip(&words, m, GapParams::of(m, c));
            }
        }
        for &p1 in &[1e-6, 1e-3, 0.02, 0.1] {
            let m = 10_000_000 - 3;
            let words = bits(m, p1, 7);
            round_trip(&words, m, GapParams::of(m, count_ones(&words, m)));
        }
    }

    #[test]
    fn round_trips_with_any_parameters() {
        let m = 20_011;
        for (i, &p1) in [0.0005, 0.01, 0.3].iter().enumerate() {
            let words = bits(m, p1, 40 + i as u64);
            for r in [0u8, 1, 7, 14, 15, 16, 17, 30, 46] {
                for a in [A_MIN, 50_000, 60_000, A_MAX] {
                    round_trip(&words, m, GapParams { r, a });
                }
            }
        }
    }

    #[test]
    fn around_the_two_lane_count() {
        for c in [1u64, 2, 3, 8190, 8191, 8192, 8193, 8194] {
            let m = c * 37 + 5;
            let mut words = vec![0u64; m.div_ceil(64) as usize];
            let mut rng = Rng(c + 1);
            let mut set = 0;
            while set < c {
                let p = rng.next() % m;
                if words[(p >> 6) as usize] & (1 << (p & 63)) == 0 {
                    words[(p >> 6) as usize] |= 1 << (p & 63);
                    set += 1;
                }
            }
            round_trip(&words, m, GapParams::of(m, c));
        }
    }

    #[test]
    fn empty_and_full_arrays() {
        for m in (1..=200).chain([4096, 100_001]) {
            let empty = vec![0u64; (m as u64).div_ceil(64) as usize];
            let full = vec![u64::MAX; (m as u64).div_ceil(64) as usize];
            let m = m as u64;
            for p in [GapParams::of(m, 0), GapParams::of(m, m)] {
                assert_eq!(round_trip(&empty, m, p), [0]);
                round_trip(&full, m, p);
            }
        }
        // A one at the very last bit of the largest filter.
        let m = 1u64 << 40;
        let params = GapParams::of(m, 1);
        let mut payload = Vec::new();
        encode_positions(&[m - 1], params, &mut payload);
        assert_eq!(positions(&payload, m).unwrap(), [m - 1]);
        assert!(payload.len() <= 16, "{} bytes", payload.len());
    }

    /// m * H(p^) / 8 against the payload, for m = 8e6 and every density; the bound
    /// (0.1% + 16 bytes) is asserted where an encoder picks this coding, p0 >= 0.9.
    #[test]
    fn size_against_the_entropy_bound() {
        println!(
            "{:>10} {:>9} {:>4} {:>6} {:>11} {:>11} {:>9}",
            "m", "p1", "r", "a", "bytes", "m*H/8", "over"
        );
        for m in [1_000u64, 10_000, 100_000, 8_000_000] {
            for (i, &p1) in [
                1e-6, 1e-5, 1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5,
            ]
            .iter()
            .enumerate()
            {
                let words = bits(m, p1, 1000 + i as u64);
                let c = count_ones(&words, m);
                let params = GapParams::of(m, c);
                let mut payload = Vec::new();
                encode_with(&words, m, params, &mut payload);
                let bound = entropy_bytes(m, c);
                let len = payload.len() as f64;
                println!(
                    "{m:>10} {p1:>9} {:>4} {:>6} {:>11} {:>11.1} {:>+8.3}%",
                    params.r,
                    params.a,
                    payload.len(),
                    bound,
                    (len / bound - 1.0) * 100.0
                );
                if c as f64 <= 0.1 * m as f64 {
                    let est = estimate_len(m, c) as f64;
                    assert!(
                        (est - len).abs() <= 0.002 * len + 8.0,
                        "estimate {est} for {len}"
                    );
                    assert!(
                        len <= bound * 1.001 + 16.0,
                        "m {m} p1 {p1}: {len} > {bound}"
                    );
                }
            }
        }
    }

    fn sample() -> (Vec<u8>, u64, GapParams, Vec<u64>) {
        let m = 5_000;
        let words = bits(m, 0.01, 3);
        let c = count_ones(&words, m);
        let params = GapParams::of(m, c);
        let mut payload = Vec::new();
        encode(&words, m, &mut payload);
        (payload, m, params, ones(&words, m))
    }

    #[test]
    fn rejects_every_malformed_class() {
        let (payload, m, params, pos) = sample();
        let c = pos.len() as u64;
        assert!(c > 1 && c < 128, "one-byte count");
        let _ = params;
        let stream = &payload[1..];
        let with = |count: &[u8]| [count, stream].concat();
        let err = |p: &[u8], m: u64| check(p, m).unwrap_err();
        // The count: missing, not shortest, lying either way, above m, above 8 * L.
        assert!(err(&[], m).contains("inside the count"));
        assert!(err(&[0x80], m).contains("inside the count"));
        assert!(err(&with(&[c as u8 | 0x80, 0]), m).contains("shortest"));
        assert!(err(&[0x80, 0x00], m).contains("shortest"));
        assert!(err(&[0, 0, 0, 0, 0], m).contains("empty array"));
        for lie in [c - 1, c + 1] {
            let e = err(&with(&[lie as u8]), m);
            assert!(
                e.contains("does not end") || e.contains("ends before") || e.contains("past m"),
                "{e}"
            );
        }
        assert!(err(&payload, c - 1).contains("more ones than bits"));
        let mut big = Vec::new();
        put_varint(8 * stream.len() as u64 + 1, &mut big);
        assert!(err(&with(&big), 1 << 40).contains("can carry"));
        // The stream: ragged, too short for the states, a state out of range.
        assert!(err(&payload[..payload.len() - 1], m).contains("whole number"));
        assert!(err(&[1, 0, 0, 0, 0], m).contains("before the states"));
        let mut low = payload.clone();
        low[1..9].copy_from_slice(&(LOWER - 1).to_le_bytes());
        assert!(err(&low, m).contains("initial state"));
        let mut high = payload.clone();
        high[1..9].copy_from_slice(&(1u64 << 63).to_le_bytes());
        assert!(err(&high, m).contains("initial state"));
        // Ending early or late.
        assert!(err(&payload[..payload.len() - 4], m).contains("ends before"));
        let late = [payload.as_slice(), &[0, 0, 0, 0]].concat();
        assert!(err(&late, m).contains("does not end"));
        // A one beyond m: the same positions against a shorter array.
        let last = *pos.last().unwrap();
        assert!(check(&payload, last).is_err());
        let past = GapParams::of(last, c);
        let mut other = Vec::new();
        encode_positions(&pos, past, &mut other);
        assert!(err(&other, last).contains("past m"));
        // Output of the wrong size.
        let mut short = vec![0u64; (m / 64) as usize];
        assert!(decode_into(&payload, m, &mut short)
            .unwrap_err()
            .contains("ceil"));
    }

    /// A payload that decodes is the encoder's payload of what it decodes to: any byte
    /// changed either fails or (never, in practice) re-encodes to the changed bytes.
    #[test]
    fn one_payload_per_set_of_positions() {
        let mut rng = Rng(99);
        for case in 0..300u64 {
            let m = 1 + rng.next() % 3000;
            let words = bits(m, [0.001, 0.01, 0.1, 0.4][case as usize % 4], case);
            let mut payload = Vec::new();
            encode(&words, m, &mut payload);
            for _ in 0..64 {
                let mut bad = payload.clone();
                let i = (rng.next() % bad.len() as u64) as usize;
                bad[i] ^= 1 << (rng.next() % 8);
                if let Ok(p) = positions(&bad, m) {
                    let mut again = Vec::new();
                    encode_positions(&p, GapParams::of(m, p.len() as u64), &mut again);
                    assert_eq!(again, bad, "two payloads for one set of positions");
                }
            }
        }
    }

    /// Decoding work is bounded by the payload: the largest legal m with a few bytes of
    /// stream is rejected or decoded in at most 8 * L steps.
    #[test]
    fn small_payloads_cannot_ask_for_much_work() {
        let m = 1u64 << 48;
        let mut rng = Rng(5);
        for _ in 0..20_000 {
            let len = 8 + 4 * (rng.next() % 4) as usize;
            let mut p = Vec::new();
            put_varint(1 + rng.next() % (8 * len as u64), &mut p);
            for _ in 0..len {
                p.push(rng.next() as u8);
            }
            let r = (rng.next() % 47) as u8;
            let a = A_MIN + (rng.next() % u64::from(A_MAX - A_MIN + 1)) as u16;
            let mut calls = 0u64;
            let _ = for_each_one_with(&p, m, GapParams { r, a }, |_| calls += 1);
            assert!(calls <= 8 * len as u64);
        }
    }
}
