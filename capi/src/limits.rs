//! `bw_limits`: what a decoder accepts (the library's `Limits`), NULL meaning the defaults.

use core::ffi::c_char;

use bloomwire::filter::rational::MAX_K;
use bloomwire::filter::MAX_M;
use bloomwire::Profile;

use crate::error::{guard_void, Fail};
use crate::ptr::{free_handle, handle, new_handle, str_in};
use crate::setter::{one_to, setters};
use crate::status::Status;

/// A decoder's limits (`bw_limits`): m up to 2^28, k up to 64, payloads up to 2^26 bytes,
/// metadata up to 4096 bytes, decoded filters up to 32 MiB unless set otherwise.
#[derive(Debug, Clone)]
pub struct Limits(pub(crate) bloomwire::Limits);

/// The limits `ptr` points to, or the defaults for NULL.
///
/// # Safety
///
/// `ptr` is NULL or a live `bw_limits`.
pub(crate) unsafe fn limits_or_default(ptr: *const Limits) -> Result<bloomwire::Limits, Fail> {
    if ptr.is_null() {
        return Ok(bloomwire::Limits::default());
    }
    // SAFETY: the caller's guarantee, passed on.
    Ok(unsafe { handle(ptr, "limits") }?.0)
}

/// `bw_status bw_limits_new(bw_limits **out)`: the library's default limits.
///
/// # Safety
///
/// `out` is NULL or points to a writable `bw_limits *`.
#[no_mangle]
pub unsafe extern "C" fn bw_limits_new(out: *mut *mut Limits) -> Status {
    // SAFETY: the caller's guarantee, passed on.
    unsafe { new_handle(out, || Ok(Limits(bloomwire::Limits::default()))) }
}

setters! {
    /// `bw_status bw_limits_set_max_m(bw_limits *limits, uint64_t max_m)`: the largest m
    /// (bits, or counters), 1 to 2^48.
    ///
    /// # Safety
    ///
    /// `limits` is NULL or a live `bw_limits` no other call uses.
    fn bw_limits_set_max_m(limits: *mut Limits, max_m: u64) |l| {
        l.0 = l.0.max_m(one_to("max_m", max_m, MAX_M)?);
    }

    /// `bw_status bw_limits_set_max_k(bw_limits *limits, uint32_t max_k)`: the largest
    /// `ceil(k)`, 1 to 1024.
    ///
    /// # Safety
    ///
    /// `limits` is NULL or a live `bw_limits` no other call uses.
    fn bw_limits_set_max_k(limits: *mut Limits, max_k: u32) |l| {
        l.0 = l.0.max_k(one_to("max_k", max_k, MAX_K)?);
    }

    /// `bw_status bw_limits_set_max_payload(bw_limits *limits, uint64_t bytes)`: the largest
    /// payload.
    ///
    /// # Safety
    ///
    /// `limits` is NULL or a live `bw_limits` no other call uses.
    fn bw_limits_set_max_payload(limits: *mut Limits, bytes: u64) |l| {
        l.0 = l.0.max_payload(bytes);
    }

    /// `bw_status bw_limits_set_max_metadata(bw_limits *limits, uint64_t bytes)`: the largest
    /// application metadata field.
    ///
    /// # Safety
    ///
    /// `limits` is NULL or a live `bw_limits` no other call uses.
    fn bw_limits_set_max_metadata(limits: *mut Limits, bytes: u64) |l| {
        l.0 = l.0.max_metadata(bytes);
    }

    /// `bw_status bw_limits_set_max_filter_bytes(bw_limits *limits, uint64_t bytes)`: the
    /// largest decoded filter in bytes of memory (by default `ceil(max_m / 8)`).
    ///
    /// # Safety
    ///
    /// `limits` is NULL or a live `bw_limits` no other call uses.
    fn bw_limits_set_max_filter_bytes(limits: *mut Limits, bytes: u64) |l| {
        l.0 = l.0.max_filter_bytes(bytes);
    }

    /// `bw_status bw_limits_set_profile(bw_limits *limits, const char *profile)`: decode only
    /// the codings of this profile (its name as the library parses it: `"core"` or `"full"`,
    /// the default); a frame of another registry coding is `BW_ERR_UNSUPPORTED_CODING`.
    ///
    /// # Safety
    ///
    /// `limits` is NULL or a live `bw_limits` no other call uses; `profile` NULL or a
    /// NUL-terminated string.
    fn bw_limits_set_profile(limits: *mut Limits, profile: *const c_char) |l| {
        // SAFETY: the caller's guarantee, passed on.
        let profile = unsafe { str_in(profile, "profile") }?;
        l.0 = l.0.profile(profile.parse::<Profile>()?);
    }
}

/// `void bw_limits_free(bw_limits *limits)`; NULL does nothing.
///
/// # Safety
///
/// `limits` is NULL or a live `bw_limits` no other call uses; it is not used again.
#[no_mangle]
pub unsafe extern "C" fn bw_limits_free(limits: *mut Limits) {
    // SAFETY: the caller's guarantee, passed on.
    guard_void(|| unsafe { free_handle(limits) });
}
