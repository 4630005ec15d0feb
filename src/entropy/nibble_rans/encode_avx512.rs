//! The AVX-512 encoder of coding 8 (spec §4.12): the whole rounds of a payload, sixteen
//! lanes per vector, last to first as the scalar encoder goes.
//!
//! Per vector, the lanes at or above `f * 2^18` put their low words out (narrowed, gathered
//! in lane order by `vpcompressw`, and stored under the words already written by a masked
//! store), and each state `x` becomes `q * 2^13 + slot`. The round is bound by that chain,
//! so it is kept short:
//!
//! * **The division is of `x`**, not of the state after the word goes out: with
//!   `q' = floor(x / f)` (a reciprocal multiply), `q = q'` or, for a lane that puts a word
//!   out, `floor(q' / 2^16)` (a floor of a floor), so the test for the word is off the
//!   chain.
//! * **The slot is computed, not gathered**, where the model allows. A slot is its
//!   position `at = cum(v) + i` among the nibbles' slots plus an offset that is constant
//!   over each part of the alias table (§4.12): `512 v - cum(v)` over a nibble's own part,
//!   one constant for each part it takes in another bucket. Cut into 64 cells of 128
//!   positions, the parts of other buckets meet at most twice in a cell for most models
//!   (every `q0` from 0.7 to 0.97 of 2^16, 64% of all `q0`): three `vpermt2w` lookups by
//!   cell (the second part's first position and the two offsets) and a compare then give
//!   the offset. A 16-lane gather of slots costs about 30 cycles of latency and 13 of
//!   throughput on the CPU this was measured on (Zen 5), the cells about 11. Other models
//!   keep the gather from `slots`.
//! * **Five table lookups a step** (`vpermd` by nibble; the shuffle ports were the other
//!   limit): the reciprocal's shift rides in the frequency's top bits, and a nibble's own
//!   part's end and offset share an entry.
//!
//! It writes exactly what the scalar encoder writes: the tests and the fuzz target
//! `kernel_twins` compare the payloads.

use core::arch::x86_64::*;

use super::avx512::{available, vector};
use super::{EncModel, BUCKET, LANES, PRECISION, ROOM};

/// Positions per cell: `2^13 / 64`.
const CELL: u32 = 128;

/// Coding 8's AVX-512 encoder for one model: its tables, built once and used for each
/// block of rounds of a payload.
pub(crate) struct Encoder<'a> {
    symbols: Symbols,
    /// The cells in registers, for a model that has them.
    cells: Option<CellRegisters>,
    /// The slot table, gathered from where the model has no cells.
    slots: &'a [u16],
}

impl<'a> Encoder<'a> {
    /// The encoder of `model`, or `None` when the CPU lacks AVX-512.
    pub(crate) fn new(model: &'a EncModel) -> Option<Self> {
        if !available() {
            return None;
        }
        assert!(model.slots.len() > 1 << PRECISION);
        let symbols = Symbols::new(model);
        // SAFETY: the CPU has AVX-512 F (checked above).
        let cells = Cells::new(model).map(|c| unsafe { c.registers(&symbols) });
        Some(Encoder {
            symbols,
            cells,
            slots: &model.slots,
        })
    }

    /// Encode the whole rounds `rounds - 1` down to 0 of `words` onto the states `x`,
    /// pushing words (little-endian; `*at` counts words) into `buf` below `*at` as the
    /// scalar encoder does (`*at >= ROOM` plus one word per nibble left).
    pub(crate) fn encode_rounds(
        &self,
        x: &mut [u32; LANES],
        words: &[u64],
        rounds: usize,
        buf: &mut [u8],
        at: &mut usize,
    ) {
        assert!(words.len() >= 2 * rounds && *at >= ROOM + LANES * rounds && 2 * *at <= buf.len());
        let s = &self.symbols;
        // SAFETY: the CPU has AVX-512 F, VL, BW and VBMI2, and POPCNT (checked by `new`);
        // the bounds just asserted, the slot table's by `new`.
        unsafe {
            match self.cells {
                Some(cells) => rounds_avx512(s, cells, x, words, rounds, buf, at),
                None => rounds_avx512(s, Gather(self.slots), x, words, rounds, buf, at),
            }
        }
    }
}

