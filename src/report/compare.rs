//! Comparing a result with a baseline. A *regression* is a drop in pass^k or
//! solve^k, or a drop of any task's solved or passed fraction (a fraction, so
//! runs with a different k still compare). Added and removed tasks are
//! reported, never flagged; other metric moves are context, not regressions.
//! Cost and cache figures are left out when the providers differ.

use std::collections::HashMap;
use std::fmt::{self, Write};

use serde::Serialize;

use crate::format::result::{Aggregate, ResultFile, TaskResult};
use crate::jsnum;

/// Aggregate keys shown in a comparison, in display order.
const AGGREGATE_KEYS: &[&str] = &[
    "pass_k_rate",
    "solve_k_rate",
    "mean_pass_rate",
    "mean_solve_rate",
    "flaky_task_count",
    "mean_turns",
    "p95_turns",
    "mean_cache_ratio",
    "mean_cost_usd",
    "total_cost_usd",
    "total_loop_fires",
];
const LOWER_IS_BETTER: &[&str] =
    &["flaky_task_count", "mean_turns", "p95_turns", "mean_cost_usd", "total_cost_usd", "total_loop_fires"];
/// The aggregates whose drop is a regression worth failing CI for.
const REGRESSION_KEYS: &[&str] = &["pass_k_rate", "solve_k_rate"];
/// Provider-specific figures: meaningless across providers.
const PROVIDER_SPECIFIC: &[&str] = &["mean_cache_ratio", "mean_cost_usd", "total_cost_usd", "cache_ratio", "cost_usd"];
/// Per-task means worth showing when they move.
const TASK_METRIC_KEYS: &[&str] = &["turns", "cache_ratio", "cost_usd", "loop_fires", "tool_calls"];

#[derive(Debug, Clone, Serialize)]
pub struct Side {
    pub run_id: String,
    pub git_sha: String,
    pub model: String,
    pub provider: String,
    pub n_runs: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct AggregateChange {
    pub key: &'static str,
    pub before: Option<f64>,
    pub after: Option<f64>,
    /// False when the figure is provider-specific and the providers differ.
    pub applicable: bool,
    pub regressed: bool,
    pub improved: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskChangeKind {
    New,
    Removed,
    Changed,
    Unchanged,
}

/// `count` out of `n`, before and after; absent on the side where the task is missing.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Fraction {
    pub count: u32,
    pub n: u32,
}

impl fmt::Display for Fraction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.count, self.n)
    }
}

