//! quickcheck properties for the public encode/decode pairs that `tests/frames.rs` (full
//! frames per coding) does not already cover: re-encoding a decoded message, header varints
//! at any value, deltas, streams of frames through `decode_prefix` and `decode_buf`,
//! sender and receiver, bit arrays, wire ids, and the tokio codec.

use std::collections::VecDeque;

use bloomwire::format::{put_varint, varint_len};
use bloomwire::{
    decode, decode_buf, decode_prefix, BaseHash, BitArray, BitCoding, BloomFilter, Coding, Decoded,
    Encoder, Error, FrameHeader, HashCount, HashFamily, IndexScheme, Layout, Limits, Message,
    PSource, Params, Receiver, Sender, Update,
};
use bytes::Buf;
use quickcheck::{quickcheck, Arbitrary, Gen, TestResult};

/// A small filter: parameters and the keys inserted.
#[derive(Debug, Clone)]
struct Filter {
    params: Params,
    keys: Vec<u32>,
}

impl Arbitrary for Filter {
    fn arbitrary(g: &mut Gen) -> Self {
        let m = 1 + u64::arbitrary(g) % 3000;
        let k = HashCount::from_raw((1 << 16) + u32::arbitrary(g) % (6 << 16)).unwrap();
        let base = if bool::arbitrary(g) {
            BaseHash::Xxh64 {
                seed: u64::arbitrary(g),
            }
        } else {
            BaseHash::SipHash24 {
                k0: u64::arbitrary(g),
                k1: u64::arbitrary(g),
            }
        };
        let scheme = *g
            .choose(&[
                IndexScheme::DoubleHashing,
                IndexScheme::EnhancedDoubleHashing,
            ])
            .unwrap();
        let layout = match u8::arbitrary(g) % 3 {
            0 => Layout::Standard { k },
            1 if m >= u64::from(k.ceil()) => Layout::Partitioned { k },
            1 => Layout::Standard { k },
            _ => Layout::blocks_proportional(m, k).unwrap(),
        };
        let params = match Params::new(m, layout, HashFamily::new(base, scheme)) {
            Ok(p) => p,
            // Proportional blocks can round every k_j to 0 for tiny m.
            Err(_) => {
                Params::new(m, Layout::Standard { k }, HashFamily::new(base, scheme)).unwrap()
            }
        };
        let count = usize::arbitrary(g) % 300;
        Filter {
            params,
            keys: (0..count).map(|_| u32::arbitrary(g)).collect(),
        }
    }
}

impl Filter {
    fn build(&self) -> BloomFilter {
        let mut f = BloomFilter::new(self.params.clone());
        for k in &self.keys {
            f.insert(k.to_le_bytes());
        }
        f
    }
}

fn coding(g: u8) -> BitCoding {
    BitCoding::ALL[usize::from(g) % BitCoding::ALL.len()]
}

