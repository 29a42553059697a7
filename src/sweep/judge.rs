//! The judge a sweep uses for `judge` matchers. This is the one place a sweep
//! constructs it: from the environment (`EVAL_JUDGE_PROVIDER`,
//! `EVAL_JUDGE_MODEL`, `EVAL_JUDGE_API_KEY` or `GEMINI_API_KEY`, see
//! `crate::judge`), paced to its own quota (the quotas file's entry for the
//! judge's provider and model, overridden by `--judge-rpm`/`--judge-tpm`).
//!
//! Also the offline reference judge ([`ReferenceJudge`]), which lets
//! `run --provider reference` score judge matchers without a network.

use std::sync::Arc;

use anyhow::{Context, Result};

use crate::limits::QuotaRates;
use crate::provider::quota::Quota;
use crate::quotas::QuotaTable;
use crate::score::Judge;

/// The judge of a sweep, and the quota of its server.
#[derive(Clone, Default)]
pub struct SweepJudge {
    pub judge: Option<Arc<dyn Judge>>,
    pub quota: Option<Arc<Quota>>,
    /// `provider / model`, for the summary.
    pub label: String,
    /// The offline reference judge, not a model.
    pub offline: bool,
}

/// The configured judge with its quota: `quotas`' entry for the judge's
/// (provider, model), with `flags` winning. No judge when no key is set.
pub fn configured_with(quotas: &QuotaTable, flags: QuotaRates) -> Result<SweepJudge> {
    let mut config = crate::judge::JudgeConfig::from_env().context("the judge settings (EVAL_JUDGE_*) are invalid")?;
    if !config.has_key() {
        return Ok(SweepJudge::default());
    }
    let entry = quotas.get(&config.provider, &config.model).map(|e| e.rates()).unwrap_or_default();
    config.limits.quota = entry.overridden_by(flags);
    let built = crate::judge::build_with_quota(&config).context("the judge settings (EVAL_JUDGE_*) are invalid")?;
    Ok(SweepJudge { judge: Some(built.judge), quota: built.quota, label: config.label(), offline: false })
}

/// Printed once when a suite has judge matchers and no judge is configured.
pub const UNAVAILABLE: &str = "[judge unavailable]";

/// The warning printed before a sweep starts when `tasks` have judge
/// matchers and no judge is configured; `None` when nothing is unscorable.
pub fn unscorable_warning(tasks: &[&crate::format::task::Task]) -> Option<String> {
    let judged: Vec<String> = tasks.iter().filter(|t| t.has_judge_matcher()).map(|t| t.id.clone()).collect();
    if judged.is_empty() {
        return None;
    }
    Some(format!(
        "{UNAVAILABLE} no judge is configured (set EVAL_JUDGE_API_KEY or GEMINI_API_KEY): {} of the {} selected \
         tasks have judge matchers ({}); their judge verdicts will fail as skipped, a run that meets every other \
         check cannot be solved, and `vaultbench bless` will refuse such a result unless --force",
        judged.len(),
        tasks.len(),
        crate::report::first_few(&judged)
    ))
}

/// The configured judge; `Ok(None)` when no key is set (judge matchers then
/// fail with `judge_skipped`, as the results core scores them), an error when
/// the judge settings are wrong, so a sweep never starts with a broken judge.
pub fn configured() -> Result<Option<Arc<dyn Judge>>> {
    crate::judge::try_from_env().context("the judge settings (EVAL_JUDGE_*) are invalid")
}

/// The judge of `run --provider reference` when no judge model is
/// configured: it replays the labels recorded for the references instead
/// of asking a model. A task's reference answer is, by how the suite is
/// written and checked (`suite check`, `calibrate corpus`), an answer that
/// meets each of its judge criteria: so the verdict is YES exactly when the
/// response is that task's reference answer (whitespace around it aside),
/// and NO for any answer it holds no label for. It measures nothing about a
/// model; it lets the offline path run every stage of the loop. A result it
/// decided is marked (`offline_judge`) and can never be blessed.
pub struct ReferenceJudge {
    /// (user message, criteria) -> the reference answers labelled YES for them.
    labels: std::collections::HashMap<(String, String), Vec<String>>,
}

/// How the offline reference judge is named in messages and summaries.
pub const REFERENCE_JUDGE: &str = "the offline reference judge (replays the labels recorded for the references)";

impl ReferenceJudge {
    /// The labels of the judge matchers of `tasks`, from their references in `dir`.
    pub fn load(tasks: &[&crate::format::task::Task], dir: &std::path::Path) -> ReferenceJudge {
        let mut labels: std::collections::HashMap<(String, String), Vec<String>> = Default::default();
        for task in tasks {
            let Ok(reference) =
                crate::fsio::read_json::<crate::format::reference::Reference>(&dir.join(format!("{}.json", task.id)))
            else {
                continue;
            };
            for criteria in task.judge_criteria() {
                labels
                    .entry((task.user_message.clone(), criteria.to_string()))
                    .or_default()
                    .push(reference.answer.trim().to_string());
            }
        }
        ReferenceJudge { labels }
    }
}

impl Judge for ReferenceJudge {
    fn model_id(&self) -> &str {
        "reference-labels"
    }

    fn judge<'a>(
        &'a self,
        criteria: &'a str,
        ctx: crate::score::JudgeContext<'a>,
    ) -> crate::provider::BoxFuture<'a, Result<bool, String>> {
        let key = (ctx.user_message.to_string(), criteria.to_string());
        let yes = self.labels.get(&key).is_some_and(|answers| answers.iter().any(|a| a == ctx.response_text.trim()));
        Box::pin(async move { Ok(yes) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::score::JudgeContext;

    #[test]
    fn the_reference_judge_says_yes_only_to_the_labelled_reference_answer() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.json"), r#"{"answer": "The harvest was 940 kg."}"#).unwrap();
        let task: crate::format::task::Task = serde_json::from_str(
            r#"{"id": "t", "description": "d", "userMessage": "How much?", "difficulty": "T1", "category": "c",
                "outputMatchers": [{"type": "judge", "criteria": "Says 940 kg."}]}"#,
        )
        .unwrap();
        let judge = ReferenceJudge::load(&[&task], dir.path());
        let ask = |criteria: &str, user: &str, response: &str| {
            let ctx = JudgeContext { user_message: user, response_text: response };
            let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
            match std::pin::pin!(judge.judge(criteria, ctx)).as_mut().poll(&mut cx) {
                std::task::Poll::Ready(v) => v.unwrap(),
                std::task::Poll::Pending => unreachable!("the reference judge never waits"),
            }
        };
        assert!(ask("Says 940 kg.", "How much?", " The harvest was 940 kg.\n"));
        assert!(!ask("Says 940 kg.", "How much?", "940 kg, I guess"), "no label for another answer");
        assert!(!ask("Says 12 kg.", "How much?", "The harvest was 940 kg."), "no label for other criteria");
        assert!(!ask("Says 940 kg.", "Another task?", "The harvest was 940 kg."));
    }
}
