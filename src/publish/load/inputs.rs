//! The rule for what an input folder holds, the same for every one the site
//! is read from (the docs, the templates and their static files, the
//! baselines and their evidence archives):
//!
//! - hidden files and editors' temporary files are not read;
//! - a symbolic link is read when it leads to a plain file inside the same
//!   input folder (a page or asset published under a second name, a
//!   baseline kept under an alias); a link that leads outside that folder,
//!   to a folder, or nowhere is skipped with a warning naming it and where
//!   it leads, so that a pull request cannot publish a file from elsewhere
//!   on the machine that builds the site. Folders reached through a link
//!   are never walked.
//!
//! docs/publishing.md ("What a build reads") says the same to users.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::publish::Warning;

/// Where the entry at `path` (under the input folder `root`) is read from:
/// itself, or the file its link leads to. `Err` says why a link is skipped.
pub fn readable(root: &Path, path: &Path) -> Result<PathBuf, String> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| e.to_string())?;
    if !meta.file_type().is_symlink() {
        return Ok(path.to_path_buf());
    }
    let shown = std::fs::read_link(path).map(|t| t.display().to_string()).unwrap_or_else(|_| "?".into());
    let target =
        path.canonicalize().map_err(|_| format!("a symbolic link to {shown}, which does not exist; it is skipped"))?;
    let inside = root.canonicalize().is_ok_and(|root| target.starts_with(root));
    if !inside {
        return Err(format!(
            "a symbolic link to {shown}, outside {}; it is skipped (links are read only within their own folder)",
            root.display()
        ));
    }
    if !target.is_file() {
        return Err(format!("a symbolic link to {shown}, which is not a file; it is skipped"));
    }
    Ok(target)
}

/// The files an input folder holds: (path relative to the folder with `/`,
/// where to read it).
pub type Files = Vec<(String, PathBuf)>;

/// Every file under `dir` by the rule above, sorted: (path relative to `dir`
/// with `/`, where to read it), and a warning per link skipped. `skip`
/// leaves out more entries (and what is under them).
pub fn files(dir: &Path, skip: impl Fn(&Path) -> bool) -> Result<(Files, Vec<Warning>)> {
    let mut files = Vec::new();
    let mut warnings = Vec::new();
    let walk = walkdir::WalkDir::new(dir).sort_by_file_name().into_iter();
    for entry in walk.filter_entry(|e| e.depth() == 0 || (!is_hidden(e.file_name()) && !skip(e.path()))) {
        let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
        let kind = entry.file_type();
        if !(kind.is_file() || kind.is_symlink()) {
            continue;
        }
        match readable(dir, entry.path()) {
            Ok(file) => files.push((relative(dir, entry.path()), file)),
            Err(why) => warnings.push(Warning::new(entry.path(), why)),
        }
    }
    Ok((files, warnings))
}

/// Whether a file name is hidden, or an editor's temporary file.
pub fn is_hidden(name: &std::ffi::OsStr) -> bool {
    let name = name.to_string_lossy();
    name.starts_with('.') || name.ends_with('~') || name.ends_with(".swp") || name.ends_with(".tmp")
}

fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    #[test]
    fn links_are_read_within_their_folder_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("docs");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("a.md"), "a").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "s").unwrap();
        symlink(root.join("a.md"), root.join("alias.md")).unwrap();
        symlink(dir.path().join("secret.txt"), root.join("leak.md")).unwrap();
        symlink(dir.path(), root.join("up")).unwrap();
        symlink(root.join("gone.md"), root.join("dangling.md")).unwrap();
        symlink("/etc/hostname", root.join("sub/etc.md")).unwrap();
        symlink(root.join("sub"), root.join("folder-link")).unwrap();
        let (files, warnings) = files(&root, |_| false).unwrap();
        let names: Vec<&str> = files.iter().map(|(rel, _)| rel.as_str()).collect();
        assert_eq!(names, ["a.md", "alias.md"]);
        assert_eq!(files[1].1, root.join("a.md").canonicalize().unwrap());
        let warned: Vec<String> = warnings.iter().map(ToString::to_string).collect();
        assert_eq!(warned.len(), 5, "{warned:#?}");
        for (name, why) in [
            ("leak.md", "outside"),
            ("up", "outside"),
            ("folder-link", "not a file"),
            ("dangling.md", "does not exist"),
            ("etc.md", "outside"),
        ] {
            assert!(warned.iter().any(|w| w.contains(name) && w.contains(why)), "{name}: {warned:#?}");
        }
    }
}
