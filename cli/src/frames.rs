//! Reading frames: from a file or standard input (`-`), within the limits, with or without
//! a key, into memory allocated fallibly.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use bloomwire::format::{max_header_len, CHECKSUM_LEN, TAG_LEN};
use bloomwire::{
    AnyFilter, BitArray, BloomFilter, Decoded, Delta, Error, FrameHeader, FrameKey, FrameKind,
    FrameView, Limits, Message, Verifier,
};

use crate::output::is_std;
use crate::{limits, Context, Failure, Result};

/// The largest frame the limits allow: a header with a metadata field of up to
/// `max_metadata` bytes, a payload of `max_payload`, the checksum and a tag.
pub fn max_frame_len(limits: &Limits) -> u64 {
    (max_header_len(limits) as u64)
        .saturating_add(limits.max_payload)
        .saturating_add((CHECKSUM_LEN + TAG_LEN) as u64)
}

/// The name to report an input by: `standard input` for `-`.
pub fn input_name(path: &Path) -> String {
    if is_std(path) {
        "standard input".into()
    } else {
        path.display().to_string()
    }
}

/// What frames are checked against: the limits, and a key when one was given.
pub enum FrameReader {
    /// Limits alone: a tag is skipped, and the header says the frame was not verified.
    Plain(Limits),
    /// Limits and a key: frames must be tagged with it.
    Keyed(Verifier),
}

impl FrameReader {
    /// Frames within the program's limits, tagged with `key` when there is one.
    pub fn new(key: Option<FrameKey>) -> FrameReader {
        match key {
            None => FrameReader::Plain(limits()),
            Some(key) => FrameReader::Keyed(Verifier::new(key, limits())),
        }
    }

    /// Whether frames must be tagged.
    pub fn has_key(&self) -> bool {
        matches!(self, FrameReader::Keyed(_))
    }

    /// The checked frame at the start of `bytes` (spec 2.3: header, length, checksum, tag,
    /// chunk table).
    pub fn view<'a>(&self, bytes: &'a [u8]) -> bloomwire::Result<FrameView<'a>> {
        match self {
            FrameReader::Plain(limits) => FrameView::parse(bytes, limits),
            FrameReader::Keyed(verifier) => FrameView::parse(bytes, verifier),
        }
    }

    /// The frame at the start of `bytes`, decoded, and its length. A Bloom filter's bits
    /// (or a delta's) are decoded into an array allocated fallibly, so that a frame that
    /// declares more than the machine can hold is [`Error::AllocationFailed`], not an
    /// abort; counting frames are decoded by the library's `decode_prefix`.
    pub fn decode_prefix(&self, bytes: &[u8]) -> bloomwire::Result<(Message, usize)> {
        let view = self.view(bytes)?;
        if view.header().is_counting() {
            return match self {
                FrameReader::Plain(limits) => bloomwire::decode_prefix(bytes, limits),
                FrameReader::Keyed(verifier) => bloomwire::decode_prefix(bytes, verifier),
            };
        }
        let header = view.header().clone();
        let mut bits = BitArray::try_new(header.params.m())?;
        view.decode_into(&mut bits)?;
        let message = match header.kind {
            FrameKind::Full => Message::Full(Decoded {
                filter: BloomFilter::from_parts(header.params.clone(), bits, header.n)?,
                header,
            }),
            FrameKind::Delta { .. } => Message::Delta(Delta { header, xor: bits }),
        };
        Ok((message, view.frame_len()))
    }

    /// The one frame `bytes` hold, decoded: as the library's `decode` (in the spec's order
    /// of checks, bytes after the frame reported once it has decoded), with the allocation
    /// of [`FrameReader::decode_prefix`].
    pub fn decode(&self, bytes: &[u8]) -> bloomwire::Result<Message> {
        let (message, len) = self.decode_prefix(bytes)?;
        if len != bytes.len() {
            return Err(Error::TrailingBytes {
                count: bytes.len() - len,
                offset: len,
            });
        }
        Ok(message)
    }

    /// Decode the one frame a file (or standard input, `-`) holds, full or delta.
    pub fn message(&self, path: &Path) -> Result<Message> {
        let bytes = read_frame(path)?;
        self.decode(&bytes).map_err(|e| frame_error(path, e))
    }

    /// Decode the one full frame a file holds, with its header.
    pub fn full(&self, path: &Path) -> Result<(AnyFilter, FrameHeader)> {
        match self.message(path)? {
            Message::Full(d) => Ok((AnyFilter::Bloom(d.filter), d.header)),
            Message::Counting(d) => Ok((AnyFilter::Counting(d.filter), d.header)),
            _ => Err(frame_error(path, Error::UnexpectedDelta)),
        }
    }
}

/// The bytes of a frame file, or of standard input for `-`, refused without reading them
/// whole when they are longer than the largest frame the limits allow.
pub fn read_frame(path: &Path) -> Result<Vec<u8>> {
    let max = max_frame_len(&limits());
    let name = input_name(path);
    let mut bytes = Vec::new();
    let read = if is_std(path) {
        io::stdin()
            .lock()
            .take(max.saturating_add(1))
            .read_to_end(&mut bytes)
    } else {
        File::open(path).and_then(|f| f.take(max.saturating_add(1)).read_to_end(&mut bytes))
    };
    read.context(&name)?;
    if bytes.len() as u64 > max {
        return Err(too_long(&name));
    }
    Ok(bytes)
}

/// The failure for an input longer than any frame the limits allow.
pub fn too_long(name: &str) -> Failure {
    let l = limits();
    Failure(format!(
        "{name}: longer than the largest frame the limits allow ({} bytes: a payload of at \
         most {} bytes, metadata of at most {}, a header, checksum and tag); raise \
         --max-payload (or --max-metadata) to read it",
        max_frame_len(&l),
        l.max_payload,
        l.max_metadata
    ))
}

/// The one line for a frame that does not decode: the library's error, and what to do
/// about it where the program can say.
pub fn frame_error(path: &Path, error: Error) -> Failure {
    let hint = match &error {
        Error::Incomplete { .. } => " (the input is truncated)".to_string(),
        Error::LimitExceeded { field, .. } => match *field {
            "m" => "; raise --max-m to read it".into(),
            "k" => "; raise --max-k to read it".into(),
            "payload length" => "; raise --max-payload to read it".into(),
            "metadata length" => "; raise --max-metadata to read it".into(),
            "filter bytes" => "; raise --max-filter-bytes to read it".into(),
            _ => String::new(),
        },
        Error::AllocationFailed { .. } => {
            "; the frame declares a filter larger than this machine can hold (lower \
             --max-m to refuse such frames unread)"
                .into()
        }
        Error::MissingTag { .. } => "; the frame is not authenticated (--key-file)".into(),
        Error::BadTag { .. } => {
            "; the frame was altered or made with another key (--key-file)".into()
        }
        _ => String::new(),
    };
    Failure(format!("{}: {error}{hint}", input_name(path)))
}
