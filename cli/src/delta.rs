//! `bloomwire diff` and `bloomwire apply`: delta frames between two generations of a filter.

use std::path::Path;
use std::path::PathBuf;

use bloomwire::{AnyFilter, Error, FrameKey, Message, Params, Receiver};

use crate::coding_options::note_changes;
use crate::frames::{input_name, FrameReader};
use crate::inspect::layout_name;
use crate::options::{ForceArg, FrameOptions, Metadata};
use crate::output::{check_output, is_std, note, shown, write_output};
use crate::{limits, Failure, Result};

/// Write the delta frame that turns one full frame into another of the same parameters.
///
/// The delta that turns OLD into NEW is the XOR of their bit arrays (counter by
/// counter for counting filters), coded like a filter, with both filters' digests so that
/// `apply` can tell whether it applies.
///
/// Both frames must be full frames of the same parameters (m, layout, k, hash family, and
/// counter width for counting filters). Generations come from the frames: the delta goes
/// from OLD's generation g to NEW's when NEW's is greater; when NEW carries generation 0
/// (unnumbered, as `build` writes by default), the delta goes from g to g + 1, and `apply`
/// writes that number into the frame it makes. Any other pair of generations is refused.
///
/// The delta carries NEW's metadata unless --metadata, --metadata-hex or --no-metadata
/// says otherwise. With --key-file, OLD and NEW must be tagged with the key, and the delta
/// is.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// The full frame the receiver holds (`-` for standard input).
    old: PathBuf,
    /// The full frame the receiver should end up with (`-` for standard input).
    new: PathBuf,
    /// Where to write the delta frame (`-` for stdout).
    #[arg(short, long, value_name = "DELTA")]
    output: PathBuf,
    #[command(flatten)]
    writing: FrameOptions,
    #[command(flatten)]
    force: ForceArg,
}

/// Write what a receiver holds after a frame: BASE, the full frame it holds, and FRAME,
/// the frame it receives (a delta, or a full frame), applied by the rules of spec 5.2.
///
/// A delta must start from BASE's generation (else GenerationGap), have BASE's parameters
/// (Incompatible) and its base digest (BaseMismatch), and give the result digest it names
/// (ResultMismatch). A full frame replaces BASE when its generation is newer, or whatever
/// the generation when it carries the restart flag; an older one is StaleGeneration, as is
/// a delta to a generation BASE already has. Each failure is one line with the library's
/// error.
///
/// The result is written as a full frame of the new generation, carrying FRAME's metadata
/// unless --metadata, --metadata-hex or --no-metadata says otherwise. With --key-file,
/// BASE and FRAME must be tagged with the key, and the result is. With the coding,
/// chunking, metadata and key `build` was given (auto coding and chunking by default) and
/// no --restart, the bytes are those `build` writes for the same filter and generation.
#[derive(Debug, clap::Args)]
pub struct ApplyArgs {
    /// The full frame the receiver holds (`-` for standard input).
    base: PathBuf,
    /// The frame it receives: a delta, or a full frame (`-` for standard input).
    #[arg(value_name = "FRAME")]
    delta: PathBuf,
    /// Where to write the resulting full frame (`-` for stdout).
    #[arg(short, long, value_name = "NEW")]
    output: PathBuf,
    #[command(flatten)]
    writing: FrameOptions,
    #[command(flatten)]
    force: ForceArg,
}

/// Refuse two inputs from standard input (a usage error), a coding with chunks it never
/// has, and an output `force` does not allow; then the key, the metadata and a reader of
/// the two inputs.
fn start(
    a: &Path,
    b: &Path,
    writing: &FrameOptions,
    output: &Path,
    force: &ForceArg,
) -> Result<(Option<FrameKey>, Metadata, FrameReader)> {
    if is_std(a) && is_std(b) {
        crate::usage_error("only one of the two frames can come from standard input (-)");
    }
    writing.check();
    check_output(output, force.force)?;
    let key = writing.key.load()?;
    let metadata = writing.metadata.load()?;
    let reader = FrameReader::new(key.clone());
    Ok((key, metadata, reader))
}

