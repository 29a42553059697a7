//! The HTTP side shared by the remote providers (gemini, ollama, openai): one
//! reqwest client per provider, and a JSON POST that enforces the limits of
//! [`Limits`] on the server and turns every failure into a [`ModelError`]
//! whose message names the provider, the HTTP status and the server's own
//! error text.
//!
//! One model call has two phases, told apart by the response headers (the
//! rule is documented in docs/limits.md, "Model servers"):
//! - **waiting**, from sending the request until the headers: the model is
//!   computing a non-streaming answer, so this is the model's time, bounded
//!   by `http_timeout`. If the run's own deadline comes first, a cheap
//!   liveness request decides: a server that answers it is busy with a slow
//!   model ([`ModelError::OutOfTime`], the run timed out); one that does not
//!   is hung (a harness error).
//! - **reading**, from the headers on: the answer is complete on the
//!   server, so a gap longer than `body_stall_timeout`, a read longer than
//!   `body_timeout`, a broken connection or a truncated answer is a server
//!   or network fault (transient: retried), and the run's deadline coming
//!   now is a harness error. The body is read piece by piece and never
//!   buffered past `max_response_bytes`.
//!
//! What is transient and what is fatal is decided here, once: HTTP 408, 429
//! and 5xx, connection failures, timeouts, stalls and truncated answers are
//! transient; every other status, an answer that is not JSON and an answer
//! over a cap are fatal. A prompt that overflows the model's context window
//! is its own error whatever the status (llama.cpp answers it with a 500),
//! because retrying the same prompt cannot succeed.
//!
//! API keys never leave this module: every error text and every answer is
//! scrubbed of the provider's keys, decoded forms included (see `secrets`).
//!
//! Every request first waits for the connection's [`Quota`], which every
//! answer then informs (its rate-limit headers; a 429 and the wait it asked
//! for). A 429 is its own kind of error ([`ModelError::RateLimited`]), so
//! that a refused request goes back to the quota instead of using up its
//! attempts; OpenAI's `insufficient_quota` 429 (no credit left) is fatal.
//!
//! It does not know any wire format (see `gemini`, `ollama`, `openai`), does
//! not retry (see `retry`) and does not choose providers (the registry is
//! the parent module).

use std::future::Future;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};
use reqwest::{Response, StatusCode};
use serde_json::Value;

use super::quota::{self, Quota};
use super::secrets::Secrets;
use super::{ModelError, ModelReply, Rejected, Rejection};
use crate::limits::{LONGEST_OUTSIDE_WAIT, Limits, deadline_after, seconds_from_outside};

/// Most characters of a server's error text kept in a message.
const ERROR_TEXT_LIMIT: usize = 600;

/// Most bytes of an error answer (4xx, 5xx) read: enough for any server's
/// error message; the rest is not needed.
const ERROR_BODY_LIMIT: u64 = 64 * 1024;

/// A header to send, marked sensitive when it carries a key.
pub(crate) struct Header {
    pub name: &'static str,
    pub value: String,
    pub secret: bool,
}

/// A provider's connection: its client, its name for messages, the headers
/// of every request, where to check that the server is alive, its limits
/// and the secrets that must never appear in what it returns.
pub(crate) struct Transport {
    provider: &'static str,
    client: reqwest::Client,
    headers: HeaderMap,
    liveness_url: String,
    limits: Limits,
    secrets: Secrets,
    quota: std::sync::Arc<Quota>,
}

/// Most redirects followed for one request.
const MAX_REDIRECTS: usize = 5;

