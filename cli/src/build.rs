//! `bloomwire build`: keys in, frame out.

use std::path::{Path, PathBuf};

use bloomwire::format::{metadata_len, TAG_LEN};
use bloomwire::optimizer::LayoutKind;
use bloomwire::{
    theory, AnyFilter, BaseHash, BitCoding, BloomFilter, CountingBloomFilter, Frame, HashCount,
    HashFamily, IndexScheme, Layout, Optimizer, Params,
};
use clap::ValueEnum;
use serde_json::{json, Value};

use crate::coding_options::{note_changes, ChunkArg, CodingArg, CodingOption};
use crate::keys::{self, KeySource};
use crate::options::{ForceArg, KeyArg, MetadataArg};
use crate::output::{check_output, is_std, note, shown, write_output, write_stdout};
use crate::progress::Progress;
use crate::{limits, parse_hex, Coder, Context, Failure, Result};

/// Build a filter from a file of keys and write it as a frame.
///
/// The keys file holds one key per line, as bytes (not necessarily UTF-8). Lines end with
/// `\n`, and a `\r` before it is removed; the newline after the last line is optional.
/// Every line is a key, an empty line too (the empty key), and duplicates count: n is the
/// number of lines. With --binary-keys the file is length-prefixed records instead (a
/// 4-byte little-endian length, then the key). A file of lines that looks binary (a NUL
/// byte, or one line in ten not UTF-8) is read all the same, with a warning on stderr. A
/// key is at most 1 MiB (1048576 bytes): a longer line or record is an error naming it.
///
/// m and k are planned for n keys and --fpr (0.01 by default) or --budget-bytes, within
/// --max-m and --max-k; or given with --m and --k. A filter larger than the machine can
/// hold is an error, not an abort.
///
/// The keys are never held in memory. Planning needs n first: a regular file is then read
/// twice, to count the keys and to insert them; standard input (`-`), a pipe, a FIFO or a
/// device is read once, counted as it is copied into a temporary file (in TMPDIR, or
/// /tmp; removed at once, so nothing is left behind), which the second pass reads. With
/// --m and --k nothing needs counting: any input is read once, its keys inserted as they
/// come, and nothing is kept. On a terminal, inputs of 1 MiB or more show a progress bar
/// on stderr (a stream, a spinner).
///
/// A summary line goes to stderr (or, with --json, one JSON object to stdout, to stderr
/// when the frame goes to stdout with `-o -`).
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
    /// Plan for the lowest false positive rate in a frame of at most this many bytes (the
    /// tag and the metadata included).
    #[arg(long, value_name = "Z")]
    budget_bytes: Option<u64>,
    /// Largest m/n, the memory the receiver gives the decoded filter per key.
    #[arg(long, value_name = "R")]
    max_bits_per_element: Option<f64>,
    /// Largest memory of the decoded filter, `ceil(m/8)` bytes at the receiver, as
    /// `plan --max-memory` takes it (for a counting filter: its counters, a byte each).
    #[arg(long, value_name = "BYTES")]
    max_memory: Option<u64>,
    /// Use m bits (or counters) instead of planning: with --k, not with --fpr,
    /// --budget-bytes, --max-bits-per-element or --max-memory. At most --max-m.
    #[arg(long, value_name = "M", requires = "k", conflicts_with_all = ["fpr", "budget_bytes", "max_bits_per_element", "max_memory"])]
    m: Option<u64>,
    /// Use k hash functions (1 to 1024, a multiple of 1/65536: 2.5 is allowed) with --m.
    /// At most --max-k, rounded up.
    #[arg(long, value_name = "K", requires = "m")]
    k: Option<f64>,
    /// How the bits are divided among the hash functions: one array (filter type 0),
    /// ceil(k) equal partitions, one per hash function (type 1), or power-of-two blocks
    /// (type 2): m is split into one block per binary digit of m, largest first (m =
    /// 1 000 000 gives blocks of 2^19, 2^18, ... bits), each with a share of k proportional
    /// to its size, k_j = k m_j / m (rounded to 1/65536).
    #[arg(long, value_enum, default_value_t = LayoutArg::Standard)]
    layout: LayoutArg,
    /// Build a counting filter with counters of BITS bits (1 to 8), which supports
    /// removing keys (`update --remove`); the frame is then filter type 3 (counters of a
    /// filter of the chosen layout). Counters saturate at 2^BITS - 1. The decoded filter
    /// takes m bytes.
    #[arg(long, value_name = "BITS", value_parser = clap::value_parser!(u8).range(1..=8))]
    counting: Option<u8>,
    #[command(flatten)]
    coding: CodingOption,
    #[command(flatten)]
    chunks: ChunkArg,
    /// Seed of the xxHash64 hash family.
    #[arg(long, value_name = "S", conflicts_with = "siphash_key")]
    seed: Option<u64>,
    /// Use keyed SipHash-2-4 with this 128-bit key (32 hex digits), for keys chosen by peers
    /// you do not trust. (It chooses where a key's bits are; it is not the key of
    /// --key-file, which authenticates frames.)
    #[arg(long, value_name = "HEX32", value_parser = parse_siphash_key)]
    siphash_key: Option<[u8; 16]>,
    /// The generation number the frame carries (0, unnumbered, by default); `diff` and
    /// `apply` number deltas from it.
    #[arg(long, value_name = "G", default_value_t = 0)]
    generation: u64,
    /// Set the restart flag (spec 5.2): a receiver applies the frame whatever generation
    /// it holds, and numbers from it. A sender sets it on its first frame and on the full
    /// frames it sends to resynchronize receivers.
    #[arg(long)]
    restart: bool,
    #[command(flatten)]
    key: KeyArg,
    #[command(flatten)]
    metadata: MetadataArg,
    /// Print the summary as one JSON object, on stdout (on stderr when the frame goes to
    /// stdout). n and the generation are decimal strings, like every value of the
    /// program's JSON that may exceed 2^53; the others are numbers.
    #[arg(long)]
    json: bool,
    /// Where to write the frame [default: FILE.blwr]; `-` for stdout.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    #[command(flatten)]
    force: ForceArg,
}

