//! The crate's one error type.
//!
//! Every failure is a value of [`Error`]: building a filter with impossible parameters, a frame
//! that does not decode, a budget that nothing fits in. Errors about a frame carry the byte
//! offset at which the problem was found, so a peer's bad frame can be reported precisely.

/// Everything that can go wrong in bloomwire.
///
/// The enum is `#[non_exhaustive]`: later format revisions add variants.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A filter parameter is outside what the crate supports (m = 0, k < 1, k too large, ...).
    #[error("invalid parameter {name}: {reason}")]
    InvalidParameter {
        /// Which parameter.
        name: &'static str,
        /// Why it was refused.
        reason: String,
    },

    /// Two filters that must agree on m, k, layout and hash family do not.
    #[error("filters are not compatible: {0}")]
    Incompatible(String),

    /// The input ends before the frame does; `needed` more bytes are required at least.
    ///
    /// This is not a corruption: networking code should read more and try again.
    #[error("incomplete frame: need at least {needed} more bytes")]
    Incomplete {
        /// How many more bytes are needed (a lower bound while the header is incomplete).
        needed: usize,
    },

    /// The frame does not start with the bloomwire magic: the first byte that differs.
    #[error("bad magic: byte {byte:#04x} at offset {offset}, not a bloomwire frame")]
    BadMagic {
        /// The byte found.
        byte: u8,
        /// Its offset (0 to 3).
        offset: usize,
    },

    /// The format version is not one this decoder implements.
    #[error("unsupported format version {0} at offset 4")]
    UnsupportedVersion(u8),

    /// A header field holds a value the spec reserves or does not define.
    #[error("invalid {field} value {value} at offset {offset}")]
    InvalidField {
        /// The header field.
        field: &'static str,
        /// The value read.
        value: u64,
        /// Byte offset of the field in the frame.
        offset: usize,
    },

    /// The frame's coding is one the registry defines (spec §4.0) but the decoder does not
    /// implement: it decodes a smaller profile ([`Limits::profile`](crate::Limits::profile)).
    /// The frame may be valid; the sender should send this receiver the Core profile. (An
    /// id the registry does not define is [`Error::InvalidField`].)
    #[error("coding {coding} at offset {offset} is not in the profile this decoder implements")]
    UnsupportedCoding {
        /// The coding's wire id.
        coding: u8,
        /// Byte offset of the coding field.
        offset: usize,
    },

    /// A varint is longer than 10 bytes, overflows 64 bits, or is not in its minimal form.
    #[error("malformed varint for {field} at offset {offset}")]
    BadVarint {
        /// The header field.
        field: &'static str,
        /// Byte offset of the varint.
        offset: usize,
    },

    /// A value in the frame exceeds the caller's [`Limits`](crate::format::Limits).
    #[error("{field} = {value} at offset {offset} exceeds the limit {limit}")]
    LimitExceeded {
        /// The header field.
        field: &'static str,
        /// The value the frame claims.
        value: u64,
        /// The caller's limit.
        limit: u64,
        /// Byte offset of the field in the frame.
        offset: usize,
    },

    /// The checksum at the end of the frame does not match its contents.
    #[error("checksum mismatch at offset {offset}: frame says {stored:#010x}, contents give {computed:#010x}")]
    ChecksumMismatch {
        /// The CRC-32C stored in the frame.
        stored: u32,
        /// The CRC-32C of the bytes before it.
        computed: u32,
        /// Byte offset of the checksum field.
        offset: usize,
    },

    /// A decoder with a key (spec §2.5) was given a frame without an authentication tag
    /// (flags bit 2 clear), or a [`Receiver`](crate::Receiver) with a key a message decoded
    /// from such a frame. The frame is refused before its payload is read. (A tagged
    /// message the receiver's key did not verify is [`Error::TagNotVerified`].)
    #[error(
        "frame at offset {offset} (its flags) carries no authentication tag, and a key was given"
    )]
    MissingTag {
        /// Byte offset of the flags field.
        offset: usize,
    },

    /// The frame's authentication tag (spec §2.5) is not the one the decoder's key gives:
    /// the frame was forged or changed, or made with another key. The frame is refused
    /// before its payload is read.
    #[error("authentication tag at offset {offset} does not match the frame and the key")]
    BadTag {
        /// Byte offset of the tag.
        offset: usize,
    },

    /// Bytes follow the frame in an input that was meant to hold exactly one frame.
    #[error("{count} trailing bytes after the frame at offset {offset}")]
    TrailingBytes {
        /// How many bytes follow.
        count: usize,
        /// Where the frame ended.
        offset: usize,
    },

    /// The payload does not decode to exactly m bits, or is not in the canonical form the
    /// encoder produces.
    #[error("corrupt payload at offset {offset}: {reason}")]
    CorruptPayload {
        /// What was wrong.
        reason: &'static str,
        /// Byte offset of the payload in the frame.
        offset: usize,
    },

    /// A delta frame where a full frame was expected (use
    /// [`decode`](crate::decode) into a [`Message`](crate::Message), or a
    /// [`Receiver`](crate::Receiver) for streams with deltas).
    #[error("a delta frame where a full frame was expected")]
    UnexpectedDelta,

    /// A frame of a filter type the caller did not ask for: a counting filter where a Bloom
    /// filter was expected, or the other way round.
    #[error("frame holds filter type {got} where {expected} was expected")]
    UnexpectedFilterType {
        /// What the caller expected.
        expected: &'static str,
        /// The frame's filter type id.
        got: u8,
    },

    /// A membership query (or an insert) on a filter of the opaque hash family (base hash
    /// id 0, [`BaseHash::Opaque`](crate::BaseHash::Opaque)): its bits were placed by another
    /// library, so bloomwire cannot tell where a key's bits are. Such a filter carries,
    /// transfers, deltas and digests its bits; the application queries them with the library
    /// that built them.
    #[error("the filter's hash family is opaque (base hash 0): its bits were placed by another library, which must answer queries")]
    OpaqueHashFamily,

    /// A delta for a generation the receiver does not hold: a frame was lost or reordered.
    /// Resynchronize with a full frame.
    #[error("delta applies to generation {base} but the receiver {}: resynchronize", held(.have))]
    GenerationGap {
        /// The receiver's generation, if it has one.
        have: Option<u64>,
        /// The generation the delta applies to.
        base: u64,
    },

    /// A frame that is not newer than what the receiver holds: a duplicate, a replay or a
    /// reordered frame. The receiver's filter is unchanged.
    #[error(
        "generation {got} is not newer than the receiver's {have}: duplicate or reordered frame"
    )]
    StaleGeneration {
        /// The receiver's generation.
        have: u64,
        /// The frame's generation.
        got: u64,
    },

    /// The receiver's bits for the delta's base generation differ from the sender's.
    /// Resynchronize with a full frame.
    #[error("base of generation {generation} differs from the sender's (digest {actual:#010x}, sender {expected:#010x}): resynchronize")]
    BaseMismatch {
        /// The base generation.
        generation: u64,
        /// The digest the sender sent.
        expected: u32,
        /// The digest of the receiver's bits.
        actual: u32,
    },

    /// Applying a delta did not give the bits the sender had. Resynchronize.
    #[error("applying the delta to generation {generation} gives digest {actual:#010x}, sender had {expected:#010x}: resynchronize")]
    ResultMismatch {
        /// The resulting generation.
        generation: u64,
        /// The digest the sender sent.
        expected: u32,
        /// The digest of the result.
        actual: u32,
    },

    /// A receiver with a key was given a decoded message whose authentication tag was not
    /// checked with that key: it was decoded without a key (its tag skipped) or with
    /// another one. Decode it with a [`Verifier`](crate::Verifier) holding the receiver's
    /// key, or give the frame's bytes to [`Receiver::receive`](crate::Receiver::receive).
    #[error("the frame's authentication tag was not verified with the receiver's key: decode it with a Verifier holding that key")]
    TagNotVerified,

    /// No encoding of the filter fits in the caller's byte budget.
    #[error("no encoding fits the budget of {budget} bytes: compressed needs {compressed}, raw needs {raw}")]
    OverBudget {
        /// The budget asked for.
        budget: usize,
        /// Size of the smallest compressed frame.
        compressed: usize,
        /// Size of the raw frame.
        raw: usize,
    },

    /// Memory for a filter (or a decoded payload) could not be allocated: the machine
    /// lacks it. Limits ([`Limits`](crate::format::Limits)) keep a receiver's allocations to
    /// what it chose; this is what a caller that raised them, or built a filter that large,
    /// meets instead of an abort.
    #[error("cannot allocate {bytes} bytes")]
    AllocationFailed {
        /// The bytes asked for.
        bytes: u64,
    },

    /// A plan would exceed the receiver's [`Limits`](crate::format::Limits) given to the
    /// [`Optimizer`](crate::Optimizer): raise them with
    /// [`Optimizer::limits`](crate::Optimizer::limits) (and on the receiver), or relax the
    /// target.
    #[error("the plan needs {name} = {needed}, above the receiver's limit {limit}: raise Limits::{name} with Optimizer::limits (and on the receiver), or relax the target")]
    PlanExceedsLimits {
        /// The limit: `max_m`, `max_k`, `max_payload` or `max_filter_bytes`.
        name: &'static str,
        /// What the plan needs.
        needed: u64,
        /// The limit.
        limit: u64,
    },
}

