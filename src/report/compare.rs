//! Comparing a result with a baseline. What counts as a *regression* is the
//! gate's rule (`stats::gate`): by default a drop of pass^k, solve^k or a
//! mean rate, or of a task's solved or passed fraction, that the data
//! supports at `--alpha` (a paired bootstrap on the common tasks for pass^k
//! and solve^k, the exact stratified test across tasks for the mean rates,
//! Fisher's exact test with the Benjamini–Hochberg correction per task); smaller drops are
//! listed as within noise. Under the exact rule any drop of those is one.
//! Added and removed tasks are reported, never flagged; other metric moves
//! are context, not regressions. Cost and cache figures are left out when
//! the providers differ.

use std::collections::HashMap;
use std::fmt::{self, Write};

use serde::Serialize;

use crate::format::result::{Aggregate, ResultFile, TaskResult};
use crate::jsnum;
use crate::report::drift::{Drift, task_drift};
use crate::stats::paired::{Difference, ExactTest};
use crate::stats::stratified::Stratified;
use crate::stats::{self, Paired, Rule, Settings, Verdict, gate};

/// How `compare` and `run` judge drops (`--alpha` and `--exact`): at a
/// significance level, or any drop at all.
#[derive(Debug, Clone, Copy)]
pub struct Gate {
    pub alpha: f64,
    pub exact: bool,
}

impl Gate {
    pub fn rule(&self) -> Rule {
        if self.exact { Rule::Exact } else { Rule::Statistical { alpha: self.alpha } }
    }
}

impl Default for Gate {
    fn default() -> Self {
        Gate { alpha: stats::DEFAULT_ALPHA, exact: false }
    }
}

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
const REGRESSION_KEYS: &[&str] = &["pass_k_rate", "solve_k_rate", "mean_pass_rate", "mean_solve_rate"];
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
    /// For pass^k and solve^k: the gate's verdict; for the others, any move
    /// for the worse (context, never a failure).
    pub regressed: bool,
    pub improved: bool,
    /// The gate's verdict, for pass^k and solve^k.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
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
    /// The gate's verdict on the solved and passed counts (common tasks).
    pub solve_verdict: Verdict,
    pub pass_verdict: Verdict,
    /// Fisher's exact test of the counts, for a task both results ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub solved_test: Option<ExactTest>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passed_test: Option<ExactTest>,
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
    pub rule: Rule,
    /// The paired comparison on the common tasks (`None` without any).
    pub paired: Option<Paired>,
    pub aggregates: Vec<AggregateChange>,
    pub tasks: Vec<TaskChange>,
    /// The tasks added, removed and edited since the baseline.
    pub drift: Drift,
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

    /// Drops the gate did not flag: (aggregates, tasks).
    pub fn within_noise(&self) -> (usize, usize) {
        let aggregates = self.aggregates.iter().filter(|a| a.verdict == Some(Verdict::WithinNoise)).count();
        let tasks = self
            .tasks
            .iter()
            .filter(|t| !t.regressed())
            .filter(|t| t.solve_verdict == Verdict::WithinNoise || t.pass_verdict == Verdict::WithinNoise)
            .count();
        (aggregates, tasks)
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

/// Compare `current` against `baseline` under `rule`.
pub fn compare(baseline: &ResultFile, current: &ResultFile, rule: Rule) -> Comparison {
    let providers_differ = baseline.provider != current.provider;
    let settings = match rule {
        Rule::Statistical { alpha } => Settings::with_alpha(alpha),
        Rule::Exact => Settings::default(),
    };
    let paired = Paired::of(&stats::counts(baseline), &stats::counts(current), &settings);
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
            let verdict = REGRESSION_KEYS.contains(&key).then(|| aggregate_verdict(rule, key, regressed, &paired));
            if let Some(v) = verdict {
                regressed = v.is_regression();
            }
            AggregateChange { key, before, after, applicable, regressed, improved, verdict }
        })
        .collect();

    let tests: HashMap<&str, (&ExactTest, &ExactTest)> =
        paired.iter().flat_map(|p| p.tasks.iter().map(|t| (t.id.as_str(), (&t.solved, &t.passed)))).collect();
    let base_tasks: HashMap<&str, &TaskResult> = baseline.tasks.iter().map(|t| (t.id.as_str(), t)).collect();
    let current_ids: std::collections::HashSet<&str> = current.tasks.iter().map(|t| t.id.as_str()).collect();
    let unpaired = |id: &str, kind, solved_before, solved_after, passed_before, passed_after| TaskChange {
        id: id.to_string(),
        kind,
        solved_before,
        solved_after,
        passed_before,
        passed_after,
        solve_regressed: false,
        pass_regressed: false,
        solve_verdict: Verdict::NoDrop,
        pass_verdict: Verdict::NoDrop,
        solved_test: None,
        passed_test: None,
        metric_changes: vec![],
    };
    let mut tasks = Vec::new();
    for ct in &current.tasks {
        let (c_solved, c_passed) = fractions(ct);
        let Some(bt) = base_tasks.get(ct.id.as_str()) else {
            tasks.push(unpaired(&ct.id, TaskChangeKind::New, None, Some(c_solved), None, Some(c_passed)));
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
        let (solved_test, passed_test) = match tests.get(ct.id.as_str()) {
            Some((s, p)) => (Some(**s), Some(**p)),
            None => (None, None),
        };
        let verdict = |test: Option<ExactTest>, before: Fraction, after: Fraction| match test {
            Some(t) => gate::task(rule, &t),
            // A task with no runs on a side: only the exact rule sees a drop.
            None if after.value() < before.value() && rule == Rule::Exact => Verdict::Regression,
            None if after.value() < before.value() => Verdict::WithinNoise,
            None => Verdict::NoDrop,
        };
        let solve_verdict = verdict(solved_test, b_solved, c_solved);
        let pass_verdict = verdict(passed_test, b_passed, c_passed);
        tasks.push(TaskChange {
            id: ct.id.clone(),
            kind: if changed { TaskChangeKind::Changed } else { TaskChangeKind::Unchanged },
            solved_before: Some(b_solved),
            solved_after: Some(c_solved),
            passed_before: Some(b_passed),
            passed_after: Some(c_passed),
            solve_regressed: solve_verdict.is_regression(),
            pass_regressed: pass_verdict.is_regression(),
            solve_verdict,
            pass_verdict,
            solved_test,
            passed_test,
            metric_changes,
        });
    }
    for bt in &baseline.tasks {
        if !current_ids.contains(bt.id.as_str()) {
            let (b_solved, b_passed) = fractions(bt);
            tasks.push(unpaired(&bt.id, TaskChangeKind::Removed, Some(b_solved), None, Some(b_passed), None));
        }
    }
    Comparison {
        baseline: side(baseline),
        current: side(current),
        providers_differ,
        rule,
        paired,
        aggregates,
        tasks,
        drift: task_drift(baseline, current),
    }
}

