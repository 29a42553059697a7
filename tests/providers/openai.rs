//! The OpenAI-compatible provider against a fake `/v1/chat/completions`,
//! including the quirks of small local servers (llama.cpp, vLLM, LM Studio).

use std::sync::Arc;
use std::time::Duration;

use vaultbench::limits::Limits;

use serde_json::{Value, json};
use vaultbench::provider::openai::{OpenAi, OpenAiConfig};
use vaultbench::provider::retry::Retrying;
use vaultbench::provider::{ChatRequest, Message, Model, ModelError, ModelReply, Usage};

use crate::fake::{Fake, Reply};
use crate::faults::{Subject, fast, fault_tests, within};
use crate::gemini::read_file_tool;

const KEY: &str = "sk-test-0123456789abcdefghijklmnop";

fn openai(url: &str, limits: &Limits) -> Arc<dyn Model> {
    Arc::new(
        OpenAi::new(OpenAiConfig {
            model: "qwen-test".into(),
            base_url: url.into(),
            api_key: Some(KEY.into()),
            limits: limits.clone(),
        })
        .unwrap(),
    )
}

fn completion(message: Value, finish: Value, usage: Value) -> Reply {
    Reply::json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "qwen-test",
        "choices": [{ "index": 0, "message": message, "finish_reason": finish }],
        "usage": usage
    }))
}

fn ok() -> Reply {
    completion(
        json!({ "role": "assistant", "content": "Hello." }),
        json!("stop"),
        json!({ "prompt_tokens": 5, "completion_tokens": 2 }),
    )
}

fn subject() -> Subject {
    Subject { name: "openai", make: openai, ok, ok_text: "Hello.", key: Some(KEY), liveness_path: "/" }
}

mod faults {
    use super::*;
    fault_tests!(subject());
}

/// One call with the read_file tool declared, answered by `reply`.
async fn one(reply: Reply) -> (ModelReply, Value) {
    let fake = Fake::scripted(vec![reply]);
    let model = openai(&fake.url, &within(Duration::from_secs(10)));
    let tools = [read_file_tool()];
    let messages = [Message::User { text: "read it".into() }];
    let reply = model
        .chat(ChatRequest {
            system: "sys",
            messages: &messages,
            tools: &tools,
            temperature: None,
            max_output_tokens: None,
            deadline: None,
        })
        .await
        .unwrap();
    (reply, fake.requests()[0].body.clone())
}

fn call_of(name: &str, arguments: Value) -> Value {
    json!({ "id": "call_1", "type": "function", "function": { "name": name, "arguments": arguments } })
}

#[tokio::test]
async fn multi_turn_tool_conversation() {
    let assistant = json!({
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [call_of("read_file", json!("{\"path\": \"eval-scratch/budget.md\"}"))]
    });
    let fake = Fake::scripted(vec![
        completion(
            assistant,
            json!("tool_calls"),
            json!({ "prompt_tokens": 120, "completion_tokens": 15, "total_tokens": 135, "prompt_tokens_details": { "cached_tokens": 96 } }),
        ),
        completion(
            json!({ "role": "assistant", "content": "The budget is 88,000 marks." }),
            json!("stop"),
            json!({ "prompt_tokens": 160, "completion_tokens": 9, "total_tokens": 169 }),
        ),
    ]);
    // Without the trailing /v1: it is added.
    let model = openai(&fake.url, &within(Duration::from_secs(10)));
    assert!(!model.reports_cache(), "no cache figure seen yet");
    let tools = [read_file_tool()];
    let mut messages = vec![Message::User { text: "What is the budget?".into() }];
    let first = model
        .chat(ChatRequest {
            system: "You work in a vault.",
            messages: &messages,
            tools: &tools,
            temperature: Some(0.0),
            max_output_tokens: None,
            deadline: None,
        })
        .await
        .unwrap();
    assert_eq!(first.text, "Let me look.");
    assert_eq!(first.tool_calls.len(), 1);
    assert_eq!(first.tool_calls[0].id, "call_1");
    assert_eq!(first.tool_calls[0].arguments, json!({ "path": "eval-scratch/budget.md" }));
    assert_eq!(first.usage, Usage { prompt_tokens: 120, cached_tokens: Some(96), output_tokens: 15 });
    assert!(model.reports_cache());

    messages.push(Message::Assistant { text: first.text.clone(), tool_calls: first.tool_calls.clone(), raw: None });
    let result = json!({ "success": true, "data": { "content": "Budget: 88,000 marks" } });
    messages.push(Message::ToolResult { call_id: "call_1".into(), name: "read_file".into(), content: result.clone() });
    let second = model
        .chat(ChatRequest {
            system: "You work in a vault.",
            messages: &messages,
            tools: &tools,
            temperature: Some(0.0),
            max_output_tokens: None,
            deadline: None,
        })
        .await
        .unwrap();
    assert_eq!(second.text, "The budget is 88,000 marks.");
    assert_eq!(second.usage, Usage { prompt_tokens: 160, cached_tokens: None, output_tokens: 9 });

    let requests = fake.requests();
    for r in &requests {
        assert_eq!(r.path, "/v1/chat/completions");
        assert_eq!(r.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
        assert_eq!(r.body["model"], "qwen-test");
        assert_eq!(r.body["stream"], false);
        assert_eq!(r.body["temperature"], 0.0);
        assert_eq!(r.body["tool_choice"], "auto");
        assert_eq!(r.body["messages"][0], json!({ "role": "system", "content": "You work in a vault." }));
        assert_eq!(
            r.body["tools"],
            json!([{ "type": "function", "function": { "name": "read_file", "description": "Read a note", "parameters": read_file_tool().parameters } }])
        );
    }
    let sent = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(sent.len(), 4);
    assert_eq!(sent[1], json!({ "role": "user", "content": "What is the budget?" }));
    assert_eq!(
        sent[2],
        json!({ "role": "assistant", "content": "Let me look.", "tool_calls": [
            { "id": "call_1", "type": "function", "function": { "name": "read_file", "arguments": "{\"path\":\"eval-scratch/budget.md\"}" } }
        ] })
    );
    assert_eq!(sent[3]["role"], "tool");
    assert_eq!(sent[3]["tool_call_id"], "call_1");
    assert_eq!(serde_json::from_str::<Value>(sent[3]["content"].as_str().unwrap()).unwrap(), result);
}

#[tokio::test]
async fn base_url_with_v1_and_no_key() {
    let fake = Fake::scripted(vec![ok()]);
    let model = OpenAi::new(OpenAiConfig {
        model: "m".into(),
        base_url: format!("{}/v1/", fake.url),
        api_key: None,
        limits: within(Duration::from_secs(5)),
    })
    .unwrap();
    crate::faults::ask(&model, &crate::faults::hello()).await.unwrap();
    let r = &fake.requests()[0];
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.header("authorization"), None);
    // No tools declared: neither tools nor tool_choice is sent.
    assert!(r.body.get("tools").is_none() && r.body.get("tool_choice").is_none());
    assert!(r.body.get("temperature").is_none());
}

