//! Coding 11's tables (spec §4.15): the precise spread of a tANS table and the decoding and
//! encoding tables built from it.
//!
//! A symbol `s` of frequency `f(s)` takes `f(s)` positions of the `2^P`; its `i`-th
//! (`i = 0 .. f(s) - 1`) is ideally at `(i + 1/2) 2^P / f(s)`. The spread lists every pair
//! `(s, i)` by `(2i + 1) / f(s)`, ties by the smaller `s`, and gives the `t`-th pair
//! position `t`. So a symbol's positions come in the order of their `i` with no counting:
//! position `t` of pair `(s, i)` is the state `k = f(s) + i` of `s`, which is what the
//! stride spread of coding 9 must count position by position, a chain through memory.
//!
//! Built fast, from the alphabets' shape: the symbols of equal frequency come in runs (the
//! bytes of equal count of ones), whose pairs of equal `i` share a key and so take
//! neighbouring positions, a *group*. The run with the most groups (the largest frequency)
//! fills the gaps between the others' groups, which are merged one by one: at the paper's
//! density 290 merge steps place the 4096 primary positions.

/// Runs of symbols of equal frequency a walk takes: eight, so that the smallest key is a
/// minimum of eight, three levels deep. Coding 11's alphabets have at most six (four or
/// five counts of ones, the escape, and the symbol that took the rounding), for every q0:
/// the test `every_q0_gives_few_enough_runs`.
const MAX_RUNS: usize = 8;

/// A run of symbols of equal frequency `f`: symbols `first .. first + n`.
#[derive(Clone, Copy, Default)]
struct Run {
    first: usize,
    n: usize,
    f: u32,
}

/// What a walk of the spread fills, a group at a time (a trait rather than a closure, so
/// that each call is inlined).
pub(crate) trait Groups {
    /// Positions `t .. t + n` hold symbols `first .. first + n`, each its `i`-th.
    fn group(&mut self, t: usize, first: usize, n: usize, i: u32);

    /// The walk's filler run: symbols `first .. first + n`, of frequency `f`; told before
    /// any group.
    #[inline(always)]
    fn filler(&mut self, _first: usize, _n: usize, _f: u32) {}

    /// The filler's groups `from .. to`, from position `t` on (`n` positions each).
    #[inline(always)]
    fn fill(&mut self, t: usize, first: usize, n: usize, from: u32, to: u32) {
        fill_by_groups(self, t, first, n, from, to)
    }
}

/// [`Groups::fill`] a group at a time.
#[inline(always)]
fn fill_by_groups(
    each: &mut (impl Groups + ?Sized),
    t: usize,
    first: usize,
    n: usize,
    from: u32,
    to: u32,
) {
    for (g, i) in (from..to).enumerate() {
        each.group(t + g * n, first, n, i);
    }
}

/// The smallest of eight, in a tree (a chain of seven comparisons would be the walk's
/// longest dependency).
#[inline(always)]
fn min8(k: [u64; MAX_RUNS]) -> u64 {
    let a = [
        k[0].min(k[1]),
        k[2].min(k[3]),
        k[4].min(k[5]),
        k[6].min(k[7]),
    ];
    a[0].min(a[1]).min(a[2].min(a[3]))
}

/// The runs of equal frequency of `f` (at most [`MAX_RUNS`]) and their count.
#[inline(always)]
fn runs_of(f: &[u32]) -> ([Run; MAX_RUNS], usize) {
    let mut runs = [Run::default(); MAX_RUNS];
    let mut count = 0;
    let mut s = 0;
    while s < f.len() {
        let mut end = s + 1;
        while end < f.len() && f[end] == f[s] {
            end += 1;
        }
        runs[count] = Run {
            first: s,
            n: end - s,
            f: f[s],
        };
        count += 1;
        s = end;
    }
    (runs, count)
}

