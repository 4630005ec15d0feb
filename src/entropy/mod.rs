//! The entropy models and coders that turn a bit array or counters into a payload and back.

pub mod chunks;
pub mod counters;
pub mod model;
pub(crate) mod range;
pub(crate) mod rans;
