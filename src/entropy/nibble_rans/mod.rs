//! Nibbles coded by 32 interleaved 32-bit rANS lanes at precision 13 through a 16-bucket
//! alias table: what codings 8 (*dense*, spec §4.12) and 10 (*wide*, §4.14) share. The
//! model (the binomial nibble frequencies, the alias table and its two lookup tables), the
//! lanes' order within a round, and the encoder of whole rounds with its AVX2 and AVX-512
//! kernels; each coding lays out its own payload (states and streams) and decodes it.
//!
//! * **Nibble symbols** (4 bits, 16 values), so that the whole decoding table is 16 entries:
//!   one AVX2 vector permutation pair looks it up for eight states at once, one AVX-512
//!   `vpermd` for sixteen, with no gather.
//! * **32 lanes** of **32-bit states** in `[2^15, 2^31)` that take in 16-bit words, at most
//!   one per symbol. Lane `l` codes, in each round of 32 nibbles, nibble
//!   `4 (l mod 8) + floor(l / 8)`: four vectors of eight then hold the four nibbles of each
//!   16-bit piece of the round, which a shift and an OR put in place.
//! * **Precision 13** with coding 3's model rule (floor, at least 1, remainder to the first
//!   largest) on nibbles.
//! * **An alias table** of 16 buckets of 512 slots, each split between at most two symbols
//!   (Walker's method, as in Fabian Giesen's "rANS with static probability distributions"),
//!   every symbol's own bucket numbered first: decoding a symbol is two lookups in 128 bytes
//!   of tables, no search and no division.

// The vector encoders of whole rounds, the AVX2 decoding round, and what the AVX2 and
// AVX-512 kernels of both codings share; each behind runtime feature detection and held to the scalar code here
// by the tests and the fuzz target `kernel_twins`.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
pub(crate) mod avx512;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
pub(crate) mod decode_avx2;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
pub(crate) mod encode_avx2;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
pub(crate) mod encode_avx512;
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
pub(crate) mod lanes_avx2;

/// Number of interleaved states.
pub(crate) const LANES: usize = 32;

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
            if lanes_avx2::available() {
                all.push(Kernel::Avx2);
            }
            if avx512::available() {
                all.push(Kernel::Avx512);
            }
        }
        all
    }

    /// The fastest kernel this CPU runs.
    pub(crate) fn fastest() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        {
            if avx512::available() {
                return Kernel::Avx512;
            }
            if lanes_avx2::available() {
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

/// Expected bits per nibble that the precision-13 model of `counts.q0` costs over the
/// nibble model with the same `q0` (for the encoder's size model; floats, never in a
/// decoder).
pub(crate) fn excess_bits(counts: &crate::entropy::model::Counts) -> f64 {
    counts.nibble_excess_bits(PRECISION)
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
    pub(crate) fn put(&self, x: &mut u32, v: usize, buf: &mut [u8], at: &mut usize) {
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
pub(crate) fn round_bits(words: &[u64], r: usize) -> u128 {
    u128::from(words[2 * r]) | u128::from(*words.get(2 * r + 1).unwrap_or(&0)) << 64
}

/// Code the whole rounds `0 .. rounds` of `words` (two words a round) onto the states `x`,
/// last to first and the lanes of each in reverse order, their words into `buf`; the rounds
/// in blocks, each with room for a word per nibble below it, by `kernel` (which the CPU
/// must have; the vector encoders' tables built once).
pub(crate) fn encode_rounds(
    words: &[u64],
    rounds: usize,
    model: &EncModel,
    x: &mut [u32; LANES],
    buf: &mut Backwards,
    kernel: Kernel,
) {
    #[cfg(target_arch = "x86_64")]
    let avx512 = match kernel {
        Kernel::Avx512 => encode_avx512::Encoder::new(model),
        _ => None,
    };
    let mut end = rounds;
    while end > 0 {
        let start = end.saturating_sub(BLOCK_ROUNDS);
        buf.reserve(ROUND * (end - start));
        let block = &words[2 * start..2 * end];
        let (b, at) = (&mut buf.buf, &mut buf.at);
        let vector = match kernel {
            Kernel::Scalar => false,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => encode_avx2::encode_rounds(model, x, block, end - start, b, at),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512 => match &avx512 {
                Some(encoder) => {
                    encoder.encode_rounds(x, block, end - start, b, at);
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
}

/// Rounds coded between two checks of the room for words (16 KiB of nibbles).
pub(crate) const BLOCK_ROUNDS: usize = 1024;

/// Words written little-endian from the end of a buffer backwards (so that the payload's
/// words come out in order, in one copy), which grows at its front when a block of rounds
/// might not fit: a word per nibble is the most a payload can have, but four times or
/// more what a dense filter's has, and zeroing that much cost a tenth of an encode.
pub(crate) struct Backwards {
    pub(crate) buf: Vec<u8>,
    /// Where the last word written starts, in words.
    pub(crate) at: usize,
}

impl Backwards {
    /// Room for `words` (and `ROOM`), in the thread's scratch memory: what an earlier encode
    /// left there is overwritten before it is read, so it is not zeroed again.
    pub(crate) fn new(words: usize) -> Self {
        let len = ROOM + words;
        let mut buf = crate::entropy::scratch::take_bytes_unzeroed(2 * len);
        buf.truncate(buf.len() / 2 * 2);
        let at = buf.len() / 2;
        Backwards { buf, at }
    }

    /// Make room for `words` more below the ones written, and the vector encoders' `ROOM`.
    pub(crate) fn reserve(&mut self, words: usize) {
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

    pub(crate) fn written(&self) -> &[u8] {
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
pub(crate) fn expected_words(n: usize, model: &EncModel) -> usize {
    // The model's q0, from its frequencies: f(0) / 2^13 = q0^4.
    let f0 = f64::from(model.meta[0] & 0x1FFF) / f64::from(1u32 << PRECISION);
    let p0 = f0.powf(0.25).clamp(1e-9, 1.0 - 1e-9);
    let bits = n as f64 * 4.0 * crate::theory::entropy(p0) * 1.01;
    ((bits / 16.0) as usize + ROUND * BLOCK_ROUNDS).min(n + 1)
}

/// The whole rounds of `words` coded from states at `2^15` by each kernel this CPU runs, the
/// scalar one first: the final states and the words, which must all be equal.
#[cfg(test)]
pub(crate) fn encode_rounds_kernels(
    words: &[u64],
    q0: u16,
) -> crate::entropy::ByKernel<([u32; LANES], Vec<u8>)> {
    let model = EncModel::new(q0);
    Kernel::available()
        .into_iter()
        .map(|k| {
            let (mut x, mut buf) = ([LOWER; LANES], Backwards::new(0));
            encode_rounds(words, words.len() / 2, &model, &mut x, &mut buf, k);
            (k.name(), (x, buf.written().to_vec()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn this_cpu_runs_every_kernel_it_has() {
        // On a CPU with AVX-512 (the development machine's), all three kernels are
        // compared above; elsewhere, those it has.
        let names: Vec<_> = Kernel::available().iter().map(|k| k.name()).collect();
        println!("the nibble lanes' kernels on this CPU: {names:?}");
        assert_eq!(names[0], "scalar");
        assert_eq!(Kernel::fastest().name(), *names.last().unwrap());
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
            assert!(
                (excess_bits(&crate::entropy::model::Counts::new(0, 0, q0)) / (4.0 * h) - c).abs()
                    < 1e-9
            );
        }
    }
}
