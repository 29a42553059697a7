//! Scoring: verdicts from a run's evidence, by pure functions (the judge call
//! is the only I/O). It knows rubrics; it does not know how a run happened —
//! the agent hands over a [`RunEvidence`] and a [`VaultState`] snapshot.
//!
//! The rule: a run *passes* when it finished with no harness error within its
//! time and turn limits; it is *solved* when it passed and every expected tool
//! was called, no forbidden tool was, every output matcher and vault assertion
//! holds and the tool calls stayed within `toolCallBudget`.

pub mod assertions;
pub mod frontmatter;
pub mod jsregex;
pub mod matchers;
pub mod sandbox;

use std::collections::HashSet;

use crate::format::result::SolveDetails;
use crate::format::task::Task;

pub use assertions::VaultState;
pub use matchers::{BoxFuture, Judge, JudgeContext};
pub use sandbox::RegexBudget;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunEnd {
    /// The model gave a final answer.
    Answered,
    /// `timeoutMs` elapsed first.
    TimedOut,
    /// `maxTurns` model calls without a final answer.
    TurnLimit,
    /// A harness fault (a model call that failed after retries, a vault that
    /// could not be prepared) ended the run; its `harness_errors` say which.
    HarnessError,
    /// The conversation outgrew the model's context window (the model's limit).
    ContextExceeded,
}

/// What the agent observed during one run.
#[derive(Debug, Clone, Copy)]
pub struct RunEvidence<'a> {
    pub response_text: &'a str,
    /// Tool names in call order.
    pub tool_list: &'a [String],
    /// Harness faults (provider unreachable after retries, ...). Any makes the run fail to pass.
    pub harness_errors: &'a [String],
    pub end: RunEnd,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RunVerdict {
    pub passed: bool,
    pub solved: bool,
    pub solve_details: SolveDetails,
}

/// Score one run of `task`.
pub async fn score_run(
    task: &Task,
    evidence: &RunEvidence<'_>,
    vault: &VaultState,
    judge: Option<&dyn Judge>,
    budget: RegexBudget,
) -> RunVerdict {
    let passed = evidence.harness_errors.is_empty() && evidence.end == RunEnd::Answered;
    let called: HashSet<&str> = evidence.tool_list.iter().map(String::as_str).collect();
    let expected_tools_met = task.expected_tools.iter().all(|t| called.contains(t.as_str()));
    let forbidden_tools_clean = !task.forbidden_tools.iter().any(|t| called.contains(t.as_str()));

    // A run that did not pass cannot be solved, so its matchers are not
    // evaluated: that would only spend judge calls on a foregone verdict.
    let outcome = if passed {
        let ctx = JudgeContext { user_message: &task.user_message, response_text: evidence.response_text };
        matchers::evaluate(&task.output_matchers, ctx, judge, budget).await
    } else {
        let judge_attempted = task.has_judge_matcher();
        matchers::MatcherOutcome {
            pass: false,
            details: Vec::new(),
            judge_attempted,
            judge_available: judge.is_some(),
            judge_skipped: judge_attempted && judge.is_none(),
        }
    };

    let (vault_assertions_pass, vault_assertion_details) = assertions::evaluate(&task.vault_assertions, vault, budget);
    let tool_calls = evidence.tool_list.len() as u64;
    let tool_budget_ok = task.tool_call_budget.is_none_or(|budget| tool_calls <= u64::from(budget));

    let solve_details = SolveDetails {
        expected_tools_met,
        forbidden_tools_clean,
        matchers_pass: outcome.pass,
        matcher_details: outcome.details,
        judge_attempted: outcome.judge_attempted,
        judge_available: outcome.judge_available,
        judge_skipped: outcome.judge_skipped,
        vault_assertions_pass,
        vault_assertion_details,
        tool_budget_ok,
    };
    RunVerdict { passed, solved: passed && solve_details.all_checks_hold(), solve_details }
}

