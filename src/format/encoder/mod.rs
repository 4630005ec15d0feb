//! The encoder, one file a concept:
//!
//! | file | what it holds |
//! |------|---------------|
//! | `builder.rs` | the public [`Encoder`]: a builder of settings |
//! | `settings.rs` | the settings and the mechanism that executes them: a bit array or a delta into a frame, the predictions the choice weighs, the choice's order carried out |
//! | `choice.rs` | the policy: from the predicted frames and the table of codings' rows, the order in which to code (no state of its own) |
//! | `counters.rs` | counting filters' frames |
//! | `chunked.rs` | [`ChunkedFrame`]: a frame assembled from chunks coded apart |
//! | `reframe.rs` | a header and what it carries coded again (a decoded message's frame) |
//!
//! An encode of a Bloom filter walks `builder.rs`, then `settings.rs` (the count of ones
//! and the predictions), which asks `choice.rs` two questions, each a function returning a
//! value: which codings to predict (`candidates`, from the table's rows) and in which order
//! to code (`order`, from the predictions); then `settings.rs` codes the payload in that
//! order and adds the header and the tag.

mod builder;
mod choice;
mod chunked;
mod counters;
mod reframe;
mod settings;

pub use builder::Encoder;
pub use chunked::ChunkedFrame;
pub(crate) use reframe::{reframe, Contents};
pub use settings::{Chunking, PSource};
pub(crate) use settings::{DeltaStep, Settings};