/// The `--layout` choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LayoutArg {
    Standard,
    Partitioned,
    Blocks,
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
    if is_std(keys) && args.output.is_none() {
        crate::usage_error("--keys -: name the output with -o FILE (or -o - for stdout)");
    }
    args.coding.check_args(args.chunks);
    let coding = args
        .coding
        .for_filter(args.chunks, args.counting.is_some())?;
    let output = match &args.output {
        Some(path) => path.clone(),
        None => {
            let mut name = keys.as_os_str().to_owned();
            name.push(".blwr");
            PathBuf::from(name)
        }
    };
    check_output(&output, args.force.force)?;
    let key = args.key.load()?;
    let metadata = args.metadata.load()?.or(None);
    // What the frame carries besides the filter, which a budget must leave room for.
    let extras = key.as_ref().map_or(0, |_| TAG_LEN) + metadata.as_deref().map_or(0, metadata_len);
    let explicit = match (args.m, args.k) {
        (Some(m), Some(k)) => Some(explicit_params(m, k, args.layout, family)?),
        _ => None,
    };

    let mut source = KeySource::open(keys)?;
    // A stream's length is not known: a spinner rather than a bar, on a terminal.
    let mut progress = Progress::for_input(source.len().unwrap_or(crate::progress::FROM_BYTES));

    // Planning needs n before the first insert: a pass that counts the keys, keeping a
    // stream in a temporary file for the second. Given m and k, one pass inserts them.
    let counted = if explicit.is_none() {
        progress.stage("reading keys", source.len(), "bytes");
        let (mut bytes, mut shown_at) = (0, 0);
        let stats = source.for_each_key_keeping(args.format, |key| {
            // The line's bytes and its newline (a `\r` or a record's length prefix aside).
            bytes += key.len() as u64 + 1;
            if bytes - shown_at >= PROGRESS_EVERY {
                progress.set(bytes);
                shown_at = bytes;
            }
        })?;
        progress.finish();
        if stats.keys == 0 {
            return Err(Failure(format!("{}: no keys", source.name())));
        }
        Some(stats)
    } else {
        None
    };
    let n = counted.map_or(0, |stats| stats.keys);

    let budget = args
        .budget_bytes
        .map(|b| {
            b.checked_sub(extras as u64).ok_or_else(|| {
                Failure(format!(
                    "--budget-bytes {b}: the tag and the metadata alone take {extras} bytes"
                ))
            })
        })
        .transpose()?;
    let layout = match args.layout {
        LayoutArg::Standard => LayoutKind::Standard,
        LayoutArg::Partitioned => LayoutKind::Partitioned,
        LayoutArg::Blocks => LayoutKind::Blocks,
    };
    let mut filter = match (args.counting, explicit) {
        (None, Some(params)) => {
            AnyFilter::Bloom(BloomFilter::try_new(params).context("cannot make the filter")?)
        }
        (Some(width), Some(params)) => AnyFilter::Counting(
            CountingBloomFilter::new(params, width).context("cannot make the filter")?,
        ),
        (None, None) => {
            let mut optimizer = crate::plan::optimizer(n, args.max_bits_per_element)?
                .family(family)
                .layout(layout);
            if let Some(bytes) = args.max_memory {
                optimizer = optimizer.max_memory(bytes);
            }
            if coding == CodingArg::Bits(BitCoding::Raw) {
                // A raw frame carries ceil(m/8) bytes: plan the uncompressed filter, not
                // a sparse one sized for a coder.
                optimizer = optimizer.coding(BitCoding::Raw);
            }
            let plan = match budget {
                Some(budget) => optimizer.plan(n, budget),
                None => optimizer.plan_for_fpr(n, args.fpr.unwrap_or(0.01)),
            }
            .map_err(crate::plan::with_option)
            .context("cannot plan the filter")?;
            AnyFilter::Bloom(BloomFilter::try_new(plan.params).context("cannot make the filter")?)
        }
        (Some(width), None) => {
            let mut optimizer = crate::plan::optimizer(n, args.max_bits_per_element)?
                .family(family)
                .layout(layout);
            if let Some(bytes) = args.max_memory {
                optimizer = optimizer.max_memory(bytes);
            }
            let params = plan_counting(&optimizer, n, width, budget, args.fpr)?;
            AnyFilter::Counting(
                CountingBloomFilter::new(params, width).context("cannot make the filter")?,
            )
        }
    };

    progress.stage("inserting keys", counted.map(|_| n), "keys");
    let mut inserted = 0;
    let stats = source.for_each_key(args.format, |key| {
        filter.insert(key);
        inserted += 1;
        if inserted % PROGRESS_EVERY == 0 {
            progress.set(inserted);
        }
    })?;
    if let Some(warning) = stats.warning(&source.name(), args.format) {
        note(warning);
    }
    if inserted == 0 {
        return Err(Failure(format!("{}: no keys", source.name())));
    }
    if counted.is_some() && inserted != n {
        // A regular file that changed between the two passes: the plan is for other keys.
        return Err(Failure(format!(
            "{}: changed while it was read ({n} keys, then {inserted})",
            source.name()
        )));
    }
    let n = inserted;

    progress.stage("encoding", None, "");
    let coder = Coder {
        budget: args.budget_bytes,
        metadata,
        key,
        ..Coder::new(coding, args.chunks.chunking(), args.coding.profile)
    };
    let frame = coder
        .encode(&filter, args.generation)
        .and_then(|f| f.with_restart(args.restart))
        .context("cannot encode the filter")?;
    let bytes = frame.to_bytes();
    progress.finish();
    write_output(&output, &bytes, args.force.force)?;

    note_changes(coding, args.chunks, &frame);
    let summary = Summary {
        keys: source.name(),
        n,
        filter: &filter,
        frame: &frame,
        bytes: bytes.len(),
        output: &output,
    };
    if args.json {
        let mut text = summary.json(coding).to_string();
        text.push('\n');
        if is_std(&output) {
            eprint!("{text}");
        } else {
            write_stdout(text.as_bytes())?;
        }
    } else {
        note(summary.text());
    }
    Ok(())
}

