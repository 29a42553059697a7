//! Run records -> task results -> the aggregate block, computed exactly as the
//! reference harness computes them (the same sums in the same order, the same
//! `Math.round`), so its baselines re-derive to their stored numbers.

use indexmap::IndexMap;
use serde_json::Value;

use crate::format::Tier;
use crate::format::result::{Aggregate, ResultFile, RunRecord, TaskMetrics, TaskResult, TierSummary};
use crate::jsnum::round;

fn mean(values: impl IntoIterator<Item = f64>) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for v in values {
        sum += v;
        n += 1;
    }
    if n == 0 { 0.0 } else { sum / n as f64 }
}

/// Nearest-rank percentile (`p` in 0..=100); 0 for no values.
fn percentile(values: &[u32], p: f64) -> u32 {
    if values.is_empty() {
        return 0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as isize - 1;
    sorted[rank.max(0) as usize]
}

/// One task's result over its runs. Means keep 6 decimals (cache ratio 3);
/// a run without a cached-token figure counts as 0 cached tokens, while the
/// cache ratio mean skips such runs and is null when none had one.
pub fn task_result(id: String, difficulty: Option<Tier>, category: Option<String>, runs: Vec<RunRecord>) -> TaskResult {
    let n = runs.len() as u32;
    let passed_count = runs.iter().filter(|r| r.passed).count() as u32;
    let solved_count = runs.iter().filter(|r| r.solved).count() as u32;
    let m = |f: fn(&RunRecord) -> f64| round(mean(runs.iter().map(f)), 6);
    let ratios: Vec<f64> = runs.iter().filter_map(|r| r.metrics.cache_ratio).collect();
    let metrics = TaskMetrics {
        turns: m(|r| f64::from(r.metrics.turns)),
        tool_calls: m(|r| f64::from(r.metrics.tool_calls)),
        prompt_tokens: m(|r| r.metrics.prompt_tokens as f64),
        cached_tokens: m(|r| r.metrics.cached_tokens.unwrap_or(0) as f64),
        cache_ratio: if ratios.is_empty() { None } else { Some(round(mean(ratios), 3)) },
        output_tokens: m(|r| r.metrics.output_tokens as f64),
        cost_usd: m(|r| r.metrics.cost_usd),
        loop_fires: m(|r| f64::from(r.metrics.loop_fires)),
        duration_ms: m(|r| r.metrics.duration_ms as f64),
    };
    TaskResult {
        id,
        difficulty,
        category,
        content_hash: None,
        fixture_hash: None,
        n_runs: n,
        passed_count,
        solved_count,
        pass_k: passed_count == n,
        solve_k: solved_count == n,
        flaky: solved_count > 0 && solved_count < n,
        metrics,
        runs,
    }
}

/// `part / whole` as a percentage with one decimal, computed as `(part/whole)*100`.
fn rate(part: u32, whole: u32) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    round(f64::from(part) / f64::from(whole) * 100.0, 1)
}

