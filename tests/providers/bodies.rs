//! Random and truncated answers in each wire format, sent over real HTTP:
//! no body a server sends makes a provider panic. Each answer is a plausible
//! one of the format with any field possibly replaced by a random JSON value,
//! then sent whole, cut short (a valid HTTP message holding half the JSON),
//! broken off mid-way (the connection dropped), or replaced by noise. Every
//! call must end in a reply or an error, and a reply never carries the key.
//!
//! Seeded, and bounded to a few hundred calls so that it stays fast.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{Map, Value, json};
use vaultbench::limits::Limits;
use vaultbench::provider::gemini::{Gemini, GeminiConfig};
use vaultbench::provider::ollama::{Ollama, OllamaConfig};
use vaultbench::provider::openai::{OpenAi, OpenAiConfig};
use vaultbench::provider::{ChatRequest, Message, Model};

use crate::fake::{Fake, Reply, Sending};
use crate::gemini::read_file_tool;

const KEY: &str = "sk-prop-0123456789abcdefghijkl";
const SEED: [u8; 32] = *b"vaultbench: bodies from servers.";
const CASES: u32 = 128;

/// Any JSON value, small, with the numbers servers get wrong.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        prop_oneof![Just(1e300), Just(-1e300), Just(0.5), Just(-0.0), any::<f64>()].prop_map(|f| json!(f)),
        text(),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::vec(("[a-zA-Z_]{1,10}", inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Text as models and servers write it, the key now and then.
fn text() -> impl Strategy<Value = Value> {
    prop_oneof![
        "\\PC{0,24}".prop_map(Value::from),
        Just(Value::from(KEY)),
        Just(Value::from(format!("\\u0073\\u006b{}", &KEY[2..]))),
        Just(Value::from("")),
    ]
}

/// `right` most of the time, any JSON value otherwise.
fn mostly(right: impl Strategy<Value = Value> + 'static) -> BoxedStrategy<Value> {
    prop_oneof![4 => right, 1 => any_json()].boxed()
}

fn count() -> BoxedStrategy<Value> {
    mostly(any::<u64>().prop_map(Value::from))
}

fn arguments() -> BoxedStrategy<Value> {
    mostly(prop_oneof![
        Just(json!({ "path": "eval-scratch/a.md" })),
        any_json().prop_map(|v| Value::from(v.to_string())),
        any_json(),
    ])
}

fn gemini_answer() -> BoxedStrategy<Value> {
    let part = prop_oneof![
        text().prop_map(|t| json!({ "text": t })),
        (text(), any::<bool>()).prop_map(|(t, thought)| json!({ "text": t, "thought": thought })),
        (mostly(text()), arguments()).prop_map(|(n, a)| json!({ "functionCall": { "name": n, "args": a } })),
        any_json(),
    ];
    let candidate = (
        mostly(prop::collection::vec(part, 0..4).prop_map(Value::from)),
        mostly(prop_oneof![Just(json!("STOP")), Just(json!("MALFORMED_FUNCTION_CALL"))]),
    )
        .prop_map(|(parts, finish)| json!({ "content": { "role": "model", "parts": parts }, "finishReason": finish }));
    (mostly(prop::collection::vec(mostly(candidate), 0..2).prop_map(Value::from)), count(), count(), count())
        .prop_map(|(candidates, p, c, o)| {
            json!({ "candidates": candidates,
                    "usageMetadata": { "promptTokenCount": p, "cachedContentTokenCount": c,
                                       "candidatesTokenCount": o, "thoughtsTokenCount": o } })
        })
        .boxed()
}

fn openai_answer() -> BoxedStrategy<Value> {
    let call = (mostly(text()), mostly(text()), arguments()).prop_map(
        |(id, name, args)| json!({ "id": id, "type": "function", "function": { "name": name, "arguments": args } }),
    );
    let content =
        mostly(prop_oneof![text(), Just(Value::Null), text().prop_map(|t| json!([{ "type": "text", "text": t }])),]);
    let message = (content, mostly(prop::collection::vec(call, 0..3).prop_map(Value::from)))
        .prop_map(|(content, calls)| json!({ "role": "assistant", "content": content, "tool_calls": calls }));
    let choice = mostly(message.prop_map(|m| json!({ "index": 0, "message": m, "finish_reason": "stop" })));
    (mostly(prop::collection::vec(choice, 0..2).prop_map(Value::from)), count(), count())
        .prop_map(|(choices, p, o)| {
            json!({ "id": "x", "object": "chat.completion", "choices": choices,
                    "usage": { "prompt_tokens": p, "completion_tokens": o, "prompt_tokens_details": { "cached_tokens": p } } })
        })
        .boxed()
}

fn ollama_answer() -> BoxedStrategy<Value> {
    let call = (mostly(text()), arguments()).prop_map(|(n, a)| json!({ "function": { "name": n, "arguments": a } }));
    let message = (mostly(text()), mostly(prop::collection::vec(call, 0..3).prop_map(Value::from)))
        .prop_map(|(content, calls)| json!({ "role": "assistant", "content": content, "tool_calls": calls }));
    (mostly(message), count(), count())
        .prop_map(|(message, p, o)| {
            json!({ "model": "m", "message": message, "done": true, "prompt_eval_count": p, "eval_count": o })
        })
        .boxed()
}

/// What the server sends for an answer.
#[derive(Debug, Clone)]
enum Delivery {
    Whole,
    /// A valid HTTP message holding the first fraction of the JSON.
    Cut(f64),
    /// The whole length announced, the first fraction sent, the connection dropped.
    Broken(f64),
    Noise(String),
}

fn delivery() -> impl Strategy<Value = Delivery> {
    prop_oneof![
        3 => Just(Delivery::Whole),
        2 => (0.0..1.0f64).prop_map(Delivery::Cut),
        1 => (0.0..1.0f64).prop_map(Delivery::Broken),
        1 => "\\PC{0,64}".prop_map(Delivery::Noise),
    ]
}

fn reply(answer: &Value, delivery: &Delivery) -> Reply {
    let whole = answer.to_string();
    let at = |fraction: f64| {
        let mut n = (whole.len() as f64 * fraction) as usize;
        while !whole.is_char_boundary(n) {
            n -= 1;
        }
        n
    };
    let mut reply = Reply::json(answer.clone());
    match delivery {
        Delivery::Whole => {}
        Delivery::Cut(f) => reply.body = whole[..at(*f)].to_string(),
        Delivery::Broken(f) => reply = reply.sending(Sending::BreakAfter(at(*f))),
        Delivery::Noise(noise) => reply.body = noise.clone(),
    }
    reply
}

/// `keyed`: the provider was given [`KEY`], which must never come back.
fn check(name: &str, make: fn(&str, &Limits) -> Arc<dyn Model>, answers: BoxedStrategy<Value>, keyed: bool) {
    let current = Arc::new(Mutex::new(Reply::status(500, "unset")));
    let serving = current.clone();
    let fake = Fake::start(move |_, _| serving.lock().unwrap().clone());
    let limits = Limits { http_timeout: Duration::from_secs(5), ..Limits::default() };
    let model = make(&fake.url, &limits);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let config = Config { cases: CASES, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &SEED));
    let tools = [read_file_tool()];
    let messages = [Message::User { text: "read it".into() }];
    let (replies, errors) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    let result = runner.run(&(answers, delivery()), |(answer, delivery)| {
        *current.lock().unwrap() = reply(&answer, &delivery);
        let request = ChatRequest {
            system: "s",
            messages: &messages,
            tools: &tools,
            temperature: None,
            max_output_tokens: None,
            deadline: None,
        };
        match rt.block_on(model.chat(request)) {
            Ok(reply) => {
                replies.set(replies.get() + 1);
                let seen = format!("{} {:?} {:?}", reply.text, reply.tool_calls, reply.raw);
                prop_assert!(!keyed || !seen.contains(KEY), "{name}: the key came back: {seen}");
            }
            Err(_) => errors.set(errors.get() + 1),
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{name}: {e}");
    }
    // Both outcomes were exercised: the bodies were neither all fine nor all broken.
    assert!(replies.get() > CASES / 8 && errors.get() > CASES / 8, "{name}: {replies:?} replies, {errors:?} errors");
}

#[test]
fn random_and_truncated_gemini_answers_never_panic() {
    fn make(url: &str, limits: &Limits) -> Arc<dyn Model> {
        let config =
            GeminiConfig { model: "g".into(), api_key: KEY.into(), base_url: url.into(), limits: limits.clone() };
        Arc::new(Gemini::new(config).unwrap())
    }
    check("gemini", make, gemini_answer(), true);
}

#[test]
fn random_and_truncated_openai_answers_never_panic() {
    fn make(url: &str, limits: &Limits) -> Arc<dyn Model> {
        let config =
            OpenAiConfig { model: "o".into(), base_url: url.into(), api_key: Some(KEY.into()), limits: limits.clone() };
        Arc::new(OpenAi::new(config).unwrap())
    }
    check("openai", make, openai_answer(), true);
}

#[test]
fn random_and_truncated_ollama_answers_never_panic() {
    fn make(url: &str, limits: &Limits) -> Arc<dyn Model> {
        Arc::new(Ollama::new(OllamaConfig { model: "l".into(), host: url.into(), limits: limits.clone() }).unwrap())
    }
    check("ollama", make, ollama_answer(), false);
}
