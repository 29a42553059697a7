//! Judge calibration: how often a judge's verdicts agree with the human labels
//! of the gold set. The same tally serves the recorded verdicts (`calibrate
//! report`) and a candidate judge asked afresh (`calibrate judge`).
//!
//! Only tuples with a human label and no recorded judge error are compared: an
//! errored judge never judged, so there is nothing to agree with.

use std::fmt::{self, Write};

use serde::Serialize;

use crate::format::calibration::{CalibrationFile, CalibrationTuple};
use crate::jsnum;

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

impl Agreement {
    /// `agreed / evaluated`, 0 when nothing was comparable.
    pub fn rate(&self) -> f64 {
        if self.evaluated == 0 { 0.0 } else { f64::from(self.agreed) / f64::from(self.evaluated) }
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

/// The agreement of the verdicts recorded in the file.
pub fn recorded_agreement(file: &CalibrationFile) -> Agreement {
    let verdicts: Vec<Result<bool, String>> = file.tuples.iter().map(|t| Ok(t.automated_verdict)).collect();
    let judge = file
        .source
        .model
        .clone()
        .map_or_else(|| "recorded verdicts".to_string(), |m| format!("recorded verdicts (sweep of {m})"));
    agreement(file, &judge, &verdicts)
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
        let _ = writeln!(
            s,
            "Tuples: {} ({} compared, {} unlabelled, {} with a recorded judge error, {} failed judge calls)",
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
    use crate::format::calibration::{CalibrationSource, HumanLabel};

    fn tuple(id: &str, auto: bool, human: Option<HumanLabel>, error: Option<&str>) -> CalibrationTuple {
        CalibrationTuple {
            id: id.into(),
            task_id: "t".into(),
            user_message: String::new(),
            criteria: String::new(),
            response: String::new(),
            automated_verdict: auto,
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
        assert!(a.to_string().contains("FP  b  (judge YES, human NO)"));
    }
}
