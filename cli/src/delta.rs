//! `bloomwire diff` and `bloomwire apply`: delta frames between two generations of a filter.

use std::path::{Path, PathBuf};

use bloomwire::{
    BloomFilter, CounterCoding, CountingBloomFilter, Encoder, Error, FrameHeader, FrameKind,
    Message, Params,
};

use crate::build::{ChunkArg, CodingArg};
use crate::inspect::layout_name;
use crate::{decode_full, decode_message, write_output, Failure, Result};
use bloomwire::AnyFilter;

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
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// The full frame the receiver holds.
    old: PathBuf,
    /// The full frame the receiver should end up with.
    new: PathBuf,
    /// Where to write the delta frame (`-` for stdout).
    #[arg(short, long, value_name = "DELTA")]
    output: PathBuf,
    /// How to code the XOR bits (raw is used whenever it is smaller); for counting
    /// filters auto or raw.
    #[arg(long, value_enum, default_value_t = CodingArg::Auto)]
    coding: CodingArg,
    #[command(flatten)]
    chunks: ChunkArg,
}

/// Apply a delta frame to the full frame it was made from; write the result as a full frame.
///
/// The result carries the delta's generation. Checked, in this order, each failure one
/// line naming what differs: the delta's base generation against BASE's generation, the
/// parameters, the digest of BASE's filter against the delta's base digest, and the digest
/// of the result against the delta's result digest.
#[derive(Debug, clap::Args)]
pub struct ApplyArgs {
    /// The full frame the delta was made from.
    base: PathBuf,
    /// The delta frame.
    delta: PathBuf,
    /// Where to write the resulting full frame (`-` for stdout).
    #[arg(short, long, value_name = "NEW")]
    output: PathBuf,
    /// How to code the result's bits (as `build`: raw whenever it is smaller); for
    /// counting filters auto or raw. With the same --coding and --chunk-shift as `build`
    /// (auto by default), the bytes are those `build` writes for the same filter and
    /// generation.
    #[arg(long, value_enum, default_value_t = CodingArg::Auto)]
    coding: CodingArg,
    #[command(flatten)]
    chunks: ChunkArg,
}

pub fn diff(args: &DiffArgs) -> Result<()> {
    let (old, old_header) = decode_full(&args.old)?;
    let (new, new_header) = decode_full(&args.new)?;
    let base_generation = old_header.generation;
    let generation = match new_header.generation {
        0 => base_generation.checked_add(1).ok_or_else(|| {
            Failure(format!(
                "{}: generation {base_generation} is the last one; no delta can follow it",
                args.old.display()
            ))
        })?,
        g if g > base_generation => g,
        g => {
            return Err(Failure(format!(
                "{} has generation {g}, not after {}'s {base_generation}; a delta goes from \
                 an older generation to a newer one",
                args.new.display(),
                args.old.display()
            )))
        }
    };
    if let Some(mismatch) = mismatch(&old, &new) {
        return Err(Failure(format!(
            "{} and {} differ in {mismatch}; a delta needs filters of the same parameters",
            args.old.display(),
            args.new.display()
        )));
    }
    let frame = match (&old, &new) {
        (AnyFilter::Bloom(old), AnyFilter::Bloom(new)) => {
            let mut encoder = Encoder::<BloomFilter>::new().chunking(args.chunks.chunking());
            if let Some(coding) = args.coding.coding() {
                encoder = encoder.coding(coding);
            }
            encoder.encode_delta(old, base_generation, new, generation)
        }
        (AnyFilter::Counting(old), AnyFilter::Counting(new)) => {
            let mut encoder = Encoder::<CountingBloomFilter>::new();
            match args.coding {
                CodingArg::Auto => {}
                CodingArg::Raw => encoder = encoder.coding(CounterCoding::Raw),
                _ => return Err(counting_coding()),
            }
            encoder.encode_delta(old, base_generation, new, generation)
        }
        _ => unreachable!("mismatch() compares the kinds"),
    }
    .map_err(|e| Failure(format!("cannot encode the delta: {e}")))?;
    let bytes = frame.to_bytes();
    write_output(&args.output, &bytes)?;
    let numbered = if new_header.generation == 0 {
        format!(
            " ({} carries generation 0: numbered {generation})",
            args.new.display()
        )
    } else {
        String::new()
    };
    eprintln!(
        "delta from generation {base_generation} to {generation}{numbered}: {} changed, \
         coding {}; {} bytes written to {} ({} bytes for the full frame of {})",
        changed(&old, &new),
        frame.coding(),
        bytes.len(),
        shown(&args.output),
        new_header.frame_len(),
        args.new.display(),
    );
    Ok(())
}

