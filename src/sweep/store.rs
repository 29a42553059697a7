//! A sweep on disk, under `<results>/<stem>/`: its manifest (`sweep.json`,
//! what to run, so `--resume` can continue it), one record per finished cell
//! (`cells/<task>-<n>.json`, written atomically the moment the cell ends, so
//! even `kill -9` loses at most the cells in flight), and the transcripts
//! (`<task>-<n>.json`). The result file itself is `<results>/<stem>.json`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

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
    fn resume_of_an_unknown_run_names_the_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let err = Store::find(dir.path(), "2026-11-22T10:00:00.000Z").unwrap_err().to_string();
        assert!(err.contains("2026-11-22T10-00-00-000Z/sweep.json"), "{err}");
    }
}
