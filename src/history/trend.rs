//! How each model moved across its blessings: its figures at each blessing
//! with their 95% intervals (the bootstrap over tasks the results page
//! uses, `stats::Summary`), each step between consecutive blessings judged
//! by `compare` and its gate (a significant change, within noise, or no
//! change), and each task's solved counts across blessings, flagged where
//! a stable task (k of k) became flaky or failing, or the reverse, with the
//! per-task exact test `compare` reports.
//!
//! A task whose content hash changed between two blessings (its definition,
//! fixture or setup files were edited: `report::drift`) is shown as "task
//! changed", never as a move of the model, and is left out of that step's
//! comparison; a task without a hash on either side is "definition
//! unknown", never guessed. It computes; it reads nothing and prints nothing.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;
use serde::Serialize;

use super::{Blessing, Read, Versions};
use crate::format::result::{ResultFile, TaskResult};
use crate::report::aggregate;
use crate::report::compare::{self, Comparison, TaskChange};
use crate::report::drift::task_drift;
use crate::stats::{self, Interval, Rule, Settings, Summary, TaskCounts, Verdict};

/// The history of every baseline, with its notes.
#[derive(Debug, Clone, Default, Serialize)]
pub struct History {
    /// The level the steps were judged at.
    pub alpha: f64,
    pub models: Vec<ModelHistory>,
    /// What could not be read, and why (no repository, a shallow clone,
    /// versions that do not read): said wherever the history is shown.
    pub notes: Vec<String>,
}

/// One model's blessings, oldest first, and how it moved between them.
#[derive(Debug, Clone, Serialize)]
pub struct ModelHistory {
    pub provider: String,
    pub model: String,
    /// Its baseline file now; `None` when it is no longer a baseline.
    pub file: Option<String>,
    /// Every name its file had, oldest first.
    pub files: Vec<String>,
    pub blessings: Vec<BlessingFigures>,
    /// `steps[i]` goes from blessing i to blessing i + 1.
    pub steps: Vec<Step>,
    /// Every task any blessing ran, by id.
    pub tasks: Vec<TaskTrack>,
}

/// A blessing and its figures.
#[derive(Debug, Clone, Serialize)]
pub struct BlessingFigures {
    #[serde(flatten)]
    pub blessing: Blessing,
    /// The runs per task the figures are at (the fewest of any task).
    pub k: u32,
    pub tasks: usize,
    /// `None` without a task with runs.
    pub figures: Option<Figures>,
}

/// pass^k, solve^k and the mean rates, each with its 95% interval.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Figures {
    pub pass_k: Interval,
    pub solve_k: Interval,
    pub mean_pass_rate: Interval,
    pub mean_solve_rate: Interval,
}

/// What a step between two blessings amounts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepVerdict {
    /// The gate finds a move the data supports, up or down.
    SignificantChange,
    /// Figures or tasks moved, by less than the data supports.
    WithinNoise,
    /// Nothing the gate looks at moved.
    NoChange,
    /// No task in common (with the same definition): nothing to compare.
    NotComparable,
}

impl StepVerdict {
    pub fn label(self) -> &'static str {
        match self {
            StepVerdict::SignificantChange => "significant change",
            StepVerdict::WithinNoise => "within noise",
            StepVerdict::NoChange => "no change",
            StepVerdict::NotComparable => "not comparable",
        }
    }
}

/// How one figure or task moved in a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Movement {
    SignificantRise,
    SignificantDrop,
    /// It moved, by less than the data supports.
    WithinNoise,
    NoChange,
}

