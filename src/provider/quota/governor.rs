//! The quota's decisions, as a pure state machine: given the time, may a
//! request go now, or when? And what do an answer, a refusal (HTTP 429) and
//! the server's rate-limit headers teach? No clock, no I/O, no waiting: the
//! caller passes `now` and does the waiting (see the parent module), so every
//! rule here is tested on a virtual clock against simulated servers.
//!
//! A request may go when every one of these allows it:
//! - **the pause**: after a refusal, nothing goes until the wait the server
//!   asked for (`Retry-After`, `retry-after-ms`, Gemini's `retryDelay`) has
//!   passed, or, when it named none, an exponential backoff. One refusal
//!   holds every worker, not only the one refused.
//! - **the configured rates** (`requests_per_minute`, `tokens_per_minute`),
//!   paced evenly: request n+1 goes 60/rpm seconds after request n, and a
//!   request of t tokens holds the next one back t / (tpm/60) seconds. Even
//!   pacing never exceeds a per-minute window or a token bucket of that rate.
//! - **the learned rate**: a server that refuses without saying its limits
//!   teaches one. Between the end of one refusal's wait and the end of the
//!   next, a saturated server serves what it can: the requests served in
//!   between, divided by that time, is its rate, and pacing drops to
//!   [`DECREASE`] times it (none served measures nothing: the rate only
//!   drops), but never below [`MAX_CUT`] of itself at one refusal. It then creeps back up by [`INCREASE`]
//!   per request that had to wait for it, so it keeps probing for more. The
//!   first refusal can only guess (what was served since the start, over
//!   that time): the guess grows by [`FIRST_INCREASE`] until a refusal
//!   measures it. Refusals of requests sent before the previous refusal was
//!   seen are the same congestion and teach nothing more; a refusal asking
//!   for no wait at all (`Retry-After: 0`) is a blip, not a limit, and
//!   teaches nothing.
//! - **the server's window**: `x-ratelimit-remaining-requests` and
//!   `x-ratelimit-reset-requests` (and the `-tokens` pair) of the latest
//!   answer say how many more requests (tokens) the server takes before the
//!   window resets; requests sent since are counted off, and once none is
//!   left every request waits for the reset. After the reset the window is
//!   full again (`x-ratelimit-limit-*`).
//! - **slow start**: until the server has spoken (a refusal, or rate-limit
//!   headers), one request goes alone at first and one more may be in
//!   flight per answer, so that a whole sweep's first requests do not
//!   arrive together on a quota nobody knows yet. A request waits for an
//!   answer [`PROBE_WAIT`] at most (a slow model must not hold the others).
//!   Configured rates need no slow start.
//!
//! It also keeps the sweep's concurrency window (runs at once): it shrinks
//! to [`WINDOW_DECREASE`] of itself at each teaching refusal and grows by one
//! run per window's worth of served requests, up to the `--jobs` given
//! (additive increase, multiplicative decrease).

use std::time::{Duration, Instant};

/// A teaching refusal sets the learned rate to this fraction of what the
/// server was seen to serve.
pub const DECREASE: f64 = 0.9;
/// The learned rate grows by this fraction per request that waited for it.
pub const INCREASE: f64 = 0.002;
/// One refusal never cuts the learned rate below this fraction of itself.
pub const MAX_CUT: f64 = 0.6;
/// A refusal measures the server's rate on this many served requests at most.
pub const TAIL: usize = 8;
/// The learned rate is measured over this many refusals at most.
pub const POOLED: usize = 4;
/// ... and by this much while it is only a first guess, not yet measured.
pub const FIRST_INCREASE: f64 = 0.02;
/// A teaching refusal shrinks the concurrency window to this fraction.
pub const WINDOW_DECREASE: f64 = 0.7;
/// The longest the first request goes alone.
pub const PROBE_WAIT: Duration = Duration::from_secs(2);

pub use crate::limits::QuotaRates as Rates;

