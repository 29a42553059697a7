//! Reading a tool call's arguments, with errors a model can act on
//! ("`limit` must be a number, got \"many\""). Numbers and booleans sent as
//! strings (`"5"`, `"true"`) are accepted: smaller models often send them so.

use serde_json::{Map, Value};

pub struct Args<'a> {
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    pub fn new(map: &'a Map<String, Value>) -> Args<'a> {
        Args { map }
    }

    pub fn raw(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// A required string.
    pub fn string(&self, key: &str) -> Result<&'a str, String> {
        match self.raw(key) {
            Some(Value::String(s)) => Ok(s),
            Some(other) => Err(format!("`{key}` must be a string, got {other}")),
            None => Err(format!("missing required parameter `{key}` (a string)")),
        }
    }

    pub fn opt_string(&self, key: &str) -> Result<Option<&'a str>, String> {
        match self.raw(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(format!("`{key}` must be a string, got {other}")),
        }
    }

    pub fn bool_or(&self, key: &str, default: bool) -> Result<bool, String> {
        match self.raw(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(Value::String(s)) if s == "true" || s == "false" => Ok(s == "true"),
            Some(other) => Err(format!("`{key}` must be true or false, got {other}")),
        }
    }

    /// A non-negative whole number.
    pub fn count_or(&self, key: &str, default: usize) -> Result<usize, String> {
        let bad = |v: &Value| format!("`{key}` must be a non-negative whole number, got {v}");
        match self.raw(key) {
            None => Ok(default),
            Some(v @ Value::Number(n)) => match n.as_u64() {
                Some(u) => Ok(u as usize),
                None => match n.as_f64() {
                    Some(f) if f >= 0.0 && f.fract() == 0.0 => Ok(f as usize),
                    _ => Err(bad(v)),
                },
            },
            Some(v @ Value::String(s)) => s.trim().parse().map_err(|_| bad(v)),
            Some(other) => Err(bad(other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typed_reads_with_clear_errors() {
        let v = json!({"path": "a", "n": 5, "f": 2.0, "s": "7", "b": "true", "bad": -1, "nil": null});
        let a = Args::new(v.as_object().unwrap());
        assert_eq!(a.string("path").unwrap(), "a");
        assert_eq!(a.string("nil").unwrap_err(), "missing required parameter `nil` (a string)");
        assert_eq!(a.string("n").unwrap_err(), "`n` must be a string, got 5");
        assert_eq!(a.count_or("n", 1).unwrap(), 5);
        assert_eq!(a.count_or("f", 1).unwrap(), 2);
        assert_eq!(a.count_or("s", 1).unwrap(), 7);
        assert_eq!(a.count_or("absent", 9).unwrap(), 9);
        assert!(a.count_or("bad", 1).is_err());
        assert!(a.bool_or("b", false).unwrap());
        assert!(a.bool_or("n", false).is_err());
    }
}
