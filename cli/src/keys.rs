//! Keys files, read the same way by `build` and `query`.
//!
//! A keys file holds one key per line, as bytes (not necessarily UTF-8). Lines end with
//! `\n`, and a `\r` before it is removed; the newline after the last line is optional. Every
//! line is a key, an empty line too (the empty key), and duplicates count.
//!
//! With `--binary-keys` the file is instead a sequence of records, each a 4-byte
//! little-endian length followed by that many bytes of key, so that keys may hold any byte,
//! newlines included.
//!
//! A key is at most [`MAX_KEY_LEN`] bytes (1 MiB): a longer line or record is an error that
//! names it, found before more than that is held, so that an input without newlines
//! (`--insert /dev/zero`) fails at once instead of filling memory.
//!
//! A file of lines that looks binary (a NUL byte in some line, or at least 1 line in 10 that
//! is not UTF-8) is still read as lines, and a warning on stderr says how many keys that
//! made and names `--binary-keys` and `--allow-binary` (which silences the warning).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::{Context, Failure, Result};

/// The longest key, in bytes, of a keys file (a line without its newline, or a record):
/// 1 MiB.
pub const MAX_KEY_LEN: usize = 1 << 20;

/// The options of the commands that read keys files.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct Format {
    /// The keys file is length-prefixed records, not lines: each key is a 4-byte
    /// little-endian length, then that many bytes (any bytes, newlines included).
    #[arg(long, conflicts_with = "allow_binary")]
    pub binary_keys: bool,
    /// Read a keys file of lines that looks binary (NUL bytes, or many lines that are not
    /// UTF-8) without the warning.
    #[arg(long)]
    pub allow_binary: bool,
}

/// Where the keys come from. Building reads them twice (to plan for n, then to insert), and
/// only a regular file gives the same bytes on a second read: standard input, a pipe or a
/// FIFO (`--keys /dev/stdin`, `--keys <(...)`) is empty the second time, which once gave a
/// filter of 0 keys sized for n, answering "no" for every key.
pub enum KeySource {
    /// A regular file, opened again for each pass.
    File(PathBuf, u64),
    /// Everything read from a stream, and the name to report it by.
    Read(Vec<u8>, String),
}

impl KeySource {
    /// A file (read lazily when regular), or standard input for `-` (read now, whole). A
    /// stream is read as keys in `format` while it is held, so that a key longer than
    /// [`MAX_KEY_LEN`] stops it there.
    pub fn open(path: &Path, format: Format) -> Result<KeySource> {
        if path == Path::new("-") {
            let name = "standard input".to_string();
            let bytes = read_stream(io::stdin().lock(), format).context(&name)?;
            return Ok(KeySource::Read(bytes, name));
        }
        let metadata = std::fs::metadata(path).context(path.display())?;
        if metadata.is_dir() {
            return Err(Failure(format!("{}: is a directory", path.display())));
        }
        if metadata.is_file() {
            Ok(KeySource::File(path.to_owned(), metadata.len()))
        } else {
            let file = File::open(path).context(path.display())?;
            let bytes = read_stream(file, format).context(path.display())?;
            Ok(KeySource::Read(bytes, path.display().to_string()))
        }
    }

    /// The name to report the keys by.
    pub fn name(&self) -> String {
        match self {
            KeySource::File(path, _) => path.display().to_string(),
            KeySource::Read(_, name) => name.clone(),
        }
    }

    /// Bytes of the source (of the file when it was opened).
    pub fn len(&self) -> u64 {
        match self {
            KeySource::File(_, len) => *len,
            KeySource::Read(bytes, _) => bytes.len() as u64,
        }
    }
}

/// What one pass over the keys saw, to tell whether a file of lines looks binary.
#[derive(Debug, Default, Clone, Copy)]
pub struct Stats {
    /// Keys read.
    pub keys: u64,
    /// Lines with a NUL byte.
    pub nul_lines: u64,
    /// Lines that are not UTF-8.
    pub invalid_lines: u64,
}

impl Stats {
    fn see(&mut self, key: &[u8]) {
        self.keys += 1;
        if key.contains(&0) {
            self.nul_lines += 1;
        }
        if std::str::from_utf8(key).is_err() {
            self.invalid_lines += 1;
        }
    }

    /// Whether a file of lines with these keys looks binary: a NUL byte anywhere, or at
    /// least one line in ten (and at least two lines) that is not UTF-8.
    pub fn looks_binary(&self) -> bool {
        self.nul_lines > 0 || (self.invalid_lines >= 2 && self.invalid_lines * 10 >= self.keys)
    }