/// One dimension (requests or tokens) of a server's rate-limit headers.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Window {
    /// `x-ratelimit-limit-*`: what the window holds when full.
    pub limit: Option<u64>,
    /// `x-ratelimit-remaining-*`: what is left now.
    pub remaining: Option<u64>,
    /// `x-ratelimit-reset-*`: until the window is full again.
    pub reset: Option<Duration>,
}

/// What one answer's headers said about the server's limits.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Signals {
    pub requests: Window,
    pub tokens: Window,
}

impl Signals {
    pub fn is_empty(&self) -> bool {
        *self == Signals::default()
    }
}

/// A request allowed to go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grant {
    pub at: Instant,
    /// The tokens it was estimated to use.
    pub tokens: u64,
    /// Whether it had to wait for the learned rate (only those grow it).
    paced: bool,
}

/// The answer to "may a request go?".
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Decision {
    Go(Grant),
    /// Not before this instant.
    WaitUntil(Instant),
    /// Not before another answer arrives (or this instant, whichever is first).
    WaitForAnswer(Instant),
}

/// What a server's window says now, with the requests sent since counted off.
#[derive(Debug, Clone, Copy)]
struct Tracked {
    limit: Option<f64>,
    remaining: f64,
    reset_at: Option<Instant>,
}

impl Tracked {
    fn from_window(w: &Window, now: Instant, in_flight: f64) -> Option<Tracked> {
        let remaining = w.remaining? as f64;
        // A request still in flight may not be counted in `remaining` yet.
        Some(Tracked {
            limit: w.limit.map(|l| l as f64),
            remaining: (remaining - in_flight).max(0.0),
            reset_at: w.reset.map(|d| crate::limits::deadline_after(now, d)),
        })
    }

    /// Past the reset, the window is full again (when its size is known).
    /// Returns false when the window says nothing any more.
    fn refresh(&mut self, now: Instant, in_flight: f64) -> bool {
        match self.reset_at {
            Some(reset) if reset <= now => match self.limit {
                Some(limit) => {
                    self.remaining = (limit - in_flight).max(0.0);
                    self.reset_at = None;
                    true
                }
                None => false,
            },
            _ => true,
        }
    }

    /// When `need` fits; `None`: only a new answer can tell.
    fn fits_at(&self, need: f64, now: Instant) -> Option<Instant> {
        if self.remaining >= need { Some(now) } else { self.reset_at }
    }
}

/// Figures for the summary.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tally {
    /// Requests answered (any status but 429).
    pub served: u64,
    /// Requests refused with HTTP 429.
    pub refused: u64,
    /// Requests that had to wait for the quota before going.
    pub held: u64,
    /// Wall time during which at least one request was held.
    pub held_wall: Duration,
    /// The concurrency window's low point, when it ever shrank.
    pub lowest_window: Option<usize>,
}

/// The state of one server's quota.
#[derive(Debug, Clone)]
pub struct Governor {
    rates: Rates,
    learned_rps: Option<f64>,
    /// When the next request may go by the request rate (configured or learned).
    next_request: Option<Instant>,
    /// When the next request may go by the configured token rate.
    next_tokens: Option<Instant>,
    paused_until: Option<Instant>,
    requests: Option<Tracked>,
    tokens: Option<Tracked>,
    /// Slow start: the most requests in flight until the server has
    /// spoken (a refusal, or rate-limit headers); `None` once it has.
    ramp: Option<u32>,
    /// Since when a request has waited for the ramp.
    ramp_blocked_since: Option<Instant>,
    in_flight: u32,
    first_grant: Option<Instant>,
    /// The last teaching refusal, and the requests granted after it that were served.
    last_event: Option<Instant>,
    /// When the wait of the last teaching refusal ended.
    last_resume: Option<Instant>,
    /// Whether a refusal has measured the learned rate (not only guessed it).
    confirmed: bool,
    /// The last few measures of the server's rate: (requests served, seconds).
    measures: Vec<(f64, f64)>,
    /// When the last few requests served since the last refusal were granted.
    served_grants: Vec<Instant>,
    served_since_event: u64,
    consecutive_refusals: u32,
    backoff_base: Duration,
    window: Option<f64>,
    max_window: f64,
    holding: u32,
    holding_since: Option<Instant>,
    tally: Tally,
}