/// The aggregate block over all task results.
pub fn aggregate(tasks: &[TaskResult]) -> Aggregate {
    let total = tasks.len() as u32;
    if total == 0 {
        return Aggregate {
            total_tasks: 0,
            n_runs: 0,
            total_runs: 0,
            pass_k_rate: 0.0,
            solve_k_rate: 0.0,
            mean_pass_rate: 0.0,
            mean_solve_rate: 0.0,
            flaky_task_count: 0,
            mean_turns: 0.0,
            p95_turns: 0,
            mean_cache_ratio: Some(0.0),
            mean_cost_usd: 0.0,
            total_cost_usd: 0.0,
            total_loop_fires: 0,
            by_difficulty: IndexMap::new(),
        };
    }
    let count = |f: fn(&TaskResult) -> bool| tasks.iter().filter(|t| f(t)).count() as u32;
    let total_runs: u32 = tasks.iter().map(|t| t.n_runs).sum();
    let passed_cells: u32 = tasks.iter().map(|t| t.passed_count).sum();
    let solved_cells: u32 = tasks.iter().map(|t| t.solved_count).sum();
    let runs = || tasks.iter().flat_map(|t| t.runs.iter());
    let turns: Vec<u32> = runs().map(|r| r.metrics.turns).collect();
    let ratios: Vec<f64> = runs().filter_map(|r| r.metrics.cache_ratio).collect();
    let total_cost = runs().fold(0.0, |acc, r| acc + r.metrics.cost_usd);

    let mut by_difficulty: IndexMap<String, TierSummary> = IndexMap::new();
    for t in tasks {
        let tier = t.difficulty.map_or("untagged", Tier::as_str).to_string();
        let b = by_difficulty.entry(tier).or_insert(TierSummary {
            total_tasks: 0,
            solve_k_count: 0,
            solved_cells: 0,
            run_cells: 0,
            solve_k_rate: 0.0,
            mean_solve_rate: 0.0,
        });
        b.total_tasks += 1;
        b.solve_k_count += u32::from(t.solve_k);
        b.solved_cells += t.solved_count;
        b.run_cells += t.n_runs;
    }
    for b in by_difficulty.values_mut() {
        b.solve_k_rate = rate(b.solve_k_count, b.total_tasks);
        b.mean_solve_rate = rate(b.solved_cells, b.run_cells);
    }

    Aggregate {
        total_tasks: total,
        n_runs: tasks[0].n_runs,
        total_runs,
        pass_k_rate: rate(count(|t| t.pass_k), total),
        solve_k_rate: rate(count(|t| t.solve_k), total),
        mean_pass_rate: rate(passed_cells, total_runs),
        mean_solve_rate: rate(solved_cells, total_runs),
        flaky_task_count: count(|t| t.flaky),
        mean_turns: round(mean(turns.iter().map(|&t| f64::from(t))), 1),
        p95_turns: percentile(&turns, 95.0),
        mean_cache_ratio: if ratios.is_empty() { None } else { Some(round(mean(ratios), 3)) },
        mean_cost_usd: round(mean(runs().map(|r| r.metrics.cost_usd)), 6),
        total_cost_usd: round(total_cost, 6),
        total_loop_fires: runs().map(|r| r.metrics.loop_fires).sum(),
        by_difficulty,
    }
}

/// Recompute every task's counts and means and the aggregate from the runs,
/// keeping the runs and the file's identity fields as they are.
pub fn rederive(result: &ResultFile) -> ResultFile {
    let tasks: Vec<TaskResult> = result
        .tasks
        .iter()
        .map(|t| TaskResult {
            content_hash: t.content_hash.clone(),
            fixture_hash: t.fixture_hash.clone(),
            ..task_result(t.id.clone(), t.difficulty, t.category.clone(), t.runs.clone())
        })
        .collect();
    ResultFile { aggregate: aggregate(&tasks), tasks, ..result.clone() }
}

/// The differences of `result`'s stored figures from those its runs give
/// ([`rederive`] and [`differences`]), without copying the runs: they are
/// lent to the re-derivation and put back. What `report` and `bless` check
/// and what `publish` requires of a baseline.
pub fn check_figures(result: &mut ResultFile) -> Vec<FieldDiff> {
    let mut derived: Vec<TaskResult> = result
        .tasks
        .iter_mut()
        .map(|t| TaskResult {
            content_hash: t.content_hash.clone(),
            fixture_hash: t.fixture_hash.clone(),
            ..task_result(t.id.clone(), t.difficulty, t.category.clone(), std::mem::take(&mut t.runs))
        })
        .collect();
    let derived_aggregate = aggregate(&derived);
    // The runs go back to the stored result after the comparison, which
    // reads every field but them: neither side serializes its runs.
    let runs: Vec<Vec<RunRecord>> = derived.iter_mut().map(|d| std::mem::take(&mut d.runs)).collect();
    let derived = ResultFile {
        run_id: result.run_id.clone(),
        git_sha: String::new(),
        model: String::new(),
        provider: String::new(),
        interrupted: false,
        offline_judge: false,
        shard_run_ids: Vec::new(),
        shard: None,
        task_filter: None,
        tasks: derived,
        aggregate: derived_aggregate,
    };
    let diffs = differences(result, &derived);
    for (stored, runs) in result.tasks.iter_mut().zip(runs) {
        stored.runs = runs;
    }
    diffs
}

