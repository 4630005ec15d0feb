//! The checks every pointer and length from C goes through before the library sees it:
//! NULL, alignment, lengths whose byte count overflows, strings that are not UTF-8.

use core::ffi::{c_char, CStr};
use core::ptr::NonNull;

use bloomwire::FrameKey;

use crate::error::{guard, Fail};
use crate::status::Status;

/// The `len` bytes at `ptr`; NULL is allowed when `len` is 0 (the empty input).
///
/// # Safety
///
/// When `len` is not 0, `ptr` is NULL or points to `len` bytes readable for `'a`.
pub(crate) unsafe fn bytes_in<'a>(
    ptr: *const u8,
    len: usize,
    what: &str,
) -> Result<&'a [u8], Fail> {
    // SAFETY: the caller's guarantee, passed on.
    unsafe { slice_in(ptr, len, what) }
}

/// A C type of the arrays the library reads: its name, and what its count is called.
pub(crate) trait CValue {
    /// The C type (`uint8_t`).
    const C_TYPE: &'static str;
    /// The argument that counts the values (`length`).
    const COUNTED: &'static str;
}

impl CValue for u8 {
    const C_TYPE: &'static str = "uint8_t";
    const COUNTED: &'static str = "length";
}

impl CValue for u64 {
    const C_TYPE: &'static str = "uint64_t";
    const COUNTED: &'static str = "count";
}

/// The `count` values of `T` at `ptr`; NULL is allowed when `count` is 0. A count whose
/// bytes overflow is said as `{what}: {T::COUNTED} {count} overflows`.
///
/// # Safety
///
/// When `count` is not 0, `ptr` is NULL or points to `count` readable `T` for `'a`.
pub(crate) unsafe fn slice_in<'a, T: CValue>(
    ptr: *const T,
    count: usize,
    what: &str,
) -> Result<&'a [T], Fail> {
    if count == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Fail::null(what));
    }
    if count
        .checked_mul(size_of::<T>())
        .is_none_or(|bytes| bytes > isize::MAX as usize)
    {
        let counted = T::COUNTED;
        return Err(Fail::arg(format!("{what}: {counted} {count} overflows")));
    }
    if !ptr.is_aligned() {
        return Err(Fail::arg(format!(
            "{what} is not aligned for {}",
            T::C_TYPE
        )));
    }
    // SAFETY: `ptr` is not NULL and aligned, `count * size_of::<T>()` is at most
    // isize::MAX, and the caller guarantees it points to `count` readable values that
    // outlive 'a.
    Ok(unsafe { core::slice::from_raw_parts(ptr, count) })
}

/// The handle `ptr` points to.
///
/// # Safety
///
/// `ptr` is NULL or a pointer the library returned for a `T` that has not been freed,
/// and no other call uses it mutably for `'a`.
pub(crate) unsafe fn handle<'a, T>(ptr: *const T, what: &str) -> Result<&'a T, Fail> {
    if ptr.is_null() {
        return Err(Fail::null(what));
    }
    if !ptr.is_aligned() {
        return Err(Fail::arg(format!("{what} is not a handle (misaligned)")));
    }
    // SAFETY: not NULL, aligned, and by the caller's guarantee a live handle.
    Ok(unsafe { &*ptr })
}

/// The handle `ptr` points to, to change.
///
/// # Safety
///
/// `ptr` is NULL or a pointer the library returned for a `T` that has not been freed,
/// and no other call uses it for `'a`.
pub(crate) unsafe fn handle_mut<'a, T>(ptr: *mut T, what: &str) -> Result<&'a mut T, Fail> {
    if ptr.is_null() {
        return Err(Fail::null(what));
    }
    if !ptr.is_aligned() {
        return Err(Fail::arg(format!("{what} is not a handle (misaligned)")));
    }
    // SAFETY: not NULL, aligned, and by the caller's guarantee a live handle no other call
    // uses.
    Ok(unsafe { &mut *ptr })
}

/// The NUL-terminated UTF-8 string at `ptr`.
///
/// # Safety
///
/// `ptr` is NULL or points to a NUL-terminated string readable for `'a`.
pub(crate) unsafe fn str_in<'a>(ptr: *const c_char, what: &str) -> Result<&'a str, Fail> {
    if ptr.is_null() {
        return Err(Fail::null(what));
    }
    // SAFETY: not NULL, and the caller guarantees a NUL-terminated string.
    let s = unsafe { CStr::from_ptr(ptr) };
    s.to_str()
        .map_err(|_| Fail::arg(format!("{what} is not UTF-8")))
}