impl Governor {
    /// A governor for `rates`; `backoff_base` is the first pause after a
    /// refusal that names no wait (it doubles for each one in a row).
    pub fn new(rates: Rates, backoff_base: Duration) -> Governor {
        Governor {
            rates,
            learned_rps: None,
            next_request: None,
            next_tokens: None,
            paused_until: None,
            requests: None,
            tokens: None,
            ramp: rates.requests_per_minute.is_none().then_some(1),
            ramp_blocked_since: None,
            in_flight: 0,
            first_grant: None,
            last_event: None,
            last_resume: None,
            confirmed: false,
            measures: Vec::new(),
            served_grants: Vec::new(),
            served_since_event: 0,
            consecutive_refusals: 0,
            backoff_base,
            window: None,
            max_window: f64::INFINITY,
            holding: 0,
            holding_since: None,
            tally: Tally::default(),
        }
    }

    /// The requests per second requests are paced at, if any.
    pub fn request_rate(&self) -> Option<f64> {
        let configured = self.rates.requests_per_minute.map(|r| r / 60.0);
        match (configured, self.learned_rps) {
            (Some(c), Some(l)) => Some(c.min(l)),
            (c, l) => c.or(l),
        }
    }

    /// The rate learned from refusals, if any.
    pub fn learned_rate(&self) -> Option<f64> {
        self.learned_rps
    }

    /// Until when every request waits because of a refusal, if it still does.
    pub fn paused_until(&self, now: Instant) -> Option<Instant> {
        self.paused_until.filter(|p| *p > now)
    }

    pub fn tally(&self) -> Tally {
        self.tally
    }

    /// Requests waiting for the quota now.
    pub fn holding(&self) -> u32 {
        self.holding
    }

    /// Runs at once: `jobs` until pressure shrinks the window.
    pub fn set_max_concurrency(&mut self, jobs: usize) {
        self.max_window = jobs.max(1) as f64;
        self.window = Some(self.window.unwrap_or(self.max_window).min(self.max_window));
        if self.ramp.is_some_and(|cap| f64::from(cap) >= self.max_window) {
            self.ramp = None;
        }
    }

    /// The number of runs the sweep should have going now.
    pub fn concurrency(&self) -> usize {
        match self.window {
            Some(w) => (w.floor() as usize).max(1),
            None => usize::MAX,
        }
    }

    /// May a request estimated at `tokens` tokens go at `now`?
    pub fn decide(&mut self, now: Instant, tokens: u64) -> Decision {
        let in_flight = f64::from(self.in_flight);
        for tracked in [&mut self.requests, &mut self.tokens] {
            if tracked.as_mut().is_some_and(|t| !t.refresh(now, in_flight)) {
                *tracked = None;
            }
        }
        let mut at = now;
        if let Some(p) = self.paused_until {
            at = at.max(p);
        }
        // A request that goes within one interval of its slot shows a
        // demand that keeps up with the learned rate: it may grow.
        let mut paced = false;
        if let Some(rate) = self.request_rate()
            && let Some(next) = self.next_request
        {
            at = at.max(next);
            paced = self.learned_rps.is_some() && now < crate::limits::deadline_after(next, capped_secs(1.0 / rate));
        }
        if let Some(next) = self.next_tokens {
            at = at.max(next);
        }
        let mut need_answer = None;
        let windows = [(self.requests, 1.0), (self.tokens, tokens as f64)];
        for (tracked, need) in windows {
            let Some(t) = tracked else { continue };
            // Never more than the window holds when full, or it would never fit.
            let need = t.limit.map_or(need, |l| need.min(l));
            match t.fits_at(need, now) {
                Some(when) => at = at.max(when),
                None => need_answer = Some(now + PROBE_WAIT),
            }
        }
        if let Some(cap) = self.ramp
            && self.in_flight >= cap
        {
            let since = *self.ramp_blocked_since.get_or_insert(now);
            if now < since + PROBE_WAIT {
                need_answer = Some(since + PROBE_WAIT);
            }
        }
        if let Some(until) = need_answer.filter(|_| self.in_flight > 0) {
            return Decision::WaitForAnswer(until.max(at));
        }
        if at > now {
            return Decision::WaitUntil(at);
        }
        Decision::Go(self.grant(now, tokens, paced))
    }

