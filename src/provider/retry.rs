//! Retrying transient faults, in one place, for any [`Model`].
//!
//! [`Retrying`] wraps a model and repeats a call that failed with
//! [`ModelError::Transient`] (429, 5xx, reset or refused connections,
//! timeouts), waiting an exponentially growing delay with jitter, or what the
//! server's `Retry-After` asked for. It stops after a bounded number of
//! attempts or a bounded total time and then returns [`ModelError::Fatal`]
//! naming the attempts and the last error: the runner records that as a
//! harness error for the run, not as a model failure.
//!
//! Fatal errors pass through at once. It knows nothing about HTTP; providers
//! decide what is transient (see `http`).
//!
//! A request the server refused for its rate limits
//! ([`ModelError::RateLimited`], HTTP 429) is sent again without counting
//! as an attempt: the model's quota (see `quota`) holds it, and every other
//! request to that server, for the wait the server asked. Only the retry
//! budget and the run's deadline bound those waits, so a sweep loses no run
//! to a quota that eventually lets it through.
//!
//! The run's deadline ([`ChatRequest::deadline`]) bounds the retrying too: a
//! wait that would pass it ends the call at once, and a call whose time ran
//! out after a transient fault ([`ModelError::OutOfTime`] on a later
//! attempt) is a harness error, because a server fault took the run's time.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{BoxFuture, ChatRequest, Model, ModelError, ModelReply};
use crate::limits::{Limits, deadline_after};

/// How hard to retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Calls in all, the first included (at least 1).
    pub max_attempts: u32,
    /// The delay before the first retry; it doubles for each further retry.
    pub base_delay: Duration,
    /// No single wait is longer than this unless the server asked for more.
    pub max_delay: Duration,
    /// No retry starts after this much time since the first call.
    pub max_elapsed: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy::from_limits(&Limits::default())
    }
}

impl RetryPolicy {
    /// The policy of `limits` (`retry_*`).
    pub fn from_limits(limits: &Limits) -> RetryPolicy {
        RetryPolicy {
            max_attempts: limits.retry_attempts.max(1),
            base_delay: limits.retry_base_delay,
            max_delay: limits.retry_max_delay.max(limits.retry_base_delay),
            max_elapsed: limits.retry_budget,
        }
    }

    /// The wait before retry number `retry` (1 for the first retry): the
    /// exponential delay, of which a random half is taken off so that many
    /// runs hitting one rate limit do not come back in step.
    pub fn backoff(&self, retry: u32) -> Duration {
        let exp = self.base_delay.saturating_mul(1u32 << retry.saturating_sub(1).min(20));
        let full = exp.min(self.max_delay);
        let half = full / 2;
        half + half.mul_f64(fastrand::f64())
    }
}

/// A model whose transient faults are retried (see the module docs).
pub struct Retrying {
    inner: Arc<dyn Model>,
    policy: RetryPolicy,
}

impl Retrying {
    pub fn new(inner: Arc<dyn Model>, policy: RetryPolicy) -> Retrying {
        Retrying { inner, policy }
    }

    async fn chat_retrying(&self, request: ChatRequest<'_>) -> Result<ModelReply, ModelError> {
        let start = Instant::now();
        // Calls made, and how many of them the server refused for its rate
        // limits: refusals are not attempts (the quota decides when to send
        // again), so only `attempt - refusals` counts toward the limit.
        let mut attempt = 0u32;
        let mut refusals = 0u32;
        let mut last_fault: Option<String> = None;
        loop {
            attempt += 1;
            let (message, retry_after, refused) = match self.inner.chat(request).await {
                Ok(reply) => return Ok(reply),
                // A refusal for good reads the same on any attempt (a sweep counts identical ones).
                Err(e @ ModelError::Rejected(_)) => return Err(e),
                Err(ModelError::Fatal(m)) if attempt == 1 => return Err(ModelError::Fatal(m)),
                Err(ModelError::Fatal(m)) => {
                    return Err(ModelError::Fatal(format!("{m} (on attempt {attempt}, after transient errors)")));
                }
                // The conversation will not shrink by asking again.
                Err(e @ ModelError::ContextOverflow(_)) => return Err(e),
                // The model ran out of the run's time: its own, unless a
                // fault of the server took part of that time.
                Err(ModelError::OutOfTime(m)) => match last_fault {
                    None => return Err(ModelError::OutOfTime(m)),
                    Some(fault) => {
                        let provider = self.inner.provider();
                        let fault = fault.strip_prefix(provider).and_then(|f| f.strip_prefix(": ")).unwrap_or(&fault);
                        return Err(ModelError::Fatal(format!(
                            "{provider}: the run's time ran out on attempt {attempt}, after transient errors took \
                             part of it (a harness fault); last error: {fault}"
                        )));
                    }
                },
                Err(ModelError::Transient { message, retry_after }) => (message, retry_after, false),
                Err(ModelError::RateLimited { message, retry_after }) => {
                    refusals += 1;
                    (message, retry_after, true)
                }
            };
            let provider = self.inner.provider();
            let gave_up = |why: String| {
                let last = message.strip_prefix(provider).and_then(|m| m.strip_prefix(": ")).unwrap_or(&message);
                ModelError::Fatal(format!(
                    "{provider}: gave up after {attempt} attempt{} in {:.1} s ({why}); last error: {last}",
                    if attempt == 1 { "" } else { "s" },
                    start.elapsed().as_secs_f64()
                ))
            };
            if !refused && attempt - refusals >= self.policy.max_attempts {
                return Err(gave_up(format!("the limit is {} attempts", self.policy.max_attempts)));
            }
            let delay = match retry_after {
                // A refusal asking for no wait is retried after a backoff all the same.
                Some(d) if refused && d.is_zero() => self.policy.backoff(refusals),
                // Honour the server's wait, plus a little jitter so that
                // concurrent runs do not all return in the same instant.
                Some(d) if !refused => d.saturating_add(self.policy.base_delay.mul_f64(fastrand::f64() / 2.0)),
                Some(d) => d,
                None if refused => self.policy.backoff(refusals),
                None => self.policy.backoff(attempt - refusals),
            };
            if start.elapsed().saturating_add(delay) > self.policy.max_elapsed {
                return Err(gave_up(format!(
                    "the next try, in {:.1} s, would pass the {} s retry budget",
                    delay.as_secs_f64(),
                    self.policy.max_elapsed.as_secs()
                )));
            }
            if let Some(deadline) = request.deadline
                && deadline_after(Instant::now(), delay) >= deadline
            {
                return Err(gave_up(format!(
                    "the run's time (timeoutMs) runs out before the next try, in {:.1} s: a harness fault",
                    delay.as_secs_f64()
                )));
            }
            last_fault = Some(message.clone());
            // A refused request waits in its quota, which holds every
            // request to the server for the wait asked (see `quota`); a
            // refusal asking for none, or a model without a quota, waits here.
            let quota_waits = refused && self.inner.quota().is_some() && retry_after != Some(Duration::ZERO);
            if !quota_waits {
                tokio::time::sleep(delay).await;
            }
        }
    }
}

