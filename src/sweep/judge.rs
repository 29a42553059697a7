//! The judge a sweep uses for `judge` matchers. This is the one place a sweep
//! constructs it: from the environment (`EVAL_JUDGE_PROVIDER`,
//! `EVAL_JUDGE_MODEL`, `EVAL_JUDGE_API_KEY` or `GEMINI_API_KEY`, see
//! `crate::judge`), paced to its own quota (the quotas file's entry for the
//! judge's provider and model, overridden by `--judge-rpm`/`--judge-tpm`).

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
    Ok(SweepJudge { judge: Some(built.judge), quota: built.quota, label: config.label() })
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
