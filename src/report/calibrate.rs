//! Judge calibration: how often a judge's verdicts agree with the human labels
//! of the gold set. The same tally serves the recorded verdicts (`calibrate
//! report`) and a candidate judge asked afresh (`calibrate judge`).
//!
//! Only tuples with a human label and no recorded judge error are compared: an
//! errored judge never judged, so there is nothing to agree with.
//!
//! It also builds the gold set from a sweep (`calibrate extract`): one tuple
//! per judge matcher verdict, keeping the human labels already given; or
//! from the suite's alternative-answer corpus (`calibrate corpus`), whose
//! labels are known from how each answer was written. The candidate judge
//! is handed in as a [`Judge`]; this module never builds one.

use std::collections::{BTreeMap, HashMap};
use std::fmt::{self, Write};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use serde::Serialize;

use crate::format::calibration::{CalibrationFile, CalibrationSource, CalibrationTuple, HumanLabel};
use crate::format::result::{MatcherDetail, ResultFile};
use crate::format::task::Matcher;
use crate::provider::reference;
use crate::score::{Judge, JudgeContext};
use crate::stats::agreement;
use crate::suite::Suite;
use crate::suite::corpus::Corpus;
use crate::{fsio, jsnum};

#[derive(Debug, Clone, Serialize)]
pub struct CalibrationDisagreement {
    pub id: String,
    pub task_id: String,
    pub judge_yes: bool,
    pub human_yes: bool,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Agreement {
    pub judge: String,
    pub total: u32,
    pub evaluated: u32,
    pub skipped_unlabelled: u32,
    pub skipped_judge_error: u32,
    /// Calls to the candidate judge that failed (not counted either way).
    pub judge_call_errors: u32,
    /// Tuples with no recorded verdict (`calibrate report` only).
    #[serde(skip_serializing_if = "is_zero")]
    pub skipped_no_verdict: u32,
    pub agreed: u32,
    /// Judge YES, human YES.
    pub both_yes: u32,
    /// Judge YES, human NO.
    pub false_positives: u32,
    /// Judge NO, human YES.
    pub false_negatives: u32,
    /// Judge NO, human NO.
    pub both_no: u32,
    pub disagreements: Vec<CalibrationDisagreement>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Agreement {
    /// `agreed / evaluated`, 0 when nothing was comparable.
    pub fn rate(&self) -> f64 {
        if self.evaluated == 0 { 0.0 } else { f64::from(self.agreed) / f64::from(self.evaluated) }
    }

    /// Cohen's kappa: agreement beyond what chance gives with the same YES
    /// rates (a judge that says YES to almost everything agrees often with
    /// humans who say YES often, and learns nothing). `None` when undefined.
    pub fn kappa(&self) -> Option<f64> {
        agreement::cohen_kappa(self.both_yes, self.false_positives, self.false_negatives, self.both_no)
    }

    /// The 95% Wilson interval on the agreement rate.
    pub fn rate_interval(&self) -> Option<agreement::Proportion> {
        agreement::wilson(self.agreed, self.evaluated, agreement::Z_95)
    }
}

/// What `calibrate report --json` and `calibrate judge --json` print: the
/// tally with kappa and the interval beside it.
#[derive(Debug, Clone, Serialize)]
pub struct AgreementJson<'a> {
    #[serde(flatten)]
    pub agreement: &'a Agreement,
    pub kappa: Option<f64>,
    pub agreement_interval: Option<agreement::Proportion>,
}

impl<'a> AgreementJson<'a> {
    pub fn of(agreement: &'a Agreement) -> AgreementJson<'a> {
        AgreementJson { agreement, kappa: agreement.kappa(), agreement_interval: agreement.rate_interval() }
    }
}

/// Which tuples can be compared with a human label at all.
pub fn comparable(t: &CalibrationTuple) -> bool {
    t.human_label.is_some() && t.judge_error.as_deref().is_none_or(str::is_empty)
}

/// Tally `verdicts` (one per tuple, in order; `Err` for a failed judge call)
/// against the human labels.
pub fn agreement(file: &CalibrationFile, judge: &str, verdicts: &[Result<bool, String>]) -> Agreement {
    let mut a = Agreement { judge: judge.to_string(), total: file.tuples.len() as u32, ..Agreement::default() };
    for (t, verdict) in file.tuples.iter().zip(verdicts) {
        let Some(label) = t.human_label else {
            a.skipped_unlabelled += 1;
            continue;
        };
        if !comparable(t) {
            a.skipped_judge_error += 1;
            continue;
        }
        let Ok(judge_yes) = *verdict else {
            a.judge_call_errors += 1;
            continue;
        };
        a.evaluated += 1;
        let human_yes = label.is_yes();
        match (judge_yes, human_yes) {
            (true, true) => a.both_yes += 1,
            (true, false) => a.false_positives += 1,
            (false, true) => a.false_negatives += 1,
            (false, false) => a.both_no += 1,
        }
        if judge_yes == human_yes {
            a.agreed += 1;
        } else {
            a.disagreements.push(CalibrationDisagreement {
                id: t.id.clone(),
                task_id: t.task_id.clone(),
                judge_yes,
                human_yes,
            });
        }
    }
    a
}

/// The agreement of the verdicts recorded in the file; tuples without a
/// recorded verdict (a gold set built from written answers) are skipped.
pub fn recorded_agreement(file: &CalibrationFile) -> Agreement {
    let recorded = CalibrationFile {
        tuples: file.tuples.iter().filter(|t| t.automated_verdict.is_some()).cloned().collect(),
        ..file.clone()
    };
    let verdicts: Vec<Result<bool, String>> =
        recorded.tuples.iter().map(|t| Ok(t.automated_verdict.unwrap_or_default())).collect();
    let judge = file
        .source
        .model
        .clone()
        .map_or_else(|| "recorded verdicts".to_string(), |m| format!("recorded verdicts (sweep of {m})"));
    let mut a = agreement(&recorded, &judge, &verdicts);
    a.total = file.tuples.len() as u32;
    a.skipped_no_verdict = a.total - recorded.tuples.len() as u32;
    a
}

/// What `calibrate extract` made.
#[derive(Debug, Clone)]
pub struct Extraction {
    pub file: CalibrationFile,
    /// Human labels carried over from the previous file.
    pub labels_kept: u32,
    /// Ids of labelled tuples of the previous file that the new one would
    /// lose (gone, or their response changed).
    pub labels_lost: Vec<String>,
}

/// One tuple per judge matcher verdict of `result`, id
/// `<task>::<run from 1>::<matcher index from 0>`, with the task's user
/// message from `user_message`. A human label of `previous` is kept when the
/// tuple's id and response are unchanged.
pub fn extract(
    result: &ResultFile,
    user_message: &dyn Fn(&str) -> Option<String>,
    previous: Option<&CalibrationFile>,
    generated_at: String,
) -> Result<Extraction> {
    let old: HashMap<&str, &CalibrationTuple> =
        previous.map(|p| p.tuples.iter().map(|t| (t.id.as_str(), t)).collect()).unwrap_or_default();
    let mut tuples = Vec::new();
    let mut missing = Vec::new();
    let mut labels_kept = 0;
    for task in &result.tasks {
        let has_judge =
            task.runs.iter().any(|r| r.solve_details.matcher_details.iter().any(|d| d.type_name() == "judge"));
        if !has_judge {
            continue;
        }
        let Some(prompt) = user_message(&task.id) else {
            missing.push(task.id.clone());
            continue;
        };
        for (r, run) in task.runs.iter().enumerate() {
            for (m, detail) in run.solve_details.matcher_details.iter().enumerate() {
                let MatcherDetail::Judge { criteria, verdict, error } = detail else { continue };
                let id = format!("{}::{}::{}", task.id, r + 1, m);
                let human_label =
                    old.get(id.as_str()).filter(|t| t.response == run.response_text).and_then(|t| t.human_label);
                labels_kept += u32::from(human_label.is_some());
                tuples.push(CalibrationTuple {
                    id,
                    task_id: task.id.clone(),
                    user_message: prompt.clone(),
                    criteria: criteria.clone(),
                    response: run.response_text.clone(),
                    automated_verdict: Some(*verdict),
                    judge_error: error.clone(),
                    human_label,
                });
            }
        }
    }
    if !missing.is_empty() {
        bail!(
            "{} task{} of the result {} not in the suite, so their user messages are unknown: {}; \
             pass --suite DIR with the suite the sweep ran",
            missing.len(),
            if missing.len() == 1 { "" } else { "s" },
            if missing.len() == 1 { "is" } else { "are" },
            missing.join(", ")
        );
    }
    let kept: HashMap<&str, &CalibrationTuple> = tuples.iter().map(|t| (t.id.as_str(), t)).collect();
    let labels_lost = previous
        .into_iter()
        .flat_map(|p| &p.tuples)
        .filter(|t| t.human_label.is_some())
        .filter(|t| kept.get(t.id.as_str()).is_none_or(|n| n.human_label != t.human_label))
        .map(|t| t.id.clone())
        .collect();
    let file = CalibrationFile {
        version: 1,
        generated_at,
        source: CalibrationSource {
            run_id: Some(result.run_id.0.clone()),
            git_sha: Some(result.git_sha.clone()),
            provider: Some(result.provider.clone()),
            model: Some(result.model.clone()),
        },
        tuples,
    };
    Ok(Extraction { file, labels_kept, labels_lost })
}

/// `calibrate extract`: read `result` and the suite's user messages, merge
/// with the labels already in `out`, and write `out` atomically. Refuses to
/// drop human labels unless `force`.
pub fn extract_to_file(
    result_path: &Path,
    user_messages: &BTreeMap<String, String>,
    out: &Path,
    force: bool,
) -> Result<Extraction> {
    let result: ResultFile = fsio::read_json(result_path)?;
    let previous: Option<CalibrationFile> = if out.exists() { Some(fsio::read_json(out)?) } else { None };
    let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
    let lookup = |id: &str| user_messages.get(id).cloned();
    let extraction = extract(&result, &lookup, previous.as_ref(), now)?;
    if !extraction.labels_lost.is_empty() && !force {
        let n = extraction.labels_lost.len();
        bail!(
            "{} holds {n} human label{} that the new extraction would lose (tuple gone or its response changed): {}; \
             write to another file with --out, or pass --force to replace them",
            out.display(),
            if n == 1 { "" } else { "s" },
            super::first_few(&extraction.labels_lost)
        );
    }
    let bytes = jsnum::to_json_bytes(&extraction.file)?;
    fsio::write_atomic(out, &bytes).with_context(|| format!("writing the calibration set {}", out.display()))?;
    Ok(extraction)
}

/// The gold set of a suite's own criteria: one tuple per judge matcher of a
/// task and per answer written for it, its reference (YES) and each
/// alternative of the corpus, labelled by how the answer was written
/// ([`crate::format::alternative::Alternative::judge_label`]; answers without a known label are left
/// out). No judge has seen them: `automated_verdict` is null.
pub fn from_corpus(suite: &Suite, corpus: &Corpus, references: &Path, generated_at: String) -> Result<CalibrationFile> {
    let mut tuples = Vec::new();
    for task in suite.tasks.iter().filter(|t| t.has_judge_matcher()) {
        let reference = reference::load(references, &task.id)?;
        let mut answers = vec![("reference".to_string(), reference.answer, Some(HumanLabel::Yes))];
        answers.extend(
            corpus
                .for_task(&task.id)
                .map(|e| (e.name.clone(), e.alternative.answer.clone(), e.alternative.judge_label())),
        );
        for (m, matcher) in task.output_matchers.iter().enumerate() {
            let Matcher::Judge { criteria } = matcher else { continue };
            for (name, answer, label) in &answers {
                let Some(label) = label else { continue };
                tuples.push(CalibrationTuple {
                    id: format!("{}::{name}::{m}", task.id),
                    task_id: task.id.clone(),
                    user_message: task.user_message.clone(),
                    criteria: criteria.clone(),
                    response: answer.clone(),
                    automated_verdict: None,
                    judge_error: None,
                    human_label: Some(*label),
                });
            }
        }
    }
    Ok(CalibrationFile {
        version: 1,
        generated_at,
        source: CalibrationSource { run_id: None, git_sha: None, provider: None, model: None },
        tuples,
    })
}

/// `calibrate corpus`: build the suite's gold set and write `out`
/// atomically. Refuses to drop a human label of the file already there
/// (a labelled sweep tuple, say) unless `force`.
pub fn from_corpus_to_file(
    suite: &Suite,
    corpus: &Corpus,
    references: &Path,
    out: &Path,
    force: bool,
) -> Result<(CalibrationFile, bool)> {
    let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
    let file = from_corpus(suite, corpus, references, now)?;
    if out.exists() && !force {
        let previous: CalibrationFile = fsio::read_json(out)?;
        // The same set again: the file (and its time) stay as they are, so
        // a corpus change that touches no judged task leaves no diff.
        let same = CalibrationFile { generated_at: previous.generated_at.clone(), ..file.clone() };
        if same == previous {
            return Ok((previous, false));
        }
        let kept: HashMap<&str, &CalibrationTuple> = file.tuples.iter().map(|t| (t.id.as_str(), t)).collect();
        let lost: Vec<String> = previous
            .tuples
            .iter()
            .filter(|t| t.human_label.is_some())
            .filter(|t| {
                kept.get(t.id.as_str()).is_none_or(|n| n.human_label != t.human_label || n.response != t.response)
            })
            .map(|t| t.id.clone())
            .collect();
        if !lost.is_empty() {
            bail!(
                "{} holds {} human label{} that the corpus does not give (tuple gone, or its answer or label changed): {}; \
                 write to another file with --out, or pass --force to replace them",
                out.display(),
                lost.len(),
                if lost.len() == 1 { "" } else { "s" },
                super::first_few(&lost)
            );
        }
    }
    let bytes = jsnum::to_json_bytes(&file)?;
    fsio::write_atomic(out, &bytes).with_context(|| format!("writing the calibration set {}", out.display()))?;
    Ok((file, true))
}

/// Ask `judge` about every comparable tuple of `file`, at most `concurrency`
/// calls at a time. One entry per tuple, in order; tuples that are not
/// comparable are not asked (their entry says so and [`agreement`] skips it).
pub async fn ask_judge(file: &CalibrationFile, judge: Arc<dyn Judge>, concurrency: usize) -> Vec<Result<bool, String>> {
    let limit = Arc::new(tokio::sync::Semaphore::new(concurrency.max(1)));
    let mut calls = tokio::task::JoinSet::new();
    let mut verdicts: Vec<Result<bool, String>> = vec![Err("not asked: not comparable".into()); file.tuples.len()];
    let mut index_of = HashMap::new();
    for (i, t) in file.tuples.iter().enumerate() {
        if !comparable(t) {
            continue;
        }
        let (judge, limit) = (judge.clone(), limit.clone());
        let (criteria, user_message, response) = (t.criteria.clone(), t.user_message.clone(), t.response.clone());
        let handle = calls.spawn(async move {
            let _permit = limit.acquire().await.expect("the semaphore is never closed");
            let ctx = JudgeContext { user_message: &user_message, response_text: &response };
            (i, judge.judge(&criteria, ctx).await)
        });
        index_of.insert(handle.id(), i);
    }
    while let Some(done) = calls.join_next().await {
        match done {
            Ok((i, verdict)) => verdicts[i] = verdict,
            // A call that panicked counts as a failed judge call.
            Err(e) => verdicts[index_of[&e.id()]] = Err(format!("the judge call did not finish: {e}")),
        }
    }
    verdicts
}

/// A candidate judge asked about a calibration set.
#[derive(Debug, Clone)]
pub struct CandidateRun {
    pub agreement: Agreement,
    /// Tuples the candidate was asked about.
    pub asked: usize,
    /// The error of each failed call (counted in `judge_call_errors`).
    pub failed_calls: Vec<String>,
}

/// `calibrate judge`: ask `judge` (named `label` in the report) every
/// comparable tuple and tally its agreement with the human labels.
pub async fn judge_candidate(
    file: &CalibrationFile,
    judge: Arc<dyn Judge>,
    label: &str,
    concurrency: usize,
) -> CandidateRun {
    let verdicts = ask_judge(file, judge, concurrency).await;
    let agreement = agreement(file, label, &verdicts);
    let comparable_verdicts = verdicts.iter().zip(&file.tuples).filter(|(_, t)| comparable(t));
    let asked = comparable_verdicts.clone().count();
    let failed_calls = comparable_verdicts.filter_map(|(v, _)| v.as_ref().err().cloned()).collect();
    CandidateRun { agreement, asked, failed_calls }
}

fn yes_no(b: bool) -> &'static str {
    if b { "YES" } else { "NO" }
}

impl fmt::Display for Agreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        let _ = writeln!(s, "Judge: {}", self.judge);
        let _ = writeln!(
            s,
            "Agreement with human labels: {}/{} ({}%)",
            self.agreed,
            self.evaluated,
            jsnum::to_fixed(self.rate() * 100.0, 1)
        );
        if let Some(w) = self.rate_interval() {
            let _ = writeln!(
                s,
                "95% interval on agreement (Wilson): {}%..{}%",
                jsnum::to_fixed(w.low * 100.0, 1),
                jsnum::to_fixed(w.high * 100.0, 1)
            );
        }
        match self.kappa() {
            Some(k) => {
                let _ = writeln!(
                    s,
                    "Cohen's kappa: {} (agreement beyond chance: 1 perfect, 0 no better than chance)",
                    jsnum::to_fixed(k, 3)
                );
            }
            None => {
                let _ = writeln!(s, "Cohen's kappa: undefined (fewer than two answers used by judge and humans)");
            }
        }
        let no_verdict = if self.skipped_no_verdict > 0 {
            format!(", {} without a recorded verdict", self.skipped_no_verdict)
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "Tuples: {} ({} compared, {} unlabelled, {} with a recorded judge error, {} failed judge calls{no_verdict})",
            self.total, self.evaluated, self.skipped_unlabelled, self.skipped_judge_error, self.judge_call_errors
        );
        let _ = writeln!(s, "\nConfusion matrix:");
        let _ = writeln!(s, "              human YES  human NO");
        let _ = writeln!(s, "  judge YES   {:>9}  {:>8}", self.both_yes, self.false_positives);
        let _ = writeln!(s, "  judge NO    {:>9}  {:>8}", self.false_negatives, self.both_no);
        let _ = writeln!(s, "False positives (judge YES, human NO): {}", self.false_positives);
        let _ = writeln!(s, "False negatives (judge NO, human YES): {}", self.false_negatives);
        if !self.disagreements.is_empty() {
            let _ = writeln!(s, "\nDisagreements:");
            for d in &self.disagreements {
                let kind = if d.judge_yes { "FP" } else { "FN" };
                let _ =
                    writeln!(s, "  {kind}  {}  (judge {}, human {})", d.id, yes_no(d.judge_yes), yes_no(d.human_yes));
            }
        }
        f.write_str(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tuple(id: &str, auto: bool, human: Option<HumanLabel>, error: Option<&str>) -> CalibrationTuple {
        CalibrationTuple {
            id: id.into(),
            task_id: "t".into(),
            user_message: String::new(),
            criteria: String::new(),
            response: String::new(),
            automated_verdict: Some(auto),
            judge_error: error.map(String::from),
            human_label: human,
        }
    }

    #[test]
    fn tallies_confusion_and_skips() {
        use HumanLabel::*;
        let file = CalibrationFile {
            version: 1,
            generated_at: String::new(),
            source: CalibrationSource { run_id: None, git_sha: None, provider: None, model: Some("m".into()) },
            tuples: vec![
                tuple("a", true, Some(Yes), None),
                tuple("b", true, Some(No), None),
                tuple("c", false, Some(Yes), None),
                tuple("d", false, Some(No), None),
                tuple("e", true, None, None),
                tuple("f", false, Some(Yes), Some("no judge available")),
            ],
        };
        let a = recorded_agreement(&file);
        assert_eq!((a.total, a.evaluated, a.agreed), (6, 4, 2));
        assert_eq!((a.both_yes, a.false_positives, a.false_negatives, a.both_no), (1, 1, 1, 1));
        assert_eq!((a.skipped_unlabelled, a.skipped_judge_error), (1, 1));
        assert!(a.to_string().contains("Agreement with human labels: 2/4 (50.0%)"));
        // One of each: no better than chance; Wilson for 2/4 is 15.0%..85.0%.
        assert_eq!(a.kappa(), Some(0.0));
        assert!(a.to_string().contains("Cohen's kappa: 0.000"), "{a}");
        assert!(a.to_string().contains("95% interval on agreement (Wilson): 15.0%..85.0%"), "{a}");
        assert!(a.to_string().contains("FP  b  (judge YES, human NO)"));
    }

    #[test]
    fn the_corpus_gold_set_has_a_tuple_per_judge_matcher_and_labelled_answer() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |rel: &str, text: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write(
            "tasks/t.json",
            r#"{"id": "t", "description": "d", "userMessage": "How heavy?", "difficulty": "T2", "category": "c",
                "outputMatchers": [{"type": "contains", "value": "kg"}, {"type": "judge", "criteria": "Says 940 kg."}]}"#,
        );
        write(
            "tasks/u.json",
            r#"{"id": "u", "description": "d", "userMessage": "q", "difficulty": "T1", "category": "c"}"#,
        );
        write("references/t.json", r#"{"answer": "940 kg"}"#);
        let alt = |label: &str, kind: &str, answer: &str, judge: &str| {
            format!(
                r#"{{"source": "blind", "label": "{label}", "kind": "{kind}", "note": "n", "answer": "{answer}"{judge}}}"#
            )
        };
        write("alternatives/t/correct-1.json", &alt("correct", "different-wording", "It weighs 940 kg.", ""));
        write("alternatives/t/wrong-1.json", &alt("wrong", "distractor", "490 kg", ""));
        write("alternatives/t/wrong-2.json", &alt("wrong", "damaging-write", "940 kg", r#", "judge": "YES""#));
        let suite = Suite::load(root).unwrap();
        let corpus = Corpus::load(&root.join("alternatives"), &suite).unwrap().unwrap();
        let file = from_corpus(&suite, &corpus, &root.join("references"), "now".into()).unwrap();
        let got: Vec<(&str, &str, bool)> =
            file.tuples.iter().map(|t| (t.id.as_str(), t.response.as_str(), t.human_label.unwrap().is_yes())).collect();
        assert_eq!(
            got,
            [
                ("t::reference::1", "940 kg", true),
                ("t::correct-1::1", "It weighs 940 kg.", true),
                ("t::wrong-1::1", "490 kg", false),
                ("t::wrong-2::1", "940 kg", true),
            ]
        );
        let t = &file.tuples[0];
        assert_eq!(
            (t.task_id.as_str(), t.user_message.as_str(), t.criteria.as_str()),
            ("t", "How heavy?", "Says 940 kg.")
        );
        assert_eq!((t.automated_verdict, &t.judge_error), (None, &None));
        // Nothing recorded: `calibrate report` compares nothing and says why.
        let a = recorded_agreement(&file);
        assert_eq!((a.total, a.evaluated, a.skipped_no_verdict), (4, 0, 4));
        assert!(a.to_string().contains("4 without a recorded verdict"), "{a}");
    }
}
