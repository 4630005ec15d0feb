//! `bloomwire query`: keys against a frame, decoding only the chunks the keys need.

use std::path::{Path, PathBuf};

use std::cmp::Ordering;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use bloomwire::format::{max_header_len, CHECKSUM_LEN, TAG_LEN};
use bloomwire::{AnyFilter, Error, FrameHeader, FrameKind, FrameView, Tag};

use crate::frames::{frame_error, input_name, max_frame_len, read_frame, too_long, FrameReader};
use crate::keys::{self, KeySource};
use crate::options::KeyArg;
use crate::output::{is_std, note, write_stdout};
use crate::{limits, parse_hex, Context, Failure, Result};

/// Ask a frame whether it may contain keys: one line `KEY<TAB>maybe|no` per key.
///
/// The keys are the arguments after the frame, or with --keys FILE one per line of FILE
/// (`-` for standard input), read as `build` reads them (--binary-keys for length-prefixed
/// records; a key of at most 1 MiB, a longer line or record an error naming it). Prints one
/// line `KEY<TAB>maybe` or `KEY<TAB>no` per key, in the order given
/// ("maybe": a Bloom filter has false positives, "no" is certain); with --count only the
/// totals.
///
/// A chunked frame (`build` chunks filters of 2^26 bits or more) is not decoded whole: the
/// keys' bit indexes are grouped by chunk, and each chunk that holds one is decoded once,
/// one chunk at a time, read from the file after its checksum was verified in a streaming
/// pass, so memory is one chunk and the keys of a batch of 2^20, not the frame file. From
/// standard input (FRAME `-`) or with --key-file (whose tag covers the whole frame) the
/// frame is held in memory, and its chunks are still decoded only as the keys need them.
/// An unchunked frame (smaller filters, raw frames) and a counting frame are decoded
/// whole. Only the chunks decoded are checked beyond the frame's header, chunk table,
/// checksum and tag.
///
/// A frame of another library's bits (opaque hash family, `wrap`) cannot be queried: its
/// bit positions are that library's.
///
/// Exit status, as grep's: 0 when every key may be present ("maybe"), 1 when some key is
/// certainly absent ("no"), 2 when the frame or the keys cannot be read (nothing is
/// printed for the keys then) and for usage errors.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The frame file; `-` for standard input.
    frame: PathBuf,
    /// The keys to look up.
    #[arg(required_unless_present = "keys_file", conflicts_with = "keys_file")]
    keys: Vec<String>,
    /// Read the keys from FILE, one per line (`-` for standard input).
    #[arg(long = "keys", value_name = "FILE")]
    keys_file: Option<PathBuf>,
    #[command(flatten)]
    format: keys::Format,
    /// The keys are given in hexadecimal (the arguments, or each line of the keys file);
    /// they are printed as given.
    #[arg(long)]
    hex: bool,
    /// Print only the totals, `maybe<TAB>COUNT` and `no<TAB>COUNT`.
    #[arg(long)]
    count: bool,
    /// Say on stderr how much of the frame was decoded.
    #[arg(short, long)]
    verbose: bool,
    #[command(flatten)]
    key: KeyArg,
}

/// Keys answered at once: their bit indexes are sorted by chunk together.
const BATCH: usize = 1 << 20;

/// Bytes of keys answered at once, at most (a key at most past it): a batch of long keys
/// is answered before it holds more memory than this.
const BATCH_BYTES: usize = 16 << 20;

/// How the keys are answered.
enum Lookup {
    /// The whole filter, decoded.
    Whole(AnyFilter),
    /// A chunked frame whose checksum (and tag) was verified, its chunks decoded one at a
    /// time as the keys need them.
    Chunked {
        /// Where the chunks are read from: the file, or `None` when `frame` holds the
        /// whole frame.
        file: Option<File>,
        /// The frame: read whole, or (from a file) the frame's length, zeroed, holding only
        /// the header and the chunk table: the system commits no memory for the pages
        /// never written.
        frame: Vec<u8>,
        shift: u8,
        /// Chunk decodes so far (a chunk is decoded once per batch that needs it).
        decoded: u64,
        /// Reused for every chunk: its coded bytes and its decoded words.
        bytes: Vec<u8>,
        words: Vec<u64>,
    },
}

