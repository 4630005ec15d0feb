//! The entropy models and coders that turn a bit array or counters into a payload and back
//! (Section III of *Compressed Bloom Filters*: arithmetic coding of the bit array; Section V:
//! of a counting filter's counters).
//!
//! Each coding is one folder: its model, its scalar coder, its SIMD kernels beside it, its
//! size model with its own fixed costs, its well-formed lengths and its work-bound rule, and
//! the one row it adds to the table of codings (`coding.rs`), which is all the frame layer
//! and the encoder see of it. What codings share sits below them (`model.rs`, the range
//! coder, the byte model's lookup, the nibble rANS lanes of coding 10 with their
//! encoder, the row type, the scratch memory they reuse); chunked payloads sit above them.
//!
//! | id | coding | folder | spec | kernels | the default encoder picks it |
//! |---:|---|---|---|---|---|
//! | 0 | raw | `raw/` | §4.1, §4.6 | | when no prediction is smaller (random-looking bits) |
//! | 1 | adaptive | `arithmetic/` | §4.3 | | last in speed order: when only it is within the margin |
//! | 2 | known-p | `arithmetic/` | §4.4 | | when the faster codings are over the margin |
//! | 3 | known-p-symbols | `symbols/` | §4.5 | | when codings 8, 11, 6 and 9 are over the margin |
//! | 4 | known-counters | `counters/` | §4.7 | | counting filters: the smaller of 4 and 5 |
//! | 5 | adaptive-counters | `counters/` | §4.8 | | counting filters: the smaller of 4 and 5 |
//! | 6 | known-p-interleaved | `interleaved/` | §4.9 | | dense arrays whose coding-8 states (128 bytes) and coding-11 tables' loss are over the margin |
//! | 7 | positional | `positional/` | §4.11 | | sparse arrays and deltas (at most one bit in 40 set): first in speed order |
//! | 8 | (withdrawn before 1.0: coding 10 decodes the same model faster; spec §4.0) | | | | never |
//! | 9 | small | `small/` | §4.13 | BMI2 | small unchunked arrays where codings 11 and 6 are over the margin |
//! | 10 | wide | `wide/` | §4.14 | AVX-512 (encoder: AVX2, AVX-512) | the largest dense arrays: first in speed order |
//! | 11 | escape | `escape/` | §4.15 | BMI2 | unchunked arrays near the paper's density whose coding-8 and coding-10 states are over the margin |
//!
//! The default encoder predicts every coding's size from counts (each row's size model) and
//! codes once, with the fastest coding within 0.08% + 6 bytes of the smallest prediction, in
//! the speed order it keeps as policy (`format/encoder.rs`). Adding a coding is a folder, a
//! row of the table, a variant of [`Coding`](coding::Coding) (and of `BitCoding` or
//! `CounterCoding`), and its place in that order.

// Below the codings: what they share.
pub(crate) mod codec;
pub(crate) mod counter_table;
pub(crate) mod model;
pub(crate) mod nibble_rans;
pub(crate) mod range_coder;
pub(crate) mod scratch;
pub(crate) mod symbol_lookup;
pub(crate) mod tans_stream;

// The codings, one folder each, in wire id order.
pub(crate) mod arithmetic;
pub(crate) mod counters;
pub(crate) mod escape;
pub(crate) mod interleaved;
// Public only to the fuzz checks, benchmarks and vector generator (feature `internals`).
#[cfg_attr(not(feature = "internals"), allow(unreachable_pub))]
pub mod positional;
pub(crate) mod raw;
pub(crate) mod small;
pub(crate) mod symbols;
pub(crate) mod wide;

// Above the codings: the table, and payloads in chunks.
pub(crate) mod chunks;
pub(crate) mod coding;

/// Why a payload did not decode. The frame layer adds the byte offset.
pub(crate) type PayloadError = &'static str;

/// A payload decoded: the words, or why not.
#[cfg(any(test, feature = "internals"))]
pub type Decoded = Result<Vec<u64>, PayloadError>;

