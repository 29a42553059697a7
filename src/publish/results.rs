//! What the site shows about baselines and the suite, as plain data for the
//! templates: the results table rows (exactly the columns of the published
//! table, formatted, then the interval column and the marks), a page per
//! baseline, the task x model matrix, the solve^k-by-tier chart geometry,
//! and the task catalog.
//!
//! The statistics (intervals, the pass^k curve, ties between neighbouring
//! rows, the noise floor) come from `stats`, computed from each baseline's
//! task counts when the site is built; judge marks from `report::judge_skips`.
//!
//! Every string here that came from a baseline is untrusted text; it is
//! escaped by the templates (Tera autoescaping), never marked safe.
//! Formatting follows the reference harness's table: rates with one decimal
//! and `%` (`jsnum::to_fixed`), tiers as `solve_k_count/total_tasks`, the
//! run id's UTC date, the commit's first 7 characters.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use rayon::prelude::*;
use serde::Serialize;

use super::baselines::{AggregateHeadline, Baseline, Headline};
use super::charts::{self, CostPoint, LineChart, Scatter, Series};
use super::compare::{self, CompareIndex, PairPage};
use super::config::SiteConfig;
use super::digest::Digest;
use super::links;
use super::runs::{self, CategoryRow, FailureRow, TaskPage};
use super::transcripts::Transcripts;
use crate::format::task::{Matcher, Task};
use crate::jsnum;
use crate::report::judge_skips::JudgeSkips;
use crate::stats::{self, Interval, Paired, Settings, Summary, TaskCounts};

/// Shown where a figure is missing.
pub const MISSING: &str = "—";
/// Shown where a name is missing.
pub const UNKNOWN: &str = "unknown";
const TIERS: [&str; 4] = ["T1", "T2", "T3", "T4"];

/// The current suite as the site sees it.
#[derive(Debug, Clone, Serialize)]
pub struct SuiteView {
    /// The tasks folder, for messages (`evals/tasks`).
    pub folder: String,
    /// `ok`, `empty` (no task files) or `invalid` (tasks that do not load).
    pub status: &'static str,
    /// Problems when `invalid`, one line each.
    pub problems: Vec<String>,
    pub tasks: Vec<CatalogTask>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CatalogTask {
    pub id: String,
    pub tier: String,
    pub category: String,
    pub description: String,
    pub expected_tools: Vec<String>,
    pub forbidden_tools: Vec<String>,
    pub tool_call_budget: Option<u32>,
    pub matchers: String,
    pub assertions: usize,
}

impl SuiteView {
    pub fn from_tasks(folder: String, tasks: &[Task]) -> SuiteView {
        let mut tasks: Vec<CatalogTask> = tasks
            .iter()
            .map(|t| CatalogTask {
                id: t.id.clone(),
                tier: t.difficulty.to_string(),
                category: t.category.clone(),
                description: t.description.clone(),
                expected_tools: t.expected_tools.clone(),
                forbidden_tools: t.forbidden_tools.clone(),
                tool_call_budget: t.tool_call_budget,
                matchers: matcher_summary(&t.output_matchers),
                assertions: t.vault_assertions.len(),
            })
            .collect();
        tasks.sort_by(|a, b| (&a.tier, &a.id).cmp(&(&b.tier, &b.id)));
        SuiteView { folder, status: "ok", problems: Vec::new(), tasks }
    }

    pub fn empty(folder: String) -> SuiteView {
        SuiteView { folder, status: "empty", problems: Vec::new(), tasks: Vec::new() }
    }

    pub fn invalid(folder: String, problems: Vec<String>) -> SuiteView {
        SuiteView { folder, status: "invalid", problems, tasks: Vec::new() }
    }

    fn ids(&self) -> Option<BTreeSet<&str>> {
        (self.status == "ok").then(|| self.tasks.iter().map(|t| t.id.as_str()).collect())
    }
}

fn matcher_summary(matchers: &[Matcher]) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for m in matchers {
        let name = match m {
            Matcher::Contains { .. } => "contains",
            Matcher::Regex { .. } => "regex",
            Matcher::Judge { .. } => "judge",
        };
        *counts.entry(name).or_default() += 1;
    }
    counts.iter().map(|(k, n)| if *n == 1 { k.to_string() } else { format!("{k} ×{n}") }).collect::<Vec<_>>().join(", ")
}

