//! The decoding tables of the byte model ([`SymbolTable`], spec §4.5), shared by coding 3's
//! one-state decoder ([`symbols`](super::symbols)) and coding 6's four-state one
//! ([`interleaved`](super::interleaved)): a symbol from a 24-bit slot with no division and no
//! search over the alphabet. The top 12 bits of the slot index a 4096-entry table of the
//! first symbol of that slice of `[0, 2^24)`; a slice that holds a symbol boundary takes a
//! step or two along the cumulative table (a few percent of the symbols at `p0 = 0.9`).

use crate::entropy::model::{symbol_tables, SymbolTable, SYMBOL_PRECISION};

const PRECISION: u32 = SYMBOL_PRECISION as u32;
pub(crate) const SLOT_MASK: u64 = (1 << PRECISION) - 1;
/// Bits of the slot that index the first-symbol table.
const SLICE_BITS: u32 = 12;
/// Size of the cumulative table: a power of two above 257, so that a masked index needs no
/// bounds check.
const CUM_LEN: usize = 512;

/// Decoding table for one symbol width.
pub(crate) struct DecTable {
    /// For each slice of `2^(24 - 12)` slots, the symbol whose interval holds its first
    /// slot, packed with its interval: `cum | symbol << 24 | freq << 40` (the frequency,
    /// below `2^24`, takes one shift to extract: it is on the state's dependency chain).
    first: [u64; 1 << SLICE_BITS],
    /// `cum[v]`, then `2^24` for every index past the alphabet.
    cum: [u32; CUM_LEN],
}

impl DecTable {
    pub(crate) fn new(table: &SymbolTable) -> Box<Self> {
        let src = table.cumulative();
        let mut cum = [1u32 << PRECISION; CUM_LEN];
        cum[..src.len()].copy_from_slice(src);
        let mut first = [0u64; 1 << SLICE_BITS];
        let mut s = 0usize;
        for (slice, entry) in first.iter_mut().enumerate() {
            let start = (slice as u32) << (PRECISION - SLICE_BITS);
            while cum[s + 1] <= start {
                s += 1;
            }
            *entry = u64::from(cum[s]) | (s as u64) << 24 | u64::from(cum[s + 1] - cum[s]) << 40;
        }
        Box::new(DecTable { first, cum })
    }

    /// The symbol whose interval holds the slot of state `x`, and the state before
    /// renormalization.
    #[inline(always)]
    pub(crate) fn symbol(&self, x: u64) -> (u64, u64) {
        let slot = (x & SLOT_MASK) as u32;
        let e = self.first[(slot >> (PRECISION - SLICE_BITS)) as usize];
        let (mut s, mut lo, mut freq) = ((e >> 24) & 0xFF, e as u32 & 0xFF_FFFF, (e >> 40) as u32);
        if slot - lo >= freq {
            (s, lo, freq) = self.later_symbol(s as usize, slot);
        }
        (s, u64::from(freq) * (x >> PRECISION) + u64::from(slot - lo))
    }

    /// The symbol after `s` whose interval holds `slot`, for slices that hold a boundary.
    #[cold]
    fn later_symbol(&self, mut s: usize, slot: u32) -> (u64, u32, u32) {
        s += 1;
        while self.cum[(s + 1) & (CUM_LEN - 1)] <= slot {
            s += 1;
        }
        let lo = self.cum[s & (CUM_LEN - 1)];
        (s as u64, lo, self.cum[(s + 1) & (CUM_LEN - 1)] - lo)
    }
}

/// The decoding model for bit arrays of a given `q0` and length.
pub(crate) struct DecModel {
    pub(crate) full: Box<DecTable>,
    pub(crate) tail: Option<Box<DecTable>>,
}

impl DecModel {
    pub(crate) fn new(q0: u16, m: u64) -> Self {
        let (full, tail) = symbol_tables(q0, m);
        DecModel {
            full: DecTable::new(&full),
            tail: tail.as_ref().map(DecTable::new),
        }
    }
}
