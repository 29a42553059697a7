//! `suite compile` and `suite new`: the suite's check sources
//! (`<suite>/checks/<id>.toml`) read, compiled against their tasks and
//! fixtures, and written into the task files' `outputMatchers` and
//! `vaultAssertions`, or compared with them (`--check`). `suite new`
//! scaffolds a task: its file, its source, its fixture folder, its reference
//! and its alternatives folder.
//!
//! The rules themselves are `checks`'; this module only moves files.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use super::fixtures::{self, Kind};
use super::{Diagnostic, Suite, SuiteErrors};
use crate::checks::compile::{self, Compiled, Context};
use crate::checks::explain::Explainer;
use crate::format::task::Task;
use crate::fsio;

/// Where a suite's check sources live.
pub fn checks_dir(root: &Path) -> PathBuf {
    root.join("checks")
}

/// The source file of a task.
pub fn source_path(root: &Path, id: &str) -> PathBuf {
    checks_dir(root).join(format!("{id}.toml"))
}

/// Compile the source of `task`, reading its fixture files under `root`.
/// `None` when the task has no source; errors name the source and field.
pub fn compile_task(root: &Path, task: &Task) -> Option<Result<Compiled, Vec<Diagnostic>>> {
    let path = source_path(root, &task.id);
    let text = match fsio::read_text_plain(&path) {
        Ok(t) => t,
        Err(_) if !path.exists() => return None,
        Err(e) => return Some(Err(vec![Diagnostic::error(&path, format!("cannot read: {e}"), None)])),
    };
    let source = match compile::parse(&text) {
        Ok(s) => s,
        Err(e) => return Some(Err(vec![Diagnostic::error(&path, e, None)])),
    };
    let fixture_root = task.fixture.as_ref().map(|f| root.join("fixtures").join(f));
    let read_fixture = |rel: &str| -> Result<String, String> {
        let Some(dir) = &fixture_root else { return Err("the task has no fixture folder".to_string()) };
        let file = fixtures::resolve(dir, rel, Kind::File).map_err(|e| format!("fixture file: {e}"))?;
        fsio::read_text_plain(&file).map_err(|e| format!("reading {}: {e}", file.display()))
    };
    let cx = Context { user_message: &task.user_message, fixture: &read_fixture };
    Some(compile::compile(&source, &cx).map_err(|errors| {
        errors
            .into_iter()
            .map(|e| match e.split_once(": ") {
                Some((field, message)) if !field.contains(' ') => {
                    Diagnostic::error(&path, message.to_string(), None).field(field)
                }
                _ => Diagnostic::error(&path, e, None),
            })
            .collect()
    }))
}

/// The explainer of a task's checks: its source compiled, when it has one
/// that compiles.
pub fn explainer(root: &Path, task: &Task) -> Explainer {
    Explainer::new(compile_task(root, task).and_then(Result::ok))
}

/// What `suite compile` did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Task files whose checks were (or, with `--check`, would be) rewritten.
    pub changed: Vec<PathBuf>,
    /// With `--check`: every difference, naming the task file and field.
    pub differences: Vec<String>,
    pub tasks: usize,
}

/// The task files of a suite, sorted, each parsed.
fn task_files(root: &Path, problems: &mut Vec<Diagnostic>) -> Vec<(PathBuf, Task)> {
    let dir = Suite::tasks_dir(root);
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect(),
        Err(e) => {
            problems.push(Diagnostic::error(&dir, format!("cannot read the tasks folder: {e}"), None));
            return vec![];
        }
    };
    files.sort();
    let mut out = Vec::new();
    for file in files {
        match fsio::read_text_plain(&file) {
            Err(e) => problems.push(Diagnostic::error(&file, format!("cannot read: {e}"), None)),
            Ok(text) => match fsio::parse_json::<Task>(&text) {
                Ok(task) => out.push((file, task)),
                Err(e) => problems.push(Diagnostic::from_json_error(&file, &e)),
            },
        }
    }
    out
}

