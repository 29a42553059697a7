//! The run-level pages of a baseline, as plain data for the templates: a
//! page per task with each of its k runs (how it ended, every check with its
//! verdict, the response, errors, tools, turns, tokens, cost, time), the
//! failure breakdown (how many unsolved runs failed on each kind of check,
//! linked to the runs) and the solve figures by category.
//!
//! Every run has a stable address: its task's page (`baselines/<stem>/<task>.html`,
//! the task id made a file name by [`page_keys`]) and the anchor `#run-N`,
//! N counting from 1 in the baseline's order of runs.
//!
//! Everything here came from a baseline file and is untrusted text: the
//! templates escape it (Tera autoescaping); long texts are cut here
//! ([`Shown`]) so that no file can make a page of unbounded size.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use serde::Serialize;

use crate::publish::load::baselines::{Baseline, DetailsHeadline, MatcherHeadline, RunHeadline, TaskHeadline};
use crate::publish::model::catalog::{CatalogTask, SuiteView};
use crate::publish::model::display::{MISSING, Shown, UNKNOWN, number, rate, seconds};
use crate::publish::model::transcripts::{self, Transcripts};

/// The longest task key in a page's file name.
const MAX_KEY: usize = 80;
/// What a page shows of a response, an error or a matcher's value; the rest
/// is in the baseline file.
pub const RESPONSE_CHARS: usize = 20_000;
const ERROR_CHARS: usize = 4_000;
const VALUE_CHARS: usize = 2_000;
/// Tools listed per run, errors per run, checks of one kind per run.
const MAX_LISTED: usize = 200;
/// Runs per task shown (a malformed count must not make a huge page).
const MAX_RUNS: usize = 100;

/// Each task id as a file name, unique within the baseline: characters
/// outside `[A-Za-z0-9_-]` become `-`, at most [`MAX_KEY`] long, and a
/// repeat (compared without case, for case-insensitive disks) gets `-2`,
/// `-3`... `index` is never a key: with clean URLs it would be the baseline's
/// own page.
pub fn page_keys<'a>(ids: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut taken: HashSet<String> = HashSet::from(["index".to_string()]);
    ids.into_iter()
        .map(|id| {
            let mut base: String = id
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '-') { c } else { '-' })
                .take(MAX_KEY)
                .collect();
            if base.is_empty() {
                base = "task".into();
            }
            let mut key = base.clone();
            let mut n = 1;
            while !taken.insert(key.to_ascii_lowercase()) {
                n += 1;
                key = format!("{base}-{n}");
            }
            key
        })
        .collect()
}

/// The page of one task of one baseline.
#[derive(Debug, Clone, Serialize)]
pub struct TaskPage {
    /// Logical path, `baselines/<stem>/<key>.html`.
    pub url: String,
    pub id: String,
    pub tier: String,
    pub category: String,
    pub description: Option<String>,
    pub solved: String,
    pub passed: String,
    pub flaky: bool,
    /// The suite's task has been edited since this baseline ran it (the
    /// content hashes differ; unknown where either has none).
    pub edited_since: bool,
    pub runs: Vec<RunView>,
    /// Runs beyond [`MAX_RUNS`], not shown.
    pub runs_omitted: usize,
    /// The baseline: its page, model and provider.
    pub baseline_page: String,
    pub model: String,
    pub provider: String,
    /// The transcript pages of its runs: (logical path, view).
    #[serde(skip)]
    pub transcripts: Vec<(String, std::sync::Arc<transcripts::TranscriptView>)>,
    /// A digest of what the page was made from (set by `results::view`:
    /// the baseline file, the suite, the evidence archive, its place).
    #[serde(skip)]
    pub digest: u64,
}

/// What a transcript page needs of its task.
#[derive(Debug, Clone, Serialize)]
pub struct TaskBrief<'a> {
    pub url: &'a str,
    pub id: &'a str,
    pub baseline_page: &'a str,
    pub model: &'a str,
    pub provider: &'a str,
}

