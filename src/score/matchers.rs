//! Output matchers: verdicts on the model's final answer. `contains` and
//! `regex` are pure; `judge` asks a [`Judge`], the one I/O scoring may do.
//!
//! Semantics follow the reference harness: all matchers must hold, an array
//! value is any-of, a pattern that does not compile fails closed, and a judge
//! matcher without a judge fails with `judge_skipped`.

use std::future::Future;
use std::pin::Pin;

use crate::format::OneOrMany;
use crate::format::result::MatcherDetail;
use crate::format::task::Matcher;

use super::sandbox::{self, RegexBudget};

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What the judge sees besides the criteria. It never sees which model answered.
#[derive(Debug, Clone, Copy)]
pub struct JudgeContext<'a> {
    pub user_message: &'a str,
    pub response_text: &'a str,
}

/// A model that answers YES or NO to "does this response meet the criteria".
/// Implemented by the runner over any provider; tests use scripted judges.
pub trait Judge: Send + Sync {
    /// The pinned model id, recorded with results.
    fn model_id(&self) -> &str;

    /// `Ok(true)` only for an exact YES; `Err` for a call that failed.
    fn judge<'a>(&'a self, criteria: &'a str, ctx: JudgeContext<'a>) -> BoxFuture<'a, Result<bool, String>>;
}

/// `contains`: any candidate is a case-sensitive substring of `text`.
pub fn contains(value: &OneOrMany, text: &str) -> bool {
    value.as_slice().iter().any(|needle| text.contains(needle.as_str()))
}

/// `regex`: any candidate pattern matches `text`; a pattern that does not
/// compile or does not finish within its budget counts as no match (fail
/// closed), with the reason, naming the pattern, in the error.
pub fn regex(value: &OneOrMany, flags: Option<&str>, text: &str, budget: RegexBudget) -> (bool, Option<String>) {
    let mut first_error = None;
    for pattern in value.as_slice() {
        match sandbox::test(pattern, flags, text, &budget) {
            Ok(true) => return (true, None),
            Ok(false) => {}
            Err(e) => {
                first_error.get_or_insert(e.to_string());
            }
        }
    }
    (false, first_error)
}

/// The outcome of a task's output matchers on one response.
#[derive(Debug, Clone, PartialEq)]
pub struct MatcherOutcome {
    pub pass: bool,
    pub details: Vec<MatcherDetail>,
    pub judge_attempted: bool,
    pub judge_available: bool,
    pub judge_skipped: bool,
}

