//! `bloomwire update`: insert keys into a filter's frame, or remove them from a counting
//! filter's.

use std::path::PathBuf;

use bloomwire::AnyFilter;

use crate::coding_options::note_changes;
use crate::frames::{frame_error, input_name, FrameReader};
use crate::keys::{self, KeySource};
use crate::options::{ForceArg, FrameOptions};
use crate::output::{check_output, is_std, note, shown, write_output};
use crate::{Context, Failure, Result};

/// Insert keys into the filter a full frame holds, or remove keys from a counting filter
/// (`build --counting BITS`), and write the result as a full frame.
///
/// The keys files are read as `build` reads them (one key per line, or --binary-keys; a
/// key of at most 1 MiB, a longer line or record an error naming it).
/// The keys of --insert are inserted first, then those of --remove removed. Removing a key
/// the filter does not hold (one of its counters is zero) fails, naming the key, and
/// nothing is written; a key that only seems present (a false positive) is removed all the
/// same, as it is from any counting filter, and may make another key absent: remove only
/// keys that were inserted. A Bloom filter (not counting) takes insertions only, and a
/// filter of another library's bits (`wrap`) neither.
///
/// The result carries the next generation (the input's plus one; 0 when the input is
/// unnumbered) unless --generation says otherwise, so that `diff INPUT OUTPUT` makes the
/// delta from one to the other; the input's metadata unless --metadata, --metadata-hex or
/// --no-metadata says otherwise; and with --key-file the input must be tagged with the
/// key, and the result is.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("change").required(true).multiple(true).args(["insert", "remove"])))]
pub struct Args {
    /// The full frame to update; `-` for standard input.
    frame: PathBuf,
    /// Insert the keys of FILE (`-` for standard input).
    #[arg(long, value_name = "FILE")]
    insert: Option<PathBuf>,
    /// Remove the keys of FILE from a counting filter (`-` for standard input).
    #[arg(long, value_name = "FILE")]
    remove: Option<PathBuf>,
    #[command(flatten)]
    format: keys::Format,
    /// The generation the result carries [default: the input's plus one, or 0].
    #[arg(long, value_name = "G")]
    generation: Option<u64>,
    /// Set the restart flag (spec 5.2), as `build --restart`.
    #[arg(long)]
    restart: bool,
    #[command(flatten)]
    writing: FrameOptions,
    /// Where to write the updated frame (`-` for stdout).
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    #[command(flatten)]
    force: ForceArg,
}

pub fn run(args: &Args) -> Result<()> {
    let inputs = [
        Some(&args.frame),
        args.insert.as_ref(),
        args.remove.as_ref(),
    ];
    if inputs.iter().flatten().filter(|p| is_std(p)).count() > 1 {
        crate::usage_error(
            "only one of the frame and the keys files can come from standard input (-)",
        );
    }
    args.writing.check();
    let force = args.force.force;
    check_output(&args.output, force)?;
    let key = args.writing.key.load()?;
    let metadata = args.writing.metadata.load()?;
    let reader = FrameReader::new(key.clone());
    let (mut filter, header) = reader.full(&args.frame)?;
    let name = input_name(&args.frame);
    if filter.params().family().base.is_opaque() {
        return Err(frame_error(&args.frame, bloomwire::Error::OpaqueHashFamily));
    }
    if args.remove.is_some() && !filter.is_counting() {
        return Err(Failure(format!(
            "{name}: a Bloom filter, whose keys cannot be removed; only a counting filter's \
             can (build --counting BITS)"
        )));
    }
    let coder = args.writing.coder(
        filter.is_counting(),
        metadata.or(header.metadata.clone()),
        key,
    )?;

    let mut inserted = 0u64;
    if let Some(path) = &args.insert {
        let mut source = KeySource::open(path)?;
        let stats = source.for_each_key(args.format, |key| {
            filter.insert(key);
            inserted += 1;
        })?;
        if let Some(warning) = stats.warning(&source.name(), args.format) {
            note(warning);
        }
    }
    let mut removed = 0u64;
    if let Some(path) = &args.remove {
        let AnyFilter::Counting(counting) = &mut filter else {
            unreachable!("checked above");
        };
        let mut source = KeySource::open(path)?;
        let mut failed = None;
        let stats = source.for_each_key(args.format, |key| {
            if failed.is_some() {
                return;
            }
            match counting.remove(key) {
                Ok(()) => removed += 1,
                Err(e) => {
                    failed = Some((removed + 1, String::from_utf8_lossy(key).into_owned(), e))
                }
            }
        })?;
        if let Some((at, key, e)) = failed {
            return Err(Failure(format!(
                "{}: key {at} ({key:?}) cannot be removed: {e}; nothing was written",
                source.name()
            )));
        }
        if let Some(warning) = stats.warning(&source.name(), args.format) {
            note(warning);
        }
    }

    let generation = match args.generation {
        Some(g) => g,
        None if header.generation == 0 => 0,
        None => header.generation.checked_add(1).ok_or_else(|| {
            Failure(format!(
                "{name}: generation {} is the last one; give --generation",
                header.generation
            ))
        })?,
    };
    let frame = coder
        .encode(&filter, generation)
        .and_then(|f| f.with_restart(args.restart))
        .context("cannot encode the filter")?;
    let bytes = frame.to_bytes();
    write_output(&args.output, &bytes, force)?;
    note_changes(coder.coding, args.writing.chunks, &frame);
    note(format!(
        "{name}: {inserted} keys inserted, {removed} removed; n = {}, generation {generation}, \
         coding {}; {} bytes written to {}",
        filter.n(),
        frame.coding(),
        bytes.len(),
        shown(&args.output)
    ));
    Ok(())
}
