//! `suite check`: beyond validating every task, run each one three ways
//! through the real agent loop and tools:
//!
//! - its reference trajectory, which must solve it;
//! - the `silent` and `dump` adversaries (see `provider::adversary`), which
//!   must not: a task either solves has a rubric too weak to mean anything.
//!
//! Without a judge, judge matchers are counted as passing for all three and
//! reported as unchecked, so a rubric must defeat the adversaries with its
//! literal checks alone.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;
use std::sync::Arc;

use tokio::task::JoinSet;

use super::cell::{self, CellEnv};
use crate::format::result::{MatcherDetail, RunRecord};
use crate::format::task::Task;
use crate::limits::Limits;
use crate::pricing::Pricing;
use crate::provider::adversary::Adversary;
use crate::provider::reference::{self, ReferenceModel};
use crate::provider::{BoxFuture, Model};
use crate::score::{Judge, JudgeContext};
use crate::suite::Suite;
use crate::vault::Toolbox;

/// Says YES to every criterion: stands in for the judge when none is
/// configured, so only the literal checks decide.
struct Unchecked;

impl Judge for Unchecked {
    fn model_id(&self) -> &str {
        "unchecked"
    }
    fn judge<'a>(&'a self, _criteria: &'a str, _ctx: JudgeContext<'a>) -> BoxFuture<'a, Result<bool, String>> {
        Box::pin(async { Ok(true) })
    }
}

/// How one agent did on one task.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Solved,
    /// Not solved, with every failing check.
    Unsolved(String),
    /// The agent could not run (e.g. no reference trajectory).
    Missing(String),
}

#[derive(Debug, Clone)]
pub struct TaskCheck {
    pub id: String,
    pub reference: Verdict,
    pub silent: Verdict,
    pub dump: Verdict,
}

impl TaskCheck {
    /// One line per problem: the reference fails, or an adversary wins.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        match &self.reference {
            Verdict::Solved => {}
            Verdict::Unsolved(why) => out.push(format!("{}: the reference does not solve it: {why}", self.id)),
            Verdict::Missing(why) => out.push(format!("{}: {why}", self.id)),
        }
        for (name, v) in [("silent", &self.silent), ("dump", &self.dump)] {
            if *v == Verdict::Solved {
                out.push(format!("{}: weak rubric: the {name} agent solves it", self.id));
            }
        }
        out
    }
}

#[derive(Debug, Clone)]
pub struct CheckReport {
    pub tasks: Vec<TaskCheck>,
    /// Judge matchers were counted as passing (no judge configured).
    pub judge_unchecked: bool,
    pub judge_matcher_tasks: usize,
}

impl CheckReport {
    pub fn problems(&self) -> Vec<String> {
        self.tasks.iter().flat_map(TaskCheck::problems).collect()
    }

    pub fn ok(&self) -> bool {
        self.problems().is_empty()
    }
}

