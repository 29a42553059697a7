//! `suite check`: beyond validating every task, run agents through the real
//! agent loop and tools and see whether each rubric tells right from wrong:
//!
//! - the task's reference trajectory, which must solve it;
//! - the `silent` and `dump` adversaries (see `provider::adversary`), which
//!   must not: a task either solves has a rubric too weak to mean anything;
//! - every alternative answer of the corpus (`suite::corpus`): a correct one
//!   that fails is a false negative, a wrong one that solves a false positive.
//!
//! Verdicts are first those of the literal checks alone (tools, contains,
//! regex, vault assertions, budget): judge matchers never count as passing
//! silently. A wrong answer that only a judge matcher could reject is a false
//! positive of the literal checks, and its task is listed as one where only
//! the judge separates right from wrong, with the reason its check source
//! gives (`judge.why`): such answers are left to the judge and reported
//! apart; in a task whose source gives no reason they fail the check. With a
//! judge configured, its verdicts are reported beside them: a judge NO on a
//! correct answer is a false negative, a judge YES on a wrong answer left to
//! it a false positive.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use tokio::task::JoinSet;

use super::Scratch;
use super::cell::{self, CellEnv};
use crate::agent::transcript::Event;
use crate::checks::explain::Explainer;
use crate::format::alternative::{Label, Origin, Source};
use crate::format::reference::{Reference, ReferenceStep};
use crate::format::result::{EndReason, MatcherDetail, RunRecord};
use crate::format::task::Task;
use crate::limits::Limits;
use crate::pricing::Pricing;
use crate::provider::Model;
use crate::provider::adversary::Adversary;
use crate::provider::reference::{self, ReferenceModel};
use crate::score::Judge;
use crate::suite::Suite;
use crate::suite::corpus::Corpus;
use crate::vault::Toolbox;

/// What the literal checks (everything but judge matchers) said about one run.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Solved,
    /// Not solved, with every failing literal check.
    Unsolved(String),
    /// The agent could not run (e.g. no reference trajectory).
    Missing(String),
}

/// One run's verdicts.
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    pub literal: Verdict,
    /// Whether every judge matcher said YES; `None` when nothing was judged
    /// (no judge configured, no judge matcher, or the run did not pass).
    pub judge: Option<bool>,
    /// The judge's NOs and failed calls, as a person would read them.
    pub judge_why: String,
    /// Tool calls that answered with an error: `step N tool: error`.
    pub tool_errors: Vec<String>,
}

impl Replay {
    fn missing(why: String) -> Replay {
        Replay { literal: Verdict::Missing(why), judge: None, judge_why: String::new(), tool_errors: vec![] }
    }

    pub fn literal_solved(&self) -> bool {
        self.literal == Verdict::Solved
    }
}

#[derive(Debug, Clone)]
pub struct TaskCheck {
    pub id: String,
    pub has_judge: bool,
    pub reference: Replay,
    pub silent: Replay,
    pub dump: Replay,
}

impl TaskCheck {
    /// One line per problem: the reference fails, or an adversary wins.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        match &self.reference.literal {
            Verdict::Solved if self.reference.judge == Some(false) => {
                out.push(format!("{}: the judge rejects the reference: {}", self.id, self.reference.judge_why))
            }
            Verdict::Solved => {}
            Verdict::Unsolved(why) => out.push(format!("{}: the reference does not solve it: {why}", self.id)),
            Verdict::Missing(why) => out.push(format!("{}: {why}", self.id)),
        }
        for (name, v) in [("silent", &self.silent), ("dump", &self.dump)] {
            if v.literal_solved() {
                let judge = if self.has_judge { " (only a judge matcher could stop it)" } else { "" };
                out.push(format!("{}: weak rubric: the {name} agent solves it{judge}", self.id));
            }
        }
        out
    }
}

/// One alternative answer and how the rubric took it.
#[derive(Debug, Clone)]
pub struct AlternativeCheck {
    pub task_id: String,
    pub name: String,
    pub origin: Origin,
    pub label: Label,
    pub kind: String,
    pub has_judge: bool,
    /// Why only the judge can reject some wrong answers of the task, as its
    /// check source says (`judge.why`); `None` when it does not.
    pub judge_only: Option<String>,
    pub replay: Replay,
}

