//! Paths into the suite's `fixtures/` folder, which seeds every run's vault
//! (a task's `fixture` folder, `setup[].from` files, the originals that
//! `fileUnchanged` compares with). A fixture is plain files and folders under
//! `fixtures/`: a path that climbs out (`..`, absolute) or passes through a
//! symbolic link could copy a file from anywhere on the machine into the vault
//! the model sees, so it is refused, when the suite is checked and again when
//! a vault is prepared.

use std::path::{Component, Path, PathBuf};

/// What a fixture path must name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Folder,
}

/// `fixtures/<rel>`, checked: `rel` is relative without `..`, no part of it
/// below `fixtures` is a symbolic link, and it names a regular file or a
/// folder as `kind` says. The error says what is wrong, naming the path.
pub fn resolve(fixtures: &Path, rel: &str, kind: Kind) -> Result<PathBuf, String> {
    let inside =
        !rel.is_empty() && Path::new(rel).components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !inside {
        return Err(format!("`{rel}` leaves the fixtures folder {}", fixtures.display()));
    }
    let mut path = fixtures.to_path_buf();
    for part in Path::new(rel).components() {
        path.push(part);
        let meta = std::fs::symlink_metadata(&path).map_err(|_| format!("`{rel}` not found at {}", path.display()))?;
        if meta.file_type().is_symlink() {
            return Err(format!(
                "{} is a symbolic link: fixtures are plain files and folders (a link could seed a file from outside them)",
                path.display()
            ));
        }
    }
    let meta = std::fs::symlink_metadata(&path).map_err(|_| format!("`{rel}` not found at {}", path.display()))?;
    match kind {
        Kind::File if !meta.is_file() => Err(format!("{} is not a regular file", path.display())),
        Kind::Folder if !meta.is_dir() => Err(format!("{} is not a folder", path.display())),
        _ => Ok(path),
    }
}

/// The first entry under the folder `dir` that is not a plain file or
/// folder (a symbolic link, a FIFO...), which copying the fixture refuses.
pub fn first_special(dir: &Path) -> Option<PathBuf> {
    walkdir::WalkDir::new(dir).follow_links(false).into_iter().find_map(|entry| match entry {
        Ok(e) if e.file_type().is_file() || e.file_type().is_dir() => None,
        Ok(e) => Some(e.path().to_path_buf()),
        Err(e) => Some(e.path().unwrap_or(dir).to_path_buf()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn links_and_climbs_are_refused() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let fixtures = dir.path().join("fixtures");
        std::fs::create_dir_all(fixtures.join("f/sub")).unwrap();
        std::fs::write(fixtures.join("f/a.md"), "a").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "secret").unwrap();
        symlink(dir.path().join("secret.txt"), fixtures.join("f/link.md")).unwrap();
        symlink(dir.path(), fixtures.join("up")).unwrap();
        symlink(fixtures.join("f"), fixtures.join("alias")).unwrap();

        assert_eq!(resolve(&fixtures, "f/a.md", Kind::File).unwrap(), fixtures.join("f/a.md"));
        assert_eq!(first_special(&fixtures.join("f")), Some(fixtures.join("f/link.md")));
        assert_eq!(first_special(&fixtures.join("f/sub")), None);
        assert_eq!(resolve(&fixtures, "./f/sub", Kind::Folder).unwrap(), fixtures.join("f/sub"));
        for (rel, kind, why) in [
            ("f/link.md", Kind::File, "symbolic link"),
            ("up/secret.txt", Kind::File, "symbolic link"),
            ("alias/a.md", Kind::File, "symbolic link"),
            ("alias", Kind::Folder, "symbolic link"),
            ("../secret.txt", Kind::File, "leaves the fixtures folder"),
            ("/etc/passwd", Kind::File, "leaves the fixtures folder"),
            ("", Kind::File, "leaves the fixtures folder"),
            ("f/missing.md", Kind::File, "not found"),
            ("f/sub", Kind::File, "not a regular file"),
            ("f/a.md", Kind::Folder, "not a folder"),
        ] {
            let err = resolve(&fixtures, rel, kind).unwrap_err();
            assert!(err.contains(why), "{rel}: {err}");
        }
    }
}
