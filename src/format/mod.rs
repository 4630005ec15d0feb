//! The frame format of `spec/FORMAT.md`.

mod frame;

pub use frame::*;
