//! # bloomwire
//!
//! Compressed Bloom filters on the wire.
//!
//! Networking programs send Bloom filters to each other over and over: cache digests between
//! proxies, set summaries between peers, key indexes between replicas. bloomwire puts those
//! filters on the wire in close to `m * H(p)` bits (Mitzenmacher, *Compressed Bloom
//! Filters*), and reads them back safely from peers it does not trust.
//!
//! The paper's running example, 10 000 keys in m = 140 000 bits with k = 2: 17 500 bytes
//! raw, `m H(p) / 8` = 9904 bytes compressed, and a frame a few bytes above that.
//!
//! ```
//! use bloomwire::{decode, BloomFilter, Decoded, Encoder, HashFamily, Limits, Params};
//!
//! let mut f = BloomFilter::new(Params::standard(140_000, 2, HashFamily::default()).unwrap());
//! for i in 0..10_000u32 {
//!     f.insert(i.to_le_bytes());
//! }
//! let wire = Encoder::new().encode(&f).unwrap().to_bytes();
//! let bound = 140_000.0 * bloomwire::theory::entropy(f.fraction_of_zeros()) / 8.0;
//! assert!((9850.0..9960.0).contains(&bound));
//! assert!(wire.len() < 10_000 && (wire.len() as f64) < bound + 100.0);
//! let back: Decoded = decode(&wire, &Limits::default()).unwrap();
//! assert_eq!(back.filter, f);
//! ```
//!
//! The optimizer reproduces the paper's Table I: at 8 bits per key on the wire the best
//! filter is m/n = 14 with k = 2 (f = 0.0177), not the uncompressed optimum m/n = 8, k = 6
//! (f = 0.0216):
//!
//! ```
//! use bloomwire::optimizer::SizeModel;
//! use bloomwire::Optimizer;
//! let n = 1_000_000;
//! let plan = Optimizer::new().size_model(SizeModel::Ideal).max_m(14 * n).plan(n, n).unwrap();
//! assert_eq!((plan.m() / n, plan.k().whole()), (14, 2));
//! assert!((plan.false_positive_rate - 0.0177).abs() < 5e-5);
//! ```
//!
//! # Module map
//!
//! The crate is built in layers, each importing only from itself and the layers above it in
//! this list; `tests/layers.rs` reads the order and fails on an import that goes up, on a
//! coding that imports another, and on any cycle.
//!
//! | layer (`src/`) | what it holds | papers |
//! |---|---|---|
//! | `error.rs` | [`Error`], one typed error for every product | |
//! | `cpu.rs` | the CPU features the kernels use, probed once | |
//! | `filter/` | [`BitArray`], [`Params`] and [`Layout`], [`BloomFilter`], [`CountingBloomFilter`], [`AnyFilter`], hash families, rational [`HashCount`] | Bloom 1970; partitioned filters of Kirsch and Mitzenmacher; variably-sized blocks and rational k of Walther et al.; counting filters of Fan et al., *Summary Cache* |
//! | `wire.rs` | varints and a checked reader | |
//! | [`theory`] | the formulas: `p = exp(-kn/m)`, `f = (1 - p)^k`, `m H(p)`, delta and counter laws | *Compressed Bloom Filters* Sections II to V |
//! | `entropy/` | integer-only models and one folder per coding (its coder, kernels, size model and rules), the table of codings, chunked payloads | Section III (arithmetic coding of the bit array), Section V (counters) |
//! | `format/` | [`Encoder`], [`Frame`], [`FrameHeader`], [`decode`], [`FrameView`], [`CheckedFrame`], [`Limits`]: the frame format of `spec/FORMAT.md` | the spec |
//! | `stream/` | [`Sender`], [`Receiver`], deltas and their application, `FrameCodec` (feature `tokio`) | Section IV (deltas between generations) |
//! | [`optimizer`] | m and k for a byte budget, the dual, delta and counting plans; memory caps and the frontier of bytes against memory | Section II-B and Table I, Section IV, Section V |
//!
//! One [`Encoder`], [`Sender`], [`Receiver`] and [`Decoded`] serve every kind of filter
//! through the sealed trait [`Filter`] ([`BloomFilter`], [`CountingBloomFilter`], and
//! [`AnyFilter`] for either); the codings an encoder takes are typed by the filter kind
//! ([`BitCoding`], [`CounterCoding`]).

#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_code)]
#![warn(missing_docs)]
#![warn(unreachable_pub)]

mod cpu;
mod entropy;
mod error;
pub mod filter;
pub mod format;
pub mod optimizer;
mod stream;
pub mod theory;
mod wire;

pub use entropy::counter_table::CounterTable;
pub use entropy::profile::{Profile, Status};
pub use entropy::scratch::{release_thread_scratch, thread_scratch_bytes};
pub use error::{Error, Result};
pub use filter::any::AnyFilter;
pub use filter::bits::BitArray;
pub use filter::counting::CountingBloomFilter;
pub use filter::hashing::{BaseHash, HashFamily, IndexScheme};
pub use filter::rational::HashCount;
pub use filter::{BloomFilter, Layout, Params};
pub use format::{
    decode, decode_buf, decode_prefix, BitCoding, CheckedFrame, Checks, ChunkedFrame, Chunking,
    Coding, CounterCoding, Decodable, Decoded, Delta, Encoder, Filter, Frame, FrameHeader,
    FrameKey, FrameKind, FrameView, Limits, Message, PSource, Scratch, Tag, Verifier,
};
pub use optimizer::{Optimizer, Plan};
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub use stream::codec::{CodecError, FrameCodec, FramingCodec, ReceiverCodec};
pub use stream::{Receiver, Sender, SummarySender, Update};

/// Not API: the coders' payload functions and their SIMD kernels side by side, for the
/// crate's fuzz checks, benchmarks and test-vector generator (feature `internals`). Any
/// release may change them.
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals {
    /// The positional coding's payload functions (spec 4.11); frames reach it through
    /// `BitCoding::Positional`.
    pub use crate::entropy::positional;
    pub use crate::entropy::{ByKernel, Decoded};
    /// Coding 9's portable and BMI2 encoders and decoders (spec 4.13) side by side; frames
    /// reach it through `BitCoding::Small`.
    pub mod small {
        pub use crate::entropy::small::{decode_kernels, encode_kernels};
    }
    /// Coding 10's encoders and decoders (spec 4.14) side by side; frames reach it through
    /// `BitCoding::Wide`.
    pub mod wide {
        pub use crate::entropy::wide::{decode_kernels, encode_kernels};
    }
    /// Coding 11's portable and BMI2 encoders and decoders (spec 4.15) side by side; frames
    /// reach it through `BitCoding::Escape`.
    pub mod escape {
        pub use crate::entropy::escape::{decode_kernels, encode_kernels};
    }
}

/// The README's examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