impl Movement {
    pub fn label(self) -> &'static str {
        match self {
            Movement::SignificantRise => "significant rise",
            Movement::SignificantDrop => "significant drop",
            Movement::WithinNoise => "within noise",
            Movement::NoChange => "no change",
        }
    }

    pub fn is_significant(self) -> bool {
        matches!(self, Movement::SignificantRise | Movement::SignificantDrop)
    }

    /// The gate's verdicts on the drop (comparing before with after) and on
    /// the rise (after with before, the same comparison turned round).
    fn of(drop: Verdict, rise: Verdict) -> Movement {
        match (drop, rise) {
            (Verdict::Regression, _) => Movement::SignificantDrop,
            (_, Verdict::Regression) => Movement::SignificantRise,
            (Verdict::WithinNoise, _) | (_, Verdict::WithinNoise) => Movement::WithinNoise,
            _ => Movement::NoChange,
        }
    }
}

/// A step between two consecutive blessings.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// Indexes of the two blessings.
    pub from: usize,
    pub to: usize,
    pub verdict: StepVerdict,
    /// The k the figures were compared at, and the tasks compared (both
    /// blessings ran them, with the same or an unknown definition).
    pub k: Option<u32>,
    pub common_tasks: usize,
    /// pass^k, solve^k and the mean rates on those tasks, with the paired
    /// difference; empty when not comparable.
    pub figures: Vec<FigureMove>,
    /// Tasks whose solved or passed count moved by more than noise, either
    /// way (the gate's per-task verdict).
    pub significant_tasks: Vec<String>,
    /// Tasks whose definition changed (left out of the comparison).
    pub changed: Vec<String>,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// Tasks without a content hash on a side: compared, though it cannot
    /// be told whether they were edited.
    pub unknown: Vec<String>,
}

/// One figure across a step.
#[derive(Debug, Clone, Serialize)]
pub struct FigureMove {
    /// `solve_k_rate`, as in the aggregate block.
    pub key: &'static str,
    /// `solve^5`, `mean solve rate`.
    pub label: String,
    #[serde(serialize_with = "one_decimal")]
    pub before: f64,
    #[serde(serialize_with = "one_decimal")]
    pub after: f64,
    /// After - before in points, with its paired bootstrap interval.
    pub change: Interval,
    pub movement: Movement,
}

fn one_decimal<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(stats::round(*x, 1))
}

/// One task's solved counts across the blessings.
#[derive(Debug, Clone, Serialize)]
pub struct TaskTrack {
    pub id: String,
    /// One per blessing; `None` where the blessing did not run it.
    pub cells: Vec<Option<Cell>>,
    pub flags: Vec<TaskFlag>,
}

/// A task at one blessing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Cell {
    pub solved: u32,
    pub runs: u32,
    pub state: TaskState,
    /// Its definition against the blessing before.
    pub definition: Definition,
}

/// Where a task stands over its k runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// Solved in every run (k of k).
    Stable,
    /// Solved in some runs, not all.
    Flaky,
    /// Solved in none.
    Failing,
}

impl TaskState {
    fn of(solved: u32, runs: u32) -> TaskState {
        match solved {
            s if runs > 0 && s >= runs => TaskState::Stable,
            0 => TaskState::Failing,
            _ => TaskState::Flaky,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            TaskState::Stable => "stable",
            TaskState::Flaky => "flaky",
            TaskState::Failing => "failing",
        }
    }
}

/// A task's definition at a blessing, against the blessing before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Definition {
    /// Not run by the blessing before (or the first blessing).
    New,
    Same,
    /// Its content hash changed: the task was edited.
    Changed,
    /// No content hash on one side: it cannot be told.
    Unknown,
}

