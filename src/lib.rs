//! # bloomwire
//!
//! Compressed Bloom filters on the wire.
//!
//! Networking programs send Bloom filters to each other over and over: cache digests between
//! proxies, set summaries between peers, key indexes between replicas. bloomwire puts those
//! filters on the wire in close to `m * H(p)` bits (Mitzenmacher, *Compressed Bloom
//! Filters*), and reads them back safely from peers it does not trust.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod bits;
pub mod chunks;
#[cfg(feature = "tokio")]
pub mod codec;
mod coder;
pub mod counter_coding;
pub mod counting;
pub mod delta;
/// Entropy coders of payloads.
pub mod entropy {
    pub mod positional;
}
pub mod error;
pub mod filter;
pub mod frame;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod hashing;
pub mod model;
pub mod optimizer;
mod rans;
pub mod rational;
pub mod theory;
pub mod wire;

pub use bits::BitArray;
pub use error::{Error, Result};
pub use filter::{BloomFilter, Layout, Params};
pub use hashing::{BaseHash, HashFamily, IndexScheme};
pub use optimizer::{Optimizer, Plan, PlanCoding};
pub use rational::HashCount;

/// The README's examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
