//! The default encoder's choice of a coding for a bit array: the policy. Every coding's
//! frame size is predicted from counts (each coding's size model, in the table of codings),
//! and the array is coded once, with the fastest coding whose predicted frame is within the
//! margin of the smallest prediction, in the order of decoding speed kept here.

use crate::entropy::model::Counts;
use crate::entropy::{chunks, escape};
use crate::error::{Error, Result};

use super::encoder::{counters_not_bits, Body, Chunking, Settings};
use super::frame::Frame;
use super::header::FrameHeader;
use super::ids::Coding;

/// The codings of bits in order of decoding speed where at most 1 bit in 40 is one, and
/// [`DENSE_ORDER`] where more are. Positional's work grows with the ones, and at 1 in 40
/// it decodes about as fast as coding 8 (measured: 216 MB/s at 5% ones against coding 8's
/// 505, 1 140 MB/s at 1%). Coding 9 decodes about as fast as coding 6 and encodes at half
/// its speed: it comes after it, for the small frames whose 32 bytes of coding-6 states
/// are more than the margin (measured at m = 10^6, p0 = 0.9: 281 against 298 MB/s
/// decoding, 147 against 305 encoding). Known-p, the binary coder, is about as small as
/// adaptive and twice as fast (46 against 25 MB/s decoding in the README's table): it
/// comes before it. Coding 10 decodes large dense arrays 1.5 times as fast as coding 8 (two
/// chains in flight) for about 100 bytes more: it comes first where those bytes are within
/// the margin. Coding 11 decodes a byte a step where coding 9 decodes a nibble (the paper's
/// frame in 27.1 µs against 40.6, `cargo bench -p bloomwire-benches --bench codec --
/// 'm=140000/paper/decode'`) for a few bytes more and no 32 bytes of states: it comes
/// after coding 8, whose states are over the margin wherever coding 11 is within it. Its
/// tables cost more than coding 9's, though: on an array too small to repay them
/// (`escape::repays_its_tables`: below about 20 000 bits at the paper's density) it comes
/// after coding 9 instead.
const SPARSE_ORDER: [Coding; 8] = [
    Coding::Positional,
    Coding::Wide,
    Coding::Escape,
    Coding::KnownPInterleaved,
    Coding::Small,
    Coding::KnownPSymbols,
    Coding::KnownP,
    Coding::Adaptive,
];

/// The codings of bits in order of decoding speed where more than 1 bit in 40 is one.
const DENSE_ORDER: [Coding; 8] = [
    Coding::Wide,
    Coding::Escape,
    Coding::KnownPInterleaved,
    Coding::Small,
    Coding::KnownPSymbols,
    Coding::Positional,
    Coding::KnownP,
    Coding::Adaptive,
];

impl Settings {
    /// The requested or smallest coding, raw when that is not smaller, budget checked.
    pub(super) fn choose(&self, body: &Body<'_>) -> Result<Frame> {
        if let Some(c) = self.coding.filter(|c| !c.codes_bits()) {
            return Err(counters_not_bits(c));
        }
        // The raw frame's length without building it (a copy of the whole filter).
        let raw_len = FrameHeader::new(
            body.kind,
            body.params.clone(),
            body.n,
            body.generation,
            (Coding::Raw, None, None),
            body.bits.byte_len(),
        )
        .with_metadata(self.metadata.as_deref())
        .frame_len()
            + self.tag_len();
        let best = match self.coding {
            Some(Coding::Raw) => None,
            Some(c) => Some(self.frame(body, c)),
            None if self.try_all => {
                // Every coding, the smallest frame; of equal ones the earliest (fastest).
                SPARSE_ORDER
                    .into_iter()
                    .map(|c| self.frame(body, c))
                    .min_by_key(Frame::encoded_len)
            }
            None => self.predicted_choice(body, raw_len),
        };
        let compressed_len = best.as_ref().map(Frame::encoded_len);
        if let Some(budget) = self.budget {
            let len = compressed_len.map_or(raw_len, |c| c.min(raw_len));
            if len > budget {
                return Err(Error::OverBudget {
                    budget,
                    compressed: compressed_len.unwrap_or(raw_len),
                    raw: raw_len,
                });
            }
        }
        Ok(match best {
            Some(f) if f.encoded_len() < raw_len => f,
            _ => self.frame(body, Coding::Raw),
        })
    }

