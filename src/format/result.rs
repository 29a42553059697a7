//! The result file (`evals/results/<run-id>.json`), which is also the baseline
//! file (`evals/baselines/<provider>-<model>.json`): the exact shape the
//! reference harness writes, field order included, so that a loaded file
//! re-serializes byte for byte (see `jsnum::to_json_bytes`).
//!
//! vaultbench's own additions (`interrupted`, `shard`, `task_filter`,
//! `offline_judge`, `shard_run_ids`, a task's `content_hash` and `fixture_hash`, a run's
//! `endReason`) are optional and omitted when unset, so files without them
//! keep that shape.

use std::fmt;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::{OneOrMany, Tier};

/// A sweep's identifier: the ISO-8601 UTC timestamp of its start,
/// e.g. `2026-05-24T21:42:41.910Z`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(pub String);

impl RunId {
    /// The UTC date part, `YYYY-MM-DD`, or the whole id when it is shorter.
    pub fn date(&self) -> &str {
        self.0.get(..10).unwrap_or(&self.0)
    }

    /// The id as a file stem: `:` and `.` become `-`, as the reference harness names files.
    pub fn file_stem(&self) -> String {
        self.0.replace([':', '.'], "-")
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultFile {
    pub run_id: RunId,
    pub git_sha: String,
    pub model: String,
    pub provider: String,
    /// The sweep was stopped (Ctrl-C, SIGTERM) before every cell ran.
    #[serde(default, skip_serializing_if = "is_false")]
    pub interrupted: bool,
    /// `I/N` when this is one slice of a sharded sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// The `--task` prefix when only part of the suite ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_filter: Option<String>,
    /// Judge verdicts were replayed offline from the labels recorded for the
    /// reference answers (`run --provider reference` without a judge), not
    /// asked of a model: a self-check of the pipeline, never a measurement.
    #[serde(default, skip_serializing_if = "is_false")]
    pub offline_judge: bool,
    /// A result `merge` joined from the shards of one sweep: each shard's own
    /// run id, shard 1/N first. The shards' transcripts carry these ids
    /// ([`ResultFile::run_id_of`]); `run_id` is the earliest of them. Empty
    /// (and absent from the file) for a result one process wrote.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shard_run_ids: Vec<RunId>,
    pub tasks: Vec<TaskResult>,
    pub aggregate: Aggregate,
}

impl ResultFile {
    /// The run id under which `task`'s runs were recorded (the `run_id` of
    /// their transcripts): the result's own, or for a merged result that of
    /// the shard that ran the task. Task j of the sorted task list ran in
    /// shard j mod N + 1, as `run --shard` deals them. `None` for a task the
    /// result does not hold.
    pub fn run_id_of(&self, task: &str) -> Option<&RunId> {
        if self.shard_run_ids.is_empty() {
            return self.tasks.iter().any(|t| t.id == task).then_some(&self.run_id);
        }
        let mut ids: Vec<&str> = self.tasks.iter().map(|t| t.id.as_str()).collect();
        ids.sort_unstable();
        let j = ids.iter().position(|id| *id == task)?;
        self.shard_run_ids.get(j % self.shard_run_ids.len())
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One task over its k runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    pub id: String,
    pub difficulty: Option<Tier>,
    pub category: Option<String>,
    /// What the task was when it ran: `sha256:...` of its definition,
    /// fixture and setup files (`suite::hash`). vaultbench's own; absent
    /// from the reference harness's files, which keep their shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_hash: Option<String>,
    /// What the model's vault was made of when it ran: `sha256:...` of the
    /// task's fixture and setup files alone (`suite::hash::fixture_hash`).
    /// `regrade` reads it to know that a tool result the transcript cut is
    /// what today's fixture gives. vaultbench's own, like `content_hash`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixture_hash: Option<String>,
    pub n_runs: u32,
    pub passed_count: u32,
    pub solved_count: u32,
    pub pass_k: bool,
    pub solve_k: bool,
    pub flaky: bool,
    pub metrics: TaskMetrics,
    pub runs: Vec<RunRecord>,
}

/// Means over a task's runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskMetrics {
    pub turns: f64,
    pub tool_calls: f64,
    pub prompt_tokens: f64,
    pub cached_tokens: f64,
    /// Null when no run had a cache figure (cacheless providers).
    pub cache_ratio: Option<f64>,
    pub output_tokens: f64,
    pub cost_usd: f64,
    pub loop_fires: f64,
    pub duration_ms: f64,
}

/// One run of one task: its evidence and verdicts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub id: String,
    pub passed: bool,
    pub solved: bool,
    pub response_text: String,
    pub metrics: RunMetrics,
    pub errors: Vec<String>,
    pub solve_details: SolveDetails,
    #[serde(rename = "timedOut", default, skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<bool>,
    /// Why the run stopped without an answer, when it was neither the
    /// time (`timedOut`, upstream's own field) nor a harness error (`errors`):
    /// the turn limit or the model's context window. Absent otherwise, so
    /// the reference harness's files keep their shape.
    #[serde(rename = "endReason", default, skip_serializing_if = "Option::is_none")]
    pub end_reason: Option<EndReason>,
    pub transcript_path: String,
}

/// A way a run ends that upstream's format has no field for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// `maxTurns` model calls without a final answer.
    TurnLimit,
    /// The conversation outgrew the model's context window.
    ContextExceeded,
}