/// Every check that failed on a run, as a person would read it.
pub fn failing_checks(task: &Task, record: &RunRecord) -> String {
    let mut why = Vec::new();
    if !record.errors.is_empty() {
        why.push(format!("harness error: {}", record.errors.join("; ")));
    } else if record.timed_out == Some(true) {
        why.push(format!("timed out after timeoutMs = {}", task.timeout_ms));
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
            MatcherDetail::Contains { value, .. } => format!("output lacks {value}"),
            MatcherDetail::Regex { value, flags, error, .. } => format!(
                "output does not match regex {value}{}{}",
                flags.as_deref().map(|f| format!(" (flags {f})")).unwrap_or_default(),
                error.as_deref().map(|e| format!(": {e}")).unwrap_or_default()
            ),
            MatcherDetail::Judge { criteria, .. } => format!("judge said NO to {criteria:?}"),
        });
    }
    for a in d.vault_assertion_details.iter().filter(|a| !a.ok) {
        why.push(format!("vault assertion {} {}: {}", a.kind, a.path, a.reason));
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

#[derive(Clone, Copy)]
enum Agent {
    Reference,
    Adversary(Adversary),
}

/// Run the three agents on every task, `jobs` runs at a time.
pub async fn check(suite: &Suite, references: &Path, judge: Option<Arc<dyn Judge>>, jobs: usize) -> CheckReport {
    let judge_unchecked = judge.is_none();
    let judge: Arc<dyn Judge> = judge.unwrap_or_else(|| Arc::new(Unchecked));
    let shared = Arc::new((suite.root.clone(), Toolbox::standard(), references.to_path_buf(), judge));
    let mut verdicts: BTreeMap<(usize, usize), Verdict> = BTreeMap::new();
    let mut running = JoinSet::new();
    let agents = [Agent::Reference, Agent::Adversary(Adversary::Silent), Agent::Adversary(Adversary::Dump)];
    let mut queue = suite.tasks.iter().enumerate().flat_map(|(t, _)| (0..agents.len()).map(move |a| (t, a)));
    loop {
        while running.len() < jobs.max(1) {
            let Some((t, a)) = queue.next() else { break };
            let task = suite.tasks[t].clone();
            let shared = shared.clone();
            let agent = agents[a];
            running.spawn(async move {
                let (root, toolbox, references, judge) = &*shared;
                let model: Arc<dyn Model> = match agent {
                    Agent::Reference => match reference::load(references, &task.id) {
                        Ok(r) => Arc::new(ReferenceModel::new(r, "reference")),
                        Err(e) => return ((t, a), Verdict::Missing(format!("{e:#}"))),
                    },
                    Agent::Adversary(adv) => Arc::new(adv),
                };
                let env = CellEnv {
                    suite_root: root,
                    toolbox,
                    pricing: &Pricing::Free,
                    judge: Some(judge.as_ref()),
                    max_output_tokens: None,
                    limits: &Limits::default(),
                };
                let out = cell::run(&env, &task, model.as_ref(), None).await;
                let verdict = if out.record.solved {
                    Verdict::Solved
                } else {
                    Verdict::Unsolved(failing_checks(&task, &out.record))
                };
                ((t, a), verdict)
            });
        }
        match running.join_next().await {
            Some(Ok((key, verdict))) => {
                verdicts.insert(key, verdict);
            }
            Some(Err(e)) => panic!("a suite check run crashed: {e}"),
            None => break,
        }
    }
    let tasks = suite
        .tasks
        .iter()
        .enumerate()
        .map(|(t, task)| TaskCheck {
            id: task.id.clone(),
            reference: verdicts.remove(&(t, 0)).expect("every run reports"),
            silent: verdicts.remove(&(t, 1)).expect("every run reports"),
            dump: verdicts.remove(&(t, 2)).expect("every run reports"),
        })
        .collect();
    CheckReport {
        tasks,
        judge_unchecked,
        judge_matcher_tasks: suite.tasks.iter().filter(|t| t.has_judge_matcher()).count(),
    }
}

/// The console report: counts, then a line per problem.
pub fn render(suite: &Suite, references: &Path, report: &CheckReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{} tasks in {}", suite.tasks.len(), suite.root.display());
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
    let solved = report.tasks.iter().filter(|t| t.reference == Verdict::Solved).count();
    let silent = report.tasks.iter().filter(|t| t.silent == Verdict::Solved).count();
    let dump = report.tasks.iter().filter(|t| t.dump == Verdict::Solved).count();
    let _ = writeln!(s, "references ({}): {solved}/{n} solve their task", references.display());
    let _ = writeln!(s, "adversaries: silent solves {silent}/{n}, dump solves {dump}/{n} (both must solve none)");
    if report.judge_matcher_tasks > 0 {
        if report.judge_unchecked {
            let _ = writeln!(
                s,
                "judge matchers: unchecked (no judge configured) in {} tasks; counted as passing for all three agents",
                report.judge_matcher_tasks
            );
        } else {
            let _ = writeln!(s, "judge matchers: judged in {} tasks", report.judge_matcher_tasks);
        }
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