/// Walk the spread of `f` (frequencies summing to a power of two, at most 2^12, and at
/// most [`MAX_RUNS`] runs of equal ones), each group in increasing position.
///
/// Each step takes the smallest key of the runs other than the filler (a minimum, no
/// branch), then the filler's groups before it (a division, by a multiplication), then the
/// group.
///
/// A run's key is `(2i + 1) / f` for its next `i`, as the integer `floor((2i + 1) 2^32 / f)`
/// shifted left by 8 with the run's index below (distinct keys differ by at least `2^-24`,
/// 256 units, so the order is exact and equal keys tie by run); it moves by `2^33 / f`, a
/// quotient and a remainder.
#[inline(always)]
pub(crate) fn spread(f: &[u32], each: &mut impl Groups) {
    let (runs, count) = runs_of(f);
    let runs = &runs[..count];
    // The filler: the first run of the largest frequency.
    let mut filler = 0;
    for r in 1..count {
        if runs[r].f > runs[filler].f {
            filler = r;
        }
    }
    let fill = runs[filler];
    each.filler(fill.first, fill.n, fill.f);
    // Per run: its key (the filler's, and the slots past the runs, never the smallest), the
    // remainder of its division, its step, and for the filler's groups before its group
    // (2j + 1) g.f < (2i + 1) fill.f, or equal with the filler first, the count
    // floor(((2i + 1) fill.f + g.f - 1 + tie) / (2 g.f)): the dividend's constant part and
    // the divisor's reciprocal ceil(2^64 / (2 g.f)), exact for dividends below 2^32 (these
    // are below 2^26).
    let mut key = [u64::MAX; MAX_RUNS];
    let mut rem = [0u64; MAX_RUNS];
    let mut step = [(0u64, 0u64); MAX_RUNS];
    let mut over = [(0u64, 0u64); MAX_RUNS];
    let mut groups = 0;
    for (r, run) in runs.iter().enumerate() {
        let g = u64::from(run.f);
        step[r] = ((1 << 33) / g, (1 << 33) % g);
        over[r] = (g - 1 + u64::from(filler < r), u64::MAX / (2 * g) + 1);
        if r != filler {
            key[r] = ((1 << 32) / g) << 8 | r as u64;
            rem[r] = (1 << 32) % g;
            groups += run.f;
        }
    }
    let mut next = [0u32; MAX_RUNS];
    let (mut t, mut filled) = (0usize, 0u32);
    for _ in 0..groups {
        let best = (min8(key) & 0xFF) as usize % MAX_RUNS;
        let (g, i) = (runs[best], next[best]);
        let (plus, reciprocal) = over[best];
        let dividend = u64::from(2 * i + 1) * u64::from(fill.f) + plus;
        let upto = (((u128::from(dividend) * u128::from(reciprocal)) >> 64) as u32).min(fill.f);
        each.fill(t, fill.first, fill.n, filled, upto);
        t += (upto - filled) as usize * fill.n;
        filled = upto;
        each.group(t, g.first, g.n, i);
        t += g.n;
        // The run's next key, or none; the state written lane by lane as selects, so that
        // it stays in registers (an indexed store and the next step's loads would lengthen
        // the walk's longest dependency: 2.1 µs instead of 3.2 for the paper's primary
        // table's walk).
        let (q, r) = step[best];
        let sum = rem[best] + r;
        let carry = u64::from(sum >= u64::from(g.f));
        let moved = match i + 1 == g.f {
            true => u64::MAX,
            false => key[best] + ((q + carry) << 8),
        };
        let rest = sum - carry * u64::from(g.f);
        for lane in 0..MAX_RUNS {
            let hit = lane == best;
            key[lane] = if hit { moved } else { key[lane] };
            rem[lane] = if hit { rest } else { rem[lane] };
            next[lane] = if hit { i + 1 } else { next[lane] };
        }
    }
    each.fill(t, fill.first, fill.n, filled, fill.f);
    debug_assert_eq!(
        t + (fill.f - filled) as usize * fill.n,
        f.iter().sum::<u32>() as usize
    );
}

