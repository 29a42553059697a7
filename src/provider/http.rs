//! The HTTP side shared by the remote providers (gemini, ollama, openai): one
//! reqwest client per provider, a JSON POST that turns every failure into a
//! [`ModelError`] with a message naming the provider, the HTTP status and the
//! server's own error text, and the registry of the three providers.
//!
//! What is transient and what is fatal is decided here, once: HTTP 408, 429
//! and 5xx, connection failures and timeouts are transient; every other
//! status, and an answer that is not JSON, is fatal. A prompt that overflows
//! the model's context window is fatal whatever the status (llama.cpp answers
//! it with a 500), because retrying the same prompt cannot succeed.
//!
//! API keys never leave this module in an error: every error text, and every
//! response body, is scrubbed of the keys the provider was given.
//!
//! It does not know any wire format (see `gemini`, `ollama`, `openai`) and does
//! not retry (see `retry`).

use std::sync::{Arc, Once};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};
use serde_json::Value;

use super::retry::{RetryPolicy, Retrying};
use super::{Model, ModelError};

/// The providers this module builds.
pub const PROVIDERS: &[&str] = &["gemini", "ollama", "openai"];

/// Per-request timeout when `VAULTBENCH_HTTP_TIMEOUT_S` is not set: generous,
/// because a local model on a small machine can take minutes per answer.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// Most characters of a server's error text kept in a message.
const ERROR_TEXT_LIMIT: usize = 600;

/// Keys shorter than this are placeholders that local servers ignore
/// (`ollama`, `lm-studio`, `none`), not secrets; scrubbing them out of a model's
/// answer would change the answer being scored, so only error texts lose them.
const SECRET_MIN_LEN_IN_ANSWERS: usize = 16;

/// Explicit settings that take precedence over the environment, e.g. the
/// judge's own key (`EVAL_JUDGE_API_KEY`) and endpoint.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub api_key: Option<String>,
    pub base_url: Option<String>,
    pub timeout: Option<Duration>,
}

impl Overrides {
    /// The explicit timeout, else [`timeout_from_env`].
    pub fn timeout_or_env(&self) -> Result<Duration> {
        self.timeout.map_or_else(timeout_from_env, Ok)
    }
}

/// Build `provider`'s client for `model_id` from the environment, wrapped in
/// the retry policy of the environment (see [`RetryPolicy::from_env`]).
pub fn build(provider: &str, model_id: &str) -> Result<Arc<dyn Model>> {
    build_with(provider, model_id, &Overrides::default())
}

/// [`build`], with explicit settings taking precedence over the environment.
pub fn build_with(provider: &str, model_id: &str, overrides: &Overrides) -> Result<Arc<dyn Model>> {
    if model_id.trim().is_empty() {
        bail!("no model id given for provider `{provider}`: pass --model");
    }
    let inner: Arc<dyn Model> = match provider {
        "gemini" => Arc::new(super::gemini::Gemini::new(super::gemini::GeminiConfig::from_env(model_id, overrides)?)?),
        "ollama" => Arc::new(super::ollama::Ollama::new(super::ollama::OllamaConfig::from_env(model_id, overrides)?)?),
        "openai" => Arc::new(super::openai::OpenAi::new(super::openai::OpenAiConfig::from_env(model_id, overrides)?)?),
        other => bail!("unknown provider `{other}`: the HTTP providers are {}", PROVIDERS.join(", ")),
    };
    Ok(Arc::new(Retrying::new(inner, RetryPolicy::from_env()?)))
}

/// The per-request timeout: `VAULTBENCH_HTTP_TIMEOUT_S` (seconds) or [`DEFAULT_TIMEOUT`].
pub fn timeout_from_env() -> Result<Duration> {
    match env_nonempty("VAULTBENCH_HTTP_TIMEOUT_S") {
        None => Ok(DEFAULT_TIMEOUT),
        Some(v) => {
            let secs: f64 = v.parse().ok().filter(|s: &f64| s.is_finite() && *s > 0.0).with_context(|| {
                format!("VAULTBENCH_HTTP_TIMEOUT_S is `{v}`: set it to a positive number of seconds, e.g. 600")
            })?;
            Ok(Duration::from_secs_f64(secs))
        }
    }
}