/// One row of the published results table.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub model: String,
    pub provider: String,
    pub k: String,
    pub tasks: String,
    pub pass_k: String,
    pub solve_k: String,
    /// T1..T4 cells.
    pub tiers: Vec<String>,
    /// The tier cells again, each with the anchor of its tasks on the
    /// baseline's page (`tasks-t1`), `None` for an empty tier.
    pub tier_cells: Vec<TierCell>,
    pub date: String,
    pub commit: Option<Commit>,
    /// The baseline's own page, from the site root (`baselines/x.html`): an
    /// output path. Templates link with `href`.
    pub page: String,
    /// `page` as a URL relative to the site root (`links::href`).
    pub href: String,
    /// The baseline's file name.
    pub file: String,
    /// Set when the baseline's tasks are not the current suite's.
    pub suite_diff: Option<SuiteDiff>,
    /// The solve^k interval column, after Commit.
    pub interval: Option<RowInterval>,
    /// Set when this row is statistically tied with the row above.
    pub tie: Option<Tie>,
    /// Set when a missing judge decided some of its runs.
    pub judge: Option<JudgeSkips>,
    /// Extra columns after the interval: mean cost per run (USD) and mean turns.
    pub mean_cost: String,
    pub mean_turns: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct TierCell {
    pub text: String,
    pub anchor: Option<String>,
}

/// `57.4% ±13.0`, with the bounds for the cell's title.
#[derive(Debug, Clone, Serialize)]
pub struct RowInterval {
    pub text: String,
    pub low: String,
    pub high: String,
    pub tasks: usize,
}

