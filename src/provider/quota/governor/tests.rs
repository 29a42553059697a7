use super::*;

fn at(base: Instant, ms: u64) -> Instant {
    base + Duration::from_millis(ms)
}

fn go(g: &mut Governor, now: Instant) -> Grant {
    match g.decide(now, 100) {
        Decision::Go(grant) => grant,
        other => panic!("expected to go at {now:?}, got {other:?}"),
    }
}

fn window(limit: u64, remaining: u64, reset_ms: u64) -> Signals {
    Signals {
        requests: Window {
            limit: Some(limit),
            remaining: Some(remaining),
            reset: Some(Duration::from_millis(reset_ms)),
        },
        tokens: Window::default(),
    }
}

#[test]
fn a_refusal_holds_every_request_for_the_wait_the_server_asked() {
    let t0 = Instant::now();
    let mut g = Governor::new(Rates::default(), Duration::from_secs(1));
    let a = go(&mut g, t0);
    g.answered(&a, at(t0, 5), &Signals::default());
    let b = go(&mut g, at(t0, 5));
    let c = go(&mut g, at(t0, 5));
    g.refused(&b, at(t0, 10), Some(Duration::from_millis(500)), &Signals::default());
    // c is still in flight; a new request waits for the pause, whoever asks.
    assert_eq!(g.decide(at(t0, 20), 100), Decision::WaitUntil(at(t0, 510)));
    g.answered(&c, at(t0, 30), &Signals::default());
    assert!(matches!(g.decide(at(t0, 510), 100), Decision::Go(_)));
    assert_eq!(g.tally().refused, 1);
    assert_eq!(g.tally().served, 2);
}

#[test]
fn a_refusal_without_a_wait_backs_off_exponentially_and_one_asking_none_teaches_nothing() {
    let t0 = Instant::now();
    let mut g = Governor::new(Rates::default(), Duration::from_millis(100));
    let a = go(&mut g, t0);
    g.refused(&a, at(t0, 1), None, &Signals::default());
    assert_eq!(g.paused_until(at(t0, 1)), Some(at(t0, 101)));
    let b = go(&mut g, at(t0, 101));
    g.refused(&b, at(t0, 102), None, &Signals::default());
    assert_eq!(g.paused_until(at(t0, 102)), Some(at(t0, 302)), "doubled");

    let mut g = Governor::new(Rates::default(), Duration::from_millis(100));
    let a = go(&mut g, t0);
    g.refused(&a, at(t0, 1), Some(Duration::ZERO), &Signals::default());
    assert_eq!(g.paused_until(at(t0, 1)), None);
    assert_eq!(g.learned_rate(), None);
    assert!(matches!(g.decide(at(t0, 1), 100), Decision::Go(_)));
}

#[test]
fn configured_rates_pace_requests_and_tokens_evenly() {
    let t0 = Instant::now();
    let rates = Rates { requests_per_minute: Some(120.0), tokens_per_minute: None };
    let mut g = Governor::new(rates, Duration::from_secs(1));
    let a = go(&mut g, t0);
    g.answered(&a, at(t0, 10), &Signals::default());
    assert_eq!(g.decide(at(t0, 10), 100), Decision::WaitUntil(at(t0, 500)));
    go(&mut g, at(t0, 500));

    // 6000 tokens a minute = 100 a second: a 50-token request holds the next 0.5 s.
    let rates = Rates { requests_per_minute: None, tokens_per_minute: Some(6000.0) };
    let mut g = Governor::new(rates, Duration::from_secs(1));
    let a = match g.decide(t0, 50) {
        Decision::Go(grant) => grant,
        other => panic!("{other:?}"),
    };
    g.answered(&a, at(t0, 1), &Signals::default());
    assert_eq!(g.decide(at(t0, 1), 50), Decision::WaitUntil(at(t0, 500)));
}

#[test]
fn the_first_request_goes_alone_until_the_server_answers() {
    let t0 = Instant::now();
    let mut g = Governor::new(Rates::default(), Duration::from_secs(1));
    let a = go(&mut g, t0);
    assert_eq!(g.decide(at(t0, 1), 100), Decision::WaitForAnswer(at(t0, 1) + PROBE_WAIT));
    // Not for ever: a slow first answer lets the others go after PROBE_WAIT.
    assert!(matches!(g.decide(at(t0, 1) + PROBE_WAIT, 100), Decision::Go(_)));
    g.answered(&a, at(t0, 3000), &Signals::default());
    go(&mut g, at(t0, 3000));
}