impl TaskPage {
    pub fn brief(&self) -> TaskBrief<'_> {
        TaskBrief {
            url: &self.url,
            id: &self.id,
            baseline_page: &self.baseline_page,
            model: &self.model,
            provider: &self.provider,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct RunView {
    /// 1-based, in the baseline's order.
    pub n: usize,
    pub passed: bool,
    pub solved: bool,
    pub ending: Ending,
    pub checks: Vec<Check>,
    /// One line on why an unsolved run failed (`regex matcher, vault assertion`).
    pub failed_on: String,
    pub response: Shown,
    pub errors: Vec<Shown>,
    pub tools: Vec<String>,
    pub turns: String,
    pub tool_calls: String,
    pub prompt_tokens: String,
    pub cached_tokens: String,
    pub output_tokens: String,
    pub cost_usd: String,
    pub duration: String,
    /// The transcript's page, logical path, when the evidence holds it.
    pub transcript: Option<String>,
}

/// How a run ended.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Ending {
    /// `answered`, `timed_out`, `turn_limit`, `context_exceeded`,
    /// `harness_error` or `unknown`: a CSS class and a filter key.
    pub key: &'static str,
    pub label: String,
}

/// One check of a run and its verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// The kind of check (`expected tools`, `contains`, `vault assertion`...).
    pub kind: &'static str,
    /// What it checked, in words.
    pub what: Arc<str>,
    /// The pattern a regular-expression check matched, for whoever wants it.
    pub pattern: Option<Arc<str>>,
    /// `None`: not recorded.
    pub verdict: Option<bool>,
    /// An error the check reported, or why an assertion failed.
    pub note: Option<String>,
}

/// The kinds of check a run can fail, in the order the breakdown lists them.
pub const FAILURE_KINDS: [&str; 11] = [
    "did not pass",
    "expected tools",
    "forbidden tools",
    "contains",
    "regex",
    "judge",
    "output matchers",
    "vault assertion",
    "tool budget",
    "no failing check recorded",
    "judge not asked (no judge configured)",
];