    /// The frame of the fastest coding whose predicted frame is within 0.08% + 6 bytes of
    /// the smallest prediction (raw: `None`); coded once.
    fn predicted_choice(&self, body: &Body<'_>, raw_len: usize) -> Option<Frame> {
        let bits = body.bits;
        // The one pass over the array before coding: every prediction, q0 and the chunk
        // shift come from this count.
        let (m, ones) = (bits.len(), bits.count_ones());
        let zeros = Some(m - ones);
        let mut order = if ones <= m / 40 {
            SPARSE_ORDER
        } else {
            DENSE_ORDER
        };
        let measured_q0 = self.q0(body, zeros);
        // Coding 11's tables cost more to build than coding 9's: on an array too small to
        // repay them it decodes the slower of the two, and comes after coding 9.
        if !escape::repays_its_tables(m, measured_q0) {
            let at = |c| order.iter().position(|&o| o == c).expect("in both orders");
            let (escape, small) = (at(Coding::Escape), at(Coding::Small));
            if escape < small {
                order[escape..=small].rotate_left(1);
            }
        }
        // A frame the caller wants in chunks (or large enough for them by default) gets a
        // coding that chunks (coding 9 does not).
        let chunks_wanted = match self.chunking {
            Chunking::Never => false,
            Chunking::Shift(_) => true,
            Chunking::Auto => m >= chunks::CHUNK_FROM_BITS,
        };
        // One header, recoded for each prediction.
        let mut header = FrameHeader::new(
            body.kind,
            body.params.clone(),
            body.n,
            body.generation,
            (Coding::Raw, None, None),
            0,
        );
        // The counts every prediction starts from, the figures they share computed once
        // (the codings without a q0 ignore it).
        let counts = Counts::new(m, ones, measured_q0);
        let predicted: Vec<(Coding, usize)> = order
            .into_iter()
            .filter(|&c| c.is_chunkable() || !chunks_wanted)
            .map(|c| {
                let q0 = c.has_q0().then_some(measured_q0);
                let shift = self.chunk_shift(bits, c, zeros);
                let len = chunks::predicted_payload_len(c, &counts, bits, shift);
                header.recode((c, q0, shift), len as usize);
                (c, header.frame_len())
            })
            .collect();
        // The frames without the metadata and the tag, the same bytes in every coding: the
        // choice does not depend on them.
        let extra = self
            .metadata
            .as_deref()
            .filter(|m| !m.is_empty())
            .map_or(0, crate::format::header::metadata_len)
            + self.tag_len();
        let (smallest_coding, smallest) = predicted.iter().copied().min_by_key(|&(_, len)| len)?;
        let margin = smallest / 1250 + 6;
        if raw_len <= smallest + extra + margin {
            return None;
        }
        let fits = |len: usize| self.budget.is_none_or(|b| len <= b);
        // The codings within the margin, fastest first; the smallest if none is.
        let mut within = predicted
            .iter()
            .filter(|&&(_, len)| len <= smallest + margin && fits(len + extra))
            .map(|&(c, _)| c);
        let coding = within.next().unwrap_or(smallest_coding);
        let second = within.next().unwrap_or(smallest_coding);
        // The chosen coding, then the others from the smallest prediction up: a payload
        // that breaks the work bound (spec 2.2) comes back in another coding (an all-ones
        // array codes to a few bytes that may not carry its m bits), and the next one is
        // tried. Almost always the first is kept, and the array is coded once.
        let mut rest: Vec<(Coding, usize)> = predicted
            .into_iter()
            .filter(|&(c, _)| c != coding)
            .collect();
        rest.sort_by_key(|&(_, len)| len);
        let mut fallback = None;
        for c in std::iter::once(coding).chain(rest.iter().map(|&(c, _)| c)) {
            let mut frame = self.frame_counted(body, c, zeros);
            if frame.coding() != c {
                fallback.get_or_insert(frame);
                continue;
            }
            // Predictions err by a few bytes either way (the test `fixed_costs_are_measured`):
            // a frame that came out further over the smallest prediction than the choice
            // promises (0.1% + 8 bytes of the smallest frame, less 2 bytes for that
            // prediction's own error) is coded once more in the next coding within the
            // margin, then if need be in the coding predicted smallest, and the smallest
            // frame kept. It takes a near tie and an error: 32 of 902 choices over the
            // property test's filters, all positional frames 1 or 2 bytes over.
            let promise = smallest + extra + smallest / 1000 + 6;
            if c == coding {
                let others = [second, smallest_coding];
                for (i, &other) in others.iter().enumerate() {
                    if frame.encoded_len() <= promise || other == c || others[..i].contains(&other)
                    {
                        continue;
                    }
                    let other = self.frame_counted(body, other, zeros);
                    if other.encoded_len() < frame.encoded_len() {
                        frame = other;
                    }
                }
            }
            return Some(frame);
        }
        fallback
    }
}

#[cfg(test)]
mod tests {
    use crate::filter::bits::BitArray;
    use crate::filter::hashing::{fmix64, HashFamily};
    use crate::filter::{BloomFilter, Params};
    use crate::format::{decode, Decoded, Encoder, Limits};

    #[test]
    fn the_default_encoder_codes_a_filter_once() {
        // From empty to full, the paper's filter among them: one payload coded per frame
        // (the prediction chooses, the chosen coding codes), and the prediction is the
        // coding the frame carries.
        for (m, p1) in [
            (140_000u64, 0.133),
            (8_000_000, 0.5),
            (8_000_000, 0.1),
            (1_000_000, 0.01),
            (1_000_000, 0.001),
            (100_000, 0.0),
            (100_000, 1.0),
        ] {
            let threshold = (p1 * 2f64.powi(64)).min(u64::MAX as f64) as u64;
            let mut bits = BitArray::new(m);
            for i in 0..m {
                if fmix64(m ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15)) < threshold || p1 >= 1.0 {
                    bits.set(i);
                }
            }
            let params = Params::standard(m, 1, HashFamily::default()).unwrap();
            let f = BloomFilter::from_parts(params, bits, 0).unwrap();
            let before = super::super::encoder::payloads_coded();
            let frame = Encoder::new().encode(&f).unwrap();
            assert_eq!(
                super::super::encoder::payloads_coded() - before,
                1,
                "m {m} p1 {p1}: {}",
                frame.coding()
            );
            let back = decode::<Decoded>(&frame.to_bytes(), &Limits::default()).unwrap();
            assert_eq!(back.filter, f);
        }
    }
}
