//! The judge a sweep uses for `judge` matchers. This is the one place a sweep
//! constructs it: from the environment (`EVAL_JUDGE_PROVIDER`,
//! `EVAL_JUDGE_MODEL`, `EVAL_JUDGE_API_KEY` or `GEMINI_API_KEY`, see
//! `crate::judge`).

use std::sync::Arc;

use anyhow::{Context, Result};

use crate::score::Judge;

/// Printed once when a suite has judge matchers and no judge is configured.
pub const UNAVAILABLE: &str = "[judge unavailable]";

/// The configured judge; `Ok(None)` when no key is set (judge matchers then
/// fail with `judge_skipped`, as the results core scores them), an error when
/// the judge settings are wrong, so a sweep never starts with a broken judge.
pub fn configured() -> Result<Option<Arc<dyn Judge>>> {
    crate::judge::try_from_env().context("the judge settings (EVAL_JUDGE_*) are invalid")
}
