//! The first stage of decoding: a frame at the start of an input, checked up to its
//! payload (spec §2.3). It calls nothing of the stages after it ([`FrameView`], the
//! message); `decode.rs` drives them.
//!
//! [`FrameView`]: super::FrameView

use crate::error::{Error, Result};

use super::auth::{check_tag, FrameKey, Tag};
use super::header::FrameHeader;
use super::ids::Coding;
use super::limits::Limits;

/// [`Error::TrailingBytes`] unless a frame of `len` bytes is all of `input` (checked last,
/// once the frame has decoded: spec §2.3).
pub(crate) fn whole(input: &[u8], len: usize) -> Result<()> {
    if len != input.len() {
        return Err(Error::TrailingBytes {
            count: input.len() - len,
            offset: len,
        });
    }
    Ok(())
}

/// A frame at the start of an input, checked as spec §2.3 orders, up to its payload: its
/// header parsed within the limits, all its bytes there, its checksum matching and, with a
/// key, its authentication tag too (spec §2.5; without a key a tag is skipped). Borrowed from
/// the input; [`CheckedFrame`](super::CheckedFrame) is its owned twin.
#[derive(Debug)]
pub(crate) struct Checked<'a> {
    pub(crate) header: FrameHeader,
    /// The frame's bytes, exactly [`FrameHeader::frame_len`] of them.
    pub(crate) bytes: &'a [u8],
    /// For a raw bit array (coding 0, any filter type but counting) when asked for, the
    /// payload's words, copied in the same pass over it as its checksum
    /// (`filter::crc_copy`): decoding such a frame is then one pass.
    pub(crate) raw_words: Option<Vec<u64>>,
}

impl<'a> Checked<'a> {
    /// Check the frame at the start of `input` (bytes after it are left alone).
    pub(crate) fn new(input: &'a [u8], limits: &Limits, key: Option<&FrameKey>) -> Result<Self> {
        Self::checking(input, limits, key, false)
    }

    /// [`Checked::new`], the words of a raw bit array copied in the checksum's pass. The
    /// words of a frame that fails a check are dropped with it; there are `ceil(m / 64)` of
    /// them for the `ceil(m / 8)` bytes of the payload the input holds.
    pub(crate) fn copying_raw(
        input: &'a [u8],
        limits: &Limits,
        key: Option<&FrameKey>,
    ) -> Result<Self> {
        Self::checking(input, limits, key, true)
    }

    fn checking(
        input: &'a [u8],
        limits: &Limits,
        key: Option<&FrameKey>,
        copy_raw: bool,
    ) -> Result<Self> {
        let mut header = FrameHeader::parse(input, limits)?;
        let len = header.frame_len();
        let Some((body_end, stored)) = header.stored_checksum(input) else {
            return Err(Error::Incomplete {
                needed: len - input.len(),
            });
        };
        let raw_bits = header.coding == Coding::Raw && header.counter_width.is_none();
        let (computed, raw_words) = if copy_raw && raw_bits {
            let head = crc32c::crc32c(&input[..header.header_len]);
            let mut words = Vec::new();
            let payload = &input[header.header_len..body_end];
            let crc = crate::filter::crc_copy::append_words(head, payload, &mut words)?;
            (crc, Some(words))
        } else {
            (crc32c::crc32c(&input[..body_end]), None)
        };
        if stored != computed {
            return Err(Error::ChecksumMismatch {
                stored,
                computed,
                offset: body_end,
            });
        }
        header.tag = check_tag(input, len, header.tag != Tag::Absent, key)?;
        if header.tag == Tag::Verified {
            header.verified_by = key.map(FrameKey::id);
        }
        Ok(Checked {
            header,
            bytes: &input[..len],
            raw_words,
        })
    }

    /// A frame whose checksum (and tag) the caller has verified itself: the header is
    /// checked against `limits` and the length, nothing else.
    pub(crate) fn trusting(input: &'a [u8], limits: &Limits) -> Result<Self> {
        let header = FrameHeader::parse(input, limits)?;
        let len = header.frame_len();
        if input.len() < len {
            return Err(Error::Incomplete {
                needed: len - input.len(),
            });
        }
        Ok(Checked {
            header,
            bytes: &input[..len],
            raw_words: None,
        })
    }

    /// The payload, borrowed from the input.
    pub(crate) fn payload(&self) -> &'a [u8] {
        let h = &self.header;
        &self.bytes[h.header_len..h.header_len + h.payload_len]
    }
}
