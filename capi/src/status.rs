//! The status every entry point returns: the library's errors one to one, then the C
//! boundary's own.

use core::ffi::CStr;

use bloomwire::Error;

/// The enum, [`Status::ALL`], [`Status::of`] and [`Status::name`] from one list of the
/// statuses: each with its documentation, its value and, for a library error, the pattern
/// of the [`Error`] it stands for; its name is the variant's.
macro_rules! statuses {
    (
        $(#[$meta:meta])*
        pub enum Status {
            $(
                $(#[$doc:meta])*
                $variant:ident = $value:literal $(=> $error:pat)?,
            )*
        }
    ) => {
        $(#[$meta])*
        pub enum Status {
            $($(#[$doc])* $variant = $value,)*
        }

        impl Status {
            /// Every status, in the header's order.
            pub const ALL: [Status; [$(stringify!($variant)),*].len()] = [$(Status::$variant),*];

            /// The status of a library error.
            pub fn of(error: &Error) -> Status {
                match error {
                    $($($error => Status::$variant,)?)*
                    // The enum is non-exhaustive: a later release's variant.
                    _ => Status::Other,
                }
            }

            /// The name of the status: the library's variant name (`"BadMagic"`), `"Ok"`, or
            /// the boundary's (`"NullPointer"`).
            pub fn name(self) -> &'static CStr {
                match self {
                    $(Status::$variant => const { c_name(concat!(stringify!($variant), "\0")) },)*
                }
            }
        }
    };
}

/// The C string of `name`, which ends with its NUL (evaluated at compile time).
const fn c_name(name: &'static str) -> &'static CStr {
    match CStr::from_bytes_with_nul(name.as_bytes()) {
        Ok(name) => name,
        Err(_) => panic!("a status name is one NUL-terminated word"),
    }
}

statuses! {
    /// What a call did (`bw_status` in the header). `Ok` is 0; the library's errors are 1 to
    /// 24 in the order of [`Error`]'s variants of bloomwire 0.1, then format 1.0's
    /// [`Status::UnsupportedCoding`] (25: a value once given is kept); a variant of a later
    /// library release that this build does not name is [`Status::Other`]; 100 and above are
    /// the C boundary's.
    ///
    /// The variant names are the library's (`BadMagic`), as [`bw_status_name`] gives them.
    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Status {
        /// `BW_OK`: the call did what it was asked.
        Ok = 0,
        /// `BW_ERR_INVALID_PARAMETER`: [`Error::InvalidParameter`].
        InvalidParameter = 1 => Error::InvalidParameter { .. },
        /// `BW_ERR_INCOMPATIBLE`: [`Error::Incompatible`].
        Incompatible = 2 => Error::Incompatible(_),
        /// `BW_ERR_INCOMPLETE`: [`Error::Incomplete`].
        Incomplete = 3 => Error::Incomplete { .. },
        /// `BW_ERR_BAD_MAGIC`: [`Error::BadMagic`].
        BadMagic = 4 => Error::BadMagic { .. },
        /// `BW_ERR_UNSUPPORTED_VERSION`: [`Error::UnsupportedVersion`].
        UnsupportedVersion = 5 => Error::UnsupportedVersion(_),
        /// `BW_ERR_INVALID_FIELD`: [`Error::InvalidField`].
        InvalidField = 6 => Error::InvalidField { .. },
        /// `BW_ERR_BAD_VARINT`: [`Error::BadVarint`].
        BadVarint = 7 => Error::BadVarint { .. },
        /// `BW_ERR_LIMIT_EXCEEDED`: [`Error::LimitExceeded`].
        LimitExceeded = 8 => Error::LimitExceeded { .. },
        /// `BW_ERR_CHECKSUM_MISMATCH`: [`Error::ChecksumMismatch`].
        ChecksumMismatch = 9 => Error::ChecksumMismatch { .. },
        /// `BW_ERR_MISSING_TAG`: [`Error::MissingTag`].
        MissingTag = 10 => Error::MissingTag { .. },
        /// `BW_ERR_BAD_TAG`: [`Error::BadTag`].
        BadTag = 11 => Error::BadTag { .. },
        /// `BW_ERR_TRAILING_BYTES`: [`Error::TrailingBytes`].
        TrailingBytes = 12 => Error::TrailingBytes { .. },
        /// `BW_ERR_CORRUPT_PAYLOAD`: [`Error::CorruptPayload`].
        CorruptPayload = 13 => Error::CorruptPayload { .. },
        /// `BW_ERR_UNEXPECTED_DELTA`: [`Error::UnexpectedDelta`].
        UnexpectedDelta = 14 => Error::UnexpectedDelta,
        /// `BW_ERR_UNEXPECTED_FILTER_TYPE`: [`Error::UnexpectedFilterType`].
        UnexpectedFilterType = 15 => Error::UnexpectedFilterType { .. },
        /// `BW_ERR_OPAQUE_HASH_FAMILY`: [`Error::OpaqueHashFamily`].
        OpaqueHashFamily = 16 => Error::OpaqueHashFamily,
        /// `BW_ERR_GENERATION_GAP`: [`Error::GenerationGap`].
        GenerationGap = 17 => Error::GenerationGap { .. },
        /// `BW_ERR_STALE_GENERATION`: [`Error::StaleGeneration`].
        StaleGeneration = 18 => Error::StaleGeneration { .. },
        /// `BW_ERR_BASE_MISMATCH`: [`Error::BaseMismatch`].
        BaseMismatch = 19 => Error::BaseMismatch { .. },
        /// `BW_ERR_RESULT_MISMATCH`: [`Error::ResultMismatch`].
        ResultMismatch = 20 => Error::ResultMismatch { .. },
        /// `BW_ERR_TAG_NOT_VERIFIED`: [`Error::TagNotVerified`].
        TagNotVerified = 21 => Error::TagNotVerified,
        /// `BW_ERR_OVER_BUDGET`: [`Error::OverBudget`].
        OverBudget = 22 => Error::OverBudget { .. },
        /// `BW_ERR_ALLOCATION_FAILED`: [`Error::AllocationFailed`].
        AllocationFailed = 23 => Error::AllocationFailed { .. },
        /// `BW_ERR_PLAN_EXCEEDS_LIMITS`: [`Error::PlanExceedsLimits`].
        PlanExceedsLimits = 24 => Error::PlanExceedsLimits { .. },
        /// `BW_ERR_UNSUPPORTED_CODING`: [`Error::UnsupportedCoding`], a coding the registry
        /// defines and the decoder's profile does not implement.
        UnsupportedCoding = 25 => Error::UnsupportedCoding { .. },
        /// `BW_ERR_OTHER`: an error of a later library release that this build does not name;
        /// the message says what it is.
        Other = 99,
        /// `BW_ERR_NULL_POINTER`: a pointer the call needs is NULL.
        NullPointer = 100,
        /// `BW_ERR_INVALID_ARGUMENT`: an argument the C boundary refuses before the library
        /// sees it: a length that overflows, a misaligned pointer, a value outside its enum, a
        /// string that is not UTF-8, a handle of the other filter kind.
        InvalidArgument = 101,
        /// `BW_ERR_BUFFER_TOO_SMALL`: the caller's buffer is shorter than the output; the
        /// length it needs is in the length out-parameter and in the error's `needed`.
        BufferTooSmall = 102,
        /// `BW_ERR_INTERNAL`: a panic was caught at the boundary (a bug in bloomwire: please
        /// report it with the message). The handles the call was given should be freed.
        Internal = 103,
    }
}

/// `const char *bw_status_name(bw_status status)`: the status's name (see
/// [`Status::name`]), a static string; `"Unknown"` for a value outside the enum.
#[no_mangle]
pub extern "C" fn bw_status_name(status: i32) -> *const core::ffi::c_char {
    let name = Status::ALL
        .iter()
        .find(|s| **s as i32 == status)
        .map_or(c"Unknown", |s| s.name());
    name.as_ptr()
}
