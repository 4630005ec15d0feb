//! The only module with `unsafe` code: kernels that use CPU instructions beyond the target's
//! baseline, each behind runtime feature detection with a safe scalar twin it is tested
//! against. One file per kernel.

pub(crate) mod crc_copy;
#[cfg(target_arch = "x86_64")]
pub(crate) mod dense_avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod dense_avx512;
#[cfg(target_arch = "x86_64")]
pub(crate) mod dense_encode_avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod dense_encode_avx512;
#[cfg(target_arch = "x86_64")]
pub(crate) mod lanes_avx2;
pub(crate) mod popcount;
#[cfg(target_arch = "x86_64")]
pub(crate) mod tans_bmi2;