/// A frame key of `len` bytes at `ptr`: none when `ptr` is NULL and `len` is 0, else the
/// library's check of its length (32 bytes).
///
/// # Safety
///
/// As [`bytes_in`].
pub(crate) unsafe fn key_in(ptr: *const u8, len: usize) -> Result<Option<FrameKey>, Fail> {
    if ptr.is_null() && len == 0 {
        return Ok(None);
    }
    // SAFETY: the caller's guarantee, passed on.
    let bytes = unsafe { bytes_in(ptr, len, "key") }?;
    Ok(Some(FrameKey::try_from(bytes)?))
}

/// An out-parameter: a place the call writes its result to, checked before the work.
pub(crate) struct Out<T>(NonNull<T>);

impl<T> Out<T> {
    /// The out-parameter `ptr`, not NULL and aligned.
    ///
    /// # Safety
    ///
    /// `ptr` is NULL or points to a writable `T` for the rest of the call.
    pub(crate) unsafe fn new(ptr: *mut T, what: &str) -> Result<Out<T>, Fail> {
        let Some(ptr) = NonNull::new(ptr) else {
            return Err(Fail::null(what));
        };
        if !ptr.is_aligned() {
            return Err(Fail::arg(format!("{what} is misaligned")));
        }
        Ok(Out(ptr))
    }

    /// Write the result.
    pub(crate) fn put(&self, value: T) {
        // SAFETY: `Out::new`'s caller guaranteed a writable, and it checked an aligned
        // non-NULL, `T` for the call's duration; `write` drops nothing the C side wrote.
        unsafe { self.0.as_ptr().write(value) }
    }
}

/// An out-parameter that receives a handle: set to NULL at once, so that a failing call
/// leaves NULL behind, and to the handle on success.
pub(crate) struct OutHandle<T>(Out<*mut T>);

impl<T> OutHandle<T> {
    /// The out-parameter `ptr`, set to NULL.
    ///
    /// # Safety
    ///
    /// As [`Out::new`].
    pub(crate) unsafe fn new(ptr: *mut *mut T, what: &str) -> Result<OutHandle<T>, Fail> {
        // SAFETY: the caller's guarantee, passed on.
        let out = unsafe { Out::new(ptr, what) }?;
        out.put(core::ptr::null_mut());
        Ok(OutHandle(out))
    }

    /// Hand `value` to the caller as a new handle, which it frees with the handle's free
    /// function.
    pub(crate) fn put(&self, value: T) {
        self.0.put(Box::into_raw(Box::new(value)));
    }
}

/// The body of a `bw_..._new(..., bw_... **out)`: a handle of `value()` into `out`, NULL
/// there on failure (`out` is checked first).
///
/// # Safety
///
/// As [`Out::new`].
pub(crate) unsafe fn new_handle<T>(
    out: *mut *mut T,
    value: impl FnOnce() -> Result<T, Fail>,
) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantee, passed on.
        let out = unsafe { OutHandle::new(out, "out") }?;
        out.put(value()?);
        Ok(())
    })
}

/// The body of a `bw_..._new(const bw_x *from, ..., bw_... **out)` that makes a handle from
/// another (`what` in errors): `from` is checked, then `out`, then a handle of
/// `make(from)` goes into `out`, NULL there when `make` fails.
///
/// # Safety
///
/// `from` is NULL or a live handle no call changes meanwhile; `out` as in [`Out::new`].
pub(crate) unsafe fn new_handle_from<S, T>(
    from: *const S,
    what: &str,
    out: *mut *mut T,
    make: impl FnOnce(&S) -> Result<T, Fail>,
) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantees, passed on.
        let (from, out) = unsafe { (handle(from, what)?, OutHandle::new(out, "out")?) };
        out.put(make(from)?);
        Ok(())
    })
}

/// Free a handle made by [`OutHandle::put`]; NULL does nothing.
///
/// # Safety
///
/// `ptr` is NULL or a handle of `T` from the library, not yet freed, used by no other call.
pub(crate) unsafe fn free_handle<T>(ptr: *mut T) {
    if !ptr.is_null() && ptr.is_aligned() {
        // SAFETY: by the caller's guarantee a live handle, made by Box::into_raw.
        drop(unsafe { Box::from_raw(ptr) });
    }
}
