//! The transcript of one run: every model call with its usage, every tool
//! call with its arguments and (truncated) result, errors, timings, and why
//! the run ended. Written next to the result file as evidence; nothing
//! downstream computes from it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::provider::{ToolCall, Usage};

/// Tool results longer than this (as JSON text) are cut in the transcript;
/// the model itself always gets the whole result.
pub const RESULT_LIMIT: usize = 4000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    pub system_prompt: String,
    pub tools: Vec<String>,
    pub events: Vec<Event>,
    pub end: End,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    UserMessage {
        text: String,
    },
    ModelCall {
        turn: u32,
        /// Milliseconds since the run started, when the call was sent.
        at_ms: u64,
        duration_ms: u64,
        usage: Usage,
        text: String,
        tool_calls: Vec<ToolCall>,
    },
    ToolCall {
        turn: u32,
        id: String,
        name: String,
        arguments: Value,
        success: bool,
        /// The answer, or its first [`RESULT_LIMIT`] characters as a string.
        result: Value,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        result_truncated: bool,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        loop_fired: bool,
        duration_us: u64,
    },
    ModelError {
        turn: u32,
        at_ms: u64,
        message: String,
    },
}

/// Why and when the run ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct End {
    /// `answered`, `turn_limit`, `timed_out` or `harness_error`.
    pub reason: String,
    pub detail: String,
    pub duration_ms: u64,
}

/// A tool answer as stored in the transcript.
pub fn stored_result(content: &Value) -> (Value, bool) {
    let text = content.to_string();
    if text.len() <= RESULT_LIMIT {
        return (content.clone(), false);
    }
    let mut cut = RESULT_LIMIT;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    (Value::String(format!("{}… ({} bytes in all)", &text[..cut], text.len())), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn long_results_are_cut_on_a_char_boundary() {
        let small = json!({"success": true, "data": "x"});
        assert_eq!(stored_result(&small), (small.clone(), false));
        let big = json!({"success": true, "data": "é".repeat(5000)});
        let (stored, cut) = stored_result(&big);
        assert!(cut);
        let s = stored.as_str().unwrap();
        assert!(s.ends_with("bytes in all)") && s.len() < RESULT_LIMIT + 40, "{}", s.len());
    }
}
