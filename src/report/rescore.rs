//! Offline rescoring: re-evaluate the recorded output-matcher verdicts of a
//! result from its stored evidence (`response_text` and each matcher's value
//! and flags), recompute `solved` and the aggregate, and report every
//! disagreement with what the file says.
//!
//! Vault assertions cannot be re-evaluated offline (the vault is gone), so
//! their recorded verdicts are kept. Judge verdicts are kept unless a judge is
//! given, in which case each judge matcher is asked again.

use std::collections::BTreeMap;
use std::fmt::{self, Write};

use serde::Serialize;

use crate::format::result::{MatcherDetail, ResultFile};
use crate::report::aggregate::{self, FieldDiff};
use crate::score::{Judge, JudgeContext, RegexBudget, matchers};

#[derive(Debug, Clone, Default, Serialize)]
pub struct Tally {
    pub checked: u32,
    pub agree: u32,
}

/// A recorded verdict that re-evaluation contradicts.
#[derive(Debug, Clone, Serialize)]
pub struct Disagreement {
    pub task: String,
    /// Run number, from 1.
    pub run: usize,
    /// What disagrees: `regex matcher 2`, `solved`, ...
    pub what: String,
    pub recorded: bool,
    pub rescored: bool,
    pub detail: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Rescore {
    /// Per matcher type (`contains`, `regex`, and `judge` when re-judged).
    pub matchers: BTreeMap<&'static str, Tally>,
    /// Judge verdicts kept as recorded (no judge given).
    pub judge_kept: u32,
    pub judge_model: Option<String>,
    pub solved: Tally,
    pub disagreements: Vec<Disagreement>,
    /// Differences between the stored figures and those re-derived after rescoring.
    #[serde(serialize_with = "serialize_diffs")]
    pub aggregate_diffs: Vec<FieldDiff>,
    #[serde(skip)]
    pub rescored: ResultFile,
}

fn serialize_diffs<S: serde::Serializer>(diffs: &[FieldDiff], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(diffs.iter().map(|d| d.to_string()))
}

impl Rescore {
    pub fn all_agree(&self) -> bool {
        self.disagreements.is_empty() && self.aggregate_diffs.is_empty()
    }
}

/// Rescore `result`; `user_message` gives each task's prompt for the judge
/// (the result file does not carry it). Each regex gets `budget` on each
/// answer; one that overruns counts as no match, with its error recorded.
pub async fn rescore(
    result: &ResultFile,
    judge: Option<&dyn Judge>,
    user_message: &dyn Fn(&str) -> Option<String>,
    budget: RegexBudget,
) -> Rescore {
    let mut rescored = result.clone();
    let mut tallies: BTreeMap<&'static str, Tally> = BTreeMap::new();
    let mut judge_kept = 0;
    let mut solved = Tally::default();
    let mut disagreements = Vec::new();

    for task in &mut rescored.tasks {
        let prompt = user_message(&task.id).unwrap_or_default();
        for (i, run) in task.runs.iter_mut().enumerate() {
            let text = run.response_text.clone();
            for (m, detail) in run.solve_details.matcher_details.iter_mut().enumerate() {
                let recorded = detail.verdict();
                let (kind, now, what) = match detail {
                    MatcherDetail::Contains { value, verdict, .. } => {
                        *verdict = matchers::contains(value, &text);
                        ("contains", *verdict, value.to_string())
                    }
                    MatcherDetail::Regex { value, flags, verdict, error } => {
                        (*verdict, *error) = matchers::regex(value, flags.as_deref(), &text, budget);
                        let mut what = format!("{value} flags {:?}", flags.as_deref().unwrap_or(""));
                        if let Some(e) = error {
                            what.push_str(&format!(": {e}"));
                        }
                        ("regex", *verdict, what)
                    }
                    MatcherDetail::Judge { criteria, verdict, error } => {
                        let Some(j) = judge else {
                            judge_kept += 1;
                            continue;
                        };
                        let ctx = JudgeContext { user_message: &prompt, response_text: &text };
                        match j.judge(criteria, ctx).await {
                            Ok(v) => {
                                *verdict = v;
                                *error = None;
                            }
                            Err(e) => {
                                *verdict = false;
                                *error = Some(e);
                            }
                        }
                        ("judge", *verdict, criteria.clone())
                    }
                };
                let tally = tallies.entry(kind).or_default();
                tally.checked += 1;
                if now == recorded {
                    tally.agree += 1;
                } else {
                    disagreements.push(Disagreement {
                        task: task.id.clone(),
                        run: i + 1,
                        what: format!("{kind} matcher {}", m + 1),
                        recorded,
                        rescored: now,
                        detail: what,
                    });
                }
            }
            if run.passed {
                let all = run.solve_details.matcher_details.iter().all(MatcherDetail::verdict);
                run.solve_details.matchers_pass = all;
            }
            let now_solved = run.passed && run.solve_details.all_checks_hold();
            solved.checked += 1;
            if now_solved == run.solved {
                solved.agree += 1;
            } else {
                disagreements.push(Disagreement {
                    task: task.id.clone(),
                    run: i + 1,
                    what: "solved".into(),
                    recorded: run.solved,
                    rescored: now_solved,
                    detail: String::new(),
                });
            }
            run.solved = now_solved;
        }
    }
    let rescored = aggregate::rederive(&rescored);
    let aggregate_diffs = aggregate::differences(result, &rescored);
    Rescore {
        matchers: tallies,
        judge_kept,
        judge_model: judge.map(|j| j.model_id().to_string()),
        solved,
        disagreements,
        aggregate_diffs,
        rescored,
    }
}

impl fmt::Display for Rescore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        for (kind, t) in &self.matchers {
            let _ = writeln!(s, "{kind}: {}/{} agree", t.agree, t.checked);
        }
        if self.judge_kept > 0 {
            let _ = writeln!(s, "judge: {} recorded verdicts kept (re-judge them with --judge)", self.judge_kept);
        }
        if let Some(model) = &self.judge_model {
            let _ = writeln!(s, "judge model: {model}");
        }
        let _ = writeln!(s, "solved: {}/{} runs agree", self.solved.agree, self.solved.checked);
        let _ = writeln!(s, "vault assertions: recorded verdicts kept (the vault is not kept after a run)");
        if self.aggregate_diffs.is_empty() {
            let _ = writeln!(s, "figures: the stored task results and aggregate re-derive exactly");
        } else {
            let _ =
                writeln!(s, "figures: {} stored fields differ from the re-derived ones:", self.aggregate_diffs.len());
            for d in &self.aggregate_diffs {
                let _ = writeln!(s, "  {d}");
            }
        }
        if !self.disagreements.is_empty() {
            let _ = writeln!(s, "disagreements ({}):", self.disagreements.len());
            for d in &self.disagreements {
                let _ = writeln!(
                    s,
                    "  {} run {}: {} recorded {} but rescores {}{}",
                    d.task,
                    d.run,
                    d.what,
                    d.recorded,
                    d.rescored,
                    if d.detail.is_empty() { String::new() } else { format!(" ({})", d.detail) }
                );
            }
        }
        f.write_str(&s)
    }
}
