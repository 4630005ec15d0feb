//! The status every entry point returns: the library's errors one to one, then the C
//! boundary's own.

use bloomwire::Error;

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
    InvalidParameter = 1,
    /// `BW_ERR_INCOMPATIBLE`: [`Error::Incompatible`].
    Incompatible = 2,
    /// `BW_ERR_INCOMPLETE`: [`Error::Incomplete`].
    Incomplete = 3,
    /// `BW_ERR_BAD_MAGIC`: [`Error::BadMagic`].
    BadMagic = 4,
    /// `BW_ERR_UNSUPPORTED_VERSION`: [`Error::UnsupportedVersion`].
    UnsupportedVersion = 5,
    /// `BW_ERR_INVALID_FIELD`: [`Error::InvalidField`].
    InvalidField = 6,
    /// `BW_ERR_BAD_VARINT`: [`Error::BadVarint`].
    BadVarint = 7,
    /// `BW_ERR_LIMIT_EXCEEDED`: [`Error::LimitExceeded`].
    LimitExceeded = 8,
    /// `BW_ERR_CHECKSUM_MISMATCH`: [`Error::ChecksumMismatch`].
    ChecksumMismatch = 9,
    /// `BW_ERR_MISSING_TAG`: [`Error::MissingTag`].
    MissingTag = 10,
    /// `BW_ERR_BAD_TAG`: [`Error::BadTag`].
    BadTag = 11,
    /// `BW_ERR_TRAILING_BYTES`: [`Error::TrailingBytes`].
    TrailingBytes = 12,
    /// `BW_ERR_CORRUPT_PAYLOAD`: [`Error::CorruptPayload`].
    CorruptPayload = 13,
    /// `BW_ERR_UNEXPECTED_DELTA`: [`Error::UnexpectedDelta`].
    UnexpectedDelta = 14,
    /// `BW_ERR_UNEXPECTED_FILTER_TYPE`: [`Error::UnexpectedFilterType`].
    UnexpectedFilterType = 15,
    /// `BW_ERR_OPAQUE_HASH_FAMILY`: [`Error::OpaqueHashFamily`].
    OpaqueHashFamily = 16,
    /// `BW_ERR_GENERATION_GAP`: [`Error::GenerationGap`].
    GenerationGap = 17,
    /// `BW_ERR_STALE_GENERATION`: [`Error::StaleGeneration`].
    StaleGeneration = 18,
    /// `BW_ERR_BASE_MISMATCH`: [`Error::BaseMismatch`].
    BaseMismatch = 19,
    /// `BW_ERR_RESULT_MISMATCH`: [`Error::ResultMismatch`].
    ResultMismatch = 20,
    /// `BW_ERR_TAG_NOT_VERIFIED`: [`Error::TagNotVerified`].
    TagNotVerified = 21,
    /// `BW_ERR_OVER_BUDGET`: [`Error::OverBudget`].
    OverBudget = 22,
    /// `BW_ERR_ALLOCATION_FAILED`: [`Error::AllocationFailed`].
    AllocationFailed = 23,
    /// `BW_ERR_PLAN_EXCEEDS_LIMITS`: [`Error::PlanExceedsLimits`].
    PlanExceedsLimits = 24,
    /// `BW_ERR_UNSUPPORTED_CODING`: [`Error::UnsupportedCoding`], a coding the registry
    /// defines and the decoder's profile does not implement.
    UnsupportedCoding = 25,
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

impl Status {
    /// Every status, in the header's order.
    pub const ALL: [Status; 31] = [
        Status::Ok,
        Status::InvalidParameter,
        Status::Incompatible,
        Status::Incomplete,
        Status::BadMagic,
        Status::UnsupportedVersion,
        Status::InvalidField,
        Status::BadVarint,
        Status::LimitExceeded,
        Status::ChecksumMismatch,
        Status::MissingTag,
        Status::BadTag,
        Status::TrailingBytes,
        Status::CorruptPayload,
        Status::UnexpectedDelta,
        Status::UnexpectedFilterType,
        Status::OpaqueHashFamily,
        Status::GenerationGap,
        Status::StaleGeneration,
        Status::BaseMismatch,
        Status::ResultMismatch,
        Status::TagNotVerified,
        Status::OverBudget,
        Status::AllocationFailed,
        Status::PlanExceedsLimits,
        Status::UnsupportedCoding,
        Status::Other,
        Status::NullPointer,
        Status::InvalidArgument,
        Status::BufferTooSmall,
        Status::Internal,
    ];

