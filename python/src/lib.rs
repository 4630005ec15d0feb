//! The `bloomwire._bloomwire` extension module: Python classes over the bloomwire crate.
//!
//! One file per area, in layers: a file imports only from the layers below it, so no two
//! files import each other, even through others. From the bottom:
//!
//! 1. values, no class: `errors` (the exceptions and the library's errors as them),
//!    `columns` (Arrow and NumPy input), `args` (Python arguments into the library's
//!    values), `settings` (encoder settings, decode limits and keys, the default limits),
//!    `params` (a filter's parameters as plain values), `chunks` (the chunk arithmetic, a
//!    chunk's bits, a chunked frame's choices);
//! 2. objects other classes take: `header` (`FrameInfo`), `plan_info` (the `Plan` object and
//!    its figures);
//! 3. the filters: `filter` (`BloomFilter` and `CountingFilter`, their shared methods
//!    written once);
//! 4. what takes filters: `plan` (`Plan`'s methods, which build filters, and the planning
//!    functions), `indexer` (`Indexer`), `chunked` (`Chunk`, `ChunkedFrame`), `codec`
//!    (`encode`, the decode functions, `Delta`), then `stream` (senders, the receiver);
//! 5. this file, which registers the module.
//!
//! Each class calls the library itself; what sits beside it holds logic of this package
//! (error words, limits, pickles), not calls passed through.

// `unsafe` is allowed in one module, `columns`, which reads Arrow and NumPy memory in place.
#![deny(unsafe_code)]

mod args;
mod chunked;
mod chunks;
mod codec;
mod columns;
mod errors;
mod filter;
mod header;
mod indexer;
mod params;
mod plan;
mod plan_info;
mod settings;
mod stream;

use pyo3::prelude::*;

use chunked::{Chunk, ChunkedFrame};
use codec::Delta;
use filter::{BloomFilter, CountingFilter};
use header::FrameInfo;
use indexer::Indexer;
use plan_info::Plan;
use settings::{DEFAULT_MAX_K, DEFAULT_MAX_M, DEFAULT_MAX_METADATA, DEFAULT_MAX_PAYLOAD};
use stream::{Receiver, Sender, SummarySender, Update};

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
    m.add("CODINGS", settings::coding_names())?;
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
