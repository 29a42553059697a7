//! How each model moved across its blessings: its figures at each blessing
//! with their 95% intervals (`version`), each step between consecutive
//! blessings judged by `compare` and its gate, both ways (a significant
//! change, within noise, or no change), and each task's solved counts
//! across blessings, flagged where a stable task (k of k) became flaky or
//! failing, or the reverse, with the per-task exact test `compare` reports.
//!
//! A task whose content hash changed between two blessings (its definition,
//! fixture or setup files were edited: `report::drift`) is shown as "task
//! changed", never as a move of the model, and is left out of that step's
//! comparison; a task without a hash on either side is "definition
//! unknown", never guessed. A step is judged once per pair of versions
//! (`cache`). It reads nothing itself but the versions a step needs that
//! the read left unparsed, and prints nothing.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::Deref;
use std::sync::Arc;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::version::{TaskCell, Version};
use super::{Blessing, Read, Versions, cache};
use crate::format::result::{ResultFile, TaskResult};
use crate::report::aggregate;
use crate::report::compare::{self, Comparison};
use crate::report::drift::task_drift;
use crate::stats::{self, Interval, Rule, Verdict};

pub use super::version::Figures;

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

/// What a step between two blessings amounts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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

/// A step between two consecutive blessings: what judging the pair gave.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// Indexes of the two blessings.
    pub from: usize,
    pub to: usize,
    #[serde(flatten)]
    pub judged: Arc<Judged>,
}

impl Deref for Step {
    type Target = Judged;

    fn deref(&self) -> &Judged {
        &self.judged
    }
}

/// What comparing two versions gives, wherever they stand in a history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judged {
    pub verdict: StepVerdict,
    /// The k the figures were compared at, and the tasks compared (both
    /// versions ran them, with the same or an unknown definition).
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
    /// Each compared task whose solved fraction moved, with the exact test
    /// of the move in its direction.
    #[serde(skip)]
    pub tests: Vec<TaskTest>,
}

/// The exact test of one task's move in a step: the one-sided Fisher test
/// of its solved counts in the direction of the move, as `compare` reports
/// it (a rise is tested by the comparison turned round).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskTest {
    pub id: String,
    pub rise: bool,
    pub p: f64,
    /// After the Benjamini-Hochberg correction over the step's tasks.
    pub p_adjusted: Option<f64>,
    /// The gate's verdict: more than noise.
    pub significant: bool,
}

/// The figures a step compares, by their aggregate keys.
pub const FIGURE_KEYS: [&str; 4] = ["pass_k_rate", "solve_k_rate", "mean_pass_rate", "mean_solve_rate"];

/// One figure across a step.
#[derive(Debug, Clone, PartialEq, Serialize)]
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

/// [`analyse`] at level `alpha`: each step judged once (the cache has the
/// others), in parallel.
pub fn analyse_at(mut read: Read, alpha: f64) -> History {
    let rule = Rule::Statistical { alpha };
    let pairs: BTreeSet<(String, String)> = read
        .models
        .iter()
        .flat_map(|m| m.blessings.windows(2).map(|w| (w[0].blob.clone(), w[1].blob.clone())))
        .collect();
    let mut judged: HashMap<(String, String), Arc<Judged>> = HashMap::new();
    let mut missing = Vec::new();
    for (before, after) in pairs {
        match cache::step(&cache::step_key(&before, &after, alpha)) {
            Some(j) => {
                judged.insert((before, after), j);
            }
            None => missing.push((before, after)),
        }
    }
    // The results those steps compare: parsed by the read, or read now.
    let wanted: BTreeSet<String> = missing.iter().flat_map(|(a, b)| [a.clone(), b.clone()]).collect();
    read.fetch(wanted.into_iter().filter(|id| !read.parsed.contains_key(id)).collect());
    let computed: Vec<((String, String), Arc<Judged>)> = missing
        .into_par_iter()
        .filter_map(|(a, b)| {
            let j = Arc::new(judge(read.parsed.get(&a)?, read.parsed.get(&b)?, rule));
            cache::put_step(&cache::step_key(&a, &b, alpha), &j);
            Some(((a, b), j))
        })
        .collect();
    judged.extend(computed);
    let models = read.models.into_par_iter().map(|v| model(v, &judged)).collect();
    cache::finish();
    History { alpha, models, notes: read.notes }
}