/// An environment variable, `None` when unset or blank.
pub(crate) fn env_nonempty(name: &str) -> Option<String> {
    std::env::var(name).ok().map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

/// A provider's connection: its client, its name for messages and the
/// secrets that must never appear in what it returns.
pub(crate) struct Transport {
    provider: &'static str,
    client: reqwest::Client,
    timeout: Duration,
    secrets: Vec<String>,
}

/// A header to send, marked sensitive when it carries a key.
pub(crate) struct Header<'a> {
    pub name: &'static str,
    pub value: &'a str,
    pub secret: bool,
}

impl Transport {
    pub(crate) fn new(provider: &'static str, timeout: Duration, secrets: Vec<String>) -> Result<Transport> {
        static CRYPTO: Once = Once::new();
        // reqwest is built without a default TLS crypto provider; ring is the
        // one this crate links. Installing fails only if another part of the
        // process installed one first, which serves as well.
        CRYPTO.call_once(|| {
            let _ = rustls::crypto::ring::default_provider().install_default();
        });
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(30)))
            .build()
            .with_context(|| format!("{provider}: building the HTTP client"))?;
        let secrets = secrets.into_iter().filter(|s| !s.is_empty()).collect();
        Ok(Transport { provider, client, timeout, secrets })
    }

    /// POST `body` as JSON to `url` and return the JSON answer.
    pub(crate) async fn post_json(&self, url: &str, headers: &[Header<'_>], body: &Value) -> Result<Value, ModelError> {
        let mut map = HeaderMap::new();
        for h in headers {
            let mut value = HeaderValue::from_str(h.value).map_err(|_| {
                ModelError::Fatal(format!(
                    "{}: the value of the {} header contains characters HTTP does not allow",
                    self.provider, h.name
                ))
            })?;
            value.set_sensitive(h.secret);
            map.insert(HeaderName::from_static(h.name), value);
        }
        let response =
            self.client.post(url).headers(map).json(body).send().await.map_err(|e| self.send_error(url, &e))?;
        let status = response.status();
        let retry_after = response.headers().get(RETRY_AFTER).and_then(|v| v.to_str().ok()).and_then(parse_retry_after);
        let bytes = response.bytes().await.map_err(|e| self.send_error(url, &e))?;
        let text = self.scrub_answer(&String::from_utf8_lossy(&bytes));

        if !status.is_success() {
            return Err(self.status_error(status, &text, retry_after));
        }
        let value: Value = serde_json::from_str(&text).map_err(|e| {
            ModelError::Fatal(self.scrub(&format!(
                "{}: HTTP {} but the answer is not valid JSON ({e}): {}",
                self.provider,
                status.as_u16(),
                preview(&text)
            )))
        })?;
        // Some OpenAI-compatible servers report failures with a 200 status.
        if let Some(err) = value.get("error").filter(|e| !e.is_null())
            && value.get("choices").is_none()
            && value.get("candidates").is_none()
            && value.get("message").is_none()
        {
            let message = error_text(&serde_json::json!({ "error": err }).to_string());
            return Err(self.classify(None, &message, None));
        }
        Ok(value)
    }

    fn send_error(&self, url: &str, e: &reqwest::Error) -> ModelError {
        // The sources hold the useful part ("connection refused", "connection
        // reset"); the top message only repeats the URL.
        let mut causes = Vec::new();
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            causes.push(s.to_string());
            source = s.source();
        }
        let chain = if causes.is_empty() { e.to_string() } else { causes.join(": ") };
        let url = url.split('?').next().unwrap_or(url);
        if e.is_timeout() {
            ModelError::Transient {
                message: self.scrub(&format!(
                    "{}: no answer from {url} within {} s (set VAULTBENCH_HTTP_TIMEOUT_S for slow models)",
                    self.provider,
                    self.timeout.as_secs_f64()
                )),
                retry_after: None,
            }
        } else if e.is_connect() || e.is_request() || e.is_body() {
            ModelError::Transient {
                message: self.scrub(&format!("{}: the request to {url} failed: {chain}", self.provider)),
                retry_after: None,
            }
        } else {
            ModelError::Fatal(self.scrub(&format!("{}: the request to {url} failed: {chain}", self.provider)))
        }
    }

    fn status_error(&self, status: StatusCode, body: &str, retry_after: Option<Duration>) -> ModelError {
        let message = error_text(body);
        let retry_after = retry_after.or_else(|| google_retry_delay(body));
        self.classify(Some(status), &message, retry_after)
    }

    fn classify(&self, status: Option<StatusCode>, message: &str, retry_after: Option<Duration>) -> ModelError {
        let status_text = match status {
            Some(s) => format!("HTTP {} {}", s.as_u16(), s.canonical_reason().unwrap_or("")).trim_end().to_string(),
            None => "an error answer".to_string(),
        };
        if is_context_overflow(message) {
            return ModelError::ContextOverflow(self.scrub(&format!(
                "{}: the prompt exceeded the model's context window ({status_text}): {message}. \
                 Use a model or server setting with a larger context (e.g. llama.cpp -c, Ollama num_ctx)",
                self.provider
            )));
        }
        let text = self.scrub(&format!("{}: {status_text}: {message}", self.provider));
        match status {
            Some(s)
                if s == StatusCode::TOO_MANY_REQUESTS || s == StatusCode::REQUEST_TIMEOUT || s.is_server_error() =>
            {
                ModelError::Transient { message: text, retry_after }
            }
            _ => ModelError::Fatal(text),
        }
    }

    /// Remove every secret from a text meant for people (errors, logs).
    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut out = text.to_string();
        for s in &self.secrets {
            if s.len() >= 4 {
                out = out.replace(s.as_str(), "[REDACTED]");
            }
        }
        out
    }

    /// Remove real secrets from a server's answer before anything reads it.
    fn scrub_answer(&self, text: &str) -> String {
        let mut out = text.to_string();
        for s in &self.secrets {
            if s.len() >= SECRET_MIN_LEN_IN_ANSWERS && out.contains(s.as_str()) {
                out = out.replace(s.as_str(), "[REDACTED]");
            }
        }
        out
    }
}

