//! The Ollama provider against a fake `/api/chat` answering as the Ollama
//! API documentation shows.

use std::sync::Arc;
use std::time::Duration;

use vaultbench::limits::Limits;

use serde_json::{Value, json};
use vaultbench::provider::ollama::{Ollama, OllamaConfig};
use vaultbench::provider::{ChatRequest, Message, Model, Usage};

use crate::fake::{Fake, Reply};
use crate::faults::{Subject, fault_tests, within};
use crate::gemini::read_file_tool;

fn ollama(url: &str, limits: &Limits) -> Arc<dyn Model> {
    Arc::new(
        Ollama::new(OllamaConfig { model: "gemma4:e4b".into(), host: url.into(), limits: limits.clone() }).unwrap(),
    )
}

fn chat(message: Value, prompt_eval: u64, eval: u64) -> Reply {
    Reply::json(json!({
        "model": "gemma4:e4b", "created_at": "2026-11-20T10:00:00.000Z",
        "message": message, "done_reason": "stop", "done": true,
        "total_duration": 885095291, "load_duration": 3753500,
        "prompt_eval_count": prompt_eval, "prompt_eval_duration": 328493000,
        "eval_count": eval, "eval_duration": 552222000
    }))
}

fn ok() -> Reply {
    chat(json!({ "role": "assistant", "content": "Hello." }), 5, 2)
}

fn subject() -> Subject {
    Subject { name: "ollama", make: ollama, ok, ok_text: "Hello.", key: None, liveness_path: "/api/version" }
}

mod faults {
    use super::*;
    fault_tests!(subject());
}

#[tokio::test]
async fn multi_turn_tool_conversation() {
    let fake = Fake::scripted(vec![
        chat(
            json!({ "role": "assistant", "content": "",
                    "tool_calls": [{ "function": { "name": "read_file", "arguments": { "path": "eval-scratch/budget.md" } } }] }),
            122,
            33,
        ),
        chat(json!({ "role": "assistant", "content": "The budget is 88,000 marks." }), 180, 12),
    ]);
    let model = ollama(&fake.url, &within(Duration::from_secs(10)));
    assert!(!model.reports_cache());
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
    assert_eq!(first.text, "");
    assert_eq!(first.tool_calls.len(), 1);
    assert_eq!(first.tool_calls[0].name, "read_file");
    assert_eq!(first.tool_calls[0].arguments, json!({ "path": "eval-scratch/budget.md" }));
    assert_eq!(first.usage, Usage { prompt_tokens: 122, cached_tokens: None, output_tokens: 33 });

    messages.push(Message::Assistant { text: first.text.clone(), tool_calls: first.tool_calls.clone(), raw: None });
    let result = json!({ "success": true, "data": { "content": "Budget: 88,000 marks" } });
    messages.push(Message::ToolResult {
        call_id: first.tool_calls[0].id.clone(),
        name: "read_file".into(),
        content: result.clone(),
    });
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
    assert_eq!(second.usage, Usage { prompt_tokens: 180, cached_tokens: None, output_tokens: 12 });

    let requests = fake.requests();
    for r in &requests {
        assert_eq!(r.path, "/api/chat");
        assert_eq!(r.body["model"], "gemma4:e4b");
        assert_eq!(r.body["stream"], false);
        assert_eq!(r.body["options"], json!({ "temperature": 0.0 }));
        assert_eq!(
            r.body["tools"],
            json!([{ "type": "function", "function": { "name": "read_file", "description": "Read a note", "parameters": read_file_tool().parameters } }])
        );
    }
    let sent = requests[1].body["messages"].as_array().unwrap();
    assert_eq!(sent.len(), 4);
    assert_eq!(sent[0], json!({ "role": "system", "content": "You work in a vault." }));
    assert_eq!(sent[1], json!({ "role": "user", "content": "What is the budget?" }));
    assert_eq!(
        sent[2],
        json!({ "role": "assistant", "content": "", "tool_calls": [
            { "type": "function", "function": { "index": 0, "name": "read_file", "arguments": { "path": "eval-scratch/budget.md" } } }
        ] })
    );
    assert_eq!(sent[3]["role"], "tool");
    assert_eq!(sent[3]["tool_name"], "read_file");
    assert_eq!(serde_json::from_str::<Value>(sent[3]["content"].as_str().unwrap()).unwrap(), result);
}

#[tokio::test]
async fn host_without_scheme_and_a_missing_model() {
    let fake = Fake::always(Reply::status(404, r#"{"error":"model \"gemma4:e4b\" not found, try pulling it first"}"#));
    let host = fake.url.trim_start_matches("http://").to_string();
    let model =
        Ollama::new(OllamaConfig { model: "gemma4:e4b".into(), host, limits: within(Duration::from_secs(5)) }).unwrap();
    let err = crate::faults::ask(&model, &crate::faults::hello()).await.unwrap_err();
    assert_eq!(err.to_string(), "ollama: HTTP 404 Not Found: model \"gemma4:e4b\" not found, try pulling it first");
    let r = &fake.requests()[0];
    assert_eq!(r.path, "/api/chat");
    assert!(r.body.get("options").is_none() && r.body.get("tools").is_none());
}

#[tokio::test]
async fn odd_names_and_string_arguments_are_read() {
    let fake = Fake::scripted(vec![chat(
        json!({ "role": "assistant", "content": "",
                "tool_calls": [{ "function": { "name": " Read_File ", "arguments": "{\"path\": \"a.md\"}" } },
                               { "function": { "name": "read_file", "arguments": "{not json" } }] }),
        1,
        1,
    )]);
    let model = ollama(&fake.url, &within(Duration::from_secs(5)));
    let tools = [read_file_tool()];
    let messages = [Message::User { text: "q".into() }];
    let reply = model
        .chat(ChatRequest {
            system: "s",
            messages: &messages,
            tools: &tools,
            temperature: None,
            max_output_tokens: None,
            deadline: None,
        })
        .await
        .unwrap();
    assert_eq!(reply.tool_calls[0].name, "read_file");
    assert_eq!(reply.tool_calls[0].arguments, json!({ "path": "a.md" }));
    assert!(reply.tool_calls[1].malformed.is_some());
    assert_ne!(reply.tool_calls[0].id, reply.tool_calls[1].id, "generated ids are distinct");
}

#[tokio::test]
async fn the_reply_length_cap_is_sent_as_ollama_reads_it() {
    crate::faults::reply_cap_is_sent_at(&subject(), "/options/num_predict").await;
}