/// The redirect policy of every provider's client: a redirect is followed
/// only to the origin (scheme, host and port) the request was sent to, so
/// that no header carrying a key (Gemini's `x-goog-api-key`, a bearer token,
/// whatever a provider adds next) ever reaches another server. reqwest's
/// default strips only the headers it knows (`authorization`, cookies) and
/// only when the host changes. A redirect elsewhere is not followed: its
/// 3xx answer becomes a fatal error naming where it pointed
/// ([`redirect_error`]), which the user settles by setting the base URL.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let first = attempt.previous().first();
        if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else if first.is_some_and(|from| same_origin(from, attempt.url())) {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

/// Whether two URLs share scheme, host and port (the port the scheme
/// implies when none is written).
fn same_origin(a: &reqwest::Url, b: &reqwest::Url) -> bool {
    a.scheme() == b.scheme() && a.host() == b.host() && a.port_or_known_default() == b.port_or_known_default()
}

/// The error for a redirect that was not followed: where the server
/// pointed (without its query, which may carry anything), and what to do.
fn redirect_error(provider: &str, status: StatusCode, headers: &HeaderMap, from: &reqwest::Url) -> String {
    let target =
        headers.get(reqwest::header::LOCATION).and_then(|v| v.to_str().ok()).and_then(|loc| from.join(loc).ok()).map(
            |mut url| {
                url.set_query(None);
                url.set_fragment(None);
                let _ = url.set_username("");
                let _ = url.set_password(None);
                url.to_string()
            },
        );
    match target {
        Some(to) => format!(
            "{provider}: the server answered HTTP {status} redirecting to another origin, {to}; vaultbench does not \
             follow a redirect away from the server it was given, so that the API key is never sent elsewhere. If \
             that is the right server, set the provider's base URL to it"
        ),
        None => format!("{provider}: the server answered HTTP {status}, a redirect without a usable Location header"),
    }
}

/// What ended a wait.
enum Waited<T> {
    Done(T),
    /// The phase's own limit passed.
    Limit,
    /// The run's deadline passed.
    RunDeadline,
}

/// `work`, unless `limit` or the run's `deadline` comes first.
async fn within<T>(work: impl Future<Output = T>, limit: Instant, deadline: Option<Instant>) -> Waited<T> {
    let run_deadline = async {
        match deadline {
            Some(d) => tokio::time::sleep_until(d.into()).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        done = work => Waited::Done(done),
        () = tokio::time::sleep_until(limit.into()) => Waited::Limit,
        () = run_deadline => Waited::RunDeadline,
    }
}

impl Transport {
    /// A connection for `provider` sending `headers` with every request;
    /// `liveness_url` is a cheap GET the server answers at once when alive.
    pub(crate) fn new(
        provider: &'static str,
        limits: &Limits,
        headers: Vec<Header>,
        liveness_url: String,
        secrets: Vec<String>,
    ) -> Result<Transport> {
        static CRYPTO: std::sync::Once = std::sync::Once::new();
        // reqwest is built without a default TLS crypto provider; ring is the
        // one this crate links. Installing fails only if another part of the
        // process installed one first, which serves as well.
        CRYPTO.call_once(|| {
            let _ = rustls::crypto::ring::default_provider().install_default();
        });
        let mut map = HeaderMap::new();
        for h in headers {
            let mut value = HeaderValue::from_str(&h.value).map_err(|_| {
                anyhow::anyhow!(
                    "{provider}: the value of the {} header contains characters HTTP does not allow",
                    h.name
                )
            })?;
            value.set_sensitive(h.secret);
            map.insert(HeaderName::from_static(h.name), value);
        }
        // No whole-request timeout: the phases have their own (see the module docs).
        let client = reqwest::Client::builder()
            .connect_timeout(limits.connect_timeout.min(limits.http_timeout))
            .redirect(same_origin_redirects())
            .build()
            .with_context(|| format!("{provider}: building the HTTP client"))?;
        Ok(Transport {
            provider,
            client,
            headers: map,
            liveness_url,
            limits: limits.clone(),
            secrets: Secrets::new(secrets),
            quota: std::sync::Arc::new(Quota::new(limits)),
        })
    }

    /// The quota every request of this connection waits for.
    pub(crate) fn quota(&self) -> std::sync::Arc<Quota> {
        self.quota.clone()
    }

    /// How long a model may take to start answering (`http_timeout`).
    pub(crate) fn http_timeout(&self) -> Duration {
        self.limits.http_timeout
    }

    /// POST `body` as JSON to `url` and return the JSON answer, scrubbed of
    /// keys. `deadline` is the run's: see the module docs for what happens
    /// when it passes during the call.
    pub(crate) async fn post_json(
        &self,
        url: &str,
        body: &Value,
        deadline: Option<Instant>,
    ) -> Result<Value, ModelError> {
        let bytes = serde_json::to_vec(body).map_err(|e| {
            ModelError::Fatal(format!("{}: the request could not be written as JSON: {e}", self.provider))
        })?;
        // Input tokens, estimated as providers do before counting: four bytes a token.
        let tokens = bytes.len().div_ceil(4) as u64;
        let permit = self
            .quota
            .acquire(tokens, deadline)
            .await
            .map_err(|why| ModelError::Fatal(format!("{}: {why}", self.provider)))?;
        let mut heard = None;
        let result = self.post_once(url, bytes, deadline, &mut heard).await;
        match (&result, heard) {
            (Err(ModelError::RateLimited { retry_after, .. }), signals) => {
                permit.refused(*retry_after, &signals.unwrap_or_default())
            }
            (_, Some(signals)) => permit.answered(&signals),
            // No answer at all (a broken connection, a timeout): nothing learned.
            (_, None) => drop(permit),
        }
        result
    }

    /// GET `url` and return its JSON answer, scrubbed of keys: the server's
    /// lists (its models, the models it has loaded), which cost nothing and
    /// wait for no quota. Held to the same caps as a model's answer.
    pub(crate) async fn get_json(&self, url: &str) -> Result<Value, ModelError> {
        let sent = Instant::now();
        let request = self.client.get(url).headers(self.headers.clone()).send();
        let mut response = match within(request, deadline_after(sent, self.limits.http_timeout), None).await {
            Waited::Done(Ok(response)) => response,
            Waited::Done(Err(e)) => return Err(self.send_error(url, &e)),
            Waited::Limit | Waited::RunDeadline => {
                return Err(self.transient(format!(
                    "no answer from {} within {} s",
                    without_query(url),
                    self.limits.http_timeout.as_secs_f64()
                )));
            }
        };
        let status = response.status();
        self.not_a_redirect(&response)?;
        let text = self.read_body(&mut response, url, status, None).await?;
        if !status.is_success() {
            return Err(self.status_error(status, &self.scrub(&text), None));
        }
        if json_items(text.as_bytes()) > self.limits.max_response_items {
            return Err(ModelError::Fatal(format!(
                "{}: the answer from {} holds more than {} JSON items (max_response_items); not reading it",
                self.provider,
                without_query(url),
                self.limits.max_response_items
            )));
        }
        let mut value: Value = serde_json::from_str(&text).map_err(|e| {
            ModelError::Fatal(self.scrub(&format!(
                "{}: the answer from {} is not JSON ({e}): {}",
                self.provider,
                without_query(url),
                preview(&text)
            )))
        })?;
        self.secrets.scrub_value(&mut value);
        Ok(value)
    }

    /// Every answer, to a POST or a GET, goes through here: a redirect the
    /// client did not follow (another origin) is an error saying where it
    /// pointed and what to do.
    fn not_a_redirect(&self, response: &reqwest::Response) -> Result<(), ModelError> {
        let status = response.status();
        if !status.is_redirection() {
            return Ok(());
        }
        Err(ModelError::Fatal(self.scrub(&redirect_error(self.provider, status, response.headers(), response.url()))))
    }

    /// One POST of `bytes`; `heard` receives the answer's rate-limit
    /// headers once the server has answered.
    async fn post_once(
        &self,
        url: &str,
        bytes: Vec<u8>,
        deadline: Option<Instant>,
        heard: &mut Option<quota::Signals>,
    ) -> Result<Value, ModelError> {
        let sent = Instant::now();
        let request = self
            .client
            .post(url)
            .headers(self.headers.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(bytes)
            .send();
        let mut response = match within(request, deadline_after(sent, self.limits.http_timeout), deadline).await {
            Waited::Done(Ok(response)) => response,
            Waited::Done(Err(e)) => return Err(self.send_error(url, &e)),
            Waited::Limit => {
                return Err(self.transient(format!(
                    "no answer from {} within {} s (set VAULTBENCH_HTTP_TIMEOUT_S for slow models)",
                    without_query(url),
                    self.limits.http_timeout.as_secs_f64()
                )));
            }
            Waited::RunDeadline => return Err(self.still_waiting(url, sent).await),
        };
        let status = response.status();
        self.not_a_redirect(&response)?;
        let retry_after = retry_after(response.headers());
        *heard = Some(quota::signals::from_headers(response.headers()));
        let text = self.read_body(&mut response, url, status, deadline).await?;
        if !status.is_success() {
            return Err(self.status_error(status, &self.scrub(&text), retry_after));
        }
        let items = json_items(text.as_bytes());
        if items > self.limits.max_response_items {
            return Err(ModelError::Fatal(format!(
                "{}: the answer from {} holds more than {} JSON items (max_response_items); not reading it",
                self.provider,
                without_query(url),
                self.limits.max_response_items
            )));
        }
        let mut value: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            // The body ended inside the JSON: cut off on the way, worth another try.
            Err(e) if e.is_eof() => {
                return Err(self.transient(format!(
                    "the answer from {} ended early, after {} bytes ({e})",
                    without_query(url),
                    text.len()
                )));
            }
            Err(e) => {
                return Err(ModelError::Fatal(self.scrub(&format!(
                    "{}: HTTP {} but the answer is not valid JSON ({e}): {}",
                    self.provider,
                    status.as_u16(),
                    preview(&text)
                ))));
            }
        };
        drop(text);
        self.secrets.scrub_value(&mut value);
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

    /// A provider's reply without keys, however its parts assembled them.
    pub(crate) fn scrub_reply(&self, mut reply: ModelReply) -> ModelReply {
        self.secrets.scrub_reply(&mut reply);
        reply
    }

    /// Read the body of `response`, at most `max_response_bytes` of it
    /// (an error answer: its first [`ERROR_BODY_LIMIT`] bytes).
    async fn read_body(
        &self,
        response: &mut Response,
        url: &str,
        status: StatusCode,
        deadline: Option<Instant>,
    ) -> Result<String, ModelError> {
        let answer = status.is_success();
        let cap = if answer { self.limits.max_response_bytes } else { ERROR_BODY_LIMIT };
        if answer && let Some(announced) = response.content_length().filter(|n| *n > cap) {
            return Err(self.too_large(url, Some(announced)));
        }
        let url = without_query(url);
        let headers_at = Instant::now();
        let read_by = deadline_after(headers_at, self.limits.body_timeout);
        let mut last_piece = headers_at;
        // Sized once when the server says how long the body is (within the cap).
        let announced = response.content_length().unwrap_or(0).min(cap);
        let mut body: Vec<u8> = Vec::with_capacity(usize::try_from(announced).unwrap_or(0));
        loop {
            let limit = deadline_after(last_piece, self.limits.body_stall_timeout).min(read_by);
            let piece = match within(response.chunk(), limit, deadline).await {
                Waited::Done(Ok(Some(piece))) => piece,
                Waited::Done(Ok(None)) => break,
                // An error answer is read for its message: what arrived will do.
                _ if !answer => break,
                Waited::Done(Err(e)) => {
                    return Err(self.transient(format!(
                        "the connection broke after {} bytes of the answer from {url}: {}",
                        body.len(),
                        causes(&e)
                    )));
                }
                Waited::Limit if Instant::now() >= read_by => {
                    return Err(self.transient(format!(
                        "the answer from {url} took longer than {} s to arrive ({} bytes so far): the server or the network is too slow",
                        self.limits.body_timeout.as_secs_f64(),
                        body.len()
                    )));
                }
                Waited::Limit => {
                    return Err(self.transient(format!(
                        "the answer from {url} stalled: nothing for {} s after {} bytes",
                        self.limits.body_stall_timeout.as_secs_f64(),
                        body.len()
                    )));
                }
                Waited::RunDeadline => {
                    return Err(ModelError::Fatal(self.scrub(&format!(
                        "{}: the run's time ran out while {url} was still sending its answer ({} bytes in {:.1} s \
                         since its headers): a server or network fault, not the model's",
                        self.provider,
                        body.len(),
                        headers_at.elapsed().as_secs_f64()
                    ))));
                }
            };
            let room = usize::try_from(cap).unwrap_or(usize::MAX).saturating_sub(body.len());
            if piece.len() > room {
                if answer {
                    return Err(self.too_large(url, None));
                }
                body.extend_from_slice(&piece[..room]);
                break;
            }
            body.extend_from_slice(&piece);
            last_piece = Instant::now();
        }
        Ok(String::from_utf8(body).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }

    fn too_large(&self, url: &str, announced: Option<u64>) -> ModelError {
        let size = match announced {
            Some(n) => format!("announced {}", human_bytes(n)),
            None => "it went on past that".to_string(),
        };
        ModelError::Fatal(self.scrub(&format!(
            "{}: the answer from {} is larger than the {} cap on one response (max_response_bytes; {size}): \
             vaultbench stopped reading it. A server fault, not the model's",
            self.provider,
            without_query(url),
            human_bytes(self.limits.max_response_bytes)
        )))
    }

    /// The run's deadline passed before the server started answering: the
    /// model's time ran out if the server is alive, else the server hung.
    async fn still_waiting(&self, url: &str, sent: Instant) -> ModelError {
        let waited = sent.elapsed().as_secs_f64();
        match self.alive().await {
            Ok(()) => ModelError::OutOfTime(format!(
                "{}: the model was still working on its answer after {waited:.1} s (the server answered a liveness check)",
                self.provider
            )),
            Err(why) => ModelError::Fatal(self.scrub(&format!(
                "{}: {} gave no answer in {waited:.1} s, and no answer to a liveness check of {} within {} s ({why}): \
                 the server is hung, a harness fault",
                self.provider,
                without_query(url),
                without_query(&self.liveness_url),
                self.limits.liveness_timeout.as_secs_f64()
            ))),
        }
    }

    /// Whether the server answers a cheap request (any status will do).
    async fn alive(&self) -> Result<(), String> {
        let check = self.client.get(&self.liveness_url).headers(self.headers.clone()).send();
        match tokio::time::timeout(self.limits.liveness_timeout, check).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(causes(&e)),
            Err(_) => Err("no answer".to_string()),
        }
    }

    fn transient(&self, what: String) -> ModelError {
        ModelError::Transient { message: self.scrub(&format!("{}: {what}", self.provider)), retry_after: None }
    }

    fn send_error(&self, url: &str, e: &reqwest::Error) -> ModelError {
        let url = without_query(url);
        let chain = causes(e);
        if e.is_timeout() {
            self.transient(format!(
                "could not connect to {url} within {} s: {chain}",
                self.limits.connect_timeout.min(self.limits.http_timeout).as_secs_f64()
            ))
        } else if e.is_connect() || e.is_request() || e.is_body() {
            self.transient(format!("the request to {url} failed: {chain}"))
        } else {
            ModelError::Fatal(self.scrub(&format!("{}: the request to {url} failed: {chain}", self.provider)))
        }
    }

    fn status_error(&self, status: StatusCode, body: &str, retry_after: Option<Duration>) -> ModelError {
        let message = error_text(body);
        let retry_after = retry_after.or_else(|| google_retry_delay(body));
        let error = self.classify(Some(status), &message, retry_after);
        match (error, rejection(status, body)) {
            (ModelError::Fatal(message), Some(rejection)) => ModelError::Rejected(Rejected { rejection, message }),
            (error, _) => error,
        }
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
            // Out of credit, not of rate: no wait will help.
            Some(StatusCode::TOO_MANY_REQUESTS) if message.contains("insufficient_quota") => ModelError::Fatal(text),
            Some(StatusCode::TOO_MANY_REQUESTS) => ModelError::RateLimited { message: text, retry_after },
            Some(s) if s == StatusCode::REQUEST_TIMEOUT || s.is_server_error() => {
                ModelError::Transient { message: text, retry_after }
            }
            _ => ModelError::Fatal(text),
        }
    }

    /// Remove every secret from a text meant for people (errors, logs).
    pub(crate) fn scrub(&self, text: &str) -> String {
        self.secrets.scrub_message(text)
    }
}

/// The causes of a reqwest error: its sources hold the useful part
/// ("connection refused", "connection reset"); the top message only repeats
/// the URL.
fn causes(e: &reqwest::Error) -> String {
    let mut causes = Vec::new();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        causes.push(s.to_string());
        source = s.source();
    }
    if causes.is_empty() { e.to_string() } else { causes.join(": ") }
}

/// A URL for messages: without its query, where keys could travel.
fn without_query(url: &str) -> &str {
    url.split('?').next().unwrap_or(url)
}

/// `1.5 MiB`, `300 bytes`.
fn human_bytes(n: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    match n {
        n if n >= MIB && n % MIB == 0 => format!("{} MiB", n / MIB),
        n if n >= MIB => format!("{:.1} MiB", n as f64 / MIB as f64),
        n if n >= 1024 => format!("{} KiB", n / 1024),
        n => format!("{n} bytes"),
    }
}

/// The JSON items of a body, counted cheaply without parsing: the commas
/// and opening brackets outside strings. Parsing allocates for each item,
/// so this bounds the memory a body of tiny values can take.
fn json_items(body: &[u8]) -> u64 {
    let mut items = 0u64;
    let mut in_string = false;
    let mut escaped = false;
    for &b in body {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b',' | b'[' | b'{' => items += 1,
                _ => {}
            }
        }
    }
    items
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

