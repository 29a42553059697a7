//! Loop detection: the same tool called with the same arguments (keys
//! sorted) more than [`LOOP_LIMIT`] times in one run is refused.

use std::collections::HashMap;

use serde_json::Value;

/// How many identical calls are still executed; later ones are refused.
pub const LOOP_LIMIT: u32 = 3;

/// Counts identical calls over one run.
#[derive(Debug, Default)]
pub struct LoopDetector {
    seen: HashMap<String, u32>,
    fires: u32,
}

impl LoopDetector {
    /// Record a call; `true` when it must be refused as a loop.
    pub fn record(&mut self, tool: &str, arguments: &Value) -> bool {
        let mut key = String::with_capacity(64);
        key.push_str(tool);
        key.push('\u{1f}');
        canonical(arguments, &mut key);
        let count = self.seen.entry(key).or_insert(0);
        *count += 1;
        let fired = *count > LOOP_LIMIT;
        self.fires += u32::from(fired);
        fired
    }

    /// Calls refused so far (the run's `loop_fires`).
    pub fn fires(&self) -> u32 {
        self.fires
    }
}

/// JSON text with object keys sorted at every level, so that argument order
/// does not make two calls different.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fourth_identical_call_fires_whatever_the_key_order() {
        let mut d = LoopDetector::default();
        assert!(!d.record("find_files_by_content", &json!({"query": "x", "limit": 5})));
        assert!(!d.record("find_files_by_content", &json!({"limit": 5, "query": "x"})));
        assert!(!d.record("find_files_by_content", &json!({"query": "x", "limit": 5})));
        assert!(d.record("find_files_by_content", &json!({"limit": 5, "query": "x"})));
        assert!(d.record("find_files_by_content", &json!({"limit": 5, "query": "x"})));
        assert_eq!(d.fires(), 2);
    }

    #[test]
    fn different_tools_or_arguments_are_different_calls() {
        let mut d = LoopDetector::default();
        for _ in 0..3 {
            assert!(!d.record("read_file", &json!({"path": "a"})));
            assert!(!d.record("list_files", &json!({"path": "a"})));
            assert!(!d.record("read_file", &json!({"path": "b"})));
            assert!(!d.record("read_file", &json!({"path": "a", "extra": {"y": 1, "x": [1, 2]}})));
        }
        assert!(!d.record("read_file", &json!({"path": "c"})));
        assert!(d.record("read_file", &json!({"path": "a", "extra": {"x": [1, 2], "y": 1}})));
        assert_eq!(d.fires(), 1);
    }
}