/// How many unsolved runs failed on one kind of check.
#[derive(Debug, Clone, Serialize)]
pub struct FailureRow {
    pub kind: &'static str,
    pub runs: usize,
    pub links: Vec<RunLink>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunLink {
    /// `task #2`.
    pub label: String,
    /// The task page, logical path; the run is its `#run-N`.
    pub page: String,
    pub n: usize,
}

/// Solve figures of one category.
#[derive(Debug, Clone, Serialize)]
pub struct CategoryRow {
    pub category: String,
    pub tasks: usize,
    /// `solve_k_count/tasks`.
    pub solve_k: String,
    pub solve_k_rate: String,
    /// `solved runs/runs`.
    pub solved_runs: String,
    pub mean_solve_rate: String,
}

/// Everything below a baseline's page.
#[derive(Debug, Clone, Default)]
pub struct BaselineRuns {
    /// Shared with the site's list of task pages and with what `--watch`
    /// keeps for the next build (a page's runs are never copied).
    pub tasks: Vec<Arc<TaskPage>>,
    pub failures: Vec<FailureRow>,
    pub unsolved: usize,
    pub categories: Vec<CategoryRow>,
    /// Task id -> its page, for links from the baseline page.
    pub pages: HashMap<String, String>,
}

/// The run pages of `b` (its page is `baselines/<stem>.html`), with the
/// transcripts of its evidence when loaded.
pub fn baseline_runs(b: &Baseline, suite: &SuiteView, evidence: Option<&Transcripts>) -> BaselineRuns {
    let h = &b.headline;
    let ids: Vec<String> =
        h.tasks.iter().enumerate().map(|(i, t)| t.id.clone().unwrap_or_else(|| format!("task-{}", i + 1))).collect();
    let keys = page_keys(ids.iter().map(String::as_str));
    let folder = format!("baselines/{}", b.stem);
    let catalog: HashMap<&str, &CatalogTask> = suite.tasks.iter().map(|t| (t.id.as_str(), t)).collect();
    let mut out = BaselineRuns::default();
    let mut failures: BTreeMap<usize, Vec<RunLink>> = BTreeMap::new();
    for ((t, id), key) in h.tasks.iter().zip(&ids).zip(&keys) {
        let url = format!("{folder}/{key}.html");
        let task = catalog.get(id.as_str()).copied();
        let all_runs = t.runs.as_deref().unwrap_or_default();
        let mut transcripts_of_task = Vec::new();
        let mut memo = CheckWords::new();
        let runs: Vec<RunView> = all_runs
            .iter()
            .take(MAX_RUNS)
            .enumerate()
            .map(|(i, r)| {
                let n = i + 1;
                let transcript = evidence.and_then(|e| e.of(r.transcript_path.as_deref()?));
                let transcript_url = transcript.map(|_| format!("{folder}/{key}/run-{n}.html"));
                if let (Some(view), Some(u)) = (transcript, &transcript_url) {
                    transcripts_of_task.push((u.clone(), std::sync::Arc::clone(view)));
                }
                let view = run_view(n, r, task, transcript.map(|t| t.end.reason.as_str()), transcript_url, &mut memo);
                if !view.solved {
                    for kind in failed_kinds(r) {
                        failures.entry(kind).or_default().push(RunLink {
                            label: format!("{id} #{n}"),
                            page: url.clone(),
                            n,
                        });
                    }
                }
                view
            })
            .collect();
        out.unsolved += runs.iter().filter(|r| !r.solved).count();
        out.pages.insert(id.clone(), url.clone());
        out.tasks.push(Arc::new(TaskPage {
            url,
            id: id.clone(),
            tier: t.difficulty.clone().unwrap_or_else(|| MISSING.into()),
            category: t.category.clone().unwrap_or_else(|| MISSING.into()),
            description: task.map(|c| c.description.clone()),
            solved: format!("{}/{}", t.solved_count.unwrap_or(0), t.n_runs.unwrap_or(0)),
            passed: format!("{}/{}", t.passed_count.unwrap_or(0), t.n_runs.unwrap_or(0)),
            flaky: t.flaky.unwrap_or(false),
            edited_since: matches!(
                (t.content_hash.as_deref(), task.and_then(|c| c.content_hash.as_deref())),
                (Some(ran), Some(now)) if ran != now
            ),
            runs_omitted: all_runs.len().saturating_sub(MAX_RUNS),
            runs,
            baseline_page: format!("{folder}.html"),
            model: h.model.clone().unwrap_or_else(|| UNKNOWN.into()),
            provider: h.provider.clone().unwrap_or_else(|| UNKNOWN.into()),
            transcripts: transcripts_of_task,
            digest: 0,
        }));
    }
    out.failures = failures
        .into_iter()
        .map(|(kind, links)| FailureRow { kind: FAILURE_KINDS[kind], runs: links.len(), links })
        .collect();
    out.categories = categories(&h.tasks);
    out
}

/// The indexes in [`FAILURE_KINDS`] of every check an unsolved run failed.
fn failed_kinds(r: &RunHeadline) -> Vec<usize> {
    let none = DetailsHeadline::default();
    let d = r.solve_details.as_ref().unwrap_or(&none);
    let fails = |b: Option<bool>| b == Some(false);
    let mut kinds = Vec::new();
    if r.passed != Some(true) {
        kinds.push(0);
    }
    if fails(d.expected_tools_met) {
        kinds.push(1);
    }
    if fails(d.forbidden_tools_clean) {
        kinds.push(2);
    }
    let matchers_before = kinds.len();
    for (i, kind) in ["contains", "regex", "judge"].iter().enumerate() {
        if d.matcher_details.iter().flatten().any(|m| m.kind.as_deref() == Some(kind) && m.verdict != Some(true)) {
            // A judge that was never asked said nothing: not a failure of the model's.
            let unasked = *kind == "judge" && d.judge_skipped == Some(true);
            kinds.push(if unasked { 10 } else { 3 + i });
        }
    }
    // Matchers failed as a whole without saying which one.
    if fails(d.matchers_pass) && kinds.len() == matchers_before {
        kinds.push(6);
    }
    if fails(d.vault_assertions_pass) || d.vault_assertion_details.iter().flatten().any(|a| a.ok == Some(false)) {
        kinds.push(7);
    }
    if fails(d.tool_budget_ok) {
        kinds.push(8);
    }
    if kinds.is_empty() && r.solved != Some(true) {
        kinds.push(9);
    }
    kinds
}

/// How a run ended: a harness error first (the run broke), then the
/// recorded reasons, then its transcript's, then what `passed` implies.
pub fn ending(r: &RunHeadline, transcript_reason: Option<&str>) -> Ending {
    let known = |key: &str| -> Option<Ending> {
        let (key, label) = match key {
            "answered" => ("answered", "answered"),
            "timed_out" => ("timed_out", "timed out"),
            "turn_limit" => ("turn_limit", "turn limit reached"),
            "context_exceeded" => ("context_exceeded", "context window exceeded"),
            "harness_error" => ("harness_error", "harness error"),
            _ => return None,
        };
        Some(Ending { key, label: label.into() })
    };
    if r.errors.as_ref().is_some_and(|e| !e.is_empty()) {
        return known("harness_error").expect("a known key");
    }
    if r.timed_out == Some(true) {
        return known("timed_out").expect("a known key");
    }
    if let Some(reason) = r.end_reason.as_deref() {
        return known(reason).unwrap_or_else(|| Ending { key: "unknown", label: format!("ended: {reason}") });
    }
    if let Some(e) = transcript_reason.and_then(known) {
        return e;
    }
    match r.passed {
        Some(true) => known("answered").expect("a known key"),
        _ => Ending { key: "unknown", label: "did not pass (no reason recorded)".into() },
    }
}

fn run_view(
    n: usize,
    r: &RunHeadline,
    task: Option<&CatalogTask>,
    transcript_reason: Option<&str>,
    transcript: Option<String>,
    memo: &mut CheckWords,
) -> RunView {
    let none = DetailsHeadline::default();
    let d = r.solve_details.as_ref().unwrap_or(&none);
    let m = r.metrics.clone().unwrap_or_default();
    let called: Vec<String> = m.tool_list.clone().unwrap_or_default();
    let mut checks = Vec::new();
    let list = |tools: &[String]| {
        if tools.is_empty() { "none".to_string() } else { shorten_list(tools) }
    };
    if let Some(t) = task {
        if !t.expected_tools.is_empty() || d.expected_tools_met.is_some() {
            let missing: Vec<String> = t.expected_tools.iter().filter(|x| !called.contains(x)).cloned().collect();
            let note = (!missing.is_empty()).then(|| format!("not called: {}", list(&missing)));
            checks.push(Check {
                kind: "expected tools",
                pattern: None,
                what: list(&t.expected_tools).into(),
                verdict: d.expected_tools_met,
                note,
            });
        }
        if !t.forbidden_tools.is_empty() || d.forbidden_tools_clean == Some(false) {
            let used: Vec<String> = t.forbidden_tools.iter().filter(|x| called.contains(x)).cloned().collect();
            let note = (!used.is_empty()).then(|| format!("called: {}", list(&used)));
            checks.push(Check {
                kind: "forbidden tools",
                pattern: None,
                what: list(&t.forbidden_tools).into(),
                verdict: d.forbidden_tools_clean,
                note,
            });
        }
    } else {
        // The task is not in the current suite: the lists are unknown, the verdicts are not.
        let unknown: Arc<str> = "(the task is not in the current suite)".into();
        checks.push(Check {
            kind: "expected tools",
            what: unknown.clone(),
            pattern: None,
            verdict: d.expected_tools_met,
            note: None,
        });
        checks.push(Check {
            kind: "forbidden tools",
            what: unknown,
            pattern: None,
            verdict: d.forbidden_tools_clean,
            note: None,
        });
    }
    let plain = crate::checks::explain::Explainer::default();
    let explainer = task.map_or(&plain, |t| &*t.explainer);
    for matcher in d.matcher_details.iter().flatten().take(MAX_LISTED) {
        checks.push(matcher_check(matcher, explainer, memo));
    }
    for (i, a) in d.vault_assertion_details.iter().flatten().take(MAX_LISTED).enumerate() {
        // The task's own assertion, where the run recorded the same kind at
        // the same place: it reads in words; otherwise what the run recorded.
        let defined = task.and_then(|t| t.vault_assertions.get(i)).filter(|def| {
            serde_json::to_value(def).ok().and_then(|v| v.get("type").cloned()) == a.kind.clone().map(Into::into)
        });
        let what = match defined {
            Some(def) => explainer.assertion(def),
            None => format!("{} {}", a.kind.as_deref().unwrap_or(UNKNOWN), a.path.as_deref().unwrap_or("")),
        };
        checks.push(Check {
            kind: "vault assertion",
            what: Shown::new(&what, VALUE_CHARS).text.into(),
            pattern: None,
            verdict: a.ok,
            note: a.reason.as_deref().filter(|s| !s.is_empty()).map(|s| Shown::new(s, VALUE_CHARS).text),
        });
    }
    let budget = task.and_then(|t| t.tool_call_budget);
    if budget.is_some() || d.tool_budget_ok == Some(false) {
        checks.push(Check {
            kind: "tool budget",
            pattern: None,
            what: match budget {
                Some(b) => format!("at most {b} tool calls ({} made)", number(m.tool_calls, 0)),
                None => format!("{} tool calls made", number(m.tool_calls, 0)),
            }
            .into(),
            verdict: d.tool_budget_ok,
            note: None,
        });
    }
    let failed_on = if r.solved == Some(true) {
        String::new()
    } else {
        failed_kinds(r).into_iter().map(|k| FAILURE_KINDS[k]).collect::<Vec<_>>().join(", ")
    };
    RunView {
        n,
        passed: r.passed == Some(true),
        solved: r.solved == Some(true),
        ending: ending(r, transcript_reason),
        checks,
        failed_on,
        response: Shown::new(r.response_text.as_deref().unwrap_or(""), RESPONSE_CHARS),
        errors: r.errors.iter().flatten().take(MAX_LISTED).map(|e| Shown::new(e, ERROR_CHARS)).collect(),
        tools: called.iter().take(MAX_LISTED).map(|t| Shown::new(t, 200).text).collect(),
        turns: number(m.turns, 0),
        tool_calls: number(m.tool_calls, 0),
        prompt_tokens: number(m.prompt_tokens, 0),
        cached_tokens: number(m.cached_tokens, 0),
        output_tokens: number(m.output_tokens, 0),
        cost_usd: number(m.cost_usd, 6),
        duration: m.duration_ms.filter(|x| x.is_finite()).map_or_else(|| MISSING.into(), seconds),
        transcript,
    }
}

/// A matcher as a run recorded it, in words (`checks::explain`: the rule
/// and the value it looked for), with the pattern itself kept apart for
/// whoever wants to read it.
/// The words and pattern of each matcher a task's runs recorded, made once
/// per task and shared by its runs (a baseline's runs repeat them k times).
type CheckWords = HashMap<String, (Arc<str>, Option<Arc<str>>)>;

fn matcher_check(m: &MatcherHeadline, explainer: &crate::checks::explain::Explainer, memo: &mut CheckWords) -> Check {
    let key = format!("{:?}\0{:?}\0{:?}\0{:?}", m.kind, m.value, m.flags, m.criteria);
    let (what, pattern) = memo.entry(key).or_insert_with(|| matcher_words(m, explainer)).clone();
    Check {
        kind: matcher_kind(m),
        what,
        pattern,
        verdict: m.verdict,
        note: m.error.as_deref().map(|e| Shown::new(e, VALUE_CHARS).text),
    }
}

/// The kind of check a recorded matcher is, as a check's `kind` names it.
fn matcher_kind(m: &MatcherHeadline) -> &'static str {
    match m.kind.as_deref() {
        Some("contains") => "contains",
        Some("regex") => "regex",
        Some("judge") => "judge",
        _ => "matcher",
    }
}