impl EndReason {
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::TurnLimit => "turn_limit",
            EndReason::ContextExceeded => "context_exceeded",
        }
    }
}

impl RunRecord {
    /// The run ended on a harness fault (provider unreachable after retries,
    /// a tool crash), not on the model's behaviour.
    pub fn has_harness_error(&self) -> bool {
        !self.errors.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunMetrics {
    /// Model calls made.
    pub turns: u32,
    pub tool_calls: u32,
    /// High-water mark of the prompt size over the run's model calls.
    pub prompt_tokens: u64,
    /// Cached part of that largest prompt; null for cacheless providers.
    pub cached_tokens: Option<u64>,
    /// `cached_tokens / prompt_tokens`, 3 decimals; null for cacheless providers.
    pub cache_ratio: Option<f64>,
    /// Sum over the run's model calls.
    pub output_tokens: u64,
    pub cost_usd: f64,
    pub loop_fires: u32,
    pub duration_ms: u64,
    /// Tool names in call order.
    pub tool_list: Vec<String>,
}

/// The itemized evidence behind `solved`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SolveDetails {
    pub expected_tools_met: bool,
    pub forbidden_tools_clean: bool,
    pub matchers_pass: bool,
    pub matcher_details: Vec<MatcherDetail>,
    pub judge_attempted: bool,
    pub judge_available: bool,
    pub judge_skipped: bool,
    pub vault_assertions_pass: bool,
    pub vault_assertion_details: Vec<AssertionDetail>,
    pub tool_budget_ok: bool,
}

impl SolveDetails {
    /// Every rubric check holds (the run must also have passed to be solved).
    pub fn all_checks_hold(&self) -> bool {
        self.expected_tools_met
            && self.forbidden_tools_clean
            && self.matchers_pass
            && self.vault_assertions_pass
            && self.tool_budget_ok
    }

