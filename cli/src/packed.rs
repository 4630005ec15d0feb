//! `bloomwire decode`: packed bits out of a frame.

use std::path::PathBuf;

use bloomwire::{AnyFilter, BitArray, Error};

use crate::frames::{frame_error, FrameReader};
use crate::options::{ForceArg, KeyArg};
use crate::output::{check_output, write_output};
use crate::Result;

/// Write the packed bit array of a full frame (bit i is `bytes[i / 8] >> (i % 8) & 1`,
/// ceil(m / 8) bytes), or of a counting filter its packed counters (b bits each, from bit
/// i*b).
///
/// With --key-file the frame must be tagged with the key.
#[derive(Debug, clap::Args)]
pub struct DecodeArgs {
    /// The frame file; `-` for standard input.
    frame: PathBuf,
    /// Where to write the bits (`-` for stdout).
    #[arg(short, long, value_name = "BITS")]
    output: PathBuf,
    /// Also write the frame's application metadata to FILE (nothing is written when the
    /// frame has none).
    #[arg(long, value_name = "FILE")]
    metadata_out: Option<PathBuf>,
    #[command(flatten)]
    key: KeyArg,
    #[command(flatten)]
    force: ForceArg,
}

pub fn decode(args: &DecodeArgs) -> Result<()> {
    let force = args.force.force;
    check_output(&args.output, force)?;
    if let Some(path) = &args.metadata_out {
        check_output(path, force)?;
    }
    let reader = FrameReader::new(args.key.load()?);
    let (filter, header) = reader.full(&args.frame)?;
    let bytes = match &filter {
        AnyFilter::Bloom(f) => packed_bits(f.bits()).map_err(|e| frame_error(&args.frame, e))?,
        AnyFilter::Counting(f) => f.packed(),
    };
    write_output(&args.output, &bytes, force)?;
    if let (Some(path), Some(metadata)) = (&args.metadata_out, &header.metadata) {
        write_output(path, metadata, force)?;
    }
    Ok(())
}

/// The packed form of `bits`, its buffer reserved fallibly (whole words: `write_bytes`
/// fills word by word, then truncates to ceil(m / 8) bytes).
fn packed_bits(bits: &BitArray) -> bloomwire::Result<Vec<u8>> {
    let len = bits.words().len() * 8;
    let mut out = Vec::new();
    out.try_reserve_exact(len)
        .map_err(|_| Error::AllocationFailed { bytes: len as u64 })?;
    bits.write_bytes(&mut out);
    Ok(out)
}
