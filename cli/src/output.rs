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
    let (file, created) = open_output(path, force)?;
    finish_output(path, file, created, bytes)
}

/// Write `bytes` to `sink`, the output `path`, and close it; on an error, remove the file
/// when this command `created` it.
fn finish_output(path: &Path, sink: impl Sink, created: bool, bytes: &[u8]) -> Result<()> {
    write_and_close(sink, bytes).map_err(|e| {
        if created {
            let _ = std::fs::remove_file(path);
        }
        Failure(format!("{}: {e}", path.display()))
    })
}

/// Something written to, then closed: an output file, or a test's stand-in for one whose
/// close fails.
trait Sink: Write {
    /// Close it, with the error the system reports.
    fn close(self) -> io::Result<()>;
}

impl Sink for File {
    fn close(self) -> io::Result<()> {
        close_file(self)
    }
}

/// Write all of `bytes` to `sink`, flush it and close it: an error at any of the three
/// steps is the output's error. A file system that writes back at close (NFS, FUSE
/// mounts, quotas checked late) reports there that the data did not reach it, which
/// dropping a `File` ignores; zstd checks its `fclose` for the same reason.
fn write_and_close(mut sink: impl Sink, bytes: &[u8]) -> io::Result<()> {
    sink.write_all(bytes)?;
    sink.flush()?;
    sink.close()
}

/// Close `file` and return what `close(2)` said.
#[cfg(unix)]
fn close_file(file: File) -> io::Result<()> {
    use std::os::fd::IntoRawFd;
    let fd = file.into_raw_fd();
    // SAFETY: `into_raw_fd` gave up `file`'s ownership of `fd`, an open descriptor that
    // nothing else owns; it is closed exactly once, here.
    if unsafe { libc::close(fd) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Close `file` (the platform's close error is not reachable from the standard library).
#[cfg(not(unix))]
fn close_file(file: File) -> io::Result<()> {
    drop(file);
    Ok(())
}

/// At the end of a command that succeeded: flush standard output, then close a duplicate
/// of its descriptor, so that an error the file system reports only at close (a file on
/// NFS, `> file` on a full quota) fails the command instead of being lost at exit, as
/// coreutils' `close_stdout` and zstd do. The descriptor itself stays open.
pub fn close_stdout() -> Result<()> {
    let fail = |e: io::Error| Failure(format!("stdout: {e}"));
    io::stdout().lock().flush().map_err(fail)?;
    if stdout_was_closed() {
        return Ok(());
    }
    #[cfg(unix)]
    {
        use std::os::fd::FromRawFd;
        // SAFETY: dup reads descriptor 1 and returns a new descriptor (or -1), changing
        // nothing else.
        let fd = unsafe { libc::dup(libc::STDOUT_FILENO) };
        if fd == -1 {
            return Err(fail(io::Error::last_os_error()));
        }
        // SAFETY: `fd` was just returned by dup: open, and owned by nothing else.
        close_file(unsafe { File::from_raw_fd(fd) }).map_err(fail)?;
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A file whose close fails as NFS's does when the server refuses the data written.
    struct FailsAtClose(Vec<u8>);

    impl Write for FailsAtClose {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.write(buf)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Sink for FailsAtClose {
        fn close(self) -> io::Result<()> {
            Err(io::Error::from_raw_os_error(libc::EIO))
        }
    }

    #[test]
    fn an_error_at_close_is_the_outputs_error() {
        let e = write_and_close(FailsAtClose(Vec::new()), b"frame").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EIO));
    }

    #[test]
    fn a_file_is_written_and_closed() {
        let path = std::env::temp_dir().join(format!("bloomwire-close-{}", std::process::id()));
        write_and_close(File::create(&path).unwrap(), b"frame").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"frame");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_failed_close_removes_the_file_it_created() {
        let path = std::env::temp_dir().join(format!("bloomwire-close-rm-{}", std::process::id()));
        let (file, created) = open_output(&path, false).unwrap();
        assert!(created);
        drop(file);
        let e = finish_output(&path, FailsAtClose(Vec::new()), created, b"frame").unwrap_err();
        assert!(e.0.contains("Input/output error"), "{}", e.0);
        assert!(!path.exists());
    }
}