/// The server's own words from an error body: `error.message`, `error` (a
/// string), `message` or `detail`, else the body itself; whitespace collapsed
/// and cut to a readable length.
pub(crate) fn error_text(body: &str) -> String {
    let from_json = serde_json::from_str::<Value>(body).ok().and_then(|v| {
        let pick = |v: &Value| v.as_str().map(str::to_string);
        match v.get("error") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(e @ Value::Object(_)) => {
                let message = e.get("message").and_then(pick);
                let kind = e.get("status").or_else(|| e.get("type")).and_then(pick);
                match (message, kind) {
                    (Some(m), Some(k)) if !m.contains(&k) => Some(format!("{m} ({k})")),
                    (Some(m), _) => Some(m),
                    (None, _) => Some(e.to_string()),
                }
            }
            _ => v.get("message").and_then(pick).or_else(|| v.get("detail").map(|d| pick(d).unwrap_or(d.to_string()))),
        }
    });
    let text = from_json.unwrap_or_else(|| body.to_string());
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() { "(empty body)".to_string() } else { truncate(&text, ERROR_TEXT_LIMIT) }
}

/// The start of a body, for messages about unreadable answers.
pub(crate) fn preview(text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() { "(empty body)".to_string() } else { truncate(&text, 200) }
}

fn truncate(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// Whether a server's error text says the prompt did not fit the context
/// window. Phrasings of OpenAI, vLLM, llama.cpp, LM Studio, Ollama and Gemini.
pub(crate) fn is_context_overflow(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "context_length_exceeded",
        "exceed_context_size",
        "maximum context length",
        "exceeds the available context size",
        "context size has been exceeded",
        "context length exceeded",
        "exceeds the context window",
        "context window exceeded",
        "prompt is too long",
        "input token count",
    ]
    .iter()
    .any(|p| m.contains(p))
        || (m.contains("context") && (m.contains("exceed") || m.contains("too long") || m.contains("overflow")))
}