/// A row whose solve^k cannot be told apart from the row above's.
#[derive(Debug, Clone, Serialize)]
pub struct Tie {
    /// The model of the row above.
    pub with: String,
    /// `-3.1 points [-12.0, +5.2]` at k.
    pub change: String,
    pub k: u32,
    pub tasks: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Commit {
    /// The first 7 characters of `git_sha`.
    pub short: String,
    /// `<repository>/commit/<git_sha>`, when a repository is configured.
    pub url: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SuiteDiff {
    /// Tasks in one but not the other.
    pub count: usize,
    /// In the current suite, not in the baseline.
    pub not_run: Vec<String>,
    /// In the baseline, no longer in the suite.
    pub not_in_suite: Vec<String>,
}

/// Everything the results pages show.
#[derive(Debug, Clone, Serialize)]
pub struct ResultsView {
    /// Sorted by solve^k descending, then provider, then model.
    pub rows: Vec<Row>,
    /// How many rows carry a suite mark.
    pub differing: usize,
    /// The median half-width of the rows' solve^k intervals (`±13.0`), the
    /// smallest difference the table can show; `None` without intervals.
    pub noise_floor: Option<String>,
    /// How many rows are marked as tied with the row above, and as judged without a judge.
    pub tied: usize,
    pub unjudged: usize,
    /// Each baseline's page data (not for templates' global data: each
    /// baseline page gets its own as `baseline`, and serializing every one
    /// for every build was a tenth of a `--watch` rebuild).
    #[serde(skip)]
    pub pages: Vec<BaselineView>,
    pub matrix: Matrix,
    pub chart: Chart,
    /// solve^k over k = 1..n, a line per model (the first rows).
    pub curve_chart: LineChart,
    /// Models past the curve chart's lines, left to the tables.
    pub curve_chart_omitted: usize,
    pub cost_chart: Scatter,
    pub compare: CompareIndex,
    /// The task pages of every baseline, in table order (not for templates'
    /// global data: they are rendered one by one).
    #[serde(skip)]
    pub task_pages: Vec<Arc<TaskPage>>,
    #[serde(skip)]
    pub pairs: Vec<PairPage>,
}

/// What [`view`] derived from each baseline alone (its statistics, its
/// paired test with the row above, its run pages), kept between builds by
/// `--watch` and keyed by digests of the inputs: after one baseline
/// changed, the others' are reused. Only the last build's are kept.
#[derive(Default)]
pub struct Derived {
    keep: bool,
    summaries: HashMap<u64, Option<Summary>>,
    ties: HashMap<(u64, u64), Option<Tie>>,
    runs: HashMap<u64, runs::BaselineRuns>,
}

impl Derived {
    /// A store that keeps what each build derived for the next.
    pub fn keeping() -> Derived {
        Derived { keep: true, ..Derived::default() }
    }
}

/// Build the view of `baselines` against the current suite, with the
/// transcripts of their evidence (by baseline stem) where loaded; what
/// `derived` holds from the last build is reused.
pub fn view(
    baselines: &[Baseline],
    suite: &SuiteView,
    config: &SiteConfig,
    evidence: &HashMap<String, Result<Transcripts, String>>,
    derived: &mut Derived,
) -> ResultsView {
    let suite_ids = suite.ids();
    let mut order: Vec<usize> = (0..baselines.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&baselines[a].headline, &baselines[b].headline);
        let rate = |h: &Headline| h.aggregate.solve_k_rate.unwrap_or(f64::NEG_INFINITY);
        rate(y)
            .total_cmp(&rate(x))
            .then_with(|| name(&x.provider).cmp(name(&y.provider)))
            .then_with(|| name(&x.model).cmp(name(&y.model)))
            .then_with(|| baselines[a].stem.cmp(&baselines[b].stem))
    });
    let sorted: Vec<&Baseline> = order.into_iter().map(|i| &baselines[i]).collect();
    let settings = Settings::default();
    let counts: Vec<Vec<TaskCounts>> = sorted.iter().map(|b| task_counts(&b.headline)).collect();
    let mut rows: Vec<Row> = sorted.iter().map(|b| row(b, suite_ids.as_ref(), config)).collect();
    // Each baseline's bootstrap, and its paired comparison with the row above.
    let before = &*derived;
    let pair_key = |i: usize| (sorted[i - 1].digest, sorted[i].digest);
    let computed: Vec<(Option<Summary>, Option<Tie>)> = (0..counts.len())
        .into_par_iter()
        .map(|i| {
            let summary = match before.summaries.get(&sorted[i].digest) {
                Some(kept) => kept.clone(),
                None => Summary::of(&counts[i], &settings),
            };
            let tie = match i {
                0 => None,
                _ => match before.ties.get(&pair_key(i)) {
                    Some(kept) => kept.clone(),
                    None => tie(&counts[i - 1], &counts[i], &rows[i - 1].model, &settings),
                },
            };
            (summary, tie)
        })
        .collect();
    let (summaries, ties): (Vec<Option<Summary>>, Vec<Option<Tie>>) = computed.into_iter().unzip();
    if derived.keep {
        derived.summaries = sorted.iter().zip(&summaries).map(|(b, s)| (b.digest, s.clone())).collect();
        derived.ties = (1..sorted.len()).map(|i| (pair_key(i), ties[i].clone())).collect();
    }
    for ((row, summary), tie) in rows.iter_mut().zip(&summaries).zip(ties) {
        row.interval = summary.as_ref().map(|s| RowInterval {
            text: stats::plus_minus(&s.solve_k),
            low: format!("{}%", stats::fixed1(s.solve_k.low)),
            high: format!("{}%", stats::fixed1(s.solve_k.high)),
            tasks: s.tasks,
        });
        row.tie = tie;
    }
    let suite_digest = {
        let mut d = Digest::default();
        d.value(suite);
        d.finish()
    };
    let before = &*derived;
    let below_keyed: Vec<(u64, runs::BaselineRuns)> = sorted
        .par_iter()
        .map(|b| {
            // The run pages are made from the baseline's file, the suite and the
            // evidence archive alone: their digests name them.
            let archive = evidence.get(&b.stem);
            let mut d = Digest::default();
            d.text(&b.stem);
            d.number(b.digest);
            d.number(suite_digest);
            match archive {
                Some(Ok(t)) => d.number(t.digest),
                Some(Err(why)) => d.text(why),
                None => d.text(""),
            }
            let key = d.finish();
            if let Some(kept) = before.runs.get(&key) {
                return (key, kept.clone());
            }
            let mut runs = runs::baseline_runs(b, suite, archive.and_then(|e| e.as_ref().ok()));
            for (i, task) in runs.tasks.iter_mut().enumerate() {
                let task = Arc::get_mut(task).expect("a task page just made is not shared");
                let mut page = Digest::default();
                page.number(key);
                page.number(i as u64);
                task.digest = page.finish();
            }
            (key, runs)
        })
        .collect();
    if derived.keep {
        derived.runs = below_keyed.iter().map(|(key, runs)| (*key, runs.clone())).collect();
    }
    let mut below: Vec<runs::BaselineRuns> = below_keyed.into_iter().map(|(_, runs)| runs).collect();
    let pages = sorted
        .iter()
        .zip(&rows)
        .zip(&summaries)
        .zip(&mut below)
        .map(|(((b, r), s), runs)| {
            let mut view = baseline_view(b, r, s.as_ref(), runs);
            view.evidence_problem = evidence.get(&b.stem).and_then(|e| e.as_ref().err().cloned());
            view
        })
        .collect();
    let matrix = matrix(&sorted, &rows, suite);
    let chart = chart(&sorted, &rows);
    let series: Vec<Series> = rows
        .iter()
        .zip(&summaries)
        .filter_map(|(r, s)| {
            let s = s.as_ref()?;
            let points = s.curve.iter().map(|p| (f64::from(p.k), p.solve.estimate)).collect();
            Some(Series { name: format!("{} ({})", r.model, r.provider), points })
        })
        .collect();
    let curve_chart = charts::curve(&series, "k");
    let curve_chart_omitted = series.len().saturating_sub(charts::MAX_SERIES);
    let cost_chart = charts::cost(
        &sorted
            .iter()
            .zip(&rows)
            .filter_map(|(b, r)| {
                let a = &b.headline.aggregate;
                Some(CostPoint {
                    name: format!("{} ({})", r.model, r.provider),
                    cost_usd: a.mean_cost_usd?,
                    solve_k: a.solve_k_rate?,
                })
            })
            .collect::<Vec<_>>(),
    );
    let entries: Vec<compare::Entry> = rows
        .iter()
        .zip(&sorted)
        .zip(&counts)
        .zip(&below)
        .map(|(((row, b), counts), runs)| compare::Entry { row, stem: &b.stem, counts, pages: &runs.pages })
        .collect();
    let (compare, pairs) = compare::pages(&entries, &settings);
    let task_pages = below.into_iter().flat_map(|r| r.tasks).collect();
    let differing = rows.iter().filter(|r| r.suite_diff.is_some()).count();
    let mut half_widths: Vec<f64> = summaries.iter().flatten().map(|s| s.solve_k.half_width()).collect();
    half_widths.sort_by(f64::total_cmp);
    let noise_floor = (!half_widths.is_empty()).then(|| {
        let mid = half_widths.len() / 2;
        let median =
            if half_widths.len() % 2 == 1 { half_widths[mid] } else { (half_widths[mid - 1] + half_widths[mid]) / 2.0 };
        format!("±{}", stats::fixed1(median))
    });
    let tied = rows.iter().filter(|r| r.tie.is_some()).count();
    let unjudged = rows.iter().filter(|r| r.judge.is_some()).count();
    ResultsView {
        rows,
        differing,
        noise_floor,
        tied,
        unjudged,
        pages,
        matrix,
        chart,
        curve_chart,
        curve_chart_omitted,
        cost_chart,
        compare,
        task_pages,
        pairs,
    }
}