/// Answer the keys; whether every key may be present.
pub fn run(args: &Args) -> Result<bool> {
    let path = &args.frame;
    if is_std(path) && args.keys_file.as_deref().is_some_and(is_std) {
        crate::usage_error("the frame and the keys cannot both come from standard input (-)");
    }
    let reader = FrameReader::new(args.key.load()?);
    let mut lookup = open(path, &reader)?;

    let mut totals = (0u64, 0u64);
    let mut out = Vec::new();
    let mut answer = |batch: &[Vec<u8>], shown: &[Vec<u8>], lookup: &mut Lookup| -> Result<()> {
        let answers = lookup.answer(path, batch)?;
        for (key, yes) in shown.iter().zip(answers) {
            if yes {
                totals.0 += 1;
            } else {
                totals.1 += 1;
            }
            if !args.count {
                out.extend_from_slice(key);
                out.extend_from_slice(if yes { b"\tmaybe\n" } else { b"\tno\n" });
            }
        }
        // Answers are printed once every key has been read: a keys file that fails halfway
        // prints nothing.
        Ok(())
    };

    match &args.keys_file {
        None => {
            let shown: Vec<Vec<u8>> = args.keys.iter().map(|k| k.as_bytes().to_vec()).collect();
            let keys = if args.hex {
                args.keys
                    .iter()
                    .map(|k| parse_hex(k).ok_or_else(|| Failure(format!("{k:?} is not hex"))))
                    .collect::<Result<Vec<_>>>()?
            } else {
                shown.clone()
            };
            for (batch, shown) in keys.chunks(BATCH).zip(shown.chunks(BATCH)) {
                answer(batch, shown, &mut lookup)?;
            }
        }
        Some(file) => {
            let mut source = KeySource::open(file)?;
            let name = source.name();
            let mut batch = Vec::new();
            let mut shown = Vec::new();
            let mut failed = None;
            let mut line = 0u64;
            let mut held = 0usize;
            let stats = source.for_each_key(args.format, |key| {
                line += 1;
                if failed.is_some() {
                    return;
                }
                if args.hex {
                    match std::str::from_utf8(key).ok().and_then(parse_hex) {
                        Some(bytes) => batch.push(bytes),
                        None => {
                            failed = Some(Failure(format!("{name}: key {line} is not hex")));
                            return;
                        }
                    }
                    shown.push(key.to_vec());
                } else {
                    batch.push(key.to_vec());
                }
                held += key.len();
                if batch.len() == BATCH || held >= BATCH_BYTES {
                    held = 0;
                    let shown_now = if args.hex { &shown } else { &batch };
                    if let Err(e) = answer(&batch, shown_now, &mut lookup) {
                        failed = Some(e);
                    }
                    batch.clear();
                    shown.clear();
                }
            })?;
            if let Some(failure) = failed {
                return Err(failure);
            }
            let shown_now = if args.hex { &shown } else { &batch };
            answer(&batch, shown_now, &mut lookup)?;
            if let Some(warning) = stats.warning(&source.name(), args.format) {
                note(warning);
            }
        }
    }
    if args.count {
        out = format!("maybe\t{}\nno\t{}\n", totals.0, totals.1).into_bytes();
    }
    if args.verbose {
        eprintln!("{}: {}", input_name(path), lookup.note());
    }
    write_stdout(&out)?;
    Ok(totals.1 == 0)
}