/// `Retry-After`: delay seconds or an HTTP-date (RFC 9110 §10.2.3).
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    if let Ok(secs) = value.parse::<f64>()
        && secs.is_finite()
        && secs >= 0.0
    {
        return Some(Duration::from_secs_f64(secs));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(SystemTime::now()).unwrap_or(Duration::ZERO))
}

/// Google APIs put the delay of a 429 in the body
/// (`error.details[].retryDelay`, e.g. `"37s"`) rather than in a header.
fn google_retry_delay(body: &str) -> Option<Duration> {
    let v: Value = serde_json::from_str(body).ok()?;
    let details = v.get("error")?.get("details")?.as_array()?;
    details.iter().find_map(|d| {
        let s = d.get("retryDelay")?.as_str()?;
        let secs: f64 = s.strip_suffix('s')?.parse().ok()?;
        (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        assert_eq!(parse_retry_after("7"), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after(" 0 "), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("1.5"), Some(Duration::from_millis(1500)));
        let in_a_minute = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(60));
        let d = parse_retry_after(&in_a_minute).unwrap();
        assert!(d > Duration::from_secs(55) && d <= Duration::from_secs(60), "{d:?}");
        // A date in the past means "now".
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon"), None);
        assert_eq!(parse_retry_after("-3"), None);
    }

    #[test]
    fn google_retry_delay_comes_from_the_body() {
        let body = r#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[
            {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}"#;
        assert_eq!(google_retry_delay(body), Some(Duration::from_secs(37)));
        assert_eq!(google_retry_delay("{}"), None);
    }

    #[test]
    fn error_text_prefers_the_servers_message() {
        assert_eq!(
            error_text(r#"{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT"}}"#),
            "API key not valid. (INVALID_ARGUMENT)"
        );
        assert_eq!(
            error_text(r#"{"error":"model \"x\" not found, try pulling it first"}"#),
            "model \"x\" not found, try pulling it first"
        );
        assert_eq!(error_text(r#"{"detail":"Not Found"}"#), "Not Found");
        assert_eq!(error_text("  <html>\n  oops </html> "), "<html> oops </html>");
        assert_eq!(error_text(""), "(empty body)");
        assert!(error_text(&"x".repeat(5000)).ends_with('…'));
    }

    #[test]
    fn context_overflow_phrasings_are_recognized() {
        for m in [
            "the request exceeds the available context size. try increasing the context size or enable context shift",
            "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens",
            "Context size has been exceeded.",
            "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
        ] {
            assert!(is_context_overflow(m), "{m}");
        }
        assert!(!is_context_overflow("API key not valid"));
        assert!(!is_context_overflow("model not found"));
    }

    #[test]
    fn scrub_removes_keys_from_errors_and_long_keys_from_answers() {
        let t =
            Transport::new("test", Duration::from_secs(1), vec!["sk-short".into(), "AIzaSy-0123456789abcdef".into()])
                .unwrap();
        assert_eq!(t.scrub("key sk-short and AIzaSy-0123456789abcdef"), "key [REDACTED] and [REDACTED]");
        assert_eq!(t.scrub_answer("sk-short AIzaSy-0123456789abcdef"), "sk-short [REDACTED]");
    }
}
