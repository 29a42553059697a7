//! One cell of a sweep: one run of one task. Prepares a fresh vault (the
//! fixture copied to `eval-scratch/`, `setup` files at their paths), runs the
//! agent, snapshots the files the task's assertions name, scores the run and
//! builds its record. Persisting the record is the caller's business.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::agent::{self, Ending, Request, Transcript};
use crate::format::result::{EndReason, RunMetrics, RunRecord};
use crate::format::task::{Task, VaultAssertion};
use crate::limits::Limits;
use crate::pricing::Pricing;
use crate::provider::{Model, Rejected};
use crate::score::{self, Judge, RegexBudget, RunEnd, RunEvidence, VaultState};
use crate::suite::fixtures::{self, Kind};
use crate::vault::{Toolbox, Vault};

/// What every cell of a sweep shares.
pub struct CellEnv<'a> {
    pub suite_root: &'a Path,
    /// Where temporary vaults are made (this process's scratch folder).
    pub scratch: &'a Path,
    pub toolbox: &'a Toolbox,
    pub pricing: &'a Pricing,
    pub judge: Option<&'a dyn Judge>,
    /// The cap on tokens per model reply, if any.
    pub max_output_tokens: Option<u32>,
    /// The caps and deadlines every run is held to.
    pub limits: &'a Limits,
}

impl CellEnv<'_> {
    /// Regex work of scoring: `regex_timeout` per pattern, and all of it
    /// within the grace after the run's deadline (or after now, for a run
    /// that ended early).
    fn scoring_budget(&self, run_deadline: Instant) -> RegexBudget {
        let until = run_deadline.max(Instant::now()) + self.limits.timeout_grace;
        RegexBudget { per_pattern: self.limits.regex_timeout, until: Some(until), on_cpu: true }
    }
}

/// A finished cell: its record (without `transcript_path`) and transcript.
pub struct CellOutput {
    pub record: RunRecord,
    pub transcript: Transcript,
    /// See [`agent::Outcome::rejected`].
    pub rejected: Option<Rejected>,
}

/// The transcript file of one run (`<results>/<stem>/<task>-<n>.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TranscriptFile {
    pub run_id: String,
    pub task_id: String,
    pub run: u32,
    pub provider: String,
    pub model: String,
    /// The cap on tokens per model reply the run was given, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Where the run's vault was kept (`--keep-artifacts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vault: Option<String>,
    pub passed: bool,
    pub solved: bool,
    pub errors: Vec<String>,
    #[serde(flatten)]
    pub transcript: Transcript,
}

/// Where the vault of a cell lives: a temporary folder removed afterwards,
/// or a kept folder.
enum VaultDir {
    Temporary(tempfile::TempDir),
    Kept(PathBuf),
}

impl VaultDir {
    fn path(&self) -> &Path {
        match self {
            VaultDir::Temporary(t) => t.path(),
            VaultDir::Kept(p) => p,
        }
    }
}

