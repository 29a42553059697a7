//! One type per vault tool, grouped by what they do: reading and searching
//! (`read`), changing notes (`write`), and the plugin's own folders — memory,
//! past sessions, skills (`scribe`). Each follows `docs/tools.md` exactly.

mod read;
pub mod scribe;
mod write;

use std::path::Path;

use serde_json::{Value, json};

pub use read::{FindFilesByContent, FindFilesByName, ListFiles, ReadFile};
pub use scribe::{ActivateSkill, ReadMemory, RecallSessions, UpdateMemory};
pub use write::{AppendContent, CreateFolder, DeleteFile, MoveFile, UpdateFrontmatter, WriteFile};

use super::Vault;

/// A JSON Schema object with these properties, of which `required` must be present.
fn schema(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

fn hidden(name: &str) -> bool {
    name.starts_with('.')
}

/// Every regular file below `dir` (links are not followed), as sorted
/// vault-relative paths with their locations. Hidden names are skipped.
/// Stops with an error when the run's time is up.
fn walk_files(vault: &Vault, dir: &Path) -> Result<Vec<(String, std::path::PathBuf)>, String> {
    let mut files = Vec::new();
    let walk = walkdir::WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !hidden(&e.file_name().to_string_lossy()));
    for entry in walk.filter_map(Result::ok) {
        vault.check_time()?;
        if entry.file_type().is_file()
            && let Some(rel) = vault.relative(entry.path())
        {
            files.push((rel?, entry.into_path()));
        }
    }
    files.sort();
    Ok(files)
}

/// The direct children of a folder: vault-relative paths, folders ending in `/`.
fn children(vault: &Vault, dir: &Path) -> Result<Vec<String>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot list the folder: {e}"))?;
    let mut out = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        if hidden(&entry.file_name().to_string_lossy()) {
            continue;
        }
        let Some(rel) = vault.relative(&entry.path()) else { continue };
        let rel = rel?;
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        out.push(if is_dir { format!("{rel}/") } else { rel });
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
pub(crate) mod testing {
    //! A vault with a few notes, and a way to call a tool as the model would.
    use serde_json::Value;

    use crate::vault::{LoopDetector, ToolAnswer, Toolbox, Vault};

    pub struct TestVault {
        pub dir: tempfile::TempDir,
        pub vault: Vault,
        tools: Toolbox,
    }

    impl TestVault {
        pub fn new(files: &[(&str, &str)]) -> TestVault {
            let dir = tempfile::tempdir().unwrap();
            for (rel, text) in files {
                let p = dir.path().join(rel);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, text).unwrap();
            }
            let vault = Vault::open(dir.path()).unwrap();
            TestVault { dir, vault, tools: Toolbox::standard() }
        }

        /// The same vault, held to `limits`.
        pub fn limited(mut self, limits: &crate::limits::Limits) -> TestVault {
            self.vault = self.vault.with_limits(limits);
            self
        }

        pub fn call(&self, tool: &str, args: Value) -> ToolAnswer {
            self.tools.dispatch(&self.vault, &mut LoopDetector::default(), tool, &args, None)
        }

        /// The `data` of a successful call; panics with the error otherwise.
        pub fn ok(&self, tool: &str, args: Value) -> Value {
            let a = self.call(tool, args);
            assert!(a.is_success(), "{tool} failed: {}", a.content);
            a.content["data"].clone()
        }

        /// The error of a failed call; panics if it succeeded.
        pub fn err(&self, tool: &str, args: Value) -> String {
            let a = self.call(tool, args);
            assert!(!a.is_success(), "{tool} succeeded: {}", a.content);
            a.content["error"].as_str().unwrap().to_string()
        }

        pub fn read(&self, rel: &str) -> String {
            std::fs::read_to_string(self.dir.path().join(rel)).unwrap()
        }

        pub fn exists(&self, rel: &str) -> bool {
            self.dir.path().join(rel).symlink_metadata().is_ok()
        }
    }
}
