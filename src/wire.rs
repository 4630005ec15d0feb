//! Low-level wire coding: a borrowed reader that checks every read against the input and
//! knows its byte offset, and LEB128 varints in their one canonical form.

use bytes::BufMut;

use crate::error::{Error, Result};

/// The most bytes a LEB128 encoding of a `u64` takes.
pub const MAX_VARINT_LEN: usize = 10;

/// Bytes of the LEB128 encoding of `v`.
pub fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Append the LEB128 encoding of `v`: 7 bits per byte, least significant group first, the
/// high bit set on every byte but the last.
pub fn put_varint<B: BufMut>(buf: &mut B, mut v: u64) {
    while v >= 0x80 {
        buf.put_u8((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    buf.put_u8(v as u8);
}

/// A cursor over a frame being decoded. Reads past the end return
/// [`Error::Incomplete`], so a caller that accumulates a stream knows to wait for more.
pub(crate) struct Reader<'a> {
    input: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(input: &'a [u8]) -> Self {
        Reader { input, pos: 0 }
    }

    /// Byte offset of the next read.
    pub(crate) fn offset(&self) -> usize {
        self.pos
    }

    /// Take `len` bytes without copying.
    pub(crate) fn take(&mut self, len: usize) -> Result<&'a [u8]> {
        let available = self.input.len() - self.pos;
        if len > available {
            return Err(Error::Incomplete {
                needed: len - available,
            });
        }
        let s = &self.input[self.pos..self.pos + len];
        self.pos += len;
        Ok(s)
    }

    pub(crate) fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn u16_le(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("2")))
    }

    pub(crate) fn u32_le(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4")))
    }

    pub(crate) fn u64_le(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8")))
    }

    /// A canonical LEB128 varint: at most 10 bytes, no bits above 64, no redundant trailing
    /// zero group (the last byte of a multi-byte varint is not zero).
    pub(crate) fn varint(&mut self, field: &'static str) -> Result<u64> {
        let start = self.pos;
        let bad = Error::BadVarint {
            field,
            offset: start,
        };
        let mut v = 0u64;
        for i in 0..MAX_VARINT_LEN {
            let b = self.u8()?;
            let group = u64::from(b & 0x7f);
            if i == 9 && b > 1 {
                return Err(bad);
            }
            v |= group << (7 * i);
            if b & 0x80 == 0 {
                if i > 0 && b == 0 {
                    return Err(bad);
                }
                return Ok(v);
            }
        }
        Err(bad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_have_one_form() {
        for v in [
            0,
            1,
            127,
            128,
            300,
            16383,
            16384,
            u32::MAX as u64,
            u64::MAX - 1,
            u64::MAX,
        ] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            assert_eq!(b.len(), varint_len(v), "{v}");
            let mut r = Reader::new(&b);
            assert_eq!(r.varint("v").unwrap(), v);
            assert_eq!(r.offset(), b.len());
        }
        let bad: [&[u8]; 3] = [
            &[0x80, 0x00],                                                 // overlong zero
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02], // above 2^64
            &[0x80; 11],
        ];
        for b in bad {
            assert!(
                matches!(Reader::new(b).varint("v"), Err(Error::BadVarint { .. })),
                "{b:?}"
            );
        }
        assert_eq!(
            Reader::new(&[0x80]).varint("v"),
            Err(Error::Incomplete { needed: 1 })
        );
    }
}