/// Run `task` once against `model`. `keep` names a folder to keep the vault in.
pub async fn run(env: &CellEnv<'_>, task: &Task, model: &dyn Model, keep: Option<PathBuf>) -> CellOutput {
    let dir = match prepare(env.suite_root, env.scratch, task, keep) {
        Ok(dir) => dir,
        Err(e) => return harness_failure(env, task, format!("preparing the vault: {e}")).await,
    };
    let vault = match Vault::open(dir.path()) {
        Ok(v) => v.with_limits(env.limits),
        Err(e) => return harness_failure(env, task, format!("opening the vault {}: {e}", dir.path().display())).await,
    };
    let request = Request {
        user_message: &task.user_message,
        context_files: &task.context_files,
        max_turns: task.max_turns,
        timeout: Duration::from_millis(task.timeout_ms),
        max_output_tokens: env.max_output_tokens,
        limits: env.limits,
    };
    let outcome = agent::run(model, &vault, env.toolbox, request, env.pricing).await;
    let state = snapshot(&vault, env.suite_root, task);
    let end = match outcome.ending {
        Ending::Answered => RunEnd::Answered,
        Ending::TurnLimit => RunEnd::TurnLimit,
        Ending::TimedOut => RunEnd::TimedOut,
        Ending::HarnessError => RunEnd::HarnessError,
        Ending::ContextExceeded => RunEnd::ContextExceeded,
    };
    let evidence = RunEvidence {
        response_text: &outcome.response_text,
        tool_list: &outcome.tool_list,
        harness_errors: &outcome.errors,
        end,
    };
    let verdict = score::score_run(task, &evidence, &state, env.judge, env.scoring_budget(outcome.deadline)).await;
    drop(dir);
    CellOutput {
        record: RunRecord {
            id: task.id.clone(),
            passed: verdict.passed,
            solved: verdict.solved,
            response_text: outcome.response_text,
            metrics: outcome.metrics,
            errors: outcome.errors,
            solve_details: verdict.solve_details,
            timed_out: (outcome.ending == Ending::TimedOut).then_some(true),
            end_reason: match outcome.ending {
                Ending::TurnLimit => Some(EndReason::TurnLimit),
                Ending::ContextExceeded => Some(EndReason::ContextExceeded),
                Ending::Answered | Ending::TimedOut | Ending::HarnessError => None,
            },
            transcript_path: String::new(),
        },
        transcript: outcome.transcript,
        rejected: outcome.rejected,
    }
}

/// A run that could not start: a harness error, scored like any run.
pub async fn harness_failure(env: &CellEnv<'_>, task: &Task, error: String) -> CellOutput {
    let errors = vec![error.clone()];
    let evidence =
        RunEvidence { response_text: "", tool_list: &[], harness_errors: &errors, end: RunEnd::HarnessError };
    let budget = env.scoring_budget(Instant::now());
    let verdict = score::score_run(task, &evidence, &VaultState::default(), env.judge, budget).await;
    CellOutput {
        record: RunRecord {
            id: task.id.clone(),
            passed: false,
            solved: false,
            response_text: String::new(),
            metrics: RunMetrics {
                turns: 0,
                tool_calls: 0,
                prompt_tokens: 0,
                cached_tokens: None,
                cache_ratio: None,
                output_tokens: 0,
                cost_usd: 0.0,
                loop_fires: 0,
                duration_ms: 0,
                tool_list: vec![],
            },
            errors,
            solve_details: verdict.solve_details,
            timed_out: None,
            end_reason: None,
            transcript_path: String::new(),
        },
        transcript: Transcript {
            system_prompt: String::new(),
            tools: vec![],
            events: vec![],
            end: agent::End { reason: Ending::HarnessError.as_str().into(), detail: error, duration_ms: 0 },
        },
        rejected: None,
    }
}

/// A fresh vault for `task`, in `scratch` unless it is kept.
fn prepare(suite_root: &Path, scratch: &Path, task: &Task, keep: Option<PathBuf>) -> Result<VaultDir, String> {
    let dir = match keep {
        Some(path) => {
            if path.exists() {
                fs::remove_dir_all(&path).map_err(|e| format!("clearing {}: {e}", path.display()))?;
            }
            fs::create_dir_all(&path).map_err(|e| format!("creating {}: {e}", path.display()))?;
            VaultDir::Kept(path)
        }
        None => VaultDir::Temporary(
            tempfile::Builder::new()
                .prefix(&format!("{}-", task.id))
                .tempdir_in(scratch)
                .map_err(|e| format!("creating a temporary folder: {e}"))?,
        ),
    };
    let fixtures = suite_root.join("fixtures");
    let scratch = dir.path().join("eval-scratch");
    match &task.fixture {
        Some(name) => copy_tree(
            &fixtures::resolve(&fixtures, name, Kind::Folder).map_err(|why| format!("fixture folder: {why}"))?,
            &scratch,
        )?,
        None => fs::create_dir_all(&scratch).map_err(|e| format!("creating {}: {e}", scratch.display()))?,
    }
    for s in &task.setup {
        let to = dir.path().join(&s.path);
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).map_err(|e| format!("creating {}: {e}", parent.display()))?;
        }
        let from = fixtures::resolve(&fixtures, &s.from, Kind::File).map_err(|why| format!("setup source: {why}"))?;
        fs::copy(&from, &to).map_err(|e| format!("copying setup file {} to {}: {e}", from.display(), s.path))?;
    }
    Ok(dir)
}