/// What `build` made, for its summary.
struct Summary<'a> {
    keys: String,
    n: u64,
    filter: &'a AnyFilter,
    frame: &'a Frame,
    bytes: usize,
    output: &'a Path,
}

impl Summary<'_> {
    fn text(&self) -> String {
        let params = self.filter.params();
        let (m, what) = match self.filter {
            AnyFilter::Bloom(f) => (f.m(), "bits".to_string()),
            AnyFilter::Counting(f) => (f.params().m(), format!("counters of {} bits", f.width())),
        };
        let n = self.n;
        format!(
            "{}: {n} keys; m = {m} {what}, k = {}, layout {}, coding {}; {} bytes written to {} \
             ({:.3} bits per key); expected false positive rate {:.4}",
            self.keys,
            params.k(),
            crate::inspect::layout_name(params.layout()),
            self.frame.coding(),
            self.bytes,
            shown(self.output),
            8.0 * self.bytes as f64 / n as f64,
            theory::false_positive_rate(params, n as f64),
        )
    }

    fn json(&self, asked: CodingArg) -> Value {
        let params = self.filter.params();
        let header = self.frame.header();
        let n = self.n;
        json!({
            "keys": self.keys,
            "n": n.to_string(),
            "filter_type": if self.filter.is_counting() {
                "counting"
            } else {
                crate::inspect::layout_name(params.layout())
            },
            "counted_type": self.filter.is_counting().then(|| crate::inspect::layout_name(params.layout())),
            "counter_width": header.counter_width,
            "m": params.m(),
            "k": params.k().to_f64(),
            "coding": self.frame.coding().to_string(),
            "coding_asked": asked.asked().map(|c| c.to_string()),
            "generation": header.generation.to_string(),
            "restart": header.restart,
            "tagged": header.tag != bloomwire::Tag::Absent,
            "metadata_bytes": header.metadata.as_ref().map(Vec::len),
            "frame_bytes": self.bytes,
            "output": if is_std(self.output) { "-".to_string() } else { self.output.display().to_string() },
            "bits_per_key": 8.0 * self.bytes as f64 / n as f64,
            "false_positive_rate": theory::false_positive_rate(params, n as f64),
        })
    }
}

