//! Sweeps: every selected task, k times, against one model. A sweep is a
//! list of cells (task, run number) run concurrently (`--jobs`), each in its
//! own vault; each finished cell is saved at once (see `store`), so a sweep
//! can be interrupted or killed and resumed without redoing finished cells.
//! The result file is assembled from the cells with `report::aggregate`.
//!
//! Also here: the `run` command (`command`), sharding and `merge` (`shard`),
//! the `--models` comparison report (`comparison`), and `suite check`, which
//! replays reference trajectories and adversarial agents (`check`).

pub mod cell;
pub mod check;
pub mod command;
pub mod comparison;
pub mod dry_run;
pub mod judge;
pub mod progress;
pub mod regrade;
pub mod scratch;
pub mod shard;
pub mod signal;
pub mod store;

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use tokio::task::JoinSet;

use crate::format::result::{ResultFile, RunRecord, TaskResult};
use crate::format::task::Task;
use crate::limits::Limits;
use crate::pricing::Pricing;
use crate::provider::quota::Tally;
use crate::provider::{ModelSource, Rejected};
use crate::report::{self, aggregate};
use crate::score::Judge;
use crate::vault::Toolbox;
use crate::{fsio, jsnum};

pub use progress::Progress;
pub use scratch::Scratch;
pub use signal::Interrupt;
pub use store::{Manifest, Store};

/// How often a sweep with a quota tells its progress display what the quota does.
const QUOTA_TICK: Duration = Duration::from_millis(250);

/// A sweep stops once this many runs were refused by the server with the
/// same error that no retry can fix (see [`Stopped`]): enough to tell a bad
/// key from a fluke, few enough to spend nothing on a sweep that cannot work.
pub const FAIL_FAST_AFTER: usize = 3;

/// Why a sweep stopped early on its own: the server refused
/// [`FAIL_FAST_AFTER`] runs with the same error.
#[derive(Debug, Clone)]
pub struct Stopped {
    pub rejected: Rejected,
    /// The runs that ended on it.
    pub runs: usize,
}

/// Everything a sweep needs, shared by its cells.
pub struct Sweep {
    pub manifest: Manifest,
    pub store: Store,
    /// The selected tasks, in run order (the manifest's `tasks`).
    pub tasks: Vec<Task>,
    pub suite_root: PathBuf,
    pub source: Arc<dyn ModelSource>,
    pub judge: Option<Arc<dyn Judge>>,
    pub pricing: Pricing,
    pub toolbox: Toolbox,
    /// The caps and deadlines every run is held to.
    pub limits: Limits,
    /// Where the runs' temporary vaults are made.
    pub scratch: Arc<Scratch>,
    /// Keep each run's vault under `<results>/<stem>/vaults/`.
    pub keep_artifacts: bool,
    /// Test aid: wait this long at the start of every cell, so that a sweep
    /// can be interrupted mid-way deterministically.
    pub cell_delay: Duration,
}

/// What a sweep ended with.
pub struct SweepOutcome {
    pub result: ResultFile,
    pub interrupted: Option<Interrupt>,
    /// Cells run now, and cells found finished by an earlier attempt.
    pub ran: usize,
    pub reused: usize,
    /// How long this attempt took.
    pub wall: Duration,
    /// What the model server's quota did, when it has one.
    pub quota: Option<Tally>,
    /// The sweep stopped itself on an error no retry can fix.
    pub stopped: Option<Stopped>,
}

impl Sweep {
    fn k(&self) -> u32 {
        self.manifest.repeat
    }

