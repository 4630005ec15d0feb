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
//! The table of codings is `coding.rs` (its rows mirror the spec's registry, §4.0: id,
//! name, profile, status, q0, chunking, work bound); each row comes from the folder named
//! like the coding (`raw/`, `arithmetic/` for codings 1 and 2, `symbols/`, `counters/` for 4
//! and 5, `interleaved/`, `positional/`, `small/`, `wide/`, `escape/`). The default encoder
//! (`format/encoder/choice.rs`) predicts the size of every active coding of its profile from counts
//! (each row's size model) and codes once, with the first coding, in the order of the rows'
//! places in decoding speed, whose prediction is within 0.08% + 6 bytes of the smallest.
//! Adding a coding is a folder, a row of the table (with its profile, status and place), a
//! variant of [`Coding`](coding::Coding) (and of `BitCoding` or `CounterCoding`), and a row
//! of the spec's registry under its rule for new ids.

// Below the codings: what they share.
pub(crate) mod bmi2_twins;
pub(crate) mod codec;
pub(crate) mod counter_table;
pub(crate) mod model;
pub(crate) mod nibble_rans;
pub(crate) mod profile;
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