quickcheck! {
    fn prop_a_decoded_message_re_encodes_to_its_bytes(
        f: Filter, c: u8, q0: u16, generation: u64
    ) -> bool {
        let filter = f.build();
        let frame = Encoder::new()
            .coding(coding(c))
            .p_source(PSource::Fixed(q0))
            .encode_generation(&filter, generation)
            .unwrap();
        let bytes = frame.to_bytes();
        let message = decode::<Message>(&bytes, &Limits::unlimited()).unwrap();
        message.to_frame().unwrap().to_bytes() == bytes
            && message.header() == frame.header()
            && FrameHeader::parse(&bytes, &Limits::unlimited()).unwrap() == *frame.header()
    }

    fn prop_header_varints_round_trip_at_any_value(n: u64, generation: u64, seed: u64) -> bool {
        let params = Params::standard(
            64,
            2,
            HashFamily::new(BaseHash::Xxh64 { seed }, IndexScheme::DoubleHashing),
        )
        .unwrap();
        let mut f = BloomFilter::new(params.clone());
        f.insert(b"key");
        let f = BloomFilter::from_parts(params, f.bits().clone(), n).unwrap();
        let frame = Encoder::new().coding(BitCoding::Raw).encode_generation(&f, generation).unwrap();
        let bytes = frame.to_bytes();
        let h = decode::<Message>(&bytes, &Limits::unlimited()).unwrap().header().clone();
        let mut v = Vec::new();
        put_varint(&mut v, n);
        // magic, 7 fixed bytes, seed, m = 64 (1 byte), k = 2 (3 bytes), n, generation,
        // payload length (1 byte)
        h.n == n
            && h.generation == generation
            && v.len() == varint_len(n)
            && h.header_len == 4 + 7 + varint_len(seed) + 1 + 3 + varint_len(n)
                + varint_len(generation) + 1
    }

    fn prop_deltas_round_trip_and_refuse_other_bases(
        f: Filter, more: Vec<u32>, c: u8, base_generation: u32
    ) -> TestResult {
        let base = f.build();
        let mut next = base.clone();
        for k in &more {
            next.insert(k.to_le_bytes());
        }
        let (bg, g) = (u64::from(base_generation), u64::from(base_generation) + 1);
        let frame = Encoder::new().coding(coding(c)).encode_delta(&base, bg, &next, g).unwrap();
        let bytes = frame.to_bytes();
        let Message::Delta(delta) = decode::<Message>(&bytes, &Limits::unlimited()).unwrap() else {
            return TestResult::failed();
        };
        if delta.apply(&base, bg) != Ok(next.clone()) {
            return TestResult::failed();
        }
        if !matches!(delta.apply(&base, g), Err(Error::GenerationGap { .. })) {
            return TestResult::failed();
        }
        // Applying to the result instead of the base: refused unless nothing changed.
        let again = delta.apply(&next, bg);
        TestResult::from_bool(if next.bits() == base.bits() {
            again == Ok(next.clone())
        } else {
            matches!(again, Err(Error::BaseMismatch { .. }))
        })
    }

    fn prop_streams_decode_frame_by_frame(fs: Vec<(Filter, u8)>, split: usize) -> bool {
        let filters: Vec<BloomFilter> = fs.iter().take(6).map(|(f, _)| f.build()).collect();
        let mut stream = Vec::new();
        for (f, (_, c)) in filters.iter().zip(&fs) {
            stream.extend_from_slice(&Encoder::new().coding(coding(*c)).encode(f).unwrap().to_bytes());
        }
        // decode_prefix over a slice.
        let mut rest = &stream[..];
        for f in &filters {
            let Ok((Message::Full(d), len)) = decode_prefix::<Message>(rest, &Limits::unlimited())
            else {
                return false;
            };
            if &d.filter != f {
                return false;
            }
            rest = &rest[len..];
        }
        // decode_buf over two chunks split anywhere, and over a ring buffer that wraps
        // around at the same point.
        let cut = if stream.is_empty() { 0 } else { split % stream.len() };
        let mut chain = (&stream[..cut]).chain(&stream[cut..]);
        let mut ring: VecDeque<u8> = stream[cut..].iter().copied().collect();
        for &b in stream[..cut].iter().rev() {
            ring.push_front(b);
        }
        for f in &filters {
            match decode_buf::<Decoded, _>(&mut chain, &Limits::unlimited()) {
                Ok(d) if &d.filter == f => {}
                _ => return false,
            }
            match decode_buf::<Decoded, _>(&mut ring, &Limits::unlimited()) {
                Ok(d) if &d.filter == f => {}
                _ => return false,
            }
        }
        rest.is_empty() && chain.remaining() == 0 && ring.is_empty()
    }

    fn prop_every_prefix_of_a_frame_is_incomplete(f: Filter, c: u8) -> bool {
        let bytes = Encoder::new().encode_with(&f.build(), coding(c)).unwrap().to_bytes();
        (0..bytes.len()).all(|cut| {
            matches!(
                decode::<Message>(&bytes[..cut], &Limits::unlimited()),
                Err(Error::Incomplete { needed }) if needed >= 1 && needed <= bytes.len() - cut
            )
        })
    }

    fn prop_a_receiver_follows_a_sender(f: Filter, steps: Vec<Vec<u32>>, full_every: u8) -> bool {
        let mut filter = f.build();
        let mut sender = Sender::new(Encoder::new(), u64::from(full_every % 5));
        let mut receiver: Receiver = Receiver::new(Limits::unlimited());
        for keys in steps.iter().take(8) {
            for k in keys {
                filter.insert(k.to_le_bytes());
            }
            let bytes = sender.next_frame(&filter).unwrap().to_bytes();
            let generation = sender.generation();
            match receiver.receive(&bytes) {
                Ok(Update::Full { generation: g, skipped: 0 }) | Ok(Update::Delta { generation: g })
                    if g == generation => {}
                _ => return false,
            }
            if receiver.filter() != Some(&filter) {
                return false;
            }
            // The same frame again is stale and changes nothing, or, for a full frame with
            // the restart flag (spec 5.2: flags bit 1), is applied again to the same effect.
            let restart = bytes[10] & 0x02 != 0;
            match receiver.receive(&bytes) {
                Err(Error::StaleGeneration { .. }) if !restart => {}
                Ok(Update::Full { generation: g, .. }) if restart && g == generation => {}
                _ => return false,
            }
            if receiver.filter() != Some(&filter) {
                return false;
            }
        }
        true
    }

    fn prop_bit_arrays_round_trip_through_bytes_and_words(bits: Vec<bool>) -> bool {
        let mut b = BitArray::new(bits.len() as u64);
        for (i, _) in bits.iter().enumerate().filter(|(_, &x)| x) {
            b.set(i as u64);
        }
        let bytes = b.to_bytes();
        let mut written = Vec::new();
        b.write_bytes(&mut written);
        bytes.len() == b.byte_len()
            && written == bytes
            && BitArray::from_bytes(&bytes, b.len()).as_ref() == Ok(&b)
            && BitArray::from_words(b.words().to_vec(), b.len()).as_ref() == Ok(&b)
            && b.count_ones() == bits.iter().filter(|&&x| x).count() as u64
            && (0..bits.len()).all(|i| b.get(i as u64) == bits[i])
    }

    fn prop_wire_ids_round_trip(raw: u32, id: u8) -> bool {
        let k_ok = match HashCount::from_raw_allow_zero(raw) {
            Ok(k) => k.raw() == raw,
            Err(_) => raw > 1024 << 16,
        };
        let coding_ok = match Coding::from_id(id) {
            Some(c) => c.id() == id,
            // The registry (spec 4.0): id 8 withdrawn, ids 12 and above undefined.
            None => id == 8 || id >= 12,
        };
        let scheme_ok = IndexScheme::from_id(id).map_or(id > 1, |s| s.id() == id);
        k_ok && coding_ok && scheme_ok
    }
}

