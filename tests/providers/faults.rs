//! The transport faults every HTTP provider must survive, checked the same
//! way for each: a 429 with Retry-After then success, a 5xx storm, an
//! unreadable body, a server slower than the timeout, client errors, an
//! error body echoing the key, and servers that refuse or hang up; bodies
//! that never end, announce too much, break off, stall or drip; the run's
//! deadline reached while the model thinks, while the server hangs and
//! while it drips; keys echoed in encoded forms; absurd waits asked for.
//! Also the reply-length cap, which each wire format carries in its own
//! field.

use std::sync::Arc;
use std::time::{Duration, Instant};

use vaultbench::limits::Limits;
use vaultbench::provider::retry::{RetryPolicy, Retrying};
use vaultbench::provider::{ChatRequest, Message, Model, ModelError, ModelReply};

use crate::fake::{self, Fake, Reply, Sending};

/// A provider under test.
pub struct Subject {
    /// The provider's name as it appears in messages.
    pub name: &'static str,
    /// A client for the server at `url` held to `limits`.
    pub make: fn(url: &str, limits: &Limits) -> Arc<dyn Model>,
    /// A successful answer of the provider and the text it carries.
    pub ok: fn() -> Reply,
    pub ok_text: &'static str,
    /// The key `make` configures, if the provider takes one.
    pub key: Option<&'static str>,
    /// Where the provider checks that its server is alive.
    pub liveness_path: &'static str,
}

/// The default limits with this wait for an answer to begin.
pub fn within(http_timeout: Duration) -> Limits {
    Limits { http_timeout, ..Limits::default() }
}

/// Tiny delays: retries are counted, not waited for.
pub fn fast(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        max_elapsed: Duration::from_secs(30),
    }
}

pub fn hello() -> Vec<Message> {
    vec![Message::User { text: "hello".into() }]
}

pub async fn ask(model: &dyn Model, messages: &[Message]) -> Result<ModelReply, ModelError> {
    model
        .chat(ChatRequest {
            system: "You are terse.",
            messages,
            tools: &[],
            temperature: None,
            max_output_tokens: None,
            deadline: None,
        })
        .await
}

fn fatal(r: Result<ModelReply, ModelError>) -> String {
    match r {
        Err(ModelError::Fatal(m)) => m,
        // A refusal for good is fatal to the call too.
        Err(ModelError::Rejected(r)) => r.message,
        other => panic!("expected a fatal error, got {other:?}"),
    }
}

