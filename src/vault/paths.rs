//! Path confinement: every path a tool receives is resolved here, relative to
//! the vault root. `..`, absolute paths and paths through a symbolic link
//! that leads outside the vault are refused before anything is read or
//! written; a tool never sees an unchecked path.

use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::limits::Limits;
use crate::score::sandbox::RegexBudget;

/// A vault folder, by its canonical absolute path, with the bounds the tools
/// work within: the caps of [`Limits`] and the run's deadline.
#[derive(Debug, Clone)]
pub struct Vault {
    root: PathBuf,
    limits: Limits,
    /// When the run's time is up; tools stop their work there.
    deadline: Option<Instant>,
}

/// A checked path: `rel` is the vault-relative form with `/` separators
/// (`""` for the root), `abs` the real location below the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VaultPath {
    pub rel: String,
    pub abs: PathBuf,
}

impl VaultPath {
    pub fn is_root(&self) -> bool {
        self.rel.is_empty()
    }

    pub fn exists(&self) -> bool {
        self.abs.symlink_metadata().is_ok()
    }
}

impl Vault {
    /// The vault at `root`, which must be an existing folder.
    pub fn open(root: &Path) -> io::Result<Vault> {
        let root = root.canonicalize()?;
        if !root.is_dir() {
            return Err(io::Error::new(io::ErrorKind::NotADirectory, format!("{} is not a folder", root.display())));
        }
        Ok(Vault { root, limits: Limits::default(), deadline: None })
    }

    /// The same vault, with these caps.
    pub fn with_limits(mut self, limits: &Limits) -> Vault {
        self.limits = limits.clone();
        self
    }

    /// The same vault, for a run whose time is up at `deadline`.
    pub fn with_deadline(&self, deadline: Instant) -> Vault {
        Vault { deadline: Some(deadline), ..self.clone() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// `Err` once the run's deadline has passed: long tool work (walking the
    /// vault, searching every file) checks it as it goes.
    pub fn check_time(&self) -> Result<(), String> {
        match self.deadline {
            Some(d) if Instant::now() >= d => Err("stopped: the run's time (timeoutMs) is up".into()),
            _ => Ok(()),
        }
    }

    /// How long regex work of a tool may take: `regex_timeout` per pattern
    /// and file, never past the run's deadline.
    pub fn regex_budget(&self) -> RegexBudget {
        RegexBudget { per_pattern: self.limits.regex_timeout, until: self.deadline, on_cpu: false }
    }

    /// A file's text, refusing folders, files over `max_read_bytes` and
    /// binary content. `rel` names it in errors.
    pub fn read_text(&self, path: &Path, rel: &str) -> Result<String, String> {
        let max = self.limits.max_read_bytes;
        let meta = std::fs::metadata(path).map_err(|_| format!("file `{rel}` not found"))?;
        if meta.is_dir() {
            return Err(format!("`{rel}` is a folder, not a file"));
        }
        let too_large = |len: u64| format!("`{rel}` is too large to read ({len} bytes; the limit is {max})");
        if meta.len() > max {
            return Err(too_large(meta.len()));
        }
        // Read at most one byte past the cap, whatever the file does meanwhile.
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        std::fs::File::open(path)
            .and_then(|f| f.take(max + 1).read_to_end(&mut bytes))
            .map_err(|e| format!("cannot read `{rel}`: {e}"))?;
        if bytes.len() as u64 > max {
            return Err(too_large(bytes.len() as u64));
        }
        String::from_utf8(bytes).map_err(|_| format!("`{rel}` is not a text file (not UTF-8)"))
    }

    /// Refuse a write of `len` bytes over `max_write_bytes`, naming `what`.
    pub fn check_write(&self, what: &str, len: usize) -> Result<(), String> {
        let max = self.limits.max_write_bytes;
        if len as u64 > max {
            return Err(format!("{what} is {len} bytes; one write may add at most {max} bytes: write less at a time"));
        }
        Ok(())
    }

    /// The vault-relative form of a path found by walking the vault: `None`
    /// outside it, an error (for the model) when a name in it is not valid
    /// UTF-8. Such a name cannot be written in a tool call, and shown with
    /// U+FFFD in its place two names could read as one; so the tool that
    /// met it says so instead of listing a name the model could not use.
    pub fn relative(&self, abs: &Path) -> Option<Result<String, String>> {
        let rel = abs.strip_prefix(&self.root).ok()?;
        let mut parts = Vec::new();
        for c in rel.components() {
            match c.as_os_str().to_str() {
                Some(part) => parts.push(part),
                None => {
                    let shown = rel.as_os_str().to_string_lossy();
                    return Some(Err(format!(
                        "the vault holds a file or folder whose name is not valid UTF-8 ({:?}, shown here with \
                         U+FFFD for the bytes that are not): vault tools handle UTF-8 names only, so this tool \
                         cannot list it; name its folder's other notes directly",
                        shown
                    )));
                }
            }
        }
        Some(Ok(parts.join("/")))
    }

    /// Check a path given by the model. `""`, `"/"` and `"."` are the root.
    pub fn resolve(&self, raw: &str) -> Result<VaultPath, String> {
        let trimmed = raw.trim();
        if trimmed.contains('\0') {
            return Err(format!("invalid path {raw:?}: it contains a NUL character"));
        }
        if trimmed.is_empty() || trimmed == "/" || trimmed == "." || trimmed == "./" {
            return Ok(VaultPath { rel: String::new(), abs: self.root.clone() });
        }
        if trimmed.starts_with('/')
            || trimmed.starts_with('\\')
            || has_drive_prefix(trimmed)
            || trimmed.starts_with('~')
        {
            return Err(format!(
                "path `{raw}` is absolute: paths are relative to the vault root, e.g. `eval-scratch/note.md`"
            ));
        }
        let mut parts = Vec::new();
        for part in trimmed.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    return Err(format!("path `{raw}` contains `..`: paths must stay inside the vault"));
                }
                p => parts.push(p),
            }
        }
        let rel = parts.join("/");
        let abs = self.root.join(&rel);
        self.check_links(&abs, raw)?;
        Ok(VaultPath { rel, abs })
    }

    /// Like [`resolve`](Self::resolve), but `eval-scratch/note` finds
    /// `eval-scratch/note.md` when only the latter exists.
    pub fn resolve_note(&self, raw: &str) -> Result<VaultPath, String> {
        let path = self.resolve(raw)?;
        if !path.exists() && !path.is_root() && !path.rel.ends_with(".md") {
            let with_md = self.resolve(&format!("{}.md", path.rel))?;
            if with_md.exists() {
                return Ok(with_md);
            }
        }
        Ok(path)
    }

    /// Refuse a path if any existing prefix of it is a symbolic link whose
    /// target is outside the vault (or cannot be resolved). Checking every
    /// prefix means a link in the middle of the path is caught too.
    fn check_links(&self, abs: &Path, raw: &str) -> Result<(), String> {
        let rel = abs.strip_prefix(&self.root).map_err(|_| format!("path `{raw}` is outside the vault"))?;
        let mut current = self.root.clone();
        for component in rel.components() {
            current.push(component);
            match current.symlink_metadata() {
                Ok(meta) if meta.file_type().is_symlink() => match current.canonicalize() {
                    Ok(target) if target.starts_with(&self.root) => {}
                    Ok(_) => {
                        return Err(format!(
                            "path `{raw}` goes through a symbolic link that leads outside the vault: refused"
                        ));
                    }
                    Err(_) => {
                        return Err(format!("path `{raw}` goes through a symbolic link that cannot be resolved"));
                    }
                },
                Ok(_) => {}
                // The rest does not exist yet (a file about to be written).
                Err(_) => break,
            }
        }
        Ok(())
    }
}

