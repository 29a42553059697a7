//! Offline rescoring: re-evaluate the recorded output-matcher verdicts of a
//! result from its stored evidence (`response_text` and each matcher's value
//! and flags), recompute `solved` and the aggregate, and report every
//! disagreement with what the file says.
//!
//! Vault assertions cannot be re-evaluated offline (the vault is gone), so
//! their recorded verdicts are kept. Judge verdicts are kept unless a judge is
//! given, in which case each judge matcher is asked again; asked several
//! times (`--repeat N`), the majority answer is the verdict (a tie is NO) and
//! the judge's *flip rate* (verdicts whose answers were not unanimous) is
//! reported per task and overall: a judge at temperature 0 should not flip.

use std::collections::BTreeMap;
use std::fmt::{self, Write};

use serde::Serialize;

use crate::format::result::{MatcherDetail, ResultFile};
use crate::report::aggregate::{self, FieldDiff};
use crate::score::{Judge, JudgeContext, RegexBudget, matchers};
use crate::stats::{self, agreement};

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
    /// How stable the judge's answers were when each verdict was asked more than once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge_stability: Option<JudgeStability>,
    /// Differences between the stored figures and those re-derived after rescoring.
    #[serde(serialize_with = "serialize_diffs")]
    pub aggregate_diffs: Vec<FieldDiff>,
    #[serde(skip)]
    pub rescored: ResultFile,
}

fn serialize_diffs<S: serde::Serializer>(diffs: &[FieldDiff], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(diffs.iter().map(|d| d.to_string()))
}

/// Flips of a judge asked `repeat` times about each verdict.
#[derive(Debug, Clone, Default, Serialize)]
pub struct JudgeStability {
    pub repeat: u32,
    /// Judge verdicts asked (one per judge matcher of a passed run).
    pub verdicts: u32,
    /// Of those, verdicts whose answers were not all the same.
    pub flipped: u32,
    /// Asks that failed (counted as NO in the verdict, not as a flip).
    pub failed_asks: u32,
    /// Per task: (verdicts, flipped).
    pub by_task: BTreeMap<String, FlipTally>,
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct FlipTally {
    pub verdicts: u32,
    pub flipped: u32,
}

impl JudgeStability {
    /// `flipped / verdicts`, 0 with nothing asked.
    pub fn flip_rate(&self) -> f64 {
        if self.verdicts == 0 { 0.0 } else { f64::from(self.flipped) / f64::from(self.verdicts) }
    }
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
    rescore_repeated(result, judge, user_message, budget, 1).await
}

/// [`rescore`], asking the judge `repeat` times (at least once) per judge
/// verdict: the majority answer is the verdict, and the flips are counted.
pub async fn rescore_repeated(
    result: &ResultFile,
    judge: Option<&dyn Judge>,
    user_message: &dyn Fn(&str) -> Option<String>,
    budget: RegexBudget,
    repeat: u32,
) -> Rescore {
    let repeat = repeat.max(1);
    let mut stability = JudgeStability { repeat, ..JudgeStability::default() };
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
                        let mut answers = Vec::with_capacity(repeat as usize);
                        let mut first_error = None;
                        for _ in 0..repeat {
                            match j.judge(criteria, ctx).await {
                                Ok(v) => answers.push(v),
                                Err(e) => {
                                    stability.failed_asks += 1;
                                    first_error.get_or_insert(e);
                                }
                            }
                        }
                        let yes = answers.iter().filter(|&&a| a).count();
                        let flipped = yes > 0 && yes < answers.len();
                        let tally = stability.by_task.entry(task.id.clone()).or_default();
                        tally.verdicts += 1;
                        tally.flipped += u32::from(flipped);
                        stability.verdicts += 1;
                        stability.flipped += u32::from(flipped);
                        // A failed ask counts as NO: it must not look like a pass.
                        *verdict = 2 * yes > repeat as usize;
                        *error = if answers.is_empty() { first_error } else { None };
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
        judge_stability: (judge.is_some() && repeat > 1).then_some(stability),
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
        if let Some(st) = &self.judge_stability {
            write_stability(&mut s, st);
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

/// The flip rate overall (with its Wilson interval) and per task.
fn write_stability(s: &mut String, st: &JudgeStability) {
    let pct = |x: f64| stats::fixed1(x * 100.0);
    let interval = agreement::wilson(st.flipped, st.verdicts, agreement::Z_95)
        .map_or_else(String::new, |w| format!(" (95% interval {}%..{}%)", pct(w.low), pct(w.high)));
    let _ = writeln!(
        s,
        "judge flip rate: {}/{} verdicts ({}%){interval} got different answers across {} asks each; majority answer kept, a tie is NO",
        st.flipped,
        st.verdicts,
        pct(st.flip_rate()),
        st.repeat
    );
    if st.failed_asks > 0 {
        let _ = writeln!(s, "judge asks that failed: {} (counted as NO)", st.failed_asks);
    }
    for (task, t) in &st.by_task {
        let rate = if t.verdicts == 0 { 0.0 } else { f64::from(t.flipped) / f64::from(t.verdicts) };
        let _ = writeln!(s, "  {task}: {}/{} flipped ({}%)", t.flipped, t.verdicts, pct(rate));
    }
}