/// Per nibble `v`, what a lane coding it needs (16-entry tables, looked up by `v`).
struct Symbols {
    /// `f(v) | cum(v) << 13 | shift << 26`, `cum(v)` where its positions start and `shift`
    /// that of the reciprocal, for the even lanes' 64-bit shift (the odd lanes', whose
    /// products are of `2 x`, shift by `shift - 31`).
    freq: [u32; 16],
    /// A reciprocal of `f`: `floor(x / f)` is bits `shift ..` of the 64-bit `x * rcp`
    /// for every `x < 2^31`, with `rcp = ceil(2^shift / f)` and `shift = 31 + ceil(log2 f)`
    /// (the model's reciprocal, [`EncModel::rcp`], without its correction for `f = 1`:
    /// here `rcp = 2^31`).
    rcp: [u32; 16],
    /// The nibble's own part: `cum(v) + div(v)`, where it ends among the positions, in the
    /// low half, and `512 v - cum(v)` in 16 bits, two's complement, what a position of it
    /// adds to become its slot, in the high half.
    own: [u32; 16],
}

impl Symbols {
    fn new(model: &EncModel) -> Self {
        let f = |v: usize| model.meta[v] & 0x1FFF;
        let cum = |v: usize| (model.meta[v] >> 13) & 0x1FFF;
        let log = |v: usize| 32 - (f(v) - 1).leading_zeros();
        Symbols {
            freq: core::array::from_fn(|v| f(v) | cum(v) << 13 | (31 + log(v)) << 26),
            rcp: core::array::from_fn(|v| (1u64 << (31 + log(v))).div_ceil(u64::from(f(v))) as u32),
            own: core::array::from_fn(|v| {
                (cum(v) + model.alias.div[v]) | ((BUCKET * v as u32).wrapping_sub(cum(v)) << 16)
            }),
        }
    }
}

/// The offsets of the parts that nibbles take in other buckets, by cell of 128 positions:
/// in a cell, positions below `next` add `first` (16 bits, two's complement) to become
/// their slot, the others `second`. Positions of no such part are not read.
struct Cells([Cell; 64]);

#[derive(Clone, Copy)]
struct Cell {
    /// The parts that meet in the cell (at most two).
    parts: u8,
    next: u16,
    first: u16,
    second: u16,
}

impl Cells {
    /// The cells of `model`, or `None` if three parts or more meet in one.
    fn new(model: &EncModel) -> Option<Self> {
        let a = &model.alias;
        let mut cells = Cells(
            [Cell {
                parts: 0,
                next: 1 << PRECISION,
                first: 0,
                second: 0,
            }; 64],
        );
        // Bucket b's second part: alias(b)'s positions cum + second(b) onwards, 512 - div(b)
        // of them, the slots 512 b + div(b) onwards; in order of position.
        let mut parts = [(0u32, 0u32, 0u16); 16];
        let mut count = 0;
        for b in (0..16).filter(|&b| a.div[b] < BUCKET) {
            let cum = (model.meta[usize::from(a.alias[b])] >> 13) & 0x1FFF;
            let start = cum + a.second[b];
            let offset = (BUCKET * b as u32 + a.div[b]).wrapping_sub(start) as u16;
            parts[count] = (start, start + BUCKET - a.div[b], offset);
            count += 1;
        }
        parts[..count].sort_unstable();
        for &(start, end, offset) in &parts[..count] {
            let (first, last) = ((start / CELL) as usize, ((end - 1) / CELL) as usize);
            for cell in &mut cells.0[first..=last] {
                match cell.parts {
                    0 => (cell.first, cell.second) = (offset, offset),
                    // Parts are disjoint and in order: the second starts in this cell.
                    1 => (cell.next, cell.second) = (start as u16, offset),
                    _ => return None,
                }
                cell.parts += 1;
            }
        }
        Some(cells)
    }
}

impl Cells {
    /// The cells and the nibbles' own parts in registers.
    ///
    /// # Safety
    ///
    /// The CPU has AVX-512 F.
    #[target_feature(enable = "avx512f")]
    unsafe fn registers(&self, symbols: &Symbols) -> CellRegisters {
        // A 64-entry table of 16-bit values as the two registers `vpermt2w` reads.
        let words64 = |t: [u16; 64]| {
            let half = |h: usize| -> &[u16; 32] { t[32 * h..32 * h + 32].try_into().expect("32") };
            [vector(half(0)), vector(half(1))]
        };
        CellRegisters {
            low_words: core::hint::black_box(0x5555_5555),
            next: words64(self.0.map(|c| c.next)),
            first: words64(self.0.map(|c| c.first)),
            second: words64(self.0.map(|c| c.second)),
            own: vector(&symbols.own),
        }
    }
}