/// The way to answer keys from this frame: a chunked Bloom filter frame chunk by chunk
/// (from the file, or from memory), any other frame decoded whole.
fn open(path: &Path, reader: &FrameReader) -> Result<Lookup> {
    if is_std(path) || reader.has_key() {
        return open_in_memory(path, reader);
    }
    let limits = limits();
    let mut file = File::open(path).context(path.display())?;
    let len = file.metadata().context(path.display())?.len();
    if len > max_frame_len(&limits) {
        return Err(too_long(&input_name(path)));
    }
    let mut prefix = vec![0; (len as usize).min(max_header_len(&limits))];
    file.read_exact(&mut prefix).context(path.display())?;
    let header = FrameHeader::parse(&prefix, &limits).map_err(|e| frame_error(path, e))?;
    let shift = match header.chunk_shift {
        Some(shift) if !header.is_counting() => shift,
        _ => return whole(path, reader.full(path)?.0),
    };
    let frame_len = header.frame_len();
    if (len as usize) < frame_len {
        let needed = frame_len - len as usize;
        return Err(frame_error(path, Error::Incomplete { needed }));
    }
    verify_checksum(path, &mut file, &header)?;
    // The header and the chunk table (a varint of at most 10 bytes a chunk) in a buffer of
    // the frame's length whose other pages stay uncommitted.
    let chunks = header.params.m().div_ceil(1 << shift);
    let table = (chunks.saturating_mul(10)).min(header.payload_len as u64) as usize;
    let mut frame = vec![0; frame_len];
    file.seek(SeekFrom::Start(0)).context(path.display())?;
    file.read_exact(&mut frame[..header.header_len + table])
        .context(path.display())?;
    FrameView::parse_verified_elsewhere(&frame, &limits).map_err(|e| frame_error(path, e))?;
    chunked(path, &header, len as usize)?;
    Ok(Lookup::Chunked {
        file: Some(file),
        frame,
        shift,
        decoded: 0,
        bytes: Vec::new(),
        words: Vec::new(),
    })
}

/// The frame read whole into memory, checked by the library (its tag too, with a key).
fn open_in_memory(path: &Path, reader: &FrameReader) -> Result<Lookup> {
    let bytes = read_frame(path)?;
    let view = reader.view(&bytes).map_err(|e| frame_error(path, e))?;
    let header = view.header().clone();
    let shift = match header.chunk_shift {
        Some(shift) if !header.is_counting() => shift,
        _ => {
            let filter = match reader.decode(&bytes).map_err(|e| frame_error(path, e))? {
                bloomwire::Message::Full(d) => AnyFilter::Bloom(d.filter),
                bloomwire::Message::Counting(d) => AnyFilter::Counting(d.filter),
                _ => return Err(frame_error(path, Error::UnexpectedDelta)),
            };
            return whole(path, filter);
        }
    };
    chunked(path, &header, bytes.len())?;
    Ok(Lookup::Chunked {
        file: None,
        frame: bytes,
        shift,
        decoded: 0,
        bytes: Vec::new(),
        words: Vec::new(),
    })
}

/// A filter decoded whole, unless its bits are another library's.
fn whole(path: &Path, filter: AnyFilter) -> Result<Lookup> {
    if filter.params().family().base.is_opaque() {
        return Err(frame_error(path, Error::OpaqueHashFamily));
    }
    Ok(Lookup::Whole(filter))
}

/// What refuses a chunked frame of `len` input bytes whose header, checksum, tag and chunk
/// table passed: a delta, another library's bits, bytes after the frame.
fn chunked(path: &Path, header: &FrameHeader, len: usize) -> Result<()> {
    if header.kind != FrameKind::Full {
        return Err(frame_error(path, Error::UnexpectedDelta));
    }
    if header.params.family().base.is_opaque() {
        // Another library's bits (base hash 0): no answer bloomwire could give is honest.
        return Err(frame_error(path, Error::OpaqueHashFamily));
    }
    let frame_len = header.frame_len();
    match len.cmp(&frame_len) {
        Ordering::Greater => {
            let count = len - frame_len;
            let offset = frame_len;
            Err(frame_error(path, Error::TrailingBytes { count, offset }))
        }
        _ => Ok(()),
    }
}

