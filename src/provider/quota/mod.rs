//! Quota-aware dispatch: one [`Quota`] per model server connection, shared
//! by every request a sweep sends it, whichever run sends it (the judge's
//! server has its own). Before each request goes out, it waits here for the
//! quota to allow it; every answer then tells the quota what the server said
//! (its rate-limit headers, a refusal and the wait it asked for). The rules
//! are the [`governor`]'s; this module does the waiting.
//!
//! Waiting is first come, first served: requests queue in arrival order,
//! so no run starves. A wait that would pass the run's deadline (its
//! `timeoutMs`), or the retry budget when the call has none, is not started:
//! the call ends at once with a harness error saying so, never as the
//! model's failure.
//!
//! It does not retry (see `retry`, which sends a refused request back here)
//! and knows no wire format (the HTTP transport reads the headers, see
//! [`signals`]).

pub mod governor;
pub mod signals;

use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

pub use governor::{Decision, Governor, Grant, Rates, Signals, Tally, Window};

use crate::limits::Limits;

/// A server's quota, shared by all requests to it.
pub struct Quota {
    governor: Mutex<Governor>,
    /// Held by the request whose turn it is to wait; the others queue on it.
    queue: tokio::sync::Mutex<()>,
    /// Woken at every answer, which may let a waiting request go sooner.
    answered: Notify,
    /// The longest one request may wait when its call has no deadline.
    longest_wait: Duration,
}

/// What the quota is doing now, for progress displays.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuotaStatus {
    /// Requests waiting for the quota.
    pub holding: u32,
    /// When a refusal's pause ends, if one is in force.
    pub paused_for: Option<Duration>,
    /// Requests a second the quota paces to, if any.
    pub rate: Option<f64>,
    pub tally: Tally,
}

/// Why a request may not wait for the quota.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Refusal {
    #[error(
        "the quota's next free slot is {} s away, after the run's time (timeoutMs) runs out: a harness fault, \
         not the model's (lower --jobs or --rpm, or raise the quota)",
        secs(*.0)
    )]
    PastDeadline(Duration),
    #[error("the quota's next free slot is {} s away, past the {} s retry budget", secs(*.0), secs(*.1))]
    PastBudget(Duration, Duration),
}

fn secs(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64())
}

/// Leave to send one request; tell the quota how it went with
/// [`Permit::answered`] or [`Permit::refused`]. Dropped without either (the
/// connection broke, the call was cancelled), the request taught nothing.
pub struct Permit {
    quota: Arc<Quota>,
    grant: Grant,
    settled: bool,
}

impl Permit {
    /// The server answered (any status but 429).
    pub fn answered(mut self, signals: &Signals) {
        self.settled = true;
        self.quota.settle(|g| g.answered(&self.grant, Instant::now(), signals));
    }

    /// The server refused the request with HTTP 429.
    pub fn refused(mut self, retry_after: Option<Duration>, signals: &Signals) {
        self.settled = true;
        self.quota.settle(|g| g.refused(&self.grant, Instant::now(), retry_after, signals));
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if !self.settled {
            self.quota.settle(Governor::failed);
        }
    }
}

/// Counts a request as held while it waits, however the wait ends.
struct Holding<'a> {
    quota: &'a Quota,
    held: bool,
}

impl Holding<'_> {
    fn start(&mut self) {
        if !self.held {
            self.held = true;
            self.quota.lock().holding_changed(true, Instant::now());
        }
    }
}

impl Drop for Holding<'_> {
    fn drop(&mut self) {
        if self.held {
            self.quota.lock().holding_changed(false, Instant::now());
        }
    }
}

