//! `bloomwire build`: keys in, frame out.

use std::path::{Path, PathBuf};

use bloomwire::optimizer::LayoutKind;
use bloomwire::{
    theory, BaseHash, BitCoding, BloomFilter, Chunking, CountingBloomFilter, HashFamily,
    IndexScheme, Optimizer, Params,
};
use clap::ValueEnum;

use crate::keys::{self, KeySource};
use crate::progress::Progress;
use crate::{parse_hex, write_output, Context, Failure, Result};
use bloomwire::AnyFilter;

/// Build a filter from a file of keys and write it as a frame.
///
/// The keys file holds one key per line, as bytes (not necessarily UTF-8). Lines end with
/// `\n`, and a `\r` before it is removed; the newline after the last line is optional.
/// Every line is a key, an empty line too (the empty key), and duplicates count: n is the
/// number of lines. With --binary-keys the file is length-prefixed records instead (a
/// 4-byte little-endian length, then the key). A file of lines that looks binary (a NUL
/// byte, or one line in ten not UTF-8) is read all the same, with a warning on stderr.
///
/// A regular file is read twice, to count the keys and then to insert them, and is never
/// held in memory; standard input (`-`), a pipe, a FIFO or a device is read once into
/// memory. On a terminal, inputs of 1 MiB or more show a progress bar on stderr.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The keys file, one key per line; `-` for standard input (then `-o` is required).
    #[arg(long, value_name = "FILE")]
    keys: PathBuf,
    #[command(flatten)]
    format: keys::Format,
    /// Plan for this false positive rate, in the fewest bytes [default: 0.01].
    #[arg(long, value_name = "F", conflicts_with = "budget_bytes")]
    fpr: Option<f64>,
    /// Plan for the lowest false positive rate in a frame of at most this many bytes.
    #[arg(long, value_name = "Z")]
    budget_bytes: Option<u64>,
    /// Largest m/n, the memory the receiver gives the decoded filter per key.
    #[arg(long, value_name = "R")]
    max_bits_per_element: Option<f64>,
    /// How the bits are divided among the hash functions: one array (filter type 0),
    /// ceil(k) equal partitions, one per hash function (type 1), or power-of-two blocks
    /// (type 2): m is split into one block per binary digit of m, largest first (m =
    /// 1 000 000 gives blocks of 2^19, 2^18, ... bits), each with a share of k proportional
    /// to its size, k_j = k m_j / m (rounded to 1/65536).
    #[arg(long, value_enum, default_value_t = LayoutArg::Standard)]
    layout: LayoutArg,
    /// Build a counting filter with counters of BITS bits (1 to 8), which supports
    /// removing keys; the frame is then filter type 3 (counters of a filter of the chosen
    /// layout). Counters saturate at 2^BITS - 1. The decoded filter takes m bytes.
    #[arg(long, value_name = "BITS", value_parser = clap::value_parser!(u8).range(1..=8))]
    counting: Option<u8>,
    /// How to code the bit array (raw is used whenever it is smaller). A counting filter
    /// takes auto (the smaller of known and adaptive counters) or raw (packed counters).
    #[arg(long, value_enum, default_value_t = CodingArg::Auto)]
    coding: CodingArg,
    #[command(flatten)]
    chunks: ChunkArg,
    /// Seed of the xxHash64 hash family.
    #[arg(long, value_name = "S", conflicts_with = "siphash_key")]
    seed: Option<u64>,
    /// Use keyed SipHash-2-4 with this 128-bit key (32 hex digits), for keys chosen by peers
    /// you do not trust.
    #[arg(long, value_name = "HEX32", value_parser = parse_siphash_key)]
    siphash_key: Option<[u8; 16]>,
    /// The generation number the frame carries (0, unnumbered, by default); `diff` and
    /// `apply` number deltas from it.
    #[arg(long, value_name = "G", default_value_t = 0)]
    generation: u64,
    /// Where to write the frame [default: FILE.blwr]; `-` for stdout.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
}

/// The `--chunk-shift` option of the commands that write frames.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct ChunkArg {
    /// Code the bits in independently decodable chunks of 2^S bits (S in 6..=47), so that
    /// `query` decodes only the chunks its keys need, or `never`. By default filters of
    /// 2^26 bits or more are chunked, in chunks of at least 2^20 bits whose coded size is
    /// about 128 KiB; smaller ones are not. Raw and counting frames are never chunked.
    #[arg(long, value_name = "S", value_parser = parse_chunking, default_value = "auto")]
    chunk_shift: Chunking,
}