#[tokio::test]
async fn quirk_null_content_with_tool_calls() {
    let (reply, _) = one(completion(
        json!({ "role": "assistant", "content": null, "tool_calls": [call_of("read_file", json!("{\"path\":\"a.md\"}"))] }),
        json!("tool_calls"),
        json!(null),
    ))
    .await;
    assert_eq!(reply.text, "");
    assert_eq!(reply.tool_calls[0].arguments, json!({ "path": "a.md" }));
    assert_eq!(reply.usage, Usage { prompt_tokens: 0, cached_tokens: None, output_tokens: 0 });
}

#[tokio::test]
async fn quirk_empty_or_missing_content() {
    let (reply, _) = one(completion(json!({ "role": "assistant", "content": "" }), json!("stop"), json!({}))).await;
    assert_eq!((reply.text.as_str(), reply.tool_calls.len()), ("", 0));
    let (reply, _) = one(completion(json!({ "role": "assistant" }), json!("stop"), json!({}))).await;
    assert_eq!((reply.text.as_str(), reply.tool_calls.len()), ("", 0));
    // Content as a list of parts.
    let (reply, _) = one(completion(
        json!({ "role": "assistant", "content": [{ "type": "text", "text": "Two " }, { "type": "text", "text": "parts." }] }),
        json!("stop"),
        json!({}),
    ))
    .await;
    assert_eq!(reply.text, "Two parts.");
}

#[tokio::test]
async fn quirk_tool_calls_alongside_a_legacy_function_call() {
    let (reply, _) = one(completion(
        json!({ "role": "assistant", "content": "",
                "tool_calls": [call_of("read_file", json!("{\"path\":\"a.md\"}"))],
                "function_call": { "name": "read_file", "arguments": "{\"path\":\"a.md\"}" } }),
        json!("tool_calls"),
        json!({}),
    ))
    .await;
    assert_eq!(reply.tool_calls.len(), 1, "the same call is not made twice");
    assert_eq!(reply.tool_calls[0].id, "call_1");
}

#[tokio::test]
async fn quirk_legacy_function_call_alone() {
    let (reply, _) = one(completion(
        json!({ "role": "assistant", "content": null, "function_call": { "name": "read_file", "arguments": "{\"path\":\"b.md\"}" } }),
        json!("function_call"),
        json!({}),
    ))
    .await;
    assert_eq!(reply.tool_calls.len(), 1);
    let c = &reply.tool_calls[0];
    assert_eq!(
        (c.name.as_str(), &c.arguments, c.malformed.as_deref()),
        ("read_file", &json!({ "path": "b.md" }), None)
    );
    assert!(!c.id.is_empty(), "an id is made up for the call");
}

#[tokio::test]
async fn quirk_odd_tool_names() {
    for odd in [" read_file\n", "Read_File", "functions.read_file", "functions. READ_FILE "] {
        let (reply, _) = one(completion(
            json!({ "role": "assistant", "content": "", "tool_calls": [call_of(odd, json!("{}"))] }),
            json!("tool_calls"),
            json!({}),
        ))
        .await;
        assert_eq!(reply.tool_calls[0].name, "read_file", "{odd:?}");
    }
}