fn model(v: Versions, judged: &HashMap<(String, String), Arc<Judged>>) -> ModelHistory {
    let steps: Vec<Step> = v
        .blessings
        .windows(2)
        .enumerate()
        .map(|(i, w)| Step {
            from: i,
            to: i + 1,
            judged: judged
                .get(&(w[0].blob.clone(), w[1].blob.clone()))
                .cloned()
                .unwrap_or_else(|| Arc::new(Judged::unreadable())),
        })
        .collect();
    let versions: Vec<&Version> = v.blessings.iter().map(|b| b.version.as_ref()).collect();
    let tasks = tracks(&versions, &steps);
    let blessings = v
        .blessings
        .into_iter()
        .map(|blessing| BlessingFigures {
            k: blessing.version.k,
            tasks: blessing.version.tasks,
            figures: blessing.version.figures,
            blessing,
        })
        .collect();
    ModelHistory { provider: v.provider, model: v.model, file: v.file, files: v.files, blessings, steps, tasks }
}

/// `result` without the tasks in `left_out`, its aggregate made again.
fn without(result: &ResultFile, left_out: &[String]) -> ResultFile {
    let tasks: Vec<TaskResult> = result.tasks.iter().filter(|t| !left_out.contains(&t.id)).cloned().collect();
    ResultFile { aggregate: aggregate::aggregate(&tasks), tasks, ..result.clone() }
}

impl Judged {
    /// A step whose versions could not be read (a shallow clone lost one, a
    /// stream cut short): nothing can be said of it.
    fn unreadable() -> Judged {
        Judged {
            verdict: StepVerdict::NotComparable,
            k: None,
            common_tasks: 0,
            figures: Vec::new(),
            significant_tasks: Vec::new(),
            changed: Vec::new(),
            added: Vec::new(),
            removed: Vec::new(),
            unknown: Vec::new(),
            tests: Vec::new(),
        }
    }
}

