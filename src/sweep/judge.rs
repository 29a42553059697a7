//! The judge a sweep uses for `judge` matchers. This is the one place the
//! judge is constructed, so plugging in a real one changes only this file.

use std::sync::Arc;

use crate::score::Judge;

/// Printed once when a suite has judge matchers and no judge is configured.
pub const UNAVAILABLE: &str = "[judge unavailable]";

/// The configured judge, or `None`: judge matchers then fail with
/// `judge_skipped`, as the results core scores them.
pub fn configured() -> Option<Arc<dyn Judge>> {
    None
}
