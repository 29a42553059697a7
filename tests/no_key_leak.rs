//! A whole sweep against a loopback Gemini endpoint that echoes the request
//! headers (and so the API key) back in its errors and answers: no file
//! under the results folder may contain the key afterwards.

mod common;
#[path = "providers/fake.rs"]
mod fake;

use std::path::Path;

use serde_json::json;

use common::*;
use fake::{Fake, Recorded, Reply};

const KEY: &str = "AIzaTestKey-do-not-leak-0123456789abcdef";

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn candidate(parts: serde_json::Value) -> Reply {
    Reply::json(json!({
        "candidates": [{ "content": { "role": "model", "parts": parts }, "finishReason": "STOP" }],
        "usageMetadata": { "promptTokenCount": 900, "cachedContentTokenCount": 300, "candidatesTokenCount": 20 }
    }))
}

#[test]
fn no_api_key_in_any_result_or_transcript_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("evals");
    write(&root, "fixtures/notes/budget.md", "The approved budget is 88,000 marks.\n");
    write(
        &root,
        "tasks/budget.json",
        r#"{
  "id": "budget", "description": "d", "userMessage": "What is the approved budget in eval-scratch/budget.md?",
  "difficulty": "T1", "category": "retrieval", "fixture": "notes",
  "expectedTools": ["read_file"],
  "outputMatchers": [{ "type": "contains", "value": "88,000" }],
  "maxTurns": 5, "timeoutMs": 20000
}"#,
    );
    // Per run: a tool call; a 503 whose body echoes every header (the key
    // among them), retried; then an answer that quotes the key back.
    let fake = Fake::start(|req: &Recorded, i: usize| {
        let key = req.header("x-goog-api-key").unwrap_or("").to_string();
        match i % 3 {
            0 => candidate(
                json!([{ "functionCall": { "name": "read_file", "args": { "path": "eval-scratch/budget.md" } } }]),
            ),
            1 => Reply::status(
                503,
                &format!("{{\"error\": {{\"code\": 503, \"message\": \"overloaded; you sent {key}\"}}}}"),
            ),
            _ => candidate(json!([{ "text": format!("The budget is 88,000 marks. (server saw key {key})") }])),
        }
    });
    let out = command()
        .env("GEMINI_API_KEY", KEY)
        .env("GEMINI_BASE_URL", &fake.url)
        .env("VAULTBENCH_RETRY_BASE_MS", "1")
        .args(["run", "--provider", "gemini", "--model", "gemini-2.5-flash", "--repeat", "2", "--jobs", "1"])
        .args(["--suite", root.to_str().unwrap(), "--results", root.join("results").to_str().unwrap()])
        .arg("--allow-unpriced")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "{text}");
    assert!(!text.contains(KEY), "the key reached the console: {text}");
    // The key did reach the server, in the header only.
    let requests = fake.requests();
    assert!(requests.len() >= 6, "{}", requests.len());
    assert!(requests.iter().all(|r| r.header("x-goog-api-key") == Some(KEY)));
    assert!(requests.iter().all(|r| !r.raw_body.contains(KEY) && !r.query.as_deref().unwrap_or("").contains(KEY)));

    let mut files = 0;
    for entry in walkdir::WalkDir::new(root.join("results")) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            files += 1;
            let bytes = std::fs::read(entry.path()).unwrap();
            assert!(!String::from_utf8_lossy(&bytes).contains(KEY), "{} contains the API key", entry.path().display());
        }
    }
    // The result, its transcripts and the saved cells were all checked.
    assert!(files >= 5, "{files} files");
    let result = std::fs::read_dir(root.join("results"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .unwrap();
    let text = std::fs::read_to_string(result).unwrap();
    assert!(text.contains("88,000"), "the answers were recorded: {text}");
}