pub fn diff(args: &DiffArgs) -> Result<()> {
    let (key, metadata, reader) = start(
        &args.old,
        &args.new,
        &args.writing,
        &args.output,
        &args.force,
    )?;
    let (old, old_header) = reader.full(&args.old)?;
    let (new, new_header) = reader.full(&args.new)?;
    let (old_name, new_name) = (input_name(&args.old), input_name(&args.new));
    let base_generation = old_header.generation;
    let generation = match new_header.generation {
        0 => base_generation.checked_add(1).ok_or_else(|| {
            Failure(format!(
                "{old_name}: generation {base_generation} is the last one; no delta can follow it"
            ))
        })?,
        g if g > base_generation => g,
        g => {
            return Err(Failure(format!(
                "{new_name} has generation {g}, not after {old_name}'s {base_generation}; a \
                 delta goes from an older generation to a newer one"
            )))
        }
    };
    if let Some(mismatch) = mismatch(&old, &new) {
        return Err(Failure(format!(
            "{old_name} and {new_name} differ in {mismatch}; a delta needs filters of the same \
             parameters"
        )));
    }
    let metadata = metadata.or(new_header.metadata.clone());
    let coder = args.writing.coder(new.is_counting(), metadata, key)?;
    let frame = match (&old, &new) {
        (AnyFilter::Bloom(old), AnyFilter::Bloom(new)) => {
            coder
                .bloom_encoder()
                .encode_delta(old, base_generation, new, generation)
        }
        (AnyFilter::Counting(old), AnyFilter::Counting(new)) => coder
            .counting_encoder()
            .encode_delta(old, base_generation, new, generation),
        _ => unreachable!("mismatch() compares the kinds"),
    }
    .map_err(|e| Failure(format!("cannot encode the delta: {e}")))?;
    let bytes = frame.to_bytes();
    write_output(&args.output, &bytes, args.force.force)?;
    note_changes(coder.coding, args.writing.chunks, &frame);
    if bytes.len() >= new_header.frame_len() {
        // Spec 5.2: a sender sends a delta only when it is smaller than the full frame.
        note(format!(
            "bloomwire: note: the delta is not smaller than the full frame of {new_name} \
             ({} against {} bytes); send that instead",
            bytes.len(),
            new_header.frame_len()
        ));
    }
    let numbered = if new_header.generation == 0 {
        format!(" ({new_name} carries generation 0: numbered {generation})")
    } else {
        String::new()
    };
    note(format!(
        "delta from generation {base_generation} to {generation}{numbered}: {} changed, \
         coding {}; {} bytes written to {} ({} bytes for the full frame of {new_name})",
        changed(&old, &new),
        frame.coding(),
        bytes.len(),
        shown(&args.output),
        new_header.frame_len(),
    ));
    Ok(())
}

