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

use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::env;

/// Deepest nesting of lists and mappings read from YAML frontmatter (notes,
/// sessions, skills, docs pages); deeper YAML is refused as malformed. Every
/// step after parsing (conversion, comparison, even dropping the value)
/// recurses once per level, so this bound is what keeps a few kilobytes of
/// `- - - - x` from overflowing the stack. It is fixed rather than set per
/// sweep because pure scoring functions and the site builder read YAML too;
/// real frontmatter is one or two levels deep.
pub const MAX_NESTING: usize = 64;

/// Longest regular expression (in characters) vaultbench compiles, from a
/// task or a model. The `regress` compiler recurses over the pattern: in a
/// debug build, 4,096 characters of `a|a|a|…` overflow a thread's 2 MiB
/// stack (3,584 do not; a release build takes 16,384). The longest pattern
/// in the reference suite has under 400 characters; our compiled checks
/// reach about 2,000.
pub const MAX_PATTERN_LEN: usize = 2048;

/// The caps and deadlines of a sweep. [`Limits::default`] is what a user gets.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Most bytes read of one HTTP response body; a longer body is a
    /// harness error for that call (never buffered past this).
    pub max_response_bytes: u64,
    /// Most JSON items (the commas and brackets outside strings) in one
    /// answer: what bounds the memory of parsing it, which for a body of
    /// tiny values would otherwise be many times its size.
    pub max_response_items: u64,
    /// How long one model call may wait for the server to start answering
    /// (response headers): the model's thinking time, so generous.
    /// `VAULTBENCH_HTTP_TIMEOUT_S` overrides it.
    pub http_timeout: Duration,
    /// Connecting to a model server (TCP and TLS); never longer than
    /// `http_timeout`.
    pub connect_timeout: Duration,
    /// Once the headers are in, the longest gap between two pieces of the
    /// answer: a non-streaming answer is complete when its headers are sent,
    /// so a gap is the server's or the network's fault.
    pub body_stall_timeout: Duration,
    /// Once the headers are in, the longest time to receive the whole answer.
    pub body_timeout: Duration,
    /// When a run's `timeoutMs` ends while a call still waits for the
    /// server to start answering, how long the server has to answer a cheap
    /// second request (its model list or version). Answered: the model was
    /// still thinking, and the run timed out. Not answered: the server is
    /// hung, a harness error. Keep it below `timeout_grace`.
    pub liveness_timeout: Duration,
    /// Calls in all for one model request, the first included.
    /// `VAULTBENCH_RETRY_ATTEMPTS` overrides it.
    pub retry_attempts: u32,
    /// The wait before the first retry; it doubles for each further retry,
    /// with jitter. `VAULTBENCH_RETRY_BASE_MS` overrides it.
    pub retry_base_delay: Duration,
    /// No single backoff is longer than this (a server's `Retry-After` may
    /// ask for more, within `retry_budget`).
    pub retry_max_delay: Duration,
    /// No retry starts later than this after the first call; a server
    /// asking to wait past it ends the call at once.
    /// `VAULTBENCH_RETRY_MAX_S` overrides it.
    pub retry_budget: Duration,
    /// Most bytes of one file a read tool returns.
    pub max_read_bytes: u64,
    /// Most bytes one write (`write_file`, `append_content`, memory) may add.
    /// A megabyte is already a long book; a larger write is a model gone wrong.
    pub max_write_bytes: u64,
    /// Most bytes of one tool result fed back to the model.
    pub max_tool_result_bytes: usize,
    /// Most bytes of the whole conversation sent to the model in one call:
    /// about a million tokens, the largest context window of the hosted
    /// models we run, so no real run comes near it. With the caps above it
    /// bounds a run's memory: eight hostile runs at once stay under 512 MB.
    pub max_conversation_bytes: usize,
    /// How long past its `timeoutMs` a run may take to stop and be scored.
    pub timeout_grace: Duration,
    /// Most bytes of one input file read whole: a task, result, baseline,
    /// reference trajectory, calibration set, pricing table, configuration,
    /// docs page or template. A larger file is an error naming it.
    pub max_input_file_bytes: u64,
    /// Most time one regular expression may take on one text (a tool search
    /// of one file, a matcher, an assertion); never past the run's deadline.
    pub regex_timeout: Duration,
    /// The rates a model server allows, when the user knows them (`--rpm`,
    /// `--tpm`, the quotas file): requests are paced to them. Unset, the
    /// quota is learned from the server's answers alone (see
    /// `provider::quota`).
    pub quota: QuotaRates,
}

