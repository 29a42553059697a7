//! The transcript of one run: every model call with its usage, every tool
//! call with its (truncated) arguments and result, errors, timings, and why
//! the run ended. Written next to the result file as evidence; nothing
//! downstream computes from it.
//!
//! Large arguments and results are cut to [`RESULT_LIMIT`] characters, so a
//! transcript grows with the number of calls, not with what a model writes:
//! a 200 MB `write_file` once made a 400 MB transcript.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::provider::{ToolCall, Usage};

/// Tool results and arguments longer than this (as JSON text) are cut in
/// the transcript; the model itself gets them whole (within the caps of
/// `Limits`).
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

/// A tool answer (or a call's arguments) as stored in the transcript, and
/// whether it was cut.
pub fn stored_result(content: &Value) -> (Value, bool) {
    let len = crate::jsnum::json_len(content);
    if len <= RESULT_LIMIT {
        return (content.clone(), false);
    }
    // Only the kept part is ever written out: a 200 MB write's arguments
    // must not be copied to keep 4 KB of them.
    let mut head = Vec::with_capacity(RESULT_LIMIT + 4);
    let _ = serde_json::to_writer(Bounded(&mut head), content);
    let text = String::from_utf8_lossy(&head);
    let mut cut = RESULT_LIMIT.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    (Value::String(format!("{}… ({len} bytes in all)", &text[..cut])), true)
}

/// Keeps the first `RESULT_LIMIT + 4` bytes written (a whole UTF-8
/// character past the limit), then refuses the rest, which stops the writer.
struct Bounded<'a>(&'a mut Vec<u8>);

impl std::io::Write for Bounded<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = (RESULT_LIMIT + 4).saturating_sub(self.0.len());
        if room == 0 {
            return Err(std::io::Error::other("enough"));
        }
        let n = room.min(buf.len());
        self.0.extend_from_slice(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A tool call as stored in the transcript: its arguments cut like results.
pub fn stored_call(call: &ToolCall) -> ToolCall {
    ToolCall {
        id: call.id.clone(),
        name: call.name.clone(),
        arguments: stored_result(&call.arguments).0,
        malformed: call.malformed.clone(),
    }
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
