//! What a task is, as one content hash: its definition file, every file of
//! its fixture folder (names and bytes) and every `setup` source. A result
//! records it per task (`content_hash`), so that a later comparison can
//! tell a task that was edited since a baseline from one that was not,
//! even when its id is the same (see `report::drift`).
//!
//! The hash is SHA-256, written `sha256:<hex>`: stable across machines and
//! versions of vaultbench, which a result file outlives. Each part is
//! prefixed with its kind and length, so that no two different tasks can
//! run together into the same bytes.
//!
//! It does not decide what a difference means (`report::drift` does).

use std::path::Path;

use anyhow::{Context, Result};
use ring::digest::{Context as Sha, SHA256};

use super::Suite;
use super::fixtures::{self, Kind};
use crate::format::task::Task;

/// The content hash of each of `tasks` in the suite at `root`, by id,
/// hashed on every core; a task whose files cannot be read now has none.
/// One function for every reader: a sweep recording what it ran, the site
/// and `report`/`compare` telling what was edited since.
pub fn content_hashes<'t>(
    root: &Path,
    tasks: impl IntoIterator<Item = &'t Task>,
) -> std::collections::BTreeMap<String, String> {
    hashes(root, tasks, content_hash)
}

/// The fixture hash of each of `tasks`, by id, as [`content_hashes`].
pub fn fixture_hashes<'t>(
    root: &Path,
    tasks: impl IntoIterator<Item = &'t Task>,
) -> std::collections::BTreeMap<String, String> {
    hashes(root, tasks, fixture_hash)
}

fn hashes<'t>(
    root: &Path,
    tasks: impl IntoIterator<Item = &'t Task>,
    of: fn(&Path, &Task) -> Result<String>,
) -> std::collections::BTreeMap<String, String> {
    use rayon::prelude::*;
    let tasks: Vec<&Task> = tasks.into_iter().collect();
    tasks.par_iter().filter_map(|t| of(root, t).ok().map(|h| (t.id.clone(), h))).collect()
}

/// The content hash of `task` in the suite at `root`.
pub fn content_hash(root: &Path, task: &Task) -> Result<String> {
    hash(root, task, true)
}

/// The hash of what `task`'s vault is made of, without its definition: its
/// fixture folder and `setup` sources. What the model's tools read, apart
/// from what the run itself writes; the checks are not in it.
pub fn fixture_hash(root: &Path, task: &Task) -> Result<String> {
    hash(root, task, false)
}

fn hash(root: &Path, task: &Task, with_definition: bool) -> Result<String> {
    let mut sha = Sha::new(&SHA256);
    if with_definition {
        let definition = Suite::tasks_dir(root).join(format!("{}.json", task.id));
        let bytes = std::fs::read(&definition).with_context(|| format!("reading {}", definition.display()))?;
        part(&mut sha, b"task", b"", &bytes);
    }
    let fixtures_dir = root.join("fixtures");
    if let Some(name) = &task.fixture {
        let folder = fixtures::resolve(&fixtures_dir, name, Kind::Folder).map_err(anyhow::Error::msg)?;
        let mut files = Vec::new();
        let mut folders = Vec::new();
        for entry in walkdir::WalkDir::new(&folder).follow_links(false).sort_by_file_name() {
            let entry = entry.with_context(|| format!("reading the fixture {}", folder.display()))?;
            let rel = entry.path().strip_prefix(&folder).expect("walkdir stays below its root");
            let rel: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
            if entry.file_type().is_file() {
                files.push((rel.join("/"), entry.into_path()));
            } else if entry.file_type().is_dir() && !with_definition && !rel.is_empty() {
                // A folder is listed by `list_files` even when empty: the
                // fixture hash (newer than the content hash, whose values
                // results already hold) names every folder.
                folders.push(rel.join("/"));
            }
        }
        // By their names as written, whatever the platform's separator.
        files.sort();
        folders.sort();
        for rel in &folders {
            part(&mut sha, b"folder", rel.as_bytes(), b"");
        }
        for (rel, path) in files {
            let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            part(&mut sha, b"fixture", rel.as_bytes(), &bytes);
        }
    }
    for setup in &task.setup {
        let from = fixtures::resolve(&fixtures_dir, &setup.from, Kind::File).map_err(anyhow::Error::msg)?;
        let bytes = std::fs::read(&from).with_context(|| format!("reading {}", from.display()))?;
        part(&mut sha, b"setup", format!("{}\0{}", setup.path, setup.from).as_bytes(), &bytes);
    }
    let digest = sha.finish();
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("sha256:{hex}"))
}