/// A model server's rates, as a user configured them; `None`: not limited.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct QuotaRates {
    /// Requests a minute.
    pub requests_per_minute: Option<f64>,
    /// Input tokens a minute (estimated before sending, see `provider::quota`).
    pub tokens_per_minute: Option<f64>,
}

impl QuotaRates {
    pub fn is_empty(&self) -> bool {
        *self == QuotaRates::default()
    }

    /// `self` with each rate `over` sets replaced by it.
    pub fn overridden_by(self, over: QuotaRates) -> QuotaRates {
        QuotaRates {
            requests_per_minute: over.requests_per_minute.or(self.requests_per_minute),
            tokens_per_minute: over.tokens_per_minute.or(self.tokens_per_minute),
        }
    }
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            // The longest real answers (128k output tokens) are under 1 MiB
            // of JSON; 4 MiB leaves room and keeps 16 concurrent calls
            // within the sweep's memory bound.
            max_response_bytes: 4 * 1024 * 1024,
            max_response_items: 100_000,
            // A local model on a small machine can take minutes per answer.
            http_timeout: Duration::from_secs(600),
            connect_timeout: Duration::from_secs(30),
            body_stall_timeout: Duration::from_secs(30),
            body_timeout: Duration::from_secs(120),
            liveness_timeout: Duration::from_secs(1),
            retry_attempts: 6,
            retry_base_delay: Duration::from_secs(2),
            retry_max_delay: Duration::from_secs(60),
            retry_budget: Duration::from_secs(600),
            max_read_bytes: 2 * 1024 * 1024,
            max_write_bytes: 1024 * 1024,
            max_tool_result_bytes: 256 * 1024,
            max_conversation_bytes: 4 * 1024 * 1024,
            timeout_grace: Duration::from_secs(2),
            max_input_file_bytes: 256 * 1024 * 1024,
            regex_timeout: Duration::from_secs(1),
            quota: QuotaRates::default(),
        }
    }
}

/// The longest wait any figure from outside may ask for (an environment
/// value, a header, a server's JSON): longer ones are clamped to it, so that
/// no deadline computed from one can overflow.
pub const LONGEST_OUTSIDE_WAIT: Duration = Duration::from_secs(24 * 60 * 60);

impl Limits {
    /// The limits on the model's tool calls and the run, for `run --help`:
    /// each with its value.
    pub fn tool_call_help(&self) -> String {
        let lines = [
            ("a file a tool reads or searches", size(self.max_read_bytes)),
            ("one write (write_file, append_content, memory)", size(self.max_write_bytes)),
            ("one tool answer fed back to the model", size(self.max_tool_result_bytes as u64)),
            ("the whole conversation", size(self.max_conversation_bytes as u64)),
            ("one regular expression on one text", format!("{} ms", self.regex_timeout.as_millis())),
            ("past timeoutMs to stop and score a run", format!("{} ms", self.timeout_grace.as_millis())),
            ("a regular expression's length", format!("{MAX_PATTERN_LEN} characters")),
            ("nesting of YAML frontmatter", format!("{MAX_NESTING} levels")),
        ];
        let mut out = String::from("Limits on the model's tool calls and the run:\n");
        for (what, value) in lines {
            out.push_str(&format!("  {what:<48}{value}\n"));
        }
        out
    }
}

/// A byte count as people read it: `32 MiB`, `256 KiB`, `100 bytes`.
fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
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

/// `start + wait`, saturating far in the future instead of overflowing.
pub fn deadline_after(start: Instant, wait: Duration) -> Instant {
    start.checked_add(wait).unwrap_or_else(|| start + LONGEST_OUTSIDE_WAIT)
}

