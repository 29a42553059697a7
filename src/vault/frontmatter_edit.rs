//! Setting one top-level property of a note's YAML frontmatter, as
//! `update_frontmatter` does: only that property's lines change; every other
//! property, comment and the body stay byte for byte. The edit is verified by
//! reading the result back with `score::frontmatter::parse` (the reader the
//! vault assertions use): if the property does not read back as the intended
//! value, or any other property changed, the edit is refused.
//!
//! It does not read or write files; the tool does.

use serde_json::{Map, Value};

use crate::score::frontmatter::{self, deep_equal};

/// The value to store for what the model sent: a string holding JSON
/// (`"41200"`, `"[\"a\"]"`, `"true"`, `"\"x\""`) becomes that JSON value, as
/// the plugin's `JSON.parse` does; other strings (`"2026-09-30"`) stay strings.
pub fn coerce(value: &Value) -> Value {
    match value {
        Value::String(s) => serde_json::from_str::<Value>(s).unwrap_or_else(|_| value.clone()),
        other => other.clone(),
    }
}

/// `content` with frontmatter property `key` set to `value`.
pub fn set(content: &str, key: &str, value: &Value) -> Result<String, String> {
    if key.trim().is_empty() {
        return Err("the frontmatter key is empty".into());
    }
    // A note whose lines end in CR alone (old Mac style) has no LF at all,
    // and the frontmatter reader knows LF and CRLF: it is edited as LF and
    // given its CRs back, a round trip that is exact because no LF was there.
    if content.contains('\r') && !content.contains('\n') {
        return set(&content.replace('\r', "\n"), key, value).map(|edited| edited.replace('\n', "\r"));
    }
    let eol = if content.contains("\r\n") { "\r\n" } else { "\n" };
    let before = frontmatter::parse(content)
        .map_err(|e| format!("the note's frontmatter cannot be read ({e}); rewrite it with write_file instead"))?;
    let updated = match (before.as_ref(), frontmatter::block(content)) {
        (Some(_), Some(block)) => {
            let start = block.as_ptr() as usize - content.as_ptr() as usize;
            let end = start + block.len();
            let new_block = set_in_block(block, key, value, eol);
            format!("{}{}{}", &content[..start], new_block, &content[end..])
        }
        _ => {
            // No frontmatter: add one in front, after a byte-order mark if any.
            let (bom, rest) = match content.strip_prefix('\u{feff}') {
                Some(rest) => ("\u{feff}", rest),
                None => ("", content),
            };
            format!("{bom}---{eol}{}---{eol}{rest}", render_entry(key, value, eol))
        }
    };
    verify(before.unwrap_or_default(), &updated, key, value)?;
    Ok(updated)
}

/// Replace the lines of `key`'s entry in the YAML block, or append an entry.
fn set_in_block(block: &str, key: &str, value: &Value, eol: &str) -> String {
    let lines: Vec<&str> = block.split_inclusive('\n').collect();
    let starts: Vec<usize> = (0..lines.len()).filter(|&i| starts_entry(lines[i])).collect();
    for (n, &first) in starts.iter().enumerate() {
        let next = starts.get(n + 1).copied().unwrap_or(lines.len());
        // Trailing blank and comment lines separate entries; they stay put.
        let mut last = next;
        while last > first + 1 && is_blank_or_comment(lines[last - 1]) {
            last -= 1;
        }
        let span: String = lines[first..last].concat();
        if entry_key(&span).as_deref() == Some(key) {
            let mut out: String = lines[..first].concat();
            out.push_str(&render_entry(key, value, eol));
            out.push_str(&lines[last..].concat());
            return out;
        }
    }
    let mut out = block.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push_str(eol);
    }
    out.push_str(&render_entry(key, value, eol));
    out
}

/// A top-level mapping entry starts at column 0 with something other than a
/// comment or a sequence item (`- x` lines at column 0 belong to the key above).
fn starts_entry(line: &str) -> bool {
    match line.chars().next() {
        None | Some(' ' | '\t' | '#' | '\r' | '\n') => false,
        Some('-') => !(line.starts_with("- ") || line.trim_end() == "-"),
        Some(_) => true,
    }
}

