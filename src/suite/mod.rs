//! The suite: what to run. Loads `tasks/*.json` from a suite folder and
//! checks each task against the files it depends on (`fixtures/`), reporting
//! every problem at once with the file, position, field and a fix.
//!
//! It does not run anything; replaying reference trajectories belongs to the
//! runner.

pub mod compile;
pub mod corpus;
pub mod diagnostics;
pub mod fixtures;
pub mod hash;
mod validate;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::format::task::Task;
use crate::fsio;

pub use diagnostics::{Diagnostic, Severity};

/// The vault tools tasks may name in `expectedTools` / `forbiddenTools`.
pub const TOOL_NAMES: &[&str] = &[
    "list_files",
    "read_file",
    "find_files_by_name",
    "find_files_by_content",
    "write_file",
    "append_content",
    "update_frontmatter",
    "move_file",
    "delete_file",
    "create_folder",
    "update_memory",
    "read_memory",
    "recall_sessions",
    "activate_skill",
];

/// A loaded, valid suite.
#[derive(Debug, Clone)]
pub struct Suite {
    /// The folder holding `tasks/` and `fixtures/`.
    pub root: PathBuf,
    /// Sorted by id.
    pub tasks: Vec<Task>,
    /// Problems that do not stop a run (e.g. an unknown tool in `forbiddenTools`).
    pub warnings: Vec<Diagnostic>,
}

/// Why a suite could not be loaded: every error found, plus the warnings.
#[derive(Debug, Clone)]
pub struct SuiteErrors {
    pub diagnostics: Vec<Diagnostic>,
}

impl std::fmt::Display for SuiteErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let errors = self.diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
        for d in &self.diagnostics {
            writeln!(f, "{d}")?;
        }
        write!(f, "{errors} error{} in the suite", if errors == 1 { "" } else { "s" })
    }
}

impl std::error::Error for SuiteErrors {}

/// Whether loading a suite compiles its regex patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Patterns {
    Compile,
    Skip,
}

impl Suite {
    pub fn tasks_dir(root: &Path) -> PathBuf {
        root.join("tasks")
    }

    pub fn fixtures_dir(&self) -> PathBuf {
        self.root.join("fixtures")
    }

    /// Load every task under `root/tasks` and validate it.
    pub fn load(root: &Path) -> Result<Suite, SuiteErrors> {
        Self::load_checking(root, Patterns::Compile)
    }

    /// Load the tasks for a catalog (the site): every check of [`Suite::load`]
    /// except compiling the patterns, which is most of its time and matters
    /// only to a run (`suite check` and `run` still compile them).
    pub fn load_catalog(root: &Path) -> Result<Suite, SuiteErrors> {
        Self::load_checking(root, Patterns::Skip)
    }

    fn load_checking(root: &Path, patterns: Patterns) -> Result<Suite, SuiteErrors> {
        let mut diagnostics = Vec::new();
        let tasks_dir = Self::tasks_dir(root);
        let mut files: Vec<PathBuf> = match std::fs::read_dir(&tasks_dir) {
            Ok(entries) => entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "json"))
                .collect(),
            // The usual cause: vaultbench started outside the project.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let here = std::env::current_dir().map_or_else(|_| ".".into(), |d| d.display().to_string());
                diagnostics.push(Diagnostic::error(
                    &tasks_dir,
                    format!("no {} here (in {here})", tasks_dir.display()),
                    Some("pass --suite DIR, the folder holding tasks/ and fixtures/".into()),
                ));
                return Err(SuiteErrors { diagnostics });
            }
            Err(e) => {
                diagnostics.push(Diagnostic::error(
                    &tasks_dir,
                    format!("cannot read the tasks folder: {e}"),
                    Some("pass --suite DIR, where DIR holds tasks/ and fixtures/".into()),
                ));
                return Err(SuiteErrors { diagnostics });
            }
        };
        files.sort();
        if files.is_empty() {
            diagnostics.push(Diagnostic::error(&tasks_dir, "no task files (*.json)".into(), None));
        }

        let mut tasks = Vec::new();
        let mut seen: HashMap<String, PathBuf> = HashMap::new();
        for file in &files {
            let text = match fsio::read_text_plain(file) {
                Ok(t) => t,
                Err(e) => {
                    diagnostics.push(Diagnostic::error(file, format!("cannot read: {e}"), None));
                    continue;
                }
            };
            let task: Task = match fsio::parse_json(&text) {
                Ok(t) => t,
                Err(e) => {
                    diagnostics.push(Diagnostic::from_json_error(file, &e));
                    continue;
                }
            };
            validate::task(root, file, &text, &task, patterns, &mut diagnostics);
            if let Some(first) = seen.get(&task.id) {
                diagnostics.push(
                    Diagnostic::error(
                        file,
                        format!("duplicate task id `{}`, also used by {}", task.id, first.display()),
                        Some("give every task a unique id (the file name)".into()),
                    )
                    .field("id"),
                );
            } else {
                seen.insert(task.id.clone(), file.clone());
            }
            tasks.push(task);
        }
        tasks.sort_by(|a, b| a.id.cmp(&b.id));
        if diagnostics.iter().any(|d| d.severity == Severity::Error) {
            return Err(SuiteErrors { diagnostics });
        }
        Ok(Suite { root: root.to_path_buf(), tasks, warnings: diagnostics })
    }

    /// Tasks whose id starts with `prefix` (all tasks for `None`).
    pub fn select(&self, prefix: Option<&str>) -> Vec<&Task> {
        self.tasks.iter().filter(|t| prefix.is_none_or(|p| t.id.starts_with(p))).collect()
    }
}