impl Model for Retrying {
    fn provider(&self) -> &str {
        self.inner.provider()
    }

    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn reports_cache(&self) -> bool {
        self.inner.reports_cache()
    }

    fn chat<'a>(&'a self, request: ChatRequest<'a>) -> BoxFuture<'a, Result<ModelReply, ModelError>> {
        Box::pin(self.chat_retrying(request))
    }

    fn quota(&self) -> Option<Arc<super::quota::Quota>> {
        self.inner.quota()
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, ModelError>> {
        self.inner.list_models()
    }

    fn loads_on_first_use(&self) -> bool {
        self.inner.loads_on_first_use()
    }

    fn unload_others(&self) -> BoxFuture<'_, Result<Vec<String>, ModelError>> {
        self.inner.unload_others()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Mutex;

    use super::*;
    use crate::provider::Usage;

    /// Answers from a script, counting calls.
    struct Scripted(Mutex<VecDeque<Result<ModelReply, ModelError>>>, Mutex<u32>);

    impl Model for Scripted {
        fn provider(&self) -> &str {
            "scripted"
        }
        fn model_id(&self) -> &str {
            "m"
        }
        fn reports_cache(&self) -> bool {
            false
        }
        fn chat<'a>(&'a self, _r: ChatRequest<'a>) -> BoxFuture<'a, Result<ModelReply, ModelError>> {
            *self.1.lock().unwrap() += 1;
            let next = self.0.lock().unwrap().pop_front().expect("script exhausted");
            Box::pin(async move { next })
        }
    }

    fn reply() -> ModelReply {
        ModelReply { text: "ok".into(), tool_calls: vec![], usage: Usage::default(), raw: None }
    }

    fn transient(m: &str) -> Result<ModelReply, ModelError> {
        Err(ModelError::Transient { message: m.into(), retry_after: None })
    }

    fn fast(max_attempts: u32) -> RetryPolicy {
        RetryPolicy {
            max_attempts,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(4),
            max_elapsed: Duration::from_secs(10),
        }
    }

    fn run(script: Vec<Result<ModelReply, ModelError>>, policy: RetryPolicy) -> (Result<ModelReply, ModelError>, u32) {
        run_until(script, policy, None)
    }

    fn run_until(
        script: Vec<Result<ModelReply, ModelError>>,
        policy: RetryPolicy,
        deadline: Option<Instant>,
    ) -> (Result<ModelReply, ModelError>, u32) {
        let inner = Arc::new(Scripted(Mutex::new(script.into()), Mutex::new(0)));
        let model = Retrying::new(inner.clone(), policy);
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        let req =
            ChatRequest { system: "", messages: &[], tools: &[], temperature: None, max_output_tokens: None, deadline };
        let out = rt.block_on(model.chat(req));
        let calls = *inner.1.lock().unwrap();
        (out, calls)
    }

    #[test]
    fn transient_errors_are_retried_until_success() {
        let (out, calls) = run(vec![transient("HTTP 503"), transient("reset"), Ok(reply())], fast(5));
        assert_eq!(out.unwrap().text, "ok");
        assert_eq!(calls, 3);
    }

    #[test]
    fn a_storm_ends_in_a_fatal_error_naming_attempts_and_last_error() {
        let (out, calls) = run((0..4).map(|i| transient(&format!("HTTP 500 #{i}"))).collect(), fast(4));
        assert_eq!(calls, 4);
        let Err(ModelError::Fatal(m)) = out else { panic!("{out:?}") };
        assert!(m.starts_with("scripted: gave up after 4 attempts"), "{m}");
        assert!(m.ends_with("last error: HTTP 500 #3"), "{m}");
    }

    #[test]
    fn rate_limit_refusals_are_not_attempts() {
        let refused = || Err(ModelError::RateLimited { message: "HTTP 429".into(), retry_after: None });
        let mut script: Vec<_> = (0..5).map(|_| refused()).collect();
        script.push(transient("HTTP 503"));
        script.push(Ok(reply()));
        let (out, calls) = run(script, fast(2));
        assert_eq!(out.unwrap().text, "ok");
        assert_eq!(calls, 7);
        // A refusal asking for more than the budget still ends the call.
        let mut policy = fast(5);
        policy.max_elapsed = Duration::from_secs(5);
        let long =
            Err(ModelError::RateLimited { message: "HTTP 429".into(), retry_after: Some(Duration::from_secs(60)) });
        let (out, calls) = run(vec![long], policy);
        assert_eq!(calls, 1);
        let Err(ModelError::Fatal(m)) = out else { panic!("{out:?}") };
        assert!(m.contains("would pass the 5 s retry budget"), "{m}");
    }

    #[test]
    fn fatal_errors_are_not_retried() {
        let (out, calls) = run(vec![Err(ModelError::Fatal("HTTP 401".into())), Ok(reply())], fast(5));
        assert_eq!(out, Err(ModelError::Fatal("HTTP 401".into())));
        assert_eq!(calls, 1);
    }

    #[test]
    fn a_retry_after_past_the_budget_gives_up_at_once() {
        let mut policy = fast(5);
        policy.max_elapsed = Duration::from_secs(5);
        let wait =
            Err(ModelError::Transient { message: "HTTP 429".into(), retry_after: Some(Duration::from_secs(3600)) });
        let (out, calls) = run(vec![wait], policy);
        assert_eq!(calls, 1);
        let Err(ModelError::Fatal(m)) = out else { panic!("{out:?}") };
        assert!(m.contains("would pass the 5 s retry budget") && m.contains("HTTP 429"), "{m}");
    }

    #[test]
    fn out_of_time_is_the_models_unless_a_fault_took_the_time() {
        let late = || Err(ModelError::OutOfTime("scripted: still working".into()));
        let (out, calls) = run(vec![late()], fast(5));
        assert_eq!((out, calls), (Err(ModelError::OutOfTime("scripted: still working".into())), 1));
        let (out, calls) = run(vec![transient("scripted: HTTP 503 busy"), late()], fast(5));
        assert_eq!(calls, 2);
        let Err(ModelError::Fatal(m)) = out else { panic!("{out:?}") };
        assert!(m.contains("ran out on attempt 2") && m.ends_with("last error: HTTP 503 busy"), "{m}");
    }

    #[test]
    fn a_wait_past_the_runs_deadline_gives_up_at_once() {
        let wait =
            Err(ModelError::Transient { message: "HTTP 429".into(), retry_after: Some(Duration::from_secs(30)) });
        let started = Instant::now();
        let policy = RetryPolicy { max_elapsed: Duration::from_secs(600), ..fast(5) };
        let (out, calls) = run_until(vec![wait], policy, Some(started + Duration::from_secs(5)));
        assert!(started.elapsed() < Duration::from_secs(1), "it waited");
        assert_eq!(calls, 1);
        let Err(ModelError::Fatal(m)) = out else { panic!("{out:?}") };
        assert!(m.contains("the run's time (timeoutMs) runs out before the next try") && m.contains("HTTP 429"), "{m}");
    }

    #[test]
    fn huge_server_waits_do_not_overflow() {
        let wait = Err(ModelError::Transient { message: "HTTP 429".into(), retry_after: Some(Duration::MAX) });
        let (out, calls) = run(vec![wait], fast(5));
        assert_eq!(calls, 1);
        let Err(ModelError::Fatal(m)) = out else { panic!("{out:?}") };
        assert!(m.contains("retry budget"), "{m}");
    }

    #[test]
    fn backoff_doubles_within_jitter_and_caps() {
        let p = RetryPolicy {
            max_attempts: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
            max_elapsed: Duration::from_secs(60),
        };
        for _ in 0..50 {
            let d1 = p.backoff(1);
            assert!(d1 >= Duration::from_millis(50) && d1 <= Duration::from_millis(100), "{d1:?}");
            let d3 = p.backoff(3);
            assert!(d3 >= Duration::from_millis(200) && d3 <= Duration::from_millis(400), "{d3:?}");
            let d9 = p.backoff(9);
            assert!(d9 >= Duration::from_millis(500) && d9 <= Duration::from_millis(1000), "{d9:?}");
        }
    }
}