/// The decoding table of one alphabet at precision `P` (`N = 2^P` positions): per position
/// `u`, the byte it decodes; the count of bits its step reads (`nb`, bits 0 .. 5) with the
/// escape's flag (bit 6, [`ESCAPE_FLAG`]); their mask `2^nb - 1`; and `base` (the next state
/// is `base` plus the bits read), each in its own table.
///
/// A step is then a load and an `and` of the mask, a load of `base` and an add; the low six
/// bits of a sum of up to four `nb` entries are the bits their steps read (at most 48: no
/// carry into the flags), what a shift past them takes, and the bits above count the
/// escapes among them. And `base + read(nb)` is below `N` for every position (`base = k 2^nb
/// - N` with `(k + 1) 2^nb <= 2N`), so a state stays a position: the test
/// `every_state_stays_a_position` checks it for the tables of every q0.
#[derive(PartialEq, Eq, Debug)]
pub(crate) struct DecTable<const N: usize> {
    pub(crate) byte: [u8; N],
    pub(crate) nb: [u8; N],
    pub(crate) base: [u16; N],
}

/// Bits of a [`DecTable`] `nb` entry that hold the count.
pub(crate) const NB_BITS: u8 = 0x3F;

/// The bit of a [`DecTable`] `nb` entry that marks the escape.
pub(crate) const ESCAPE_FLAG: u8 = 0x40;

/// Entries a group of the decoding table writes at a time: its own, then ones that the
/// groups after it overwrite (fixed-size copies and fills, which compile to a few vector
/// stores instead of calls).
pub(crate) const WIDE: usize = 16;

impl<const N: usize> DecTable<N> {
    /// The table of frequencies `f` (summing to `N`), symbol `s` decoding to `bytes[s]`
    /// (`bytes` holds [`WIDE`] more, any values), symbol `escape` (if any) the escape.
    #[inline(always)]
    pub(crate) fn new(f: &[u32], bytes: &[u8], escape: Option<usize>) -> Box<Self> {
        assert!(bytes.len() >= f.len() + WIDE);
        let mut build = DecBuild {
            table: Box::new(DecTable {
                byte: [0; N],
                nb: [0; N],
                base: [0; N],
            }),
            f,
            bytes,
            escape: escape.unwrap_or(usize::MAX),
            single: None,
        };
        spread(f, &mut build);
        build.table
    }
}

/// A decoding table being built.
struct DecBuild<'a, const N: usize> {
    table: Box<DecTable<N>>,
    f: &'a [u32],
    bytes: &'a [u8],
    /// The escape symbol (`usize::MAX` if none).
    escape: usize,
    /// A filler of one symbol (its groups are single positions, most of the table's at the
    /// paper's density): its byte, its escape flag and its frequency.
    single: Option<(u8, u8, u32)>,
}

/// `nb` and `base` of state `k` of a table of `N` positions: f(s) <= k < 2 f(s) <= 2N, so
/// nb is in 0 ..= P and base below N.
#[inline(always)]
fn entry<const N: usize>(k: u32) -> (u8, u16) {
    let nb = N.trailing_zeros() + 1 - (u32::BITS - k.leading_zeros());
    (nb as u8, ((k << nb) - N as u32) as u16)
}