    /// Whether any cell is still to run (a resumed sweep may have none).
    pub fn has_pending(&self) -> Result<bool> {
        for task in &self.tasks {
            for n in 1..=self.k() {
                if self.store.load_cell(&task.id, n)?.is_none() {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Run every cell not already finished, `jobs` at a time, until all are
    /// done or `interrupt` fires; then write the result file. When the
    /// model's server has a quota, fewer runs go at once while it is under
    /// pressure (its concurrency window), and the progress display hears
    /// what it is doing.
    pub async fn execute(
        self: Arc<Self>,
        jobs: usize,
        interrupt: impl Future<Output = Interrupt>,
        progress: &dyn Progress,
    ) -> Result<SweepOutcome> {
        let mut done: HashMap<(usize, u32), RunRecord> = HashMap::new();
        let mut pending = Vec::new();
        for (t, task) in self.tasks.iter().enumerate() {
            for n in 1..=self.k() {
                match self.store.load_cell(&task.id, n)? {
                    Some(record) => {
                        done.insert((t, n), record);
                    }
                    None => pending.push((t, n)),
                }
            }
        }
        let reused = done.len();
        let started = Instant::now();
        progress.start(done.len() + pending.len(), reused);
        let quota = self.source.quota();
        let jobs = jobs.max(1);
        if let Some(q) = &quota {
            q.set_max_concurrency(jobs);
        }
        let allowed = || quota.as_ref().map_or(jobs, |q| q.concurrency().min(jobs));
        let mut tick = tokio::time::interval(QUOTA_TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut pending = pending.into_iter();
        let mut running: JoinSet<Result<Finished>> = JoinSet::new();
        // Refusals for good, by their text: the same one enough times stops the sweep.
        let mut refused: HashMap<String, usize> = HashMap::new();
        let mut stopped = None;
        // Which cell each task runs, to record a run that panicked.
        let mut cells: HashMap<tokio::task::Id, (usize, u32)> = HashMap::new();
        let mut interrupted = None;
        let mut interrupt = std::pin::pin!(interrupt);
        loop {
            while running.len() < allowed() {
                let Some((t, n)) = pending.next() else { break };
                let handle = running.spawn(run_cell(self.clone(), t, n));
                cells.insert(handle.id(), (t, n));
            }
            if running.is_empty() {
                break;
            }
            tokio::select! {
                _ = tick.tick(), if quota.is_some() => {
                    if let Some(q) = &quota {
                        progress.quota(&q.status());
                    }
                }
                signal = &mut interrupt => {
                    interrupted = Some(signal);
                    running.abort_all();
                    // Cells that finished before the abort took effect are kept.
                    while let Some(joined) = running.join_next().await {
                        if let Ok(Ok(f)) = joined {
                            done.insert(f.cell, f.record);
                        }
                    }
                    break;
                }
                Some(joined) = running.join_next() => {
                    let Finished { cell, record, rejected } = match joined {
                        Ok(finished) => finished?,
                        // A bug of ours in one run, as a last line of defence:
                        // that run is a harness error; the sweep goes on.
                        Err(e) if e.is_panic() => {
                            let (t, n) = cells[&e.id()];
                            let message = panic_message(e.into_panic().as_ref());
                            let error = format!("the run crashed (a fault in vaultbench, not the model's): {message}");
                            let out = cell::harness_failure(&self.cell_env(), &self.tasks[t], error).await;
                            persist(&self, t, n, out, None).await?
                        }
                        Err(e) => return Err(anyhow::anyhow!("a run was cancelled: {e}")),
                    };
                    progress.finished(&self.tasks[cell.0].id, cell.1, &record);
                    done.insert(cell, record);
                    if let Some(rejected) = rejected {
                        let runs = refused.entry(rejected.message.clone()).or_default();
                        *runs += 1;
                        if *runs >= FAIL_FAST_AFTER {
                            stopped = Some(Stopped { rejected, runs: *runs });
                            running.abort_all();
                            while let Some(joined) = running.join_next().await {
                                if let Ok(Ok(f)) = joined {
                                    done.insert(f.cell, f.record);
                                }
                            }
                            break;
                        }
                    }
                }
            }
        }
        progress.done();
        let ran = done.len() - reused;
        let result = self.assemble(done, interrupted.is_some() || stopped.is_some());
        report::write_result(&self.store.result_path(), &result)
            .with_context(|| format!("writing the result {}", self.store.result_path().display()))?;
        let quota = quota.map(|q| q.tally());
        Ok(SweepOutcome { result, interrupted, ran, reused, wall: started.elapsed(), quota, stopped })
    }

    /// The result file from the finished cells: tasks in run order, runs by
    /// number; a task with no finished run is left out. The records are
    /// moved, not copied: they hold every answer of the sweep.
    fn assemble(&self, mut done: HashMap<(usize, u32), RunRecord>, interrupted: bool) -> ResultFile {
        // A fixture edited while the sweep ran gave its tasks' runs two
        // fixtures: their result records no fixture hash (`regrade` then
        // trusts none of the tool results their transcripts cut).
        let fixtures_now = crate::suite::hash::fixture_hashes(&self.suite_root, self.tasks.iter());
        let tasks: Vec<_> = self
            .tasks
            .iter()
            .enumerate()
            .filter_map(|(t, task)| {
                let runs: Vec<RunRecord> = (1..=self.k()).filter_map(|n| done.remove(&(t, n))).collect();
                (!runs.is_empty()).then(|| TaskResult {
                    content_hash: self.manifest.content_hashes.get(&task.id).cloned(),
                    fixture_hash: self
                        .manifest
                        .fixture_hashes
                        .get(&task.id)
                        .filter(|h| fixtures_now.get(&task.id) == Some(*h))
                        .cloned(),
                    ..aggregate::task_result(task.id.clone(), Some(task.difficulty), Some(task.category.clone()), runs)
                })
            })
            .collect();
        let m = &self.manifest;
        ResultFile {
            run_id: m.run_id.clone(),
            git_sha: m.git_sha.clone(),
            model: m.model.clone(),
            provider: m.provider.clone(),
            interrupted,
            shard: m.shard.clone(),
            task_filter: m.task_filter.clone(),
            offline_judge: m.offline_judge,
            shard_run_ids: Vec::new(),
            aggregate: aggregate::aggregate(&tasks),
            tasks,
        }
    }
}

impl Sweep {
    fn cell_env(&self) -> cell::CellEnv<'_> {
        cell::CellEnv {
            suite_root: &self.suite_root,
            scratch: self.scratch.path(),
            toolbox: &self.toolbox,
            pricing: &self.pricing,
            judge: self.judge.as_deref(),
            max_output_tokens: self.manifest.max_output_tokens,
            limits: &self.limits,
        }
    }
}

/// The text of a panic's payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// A saved cell: (task index, run number), its record, and the server's
/// refusal for good if that is how it ended.
struct Finished {
    cell: (usize, u32),
    record: RunRecord,
    rejected: Option<Rejected>,
}

/// Run one cell and save its transcript and record before reporting it done.
async fn run_cell(sweep: Arc<Sweep>, t: usize, n: u32) -> Result<Finished> {
    if !sweep.cell_delay.is_zero() {
        tokio::time::sleep(sweep.cell_delay).await;
    }
    let task = &sweep.tasks[t];
    let keep = sweep.keep_artifacts.then(|| sweep.store.vault_dir(&task.id, n));
    let env = sweep.cell_env();
    let out = match sweep.source.model_for(task) {
        Ok(model) => cell::run(&env, task, model.as_ref(), keep.clone()).await,
        Err(e) => cell::harness_failure(&env, task, format!("{e:#}")).await,
    };
    persist(&sweep, t, n, out, keep).await
}

/// Save a finished cell: its transcript, then its record (which marks it done).
async fn persist(
    sweep: &Sweep,
    t: usize,
    n: u32,
    mut out: cell::CellOutput,
    keep: Option<std::path::PathBuf>,
) -> Result<Finished> {
    let task = &sweep.tasks[t];
    out.record.transcript_path = sweep.store.recorded_transcript_path(&task.id, n);
    let file = cell::TranscriptFile {
        run_id: sweep.manifest.run_id.0.clone(),
        task_id: task.id.clone(),
        run: n,
        provider: sweep.manifest.provider.clone(),
        model: sweep.manifest.model.clone(),
        max_output_tokens: sweep.manifest.max_output_tokens,
        vault: keep.map(|p| p.canonicalize().unwrap_or(p).display().to_string()),
        passed: out.record.passed,
        solved: out.record.solved,
        errors: out.record.errors.clone(),
        transcript: out.transcript,
    };
    let bytes = jsnum::to_json_bytes(&file)?;
    let rejected = out.rejected;
    let (store, path, record) = (sweep.store.clone(), sweep.store.transcript_path(&task.id, n), out.record);
    // Off the async workers: the writes are synced to disk, which can take
    // long enough to hold up every run's model calls.
    let record = tokio::task::spawn_blocking(move || -> Result<RunRecord> {
        fsio::write_atomic(&path, &bytes)?;
        // The record is written last: it is what marks the cell finished.
        store.save_cell(n, &record)?;
        Ok(record)
    })
    .await
    .context("saving a finished run")??;
    Ok(Finished { cell: (t, n), record, rejected })
}