impl Quota {
    /// A quota paced to `limits.quota` (if set), learning the rest; a
    /// refusal that names no wait pauses for `limits.retry_base_delay`,
    /// doubling.
    pub fn new(limits: &Limits) -> Quota {
        Quota {
            governor: Mutex::new(Governor::new(limits.quota, limits.retry_base_delay)),
            queue: tokio::sync::Mutex::new(()),
            answered: Notify::new(),
            longest_wait: limits.retry_budget,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Governor> {
        // The governor's methods do not panic; a poisoned lock still holds a usable state.
        self.governor.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn settle(&self, f: impl FnOnce(&mut Governor)) {
        f(&mut self.lock());
        self.answered.notify_waiters();
    }

    /// Wait until a request estimated at `tokens` input tokens may go; a
    /// wait past `deadline` (or, without one, past the retry budget) is
    /// refused at once.
    pub async fn acquire(self: &Arc<Self>, tokens: u64, deadline: Option<Instant>) -> Result<Permit, Refusal> {
        let _turn = self.queue.lock().await;
        let mut holding = Holding { quota: self, held: false };
        let started = Instant::now();
        loop {
            let mut answered = pin!(self.answered.notified());
            answered.as_mut().enable();
            let now = Instant::now();
            let decision = self.lock().decide(now, tokens);
            let (until, on_answer) = match decision {
                Decision::Go(grant) => return Ok(Permit { quota: self.clone(), grant, settled: false }),
                Decision::WaitUntil(t) => (t, false),
                Decision::WaitForAnswer(t) => (t, true),
            };
            let wait = until.saturating_duration_since(now);
            match deadline {
                Some(d) if !on_answer && until >= d => return Err(Refusal::PastDeadline(wait)),
                None if !on_answer && until.saturating_duration_since(started) > self.longest_wait => {
                    return Err(Refusal::PastBudget(wait, self.longest_wait));
                }
                _ => {}
            }
            holding.start();
            let run_out = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d.into()).await,
                    None => tokio::time::sleep_until((started + self.longest_wait).into()).await,
                }
            };
            tokio::select! {
                () = tokio::time::sleep_until(until.into()) => {}
                () = answered, if on_answer => {}
                () = run_out => {
                    return Err(match deadline {
                        Some(_) => Refusal::PastDeadline(wait),
                        None => Refusal::PastBudget(wait, self.longest_wait),
                    });
                }
            }
        }
    }

    /// What the quota is doing now.
    pub fn status(&self) -> QuotaStatus {
        let now = Instant::now();
        let g = self.lock();
        QuotaStatus {
            holding: g.holding(),
            paused_for: g.paused_until(now).map(|p| p.saturating_duration_since(now)),
            rate: g.request_rate(),
            tally: g.tally(),
        }
    }

    /// The figures so far.
    pub fn tally(&self) -> Tally {
        self.lock().tally()
    }

    /// A sweep of `jobs` concurrent runs starts: the concurrency window's ceiling.
    pub fn set_max_concurrency(&self, jobs: usize) {
        self.lock().set_max_concurrency(jobs);
    }

    /// Runs the sweep should have going now (at most the `jobs` it set).
    pub fn concurrency(&self) -> usize {
        self.lock().concurrency()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(budget_ms: u64) -> Limits {
        Limits {
            retry_budget: Duration::from_millis(budget_ms),
            retry_base_delay: Duration::from_millis(50),
            ..Limits::default()
        }
    }

    #[tokio::test]
    async fn a_refusal_makes_every_waiting_request_wait() {
        let quota = Arc::new(Quota::new(&limits(10_000)));
        let first = quota.acquire(1, None).await.unwrap();
        first.answered(&Signals::default());
        let a = quota.acquire(1, None).await.unwrap();
        let start = Instant::now();
        a.refused(Some(Duration::from_millis(300)), &Signals::default());
        let (b, c) = tokio::join!(quota.acquire(1, None), quota.acquire(1, None));
        assert!(start.elapsed() >= Duration::from_millis(300), "{:?}", start.elapsed());
        drop((b.unwrap(), c.unwrap()));
        let tally = quota.tally();
        assert_eq!((tally.refused, tally.served, tally.held), (1, 1, 2));
        assert!(tally.held_wall >= Duration::from_millis(290) && tally.held_wall < Duration::from_secs(2));
    }

    #[tokio::test]
    async fn a_wait_past_the_deadline_or_the_budget_is_refused_at_once() {
        let quota = Arc::new(Quota::new(&limits(1_000)));
        quota.acquire(1, None).await.unwrap().refused(Some(Duration::from_secs(30)), &Signals::default());
        let start = Instant::now();
        let err = quota.acquire(1, Some(Instant::now() + Duration::from_secs(5))).await.err().unwrap();
        assert!(matches!(err, Refusal::PastDeadline(_)), "{err}");
        assert!(err.to_string().contains("after the run's time (timeoutMs) runs out"), "{err}");
        let err = quota.acquire(1, None).await.err().unwrap();
        assert!(err.to_string().contains("past the 1.0 s retry budget"), "{err}");
        assert!(start.elapsed() < Duration::from_millis(100));
        assert_eq!(quota.status().holding, 0, "nothing left counted as waiting");
    }

    #[tokio::test]
    async fn a_cancelled_wait_leaves_nothing_behind() {
        let quota = Arc::new(Quota::new(&limits(10_000)));
        quota.acquire(1, None).await.unwrap().refused(Some(Duration::from_secs(5)), &Signals::default());
        let waiting = tokio::time::timeout(Duration::from_millis(50), quota.acquire(1, None)).await;
        assert!(waiting.is_err());
        let status = quota.status();
        assert_eq!(status.holding, 0);
        assert!(status.paused_for.is_some());
    }
}