/// The gate's verdict on pass^k, solve^k or a mean rate. The exact rule
/// keeps the old reading (any drop of the stored figure); the statistical
/// rule judges pass^k and solve^k by their paired interval on the common
/// tasks at their common k, and the mean rates by the exact stratified test
/// of the runs' counts across the common tasks.
fn aggregate_verdict(rule: Rule, key: &str, stored_drop: bool, paired: &Option<Paired>) -> Verdict {
    match (rule, paired) {
        (Rule::Exact, _) => {
            if stored_drop {
                Verdict::Regression
            } else {
                Verdict::NoDrop
            }
        }
        (Rule::Statistical { .. }, Some(p)) => match across_figure(p, key) {
            Some(across) => gate::across_tasks(rule, across),
            None => gate::aggregate(rule, paired_figure(p, key), p.common_tasks),
        },
        // No common task: nothing the data could support.
        (Rule::Statistical { .. }, None) if stored_drop => Verdict::WithinNoise,
        (Rule::Statistical { .. }, None) => Verdict::NoDrop,
    }
}

/// An aggregate's name in words (the JSON keeps the field's).
fn aggregate_label(key: &str) -> &'static str {
    match key {
        "pass_k_rate" => "pass^k (%)",
        "solve_k_rate" => "solve^k (%)",
        "mean_pass_rate" => "mean pass rate (%)",
        "mean_solve_rate" => "mean solve rate (%)",
        "flaky_task_count" => "flaky tasks",
        "mean_turns" => "mean turns",
        "p95_turns" => "p95 turns",
        "mean_cache_ratio" => "mean cache ratio",
        "mean_cost_usd" => "mean cost per run (USD)",
        "total_cost_usd" => "total cost (USD)",
        "total_loop_fires" => "loop-detector fires",
        _ => "other",
    }
}

/// The short name of a gated aggregate in the regression check.
fn gate_label(key: &str, k: u32) -> String {
    match key {
        "pass_k_rate" => format!("pass^{k}"),
        "solve_k_rate" => format!("solve^{k}"),
        "mean_pass_rate" => "mean pass".to_string(),
        _ => "mean solve".to_string(),
    }
}