impl AlternativeCheck {
    /// A correct answer the literal checks fail.
    pub fn literal_false_negative(&self) -> bool {
        self.label == Label::Correct && !self.replay.literal_solved()
    }

    /// A wrong answer the literal checks let through.
    pub fn literal_false_positive(&self) -> bool {
        self.label == Label::Wrong && self.replay.literal_solved()
    }

    /// A wrong answer the literal checks let through in a task whose source
    /// says only the judge can tell: it is the judge's to reject.
    pub fn left_to_judge(&self) -> bool {
        self.literal_false_positive() && self.has_judge && self.judge_only.is_some()
    }

    /// A wrong answer that gets through: past the literal checks, and not
    /// left to the judge (or left to it and let through by it too).
    pub fn false_positive(&self) -> bool {
        self.literal_false_positive() && (!self.left_to_judge() || self.replay.judge == Some(true))
    }

    /// A correct answer the literal checks pass and the judge rejects.
    pub fn judge_false_negative(&self) -> bool {
        self.label == Label::Correct && self.replay.literal_solved() && self.replay.judge == Some(false)
    }

    fn describe(&self) -> String {
        format!("{} answer `{}` ({}, {})", self.label.as_str(), self.name, self.origin, self.kind)
    }

    pub fn problem(&self) -> Option<String> {
        if self.literal_false_negative() {
            let why = match &self.replay.literal {
                Verdict::Unsolved(why) | Verdict::Missing(why) => why.as_str(),
                Verdict::Solved => "",
            };
            let errors = if self.replay.tool_errors.is_empty() {
                String::new()
            } else {
                format!(" [its tool errors: {}]", self.replay.tool_errors.join("; "))
            };
            Some(format!("{}: false negative: {} is not solved: {why}{errors}", self.task_id, self.describe()))
        } else if self.judge_false_negative() {
            Some(format!(
                "{}: false negative: the judge rejects {}: {}",
                self.task_id,
                self.describe(),
                self.replay.judge_why
            ))
        } else if self.left_to_judge() && self.replay.judge != Some(true) {
            None
        } else if self.literal_false_positive() {
            let judge = match (self.has_judge, self.replay.judge) {
                (false, _) => "",
                (true, None) => {
                    " (only a judge matcher could reject it; not judged, and the check source gives no judge.why)"
                }
                (true, Some(false)) => " (only the judge rejects it, and the check source gives no judge.why)",
                (true, Some(true)) => " (and the judge says YES)",
            };
            Some(format!("{}: false positive: {} solves it{judge}", self.task_id, self.describe()))
        } else {
            None
        }
    }
}

#[derive(Debug, Clone)]
pub struct CheckReport {
    pub tasks: Vec<TaskCheck>,
    /// No judge was configured: judge matchers were not evaluated.
    pub judge_unchecked: bool,
    pub judge_matcher_tasks: usize,
    /// `None` when the suite has no corpus.
    pub corpus: Option<CorpusCheck>,
    /// Steps of references and alternatives whose arguments a tool does not take.
    pub argument_problems: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct CorpusCheck {
    pub dir: std::path::PathBuf,
    pub alternatives: Vec<AlternativeCheck>,
    pub coverage_gaps: Vec<String>,
}

/// False-negative and false-positive counts for one group of alternatives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rates {
    pub correct: usize,
    pub false_negatives: usize,
    pub wrong: usize,
    /// Wrong answers that get through (see [`AlternativeCheck::false_positive`]).
    pub false_positives: usize,
    /// Wrong answers past the literal checks, left to the judge.
    pub left_to_judge: usize,
}

impl Rates {
    fn add(&mut self, a: &AlternativeCheck) {
        match a.label {
            Label::Correct => {
                self.correct += 1;
                self.false_negatives += usize::from(a.literal_false_negative());
            }
            Label::Wrong => {
                self.wrong += 1;
                self.false_positives += usize::from(a.false_positive());
                self.left_to_judge += usize::from(a.left_to_judge() && !a.false_positive());
            }
        }
    }
}

