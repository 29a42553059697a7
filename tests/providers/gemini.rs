//! The Gemini provider against a fake `generateContent` endpoint that
//! answers with the documented JSON.

use std::sync::Arc;
use std::time::Duration;

use vaultbench::limits::Limits;

use serde_json::json;
use vaultbench::provider::gemini::{Gemini, GeminiConfig};
use vaultbench::provider::{ChatRequest, Message, Model, ToolCall, ToolSpec, Usage};

use crate::fake::{Fake, Reply};
use crate::faults::{Subject, fault_tests, within};

const KEY: &str = "AIzaSyTEST-0123456789abcdefghijklmn";

fn gemini(url: &str, limits: &Limits) -> Arc<dyn Model> {
    Arc::new(
        Gemini::new(GeminiConfig {
            model: "gemini-test".into(),
            api_key: KEY.into(),
            base_url: url.into(),
            limits: limits.clone(),
        })
        .unwrap(),
    )
}

fn ok() -> Reply {
    Reply::json(json!({
        "candidates": [{ "content": { "role": "model", "parts": [{ "text": "Hello." }] }, "finishReason": "STOP" }],
        "usageMetadata": { "promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7 }
    }))
}

fn subject() -> Subject {
    Subject {
        name: "gemini",
        make: gemini,
        ok,
        ok_text: "Hello.",
        key: Some(KEY),
        liveness_path: "/v1beta/models/gemini-test",
    }
}

mod faults {
    use super::*;
    fault_tests!(subject());
}

pub fn read_file_tool() -> ToolSpec {
    ToolSpec {
        name: "read_file".into(),
        description: "Read a note".into(),
        parameters: json!({
            "type": "object",
            "properties": { "path": { "type": "string", "description": "vault path" } },
            "required": ["path"],
            "additionalProperties": false
        }),
    }
}

#[tokio::test]
async fn multi_turn_tool_conversation_round_trips_thought_signatures() {
    let model_turn = json!({
        "role": "model",
        "parts": [
            { "text": "I will read the budget note." },
            { "functionCall": { "name": "read_file", "args": { "path": "eval-scratch/budget.md" } },
              "thoughtSignature": "c2lnbmF0dXJlLW9uZQ==" }
        ]
    });
    let fake = Fake::scripted(vec![
        Reply::json(json!({
            "candidates": [{ "content": model_turn, "finishReason": "STOP", "index": 0 }],
            "usageMetadata": { "promptTokenCount": 1200, "cachedContentTokenCount": 1024,
                               "candidatesTokenCount": 30, "thoughtsTokenCount": 12, "totalTokenCount": 1242 },
            "modelVersion": "gemini-test"
        })),
        Reply::json(json!({
            "candidates": [{ "content": { "role": "model", "parts": [
                { "text": "The approved budget is 88,000 marks.", "thoughtSignature": "c2lnbmF0dXJlLXR3bw==" }
            ] }, "finishReason": "STOP" }],
            "usageMetadata": { "promptTokenCount": 1300, "candidatesTokenCount": 11, "totalTokenCount": 1311 }
        })),
    ]);
    let model = gemini(&fake.url, &within(Duration::from_secs(10)));
    let tools = [read_file_tool()];
    let mut messages = vec![Message::User { text: "What is the approved budget?".into() }];

    let first = model
        .chat(ChatRequest {
            system: "You work in a vault.",
            messages: &messages,
            tools: &tools,
            temperature: Some(0.2),
            max_output_tokens: None,
            deadline: None,
        })
        .await
        .unwrap();
    assert_eq!(first.text, "I will read the budget note.");
    assert_eq!(first.tool_calls.len(), 1);
    let call = &first.tool_calls[0];
    assert_eq!((call.name.as_str(), &call.arguments), ("read_file", &json!({ "path": "eval-scratch/budget.md" })));
    assert_eq!(call.malformed, None);
    assert_eq!(first.raw.as_ref(), Some(&model_turn), "the model turn is kept verbatim");
    assert_eq!(first.usage, Usage { prompt_tokens: 1200, cached_tokens: Some(1024), output_tokens: 42 });

    messages.push(Message::Assistant {
        text: first.text.clone(),
        tool_calls: first.tool_calls.clone(),
        raw: first.raw.clone(),
    });
    let result =
        json!({ "success": true, "data": { "path": "eval-scratch/budget.md", "content": "Budget: 88,000 marks" } });
    messages.push(Message::ToolResult { call_id: call.id.clone(), name: "read_file".into(), content: result.clone() });

    let second = model
        .chat(ChatRequest {
            system: "You work in a vault.",
            messages: &messages,
            tools: &tools,
            temperature: Some(0.2),
            max_output_tokens: None,
            deadline: None,
        })
        .await
        .unwrap();
    assert_eq!(second.text, "The approved budget is 88,000 marks.");
    assert!(second.tool_calls.is_empty());
    assert_eq!(second.usage, Usage { prompt_tokens: 1300, cached_tokens: Some(0), output_tokens: 11 });

    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    for r in &requests {
        assert_eq!(r.method, "POST");
        assert_eq!(r.path, "/v1beta/models/gemini-test:generateContent");
        assert_eq!(r.query, None, "the key is never in the URL");
        assert_eq!(r.header("x-goog-api-key"), Some(KEY), "the key travels in the header");
        assert!(!r.raw_body.contains(KEY));
        assert_eq!(r.body["systemInstruction"], json!({ "parts": [{ "text": "You work in a vault." }] }));
        assert_eq!(r.body["generationConfig"], json!({ "temperature": 0.2 }));
        assert_eq!(
            r.body["tools"],
            json!([{ "functionDeclarations": [{
                "name": "read_file",
                "description": "Read a note",
                "parameters": { "type": "object", "properties": { "path": { "type": "string", "description": "vault path" } },
                                "required": ["path"] }
            }] }])
        );
    }
    assert_eq!(
        requests[0].body["contents"],
        json!([{ "role": "user", "parts": [{ "text": "What is the approved budget?" }] }])
    );
    let contents = requests[1].body["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 3);
    assert_eq!(contents[1], model_turn, "the thought signature goes back exactly as received");
    assert_eq!(
        contents[2],
        json!({ "role": "user", "parts": [{ "functionResponse": { "name": "read_file", "response": result } }] })
    );
}

#[tokio::test]
async fn parallel_calls_keep_their_ids_and_answers_share_one_content() {
    let turn = json!({ "role": "model", "parts": [
        { "functionCall": { "id": "fc-1", "name": "read_file", "args": { "path": "a.md" } }, "thoughtSignature": "c2ln" },
        { "functionCall": { "id": "fc-2", "name": "read_file", "args": { "path": "b.md" } } }
    ] });
    let fake =
        Fake::scripted(vec![Reply::json(json!({ "candidates": [{ "content": turn, "finishReason": "STOP" }] })), ok()]);
    let model = gemini(&fake.url, &within(Duration::from_secs(10)));
    let tools = [read_file_tool()];
    let mut messages = vec![Message::User { text: "Compare a and b.".into() }];
    let first = model
        .chat(ChatRequest {
            system: "",
            messages: &messages,
            tools: &tools,
            temperature: None,
            max_output_tokens: None,
            deadline: None,
        })
        .await
        .unwrap();
    let ids: Vec<&str> = first.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["fc-1", "fc-2"]);
    messages.push(Message::Assistant {
        text: first.text.clone(),
        tool_calls: first.tool_calls.clone(),
        raw: first.raw.clone(),
    });
    for c in &first.tool_calls {
        messages.push(Message::ToolResult {
            call_id: c.id.clone(),
            name: c.name.clone(),
            content: json!({ "success": true, "data": c.id }),
        });
    }
    model
        .chat(ChatRequest {
            system: "",
            messages: &messages,
            tools: &tools,
            temperature: None,
            max_output_tokens: None,
            deadline: None,
        })
        .await
        .unwrap();
    let body = &fake.requests()[1].body;
    assert!(body.get("systemInstruction").is_none(), "no empty system instruction");
    assert!(body.get("generationConfig").is_none(), "no temperature unless asked");
    assert_eq!(
        body["contents"][2],
        json!({ "role": "user", "parts": [
            { "functionResponse": { "name": "read_file", "response": { "success": true, "data": "fc-1" }, "id": "fc-1" } },
            { "functionResponse": { "name": "read_file", "response": { "success": true, "data": "fc-2" }, "id": "fc-2" } }
        ] })
    );
}

#[tokio::test]
async fn history_without_raw_content_is_rebuilt_from_the_calls() {
    // A conversation that did not come from Gemini (e.g. a replayed
    // transcript) still reads as function calls and responses.
    let fake = Fake::scripted(vec![ok()]);
    let model = gemini(&fake.url, &within(Duration::from_secs(10)));
    let messages = vec![
        Message::User { text: "q".into() },
        Message::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: "x1".into(),
                name: "read_file".into(),
                arguments: json!({ "path": "a.md" }),
                malformed: None,
            }],
            raw: None,
        },
        Message::ToolResult { call_id: "x1".into(), name: "read_file".into(), content: json!("plain text result") },
        Message::User { text: "and now?".into() },
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
    let body = &fake.requests()[0].body;
    assert!(body.get("tools").is_none());
    assert_eq!(
        body["contents"],
        json!([
            { "role": "user", "parts": [{ "text": "q" }] },
            { "role": "model", "parts": [{ "functionCall": { "name": "read_file", "args": { "path": "a.md" } } }] },
            { "role": "user", "parts": [
                { "functionResponse": { "name": "read_file", "response": { "result": "plain text result" } } },
                { "text": "and now?" }
            ] }
        ])
    );
}

