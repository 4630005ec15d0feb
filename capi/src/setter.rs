//! The setters of a handle's settings (`bw_limits_set_...`, `bw_optimizer_set_...`,
//! `bw_encoder_set_...`): one body, [`set`], and the macro that writes each entry point
//! around it, [`setters!`].

use core::fmt::Display;

use crate::error::{guard, Fail};
use crate::ptr::handle_mut;
use crate::status::Status;

/// Change the handle at `ptr` with `change`; NULL or a misaligned pointer is the error that
/// names the handle (`what`), and an error of `change` leaves what it did not change.
///
/// # Safety
///
/// `ptr` is NULL or a live handle of `T` no other call uses.
pub(crate) unsafe fn set<T>(
    ptr: *mut T,
    what: &str,
    change: impl FnOnce(&mut T) -> Result<(), Fail>,
) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantee, passed on.
        change(unsafe { handle_mut(ptr, what) }?)
    })
}

/// `value` when it is in `1..=max`, else the error `{name} {value}: must be in 1..={max}`.
pub(crate) fn one_to<T: Copy + PartialOrd + Display + From<u8>>(
    name: &str,
    value: T,
    max: T,
) -> Result<T, Fail> {
    if value < T::from(1) || value > max {
        return Err(Fail::arg(format!("{name} {value}: must be in 1..={max}")));
    }
    Ok(value)
}

/// The entry points that change a setting of a handle: for each
/// `fn NAME(HANDLE: *mut T, ARGS...) |v| { BODY }`, the C function
/// `bw_status NAME(T *HANDLE, ARGS...)` that runs `BODY` on `v: &mut T` through [`set`]
/// (the handle named `HANDLE` in errors). The documentation given is the function's.
macro_rules! setters {
    ($(
        $(#[$doc:meta])*
        fn $name:ident($handle:ident: *mut $T:ty $(, $arg:ident: $ty:ty)* $(,)?) |$v:ident| $body:block
    )*) => {$(
        $(#[$doc])*
        #[no_mangle]
        pub unsafe extern "C" fn $name($handle: *mut $T $(, $arg: $ty)*) -> $crate::status::Status {
            let change = |$v: &mut $T| -> Result<(), $crate::error::Fail> {
                $body
                Ok(())
            };
            // SAFETY: the caller's guarantees, passed on.
            unsafe { $crate::setter::set($handle, stringify!($handle), change) }
        }
    )*};
}

pub(crate) use setters;
