//! File input and output shared by every stage: atomic writes, bounded reads
//! of input files, and JSON reads whose errors name the file, the position
//! and the field.
//!
//! It does not know any file format; callers pass their own serde types.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use serde::de::DeserializeOwned;

use crate::limits::Limits;

/// Where `path` leads, as the kernel will resolve it once the missing parts
/// are made as plain folders: absolute, every symbolic link of the part that
/// exists resolved, and each `..` applied to what precedes it *after* that
/// resolution. `std::path::absolute` keeps `..` as written and
/// `canonicalize` needs the whole path to exist, so neither tells where
/// `site/../docs` (no `site/` yet) or `link/../x` leads; this does, so that
/// every check of a place to write looks at the place itself. A dangling
/// link, or a link loop, is an error naming it.
pub fn resolve(path: &Path) -> Result<PathBuf> {
    use std::path::Component;
    let start = if path.is_absolute() {
        PathBuf::new()
    } else {
        std::env::current_dir()
            .context("reading the current folder")?
            .canonicalize()
            .context("resolving the current folder")?
    };
    let mut resolved = start;
    for part in path.components() {
        match part {
            Component::Prefix(_) | Component::RootDir => resolved.push(part.as_os_str()),
            Component::CurDir => {}
            // What precedes is already free of links, so its parent is the real one.
            Component::ParentDir => {
                resolved.pop();
            }
            Component::Normal(name) => {
                resolved.push(name);
                let is_link = fs::symlink_metadata(&resolved).is_ok_and(|m| m.file_type().is_symlink());
                if is_link {
                    resolved = resolved.canonicalize().with_context(|| {
                        format!("resolving {} (in {}): a link that leads nowhere", resolved.display(), path.display())
                    })?;
                }
            }
        }
    }
    Ok(resolved)
}

/// Write `bytes` to `path` so that readers see either the old file or the
/// whole new one, never a prefix: a temporary file in the same directory,
/// flushed to disk, then renamed over the target. On error the temporary file
/// is removed and the target is untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |file| file.write_all(bytes).map_err(anyhow::Error::from))
}

/// [`write_atomic`], with the contents streamed by `fill` into the temporary
/// file (`.<name>.XXXXXX.tmp` next to `path`), so that a large file is never
/// held in memory whole.
pub fn write_atomic_with(path: &Path, fill: impl FnOnce(&mut File) -> Result<()>) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir).with_context(|| format!("creating directory {}", dir.display()))?;
    let file_name = path.file_name().ok_or_else(|| anyhow!("writing {}: not a file path", path.display()))?;
    let prefix = format!(".{}.", file_name.to_string_lossy());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(TEMP_SUFFIX);
    // Like any newly created file (0666 less the umask), not tempfile's private 0600:
    // results and baselines are shared and committed.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut tmp =
        builder.tempfile_in(dir).with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    fill(tmp.as_file_mut())
        .and_then(|()| tmp.as_file().sync_all().map_err(anyhow::Error::from))
        .with_context(|| format!("writing {}", path.display()))?;
    tmp.persist(path).map_err(|e| e.error).with_context(|| format!("replacing {}", path.display()))?;
    Ok(())
}

/// The suffix of the temporary files [`write_atomic`] creates.
pub const TEMP_SUFFIX: &str = ".tmp";

/// Whether `name` is one of [`write_atomic`]'s temporary files
/// (`.<target>.XXXXXX.tmp`), which a process killed mid-write leaves behind.
pub fn is_atomic_temp(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(TEMP_SUFFIX)
}

/// Remove the [`write_atomic`] temporary files directly in `dir` (not in
/// its subfolders), left by a process killed mid-write; the count removed.
/// Only regular files with that name pattern are touched. The caller makes
/// sure no write of its own is under way there (it holds the folder's lock).
pub fn remove_atomic_temps(dir: &Path) -> Result<usize> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
    };
    let mut removed = 0;
    for entry in entries {
        let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
        let is_temp = is_atomic_temp(&entry.file_name().to_string_lossy());
        if is_temp && entry.file_type().is_ok_and(|t| t.is_file()) {
            match fs::remove_file(entry.path()) {
                Ok(()) => removed += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e).with_context(|| format!("removing {}", entry.path().display())),
            }
        }
    }
    Ok(removed)
}

/// Make the renames done in `dir` durable (a power cut after this keeps
/// them), where the platform allows syncing a directory.
pub fn sync_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    File::open(dir).and_then(|d| d.sync_all()).with_context(|| format!("syncing the directory {}", dir.display()))?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Read an input file whole, at most `cap` bytes. Only a regular file is
/// read: a FIFO would block for ever and a device (`/dev/zero`) never ends.
/// A larger file is an error naming it and the cap, not a memory spike.
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>> {
    read_capped_plain(path, cap).map_err(|why| anyhow!("reading {}: {why}", path.display()))
}