impl<const N: usize> Groups for DecBuild<'_, N> {
    #[inline(always)]
    fn filler(&mut self, first: usize, n: usize, f: u32) {
        if n == 1 {
            let flag = if first == self.escape { ESCAPE_FLAG } else { 0 };
            self.single = Some((self.bytes[first], flag, f));
        }
    }

    #[inline(always)]
    fn fill(&mut self, t: usize, first: usize, n: usize, from: u32, to: u32) {
        let Some((byte, flag, f)) = self.single else {
            return fill_by_groups(self, t, first, n, from, to);
        };
        let table = &mut *self.table;
        // [`entry`] for sixteen states k = f + i at once: those below 2^(a+1) read `most`
        // bits, those from it one fewer; base is k 2^nb - N (16-bit lanes: k stays below
        // 2f + 16 and k 2^nb below 2^16). As vectors: `entry` by lane makes the paper's
        // tables 9.3 µs instead of 5.7.
        let (precision, a) = (N.trailing_zeros(), f.ilog2());
        let (most, from_k) = ((precision - a) as u16, 1u16 << (a + 1));
        let (mut u, mut i) = (t, from);
        // Sixteen at a time, whatever the count (usually a few, often none: the positions
        // past the count are overwritten by the groups after them).
        loop {
            let c = (to - i).min(WIDE as u32) as usize;
            let k0 = (f + i) as u16;
            let k: [u16; WIDE] = std::array::from_fn(|l| k0 + l as u16);
            let nb: [u16; WIDE] = std::array::from_fn(|l| most - u16::from(k[l] >= from_k));
            let base: [u16; WIDE] = std::array::from_fn(|l| (k[l] << nb[l]).wrapping_sub(N as u16));
            if u + WIDE <= N {
                *wide(&mut table.byte[u..]) = [byte; WIDE];
                *wide(&mut table.nb[u..]) = nb.map(|b| b as u8 | flag);
                *wide(&mut table.base[u..]) = base;
            } else {
                for r in 0..c {
                    table.byte[u + r] = byte;
                    table.nb[u + r] = nb[r] as u8 | flag;
                    table.base[u + r] = base[r];
                }
            }
            (u, i) = (u + c, i + c as u32);
            if i >= to {
                break;
            }
        }
    }

    #[inline(always)]
    fn group(&mut self, t: usize, first: usize, n: usize, i: u32) {
        let table = &mut *self.table;
        let (nb, base) = entry::<N>(self.f[first] + i);
        if t + n.next_multiple_of(WIDE) <= N {
            let mut c = 0;
            while c < n {
                let (u, s) = (t + c, first + c);
                // Whole arrays stored: a vector store each.
                *wide(&mut table.byte[u..]) = *self.bytes[s..].first_chunk().expect("WIDE bytes");
                *wide(&mut table.nb[u..]) = [nb; WIDE];
                *wide(&mut table.base[u..]) = [base; WIDE];
                c += WIDE;
            }
        } else {
            for r in 0..n {
                table.byte[t + r] = self.bytes[first + r];
                table.nb[t + r] = nb;
                table.base[t + r] = base;
            }
        }
        // The escape's flag, if the group holds it (written after the group's runs).
        let lane = self.escape.wrapping_sub(first);
        if lane < n {
            table.nb[t + lane] |= ESCAPE_FLAG;
        }
    }
}

/// The first [`WIDE`] entries of `s` (which holds them) as an array.
#[inline(always)]
fn wide<T>(s: &mut [T]) -> &mut [T; WIDE] {
    s.first_chunk_mut().expect("WIDE entries")
}

/// The encoding table of one alphabet of `A` symbols at precision `P` (`N = 2^P`).
pub(crate) struct EncTable<const A: usize, const N: usize> {
    /// Per symbol s, `(most << 16) - (f(s) << most)` with `most = P - floor(log2 f(s))`,
    /// the most bits it pushes: `(X + that) >> 16` is the count it pushes from state `X`
    /// (one fewer when `X >> most` falls below `f(s)`); and `cum(s) - f(s)`, where
    /// `X >> count` (in `f(s) .. 2 f(s)`) indexes `next`.
    push: [(u32, i32); A],
    /// `next[cum(s) + i]`: `N +` the `i`-th position of symbol `s`.
    next: Box<[u16; N]>,
}

impl<const A: usize, const N: usize> EncTable<A, N> {
    /// The table of frequencies `f` (summing to `N`, each below `N`).
    pub(crate) fn new(f: &[u32; A]) -> Self {
        let precision = N.trailing_zeros();
        let mut cum = [0u32; A];
        for s in 1..A {
            cum[s] = cum[s - 1] + f[s - 1];
        }
        let push = std::array::from_fn(|s| {
            let most = precision - f[s].ilog2();
            ((most << 16) - (f[s] << most), cum[s] as i32 - f[s] as i32)
        });
        let mut build = EncBuild {
            next: Box::new([0u16; N]),
            cum,
            filler_end: 0,
        };
        spread(f, &mut build);
        // The walk wrote each run's first symbol's entries; symbol first + r of a run holds
        // the position r after the first's for every i: its entries are the previous
        // symbol's plus 1.
        let mut next = build.next;
        let (runs, count) = runs_of(f);
        for run in &runs[..count] {
            let at = cum[run.first] as usize;
            follow(&mut next[at..at + run.n * run.f as usize], run.f as usize);
        }
        EncTable { push, next }
    }