/// One field whose stored value differs from the re-derived one.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldDiff {
    /// e.g. `aggregate.by_difficulty.T3.solve_k_rate` or `tasks[move-note].solved_count`.
    pub field: String,
    pub stored: String,
    pub derived: String,
}

impl std::fmt::Display for FieldDiff {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: stored {}, re-derived {}", self.field, self.stored, self.derived)
    }
}

/// Field-for-field differences between a stored result and its re-derivation
/// (task headers, task means and the aggregate; the runs are shared).
pub fn differences(stored: &ResultFile, derived: &ResultFile) -> Vec<FieldDiff> {
    let mut out = Vec::new();
    for (s, d) in stored.tasks.iter().zip(&derived.tasks) {
        let mut s = serde_json::to_value(s).expect("task results serialize");
        let mut d = serde_json::to_value(d).expect("task results serialize");
        for v in [&mut s, &mut d] {
            v.as_object_mut().expect("a task result is an object").remove("runs");
        }
        diff_values(&format!("tasks[{}]", stored_id(&s)), &s, &d, &mut out);
    }
    let s = serde_json::to_value(&stored.aggregate).expect("aggregates serialize");
    let d = serde_json::to_value(&derived.aggregate).expect("aggregates serialize");
    diff_values("aggregate", &s, &d, &mut out);
    out
}

fn stored_id(task: &Value) -> &str {
    task.get("id").and_then(Value::as_str).unwrap_or("?")
}