fn is_blank_or_comment(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// The key of one entry's text, read by the YAML parser itself so quoted and
/// odd keys are handled as YAML handles them.
fn entry_key(span: &str) -> Option<String> {
    let doc = format!("---\n{}{}---\n", span, if span.ends_with('\n') { "" } else { "\n" });
    let map = frontmatter::parse(&doc).ok()??;
    map.keys().next().cloned()
}

fn render_entry(key: &str, value: &Value, eol: &str) -> String {
    let key = render_key(key);
    match value {
        Value::Array(items) if !items.is_empty() => {
            let mut s = format!("{key}:{eol}");
            for item in items {
                s.push_str(&format!("  - {}{eol}", render_value(item)));
            }
            s
        }
        other => format!("{key}: {}{eol}", render_value(other)),
    }
}

fn render_key(key: &str) -> String {
    let reads_back = plain_candidate(key)
        && matches!(frontmatter::parse(&format!("---\n{key}: k\n---\n")),
            Ok(Some(map)) if map.len() == 1 && map.contains_key(key));
    if reads_back { key.to_string() } else { json_string(key) }
}

/// A scalar as plain YAML when it reads back unchanged, else as JSON text
/// (a double-quoted string, or a flow collection: JSON is valid YAML 1.2).
fn render_value(value: &Value) -> String {
    match value {
        Value::String(s) => {
            let reads_back = plain_candidate(s)
                && matches!(frontmatter::parse(&format!("---\nk: {s}\n---\n")),
                    Ok(Some(map)) if map.len() == 1 && map.get("k") == Some(value));
            if reads_back { s.clone() } else { json_string(s) }
        }
        other => other.to_string(),
    }
}

/// Multi-line text, text with outer spaces and the empty string are never
/// written plainly; everything else is tried and read back.
fn plain_candidate(text: &str) -> bool {
    !text.is_empty() && !text.contains(['\n', '\r']) && text.trim() == text
}

fn json_string(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// The edit must read back as intended, with every other property unchanged.
fn verify(before: Map<String, Value>, updated: &str, key: &str, value: &Value) -> Result<(), String> {
    let refuse = |why: String| Err(format!("could not set `{key}` safely ({why}); the note was left unchanged"));
    let after = match frontmatter::parse(updated) {
        Ok(Some(map)) => map,
        Ok(None) => return refuse("the frontmatter was lost".into()),
        Err(e) => return refuse(e),
    };
    match after.get(key) {
        Some(v) if deep_equal(v, value) => {}
        Some(v) => return refuse(format!("it would read back as {v}")),
        None => return refuse("it would not read back".into()),
    }
    for (k, v) in &before {
        if k != key && !after.get(k).is_some_and(|w| deep_equal(v, w)) {
            return refuse(format!("property `{k}` would change"));
        }
    }
    if after.len() != before.len() + usize::from(!before.contains_key(key)) {
        return refuse("the number of properties would change".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fm(text: &str) -> Map<String, Value> {
        frontmatter::parse(text).unwrap().unwrap()
    }

    const NOTE: &str = "---\ntitle: The Lantern Keeper\n# keep this comment\nstatus: drafting\ntags:\n- old\n- older\naliases: [a, b]\n---\n\n# The Lantern Keeper\nBody text: stays.\n";

    #[test]
    fn typed_values_read_back_as_intended() {
        let mut text = NOTE.to_string();
        for (key, raw) in [
            ("deadline", json!("2026-09-30")),
            ("word_count", json!("41200")),
            ("tags", json!("[\"novel\", \"fiction\", \"manuscript\"]")),
            ("draft", json!("true")),
            ("ratio", json!(0.5)),
            ("yes_string", json!("yes")),
            ("colon", json!("a: b # not a comment")),
            ("quoted", json!("\"already quoted\"")),
            ("multi", json!("line one\nline two")),
            ("empty", json!("")),
            ("nothing", json!(null)),
            ("nested", json!({"a": [1, "x"]})),
            ("mixed", json!([1, "two", {"three": 3}, [4]])),
            ("none", json!([])),
        ] {
            let value = coerce(&raw);
            text = set(&text, key, &value).unwrap_or_else(|e| panic!("{key}: {e}"));
            assert!(deep_equal(&fm(&text)[key], &value), "{key}: {:?}", fm(&text).get(key));
        }
        let map = fm(&text);
        assert_eq!(map["deadline"], json!("2026-09-30"));
        assert_eq!(map["word_count"], json!(41200));
        assert_eq!(map["tags"], json!(["novel", "fiction", "manuscript"]));
        assert_eq!(map["draft"], json!(true));
        assert_eq!(map["yes_string"], json!("yes"));
        assert_eq!(map["quoted"], json!("already quoted"));
        assert_eq!(map["title"], json!("The Lantern Keeper"));
        assert!(text.contains("deadline: 2026-09-30\n"), "dates stay plain:\n{text}");
        assert!(text.contains("tags:\n  - novel\n  - fiction\n  - manuscript\n"), "block list:\n{text}");
        // Untouched lines, the comment and the body are byte-identical.
        assert!(text.starts_with("---\ntitle: The Lantern Keeper\n# keep this comment\nstatus: drafting\ntags:\n"));
        assert!(text.contains("aliases: [a, b]\n"));
        assert!(text.ends_with("---\n\n# The Lantern Keeper\nBody text: stays.\n"));
    }

    #[test]
    fn replacing_a_value_touches_only_its_lines() {
        let out = set(NOTE, "tags", &json!(["new"])).unwrap();
        assert_eq!(out, NOTE.replace("tags:\n- old\n- older\n", "tags:\n  - new\n"));
        let out = set(NOTE, "status", &json!("final")).unwrap();
        assert_eq!(out, NOTE.replace("status: drafting", "status: final"));
    }

    #[test]
    fn a_note_without_frontmatter_gets_one() {
        let out = set("# Title\n\nbody\n", "status", &json!("done")).unwrap();
        assert_eq!(out, "---\nstatus: done\n---\n# Title\n\nbody\n");
        assert_eq!(set("", "n", &json!(3)).unwrap(), "---\nn: 3\n---\n");
    }

    #[test]
    fn odd_keys_are_quoted_and_crlf_is_kept() {
        let out = set("---\r\na: 1\r\n---\r\nbody\r\n", "my key: x", &json!("v")).unwrap();
        assert_eq!(out, "---\r\na: 1\r\n\"my key: x\": v\r\n---\r\nbody\r\n");
        assert_eq!(fm(&out)["my key: x"], json!("v"));
    }

    #[test]
    fn cr_only_notes_keep_their_line_endings_and_one_block() {
        let note = "\u{feff}---\rtitle: Old Mac\r---\rbody\r";
        let out = set(note, "status", &json!("done")).unwrap();
        assert_eq!(out, "\u{feff}---\rtitle: Old Mac\rstatus: done\r---\rbody\r");
        let out = set("body\rmore\r", "n", &json!([1, 2])).unwrap();
        assert_eq!(out, "---\rn:\r  - 1\r  - 2\r---\rbody\rmore\r");
        let out = set("# T\r\nbody\r\n", "n", &json!(1)).unwrap();
        assert_eq!(out, "---\r\nn: 1\r\n---\r\n# T\r\nbody\r\n", "a new block takes the note's CRLF");
    }

    /// The line-ending style of a text: which of LF, CRLF and CR it uses.
    fn styles(text: &str) -> (bool, bool, bool) {
        let crlf = text.matches("\r\n").count();
        let lf = text.matches('\n').count() - crlf;
        let cr = text.matches('\r').count() - crlf;
        (lf > 0, crlf > 0, cr > 0)
    }

    proptest::proptest! {
        /// Whatever the note's line endings (LF, CRLF, CR), byte-order mark
        /// and frontmatter, setting a property keeps them, leaves exactly
        /// one block that reads back with the value, and keeps the body.
        #[test]
        fn an_edit_keeps_line_endings_bom_and_a_single_block(
            eol in proptest::sample::select(vec!["\n", "\r\n", "\r"]),
            bom in proptest::bool::ANY,
            existing in proptest::collection::vec(
                proptest::sample::select(vec!["title: T", "status: draft", "n: 3", "# comment", "tags:", "- a", ""]), 0..6),
            has_block in proptest::bool::ANY,
            body in proptest::collection::vec("[a-z #:-]{0,12}", 0..5),
            key in proptest::sample::select(vec!["status", "n", "new_key", "title"]),
            value in proptest::sample::select(vec![json!("done"), json!(7), json!(["x", "y"]), json!(true)]),
        ) {
            let mut note = String::new();
            if bom { note.push('\u{feff}'); }
            if has_block {
                note.push_str("---");
                note.push_str(eol);
                for line in &existing { note.push_str(line); note.push_str(eol); }
                note.push_str("---");
                note.push_str(eol);
            }
            let mut body_text = String::new();
            for line in &body { body_text.push_str(line); body_text.push_str(eol); }
            note.push_str(&body_text);
            let Ok(out) = set(&note, key, &value) else {
                // Refused (e.g. a property list YAML cannot read): never rewritten.
                return Ok(());
            };
            proptest::prop_assert_eq!(out.starts_with('\u{feff}'), bom);
            // A note without any line break has no style to keep: it gets LF.
            let eol = if note.contains(['\n', '\r']) { eol } else { "\n" };
            let (lf, crlf, cr) = styles(&out);
            proptest::prop_assert_eq!((lf, crlf, cr), (eol == "\n", eol == "\r\n", eol == "\r"), "{:?}", out);
            let lf_text = out.replace("\r\n", "\n").replace('\r', "\n");
            let map = frontmatter::parse(&lf_text).unwrap().unwrap();
            proptest::prop_assert!(deep_equal(&map[key], &value));
            let unbommed = lf_text.trim_start_matches('\u{feff}');
            let block = frontmatter::block(unbommed).unwrap();
            let after = &unbommed[4 + block.len()..];
            let after = after.strip_prefix("---\n").unwrap();
            proptest::prop_assert_eq!(after, body_text.replace("\r\n", "\n").replace('\r', "\n"));
            proptest::prop_assert!(frontmatter::block(after).is_none() || !has_block || body_text.starts_with("---"),
                "a second block: {:?}", out);
        }
    }

    #[test]
    fn malformed_frontmatter_is_refused_not_rewritten() {
        let err = set("---\ntitle: [unclosed\n---\nbody", "k", &json!(1)).unwrap_err();
        assert!(err.contains("cannot be read"), "{err}");
        assert!(set(NOTE, " ", &json!(1)).is_err());
    }

    #[test]
    fn coerce_follows_the_plugin() {
        assert_eq!(coerce(&json!("41200")), json!(41200));
        assert_eq!(coerce(&json!("[\"a\", \"b\"]")), json!(["a", "b"]));
        assert_eq!(coerce(&json!("true")), json!(true));
        assert_eq!(coerce(&json!("2026-09-30")), json!("2026-09-30"));
        assert_eq!(coerce(&json!("\"x\"")), json!("x"));
        assert_eq!(coerce(&json!(["a"])), json!(["a"]));
    }
}
