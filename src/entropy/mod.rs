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

    /// A tANS coding under test (9 or 11): its coder, a decoder of its spec as written, its
    /// kernels, and its smallest payload. The checks both codings pass.
    pub(crate) struct Tans {
        pub(crate) enc: fn(&[u64], u64, u16) -> Vec<u8>,
        pub(crate) dec: fn(&[u8], u64, u16) -> super::Decoded,
        pub(crate) spec_decode: fn(&[u8], u64, u16) -> Option<Vec<u64>>,
        pub(crate) encode_kernels: fn(&[u64], u64, u16) -> super::ByKernel<Vec<u8>>,
        pub(crate) decode_kernels: fn(&[u8], u64, u16) -> super::ByKernel<super::Decoded>,
        pub(crate) min_len: usize,
    }

    impl Tans {
        /// Arrays of `m` bits and about `ones` per 1024 round trip at their measured q0 and
        /// at 1, 32768 and 65535, and the spec's decoder reads the same bits.
        pub(crate) fn round_trips(&self, cases: &[(u64, u64)]) {
            for (i, &(m, ones)) in cases.iter().enumerate() {
                let words = pseudo_random_words(m, ones, i as u64);
                let ones: u64 = words.iter().map(|w| u64::from(w.count_ones())).sum();
                let q0 = (((m - ones) * 65536 / m) as u16).clamp(1, 65535);
                for q0 in [q0, 1, 32768, 65535] {
                    let p = (self.enc)(&words, m, q0);
                    assert!(p.len() >= self.min_len);
                    let got = (self.dec)(&p, m, q0);
                    assert_eq!(got.as_deref(), Ok(&words[..]), "m {m} q0 {q0}");
                    assert_eq!((self.spec_decode)(&p, m, q0).as_deref(), Some(&words[..]));
                }
            }
        }

        /// Every kernel writes the same payloads of random arrays, and reads the same
        /// result (bits or error) from them, flipped and cut short.
        pub(crate) fn kernels_agree(&self) {
            for seed in 0..40u64 {
                let m = 1 + seed * seed * 37 + seed % 5;
                let ones = crate::filter::hashing::fmix64(seed) % 1025;
                let words = pseudo_random_words(m, ones, seed);
                let q0 = crate::entropy::model::KnownP::measured(
                    m - words.iter().map(|w| u64::from(w.count_ones())).sum::<u64>(),
                    m,
                );
                let p = agreed(
                    (self.encode_kernels)(&words, m, q0),
                    &format!("seed {seed}"),
                );
                let agree = |payload: &[u8], what: &str| {
                    agreed(
                        (self.decode_kernels)(payload, m, q0),
                        &format!("seed {seed} {what}"),
                    )
                };
                assert_eq!(agree(&p, "").as_deref(), Ok(&words[..]), "seed {seed}");
                for i in 0..p.len().min(64) {
                    let mut bad = p.clone();
                    bad[(i * 7919) % p.len()] ^= 1 << (i % 8);
                    // Any result, so long as all agree.
                    let _ = agree(&bad, &format!("flip {i}"));
                    let _ = agree(&p[..p.len() - 1 - i % p.len().min(8)], &format!("cut {i}"));
                }
            }
        }

        /// Each single bit flipped in a payload is rejected, as by the spec's decoder, or
        /// decodes to another array whose payload it is (the coding is canonical); the
        /// payload cut short, one byte longer, and a payload shorter than the states are
        /// rejected.
        pub(crate) fn every_flip_is_rejected_or_another_array(&self) {
            let (m, q0) = (3001, 52000);
            let words = pseudo_random_words(m, 205, 9);
            let p = (self.enc)(&words, m, q0);
            for bit in 0..8 * p.len() {
                let mut bad = p.clone();
                bad[bit / 8] ^= 1 << (bit % 8);
                let fast = (self.dec)(&bad, m, q0).ok();
                assert_eq!(fast, (self.spec_decode)(&bad, m, q0), "flip {bit}");
                if let Some(other) = fast {
                    assert_ne!(other, words, "flip {bit}");
                    assert_eq!((self.enc)(&other, m, q0), bad, "flip {bit}: not canonical");
                }
            }
            assert!((self.dec)(&p[..p.len() - 1], m, q0).is_err());
            assert!((self.dec)(&[&p[..], &[0]].concat(), m, q0).is_err());
            assert!((self.dec)(&vec![0u8; self.min_len - 1], 4, q0).is_err());
        }
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