/// `n/d (p%)`, one decimal.
fn rate(n: usize, d: usize) -> String {
    if d == 0 { format!("{n}/{d}") } else { format!("{n}/{d} ({:.1}%)", 100.0 * n as f64 / d as f64) }
}

impl CorpusCheck {
    /// The literal rates of every alternative, per source, and per source
    /// and round (blind rounds are measured apart: see [`Origin`]).
    pub fn rates(&self) -> (Rates, BTreeMap<Source, Rates>, BTreeMap<Origin, Rates>) {
        let mut all = Rates::default();
        let mut by_source: BTreeMap<Source, Rates> = BTreeMap::new();
        let mut by_origin: BTreeMap<Origin, Rates> = BTreeMap::new();
        for a in &self.alternatives {
            all.add(a);
            by_source.entry(a.origin.source).or_default().add(a);
            by_origin.entry(a.origin).or_default().add(a);
        }
        (all, by_source, by_origin)
    }

    /// Tasks with a judge matcher where some wrong answer passes every literal
    /// check: only the judge can tell it from a right one. Each with the
    /// reason its source gives, if any, and how many wrong answers.
    /// Tasks whose source says why only the judge can tell are listed even
    /// when no wrong answer of the corpus needs it (a count of 0).
    pub fn judge_only_tasks(&self) -> Vec<(&str, Option<&str>, usize)> {
        let mut out: Vec<(&str, Option<&str>, usize)> = Vec::new();
        for a in
            self.alternatives.iter().filter(|a| a.has_judge && (a.literal_false_positive() || a.judge_only.is_some()))
        {
            let n = usize::from(a.literal_false_positive());
            match out.last_mut() {
                Some(last) if last.0 == a.task_id => last.2 += n,
                _ => out.push((a.task_id.as_str(), a.judge_only.as_deref(), n)),
            }
        }
        out
    }

    pub fn problems(&self) -> Vec<String> {
        let mut out: Vec<String> = self.coverage_gaps.iter().map(|g| format!("corpus: {g}")).collect();
        out.extend(self.alternatives.iter().filter_map(AlternativeCheck::problem));
        out
    }
}

impl CheckReport {
    pub fn problems(&self) -> Vec<String> {
        let mut out: Vec<String> = self.tasks.iter().flat_map(TaskCheck::problems).collect();
        out.extend(self.argument_problems.iter().cloned());
        if let Some(c) = &self.corpus {
            out.extend(c.problems());
        }
        out
    }

    pub fn ok(&self) -> bool {
        self.problems().is_empty()
    }
}

/// Every check that failed on a run, in words (the rule and its value, from
/// the task's check source where it has one); judge matchers only when
/// `with_judge`.
pub fn failing_checks(task: &Task, record: &RunRecord, with_judge: bool, explain: &Explainer) -> String {
    let mut why = Vec::new();
    if !record.errors.is_empty() {
        why.push(format!("harness error: {}", record.errors.join("; ")));
    } else if record.timed_out == Some(true) {
        why.push(format!("timed out after timeoutMs = {}", task.timeout_ms));
    } else if record.end_reason == Some(EndReason::ContextExceeded) {
        why.push("the conversation outgrew the model's context window".to_string());
    } else if !record.passed {
        why.push(format!("no final answer within maxTurns = {}", task.max_turns));
    }
    let d = &record.solve_details;
    let called = &record.metrics.tool_list;
    let missing: Vec<&str> = task.expected_tools.iter().filter(|t| !called.contains(t)).map(String::as_str).collect();
    if !missing.is_empty() {
        why.push(format!("expected tools not called: {}", missing.join(", ")));
    }
    let forbidden: Vec<&str> = task.forbidden_tools.iter().filter(|t| called.contains(t)).map(String::as_str).collect();
    if !forbidden.is_empty() {
        why.push(format!("forbidden tools called: {}", forbidden.join(", ")));
    }
    for m in d.matcher_details.iter().filter(|m| !m.verdict()) {
        why.push(match m {
            MatcherDetail::Judge { .. } if !with_judge => continue,
            MatcherDetail::Judge { criteria, error: Some(e), .. } => format!("judge call failed ({e}) on {criteria:?}"),
            MatcherDetail::Judge { criteria, .. } => format!("judge said NO to {criteria:?}"),
            MatcherDetail::Regex { error: Some(e), .. } => format!("not met: {} ({e})", explain.detail(m)),
            _ => format!("not met: {}", explain.detail(m)),
        });
    }
    // The details are in the task's order: each names its assertion.
    for (a, detail) in task.vault_assertions.iter().zip(&d.vault_assertion_details).filter(|(_, d)| !d.ok) {
        why.push(format!("not met: {} ({})", explain.assertion(a), detail.reason));
    }
    if !d.tool_budget_ok {
        why.push(format!(
            "{} tool calls exceed toolCallBudget {}",
            record.metrics.tool_calls,
            task.tool_call_budget.unwrap_or(0)
        ));
    }
    if why.is_empty() { "not solved".into() } else { why.join("; ") }
}