fn part(sha: &mut Sha, kind: &[u8], name: &[u8], bytes: &[u8]) {
    for piece in [kind, name, bytes] {
        sha.update(&(piece.len() as u64).to_le_bytes());
        sha.update(piece);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    const TASK: &str = r#"{"id": "t", "description": "d", "userMessage": "Read a.md.", "difficulty": "T1",
        "category": "c", "fixture": "f", "setup": [{"path": "memo.md", "from": "seed/memo.md"}],
        "outputMatchers": [{"type": "contains", "value": "x"}]}"#;

    fn hash(root: &Path) -> String {
        let suite = Suite::load(root).unwrap();
        content_hash(root, &suite.tasks[0]).unwrap()
    }

    #[test]
    fn the_hash_changes_with_the_definition_the_fixture_and_the_setup_files_and_only_then() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "tasks/t.json", TASK);
        write(root, "fixtures/f/a.md", "alpha\n");
        write(root, "fixtures/f/sub/b.md", "beta\n");
        write(root, "fixtures/seed/memo.md", "memo\n");
        let first = hash(root);
        assert!(first.starts_with("sha256:") && first.len() == 7 + 64, "{first}");
        assert_eq!(hash(root), first, "the same files, the same hash");
        let other = tempfile::tempdir().unwrap();
        write(other.path(), "unrelated.txt", "x");
        let mut seen = vec![first.clone()];
        for (rel, text) in [
            ("tasks/t.json", TASK.replace("Read a.md.", "Read a.md, please.")),
            ("fixtures/f/a.md", "alpha!\n".to_string()),
            ("fixtures/f/sub/c.md", "new file\n".to_string()),
            ("fixtures/seed/memo.md", "memo 2\n".to_string()),
        ] {
            write(root, rel, &text);
            let now = hash(root);
            assert!(!seen.contains(&now), "{rel} changed the hash");
            seen.push(now);
        }
        // A renamed fixture file with the same bytes is a change too.
        std::fs::rename(root.join("fixtures/f/sub/c.md"), root.join("fixtures/f/sub/d.md")).unwrap();
        assert!(!seen.contains(&hash(root)));
    }

    /// The fixture hash leaves the definition out: a task whose checks (or
    /// request) changed keeps it; its fixture and setup files move it.
    #[test]
    fn the_fixture_hash_moves_with_the_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "tasks/t.json", TASK);
        write(root, "fixtures/f/a.md", "alpha\n");
        write(root, "fixtures/seed/memo.md", "memo\n");
        let fixture = |root: &Path| fixture_hash(root, &Suite::load(root).unwrap().tasks[0]).unwrap();
        let first = fixture(root);
        assert_ne!(first, hash(root), "not the content hash");
        write(root, "tasks/t.json", &TASK.replace(r#""value": "x""#, r#""value": "y""#));
        assert_eq!(fixture(root), first, "a check changed, not the vault");
        write(root, "fixtures/f/a.md", "alpha!\n");
        let second = fixture(root);
        assert_ne!(second, first);
        write(root, "fixtures/seed/memo.md", "memo 2\n");
        let third = fixture(root);
        assert_ne!(third, second);
        // An empty folder is listed by the tools: it moves the fixture hash,
        // and leaves the content hash (whose values results hold) alone.
        let content = hash(root);
        std::fs::create_dir_all(root.join("fixtures/f/old")).unwrap();
        assert_ne!(fixture(root), third);
        assert_eq!(hash(root), content);
    }
}
