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

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
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

/// Where the keys come from: a regular file, read again for each pass, or a stream
/// (standard input, a pipe, a FIFO, a device), read once as it comes and never held in
/// memory. A command that needs two passes over a stream (`build` counts the keys to plan
/// for n, then inserts them) reads it with [`for_each_key_keeping`](Self::for_each_key_keeping),
/// which copies it into a temporary file for the next pass: a stream is empty the second
/// time it is read, which once gave a filter of 0 keys sized for n, answering "no" for
/// every key, and holding it whole in memory cost as much memory as the input.
pub struct KeySource {
    name: String,
    kind: Kind,
}

enum Kind {
    /// A regular file, opened again for each pass, and its length when opened.
    File(PathBuf),
    /// A stream not read yet (`None` once read).
    Stream(Option<Box<dyn Read>>),
    /// A stream read once, kept in a temporary file (already removed from its directory
    /// where the platform allows it, else removed when the source is dropped).
    Kept(File, Option<PathBuf>),
}

impl KeySource {
    /// A file, or standard input for `-`; nothing is read yet.
    pub fn open(path: &Path) -> Result<KeySource> {
        if path == Path::new("-") {
            return Ok(KeySource {
                name: "standard input".into(),
                kind: Kind::Stream(Some(Box::new(io::stdin()))),
            });
        }
        let name = path.display().to_string();
        let metadata = std::fs::metadata(path).context(&name)?;
        if metadata.is_dir() {
            return Err(Failure(format!("{name}: is a directory")));
        }
        let kind = if metadata.is_file() {
            Kind::File(path.to_owned())
        } else {
            Kind::Stream(Some(Box::new(File::open(path).context(&name)?)))
        };
        Ok(KeySource { name, kind })
    }

    /// The name to report the keys by.
    pub fn name(&self) -> String {
        self.name.clone()
    }

    /// Bytes of a regular file (or of a stream once kept); `None` for a stream not read.
    pub fn len(&self) -> Option<u64> {
        match &self.kind {
            Kind::File(path) => std::fs::metadata(path).ok().map(|m| m.len()),
            Kind::Stream(_) => None,
            Kind::Kept(file, _) => file.metadata().ok().map(|m| m.len()),
        }
    }

    /// Call `f` with every key, in `format`; returns what was seen. A stream is read once:
    /// a second pass over it is an error (see
    /// [`for_each_key_keeping`](Self::for_each_key_keeping)).
    pub fn for_each_key(&mut self, format: Format, f: impl FnMut(&[u8])) -> Result<Stats> {
        self.pass(format, false, f)
    }

    /// [`for_each_key`](Self::for_each_key), keeping a stream, as it is read, in a
    /// temporary file (in the directory `TMPDIR` names, or `/tmp`), from which the next
    /// passes read it: memory stays a few buffers whatever the input's size; the disk
    /// holds a copy of it until the program ends.
    pub fn for_each_key_keeping(&mut self, format: Format, f: impl FnMut(&[u8])) -> Result<Stats> {
        self.pass(format, true, f)
    }

    fn pass(&mut self, format: Format, keep: bool, mut f: impl FnMut(&[u8])) -> Result<Stats> {
        let mut stats = Stats::default();
        let mut see = |key: &[u8]| {
            stats.see(key);
            f(key);
        };
        let name = &self.name;
        match &mut self.kind {
            Kind::File(path) => {
                let file = File::open(path).context(name)?;
                let reader = BufReader::with_capacity(BUFFER, file);
                read_keys(reader, format, &mut see).context(name)?;
            }
            Kind::Kept(file, _) => {
                file.seek(SeekFrom::Start(0)).context(name)?;
                let reader = BufReader::with_capacity(BUFFER, &*file);
                read_keys(reader, format, &mut see).context(name)?;
            }
            Kind::Stream(stream) => {
                let Some(stream) = stream.take() else {
                    return Err(Failure(format!(
                        "{name}: a stream cannot be read twice (an error of the program)"
                    )));
                };
                if !keep {
                    let reader = BufReader::with_capacity(BUFFER, stream);
                    read_keys(reader, format, &mut see).context(name)?;
                    return Ok(stats);
                }
                let (copy, path) = temporary_file()?;
                let mut tee = Tee {
                    inner: stream,
                    copy,
                    failed: None,
                };
                let read = read_keys(BufReader::with_capacity(BUFFER, &mut tee), format, &mut see);
                if let Some(e) = tee.failed {
                    return Err(Failure(format!(
                        "{name}: cannot keep a copy for the second pass in {}: {e}; set \
                         TMPDIR to a directory with room for it, give a regular file, or give \
                         --m and --k (one pass, nothing kept)",
                        std::env::temp_dir().display()
                    )));
                }
                read.context(name)?;
                self.kind = Kind::Kept(tee.copy, path);
            }
        }
        Ok(stats)
    }
}

impl Drop for KeySource {
    fn drop(&mut self) {
        if let Kind::Kept(_, Some(path)) = &self.kind {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Bytes read from a keys file at a time.
const BUFFER: usize = 1 << 16;

/// A new temporary file, open for reading and writing, and its path when it could not be
/// removed from its directory while open (it is removed at once on Unix, so that nothing
/// is left behind even if the program is killed).
fn temporary_file() -> Result<(File, Option<PathBuf>)> {
    let dir = std::env::temp_dir();
    let cannot = |e: io::Error| {
        Failure(format!(
            "cannot make a temporary file in {} to keep the keys for a second pass: {e}; set \
             TMPDIR to another directory, give a regular file, or give --m and --k (one pass, \
             nothing kept)",
            dir.display()
        ))
    };
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    for attempt in 0u32.. {
        let path = dir.join(format!(
            ".bloomwire-keys-{}-{stamp}-{attempt}",
            std::process::id()
        ));
        let file = match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => continue,
            Err(e) => return Err(cannot(e)),
        };
        return Ok(if cfg!(unix) && std::fs::remove_file(&path).is_ok() {
            (file, None)
        } else {
            (file, Some(path))
        });
    }
    unreachable!("the loop returns by its 100th attempt")
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

/// A reader that writes what it reads into a file, and remembers the first error of
/// that write apart from the reader's own.
struct Tee<R> {
    inner: R,
    copy: File,
    failed: Option<io::Error>,
}

impl<R: Read> Read for Tee<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let got = self.inner.read(buf)?;
        if let Err(e) = self.copy.write_all(&buf[..got]) {
            let shown = io::Error::new(e.kind(), e.to_string());
            self.failed = Some(e);
            return Err(shown);
        }
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
