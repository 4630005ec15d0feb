//! Failures at the boundary: every entry point runs inside [`guard`], which catches a
//! panic, turns a failure into its [`Status`] and records it as the calling thread's last
//! error, the one piece of state the library keeps for the caller (`bw_last_error`).

use core::cell::RefCell;
use core::ffi::c_char;
use std::ffi::CString;
use std::panic::{catch_unwind, AssertUnwindSafe};

use bloomwire::Error;

use crate::status::Status;

/// Why a call failed: a library error, or the boundary's own refusal.
#[derive(Debug)]
pub(crate) enum Fail {
    /// An error of the library, passed on.
    Lib(Error),
    /// The boundary refused an argument, or the caller's buffer was too small (`needed`
    /// bytes), or a panic was caught.
    Boundary {
        code: Status,
        message: String,
        needed: u64,
    },
}

impl From<Error> for Fail {
    fn from(e: Error) -> Self {
        Fail::Lib(e)
    }
}

impl Fail {
    /// A required pointer is NULL.
    pub(crate) fn null(what: &str) -> Fail {
        Fail::Boundary {
            code: Status::NullPointer,
            message: format!("{what} is NULL"),
            needed: 0,
        }
    }

    /// An argument the boundary refuses.
    pub(crate) fn arg(message: impl Into<String>) -> Fail {
        Fail::Boundary {
            code: Status::InvalidArgument,
            message: message.into(),
            needed: 0,
        }
    }

    /// The caller's buffer holds `cap` bytes and the output is `needed`.
    pub(crate) fn too_small(needed: usize, cap: usize) -> Fail {
        Fail::Boundary {
            code: Status::BufferTooSmall,
            message: format!("the buffer holds {cap} bytes and the output needs {needed}"),
            needed: needed as u64,
        }
    }

    /// The status this failure returns.
    fn code(&self) -> Status {
        match self {
            Fail::Lib(e) => Status::of(e),
            Fail::Boundary { code, .. } => *code,
        }
    }
}

/// The details of the last failure on this thread, as `bw_error` gives them.
#[derive(Default)]
struct Last {
    code: Option<Status>,
    message: Option<CString>,
    field: Option<CString>,
    offset: Option<u64>,
    value: u64,
    limit: u64,
    needed: u64,
}

std::thread_local! {
    /// The calling thread's last failure: written by every failing call, read by
    /// `bw_last_error`. Nothing else is kept between calls outside the caller's handles.
    static LAST: RefCell<Last> = RefCell::new(Last::default());
}

/// A C string of `s` (a NUL inside it, which no message of the library holds, becomes a
/// space).
pub(crate) fn c_string(s: &str) -> CString {
    CString::new(s.replace('\0', " ")).expect("no NUL left")
}

/// The details of a failure, for `bw_last_error`.
fn details(fail: &Fail) -> Last {
    let mut last = Last {
        code: Some(fail.code()),
        ..Last::default()
    };
    let (message, field) = match fail {
        Fail::Boundary {
            message, needed, ..
        } => {
            last.needed = *needed;
            (message.clone(), None)
        }
        Fail::Lib(e) => {
            let field = match *e {
                Error::InvalidParameter { name, .. } => Some(name),
                Error::Incomplete { needed } => {
                    last.needed = needed as u64;
                    None
                }
                Error::BadMagic { offset, byte } => {
                    (last.offset, last.value) = (Some(offset as u64), byte.into());
                    None
                }
                Error::UnsupportedVersion(v) => {
                    (last.offset, last.value) = (Some(4), v.into());
                    None
                }
                Error::InvalidField {
                    field,
                    value,
                    offset,
                } => {
                    (last.offset, last.value) = (Some(offset as u64), value);
                    Some(field)
                }
                Error::BadVarint { field, offset } => {
                    last.offset = Some(offset as u64);
                    Some(field)
                }
                Error::LimitExceeded {
                    field,
                    value,
                    limit,
                    offset,
                } => {
                    (last.offset, last.value, last.limit) = (Some(offset as u64), value, limit);
                    Some(field)
                }
                Error::ChecksumMismatch { offset, .. }
                | Error::MissingTag { offset }
                | Error::BadTag { offset }
                | Error::CorruptPayload { offset, .. } => {
                    last.offset = Some(offset as u64);
                    None
                }
                Error::TrailingBytes { count, offset } => {
                    (last.offset, last.value) = (Some(offset as u64), count as u64);
                    None
                }
                Error::UnexpectedFilterType { got, .. } => {
                    last.value = got.into();
                    None
                }
                Error::GenerationGap { base, .. } => {
                    last.value = base;
                    None
                }
                Error::StaleGeneration { got, have } => {
                    (last.value, last.limit) = (got, have);
                    None
                }
                Error::OverBudget {
                    budget, compressed, ..
                } => {
                    (last.value, last.limit) = (compressed as u64, budget as u64);
                    None
                }
                Error::AllocationFailed { bytes } => {
                    last.value = bytes;
                    None
                }
                Error::UnsupportedCoding { coding, offset } => {
                    (last.offset, last.value) = (Some(offset as u64), coding.into());
                    Some("coding")
                }
                Error::PlanExceedsLimits {
                    name,
                    needed,
                    limit,
                } => {
                    (last.value, last.limit) = (needed, limit);
                    Some(name)
                }
                _ => None,
            };
            (e.to_string(), field)
        }
    };
    last.message = Some(c_string(&message));
    last.field = field.map(c_string);
    last
}

