//! `bloomwire query`: keys against a frame, decoding only the chunks the keys need.

use std::path::{Path, PathBuf};

use bloomwire::{Error, FrameKind, FrameView};

use crate::keys::{self, KeySource};
use crate::{
    decode_file, frame_error, limits, parse_hex, read_frame_file, write_stdout, AnyFilter, Failure,
    Result,
};

/// Ask a frame whether it may contain keys: one line `KEY<TAB>maybe|no` per key.
///
/// The keys are the arguments after the frame, or with --keys FILE one per line of FILE
/// (`-` for standard input), read as `build` reads them (--binary-keys for length-prefixed
/// records). Prints one line `KEY<TAB>maybe` or `KEY<TAB>no` per key, in the order given
/// ("maybe": a Bloom filter has false positives, "no" is certain); with --count only the
/// totals.
///
/// A chunked frame (`build` chunks filters of 2^26 bits or more) is not decoded whole: the
/// keys' bit indexes are grouped by chunk, and each chunk that holds one is decoded once,
/// one chunk at a time, so memory is the frame file, one chunk and the keys of a batch of
/// 2^20. An unchunked frame (smaller filters, raw frames) and a counting frame are decoded
/// whole. Only the chunks decoded are checked beyond the frame's header, chunk table and
/// checksum.
///
/// Exit status: 0 when every key was answered, whatever the answers; 1 when the frame or
/// the keys cannot be read (nothing is printed for the keys then); 2 for a usage error.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The frame file.
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
}

/// Keys answered at once: their bit indexes are sorted by chunk together.
const BATCH: usize = 1 << 20;

/// How the keys are answered.
enum Lookup<'a> {
    /// The whole filter, decoded.
    Whole(AnyFilter),
    /// A chunked frame, decoded chunk by chunk as the keys need.
    Chunked {
        view: FrameView<'a>,
        shift: u8,
        /// Chunk decodes so far (a chunk is decoded once per batch that needs it).
        decoded: u64,
        /// Reused for every chunk.
        words: Vec<u64>,
    },
}

pub fn run(args: &Args) -> Result<()> {
    let path = &args.frame;
    let bytes = read_frame_file(path)?;
    let mut lookup = open(path, &bytes)?;

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
            let source = KeySource::open(file)?;
            let mut batch = Vec::new();
            let mut shown = Vec::new();
            let mut failed = None;
            let mut line = 0u64;
            let stats = keys::for_each_key(&source, args.format, |key| {
                line += 1;
                if failed.is_some() {
                    return;
                }
                if args.hex {
                    match std::str::from_utf8(key).ok().and_then(parse_hex) {
                        Some(bytes) => batch.push(bytes),
                        None => {
                            failed =
                                Some(Failure(format!("{}: key {line} is not hex", source.name())));
                            return;
                        }
                    }
                    shown.push(key.to_vec());
                } else {
                    batch.push(key.to_vec());
                }
                if batch.len() == BATCH {
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
                eprintln!("{warning}");
            }
        }
    }
    if args.count {
        out = format!("maybe\t{}\nno\t{}\n", totals.0, totals.1).into_bytes();
    }
    if args.verbose {
        eprintln!("{}: {}", path.display(), lookup.note());
    }
    write_stdout(&out)
}

/// The way to answer keys from this frame file.
fn open<'a>(path: &Path, bytes: &'a [u8]) -> Result<Lookup<'a>> {
    let view = FrameView::parse(bytes, &limits()).map_err(|e| frame_error(path, e))?;
    let header = view.header();
    if header.kind != FrameKind::Full {
        return Err(frame_error(path, Error::UnexpectedDelta));
    }
    if header.params.family().base.is_opaque() {
        // Another library's bits (base hash 0): no answer bloomwire could give is honest.
        return Err(frame_error(path, Error::OpaqueHashFamily));
    }
    if bytes.len() > view.frame_len() {
        return Err(frame_error(
            path,
            Error::TrailingBytes {
                count: bytes.len() - view.frame_len(),
                offset: view.frame_len(),
            },
        ));
    }
    match header.chunk_shift {
        Some(shift) if !header.is_counting() && view.chunk_count() > 1 => Ok(Lookup::Chunked {
            view,
            shift,
            decoded: 0,
            words: Vec::new(),
        }),
        _ => Ok(Lookup::Whole(decode_file(path)?)),
    }
}

impl Lookup<'_> {
    /// Whether each key may be in the filter.
    fn answer(&mut self, path: &Path, keys: &[Vec<u8>]) -> Result<Vec<bool>> {
        let (view, shift, decoded, words) = match self {
            Lookup::Whole(filter) => return Ok(keys.iter().map(|k| filter.contains(k)).collect()),
            Lookup::Chunked {
                view,
                shift,
                decoded,
                words,
            } => (view, *shift, decoded, words),
        };
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
            words.clear();
            words.resize((bits.end - bits.start).div_ceil(64) as usize, 0);
            view.decode_chunk_into(chunk, words)
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
                view,
                shift,
                decoded,
                ..
            } => format!(
                "decoded {decoded} chunk(s) of {} (2^{shift} bits each, {} bits in all)",
                view.chunk_count(),
                view.header().params.m()
            ),
        }
    }
}