/// One result per kernel of a coding, each with the kernel's name: the portable one first,
/// then every one this CPU runs (for the tests and the fuzz target `kernel_twins`, which
/// require them all equal: the same payload, or the same words or the same error).
#[cfg(any(test, feature = "internals"))]
pub type ByKernel<T> = Vec<(&'static str, T)>;

/// The last check of a coder whose symbols span `m`'s end (codings 8, 9 and 10 code whole
/// nibbles): no bit past `m` is set in the decoded words.
pub(crate) fn check_past_m(out: &[u64], m: u64) -> Result<(), PayloadError> {
    match out.last() {
        Some(last) if !m.is_multiple_of(64) && last >> (m % 64) != 0 => {
            Err("bits past m are not zero")
        }
        _ => Ok(()),
    }
}

/// Bit arrays for the coders' tests.
#[cfg(test)]
pub(crate) mod testing {
    use crate::filter::bits::BitArray;

    /// The portable kernel's result, after asserting that every other kernel's is equal.
    pub(crate) fn agreed<T: PartialEq + core::fmt::Debug>(
        all: super::ByKernel<T>,
        what: &str,
    ) -> T {
        let mut all = all.into_iter();
        let (portable, want) = all.next().expect("the portable kernel comes first");
        for (name, got) in all {
            assert_eq!(got, want, "{what}: {name} against {portable}");
        }
        want
    }

    /// The payloads near `payload`: one byte shorter, one byte longer (0 or 1 appended),
    /// and every single bit flipped. A canonical coding decodes none of them to what
    /// `payload` decodes to.
    pub(crate) fn nearby_payloads(payload: &[u8]) -> Vec<Vec<u8>> {
        let mut near = vec![payload[..payload.len().saturating_sub(1)].to_vec()];
        for extra in [0u8, 1] {
            near.push([payload, &[extra]].concat());
        }
        for i in 0..payload.len() {
            for bit in 0..8 {
                let mut v = payload.to_vec();
                v[i] ^= 1 << bit;
                near.push(v);
            }
        }
        near
    }

    /// [`pseudo_random_bits`] as words.
    pub(crate) fn pseudo_random_words(m: u64, ones_per_1024: u64, seed: u64) -> Vec<u64> {
        pseudo_random_bits(m, ones_per_1024, seed).words().to_vec()
    }

    /// A payload's stream as the tANS codings' specs read it (§4.13, §4.15): a bit at a
    /// time, least significant first.
    pub(crate) struct SpecBits<'a> {
        payload: &'a [u8],
        /// Bits read so far.
        read: u64,
    }

    impl<'a> SpecBits<'a> {
        pub(crate) fn new(payload: &'a [u8]) -> Self {
            SpecBits { payload, read: 0 }
        }

        /// `read(c)`: the next `c` bits, the first read lowest; `None` past the end.
        pub(crate) fn read(&mut self, c: u32) -> Option<u32> {
            let mut r = 0;
            for i in 0..c {
                let j = self.read;
                r |= u32::from((*self.payload.get((j / 8) as usize)? >> (j % 8)) & 1) << i;
                self.read += 1;
            }
            Some(r)
        }

        /// Whether the bits read fill the payload to its last byte, zero padding after.
        pub(crate) fn ends_at_last_byte(&self) -> bool {
            let (j, p) = (self.read, self.payload);
            j.div_ceil(8) == p.len() as u64
                && (j.is_multiple_of(8) || p[p.len() - 1] >> (j % 8) == 0)
        }
    }

    /// `m` bits, each one with probability `ones_per_1024 / 1024`, from `seed`.
    pub(crate) fn pseudo_random_bits(m: u64, ones_per_1024: u64, seed: u64) -> BitArray {
        let mut b = BitArray::new(m);
        let mut s = seed;
        for i in 0..m {
            s = crate::filter::hashing::fmix64(s.wrapping_add(0x9E37_79B9_7F4A_7C15));
            if s % 1024 < ones_per_1024 {
                b.set(i);
            }
        }
        b
    }
}
