//! Reading a server's rate-limit headers, as OpenAI and the servers that
//! copy its API send them (OpenAI's "Rate limits in headers",
//! <https://platform.openai.com/docs/guides/rate-limits>):
//!
//! | header | example | meaning |
//! |---|---|---|
//! | `x-ratelimit-limit-requests` | `60` | requests the window holds when full |
//! | `x-ratelimit-remaining-requests` | `59` | requests left before the limit |
//! | `x-ratelimit-reset-requests` | `1s` | until the window is full again |
//! | `x-ratelimit-limit-tokens` | `150000` | tokens the window holds when full |
//! | `x-ratelimit-remaining-tokens` | `149984` | tokens left |
//! | `x-ratelimit-reset-tokens` | `6m0s` | until the token window is full again |
//!
//! Resets are Go-style durations (`6m0s`, `1s`, `12ms`, `1h2m3.5s`); a bare
//! number is read as seconds (as some proxies send it). Anything else (a
//! negative figure, Azure's `-1` for "not reported", text) is ignored, never
//! an error: headers are the server's word, not the user's.

use std::time::Duration;

use reqwest::header::HeaderMap;

use super::governor::{Signals, Window};
use crate::limits::{LONGEST_OUTSIDE_WAIT, seconds_from_outside};

/// The rate-limit headers of one answer.
pub fn from_headers(headers: &HeaderMap) -> Signals {
    let window = |kind: &str| {
        let get =
            |what: &str| headers.get(format!("x-ratelimit-{what}-{kind}")).and_then(|v| v.to_str().ok()).map(str::trim);
        Window {
            limit: get("limit").and_then(count),
            remaining: get("remaining").and_then(count),
            reset: get("reset").and_then(duration),
        }
    };
    Signals { requests: window("requests"), tokens: window("tokens") }
}

/// A count: a whole (or fractional, rounded down) non-negative number.
fn count(text: &str) -> Option<u64> {
    let n: f64 = text.parse().ok()?;
    // `as` saturates: a figure past u64::MAX reads as u64::MAX.
    (n.is_finite() && n >= 0.0).then_some(n as u64)
}

/// A Go-style duration (`6m0s`, `20ms`, `1.5s`, `1h`) or a number of seconds.
pub fn duration(text: &str) -> Option<Duration> {
    if let Ok(secs) = text.parse::<f64>() {
        return seconds_from_outside(secs, LONGEST_OUTSIDE_WAIT);
    }
    let mut rest = text;
    let mut total = 0.0f64;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        if digits == 0 {
            return None;
        }
        let value: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" | "μs" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += value * scale;
    }
    seconds_from_outside(total, LONGEST_OUTSIDE_WAIT)
}

#[cfg(test)]
mod tests {
    use reqwest::header::HeaderValue;

    use super::*;

    #[test]
    fn go_durations_and_seconds() {
        let ms = Duration::from_millis;
        for (text, want) in [
            ("1s", ms(1000)),
            ("6m0s", ms(360_000)),
            ("20ms", ms(20)),
            ("12ms", ms(12)),
            ("1h2m3.5s", ms(3_723_500)),
            ("0.5s", ms(500)),
            ("7", ms(7000)),
            ("0.25", ms(250)),
            ("1500us", ms(1) + Duration::from_micros(500)),
        ] {
            assert_eq!(duration(text), Some(want), "{text}");
        }
        for junk in ["", "-1", "-1s", "s", "1x", "1.2.3s", "NaN", "ms", "1 s", "1e999h"] {
            assert!(duration(junk).is_none_or(|d| d == LONGEST_OUTSIDE_WAIT), "{junk}: {:?}", duration(junk));
        }
        assert_eq!(duration("99999999999h"), Some(LONGEST_OUTSIDE_WAIT));
    }

    #[test]
    fn headers_as_openai_documents_them() {
        let mut h = HeaderMap::new();
        for (k, v) in [
            ("x-ratelimit-limit-requests", "60"),
            ("x-ratelimit-limit-tokens", "150000"),
            ("x-ratelimit-remaining-requests", "59"),
            ("x-ratelimit-remaining-tokens", "149984"),
            ("x-ratelimit-reset-requests", "1s"),
            ("x-ratelimit-reset-tokens", "6m0s"),
        ] {
            h.insert(k, HeaderValue::from_static(v));
        }
        let s = from_headers(&h);
        assert_eq!(s.requests, Window { limit: Some(60), remaining: Some(59), reset: Some(Duration::from_secs(1)) });
        assert_eq!(
            s.tokens,
            Window { limit: Some(150_000), remaining: Some(149_984), reset: Some(Duration::from_secs(360)) }
        );
        // Azure's "-1" and junk say nothing.
        let mut h = HeaderMap::new();
        h.insert("x-ratelimit-remaining-tokens", HeaderValue::from_static("-1"));
        h.insert("x-ratelimit-reset-requests", HeaderValue::from_static("soon"));
        h.insert("x-ratelimit-limit-requests", HeaderValue::from_static("1e400"));
        let s = from_headers(&h);
        assert_eq!(s.tokens.remaining, None);
        assert_eq!(s.requests.reset, None);
        assert_eq!(s.requests.limit, None);
        assert!(from_headers(&HeaderMap::new()).is_empty());
    }
}