/// The frame's CRC-32C, computed while reading the file in blocks, against the one it
/// stores (a tag, if any, is skipped: without a key there is nothing to check it with;
/// with one, the frame is read whole and the library checks both).
fn verify_checksum(path: &Path, file: &mut File, header: &FrameHeader) -> Result<()> {
    let tag = if header.tag == Tag::Absent {
        0
    } else {
        TAG_LEN
    };
    let body = header.frame_len() - tag - CHECKSUM_LEN;
    file.seek(SeekFrom::Start(0)).context(path.display())?;
    let mut block = vec![0; 1 << 20];
    let (mut computed, mut left) = (0, body);
    while left > 0 {
        let take = left.min(block.len());
        file.read_exact(&mut block[..take])
            .context(path.display())?;
        computed = crc32c::crc32c_append(computed, &block[..take]);
        left -= take;
    }
    let mut stored = [0; CHECKSUM_LEN];
    file.read_exact(&mut stored).context(path.display())?;
    let stored = u32::from_le_bytes(stored);
    if stored != computed {
        let offset = body;
        return Err(frame_error(
            path,
            Error::ChecksumMismatch {
                stored,
                computed,
                offset,
            },
        ));
    }
    Ok(())
}

impl Lookup {
    /// Whether each key may be in the filter.
    fn answer(&mut self, path: &Path, keys: &[Vec<u8>]) -> Result<Vec<bool>> {
        let (file, frame, shift, decoded, bytes, words) = match self {
            Lookup::Whole(filter) => return Ok(keys.iter().map(|k| filter.contains(k)).collect()),
            Lookup::Chunked {
                file,
                frame,
                shift,
                decoded,
                bytes,
                words,
            } => (file, &*frame, *shift, decoded, bytes, words),
        };
        let view = FrameView::parse_verified_elsewhere(frame, &limits())
            .map_err(|e| frame_error(path, e))?;
        let params = &view.header().params;
        // (bit index, key): sorted, the indexes of one chunk are together.
        let mut wanted: Vec<(u64, u32)> = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            wanted.extend(params.indexes(key).into_iter().map(|bit| (bit, i as u32)));
        }
        wanted.sort_unstable();
        let mut answers = vec![true; keys.len()];
        let mut at = 0;
        while at < wanted.len() {
            let chunk = (wanted[at].0 >> shift) as usize;
            let bits = view.chunk_bits(chunk);
            zeroed_words(words, (bits.end - bits.start).div_ceil(64))
                .map_err(|e| frame_error(path, e))?;
            let range = view
                .chunk_byte_range(chunk)
                .map_err(|e| frame_error(path, e))?;
            let coded = match file {
                Some(file) => {
                    bytes.resize(range.len(), 0);
                    file.seek(SeekFrom::Start(range.start as u64))
                        .and_then(|_| file.read_exact(bytes))
                        .context(path.display())?;
                    &bytes[..]
                }
                None => &frame[range],
            };
            view.decode_chunk_from(chunk, coded, words)
                .map_err(|e| frame_error(path, e))?;
            *decoded += 1;
            while let Some(&(bit, key)) = wanted.get(at) {
                if bit >= bits.end {
                    break;
                }
                let offset = bit - bits.start;
                if words[(offset / 64) as usize] >> (offset % 64) & 1 == 0 {
                    answers[key as usize] = false;
                }
                at += 1;
            }
        }
        Ok(answers)
    }

    /// What was decoded, for --verbose.
    fn note(&self) -> String {
        match self {
            Lookup::Whole(filter) => format!(
                "decoded whole ({} of {})",
                filter.params().m(),
                match filter {
                    AnyFilter::Bloom(_) => "bits",
                    AnyFilter::Counting(_) => "counters",
                }
            ),
            Lookup::Chunked {
                frame,
                shift,
                decoded,
                ..
            } => {
                let m = FrameHeader::parse(frame, &limits()).map_or(0, |h| h.params.m());
                format!(
                    "decoded {decoded} chunk(s) of {} (2^{shift} bits each, {m} bits in all)",
                    m.div_ceil(1 << shift)
                )
            }
        }
    }
}

/// Make `words` `len` zero words, allocated fallibly: a chunk may be as large as the
/// frame's m, which a raised --max-m lets a frame declare beyond the machine's memory.
fn zeroed_words(words: &mut Vec<u64>, len: u64) -> bloomwire::Result<()> {
    let failed = || Error::AllocationFailed {
        bytes: len.saturating_mul(8),
    };
    let len = usize::try_from(len).map_err(|_| failed())?;
    words.clear();
    words.try_reserve_exact(len).map_err(|_| failed())?;
    words.resize(len, 0);
    Ok(())
}
