//! The keys a provider was given, and their removal from everything its
//! server sends back, however the server encoded them.
//!
//! A server (or a proxy in front of it) may echo a request header in an
//! error or an answer. The key then rarely arrives as plain text: inside a
//! JSON answer it may be escaped (`\u0073k-...`), inside a URL or a form
//! percent-encoded (`%73k-...`), inside an HTML error page an entity
//! (`&#115;k-...`), and any of these nested once or twice (a JSON string
//! holding JSON text). Each text is therefore searched as written and as
//! decoded, up to [`LAYERS`] times, and every span of the original text that
//! decodes to a key is replaced by `[REDACTED]`.
//!
//! Keys are ASCII (every provider's keys are), so only escapes of ASCII
//! characters are decoded; anything else is left as written. Base64 is not
//! decoded: nothing in these protocols carries a key in it.
//!
//! It owns no I/O; the HTTP layer applies it to error texts and answers.

use std::ops::Range;

use serde_json::Value;

use super::ModelReply;

/// What replaces a key.
pub(crate) const REDACTED: &str = "[REDACTED]";

/// Keys shorter than this are placeholders that local servers ignore
/// (`ollama`, `lm-studio`, `none`), not secrets; scrubbing them out of a
/// model's answer would change the answer being scored, so only error texts
/// lose them.
const MIN_LEN_IN_ANSWERS: usize = 16;

/// Keys shorter than this are not searched for at all (they would match
/// ordinary words).
const MIN_LEN: usize = 4;

/// How many times a text is decoded in search of a key: a key escaped
/// inside JSON text held in a JSON string needs two.
const LAYERS: usize = 3;

/// The keys of one provider.
#[derive(Debug, Clone, Default)]
pub(crate) struct Secrets {
    keys: Vec<String>,
}

impl Secrets {
    pub(crate) fn new(keys: impl IntoIterator<Item = String>) -> Secrets {
        Secrets { keys: keys.into_iter().filter(|k| k.len() >= MIN_LEN).collect() }
    }

    /// `text` without any key, for texts meant for people (errors, logs).
    pub(crate) fn scrub_message(&self, text: &str) -> String {
        let keys: Vec<&str> = self.keys.iter().map(String::as_str).collect();
        redact(text, &keys).unwrap_or_else(|| text.to_string())
    }

    fn answer_keys(&self) -> Vec<&str> {
        self.keys.iter().filter(|k| k.len() >= MIN_LEN_IN_ANSWERS).map(String::as_str).collect()
    }

    /// Every string of a server's answer (object keys included) without a
    /// real key.
    pub(crate) fn scrub_value(&self, value: &mut Value) {
        let keys = self.answer_keys();
        if !keys.is_empty() {
            scrub_value_with(value, &keys);
        }
    }

    /// A reply as the agent will see it, without a real key: the text
    /// assembled from several parts may hold a key no part held whole.
    pub(crate) fn scrub_reply(&self, reply: &mut ModelReply) {
        let keys = self.answer_keys();
        if keys.is_empty() {
            return;
        }
        scrub_string(&mut reply.text, &keys);
        for call in &mut reply.tool_calls {
            scrub_string(&mut call.id, &keys);
            scrub_string(&mut call.name, &keys);
            scrub_value_with(&mut call.arguments, &keys);
            if let Some(m) = &mut call.malformed {
                scrub_string(m, &keys);
            }
        }
        if let Some(raw) = &mut reply.raw {
            scrub_value_with(raw, &keys);
        }
    }
}

fn scrub_string(s: &mut String, keys: &[&str]) {
    if let Some(clean) = redact(s, keys) {
        *s = clean;
    }
}

fn scrub_value_with(value: &mut Value, keys: &[&str]) {
    match value {
        Value::String(s) => scrub_string(s, keys),
        Value::Array(items) => items.iter_mut().for_each(|v| scrub_value_with(v, keys)),
        Value::Object(map) => {
            let dirty: Vec<String> = map.keys().filter(|k| redact(k, keys).is_some()).cloned().collect();
            for k in dirty {
                let v = map.shift_remove(&k).expect("the key was just listed");
                map.insert(redact(&k, keys).expect("the key holds a secret"), v);
            }
            map.values_mut().for_each(|v| scrub_value_with(v, keys));
        }
        _ => {}
    }
}