/// The stratified test across tasks that judges a mean rate; `None` for
/// pass^k and solve^k, which their paired interval judges.
fn across_figure<'a>(p: &'a Paired, key: &str) -> Option<&'a Stratified> {
    match key {
        "mean_pass_rate" => Some(&p.passed_across_tasks),
        "mean_solve_rate" => Some(&p.solved_across_tasks),
        _ => None,
    }
}

fn paired_figure<'a>(p: &'a Paired, key: &str) -> &'a Difference {
    match key {
        "pass_k_rate" => &p.pass_k,
        "solve_k_rate" => &p.solve_k,
        "mean_pass_rate" => &p.mean_pass_rate,
        "mean_solve_rate" => &p.mean_solve_rate,
        _ => unreachable!("no paired figure for {key}"),
    }
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

/// `-11.1pp [-20.4, -1.9], p 0.02` for a paired difference.
fn change_text(d: &Difference) -> String {
    format!(
        "{}pp [{}, {}], p {}",
        stats::signed1(d.change.estimate),
        stats::signed1(d.change.low),
        stats::signed1(d.change.high),
        stats::format_p(d.p_value)
    )
}

/// A task's exact test: for a drop, its one-sided p-value and the corrected
/// one the gate reads (`p 0.0040, adjusted 0.02`); for a rise, the two-sided one.
fn test_text(t: &ExactTest) -> String {
    match (t.dropped(), t.p_drop_adjusted) {
        (true, Some(q)) => format!("p {}, adjusted {}", stats::format_p(t.p_drop), stats::format_p(q)),
        (true, None) => format!("p {}", stats::format_p(t.p_drop)),
        (false, _) => format!("two-sided p {}", stats::format_p(t.p_two_sided)),
    }
}

fn verdict_suffix(v: Verdict) -> String {
    match v {
        Verdict::NoDrop => String::new(),
        v => format!("  {}", v.label()),
    }
}

impl Comparison {
    /// How the gate judged, in a line or two.
    fn rule_text(&self) -> String {
        match (self.rule, &self.paired) {
            (Rule::Exact, _) => "Rule: exact (any drop is a regression; the statistical gate is the default)".into(),
            (Rule::Statistical { alpha }, Some(p)) => format!(
                "Rule: statistical, alpha {}: a drop of pass^k or solve^k is a regression when its paired \
                 bootstrap interval ({}, {} common tasks, {} resamples) lies below zero; of a mean rate when the \
                 exact stratified test of the runs' counts across the common tasks gives p <= {}; for a task when \
                 its one-sided Fisher exact test is significant after the Benjamini-Hochberg correction ({} \
                 informative tests). --exact flags any drop.",
                jsnum::to_string(alpha),
                p.bootstrap.confidence_label(),
                p.common_tasks,
                p.bootstrap.resamples,
                jsnum::to_string(alpha / 2.0),
                p.family_size
            ),
            (Rule::Statistical { alpha }, None) => format!(
                "Rule: statistical, alpha {}: no task is common to both results, so no drop can be tested.",
                jsnum::to_string(alpha)
            ),
        }
    }