#[tokio::test]
async fn an_api_error_is_reported_in_googles_words() {
    let fake = Fake::always(Reply::status(
        400,
        r#"{"error":{"code":400,"message":"Function call is missing a thought_signature in functionCall parts.","status":"INVALID_ARGUMENT"}}"#,
    ));
    let model = gemini(&fake.url, &within(Duration::from_secs(10)));
    let err = crate::faults::ask(model.as_ref(), &crate::faults::hello()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "gemini: HTTP 400 Bad Request: Function call is missing a thought_signature in functionCall parts. (INVALID_ARGUMENT)"
    );
}

#[tokio::test]
async fn a_429_with_retry_info_in_the_body_carries_the_delay() {
    let fake = Fake::always(Reply::status(
        429,
        r#"{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"2s"}]}}"#,
    ));
    let model = gemini(&fake.url, &within(Duration::from_secs(10)));
    match crate::faults::ask(model.as_ref(), &crate::faults::hello()).await {
        Err(vaultbench::provider::ModelError::RateLimited { retry_after, message }) => {
            assert_eq!(retry_after, Some(Duration::from_secs(2)));
            assert!(message.contains("Quota exceeded"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_absurd_retry_delay_gives_up_instead_of_panicking() {
    let fake = Fake::always(Reply::status(
        429,
        r#"{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1e300s"}]}}"#,
    ));
    let model = vaultbench::provider::retry::Retrying::new(
        gemini(&fake.url, &within(Duration::from_secs(10))),
        crate::faults::fast(3),
    );
    match crate::faults::ask(&model, &crate::faults::hello()).await {
        Err(vaultbench::provider::ModelError::Fatal(m)) => {
            assert!(m.contains("in 86400.0 s, would pass the 30 s retry budget"), "{m}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(fake.requests().len(), 1);
}

#[test]
fn a_bad_base_url_is_a_clear_error_and_debug_hides_the_key() {
    let config =
        GeminiConfig { model: "m".into(), api_key: KEY.into(), base_url: "http://x".into(), limits: Limits::default() };
    assert!(!format!("{config:?}").contains(KEY));
    let err = match Gemini::new(GeminiConfig { base_url: "ftp://nowhere".into(), ..config }) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("accepted a non-http base URL"),
    };
    assert!(err.contains("GEMINI_BASE_URL") && err.contains("ftp://nowhere"), "{err}");
}

#[tokio::test]
async fn the_reply_length_cap_is_sent_as_gemini_reads_it() {
    crate::faults::reply_cap_is_sent_at(&subject(), "/generationConfig/maxOutputTokens").await;
}