/// Whether an error answer is a refusal no retry can change, and which,
/// from the status and the error body as the providers document them:
/// Gemini's `{"error": {"code", "message", "status", "details": [{"reason"}]}}`
/// (400 `INVALID_ARGUMENT` or `FAILED_PRECONDITION`, reason
/// `API_KEY_INVALID`; 403 `PERMISSION_DENIED`; 404 `NOT_FOUND`), OpenAI's
/// `{"error": {"message", "type", "code"}}` (`invalid_api_key`,
/// `model_not_found`, `invalid_request_error`), Ollama's `{"error": "..."}`
/// (404 for a model it has not pulled). `None`: some other failure, still
/// fatal for the call but not a reason to stop a sweep.
pub(crate) fn rejection(status: StatusCode, body: &str) -> Option<Rejection> {
    let value: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let error = &value["error"];
    let text = |v: &Value| v.as_str().unwrap_or_default().to_ascii_lowercase();
    let code = text(&error["code"]);
    let kind = text(&error["status"]);
    let reasons: Vec<String> =
        error["details"].as_array().map(|d| d.iter().map(|x| text(&x["reason"])).collect()).unwrap_or_default();
    let message = match error {
        Value::String(s) => s.to_ascii_lowercase(),
        _ => text(&error["message"]),
    };
    if status == StatusCode::UNAUTHORIZED || code == "invalid_api_key" || reasons.iter().any(|r| r == "api_key_invalid")
    {
        return Some(Rejection::Unauthorized);
    }
    if status == StatusCode::FORBIDDEN || kind == "permission_denied" || kind == "failed_precondition" {
        return Some(Rejection::Forbidden);
    }
    if status == StatusCode::NOT_FOUND
        || code == "model_not_found"
        || (message.contains("model") && message.contains("not found"))
    {
        return Some(Rejection::UnknownModel);
    }
    if status == StatusCode::BAD_REQUEST || status == StatusCode::UNPROCESSABLE_ENTITY {
        return Some(Rejection::InvalidArgument);
    }
    None
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

/// How long the server asks to wait: `retry-after-ms` (milliseconds, as
/// OpenAI-compatible and Azure servers send it), else `Retry-After`.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    get("retry-after-ms")
        .and_then(|v| v.parse::<f64>().ok())
        .and_then(|ms| seconds_from_outside(ms / 1000.0, LONGEST_OUTSIDE_WAIT))
        .or_else(|| headers.get(RETRY_AFTER).and_then(|v| v.to_str().ok()).and_then(parse_retry_after))
}