/// A baseline's tasks as the statistics see them (its stored counts): what
/// `stats::Summary::of` (intervals, the curve) and `stats::Paired::of` (two
/// baselines task by task) take.
pub fn task_counts(h: &Headline) -> Vec<TaskCounts> {
    h.tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            TaskCounts::new(
                t.id.clone().unwrap_or_else(|| format!("#{i}")),
                t.difficulty.clone().unwrap_or_else(|| "untagged".into()),
                t.n_runs.unwrap_or(0),
                t.passed_count.unwrap_or(0),
                t.solved_count.unwrap_or(0),
            )
        })
        .collect()
}

/// The row `below` is tied with `above` when both ran the same tasks and
/// the paired interval of their solve^k difference includes zero. Different
/// task sets, or too few tasks for an interval, make no claim either way.
fn tie(above: &[TaskCounts], below: &[TaskCounts], above_model: &str, settings: &Settings) -> Option<Tie> {
    fn ids(c: &[TaskCounts]) -> BTreeSet<&str> {
        c.iter().filter(|t| t.runs > 0).map(|t| t.id.as_str()).collect()
    }
    if ids(above) != ids(below) {
        return None;
    }
    let p = Paired::of(above, below, settings)?;
    if p.common_tasks < stats::gate::MIN_TASKS || p.solve_k.drop_excludes_zero() || p.solve_k.rise_excludes_zero() {
        return None;
    }
    let c = &p.solve_k.change;
    Some(Tie {
        with: above_model.to_string(),
        change: format!(
            "{} points [{}, {}]",
            stats::signed1(c.estimate),
            stats::signed1(c.low),
            stats::signed1(c.high)
        ),
        k: p.k,
        tasks: p.common_tasks,
    })
}