/// Arguments a step passes that its tool does not declare: the tools ignore
/// unknown keys, so a misspelt one would silently turn the call into an error.
pub fn unknown_arguments(toolbox: &Toolbox, steps: &[ReferenceStep]) -> Vec<String> {
    let specs = toolbox.specs();
    let mut out = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let (Some(spec), Some(args)) = (specs.iter().find(|s| s.name == step.tool), step.args.as_object()) else {
            continue;
        };
        let known: Vec<&str> = spec.parameters["properties"]
            .as_object()
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        for key in args.keys().filter(|k| !known.contains(&k.as_str())) {
            out.push(format!(
                "steps[{i}]: `{}` has no argument `{key}` (it takes: {})",
                step.tool,
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            ));
        }
    }
    out
}

#[derive(Clone)]
enum Agent {
    Reference,
    Adversary(Adversary),
    /// The n-th entry of the corpus.
    Alternative(usize, Reference),
}

/// The tool errors of a run, `step N tool: message`.
fn tool_errors(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCall { turn, name, success: false, result, .. } => {
                let message = result.get("error").and_then(Value::as_str).unwrap_or("error");
                Some(format!("step {turn} {name}: {message}"))
            }
            _ => None,
        })
        .collect()
}

struct Shared {
    root: std::path::PathBuf,
    /// Each task's checks in words, from its check source.
    explainers: std::collections::HashMap<String, Explainer>,
    toolbox: Toolbox,
    references: std::path::PathBuf,
    judge: Option<Arc<dyn Judge>>,
    /// Where temporary vaults are made.
    scratch: Arc<Scratch>,
}

async fn replay(shared: &Shared, task: &Task, agent: Agent) -> Replay {
    let model: Arc<dyn Model> = match agent {
        Agent::Reference => match reference::load(&shared.references, &task.id) {
            Ok(r) => Arc::new(ReferenceModel::new(r, "reference")),
            Err(e) => return Replay::missing(format!("{e:#}")),
        },
        Agent::Adversary(adv) => Arc::new(adv),
        Agent::Alternative(_, r) => Arc::new(ReferenceModel::new(r, "alternative")),
    };
    let env = CellEnv {
        suite_root: &shared.root,
        scratch: shared.scratch.path(),
        toolbox: &shared.toolbox,
        pricing: &Pricing::Free,
        judge: shared.judge.as_deref(),
        max_output_tokens: None,
        limits: &Limits::default(),
    };
    let out = cell::run(&env, task, model.as_ref(), None).await;
    let record = &out.record;
    let details = &record.solve_details;
    let literal = if record.passed && details.literal_checks_hold() {
        Verdict::Solved
    } else {
        Verdict::Unsolved(failing_checks(task, record, false, &shared.explainers[&task.id]))
    };
    let judged: Vec<&MatcherDetail> =
        details.matcher_details.iter().filter(|m| matches!(m, MatcherDetail::Judge { .. })).collect();
    let judge = (shared.judge.is_some() && !judged.is_empty()).then(|| judged.iter().all(|m| m.verdict()));
    let judge_why = judged
        .iter()
        .filter(|m| !m.verdict())
        .map(|m| match m {
            MatcherDetail::Judge { criteria, error: Some(e), .. } => format!("judge call failed ({e}) on {criteria:?}"),
            MatcherDetail::Judge { criteria, .. } => format!("judge said NO to {criteria:?}"),
            _ => String::new(),
        })
        .collect::<Vec<_>>()
        .join("; ");
    Replay { literal, judge, judge_why, tool_errors: tool_errors(&out.transcript.events) }
}

