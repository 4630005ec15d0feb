//! Frames: a filter on the wire.
//!
//! A frame is a header that says everything a receiver needs to query the filter (layout,
//! hash family and seed, m, k, n, the payload coding and its parameters), the coded bit
//! array, and a CRC-32C of both; a frame of filter type 3 carries a counting filter's
//! counters instead (an [`Encoder`] of a counting filter; [`decode()`] into a
//! [`Decoded<CountingBloomFilter>`](Decoded)). `spec/FORMAT.md` is
//! the normative description; this module implements it.
//!
//! ```
//! use bloomwire::{decode, BloomFilter, Decoded, Encoder, HashFamily, Limits, Params};
//! let mut f = BloomFilter::new(Params::standard(140_000, 2, HashFamily::default()).unwrap());
//! for i in 0..10_000u32 {
//!     f.insert(i.to_le_bytes());
//! }
//! let frame = Encoder::new().encode(&f).unwrap();
//! let wire = frame.to_bytes();
//! assert_eq!(wire.len(), frame.encoded_len());
//! assert!(wire.len() < 10_000); // 17 500 bytes raw; m H(p) / 8 = 9904
//! let back: Decoded = decode(&wire, &Limits::default()).unwrap();
//! assert_eq!(back.filter, f);
//! assert!(back.filter.contains(7u32.to_le_bytes()));
//! ```

mod auth;
mod checked;
mod checked_frame;
mod decode;
mod encoder;
mod frame;
mod header;
mod ids;
mod kind;
mod limits;
mod message;
mod scratch;
mod view;

pub use crate::entropy::chunks::{
    chunk_count, default_chunk_shift, CHUNK_FROM_BITS, MAX_CHUNK_SHIFT, MIN_CHUNK_SHIFT,
};
pub use crate::entropy::codec::{WORK_SHIFT, WORK_SLACK};
pub use crate::wire::{put_varint, varint_len, MAX_VARINT_LEN};
pub(crate) use auth::FLAGS_OFFSET;
pub use auth::{Checks, FrameKey, Tag, Verifier, FLAG_TAGGED, TAG_LEN};
pub(crate) use checked::{whole, Checked};
pub use checked_frame::CheckedFrame;
pub(crate) use decode::finish_view;
pub use decode::{decode, decode_buf, decode_prefix, Decodable};
pub use encoder::{ChunkedFrame, Chunking, Encoder, PSource};
pub(crate) use encoder::{DeltaStep, Settings};
pub(crate) use frame::into_buffer;
pub use frame::Frame;
pub use header::{
    frame_len, k_field_len, max_header_len, metadata_len, table_len, FrameHeader, MAX_HEADER_LEN,
};
pub use ids::{
    BitCoding, Coding, CounterCoding, FrameKind, CHECKSUM_LEN, FILTER_TYPE_COUNTING, FLAG_CHUNKED,
    FLAG_METADATA, FLAG_RESTART, KIND_DELTA, KIND_FULL, MAGIC, VERSION,
};
pub use kind::Filter;
pub use limits::Limits;
pub use message::{Decoded, Delta, Message};
pub use scratch::Scratch;
pub use view::FrameView;
