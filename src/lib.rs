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

mod entropy;
pub mod error;
pub mod filter;
#[doc(hidden)]
pub mod format;
pub mod optimizer;
#[doc(hidden)]
pub mod stream;
pub mod theory;
pub mod wire;

// The paths of the flat layout, kept while the crate's users move to the new one.
pub use entropy::{chunks, counters as counter_coding, model};
pub use filter::{bits, counting, hashing, rational};
pub use format as frame;
pub use stream as delta;
#[cfg(feature = "tokio")]
pub use stream::codec;

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