    /// Notes on what was compared: a different k, too few tasks for an interval.
    fn paired_notes(&self) -> Vec<String> {
        let Some(p) = &self.paired else { return Vec::new() };
        let mut notes = Vec::new();
        if p.different_k() {
            notes.push(format!(
                "The results have different k ({} and {}): pass^k and solve^k are compared at their common k = {} \
                 (unbiased estimator C(c,k)/C(n,k)); task fractions compare as they are.",
                p.k_before, p.k_after, p.k
            ));
        }
        if p.common_tasks < gate::MIN_TASKS && matches!(self.rule, Rule::Statistical { .. }) {
            notes.push(format!(
                "Only {} common tasks (fewer than {}): too few for a bootstrap interval to gate pass^k and solve^k; \
                 the exact tests (per task, and across tasks for the mean rates) decide.",
                p.common_tasks,
                gate::MIN_TASKS
            ));
        }
        notes
    }

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
        let _ = writeln!(s, "\nTasks:");
        for line in self.drift.to_string().lines() {
            let _ = writeln!(s, "  {line}");
        }
        let _ = writeln!(s, "\nAggregates (as stored, over each result's own tasks and k):");
        for a in &self.aggregates {
            if !a.applicable {
                let _ = writeln!(s, "  {:<24} n/a (cross-provider)", aggregate_label(a.key));
                continue;
            }
            let _ = writeln!(
                s,
                "  {:<24} {}{}",
                aggregate_label(a.key),
                delta(a.before, a.after),
                verdict_suffix(a.verdict.unwrap_or(Verdict::NoDrop))
            );
        }
        if let Some(p) = &self.paired {
            let _ = writeln!(
                s,
                "\nPaired comparison on {} common tasks at k = {} (change after - before, {} interval, p-value):",
                p.common_tasks,
                p.k,
                p.bootstrap.confidence_label()
            );
            let k = p.k;
            for (label, d) in [
                (format!("pass^{k}"), &p.pass_k),
                (format!("solve^{k}"), &p.solve_k),
                ("mean pass rate".to_string(), &p.mean_pass_rate),
                ("mean solve rate".to_string(), &p.mean_solve_rate),
            ] {
                let _ = writeln!(
                    s,
                    "  {label:<16} {}% → {}%  {}",
                    stats::fixed1(d.before),
                    stats::fixed1(d.after),
                    change_text(d)
                );
            }
            for (label, t) in [("passed runs", &p.passed_across_tasks), ("solved runs", &p.solved_across_tasks)] {
                let _ = writeln!(
                    s,
                    "  {label:<16} {} after against {} expected, across tasks: p {} (drop), {} (rise)",
                    t.observed,
                    stats::fixed1(t.expected),
                    stats::format_p(t.p_drop),
                    stats::format_p(t.p_rise)
                );
            }
            for note in self.paired_notes() {
                let _ = writeln!(s, "  {note}");
            }
            let _ = writeln!(s, "\npass^k and solve^k on the common tasks, k = 1..{k} (before → after):");
            for c in &p.curve {
                let _ = writeln!(
                    s,
                    "  {:>3}  pass^k {:>6}% → {:>6}%   solve^k {:>6}% → {:>6}%",
                    c.k,
                    stats::fixed1(c.pass_before),
                    stats::fixed1(c.pass_after),
                    stats::fixed1(c.solve_before),
                    stats::fixed1(c.solve_after)
                );
            }
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
                        parts.push(count_change(
                            "solved",
                            t.solved_before,
                            t.solved_after,
                            t.solve_verdict,
                            t.solved_test,
                        ));
                    }
                    if t.passed_before != t.passed_after {
                        parts.push(count_change(
                            "passed",
                            t.passed_before,
                            t.passed_after,
                            t.pass_verdict,
                            t.passed_test,
                        ));
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
        let _ = writeln!(s, "  {}", self.rule_text());
        match (&self.paired, self.rule) {
            (Some(p), Rule::Statistical { .. }) => {
                for note in self.paired_notes() {
                    let _ = writeln!(s, "  {note}");
                }
                let k = p.k;
                for a in self.aggregates.iter().filter(|a| REGRESSION_KEYS.contains(&a.key)) {
                    let d = paired_figure(p, a.key);
                    let across = across_figure(p, a.key)
                        .map_or_else(String::new, |t| format!("; across tasks p {}", stats::format_p(t.p_drop)));
                    let _ = writeln!(
                        s,
                        "  {:<10} {}% → {}% ({}{across}){}",
                        gate_label(a.key, k),
                        stats::fixed1(d.before),
                        stats::fixed1(d.after),
                        change_text(d),
                        verdict_suffix(a.verdict.unwrap_or(Verdict::NoDrop))
                    );
                }
            }
            _ => {
                let k = self.current.n_runs;
                for a in self.aggregates.iter().filter(|a| REGRESSION_KEYS.contains(&a.key)) {
                    let _ = writeln!(
                        s,
                        "  {:<10} {}{}",
                        gate_label(a.key, k),
                        percent_delta(a.before, a.after),
                        verdict_suffix(a.verdict.unwrap_or(Verdict::NoDrop))
                    );
                }
            }
        }
        let dropped: Vec<&TaskChange> = self
            .tasks
            .iter()
            .filter(|t| t.solve_verdict != Verdict::NoDrop || t.pass_verdict != Verdict::NoDrop)
            .collect();
        if !dropped.is_empty() {
            let _ = writeln!(s, "  Tasks with a lower solve or pass rate:");
            for t in dropped {
                let mut parts = Vec::new();
                if t.solve_verdict != Verdict::NoDrop {
                    parts.push(count_change("solved", t.solved_before, t.solved_after, t.solve_verdict, t.solved_test));
                }
                if t.pass_verdict != Verdict::NoDrop {
                    parts.push(count_change("passed", t.passed_before, t.passed_after, t.pass_verdict, t.passed_test));
                }
                let _ = writeln!(s, "    {}: {}", t.id, parts.join(", "));
            }
        }
        if !self.drift.is_same() {
            for line in self.drift.to_string().lines() {
                let _ = writeln!(s, "  {line}");
            }
            if self.drift.moved() {
                let _ = writeln!(s, "  (Tasks added, removed or edited are reported, not flagged.)");
            }
        }
        let (noisy_aggregates, noisy_tasks) = self.within_noise();
        let noise = match noisy_aggregates + noisy_tasks {
            0 => String::new(),
            _ => format!(" ({noisy_aggregates} aggregate and {noisy_tasks} task drops within noise)"),
        };
        if self.has_regressions() {
            // What was flagged first, then what was not: "(2 aggregate ... within
            // noise)" alone read as if the regressions themselves were noise.
            let aggregates = self.regressed_aggregates().count();
            let tasks = self.regressed_tasks().count();
            let mut found = Vec::new();
            if aggregates > 0 {
                found.push(super::counted(aggregates, "aggregate", "aggregates"));
            }
            if tasks > 0 {
                found.push(super::counted(tasks, "task", "tasks"));
            }
            let _ = writeln!(s, "  REGRESSIONS FOUND: {}{noise}", found.join(" and "));
        } else {
            let _ = writeln!(s, "  No regressions vs baseline{}.", noise);
        }
        s
    }
}