#[test]
fn the_servers_window_is_counted_down_and_refills_at_its_reset() {
    let t0 = Instant::now();
    let mut g = Governor::new(Rates::default(), Duration::from_secs(1));
    let a = go(&mut g, t0);
    g.answered(&a, at(t0, 2), &window(3, 2, 400));
    go(&mut g, at(t0, 3));
    go(&mut g, at(t0, 3));
    assert_eq!(g.decide(at(t0, 4), 100), Decision::WaitUntil(at(t0, 402)));
    // After the reset the window holds its limit again, less what is in flight.
    let c = go(&mut g, at(t0, 402));
    g.answered(&c, at(t0, 404), &window(3, 0, 300));
    assert!(matches!(g.decide(at(t0, 405), 100), Decision::WaitUntil(_)));
}

#[test]
fn the_concurrency_window_shrinks_at_refusals_and_grows_back() {
    let t0 = Instant::now();
    let mut g = Governor::new(Rates::default(), Duration::from_millis(10));
    g.set_max_concurrency(8);
    assert_eq!(g.concurrency(), 8);
    let a = go(&mut g, t0);
    g.refused(&a, at(t0, 1), Some(Duration::from_millis(10)), &Signals::default());
    assert_eq!(g.concurrency(), 5);
    let mut now = at(t0, 20);
    for _ in 0..200 {
        if let Decision::Go(grant) = g.decide(now, 1) {
            g.answered(&grant, now, &Signals::default());
        }
        now += Duration::from_millis(200);
    }
    assert_eq!(g.concurrency(), 8);
    assert_eq!(g.tally().lowest_window, Some(5));
}

#[test]
fn hostile_figures_do_not_overflow() {
    let t0 = Instant::now();
    let mut g = Governor::new(
        Rates { requests_per_minute: Some(1e-300), tokens_per_minute: Some(1e-300) },
        Duration::from_secs(1),
    );
    let a = go(&mut g, t0);
    g.refused(&a, t0, Some(Duration::MAX), &window(u64::MAX, u64::MAX, u64::MAX));
    assert!(matches!(g.decide(t0, u64::MAX), Decision::WaitUntil(_) | Decision::WaitForAnswer(_)));
}

/// A simulated rate-limited server on a virtual clock.
trait Server {
    /// Take a request at `now`: `Ok(headers)` or `Err((retry_after, headers))`.
    fn take(&mut self, now: f64) -> Result<Signals, (Option<Duration>, Signals)>;
}

/// A token bucket of `capacity` refilled at `rate` a second, speaking
/// OpenAI-style headers (`headers`) or only Gemini-style retry delays.
struct Bucket {
    capacity: f64,
    rate: f64,
    level: f64,
    at: f64,
    headers: bool,
}

impl Bucket {
    fn new(capacity: f64, rate: f64, headers: bool) -> Bucket {
        Bucket { capacity, rate, level: capacity, at: 0.0, headers }
    }

    fn signals(&self) -> Signals {
        if !self.headers {
            return Signals::default();
        }
        let full_in = (self.capacity - self.level) / self.rate;
        window(self.capacity as u64, self.level.floor() as u64, (full_in * 1000.0).ceil() as u64)
    }
}

impl Server for Bucket {
    fn take(&mut self, now: f64) -> Result<Signals, (Option<Duration>, Signals)> {
        self.level = (self.level + (now - self.at) * self.rate).min(self.capacity);
        self.at = now;
        if self.level >= 1.0 {
            self.level -= 1.0;
            Ok(self.signals())
        } else {
            let next = (1.0 - self.level) / self.rate;
            Err((Some(Duration::from_secs_f64(next)), self.signals()))
        }
    }
}

/// A fixed window: `limit` requests per `length` seconds; a refusal asks to
/// wait for the next window.
struct FixedWindow {
    limit: u32,
    length: f64,
    start: f64,
    used: u32,
}

impl Server for FixedWindow {
    fn take(&mut self, now: f64) -> Result<Signals, (Option<Duration>, Signals)> {
        while now >= self.start + self.length {
            self.start += self.length;
            self.used = 0;
        }
        if self.used < self.limit {
            self.used += 1;
            Ok(Signals::default())
        } else {
            Err((Some(Duration::from_secs_f64(self.start + self.length - now)), Signals::default()))
        }
    }
}