impl Limits {
    /// The limits on model servers, for `--help`: each with its value and
    /// the variable that sets it, if any.
    pub fn model_server_help(&self) -> String {
        let secs = |d: Duration| format!("{} s", d.as_secs_f64());
        let rows = [
            ("response body", format!("{} MiB", self.max_response_bytes as f64 / 1048576.0), ""),
            ("JSON items in one answer", self.max_response_items.to_string(), ""),
            ("wait for an answer to begin", secs(self.http_timeout), "VAULTBENCH_HTTP_TIMEOUT_S"),
            ("connect", secs(self.connect_timeout.min(self.http_timeout)), ""),
            ("gap in an answer", secs(self.body_stall_timeout), ""),
            ("read a whole answer", secs(self.body_timeout), ""),
            ("liveness check at a run's timeout", secs(self.liveness_timeout), ""),
            ("attempts per model call", self.retry_attempts.to_string(), "VAULTBENCH_RETRY_ATTEMPTS"),
            ("first backoff (ms)", self.retry_base_delay.as_millis().to_string(), "VAULTBENCH_RETRY_BASE_MS"),
            ("retry budget", secs(self.retry_budget), "VAULTBENCH_RETRY_MAX_S"),
            (
                "requests a minute (quota)",
                self.quota.requests_per_minute.map_or("learned from the server".into(), |r| r.to_string()),
                "--rpm, quotas.toml",
            ),
            (
                "input tokens a minute (quota)",
                self.quota.tokens_per_minute.map_or("learned from the server".into(), |r| r.to_string()),
                "--tpm, quotas.toml",
            ),
        ];
        let mut out = String::from(
            "Limits on model servers (docs/limits.md lists every limit and what hitting it looks like):\n",
        );
        for (what, value, var) in rows {
            let var = if var.is_empty() { String::new() } else { format!("  [{var}]") };
            out.push_str(&format!("  {what:<36}{value}{var}\n"));
        }
        out
    }

    /// The defaults, with the overrides the environment sets:
    /// `VAULTBENCH_HTTP_TIMEOUT_S` (seconds, fractions allowed),
    /// `VAULTBENCH_RETRY_ATTEMPTS`, `VAULTBENCH_RETRY_BASE_MS` and
    /// `VAULTBENCH_RETRY_MAX_S`. A value that is not a number of the right
    /// kind is an error naming the variable; a huge one is clamped to
    /// [`LONGEST_OUTSIDE_WAIT`].
    pub fn from_env() -> Result<Limits> {
        Limits::from_vars(env::nonempty)
    }