/// Run every agent on every task, `jobs` runs at a time, their temporary
/// vaults in `scratch`.
pub async fn check(
    suite: &Suite,
    references: &Path,
    corpus: Option<&Corpus>,
    judge: Option<Arc<dyn Judge>>,
    jobs: usize,
    scratch: Arc<Scratch>,
) -> CheckReport {
    let judge_unchecked = judge.is_none();
    let toolbox = Toolbox::standard();
    let mut argument_problems = Vec::new();
    for task in &suite.tasks {
        if let Ok(r) = reference::load(references, &task.id) {
            for p in unknown_arguments(&toolbox, &r.steps) {
                argument_problems.push(format!("{}: reference {p}", task.id));
            }
        }
    }
    for e in corpus.iter().flat_map(|c| &c.entries) {
        for p in unknown_arguments(&toolbox, &e.alternative.steps) {
            argument_problems.push(format!("{}: {} {p}", e.task_id, e.path.display()));
        }
    }
    let compiled: std::collections::HashMap<&str, Option<crate::checks::compile::Compiled>> = suite
        .tasks
        .iter()
        .map(|t| (t.id.as_str(), crate::suite::compile::compile_task(&suite.root, t).and_then(Result::ok)))
        .collect();
    let judge_only = |id: &str| compiled.get(id).and_then(|c| c.as_ref()).and_then(|c| c.judge_only.clone());
    let explainers = compiled.iter().map(|(id, c)| (id.to_string(), Explainer::new(c.clone()))).collect();
    let shared = Arc::new(Shared {
        root: suite.root.clone(),
        explainers,
        toolbox,
        references: references.to_path_buf(),
        judge,
        scratch,
    });

    // (task index, agent) for every run; the key orders the results.
    let mut runs: Vec<(usize, Agent)> = Vec::new();
    for (t, task) in suite.tasks.iter().enumerate() {
        runs.push((t, Agent::Reference));
        runs.extend(Adversary::ALL.into_iter().map(|a| (t, Agent::Adversary(a))));
        if let Some(c) = corpus {
            for (i, e) in c.entries.iter().enumerate().filter(|(_, e)| e.task_id == task.id) {
                runs.push((t, Agent::Alternative(i, e.alternative.trajectory())));
            }
        }
    }
    let mut results: Vec<Option<Replay>> = vec![None; runs.len()];
    let mut running = JoinSet::new();
    // Which slot each task fills, to report a run that panicked.
    let mut slots = std::collections::HashMap::new();
    let mut queue = runs.iter().cloned().enumerate();
    loop {
        while running.len() < jobs.max(1) {
            let Some((slot, (t, agent))) = queue.next() else { break };
            let task = suite.tasks[t].clone();
            let shared = shared.clone();
            let handle = running.spawn(async move { (slot, replay(&shared, &task, agent).await) });
            slots.insert(handle.id(), slot);
        }
        match running.join_next().await {
            Some(Ok((slot, r))) => results[slot] = Some(r),
            Some(Err(e)) => {
                let what = if e.is_panic() { "crashed (a fault in vaultbench)" } else { "was cancelled" };
                results[slots[&e.id()]] = Some(Replay::missing(format!("the run {what}: {e}")));
            }
            None => break,
        }
    }

    let mut by_task: BTreeMap<usize, [Option<Replay>; 3]> = BTreeMap::new();
    let mut alternatives = Vec::new();
    for ((t, agent), result) in runs.into_iter().zip(results) {
        let result = result.expect("every run reports");
        let slots = by_task.entry(t).or_default();
        match agent {
            Agent::Reference => slots[0] = Some(result),
            Agent::Adversary(Adversary::Silent) => slots[1] = Some(result),
            Agent::Adversary(Adversary::Dump) => slots[2] = Some(result),
            Agent::Alternative(i, _) => {
                let e = &corpus.expect("alternatives come from the corpus").entries[i];
                alternatives.push(AlternativeCheck {
                    task_id: e.task_id.clone(),
                    name: e.name.clone(),
                    origin: e.alternative.origin(),
                    label: e.alternative.label,
                    kind: e.alternative.kind.clone(),
                    has_judge: suite.tasks[t].has_judge_matcher(),
                    judge_only: judge_only(&suite.tasks[t].id),
                    replay: result,
                });
            }
        }
    }
    let tasks = by_task
        .into_iter()
        .map(|(t, [reference, silent, dump])| TaskCheck {
            id: suite.tasks[t].id.clone(),
            has_judge: suite.tasks[t].has_judge_matcher(),
            reference: reference.expect("every task has a reference run"),
            silent: silent.expect("every task has a silent run"),
            dump: dump.expect("every task has a dump run"),
        })
        .collect();
    CheckReport {
        tasks,
        judge_unchecked,
        judge_matcher_tasks: suite.tasks.iter().filter(|t| t.has_judge_matcher()).count(),
        corpus: corpus.map(|c| CorpusCheck { dir: c.dir.clone(), alternatives, coverage_gaps: c.coverage_gaps(suite) }),
        argument_problems,
    }
}

