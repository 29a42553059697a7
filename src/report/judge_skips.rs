//! Runs scored without a judge. A `judge` matcher with no judge configured
//! fails with `judge_skipped`, so a sweep without a judge key reads like a
//! worse model. Whether that matters depends on the run:
//! - a run that did not pass never reaches its matchers, judge or not;
//! - a run that passed and failed some other check is unsolved whatever the
//!   judge would have said;
//! - a run that passed and held every other check was *decided* by the
//!   missing judge: with one it might have been solved. Those are what make
//!   a result an unclean measurement: `bless` refuses it unless forced, and
//!   the site marks its row.
//!
//! The same tally serves full result files (bless) and the site's lighter
//! view of a baseline, through [`RunFacts`].

use std::fmt;

use serde::Serialize;

use crate::format::result::{MatcherDetail, ResultFile, RunRecord};

/// What a missing judge means for one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunFacts {
    pub passed: bool,
    /// A judge matcher was evaluated without a judge.
    pub judge_skipped: bool,
    /// Every check but the judge matchers holds.
    pub other_checks_hold: bool,
}

impl RunFacts {
    pub fn of(run: &RunRecord) -> RunFacts {
        let d = &run.solve_details;
        let other_matchers = d.matcher_details.iter().filter(|m| !matches!(m, MatcherDetail::Judge { .. }));
        RunFacts {
            passed: run.passed,
            judge_skipped: d.judge_skipped,
            other_checks_hold: d.expected_tools_met
                && d.forbidden_tools_clean
                && d.vault_assertions_pass
                && d.tool_budget_ok
                && other_matchers.clone().all(MatcherDetail::verdict),
        }
    }

    /// The judge matchers were skipped on a run that reached them.
    fn skipped(&self) -> bool {
        self.passed && self.judge_skipped
    }

    /// The missing judge alone kept this run from being solved.
    fn decided(&self) -> bool {
        self.skipped() && self.other_checks_hold
    }
}

/// Runs and tasks whose judge matchers were skipped for lack of a judge.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct JudgeSkips {
    /// Runs that passed and whose judge matchers were skipped.
    pub runs: usize,
    pub tasks: Vec<String>,
    /// Of those, runs that held every other check: the missing judge decided them.
    pub decided_runs: usize,
    pub decided_tasks: Vec<String>,
}

impl JudgeSkips {
    /// Tally tasks given as (id, facts of each run).
    pub fn tally<'a, R>(tasks: impl IntoIterator<Item = (&'a str, R)>) -> JudgeSkips
    where
        R: IntoIterator<Item = RunFacts>,
    {
        let mut out = JudgeSkips::default();
        for (id, runs) in tasks {
            let (mut skipped, mut decided) = (0, 0);
            for r in runs {
                skipped += usize::from(r.skipped());
                decided += usize::from(r.decided());
            }
            out.runs += skipped;
            out.decided_runs += decided;
            if skipped > 0 {
                out.tasks.push(id.to_string());
            }
            if decided > 0 {
                out.decided_tasks.push(id.to_string());
            }
        }
        out
    }

    pub fn of_result(result: &ResultFile) -> JudgeSkips {
        JudgeSkips::tally(result.tasks.iter().map(|t| (t.id.as_str(), t.runs.iter().map(RunFacts::of))))
    }

    /// The missing judge decided some verdict: not a clean measurement.
    pub fn matters(&self) -> bool {
        self.decided_runs > 0
    }
}

impl fmt::Display for JudgeSkips {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        write!(
            f,
            "{} in {} skipped their judge matchers for lack of a judge; {} in {} failed on that alone \
             ({}) and might have been solved with a judge",
            plural(self.runs, "run", "runs"),
            plural(self.tasks.len(), "task", "tasks"),
            plural(self.decided_runs, "run", "runs"),
            plural(self.decided_tasks.len(), "task", "tasks"),
            super::first_few(&self.decided_tasks)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(passed: bool, judge_skipped: bool, other_checks_hold: bool) -> RunFacts {
        RunFacts { passed, judge_skipped, other_checks_hold }
    }

    #[test]
    fn only_passed_runs_count_and_only_clean_ones_decide() {
        let tasks = [
            ("a", vec![facts(true, true, true), facts(true, true, false)]),
            ("b", vec![facts(false, true, true), facts(true, false, true)]),
            ("c", vec![facts(true, true, false)]),
        ];
        let s = JudgeSkips::tally(tasks.iter().map(|(id, runs)| (*id, runs.iter().copied())));
        assert_eq!((s.runs, s.tasks.as_slice()), (3, &["a".to_string(), "c".to_string()][..]));
        assert_eq!((s.decided_runs, s.decided_tasks.as_slice()), (1, &["a".to_string()][..]));
        assert!(s.matters());
        assert_eq!(
            s.to_string(),
            "3 runs in 2 tasks skipped their judge matchers for lack of a judge; 1 run in 1 task failed on that \
             alone (a) and might have been solved with a judge"
        );
        assert!(!JudgeSkips::tally(tasks[1..].iter().map(|(id, runs)| (*id, runs.iter().copied()))).matters());
    }

    #[test]
    fn facts_read_the_other_checks_of_a_record() {
        let mut run = crate::report::aggregate::tests::run(true, false, 2, 0.0, None);
        run.solve_details.judge_skipped = true;
        run.solve_details.matchers_pass = false;
        run.solve_details.matcher_details = vec![
            MatcherDetail::Contains { value: crate::format::OneOrMany::One("x".into()), verdict: true, error: None },
            MatcherDetail::Judge { criteria: "c".into(), verdict: false, error: Some("no judge available".into()) },
        ];
        assert_eq!(RunFacts::of(&run), facts(true, true, true));
        run.solve_details.vault_assertions_pass = false;
        assert!(!RunFacts::of(&run).other_checks_hold);
    }
}