/// A move worth a flag, at a step.
#[derive(Debug, Clone, Serialize)]
pub struct TaskFlag {
    /// The blessing it happened at (the step's `to`).
    pub at: usize,
    pub kind: FlagKind,
    pub from: TaskState,
    pub to: TaskState,
    /// The one-sided Fisher exact test of the solved counts in the
    /// direction of the move, and its value after the Benjamini-Hochberg
    /// correction over the step's tasks (`compare`'s per-task test); `None`
    /// for a changed task.
    pub p: Option<f64>,
    pub p_adjusted: Option<f64>,
    /// The gate's verdict: more than noise.
    pub significant: bool,
    /// The task has no content hash on a side: an edited task cannot be ruled out.
    pub definition_unknown: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FlagKind {
    /// Stable became flaky or failing.
    Drifted,
    /// Flaky or failing became stable.
    Recovered,
    /// Its definition changed: not a move of the model.
    TaskChanged,
}

impl TaskFlag {
    /// `stable → flaky`, `task changed`.
    pub fn describe(&self) -> String {
        match self.kind {
            FlagKind::TaskChanged => "task changed".into(),
            _ => format!("{} → {}", self.from.label(), self.to.label()),
        }
    }

    /// `more than noise`, `within noise`, `not a model change`.
    pub fn verdict(&self) -> &'static str {
        match (self.kind, self.significant) {
            (FlagKind::TaskChanged, _) => "not a model change",
            (_, true) => "more than noise",
            (_, false) => "within noise",
        }
    }
}

/// The figures, steps and task tracks of every model read, judged at the default level.
pub fn analyse(read: Read) -> History {
    analyse_at(read, stats::DEFAULT_ALPHA)
}

/// [`analyse`] at level `alpha`; models in parallel.
pub fn analyse_at(read: Read, alpha: f64) -> History {
    let rule = Rule::Statistical { alpha };
    let models = read.models.into_par_iter().map(|v| model(v, rule)).collect();
    History { alpha, models, notes: read.notes }
}

fn model(v: Versions, rule: Rule) -> ModelHistory {
    let settings = Settings::default();
    let results: Vec<&ResultFile> = v.blessings.iter().map(|b| b.result.as_ref()).collect();
    let steps: Vec<(Step, Option<(Comparison, Comparison)>)> =
        results.windows(2).enumerate().map(|(i, pair)| step(i, pair[0], pair[1], rule)).collect();
    let tasks = tracks(&results, &steps);
    let blessings = v
        .blessings
        .into_iter()
        .map(|blessing| {
            let counts: Vec<TaskCounts> = stats::counts(&blessing.result);
            let summary = Summary::of(&counts, &settings);
            BlessingFigures {
                k: summary.as_ref().map_or(0, |s| s.k),
                tasks: summary.as_ref().map_or(0, |s| s.tasks),
                figures: summary.map(|s| Figures {
                    pass_k: s.pass_k,
                    solve_k: s.solve_k,
                    mean_pass_rate: s.mean_pass_rate,
                    mean_solve_rate: s.mean_solve_rate,
                }),
                blessing,
            }
        })
        .collect();
    ModelHistory {
        provider: v.provider,
        model: v.model,
        file: v.file,
        files: v.files,
        blessings,
        steps: steps.into_iter().map(|(s, _)| s).collect(),
        tasks,
    }
}

/// `result` without the tasks in `left_out`, its aggregate made again.
fn without(result: &ResultFile, left_out: &[String]) -> ResultFile {
    let tasks: Vec<TaskResult> = result.tasks.iter().filter(|t| !left_out.contains(&t.id)).cloned().collect();
    ResultFile { aggregate: aggregate::aggregate(&tasks), tasks, ..result.clone() }
}