    /// The status of a library error.
    pub fn of(error: &Error) -> Status {
        match error {
            Error::InvalidParameter { .. } => Status::InvalidParameter,
            Error::Incompatible(_) => Status::Incompatible,
            Error::Incomplete { .. } => Status::Incomplete,
            Error::BadMagic { .. } => Status::BadMagic,
            Error::UnsupportedVersion(_) => Status::UnsupportedVersion,
            Error::InvalidField { .. } => Status::InvalidField,
            Error::BadVarint { .. } => Status::BadVarint,
            Error::LimitExceeded { .. } => Status::LimitExceeded,
            Error::ChecksumMismatch { .. } => Status::ChecksumMismatch,
            Error::MissingTag { .. } => Status::MissingTag,
            Error::BadTag { .. } => Status::BadTag,
            Error::TrailingBytes { .. } => Status::TrailingBytes,
            Error::CorruptPayload { .. } => Status::CorruptPayload,
            Error::UnexpectedDelta => Status::UnexpectedDelta,
            Error::UnexpectedFilterType { .. } => Status::UnexpectedFilterType,
            Error::OpaqueHashFamily => Status::OpaqueHashFamily,
            Error::GenerationGap { .. } => Status::GenerationGap,
            Error::StaleGeneration { .. } => Status::StaleGeneration,
            Error::BaseMismatch { .. } => Status::BaseMismatch,
            Error::ResultMismatch { .. } => Status::ResultMismatch,
            Error::TagNotVerified => Status::TagNotVerified,
            Error::OverBudget { .. } => Status::OverBudget,
            Error::AllocationFailed { .. } => Status::AllocationFailed,
            Error::PlanExceedsLimits { .. } => Status::PlanExceedsLimits,
            Error::UnsupportedCoding { .. } => Status::UnsupportedCoding,
            // The enum is non-exhaustive: a later release's variant.
            _ => Status::Other,
        }
    }

    /// The name of the status: the library's variant name (`"BadMagic"`), `"Ok"`, or the
    /// boundary's (`"NullPointer"`).
    pub fn name(self) -> &'static core::ffi::CStr {
        match self {
            Status::Ok => c"Ok",
            Status::InvalidParameter => c"InvalidParameter",
            Status::Incompatible => c"Incompatible",
            Status::Incomplete => c"Incomplete",
            Status::BadMagic => c"BadMagic",
            Status::UnsupportedVersion => c"UnsupportedVersion",
            Status::InvalidField => c"InvalidField",
            Status::BadVarint => c"BadVarint",
            Status::LimitExceeded => c"LimitExceeded",
            Status::ChecksumMismatch => c"ChecksumMismatch",
            Status::MissingTag => c"MissingTag",
            Status::BadTag => c"BadTag",
            Status::TrailingBytes => c"TrailingBytes",
            Status::CorruptPayload => c"CorruptPayload",
            Status::UnexpectedDelta => c"UnexpectedDelta",
            Status::UnexpectedFilterType => c"UnexpectedFilterType",
            Status::OpaqueHashFamily => c"OpaqueHashFamily",
            Status::GenerationGap => c"GenerationGap",
            Status::StaleGeneration => c"StaleGeneration",
            Status::BaseMismatch => c"BaseMismatch",
            Status::ResultMismatch => c"ResultMismatch",
            Status::TagNotVerified => c"TagNotVerified",
            Status::OverBudget => c"OverBudget",
            Status::AllocationFailed => c"AllocationFailed",
            Status::PlanExceedsLimits => c"PlanExceedsLimits",
            Status::UnsupportedCoding => c"UnsupportedCoding",
            Status::Other => c"Other",
            Status::NullPointer => c"NullPointer",
            Status::InvalidArgument => c"InvalidArgument",
            Status::BufferTooSmall => c"BufferTooSmall",
            Status::Internal => c"Internal",
        }
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