/// `Retry-After`: delay seconds or an HTTP-date (RFC 9110 §10.2.3). A
/// figure that is no number or date is ignored; a huge one is clamped to
/// [`LONGEST_OUTSIDE_WAIT`] (the retry budget then gives up at once).
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return seconds_from_outside(secs, LONGEST_OUTSIDE_WAIT);
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(SystemTime::now()).unwrap_or(Duration::ZERO).min(LONGEST_OUTSIDE_WAIT))
}

/// Google APIs put the delay of a 429 in the body, as a `RetryInfo` detail
/// whose `retryDelay` is a protobuf Duration in JSON (`"37s"`, `"0.5s"`).
fn google_retry_delay(body: &str) -> Option<Duration> {
    let v: Value = serde_json::from_str(body).ok()?;
    let details = v.get("error")?.get("details")?.as_array()?;
    details.iter().find_map(|d| {
        let s = d.get("retryDelay")?.as_str()?;
        let secs: f64 = s.trim().strip_suffix('s')?.parse().ok()?;
        seconds_from_outside(secs, LONGEST_OUTSIDE_WAIT)
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
    fn outside_waits_never_overflow() {
        for huge in ["1e300", "18446744073709551616", "99999999999999999999999", "1.7976931348623157e308"] {
            assert_eq!(parse_retry_after(huge), Some(LONGEST_OUTSIDE_WAIT), "{huge}");
        }
        for junk in ["NaN", "inf", "-inf", "-0.5", "", "1e", "0x10"] {
            assert_eq!(parse_retry_after(junk), None, "{junk}");
        }
        let body = |delay: &str| {
            format!(
                r#"{{"error":{{"details":[{{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"{delay}"}}]}}}}"#
            )
        };
        assert_eq!(google_retry_delay(&body("1e300s")), Some(LONGEST_OUTSIDE_WAIT));
        assert_eq!(google_retry_delay(&body("0.5s")), Some(Duration::from_millis(500)));
        assert_eq!(google_retry_delay(&body("NaNs")), None);
        assert_eq!(google_retry_delay(&body("-1s")), None);
        assert_eq!(google_retry_delay(&body("37")), None);
    }

    #[test]
    fn retry_after_ms_comes_first() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("7"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(7)));
        headers.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(250)));
        headers.insert("retry-after-ms", HeaderValue::from_static("1e300"));
        assert_eq!(retry_after(&headers), Some(LONGEST_OUTSIDE_WAIT));
        headers.insert("retry-after-ms", HeaderValue::from_static("later"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(7)));
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
    fn refusals_for_good_are_read_from_status_and_body() {
        let gemini_key = r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.",
            "status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo",
            "reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}"#;
        let cases = [
            (400, gemini_key, Some(Rejection::Unauthorized)),
            (
                400,
                r#"{"error":{"code":400,"message":"Invalid JSON payload","status":"INVALID_ARGUMENT"}}"#,
                Some(Rejection::InvalidArgument),
            ),
            (
                400,
                r#"{"error":{"code":400,"message":"User location is not supported","status":"FAILED_PRECONDITION"}}"#,
                Some(Rejection::Forbidden),
            ),
            (
                403,
                r#"{"error":{"code":403,"message":"denied","status":"PERMISSION_DENIED"}}"#,
                Some(Rejection::Forbidden),
            ),
            (
                404,
                r#"{"error":{"code":404,"message":"models/gemini-2.5-flsh is not found for API version v1beta","status":"NOT_FOUND"}}"#,
                Some(Rejection::UnknownModel),
            ),
            (
                401,
                r#"{"error":{"message":"Incorrect API key provided: sk-b***","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#,
                Some(Rejection::Unauthorized),
            ),
            (
                404,
                r#"{"error":{"message":"The model `gpt-x` does not exist","type":"invalid_request_error","code":"model_not_found"}}"#,
                Some(Rejection::UnknownModel),
            ),
            (
                400,
                r#"{"error":{"message":"bad tools","type":"invalid_request_error","code":null}}"#,
                Some(Rejection::InvalidArgument),
            ),
            (404, r#"{"error":"model \"llama9\" not found, try pulling it first"}"#, Some(Rejection::UnknownModel)),
            (
                400,
                r#"{"error":"registry.ollama.ai/library/x does not support tools"}"#,
                Some(Rejection::InvalidArgument),
            ),
            (422, "not json at all", Some(Rejection::InvalidArgument)),
            (413, "too large", None),
            (409, r#"{"error":"conflict"}"#, None),
        ];
        for (status, body, expected) in cases {
            assert_eq!(rejection(StatusCode::from_u16(status).unwrap(), body), expected, "{status} {body}");
        }
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
    fn json_items_count_structure_outside_strings() {
        assert_eq!(json_items(br#"{"a": [1, 2, {"b": "x,[{"}], "c\"[,": 3}"#), 6);
        assert_eq!(json_items(b"0"), 0);
        assert_eq!(json_items("[0,".repeat(1000).as_bytes()), 2000);
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_bytes(4 * 1024 * 1024), "4 MiB");
        assert_eq!(human_bytes(1536 * 1024), "1.5 MiB");
        assert_eq!(human_bytes(64 * 1024), "64 KiB");
        assert_eq!(human_bytes(12), "12 bytes");
    }
}