/// The step from blessing `i` (`before`) to `i + 1` (`after`), with the
/// two comparisons (the drop's and the rise's) behind it when the
/// blessings have tasks in common.
fn step(i: usize, before: &ResultFile, after: &ResultFile, rule: Rule) -> (Step, Option<(Comparison, Comparison)>) {
    let drift = task_drift(before, after);
    // Edited tasks measure something else now: a change of theirs is not the model's.
    let (before_same, after_same) = (without(before, &drift.changed), without(after, &drift.changed));
    let down = compare::compare(&before_same, &after_same, rule);
    let up = compare::compare(&after_same, &before_same, rule);
    let mut step = Step {
        from: i,
        to: i + 1,
        verdict: StepVerdict::NotComparable,
        k: None,
        common_tasks: 0,
        figures: Vec::new(),
        significant_tasks: Vec::new(),
        changed: drift.changed,
        added: drift.added,
        removed: drift.removed,
        unknown: drift.unknown,
    };
    let Some(paired) = &down.paired else { return (step, None) };
    step.k = Some(paired.k);
    step.common_tasks = paired.common_tasks;
    let verdict_of = |c: &Comparison, key: &str| {
        c.aggregates.iter().find(|a| a.key == key).and_then(|a| a.verdict).unwrap_or(Verdict::NoDrop)
    };
    let k = paired.k;
    for (key, label, d) in [
        ("pass_k_rate", format!("pass^{k}"), &paired.pass_k),
        ("solve_k_rate", format!("solve^{k}"), &paired.solve_k),
        ("mean_pass_rate", "mean pass rate".to_string(), &paired.mean_pass_rate),
        ("mean_solve_rate", "mean solve rate".to_string(), &paired.mean_solve_rate),
    ] {
        step.figures.push(FigureMove {
            key,
            label,
            before: d.before,
            after: d.after,
            change: d.change,
            movement: Movement::of(verdict_of(&down, key), verdict_of(&up, key)),
        });
    }
    let mut significant: Vec<String> =
        down.regressed_tasks().chain(up.regressed_tasks()).map(|t| t.id.clone()).collect();
    significant.sort();
    significant.dedup();
    step.significant_tasks = significant;
    let task_moves =
        down.tasks.iter().filter(|t| t.solve_verdict != Verdict::NoDrop || t.pass_verdict != Verdict::NoDrop);
    let rises = up.tasks.iter().filter(|t| t.solve_verdict != Verdict::NoDrop || t.pass_verdict != Verdict::NoDrop);
    step.verdict = if down.has_regressions() || up.has_regressions() {
        StepVerdict::SignificantChange
    } else if step.figures.iter().any(|f| f.movement != Movement::NoChange) || task_moves.count() + rises.count() > 0 {
        StepVerdict::WithinNoise
    } else {
        StepVerdict::NoChange
    };
    (step, Some((down, up)))
}

/// Each task's cells across `results` and its flags at each step.
fn tracks(results: &[&ResultFile], steps: &[(Step, Option<(Comparison, Comparison)>)]) -> Vec<TaskTrack> {
    let ids: BTreeSet<&str> = results.iter().flat_map(|r| r.tasks.iter().map(|t| t.id.as_str())).collect();
    let by_id: Vec<BTreeMap<&str, &TaskResult>> =
        results.iter().map(|r| r.tasks.iter().map(|t| (t.id.as_str(), t)).collect()).collect();
    ids.into_iter()
        .map(|id| {
            let mut cells: Vec<Option<Cell>> = Vec::with_capacity(results.len());
            let mut flags = Vec::new();
            for (i, tasks) in by_id.iter().enumerate() {
                let Some(t) = tasks.get(id) else {
                    cells.push(None);
                    continue;
                };
                let c = stats::counts_of(t);
                let state = TaskState::of(c.solved, c.runs);
                let before = i.checked_sub(1).and_then(|p| Some((by_id[p].get(id)?, cells[p]?)));
                let definition = match before {
                    None => Definition::New,
                    Some((b, _)) => match (&b.content_hash, &t.content_hash) {
                        (Some(x), Some(y)) if x == y => Definition::Same,
                        (Some(_), Some(_)) => Definition::Changed,
                        _ => Definition::Unknown,
                    },
                };
                cells.push(Some(Cell { solved: c.solved, runs: c.runs, state, definition }));
                let Some((_, was)) = before else { continue };
                if definition == Definition::Changed {
                    flags.push(TaskFlag {
                        at: i,
                        kind: FlagKind::TaskChanged,
                        from: was.state,
                        to: state,
                        p: None,
                        p_adjusted: None,
                        significant: false,
                        definition_unknown: false,
                    });
                    continue;
                }
                let kind = match (was.state, state) {
                    (TaskState::Stable, TaskState::Flaky | TaskState::Failing) => FlagKind::Drifted,
                    (TaskState::Flaky | TaskState::Failing, TaskState::Stable) => FlagKind::Recovered,
                    _ => continue,
                };
                // A drop is tested by the comparison of before with after; a
                // rise by the same comparison turned round.
                let test = steps[i - 1].1.as_ref().and_then(|(down, up)| {
                    let c = if kind == FlagKind::Drifted { down } else { up };
                    c.tasks.iter().find(|t: &&TaskChange| t.id == id)
                });
                let exact = test.and_then(|t| t.solved_test);
                flags.push(TaskFlag {
                    at: i,
                    kind,
                    from: was.state,
                    to: state,
                    p: exact.map(|e| e.p_drop),
                    p_adjusted: exact.and_then(|e| e.p_drop_adjusted),
                    significant: test.is_some_and(|t| t.solve_verdict.is_regression()),
                    definition_unknown: definition == Definition::Unknown,
                });
            }
            TaskTrack { id: id.to_string(), cells, flags }
        })
        .collect()
}

