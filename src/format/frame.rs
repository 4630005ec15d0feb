//! An encoded frame: its header and payload, written with its checksum and, with a key,
//! its authentication tag (spec §2.4, §2.5).

use bytes::{BufMut, Bytes, BytesMut};

use crate::error::Result;

use super::auth::{FrameKey, Tag, TAG_LEN};
use super::header::FrameHeader;
use super::ids::{Coding, FrameKind};

/// An encoded frame, ready to write; its exact length is known before writing.
///
/// A frame of the plain entry points ([`Encoder::encode`](crate::Encoder::encode) and
/// the others) gives its payload's memory, when dropped, to the pool of the thread that
/// drops it, for that thread's next encode; a frame made through a caller's
/// [`Scratch`](crate::Scratch) frees it, unless handed back with
/// [`Scratch::recycle`](crate::Scratch::recycle). Frames compare by their contents
/// (header, payload, key), not by where their memory goes back to.
#[derive(Debug, Clone)]
pub struct Frame {
    pub(super) header: FrameHeader,
    pub(super) payload: Vec<u8>,
    /// The key that tags the frame when it is written (spec §2.5).
    pub(super) key: Option<FrameKey>,
    /// Where the payload's memory goes when the frame is dropped.
    pub(super) home: Home,
}

/// Where a frame's payload goes when the frame is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Home {
    /// To the current pool of the thread that drops it: a frame of the plain entry points.
    Pool,
    /// Nowhere (freed): a frame made through a caller's [`Scratch`](crate::Scratch), whose
    /// memory goes back to it only by [`Scratch::recycle`](crate::Scratch::recycle).
    Caller,
}

impl PartialEq for Frame {
    fn eq(&self, other: &Self) -> bool {
        self.header == other.header && self.payload == other.payload && self.key == other.key
    }
}

impl Eq for Frame {}

impl Frame {
    /// The header.
    pub fn header(&self) -> &FrameHeader {
        &self.header
    }

    /// The coded payload.
    pub fn payload(&self) -> &[u8] {
        &self.payload
    }

    /// The coding used.
    pub fn coding(&self) -> Coding {
        self.header.coding
    }

    /// Whether the frame carries the restart flag (flags bit 1, spec §5.2).
    pub fn is_restart(&self) -> bool {
        self.header.restart
    }

    /// Mark a full frame as a restart (flags bit 1, spec §5.2): the sender's numbering
    /// starts again here, and a receiver applies it whatever generation it holds. The
    /// length does not change. A delta cannot restart ([`Error::InvalidParameter`](crate::Error::InvalidParameter)).
    pub fn with_restart(mut self, restart: bool) -> Result<Frame> {
        if restart && self.header.kind != FrameKind::Full {
            return Err(crate::error::invalid(
                "restart",
                "only a full frame can restart the numbering",
            ));
        }
        self.header.restart = restart;
        Ok(self)
    }

    /// Tag the frame with `key` (flags bit 2, spec §2.5), or with `None` send it untagged:
    /// the frame grows or shrinks by [`TAG_LEN`] bytes. An
    /// [`Encoder`](crate::Encoder) with a [`key`](crate::Encoder::key) tags its frames itself; this is for a frame
    /// made otherwise, such as [`Message::to_frame`](crate::Message::to_frame)'s.
    ///
    /// ```
    /// use bloomwire::{decode, BloomFilter, Decoded, Encoder, FrameKey, HashFamily, Limits};
    /// use bloomwire::{Params, Tag, Verifier};
    /// let f = BloomFilter::new(Params::standard(1000, 3, HashFamily::default()).unwrap());
    /// let key = FrameKey::new([9; 32]);
    /// let frame = Encoder::new().encode(&f).unwrap();
    /// let plain = frame.encoded_len();
    /// let tagged = frame.with_key(Some(key.clone()));
    /// assert_eq!(tagged.encoded_len(), plain + 16);
    /// let back: Decoded = decode(&tagged.to_bytes(), &Verifier::new(key, Limits::default())).unwrap();
    /// assert_eq!(back.header.tag, Tag::Verified);
    /// ```
    pub fn with_key(mut self, key: Option<FrameKey>) -> Frame {
        self.header.tag = if key.is_some() {
            Tag::Verified
        } else {
            Tag::Absent
        };
        self.header.verified_by = key.as_ref().map(FrameKey::id);
        self.key = key;
        self
    }