/// A task file as `suite compile` writes it.
pub fn task_json(task: &Task) -> String {
    let mut text = serde_json::to_string_pretty(task).expect("a task serializes");
    text.push('\n');
    text
}

/// Compact JSON, for comparing checks.
fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("a check serializes")
}

/// Where `compiled` and the committed `task` differ, field by field.
fn differences(file: &Path, task: &Task, compiled: &Compiled) -> Vec<String> {
    let mut out = Vec::new();
    let mut compare = |field: &str, committed: Vec<String>, fresh: Vec<String>, notes: &[String]| {
        for i in 0..committed.len().max(fresh.len()) {
            let note = notes.get(i).map_or("", String::as_str);
            let what = match (committed.get(i), fresh.get(i)) {
                (Some(a), Some(b)) if a == b => continue,
                (Some(_), Some(_)) => format!("differs from its source ({note})"),
                (None, Some(_)) => format!("is missing ({note})"),
                (Some(_), None) => "is not in its source".to_string(),
                (None, None) => continue,
            };
            out.push(format!("{}: {field}[{i}] {what}", file.display()));
        }
    };
    compare(
        "outputMatchers",
        task.output_matchers.iter().map(json).collect(),
        compiled.output_matchers.iter().map(json).collect(),
        &compiled.matcher_notes,
    );
    compare(
        "vaultAssertions",
        task.vault_assertions.iter().map(json).collect(),
        compiled.vault_assertions.iter().map(json).collect(),
        &compiled.assertion_notes,
    );
    out
}

/// Whether `task`'s file holds the checks its source compiles to.
pub fn agrees(task: &Task, compiled: &Compiled) -> bool {
    differences(Path::new(""), task, compiled).is_empty()
}

/// Compile every source of the suite at `root` into its task file (or, with
/// `check`, only compare). Every source problem is an error naming its file
/// and field; so is a task without a source or a source without a task.
/// Tasks whose sources compile are written all the same.
pub fn compile_suite(root: &Path, check: bool) -> Result<Outcome, SuiteErrors> {
    let mut problems = Vec::new();
    let dir = checks_dir(root);
    if !dir.is_dir() {
        problems.push(Diagnostic::error(
            &dir,
            "no checks folder: the suite has no check sources".into(),
            Some("write one per task (`vaultbench suite new ID` scaffolds a task with its source)".into()),
        ));
        return Err(SuiteErrors { diagnostics: problems });
    }
    let tasks = task_files(root, &mut problems);
    let mut outcome = Outcome { tasks: tasks.len(), ..Outcome::default() };
    let mut updates = Vec::new();
    for (file, task) in &tasks {
        let compiled = match compile_task(root, task) {
            None => {
                problems.push(Diagnostic::error(
                    &source_path(root, &task.id),
                    format!("no check source for task `{}`", task.id),
                    Some(format!("write it; its checks now are those of {}", file.display())),
                ));
                continue;
            }
            Some(Err(diagnostics)) => {
                problems.extend(diagnostics);
                continue;
            }
            Some(Ok(c)) => c,
        };
        let diffs = differences(file, task, &compiled);
        if diffs.is_empty() {
            continue;
        }
        outcome.changed.push(file.clone());
        outcome.differences.extend(diffs);
        let mut updated = task.clone();
        updated.output_matchers = compiled.output_matchers;
        updated.vault_assertions = compiled.vault_assertions;
        updates.push((file.clone(), updated));
    }
    if let Ok(entries) = std::fs::read_dir(&dir) {
        let mut sources: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        sources.sort();
        for source in sources {
            let is_toml = source.extension().is_some_and(|e| e == "toml");
            let id = source.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            if !is_toml {
                problems.push(Diagnostic::error(&source, "not a .toml check source".into(), None));
            } else if !tasks.iter().any(|(_, t)| t.id == id) {
                problems.push(Diagnostic::error(&source, format!("no task `{id}` for this source"), None));
            }
        }
    }
    // The tasks that compiled are written even when others did not: each
    // source stands alone, and its errors name it.
    if !check {
        for (file, task) in &updates {
            if let Err(e) = fsio::write_atomic(file, task_json(task).as_bytes()) {
                problems.push(Diagnostic::error(file, format!("cannot write: {e:#}"), None));
            }
        }
    }
    if !problems.is_empty() {
        return Err(SuiteErrors { diagnostics: problems });
    }
    Ok(outcome)
}

