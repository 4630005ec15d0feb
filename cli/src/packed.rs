//! `bloomwire decode` and `bloomwire wrap`: packed bits out of a frame, and another
//! library's packed bits into one.

use std::io::Read;
use std::path::PathBuf;

use bloomwire::{AnyFilter, BitArray, BloomFilter, Error, HashFamily, Params};

use crate::coding_options::note_changes;
use crate::frames::{frame_error, input_name, FrameReader};
use crate::options::{ForceArg, FrameOptions, KeyArg};
use crate::output::{check_output, is_std, note, shown, write_output};
use crate::{limits, Context, Failure, Result};

/// Write the packed bit array of a full frame (bit i is `bytes[i / 8] >> (i % 8) & 1`,
/// ceil(m / 8) bytes), or of a counting filter its packed counters (b bits each, from bit
/// i*b).
///
/// For a frame made by `wrap`, these are the bits it was given. With --key-file the frame
/// must be tagged with the key.
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
        if is_std(path) && is_std(&args.output) {
            crate::usage_error("the bits and the metadata cannot both go to stdout (-)");
        }
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

/// Carry another library's filter: put its packed bits in an opaque frame (base hash 0,
/// spec 3.1).
///
/// BITS holds ceil(m / 8) bytes in the spec's bit order: bit i of the filter is bit
/// (i mod 8), from the least significant, of byte floor(i / 8), and the bits past m in the
/// last byte are zero. (A library that stores 64-bit words little-endian, as most do on
/// x86 and ARM, has this order already; one that numbers bits from the most significant
/// needs its bytes reversed bitwise first.)
///
/// The frame is coded like any other (compressed, chunked, deltas with `diff`, tagged with
/// --key-file), and `decode` gives the bits back. bloomwire cannot tell where that
/// library puts a key's bits, so `query` refuses the frame (OpaqueHashFamily): the
/// receiver queries the bits with the library that made them, whose parameters (its hash
/// function, seed, k) the metadata field can carry: --metadata or --metadata-hex.
#[derive(Debug, clap::Args)]
pub struct WrapArgs {
    /// The packed bits, ceil(m / 8) bytes; `-` for standard input.
    #[arg(long, value_name = "FILE")]
    bits: PathBuf,
    /// The filter's length in bits (at most --max-m).
    #[arg(long, value_name = "M")]
    m: u64,
    /// The number of bits the other library sets per key, as it says (informational: 1 to
    /// 1024; 1 when it has no such number).
    #[arg(long, value_name = "K", default_value_t = 1)]
    k: u32,
    /// The number of keys the filter holds (informational).
    #[arg(long, value_name = "N", default_value_t = 0)]
    n: u64,
    /// The generation number the frame carries (0, unnumbered, by default).
    #[arg(long, value_name = "G", default_value_t = 0)]
    generation: u64,
    /// Set the restart flag (spec 5.2), as `build --restart`.
    #[arg(long)]
    restart: bool,
    #[command(flatten)]
    writing: FrameOptions,
    /// Where to write the frame (`-` for stdout).
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    #[command(flatten)]
    force: ForceArg,
}

pub fn wrap(args: &WrapArgs) -> Result<()> {
    let force = args.force.force;
    args.writing.check();
    check_output(&args.output, force)?;
    let m = args.m;
    let max_m = limits().max_m;
    if m == 0 || m > max_m {
        return Err(Failure(format!(
            "--m {m}: must be in 1..={max_m} (--max-m; receivers need the same limit)"
        )));
    }
    let k_max = limits().max_k;
    if args.k == 0 || args.k > k_max {
        return Err(Failure(format!(
            "--k {}: must be in 1..={k_max} (--max-k)",
            args.k
        )));
    }
    let key = args.writing.key.load()?;
    let metadata = args.writing.metadata.load()?.or(None);
    let name = input_name(&args.bits);
    let bytes = read_bits(args, &name)?;
    let bits = unpack(&bytes, m).context(&name)?;
    drop(bytes);
    let ones = bits.count_ones();
    let params = Params::standard(m, args.k, HashFamily::opaque()).context("--m and --k")?;
    let filter = AnyFilter::Bloom(BloomFilter::from_parts(params, bits, args.n).context(&name)?);
    let coder = args.writing.coder(false, metadata, key)?;
    let frame = coder
        .encode(&filter, args.generation)
        .and_then(|f| f.with_restart(args.restart))
        .context("cannot encode the bits")?;
    let wire = frame.to_bytes();
    write_output(&args.output, &wire, force)?;
    note_changes(coder.coding, args.writing.chunks, &frame);
    note(format!(
        "{name}: {m} bits ({} ones) of another library's filter, coding {}; {} bytes written \
         to {}",
        ones,
        frame.coding(),
        wire.len(),
        shown(&args.output)
    ));
    Ok(())
}

/// The bits file's bytes: exactly ceil(m / 8) of them. A regular file of another length is
/// refused before it is read, a directory as one, and a stream (standard input, a pipe, a
/// device) once it has given one byte too many or ended short.
fn read_bits(args: &WrapArgs, name: &str) -> Result<Vec<u8>> {
    let want = args.m.div_ceil(8);
    let wrong = |len: String| {
        Failure(format!(
            "{name}: {len} bytes, but m = {} bits are {want} bytes packed (ceil(m / 8))",
            args.m
        ))
    };
    let stream: Box<dyn Read> = if is_std(&args.bits) {
        Box::new(std::io::stdin().lock())
    } else {
        let file = std::fs::File::open(&args.bits).context(name)?;
        let metadata = file.metadata().context(name)?;
        if metadata.is_dir() {
            return Err(Failure(format!("{name}: is a directory")));
        }
        if metadata.is_file() && metadata.len() != want {
            return Err(wrong(metadata.len().to_string()));
        }
        Box::new(file)
    };
    let mut bytes = Vec::new();
    stream
        .take(want.saturating_add(1))
        .read_to_end(&mut bytes)
        .context(name)?;
    match (bytes.len() as u64).cmp(&want) {
        std::cmp::Ordering::Greater => Err(wrong(format!("more than {want}"))),
        std::cmp::Ordering::Less => Err(wrong(bytes.len().to_string())),
        std::cmp::Ordering::Equal => Ok(bytes),
    }
}

/// The bit array of `m` bits packed in `bytes` (spec section 1), its words allocated
/// fallibly.
fn unpack(bytes: &[u8], m: u64) -> bloomwire::Result<BitArray> {
    let len = m.div_ceil(64);
    let failed = || Error::AllocationFailed {
        bytes: len.saturating_mul(8),
    };
    let mut words = Vec::new();
    words
        .try_reserve_exact(usize::try_from(len).map_err(|_| failed())?)
        .map_err(|_| failed())?;
    for chunk in bytes.chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        words.push(u64::from_le_bytes(word));
    }
    // Refuses one bits past m ("bits past the end are not zero").
    BitArray::from_words(words, m)
}
