//! The filters and their hashing: bit array, parameters and layouts, the Bloom filter, the
//! counting filter, hash families, rational k.

pub mod any;
pub mod bits;
mod bloom;
pub mod counting;
#[allow(unsafe_code)]
pub(crate) mod crc_copy;
#[allow(unsafe_code)]
mod digest;
pub mod hashing;
#[allow(unsafe_code)]
pub(crate) mod memory;
mod params;
#[allow(unsafe_code)]
pub(crate) mod popcount;
pub mod rational;

pub use bloom::*;
pub use digest::DigestChange;
pub use params::*;