/// Evaluate every matcher in order. Judge calls happen only for judge matchers.
pub async fn evaluate(
    matchers: &[Matcher],
    ctx: JudgeContext<'_>,
    judge: Option<&dyn Judge>,
    budget: RegexBudget,
) -> MatcherOutcome {
    let mut details = Vec::with_capacity(matchers.len());
    let mut judge_attempted = false;
    for m in matchers {
        let detail = match m {
            Matcher::Contains { value } => MatcherDetail::Contains {
                value: value.clone(),
                verdict: contains(value, ctx.response_text),
                error: None,
            },
            Matcher::Regex { value, flags } => {
                let (verdict, error) = regex(value, flags.as_deref(), ctx.response_text, budget);
                MatcherDetail::Regex { value: value.clone(), flags: flags.clone(), verdict, error }
            }
            Matcher::Judge { criteria } => {
                judge_attempted = true;
                let (verdict, error) = match judge {
                    None => (false, Some("no judge available".to_string())),
                    Some(j) => match j.judge(criteria, ctx).await {
                        Ok(v) => (v, None),
                        // A failed judge call must not look like a pass.
                        Err(e) => (false, Some(e)),
                    },
                };
                MatcherDetail::Judge { criteria: criteria.clone(), verdict, error }
            }
        };
        details.push(detail);
    }
    let judge_available = judge.is_some();
    MatcherOutcome {
        pass: details.iter().all(MatcherDetail::verdict),
        details,
        judge_attempted,
        judge_available,
        judge_skipped: judge_attempted && !judge_available,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(s: &str) -> OneOrMany {
        OneOrMany::One(s.into())
    }

    fn many(v: &[&str]) -> OneOrMany {
        OneOrMany::Many(v.iter().map(|s| s.to_string()).collect())
    }

    struct Scripted(Result<bool, String>);

    impl Judge for Scripted {
        fn model_id(&self) -> &str {
            "scripted"
        }
        fn judge<'a>(&'a self, _c: &'a str, _ctx: JudgeContext<'a>) -> BoxFuture<'a, Result<bool, String>> {
            Box::pin(async move { self.0.clone() })
        }
    }

    const BUDGET: RegexBudget = RegexBudget::per_pattern(std::time::Duration::from_secs(5));

    const CTX: JudgeContext<'static> =
        JudgeContext { user_message: "q", response_text: "The Halverston budget is 88,000 marks." };

    #[test]
    fn contains_is_case_sensitive_and_any_of() {
        assert!(contains(&one("88,000"), CTX.response_text));
        assert!(!contains(&one("halverston"), CTX.response_text));
        assert!(contains(&many(&["nope", "Halverston"]), CTX.response_text));
        assert!(!contains(&many(&[]), CTX.response_text));
    }

    #[test]
    fn regex_any_of_and_fail_closed() {
        assert_eq!(regex(&one(r"\d{2},\d{3}"), None, CTX.response_text, BUDGET), (true, None));
        assert!(regex(&many(&["zzz", "budget"]), Some("i"), CTX.response_text, BUDGET).0);
        let (verdict, error) = regex(&one("(broken"), None, CTX.response_text, BUDGET);
        assert!(!verdict);
        assert!(error.unwrap().contains("invalid regular expression"));
        // A catastrophic pattern fails closed at its budget, naming the pattern.
        let short = RegexBudget::per_pattern(std::time::Duration::from_millis(100));
        let started = std::time::Instant::now();
        let (verdict, error) = regex(&one("(a|a)*b"), None, &"a".repeat(24), short);
        assert!(!verdict && started.elapsed() < std::time::Duration::from_secs(2));
        assert!(error.unwrap().contains("/(a|a)*b/ did not finish within"));
    }

    #[test]
    fn all_matchers_must_hold() {
        let ms = vec![
            Matcher::Contains { value: one("88,000") },
            Matcher::Regex { value: one("^the"), flags: Some("i".into()) },
        ];
        assert!(crate::score::ready(evaluate(&ms, CTX, None, BUDGET)).pass);
        let ms = vec![Matcher::Contains { value: one("88,000") }, Matcher::Contains { value: one("99,000") }];
        let out = crate::score::ready(evaluate(&ms, CTX, None, BUDGET));
        assert!(!out.pass);
        assert_eq!(out.details.iter().map(MatcherDetail::verdict).collect::<Vec<_>>(), [true, false]);
    }

    #[test]
    fn judge_without_judge_is_skipped_and_fails() {
        let ms = vec![Matcher::Judge { criteria: "c".into() }];
        let out = crate::score::ready(evaluate(&ms, CTX, None, BUDGET));
        assert!(!out.pass && out.judge_attempted && !out.judge_available && out.judge_skipped);
        let yes = Scripted(Ok(true));
        let out = crate::score::ready(evaluate(&ms, CTX, Some(&yes), BUDGET));
        assert!(out.pass && out.judge_available && !out.judge_skipped);
        let broken = Scripted(Err("HTTP 500".into()));
        let out = crate::score::ready(evaluate(&ms, CTX, Some(&broken), BUDGET));
        assert!(!out.pass);
        assert_eq!(
            out.details[0],
            MatcherDetail::Judge { criteria: "c".into(), verdict: false, error: Some("HTTP 500".into()) }
        );
    }
}