/// The nibbles' tables in registers.
#[derive(Clone, Copy)]
struct SymbolRegisters {
    freq: __m512i,
    rcp: __m512i,
}

/// A way to find sixteen positions' slots (monomorphized into each kernel loop).
trait FindSlot: Copy {
    /// The new states `q * 2^13 + slot`, from the positions `at` (below 2^13) of nibbles
    /// `v` and `q * 2^13 | at`.
    ///
    /// # Safety
    ///
    /// The CPU has AVX-512 F and BW.
    unsafe fn find(self, at: __m512i, q_at: __m512i, v: __m512i) -> __m512i;
}

/// The cells and the nibbles' own parts, in registers.
#[derive(Clone, Copy)]
struct CellRegisters {
    /// The low words: a mask the compiler cannot see is constant, so that it zeroes the
    /// lookups' high words by masking them (free) instead of with an AND after them.
    low_words: __mmask32,
    next: [__m512i; 2],
    first: [__m512i; 2],
    second: [__m512i; 2],
    own: __m512i,
}

impl FindSlot for CellRegisters {
    #[target_feature(enable = "avx512f,avx512bw")]
    #[inline]
    unsafe fn find(self, at: __m512i, q_at: __m512i, v: __m512i) -> __m512i {
        // A slot is below 2^13, so q * 2^13 + slot is q * 2^13 | at plus the offset in
        // 16 bits: the high word, q's, does not change.
        let with = |offset: __m512i| _mm512_add_epi16(q_at, offset);
        let own = _mm512_permutexvar_epi32(v, self.own);
        let mine = with(_mm512_srli_epi32::<16>(own));
        // All ones where the position is in its nibble's own part, or before its cell's
        // second part (`vpternlogd` 0xCA: a ? b : c); the later of the two chooses last.
        let own = _mm512_srai_epi32::<31>(_mm512_sub_epi32(
            at,
            _mm512_and_si512(own, _mm512_set1_epi32(0xFFFF)),
        ));
        // The cell in each lane's low word (the high word is 0: positions are below
        // 2^13), the lookups' high words zeroed.
        let cell = _mm512_srli_epi32::<7>(at);
        let lookup =
            |t: [__m512i; 2]| _mm512_maskz_permutex2var_epi16(self.low_words, t[0], cell, t[1]);
        let first = _mm512_ternarylogic_epi32::<0xCA>(own, mine, with(lookup(self.first)));
        let second = _mm512_ternarylogic_epi32::<0xCA>(own, mine, with(lookup(self.second)));
        let before = _mm512_srai_epi32::<31>(_mm512_sub_epi32(at, lookup(self.next)));
        _mm512_ternarylogic_epi32::<0xCA>(before, first, second)
    }
}

/// The model's slot table, gathered from.
#[derive(Clone, Copy)]
struct Gather<'a>(&'a [u16]);

impl FindSlot for Gather<'_> {
    #[target_feature(enable = "avx512f,avx512bw")]
    #[inline]
    unsafe fn find(self, at: __m512i, q_at: __m512i, _v: __m512i) -> __m512i {
        // SAFETY: at < 2^13, and the table has more than 2^13 u16 (asserted by
        // `encode_rounds`): the 4 bytes at 2 * at are inside it.
        let slot = unsafe { _mm512_i32gather_epi32::<2>(at, self.0.as_ptr().cast()) };
        // q * 2^13 | slot, the slot below 2^13 (the at it replaces is too).
        _mm512_ternarylogic_epi32::<0xF8>(
            _mm512_andnot_si512(_mm512_set1_epi32(0x1FFF), q_at),
            slot,
            _mm512_set1_epi32(0x1FFF),
        )
    }
}