pub async fn rate_limit_then_success(s: &Subject) {
    let fake = Fake::scripted(vec![
        Reply::status(429, r#"{"error":{"message":"slow down"}}"#).header("retry-after", "1"),
        (s.ok)(),
    ]);
    let model = Retrying::new((s.make)(&fake.url, &within(Duration::from_secs(10))), fast(3));
    let start = Instant::now();
    let reply = ask(&model, &hello()).await.unwrap();
    assert_eq!(reply.text, s.ok_text);
    assert!(start.elapsed() >= Duration::from_secs(1), "Retry-After was not honoured: {:?}", start.elapsed());
    assert_eq!(fake.requests().len(), 2);
}

pub async fn server_error_storm_ends_fatal(s: &Subject) {
    let fake = Fake::always(Reply::status(500, r#"{"error":{"message":"upstream exploded"}}"#));
    let model = Retrying::new((s.make)(&fake.url, &within(Duration::from_secs(10))), fast(3));
    let m = fatal(ask(&model, &hello()).await);
    assert!(m.starts_with(&format!("{}: gave up after 3 attempts", s.name)), "{m}");
    assert!(m.ends_with("; last error: HTTP 500 Internal Server Error: upstream exploded"), "{m}");
    assert_eq!(fake.requests().len(), 3, "bounded retries");
}

pub async fn malformed_body_is_fatal_at_once(s: &Subject) {
    let fake = Fake::always(Reply::status(200, "<html>this is not JSON"));
    let model = Retrying::new((s.make)(&fake.url, &within(Duration::from_secs(10))), fast(3));
    let m = fatal(ask(&model, &hello()).await);
    assert!(m.contains(&format!("{}: HTTP 200 but the answer is not valid JSON", s.name)), "{m}");
    assert!(m.contains("<html>this is not JSON"), "{m}");
    assert_eq!(fake.requests().len(), 1, "an unreadable answer is not retried");
}

pub async fn slow_server_hits_the_timeout(s: &Subject) {
    let fake = Fake::always((s.ok)().delayed(Duration::from_secs(3)));
    let bare = (s.make)(&fake.url, &within(Duration::from_millis(200)));
    let start = Instant::now();
    match ask(bare.as_ref(), &hello()).await {
        Err(ModelError::Transient { message, .. }) => {
            assert!(message.contains("no answer from") && message.contains("within 0.2 s"), "{message}")
        }
        other => panic!("expected a transient timeout, got {other:?}"),
    }
    let model = Retrying::new(bare, fast(2));
    let m = fatal(ask(&model, &hello()).await);
    assert!(m.contains("gave up after 2 attempts") && m.contains("within 0.2 s"), "{m}");
    assert!(start.elapsed() < Duration::from_secs(3), "the client waited for the slow server");
}

pub async fn client_errors_are_fatal_with_the_servers_words(s: &Subject) {
    for status in [400u16, 401, 403, 404] {
        let fake = Fake::always(Reply::status(status, &format!(r#"{{"error":{{"message":"bad thing {status}"}}}}"#)));
        let model = Retrying::new((s.make)(&fake.url, &within(Duration::from_secs(10))), fast(3));
        let m = fatal(ask(&model, &hello()).await);
        assert!(m.starts_with(&format!("{}: HTTP {status} ", s.name)), "{m}");
        assert!(m.ends_with(&format!(": bad thing {status}")), "{m}");
        assert_eq!(fake.requests().len(), 1, "HTTP {status} is not retried");
    }
}

pub async fn key_never_appears_in_errors(s: &Subject) {
    let fake = Fake::start(fake::echo_headers(401));
    let model = (s.make)(&fake.url, &within(Duration::from_secs(10)));
    let m = fatal(ask(model.as_ref(), &hello()).await);
    let Some(key) = s.key else {
        // A provider without a key sends no credentials at all.
        let r = &fake.requests()[0];
        assert!(r.header("authorization").is_none() && r.header("x-goog-api-key").is_none(), "{r:?}");
        assert!(m.contains("HTTP 401") && m.contains("rejected request with headers"), "{m}");
        return;
    };
    // The server did see the key, and echoed it...
    assert!(fake.requests()[0].headers.iter().any(|(_, v)| v.contains(key)));
    // ...but the error does not carry it.
    assert!(!m.contains(key), "{m}");
    assert!(m.contains("[REDACTED]"), "{m}");
}

pub async fn unreachable_servers_are_transient(s: &Subject) {
    for url in [fake::refused_url(), fake::hanging_up_url()] {
        let model = (s.make)(&url, &within(Duration::from_secs(10)));
        match ask(model.as_ref(), &hello()).await {
            Err(ModelError::Transient { message, .. }) => {
                assert!(message.starts_with(&format!("{}: the request to {url}", s.name)), "{message}");
                assert!(message.contains("Connection refused") || message.contains("Connection reset"), "{message}");
                assert_eq!(message.matches(url.as_str()).count(), 1, "{message}");
            }
            other => panic!("{url}: expected a transient error, got {other:?}"),
        }
    }
}

/// Limits small enough to hit in a test.
fn tight() -> Limits {
    Limits {
        http_timeout: Duration::from_secs(10),
        max_response_bytes: 64 * 1024,
        body_stall_timeout: Duration::from_millis(300),
        body_timeout: Duration::from_millis(800),
        liveness_timeout: Duration::from_millis(500),
        ..Limits::default()
    }
}

async fn ask_until(model: &dyn Model, deadline: Instant) -> Result<ModelReply, ModelError> {
    let messages = hello();
    model
        .chat(ChatRequest {
            system: "You are terse.",
            messages: &messages,
            tools: &[],
            temperature: None,
            max_output_tokens: None,
            deadline: Some(deadline),
        })
        .await
}

pub async fn endless_body_is_a_harness_error_naming_the_cap(s: &Subject) {
    let fake = Fake::always((s.ok)().sending(Sending::Endless));
    let model = Retrying::new((s.make)(&fake.url, &tight()), fast(3));
    let m = fatal(ask(&model, &hello()).await);
    assert!(m.starts_with(&format!("{}: the answer from {}", s.name, fake.url)), "{m}");
    assert!(m.contains("larger than the 64 KiB cap on one response (max_response_bytes"), "{m}");
    assert_eq!(fake.requests().len(), 1, "an oversized answer is not asked for again");
    // An error answer is read for its message only: its status decides.
    let fake = Fake::always(Reply::status(503, r#"{"error":{"message":"overloaded"#).sending(Sending::Endless));
    let model = Retrying::new((s.make)(&fake.url, &tight()), fast(2));
    let m = fatal(ask(&model, &hello()).await);
    assert!(m.contains("gave up after 2 attempts") && m.contains("HTTP 503 Service Unavailable"), "{m}");
}

pub async fn announced_oversize_body_is_refused_unread(s: &Subject) {
    let mut big = (s.ok)();
    big.body = format!("{}{}", big.body, " ".repeat(100 * 1024));
    let fake = Fake::always(big);
    let m = fatal(ask((s.make)(&fake.url, &tight()).as_ref(), &hello()).await);
    assert!(m.contains("larger than the 64 KiB cap") && m.contains("announced 100 KiB"), "{m}");
}

pub async fn a_body_cut_off_mid_way_is_retried(s: &Subject) {
    let ok = (s.ok)();
    let half = ok.body.len() / 2;
    let mut cut_json = (s.ok)();
    cut_json.body.truncate(half);
    for (fault, what) in [
        ((s.ok)().sending(Sending::BreakAfter(half)), "the connection broke after"),
        ((s.ok)().sending(Sending::BreakAfter(0)), "the connection broke after 0 bytes"),
        (cut_json, "ended early"),
    ] {
        let fake = Fake::scripted(vec![fault.clone(), (s.ok)()]);
        let bare = (s.make)(&fake.url, &tight());
        match ask(bare.as_ref(), &hello()).await {
            Err(ModelError::Transient { message, .. }) => assert!(message.contains(what), "{message}"),
            other => panic!("{what}: expected a transient error, got {other:?}"),
        }
        let fake = Fake::scripted(vec![fault, (s.ok)()]);
        let model = Retrying::new((s.make)(&fake.url, &tight()), fast(3));
        assert_eq!(ask(&model, &hello()).await.unwrap().text, s.ok_text, "{what}");
        assert_eq!(fake.requests().len(), 2, "{what}");
    }
}

pub async fn stalled_and_dripping_bodies_are_server_faults(s: &Subject) {
    for (sending, what) in [
        (Sending::Stall, "stalled: nothing for 0.3 s after 0 bytes"),
        (Sending::Drip(Duration::from_millis(100)), "took longer than 0.8 s to arrive"),
    ] {
        let fake = Fake::always((s.ok)().sending(sending));
        let start = Instant::now();
        match ask((s.make)(&fake.url, &tight()).as_ref(), &hello()).await {
            Err(ModelError::Transient { message, .. }) => assert!(message.contains(what), "{message}"),
            other => panic!("{what}: expected a transient error, got {other:?}"),
        }
        assert!(start.elapsed() < Duration::from_secs(3), "{what}: {:?}", start.elapsed());
        let model = Retrying::new((s.make)(&fake.url, &tight()), fast(2));
        let m = fatal(ask(&model, &hello()).await);
        assert!(m.contains("gave up after 2 attempts") && m.contains(what), "{m}");
    }
}

pub async fn run_deadline_while_the_model_thinks_is_the_models(s: &Subject) {
    // The chat call takes long; the server answers anything else at once.
    let fake = Fake::start(|r, _| {
        let reply = Reply::json(serde_json::json!({ "models": [] }));
        if r.method == "POST" { reply.delayed(Duration::from_secs(30)) } else { reply }
    });
    let model = Retrying::new((s.make)(&fake.url, &tight()), fast(3));
    let start = Instant::now();
    match ask_until(&model, start + Duration::from_millis(300)).await {
        Err(ModelError::OutOfTime(m)) => {
            assert!(m.contains("still working on its answer") && m.contains("answered a liveness check"), "{m}")
        }
        other => panic!("expected the model to run out of time, got {other:?}"),
    }
    assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
    let requests = fake.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert_eq!((requests[1].method.as_str(), requests[1].path.as_str()), ("GET", s.liveness_path));
    if let Some(key) = s.key {
        assert!(requests[1].headers.iter().any(|(_, v)| v.contains(key)), "the check is authenticated");
    }
}

pub async fn run_deadline_with_a_hung_server_is_a_harness_error(s: &Subject) {
    let fake = Fake::always((s.ok)().delayed(Duration::from_secs(30)));
    let model = Retrying::new((s.make)(&fake.url, &tight()), fast(3));
    let start = Instant::now();
    let m = fatal(ask_until(&model, start + Duration::from_millis(300)).await);
    assert!(m.contains("no answer to a liveness check") && m.contains("the server is hung"), "{m}");
    assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
}

pub async fn run_deadline_while_the_answer_drips_is_a_harness_error(s: &Subject) {
    let fake = Fake::always((s.ok)().sending(Sending::Drip(Duration::from_millis(50))));
    let limits =
        Limits { body_timeout: Duration::from_secs(30), body_stall_timeout: Duration::from_secs(5), ..tight() };
    let model = Retrying::new((s.make)(&fake.url, &limits), fast(3));
    let start = Instant::now();
    let m = fatal(ask_until(&model, start + Duration::from_millis(400)).await);
    assert!(m.contains("was still sending its answer") && m.contains("not the model's"), "{m}");
    assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
}

pub async fn run_deadline_while_retrying_is_a_harness_error(s: &Subject) {
    // A 503 first: the retry that follows is still thinking when time runs out.
    let fake = Fake::start(|r, n| match (r.method.as_str(), n) {
        ("POST", 0) => Reply::status(503, r#"{"error":{"message":"warming up"}}"#),
        ("POST", _) => Reply::json(serde_json::json!({})).delayed(Duration::from_secs(30)),
        _ => Reply::json(serde_json::json!({})),
    });
    let model = Retrying::new((s.make)(&fake.url, &tight()), fast(3));
    let start = Instant::now();
    let m = fatal(ask_until(&model, start + Duration::from_millis(400)).await);
    assert!(m.contains("ran out on attempt 2, after transient errors") && m.contains("warming up"), "{m}");
}

pub async fn keys_echoed_in_encoded_forms_never_come_back(s: &Subject) {
    let Some(key) = s.key else { return };
    let escaped: String = key.chars().map(|c| format!("\\u{:04x}", c as u32)).collect();
    let percent: String = key.bytes().map(|b| format!("%{b:02X}")).collect();
    let mut echo = (s.ok)();
    echo.body = echo.body.replacen(s.ok_text, &format!("I saw {escaped} and {percent} and {key}"), 1);
    let fake = Fake::scripted(vec![echo]);
    let reply = ask((s.make)(&fake.url, &tight()).as_ref(), &hello()).await.unwrap();
    assert_eq!(reply.text, "I saw [REDACTED] and [REDACTED] and [REDACTED]");
    // ...and in an error, escaped inside the server's own JSON text.
    let nested = escaped.replace('\\', "\\\\");
    let fake = Fake::always(Reply::status(400, &format!(r#"{{"error":{{"message":"{{\"sent\": \"{nested}\"}}"}}}}"#)));
    let m = fatal(ask((s.make)(&fake.url, &tight()).as_ref(), &hello()).await);
    assert!(!m.contains("\\u") && m.contains("[REDACTED]"), "{m}");
}

pub async fn absurd_waits_do_not_panic(s: &Subject) {
    for header in [("retry-after", "1e300"), ("retry-after", "99999999999999999999999"), ("retry-after-ms", "1e300")] {
        let fake = Fake::scripted(vec![
            Reply::status(429, r#"{"error":{"message":"slow down"}}"#).header(header.0, header.1),
            (s.ok)(),
        ]);
        let model = Retrying::new((s.make)(&fake.url, &tight()), fast(3));
        let m = fatal(ask(&model, &hello()).await);
        assert!(m.contains("would pass the 30 s retry budget") && m.contains("slow down"), "{header:?}: {m}");
        assert_eq!(fake.requests().len(), 1);
    }
}

/// A redirect to another origin (another port, or the same server named
/// `localhost`) is never followed, whatever its status: no request, and so
/// no key, reaches it, and the error names where it pointed. A redirect
/// within the origin is followed with the provider's headers intact.
pub async fn redirects_never_carry_the_key_to_another_origin(s: &Subject) {
    let elsewhere = Fake::always((s.ok)());
    for status in [301, 302, 303, 307, 308] {
        for other_port in [true, false] {
            let target = Arc::new(std::sync::Mutex::new(String::new()));
            let to = target.clone();
            let fake = Fake::start(move |req, _| {
                Reply::status(status, "").header("location", &format!("{}{}?k=1", to.lock().unwrap(), req.path))
            });
            let port = fake.url.rsplit(':').next().unwrap().to_string();
            let shown = if other_port { elsewhere.url.clone() } else { format!("http://localhost:{port}") };
            *target.lock().unwrap() = shown.clone();
            let m = fatal(ask((s.make)(&fake.url, &tight()).as_ref(), &hello()).await);
            assert!(m.contains("another origin") && m.contains(&shown) && !m.contains("k=1"), "{status}: {m}");
            assert_eq!(fake.requests().len(), 1, "{status} to {shown}: the redirect was followed");
        }
    }
    assert!(elsewhere.requests().is_empty(), "a request crossed origins: {:?}", elsewhere.requests());

    let ok = s.ok;
    for status in [307, 308] {
        let fake = Fake::start(move |req, _| {
            if req.path.starts_with("/moved") {
                ok()
            } else {
                Reply::status(status, "").header("location", &format!("/moved{}", req.path))
            }
        });
        let reply = ask((s.make)(&fake.url, &tight()).as_ref(), &hello()).await.unwrap();
        assert_eq!(reply.text, s.ok_text, "{status}");
        let requests = fake.requests();
        assert_eq!(requests.len(), 2, "{status}");
        if let Some(key) = s.key {
            for r in &requests {
                let sent = r.headers.iter().any(|(_, v)| v.contains(key));
                assert!(sent, "{status}: the key was not sent to {}", r.path);
            }
        }
    }
}

/// One test per fault for a provider: `fault_tests!(subject())`.
macro_rules! fault_tests {
    ($subject:expr) => {
        #[tokio::test]
        async fn rate_limit_with_retry_after_then_success() {
            crate::faults::rate_limit_then_success(&$subject).await
        }
        #[tokio::test]
        async fn server_error_storm_ends_fatal_after_bounded_retries() {
            crate::faults::server_error_storm_ends_fatal(&$subject).await
        }
        #[tokio::test]
        async fn malformed_body_is_fatal_at_once() {
            crate::faults::malformed_body_is_fatal_at_once(&$subject).await
        }
        #[tokio::test]
        async fn slow_server_hits_the_timeout() {
            crate::faults::slow_server_hits_the_timeout(&$subject).await
        }
        #[tokio::test]
        async fn client_errors_are_fatal_with_the_servers_words() {
            crate::faults::client_errors_are_fatal_with_the_servers_words(&$subject).await
        }
        #[tokio::test]
        async fn key_never_appears_in_errors() {
            crate::faults::key_never_appears_in_errors(&$subject).await
        }
        #[tokio::test]
        async fn unreachable_servers_are_transient() {
            crate::faults::unreachable_servers_are_transient(&$subject).await
        }
        #[tokio::test]
        async fn endless_body_is_a_harness_error_naming_the_cap() {
            crate::faults::endless_body_is_a_harness_error_naming_the_cap(&$subject).await
        }
        #[tokio::test]
        async fn announced_oversize_body_is_refused_unread() {
            crate::faults::announced_oversize_body_is_refused_unread(&$subject).await
        }
        #[tokio::test]
        async fn a_body_cut_off_mid_way_is_retried() {
            crate::faults::a_body_cut_off_mid_way_is_retried(&$subject).await
        }
        #[tokio::test]
        async fn stalled_and_dripping_bodies_are_server_faults() {
            crate::faults::stalled_and_dripping_bodies_are_server_faults(&$subject).await
        }
        #[tokio::test]
        async fn run_deadline_while_the_model_thinks_is_the_models() {
            crate::faults::run_deadline_while_the_model_thinks_is_the_models(&$subject).await
        }
        #[tokio::test]
        async fn run_deadline_with_a_hung_server_is_a_harness_error() {
            crate::faults::run_deadline_with_a_hung_server_is_a_harness_error(&$subject).await
        }
        #[tokio::test]
        async fn run_deadline_while_the_answer_drips_is_a_harness_error() {
            crate::faults::run_deadline_while_the_answer_drips_is_a_harness_error(&$subject).await
        }
        #[tokio::test]
        async fn run_deadline_while_retrying_is_a_harness_error() {
            crate::faults::run_deadline_while_retrying_is_a_harness_error(&$subject).await
        }
        #[tokio::test]
        async fn keys_echoed_in_encoded_forms_never_come_back() {
            crate::faults::keys_echoed_in_encoded_forms_never_come_back(&$subject).await
        }
        #[tokio::test]
        async fn absurd_waits_do_not_panic() {
            crate::faults::absurd_waits_do_not_panic(&$subject).await
        }
        #[tokio::test]
        async fn redirects_never_carry_the_key_to_another_origin() {
            crate::faults::redirects_never_carry_the_key_to_another_origin(&$subject).await
        }
    };
}
pub(crate) use fault_tests;

/// A capped request carries the cap at `pointer` in the request body; an
/// uncapped one has no such field.
pub async fn reply_cap_is_sent_at(s: &Subject, pointer: &str) {
    let fake = Fake::scripted(vec![(s.ok)(), (s.ok)()]);
    let model = (s.make)(&fake.url, &within(Duration::from_secs(5)));
    let messages = [Message::User { text: "q".into() }];
    let capped = ChatRequest {
        system: "s",
        messages: &messages,
        tools: &[],
        temperature: None,
        max_output_tokens: Some(77),
        deadline: None,
    };
    model.chat(capped).await.unwrap();
    model.chat(ChatRequest { max_output_tokens: None, ..capped }).await.unwrap();
    let requests = fake.requests();
    assert_eq!(requests[0].body.pointer(pointer), Some(&serde_json::json!(77)), "{}: {}", s.name, requests[0].body);
    assert_eq!(requests[1].body.pointer(pointer), None, "{}: no cap, no field: {}", s.name, requests[1].body);
}
