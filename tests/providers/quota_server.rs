//! A rate-limited model server on loopback: the fake server (`fake.rs`)
//! replaying reference trajectories (`replay.rs`) behind a token bucket of
//! `capacity` requests refilled at `rate` a second. A request that finds the
//! bucket empty is refused as the real services refuse:
//!
//! - OpenAI style: HTTP 429 with `retry-after` (whole seconds, rounded up),
//!   `retry-after-ms`, and on every answer the `x-ratelimit-limit-requests`,
//!   `x-ratelimit-remaining-requests` and `x-ratelimit-reset-requests`
//!   headers (the reset as a Go duration, `150ms`, `1.2s`);
//! - Gemini style: HTTP 429 `RESOURCE_EXHAUSTED` whose body carries a
//!   `google.rpc.RetryInfo` `retryDelay` (`"0.046s"`), and no headers.
//!
//! It counts what it served and refused, and when, so a test can compare a
//! sweep's wall time with the quota's bound: the least time any client
//! needs to be served that many requests, `(served - capacity) / rate`.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::fake::{Fake, Recorded, Reply};
use crate::replay::{self, Suite};

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Style {
    OpenAi,
    Gemini,
}

/// What the server saw.
#[derive(Debug, Clone, Copy, Default)]
pub struct Figures {
    pub served: u64,
    pub refused: u64,
    pub first: Option<Instant>,
    pub last_served: Option<Instant>,
}

impl Figures {
    /// From the first request to the last one served.
    pub fn span(&self) -> Duration {
        match (self.first, self.last_served) {
            (Some(a), Some(b)) => b.saturating_duration_since(a),
            _ => Duration::ZERO,
        }
    }
}

struct Bucket {
    capacity: f64,
    rate: f64,
    level: f64,
    at: Option<Instant>,
    figures: Figures,
}

/// A running quota server.
pub struct QuotaServer {
    pub fake: Fake,
    pub capacity: f64,
    pub rate: f64,
    bucket: Arc<Mutex<Bucket>>,
}

/// `secs` as a Go duration, as OpenAI writes its resets.
fn go_duration(secs: f64) -> String {
    if secs < 1.0 { format!("{}ms", (secs * 1000.0).ceil() as u64) } else { format!("{secs:.3}s") }
}

impl QuotaServer {
    pub fn start(style: Style, capacity: f64, rate: f64, suite: Arc<Suite>) -> QuotaServer {
        let bucket =
            Arc::new(Mutex::new(Bucket { capacity, rate, level: capacity, at: None, figures: Figures::default() }));
        let state = bucket.clone();
        let fake = Fake::start(move |request: &Recorded, _| {
            if request.method != "POST" {
                // A liveness check: not a model call, not counted.
                return Reply::json(json!({}));
            }
            let now = Instant::now();
            let mut b = state.lock().unwrap();
            let elapsed = b.at.map_or(0.0, |at| now.saturating_duration_since(at).as_secs_f64());
            b.level = (b.level + elapsed * b.rate).min(b.capacity);
            b.at = Some(now);
            b.figures.first.get_or_insert(now);
            let granted = b.level >= 1.0;
            if granted {
                b.level -= 1.0;
                b.figures.served += 1;
                b.figures.last_served = Some(now);
            } else {
                b.figures.refused += 1;
            }
            let wait = if granted { 0.0 } else { (1.0 - b.level) / b.rate };
            let remaining = b.level.floor() as u64;
            let full_in = (b.capacity - b.level) / b.rate;
            drop(b);
            let reply = match (granted, style) {
                (true, Style::OpenAi) => replay::openai(&suite, &request.body),
                (true, Style::Gemini) => replay::gemini(&suite, &request.body),
                (false, Style::OpenAi) => Reply::status(
                    429,
                    r#"{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}"#,
                )
                .header("retry-after", &(wait.ceil() as u64).to_string())
                .header("retry-after-ms", &((wait * 1000.0).ceil() as u64).to_string()),
                (false, Style::Gemini) => Reply::status(
                    429,
                    &json!({ "error": { "code": 429, "status": "RESOURCE_EXHAUSTED",
                        "message": "You exceeded your current quota, please check your plan and billing details.",
                        "details": [
                            { "@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
                                "quotaMetric": "generativelanguage.googleapis.com/generate_content_requests",
                                "quotaId": "GenerateRequestsPerMinutePerProjectPerModel" }] },
                            { "@type": "type.googleapis.com/google.rpc.RetryInfo",
                              "retryDelay": format!("{:.3}s", wait) }
                        ] } })
                    .to_string(),
                ),
            };
            match style {
                Style::OpenAi => reply
                    .header("x-ratelimit-limit-requests", &(capacity as u64).to_string())
                    .header("x-ratelimit-remaining-requests", &remaining.to_string())
                    .header("x-ratelimit-reset-requests", &go_duration(full_in)),
                Style::Gemini => reply,
            }
        });
        QuotaServer { fake, capacity, rate, bucket }
    }

    pub fn figures(&self) -> Figures {
        self.bucket.lock().unwrap().figures
    }

    /// The least time any client needs to be served what was served.
    pub fn bound(&self) -> Duration {
        let served = self.figures().served as f64;
        Duration::from_secs_f64(((served - self.capacity) / self.rate).max(0.0))
    }
}