/// Record `fail` as this thread's last error and return its status.
pub(crate) fn record(fail: &Fail) -> Status {
    let last = details(fail);
    let code = last.code.unwrap_or(Status::Internal);
    LAST.with(|l| *l.borrow_mut() = last);
    code
}

/// The message of a caught panic's payload.
fn panic_message(payload: &(dyn core::any::Any + Send)) -> String {
    let text = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)");
    format!("internal error: a panic was caught at the C boundary: {text}")
}

/// Run one entry point's body: its failure recorded and returned as a status, a panic
/// caught and returned as [`Status::Internal`].
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Fail>) -> Status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => Status::Ok,
        Ok(Err(fail)) => record(&fail),
        Err(payload) => record(&Fail::Boundary {
            code: Status::Internal,
            message: panic_message(&*payload),
            needed: 0,
        }),
    }
}

/// Run an entry point that returns nothing (the `free` functions): a panic is caught and
/// recorded as this thread's last error.
pub(crate) fn guard_void(body: impl FnOnce()) {
    let _ = guard(|| {
        body();
        Ok(())
    });
}

/// The details of the calling thread's last failure (`bw_error` in the header).
#[repr(C)]
#[derive(Debug)]
pub struct ErrorInfo {
    /// The status the failing call returned (`BW_OK` if no call on this thread failed).
    pub code: Status,
    /// What went wrong, in one line of UTF-8; never NULL.
    pub message: *const c_char,
    /// The header field or the parameter (`InvalidField`, `BadVarint`, `LimitExceeded`,
    /// `UnsupportedCoding`, `InvalidParameter`, `PlanExceedsLimits`), or NULL.
    pub field: *const c_char,
    /// Whether `offset` is a byte offset in the frame.
    pub has_offset: bool,
    /// The byte offset in the frame where the problem was found.
    pub offset: u64,
    /// The value found: the field's, the byte of `BadMagic`, the version, the count of
    /// trailing bytes, the frame's filter type or generation, the bytes asked of the
    /// allocator, the smallest compressed frame of `OverBudget`, a plan's need.
    pub value: u64,
    /// The limit it broke: the caller's limit, the receiver's generation, the budget.
    pub limit: u64,
    /// `Incomplete`: at least this many more bytes; `BufferTooSmall`: the bytes the output
    /// needs.
    pub needed: u64,
}

/// `void bw_last_error(bw_error *out)`: the details of the last failing call on the
/// calling thread. The strings belong to the thread and stay valid until its next failing
/// call. A NULL `out` is ignored.
///
/// # Safety
///
/// `out` is NULL or points to a writable `bw_error`.
#[no_mangle]
pub unsafe extern "C" fn bw_last_error(out: *mut ErrorInfo) {
    guard_void(|| {
        if out.is_null() || !out.is_aligned() {
            return;
        }
        let info = LAST.with(|l| {
            let l = l.borrow();
            ErrorInfo {
                code: l.code.unwrap_or(Status::Ok),
                message: l.message.as_deref().unwrap_or(c"no error").as_ptr(),
                field: l.field.as_deref().map_or(core::ptr::null(), |f| f.as_ptr()),
                has_offset: l.offset.is_some(),
                offset: l.offset.unwrap_or(0),
                value: l.value,
                limit: l.limit,
                needed: l.needed,
            }
        });
        // SAFETY: `out` is not NULL, is aligned, and the caller guarantees it points to a
        // writable bw_error.
        unsafe { out.write(info) };
    });
}

/// `const char *bw_last_error_message(void)`: the message of the last failing call on the
/// calling thread (`"no error"` if none failed); valid until its next failing call.
#[no_mangle]
pub extern "C" fn bw_last_error_message() -> *const c_char {
    let mut message = c"no error".as_ptr();
    guard_void(|| {
        message = LAST.with(|l| {
            l.borrow()
                .message
                .as_deref()
                .map_or(c"no error".as_ptr(), |m| m.as_ptr())
        });
    });
    message
}