impl ChunkArg {
    /// The encoder's chunking.
    pub fn chunking(self) -> Chunking {
        self.chunk_shift
    }
}

fn parse_chunking(s: &str) -> Result<Chunking, String> {
    match s {
        "auto" => Ok(Chunking::Auto),
        "never" => Ok(Chunking::Never),
        _ => match s.parse::<u8>() {
            Ok(shift) if (6..=47).contains(&shift) => Ok(Chunking::Shift(shift)),
            _ => Err("expected auto, never or a shift from 6 to 47".into()),
        },
    }
}

/// The `--layout` choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LayoutArg {
    Standard,
    Partitioned,
    Blocks,
}

/// The `--coding` choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CodingArg {
    /// The fastest coding within 0.08% + 6 bytes of the smallest, predicted from counts.
    Auto,
    Raw,
    Adaptive,
    KnownP,
    KnownPSymbols,
    KnownPInterleaved,
    Positional,
    Dense,
    Small,
}

fn parse_siphash_key(s: &str) -> Result<[u8; 16], String> {
    parse_hex(s)
        .and_then(|bytes| bytes.try_into().ok())
        .ok_or_else(|| "expected 32 hexadecimal digits".into())
}

/// Keys (or bytes, while reading) between progress updates.
const PROGRESS_EVERY: u64 = 1 << 16;

pub fn run(args: &Args) -> Result<()> {
    let family = match (args.siphash_key, args.seed) {
        (Some(key), _) => HashFamily::new(BaseHash::siphash(key), IndexScheme::default()),
        (None, seed) => HashFamily::new(
            BaseHash::Xxh64 {
                seed: seed.unwrap_or(0),
            },
            IndexScheme::default(),
        ),
    };
    let keys = &args.keys;
    if keys == Path::new("-") && args.output.is_none() {
        return Err(Failure::new(
            "--keys -: name the output with -o FILE (or -o - for stdout)",
        ));
    }
    if args.counting.is_some() && !matches!(args.coding, CodingArg::Auto | CodingArg::Raw) {
        return Err(Failure::new(
            "--coding: a counting filter is coded auto (known or adaptive counters) or raw",
        ));
    }
    let source = KeySource::open(keys)?;
    let mut progress = Progress::for_input(source.len());

    progress.stage("reading keys", Some(source.len()), "bytes");
    let (mut bytes, mut shown) = (0, 0);
    let stats = keys::for_each_key(&source, args.format, |key| {
        // The line's bytes and its newline (a `\r` or a record's length prefix aside).
        bytes += key.len() as u64 + 1;
        if bytes - shown >= PROGRESS_EVERY {
            progress.set(bytes);
            shown = bytes;
        }
    })?;
    progress.finish();
    let n = stats.keys;
    if let Some(warning) = stats.warning(&source.name(), args.format) {
        eprintln!("{warning}");
    }
    if n == 0 {
        return Err(Failure(format!("{}: no keys", source.name())));
    }

    let layout = match args.layout {
        LayoutArg::Standard => LayoutKind::Standard,
        LayoutArg::Partitioned => LayoutKind::Partitioned,
        LayoutArg::Blocks => LayoutKind::Blocks,
    };
    let mut optimizer = crate::plan::optimizer(n, args.max_bits_per_element)?
        .family(family)
        .layout(layout);
    if args.coding == CodingArg::Raw {
        // A raw frame carries ceil(m/8) bytes: plan the uncompressed filter, not a sparse
        // one sized for a coder.
        optimizer = optimizer.coding(BitCoding::Raw);
    }
    let mut filter = match args.counting {
        None => {
            let plan = match args.budget_bytes {
                Some(budget) => optimizer.plan(n, budget),
                None => optimizer.plan_for_fpr(n, args.fpr.unwrap_or(0.01)),
            }
            .map_err(crate::plan::with_option)
            .context("cannot plan the filter")?;
            AnyFilter::Bloom(BloomFilter::new(plan.params))
        }
        Some(width) => {
            let params = plan_counting(&optimizer, n, width, args)?;
            AnyFilter::Counting(
                CountingBloomFilter::new(params, width).context("cannot make the filter")?,
            )
        }
    };

    progress.stage("inserting keys", Some(n), "keys");
    let mut inserted = 0;
    keys::for_each_key(&source, args.format, |key| {
        filter.insert(key);
        inserted += 1;
        if inserted % PROGRESS_EVERY == 0 {
            progress.set(inserted);
        }
    })?;
    if inserted != n {
        // A regular file that changed between the two passes: the plan is for other keys.
        return Err(Failure(format!(
            "{}: changed while it was read ({n} keys, then {inserted})",
            source.name()
        )));
    }

    progress.stage("encoding", None, "");
    let frame = crate::encode(
        &filter,
        args.coding,
        args.chunks.chunking(),
        args.budget_bytes,
        args.generation,
    )
    .context("cannot encode the filter")?;
    let bytes = frame.to_bytes();
    progress.finish();

    let output = match &args.output {
        Some(path) => path.clone(),
        None => {
            let mut name = keys.as_os_str().to_owned();
            name.push(".blwr");
            PathBuf::from(name)
        }
    };
    write_output(&output, &bytes)?;

    let params = filter.params();
    let (m, what) = match &filter {
        AnyFilter::Bloom(f) => (f.m(), "bits".to_string()),
        AnyFilter::Counting(f) => (f.params().m(), format!("counters of {} bits", f.width())),
    };
    eprintln!(
        "{}: {n} keys; m = {m} {what}, k = {}, layout {}, coding {}; {} bytes written to {} \
         ({:.3} bits per key); expected false positive rate {:.4}",
        source.name(),
        params.k(),
        crate::inspect::layout_name(params.layout()),
        frame.coding(),
        bytes.len(),
        if output == Path::new("-") {
            "stdout".into()
        } else {
            output.display().to_string()
        },
        8.0 * bytes.len() as f64 / n as f64,
        theory::false_positive_rate(params, n as f64),
    );
    Ok(())
}