/// Copy a fixture folder. Fixtures are plain files and folders: a symbolic
/// link could point the run outside its vault, so it is an error.
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    for entry in walkdir::WalkDir::new(from).follow_links(false) {
        let entry = entry.map_err(|e| format!("reading fixture {}: {e}", from.display()))?;
        let rel = entry.path().strip_prefix(from).expect("walkdir stays below its root");
        let target = to.join(rel);
        let kind = entry.file_type();
        if kind.is_dir() {
            fs::create_dir_all(&target).map_err(|e| format!("creating {}: {e}", target.display()))?;
        } else if kind.is_file() {
            fs::copy(entry.path(), &target).map_err(|e| format!("copying {}: {e}", entry.path().display()))?;
        } else {
            return Err(format!("fixture entry {} is not a plain file or folder", entry.path().display()));
        }
    }
    Ok(())
}

/// The files the task's assertions name, as the run left them, and the
/// fixture files `fileUnchanged` compares with.
fn snapshot(vault: &Vault, suite_root: &Path, task: &Task) -> VaultState {
    let mut state = VaultState::default();
    for a in &task.vault_assertions {
        let rel = a.path();
        // A path the tools would refuse (a link out of the vault) reads as absent.
        if !state.files.contains_key(rel)
            && let Ok(path) = vault.resolve(rel)
            && path.abs.symlink_metadata().is_ok_and(|m| m.is_file())
            && let Ok(bytes) = fs::read(&path.abs)
        {
            state.files.insert(rel.to_string(), bytes);
        }
        if let (VaultAssertion::FileUnchanged { fixture, .. }, Some(dir)) = (a, &task.fixture)
            && let Ok(original) = fixtures::resolve(&suite_root.join("fixtures").join(dir), fixture, Kind::File)
            && let Ok(bytes) = fs::read(original)
        {
            state.fixtures.insert(fixture.clone(), bytes);
        }
    }
    if task.vault_assertions.iter().any(|a| matches!(a, VaultAssertion::NothingElseChanged { .. })) {
        state.tree =
            Some(score::assertions::Tree { before: seeded_files(suite_root, task), after: files_under(vault.root()) });
    }
    state
}

/// Every plain file under `root`, by its path relative to it (`/`-separated).
fn files_under(root: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    for entry in walkdir::WalkDir::new(root).follow_links(false).into_iter().filter_map(Result::ok) {
        if entry.file_type().is_file()
            && let Ok(rel) = entry.path().strip_prefix(root)
            && let Ok(bytes) = fs::read(entry.path())
        {
            let rel: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
            out.insert(rel.join("/"), bytes);
        }
    }
    out
}

/// The files a fresh vault for `task` holds: its fixture under
/// `eval-scratch/` and its setup files (what [`prepare`] writes).
fn seeded_files(suite_root: &Path, task: &Task) -> std::collections::BTreeMap<String, Vec<u8>> {
    let fixtures = suite_root.join("fixtures");
    let mut out = std::collections::BTreeMap::new();
    if let Some(name) = &task.fixture
        && let Ok(dir) = fixtures::resolve(&fixtures, name, Kind::Folder)
    {
        for (rel, bytes) in files_under(&dir) {
            out.insert(format!("eval-scratch/{rel}"), bytes);
        }
    }
    for s in &task.setup {
        if let Ok(from) = fixtures::resolve(&fixtures, &s.from, Kind::File)
            && let Ok(bytes) = fs::read(from)
        {
            out.insert(s.path.clone(), bytes);
        }
    }
    out
}