pub fn apply(args: &ApplyArgs) -> Result<()> {
    let (key, metadata, reader) = start(
        &args.base,
        &args.delta,
        &args.writing,
        &args.output,
        &args.force,
    )?;
    let (base_name, frame_name) = (input_name(&args.base), input_name(&args.delta));
    let base = match reader.message(&args.base)? {
        m @ (Message::Full(_) | Message::Counting(_)) => m,
        _ => {
            return Err(Failure(format!(
                "{base_name}: a delta; apply takes the full frame the receiver holds, then the \
                 frame it receives"
            )))
        }
    };
    let message = reader.message(&args.delta)?;
    let header = message.header().clone();
    let base_counting = base.header().is_counting();
    if base_counting != header.is_counting() {
        let (frame, held) = if base_counting {
            ("a Bloom filter", "a counting filter")
        } else {
            ("a counting filter", "a Bloom filter")
        };
        return Err(Failure(format!(
            "{frame_name} is a frame of {frame}, {base_name} {held}"
        )));
    }
    let mut receiver = Receiver::<AnyFilter>::with_limits(limits());
    if let Some(key) = &key {
        receiver = receiver.with_key(key.clone());
    }
    let held = base.header().generation;
    receiver
        .apply(base)
        .map_err(|e| Failure(format!("{base_name}: {e}")))?;
    let update = receiver.apply(message).map_err(|e| {
        Failure(format!(
            "{frame_name}: {e} ({base_name} holds generation {held}){}",
            apply_hint(&e)
        ))
    })?;
    let result = receiver.filter().expect("a full frame was applied");
    let metadata = metadata.or(header.metadata.clone());
    let coder = args.writing.coder(result.is_counting(), metadata, key)?;
    let frame = coder
        .encode(result, update.generation())
        .map_err(|e| Failure(format!("cannot encode the result: {e}")))?;
    let bytes = frame.to_bytes();
    write_output(&args.output, &bytes, args.force.force)?;
    note_changes(coder.coding, args.writing.chunks, &frame);
    let how = if update.is_full() {
        format!(
            "replaced by the full frame of generation {}{}",
            update.generation(),
            if header.restart { " (restart)" } else { "" }
        )
    } else {
        format!("+ delta to {}", update.generation())
    };
    note(format!(
        "generation {held} {how}: {} keys, coding {}; {} bytes written to {}",
        header.n,
        frame.coding(),
        bytes.len(),
        shown(&args.output),
    ));
    Ok(())
}

/// What to do about a frame a receiver refuses.
fn apply_hint(error: &Error) -> &'static str {
    match error {
        Error::GenerationGap { .. } | Error::BaseMismatch { .. } | Error::ResultMismatch { .. } => {
            "; it needs a full frame"
        }
        _ => "",
    }
}

/// What differs between two filters that a delta needs equal, if anything.
fn mismatch(a: &AnyFilter, b: &AnyFilter) -> Option<String> {
    match (a, b) {
        (AnyFilter::Bloom(_), AnyFilter::Counting(_)) => {
            Some("kind (a Bloom filter and a counting filter)".into())
        }
        (AnyFilter::Counting(_), AnyFilter::Bloom(_)) => {
            Some("kind (a counting filter and a Bloom filter)".into())
        }
        (AnyFilter::Counting(x), AnyFilter::Counting(y)) if x.width() != y.width() => Some(
            format!("counter width ({} against {} bits)", x.width(), y.width()),
        ),
        _ => params_mismatch(a.params(), b.params()),
    }
}

/// The first field in which two sets of parameters differ: m, layout, k, hash family.
fn params_mismatch(a: &Params, b: &Params) -> Option<String> {
    if a.m() != b.m() {
        return Some(format!("m ({} against {})", a.m(), b.m()));
    }
    if a.layout().id() != b.layout().id() {
        return Some(format!(
            "layout ({} against {})",
            layout_name(a.layout()),
            layout_name(b.layout())
        ));
    }
    if a.layout() != b.layout() {
        return Some(format!("k ({} against {})", a.k(), b.k()));
    }
    if a.family() != b.family() {
        return Some(format!(
            "hash family ({:?} against {:?})",
            a.family(),
            b.family()
        ));
    }
    None
}

/// How many bits (or counters) differ between two filters of the same shape.
fn changed(a: &AnyFilter, b: &AnyFilter) -> String {
    match (a, b) {
        (AnyFilter::Bloom(a), AnyFilter::Bloom(b)) => {
            let bits: u64 = a
                .bits()
                .words()
                .iter()
                .zip(b.bits().words())
                .map(|(x, y)| u64::from((x ^ y).count_ones()))
                .sum();
            format!("{bits} bits")
        }
        (AnyFilter::Counting(a), AnyFilter::Counting(b)) => {
            let counters = a
                .counters()
                .iter()
                .zip(b.counters())
                .filter(|(x, y)| x != y)
                .count();
            format!("{counters} counters")
        }
        _ => unreachable!("same kinds"),
    }
}