/// Judge the step from `before` to `after` by `compare` under `rule`, both
/// ways: the drop as `compare(before, after)` sees it, the rise as
/// `compare(after, before)` sees its drop. Edited tasks are left out.
pub fn judge(before: &ResultFile, after: &ResultFile, rule: Rule) -> Judged {
    let drift = task_drift(before, after);
    // Edited tasks measure something else now: a change of theirs is not the model's.
    let (before_same, after_same) = (without(before, &drift.changed), without(after, &drift.changed));
    let down = compare::compare(&before_same, &after_same, rule);
    let up = compare::compare(&after_same, &before_same, rule);
    let mut judged = Judged {
        changed: drift.changed,
        added: drift.added,
        removed: drift.removed,
        unknown: drift.unknown,
        ..Judged::unreadable()
    };
    let Some(paired) = &down.paired else { return judged };
    judged.k = Some(paired.k);
    judged.common_tasks = paired.common_tasks;
    let verdict_of = |c: &Comparison, key: &str| {
        c.aggregates.iter().find(|a| a.key == key).and_then(|a| a.verdict).unwrap_or(Verdict::NoDrop)
    };
    let k = paired.k;
    let labels = [format!("pass^{k}"), format!("solve^{k}"), "mean pass rate".into(), "mean solve rate".into()];
    let differences = [&paired.pass_k, &paired.solve_k, &paired.mean_pass_rate, &paired.mean_solve_rate];
    for ((key, label), d) in FIGURE_KEYS.into_iter().zip(labels).zip(differences) {
        judged.figures.push(FigureMove {
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
    judged.significant_tasks = significant;
    // A task's move is tested by the comparison in which it is a drop.
    for (c, rise) in [(&down, false), (&up, true)] {
        for t in &c.tasks {
            if let Some(test) = t.solved_test.filter(|e| e.dropped()) {
                judged.tests.push(TaskTest {
                    id: t.id.clone(),
                    rise,
                    p: test.p_drop,
                    p_adjusted: test.p_drop_adjusted,
                    significant: t.solve_verdict.is_regression(),
                });
            }
        }
    }
    let moved = |c: &Comparison| {
        c.tasks.iter().any(|t| t.solve_verdict != Verdict::NoDrop || t.pass_verdict != Verdict::NoDrop)
    };
    judged.verdict = if down.has_regressions() || up.has_regressions() {
        StepVerdict::SignificantChange
    } else if judged.figures.iter().any(|f| f.movement != Movement::NoChange) || moved(&down) || moved(&up) {
        StepVerdict::WithinNoise
    } else {
        StepVerdict::NoChange
    };
    judged
}

/// Each task's cells across `versions` and its flags at each step.
fn tracks(versions: &[&Version], steps: &[Step]) -> Vec<TaskTrack> {
    let ids: BTreeSet<&str> = versions.iter().flat_map(|v| v.cells.iter().map(|c| c.id.as_str())).collect();
    let by_id: Vec<BTreeMap<&str, &TaskCell>> =
        versions.iter().map(|v| v.cells.iter().map(|c| (c.id.as_str(), c)).collect()).collect();
    ids.into_iter()
        .map(|id| {
            let mut cells: Vec<Option<Cell>> = Vec::with_capacity(versions.len());
            let mut flags = Vec::new();
            for (i, tasks) in by_id.iter().enumerate() {
                let Some(t) = tasks.get(id) else {
                    cells.push(None);
                    continue;
                };
                let state = TaskState::of(t.solved, t.runs);
                let before = i.checked_sub(1).and_then(|p| Some((by_id[p].get(id)?, cells[p]?)));
                let definition = match before {
                    None => Definition::New,
                    Some((b, _)) => match (&b.hash, &t.hash) {
                        (Some(x), Some(y)) if x == y => Definition::Same,
                        (Some(_), Some(_)) => Definition::Changed,
                        _ => Definition::Unknown,
                    },
                };
                cells.push(Some(Cell { solved: t.solved, runs: t.runs, state, definition }));
                let Some((_, was)) = before else { continue };
                let flag = |kind, test: Option<&TaskTest>| TaskFlag {
                    at: i,
                    kind,
                    from: was.state,
                    to: state,
                    p: test.map(|t| t.p),
                    p_adjusted: test.and_then(|t| t.p_adjusted),
                    significant: test.is_some_and(|t| t.significant),
                    definition_unknown: definition == Definition::Unknown,
                };
                if definition == Definition::Changed {
                    flags.push(flag(FlagKind::TaskChanged, None));
                    continue;
                }
                let kind = match (was.state, state) {
                    (TaskState::Stable, TaskState::Flaky | TaskState::Failing) => FlagKind::Drifted,
                    (TaskState::Flaky | TaskState::Failing, TaskState::Stable) => FlagKind::Recovered,
                    _ => continue,
                };
                let rise = kind == FlagKind::Recovered;
                let test = steps[i - 1].tests.iter().find(|t| t.id == id && t.rise == rise);
                flags.push(flag(kind, test));
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

impl Judged {
    pub fn figure(&self, key: &str) -> Option<&FigureMove> {
        self.figures.iter().find(|f| f.key == key)
    }
}

#[cfg(test)]
mod tests {
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
            shard_run_ids: Vec::new(),
            aggregate: aggregate::aggregate(&tasks),
            tasks,
        }
    }

    /// One model's blessings, the results parsed (no git to read from).
    fn versions(results: Vec<ResultFile>) -> Read {
        let mut parsed = HashMap::new();
        let blessings = results
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                // Blob ids as git's: by content, so a result blessed twice has one.
                let blob =
                    format!("{:040x}", crate::publish::digest::of_bytes(serde_json::to_string(&r).unwrap().as_bytes()));
                let version = Arc::new(Version::of(&r));
                parsed.insert(blob.clone(), Arc::new(r));
                Blessing {
                    commit: Some(format!("{i:040}")),
                    date: Some(format!("2026-0{}-01T00:00:00Z", i + 1)),
                    file: "p-m.json".into(),
                    evidence: None,
                    run_id: version.run_id.clone(),
                    git_sha: version.git_sha.clone(),
                    blob,
                    at_or_before: false,
                    version,
                }
            })
            .collect();
        let v = Versions {
            provider: "p".into(),
            model: "m".into(),
            file: Some("p-m.json".into()),
            files: vec!["p-m.json".into()],
            blessings,
        };
        Read { models: vec![v], notes: vec![], parsed, source: None }
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