impl Error {
    /// The variant's name (`"InvalidField"`): how the test vectors' manifests
    /// (`spec/vectors/reject/manifest.json`), the reference decoder and the conformance kit
    /// name the error.
    ///
    /// ```
    /// use bloomwire::{decode, Decoded, Limits};
    /// let e = decode::<Decoded>(b"BLWX", &Limits::default()).unwrap_err();
    /// assert_eq!(e.name(), "BadMagic");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            Error::InvalidParameter { .. } => "InvalidParameter",
            Error::Incompatible(_) => "Incompatible",
            Error::Incomplete { .. } => "Incomplete",
            Error::BadMagic { .. } => "BadMagic",
            Error::UnsupportedVersion(_) => "UnsupportedVersion",
            Error::InvalidField { .. } => "InvalidField",
            Error::UnsupportedCoding { .. } => "UnsupportedCoding",
            Error::BadVarint { .. } => "BadVarint",
            Error::LimitExceeded { .. } => "LimitExceeded",
            Error::ChecksumMismatch { .. } => "ChecksumMismatch",
            Error::MissingTag { .. } => "MissingTag",
            Error::BadTag { .. } => "BadTag",
            Error::TrailingBytes { .. } => "TrailingBytes",
            Error::CorruptPayload { .. } => "CorruptPayload",
            Error::UnexpectedDelta => "UnexpectedDelta",
            Error::UnexpectedFilterType { .. } => "UnexpectedFilterType",
            Error::OpaqueHashFamily => "OpaqueHashFamily",
            Error::GenerationGap { .. } => "GenerationGap",
            Error::StaleGeneration { .. } => "StaleGeneration",
            Error::BaseMismatch { .. } => "BaseMismatch",
            Error::ResultMismatch { .. } => "ResultMismatch",
            Error::TagNotVerified => "TagNotVerified",
            Error::OverBudget { .. } => "OverBudget",
            Error::AllocationFailed { .. } => "AllocationFailed",
            Error::PlanExceedsLimits { .. } => "PlanExceedsLimits",
        }
    }

    /// Whether a receiver refused the frame for where it stands in the sequence of
    /// generations (spec 5.2): [`StaleGeneration`](Error::StaleGeneration) (a duplicate or
    /// a late frame: ignore it), [`GenerationGap`](Error::GenerationGap),
    /// [`BaseMismatch`](Error::BaseMismatch) or [`ResultMismatch`](Error::ResultMismatch)
    /// (ask the sender for a full frame). The frame itself was sound, and the receiver is
    /// unchanged.
    pub fn is_sequence_error(&self) -> bool {
        matches!(
            self,
            Error::StaleGeneration { .. }
                | Error::GenerationGap { .. }
                | Error::BaseMismatch { .. }
                | Error::ResultMismatch { .. }
        )
    }
}

/// Shorthand for results in this crate.
pub type Result<T, E = Error> = core::result::Result<T, E>;

fn held(have: &Option<u64>) -> String {
    match have {
        Some(g) => format!("holds generation {g}"),
        None => "has no filter yet".to_string(),
    }
}

/// A vector of `len` copies of `value`, or [`Error::AllocationFailed`] where the allocator
/// refuses it (an infallible `vec![value; len]` aborts the process instead).
pub(crate) fn try_vec<T: Clone>(value: T, len: u64) -> Result<Vec<T>> {
    let bytes = len.saturating_mul(core::mem::size_of::<T>() as u64);
    let failed = || Error::AllocationFailed { bytes };
    let len = usize::try_from(len).map_err(|_| failed())?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| failed())?;
    v.resize(len, value);
    Ok(v)
}

pub(crate) fn invalid(name: &'static str, reason: impl Into<String>) -> Error {
    Error::InvalidParameter {
        name,
        reason: reason.into(),
    }
}
