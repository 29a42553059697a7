//! YAML frontmatter of a Markdown note, read as Obsidian reads it: a `---`
//! line at the very top, a closing `---` line, YAML 1.2 between (so an
//! unquoted date stays a string). Values become JSON so they compare with the
//! `value` of a `frontmatterEquals` assertion using JavaScript equality.
//!
//! This is the one frontmatter reader of the crate (vault tools, the system
//! prompt's skills, vault assertions, the docs site), and it refuses YAML
//! nested deeper than [`MAX_NESTING`] before building anything: the YAML
//! loader, the conversion to JSON, comparison and even dropping a value all
//! recurse once per level, so a few kilobytes of `- - - - x` would otherwise
//! overflow the stack and abort the whole process.

use std::collections::HashMap;

use saphyr::{Scalar, Yaml, YamlLoader};
use saphyr_parser::{Event, Marker, Parser, Span, SpannedEventReceiver};
use serde_json::{Map, Number, Value};

pub use crate::limits::MAX_NESTING;

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
    let docs = load_bounded(yaml)?;
    match docs.into_iter().next() {
        None => Ok(Some(Map::new())),
        Some(doc) => match to_json(&doc)? {
            Value::Object(map) => Ok(Some(map)),
            Value::Null => Ok(Some(Map::new())),
            other => Err(format!("frontmatter is not a key: value mapping (found {})", kind(&other))),
        },
    }
}

/// The YAML documents of `yaml`, refusing nesting deeper than [`MAX_NESTING`].
///
/// The parser's event iterator is a state machine (its own `load` recurses
/// once per level, so it is not used); the depth is counted on the events
/// and the loader, which builds the tree, only sees events within the bound.
/// An alias counts as deep as the anchored node it repeats, so a chain of
/// anchors cannot build a deep tree out of shallow text.
fn load_bounded(yaml: &str) -> Result<Vec<Yaml<'_>>, String> {
    let mut bound = DepthBound { loader: YamlLoader::default(), open: Vec::new(), anchor_heights: HashMap::new() };
    let mut parser = Parser::new_from_str(yaml);
    while let Some(next) = parser.next_event() {
        let (event, span) = next.map_err(|e| format!("malformed frontmatter YAML: {e}"))?;
        bound.feed(event, span).map_err(|at| {
            format!(
                "malformed frontmatter YAML: nested deeper than {MAX_NESTING} levels at line {} column {} of the note",
                // The block starts on the note's second line.
                at.line() + 1,
                at.col() + 1
            )
        })?;
    }
    if let Some(e) = bound.loader.error() {
        return Err(format!("malformed frontmatter YAML: {e}"));
    }
    Ok(bound.loader.into_documents())
}

/// Hands parser events to the loader while the nesting stays within bounds.
struct DepthBound<'input> {
    loader: YamlLoader<'input, Yaml<'input>>,
    /// Each open list or mapping: its anchor id (0: none) and the height of
    /// its tallest child so far (0 for scalars).
    open: Vec<(usize, usize)>,
    /// Height of each anchored list or mapping, for the aliases that repeat it.
    anchor_heights: HashMap<usize, usize>,
}

impl<'input> DepthBound<'input> {
    /// `Err`: where the bound was passed.
    fn feed(&mut self, event: Event<'input>, span: Span) -> Result<(), Marker> {
        match &event {
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if self.open.len() >= MAX_NESTING {
                    return Err(span.start);
                }
                self.open.push((*anchor, 0));
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some((anchor, tallest)) = self.open.pop() {
                    if anchor > 0 {
                        self.anchor_heights.insert(anchor, tallest + 1);
                    }
                    self.child(tallest + 1);
                }
            }
            Event::Alias(anchor) => {
                let height = self.anchor_heights.get(anchor).copied().unwrap_or(0);
                if self.open.len() + height > MAX_NESTING {
                    return Err(span.start);
                }
                self.child(height);
            }
            _ => {}
        }
        self.loader.on_event(event, span);
        Ok(())
    }

    fn child(&mut self, height: usize) {
        if let Some((_, tallest)) = self.open.last_mut() {
            *tallest = (*tallest).max(height);
        }
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

/// A note whose frontmatter key `k` holds lists nested `levels` deep in
/// block style (`- - - x`): 2000 levels fit in 4 KB.
#[cfg(test)]
pub(crate) fn nested_note(levels: usize) -> String {
    format!("---\nk:\n  {}x\n---\nbody\n", "- ".repeat(levels))
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

    fn nested(levels: usize) -> String {
        nested_note(levels)
    }

    #[test]
    fn nesting_is_bounded_before_anything_recurses() {
        // `k` is one level, each `- ` one more.
        let fm = parse(&nested(MAX_NESTING - 1)).unwrap().unwrap();
        let mut v = &fm["k"];
        let mut depth = 1;
        while let Value::Array(items) = v {
            v = &items[0];
            depth += 1;
        }
        assert_eq!((depth, v), (MAX_NESTING, &json!("x")));
        // Far past the bound (and past what a 2 MiB stack survives unbounded).
        for levels in [MAX_NESTING, 2_000, 200_000] {
            let err = parse(&nested(levels)).unwrap_err();
            assert!(err.contains(&format!("nested deeper than {MAX_NESTING} levels")), "{err}");
            assert!(err.contains("line 3"), "{err}");
        }
        let flow = format!("---\nk: {}{}\n---\n", "[".repeat(200), "]".repeat(200));
        assert!(parse(&flow).unwrap_err().contains("nested deeper"));
        let mappings: String = (0..300).map(|i| format!("{}k{i}:\n", " ".repeat(i))).collect();
        assert!(parse(&format!("---\n{mappings}---\n")).unwrap_err().contains("nested deeper"));
    }

    #[test]
    fn aliases_count_as_deep_as_what_they_repeat() {
        // Each anchor repeats the previous one a level deeper: shallow text, deep tree.
        let mut yaml = String::from("a0: &a0 [x]\n");
        for i in 1..200 {
            yaml.push_str(&format!("a{i}: &a{i} [*a{}]\n", i - 1));
        }
        let err = parse(&format!("---\n{yaml}---\n")).unwrap_err();
        assert!(err.contains("nested deeper"), "{err}");
        // Shallow aliases still read as the values they repeat.
        let fm = parse("---\nbase: &b [1, 2]\ncopy: *b\n---\n").unwrap().unwrap();
        assert_eq!(fm["copy"], json!([1, 2]));
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