    /// Code symbol `s` onto state `x` (in `[N, 2N)`): the bits it pushes and their count.
    #[inline(always)]
    pub(crate) fn put(&self, x: &mut u32, s: usize) -> (u64, u32) {
        let (delta_bits, delta_find) = self.push[s];
        // x - (f(s) << most) is in (-2N, 2N) and most >= 1 (f(s) < N): the sum is
        // positive and its top half is most or most - 1; the index is in
        // cum(s) .. cum(s) + f(s), below N.
        let c = (*x + delta_bits) >> 16;
        let bits = u64::from(*x & ((1 << c) - 1));
        let i = (*x >> c) as i32 + delta_find;
        *x = u32::from(self.next[i as usize & (N - 1)]);
        (bits, c)
    }
}

/// `entries[j] = entries[j - f] + 1` for `j >= f`: sixteen at a time where `f` is at least
/// sixteen (the last sixteen overlap the ones before: they are rewritten with the same
/// values), one at a time below.
#[inline(always)]
fn follow(entries: &mut [u16], f: usize) {
    let len = entries.len();
    if f < WIDE || len < f + WIDE {
        for j in f..len {
            entries[j] = entries[j - f] + 1;
        }
        return;
    }
    let mut j = f;
    while j < len {
        let at = j.min(len - WIDE);
        let from: [u16; WIDE] = *entries[at - f..].first_chunk().expect("WIDE entries");
        *wide(&mut entries[at..]) = from.map(|e| e + 1);
        j += WIDE;
    }
}

/// An encoding table being built.
struct EncBuild<const A: usize, const N: usize> {
    next: Box<[u16; N]>,
    cum: [u32; A],
    /// The end of the filler's first symbol's entries.
    filler_end: usize,
}

impl<const A: usize, const N: usize> Groups for EncBuild<A, N> {
    /// Only the run's first symbol's entry: the others' follow it ([`EncTable::new`]).
    #[inline(always)]
    fn group(&mut self, t: usize, first: usize, _n: usize, i: u32) {
        self.next[(self.cum[first] + i) as usize & (N - 1)] = (N + t) as u16;
    }

    #[inline(always)]
    fn filler(&mut self, first: usize, _n: usize, f: u32) {
        self.filler_end = (self.cum[first] + f) as usize;
    }

    /// The filler's first symbol's entries `from .. to`, in a row: its groups' positions
    /// `n` apart. Sixteen at a time while they stay in its entries (those past `to` are
    /// the next fill's).
    #[inline(always)]
    fn fill(&mut self, t: usize, first: usize, n: usize, from: u32, to: u32) {
        let (mut at, end) = (
            (self.cum[first] + from) as usize,
            (self.cum[first] + to) as usize,
        );
        // In 16-bit lanes: the positions are below N <= 2^12.
        let (mut x, n) = ((N + t) as u16, n as u16);
        while at < end {
            let entries: [u16; WIDE] = std::array::from_fn(|g| x + g as u16 * n);
            if at + WIDE <= self.filler_end {
                *wide(&mut self.next[at..]) = entries;
            } else {
                self.next[at..end].copy_from_slice(&entries[..end - at]);
            }
            (at, x) = (at + WIDE, x + WIDE as u16 * n);
        }
    }
}

