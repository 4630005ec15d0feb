//! A frame coded again from a header and what it carries: how a decoded message becomes
//! the frame it was decoded from ([`Message::to_frame`](crate::Message::to_frame)).

use crate::error::Result;
use crate::filter::bits::BitArray;
use crate::format::frame::Frame;
use crate::format::header::FrameHeader;
use crate::format::ids::FrameKind;

use super::settings::{Body, Chunking, CounterBody, PSource, Settings};

/// What a frame carries, borrowed, for [`reframe`]: a bit array (a filter's, or a delta's
/// XOR), or one `u8` a counter (a counting filter's, or a delta's XOR).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Contents<'a> {
    /// The bits of a Bloom filter, or of a delta's XOR.
    Bits(&'a BitArray),
    /// The counters of a counting filter, or of a delta's XOR.
    Counters(&'a [u8]),
}

/// The frame of `header`'s fields carrying `contents`: the same kind, parameters, n,
/// generation, coding, q0, counter table, chunk shift, metadata and restart flag, the
/// payload coded again (untagged). For a header a decoder accepted these are the bytes it
/// was decoded from (every accepted frame is canonical, spec section 2.3).
///
/// Errors for counters without a counter width, or a counter table that gives frequency 0
/// to a value a counter holds ([`Error::InvalidParameter`](crate::Error::InvalidParameter)).
pub(crate) fn reframe(header: &FrameHeader, contents: Contents<'_>) -> Result<Frame> {
    let encoder = Settings {
        coding: Some(header.coding),
        p_source: header.q0.map_or(PSource::Measured, PSource::Fixed),
        counter_table: header.counter_table.clone(),
        chunking: header.chunk_shift.map_or(Chunking::Never, Chunking::Shift),
        metadata: header.metadata.clone(),
        ..Settings::default()
    };
    let frame = match contents {
        Contents::Bits(bits) => encoder.frame(
            &Body {
                kind: header.kind,
                params: &header.params,
                n: header.n,
                generation: header.generation,
                bits,
                theory_p: None,
            },
            header.coding,
        ),
        Contents::Counters(counters) => encoder.counter_frame(
            &CounterBody {
                kind: header.kind,
                params: &header.params,
                width: header
                    .counter_width
                    .ok_or_else(|| crate::error::invalid("counter width", "missing"))?,
                n: header.n,
                generation: header.generation,
                counters,
                theory_mean: None,
            },
            header.coding,
        )?,
    };
    match header.kind {
        FrameKind::Full => frame.with_restart(header.restart),
        FrameKind::Delta { .. } => Ok(frame),
    }
}
