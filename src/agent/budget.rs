//! The conversation's size against the caps of [`Limits`], measured as the
//! bytes of each part as compact JSON (what every provider sends, give or
//! take its own wrapping): `max_conversation_bytes` for everything sent in
//! one model call, `max_tool_result_bytes` for one tool's answer.
//!
//! A tool answer that is too large, or does not fit in what is left, is fed
//! back as a tool error saying so, so the model can ask for less or answer.
//! The run ends (its own output outgrew the conversation, as with a context
//! window) when a model reply takes the conversation past the cap, or when
//! even those short errors no longer fit: so what is sent stays within the
//! cap plus one error, whatever the model asks for.

use serde_json::Value;

use crate::jsnum::json_len;
use crate::limits::Limits;
use crate::provider::{Message, ToolSpec};
use crate::vault::ToolAnswer;

pub struct Conversation {
    used: usize,
    cap: usize,
    max_result: usize,
}

impl Conversation {
    pub fn new(limits: &Limits) -> Conversation {
        Conversation { used: 0, cap: limits.max_conversation_bytes, max_result: limits.max_tool_result_bytes }
    }

    /// Bytes counted so far.
    #[cfg(test)]
    pub fn used(&self) -> usize {
        self.used
    }

    /// The system prompt, the tool declarations and the first message. `Err`
    /// when they alone are over the cap: the task does not fit (a harness
    /// error, not the model's).
    pub fn start(&mut self, system: &str, specs: &[ToolSpec], first: &str) -> Result<(), String> {
        self.used = json_len(system) + json_len(specs) + json_len(first);
        if self.used > self.cap {
            return Err(format!(
                "the task's first request (system prompt, tools, message and attached notes) is {} bytes, \
                 over the conversation cap of {} bytes",
                self.used, self.cap
            ));
        }
        Ok(())
    }

    /// A model reply. `Err` (the run ends) when it takes the conversation past the cap.
    pub fn add_reply(&mut self, message: &Message) -> Result<(), String> {
        let len = json_len(message);
        self.used += len;
        if self.used > self.cap {
            return Err(format!(
                "the model's reply of {len} bytes took the conversation to {} bytes, past its cap of {} bytes",
                self.used, self.cap
            ));
        }
        Ok(())
    }

    /// What is fed back for a tool's answer `content`: the answer itself, or a
    /// tool error when it is over the cap on one result or over what is left.
    pub fn admit_result(&mut self, tool: &str, content: Value) -> Value {
        let len = json_len(&content);
        let admitted = if len > self.max_result {
            ToolAnswer::error(format!(
                "the answer of `{tool}` is {len} bytes, over the cap of {} bytes on one tool result: ask for less \
                 at a time (a smaller file, a narrower search, a lower limit)",
                self.max_result
            ))
            .content
        } else if self.used + len > self.cap {
            ToolAnswer::error(format!(
                "the answer of `{tool}` ({len} bytes) does not fit: the conversation is at {} of its {} bytes; \
                 answer with what you have",
                self.used, self.cap
            ))
            .content
        } else {
            content
        };
        self.used += json_len(&admitted);
        admitted
    }

    /// `Err` once the conversation is past its cap (by the last error admitted).
    pub fn check_room(&self) -> Result<(), String> {
        if self.used > self.cap {
            return Err(format!(
                "the conversation is full: {} bytes of tool answers and errors, past its cap of {} bytes",
                self.used, self.cap
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn limits(result: usize, conversation: usize) -> Limits {
        Limits { max_tool_result_bytes: result, max_conversation_bytes: conversation, ..Limits::default() }
    }

    #[test]
    fn results_over_the_cap_or_the_room_left_become_tool_errors() {
        let mut c = Conversation::new(&limits(100, 600));
        c.start("sys", &[], "hi").unwrap();
        assert_eq!(c.used(), 11, "\"sys\", [] and \"hi\"");
        let small = json!({"success": true, "data": "x".repeat(50)});
        assert_eq!(c.admit_result("read_file", small.clone()), small);
        assert_eq!(c.used(), 11 + json_len(&small));
        let big = json!({"success": true, "data": "x".repeat(200)});
        let e = c.admit_result("read_file", big);
        assert_eq!(e["success"], false);
        assert!(e["error"].as_str().unwrap().contains("over the cap of 100 bytes on one tool result"), "{e}");
        let mut fills = 0;
        loop {
            let a = c.admit_result("read_file", small.clone());
            if a["success"] == false {
                assert!(a["error"].as_str().unwrap().contains("does not fit: the conversation is at"), "{a}");
                break;
            }
            fills += 1;
            assert!(c.check_room().is_ok());
        }
        assert!(fills >= 1);
        let e = c.check_room().unwrap_err();
        assert!(e.starts_with("the conversation is full") && e.contains("cap of 600 bytes"), "{e}");
    }

    #[test]
    fn a_reply_past_the_cap_is_refused_and_so_is_a_task_that_does_not_fit() {
        let mut c = Conversation::new(&limits(100, 200));
        c.start("", &[], "").unwrap();
        let reply = Message::Assistant { text: "y".repeat(300), tool_calls: vec![], raw: None };
        let e = c.add_reply(&reply).unwrap_err();
        assert!(e.starts_with("the model's reply of 3") && e.contains("past its cap of 200 bytes"), "{e}");
        let e = Conversation::new(&limits(100, 200)).start(&"s".repeat(500), &[], "").unwrap_err();
        assert!(e.contains("over the conversation cap of 200 bytes"), "{e}");
    }
}
