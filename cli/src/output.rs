//! Where the program's output goes: files that are not overwritten without `--force`,
//! standard output, and notes on stderr that `--quiet` silences.

use std::fmt::Display;
use std::fs::{File, OpenOptions};
use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::{Context, Failure, Result};

/// `--quiet`: no notes, warnings or progress on stderr.
static QUIET: AtomicBool = AtomicBool::new(false);

/// Silence notes, warnings and progress bars (`--quiet`).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether `--quiet` was given.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// A note or a warning on stderr (one line), unless `--quiet`.
pub fn note(message: impl Display) {
    if !quiet() {
        eprintln!("{message}");
    }
}

/// Whether `path` names standard input or output.
pub fn is_std(path: &Path) -> bool {
    path == Path::new("-")
}

/// The name to report an output by: `stdout` for `-`.
pub fn shown(path: &Path) -> String {
    if is_std(path) {
        "stdout".into()
    } else {
        path.display().to_string()
    }
}

/// Refuse, before any work, an output that would overwrite an existing regular file
/// without `--force`. Devices and pipes (`/dev/null`, a FIFO) are written to.
pub fn check_output(path: &Path, force: bool) -> Result<()> {
    if is_std(path) || force {
        return Ok(());
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Err(exists(path)),
        _ => Ok(()),
    }
}

fn exists(path: &Path) -> Failure {
    Failure(format!(
        "{}: already exists; use -f (--force) to overwrite it",
        path.display()
    ))
}

/// Write `bytes` to a file, or to stdout for `-` (but not to a terminal). An existing
/// regular file is overwritten only with `force`; a file this call created is removed
/// again when writing fails.
pub fn write_output(path: &Path, bytes: &[u8], force: bool) -> Result<()> {
    if is_std(path) {
        if io::stdout().is_terminal() {
            return Err(Failure::new(
                "refusing to write binary data to a terminal; use -o FILE or a pipe",
            ));
        }
        return write_stdout(bytes);
    }
    let (mut file, created) = open_output(path, force)?;
    if let Err(e) = file.write_all(bytes).and_then(|()| file.flush()) {
        drop(file);
        if created {
            let _ = std::fs::remove_file(path);
        }
        return Err(Failure(format!("{}: {e}", path.display())));
    }
    Ok(())
}

/// The file to write, and whether this call created it.
fn open_output(path: &Path, force: bool) -> Result<(File, bool)> {
    match std::fs::metadata(path) {
        // Not there: create it, and refuse if it appeared in the meantime.
        Err(_) => match OpenOptions::new().write(true).create_new(true).open(path) {
            Ok(file) => Ok((file, true)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && !force => Err(exists(path)),
            Err(_) => File::create(path)
                .map(|f| (f, false))
                .context(path.display()),
        },
        Ok(m) if m.is_file() && !force => Err(exists(path)),
        Ok(m) if m.is_file() => File::create(path)
            .map(|f| (f, false))
            .context(path.display()),
        // A device or a pipe: written to as it is.
        Ok(_) => OpenOptions::new()
            .write(true)
            .open(path)
            .map(|f| (f, false))
            .context(path.display()),
    }
}

/// Write to stdout. Every failure is an error, so that no command reports success having
/// written less than it was asked for: standard output closed (`>&-`), a full disk, and a
/// reader that closed the pipe before the end (`| head -c 10`) too, as zstd and cat
/// report them.
pub fn write_stdout(bytes: &[u8]) -> Result<()> {
    if stdout_was_closed() && !bytes.is_empty() {
        return Err(Failure::new(
            "stdout: closed (Bad file descriptor); nothing was written",
        ));
    }
    let mut out = io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|e| match e.kind() {
            io::ErrorKind::BrokenPipe => Failure::new(
                "stdout: the reader closed the pipe before the end of the output (Broken pipe)",
            ),
            _ => Failure(format!("stdout: {e}")),
        })
}

/// Whether standard output was closed when the program started (`bloomwire ... >&-`).
///
/// The Rust runtime opens `/dev/null` on a standard descriptor that is closed at startup,
/// before `main`, so that writes to it would silently succeed; the descriptor is therefore
/// looked at earlier, by a function the loader runs before the runtime's initialization
/// (`.init_array`, or `__mod_init_func` on Apple platforms). Elsewhere this is `false`.
pub fn stdout_was_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
#[used]
#[link_section = ".init_array"]
static SEE_STDOUT_AT_START: extern "C" fn() = see_stdout_at_start;

#[cfg(target_vendor = "apple")]
#[used]
#[link_section = "__DATA,__mod_init_func"]
static SEE_STDOUT_AT_START: extern "C" fn() = see_stdout_at_start;

#[cfg(any(
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd",
    target_vendor = "apple"
))]
extern "C" fn see_stdout_at_start() {
    // SAFETY: F_GETFD on descriptor 1 reads the descriptor's flags and changes nothing; it
    // takes no pointer, and fails with EBADF when the descriptor is not open.
    let open = unsafe { libc::fcntl(libc::STDOUT_FILENO, libc::F_GETFD) } != -1;
    STDOUT_CLOSED.store(!open, Ordering::Relaxed);
}
