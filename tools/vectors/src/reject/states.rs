//! Reject vectors every coding whose payload opens with its coder's final states (codings 6,
//! 9, 10 and 11, spec sections 4.9 and 4.13 to 4.15) gets alike: a payload shorter than the
//! states, a stream that ends early, and for the nibble codings a q0 other than the measured
//! one, a bit past m, padding set and the chunked flag. Each coding's own checks are in its
//! file.

use bloomwire::{BitCoding, Coding};
use serde_json::Value;

use super::{ends_early, field, framed, padding_set, plain, wide, Kit};
use crate::raw_frame::{q0_neighbour, RawFrame, Truncated};

/// How a coding's stream after its states is read, which decides the checks it gets.
#[derive(Clone, Copy, PartialEq)]
enum Stream {
    /// 32-bit words of symbols (coding 6).
    Words,
    /// 16-bit words of nibbles, a coding that chunks (coding 10).
    NibbleWords,
    /// Bytes of nibbles ending inside the last byte, a coding that never chunks (9 and 11).
    NibbleBytes,
}

impl Stream {
    /// The unit the payload is read in, in bytes.
    fn unit(self) -> usize {
        match self {
            Stream::Words => 4,
            Stream::NibbleWords => 2,
            Stream::NibbleBytes => 1,
        }
    }
}

/// The codings, the prefix of their vectors' names, the small filter's states in bytes and
/// how the rest of the payload is read.
const CODINGS: [(Coding, &str, usize, Stream); 4] = [
    (Coding::KnownPInterleaved, "interleaved", 32, Stream::Words),
    (Coding::Wide, "wide", 256, Stream::NibbleWords),
    (Coding::Small, "small", 6, Stream::NibbleBytes),
    (Coding::Escape, "escape", 8, Stream::NibbleBytes),
];

/// A filter with coded words after its states in `coding`, to cut or to edit.
fn longer(coding: Coding) -> RawFrame {
    if coding == Coding::Wide {
        return wide::wider();
    }
    let r = framed(1000, 3, 100, coding);
    assert!(r.payload.len() > 36, "words after the states");
    r
}

/// The shared cases of every such coding, named `{prefix}_{check}` (`chunked_{prefix}`).
pub(super) fn cases(kit: &Kit) -> Vec<(String, Truncated, Value)> {
    let corrupt = || plain("CorruptPayload");
    let mut cases = Vec::new();
    for (coding, prefix, states, stream) in CODINGS {
        let unit = stream.unit();
        cases.push((
            format!("{prefix}_shorter_than_states"),
            kit.coded_with(coding, &|r| r.payload.truncate(states - unit)),
            field("payload length"),
        ));
        cases.push((
            format!("{prefix}_ends_early"),
            ends_early(longer(coding), unit),
            corrupt(),
        ));
        if stream == Stream::NibbleBytes {
            cases.push((
                format!("{prefix}_padding_set"),
                padding_set(longer(coding)),
                corrupt(),
            ));
            cases.push((
                format!("chunked_{prefix}"),
                kit.flagged_chunked(coding),
                field("flags"),
            ));
        }
        if stream != Stream::Words {
            // Codings 9 to 11 carry the measured fraction of zeros as q0 (4.4): a neighbour
            // of it whose model codes the array to the very same payload (their tables
            // quantize q0 coarsely) is refused.
            cases.push((
                format!("q0_not_measured_{prefix}"),
                q0_neighbour(&kit.small, coding),
                corrupt(),
            ));
            let nibbles = BitCoding::try_from(coding).expect("a bit coding");
            cases.push((
                format!("{prefix}_bit_past_m"),
                kit.bit_past_m(nibbles),
                corrupt(),
            ));
        }
    }
    cases
}