    /// Exact bytes [`write_to`](Self::write_to) writes.
    pub fn encoded_len(&self) -> usize {
        self.header.frame_len()
    }

    /// Write the frame into any buffer: header, payload, checksum and, for a frame with a
    /// key, its tag.
    pub fn write_to<B: BufMut>(&self, buf: &mut B) {
        let mut head = Vec::with_capacity(self.header.header_len);
        self.header.write(&mut head);
        debug_assert_eq!(head.len(), self.header.header_len);
        let crc = crc32c::crc32c_append(crc32c::crc32c(&head), &self.payload);
        buf.put_slice(&head);
        buf.put_slice(&self.payload);
        buf.put_u32_le(crc);
        if let Some(key) = &self.key {
            buf.put_slice(&key.tag(&[&head, &self.payload, &crc.to_le_bytes()]));
        }
    }

    /// The frame's bytes in its payload's own memory: the header moved in front of the
    /// payload (a copy within the buffer, where it has the room), the checksum and the
    /// tag after it.
    fn into_vec(mut self) -> Vec<u8> {
        let mut head = Vec::with_capacity(self.header.header_len);
        self.header.write(&mut head);
        let mut out = std::mem::take(&mut self.payload);
        let crc = crc32c::crc32c_append(crc32c::crc32c(&head), &out);
        let tag_len = if self.key.is_some() { TAG_LEN } else { 0 };
        out.reserve_exact(head.len() + 4 + tag_len);
        out.splice(0..0, head);
        out.extend_from_slice(&crc.to_le_bytes());
        if let Some(key) = &self.key {
            let tag = key.tag(&[&out]);
            out.extend_from_slice(&tag);
        }
        debug_assert_eq!(out.len(), self.encoded_len());
        out
    }

    /// The frame as bytes.
    pub fn to_bytes(&self) -> Bytes {
        let mut b = BytesMut::with_capacity(self.encoded_len());
        self.write_to(&mut b);
        debug_assert_eq!(b.len(), self.encoded_len());
        b.freeze()
    }
}

impl Frame {
    /// A frame of `header` and `payload` (untagged), whose payload goes to the current pool
    /// when dropped.
    pub(super) fn new(header: FrameHeader, payload: Vec<u8>) -> Frame {
        Frame {
            header,
            payload,
            key: None,
            home: Home::Pool,
        }
    }

    /// The frame, whose payload goes to no pool when dropped: made through a caller's
    /// context, it goes back to it only when recycled.
    pub(super) fn owned_by_caller(mut self) -> Frame {
        self.home = Home::Caller;
        self
    }

    /// The payload's memory, taken out (the frame keeps an empty one).
    pub(super) fn take_payload(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.payload)
    }
}

/// A frame of the plain entry points gives its payload to the current pool of the thread
/// that drops it (the thread's own, the default context), for the next encode's; a frame
/// made through a [`Scratch`](crate::Scratch) only frees it.
impl Drop for Frame {
    fn drop(&mut self) {
        if self.home == Home::Pool {
            crate::entropy::scratch::give_bytes(self.take_payload());
        }
    }
}

/// The frame `make` makes, written into `out` in its memory: `out` is lent to the coders
/// as the payload's buffer (the thread's scratch memory, see `entropy/scratch.rs`) and
/// receives the frame's bytes. Returns the frame's header; on an error `out` is empty.
pub(crate) fn into_buffer(
    out: &mut Vec<u8>,
    make: impl FnOnce() -> Result<Frame>,
) -> Result<FrameHeader> {
    crate::entropy::scratch::give_bytes(std::mem::take(out));
    let frame = make()?;
    let header = frame.header().clone();
    *out = frame.into_vec();
    Ok(header)
}
