//! The `bloomwire._bloomwire` extension module: Python classes over the bloomwire crate.
//!
//! One file per area, as the library is organized: `filter` (the two filter classes, their
//! shared methods written once), `codec` (frames: encode, decode, headers, deltas, the
//! encoder settings), `stream` (senders and the receiver), `plan`, `indexer` and `chunked`
//! (building by chunk), `columns` (Arrow and NumPy input), `errors` (the exceptions and the
//! library's errors as them), `args` (Python arguments into the library's values). Each
//! class calls the library itself; what sits beside it holds logic of this package (error
//! words, limits, pickles), not calls passed through. This file registers the module.

// `unsafe` is allowed in one module, `columns`, which reads Arrow and NumPy memory in place.
#![deny(unsafe_code)]

mod args;
mod chunked;
mod codec;
mod columns;
mod errors;
mod filter;
mod indexer;
mod plan;
mod stream;

use pyo3::prelude::*;

use chunked::{Chunk, ChunkedFrame};
use codec::{Delta, FrameInfo};
use filter::{BloomFilter, CountingFilter};
use indexer::Indexer;
use plan::Plan;
use stream::{Receiver, Sender, SummarySender, Update};

pub(crate) const DEFAULT_MAX_M: u64 = 1 << 28;
pub(crate) const DEFAULT_MAX_K: u32 = 64;
pub(crate) const DEFAULT_MAX_PAYLOAD: u64 = 1 << 26;
pub(crate) const DEFAULT_MAX_METADATA: u64 = 1 << 12;

/// Compressed Bloom filters on the wire (the compiled part of the `bloomwire` package).
#[pymodule]
fn _bloomwire(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The signature defaults above must be the library's.
    let defaults = (
        DEFAULT_MAX_M,
        DEFAULT_MAX_K,
        DEFAULT_MAX_PAYLOAD,
        DEFAULT_MAX_METADATA,
    );
    let l = bloomwire::Limits::default();
    if (l.max_m, l.max_k, l.max_payload, l.max_metadata) != defaults {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(
            "the library's default limits differ from the module's",
        ));
    }
    m.add("DEFAULT_MAX_M", DEFAULT_MAX_M)?;
    m.add("DEFAULT_MAX_K", DEFAULT_MAX_K)?;
    m.add("DEFAULT_MAX_PAYLOAD", DEFAULT_MAX_PAYLOAD)?;
    m.add("DEFAULT_MAX_METADATA", DEFAULT_MAX_METADATA)?;
    m.add("CODINGS", codec::coding_names())?;
    m.add_class::<Plan>()?;
    m.add_class::<BloomFilter>()?;
    m.add_class::<CountingFilter>()?;
    m.add_class::<Delta>()?;
    m.add_class::<FrameInfo>()?;
    m.add_class::<Update>()?;
    m.add_class::<Sender>()?;
    m.add_class::<Receiver>()?;
    m.add_class::<SummarySender>()?;
    m.add_class::<Indexer>()?;
    m.add_class::<Chunk>()?;
    m.add_class::<ChunkedFrame>()?;
    m.add_function(wrap_pyfunction!(plan::plan, m)?)?;
    m.add_function(wrap_pyfunction!(plan::plan_for_fpr, m)?)?;
    m.add_function(wrap_pyfunction!(plan::frontier, m)?)?;
    m.add_function(wrap_pyfunction!(codec::encode, m)?)?;
    m.add_function(wrap_pyfunction!(codec::decode, m)?)?;
    m.add_function(wrap_pyfunction!(codec::decode_counting, m)?)?;
    m.add_function(wrap_pyfunction!(codec::decode_message, m)?)?;
    m.add_function(wrap_pyfunction!(codec::frame_info, m)?)?;
    m.add_function(wrap_pyfunction!(codec::thread_scratch_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(codec::release_thread_scratch, m)?)?;
    errors::register(m)
}