    fn grant(&mut self, now: Instant, tokens: u64, paced: bool) -> Grant {
        self.first_grant.get_or_insert(now);
        self.ramp_blocked_since = None;
        self.in_flight += 1;
        if let Some(rps) = self.request_rate() {
            let from = self.next_request.map_or(now, |n| n.max(now));
            self.next_request = Some(crate::limits::deadline_after(from, capped_secs(1.0 / rps)));
        }
        if let Some(tpm) = self.rates.tokens_per_minute.filter(|t| *t > 0.0) {
            let from = self.next_tokens.map_or(now, |n| n.max(now));
            self.next_tokens = Some(crate::limits::deadline_after(from, capped_secs(tokens as f64 / (tpm / 60.0))));
        }
        if let Some(t) = &mut self.requests {
            t.remaining = (t.remaining - 1.0).max(0.0);
        }
        if let Some(t) = &mut self.tokens {
            t.remaining = (t.remaining - tokens as f64).max(0.0);
        }
        Grant { at: now, tokens, paced }
    }

    /// Mark that a request started (`true`) or stopped (`false`) waiting.
    pub fn holding_changed(&mut self, waiting: bool, now: Instant) {
        if waiting {
            if self.holding == 0 {
                self.holding_since = Some(now);
            }
            self.holding += 1;
            self.tally.held += 1;
        } else {
            self.holding = self.holding.saturating_sub(1);
            if self.holding == 0
                && let Some(since) = self.holding_since.take()
            {
                self.tally.held_wall += now.saturating_duration_since(since);
            }
        }
    }

    fn observe(&mut self, now: Instant, signals: &Signals) {
        let in_flight = f64::from(self.in_flight);
        if let Some(t) = Tracked::from_window(&signals.requests, now, in_flight) {
            self.requests = Some(t);
        }
        if let Some(t) = Tracked::from_window(&signals.tokens, now, 0.0) {
            self.tokens = Some(t);
        }
    }