/// The console report: counts, the corpus rates, then a line per problem.
pub fn render(suite: &Suite, references: &Path, report: &CheckReport) -> String {
    let mut s = String::new();
    let n = suite.tasks.len();
    let _ = writeln!(s, "{n} task{} in {}", if n == 1 { "" } else { "s" }, suite.root.display());
    let mut tiers = BTreeMap::new();
    let mut categories = BTreeMap::new();
    for t in &suite.tasks {
        *tiers.entry(t.difficulty.as_str()).or_insert(0) += 1;
        *categories.entry(t.category.as_str()).or_insert(0) += 1;
    }
    let list = |m: &BTreeMap<&str, i32>| m.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ");
    let _ = writeln!(s, "tiers: {}", list(&tiers));
    let _ = writeln!(s, "categories: {}", list(&categories));
    let n = report.tasks.len();
    let solved = report.tasks.iter().filter(|t| t.reference.literal_solved()).count();
    let silent = report.tasks.iter().filter(|t| t.silent.literal_solved()).count();
    let dump = report.tasks.iter().filter(|t| t.dump.literal_solved()).count();
    let _ = writeln!(s, "references ({}): {solved}/{n} solve their task", references.display());
    let _ = writeln!(s, "adversaries: silent solves {silent}/{n}, dump solves {dump}/{n} (both must solve none)");
    if report.judge_matcher_tasks > 0 {
        if report.judge_unchecked {
            let _ = writeln!(
                s,
                "judge matchers: not judged (no judge configured) in {} tasks; every verdict here is that of the \
                 literal checks alone",
                report.judge_matcher_tasks
            );
        } else {
            let _ = writeln!(
                s,
                "judge matchers: judged in {} tasks; verdicts are those of the literal checks, with the judge's beside them",
                report.judge_matcher_tasks
            );
        }
    }
    match &report.corpus {
        None => {
            let _ = writeln!(
                s,
                "alternative answers: none (no {} folder): false negative and false positive rates not measured",
                crate::suite::corpus::Corpus::default_dir(&suite.root).display()
            );
        }
        Some(c) => render_corpus(&mut s, c, !report.judge_unchecked),
    }
    let problems = report.problems();
    for p in &problems {
        let _ = writeln!(s, "FAIL {p}");
    }
    if problems.is_empty() {
        let _ = writeln!(s, "suite check passed");
    } else {
        let _ =
            writeln!(s, "suite check failed: {} problem{}", problems.len(), if problems.len() == 1 { "" } else { "s" });
    }
    s
}