impl Fraction {
    fn value(self) -> f64 {
        if self.n == 0 { 0.0 } else { f64::from(self.count) / f64::from(self.n) }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct MetricChange {
    pub key: &'static str,
    pub before: Option<f64>,
    pub after: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TaskChange {
    pub id: String,
    pub kind: TaskChangeKind,
    pub solved_before: Option<Fraction>,
    pub solved_after: Option<Fraction>,
    pub passed_before: Option<Fraction>,
    pub passed_after: Option<Fraction>,
    pub solve_regressed: bool,
    pub pass_regressed: bool,
    pub metric_changes: Vec<MetricChange>,
}

impl TaskChange {
    pub fn regressed(&self) -> bool {
        self.solve_regressed || self.pass_regressed
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub baseline: Side,
    pub current: Side,
    pub providers_differ: bool,
    pub aggregates: Vec<AggregateChange>,
    pub tasks: Vec<TaskChange>,
}

impl Comparison {
    pub fn regressed_aggregates(&self) -> impl Iterator<Item = &AggregateChange> {
        self.aggregates.iter().filter(|a| a.regressed && REGRESSION_KEYS.contains(&a.key))
    }

    pub fn regressed_tasks(&self) -> impl Iterator<Item = &TaskChange> {
        self.tasks.iter().filter(|t| t.regressed())
    }

    pub fn has_regressions(&self) -> bool {
        self.regressed_aggregates().next().is_some() || self.regressed_tasks().next().is_some()
    }
}

fn side(r: &ResultFile) -> Side {
    Side {
        run_id: r.run_id.0.clone(),
        git_sha: r.git_sha.clone(),
        model: r.model.clone(),
        provider: r.provider.clone(),
        n_runs: r.aggregate.n_runs,
    }
}

fn aggregate_value(a: &Aggregate, key: &str) -> Option<f64> {
    Some(match key {
        "pass_k_rate" => a.pass_k_rate,
        "solve_k_rate" => a.solve_k_rate,
        "mean_pass_rate" => a.mean_pass_rate,
        "mean_solve_rate" => a.mean_solve_rate,
        "flaky_task_count" => f64::from(a.flaky_task_count),
        "mean_turns" => a.mean_turns,
        "p95_turns" => f64::from(a.p95_turns),
        "mean_cache_ratio" => return a.mean_cache_ratio,
        "mean_cost_usd" => a.mean_cost_usd,
        "total_cost_usd" => a.total_cost_usd,
        "total_loop_fires" => f64::from(a.total_loop_fires),
        _ => unreachable!("unknown aggregate key {key}"),
    })
}

fn task_metric(t: &TaskResult, key: &str) -> Option<f64> {
    let m = &t.metrics;
    Some(match key {
        "turns" => m.turns,
        "cache_ratio" => return m.cache_ratio,
        "cost_usd" => m.cost_usd,
        "loop_fires" => m.loop_fires,
        "tool_calls" => m.tool_calls,
        _ => unreachable!("unknown task metric {key}"),
    })
}

fn fractions(t: &TaskResult) -> (Fraction, Fraction) {
    (Fraction { count: t.solved_count, n: t.n_runs }, Fraction { count: t.passed_count, n: t.n_runs })
}

/// Compare `current` against `baseline`.
pub fn compare(baseline: &ResultFile, current: &ResultFile) -> Comparison {
    let providers_differ = baseline.provider != current.provider;
    let aggregates = AGGREGATE_KEYS
        .iter()
        .map(|&key| {
            let applicable = !(providers_differ && PROVIDER_SPECIFIC.contains(&key));
            let (before, after) = if applicable {
                (aggregate_value(&baseline.aggregate, key), aggregate_value(&current.aggregate, key))
            } else {
                (None, None)
            };
            let (mut regressed, mut improved) = (false, false);
            if let (Some(b), Some(a)) = (before, after) {
                let lower_better = LOWER_IS_BETTER.contains(&key);
                regressed = if lower_better { a > b } else { a < b };
                improved = if lower_better { a < b } else { a > b };
            }
            AggregateChange { key, before, after, applicable, regressed, improved }
        })
        .collect();

    let base_tasks: HashMap<&str, &TaskResult> = baseline.tasks.iter().map(|t| (t.id.as_str(), t)).collect();
    let current_ids: std::collections::HashSet<&str> = current.tasks.iter().map(|t| t.id.as_str()).collect();
    let mut tasks = Vec::new();
    for ct in &current.tasks {
        let (c_solved, c_passed) = fractions(ct);
        let Some(bt) = base_tasks.get(ct.id.as_str()) else {
            tasks.push(TaskChange {
                id: ct.id.clone(),
                kind: TaskChangeKind::New,
                solved_before: None,
                solved_after: Some(c_solved),
                passed_before: None,
                passed_after: Some(c_passed),
                solve_regressed: false,
                pass_regressed: false,
                metric_changes: vec![],
            });
            continue;
        };
        let (b_solved, b_passed) = fractions(bt);
        let metric_changes: Vec<MetricChange> = TASK_METRIC_KEYS
            .iter()
            .filter(|key| !(providers_differ && PROVIDER_SPECIFIC.contains(key)))
            .filter_map(|&key| {
                let (before, after) = (task_metric(bt, key), task_metric(ct, key));
                let moved = match (before, after) {
                    (Some(b), Some(a)) => (b - a).abs() > 0.001,
                    (None, None) => false,
                    _ => true,
                };
                moved.then_some(MetricChange { key, before, after })
            })
            .collect();
        let changed = b_solved != c_solved || b_passed != c_passed || !metric_changes.is_empty();
        tasks.push(TaskChange {
            id: ct.id.clone(),
            kind: if changed { TaskChangeKind::Changed } else { TaskChangeKind::Unchanged },
            solved_before: Some(b_solved),
            solved_after: Some(c_solved),
            passed_before: Some(b_passed),
            passed_after: Some(c_passed),
            solve_regressed: c_solved.value() < b_solved.value(),
            pass_regressed: c_passed.value() < b_passed.value(),
            metric_changes,
        });
    }
    for bt in &baseline.tasks {
        if !current_ids.contains(bt.id.as_str()) {
            let (b_solved, b_passed) = fractions(bt);
            tasks.push(TaskChange {
                id: bt.id.clone(),
                kind: TaskChangeKind::Removed,
                solved_before: Some(b_solved),
                solved_after: None,
                passed_before: Some(b_passed),
                passed_after: None,
                solve_regressed: false,
                pass_regressed: false,
                metric_changes: vec![],
            });
        }
    }
    Comparison { baseline: side(baseline), current: side(current), providers_differ, aggregates, tasks }
}

fn num(x: Option<f64>) -> String {
    x.map_or_else(|| "n/a".to_string(), jsnum::to_string)
}

fn delta(before: Option<f64>, after: Option<f64>) -> String {
    match (before, after) {
        (Some(b), Some(a)) => {
            let pct = if b != 0.0 {
                let p = jsnum::math_round((a - b) / b * 100.0);
                format!(" ({}{}%)", if p > 0.0 { "+" } else { "" }, jsnum::to_string(p))
            } else {
                String::new()
            };
            format!("{} → {}{pct}", num(before), num(after))
        }
        (None, None) => "n/a".into(),
        _ => format!("{} → {}", num(before), num(after)),
    }
}

fn percent_delta(before: Option<f64>, after: Option<f64>) -> String {
    match (before, after) {
        (Some(b), Some(a)) if (a - b).abs() < 0.05 => format!("{}% → {}% (=)", num(before), num(after)),
        (Some(b), Some(a)) => {
            let d = a - b;
            format!(
                "{}% → {}% ({}{}pp)",
                num(before),
                num(after),
                if d > 0.0 { "+" } else { "" },
                jsnum::to_fixed(d, 1)
            )
        }
        _ => delta(before, after),
    }
}

fn frac(f: Option<Fraction>) -> String {
    f.map_or_else(|| "-".to_string(), |f| f.to_string())
}

impl Comparison {
    /// The verbose diff of `vaultbench compare`.
    pub fn detailed(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "=== Comparison ===");
        let _ = writeln!(
            s,
            "Baseline: {} {} ({}, {})",
            self.baseline.provider, self.baseline.model, self.baseline.run_id, self.baseline.git_sha
        );
        let _ = writeln!(
            s,
            "Current:  {} {} ({}, {})",
            self.current.provider, self.current.model, self.current.run_id, self.current.git_sha
        );
        if self.providers_differ {
            let _ = writeln!(
                s,
                "\nProviders differ: {} → {} (cost and cache figures are not comparable and are left out)",
                self.baseline.provider, self.current.provider
            );
        }
        let _ = writeln!(s, "\nAggregates:");
        for a in &self.aggregates {
            if !a.applicable {
                let _ = writeln!(s, "  {:<22} n/a (cross-provider)", a.key);
                continue;
            }
            let flag = if a.regressed && REGRESSION_KEYS.contains(&a.key) { "  REGRESSION" } else { "" };
            let _ = writeln!(s, "  {:<22} {}{flag}", a.key, delta(a.before, a.after));
        }
        let _ = writeln!(s, "\nPer-task changes:");
        let mut any = false;
        for t in &self.tasks {
            let line = match t.kind {
                TaskChangeKind::Unchanged => continue,
                TaskChangeKind::New => format!("  [NEW] {}: solved {} (not flagged)", t.id, frac(t.solved_after)),
                TaskChangeKind::Removed => {
                    format!("  [REMOVED] {}: was solved {} (not flagged)", t.id, frac(t.solved_before))
                }
                TaskChangeKind::Changed => {
                    let mut parts = Vec::new();
                    if t.solved_before != t.solved_after {
                        let mark = if t.solve_regressed { "REGRESSION " } else { "" };
                        parts.push(format!("{mark}solved {} → {}", frac(t.solved_before), frac(t.solved_after)));
                    }
                    if t.passed_before != t.passed_after {
                        let mark = if t.pass_regressed { "REGRESSION " } else { "" };
                        parts.push(format!("{mark}passed {} → {}", frac(t.passed_before), frac(t.passed_after)));
                    }
                    for m in &t.metric_changes {
                        parts.push(format!("{} {}", m.key, delta(m.before, m.after)));
                    }
                    format!("  {}: {}", t.id, parts.join(", "))
                }
            };
            any = true;
            let _ = writeln!(s, "{line}");
        }
        if !any {
            let _ = writeln!(s, "  (none)");
        }
        let _ = writeln!(s);
        s.push_str(&self.summary());
        s
    }

    /// The brief regression check printed after a run and at the end of `compare`.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "=== Regression check vs baseline ({} / {}) ===",
            self.baseline.git_sha,
            crate::format::result::RunId(self.baseline.run_id.clone()).date()
        );
        let k = self.current.n_runs;
        for a in self.aggregates.iter().filter(|a| REGRESSION_KEYS.contains(&a.key)) {
            let label = if a.key == "pass_k_rate" { format!("pass^{k}") } else { format!("solve^{k}") };
            let flag = if a.regressed { "  REGRESSION" } else { "" };
            let _ = writeln!(s, "  {label:<10} {}{flag}", percent_delta(a.before, a.after));
        }
        let regressed: Vec<&TaskChange> = self.regressed_tasks().collect();
        if !regressed.is_empty() {
            let _ = writeln!(s, "  Tasks with a lower solve or pass rate:");
            for t in regressed {
                let mut parts = Vec::new();
                if t.solve_regressed {
                    parts.push(format!("solved {} → {}", frac(t.solved_before), frac(t.solved_after)));
                }
                if t.pass_regressed {
                    parts.push(format!("passed {} → {}", frac(t.passed_before), frac(t.passed_after)));
                }
                let _ = writeln!(s, "    {}: {}", t.id, parts.join(", "));
            }
        }
        let added = self.tasks.iter().filter(|t| t.kind == TaskChangeKind::New).count();
        let removed = self.tasks.iter().filter(|t| t.kind == TaskChangeKind::Removed).count();
        if added + removed > 0 {
            let _ = writeln!(s, "  Task set differs: {added} added, {removed} removed (reported, not flagged)");
        }
        if self.has_regressions() {
            let _ = writeln!(s, "  REGRESSIONS FOUND");
        } else {
            let _ = writeln!(s, "  No regressions vs baseline.");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Tier;
    use crate::format::result::RunId;
    use crate::report::aggregate::{aggregate, task_result};

    fn result(tasks: &[(&str, &[bool])]) -> ResultFile {
        let tasks: Vec<TaskResult> = tasks
            .iter()
            .map(|(id, solved)| {
                let runs = solved
                    .iter()
                    .map(|&s| crate::report::aggregate::tests::run(true, s, 2, 0.001, Some(0.5)))
                    .collect();
                task_result(id.to_string(), Some(Tier::T2), Some("c".into()), runs)
            })
            .collect();
        ResultFile {
            run_id: RunId("2026-06-01T10:00:00.000Z".into()),
            git_sha: "abc1234".into(),
            model: "m".into(),
            provider: "gemini".into(),
            interrupted: false,
            shard: None,
            task_filter: None,
            aggregate: aggregate(&tasks),
            tasks,
        }
    }

    #[test]
    fn equal_results_have_no_regressions() {
        let r = result(&[("a", &[true, true]), ("b", &[true, false])]);
        let c = compare(&r, &r);
        assert!(!c.has_regressions());
        assert!(c.tasks.iter().all(|t| t.kind == TaskChangeKind::Unchanged));
        assert!(c.summary().contains("No regressions"));
    }

    #[test]
    fn one_run_flipping_to_unsolved_is_flagged_by_name() {
        let base = result(&[("a", &[true, true]), ("b", &[true, true])]);
        let cur = result(&[("a", &[true, true]), ("b", &[true, false])]);
        let c = compare(&base, &cur);
        assert!(c.has_regressions());
        let names: Vec<_> = c.regressed_tasks().map(|t| t.id.as_str()).collect();
        assert_eq!(names, ["b"]);
        assert!(c.summary().contains("b: solved 2/2 → 1/2"), "{}", c.summary());
        assert!(c.regressed_aggregates().any(|a| a.key == "solve_k_rate"));
    }

    #[test]
    fn added_and_removed_tasks_are_reported_not_flagged() {
        let base = result(&[("a", &[true]), ("old", &[true])]);
        let cur = result(&[("a", &[true]), ("old", &[true]), ("new", &[false])]);
        let c = compare(&base, &cur);
        // The new task lowers solve^k, which is a real aggregate drop; the task itself is not flagged.
        assert_eq!(c.regressed_tasks().count(), 0);
        assert!(c.detailed().contains("[NEW] new: solved 0/1 (not flagged)"));
        let c = compare(&cur, &base);
        assert!(!c.has_regressions(), "{}", c.detailed());
        assert!(c.detailed().contains("[REMOVED] new"));
    }

    #[test]
    fn fractions_compare_across_different_k() {
        let base = result(&[("a", &[true, true, false])]);
        let cur = result(&[("a", &[true, true, true, false, false])]);
        // 2/3 -> 3/5 is a drop even though the count rose.
        assert!(compare(&base, &cur).regressed_tasks().any(|t| t.id == "a"));
    }

    #[test]
    fn cross_provider_leaves_out_cost_and_cache() {
        let base = result(&[("a", &[true])]);
        let mut cur = base.clone();
        cur.provider = "ollama".into();
        let c = compare(&base, &cur);
        assert!(c.providers_differ);
        let cost = c.aggregates.iter().find(|a| a.key == "total_cost_usd").unwrap();
        assert!(!cost.applicable && cost.before.is_none());
    }
}
