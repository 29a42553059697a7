//! What the history reads from git, through the git command line: whether a
//! folder is in a repository (and a shallow one), the commits that touched
//! it with the blob of every file they wrote (`git log --raw`), and those
//! blobs (`git cat-file --batch`). Two processes for a whole history, not
//! one per commit or per file.
//!
//! Everything git prints is read as untrusted input: every process has a
//! deadline and is killed past it, its output is read up to a cap, file
//! names are NUL-separated (`-z`) so no name can pose as a record, and
//! whatever does not parse is counted and passed over, never a panic. It
//! knows nothing of result files (`history` parses the blobs).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The bounds on what one history read may cost.
#[derive(Debug, Clone)]
pub struct Bounds {
    /// Each git process is killed past this.
    pub timeout: Duration,
    /// `git log`'s output read at most; past it the oldest commits are left out.
    pub max_log_bytes: u64,
    /// A version larger than this is skipped, as any input file over the cap.
    pub max_blob_bytes: u64,
    /// Versions read at most, newest first.
    pub max_versions: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            timeout: Duration::from_secs(120),
            max_log_bytes: 64 << 20,
            max_blob_bytes: crate::limits::Limits::default().max_input_file_bytes,
            max_versions: 20_000,
        }
    }
}

/// What `git rev-parse` says of the folder's repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repository {
    /// A shallow clone: commits older than its boundary are not there.
    pub shallow: bool,
}

/// Why there is no repository to read, in words for a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoRepository(pub String);

/// The repository holding `dir`, or why there is none (git missing, not a
/// repository, a repository git refuses to read).
pub fn repository(dir: &Path, bounds: &Bounds) -> Result<Repository, NoRepository> {
    let out = run(dir, &["rev-parse", "--is-shallow-repository"], None, bounds, 4096).map_err(|e| match e {
        Failure::NotFound => NoRepository("git is not installed".into()),
        Failure::Status(why) if why.contains("not a git repository") => {
            NoRepository(format!("{} is not in a git repository", dir.display()))
        }
        other => NoRepository(format!("git cannot read the repository of {}: {other}", dir.display())),
    })?;
    Ok(Repository { shallow: String::from_utf8_lossy(&out.bytes).trim() == "true" })
}

/// One commit that touched the folder, with what it wrote there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    pub sha: String,
    /// The committer date, ISO 8601 (`2026-05-24T21:42:41+02:00`).
    pub date: String,
    pub changes: Vec<Change>,
}

/// One file a commit changed (a line of `git log --raw`), paths relative to
/// the folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// `A`dded, `M`odified, `D`eleted, `R`enamed, `C`opied, `T`ype changed.
    pub status: char,
    /// The file's blob after the commit (all zeros when deleted).
    pub blob: String,
    /// A regular file after the commit (not a link or a submodule).
    pub regular: bool,
    pub path: String,
    /// For a rename or copy: where it came from.
    pub from: Option<String>,
}

/// The commits of `git log` over a folder, oldest first.
#[derive(Debug, Clone, Default)]
pub struct Log {
    pub commits: Vec<Commit>,
    /// The output reached the cap: the oldest commits are left out.
    pub cut: bool,
    /// Records of the output that did not parse, passed over.
    pub unreadable: usize,
}

/// The commits that touched `dir` on the current branch's first-parent
/// line (a merge counts as one change against its first parent, so the
/// changes replay in order), newest first as git prints them, read up to
/// the cap, then put oldest first.
pub fn log(dir: &Path, bounds: &Bounds) -> Result<Log, String> {
    let args = [
        "log",
        "-z",
        "--first-parent",
        "--diff-merges=first-parent",
        "--raw",
        "--no-abbrev",
        "-M",
        "--relative",
        "--format=%x01%H %cI",
        "--",
        ".",
    ];
    let out = match run(dir, &args, None, bounds, bounds.max_log_bytes) {
        Ok(out) => out,
        // A repository without a commit yet has no history, and no error.
        Err(Failure::Status(why)) if why.contains("does not have any commits") => return Ok(Log::default()),
        Err(e) => return Err(format!("git log: {e}")),
    };
    let mut log = parse_log(&out.bytes, out.cut);
    log.commits.reverse();
    Ok(log)
}