/// The parameters of a counting filter of n keys with counters of `width` bits: the lowest
/// false positive rate within `--budget-bytes`, or the smallest budget (found by bisection,
/// to 0.1%) whose plan reaches `--fpr`.
fn plan_counting(optimizer: &Optimizer, n: u64, width: u8, args: &Args) -> Result<Params> {
    if let Some(budget) = args.budget_bytes {
        let plan = optimizer
            .plan_counting(n, width, budget)
            .context("cannot plan the counting filter")?;
        return Ok(plan.params);
    }
    let target = args.fpr.unwrap_or(0.01);
    if !(target > 0.0 && target < 1.0) {
        return Err(Failure(format!("--fpr {target}: must be in (0, 1)")));
    }
    let reaches = |budget: u64| {
        optimizer
            .plan_counting(n, width, budget)
            .ok()
            .filter(|plan| plan.false_positive_rate <= target)
    };
    // The packed counters of the largest m allowed bound every frame the planner makes.
    let largest = crate::limits().max_m.saturating_mul(u64::from(width)) / 8 + 4096;
    let mut hi = (n / 4).max(64);
    let mut best = loop {
        if let Some(plan) = reaches(hi) {
            break plan;
        }
        if hi > largest {
            return Err(Failure(format!(
                "cannot plan the counting filter: no filter of at most {} counters of {width} \
                 bits reaches a false positive rate of {target} for {n} keys; raise --max-m \
                 or --max-bits-per-element",
                crate::limits().max_m
            )));
        }
        hi *= 2;
    };
    let mut lo = hi / 2;
    while hi - lo > (hi / 1000).max(1) {
        let mid = lo + (hi - lo) / 2;
        match reaches(mid) {
            Some(plan) => {
                best = plan;
                hi = mid;
            }
            None => lo = mid,
        }
    }
    Ok(best.params)
}

impl CodingArg {
    /// The coding of bits, `None` for auto.
    pub fn coding(self) -> Option<BitCoding> {
        match self {
            CodingArg::Auto => None,
            CodingArg::Raw => Some(BitCoding::Raw),
            CodingArg::Adaptive => Some(BitCoding::Adaptive),
            CodingArg::KnownP => Some(BitCoding::KnownP),
            CodingArg::KnownPSymbols => Some(BitCoding::KnownPSymbols),
            CodingArg::KnownPInterleaved => Some(BitCoding::KnownPInterleaved),
            CodingArg::Positional => Some(BitCoding::Positional),
            CodingArg::Dense => Some(BitCoding::Dense),
            CodingArg::Small => Some(BitCoding::Small),
        }
    }
}
