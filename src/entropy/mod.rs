//! The entropy models and coders that turn a bit array or counters into a payload and back.

pub mod chunks;
pub(crate) mod coding;
pub mod counters;
pub(crate) mod dense;
pub(crate) mod interleaved;
pub mod model;
pub mod positional;
pub(crate) mod range_coder;
pub(crate) mod small;
pub(crate) mod symbols;

/// Why a payload did not decode. The frame layer adds the byte offset.
pub(crate) type PayloadError = &'static str;

/// A payload decoded: the words, or why not.
pub type Decoded = Result<Vec<u64>, PayloadError>;

/// One result per kernel of a coding, each with the kernel's name: the portable one first,
/// then every one this CPU runs (for the tests and the fuzz target `kernel_twins`, which
/// require them all equal: the same payload, or the same words or the same error).
pub type ByKernel<T> = Vec<(&'static str, T)>;

/// The last check of a coder whose symbols span `m`'s end (codings 8 and 9 code whole
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