/// Parse `git log -z --raw --format=%x01%H %cI` (newest first). With `cut`
/// the output stopped at the cap, so its last commit may be incomplete and
/// is left out.
pub fn parse_log(bytes: &[u8], cut: bool) -> Log {
    let mut log = Log { cut, ..Log::default() };
    let mut tokens = bytes.split(|&b| b == 0).map(|t| t.strip_prefix(b"\n").unwrap_or(t));
    while let Some(token) = tokens.next() {
        if token.is_empty() {
            continue;
        }
        if let Some(header) = token.strip_prefix(b"\x01") {
            match parse_header(header) {
                Some(commit) => log.commits.push(commit),
                None => log.unreadable += 1,
            }
            continue;
        }
        let Some(fields) = token.strip_prefix(b":").and_then(|f| std::str::from_utf8(f).ok()) else {
            log.unreadable += 1;
            continue;
        };
        // `oldmode newmode oldblob newblob status`, then one path, or two for a rename or copy.
        let fields: Vec<&str> = fields.split(' ').collect();
        let [_, new_mode, _, blob, status] = fields[..] else {
            log.unreadable += 1;
            continue;
        };
        let Some(kind) = status.chars().next().filter(|c| "AMDRCT".contains(*c)) else {
            log.unreadable += 1;
            continue;
        };
        let name = |t: Option<&[u8]>| t.filter(|t| !t.is_empty()).map(|t| String::from_utf8_lossy(t).into_owned());
        let first = name(tokens.next());
        let second = if matches!(kind, 'R' | 'C') { name(tokens.next()) } else { None };
        let (path, from) = match (first, second, matches!(kind, 'R' | 'C')) {
            (Some(from), Some(to), true) => (to, Some(from)),
            (Some(path), None, false) => (path, None),
            _ => {
                log.unreadable += 1;
                continue;
            }
        };
        let well_formed = is_object_id(blob) && log.commits.last().is_some();
        match log.commits.last_mut() {
            Some(commit) if well_formed => commit.changes.push(Change {
                status: kind,
                blob: blob.to_string(),
                regular: matches!(new_mode, "100644" | "100755"),
                path,
                from,
            }),
            _ => log.unreadable += 1,
        }
    }
    if cut {
        log.commits.pop();
    }
    log
}

fn parse_header(header: &[u8]) -> Option<Commit> {
    let text = std::str::from_utf8(header).ok()?;
    let (sha, date) = text.trim().split_once(' ')?;
    let date = date.trim();
    (is_object_id(sha) && !date.is_empty() && date.len() <= 40).then(|| Commit {
        sha: sha.to_string(),
        date: date.to_string(),
        changes: Vec::new(),
    })
}

