//! What several integration tests build their filters from.

#![allow(dead_code)] // Each test file uses some of these.

use bloomwire::{BloomFilter, Encoder, Limits, Params, Receiver};
use bloomwire_testkit::{mix64, GAMMA};

/// Key `i` of the key sequence `seed`: 8 bytes, distinct across seeds and indexes.
pub fn key(seed: u64, i: u64) -> [u8; 8] {
    mix64(seed.wrapping_mul(GAMMA).wrapping_add(i)).to_le_bytes()
}

/// A filter of `params` holding keys `range` of the sequence `seed`.
pub fn keys(params: &Params, seed: u64, range: core::ops::Range<u64>) -> BloomFilter {
    let mut f = BloomFilter::new(params.clone());
    for i in range {
        f.insert(key(seed, i));
    }
    f
}

/// A receiver with default limits that holds `base` as generation `generation`.
pub fn holding(base: &BloomFilter, generation: u64) -> Receiver {
    let mut receiver = Receiver::new(Limits::default());
    receiver
        .receive(
            &Encoder::new()
                .encode_generation(base, generation)
                .unwrap()
                .to_bytes(),
        )
        .unwrap();
    receiver
}
