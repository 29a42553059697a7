//! A sweep on disk, under `<results>/<stem>/`: its manifest (`sweep.json`,
//! what to run, so `--resume` can continue it), one record per finished cell
//! (`cells/<task>-<n>.json`, written atomically the moment the cell ends, so
//! even `kill -9` loses at most the cells in flight), and the transcripts
//! (`<task>-<n>.json`). The result file itself is `<results>/<stem>.json`.
//!
//! `run --resume RUN_ID --retry-errors` sets aside the runs that ended with a
//! harness error before resuming, so that they are run again: their records
//! and transcripts move to `retried/` (`<task>-<n>.try<i>.json` and
//! `<task>-<n>.try<i>.transcript.json`), kept as the evidence of the fault,
//! and every other run stays as it is.
//!
//! A sweep's folder is claimed exclusively: a new sweep creates it with one
//! `mkdir` that fails if it exists (so two sweeps started in the same
//! millisecond get different run ids, see [`Store::claim_new`]), and the
//! process running a sweep holds a lock on it (so a sweep cannot be resumed
//! twice at once).

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use chrono::{DateTime, TimeDelta, Utc};

use crate::format::result::{RunId, RunRecord};
use crate::{fsio, jsnum};

/// What a sweep runs; enough to continue it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub run_id: RunId,
    pub git_sha: String,
    pub provider: String,
    pub model: String,
    pub suite: PathBuf,
    pub references: PathBuf,
    pub repeat: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_filter: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    #[serde(default)]
    pub allow_unpriced: bool,
    /// The cap on tokens per model reply, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// The selected tasks, in run order.
    pub tasks: Vec<String>,
    /// Each task's content hash when the sweep started (`suite::hash`),
    /// recorded in the result; absent in manifests of older versions.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub content_hashes: std::collections::BTreeMap<String, String>,
    /// Each task's fixture hash when the sweep started (`suite::hash::fixture_hash`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub fixture_hashes: std::collections::BTreeMap<String, String>,
    /// Judge matchers are decided by the offline reference judge (see
    /// `sweep::judge::ReferenceJudge`); the result says so.
    #[serde(default)]
    pub offline_judge: bool,
}

/// A sweep's folder held by this process; released when dropped.
#[derive(Debug)]
pub struct SweepLock {
    _dir: File,
}

/// The folders and files of one sweep.
#[derive(Debug, Clone)]
pub struct Store {
    pub results_dir: PathBuf,
    pub stem: String,
}

impl Store {
    pub fn new(results_dir: &Path, run_id: &RunId) -> Store {
        Store { results_dir: results_dir.to_path_buf(), stem: run_id.file_stem() }
    }