    /// Every check holds except the judge matchers, whatever they said: what
    /// the literal checks (tools, contains, regex, vault, budget) decide alone.
    pub fn literal_checks_hold(&self) -> bool {
        self.expected_tools_met
            && self.forbidden_tools_clean
            && self.matcher_details.iter().all(|m| m.verdict() || matches!(m, MatcherDetail::Judge { .. }))
            && self.vault_assertions_pass
            && self.tool_budget_ok
    }
}

/// One output matcher's verdict, with what it checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum MatcherDetail {
    Contains {
        value: OneOrMany,
        verdict: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    Regex {
        value: OneOrMany,
        /// Written as null when the matcher had no flags.
        #[serde(default)]
        flags: Option<String>,
        verdict: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    Judge {
        criteria: String,
        verdict: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
}

impl MatcherDetail {
    pub fn verdict(&self) -> bool {
        match self {
            Self::Contains { verdict, .. } | Self::Regex { verdict, .. } | Self::Judge { verdict, .. } => *verdict,
        }
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            Self::Contains { .. } => "contains",
            Self::Regex { .. } => "regex",
            Self::Judge { .. } => "judge",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssertionDetail {
    #[serde(rename = "type")]
    pub kind: String,
    pub path: String,
    pub ok: bool,
    pub reason: String,
}

/// The headline numbers of a result file. Rates are percentages with one
/// decimal; see `report::aggregate` for how each is computed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Aggregate {
    pub total_tasks: u32,
    /// k: runs per task (of the first task).
    pub n_runs: u32,
    pub total_runs: u32,
    pub pass_k_rate: f64,
    pub solve_k_rate: f64,
    pub mean_pass_rate: f64,
    pub mean_solve_rate: f64,
    pub flaky_task_count: u32,
    pub mean_turns: f64,
    pub p95_turns: u32,
    /// Null when no run had a cache figure.
    pub mean_cache_ratio: Option<f64>,
    pub mean_cost_usd: f64,
    pub total_cost_usd: f64,
    pub total_loop_fires: u32,
    /// Keyed by tier (`T1`..`T4`, or `untagged`) in first-seen task order.
    pub by_difficulty: IndexMap<String, TierSummary>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TierSummary {
    pub total_tasks: u32,
    pub solve_k_count: u32,
    pub solved_cells: u32,
    pub run_cells: u32,
    pub solve_k_rate: f64,
    pub mean_solve_rate: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run as the reference harness writes it, with `extra` fields before
    /// `transcript_path`.
    fn run_json(extra: &str) -> String {
        let text = format!(
            r#"{{
  "id": "t",
  "passed": false,
  "solved": false,
  "response_text": "",
  "metrics": {{
    "turns": 8,
    "tool_calls": 8,
    "prompt_tokens": 100,
    "cached_tokens": null,
    "cache_ratio": null,
    "output_tokens": 10,
    "cost_usd": 0,
    "loop_fires": 0,
    "duration_ms": 5,
    "tool_list": []
  }},
  "errors": [],
  "solve_details": {{
    "expected_tools_met": true,
    "forbidden_tools_clean": true,
    "matchers_pass": false,
    "matcher_details": [],
    "judge_attempted": false,
    "judge_available": false,
    "judge_skipped": false,
    "vault_assertions_pass": true,
    "vault_assertion_details": [],
    "tool_budget_ok": true
  }},{extra}
  "transcript_path": "results/r/t-1.json"
}}"#
        );
        // The reference harness indents with tabs.
        text.replace("  ", "\t")
    }

    #[test]
    fn the_end_reason_round_trips_and_is_absent_when_unset() {
        for (extra, timed_out, reason) in [
            ("", None, None),
            ("\n  \"timedOut\": true,", Some(true), None),
            ("\n  \"endReason\": \"turn_limit\",", None, Some(EndReason::TurnLimit)),
            ("\n  \"endReason\": \"context_exceeded\",", None, Some(EndReason::ContextExceeded)),
        ] {
            let text = run_json(extra);
            let run: RunRecord = serde_json::from_str(&text).unwrap();
            assert_eq!((run.timed_out, run.end_reason), (timed_out, reason), "{extra}");
            let written = crate::jsnum::to_json_bytes(&run).unwrap();
            assert_eq!(String::from_utf8(written).unwrap().trim_end(), text, "byte for byte");
        }
        let e = serde_json::from_str::<RunRecord>(&run_json("\n  \"endReason\": \"bored\",")).unwrap_err();
        assert!(e.to_string().contains("turn_limit"), "{e}");
    }
}
