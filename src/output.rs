//! The one way vaultbench prints: standard output and standard error through
//! [`Lossy`] writers, which never fail and never panic.
//!
//! A command's output goes to a terminal, a pipe or a file, any of which can
//! go away: `vaultbench run | head -2` closes the pipe after two lines, a
//! redirection to a full disk fails every write. Printing is not the work:
//! a sweep keeps running and writes its result and transcripts, a report is
//! still checked, and the exit status says what happened to the work. What
//! cannot be written is dropped, and the writer remembers why, so that
//! `main` can say once on standard error that the output was cut (a closed
//! pipe is the reader's choice and needs no word).
//!
//! It does not decide what is printed or the exit status (`main` does).

use std::io::{self, ErrorKind, Write};
use std::sync::Mutex;

/// Why standard output could not be written, the first time it failed
/// (shared by every [`Lossy`] of the process).
static STDOUT_LOST: Mutex<Option<ErrorKind>> = Mutex::new(None);
static STDERR_LOST: Mutex<Option<ErrorKind>> = Mutex::new(None);

/// A writer whose writes always succeed: once the underlying writer fails,
/// this and every later write is dropped.
pub struct Lossy<W> {
    inner: W,
    lost: &'static Mutex<Option<ErrorKind>>,
}

/// Standard output, lossy.
pub fn stdout() -> Lossy<io::Stdout> {
    Lossy { inner: io::stdout(), lost: &STDOUT_LOST }
}

/// Standard error, lossy.
pub fn stderr() -> Lossy<io::Stderr> {
    Lossy { inner: io::stderr(), lost: &STDERR_LOST }
}

/// Why standard output was cut, if it was: `None` when everything printed
/// was written.
pub fn stdout_lost() -> Option<ErrorKind> {
    *STDOUT_LOST.lock().unwrap_or_else(|e| e.into_inner())
}

impl<W: Write> Lossy<W> {
    fn is_lost(&self) -> bool {
        self.lost.lock().unwrap_or_else(|e| e.into_inner()).is_some()
    }

    fn lose(&self, e: &io::Error) {
        let mut lost = self.lost.lock().unwrap_or_else(|e| e.into_inner());
        lost.get_or_insert(e.kind());
    }
}

impl<W: Write> Write for Lossy<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.is_lost()
            && let Err(e) = self.inner.write_all(buf)
        {
            self.lose(&e);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.is_lost()
            && let Err(e) = self.inner.flush()
        {
            self.lose(&e);
        }
        Ok(())
    }
}

/// `writeln!` to standard output through [`stdout`]: never fails.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!($crate::output::stdout(), $($arg)*);
    }};
}

/// `write!` to standard output through [`stdout`]: never fails.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!($crate::output::stdout(), $($arg)*);
    }};
}

/// `writeln!` to standard error through [`stderr`]: never fails.
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!($crate::output::stderr(), $($arg)*);
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Broken(u32);

    impl Write for Broken {
        fn write(&mut self, _buf: &[u8]) -> io::Result<usize> {
            self.0 += 1;
            Err(io::Error::new(ErrorKind::BrokenPipe, "closed"))
        }
        fn flush(&mut self) -> io::Result<()> {
            Err(io::Error::new(ErrorKind::BrokenPipe, "closed"))
        }
    }

    #[test]
    fn a_failed_write_is_dropped_remembered_and_not_retried() {
        static LOST: Mutex<Option<ErrorKind>> = Mutex::new(None);
        let mut w = Lossy { inner: Broken(0), lost: &LOST };
        assert!(writeln!(w, "one").is_ok());
        assert!(writeln!(w, "two").is_ok());
        assert!(w.flush().is_ok());
        assert_eq!(*LOST.lock().unwrap(), Some(ErrorKind::BrokenPipe));
        assert_eq!(w.inner.0, 1, "after the first failure nothing more is tried");
    }
}
