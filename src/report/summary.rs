//! The human summary of a result: a line per task, then pass^k and solve^k
//! with their intervals and their curve over k, the tier breakdown, flaky
//! tasks, turns, cache and cost.

use std::fmt::Write;

use crate::format::result::ResultFile;
use crate::jsnum;
use crate::stats::{self, Interval, Settings, Summary, bounds};

fn pct(x: f64) -> String {
    format!("{}%", jsnum::to_fixed(x, 1))
}

/// `report --json`: the re-derived aggregate block, with the derived
/// statistics beside its fields (never stored in a result file).
#[derive(serde::Serialize)]
pub struct ReportJson<'a> {
    #[serde(flatten)]
    pub aggregate: &'a crate::format::result::Aggregate,
    pub statistics: Option<Summary>,
    /// The tasks added, removed and edited since the model's baseline,
    /// where it has one (and the result is not that baseline).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub against_baseline: Option<AgainstBaseline>,
    /// The tasks the result ran that were edited in the suite since
    /// (`report::drift::edited_since`); absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub edited_in_suite: Vec<String>,
}

/// A result's tasks against its model's baseline.
#[derive(serde::Serialize)]
pub struct AgainstBaseline {
    /// The baseline file, as named on the command line's folder.
    pub baseline: String,
    pub tasks: crate::report::drift::Drift,
}

