//! File input and output shared by every stage: atomic writes and JSON reads
//! whose errors name the file, the position and the field.
//!
//! It does not know any file format; callers pass their own serde types.

use std::fs;
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, anyhow};
use serde::de::DeserializeOwned;

/// Write `bytes` to `path` so that readers see either the old file or the
/// whole new one, never a prefix: a temporary file in the same directory,
/// flushed to disk, then renamed over the target. On error the temporary file
/// is removed and the target is untouched.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir).with_context(|| format!("creating directory {}", dir.display()))?;
    let file_name = path.file_name().ok_or_else(|| anyhow!("writing {}: not a file path", path.display()))?;
    let prefix = format!(".{}.", file_name.to_string_lossy());
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // Like any newly created file (0666 less the umask), not tempfile's private 0600:
    // results and baselines are shared and committed.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut tmp =
        builder.tempfile_in(dir).with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .with_context(|| format!("writing {}", path.display()))?;
    tmp.persist(path).map_err(|e| e.error).with_context(|| format!("replacing {}", path.display()))?;
    Ok(())
}

/// Read and parse a JSON file into `T`. Errors read like
/// `reading x.json: line 3 column 9 at `tasks[2].runs`: invalid type ...`.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
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

/// Parse JSON text into `T`, keeping the failing field's path.
pub fn parse_json<T: DeserializeOwned>(text: &str) -> Result<T, JsonError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|err| {
        let field = err.path().to_string();
        let inner = err.into_inner();
        // serde_json appends " at line L column C" to its messages; we report
        // the position separately.
        let message = inner.to_string();
        let message = match message.rfind(" at line ") {
            Some(i) => message[..i].to_string(),
            None => message,
        };
        JsonError { line: inner.line(), column: inner.column(), field, message }
    })
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
}