/// Drive a future that never waits on I/O (scoring without a network judge).
#[cfg(test)]
pub(crate) fn ready<F: std::future::Future>(f: F) -> F::Output {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match std::pin::pin!(f).poll(&mut cx) {
        std::task::Poll::Ready(v) => v,
        std::task::Poll::Pending => panic!("future waited on I/O in a pure test"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::task::Matcher;

    fn task() -> Task {
        crate::fsio::parse_json(
            r#"{
                "id": "t", "description": "d", "userMessage": "How many?", "difficulty": "T2",
                "category": "aggregation", "fixture": "f",
                "expectedTools": ["find_files_by_content"], "forbiddenTools": ["delete_file"],
                "outputMatchers": [{"type": "contains", "value": "7"}],
                "vaultAssertions": [{"type": "fileExists", "path": "eval-scratch/a.md"}],
                "toolCallBudget": 2
            }"#,
        )
        .unwrap()
    }

    fn run(task: &Task, text: &str, tools: &[&str], errors: &[String], end: RunEnd, vault: &VaultState) -> RunVerdict {
        let tools: Vec<String> = tools.iter().map(|s| s.to_string()).collect();
        let ev = RunEvidence { response_text: text, tool_list: &tools, harness_errors: errors, end };
        let budget = RegexBudget::per_pattern(std::time::Duration::from_secs(5));
        ready(score_run(task, &ev, vault, None, budget))
    }

    fn vault() -> VaultState {
        let mut v = VaultState::default();
        v.files.insert("eval-scratch/a.md".into(), b"x".to_vec());
        v
    }

    #[test]
    fn solved_needs_every_check() {
        let t = task();
        let v = vault();
        assert!(run(&t, "7 notes", &["find_files_by_content"], &[], RunEnd::Answered, &v).solved);
        let r = run(&t, "7 notes", &["read_file"], &[], RunEnd::Answered, &v);
        assert!(r.passed && !r.solved && !r.solve_details.expected_tools_met);
        let r = run(&t, "7", &["find_files_by_content", "delete_file"], &[], RunEnd::Answered, &v);
        assert!(!r.solved && !r.solve_details.forbidden_tools_clean);
        let r = run(&t, "six", &["find_files_by_content"], &[], RunEnd::Answered, &v);
        assert!(!r.solved && !r.solve_details.matchers_pass);
        let r = run(&t, "7", &["find_files_by_content"], &[], RunEnd::Answered, &VaultState::default());
        assert!(!r.solved && !r.solve_details.vault_assertions_pass);
    }

    #[test]
    fn budget_is_inclusive() {
        let t = task();
        let v = vault();
        let at = run(&t, "7", &["find_files_by_content", "read_file"], &[], RunEnd::Answered, &v);
        assert!(at.solved && at.solve_details.tool_budget_ok);
        let over = run(&t, "7", &["find_files_by_content", "read_file", "read_file"], &[], RunEnd::Answered, &v);
        assert!(!over.solved && !over.solve_details.tool_budget_ok);
    }

    #[test]
    fn runs_that_did_not_pass_skip_matchers() {
        let mut t = task();
        t.output_matchers.push(Matcher::Judge { criteria: "c".into() });
        let v = vault();
        for (errors, end) in [
            (vec!["provider: HTTP 503 after 4 attempts".to_string()], RunEnd::Answered),
            (vec![], RunEnd::TimedOut),
            (vec![], RunEnd::TurnLimit),
            (vec![], RunEnd::ContextExceeded),
        ] {
            let r = run(&t, "7", &["find_files_by_content"], &errors, end, &v);
            assert!(!r.passed && !r.solved);
            assert!(r.solve_details.matcher_details.is_empty());
            assert!(r.solve_details.judge_attempted && r.solve_details.judge_skipped);
        }
        // Vault assertions are still evaluated: the evidence is useful even on a failure.
        let r = run(&t, "7", &[], &[], RunEnd::TimedOut, &v);
        assert_eq!(r.solve_details.vault_assertion_details.len(), 1);
    }
}