fn has_drive_prefix(p: &str) -> bool {
    let b = p.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vault() -> (tempfile::TempDir, Vault) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("eval-scratch")).unwrap();
        std::fs::write(dir.path().join("eval-scratch/note.md"), "x").unwrap();
        let v = Vault::open(dir.path()).unwrap();
        (dir, v)
    }

    #[test]
    fn relative_paths_resolve_below_the_root() {
        let (_d, v) = vault();
        let p = v.resolve("eval-scratch//./note.md").unwrap();
        assert_eq!(p.rel, "eval-scratch/note.md");
        assert_eq!(p.abs, v.root().join("eval-scratch/note.md"));
        for root in ["", "/", ".", " "] {
            assert!(v.resolve(root).unwrap().is_root(), "{root:?}");
        }
        assert_eq!(v.resolve_note("eval-scratch/note").unwrap().rel, "eval-scratch/note.md");
        assert_eq!(v.resolve_note("eval-scratch/new").unwrap().rel, "eval-scratch/new");
    }

    #[test]
    fn escapes_are_refused() {
        let (_d, v) = vault();
        for bad in ["../../etc/passwd", "eval-scratch/../../x", "/etc/passwd", "C:/x", "~/x", "a/..", "\\etc"] {
            assert!(v.resolve(bad).is_err(), "{bad}");
        }
        assert!(v.resolve("../x").unwrap_err().contains("`..`"));
        assert!(v.resolve("/etc/passwd").unwrap_err().contains("absolute"));
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_out_are_refused_and_links_inside_allowed() {
        let (dir, v) = vault();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("eval-scratch"), dir.path().join("inside")).unwrap();
        std::os::unix::fs::symlink("/nonexistent/target", dir.path().join("dangling")).unwrap();
        assert!(v.resolve("out").unwrap_err().contains("outside the vault"));
        assert!(v.resolve("out/new.md").is_err());
        assert!(v.resolve("dangling").is_err());
        assert_eq!(v.resolve("inside/note.md").unwrap().rel, "inside/note.md");
    }
}
