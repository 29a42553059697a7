//! What the history keeps of one version of a baseline: everything it shows
//! of it (who ran what, when, each task's solved runs and content hash, the
//! figures with their 95% intervals), derived once from the result file.
//! Small, so that thousands of versions fit in memory and in the cache
//! (`cache`) without their runs.

use serde::Serialize;

use crate::format::result::ResultFile;
use crate::stats::{self, Interval, Settings, Summary};

/// One version of a baseline, as the history shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Version {
    pub provider: String,
    pub model: String,
    pub run_id: String,
    /// The harness commit the result records.
    pub git_sha: String,
    /// The runs per task the figures are at (the fewest of any task).
    pub k: u32,
    /// Tasks with runs.
    pub tasks: usize,
    /// `None` without a task with runs.
    pub figures: Option<Figures>,
    /// Every task, in the result's order.
    pub cells: Vec<TaskCell>,
}

/// pass^k, solve^k and the mean rates, each with its 95% interval
/// (bootstrap over tasks, as the results page computes them).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Figures {
    pub pass_k: Interval,
    pub solve_k: Interval,
    pub mean_pass_rate: Interval,
    pub mean_solve_rate: Interval,
}

/// One task of a version: its solved runs and what it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskCell {
    pub id: String,
    /// Its content hash, when the result recorded one.
    pub hash: Option<String>,
    pub solved: u32,
    pub runs: u32,
}

impl Version {
    /// The version `result` is, its figures from its runs.
    pub fn of(result: &ResultFile) -> Version {
        let counts = stats::counts(result);
        let summary = Summary::of(&counts, &Settings::default());
        Version {
            provider: result.provider.clone(),
            model: result.model.clone(),
            run_id: result.run_id.0.clone(),
            git_sha: result.git_sha.clone(),
            k: summary.as_ref().map_or(0, |s| s.k),
            tasks: summary.as_ref().map_or(0, |s| s.tasks),
            figures: summary.map(|s| Figures {
                pass_k: s.pass_k,
                solve_k: s.solve_k,
                mean_pass_rate: s.mean_pass_rate,
                mean_solve_rate: s.mean_solve_rate,
            }),
            cells: result
                .tasks
                .iter()
                .zip(&counts)
                .map(|(t, c)| TaskCell {
                    id: t.id.clone(),
                    hash: t.content_hash.clone(),
                    solved: c.solved,
                    runs: c.runs,
                })
                .collect(),
        }
    }
}