/// A valid task id: lowercase letters, digits and single hyphens.
fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 80
        && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !id.starts_with('-')
        && !id.ends_with('-')
        && !id.contains("--")
}

/// The files `suite new` writes, relative to the suite folder.
pub fn new_task_files(id: &str) -> [String; 4] {
    [
        format!("tasks/{id}.json"),
        format!("checks/{id}.toml"),
        format!("fixtures/{id}/README.md"),
        format!("references/{id}.json"),
    ]
}

/// Scaffold task `id` in the suite at `root`: nothing is overwritten.
pub fn new_task(root: &Path, id: &str) -> Result<Vec<PathBuf>> {
    if !valid_id(id) {
        bail!("`{id}` is not a task id: use lowercase letters, digits and hyphens (like ferry-read-toll)");
    }
    let files = new_task_files(id).map(|f| root.join(f));
    if let Some(existing) = files.iter().chain([&root.join("alternatives").join(id)]).find(|f| f.exists()) {
        bail!("{} already exists: task `{id}` is taken", existing.display());
    }
    let task = format!(
        r#"{{
  "id": "{id}",
  "description": "What the task tests, in one sentence (what makes it hard, which trap it sets).",
  "userMessage": "The request, as a user would write it. Where the answer is a value, say where it goes: Start your answer with a line `Answer: <value>`.",
  "difficulty": "T2",
  "category": "retrieval",
  "fixture": "{id}",
  "forbiddenTools": [
    "write_file",
    "append_content",
    "update_frontmatter",
    "move_file",
    "delete_file",
    "create_folder"
  ],
  "toolCallBudget": 6,
  "maxTurns": 15,
  "timeoutMs": 120000
}}
"#
    );
    let source = format!(
        r#"# Checks of task {id}: `vaultbench suite compile` writes them into
# tasks/{id}.json. docs/adding-a-task.md explains every rule.

# Values the answer must state somewhere, in any spelling (before the first
# [[line]]: a key after it belongs to that line):
# states = [{{ text = "a name" }}, {{ number = 1095 }}, {{ date = "2031-02-03" }}, {{ time = "07:10" }}]

# The answer line the request asks for ("Start your answer with a line
# `Answer: <value>`"): it must give this value, in any usual spelling, and
# no other value of its kind.
[[line]]
label = "Answer"
text = "the right value"
# others = ["a distractor from the notes"]   # texts that must not be on the line

# Where only meaning can tell (house style, a refusal, "don't guess"):
# [judge]
# criteria = "The answer gives ... and does not ..."

# Nothing in the vault may change unless a [vault] rule says how (the whole
# vault is compared after every run):
# [vault]
# unchanged = ["notes/keep.md"]
# [[vault.note]]
# path = "notes/changed.md"
# edit = [{{ from = "old text", to = "new text" }}]
"#
    );
    let fixture = format!(
        "# {id}\n\nThe notes of this folder are copied into the vault's eval-scratch/ folder for every run.\n\
         Replace this note with the task's notes: the facts, their distractors and traps.\n"
    );
    let reference = r#"{
  "steps": [
    {
      "tool": "read_file",
      "args": {
        "path": "eval-scratch/README.md"
      }
    }
  ],
  "answer": "Answer: the right value"
}
"#;
    for (path, text) in files.iter().zip([task, source, fixture, reference.to_string()]) {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    // The corpus folder, empty: `suite check` reports it until it holds a
    // correct answer and two wrong ones.
    let alternatives = root.join("alternatives").join(id);
    std::fs::create_dir_all(&alternatives).with_context(|| format!("creating {}", alternatives.display()))?;
    let mut written = files.to_vec();
    written.push(alternatives);
    Ok(written)
}