/// The parameters of `--m` and `--k`, within the limits.
fn explicit_params(m: u64, k: f64, layout: LayoutArg, family: HashFamily) -> Result<Params> {
    let limits = limits();
    if m > limits.max_m {
        return Err(Failure(format!(
            "--m {m}: above --max-m {}; raise --max-m (receivers need the same limit)",
            limits.max_m
        )));
    }
    let k = HashCount::from_f64(k).context(format!("--k {k}"))?;
    if k.ceil() > limits.max_k {
        return Err(Failure(format!(
            "--k {k}: above --max-k {}; raise --max-k (receivers need the same limit)",
            limits.max_k
        )));
    }
    let layout = match layout {
        LayoutArg::Standard => Layout::Standard { k },
        LayoutArg::Partitioned => Layout::Partitioned { k },
        LayoutArg::Blocks => Layout::blocks_proportional(m, k).context("--layout blocks")?,
    };
    Params::new(m, layout, family).context("--m and --k")
}

/// The parameters of a counting filter of n keys with counters of `width` bits: the lowest
/// false positive rate within `budget` bytes, or the smallest budget (found by bisection,
/// to 0.1%) whose plan reaches `fpr`.
fn plan_counting(
    optimizer: &Optimizer,
    n: u64,
    width: u8,
    budget: Option<u64>,
    fpr: Option<f64>,
) -> Result<Params> {
    if let Some(budget) = budget {
        let plan = optimizer
            .plan_counting(n, width, budget)
            .context("cannot plan the counting filter")?;
        return Ok(plan.params);
    }
    let target = fpr.unwrap_or(0.01);
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
    let largest = limits().max_m.saturating_mul(u64::from(width)) / 8 + 4096;
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
                limits().max_m
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
