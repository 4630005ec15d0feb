//! `bloomwire`: build, inspect, query, update, diff and plan compressed Bloom filter frames.
//!
//! Every subcommand prints what it was asked for on stdout (or to `-o`), notes on stderr
//! (silenced by `--quiet`), and reports a failure as one line `bloomwire: <message>` on
//! stderr with exit status 1 (2 for usage errors; `query` answers like grep: 0, 1, or 2 for
//! an error).

use std::fmt::Display;
use std::process::ExitCode;
use std::sync::OnceLock;

use bloomwire::filter::rational::MAX_K;
use bloomwire::filter::MAX_M;
use bloomwire::{
    AnyFilter, Chunking, CountingBloomFilter, Encoder, Frame, FrameKey, Limits, Profile,
};
use clap::{Parser, Subcommand};

mod build;
mod coding_options;
mod conform;
mod delta;
mod frames;
mod inspect;
mod keys;
mod options;
mod output;
mod packed;
mod plan;
mod progress;
mod query;
mod update;

/// Compressed Bloom filters on the wire.
#[derive(Debug, Parser)]
#[command(name = "bloomwire", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The largest m, in bits (or counters), of a frame the program reads or a filter it
    /// makes: 2^28 unless raised. A decoded filter takes ceil(m / 8) bytes (a counting
    /// filter m bytes), and decoding it at most twice that plus the file; a frame that
    /// declares more than the machine can hold is an error.
    #[arg(long, global = true, help_heading = "Global options", value_name = "BITS", default_value_t = Limits::default().max_m, value_parser = clap::value_parser!(u64).range(1..=MAX_M))]
    max_m: u64,
    /// The largest decoded filter, in bytes, of a frame the program reads: ceil(m / 8) for a
    /// Bloom filter, m for a counting filter (a byte a counter). By default ceil(max_m / 8),
    /// so that a counting frame costs no more than a Bloom frame (2^25 counters).
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        value_name = "BYTES"
    )]
    max_filter_bytes: Option<u64>,
    /// The largest k (hash functions, rounded up) of a frame the program reads or a filter
    /// it makes: 64 unless raised (at most 1024, the format's).
    #[arg(long, global = true, help_heading = "Global options", value_name = "K", default_value_t = Limits::default().max_k, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_K)))]
    max_k: u32,
    /// The largest payload, in bytes, of a frame the program reads: 2^26 unless raised.
    /// Inputs longer than the largest frame the limits allow (header with metadata,
    /// payload, checksum and tag) are refused before they are read whole.
    #[arg(long, global = true, help_heading = "Global options", value_name = "BYTES", default_value_t = Limits::default().max_payload)]
    max_payload: u64,
    /// The largest application metadata field, in bytes, of a frame the program reads or
    /// writes: 4096 unless raised.
    #[arg(long, global = true, help_heading = "Global options", value_name = "BYTES", default_value_t = Limits::default().max_metadata)]
    max_metadata: u64,
    /// No notes, warnings or progress bars on stderr (errors are still reported, in one
    /// line).
    #[arg(short, long, global = true, help_heading = "Global options")]
    quiet: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    Build(build::Args),
    /// Print every header field of a frame (tag, restart flag and metadata included), its
    /// checksum status and how well it compresses.
    Inspect(inspect::Args),
    Query(query::Args),
    Decode(packed::DecodeArgs),
    Wrap(packed::WrapArgs),
    Update(update::Args),
    /// Plan m and k for n keys and a byte budget or a false positive rate.
    Plan(plan::Args),
    Diff(delta::DiffArgs),
    Apply(delta::ApplyArgs),
    Conform(conform::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    output::set_quiet(cli.quiet);
    let limits = set_limits(&cli);
    if let Command::Query(args) = &cli.command {
        // grep's statuses: 0 every key may be present, 1 some key is not, 2 an error.
        let answer = limits.and_then(|()| query::run(args));
        let answer = answer.and_then(|a| output::close_stdout().map(|()| a));
        return match answer {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(1),
            Err(failure) => {
                eprintln!("bloomwire: {failure}");
                ExitCode::from(2)
            }
        };
    }
    let result = limits.and_then(|()| match &cli.command {
        Command::Build(args) => build::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Query(_) => unreachable!("answered above"),
        Command::Decode(args) => packed::decode(args),
        Command::Wrap(args) => packed::wrap(args),
        Command::Update(args) => update::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Diff(args) => delta::diff(args),
        Command::Apply(args) => delta::apply(args),
        Command::Conform(args) => conform::run(args),
    });
    let result = result.and_then(|()| output::close_stdout());
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message)) => {
            eprintln!("bloomwire: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Exit with a usage error, as clap reports one (status 2): arguments that contradict each
/// other, found before any input is read.
pub fn usage_error(message: impl Display) -> ! {
    use clap::CommandFactory;
    Cli::command()
        .error(clap::error::ErrorKind::ArgumentConflict, message)
        .exit()
}

/// A runtime failure, as the one line printed for it.
#[derive(Debug)]
pub struct Failure(String);

impl Failure {
    /// A failure with this message.
    pub fn new(message: impl Display) -> Self {
        Failure(message.to_string())
    }
}

impl Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Results of the subcommands.
pub type Result<T, E = Failure> = std::result::Result<T, E>;

/// Prefixes an error with what was being done, `what: error`.
pub trait Context<T> {
    /// Turn the error into a [`Failure`] that starts with `what`.
    fn context(self, what: impl Display) -> Result<T>;
}

impl<T, E: Display> Context<T> for Result<T, E> {
    fn context(self, what: impl Display) -> Result<T> {
        self.map_err(|e| Failure(format!("{what}: {e}")))
    }
}

/// What the program accepts when it reads a frame: the library's [`Limits::default()`]
/// (m up to 2^28 bits or counters, k up to 64, payloads up to 2^26 bytes, metadata up to
/// 4096 bytes) unless raised by `--max-m`, `--max-k`, `--max-payload`, `--max-metadata`
/// and `--max-filter-bytes`. Memory: a decoded filter takes at most `ceil(max_m / 8)` bytes
/// (32 MiB by default), a Bloom filter of `max_m` bits or a counting filter of a counter a
/// byte, unless `--max-filter-bytes` says otherwise; decoding one peaks at twice
/// that, plus the input, which is at most [`frames::max_frame_len`] and is refused unread
/// when longer. `build` and `plan` plan within the same limits, so every frame they write
/// can be read back.
static LIMITS: OnceLock<Limits> = OnceLock::new();

fn set_limits(cli: &Cli) -> Result<()> {
    // --max-m and --max-k are within the format's (1..=MAX_M, 1..=MAX_K): clap checks them.
    let mut limits = Limits::new()
        .max_m(cli.max_m)
        .max_k(cli.max_k)
        .max_payload(cli.max_payload)
        .max_metadata(cli.max_metadata);
    if let Some(bytes) = cli.max_filter_bytes {
        limits = limits.max_filter_bytes(bytes);
    }
    LIMITS.set(limits).expect("set once, before any command");
    Ok(())
}

/// The limits the program reads frames with (see [`LIMITS`]).
pub fn limits() -> Limits {
    *LIMITS.get_or_init(Limits::default)
}

/// How a command codes the frames it writes.
pub struct Coder {
    /// The coding asked for.
    pub coding: coding_options::CodingArg,
    /// Chunks of a Bloom filter's payload.
    pub chunking: Chunking,
    /// A frame size not to exceed.
    pub budget: Option<u64>,
    /// The application metadata field.
    pub metadata: Option<Vec<u8>>,
    /// The authentication key.
    pub key: Option<FrameKey>,
    /// The codings the encoder may write (`--profile`).
    pub profile: Profile,
}

impl Coder {
    /// A coder of `coding` and `chunking` (checked by [`coding_options::CodingOption::for_filter`])
    /// within `profile`, nothing else.
    pub fn new(coding: coding_options::CodingArg, chunking: Chunking, profile: Profile) -> Self {
        Coder {
            coding,
            chunking,
            profile,
            budget: None,
            metadata: None,
            key: None,
        }
    }

    /// A full frame of `filter` carrying `generation`: the coding and chunking for a Bloom
    /// filter (for a counting filter auto or raw, never chunked), within the budget, with
    /// the metadata and the key's tag.
    pub fn encode(&self, filter: &AnyFilter, generation: u64) -> bloomwire::Result<Frame> {
        match filter {
            AnyFilter::Bloom(f) => self.bloom_encoder().encode_generation(f, generation),
            AnyFilter::Counting(f) => self.counting_encoder().encode_generation(f, generation),
        }
    }

    /// The encoder of Bloom filters.
    pub fn bloom_encoder(&self) -> Encoder {
        let mut encoder = Encoder::new().chunking(self.chunking);
        if let Some(coding) = self.coding.coding() {
            encoder = encoder.coding(coding);
        }
        self.common(encoder)
    }

    /// The encoder of counting filters.
    pub fn counting_encoder(&self) -> Encoder<CountingBloomFilter> {
        let mut encoder = Encoder::<CountingBloomFilter>::new();
        if let Some(coding) = self.coding.counter_coding() {
            encoder = encoder.coding(coding);
        }
        self.common(encoder)
    }

    fn common<F: bloomwire::Filter>(&self, encoder: Encoder<F>) -> Encoder<F> {
        let mut encoder = encoder.profile(self.profile);
        if let Some(budget) = self.budget {
            encoder = encoder.budget(usize::try_from(budget).unwrap_or(usize::MAX));
        }
        if let Some(metadata) = &self.metadata {
            encoder = encoder.metadata(metadata.clone());
        }
        if let Some(key) = &self.key {
            encoder = encoder.key(key.clone());
        }
        encoder
    }
}

/// Bytes from hexadecimal digits (an even number of them, either case).
pub fn parse_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16);
    s.as_bytes()
        .chunks(2)
        .map(|pair| Some((digit(pair[0])? << 4 | digit(pair[1])?) as u8))
        .collect()
}

/// Lowercase hexadecimal digits of bytes.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