/// `requests` requests, `workers` at a time, each taking `latency` seconds
/// on the server, through one governor: (served, refused, seconds).
fn simulate(server: &mut dyn Server, rates: Rates, workers: usize, requests: u64, latency: f64) -> (u64, u64, f64) {
    let base = Instant::now();
    let to_instant = |t: f64| base + Duration::from_secs_f64(t);
    let mut g = Governor::new(rates, Duration::from_secs(1));
    g.set_max_concurrency(workers);
    let step = 0.001;
    let mut now = 0.0;
    // Per worker: in flight (grant, answer time, outcome), or idle.
    type Flight = (Grant, f64, Result<Signals, (Option<Duration>, Signals)>);
    let mut flights: Vec<Option<Flight>> = vec![None; workers];
    let mut wake = vec![0.0f64; workers];
    let mut served = 0;
    while served < requests {
        assert!(now < 10_000.0, "the simulation does not finish");
        for w in 0..workers {
            if let Some((grant, done, _)) = &flights[w]
                && *done <= now + 1e-9
            {
                let (grant, outcome) = (*grant, flights[w].take().unwrap().2);
                match outcome {
                    Ok(signals) => {
                        g.answered(&grant, to_instant(now), &signals);
                        served += 1;
                    }
                    Err((retry, signals)) => g.refused(&grant, to_instant(now), retry, &signals),
                }
                wake[w] = now;
            }
        }
        let allowed = g.concurrency().min(workers);
        for w in 0..allowed {
            if flights[w].is_some() || wake[w] > now + 1e-9 || served >= requests {
                continue;
            }
            match g.decide(to_instant(now), 1) {
                Decision::Go(grant) => {
                    let outcome = server.take(now);
                    flights[w] = Some((grant, now + latency, outcome));
                }
                Decision::WaitUntil(t) => wake[w] = (t - base).as_secs_f64(),
                Decision::WaitForAnswer(_) => wake[w] = now + step,
            }
        }
        now += step;
    }
    let tally = g.tally();
    (tally.served, tally.refused, now)
}

#[test]
fn against_a_token_bucket_with_headers_few_are_refused_and_the_rate_is_kept() {
    let (served, refused, secs) = simulate(&mut Bucket::new(4.0, 10.0, true), Rates::default(), 8, 200, 0.002);
    let bound = (served as f64 - 4.0) / 10.0;
    eprintln!("headers: served {served}, refused {refused}, {secs:.2} s for a bound of {bound:.2} s");
    assert!(refused * 10 <= served, "refused {refused} of {served}");
    assert!(secs <= bound * 1.2, "{secs} s against a bound of {bound} s");
}

#[test]
fn against_a_token_bucket_without_headers_the_rate_is_learned() {
    let (served, refused, secs) = simulate(&mut Bucket::new(4.0, 10.0, false), Rates::default(), 8, 200, 0.002);
    let bound = (served as f64 - 4.0) / 10.0;
    eprintln!("retry delays only: served {served}, refused {refused}, {secs:.2} s for a bound of {bound:.2} s");
    assert!(refused * 10 <= served, "refused {refused} of {served}");
    assert!(secs <= bound * 1.2, "{secs} s against a bound of {bound} s");
}

#[test]
fn against_a_per_minute_window_the_rate_is_learned() {
    // 10 requests a minute, as Gemini's free tier allows some models.
    let mut server = FixedWindow { limit: 10, length: 60.0, start: 0.0, used: 0 };
    let (served, refused, secs) = simulate(&mut server, Rates::default(), 4, 100, 0.5);
    // 100 requests need at least 9 full windows after the first.
    let bound = 9.0 * 60.0;
    eprintln!("per-minute window: served {served}, refused {refused}, {secs:.1} s for a bound of {bound:.1} s");
    assert!(refused * 10 <= served, "refused {refused} of {served}");
    assert!(secs <= bound * 1.2, "{secs} s against a bound of {bound} s");
}

#[test]
fn a_configured_rate_matching_the_server_is_never_refused() {
    let rates = Rates { requests_per_minute: Some(600.0), tokens_per_minute: None };
    let (served, refused, secs) = simulate(&mut Bucket::new(4.0, 10.0, false), rates, 8, 100, 0.002);
    assert_eq!((served, refused), (100, 0));
    assert!(secs < 10.5, "{secs}");
}