    /// Claim a fresh sweep in `results_dir`: the run id of `start` (to the
    /// millisecond), or if another sweep has that id there (its folder or
    /// result exists), the next free millisecond. The claim is the creation
    /// of the sweep's folder, which fails for all but one of the processes
    /// that try the same id at once. Returns the store, its run id and the
    /// held [`SweepLock`].
    pub fn claim_new(results_dir: &Path, start: DateTime<Utc>) -> Result<(Store, RunId, SweepLock)> {
        std::fs::create_dir_all(results_dir)
            .with_context(|| format!("creating the results folder {}", results_dir.display()))?;
        let mut at = start;
        // Bounded: a folder that refuses every id is an error, not a hang.
        for _ in 0..10_000 {
            let run_id = RunId(at.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string());
            let store = Store::new(results_dir, &run_id);
            at += TimeDelta::milliseconds(1);
            match std::fs::create_dir(store.dir()) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e).with_context(|| format!("creating {}", store.dir().display())),
            }
            // A result kept without its folder still owns the id.
            if store.result_path().exists() {
                let _ = std::fs::remove_dir(store.dir());
                continue;
            }
            let lock = store.lock()?;
            return Ok((store, run_id, lock));
        }
        bail!("no free run id in {} after 10000 tries", results_dir.display())
    }

    /// Hold this sweep's folder for as long as the lock lives (the process
    /// dies with it): a second process running the same sweep is refused.
    pub fn lock(&self) -> Result<SweepLock> {
        let dir = self.dir();
        let file = File::open(&dir).with_context(|| format!("opening {}", dir.display()))?;
        match file.try_lock() {
            Ok(()) => Ok(SweepLock { _dir: file }),
            Err(std::fs::TryLockError::WouldBlock) => bail!(
                "the sweep in {} is being run by another vaultbench process; wait for it to end (or stop it) before resuming",
                dir.display()
            ),
            Err(std::fs::TryLockError::Error(e)) => Err(e).with_context(|| format!("locking {}", dir.display())),
        }
    }

    /// The store of `RUN_ID` (an id like `2026-11-22T10:00:00.000Z` or its file stem).
    pub fn find(results_dir: &Path, run_id: &str) -> Result<(Store, Manifest)> {
        let stem = run_id.trim_end_matches(".json").replace([':', '.'], "-");
        let store = Store { results_dir: results_dir.to_path_buf(), stem };
        let path = store.manifest_path();
        if !path.is_file() {
            bail!(
                "cannot resume `{run_id}`: no sweep manifest at {} (resume needs the results folder the sweep wrote to; pass --results DIR)",
                path.display()
            );
        }
        let manifest: Manifest = fsio::read_json(&path)?;
        Ok((store, manifest))
    }

    /// Remove the temporary files of writes cut short by a killed sweep
    /// (`.<name>.XXXXXX.tmp` in the sweep's folder and `cells/`); the caller
    /// holds the sweep's lock, so none is being written.
    pub fn remove_leftovers(&self, _lock: &SweepLock) -> Result<usize> {
        Ok(fsio::remove_atomic_temps(&self.dir())? + fsio::remove_atomic_temps(&self.cells_dir())?)
    }

    /// Set aside the saved runs of `tasks` (runs 1..=`repeat`) that ended
    /// with a harness error (see the module docs); returns them, in order.
    /// The caller holds the sweep's lock.
    pub fn set_aside_errored(&self, _lock: &SweepLock, tasks: &[String], repeat: u32) -> Result<Vec<(String, u32)>> {
        let mut set_aside = Vec::new();
        let retried = self.dir().join("retried");
        for task in tasks {
            for n in 1..=repeat {
                let Some(record) = self.load_cell(task, n)? else { continue };
                if !record.has_harness_error() {
                    continue;
                }
                std::fs::create_dir_all(&retried).with_context(|| format!("creating {}", retried.display()))?;
                let try_number = (1..).find(|i| !retried.join(format!("{task}-{n}.try{i}.json")).exists()).unwrap_or(1);
                let transcript = self.transcript_path(task, n);
                if transcript.is_file() {
                    let to = retried.join(format!("{task}-{n}.try{try_number}.transcript.json"));
                    std::fs::rename(&transcript, &to)
                        .with_context(|| format!("moving {} to {}", transcript.display(), to.display()))?;
                }
                // The record goes last: until it moves, the run still counts as finished.
                let cell = self.cells_dir().join(format!("{task}-{n}.json"));
                let to = retried.join(format!("{task}-{n}.try{try_number}.json"));
                std::fs::rename(&cell, &to)
                    .with_context(|| format!("moving {} to {}", cell.display(), to.display()))?;
                set_aside.push((task.clone(), n));
            }
        }
        if !set_aside.is_empty() {
            fsio::sync_dir(&self.cells_dir())?;
        }
        Ok(set_aside)
    }

    pub fn dir(&self) -> PathBuf {
        self.results_dir.join(&self.stem)
    }

    pub fn result_path(&self) -> PathBuf {
        self.results_dir.join(format!("{}.json", self.stem))
    }

    fn manifest_path(&self) -> PathBuf {
        self.dir().join("sweep.json")
    }

    fn cells_dir(&self) -> PathBuf {
        self.dir().join("cells")
    }

    pub fn transcript_path(&self, task: &str, n: u32) -> PathBuf {
        self.dir().join(format!("{task}-{n}.json"))
    }

    /// A run's `transcript_path` as recorded in the result: relative to the
    /// folder holding the results folder (`results/<stem>/<task>-<n>.json`),
    /// as the reference harness records it relative to `evals/`.
    pub fn recorded_transcript_path(&self, task: &str, n: u32) -> String {
        let results =
            self.results_dir.file_name().map_or_else(|| "results".into(), |n| n.to_string_lossy().into_owned());
        format!("{results}/{}/{task}-{n}.json", self.stem)
    }

    pub fn vault_dir(&self, task: &str, n: u32) -> PathBuf {
        self.dir().join("vaults").join(format!("{task}-{n}"))
    }

    pub fn write_manifest(&self, manifest: &Manifest) -> Result<()> {
        fsio::write_atomic(&self.manifest_path(), &jsnum::to_json_bytes(manifest)?)
    }

    pub fn save_cell(&self, n: u32, record: &RunRecord) -> Result<()> {
        let path = self.cells_dir().join(format!("{}-{n}.json", record.id));
        fsio::write_atomic(&path, &jsnum::to_json_bytes(record)?)
            .with_context(|| format!("saving the finished cell {}", path.display()))
    }

    /// The finished cell of (`task`, `n`), if it was saved.
    pub fn load_cell(&self, task: &str, n: u32) -> Result<Option<RunRecord>> {
        let path = self.cells_dir().join(format!("{task}-{n}.json"));
        if !path.is_file() {
            return Ok(None);
        }
        let record: RunRecord = fsio::read_json(&path)?;
        if record.id != task {
            bail!("{}: holds a run of `{}`, not `{task}`", path.display(), record.id);
        }
        Ok(Some(record))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_the_reference_layout() {
        let s = Store::new(Path::new("evals/results"), &RunId("2026-11-22T10:00:00.000Z".into()));
        assert_eq!(s.result_path(), Path::new("evals/results/2026-11-22T10-00-00-000Z.json"));
        assert_eq!(s.transcript_path("t", 2), Path::new("evals/results/2026-11-22T10-00-00-000Z/t-2.json"));
        assert_eq!(s.recorded_transcript_path("t", 2), "results/2026-11-22T10-00-00-000Z/t-2.json");
    }

    #[test]
    fn a_taken_run_id_moves_to_the_next_free_millisecond() {
        let dir = tempfile::tempdir().unwrap();
        let start: DateTime<Utc> = "2026-11-22T10:00:00.998Z".parse().unwrap();
        let (a, id_a, _lock_a) = Store::claim_new(dir.path(), start).unwrap();
        assert_eq!(id_a.0, "2026-11-22T10:00:00.998Z");
        // A result without its folder (moved, or the folder removed) keeps its id too.
        std::fs::write(dir.path().join("2026-11-22T10-00-00-999Z.json"), "{}").unwrap();
        let (b, id_b, _lock_b) = Store::claim_new(dir.path(), start).unwrap();
        assert_eq!(id_b.0, "2026-11-22T10:00:01.000Z");
        assert_ne!(a.dir(), b.dir());
        assert!(!dir.path().join("2026-11-22T10-00-00-999Z").exists());
        // A held sweep cannot be locked again.
        let err = a.lock().unwrap_err().to_string();
        assert!(err.contains("another vaultbench process"), "{err}");
    }

    /// Many claimants released together, many times: every one gets its own
    /// id and folder (a check-then-create claim fails this within a few rounds).
    #[test]
    fn simultaneous_claims_of_one_id_all_differ() {
        let start: DateTime<Utc> = "2026-11-22T10:00:00.000Z".parse().unwrap();
        for _ in 0..60 {
            let dir = tempfile::tempdir().unwrap();
            let barrier = std::sync::Barrier::new(6);
            let ids: Vec<String> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..6)
                    .map(|_| {
                        s.spawn(|| {
                            barrier.wait();
                            let (_, id, lock) = Store::claim_new(dir.path(), start).unwrap();
                            (id.0, lock)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap().0).collect()
            });
            let distinct: std::collections::HashSet<&String> = ids.iter().collect();
            assert_eq!(distinct.len(), 6, "{ids:?}");
        }
    }

    #[test]
    fn resume_of_an_unknown_run_names_the_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let err = Store::find(dir.path(), "2026-11-22T10:00:00.000Z").unwrap_err().to_string();
        assert!(err.contains("2026-11-22T10-00-00-000Z/sweep.json"), "{err}");
    }
}
