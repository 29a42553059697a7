//! The transport faults every HTTP provider must survive, checked the same
//! way for each: a 429 with Retry-After then success, a 5xx storm, an
//! unreadable body, a server slower than the timeout, client errors, an
//! error body echoing the key, and servers that refuse or hang up. Also the
//! reply-length cap, which each wire format carries in its own field.

use std::sync::Arc;
use std::time::{Duration, Instant};

use vaultbench::limits::Limits;
use vaultbench::provider::retry::{RetryPolicy, Retrying};
use vaultbench::provider::{ChatRequest, Message, Model, ModelError, ModelReply};

use crate::fake::{self, Fake, Reply};

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