pub fn apply(args: &ApplyArgs) -> Result<()> {
    let (base, base_header) = decode_full(&args.base)?;
    let message = decode_message(&args.delta)?;
    let (base_path, delta_path) = (args.base.display(), args.delta.display());
    let header = message.header().clone();
    let FrameKind::Delta { .. } = header.kind else {
        return Err(Failure(format!(
            "{delta_path}: a full frame, not a delta; apply takes BASE DELTA"
        )));
    };
    let generation = base_header.generation;
    let result = match (&base, message) {
        (AnyFilter::Bloom(base), Message::Delta(delta)) => {
            delta.apply(base, generation).map(AnyFilter::Bloom)
        }
        (AnyFilter::Counting(base), Message::CountingDelta(delta)) => {
            delta.apply(base, generation).map(AnyFilter::Counting)
        }
        (AnyFilter::Bloom(_), _) => {
            return Err(Failure(format!(
                "{delta_path} is a delta of a counting filter, {base_path} a Bloom filter"
            )))
        }
        (AnyFilter::Counting(_), _) => {
            return Err(Failure(format!(
                "{delta_path} is a delta of a Bloom filter, {base_path} a counting filter"
            )))
        }
    };
    let result = result.map_err(|e| apply_error(args, &base, &header, e))?;
    if matches!(result, AnyFilter::Counting(_))
        && !matches!(args.coding, CodingArg::Auto | CodingArg::Raw)
    {
        return Err(counting_coding());
    }
    let frame = crate::encode(
        &result,
        args.coding,
        args.chunks.chunking(),
        None,
        header.generation,
    )
    .map_err(|e| Failure(format!("cannot encode the result: {e}")))?;
    let bytes = frame.to_bytes();
    write_output(&args.output, &bytes)?;
    eprintln!(
        "generation {generation} + delta to {}: {} keys, coding {}; {} bytes written to {}",
        header.generation,
        header.n,
        frame.coding(),
        bytes.len(),
        shown(&args.output),
    );
    Ok(())
}

fn counting_coding() -> Failure {
    Failure::new("--coding: a counting filter is coded auto (known or adaptive counters) or raw")
}

fn shown(path: &Path) -> String {
    if path == Path::new("-") {
        "stdout".into()
    } else {
        path.display().to_string()
    }
}

/// The one line for a delta that does not apply.
fn apply_error(args: &ApplyArgs, base: &AnyFilter, delta: &FrameHeader, error: Error) -> Failure {
    let (base_path, delta_path) = (args.base.display(), args.delta.display());
    match error {
        Error::GenerationGap { have, base: wanted } => Failure(format!(
            "generation mismatch: {delta_path} applies to generation {wanted}, {base_path} is \
             generation {}",
            have.map_or("unknown".into(), |g| g.to_string())
        )),
        Error::Incompatible(_) => {
            let what = params_mismatch(base.params(), &delta.params)
                .or_else(|| {
                    let width = match base {
                        AnyFilter::Counting(f) => Some(f.width()),
                        AnyFilter::Bloom(_) => None,
                    };
                    (width != delta.counter_width).then(|| {
                        format!(
                            "counter width ({} against {})",
                            opt(width),
                            opt(delta.counter_width)
                        )
                    })
                })
                .unwrap_or_else(|| "parameters".into());
            Failure(format!(
                "parameter mismatch: {delta_path} and {base_path} differ in {what}"
            ))
        }
        Error::BaseMismatch {
            generation,
            expected,
            actual,
        } => Failure(format!(
            "base digest mismatch: {base_path} is generation {generation} but not the filter \
             {delta_path} was made from (its digest is {actual:#010x}, the delta's base digest \
             {expected:#010x})"
        )),
        Error::ResultMismatch {
            generation,
            expected,
            actual,
        } => Failure(format!(
            "result digest mismatch: {delta_path} applied to {base_path} gives generation \
             {generation} with digest {actual:#010x}, the delta says {expected:#010x}"
        )),
        e => Failure(format!("{delta_path}: {e}")),
    }
}

fn opt(width: Option<u8>) -> String {
    width.map_or("none, a Bloom filter".into(), |w| format!("{w} bits"))
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