fn render_corpus(s: &mut String, c: &CorpusCheck, judged: bool) {
    let (all, by_source, by_origin) = c.rates();
    let tasks = {
        let mut ids: Vec<&str> = c.alternatives.iter().map(|a| a.task_id.as_str()).collect();
        ids.dedup();
        ids.len()
    };
    let _ = writeln!(
        s,
        "alternative answers ({}): {} in {tasks} task{}, {} correct and {} wrong",
        c.dir.display(),
        c.alternatives.len(),
        if tasks == 1 { "" } else { "s" },
        all.correct,
        all.wrong
    );
    let line = |label: &str, r: &Rates| {
        let left =
            if r.left_to_judge > 0 { format!(", {} more left to the judge", r.left_to_judge) } else { String::new() };
        format!(
            "  {label}: false negatives {} (correct answers not solved), false positives {} (wrong answers solved){left}\n",
            rate(r.false_negatives, r.correct),
            rate(r.false_positives, r.wrong)
        )
    };
    s.push_str(&line("all", &all));
    for (source, r) in &by_source {
        s.push_str(&line(source.as_str(), r));
        // A source written in several rounds: each round apart too.
        let rounds: Vec<(&Origin, &Rates)> = by_origin.iter().filter(|(o, _)| o.source == *source).collect();
        if rounds.len() > 1 {
            for (origin, r) in rounds {
                s.push_str(&line(&origin.to_string(), r));
            }
        }
    }
    if judged {
        let judged: Vec<&AlternativeCheck> = c.alternatives.iter().filter(|a| a.replay.judge.is_some()).collect();
        let agree = judged.iter().filter(|a| a.replay.judge == Some(a.label == Label::Correct)).count();
        let _ = writeln!(s, "  judge: agrees with the label on {}", rate(agree, judged.len()));
    }
    // Per task with a judge matcher: can the literal checks alone tell right from wrong?
    let mut judge_tasks: BTreeMap<&str, (usize, usize, usize, usize)> = BTreeMap::new();
    for a in c.alternatives.iter().filter(|a| a.has_judge) {
        let e = judge_tasks.entry(a.task_id.as_str()).or_default();
        match a.label {
            Label::Correct => {
                e.0 += 1;
                e.1 += usize::from(a.replay.literal_solved());
            }
            Label::Wrong => {
                e.2 += 1;
                e.3 += usize::from(!a.replay.literal_solved());
            }
        }
    }
    if !judge_tasks.is_empty() {
        let _ =
            writeln!(s, "tasks with a judge matcher: do the literal checks alone separate correct from wrong answers?");
        let width = judge_tasks.keys().map(|k| k.len()).max().unwrap_or(0);
        for (id, (correct, solved, wrong, rejected)) in &judge_tasks {
            let separated = if solved == correct && rejected == wrong { "yes" } else { "no" };
            let _ = writeln!(
                s,
                "  {id:<width$}  {separated:<3}  ({solved}/{correct} correct solve, {rejected}/{wrong} wrong fail a literal check)"
            );
        }
    }
    let only = c.judge_only_tasks();
    if only.is_empty() {
        let _ = writeln!(s, "tasks where only the judge separates them: none");
    } else {
        let _ = writeln!(s, "tasks where only the judge separates them ({}):", only.len());
        for (id, why, n) in only {
            let answers = match n {
                0 => "no wrong answer of the corpus needs it".to_string(),
                1 => "1 wrong answer".to_string(),
                n => format!("{n} wrong answers"),
            };
            let why =
                why.unwrap_or("no reason given in its check source (judge.why), so its wrong answers fail the check");
            let _ = writeln!(s, "  {id}: {why} ({answers})");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn alt(label: Label, literal: bool, judge: Option<bool>, has_judge: bool) -> AlternativeCheck {
        AlternativeCheck {
            task_id: "t".into(),
            name: "a".into(),
            origin: Origin { source: Source::Blind, round: Some(1) },
            label,
            kind: "k".into(),
            has_judge,
            judge_only: None,
            replay: Replay {
                literal: if literal { Verdict::Solved } else { Verdict::Unsolved("output lacks \"x\"".into()) },
                judge,
                judge_why: "judge said NO to \"c\"".into(),
                tool_errors: vec![],
            },
        }
    }

    #[test]
    fn classifies_false_negatives_and_positives_by_the_literal_checks() {
        let fn_ = alt(Label::Correct, false, None, false);
        assert!(fn_.literal_false_negative());
        assert!(
            fn_.problem()
                .unwrap()
                .contains("false negative: correct answer `a` (blind round 1, k) is not solved: output lacks")
        );
        let ok = alt(Label::Correct, true, None, true);
        assert!(ok.problem().is_none());
        let judged_out = alt(Label::Correct, true, Some(false), true);
        assert!(judged_out.judge_false_negative() && !judged_out.literal_false_negative());
        assert!(judged_out.problem().unwrap().contains("the judge rejects correct answer"));
        let fp = alt(Label::Wrong, true, None, false);
        assert!(fp.problem().unwrap().ends_with("false positive: wrong answer `a` (blind round 1, k) solves it"));
        let only_judge = alt(Label::Wrong, true, None, true);
        assert!(only_judge.problem().unwrap().contains("(only a judge matcher could reject it; not judged"));
        let judge_saves = alt(Label::Wrong, true, Some(false), true);
        assert!(judge_saves.literal_false_positive());
        assert!(judge_saves.problem().unwrap().contains("(only the judge rejects it, and the check source gives no"));
        // Where the task's source says why only the judge can tell, such an
        // answer is the judge's: no problem unless the judge lets it through.
        let mut left = alt(Label::Wrong, true, None, true);
        left.judge_only = Some("a claim only the judge reads".into());
        assert!(left.left_to_judge() && !left.false_positive() && left.problem().is_none());
        left.replay.judge = Some(false);
        assert!(left.problem().is_none());
        left.replay.judge = Some(true);
        assert!(left.false_positive());
        assert!(left.problem().unwrap().ends_with("(and the judge says YES)"));
        assert!(alt(Label::Wrong, false, Some(true), true).problem().is_none());
    }

    #[test]
    fn rates_count_per_source_and_name_judge_only_tasks() {
        let mut reviewer = alt(Label::Wrong, true, None, true);
        reviewer.origin = Origin { source: Source::Reviewer, round: None };
        reviewer.task_id = "u".into();
        let c = CorpusCheck {
            dir: "alts".into(),
            alternatives: vec![
                alt(Label::Correct, true, None, false),
                alt(Label::Correct, false, None, false),
                alt(Label::Wrong, false, None, false),
                reviewer,
            ],
            coverage_gaps: vec![],
        };
        let (all, by, _) = c.rates();
        assert_eq!(all, Rates { correct: 2, false_negatives: 1, wrong: 2, false_positives: 1, left_to_judge: 0 });
        assert_eq!(
            by[&Source::Blind],
            Rates { correct: 2, false_negatives: 1, wrong: 1, false_positives: 0, left_to_judge: 0 }
        );
        assert_eq!(
            by[&Source::Reviewer],
            Rates { correct: 0, false_negatives: 0, wrong: 1, false_positives: 1, left_to_judge: 0 }
        );
        assert_eq!(c.judge_only_tasks(), [("u", None, 1)]);
        let mut s = String::new();
        render_corpus(&mut s, &c, false);
        assert!(
            s.contains("  all: false negatives 1/2 (50.0%) (correct answers not solved), false positives 1/2 (50.0%)"),
            "{s}"
        );
        assert!(s.contains("  reviewer: false negatives 0/0 (correct"), "{s}");
        assert!(s.contains("  u  no   (0/0 correct solve, 0/1 wrong fail a literal check)"), "{s}");
        assert!(s.contains("tasks where only the judge separates them (1):\n  u: no reason given"), "{s}");
        // With a reason, the answer is left to the judge and counted apart.
        let mut c = c;
        c.alternatives[3].judge_only = Some("a claim only the judge reads".into());
        let (all, _, _) = c.rates();
        assert_eq!((all.false_positives, all.left_to_judge), (0, 1));
        let mut s = String::new();
        render_corpus(&mut s, &c, false);
        assert!(s.contains("(wrong answers solved), 1 more left to the judge"), "{s}");
        assert!(s.contains("  u: a claim only the judge reads (1 wrong answer)"), "{s}");
    }

    #[test]
    fn unknown_arguments_name_the_step_and_the_real_ones() {
        let steps = vec![
            ReferenceStep { tool: "read_file".into(), args: json!({"path": "a.md"}) },
            ReferenceStep { tool: "read_file".into(), args: json!({"file_path": "a.md"}) },
            ReferenceStep { tool: "no_such_tool".into(), args: json!({"x": 1}) },
        ];
        let p = unknown_arguments(&Toolbox::standard(), &steps);
        assert_eq!(p, ["steps[1]: `read_file` has no argument `file_path` (it takes: path)"]);
    }
}
