//! The page of one baseline: its figures with their intervals, the
//! pass^k curve, the tiers and the tasks with their runs.

use std::collections::HashMap;

use serde::Serialize;

use crate::publish::load::baselines::Baseline;
use crate::publish::model::charts::{self, LineChart, Series};
use crate::publish::model::display::{MISSING, UNKNOWN, count, number, rate};
use crate::publish::model::runs::{self, CategoryRow, FailureRow};
use crate::publish::model::table::*;
use crate::report::judge_skips::JudgeSkips;
use crate::stats::{self, Interval, Summary};

/// The page of one baseline.
#[derive(Debug, Clone, Serialize)]
pub struct BaselineView {
    pub row: Row,
    /// The baseline file, for finding its evidence beside it.
    #[serde(skip)]
    pub path: std::path::PathBuf,
    pub run_id: String,
    pub figures: Vec<Figure>,
    pub tiers: Vec<TierView>,
    pub tasks: Vec<TaskView>,
    pub flaky: Vec<String>,
    /// pass^k and solve^k for k = 1..n with intervals; empty without runs.
    pub curve: Vec<CurveRow>,
    /// How the intervals were made: `95%, bootstrap over 54 tasks, ...`.
    pub intervals: Option<String>,
    /// Runs whose judge matchers were skipped, whether or not that decided them.
    pub judge_skips: Option<JudgeSkips>,
    /// The tasks grouped by tier, in tier order.
    pub task_groups: Vec<TaskGroup>,
    /// How many unsolved runs failed on each kind of check.
    pub failures: Vec<FailureRow>,
    pub unsolved: usize,
    pub categories: Vec<CategoryRow>,
    /// pass^k and solve^k over k, with the curve table as its text.
    pub curve_chart: Option<LineChart>,
    /// Runs with a transcript page.
    pub transcripts: usize,
    /// Why the evidence archive could not be read, when it could not.
    pub evidence_problem: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TaskGroup {
    pub tier: String,
    /// `tasks-t1`.
    pub anchor: String,
    pub tasks: Vec<TaskView>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CurveRow {
    pub k: u32,
    pub pass: String,
    pub solve: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    pub label: &'static str,
    pub value: String,
    /// `[44.4, 70.4]`, for the figures with an interval.
    pub interval: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TierView {
    pub tier: String,
    pub tasks: String,
    pub solve_k: String,
    pub solve_k_rate: String,
    pub solved_cells: String,
    pub mean_solve_rate: String,
    /// `[27.6, 65.5]`, or empty.
    pub solve_k_interval: String,
    pub mean_solve_interval: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct TaskView {
    pub id: String,
    pub tier: String,
    pub category: String,
    /// `solved/k`.
    pub solved: String,
    pub passed: String,
    /// One entry per run: the first `solved_count` are solved (the order of
    /// runs is not kept, only the count).
    pub cells: Vec<bool>,
    pub solve_k: bool,
    pub pass_k: bool,
    pub flaky: bool,
    pub turns: String,
    pub tool_calls: String,
    pub cost_usd: String,
    /// The task's page (logical path).
    pub page: Option<String>,
    /// One line on why its unsolved runs failed.
    pub failed_on: String,
}

/// Ordering of tiers: T1..T4, then anything else by name.
pub fn tier_key(t: &str) -> (usize, &str) {
    (TIERS.iter().position(|x| *x == t).unwrap_or(TIERS.len()), t)
}

pub fn baseline_view(
    b: &Baseline,
    row: &Row,
    summary: Option<&Summary>,
    below: &mut runs::BaselineRuns,
) -> BaselineView {
    let h = &b.headline;
    let a = &h.aggregate;
    let bounds = |f: fn(&Summary) -> &Interval| summary.map(|s| stats::bounds(f(s)));
    let plain = |label, value| Figure { label, value, interval: None };
    let figures = vec![
        Figure { label: "pass^k", value: rate(a.pass_k_rate), interval: bounds(|s| &s.pass_k) },
        Figure { label: "solve^k", value: rate(a.solve_k_rate), interval: bounds(|s| &s.solve_k) },
        Figure { label: "Mean pass rate", value: rate(a.mean_pass_rate), interval: bounds(|s| &s.mean_pass_rate) },
        Figure { label: "Mean solve rate", value: rate(a.mean_solve_rate), interval: bounds(|s| &s.mean_solve_rate) },
        plain("Runs", count(a.total_runs)),
        plain("Flaky tasks", count(a.flaky_task_count)),
        plain("Mean turns", number(a.mean_turns, 1)),
        plain("p95 turns", number(a.p95_turns, 0)),
        plain("Mean cache ratio", number(a.mean_cache_ratio, 3)),
        plain("Mean cost per run (USD)", number(a.mean_cost_usd, 6)),
        plain("Total cost (USD)", number(a.total_cost_usd, 4)),
        plain("Loop-detector fires", count(a.total_loop_fires)),
    ];
    let tier_bounds = |tier: &str, f: fn(&stats::summary::TierStats) -> &Interval| {
        summary.and_then(|s| s.by_tier.get(tier)).map_or_else(String::new, |t| stats::bounds(f(t)))
    };
    let mut tiers: Vec<TierView> = a
        .by_difficulty
        .iter()
        .map(|(tier, t)| TierView {
            tier: tier.clone(),
            tasks: count(t.total_tasks),
            solve_k: count(t.solve_k_count),
            solve_k_rate: rate(t.solve_k_rate),
            solved_cells: match (t.solved_cells, t.run_cells) {
                (Some(s), Some(r)) => format!("{s}/{r}"),
                _ => MISSING.into(),
            },
            mean_solve_rate: rate(t.mean_solve_rate),
            solve_k_interval: tier_bounds(tier, |t| &t.solve_k),
            mean_solve_interval: tier_bounds(tier, |t| &t.mean_solve_rate),
        })
        .collect();
    tiers.sort_by(|x, y| tier_key(&x.tier).cmp(&tier_key(&y.tier)));
    let mut tasks: Vec<TaskView> = h
        .tasks
        .iter()
        .map(|t| {
            let k = t.n_runs.unwrap_or(0);
            let solved = t.solved_count.unwrap_or(0);
            TaskView {
                id: t.id.clone().unwrap_or_else(|| UNKNOWN.into()),
                tier: t.difficulty.clone().unwrap_or_else(|| MISSING.into()),
                category: t.category.clone().unwrap_or_else(|| MISSING.into()),
                solved: format!("{solved}/{k}"),
                passed: format!("{}/{k}", t.passed_count.unwrap_or(0)),
                // Capped: a malformed count must not make a huge page.
                cells: (0..k.min(100)).map(|i| i < solved).collect(),
                solve_k: t.solve_k.unwrap_or(false),
                pass_k: t.pass_k.unwrap_or(false),
                flaky: t.flaky.unwrap_or(false),
                turns: number(t.metrics.turns, 1),
                tool_calls: number(t.metrics.tool_calls, 1),
                cost_usd: number(t.metrics.cost_usd, 6),
                page: t.id.as_ref().and_then(|id| below.pages.get(id).cloned()),
                failed_on: String::new(),
            }
        })
        .collect();
    tasks.sort_by(|x, y| tier_key(&x.tier).cmp(&tier_key(&y.tier)).then_with(|| x.id.cmp(&y.id)));
    let flaky = tasks.iter().filter(|t| t.flaky).map(|t| t.id.clone()).collect();
    let curve = summary
        .map(|s| {
            s.curve
                .iter()
                .map(|p| CurveRow { k: p.k, pass: stats::percent(&p.pass), solve: stats::percent(&p.solve) })
                .collect()
        })
        .unwrap_or_default();
    let intervals = summary.map(|s| {
        format!(
            "{} intervals from a bootstrap over the {} tasks (a task's runs stay together), {} resamples, fixed seed",
            s.bootstrap.confidence_label(),
            s.tasks,
            s.bootstrap.resamples
        )
    });
    // Why each task's unsolved runs failed, from its page's runs.
    let why: HashMap<&str, String> = below
        .tasks
        .iter()
        .map(|p| {
            let mut kinds: Vec<&str> =
                p.runs.iter().flat_map(|r| r.failed_on.split(", ")).filter(|k| !k.is_empty()).collect();
            kinds.sort_by_key(|k| runs::FAILURE_KINDS.iter().position(|x| x == k));
            kinds.dedup();
            (p.id.as_str(), kinds.join(", "))
        })
        .collect();
    for t in &mut tasks {
        t.failed_on = why.get(t.id.as_str()).cloned().unwrap_or_default();
    }
    let mut task_groups: Vec<TaskGroup> = Vec::new();
    for t in tasks.iter().cloned() {
        match task_groups.last_mut() {
            Some(g) if g.tier == t.tier => g.tasks.push(t),
            _ => task_groups.push(TaskGroup { anchor: tier_anchor(&t.tier), tier: t.tier.clone(), tasks: vec![t] }),
        }
    }
    let curve_chart = summary.filter(|s| !s.curve.is_empty()).map(|s| {
        let line = |name: &str, f: fn(&stats::summary::CurvePoint) -> f64| Series {
            name: name.into(),
            points: s.curve.iter().map(|p| (f64::from(p.k), f(p))).collect(),
            intervals: Vec::new(),
        };
        charts::curve(&[line("pass^k", |p| p.pass.estimate), line("solve^k", |p| p.solve.estimate)], "k")
    });
    let transcripts = below.tasks.iter().map(|t| t.transcripts.len()).sum();
    let skips = judge_skips(h);
    BaselineView {
        path: b.path.clone(),
        row: row.clone(),
        run_id: h.run_id.clone().unwrap_or_else(|| MISSING.into()),
        figures,
        tiers,
        tasks,
        flaky,
        curve,
        intervals,
        judge_skips: (skips.runs > 0).then_some(skips),
        task_groups,
        failures: std::mem::take(&mut below.failures),
        unsolved: below.unsolved,
        categories: std::mem::take(&mut below.categories),
        curve_chart,
        transcripts,
        evidence_problem: None,
    }
}
