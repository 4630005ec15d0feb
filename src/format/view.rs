//! A parsed frame whose payload is decoded on demand, chunk by chunk.

use crate::entropy::model::KnownP;
use crate::error::{Error, Result};
use crate::filter::bits::BitArray;

use super::auth::Checks;
use super::checked::Checked;
use super::header::FrameHeader;
use super::ids::{Coding, FrameKind, FILTER_TYPE_COUNTING};
use super::limits::Limits;

/// A frame whose header, length, checksum and chunk table have been checked, its payload
/// borrowed from the input (no copy): decode it whole, into a buffer the caller reuses, on
/// several threads, or one chunk (a range of bits) at a time.
///
/// ```
/// use bloomwire::{Chunking, Encoder, FrameView, Limits};
/// use bloomwire::{BitArray, BloomFilter, HashFamily, Params};
/// let mut f = BloomFilter::new(Params::standard(100_000, 2, HashFamily::default()).unwrap());
/// for i in 0..5_000u32 {
///     f.insert(i.to_le_bytes());
/// }
/// // Chunks of 2^14 bits: 7 of them.
/// let wire = Encoder::new().chunking(Chunking::Shift(14)).encode(&f).unwrap().to_bytes();
/// let view = FrameView::parse(&wire, &Limits::default()).unwrap();
/// assert_eq!(view.chunk_count(), 7);
/// // Bits 20 000 .. 20 100 without decoding the other six chunks.
/// let part = view.decode_bits(20_000..20_100).unwrap();
/// assert_eq!(part, f.bits().slice(20_000, 100));
/// // The whole filter, into an array the caller keeps between frames.
/// let mut bits = BitArray::new(0);
/// view.decode_into(&mut bits).unwrap();
/// assert_eq!(&bits, f.bits());
/// ```
#[derive(Debug, Clone)]
pub struct FrameView<'a> {
    pub(super) header: FrameHeader,
    pub(super) payload: &'a [u8],
    /// Where the chunks are in `payload`; one chunk for an unchunked payload.
    pub(super) chunks: crate::entropy::chunks::ChunkTable<'a>,
}

impl<'a> FrameView<'a> {
    /// Check the frame at the start of `input` (bytes after it are left alone, see
    /// [`FrameView::frame_len`]): its header against the limits (`checks` is [`Limits`],
    /// or a [`Verifier`](crate::Verifier) that also holds a key), its length, its
    /// checksum, its authentication tag when `checks` has a key (spec §2.5; without one a
    /// tag is skipped) and, for a chunked payload, its table of chunk lengths. The payload
    /// itself is checked as it is decoded.
    pub fn parse(input: &'a [u8], checks: &impl Checks) -> Result<Self> {
        FrameView::of_checked(Checked::new(input, checks.limits(), checks.key())?)
    }

    /// The view of a frame whose checksum (and tag) the caller has verified itself, say
    /// while streaming the frame from a file: the header is checked against `limits` and
    /// the chunk table read, and nothing else. `input` must be the frame's length, but only
    /// the header, the chunk table and the chunks decoded from it are read, so a reader
    /// that keeps a large frame on disk passes a zeroed buffer (whose pages the system
    /// does not commit until written) holding just those bytes.
    pub fn parse_verified_elsewhere(input: &'a [u8], limits: &Limits) -> Result<Self> {
        FrameView::of_checked(Checked::trusting(input, limits)?)
    }

    /// The view of a checked frame: its payload and chunk table (checked here), without a
    /// second pass over the frame.
    pub(crate) fn of_checked(checked: Checked<'a>) -> Result<Self> {
        let payload = checked.payload();
        let header = checked.header;
        let chunks = match header.chunk_shift {
            None => crate::entropy::chunks::ChunkTable::whole(payload),
            Some(shift) => crate::entropy::chunks::parse_table(payload, header.params.m(), shift)
                .map_err(|reason| Error::CorruptPayload {
                reason,
                offset: header.header_len,
            })?,
        };
        Ok(FrameView {
            header,
            payload,
            chunks,
        })
    }

