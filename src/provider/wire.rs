//! Small pieces of the tool-calling wire formats that more than one provider
//! needs: reading a call's arguments however a server encoded them, matching
//! a tool name a model mangled back to a declared tool, and call ids for wire
//! formats that have none.
//!
//! It knows no provider's message layout; each provider module owns its own.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value};

use super::ToolSpec;

/// A call's arguments as an object, or `{}` plus what was wrong with them.
///
/// Servers send an object (Ollama, Gemini), a JSON string (OpenAI), or — from
/// small local servers — an empty string, `null`, or a JSON string holding a
/// JSON string. Anything that does not come down to an object is malformed,
/// so that the agent can answer with a tool error the model can act on.
pub(crate) fn parse_arguments(raw: Option<&Value>) -> (Value, Option<String>) {
    let empty = || Value::Object(Map::new());
    match raw {
        None | Some(Value::Null) => (empty(), None),
        Some(v @ Value::Object(_)) => (v.clone(), None),
        Some(Value::String(s)) => {
            let s = s.trim();
            if s.is_empty() {
                return (empty(), None);
            }
            match serde_json::from_str::<Value>(s) {
                Ok(v @ Value::Object(_)) => (v, None),
                // Double-encoded: a JSON string whose text is the object.
                Ok(Value::String(inner)) => match serde_json::from_str::<Value>(&inner) {
                    Ok(v @ Value::Object(_)) => (v, None),
                    _ => (empty(), Some(format!("the arguments are a JSON string, not an object: {}", clip(s)))),
                },
                Ok(Value::Null) => (empty(), None),
                Ok(other) => {
                    (empty(), Some(format!("the arguments are a JSON {}, not an object: {}", kind(&other), clip(s))))
                }
                Err(e) => (empty(), Some(format!("the arguments are not valid JSON ({e}): {}", clip(s)))),
            }
        }
        Some(other) => (
            empty(),
            Some(format!("the arguments are a JSON {}, not an object: {}", kind(other), clip(&other.to_string()))),
        ),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn clip(s: &str) -> String {
    match s.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// The declared tool a model meant. Small models pad names with whitespace,
/// change their case or prefix them with `functions.` (the namespace some chat
/// templates show them in). A name that matches no declared tool is returned
/// cleaned, and the agent answers it as an unknown tool.
pub(crate) fn tool_name(raw: &str, tools: &[ToolSpec]) -> String {
    let mut name = raw.trim();
    for prefix in ["functions.", "function.", "tools."] {
        // `get`, not indexing: the name is the server's text, and the cut
        // may fall inside a character.
        if name.len() > prefix.len() && name.get(..prefix.len()).is_some_and(|p| p.eq_ignore_ascii_case(prefix)) {
            name = name[prefix.len()..].trim();
        }
    }
    if let Some(t) = tools.iter().find(|t| t.name == name) {
        return t.name.clone();
    }
    if let Some(t) = tools.iter().find(|t| t.name.eq_ignore_ascii_case(name)) {
        return t.name.clone();
    }
    name.to_string()
}

/// Ids for tool calls whose wire format carries none (Gemini, Ollama) or
/// whose server left them out: unique within one client.
#[derive(Debug, Default)]
pub(crate) struct CallIds(AtomicU64);

impl CallIds {
    pub(crate) fn next(&self) -> String {
        format!("call_{}", self.0.fetch_add(1, Ordering::Relaxed) + 1)
    }
}

/// Tool declarations in the OpenAI layout that Ollama shares:
/// `[{"type": "function", "function": {name, description, parameters}}]`.
pub(crate) fn function_tools(tools: &[ToolSpec]) -> Value {
    tools
        .iter()
        .map(|t| {
            serde_json::json!({ "type": "function",
                                "function": { "name": t.name, "description": t.description, "parameters": t.parameters } })
        })
        .collect()
}

/// A tool result as text, for wire formats whose tool messages are strings.
pub(crate) fn result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The string field `key` of each object in the array `list` (a server's
/// list of models); anything else is passed over.
pub(crate) fn strings_at(list: &Value, key: &str) -> Vec<String> {
    list.as_array()
        .map(|items| items.iter().filter_map(|i| i[key].as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec(name: &str) -> ToolSpec {
        ToolSpec { name: name.into(), description: String::new(), parameters: json!({"type": "object"}) }
    }

    #[test]
    fn arguments_in_every_encoding() {
        assert_eq!(parse_arguments(Some(&json!({"a": 1}))), (json!({"a": 1}), None));
        assert_eq!(parse_arguments(Some(&json!("{\"a\": 1}"))), (json!({"a": 1}), None));
        assert_eq!(parse_arguments(Some(&json!("\"{\\\"a\\\": 1}\""))), (json!({"a": 1}), None));
        assert_eq!(parse_arguments(Some(&json!(""))), (json!({}), None));
        assert_eq!(parse_arguments(Some(&json!("null"))), (json!({}), None));
        assert_eq!(parse_arguments(None), (json!({}), None));
        let (v, err) = parse_arguments(Some(&json!("{\"path\": \"a.md\"")));
        assert_eq!(v, json!({}));
        assert!(err.unwrap().contains("not valid JSON"));
        let (_, err) = parse_arguments(Some(&json!("[1, 2]")));
        assert!(err.unwrap().contains("JSON array, not an object"));
        let (_, err) = parse_arguments(Some(&json!(42)));
        assert!(err.unwrap().contains("JSON number"));
    }

    #[test]
    fn tool_names_are_matched_back_to_declared_tools() {
        let tools = [spec("read_file"), spec("list_files")];
        assert_eq!(tool_name(" read_file\n", &tools), "read_file");
        assert_eq!(tool_name("Read_File", &tools), "read_file");
        assert_eq!(tool_name("functions.list_files", &tools), "list_files");
        assert_eq!(tool_name("FUNCTIONS. read_file", &tools), "read_file");
        assert_eq!(tool_name(" summon_demon ", &tools), "summon_demon");
        // A multi-byte character where a prefix would end.
        assert_eq!(tool_name("?&=m𖽊ૐѨ5", &tools), "?&=m𖽊ૐѨ5");
    }

    #[test]
    fn call_ids_are_unique() {
        let ids = CallIds::default();
        assert_eq!((ids.next(), ids.next()), ("call_1".to_string(), "call_2".to_string()));
    }
}