    /// The server answered a request (any status but 429).
    pub fn answered(&mut self, grant: &Grant, now: Instant, signals: &Signals) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.observe(now, signals);
        self.ramp = match self.ramp {
            _ if self.requests.is_some() => None,
            Some(cap) if f64::from(cap + 1) < self.max_window => Some(cap + 1),
            _ => None,
        };
        self.tally.served += 1;
        self.consecutive_refusals = 0;
        if self.last_event.is_none_or(|e| grant.at >= e) {
            self.served_since_event += 1;
            if self.served_grants.len() == TAIL {
                self.served_grants.remove(0);
            }
            self.served_grants.push(grant.at);
        }
        if grant.paced
            && let Some(l) = &mut self.learned_rps
        {
            *l *= 1.0 + if self.confirmed { INCREASE } else { FIRST_INCREASE };
        }
        if let Some(w) = &mut self.window {
            *w = (*w + 1.0 / w.max(1.0)).min(self.max_window);
        }
    }

    /// The request never got an answer (a broken connection, a timeout):
    /// nothing is learned.
    pub fn failed(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    /// The server refused a request with HTTP 429, asking to wait `retry_after`.
    pub fn refused(&mut self, grant: &Grant, now: Instant, retry_after: Option<Duration>, signals: &Signals) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.observe(now, signals);
        self.ramp = None;
        self.tally.refused += 1;
        let wait = match retry_after {
            Some(d) => d,
            None => {
                let doubled = self.backoff_base.saturating_mul(1u32 << self.consecutive_refusals.min(10));
                doubled.min(Duration::from_secs(60))
            }
        };
        if wait.is_zero() {
            return;
        }
        let until = crate::limits::deadline_after(now, wait);
        self.paused_until = Some(self.paused_until.map_or(until, |p| p.max(until)));
        let teaches = self.last_event.is_none_or(|e| grant.at >= e);
        if !teaches {
            return;
        }
        self.consecutive_refusals += 1;
        let n = self.served_since_event as f64;
        self.learned_rps = match (self.learned_rps, self.last_resume) {
            // The first refusal: what was served since the first request,
            // and the one the server takes after the wait, over that time. It
            // counts the bucket's first burst and any idle start, so it is
            // only a first guess, corrected quickly either way.
            (rate, None) => {
                let since = self.first_grant.unwrap_or(grant.at);
                let span = until.saturating_duration_since(since).as_secs_f64();
                let seen = (span > 0.0).then(|| (n + 1.0) / span);
                match (rate, seen) {
                    (Some(r), Some(s)) => Some(r.min(s) * DECREASE),
                    (r, s) => r.or(s).map(|v| v * DECREASE),
                }
            }
            // Later refusals: the server, saturated, served the last
            // requests granted before this one about as fast as it can: up
            // to [`TAIL`] of them, from the first one's grant to the end of
            // this wait (when it frees the next). The last few such
            // measures are pooled: one alone is noisy.
            (rate, Some(_)) if !self.served_grants.is_empty() => {
                let oldest = self.served_grants[0];
                let span = until.saturating_duration_since(oldest).as_secs_f64();
                if span > 0.0 {
                    if self.measures.len() == POOLED {
                        self.measures.remove(0);
                    }
                    self.measures.push((self.served_grants.len() as f64, span));
                }
                let (served, time) = self.measures.iter().fold((0.0, 0.0), |(a, b), (n, t)| (a + n, b + t));
                let seen = (time > 0.0).then(|| served / time);
                let measured = match (rate, seen) {
                    (Some(r), Some(s)) if self.confirmed => Some(r.min(s)),
                    (r, s) => s.or(r),
                };
                self.confirmed |= seen.is_some();
                // Requests still in flight from before may have taken what the
                // server freed, which reads as a lower rate: one refusal
                // never cuts the rate below [`MAX_CUT`] of itself.
                measured.map(|v| match rate {
                    Some(r) => (v * DECREASE).max(r * MAX_CUT),
                    None => v * DECREASE,
                })
            }
            // Nothing served since the last wait ended (another request
            // took what the server freed): nothing measured.
            (rate, Some(_)) => rate.map(|r| r * DECREASE),
        };
        // The next request goes at the pause's end, then at the new rate.
        self.next_request = Some(until);
        self.last_resume = Some(until);
        self.last_event = Some(now);
        self.served_since_event = 0;
        self.served_grants.clear();
        if let Some(w) = &mut self.window {
            *w = (*w * WINDOW_DECREASE).max(1.0);
            let low = w.floor() as usize;
            self.tally.lowest_window = Some(self.tally.lowest_window.map_or(low, |l| l.min(low)));
        }
    }
}

/// Seconds from a computed figure, as a wait no longer than
/// [`LONGEST_OUTSIDE_WAIT`](crate::limits::LONGEST_OUTSIDE_WAIT).
fn capped_secs(secs: f64) -> Duration {
    let longest = crate::limits::LONGEST_OUTSIDE_WAIT;
    crate::limits::seconds_from_outside(secs, longest).unwrap_or(longest)
}

#[cfg(test)]
mod tests;