    /// The frame's header.
    pub fn header(&self) -> &FrameHeader {
        &self.header
    }

    /// Bytes of the frame in the input.
    pub fn frame_len(&self) -> usize {
        self.header.frame_len()
    }

    /// The payload, borrowed from the input. For a raw frame this is the packed bit array
    /// (spec §1), readable in place; [`BitArray`] keeps 64-bit words, so making one from
    /// it is the one copy a raw frame costs.
    pub fn payload(&self) -> &'a [u8] {
        self.payload
    }

    /// Number of independently decodable chunks (1 if the payload is not chunked).
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// The bits chunk `i` holds.
    pub fn chunk_bits(&self, i: usize) -> core::ops::Range<u64> {
        self.header.chunk_bits(i as u64)
    }

    /// The decoding models for chunks of the lengths `lens`; a counting frame's payload is
    /// counters, not bits ([`Error::UnexpectedFilterType`]: use [`decode`](fn@super::decode)).
    fn models(&self, lens: &[u64]) -> Result<crate::entropy::coding::Models> {
        let h = &self.header;
        if h.is_counting() {
            return Err(Error::UnexpectedFilterType {
                expected: "a Bloom filter",
                got: FILTER_TYPE_COUNTING,
            });
        }
        crate::entropy::coding::Models::new(h.coding, h.q0, lens).ok_or(
            Error::UnexpectedFilterType {
                expected: "a Bloom filter",
                got: FILTER_TYPE_COUNTING,
            },
        )
    }

    fn corrupt(&self, chunk: usize) -> impl Fn(&'static str) -> Error {
        let offset = self.header.header_len + self.chunks.range(chunk).map_or(0, |r| r.start);
        move |reason| Error::CorruptPayload { reason, offset }
    }

    /// Decode chunk `i` into `out`, which must have exactly `ceil(len / 64)` words for the
    /// chunk's `len` bits ([`FrameView::chunk_bits`]); the chunk's first bit lands in bit 0
    /// of `out[0]`.
    pub fn decode_chunk_into(&self, i: usize, out: &mut [u64]) -> Result<()> {
        let bits = self.chunk_bits(i);
        let models = self.models(&[bits.end - bits.start])?;
        self.decode_chunk_with(&models, i, out)
    }

    fn decode_chunk_with(
        &self,
        models: &crate::entropy::coding::Models,
        i: usize,
        out: &mut [u64],
    ) -> Result<()> {
        let range = self.chunk_range(i)?;
        self.decode_chunk_bytes(models, i, &self.payload[range], out)
    }

    /// The bytes of chunk `i` in the payload.
    fn chunk_range(&self, i: usize) -> Result<core::ops::Range<usize>> {
        self.chunks.range(i).ok_or_else(|| {
            crate::error::invalid("chunk", format!("{i} of {} chunks", self.chunks.len()))
        })
    }

    /// Where chunk `i`'s coded bytes are, as offsets from the frame's first byte: for a
    /// reader that keeps a large frame on disk and reads only the chunks it decodes, with
    /// [`FrameView::decode_chunk_from`] (the program's chunk-wise `query` does).
    pub fn chunk_byte_range(&self, i: usize) -> Result<core::ops::Range<usize>> {
        let range = self.chunk_range(i)?;
        let start = self.header.header_len;
        Ok(start + range.start..start + range.end)
    }

    /// [`FrameView::decode_chunk_into`] from the chunk's coded bytes given apart (`bytes`
    /// are the frame's bytes at [`FrameView::chunk_byte_range`]).
    pub fn decode_chunk_from(&self, i: usize, bytes: &[u8], out: &mut [u64]) -> Result<()> {
        let range = self.chunk_byte_range(i)?;
        if bytes.len() != range.len() {
            return Err(crate::error::invalid(
                "bytes",
                format!("{} bytes for a chunk of {}", bytes.len(), range.len()),
            ));
        }
        let bits = self.chunk_bits(i);
        let models = self.models(&[bits.end - bits.start])?;
        self.decode_chunk_bytes(&models, i, bytes, out)
    }

    fn decode_chunk_bytes(
        &self,
        models: &crate::entropy::coding::Models,
        i: usize,
        bytes: &[u8],
        out: &mut [u64],
    ) -> Result<()> {
        let bits = self.chunk_bits(i);
        let len = bits.end - bits.start;
        if out.len() != crate::filter::bits::words_for(len) {
            return Err(crate::error::invalid(
                "out",
                format!("{} words for a chunk of {len} bits", out.len()),
            ));
        }
        crate::entropy::coding::decode_bits(models, bytes, len, out).map_err(self.corrupt(i))
    }

    /// Whether the frame is a delta of a Bloom filter whose payload lists positions (the
    /// positional coding, chunked or not).
    pub(crate) fn is_positional_delta(&self) -> bool {
        let h = &self.header;
        h.coding == Coding::Positional && h.kind != FrameKind::Full && !h.is_counting()
    }

    /// For a delta of a Bloom filter whose payload lists positions (the positional coding,
    /// chunked or not): `f` called with each changed position, increasing, decoded from the
    /// payload as it is read (no list of them is held, and the XOR array is not built).
    /// `None` for every other frame. On an error `f` has been called for the positions
    /// before it, and a second call makes the same calls and ends in the same error.
    pub(crate) fn for_each_delta_position(&self, mut f: impl FnMut(u64)) -> Option<Result<()>> {
        if !self.is_positional_delta() {
            return None;
        }
        Some((0..self.chunks.len()).try_for_each(|i| {
            let range = self.chunks.range(i).expect("a chunk of the table");
            let bits = self.chunk_bits(i);
            crate::entropy::coding::for_each_position(
                &self.payload[range],
                bits.end - bits.start,
                |p| f(bits.start + p),
            )
            .map(|_| ())
            .map_err(self.corrupt(i))
        }))
    }

    /// Decode bits `bits.start .. bits.end`, decoding only the chunks that hold them.
    pub fn decode_bits(&self, bits: core::ops::Range<u64>) -> Result<BitArray> {
        let m = self.header.params.m();
        if bits.start > bits.end || bits.end > m {
            return Err(crate::error::invalid(
                "bits",
                format!("{bits:?} is not a range inside 0..{m}"),
            ));
        }
        if bits.is_empty() {
            return Ok(BitArray::new(0));
        }
        let shift = self.header.chunk_shift.unwrap_or(63);
        let (first, last) = (
            (bits.start >> shift) as usize,
            ((bits.end - 1) >> shift) as usize + 1,
        );
        let start = self.chunk_bits(first).start;
        let len_of = |i: usize| self.chunk_bits(i).end - self.chunk_bits(i).start;
        let models = self.models(&[len_of(first), len_of(last - 1)])?;
        let mut span = BitArray::try_new(self.chunk_bits(last - 1).end - start)?;
        let mut at = 0;
        for i in first..last {
            let words = crate::filter::bits::words_for(len_of(i));
            self.decode_chunk_with(&models, i, &mut span.words_mut()[at..at + words])?;
            at += words;
        }
        Ok(span.slice(bits.start - start, bits.end - bits.start))
    }

    /// Decode the whole bit array into `out`, which is resized to m bits (reusing its
    /// allocation); chunks are decoded on all cores with the `parallel` feature. On error
    /// `out` is all zeros.
    pub fn decode_into(&self, out: &mut BitArray) -> Result<()> {
        self.decode_into_threads(out, crate::cpu::cores())
    }

    /// [`FrameView::decode_into`] on at most `threads` threads (1 without the `parallel`
    /// feature).
    pub fn decode_into_threads(&self, out: &mut BitArray, threads: usize) -> Result<()> {
        let h = &self.header;
        let m = h.params.m();
        if h.coding == Coding::Raw && h.counter_width.is_none() {
            // One pass: the words straight from the payload, no zero fill first.
            if let Err(reason) = crate::entropy::coding::check_raw(self.payload, m) {
                out.reset(m);
                return Err(self.corrupt(0)(reason));
            }
            return out.assign_packed(self.payload, m);
        }
        out.try_reset(m)?;
        let result = match h.chunk_shift {
            None => {
                let models = self.models(&[m])?;
                // `out` was zeroed just above: the positional coding does not zero it again.
                crate::entropy::coding::decode_bits_zeroed(
                    &models,
                    self.payload,
                    m,
                    out.words_mut(),
                )
            }
            Some(shift) => crate::entropy::chunks::decode_chunked(
                (h.coding, h.q0),
                &self.chunks,
                m,
                shift,
                out.words_mut(),
                threads.max(1),
            ),
        };
        // One array, one frame per coding (spec 4.4): codings 9 to 11 carry the measured
        // fraction of zeros, a q0 that only the decoded bits can check.
        let result = result.and_then(|()| match h.q0 {
            Some(q0)
                if h.coding.q0_is_measured() && KnownP::measured(out.count_zeros(), m) != q0 =>
            {
                Err("q0 is not the array's measured fraction of zeros")
            }
            _ => Ok(()),
        });
        if let Err(reason) = result {
            out.reset(m);
            return Err(self.corrupt(0)(reason));
        }
        Ok(())
    }

    /// Decode the whole bit array.
    pub fn decode(&self) -> Result<BitArray> {
        let mut bits = BitArray::new(0);
        self.decode_into(&mut bits)?;
        Ok(bits)
    }

    /// Decode a counting frame's counters (filter type 3): one `u8` a counter, m of them,
    /// each below `2^width`; a frame of bits is [`Error::UnexpectedFilterType`] (use
    /// [`FrameView::decode`]). For a delta they are the XOR of two generations' counters.
    ///
    /// ```
    /// use bloomwire::{CountingBloomFilter, Encoder, FrameView, HashFamily, Limits, Params};
    /// let params = Params::standard(1000, 3, HashFamily::default()).unwrap();
    /// let mut f = CountingBloomFilter::new(params, 4).unwrap();
    /// f.insert(b"x");
    /// let wire = Encoder::new().encode(&f).unwrap().to_bytes();
    /// let view = FrameView::parse(&wire, &Limits::default()).unwrap();
    /// assert_eq!(view.decode_counters().unwrap(), f.counters());
    /// assert!(view.decode().is_err());
    /// ```
    pub fn decode_counters(&self) -> Result<Vec<u8>> {
        let h = &self.header;
        let Some(width) = h.counter_width else {
            return Err(Error::UnexpectedFilterType {
                expected: "a counting filter",
                got: h.filter_type(),
            });
        };
        let mut counters = crate::error::try_vec(0u8, h.params.m())?;
        crate::entropy::coding::decode_counters(
            h.coding,
            self.payload,
            &mut counters,
            width,
            h.counter_table.as_ref(),
        )
        .map_err(|reason| Error::CorruptPayload {
            reason,
            offset: h.header_len,
        })?;
        Ok(counters)
    }

    /// The payload decoded: the bit array, or a counting frame's counters.
    pub(crate) fn decode_payload(&self) -> Result<Payload> {
        match self.header.counter_width {
            None => self.decode().map(Payload::Bits),
            Some(_) => self.decode_counters().map(Payload::Counters),
        }
    }
}

/// A frame's payload decoded: what the message stage wraps with the header.
#[derive(Debug)]
pub(crate) enum Payload {
    /// A bit array: a Bloom filter's, or the XOR of two generations'.
    Bits(BitArray),
    /// One `u8` a counter: a counting filter's, or the XOR of two generations'.
    Counters(Vec<u8>),
}