/// The spread as §4.15 states it: every pair `(s, i)` sorted by its key, ties by symbol.
#[cfg(test)]
pub(crate) fn spec_spread(f: &[u32]) -> Vec<(usize, u32)> {
    let mut pairs: Vec<(usize, u32)> = f
        .iter()
        .enumerate()
        .flat_map(|(s, &fs)| (0..fs).map(move |i| (s, i)))
        .collect();
    pairs.sort_by(|&(s, i), &(r, j)| {
        (u64::from(2 * i + 1) * u64::from(f[r]))
            .cmp(&(u64::from(2 * j + 1) * u64::from(f[s])))
            .then(s.cmp(&r))
    });
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Pairs(Vec<(usize, u32)>);

    impl Groups for Pairs {
        fn group(&mut self, t: usize, first: usize, n: usize, i: u32) {
            assert_eq!(t, self.0.len());
            self.0.extend((first..first + n).map(|s| (s, i)));
        }
    }

    fn walked(f: &[u32]) -> Vec<(usize, u32)> {
        let mut out = Pairs(Vec::new());
        spread(f, &mut out);
        out.0
    }

    /// The decoding tables of `q0` against §4.15's definition from the sorted spread: per
    /// position its byte, `nb`, `base` and the escape's flag, and `base + 2^nb <= N` (a
    /// step keeps a state a position, which the decoder's unchecked loads rely on).
    fn check_tables(q0: u16) {
        use crate::entropy::escape::model::{
            frequencies, ESCAPE, PRIMARY_BYTES, PRIMARY_PRECISION, SECONDARY_BYTES,
            SECONDARY_PRECISION,
        };
        use crate::entropy::escape::DecModel;
        fn check<const N: usize>(
            table: &DecTable<N>,
            f: &[u32],
            bytes: &[u8],
            p: u32,
            esc: usize,
            q0: u16,
        ) {
            for (u, (s, i)) in spec_spread(f).into_iter().enumerate() {
                let k = f[s] + i;
                let nb = p - k.ilog2();
                let base = (k << nb) - (1 << p);
                let flag = if s == esc { ESCAPE_FLAG } else { 0 };
                assert_eq!(table.byte[u], bytes[s], "q0 {q0} position {u}");
                assert_eq!(table.nb[u], nb as u8 | flag, "q0 {q0} position {u}");
                assert_eq!(u32::from(table.base[u]), base, "q0 {q0} position {u}");
                assert!(base + (1 << nb) <= N as u32, "q0 {q0} position {u}");
            }
        }
        let (f1, f2) = frequencies(q0);
        for model in [DecModel::new(q0), DecModel::portable(q0)] {
            check(
                &model.primary,
                &f1,
                &PRIMARY_BYTES,
                PRIMARY_PRECISION,
                ESCAPE,
                q0,
            );
            check(
                &model.secondary,
                &f2,
                &SECONDARY_BYTES,
                SECONDARY_PRECISION,
                usize::MAX,
                q0,
            );
        }
    }

    #[test]
    fn every_state_stays_a_position() {
        // A sample of q0 (each with its sort, 6144 positions); every q0 in the ignored test
        // below.
        for q0 in (1..=65535u16)
            .step_by(251)
            .chain([1, 2, 56_735, 65534, 65535])
        {
            check_tables(q0);
        }
    }

    #[test]
    #[ignore = "every q0, a sort each: with the next test about a minute of CPU (cargo test -p bloomwire --lib -- --ignored every_q0_)"]
    fn every_q0_gives_the_spec_tables() {
        for q0 in 1..=65535u16 {
            check_tables(q0);
        }
    }

    #[test]
    #[ignore = "every q0, a sort each (cargo test -p bloomwire --lib -- --ignored every_q0_)"]
    fn every_q0_walks_the_sorted_spread() {
        use crate::entropy::escape::model::frequencies;
        for q0 in 1..=65535u16 {
            let (p, s) = frequencies(q0);
            assert_eq!(walked(&p), spec_spread(&p), "q0 {q0} primary");
            assert_eq!(walked(&s), spec_spread(&s), "q0 {q0} secondary");
        }
    }

    #[test]
    fn every_q0_gives_few_enough_runs() {
        // q0 comes from the peer: no q0 may give more runs than a walk holds.
        use crate::entropy::escape::model::frequencies;
        let most = (1..=65535u16)
            .map(|q0| {
                let (p, s) = frequencies(q0);
                runs_of(&p).1.max(runs_of(&s).1)
            })
            .max();
        assert_eq!(most, Some(6));
    }

    #[test]
    fn the_walk_is_the_sorted_spread() {
        use crate::entropy::escape::model::frequencies;
        for q0 in (1..=65535u16).step_by(61).chain([1, 2, 65534, 65535]) {
            let (p, s) = frequencies(q0);
            assert_eq!(walked(&p), spec_spread(&p), "q0 {q0} primary");
            assert_eq!(walked(&s), spec_spread(&s), "q0 {q0} secondary");
        }
        // Ties across runs, and a filler that is not first.
        for f in [
            &[1u32, 3, 3, 9][..],
            &[5, 5, 1, 1, 1, 3],
            &[2, 6, 6, 2],
            &[16],
        ] {
            assert_eq!(walked(f), spec_spread(f), "{f:?}");
        }
    }
}
