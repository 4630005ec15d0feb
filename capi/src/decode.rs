//! `bw_decode`: one full frame into a filter, within limits and, with a key, only when
//! its tag verifies.

use bloomwire::{decode, decode_prefix, AnyFilter, Decodable, Decoded, FrameKey, Limits, Verifier};

use crate::error::{guard, Fail};
use crate::filter::Filter;
use crate::limits::{limits_or_default, Limits as CLimits};
use crate::ptr::{bytes_in, key_in, Out, OutHandle};
use crate::status::Status;

/// The checks of a decoder: its limits, and the key frames must be tagged with.
pub(crate) struct Checks {
    pub(crate) limits: Limits,
    pub(crate) key: Option<FrameKey>,
}

impl Checks {
    /// The checks of the C arguments `limits` (NULL: the defaults) and `key`, `key_len`
    /// (NULL and 0: no key).
    ///
    /// # Safety
    ///
    /// `limits` is NULL or a live `bw_limits`; `key` NULL or `key_len` readable bytes.
    pub(crate) unsafe fn new(
        limits: *const CLimits,
        key: *const u8,
        key_len: usize,
    ) -> Result<Checks, Fail> {
        // SAFETY: the caller's guarantees, passed on.
        unsafe {
            Ok(Checks {
                limits: limits_or_default(limits)?,
                key: key_in(key, key_len)?,
            })
        }
    }

    /// Decode exactly one frame.
    pub(crate) fn decode<T: Decodable>(&self, frame: &[u8]) -> bloomwire::Result<T> {
        match &self.key {
            None => decode(frame, &self.limits),
            Some(key) => decode(frame, &Verifier::new(key.clone(), self.limits)),
        }
    }

    /// Decode the frame at the start of `input`, and the bytes it took.
    pub(crate) fn decode_prefix<T: Decodable>(
        &self,
        input: &[u8],
    ) -> bloomwire::Result<(T, usize)> {
        match &self.key {
            None => decode_prefix(input, &self.limits),
            Some(key) => decode_prefix(input, &Verifier::new(key.clone(), self.limits)),
        }
    }
}

/// `bw_status bw_decode(const uint8_t *frame, size_t len, const bw_limits *limits, const
/// uint8_t *key, size_t key_len, bw_filter **out)`: the full frame of a Bloom or a counting
/// filter that `frame` holds exactly, decoded within `limits` (NULL: the defaults). With a
/// key (32 bytes) only a frame tagged with it decodes (`BW_ERR_MISSING_TAG`,
/// `BW_ERR_BAD_TAG`); without one (NULL, 0) a tag is skipped. A delta is
/// `BW_ERR_UNEXPECTED_DELTA` (give deltas to a `bw_receiver`); `bw_inspect` describes any
/// frame.
///
/// # Safety
///
/// `frame` is NULL or `len` readable bytes; `limits` NULL or a live `bw_limits`; `key` NULL
/// or `key_len` readable bytes; `out` NULL or a writable `bw_filter *`.
#[no_mangle]
pub unsafe extern "C" fn bw_decode(
    frame: *const u8,
    len: usize,
    limits: *const CLimits,
    key: *const u8,
    key_len: usize,
    out: *mut *mut Filter,
) -> Status {
    // SAFETY: the caller's guarantees, passed on.
    unsafe {
        on_frame(frame, len, limits, key, key_len, out, |frame, checks| {
            let decoded: Decoded<AnyFilter> = checks.decode(frame)?;
            Ok(Filter(decoded.filter))
        })
    }
}

/// A call on one frame under checks that hands back a handle (`bw_decode`, `bw_inspect`):
/// `out` (set to NULL first), the frame's bytes and the checks are taken from the C
/// arguments in that order, then `make` gives the handle's value.
///
/// # Safety
///
/// `frame` is NULL or `len` readable bytes; `limits` NULL or a live `bw_limits`; `key` NULL
/// or `key_len` readable bytes; `out` NULL or a writable `T *`.
pub(crate) unsafe fn on_frame<T>(
    frame: *const u8,
    len: usize,
    limits: *const CLimits,
    key: *const u8,
    key_len: usize,
    out: *mut *mut T,
    make: impl FnOnce(&[u8], &Checks) -> Result<T, Fail>,
) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantees, passed on.
        let (out, frame, checks) = unsafe {
            (
                OutHandle::new(out, "out")?,
                bytes_in(frame, len, "frame")?,
                Checks::new(limits, key, key_len)?,
            )
        };
        out.put(make(frame, &checks)?);
        Ok(())
    })
}

/// `bw_status bw_frame_len(const uint8_t *input, size_t len, const bw_limits *limits,
/// size_t *out)`: the length of the whole frame that starts `input`, read from its header
/// alone (checked within `limits`), for a stream reader that must know how many bytes to
/// wait for: `BW_ERR_INCOMPLETE` while the header itself is cut (`bw_error.needed` more
/// bytes at least). Nothing past the header is checked.
///
/// # Safety
///
/// `input` is NULL or `len` readable bytes; `limits` NULL or a live `bw_limits`; `out` NULL
/// or a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn bw_frame_len(
    input: *const u8,
    len: usize,
    limits: *const CLimits,
    out: *mut usize,
) -> Status {
    guard(|| {
        // SAFETY: the caller's guarantees, passed on.
        let (out, input, limits) = unsafe {
            (
                Out::new(out, "out")?,
                bytes_in(input, len, "input")?,
                limits_or_default(limits)?,
            )
        };
        out.put(0);
        out.put(bloomwire::FrameHeader::parse(input, &limits)?.frame_len());
        Ok(())
    })
}
