//! `bloomwire`: build, inspect, query and plan compressed Bloom filter frames.
//!
//! Every subcommand prints what it was asked for on stdout (or to `-o`), notes on stderr,
//! and reports a failure as one line `bloomwire: <message>` on stderr with exit status 1
//! (2 for usage errors).

use std::fmt::Display;
use std::fs::File;
use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::OnceLock;

use bloomwire::filter::MAX_M;
use bloomwire::format::{CHECKSUM_LEN, MAX_HEADER_LEN};
use bloomwire::{
    AnyFilter, Chunking, CounterCoding, CountingBloomFilter, Decoded, Encoder, Error, Frame,
    FrameHeader, Limits, Message,
};
use clap::{Parser, Subcommand};

mod build;
mod delta;
mod inspect;
mod keys;
mod plan;
mod progress;
mod query;

/// Compressed Bloom filters on the wire.
#[derive(Debug, Parser)]
#[command(name = "bloomwire", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The largest m, in bits (or counters), of a frame the program reads or a plan it
    /// makes: 2^28 unless raised. A decoded filter takes ceil(m / 8) bytes (a counting
    /// filter m bytes), and decoding it at most twice that plus the file.
    #[arg(long, global = true, value_name = "BITS", default_value_t = Limits::default().max_m)]
    max_m: u64,
    /// The largest payload, in bytes, of a frame the program reads: 2^26 unless raised.
    /// Larger files are refused before they are read whole.
    #[arg(long, global = true, value_name = "BYTES", default_value_t = Limits::default().max_payload)]
    max_payload: u64,
}

#[derive(Debug, Subcommand)]
enum Command {
    Build(build::Args),
    /// Print every header field of a frame, its checksum status and how well it compresses.
    Inspect(inspect::Args),
    Query(query::Args),
    /// Write the packed bit array of a frame (bit i is `bytes[i / 8] >> (i % 8) & 1`), or
    /// of a counting filter its packed counters (b bits each, from bit i*b).
    Decode(DecodeArgs),
    /// Plan m and k for n keys and a byte budget or a false positive rate.
    Plan(plan::Args),
    Diff(delta::DiffArgs),
    Apply(delta::ApplyArgs),
}

#[derive(Debug, clap::Args)]
struct DecodeArgs {
    /// The frame file.
    frame: PathBuf,
    /// Where to write the bits (`-` for stdout).
    #[arg(short, long, value_name = "BITS")]
    output: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = set_limits(cli.max_m, cli.max_payload);
    let result = result.and_then(|()| match cli.command {
        Command::Build(args) => build::run(&args),
        Command::Inspect(args) => inspect::run(&args),
        Command::Query(args) => query::run(&args),
        Command::Decode(args) => decode(&args),
        Command::Plan(args) => plan::run(&args),
        Command::Diff(args) => delta::diff(&args),
        Command::Apply(args) => delta::apply(&args),
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message)) => {
            eprintln!("bloomwire: {message}");
            ExitCode::FAILURE
        }
    }
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
/// (m up to 2^28 bits or counters, k up to 64, payloads up to 2^26 bytes) unless raised by
/// `--max-m` and `--max-payload`. Memory: a decoded filter takes at most `ceil(max_m / 8)`
/// bytes (32 MiB by default), a counting filter `max_m` bytes (256 MiB); decoding one peaks
/// at twice that, plus the file, which is at most `max_payload` plus a header of at most
/// [`MAX_HEADER_LEN`] bytes and is refused unread when longer. `build` and `plan`
/// plan within the same m, so every frame they write can be read back.
static LIMITS: OnceLock<Limits> = OnceLock::new();

fn set_limits(max_m: u64, max_payload: u64) -> Result<()> {
    if max_m == 0 || max_m > MAX_M {
        return Err(Failure(format!(
            "--max-m {max_m}: must be in 1..={MAX_M} (the format's largest m)"
        )));
    }
    let limits = Limits::new().max_m(max_m).max_payload(max_payload);
    LIMITS.set(limits).expect("set once, before any command");
    Ok(())
}

/// The limits the program reads frames with (see [`LIMITS`]).
pub fn limits() -> Limits {
    *LIMITS.get_or_init(Limits::default)
}

