//! YAML frontmatter of a Markdown note, read as Obsidian reads it: a `---`
//! line at the very top, a closing `---` line, YAML 1.2 between (so an
//! unquoted date stays a string). Values become JSON so they compare with the
//! `value` of a `frontmatterEquals` assertion using JavaScript equality.

use saphyr::{LoadableYamlNode, Scalar, Yaml};
use serde_json::{Map, Number, Value};

/// The frontmatter block's YAML text, or `None` when the note has none.
pub fn block(content: &str) -> Option<&str> {
    let content = content.strip_prefix('\u{feff}').unwrap_or(content);
    let rest = content.strip_prefix("---\n").or_else(|| content.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end_matches(['\r', '\n']) == "---" {
            return Some(&rest[..offset]);
        }
        offset += line.len();
    }
    None
}

/// Parse a note's frontmatter into a JSON object.
/// `Ok(None)`: no frontmatter. `Err`: there is one, but it is not a YAML mapping.
pub fn parse(content: &str) -> Result<Option<Map<String, Value>>, String> {
    let Some(yaml) = block(content) else {
        return Ok(None);
    };
    let docs = Yaml::load_from_str(yaml).map_err(|e| format!("malformed frontmatter YAML: {e}"))?;
    match docs.into_iter().next() {
        None => Ok(Some(Map::new())),
        Some(doc) => match to_json(&doc)? {
            Value::Object(map) => Ok(Some(map)),
            Value::Null => Ok(Some(Map::new())),
            other => Err(format!("frontmatter is not a key: value mapping (found {})", kind(&other))),
        },
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

fn to_json(node: &Yaml) -> Result<Value, String> {
    Ok(match node {
        Yaml::Value(scalar) => scalar_to_json(scalar),
        Yaml::Representation(text, _, _) => Value::String(text.to_string()),
        Yaml::Sequence(items) => Value::Array(items.iter().map(to_json).collect::<Result<_, _>>()?),
        Yaml::Mapping(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                let key = match to_json(k)? {
                    Value::String(s) => s,
                    // JavaScript object keys are strings: `1: x` is key "1".
                    other => other.to_string(),
                };
                out.insert(key, to_json(v)?);
            }
            Value::Object(out)
        }
        Yaml::Tagged(_, inner) => to_json(inner)?,
        Yaml::Alias(_) => return Err("malformed frontmatter YAML: aliases are not supported".into()),
        Yaml::BadValue => return Err("malformed frontmatter YAML: a value could not be read".into()),
    })
}

fn scalar_to_json(s: &Scalar) -> Value {
    match s {
        Scalar::Null => Value::Null,
        Scalar::Boolean(b) => Value::Bool(*b),
        Scalar::Integer(i) => Value::Number((*i).into()),
        Scalar::FloatingPoint(f) => {
            Number::from_f64(f.into_inner()).map(Value::Number).unwrap_or_else(|| Value::String(f.to_string()))
        }
        Scalar::String(s) => Value::String(s.to_string()),
    }
}

/// Structural equality with JavaScript's number semantics (41200 equals 41200.0).
pub fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| deep_equal(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| deep_equal(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_typed_values_yaml_1_2_style() {
        let note = "---\ntitle: The Lantern Keeper\ndeadline: 2026-09-30\nword_count: 41200\ntags:\n  - novel\n  - fiction\ndraft: true\nratio: 0.5\n---\n# Body\n";
        let fm = parse(note).unwrap().unwrap();
        assert_eq!(fm["deadline"], json!("2026-09-30"));
        assert_eq!(fm["word_count"], json!(41200));
        assert_eq!(fm["tags"], json!(["novel", "fiction"]));
        assert_eq!(fm["draft"], json!(true));
        assert!(deep_equal(&fm["ratio"], &json!(0.5)));
        assert_eq!(fm["title"], json!("The Lantern Keeper"));
    }

    #[test]
    fn no_frontmatter_is_none_not_an_error() {
        assert_eq!(parse("# Just a note\n---\n").unwrap(), None);
        assert_eq!(parse("---\nno closing line\n").unwrap(), None);
        assert_eq!(parse("---\n---\nbody").unwrap(), Some(Map::new()));
    }

    #[test]
    fn malformed_frontmatter_is_a_clear_error() {
        let err = parse("---\ntitle: [unclosed\n---\n").unwrap_err();
        assert!(err.starts_with("malformed frontmatter YAML"), "{err}");
        let err = parse("---\n- a\n- b\n---\n").unwrap_err();
        assert!(err.contains("not a key: value mapping"), "{err}");
    }

    #[test]
    fn crlf_notes_parse() {
        let fm = parse("---\r\nstatus: done\r\n---\r\nbody").unwrap().unwrap();
        assert_eq!(fm["status"], json!("done"));
    }

    #[test]
    fn deep_equal_follows_javascript() {
        assert!(deep_equal(&json!(41200), &json!(41200.0)));
        assert!(deep_equal(&json!({"a": [1, "x"]}), &json!({"a": [1.0, "x"]})));
        assert!(!deep_equal(&json!(["a", "b"]), &json!(["b", "a"])));
        assert!(!deep_equal(&json!("41200"), &json!(41200)));
        assert!(!deep_equal(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!deep_equal(&json!([]), &json!({})));
    }
}
