//! The filters and their hashing: bit array, parameters and layouts, the Bloom filter, the
//! counting filter, hash families, rational k.

pub mod bits;
mod bloom;
pub mod counting;
pub mod hashing;
mod params;
pub mod rational;

pub use bloom::*;
pub use params::*;