    /// The warning for a file of lines that looks binary, if it does and the user did not
    /// say it is intended.
    pub fn warning(&self, name: &str, format: Format) -> Option<String> {
        if format.binary_keys || format.allow_binary || !self.looks_binary() {
            return None;
        }
        Some(format!(
            "bloomwire: warning: {name} looks binary ({} of {} lines hold a NUL byte, {} are \
             not UTF-8); it was read as {} keys, one per line. For binary keys give \
             length-prefixed records with --binary-keys; to read it as lines without this \
             warning, --allow-binary",
            self.nul_lines, self.keys, self.invalid_lines, self.keys
        ))
    }
}

/// Call `f` with every key of `source`, in `format`; returns what was seen.
pub fn for_each_key(source: &KeySource, format: Format, mut f: impl FnMut(&[u8])) -> Result<Stats> {
    let mut stats = Stats::default();
    let mut see = |key: &[u8]| {
        stats.see(key);
        f(key);
    };
    match source {
        KeySource::File(path, _) => {
            let file = File::open(path).context(path.display())?;
            let reader = BufReader::with_capacity(1 << 16, file);
            read_keys(reader, format, &mut see).context(path.display())?;
        }
        KeySource::Read(bytes, name) => read_keys(&bytes[..], format, &mut see).context(name)?,
    }
    Ok(stats)
}

/// Everything `stream` holds, read through the keys' parser so that it stops at the first
/// key longer than [`MAX_KEY_LEN`] (or a malformed record) having held little more than it.
fn read_stream(stream: impl Read, format: Format) -> Result<Vec<u8>> {
    let mut tee = Tee {
        inner: stream,
        copy: Vec::new(),
    };
    read_keys(BufReader::with_capacity(1 << 16, &mut tee), format, |_| {})?;
    Ok(tee.copy)
}

/// A reader that keeps a copy of what it reads.
struct Tee<R> {
    inner: R,
    copy: Vec<u8>,
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let got = self.inner.read(buf)?;
        self.copy.extend_from_slice(&buf[..got]);
        Ok(got)
    }
}

fn read_keys(reader: impl BufRead, format: Format, f: impl FnMut(&[u8])) -> Result<()> {
    if format.binary_keys {
        for_each_record(reader, f)
    } else {
        for_each_line(reader, f)
    }
}

/// Call `f` with every line of `reader`, without its `\n` or `\r\n`. A line longer than
/// [`MAX_KEY_LEN`] is an error naming it (numbered from 1), with at most that much of it
/// and one buffer held.
fn for_each_line(mut reader: impl BufRead, mut f: impl FnMut(&[u8])) -> Result<()> {
    let too_long = |number: u64| {
        Failure(format!(
            "line {number}: a key longer than {MAX_KEY_LEN} bytes, the longest a key may be \
             (1 MiB)"
        ))
    };
    let mut line = Vec::new();
    let mut number = 0u64;
    loop {
        line.clear();
        number += 1;
        // At most a key, a `\r` and the `\n`: a longer line stops there.
        let most = MAX_KEY_LEN as u64 + 2;
        let got = (&mut reader)
            .take(most)
            .read_until(b'\n', &mut line)
            .map_err(Failure::new)?;
        if got == 0 {
            return Ok(());
        }
        let mut key = line.strip_suffix(b"\n").unwrap_or(&line);
        key = key.strip_suffix(b"\r").unwrap_or(key);
        if key.len() > MAX_KEY_LEN {
            return Err(too_long(number));
        }
        f(key);
    }
}

/// Call `f` with every length-prefixed record of `reader`. The key buffer grows as the
/// bytes arrive, so a forged length costs no more memory than the input holds.
fn for_each_record(mut reader: impl BufRead, mut f: impl FnMut(&[u8])) -> Result<()> {
    let mut key = Vec::new();
    let mut record = 0u64;
    loop {
        let mut len = [0u8; 4];
        let got = read_full(&mut reader, &mut len).map_err(Failure::new)?;
        if got == 0 {
            return Ok(());
        }
        if got < 4 {
            return Err(Failure(format!(
                "record {record}: {got} bytes of a 4-byte length at the end of the keys"
            )));
        }
        let len = u32::from_le_bytes(len);
        if len as usize > MAX_KEY_LEN {
            return Err(Failure(format!(
                "record {record}: a key of {len} bytes, longer than {MAX_KEY_LEN}, the longest \
                 a key may be (1 MiB)"
            )));
        }
        key.clear();
        let read = (&mut reader)
            .take(u64::from(len))
            .read_to_end(&mut key)
            .map_err(Failure::new)?;
        if read < len as usize {
            return Err(Failure(format!(
                "record {record}: a key of {len} bytes, only {read} left in the keys"
            )));
        }
        f(&key);
        record += 1;
    }
}

/// Read until `buf` is full or the input ends; returns the bytes read.
fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut at = 0;
    while at < buf.len() {
        match reader.read(&mut buf[at..]) {
            Ok(0) => break,
            Ok(got) => at += got,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(at)
}