fn diff_values(path: &str, a: &Value, b: &Value, out: &mut Vec<FieldDiff>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                let child = format!("{path}.{k}");
                match y.get(k) {
                    Some(w) => diff_values(&child, v, w, out),
                    None => out.push(FieldDiff { field: child, stored: v.to_string(), derived: "(absent)".into() }),
                }
            }
            for (k, w) in y {
                if !x.contains_key(k) {
                    out.push(FieldDiff {
                        field: format!("{path}.{k}"),
                        stored: "(absent)".into(),
                        derived: w.to_string(),
                    });
                }
            }
        }
        (Value::Number(x), Value::Number(y)) if x.as_f64() == y.as_f64() => {}
        _ if a == b => {}
        _ => out.push(FieldDiff { field: path.to_string(), stored: a.to_string(), derived: b.to_string() }),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::format::result::{RunMetrics, SolveDetails};

    pub(crate) fn run(passed: bool, solved: bool, turns: u32, cost: f64, cache: Option<f64>) -> RunRecord {
        RunRecord {
            id: "t".into(),
            passed,
            solved,
            response_text: String::new(),
            metrics: RunMetrics {
                turns,
                tool_calls: turns.saturating_sub(1),
                prompt_tokens: 1000,
                cached_tokens: cache.map(|c| (c * 1000.0) as u64),
                cache_ratio: cache,
                output_tokens: 50,
                cost_usd: cost,
                loop_fires: 0,
                duration_ms: 1001,
                tool_list: vec![],
            },
            errors: vec![],
            solve_details: SolveDetails {
                expected_tools_met: true,
                forbidden_tools_clean: true,
                matchers_pass: solved,
                matcher_details: vec![],
                judge_attempted: false,
                judge_available: false,
                judge_skipped: false,
                vault_assertions_pass: true,
                vault_assertion_details: vec![],
                tool_budget_ok: true,
            },
            timed_out: None,
            end_reason: None,
            transcript_path: String::new(),
        }
    }

    #[test]
    fn pass_k_solve_k_and_flaky() {
        let t = task_result(
            "a".into(),
            Some(Tier::T2),
            None,
            vec![run(true, true, 2, 0.001, None), run(true, false, 4, 0.002, None), run(true, true, 3, 0.0, None)],
        );
        assert_eq!((t.passed_count, t.solved_count), (3, 2));
        assert!(t.pass_k && !t.solve_k && t.flaky);
        assert_eq!(t.metrics.turns, 3.0);
        assert_eq!(t.metrics.cost_usd, 0.001);
        assert_eq!(t.metrics.cache_ratio, None);
        assert_eq!(t.metrics.cached_tokens, 0.0);
    }

    #[test]
    fn aggregate_rates_tiers_and_percentile() {
        let a = task_result("a".into(), Some(Tier::T1), None, vec![run(true, true, 1, 0.5, Some(0.5)); 2]);
        let b = task_result(
            "b".into(),
            Some(Tier::T3),
            None,
            vec![run(true, false, 10, 0.25, Some(0.0)), run(false, false, 3, 0.25, None)],
        );
        let c = task_result("c".into(), Some(Tier::T3), None, vec![run(true, true, 2, 0.0, Some(1.0)); 2]);
        let agg = aggregate(&[a, b, c]);
        assert_eq!(agg.total_runs, 6);
        assert_eq!(agg.pass_k_rate, 66.7);
        assert_eq!(agg.solve_k_rate, 66.7);
        assert_eq!(agg.mean_pass_rate, 83.3);
        assert_eq!(agg.mean_solve_rate, 66.7);
        assert_eq!(agg.flaky_task_count, 0);
        assert_eq!(agg.mean_turns, 3.2);
        assert_eq!(agg.p95_turns, 10);
        // The run without a cache figure is left out of the mean: (.5+.5+0+1+1)/5.
        assert_eq!(agg.mean_cache_ratio, Some(0.6));
        assert_eq!(agg.total_cost_usd, 1.5);
        assert_eq!(agg.mean_cost_usd, 0.25);
        assert_eq!(agg.by_difficulty.keys().collect::<Vec<_>>(), ["T1", "T3"]);
        let t3 = &agg.by_difficulty["T3"];
        assert_eq!((t3.total_tasks, t3.solve_k_count, t3.solved_cells, t3.run_cells), (2, 1, 2, 4));
        assert_eq!((t3.solve_k_rate, t3.mean_solve_rate), (50.0, 50.0));
    }

    #[test]
    fn cacheless_provider_has_null_cache_ratio() {
        let a = task_result("a".into(), Some(Tier::T1), None, vec![run(true, true, 1, 0.0, None)]);
        assert_eq!(aggregate(&[a]).mean_cache_ratio, None);
    }

    #[test]
    fn differences_name_the_field() {
        let a = task_result("a".into(), Some(Tier::T1), None, vec![run(true, true, 1, 0.0, None)]);
        let file = ResultFile {
            run_id: crate::format::result::RunId("2026-01-01T00:00:00.000Z".into()),
            git_sha: "abc".into(),
            model: "m".into(),
            provider: "p".into(),
            interrupted: false,
            shard: None,
            task_filter: None,
            offline_judge: false,
            shard_run_ids: Vec::new(),
            aggregate: aggregate(std::slice::from_ref(&a)),
            tasks: vec![a],
        };
        assert!(differences(&file, &rederive(&file)).is_empty());
        let mut lent = file.clone();
        assert!(check_figures(&mut lent).is_empty());
        assert_eq!(lent, file, "the runs are put back");
        let mut tampered = file.clone();
        tampered.aggregate.solve_k_rate = 50.0;
        tampered.tasks[0].solved_count = 0;
        let diffs = differences(&tampered, &rederive(&tampered));
        let fields: Vec<_> = diffs.iter().map(|d| d.field.as_str()).collect();
        assert_eq!(fields, ["tasks[a].solved_count", "aggregate.solve_k_rate"]);
        assert_eq!(check_figures(&mut tampered.clone()), diffs);
    }
}