/// One vector of sixteen lanes through one nibble each (`v`, one per lane): the words of
/// the lanes that put one out stored below `*top`, the states advanced.
///
/// # Safety
///
/// The CPU has AVX-512 F, VL, BW and VBMI2 and POPCNT; `out` holds at least `*top` words
/// (`2 * *top` bytes) and `*top` is at least the 16 words this step may write.
#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512vbmi2,popcnt")]
#[inline]
unsafe fn step<S: FindSlot>(
    t: &SymbolRegisters,
    slots: S,
    v: __m512i,
    state: &mut __m512i,
    out: *mut u8,
    top: &mut usize,
) {
    let xv = *state;
    let freq = _mm512_permutexvar_epi32(v, t.freq);
    let rcp = _mm512_permutexvar_epi32(v, t.rcp);
    let f = _mm512_and_si512(freq, _mm512_set1_epi32(0x1FFF));
    let emit = _mm512_cmpge_epu32_mask(xv, _mm512_slli_epi32::<18>(f));
    let k = emit.count_ones() as usize;
    // The lanes' low words, the emitting ones gathered in lane order at the bottom of 16
    // words; the k of them go just below `top`.
    let packed = _mm256_maskz_compress_epi16(emit, _mm512_cvtepi32_epi16(xv));
    // SAFETY: the caller's bound: k <= 16 <= *top, and words `*top - k .. *top` are in
    // `out`; the masked store writes only those.
    unsafe {
        _mm256_mask_storeu_epi16(
            out.add(2 * (*top - k)).cast(),
            ((1u32 << k) - 1) as __mmask16,
            packed,
        )
    };
    *top -= k;
    // floor(x / f), bits `shift ..` of x * rcp: the even lanes' products shifted right by
    // their shift bring it to their low halves; the odd lanes' are of 2 x (x < 2^31, so
    // one 64-bit shift by 31 moves it to the low half), shifted right by their shift less
    // 31 to their high halves (the quotient is below 2^18 and the bits above it zero). A
    // lane that puts a word out codes onto x >> 16, whose quotient is this one >> 16.
    let even = _mm512_srlv_epi64(
        _mm512_mul_epu32(xv, rcp),
        _mm512_and_si512(_mm512_srli_epi64::<26>(freq), _mm512_set1_epi64(63)),
    );
    let odd = _mm512_srlv_epi64(
        _mm512_mul_epu32(_mm512_srli_epi64::<31>(xv), _mm512_srli_epi64::<32>(rcp)),
        _mm512_sub_epi64(_mm512_srli_epi64::<58>(freq), _mm512_set1_epi64(31)),
    );
    let quotient = _mm512_mask_blend_epi32(0xAAAA, even, odd);
    let q = _mm512_mask_srli_epi32::<16>(quotient, emit, quotient);
    let y = _mm512_mask_srli_epi32::<16>(xv, emit, xv);
    // The position among the nibbles' slots: cum(v) + y - q f.
    let cum = _mm512_and_si512(_mm512_srli_epi32::<13>(freq), _mm512_set1_epi32(0x1FFF));
    let at = _mm512_sub_epi32(_mm512_add_epi32(y, cum), _mm512_mullo_epi32(q, f));
    let q_at = _mm512_or_si512(_mm512_slli_epi32::<{ PRECISION }>(q), at);
    // SAFETY: this function's CPU has AVX-512 F and BW.
    *state = unsafe { slots.find(at, q_at, v) };
}

