//! Options several commands share: the authentication key, application metadata,
//! `--force`, and the four that say how a frame is written.

use std::io::Read;
use std::path::{Path, PathBuf};

use bloomwire::FrameKey;

use crate::coding_options::{ChunkArg, CodingOption};
use crate::Coder;

use crate::{limits, parse_hex, Context, Failure, Result};

/// How a command that rewrites a frame (`wrap`, `update`, `diff`, `apply`) writes it: the
/// coding, the chunks, the key and the metadata.
#[derive(Debug, clap::Args)]
pub struct FrameOptions {
    #[command(flatten)]
    pub coding: CodingOption,
    #[command(flatten)]
    pub chunks: ChunkArg,
    #[command(flatten)]
    pub key: KeyArg,
    #[command(flatten)]
    pub metadata: MetadataArg,
}

impl FrameOptions {
    /// Refuse (a usage error) chunks with a coding that never has them.
    pub fn check(&self) {
        self.coding.check_args(self.chunks);
    }

    /// The coder of a frame of a counting filter or not: the coding asked for one (checked
    /// by [`CodingOption::for_filter`]), these chunks and profile, writing `metadata` and
    /// tagging with `key`.
    pub fn coder(
        &self,
        counting: bool,
        metadata: Option<Vec<u8>>,
        key: Option<FrameKey>,
    ) -> Result<Coder> {
        let coding = self.coding.for_filter(self.chunks, counting)?;
        Ok(Coder {
            metadata,
            key,
            ..Coder::new(coding, self.chunks.chunking(), self.coding.profile)
        })
    }
}

/// `--key-file`: the key frames are authenticated with (spec 2.5).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct KeyArg {
    /// The 32-byte secret key of authenticated frames (spec 2.5), read from FILE: 32 raw
    /// bytes, or 64 hexadecimal digits and an optional newline. With a key, every frame
    /// the command reads must carry a tag made with it (else it fails, naming the missing
    /// or bad tag), and every frame it writes carries one. The key is never taken on the
    /// command line, where other users of the machine could read it.
    #[arg(long, value_name = "FILE")]
    pub key_file: Option<PathBuf>,
}

/// Bytes read from a key file at most: 64 hexadecimal digits and `\r\n`, and one more to
/// tell a longer file.
const KEY_FILE_MAX: u64 = 67;

impl KeyArg {
    /// The key, if `--key-file` was given.
    pub fn load(&self) -> Result<Option<FrameKey>> {
        self.key_file.as_deref().map(read_key).transpose()
    }
}

/// The key in a key file: 32 raw bytes, or 64 hexadecimal digits and an optional `\n` or
/// `\r\n`.
pub fn read_key(path: &Path) -> Result<FrameKey> {
    let name = path.display();
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(KEY_FILE_MAX).read_to_end(&mut bytes))
        .context(format!("--key-file {name}"))?;
    let key = parse_key(&bytes);
    bytes.fill(0);
    key.ok_or_else(|| {
        Failure(format!(
            "--key-file {name}: not a key: a key file holds 32 raw bytes, or 64 hexadecimal \
             digits and an optional newline (this one has {}{} bytes)",
            if bytes.len() as u64 == KEY_FILE_MAX {
                "at least "
            } else {
                ""
            },
            bytes.len()
        ))
    })
}

fn parse_key(bytes: &[u8]) -> Option<FrameKey> {
    if let Ok(raw) = <[u8; 32]>::try_from(bytes) {
        return Some(FrameKey::new(raw));
    }
    let text = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    if text.len() != 64 {
        return None;
    }
    let mut hex = parse_hex(std::str::from_utf8(text).ok()?)?;
    let key = <[u8; 32]>::try_from(&hex[..]).ok().map(FrameKey::new);
    hex.fill(0);
    key
}

/// `--metadata`, `--metadata-hex` and `--no-metadata`: the application metadata field of
/// the frames a command writes (spec 2.6).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct MetadataArg {
    /// Carry FILE's bytes in the frame's application metadata field (spec 2.6): a sender
    /// id, a timestamp, the parameters of the library that made an opaque filter. They are
    /// covered by the checksum and the tag, and `inspect` shows them. At least 1 byte, and
    /// at most --max-metadata (4096 by default, what receivers accept unless they raise
    /// their limit).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["metadata_hex", "no_metadata"])]
    pub metadata: Option<PathBuf>,
    /// The metadata as hexadecimal digits, instead of a file.
    #[arg(long, value_name = "HEX", conflicts_with = "no_metadata")]
    pub metadata_hex: Option<String>,
    /// Write no metadata field, where the command would otherwise carry one over from the
    /// frame it reads.
    #[arg(long)]
    pub no_metadata: bool,
}

/// What a command's output frames carry in the metadata field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Metadata {
    /// What the command carries over by default (nothing, for a new filter).
    Default,
    /// No field.
    None,
    /// These bytes (never empty).
    Bytes(Vec<u8>),
}

impl MetadataArg {
    /// The metadata asked for, checked against `--max-metadata`.
    pub fn load(&self) -> Result<Metadata> {
        let (bytes, what) = match (&self.metadata, &self.metadata_hex) {
            (Some(path), _) => {
                let what = format!("--metadata {}", path.display());
                let max = limits().max_metadata;
                let mut bytes = Vec::new();
                std::fs::File::open(path)
                    .and_then(|f| f.take(max.saturating_add(1)).read_to_end(&mut bytes))
                    .context(&what)?;
                (bytes, what)
            }
            (None, Some(hex)) => {
                let bytes = parse_hex(hex).ok_or_else(|| {
                    Failure::new("--metadata-hex: expected an even number of hexadecimal digits")
                })?;
                (bytes, "--metadata-hex".to_string())
            }
            (None, None) if self.no_metadata => return Ok(Metadata::None),
            (None, None) => return Ok(Metadata::Default),
        };
        if bytes.is_empty() {
            return Err(Failure(format!(
                "{what}: empty; a frame's metadata field holds at least 1 byte (leave the \
                 option out for none)"
            )));
        }
        let max = limits().max_metadata;
        if bytes.len() as u64 > max {
            return Err(Failure(format!(
                "{what}: more than {max} bytes, above what receivers accept (--max-metadata); \
                 raise --max-metadata here and on the receivers"
            )));
        }
        Ok(Metadata::Bytes(bytes))
    }
}

impl Metadata {
    /// The bytes to write: these, or `default` (what the command carries over).
    pub fn or(self, default: Option<Vec<u8>>) -> Option<Vec<u8>> {
        match self {
            Metadata::Default => default,
            Metadata::None => None,
            Metadata::Bytes(bytes) => Some(bytes),
        }
    }
}

/// `-f`/`--force`.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct ForceArg {
    /// Overwrite the output file if it exists (without it, an existing file is an error).
    #[arg(short, long)]
    pub force: bool,
}
