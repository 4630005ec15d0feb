//! The only module with `unsafe` code: kernels that use CPU instructions beyond the target's
//! baseline, each behind runtime feature detection with a safe scalar twin it is tested
//! against. One file per kernel.

pub(crate) mod popcount;