fn name(s: &Option<String>) -> &str {
    s.as_deref().unwrap_or(UNKNOWN)
}

/// `74.1%`, or `—` when absent.
pub fn rate(r: Option<f64>) -> String {
    r.filter(|r| r.is_finite()).map_or_else(|| MISSING.into(), |r| format!("{}%", jsnum::to_fixed(r, 1)))
}

/// `19/29`, or `—` when the tier is absent or empty.
pub fn tier_cell(aggregate: &AggregateHeadline, tier: &str) -> String {
    match aggregate.by_difficulty.get(tier) {
        Some(t) if t.total_tasks.unwrap_or(0) > 0 => {
            format!("{}/{}", t.solve_k_count.unwrap_or(0), t.total_tasks.unwrap_or(0))
        }
        _ => MISSING.into(),
    }
}

fn commit(sha: Option<&str>, config: &SiteConfig) -> Option<Commit> {
    let sha = sha.map(str::trim).filter(|s| !s.is_empty())?;
    let short: String = sha.chars().take(7).collect();
    let url =
        config.repository.as_ref().map(|repo| format!("{repo}/commit/{}", utf8_percent_encode(sha, NON_ALPHANUMERIC)));
    Some(Commit { short, url })
}

fn row(b: &Baseline, suite_ids: Option<&BTreeSet<&str>>, config: &SiteConfig) -> Row {
    let h = &b.headline;
    let page = format!("baselines/{}.html", b.stem);
    let a = &h.aggregate;
    let suite_diff = suite_ids.and_then(|suite| {
        let own: BTreeSet<&str> = h.tasks.iter().filter_map(|t| t.id.as_deref()).collect();
        let not_run: Vec<String> = suite.difference(&own).map(|s| s.to_string()).collect();
        let not_in_suite: Vec<String> = own.difference(suite).map(|s| s.to_string()).collect();
        let count = not_run.len() + not_in_suite.len();
        (count > 0).then_some(SuiteDiff { count, not_run, not_in_suite })
    });
    Row {
        model: name(&h.model).to_string(),
        provider: name(&h.provider).to_string(),
        k: a.n_runs.unwrap_or(0).to_string(),
        tasks: a.total_tasks.unwrap_or(0).to_string(),
        pass_k: rate(a.pass_k_rate),
        solve_k: rate(a.solve_k_rate),
        tiers: TIERS.iter().map(|t| tier_cell(a, t)).collect(),
        tier_cells: TIERS
            .iter()
            .map(|t| {
                let text = tier_cell(a, t);
                let anchor = (text != MISSING).then(|| tier_anchor(t));
                TierCell { text, anchor }
            })
            .collect(),
        date: h
            .run_id
            .as_deref()
            .filter(|r| !r.is_empty())
            .map_or_else(|| MISSING.into(), |r| r.chars().take(10).collect()),
        commit: commit(h.git_sha.as_deref(), config),
        page: page.clone(),
        href: links::href(&page),
        file: b.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        suite_diff,
        interval: None,
        tie: None,
        judge: Some(judge_skips(h)).filter(JudgeSkips::matters),
        mean_cost: number(a.mean_cost_usd, 6),
        mean_turns: number(a.mean_turns, 1),
    }
}

/// The id of a tier's tasks on a baseline's page: `tasks-t1`.
pub fn tier_anchor(tier: &str) -> String {
    let slug: String =
        tier.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).take(40).collect();
    format!("tasks-{slug}")
}

fn judge_skips(h: &Headline) -> JudgeSkips {
    JudgeSkips::tally(h.tasks.iter().map(|t| {
        let runs = t.runs.iter().flatten().map(|r| r.judge_facts());
        (t.id.as_deref().unwrap_or(UNKNOWN), runs)
    }))
}