    /// [`Limits::from_env`] with the variables read by `var`.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Limits> {
        let mut limits = Limits::default();
        if let Some(v) = var("VAULTBENCH_HTTP_TIMEOUT_S") {
            limits.http_timeout = v
                .parse::<f64>()
                .ok()
                .filter(|s| *s > 0.0)
                .and_then(|s| seconds_from_outside(s, LONGEST_OUTSIDE_WAIT))
                .with_context(|| {
                    format!("VAULTBENCH_HTTP_TIMEOUT_S is `{v}`: set it to a positive number of seconds, e.g. 600")
                })?;
        }
        if let Some(v) = var("VAULTBENCH_RETRY_ATTEMPTS") {
            limits.retry_attempts = v.parse().ok().filter(|n| *n >= 1).with_context(|| {
                format!("VAULTBENCH_RETRY_ATTEMPTS is `{v}`: set it to a whole number of at least 1")
            })?;
        }
        if let Some(v) = var("VAULTBENCH_RETRY_BASE_MS") {
            let ms: u64 = v.parse().with_context(|| {
                format!("VAULTBENCH_RETRY_BASE_MS is `{v}`: set it to a whole number of milliseconds")
            })?;
            limits.retry_base_delay = Duration::from_millis(ms).min(LONGEST_OUTSIDE_WAIT);
            limits.retry_max_delay = limits.retry_max_delay.max(limits.retry_base_delay);
        }
        if let Some(v) = var("VAULTBENCH_RETRY_MAX_S") {
            let s: u64 = v
                .parse()
                .with_context(|| format!("VAULTBENCH_RETRY_MAX_S is `{v}`: set it to a whole number of seconds"))?;
            limits.retry_budget = Duration::from_secs(s).min(LONGEST_OUTSIDE_WAIT);
        }
        Ok(limits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_lists_every_cap_with_its_value() {
        let help = Limits::default().tool_call_help();
        assert!(help.contains("one write (write_file, append_content, memory)"), "{help}");
        assert!(help.contains(" 1 MiB\n") && help.contains(" 256 KiB\n") && help.contains(" 1000 ms\n"), "{help}");
        assert_eq!(size(100), "100 bytes");
        assert_eq!(size(1536), "1536 bytes");
    }

    #[test]
    fn outside_seconds_never_overflow() {
        let cap = Duration::from_secs(3600);
        assert_eq!(seconds_from_outside(1e300, cap), Some(cap));
        assert_eq!(seconds_from_outside(f64::INFINITY, cap), None);
        assert_eq!(seconds_from_outside(f64::NAN, cap), None);
        assert_eq!(seconds_from_outside(-1.0, cap), None);
        assert_eq!(seconds_from_outside(1.5, cap), Some(Duration::from_millis(1500)));
    }

    fn vars(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn environment_overrides_are_checked_and_clamped() {
        assert_eq!(Limits::from_vars(vars(&[])).unwrap(), Limits::default());
        let l = Limits::from_vars(vars(&[
            ("VAULTBENCH_HTTP_TIMEOUT_S", "1e300"),
            ("VAULTBENCH_RETRY_ATTEMPTS", "2"),
            ("VAULTBENCH_RETRY_BASE_MS", "18446744073709551615"),
            ("VAULTBENCH_RETRY_MAX_S", "18446744073709551615"),
        ]))
        .unwrap();
        assert_eq!(l.http_timeout, LONGEST_OUTSIDE_WAIT);
        assert_eq!(l.retry_attempts, 2);
        assert_eq!(
            (l.retry_base_delay, l.retry_max_delay, l.retry_budget),
            (LONGEST_OUTSIDE_WAIT, LONGEST_OUTSIDE_WAIT, LONGEST_OUTSIDE_WAIT)
        );
        let l = Limits::from_vars(vars(&[("VAULTBENCH_HTTP_TIMEOUT_S", "0.25")])).unwrap();
        assert_eq!(l.http_timeout, Duration::from_millis(250));
        for (name, bad) in [
            ("VAULTBENCH_HTTP_TIMEOUT_S", "NaN"),
            ("VAULTBENCH_HTTP_TIMEOUT_S", "inf"),
            ("VAULTBENCH_HTTP_TIMEOUT_S", "0"),
            ("VAULTBENCH_HTTP_TIMEOUT_S", "-5"),
            ("VAULTBENCH_RETRY_ATTEMPTS", "0"),
            ("VAULTBENCH_RETRY_ATTEMPTS", "1e3"),
            ("VAULTBENCH_RETRY_BASE_MS", "-1"),
            ("VAULTBENCH_RETRY_MAX_S", "ten"),
        ] {
            let pairs: &'static [(&'static str, &'static str)] = Box::leak(Box::new([(name, bad)]));
            let err = Limits::from_vars(vars(pairs)).unwrap_err().to_string();
            assert!(err.starts_with(&format!("{name} is `{bad}`")), "{err}");
        }
    }

    #[test]
    fn help_lists_the_model_server_limits_with_their_variables() {
        let help = Limits { http_timeout: Duration::from_millis(2500), ..Limits::default() }.model_server_help();
        assert!(help.contains("response body                       4 MiB\n"), "{help}");
        assert!(help.contains("wait for an answer to begin         2.5 s  [VAULTBENCH_HTTP_TIMEOUT_S]"), "{help}");
        for var in ["VAULTBENCH_RETRY_ATTEMPTS", "VAULTBENCH_RETRY_BASE_MS", "VAULTBENCH_RETRY_MAX_S"] {
            assert!(help.contains(var), "{help}");
        }
    }

    #[test]
    fn deadlines_saturate() {
        let now = Instant::now();
        assert_eq!(deadline_after(now, Duration::from_secs(1)), now + Duration::from_secs(1));
        assert!(deadline_after(now, Duration::MAX) > now);
    }
}