/// `REGRESSION solved 5/5 → 0/5 (p 0.0040, adjusted 0.02)`, or with `within noise`.
fn count_change(
    what: &str,
    before: Option<Fraction>,
    after: Option<Fraction>,
    v: Verdict,
    test: Option<ExactTest>,
) -> String {
    let mark = if v.is_regression() { "REGRESSION " } else { "" };
    let mut text = format!("{mark}{what} {} → {}", frac(before), frac(after));
    if let Some(t) = test {
        text.push_str(&format!(" ({})", test_text(&t)));
    }
    if v == Verdict::WithinNoise {
        text.push_str(" within noise");
    }
    text
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
            offline_judge: false,
            shard_run_ids: Vec::new(),
            aggregate: aggregate(&tasks),
            tasks,
        }
    }

    const STATISTICAL: Rule = Rule::Statistical { alpha: 0.05 };

    #[test]
    fn equal_results_have_no_regressions() {
        let r = result(&[("a", &[true, true]), ("b", &[true, false])]);
        let c = compare(&r, &r, STATISTICAL);
        assert!(!c.has_regressions());
        assert!(c.tasks.iter().all(|t| t.kind == TaskChangeKind::Unchanged));
        assert!(c.summary().contains("No regressions"));
    }

    #[test]
    fn one_run_flipping_to_unsolved_is_flagged_by_name_under_the_exact_rule() {
        let base = result(&[("a", &[true, true]), ("b", &[true, true])]);
        let cur = result(&[("a", &[true, true]), ("b", &[true, false])]);
        let c = compare(&base, &cur, Rule::Exact);
        assert!(c.has_regressions());
        let names: Vec<_> = c.regressed_tasks().map(|t| t.id.as_str()).collect();
        assert_eq!(names, ["b"]);
        assert!(c.summary().contains("b: REGRESSION solved 2/2 → 1/2"), "{}", c.summary());
        assert!(c.regressed_aggregates().any(|a| a.key == "solve_k_rate"));
    }

    #[test]
    fn one_run_flipping_is_within_noise_under_the_statistical_rule() {
        let base = result(&[("a", &[true, true]), ("b", &[true, true])]);
        let cur = result(&[("a", &[true, true]), ("b", &[true, false])]);
        let c = compare(&base, &cur, STATISTICAL);
        assert!(!c.has_regressions(), "{}", c.detailed());
        let summary = c.summary();
        assert!(summary.contains("b: solved 2/2 → 1/2 (p 0.50, adjusted 0.50) within noise"), "{summary}");
        assert!(
            summary.contains("No regressions vs baseline (2 aggregate and 1 task drops within noise)."),
            "{summary}"
        );
        assert_eq!(c.tasks[1].solve_verdict, Verdict::WithinNoise);
        // Each gated figure once, under its own name.
        for label in ["pass^2 ", "solve^2 ", "mean pass ", "mean solve "] {
            assert_eq!(summary.matches(&format!("  {label}")).count(), 1, "{label}: {summary}");
        }
        assert!(summary.contains("across tasks p 0.50)  within noise"), "{summary}");
    }

    #[test]
    fn a_broad_drop_is_a_regression_under_the_statistical_rule() {
        let solved = [true; 5];
        let failed = [false; 5];
        let ids: Vec<String> = (0..20).map(|i| format!("t{i:02}")).collect();
        let base: Vec<(&str, &[bool])> = ids.iter().map(|id| (id.as_str(), &solved[..])).collect();
        let cur: Vec<(&str, &[bool])> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| (id.as_str(), if i < 6 { &failed[..] } else { &solved[..] }))
            .collect();
        let c = compare(&result(&base), &result(&cur), STATISTICAL);
        assert!(c.has_regressions());
        let flagged: Vec<_> = c.regressed_tasks().map(|t| t.id.as_str()).collect();
        assert_eq!(flagged, ["t00", "t01", "t02", "t03", "t04", "t05"]);
        let solve_k = c.aggregates.iter().find(|a| a.key == "solve_k_rate").unwrap();
        assert_eq!(solve_k.verdict, Some(Verdict::Regression));
        let text = c.detailed();
        assert!(text.contains("solve^5    100.0% → 70.0% (-30.0pp ["), "{text}");
        assert!(text.contains("t00: REGRESSION solved 5/5 → 0/5 (p 0.0040, adjusted 0.0040)"), "{text}");
        assert!(text.contains("REGRESSIONS FOUND: 2 aggregates and 6 tasks"), "{text}");
    }

    #[test]
    fn different_k_are_compared_at_the_common_k_and_say_so() {
        let base = result(&[("a", &[true, true, true, true, true]), ("b", &[true, true, true, true, false])]);
        let cur = result(&[("a", &[true, true, true]), ("b", &[true, true, false])]);
        let c = compare(&base, &cur, STATISTICAL);
        let p = c.paired.as_ref().unwrap();
        assert_eq!((p.k, p.k_before, p.k_after), (3, 5, 3));
        // solve^3 before: (1 + C(4,3)/C(5,3))/2 = 70%; after: (1 + 0)/2 = 50%.
        assert!(c.summary().contains("solve^3    70.0% → 50.0%"), "{}", c.summary());
        assert!(c.summary().contains("different k (5 and 3)"), "{}", c.summary());
        let text = c.detailed();
        assert!(text.contains("k = 1..3 (before → after)"), "{text}");
        assert!(text.contains("    3  pass^k  100.0% →  100.0%   solve^k   70.0% →   50.0%"), "{text}");
    }

    #[test]
    fn added_and_removed_tasks_are_reported_not_flagged() {
        let base = result(&[("a", &[true]), ("old", &[true])]);
        let cur = result(&[("a", &[true]), ("old", &[true]), ("new", &[false])]);
        let c = compare(&base, &cur, Rule::Exact);
        // The new task lowers solve^k, which the exact rule counts; the task itself is not flagged.
        assert_eq!(c.regressed_tasks().count(), 0);
        assert!(c.detailed().contains("[NEW] new: solved 0/1 (not flagged)"));
        // The statistical rule compares common tasks only: nothing dropped there.
        assert!(!compare(&base, &cur, STATISTICAL).has_regressions());
        let c = compare(&cur, &base, Rule::Exact);
        assert!(!c.has_regressions(), "{}", c.detailed());
        assert!(c.detailed().contains("[REMOVED] new"));
    }

    #[test]
    fn fractions_compare_across_different_k() {
        let base = result(&[("a", &[true, true, false])]);
        let cur = result(&[("a", &[true, true, true, false, false])]);
        // 2/3 -> 3/5 is a drop even though the count rose.
        assert!(compare(&base, &cur, Rule::Exact).regressed_tasks().any(|t| t.id == "a"));
        assert_eq!(compare(&base, &cur, STATISTICAL).tasks[0].solve_verdict, Verdict::WithinNoise);
    }

    #[test]
    fn cross_provider_leaves_out_cost_and_cache() {
        let base = result(&[("a", &[true])]);
        let mut cur = base.clone();
        cur.provider = "ollama".into();
        let c = compare(&base, &cur, STATISTICAL);
        assert!(c.providers_differ);
        let cost = c.aggregates.iter().find(|a| a.key == "total_cost_usd").unwrap();
        assert!(!cost.applicable && cost.before.is_none());
    }
}
