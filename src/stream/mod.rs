//! Generations of a filter on the wire: senders, receivers, the tokio codec.

#[cfg(feature = "tokio")]
pub mod codec;
pub mod delta;