#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512vbmi2,popcnt")]
unsafe fn rounds_avx512<S: FindSlot>(
    symbols: &Symbols,
    slots: S,
    x: &mut [u32; LANES],
    words: &[u64],
    rounds: usize,
    buf: &mut [u8],
    at: &mut usize,
) {
    let t = SymbolRegisters {
        freq: vector(&symbols.freq),
        rcp: vector(&symbols.rcp),
    };
    let (mut s0, mut s1) = (
        vector::<u32, 16>(x[..16].try_into().expect("16")),
        vector::<u32, 16>(x[16..].try_into().expect("16")),
    );
    // Lane l codes nibble 4 (l mod 8) + floor(l / 8): bits 4 floor(l / 8) of the round's
    // 16-bit piece l mod 8. With each piece in lanes i and i + 8 of a vector, vector g
    // takes them from bits 8g (its low eight lanes) and 8g + 4 (its high eight).
    let from_piece = |g: i32| {
        let (lo, hi) = (8 * g, 8 * g + 4);
        _mm512_setr_epi32(
            lo, lo, lo, lo, lo, lo, lo, lo, hi, hi, hi, hi, hi, hi, hi, hi,
        )
    };
    let (f0, f1) = (from_piece(0), from_piece(1));
    let nibble = _mm512_set1_epi32(0xF);
    let out = buf.as_mut_ptr();
    let mut top = *at;
    for r in (0..rounds).rev() {
        // SAFETY: r < rounds and words.len() >= 2 * rounds: 16 bytes.
        let pieces = _mm512_broadcast_i64x4(_mm256_cvtepu16_epi32(unsafe {
            _mm_loadu_si128(words[2 * r..].as_ptr().cast())
        }));
        let v1 = _mm512_and_si512(_mm512_srlv_epi32(pieces, f1), nibble);
        let v0 = _mm512_and_si512(_mm512_srlv_epi32(pieces, f0), nibble);
        // SAFETY: top >= ROOM + the words still to come (the caller's bound), the slot
        // table's length asserted by the caller.
        unsafe {
            step(&t, slots, v1, &mut s1, out, &mut top);
            step(&t, slots, v0, &mut s0, out, &mut top);
        }
    }
    // SAFETY: the lanes are 32 u32: two unaligned 64-byte stores in bounds.
    unsafe {
        _mm512_storeu_si512(x[..16].as_mut_ptr().cast(), s0);
        _mm512_storeu_si512(x[16..].as_mut_ptr().cast(), s1);
    }
    *at = top;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entropy::nibble_rans::encode_rounds_kernels;
    use crate::entropy::testing::pseudo_random_bits;

    /// The slot the cells give position `at` of nibble `v`, computed as the kernel does,
    /// in scalar code.
    fn slot_by_cells(symbols: &Symbols, cells: &Cells, v: usize, at: u32) -> u16 {
        let offset = if at < symbols.own[v] & 0xFFFF {
            (symbols.own[v] >> 16) as u16
        } else {
            let cell = &cells.0[(at / CELL) as usize];
            if at < u32::from(cell.next) {
                cell.first
            } else {
                cell.second
            }
        };
        (at as u16).wrapping_add(offset)
    }

    #[test]
    fn the_cells_give_every_slot_of_the_table() {
        let mut with_cells = 0;
        for q0 in (1..=65535u16).step_by(61).chain([65535]) {
            let model = EncModel::new(q0);
            let Some(cells) = Cells::new(&model) else {
                continue;
            };
            with_cells += 1;
            let symbols = Symbols::new(&model);
            for v in 0..16 {
                let (f, cum) = (model.meta[v] & 0x1FFF, (model.meta[v] >> 13) & 0x1FFF);
                for at in cum..cum + f {
                    assert_eq!(
                        slot_by_cells(&symbols, &cells, v, at),
                        model.slots[at as usize],
                        "q0 {q0} v {v} at {at}"
                    );
                }
            }
        }
        // About 64% of all q0 (1 075 of them here).
        assert!(with_cells > 650, "{with_cells}");
    }

    #[test]
    fn dense_filters_have_cells() {
        for p0 in [0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.97] {
            let q0 = (p0 * 65536.0f64).round() as u16;
            assert!(Cells::new(&EncModel::new(q0)).is_some(), "p0 {p0}");
        }
    }

    #[test]
    fn the_reciprocal_gives_every_quotient() {
        // floor(x / f) as bits `shift ..` of x * rcp, for every frequency, at and around
        // multiples of f up to the largest state.
        let mut model = EncModel::new(30000);
        for f in 1..1u32 << PRECISION {
            model.meta[0] = f;
            let s = Symbols::new(&model);
            let (rcp, shift) = (u64::from(s.rcp[0]), s.freq[0] >> 26);
            let top = (1u32 << 31) - 1;
            for x in [0, 1, f - 1, f, f + 1, top / f * f - 1, top / f * f, top] {
                assert_eq!(((u64::from(x) * rcp) >> shift) as u32, x / f, "x {x} f {f}");
            }
        }
    }

    #[test]
    fn both_lookups_write_the_scalar_payload() {
        // p0 = 0.9 has cells, p0 = 0.6 does not (the gather).
        for (p0, cells) in [(0.9, true), (0.6, false)] {
            let q0 = (p0 * 65536.0f64).round() as u16;
            assert_eq!(Cells::new(&EncModel::new(q0)).is_some(), cells);
            let m = 300_001;
            let bits = pseudo_random_bits(m, ((1.0 - p0) * 1024.0) as u64, 3);
            crate::entropy::testing::agreed(
                encode_rounds_kernels(bits.words(), q0),
                &format!("p0 {p0}"),
            );
        }
    }
}