impl<'a> ReportJson<'a> {
    pub fn of(result: &'a ResultFile) -> ReportJson<'a> {
        ReportJson {
            aggregate: &result.aggregate,
            statistics: Summary::of(&stats::counts(result), &Settings::default()),
            against_baseline: None,
            edited_in_suite: Vec::new(),
        }
    }
}

/// Render the summary of `result` (whose figures the caller has re-derived).
pub fn render(result: &ResultFile) -> String {
    let a = &result.aggregate;
    let k = a.n_runs;
    let mut s = String::new();
    let _ = writeln!(s, "=== {} / {} ===", result.provider, result.model);
    let _ = writeln!(
        s,
        "Run:    {}  (commit {})",
        result.run_id,
        if result.git_sha.is_empty() { "unknown" } else { &result.git_sha }
    );
    let _ =
        writeln!(s, "Tasks:  {} × {} run{} = {} runs", a.total_tasks, k, if k == 1 { "" } else { "s" }, a.total_runs);
    if result.interrupted {
        let _ = writeln!(
            s,
            "Status: INTERRUPTED — not every cell ran (resume with `vaultbench run --resume {}`)",
            result.run_id
        );
    }
    if let Some(shard) = &result.shard {
        let _ = writeln!(s, "Shard:  {shard} (join the shards with `vaultbench merge`)");
    }
    if let Some(filter) = &result.task_filter {
        let _ = writeln!(s, "Filter: tasks matching `{filter}` only");
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "{:<32} {:>4} {:>5} {:>3} {:>6} {:>6} {:>8} {:>5}",
        "Task", "Tier", "Pass", "", "Solve", "Turns", "Cost($)", "Loops"
    );
    let _ = writeln!(s, "{}", "-".repeat(78));
    for t in &result.tasks {
        let tier = t.difficulty.map_or("-", |d| d.as_str());
        let flaky = if t.flaky { "~" } else { "" };
        let _ = writeln!(
            s,
            "{:<32} {:>4} {:>5} {:>3} {:>6} {:>6} {:>8} {:>5}",
            truncate(&t.id, 32),
            tier,
            format!("{}/{}", t.passed_count, t.n_runs),
            flaky,
            format!("{}/{}", t.solved_count, t.n_runs),
            jsnum::to_fixed(t.metrics.turns, 1),
            jsnum::to_fixed(t.metrics.cost_usd, 4),
            jsnum::to_string(jsnum::math_round(t.metrics.loop_fires)),
        );
    }
    let _ = writeln!(s, "{}", "-".repeat(78));
    let _ = writeln!(s, "(~ marks a flaky task: solved in some runs but not all)\n");
    let _ = writeln!(s, "pass^{k}:   {}  (mean pass rate {})", pct(a.pass_k_rate), pct(a.mean_pass_rate));
    let _ = writeln!(s, "solve^{k}:  {}  (mean solve rate {})", pct(a.solve_k_rate), pct(a.mean_solve_rate));
    let statistics = Summary::of(&stats::counts(result), &Settings::default());
    if let Some(st) = &statistics {
        write_statistics(&mut s, st);
    }
    let _ = writeln!(s, "\nsolve^{k} by tier:");
    let mut tiers: Vec<_> = a.by_difficulty.iter().collect();
    tiers.sort_by(|x, y| x.0.cmp(y.0));
    for (tier, b) in tiers {
        let interval = |f: fn(&stats::summary::TierStats) -> Interval| {
            statistics.as_ref().and_then(|st| st.by_tier.get(tier)).map_or_else(String::new, |t| bounds(&f(t)))
        };
        let _ = writeln!(
            s,
            "  {tier:<9} {:>3}/{:<3} tasks  solve^{k} {:>6} {:<14} mean {:>6} {}",
            b.solve_k_count,
            b.total_tasks,
            pct(b.solve_k_rate),
            interval(|t| t.solve_k),
            pct(b.mean_solve_rate),
            interval(|t| t.mean_solve_rate),
        );
    }
    let flaky: Vec<&str> = result.tasks.iter().filter(|t| t.flaky).map(|t| t.id.as_str()).collect();
    if flaky.is_empty() {
        let _ = writeln!(s, "\nFlaky tasks: 0");
    } else {
        let _ = writeln!(s, "\nFlaky tasks: {} ({})", flaky.len(), flaky.join(", "));
    }
    let _ = writeln!(s, "Turns:       mean {} (p95 {})", jsnum::to_string(a.mean_turns), a.p95_turns);
    let cache = a.mean_cache_ratio.map_or_else(
        || "n/a (the provider has no prompt cache)".to_string(),
        |c| format!("{}%", jsnum::to_string(jsnum::math_round(c * 100.0))),
    );
    let _ = writeln!(s, "Cache:       {cache}");
    let _ = writeln!(
        s,
        "Cost:        ${} total, ${} per run",
        jsnum::to_fixed(a.total_cost_usd, 4),
        jsnum::to_fixed(a.mean_cost_usd, 4)
    );
    let _ = writeln!(s, "Loop fires:  {}", a.total_loop_fires);
    let errored = result.tasks.iter().flat_map(|t| &t.runs).filter(|r| r.has_harness_error()).count();
    if errored > 0 {
        let _ = writeln!(
            s,
            "Harness errors: {errored} runs (see their `errors`); such a result cannot be blessed without --force"
        );
    }
    s
}

/// The intervals of the headline figures and the curve over k.
fn write_statistics(s: &mut String, st: &Summary) {
    let b = &st.bootstrap;
    let _ = writeln!(
        s,
        "\n{} intervals (bootstrap over {} tasks, their runs kept together; {} resamples, seed {:#x}):",
        b.confidence_label(),
        st.tasks,
        b.resamples,
        b.seed
    );
    let k = st.k;
    for (label, i) in [
        (format!("pass^{k}"), &st.pass_k),
        (format!("solve^{k}"), &st.solve_k),
        ("mean pass rate".to_string(), &st.mean_pass_rate),
        ("mean solve rate".to_string(), &st.mean_solve_rate),
    ] {
        let _ = writeln!(s, "  {label:<16} {:>6}%  {}", stats::fixed1(i.estimate), bounds(i));
    }
    let uneven = if st.uneven_runs { ", the fewest runs of any task" } else { "" };
    let _ = writeln!(
        s,
        "\npass^k and solve^k for k = 1..{k}{uneven} (per task C(c,k)/C(n,k), averaged; k = {k} is the figure above):"
    );
    let _ = writeln!(s, "  {:>3}  {:>7} {:<14}  {:>7}", "k", "pass^k", "", "solve^k");
    for p in &st.curve {
        let _ = writeln!(
            s,
            "  {:>3}  {:>6}% {:<14}  {:>6}% {}",
            p.k,
            stats::fixed1(p.pass.estimate),
            bounds(&p.pass),
            stats::fixed1(p.solve.estimate),
            bounds(&p.solve)
        );
    }
}

fn truncate(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(width - 1).collect();
        t.push('…');
        t
    }
}
