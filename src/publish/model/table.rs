//! The results table: a row per baseline with exactly the columns of the
//! published table, formatted, then the interval column and the marks (a
//! tie with the row above, suite drift, no judge).

use std::collections::{BTreeMap, BTreeSet};

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde::Serialize;

use crate::publish::load::baselines::{AggregateHeadline, Baseline, Headline};
use crate::publish::load::config::SiteConfig;
use crate::publish::model::display::{MISSING, UNKNOWN, number, rate};
use crate::publish::render::url;
use crate::report::judge_skips::JudgeSkips;
use crate::stats::{self, Paired, Settings, TaskCounts};

/// The tiers, in their order.
pub const TIERS: [&str; 4] = ["T1", "T2", "T3", "T4"];

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
    /// `page` as a URL relative to the site root (`url::href`).
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
    /// The last column: the change since the previous blessing (from git's
    /// history of the file), `None` when there is no history.
    pub since: Option<crate::publish::model::history::Since>,
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
    /// Tasks in one but not the other, or edited since.
    pub count: usize,
    /// In the current suite, not in the baseline.
    pub not_run: Vec<String>,
    /// In the baseline, no longer in the suite.
    pub not_in_suite: Vec<String>,
    /// In both, but edited since the baseline ran them (their content
    /// hashes differ); a task without a recorded hash is not counted.
    pub changed: Vec<String>,
    /// The same in words: `2 added, 1 removed, 3 edited since`.
    pub words: String,
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
pub fn tie(above: &[TaskCounts], below: &[TaskCounts], above_model: &str, settings: &Settings) -> Option<Tie> {
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

pub fn name(s: &Option<String>) -> &str {
    s.as_deref().unwrap_or(UNKNOWN)
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

pub fn commit(sha: Option<&str>, config: &SiteConfig) -> Option<Commit> {
    let sha = sha.map(str::trim).filter(|s| !s.is_empty())?;
    let short: String = sha.chars().take(7).collect();
    let url =
        config.repository.as_ref().map(|repo| format!("{repo}/commit/{}", utf8_percent_encode(sha, NON_ALPHANUMERIC)));
    Some(Commit { short, url })
}

pub fn row(b: &Baseline, suite_ids: Option<&BTreeMap<&str, Option<&str>>>, config: &SiteConfig) -> Row {
    let h = &b.headline;
    let page = format!("baselines/{}.html", b.stem);
    let a = &h.aggregate;
    let suite_diff = suite_ids.and_then(|suite| {
        let own: BTreeMap<&str, Option<&str>> =
            h.tasks.iter().filter_map(|t| Some((t.id.as_deref()?, t.content_hash.as_deref()))).collect();
        let not_run: Vec<String> = suite.keys().filter(|id| !own.contains_key(*id)).map(|s| s.to_string()).collect();
        let not_in_suite: Vec<String> =
            own.keys().filter(|id| !suite.contains_key(*id)).map(|s| s.to_string()).collect();
        let changed: Vec<String> = own
            .iter()
            .filter(|(id, ran)| matches!((ran, suite.get(*id)), (Some(ran), Some(Some(now))) if ran != now))
            .map(|(id, _)| id.to_string())
            .collect();
        let count = not_run.len() + not_in_suite.len() + changed.len();
        let mut words = Vec::new();
        for (n, what) in
            [(not_run.len(), "added to the suite"), (not_in_suite.len(), "removed"), (changed.len(), "edited")]
        {
            if n > 0 {
                words.push(format!("{n} {what}"));
            }
        }
        let words = format!("{} since this ran", words.join(", "));
        (count > 0).then_some(SuiteDiff { count, not_run, not_in_suite, changed, words })
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
        href: url::href(&page),
        file: b.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        suite_diff,
        interval: None,
        tie: None,
        judge: Some(judge_skips(h)).filter(JudgeSkips::matters),
        mean_cost: number(a.mean_cost_usd, 6),
        mean_turns: number(a.mean_turns, 1),
        since: None,
    }
}

/// The id of a tier's tasks on a baseline's page: `tasks-t1`.
pub fn tier_anchor(tier: &str) -> String {
    let slug: String =
        tier.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).take(40).collect();
    format!("tasks-{slug}")
}

pub fn judge_skips(h: &Headline) -> JudgeSkips {
    JudgeSkips::tally(h.tasks.iter().map(|t| {
        let runs = t.runs.iter().flatten().map(|r| r.judge_facts());
        (t.id.as_deref().unwrap_or(UNKNOWN), runs)
    }))
}