#[cfg(feature = "tokio")]
mod codec {
    use super::*;
    use bloomwire::FrameCodec;
    use bytes::BytesMut;
    use tokio_util::codec::{Decoder, Encoder as _};

    quickcheck! {
        fn prop_the_codec_decodes_what_it_encodes_at_any_split(
            fs: Vec<(Filter, u8)>, splits: Vec<u16>
        ) -> bool {
            let filters: Vec<BloomFilter> = fs.iter().take(5).map(|(f, _)| f.build()).collect();
            let mut codec = FrameCodec::new(Limits::unlimited());
            let mut wire = BytesMut::new();
            for (f, (_, c)) in filters.iter().zip(&fs) {
                codec.encode(Encoder::new().encode_with(f, coding(*c)).unwrap(), &mut wire).unwrap();
            }
            // Feed the bytes in pieces and collect what comes out.
            let mut buf = BytesMut::new();
            let mut out = Vec::new();
            let mut splits = splits.into_iter();
            while !wire.is_empty() {
                let n = splits.next().map_or(wire.len(), |s| 1 + usize::from(s) % wire.len());
                buf.extend_from_slice(&wire.split_to(n));
                while let Some(Message::Full(d)) = codec.decode(&mut buf).unwrap() {
                    out.push(d.filter);
                }
            }
            out == filters && buf.is_empty()
        }
    }
}