#[tokio::test]
async fn quirk_arguments_that_are_not_valid_json() {
    let (reply, _) = one(completion(
        json!({ "role": "assistant", "content": "", "tool_calls": [call_of("read_file", json!("{\"path\": \"a.md\""))] }),
        json!("tool_calls"),
        json!({}),
    ))
    .await;
    let c = &reply.tool_calls[0];
    assert_eq!(c.arguments, json!({}));
    let why = c.malformed.as_deref().unwrap();
    assert!(why.contains("not valid JSON") && why.contains("{\"path\": \"a.md\""), "{why}");

    // Sent back, the malformed call carries `{}` so the server's template can parse it.
    let fake = Fake::scripted(vec![ok()]);
    let model = openai(&fake.url, &within(Duration::from_secs(5)));
    let messages = vec![
        Message::User { text: "q".into() },
        Message::Assistant { text: String::new(), tool_calls: reply.tool_calls.clone(), raw: None },
        Message::ToolResult {
            call_id: c.id.clone(),
            name: c.name.clone(),
            content: json!({ "success": false, "error": why }),
        },
    ];
    model
        .chat(ChatRequest {
            system: "s",
            messages: &messages,
            tools: &[],
            temperature: None,
            max_output_tokens: None,
            deadline: None,
        })
        .await
        .unwrap();
    assert_eq!(fake.requests()[0].body["messages"][2]["tool_calls"][0]["function"]["arguments"], "{}");
}

#[tokio::test]
async fn quirk_arguments_as_an_object_or_double_encoded() {
    let (reply, _) = one(completion(
        json!({ "role": "assistant", "content": "", "tool_calls": [call_of("read_file", json!({ "path": "a.md" }))] }),
        json!("tool_calls"),
        json!({}),
    ))
    .await;
    assert_eq!(reply.tool_calls[0].arguments, json!({ "path": "a.md" }));
    let (reply, _) = one(completion(
        json!({ "role": "assistant", "content": "", "tool_calls": [call_of("read_file", json!("\"{\\\"path\\\": \\\"a.md\\\"}\""))] }),
        json!("tool_calls"),
        json!({}),
    ))
    .await;
    assert_eq!(reply.tool_calls[0].arguments, json!({ "path": "a.md" }));
}

#[tokio::test]
async fn quirk_context_overflow_is_a_clear_error_of_its_own_and_not_retried() {
    // llama.cpp answers it with a 500, which would otherwise be retried.
    let llama = r#"{"error":{"code":500,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}"#;
    let vllm = r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens in the messages.","type":"BadRequestError","param":null,"code":400}"#;
    for (status, body) in [(500u16, llama), (400, vllm)] {
        let fake = Fake::always(Reply::status(status, body));
        let model = Retrying::new(openai(&fake.url, &within(Duration::from_secs(5))), fast(4));
        match crate::faults::ask(&model, &crate::faults::hello()).await {
            Err(ModelError::ContextOverflow(m)) => {
                assert!(m.starts_with("openai: the prompt exceeded the model's context window"), "{m}");
                assert!(m.contains(&format!("HTTP {status}")), "{m}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(fake.requests().len(), 1, "HTTP {status} overflow is not retried");
    }
}

#[tokio::test]
async fn quirk_unusual_finish_reasons_are_read_normally() {
    for finish in [json!("length"), json!("eos"), json!(null), json!("content_filter")] {
        let (reply, _) =
            one(completion(json!({ "role": "assistant", "content": "partial answer" }), finish.clone(), json!({})))
                .await;
        assert_eq!(reply.text, "partial answer", "{finish}");
    }
}

#[tokio::test]
async fn quirk_system_prompt_always_sent_as_a_system_message() {
    let (_, body) = one(ok()).await;
    assert_eq!(body["messages"][0], json!({ "role": "system", "content": "sys" }));
    assert_eq!(body["messages"][1], json!({ "role": "user", "content": "read it" }));
}

#[tokio::test]
async fn quirk_an_error_object_with_status_200() {
    let fake = Fake::always(Reply::json(json!({ "error": { "message": "model is loading", "type": "unavailable" } })));
    let model = openai(&fake.url, &within(Duration::from_secs(5)));
    let err = crate::faults::ask(model.as_ref(), &crate::faults::hello()).await.unwrap_err();
    assert_eq!(err, ModelError::Fatal("openai: an error answer: model is loading (unavailable)".into()));
}

#[test]
fn the_config_debug_hides_the_key() {
    let config = OpenAiConfig {
        model: "m".into(),
        base_url: "http://x/v1".into(),
        api_key: Some(KEY.into()),
        limits: Limits::default(),
    };
    assert!(!format!("{config:?}").contains(KEY));
}

#[tokio::test]
async fn the_reply_length_cap_is_sent_as_openai_reads_it() {
    crate::faults::reply_cap_is_sent_at(&subject(), "/max_tokens").await;
}