fn matcher_words(m: &MatcherHeadline, explainer: &crate::checks::explain::Explainer) -> (Arc<str>, Option<Arc<str>>) {
    use crate::format::OneOrMany;
    use crate::format::task::Matcher;
    let values = || match &m.value {
        Some(serde_json::Value::String(s)) => Some(OneOrMany::One(s.clone())),
        Some(serde_json::Value::Array(items)) => Some(OneOrMany::Many(
            items.iter().map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string)).collect(),
        )),
        Some(other) => Some(OneOrMany::One(other.to_string())),
        None => None,
    };
    let matcher = match matcher_kind(m) {
        "contains" => values().map(|value| Matcher::Contains { value }),
        "regex" => values().map(|value| Matcher::Regex { value, flags: m.flags.clone() }),
        "judge" => m.criteria.clone().map(|criteria| Matcher::Judge { criteria }),
        _ => None,
    };
    let pattern = match &matcher {
        Some(Matcher::Regex { value, flags }) => {
            let flags = flags.as_deref().unwrap_or("");
            Some(value.as_slice().iter().map(|p| format!("/{p}/{flags}")).collect::<Vec<_>>().join(" | "))
        }
        _ => None,
    };
    let what = matcher.as_ref().map_or_else(String::new, |x| explainer.matcher(x));
    (Shown::new(&what, VALUE_CHARS).text.into(), pattern.map(|p| Shown::new(&p, VALUE_CHARS).text.into()))
}

