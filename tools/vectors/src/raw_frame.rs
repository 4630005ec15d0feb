//! A frame assembled field by field, so reject vectors can hold any value in any field.

use bloomwire::format::put_varint;
use bloomwire::{BitArray, BloomFilter, Chunking, Coding, Encoder};

use crate::bit;

/// A frame assembled field by field, so reject vectors can hold any value in any field.
#[derive(Clone)]
pub(crate) struct RawFrame {
    pub(crate) fixed: Vec<u8>,
    pub(crate) seed: Vec<u8>,
    pub(crate) varints: Vec<Vec<u8>>, // m, k(s), n
    pub(crate) sequence: Vec<u8>,     // generation, and for deltas base generation and digests
    pub(crate) q0: Vec<u8>,
    pub(crate) len: Vec<u8>,
    pub(crate) payload: Vec<u8>,
    pub(crate) crc: Option<u32>,
    pub(crate) trailing: Vec<u8>,
}

pub(crate) fn varint(v: u64) -> Vec<u8> {
    let mut b = Vec::new();
    put_varint(&mut b, v);
    b
}

impl RawFrame {
    /// A valid raw-coded standard frame: m = 16, k = 2, n = 1.
    pub(crate) fn valid_raw() -> RawFrame {
        RawFrame {
            fixed: vec![b'B', b'L', b'W', b'R', 1, 0, 0, 1, 0, 0, 0],
            seed: vec![0],
            varints: vec![varint(16), varint(2 << 16), varint(1)],
            sequence: varint(0),
            q0: vec![],
            len: varint(2),
            payload: vec![0x21, 0x80],
            crc: None,
            trailing: vec![],
        }
    }

    pub(crate) fn from_frame(f: &BloomFilter, coding: Coding) -> RawFrame {
        let frame = Encoder::new().encode_with(f, bit(coding)).unwrap();
        let bytes = frame.to_bytes();
        let h = frame.header();
        let mut r = RawFrame::valid_raw();
        r.fixed[9] = coding.id();
        r.varints = vec![
            varint(f.m()),
            varint(f.params().k().raw().into()),
            varint(f.n()),
        ];
        r.q0 = h.q0.map(|q| q.to_le_bytes().to_vec()).unwrap_or_default();
        r.len = varint(h.payload_len as u64);
        r.payload = bytes[h.header_len..h.header_len + h.payload_len].to_vec();
        r
    }

    /// A chunked frame (flags bit 0); the chunk shift byte rides after q0.
    pub(crate) fn chunked(f: &BloomFilter, coding: Coding, shift: u8) -> RawFrame {
        let frame = Encoder::new()
            .chunking(Chunking::Shift(shift))
            .encode_with(f, bit(coding))
            .unwrap();
        let mut r = RawFrame::from_frame(f, coding);
        let h = frame.header();
        let bytes = frame.to_bytes();
        r.fixed[10] = 1;
        r.q0.push(shift);
        r.len = varint(h.payload_len as u64);
        r.payload = bytes[h.header_len..h.header_len + h.payload_len].to_vec();
        r
    }

    pub(crate) fn bytes(&self) -> Vec<u8> {
        let mut b = self.fixed.clone();
        b.extend_from_slice(&self.seed);
        for v in &self.varints {
            b.extend_from_slice(v);
        }
        b.extend_from_slice(&self.sequence);
        b.extend_from_slice(&self.q0);
        b.extend_from_slice(&self.len);
        b.extend_from_slice(&self.payload);
        let crc = self.crc.unwrap_or_else(|| crc32c::crc32c(&b));
        b.extend_from_slice(&crc.to_le_bytes());
        b.extend_from_slice(&self.trailing);
        b
    }
}

/// The payload of `bits` in coding 9, 10 or 11, coded with `q0` whatever the array
/// measures: for reject vectors.
pub(crate) fn payload_with_q0(coding: Coding, bits: &BitArray, q0: u16) -> Vec<u8> {
    use bloomwire::internals::{escape, small, wide};
    let encoders = match coding {
        Coding::Small => small::encode_kernels,
        Coding::Wide => wide::encode_kernels,
        Coding::Escape => escape::encode_kernels,
        _ => unreachable!("codings 9, 10 and 11"),
    };
    encoders(bits.words(), bits.len(), q0).swap_remove(0).1
}

/// `f`'s frame in coding 9, 10 or 11 with q0 one off the measured value, the neighbour
/// whose model codes the array to the same payload: the hole a decoder that did not check
/// q0 would leave open (two accepted frames of one filter).
pub(crate) fn q0_neighbour(f: &BloomFilter, coding: Coding) -> Truncated {
    let mut r = RawFrame::from_frame(f, coding);
    let q0 = u16::from_le_bytes([r.q0[0], r.q0[1]]);
    let twin = [q0 - 1, q0 + 1]
        .into_iter()
        .find(|&other| payload_with_q0(coding, f.bits(), other) == r.payload)
        .unwrap_or_else(|| panic!("{coding}: no neighbour of q0 {q0} with the same payload"));
    r.q0 = twin.to_le_bytes().to_vec();
    r.into()
}

/// A frame cut after its first `.1` bytes (`usize::MAX`: whole).
pub(crate) struct Truncated(pub(crate) RawFrame, pub(crate) usize);

impl From<RawFrame> for Truncated {
    fn from(r: RawFrame) -> Self {
        Truncated(r, usize::MAX)
    }
}