impl ModelHistory {
    /// `provider / model`.
    pub fn name(&self) -> String {
        format!("{} / {}", self.provider, self.model)
    }

    /// The step to the latest blessing, if there are two.
    pub fn last_step(&self) -> Option<&Step> {
        self.steps.last()
    }

    /// The flags raised at blessing `at`, with their tasks.
    pub fn flags_at(&self, at: usize) -> impl Iterator<Item = (&TaskTrack, &TaskFlag)> {
        self.tasks.iter().flat_map(move |t| t.flags.iter().filter(move |f| f.at == at).map(move |f| (t, f)))
    }
}

impl Step {
    pub fn figure(&self, key: &str) -> Option<&FigureMove> {
        self.figures.iter().find(|f| f.key == key)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::format::Tier;
    use crate::format::result::RunId;
    use crate::report::aggregate::{task_result, tests::run};

    /// A task: id, content hash, solved runs of k.
    type T<'a> = (&'a str, Option<&'a str>, u32, u32);

    fn result(run_id: &str, tasks: &[T]) -> ResultFile {
        let tasks: Vec<TaskResult> = tasks
            .iter()
            .map(|&(id, hash, solved, k)| {
                let runs = (0..k).map(|i| run(true, i < solved, 2, 0.001, None)).collect();
                TaskResult {
                    content_hash: hash.map(str::to_string),
                    ..task_result(id.to_string(), Some(Tier::T2), None, runs)
                }
            })
            .collect();
        ResultFile {
            run_id: RunId(run_id.into()),
            git_sha: "abc1234".into(),
            model: "m".into(),
            provider: "p".into(),
            interrupted: false,
            shard: None,
            task_filter: None,
            offline_judge: false,
            aggregate: aggregate::aggregate(&tasks),
            tasks,
        }
    }

    fn versions(results: Vec<ResultFile>) -> Read {
        let blessings = results
            .into_iter()
            .enumerate()
            .map(|(i, r)| Blessing {
                commit: Some(format!("{i:040}")),
                date: Some(format!("2026-0{}-01T00:00:00Z", i + 1)),
                file: "p-m.json".into(),
                evidence: None,
                run_id: r.run_id.0.clone(),
                git_sha: r.git_sha.clone(),
                result: Arc::new(r),
            })
            .collect();
        let v = Versions {
            provider: "p".into(),
            model: "m".into(),
            file: Some("p-m.json".into()),
            files: vec!["p-m.json".into()],
            blessings,
        };
        Read { models: vec![v], notes: vec![] }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// Ten tasks stable throughout, one that slips from 5/5 to 1/5, one
    /// edited (its hash changes) as it goes from 5/5 to 0/5, one flaky.
    fn three_blessings() -> History {
        let stable: Vec<String> = (1..=10).map(|i| format!("s{i:02}")).collect();
        let with = |extra: &[T<'static>]| -> Vec<(String, Option<String>, u32, u32)> {
            stable
                .iter()
                .map(|id| (id.clone(), Some(format!("h-{id}")), 5, 5))
                .chain(extra.iter().map(|&(id, h, s, k)| (id.to_string(), h.map(str::to_string), s, k)))
                .collect()
        };
        let make = |run_id: &str, extra: &[T<'static>]| {
            let owned = with(extra);
            let tasks: Vec<T> = owned.iter().map(|(id, h, s, k)| (id.as_str(), h.as_deref(), *s, *k)).collect();
            result(run_id, &tasks)
        };
        let one = make(
            "2026-01-01T00:00:00.000Z",
            &[("drift", Some("hd"), 5, 5), ("edited", Some("he1"), 5, 5), ("flaky", Some("hf"), 2, 5)],
        );
        let two = make(
            "2026-02-01T00:00:00.000Z",
            &[("drift", Some("hd"), 5, 5), ("edited", Some("he1"), 5, 5), ("flaky", Some("hf"), 3, 5)],
        );
        let three = make(
            "2026-03-01T00:00:00.000Z",
            &[("drift", Some("hd"), 1, 5), ("edited", Some("he2"), 0, 5), ("flaky", Some("hf"), 3, 5)],
        );
        analyse(versions(vec![one, two, three]))
    }

    #[test]
    fn a_stable_task_that_slips_is_flagged_with_its_exact_test_computed_by_hand() {
        let h = three_blessings();
        let m = &h.models[0];
        let drift = m.tasks.iter().find(|t| t.id == "drift").unwrap();
        assert_eq!(drift.flags.len(), 1, "{drift:?}");
        let f = &drift.flags[0];
        assert_eq!((f.at, f.kind, f.from, f.to), (2, FlagKind::Drifted, TaskState::Stable, TaskState::Flaky));
        // 5/5 then 1/5: 6 solved runs of 10; the table with 1 after has
        // probability C(5,1)C(5,5)/C(10,6) = 5/210, and none has fewer.
        assert!(close(f.p.unwrap(), 5.0 / 210.0), "{f:?}");
        // Its family (the informative tables of the step: drift, and flaky's
        // 3/5 vs 3/5 with p = P(X <= 3) = 155/210; the edited task is left
        // out): Benjamini-Hochberg gives min(2 * 5/210, 155/210) = 10/210.
        assert!(close(f.p_adjusted.unwrap(), 10.0 / 210.0), "{f:?}");
        assert!(f.significant && f.verdict() == "more than noise");
        assert_eq!(m.steps[1].verdict, StepVerdict::SignificantChange);
        assert_eq!(m.steps[1].significant_tasks, ["drift"]);
        // The cells: 5/5, 5/5, 1/5.
        let strip: Vec<(u32, u32)> = drift.cells.iter().map(|c| c.map(|c| (c.solved, c.runs)).unwrap()).collect();
        assert_eq!(strip, [(5, 5), (5, 5), (1, 5)]);
    }

    #[test]
    fn an_edited_task_is_a_task_change_not_a_model_change() {
        let h = three_blessings();
        let m = &h.models[0];
        let edited = m.tasks.iter().find(|t| t.id == "edited").unwrap();
        assert_eq!(edited.flags.len(), 1);
        assert_eq!(edited.flags[0].kind, FlagKind::TaskChanged);
        assert_eq!(edited.flags[0].verdict(), "not a model change");
        assert_eq!(edited.cells[2].unwrap().definition, Definition::Changed);
        assert_eq!(m.steps[1].changed, ["edited"]);
        // Left out of the comparison: 12 common tasks, not 13.
        assert_eq!(m.steps[1].common_tasks, 12);
        // A flaky task moving 2/5 -> 3/5 raises no flag; the first step is within noise.
        assert!(m.tasks.iter().find(|t| t.id == "flaky").unwrap().flags.is_empty());
        assert_eq!(m.steps[0].verdict, StepVerdict::WithinNoise);
        let solve = m.steps[0].figure("mean_solve_rate").unwrap();
        // 50 + 5 + 5 + 2 = 62 of 65 solved runs on the 13 tasks, then 63.
        assert!(close(solve.before, 62.0 / 65.0 * 100.0) && close(solve.after, 63.0 / 65.0 * 100.0), "{solve:?}");
        assert_eq!(solve.movement, Movement::WithinNoise);
    }

    #[test]
    fn each_blessing_has_its_figures_computed_by_hand() {
        let h = three_blessings();
        let b = &h.models[0].blessings;
        // solve^5: 12 of 13 tasks solved 5/5 at the first two blessings, 10 of 13 at the third.
        assert!(close(b[0].figures.unwrap().solve_k.estimate, 12.0 / 13.0 * 100.0));
        assert!(close(b[2].figures.unwrap().solve_k.estimate, 10.0 / 13.0 * 100.0));
        assert!(close(b[2].figures.unwrap().mean_solve_rate.estimate, 54.0 / 65.0 * 100.0));
        let i = b[2].figures.unwrap().solve_k;
        assert!(i.low < i.estimate && i.estimate < i.high && i.high <= 100.0, "{i:?}");
        assert_eq!((b[0].k, b[0].tasks), (5, 13));
    }

    #[test]
    fn a_recovery_is_tested_in_its_own_direction_and_hashless_tasks_are_unknown() {
        let ten: Vec<String> = (0..10).map(|i| format!("t{i}")).collect();
        let mut before: Vec<T> = ten.iter().map(|id| (id.as_str(), None, 3, 3)).collect();
        let mut after = before.clone();
        before.push(("back", None, 0, 3));
        after.push(("back", None, 3, 3));
        let h = analyse(versions(vec![
            result("2026-01-01T00:00:00.000Z", &before),
            result("2026-02-01T00:00:00.000Z", &after),
        ]));
        let back = h.models[0].tasks.iter().find(|t| t.id == "back").unwrap();
        let f = &back.flags[0];
        assert_eq!((f.kind, f.from, f.to), (FlagKind::Recovered, TaskState::Failing, TaskState::Stable));
        // 0/3 then 3/3: the table is the most extreme of its margins, C(3,3)C(3,0)/C(6,3) = 1/20.
        assert!(close(f.p.unwrap(), 1.0 / 20.0), "{f:?}");
        assert!(f.definition_unknown);
        // Without hashes nothing is called changed: every common task is unknown.
        assert_eq!(h.models[0].steps[0].unknown.len(), 11);
        assert!(h.models[0].steps[0].changed.is_empty());
        assert!(back.cells[1].unwrap().definition == Definition::Unknown);
    }

    #[test]
    fn the_same_result_twice_is_no_change_and_no_task_in_common_is_not_comparable() {
        let r = result("2026-01-01T00:00:00.000Z", &[("a", Some("h"), 2, 3), ("b", Some("i"), 3, 3)]);
        let other = result("2026-02-01T00:00:00.000Z", &[("c", Some("j"), 2, 3)]);
        let h = analyse(versions(vec![r.clone(), r, other]));
        let steps = &h.models[0].steps;
        assert_eq!(steps[0].verdict, StepVerdict::NoChange);
        assert_eq!(steps[1].verdict, StepVerdict::NotComparable);
        assert!(steps[1].figures.is_empty());
        assert_eq!((steps[1].added.as_slice(), steps[1].removed.len()), (&["c".to_string()][..], 2));
    }
}
