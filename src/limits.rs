//! Every cap and deadline vaultbench enforces against what it does not
//! control (a model's replies, a server's answers, a task's regexes), in one
//! typed value with documented defaults. Code below the command line takes
//! the limits it needs from a [`Limits`] passed down to it, never from a
//! literal of its own, so that `docs/limits.md`, `--help` and the behaviour
//! cannot drift apart.
//!
//! It owns the numbers only; each stage enforces its own (the HTTP layer the
//! body cap and deadlines, the vault tools the write and result caps, the
//! agent the conversation cap and the run deadline, the scorer the regex
//! budget).

use std::time::Duration;

/// The caps and deadlines of a sweep. [`Limits::default`] is what a user gets.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Most bytes read of one HTTP response body; a longer body is a
    /// harness error for that call (never buffered past this).
    pub max_response_bytes: u64,
    /// Whole-request deadline of one model call (connect, send, wait, read).
    /// `VAULTBENCH_HTTP_TIMEOUT_S` overrides it.
    pub http_timeout: Duration,
    /// Most bytes of one file a read tool returns.
    pub max_read_bytes: u64,
    /// Most bytes one write (`write_file`, `append_content`, memory) may add.
    pub max_write_bytes: u64,
    /// Most bytes of one tool result fed back to the model.
    pub max_tool_result_bytes: usize,
    /// Most bytes of the whole conversation sent to the model in one call.
    pub max_conversation_bytes: usize,
    /// How long past its `timeoutMs` a run may take to stop and be recorded.
    pub timeout_grace: Duration,
    /// Most bytes of one input file read whole: a task, result, baseline,
    /// reference trajectory, calibration set, pricing table, configuration,
    /// docs page or template. A larger file is an error naming it.
    pub max_input_file_bytes: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_response_bytes: 32 * 1024 * 1024,
            http_timeout: Duration::from_secs(600),
            max_read_bytes: 2 * 1024 * 1024,
            max_write_bytes: 4 * 1024 * 1024,
            max_tool_result_bytes: 256 * 1024,
            max_conversation_bytes: 8 * 1024 * 1024,
            timeout_grace: Duration::from_secs(2),
            max_input_file_bytes: 256 * 1024 * 1024,
        }
    }
}

/// A number of seconds from outside (an environment value, a header, a
/// server's JSON) as a [`Duration`], `None` when it is not a finite,
/// non-negative number. Values past `cap` are clamped to `cap`, so that no
/// outside figure can overflow a `Duration` or sleep for ever.
pub fn seconds_from_outside(secs: f64, cap: Duration) -> Option<Duration> {
    if !secs.is_finite() || secs < 0.0 {
        return None;
    }
    Some(if secs >= cap.as_secs_f64() { cap } else { Duration::from_secs_f64(secs) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outside_seconds_never_overflow() {
        let cap = Duration::from_secs(3600);
        assert_eq!(seconds_from_outside(1e300, cap), Some(cap));
        assert_eq!(seconds_from_outside(f64::INFINITY, cap), None);
        assert_eq!(seconds_from_outside(f64::NAN, cap), None);
        assert_eq!(seconds_from_outside(-1.0, cap), None);
        assert_eq!(seconds_from_outside(1.5, cap), Some(Duration::from_millis(1500)));
    }
}