/// `text` with every span that is, or decodes to, one of `keys` replaced;
/// `None` when there is none (the common case, which allocates nothing).
pub(crate) fn redact(text: &str, keys: &[&str]) -> Option<String> {
    let mut spans: Vec<Range<usize>> = Vec::new();
    for key in keys {
        spans.extend(text.match_indices(key).map(|(at, k)| at..at + k.len()));
    }
    if text.contains(['%', '\\', '&']) {
        let mut view = View::identity(text);
        for _ in 0..LAYERS {
            let Some(next) = view.decoded() else { break };
            view = next;
            for key in keys {
                spans.extend(view.text.match_indices(key).map(|(at, k)| view.original(at..at + k.len())));
            }
        }
    }
    if spans.is_empty() {
        return None;
    }
    spans.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(text.len());
    // The end of the last redaction: spans that overlap or touch it extend it.
    let mut end = 0;
    let mut redacting = false;
    for span in spans {
        if redacting && span.start <= end {
            end = end.max(span.end);
            continue;
        }
        out.push_str(&text[end..span.start]);
        out.push_str(REDACTED);
        end = span.end;
        redacting = true;
    }
    out.push_str(&text[end..]);
    Some(out)
}

/// A decoding of an original text: the decoded text and, for each of its
/// bytes, where in the original the character it belongs to starts. Each
/// decoded character stands for a contiguous run of the original, right
/// after the previous one's, so a decoded range maps back to one original
/// range.
struct View {
    text: String,
    /// `starts[i]`: the original offset of decoded byte `i`; one more entry
    /// holds the original length.
    starts: Vec<u32>,
}

impl View {
    fn identity(text: &str) -> View {
        let mut starts: Vec<u32> = (0..text.len() as u32).collect();
        starts.push(text.len() as u32);
        View { text: text.to_string(), starts }
    }

    fn original(&self, decoded: Range<usize>) -> Range<usize> {
        self.starts[decoded.start] as usize..self.starts[decoded.end] as usize
    }

    /// This view with one more layer of escapes decoded; `None` when it has
    /// none left.
    fn decoded(&self) -> Option<View> {
        let bytes = self.text.as_bytes();
        let mut text = String::with_capacity(self.text.len());
        let mut starts = Vec::with_capacity(self.starts.len());
        let mut changed = false;
        let mut i = 0;
        while i < bytes.len() {
            if let Some((c, len)) = escape_at(&self.text[i..]) {
                text.push(c);
                starts.push(self.starts[i]);
                changed = true;
                i += len;
            } else {
                // Copy one whole character, each byte keeping its origin.
                let len = self.text[i..].chars().next().map_or(1, char::len_utf8);
                text.push_str(&self.text[i..i + len]);
                starts.extend_from_slice(&self.starts[i..i + len]);
                i += len;
            }
        }
        starts.push(*self.starts.last().expect("a view always ends with the length"));
        changed.then_some(View { text, starts })
    }
}