fn shorten_list(items: &[String]) -> String {
    let shown: Vec<String> = items.iter().take(20).map(|t| Shown::new(t, 100).text).collect();
    let more = items.len().saturating_sub(20);
    if more > 0 { format!("{} and {more} more", shown.join(", ")) } else { shown.join(", ") }
}

/// Solve figures per category, in order of first appearance.
fn categories(tasks: &[TaskHeadline]) -> Vec<CategoryRow> {
    #[derive(Default)]
    struct Tally {
        tasks: usize,
        solve_k: usize,
        solved_runs: u64,
        runs: u64,
        rates: Vec<f64>,
    }
    let mut order: Vec<String> = Vec::new();
    let mut tallies: HashMap<String, Tally> = HashMap::new();
    for t in tasks {
        let category = t.category.clone().unwrap_or_else(|| MISSING.into());
        if !tallies.contains_key(&category) {
            order.push(category.clone());
        }
        let tally = tallies.entry(category).or_default();
        let (n, solved) = (t.n_runs.unwrap_or(0), t.solved_count.unwrap_or(0));
        tally.tasks += 1;
        tally.solve_k += usize::from(t.solve_k.unwrap_or(false));
        tally.solved_runs += u64::from(solved.min(n));
        tally.runs += u64::from(n);
        if n > 0 {
            tally.rates.push(f64::from(solved.min(n)) / f64::from(n) * 100.0);
        }
    }
    order
        .into_iter()
        .map(|category| {
            let t = &tallies[&category];
            let mean = (!t.rates.is_empty()).then(|| t.rates.iter().sum::<f64>() / t.rates.len() as f64);
            CategoryRow {
                tasks: t.tasks,
                solve_k: format!("{}/{}", t.solve_k, t.tasks),
                solve_k_rate: rate(Some(t.solve_k as f64 / t.tasks as f64 * 100.0)),
                solved_runs: format!("{}/{}", t.solved_runs, t.runs),
                mean_solve_rate: rate(mean),
                category,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::publish::load::baselines;
    use std::path::PathBuf;

    fn baseline(json: &str) -> Baseline {
        Baseline {
            path: PathBuf::from("b/x.json"),
            stem: "x".into(),
            headline: baselines::parse_partial(json),
            digest: 0,
        }
    }

    #[test]
    fn page_keys_are_file_names_unique_without_case() {
        let keys = page_keys(["a", "A", "../x y", "", "index", "a", &"z".repeat(300)]);
        assert_eq!(keys[..6], ["a", "A-2", "---x-y", "task", "index-2", "a-3"]);
        assert_eq!(keys[6].len(), MAX_KEY);
    }

    #[test]
    fn shown_cuts_on_characters_and_counts_the_rest() {
        assert_eq!(Shown::new("héllo", 10), Shown { text: "héllo".into(), omitted: 0 });
        assert_eq!(Shown::new("héllo", 2), Shown { text: "hé".into(), omitted: 3 });
    }

    #[test]
    fn endings_follow_errors_then_the_recorded_reason_then_the_transcript() {
        let run = |json: &str| -> RunHeadline { serde_json::from_str(json).unwrap() };
        let key = |json: &str, t: Option<&str>| ending(&run(json), t).key;
        assert_eq!(key(r#"{"passed": true}"#, None), "answered");
        assert_eq!(key(r#"{"passed": false, "timedOut": true}"#, None), "timed_out");
        assert_eq!(key(r#"{"passed": false, "endReason": "turn_limit"}"#, None), "turn_limit");
        assert_eq!(key(r#"{"passed": false, "endReason": "context_exceeded"}"#, None), "context_exceeded");
        assert_eq!(key(r#"{"passed": false, "errors": ["boom"], "timedOut": true}"#, None), "harness_error");
        assert_eq!(key(r#"{"passed": false}"#, Some("turn_limit")), "turn_limit");
        assert_eq!(key(r#"{"passed": false}"#, None), "unknown");
        let odd = ending(&run(r#"{"endReason": "<b>"}"#), None);
        assert_eq!((odd.key, odd.label.as_str()), ("unknown", "ended: <b>"));
    }

    #[test]
    fn the_breakdown_counts_each_failed_check_of_unsolved_runs() {
        let b = baseline(
            r#"{"model": "m", "tasks": [
              {"id": "t1", "category": "edit", "n_runs": 2, "solved_count": 1, "solve_k": false, "runs": [
                {"passed": true, "solved": true, "solve_details": {"expected_tools_met": true}},
                {"passed": true, "solved": false, "solve_details": {"expected_tools_met": false, "tool_budget_ok": false,
                  "matcher_details": [{"type": "regex", "value": "a+", "flags": "i", "verdict": false},
                                      {"type": "contains", "value": ["x", "y"], "verdict": true}]}}]},
              {"id": "t2", "category": "edit", "n_runs": 1, "solved_count": 1, "solve_k": true, "runs": [
                {"passed": true, "solved": true}]},
              {"id": "t3", "category": "recall", "n_runs": 1, "solved_count": 0, "solve_k": false, "runs": [
                {"passed": false, "solved": false, "timedOut": true,
                 "solve_details": {"vault_assertion_details": [{"type": "fileExists", "path": "a.md", "ok": false, "reason": "missing"}]}}]}
            ]}"#,
        );
        let out = baseline_runs(&b, &SuiteView::empty("t".into()), None);
        assert_eq!(out.unsolved, 2);
        let kinds: Vec<(&str, usize)> = out.failures.iter().map(|f| (f.kind, f.runs)).collect();
        assert_eq!(
            kinds,
            [("did not pass", 1), ("expected tools", 1), ("regex", 1), ("vault assertion", 1), ("tool budget", 1)]
        );
        assert_eq!(out.failures[1].links[0].label, "t1 #2");
        assert_eq!(out.failures[1].links[0].page, "baselines/x/t1.html");
        let run = &out.tasks[0].runs[1];
        assert_eq!(run.failed_on, "expected tools, regex, tool budget");
        let regex = run.checks.iter().find(|c| c.kind == "regex").unwrap();
        // In words, the pattern kept apart.
        assert_eq!((&*regex.what, regex.verdict), ("the text matches /a+/i", Some(false)));
        assert_eq!(regex.pattern.as_deref(), Some("/a+/i"));
        let contains = run.checks.iter().find(|c| c.kind == "contains").unwrap();
        assert!(
            contains.what.contains("x") && contains.what.contains("y") && contains.pattern.is_none(),
            "{}",
            contains.what
        );
        assert_eq!(out.tasks[2].runs[0].ending.key, "timed_out");
        let cats: Vec<(&str, &str, &str)> = out
            .categories
            .iter()
            .map(|c| (c.category.as_str(), c.solve_k.as_str(), c.mean_solve_rate.as_str()))
            .collect();
        assert_eq!(cats, [("edit", "1/2", "75.0%"), ("recall", "0/1", "0.0%")]);
    }
}