/// The page of one baseline.
#[derive(Debug, Clone, Serialize)]
pub struct BaselineView {
    pub row: Row,
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

pub(crate) fn number(x: Option<f64>, places: usize) -> String {
    x.filter(|x| x.is_finite()).map_or_else(|| MISSING.into(), |x| jsnum::to_fixed(x, places))
}

fn count(x: Option<u32>) -> String {
    x.map_or_else(|| MISSING.into(), |x| x.to_string())
}

/// Ordering of tiers: T1..T4, then anything else by name.
fn tier_key(t: &str) -> (usize, &str) {
    (TIERS.iter().position(|x| *x == t).unwrap_or(TIERS.len()), t)
}

fn baseline_view(b: &Baseline, row: &Row, summary: Option<&Summary>, below: &mut runs::BaselineRuns) -> BaselineView {
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
        };
        charts::curve(&[line("pass^k", |p| p.pass.estimate), line("solve^k", |p| p.solve.estimate)], "k")
    });
    let transcripts = below.tasks.iter().map(|t| t.transcripts.len()).sum();
    let skips = judge_skips(h);
    BaselineView {
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

/// Task x model: one row per task of any baseline or of the suite.
#[derive(Debug, Clone, Serialize)]
pub struct Matrix {
    /// Column heads, in table order.
    pub columns: Vec<Column>,
    pub rows: Vec<MatrixRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Column {
    pub model: String,
    pub provider: String,
    /// The baseline's page, from the site root (`baselines/x.html`), for the
    /// templates' `url` filter.
    pub page: String,
    /// The baseline's page, as a URL relative to the site root.
    pub href: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    /// `solved/k`.
    pub text: String,
    /// `all`, `some` or `none` solved.
    pub class: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct MatrixRow {
    pub id: String,
    pub tier: String,
    pub in_suite: bool,
    /// One per column; `None` where that baseline did not run the task.
    pub cells: Vec<Option<Cell>>,
}

fn matrix(sorted: &[&Baseline], rows: &[Row], suite: &SuiteView) -> Matrix {
    let columns = rows
        .iter()
        .map(|r| Column {
            model: r.model.clone(),
            provider: r.provider.clone(),
            page: r.page.clone(),
            href: r.href.clone(),
        })
        .collect();
    let mut tiers: BTreeMap<String, String> = BTreeMap::new();
    let in_suite: BTreeSet<&str> = suite.tasks.iter().map(|t| t.id.as_str()).collect();
    for t in &suite.tasks {
        tiers.insert(t.id.clone(), t.tier.clone());
    }
    let lookups: Vec<HashMap<&str, (u32, u32)>> = sorted
        .iter()
        .map(|b| {
            b.headline
                .tasks
                .iter()
                .filter_map(|t| {
                    let id = t.id.as_deref()?;
                    Some((id, (t.solved_count.unwrap_or(0), t.n_runs.unwrap_or(0))))
                })
                .collect()
        })
        .collect();
    for b in sorted {
        for t in &b.headline.tasks {
            if let Some(id) = &t.id {
                tiers.entry(id.clone()).or_insert_with(|| t.difficulty.clone().unwrap_or_else(|| MISSING.into()));
            }
        }
    }
    let mut ids: Vec<(String, String)> = tiers.into_iter().collect();
    ids.sort_by(|(a, ta), (b, tb)| tier_key(ta).cmp(&tier_key(tb)).then_with(|| a.cmp(b)));
    let rows = ids
        .into_iter()
        .map(|(id, tier)| {
            let cells = lookups
                .iter()
                .map(|l| {
                    l.get(id.as_str()).map(|&(solved, k)| {
                        let class = if k > 0 && solved == k {
                            "all"
                        } else if solved > 0 {
                            "some"
                        } else {
                            "none"
                        };
                        Cell { text: format!("{solved}/{k}"), class }
                    })
                })
                .collect();
            MatrixRow { in_suite: in_suite.contains(id.as_str()), id, tier, cells }
        })
        .collect();
    Matrix { columns, rows }
}

/// Geometry of the solve^k-by-tier chart: a row per model, a panel per tier,
/// each bar as wide as the tier's solve^k rate. Drawn as inline SVG.
#[derive(Debug, Clone, Serialize)]
pub struct Chart {
    pub width: u32,
    pub height: u32,
    pub label_width: u32,
    pub panel_width: u32,
    pub panels: Vec<ChartPanel>,
    pub rows: Vec<ChartRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChartPanel {
    pub tier: &'static str,
    pub x: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChartRow {
    /// `model (provider)`, shortened to fit the label column.
    pub label: String,
    /// The whole label, shown on hover.
    pub title: String,
    pub y: u32,
    pub bars: Vec<ChartBar>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChartBar {
    pub x: u32,
    pub width: f64,
    /// `19/29 (65.5%)`, or `—`.
    pub text: String,
    pub present: bool,
}

const CHART_LABEL_WIDTH: u32 = 230;
const CHART_PANEL_WIDTH: u32 = 170;
const CHART_BAR_MAX: f64 = 110.0;
const CHART_ROW_HEIGHT: u32 = 24;
const CHART_HEADER: u32 = 28;
/// What fits in the label column at the chart's font size.
const CHART_LABEL_CHARS: usize = 34;

pub(crate) fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

fn chart(sorted: &[&Baseline], rows: &[Row]) -> Chart {
    let panels: Vec<ChartPanel> = TIERS
        .iter()
        .enumerate()
        .map(|(i, tier)| ChartPanel { tier, x: CHART_LABEL_WIDTH + i as u32 * CHART_PANEL_WIDTH })
        .collect();
    let chart_rows = sorted
        .iter()
        .zip(rows)
        .enumerate()
        .map(|(i, (b, r))| {
            let bars = panels
                .iter()
                .map(|p| {
                    let t = b.headline.aggregate.by_difficulty.get(p.tier).filter(|t| t.total_tasks.unwrap_or(0) > 0);
                    match t {
                        Some(t) => {
                            let total = t.total_tasks.unwrap_or(0);
                            let solved = t.solve_k_count.unwrap_or(0).min(total);
                            let share = f64::from(solved) / f64::from(total);
                            ChartBar {
                                x: p.x,
                                width: jsnum::round(share * CHART_BAR_MAX, 1),
                                text: format!("{solved}/{total}"),
                                present: true,
                            }
                        }
                        None => ChartBar { x: p.x, width: 0.0, text: MISSING.into(), present: false },
                    }
                })
                .collect();
            let title = format!("{} ({})", r.model, r.provider);
            ChartRow {
                label: shorten(&title, CHART_LABEL_CHARS),
                title,
                y: CHART_HEADER + i as u32 * CHART_ROW_HEIGHT,
                bars,
            }
        })
        .collect::<Vec<_>>();
    Chart {
        width: CHART_LABEL_WIDTH + TIERS.len() as u32 * CHART_PANEL_WIDTH,
        height: CHART_HEADER + chart_rows.len() as u32 * CHART_ROW_HEIGHT + 6,
        label_width: CHART_LABEL_WIDTH,
        panel_width: CHART_PANEL_WIDTH,
        panels,
        rows: chart_rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::publish::baselines;
    use std::path::PathBuf;

    fn baseline(stem: &str, json: &str) -> Baseline {
        Baseline {
            path: PathBuf::from(format!("b/{stem}.json")),
            stem: stem.into(),
            headline: baselines::parse(json).unwrap(),
            digest: 0,
        }
    }

    fn config() -> SiteConfig {
        SiteConfig { repository: Some("https://example.org/r".into()), ..SiteConfig::default() }
    }

    #[test]
    fn a_row_formats_like_the_reference_table() {
        let b = baseline(
            "x",
            r#"{"run_id": "2026-05-24T20:48:06.714Z", "git_sha": "36e3495abcdef", "model": "m", "provider": "p",
                "aggregate": {"total_tasks": 54, "n_runs": 5, "pass_k_rate": 100, "solve_k_rate": 74.1,
                "by_difficulty": {"T3": {"total_tasks": 29, "solve_k_count": 19}, "T1": {"total_tasks": 0}}}}"#,
        );
        let v = view(&[b], &SuiteView::empty("t".into()), &config(), &HashMap::new(), &mut Derived::default());
        let r = &v.rows[0];
        assert_eq!(
            (r.k.as_str(), r.tasks.as_str(), r.pass_k.as_str(), r.solve_k.as_str()),
            ("5", "54", "100.0%", "74.1%")
        );
        assert_eq!(r.tiers, ["—", "—", "19/29", "—"]);
        assert_eq!(r.date, "2026-05-24");
        let c = r.commit.as_ref().unwrap();
        assert_eq!(c.short, "36e3495");
        assert_eq!(c.url.as_deref(), Some("https://example.org/r/commit/36e3495abcdef"));
        assert_eq!(r.page, "baselines/x.html");
    }

    #[test]
    fn missing_fields_collapse_to_defaults() {
        let v = view(
            &[baseline("e", "{}")],
            &SuiteView::empty("t".into()),
            &SiteConfig::default(),
            &HashMap::new(),
            &mut Derived::default(),
        );
        let r = &v.rows[0];
        assert_eq!((r.model.as_str(), r.provider.as_str()), (UNKNOWN, UNKNOWN));
        assert_eq!((r.k.as_str(), r.tasks.as_str()), ("0", "0"));
        assert_eq!((r.pass_k.as_str(), r.solve_k.as_str(), r.date.as_str()), (MISSING, MISSING, MISSING));
        assert!(r.commit.is_none());
        assert!(r.tiers.iter().all(|t| t == MISSING));
        // No repository configured: the commit is shown without a link.
        let v = view(
            &[baseline("s", r#"{"git_sha": "abc"}"#)],
            &SuiteView::empty("t".into()),
            &SiteConfig::default(),
            &HashMap::new(),
            &mut Derived::default(),
        );
        assert_eq!(v.rows[0].commit.as_ref().unwrap().url, None);
    }

    #[test]
    fn rows_sort_by_solve_k_then_provider_then_model() {
        let bs = [
            baseline("a", r#"{"model": "b", "provider": "x", "aggregate": {"solve_k_rate": 50}}"#),
            baseline("b", r#"{"model": "a", "provider": "x", "aggregate": {"solve_k_rate": 50}}"#),
            baseline("c", r#"{"model": "z", "provider": "a", "aggregate": {"solve_k_rate": 50}}"#),
            baseline("d", r#"{"model": "top", "provider": "z", "aggregate": {"solve_k_rate": 90.5}}"#),
            baseline("e", r#"{"model": "none"}"#),
        ];
        let v = view(&bs, &SuiteView::empty("t".into()), &config(), &HashMap::new(), &mut Derived::default());
        let models: Vec<_> = v.rows.iter().map(|r| r.model.as_str()).collect();
        assert_eq!(models, ["top", "z", "a", "b", "none"]);
    }

    #[test]
    fn a_baseline_from_another_suite_is_marked_with_the_difference() {
        let task = |id: &str| -> Task {
            serde_json::from_str(&format!(
                r#"{{"id": "{id}", "description": "d", "userMessage": "u", "difficulty": "T2", "category": "c"}}"#
            ))
            .unwrap()
        };
        let suite = SuiteView::from_tasks("t".into(), &[task("a"), task("b"), task("c")]);
        let bs = [
            baseline("same", r#"{"tasks": [{"id": "a"}, {"id": "b"}, {"id": "c"}]}"#),
            baseline("old", r#"{"tasks": [{"id": "a"}, {"id": "gone"}]}"#),
        ];
        let v = view(&bs, &suite, &config(), &HashMap::new(), &mut Derived::default());
        let old = v.rows.iter().find(|r| r.file == "old.json").unwrap();
        assert_eq!(
            old.suite_diff,
            Some(SuiteDiff { count: 3, not_run: vec!["b".into(), "c".into()], not_in_suite: vec!["gone".into()] })
        );
        assert!(v.rows.iter().find(|r| r.file == "same.json").unwrap().suite_diff.is_none());
        assert_eq!(v.differing, 1);
        // The matrix lists every task once, suite tasks first known by their tier.
        let ids: Vec<_> = v.matrix.rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c", "gone"]);
    }

    #[test]
    fn chart_bars_scale_with_the_tier_rate() {
        let b = baseline(
            "x",
            r#"{"model": "m", "aggregate": {"by_difficulty": {"T1": {"total_tasks": 4, "solve_k_count": 1}}}}"#,
        );
        let v = view(&[b], &SuiteView::empty("t".into()), &config(), &HashMap::new(), &mut Derived::default());
        let bars = &v.chart.rows[0].bars;
        assert_eq!(bars[0].width, 27.5);
        assert_eq!(bars[0].text, "1/4");
        assert!(!bars[1].present);
        assert_eq!(v.chart.height, CHART_HEADER + CHART_ROW_HEIGHT + 6);
    }
}