/// A full SHA-1 or SHA-256 object id in lower-case hex.
pub fn is_object_id(s: &str) -> bool {
    matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// One blob as `cat-file` gave it, or why not.
pub type Blob = (String, Result<Vec<u8>, String>);

/// The blobs `ids` of the repository of `dir`, streamed: each arrives on
/// the receiver as it is read, so the caller parses while git reads on.
/// The handle's result says whether the whole stream was read (a timeout
/// or a broken stream ends it early; the blobs not sent are missing).
pub fn blobs(dir: &Path, ids: Vec<String>, bounds: &Bounds) -> (mpsc::Receiver<Blob>, JoinHandle<Result<(), String>>) {
    let (tx, rx) = mpsc::sync_channel::<Blob>(16);
    let dir = dir.to_path_buf();
    let bounds = bounds.clone();
    let handle = std::thread::spawn(move || {
        let mut request = Vec::with_capacity(ids.len() * 65);
        for id in &ids {
            request.extend_from_slice(id.as_bytes());
            request.push(b'\n');
        }
        let mut process = Process::spawn(&dir, &["cat-file", "--batch"], Some(request), &bounds)
            .map_err(|e| format!("git cat-file: {e}"))?;
        let mut reader = BufReader::new(process.stdout.take().expect("stdout is piped"));
        let mut outcome = Ok(());
        for id in &ids {
            match read_blob(&mut reader, id, bounds.max_blob_bytes) {
                Ok(blob) => {
                    if tx.send((id.clone(), blob)).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            }
        }
        drop(reader);
        let finished = process.finish();
        outcome.and(finished.map(|_| ()).map_err(|e| format!("git cat-file: {e}")))
    });
    (rx, handle)
}

/// The next answer of `cat-file --batch`, which must be about `id`: its
/// bytes, or why not (missing, not a blob, over the cap). `Err` when the
/// stream itself is broken and nothing more can be read.
fn read_blob(reader: &mut impl BufRead, id: &str, cap: u64) -> Result<Result<Vec<u8>, String>, String> {
    let mut header = Vec::new();
    reader.take(256).read_until(b'\n', &mut header).map_err(|e| format!("git cat-file: {e}"))?;
    if header.last() != Some(&b'\n') {
        return Err("git cat-file: its output ended early or is not what it prints".into());
    }
    let header = String::from_utf8_lossy(&header);
    let fields: Vec<&str> = header.split_whitespace().collect();
    match fields[..] {
        [got, "missing"] if got == id => Ok(Err("its blob is not in the repository (a shallow clone?)".into())),
        [got, kind, size] if got == id => {
            let size: u64 = size.parse().map_err(|_| format!("git cat-file: a size that is not a number: {size}"))?;
            let keep = kind == "blob" && size <= cap;
            let mut bytes = Vec::new();
            let mut body = reader.take(size + 1);
            let read = if keep {
                bytes.reserve(size as usize + 1);
                body.read_to_end(&mut bytes)
            } else {
                std::io::copy(&mut body, &mut std::io::sink()).map(|n| n as usize)
            };
            let read = read.map_err(|e| format!("git cat-file: {e}"))? as u64;
            if read != size + 1 {
                return Err("git cat-file: its output ended inside a blob".into());
            }
            bytes.pop();
            Ok(match (kind, keep) {
                ("blob", true) => Ok(bytes),
                ("blob", false) => Err(format!(
                    "it has {size} bytes, over the cap of {cap} bytes ({} MiB) on one input file",
                    cap >> 20
                )),
                (other, _) => Err(format!("it is a {other}, not a file")),
            })
        }
        _ => Err(format!("git cat-file: an answer about another object than {id}: {}", header.trim())),
    }
}

/// Why a git process gave nothing usable.
#[derive(Debug)]
enum Failure {
    /// No `git` to run.
    NotFound,
    /// It could not start, or reading its output failed.
    Io(String),
    /// It ran past the deadline and was killed.
    TimedOut(Duration),
    /// It exited with an error: what it said on standard error.
    Status(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::NotFound => write!(f, "git is not installed"),
            Failure::Io(e) => write!(f, "{e}"),
            Failure::TimedOut(t) => write!(f, "it did not finish within {} s and was stopped", t.as_secs()),
            Failure::Status(why) => write!(f, "{why}"),
        }
    }
}

/// What a process printed, up to the cap.
struct Output {
    bytes: Vec<u8>,
    /// The output went past the cap; the rest was not read.
    cut: bool,
}

/// Run git in `dir` and read its standard output, at most `cap` bytes.
fn run(dir: &Path, args: &[&str], stdin: Option<Vec<u8>>, bounds: &Bounds, cap: u64) -> Result<Output, Failure> {
    read_output(Process::spawn(dir, args, stdin, bounds)?, cap)
}

/// Read a process's standard output, at most `cap` bytes (past it the
/// process is stopped), and wait for it.
fn read_output(mut process: Process, cap: u64) -> Result<Output, Failure> {
    let mut bytes = Vec::new();
    let read = process.stdout.take().expect("stdout is piped").take(cap + 1).read_to_end(&mut bytes);
    let cut = bytes.len() as u64 > cap;
    bytes.truncate(cap as usize);
    if cut {
        process.kill();
    }
    let status = process.finish();
    if cut {
        return Ok(Output { bytes, cut });
    }
    status?;
    read.map_err(|e| Failure::Io(e.to_string()))?;
    Ok(Output { bytes, cut })
}

/// A running git, killed by its watchdog past the deadline.
struct Process {
    child: Arc<Mutex<Child>>,
    stdout: Option<ChildStdout>,
    stderr: Option<JoinHandle<Vec<u8>>>,
    stdin: Option<JoinHandle<()>>,
    /// Dropping it tells the watchdog the process is done.
    done: Option<mpsc::Sender<()>>,
    watchdog: Option<JoinHandle<bool>>,
    timeout: Duration,
    /// When it was started: the deadline is `started + timeout`.
    started: Instant,
    /// `git log`, for messages.
    label: String,
}

/// The most of standard error kept for a message.
const STDERR_KEPT: u64 = 4096;

impl Process {
    fn spawn(dir: &Path, args: &[&str], stdin: Option<Vec<u8>>, bounds: &Bounds) -> Result<Process, Failure> {
        let mut command = Command::new("git");
        command
            .arg("-C")
            .arg(dir)
            // Nothing of the user's setup may add to or change what is parsed,
            // start a program, or wait for a password.
            .args(["-c", "core.fsmonitor=false", "-c", "log.showSignature=false", "-c", "diff.external="])
            .args(["--no-pager", "--no-replace-objects"])
            .args(args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("LC_ALL", "C");
        let label = format!("git {}", args.first().copied().unwrap_or_default());
        Process::start(command, stdin, bounds.timeout, label)
    }

    /// Start `command` with its output piped and a watchdog that kills it
    /// after `timeout`; `stdin`, when given, is written on its own thread.
    fn start(
        mut command: Command,
        stdin: Option<Vec<u8>>,
        timeout: Duration,
        label: String,
    ) -> Result<Process, Failure> {
        command
            .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Failure::NotFound,
            _ => Failure::Io(format!("starting {label}: {e}")),
        })?;
        let stdout = child.stdout.take();
        let mut err = child.stderr.take().expect("stderr is piped");
        // Standard error is drained whole (a process blocked on a full pipe
        // would only end at the deadline), its start kept for a message.
        let stderr = std::thread::spawn(move || {
            let mut kept = Vec::new();
            let _ = (&mut err).take(STDERR_KEPT).read_to_end(&mut kept);
            let _ = std::io::copy(&mut err, &mut std::io::sink());
            kept
        });
        // The request is written on its own thread while the answers are read.
        let stdin = match (stdin, child.stdin.take()) {
            (Some(bytes), Some(mut pipe)) => Some(std::thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            })),
            _ => None,
        };
        let started = Instant::now();
        let child = Arc::new(Mutex::new(child));
        let (done, finished) = mpsc::channel::<()>();
        let watched = Arc::clone(&child);
        let watchdog = std::thread::spawn(move || match finished.recv_timeout(timeout) {
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let _ = watched.lock().unwrap_or_else(|e| e.into_inner()).kill();
                true
            }
            _ => false,
        });
        Ok(Process {
            child,
            stdout,
            stderr: Some(stderr),
            stdin,
            done: Some(done),
            watchdog: Some(watchdog),
            timeout,
            started,
            label,
        })
    }

    fn kill(&mut self) {
        let _ = self.child.lock().unwrap_or_else(|e| e.into_inner()).kill();
    }

    /// Wait for the process (its output is read or dropped by now): `Ok`
    /// when it exited with success.
    fn finish(mut self) -> Result<(), Failure> {
        drop(self.stdout.take());
        // Waited for before the watchdog stands down, so that a process that
        // hangs after its output still meets the deadline.
        let status = loop {
            let polled = self.child.lock().unwrap_or_else(|e| e.into_inner()).try_wait();
            match polled {
                Ok(Some(status)) => break Ok(status),
                Ok(None) => std::thread::sleep(Duration::from_millis(2)),
                Err(e) => break Err(e),
            }
        };
        // Past the deadline whether or not the watchdog was scheduled in time
        // to kill it: a loaded machine must not let a late process through.
        let late = self.started.elapsed() > self.timeout;
        drop(self.done.take());
        let killed = self.watchdog.take().is_some_and(|w| w.join().unwrap_or(false));
        if let Some(stdin) = self.stdin.take() {
            let _ = stdin.join();
        }
        let stderr = self.stderr.take().map(|h| h.join().unwrap_or_default()).unwrap_or_default();
        if killed || late {
            return Err(Failure::TimedOut(self.timeout));
        }
        let status = status.map_err(|e| Failure::Io(format!("waiting for {}: {e}", self.label)))?;
        if status.success() {
            return Ok(());
        }
        let said = String::from_utf8_lossy(&stderr);
        let said = said.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ");
        Err(Failure::Status(if said.is_empty() { format!("{} failed ({status})", self.label) } else { said }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "1111111111111111111111111111111111111111";
    const B: &str = "2222222222222222222222222222222222222222";
    const Z: &str = "0000000000000000000000000000000000000000";

    fn entry(status: &str, blob: &str, paths: &[&str]) -> Vec<u8> {
        let mut e = format!(":100644 100644 {Z} {blob} {status}\0").into_bytes();
        for p in paths {
            e.extend_from_slice(p.as_bytes());
            e.push(0);
        }
        e
    }

    fn header(sha: &str, date: &str) -> Vec<u8> {
        format!("\x01{sha} {date}\0\n").into_bytes()
    }

    #[test]
    fn a_log_parses_into_commits_oldest_first_with_renames() {
        let mut out = header(B, "2026-02-01T00:00:00Z");
        out.extend(entry("R087", B, &["old.json", "new \u{1}name.json"]));
        out.extend(entry("D", Z, &["gone.json"]));
        out.extend(header(A, "2026-01-01T00:00:00Z"));
        out.extend(entry("A", A, &["old.json"]));
        let log = parse_log(&out, false);
        assert_eq!(log.unreadable, 0);
        assert_eq!(log.commits.len(), 2);
        let newest = &log.commits[0];
        assert_eq!((newest.sha.as_str(), newest.date.as_str()), (B, "2026-02-01T00:00:00Z"));
        assert_eq!(newest.changes[0].status, 'R');
        // A name may hold any byte but NUL, even the header's mark.
        assert_eq!(newest.changes[0].path, "new \u{1}name.json");
        assert_eq!(newest.changes[0].from.as_deref(), Some("old.json"));
        assert_eq!(newest.changes[1].status, 'D');
        assert_eq!(log.commits[1].changes[0].blob, A);
    }

    #[test]
    fn garbage_and_cut_output_are_passed_over_without_panicking() {
        let mut out = header(A, "2026-01-01T00:00:00Z");
        out.extend(entry("M", A, &["a.json"]));
        out.extend(b":bad\0\x01nothex 2026\0:100644 100644 x y\0entry-less\0".iter());
        out.extend(entry("Q", A, &["q.json"]));
        out.extend(header(B, "2026-02-01T00:00:00Z"));
        out.extend(entry("M", B, &["b.json"]));
        let log = parse_log(&out, false);
        assert_eq!(log.commits.len(), 2);
        assert!(log.unreadable >= 4, "{log:?}");
        // Cut at the cap: the last (oldest) commit may be incomplete and is dropped.
        let cut = parse_log(&out, true);
        assert_eq!(cut.commits.len(), 1);
        assert_eq!(cut.commits[0].sha, A);
        // Every prefix of a log parses (no index past the end anywhere).
        for end in 0..out.len() {
            let _ = parse_log(&out[..end], end < out.len());
        }
        for noise in [&b"\0\0\0"[..], b"\x01", b":", b": : : : :", b"\n\n\x01\0:1 2 3 4 R\0only-one"] {
            let log = parse_log(noise, false);
            assert!(log.commits.iter().all(|c| c.changes.is_empty()), "{noise:?}");
        }
    }

    #[test]
    fn a_blob_stream_says_what_each_answer_is() {
        let stream = format!("{A} blob 5\nhello\n{B} missing\n{Z} tree 3\nabc\n");
        let mut reader = BufReader::new(stream.as_bytes());
        assert_eq!(read_blob(&mut reader, A, 100).unwrap().unwrap(), b"hello");
        assert!(read_blob(&mut reader, B, 100).unwrap().unwrap_err().contains("not in the repository"));
        assert!(read_blob(&mut reader, Z, 100).unwrap().unwrap_err().contains("a tree"));
        // Over the cap: read past, not kept; the next answer still lines up.
        let stream = format!("{A} blob 5\nhello\n{B} blob 2\nhi\n");
        let mut reader = BufReader::new(stream.as_bytes());
        assert!(read_blob(&mut reader, A, 4).unwrap().unwrap_err().contains("over the cap"));
        assert_eq!(read_blob(&mut reader, B, 4).unwrap().unwrap(), b"hi");
        // A stream that lies about sizes, ends early or answers another object is broken.
        for bad in [format!("{A} blob 50\nshort"), format!("{B} blob 1\nx\n"), format!("{A} blob x\n"), "".into()] {
            assert!(read_blob(&mut BufReader::new(bad.as_bytes()), A, 100).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_folder_outside_any_repository_says_so() {
        let dir = tempfile::tempdir().unwrap();
        match repository(dir.path(), &Bounds::default()) {
            Ok(_) => eprintln!("skipping: the temporary folder is inside a git repository"),
            Err(NoRepository(why)) => {
                assert!(why.contains("not in a git repository") || why.contains("git is not installed"), "{why}")
            }
        }
    }

    #[test]
    fn a_process_past_its_deadline_is_stopped() {
        let start = std::time::Instant::now();
        let mut sleep = Command::new("sleep");
        sleep.arg("30");
        let process = Process::start(sleep, None, Duration::from_millis(300), "sleep".into()).unwrap();
        let outcome = read_output(process, 1024);
        assert!(matches!(outcome, Err(Failure::TimedOut(_))), "{:?}", outcome.err());
        assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
    }

    #[test]
    fn a_process_that_ends_past_its_deadline_before_the_watchdog_acts_has_still_timed_out() {
        // A zero deadline: the watchdog may not run before `true` exits, as
        // on a loaded machine; the process is late all the same.
        for _ in 0..20 {
            let process = Process::start(Command::new("true"), None, Duration::ZERO, "true".into()).unwrap();
            let outcome = read_output(process, 1024);
            assert!(matches!(outcome, Err(Failure::TimedOut(_))), "{:?}", outcome.err());
        }
    }

    #[test]
    fn output_past_the_cap_stops_the_process_and_is_marked_cut() {
        let start = std::time::Instant::now();
        let process = Process::start(Command::new("yes"), None, Duration::from_secs(30), "yes".into()).unwrap();
        let out = read_output(process, 10_000).unwrap();
        assert!(out.cut);
        assert_eq!(out.bytes.len(), 10_000);
        assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
    }
}