/// The ASCII character an escape at the start of `s` stands for, and the
/// escape's length: `%XX`, `\uXXXX`, `\xXX`, `\\`, `\/`, `&#NNN;`, `&#xHH;`
/// or `&amp;`.
fn escape_at(s: &str) -> Option<(char, usize)> {
    let b = s.as_bytes();
    let hex = |digits: &[u8]| -> Option<u32> {
        let text = std::str::from_utf8(digits).ok()?;
        if text.is_empty() || !text.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(text, 16).ok()
    };
    let ascii = |code: u32| char::from_u32(code).filter(char::is_ascii);
    match b.first()? {
        b'%' => Some((ascii(hex(b.get(1..3)?)?)?, 3)),
        b'\\' => match b.get(1)? {
            b'u' => Some((ascii(hex(b.get(2..6)?)?)?, 6)),
            b'x' => Some((ascii(hex(b.get(2..4)?)?)?, 4)),
            b'\\' => Some(('\\', 2)),
            b'/' => Some(('/', 2)),
            _ => None,
        },
        b'&' => {
            if s.starts_with("&amp;") {
                return Some(('&', 5));
            }
            let rest = s.strip_prefix("&#")?;
            let end = rest.bytes().take(8).position(|c| c == b';')?;
            let body = &rest[..end];
            let code = match body.strip_prefix(['x', 'X']) {
                Some(h) => hex(h.as_bytes())?,
                None if !body.is_empty() && body.bytes().all(|c| c.is_ascii_digit()) => body.parse().ok()?,
                None => return None,
            };
            Some((ascii(code)?, 2 + end + 1))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::provider::{ToolCall, Usage};

    const KEY: &str = "sk-live-ABCDEFGHIJKLMNOP0123";

    fn percent(s: &str) -> String {
        s.bytes().map(|b| format!("%{b:02X}")).collect()
    }

    fn escaped(s: &str) -> String {
        s.chars().map(|c| format!("\\u{:04x}", c as u32)).collect()
    }

    #[test]
    fn keys_are_found_plain_and_in_every_encoding() {
        let keys = [KEY];
        for (written, shown) in [
            (KEY.to_string(), "plain"),
            (escaped(KEY), "JSON-escaped"),
            (format!("\\u0073\\u006b{}", &KEY[2..]), "partly JSON-escaped"),
            (percent(KEY), "percent-encoded"),
            (
                format!("%73k{}", &KEY[2..]).to_lowercase().replace("abcdefghijklmnop", "ABCDEFGHIJKLMNOP"),
                "partly percent-encoded",
            ),
            (KEY.chars().map(|c| format!("&#{};", c as u32)).collect(), "HTML decimal entities"),
            (KEY.chars().map(|c| format!("&#x{:x};", c as u32)).collect(), "HTML hex entities"),
            (percent(KEY).replace('%', "%25"), "percent-encoded twice"),
            (escaped(KEY).replace('\\', "\\\\"), "JSON-escaped inside JSON text"),
            (KEY.chars().map(|c| format!("\\x{:02x}", c as u32)).collect(), "\\x escapes"),
        ] {
            let text = format!("before {written} after");
            let out = redact(&text, &keys).unwrap_or_else(|| panic!("{shown}: not found in {text}"));
            assert_eq!(out, "before [REDACTED] after", "{shown}");
        }
    }

    #[test]
    fn clean_text_is_left_alone_and_costs_nothing() {
        let keys = [KEY];
        for text in ["", "no key here", "100% of \\n and &amp; escapes", "sk-live-ABCDEFGH", "%zz \\u12 &#;"] {
            assert_eq!(redact(text, &keys), None, "{text}");
        }
    }

    #[test]
    fn several_and_overlapping_occurrences() {
        let keys = [KEY, "ABCDEFGHIJKLMNOP"];
        let text = format!("{KEY}{KEY} and {} at the end {KEY}", percent(KEY));
        assert_eq!(redact(&text, &keys).unwrap(), "[REDACTED] and [REDACTED] at the end [REDACTED]");
        assert_eq!(redact(KEY, &keys).unwrap(), "[REDACTED]");
        let text = format!("é{}ü", escaped(KEY));
        assert_eq!(redact(&text, &keys).unwrap(), "é[REDACTED]ü");
    }

    #[test]
    fn answers_lose_long_keys_only_and_replies_lose_assembled_keys() {
        let s = Secrets::new(["ollama".to_string(), KEY.to_string(), String::new()]);
        assert_eq!(s.scrub_message("ollama and sk-live"), "[REDACTED] and sk-live");
        let mut v = json!({ "a": [format!("x{}y", escaped(KEY)), "ollama"], KEY: 1 });
        s.scrub_value(&mut v);
        assert_eq!(v, json!({ "a": ["x[REDACTED]y", "ollama"], "[REDACTED]": 1 }));
        // A key split over two parts is whole only in the assembled text.
        let mut reply = ModelReply {
            text: format!("{}{}", &KEY[..10], &KEY[10..]),
            tool_calls: vec![ToolCall {
                id: "c".into(),
                name: "write_file".into(),
                arguments: json!({ "content": percent(KEY) }),
                malformed: None,
            }],
            usage: Usage::default(),
            raw: Some(json!({ "parts": [{ "text": &KEY[..10] }, { "text": KEY }] })),
        };
        s.scrub_reply(&mut reply);
        assert_eq!(reply.text, "[REDACTED]");
        assert_eq!(reply.tool_calls[0].arguments, json!({ "content": "[REDACTED]" }));
        assert_eq!(reply.raw.unwrap()["parts"][1]["text"], "[REDACTED]");
    }
}
