//! # bloomwire for C
//!
//! The C library of bloomwire: a static library (`libbloomwire_capi.a`), a shared library
//! (`libbloomwire_capi.so`) and one header, `include/bloomwire.h`, which documents every
//! function, its ownership rules and its thread-safety. The functions are the crate's
//! public API (`bloomwire`), each behind checks of its pointers and lengths and a
//! `catch_unwind`: no panic crosses the boundary.
//!
//! The same entry points are Rust functions of this crate (`unsafe extern "C"`), which the
//! fuzz target and the benchmark call:
//!
//! ```
//! use bloomwire_capi::*;
//! use core::ptr::{null, null_mut};
//!
//! // SAFETY: every pointer is a live local or a handle the calls returned, freed once.
//! unsafe {
//!     let mut f = null_mut();
//!     assert_eq!(bw_filter_new_bloom(10_000, 3, 0, &mut f), Status::Ok);
//!     assert_eq!(bw_filter_insert(f, b"key".as_ptr(), 3), Status::Ok);
//!     let mut e = null_mut();
//!     assert_eq!(bw_encoder_new(KIND_BLOOM, &mut e), Status::Ok);
//!     let (mut frame, mut len) = (null_mut(), 0);
//!     assert_eq!(bw_encode_alloc(e, f, 0, &mut frame, &mut len), Status::Ok);
//!     let mut back = null_mut();
//!     assert_eq!(bw_decode(frame, len, null(), null(), 0, &mut back), Status::Ok);
//!     let mut yes = false;
//!     assert_eq!(bw_filter_contains(back, b"key".as_ptr(), 3, &mut yes), Status::Ok);
//!     assert!(yes);
//!     // A NULL handle is an error, not a crash.
//!     assert_eq!(bw_filter_insert(null_mut(), b"key".as_ptr(), 3), Status::NullPointer);
//!     bw_bytes_free(frame);
//!     bw_filter_free(back);
//!     bw_encoder_free(e);
//!     bw_filter_free(f);
//! }
//! ```

#![warn(missing_docs)]

mod bytes;
mod decode;
mod encoder;
mod error;
mod filter;
mod inspect;
mod limits;
mod plan;
mod ptr;
mod receiver;
mod scratch;
mod sender;
mod setter;
mod status;

pub use bytes::bw_bytes_free;
pub use decode::{bw_decode, bw_frame_len};
pub use encoder::{
    bw_encode, bw_encode_alloc, bw_encoder_free, bw_encoder_new, bw_encoder_set_budget,
    bw_encoder_set_chunking, bw_encoder_set_coding, bw_encoder_set_key, bw_encoder_set_metadata,
    bw_encoder_set_profile, Encoder, CHUNKING_AUTO, CHUNKING_NEVER,
};
pub use error::{bw_last_error, bw_last_error_message, ErrorInfo};
pub use filter::{
    bw_filter_clone, bw_filter_contains, bw_filter_count_ones, bw_filter_export, bw_filter_free,
    bw_filter_get_info, bw_filter_insert, bw_filter_new_bloom, bw_filter_new_counting,
    bw_filter_new_from_plan, bw_filter_remove, bw_filter_union, Filter, FilterInfo, KIND_ANY,
    KIND_BLOOM, KIND_COUNTING,
};
pub use inspect::{
    bw_frame_info_free, bw_frame_info_get, bw_inspect, FrameDesc, FrameInfo, CHECKSUM_MISMATCH,
    CHECKSUM_MISSING, CHECKSUM_OK, TAG_ABSENT, TAG_BAD, TAG_UNCHECKED, TAG_UNVERIFIED,
    TAG_VERIFIED,
};
pub use limits::{
    bw_limits_free, bw_limits_new, bw_limits_set_max_filter_bytes, bw_limits_set_max_k,
    bw_limits_set_max_m, bw_limits_set_max_metadata, bw_limits_set_max_payload,
    bw_limits_set_profile, Limits,
};
pub use plan::{
    bw_optimizer_free, bw_optimizer_new, bw_optimizer_set_coding, bw_optimizer_set_k_range,
    bw_optimizer_set_layout, bw_optimizer_set_limits, bw_optimizer_set_max_m,
    bw_optimizer_set_seed, bw_optimizer_set_siphash_key, bw_plan_for_budget, bw_plan_for_rate,
    bw_plan_free, bw_plan_get, Optimizer, Plan, PlanInfo, LAYOUT_BLOCKS, LAYOUT_PARTITIONED,
    LAYOUT_STANDARD,
};
pub use receiver::{
    bw_receiver_filter, bw_receiver_free, bw_receiver_generation, bw_receiver_new,
    bw_receiver_receive, bw_receiver_restart, Receiver, UpdateInfo,
};
pub use scratch::{bw_encode_scratch, bw_scratch_bytes, bw_scratch_free, bw_scratch_new, Scratch};
pub use sender::{
    bw_sender_free, bw_sender_full_frame, bw_sender_generation, bw_sender_new,
    bw_sender_next_frame, bw_sender_next_frame_with_flips, bw_sender_request_full, Sender,
};
pub use status::{bw_status_name, Status};

/// `const char *bw_version(void)`: the library's version, a static string.
#[no_mangle]
pub extern "C" fn bw_version() -> *const core::ffi::c_char {
    const VERSION: &core::ffi::CStr = match core::ffi::CStr::from_bytes_with_nul(
        concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes(),
    ) {
        Ok(v) => v,
        Err(_) => panic!("the version has no NUL"),
    };
    VERSION.as_ptr()
}

/// `size_t bw_release_thread_scratch(void)`: give back the scratch memory the coders keep
/// for the calling thread (up to 64 MiB a thread is kept between calls, so that encoding
/// takes no fresh memory once warm; `bw_encode_scratch` keeps it in a `bw_scratch`
/// instead). The only memory the library keeps outside the caller's handles besides the
/// thread's last error. Returns the bytes given back.
#[no_mangle]
pub extern "C" fn bw_release_thread_scratch() -> usize {
    let mut released = 0;
    error::guard_void(|| released = bloomwire::release_thread_scratch());
    released
}

/// The header's thread-safety promise, checked by the compiler: every handle may move to
/// another thread (`Send`), and calls that only read one may run on several threads at
/// once (`Sync`).
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<Limits>();
    shareable::<Optimizer>();
    shareable::<Plan>();
    shareable::<Filter>();
    shareable::<Encoder>();
    shareable::<FrameInfo>();
    shareable::<Sender>();
    shareable::<Receiver>();
    shareable::<Scratch>();
};