/// The contents of a frame file, refused without reading it whole when it is longer than
/// the largest frame the limits allow.
pub fn read_frame_file(path: &Path) -> Result<Vec<u8>> {
    let max = limits()
        .max_payload
        .saturating_add((MAX_HEADER_LEN + CHECKSUM_LEN) as u64);
    let file = File::open(path).context(path.display())?;
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .context(path.display())?;
    if bytes.len() as u64 > max {
        return Err(Failure(format!(
            "{}: longer than the largest frame with a payload of at most {} bytes; \
             raise --max-payload to read it",
            path.display(),
            limits().max_payload
        )));
    }
    Ok(bytes)
}

/// A full frame of `filter` carrying `generation`: `coding` and `chunking` for a Bloom filter
/// (for a counting filter auto or raw, never chunked), within `budget` bytes if given.
pub fn encode(
    filter: &AnyFilter,
    coding: build::CodingArg,
    chunking: Chunking,
    budget: Option<u64>,
    generation: u64,
) -> bloomwire::Result<Frame> {
    let budget = budget.map(|b| usize::try_from(b).unwrap_or(usize::MAX));
    match filter {
        AnyFilter::Bloom(f) => {
            let mut encoder = Encoder::new().chunking(chunking);
            if let Some(coding) = coding.coding() {
                encoder = encoder.coding(coding);
            }
            if let Some(budget) = budget {
                encoder = encoder.budget(budget);
            }
            encoder.encode_generation(f, generation)
        }
        AnyFilter::Counting(f) => {
            let mut encoder = Encoder::<CountingBloomFilter>::new();
            if coding == build::CodingArg::Raw {
                encoder = encoder.coding(CounterCoding::Raw);
            }
            if let Some(budget) = budget {
                encoder = encoder.budget(budget);
            }
            encoder.encode_generation(f, generation)
        }
    }
}

/// Decode the one full frame a file holds.
pub fn decode_file(path: &Path) -> Result<AnyFilter> {
    decode_full(path).map(|(filter, _)| filter)
}

/// Decode the one full frame a file holds, with its header.
pub fn decode_full(path: &Path) -> Result<(AnyFilter, FrameHeader)> {
    let bytes = read_frame_file(path)?;
    let decoded: Decoded<AnyFilter> =
        bloomwire::decode(&bytes, &limits()).map_err(|e| frame_error(path, e))?;
    Ok((decoded.filter, decoded.header))
}

/// Decode the one frame a file holds, full or delta.
pub fn decode_message(path: &Path) -> Result<Message> {
    let bytes = read_frame_file(path)?;
    bloomwire::decode::<Message>(&bytes, &limits()).map_err(|e| frame_error(path, e))
}

/// The message for a frame that does not decode.
pub fn frame_error(path: &Path, error: Error) -> Failure {
    match error {
        Error::Incomplete { needed } => Failure(format!(
            "{}: truncated frame: at least {needed} more bytes needed",
            path.display()
        )),
        e @ Error::LimitExceeded { field: "m", .. } => {
            Failure(format!("{}: {e}; raise --max-m to read it", path.display()))
        }
        e @ Error::LimitExceeded {
            field: "payload length",
            ..
        } => Failure(format!(
            "{}: {e}; raise --max-payload to read it",
            path.display()
        )),
        e => Failure(format!("{}: {e}", path.display())),
    }
}

/// Write `bytes` to a file, or to stdout for `-` (but not to a terminal).
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<()> {
    if path == Path::new("-") {
        let stdout = io::stdout();
        if stdout.is_terminal() {
            return Err(Failure::new(
                "refusing to write binary data to a terminal; use -o FILE or a pipe",
            ));
        }
        return write_stdout(bytes);
    }
    let mut file = File::create(path).context(path.display())?;
    file.write_all(bytes).context(path.display())
}

/// Write to stdout; a closed pipe (`| head`) is not an error.
pub fn write_stdout(bytes: &[u8]) -> Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(Failure(format!("stdout: {e}"))),
        _ => Ok(()),
    }
}

fn decode(args: &DecodeArgs) -> Result<()> {
    let bytes = match decode_file(&args.frame)? {
        AnyFilter::Bloom(f) => f.bits().to_bytes(),
        AnyFilter::Counting(f) => f.packed(),
    };
    write_output(&args.output, &bytes)
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