/// [`read_capped`], the error saying why without naming the file, for
/// callers that name it themselves.
pub fn read_capped_plain(path: &Path, cap: u64) -> Result<Vec<u8>, String> {
    let meta = fs::metadata(path).map_err(|e| e.to_string())?;
    check_regular(&meta)?;
    let file = File::open(path).map_err(|e| e.to_string())?;
    // Look again at what was opened: the path may have changed in between.
    let meta = file.metadata().map_err(|e| e.to_string())?;
    check_regular(&meta)?;
    let too_large = |size: u64| {
        format!("the file has {size} bytes, over the cap of {cap} bytes ({} MiB) on one input file", cap >> 20)
    };
    if meta.len() > cap {
        return Err(too_large(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // One byte past the cap tells a file that grew while being read.
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > cap {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

fn check_regular(meta: &fs::Metadata) -> Result<(), String> {
    if meta.is_file() {
        return Ok(());
    }
    let kind = if meta.is_dir() { "a folder" } else { special_kind(meta) };
    Err(format!("it is {kind}, not a regular file"))
}

#[cfg(unix)]
fn special_kind(meta: &fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else {
        "a special file"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &fs::Metadata) -> &'static str {
    "a special file"
}

/// An input file's bytes, within [`Limits::max_input_file_bytes`].
pub fn read_input(path: &Path) -> Result<Vec<u8>> {
    read_capped(path, Limits::default().max_input_file_bytes)
}

/// An input file's text (see [`read_input`]): UTF-8, with a leading byte
/// order mark dropped, as editors on some systems write one.
pub fn read_text(path: &Path) -> Result<String> {
    read_text_plain(path).map_err(|why| anyhow!("reading {}: {why}", path.display()))
}

/// [`read_text`], the error saying why without naming the file.
pub fn read_text_plain(path: &Path) -> Result<String, String> {
    let bytes = read_capped_plain(path, Limits::default().max_input_file_bytes)?;
    let mut text = String::from_utf8(bytes)
        .map_err(|e| format!("not UTF-8 text (invalid byte at offset {})", e.utf8_error().valid_up_to()))?;
    if text.starts_with(BOM) {
        text.drain(..BOM.len_utf8());
    }
    Ok(text)
}

const BOM: char = '\u{feff}';

/// Test-only hook: the environment variable naming a step at which a
/// command pauses (about a minute), so that tests can kill it there. Steps
/// are named where [`test_pause`] is called (`bless-...`). Never set it
/// outside tests.
pub const TEST_PAUSE_ENV: &str = "VAULTBENCH_TEST_PAUSE_AT";

/// Pause at `step` when [`TEST_PAUSE_ENV`] names it, saying so on stderr.
pub fn test_pause(step: &str) {
    if std::env::var_os(TEST_PAUSE_ENV).is_some_and(|v| v == step) {
        eprintln!("vaultbench: paused at {step} ({TEST_PAUSE_ENV}, a test hook)");
        std::thread::sleep(Duration::from_secs(60));
    }
}

/// Read and parse a JSON file into `T`. Errors read like
/// `reading x.json: line 3 column 9 at `tasks[2].runs`: invalid type ...`.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T> {
    let text = read_text(path)?;
    parse_json(&text).map_err(|e| anyhow!("reading {}: {e}", path.display()))
}

/// A JSON parse error with its position and the path of the offending field.
#[derive(Debug, Clone)]
pub struct JsonError {
    pub line: usize,
    pub column: usize,
    /// Dotted path to the field, e.g. `outputMatchers[1].flags`; empty at the root.
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {} column {}", self.line, self.column)?;
        if !self.field.is_empty() && self.field != "." {
            write!(f, " at `{}`", self.field)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Parse JSON text into `T`, keeping the failing field's path. The text is
/// exactly one JSON value: anything but whitespace after it is an error, so
/// that a file with a second value or garbage appended is never taken for
/// its first part. A leading byte order mark is allowed.
pub fn parse_json<T: DeserializeOwned>(text: &str) -> Result<T, JsonError> {
    let text = text.strip_prefix(BOM).unwrap_or(text);
    let mut de = serde_json::Deserializer::from_str(text);
    // Tracking the path costs a good part of the parse, so the usual case
    // (a valid file) parses without it, and a failure parses again with it.
    let value = match T::deserialize(&mut de) {
        Ok(value) => value,
        Err(first) => return Err(located_error::<T>(text, first)),
    };
    de.end().map_err(|e| JsonError {
        line: e.line(),
        column: e.column(),
        field: String::new(),
        message: "more text after the JSON value (a file holds exactly one value)".into(),
    })?;
    Ok(value)
}

/// The error of parsing `text` as `T`, with the failing field's path (a
/// second parse that tracks it; `first` is the error without it).
fn located_error<T: DeserializeOwned>(text: &str, first: serde_json::Error) -> JsonError {
    let mut de = serde_json::Deserializer::from_str(text);
    let (field, inner) = match serde_path_to_error::deserialize::<_, T>(&mut de) {
        Err(err) => (err.path().to_string(), err.into_inner()),
        Ok(_) => (String::new(), first),
    };
    // serde_json appends " at line L column C" to its messages; we report
    // the position separately.
    let message = inner.to_string();
    let message = match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message,
    };
    JsonError { line: inner.line(), column: inner.column(), field, message }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn atomic_write_gives_the_mode_of_any_new_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        fs::File::create(&plain).unwrap();
        write_atomic(&dir.path().join("atomic"), b"x").unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir.path().join("atomic")), mode(&plain));
    }

    #[test]
    fn atomic_write_replaces_whole_file_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        write_atomic(&path, b"old").unwrap();
        write_atomic(&path, b"new contents").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new contents");
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.json")]);
    }

    #[test]
    fn failed_atomic_write_keeps_target_and_cleans_up() {
        let dir = tempfile::tempdir().unwrap();
        // A non-empty directory cannot be replaced by a rename.
        let target = dir.path().join("taken");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("keep"), b"x").unwrap();
        assert!(write_atomic(&target, b"data").is_err());
        assert_eq!(fs::read(target.join("keep")).unwrap(), b"x");
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("taken")]);
    }

    #[test]
    fn parse_errors_name_the_field_and_position() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Inner {
            n: u32,
        }
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Outer {
            items: Vec<Inner>,
        }
        let err = parse_json::<Outer>("{\n \"items\": [{\"n\": 1}, {\"n\": \"x\"}]\n}").unwrap_err();
        assert_eq!(err.line, 2);
        assert_eq!(err.field, "items[1].n");
        assert!(err.message.contains("invalid type"), "{}", err.message);
    }

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct One {
        n: u32,
    }

    #[test]
    fn text_after_the_value_is_an_error_with_its_position() {
        for text in ["{\"n\": 1}garbage}", "{\"n\": 1}\n{\"n\": 2}", "{\"n\": 1} ,", "{\"n\": 1}\u{0}"] {
            let err = parse_json::<One>(text).unwrap_err();
            assert!(err.message.contains("more text after the JSON value"), "{text:?}: {err}");
            assert_eq!(err.field, "");
        }
        let err = parse_json::<One>("{\"n\": 1}\n\n  x").unwrap_err();
        assert_eq!((err.line, err.column), (3, 3));
        // Whitespace after the value is fine.
        assert_eq!(parse_json::<One>("{\"n\": 1}\n\t \r\n").unwrap(), One { n: 1 });
    }

    #[test]
    fn a_byte_order_mark_is_accepted() {
        assert_eq!(parse_json::<One>("\u{feff}{\"n\": 7}").unwrap(), One { n: 7 });
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bom.json");
        fs::write(&path, b"\xef\xbb\xbf{\"n\": 8}\n").unwrap();
        assert_eq!(read_json::<One>(&path).unwrap(), One { n: 8 });
        assert_eq!(read_text(&path).unwrap(), "{\"n\": 8}\n");
        // Only at the start: a second mark is text like any other.
        assert!(parse_json::<One>("\u{feff}\u{feff}{\"n\": 7}").is_err());
    }

    #[test]
    fn reads_are_capped_and_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        fs::write(&path, vec![b' '; 101]).unwrap();
        assert_eq!(read_capped(&path, 101).unwrap().len(), 101);
        let err = read_capped(&path, 100).unwrap_err().to_string();
        assert!(err.contains("big.json") && err.contains("101 bytes") && err.contains("cap of 100 bytes"), "{err}");
        fs::write(&path, b"\xff\xfe").unwrap();
        let err = read_text(&path).unwrap_err().to_string();
        assert!(err.contains("not UTF-8"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn special_files_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("task.json");
        let status = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(status.success());
        // Opening a FIFO for reading would block until a writer comes.
        let err = read_json::<One>(&fifo).unwrap_err().to_string();
        assert!(err.contains("task.json") && err.contains("a FIFO"), "{err}");
        let zero = dir.path().join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let err = read_text(&zero).unwrap_err().to_string();
        assert!(err.contains("zero.json") && err.contains("a device"), "{err}");
        let err = read_text(dir.path()).unwrap_err().to_string();
        assert!(err.contains("a folder"), "{err}");
    }
}
