//! The transcripts of a baseline's evidence archive, read for the site as a
//! conversation: the system prompt, the user message, each model turn with
//! its tool calls, each tool result, errors and how the run ended.
//!
//! The archive is read as a stream (`report::evidence::for_each_entry`,
//! with its checks and caps): one entry at a time is unpacked, parsed and
//! reduced to its view, so memory holds the views (every text cut to a
//! bound) and never the whole archive. An entry that is too large or not JSON becomes a view saying so, and an
//! archive that cannot be read is one warning, never a failed build.
//!
//! Everything here is untrusted text, escaped by the templates.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::publish::model::display::{Shown, seconds};
use crate::report::evidence;

/// One transcript entry larger than this is not shown (ours are a few
/// tens of KiB: tool results are cut to 4000 characters when recorded).
pub const MAX_ENTRY_BYTES: u64 = 8 << 20;
/// The first part of a long text shown open; the rest folds behind "show all".
const HEAD_CHARS: usize = 600;
/// What a page shows of one text at most, open and folded together.
const TEXT_CHARS: usize = 20_000;
/// Events shown per transcript.
const MAX_EVENTS: usize = 2_000;

/// The transcripts of one archive, by entry name (`<task>-<n>.json`).
#[derive(Debug, Clone, Default)]
pub struct Transcripts {
    /// A digest of the archive file, so that a rebuild reuses what an
    /// unchanged archive gave.
    pub digest: u64,
    /// Shared with the task pages that show them (a view is never copied).
    by_entry: HashMap<String, Arc<TranscriptView>>,
}

impl Transcripts {
    /// The transcript a run's `transcript_path` names (by its file name).
    pub fn of(&self, transcript_path: &str) -> Option<&Arc<TranscriptView>> {
        let name = transcript_path.rsplit(['/', '\\']).next()?;
        self.by_entry.get(name)
    }

    pub fn len(&self) -> usize {
        self.by_entry.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_entry.is_empty()
    }
}

/// A long text: its start, and the rest behind a fold.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Folded {
    pub head: String,
    /// The text after `head`, up to the page's bound.
    pub rest: String,
    /// Characters in all, and those past the page's bound (not shown).
    pub chars: usize,
    pub omitted: usize,
}

impl Folded {
    fn new(text: &str) -> Folded {
        let shown = Shown::new(text, TEXT_CHARS);
        let head = Shown::new(&shown.text, HEAD_CHARS);
        let rest = shown.text[head.text.len()..].to_string();
        Folded { head: head.text, rest, chars: text.chars().count(), omitted: shown.omitted }
    }

    /// A JSON value as text: a string as it is, anything else pretty-printed.
    fn json(v: &Value) -> Folded {
        match v {
            Value::String(s) => Folded::new(s),
            other => Folded::new(&serde_json::to_string_pretty(other).unwrap_or_default()),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct TranscriptView {
    /// A digest of the entry's bytes: what the view was made from, for
    /// keying its page across rebuilds.
    #[serde(skip)]
    pub digest: u64,
    /// Set when the entry could not be read; the rest is then empty.
    pub problem: Option<String>,
    pub system_prompt: Folded,
    pub tools: Vec<String>,
    pub events: Vec<EventView>,
    pub events_omitted: usize,
    pub end: EndView,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct EndView {
    /// `answered`, `timed_out`, `turn_limit`... as recorded.
    pub reason: String,
    pub detail: Folded,
    pub duration: String,
}

/// One step of the conversation.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EventView {
    /// `user`, `model`, `tool`, `error` or `other`.
    pub kind: &'static str,
    pub turn: Option<u64>,
    /// A short line: timings, tokens, the tool's name and outcome.
    pub meta: String,
    pub name: Option<String>,
    pub success: Option<bool>,
    pub text: Option<Folded>,
    /// A model turn's tool calls.
    pub calls: Vec<CallView>,
    pub arguments: Option<Folded>,
    pub result: Option<Folded>,
    pub result_truncated: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CallView {
    pub name: String,
    pub arguments: Folded,
}

/// A digest of the file at `path`, read in chunks.
pub fn file_digest(path: &Path) -> std::io::Result<u64> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut digest = crate::publish::digest::Digest::default();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        match file.read(&mut chunk)? {
            0 => return Ok(digest.finish()),
            n => digest.stream(&chunk[..n]),
        }
    }
}

/// Unpacked entries parsed together, on every core, hold at most this many
/// bytes (with one entry of up to [`MAX_ENTRY_BYTES`] beyond it).
const BATCH_BYTES: usize = 16 << 20;

/// Read every transcript of the archive at `path`: entries are unpacked one
/// at a time and parsed in batches of bounded size across the cores.
pub fn load(path: &Path) -> Result<Transcripts> {
    let mut out = Transcripts {
        digest: file_digest(path).with_context(|| format!("reading {}", path.display()))?,
        ..Transcripts::default()
    };
    // Entries in archive order (a later one of the same name wins), each
    // either unpacked or already a view saying why it is not shown.
    let mut batch: Vec<(String, Result<Vec<u8>, TranscriptView>)> = Vec::new();
    let mut batch_bytes = 0;
    let flush = |batch: &mut Vec<(String, Result<Vec<u8>, TranscriptView>)>, out: &mut Transcripts| {
        let views: Vec<(String, TranscriptView)> =
            batch.par_drain(..).map(|(name, entry)| (name, entry.map_or_else(|v| v, |bytes| view(&bytes)))).collect();
        out.by_entry.extend(views.into_iter().map(|(name, v)| (name, Arc::new(v))));
    };
    evidence::for_each_entry(path, |name, size, data| {
        let entry = if size > MAX_ENTRY_BYTES {
            Err(TranscriptView {
                problem: Some(format!("this transcript is {} MiB, too large to show", size >> 20)),
                // The view shows only the size.
                digest: size,
                ..TranscriptView::default()
            })
        } else {
            let mut bytes = Vec::with_capacity(size as usize);
            data.read_to_end(&mut bytes).with_context(|| format!("reading {name} in {}", path.display()))?;
            batch_bytes += bytes.len();
            Ok(bytes)
        };
        batch.push((name.to_string(), entry));
        if batch_bytes >= BATCH_BYTES {
            flush(&mut batch, &mut out);
            batch_bytes = 0;
        }
        Ok(())
    })?;
    flush(&mut batch, &mut out);
    Ok(out)
}

/// Read every transcript in the folder a sweep writes them to
/// (`evals/results/<run>/<task>-<n>.json`), as [`load`] reads an archive:
/// only plain `.json` files directly in it, each of at most
/// [`MAX_ENTRY_BYTES`], parsed on every core. `digest` is a digest of the
/// files' names, sizes and times, so a rebuild sees a transcript added.
pub fn load_dir(dir: &Path) -> Result<Transcripts> {
    let mut files: Vec<(String, std::path::PathBuf, u64)> = Vec::new();
    let mut digest = crate::publish::digest::Digest::default();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Transcripts::default()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
    };
    for entry in entries {
        let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.is_file() || !name.ends_with(".json") || name.starts_with('.') || name == "sweep.json" {
            continue;
        }
        files.push((name, entry.path(), meta.len()));
    }
    files.sort();
    for (name, path, len) in &files {
        digest.text(name);
        digest.number(*len);
        let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
        let nanos = modified.and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
        digest.number(nanos as u64);
    }
    let views: Vec<(String, TranscriptView)> = files
        .into_par_iter()
        .map(|(name, path, len)| {
            let view = if len > MAX_ENTRY_BYTES {
                TranscriptView {
                    problem: Some(format!("this transcript is {} MiB, too large to show", len >> 20)),
                    digest: len,
                    ..TranscriptView::default()
                }
            } else {
                match crate::fsio::read_capped(&path, MAX_ENTRY_BYTES) {
                    Ok(bytes) => view(&bytes),
                    Err(e) => TranscriptView { problem: Some(format!("{e:#}")), ..TranscriptView::default() },
                }
            };
            (name, view)
        })
        .collect();
    Ok(Transcripts {
        digest: digest.finish(),
        by_entry: views.into_iter().map(|(name, v)| (name, Arc::new(v))).collect(),
    })
}

/// One transcript file as a view; a file that is not a transcript says why.
pub fn view(bytes: &[u8]) -> TranscriptView {
    TranscriptView { digest: crate::publish::digest::of_bytes(bytes), ..parsed_view(bytes) }
}

fn parsed_view(bytes: &[u8]) -> TranscriptView {
    typed_view(bytes).unwrap_or_else(|| value_view(bytes))
}

/// A transcript as written, read in place (texts borrowed unless escaped).
#[derive(Deserialize)]
struct RawTranscript<'a> {
    #[serde(borrow)]
    system_prompt: Option<Cow<'a, str>>,
    #[serde(borrow)]
    tools: Option<Vec<Cow<'a, str>>>,
    #[serde(borrow)]
    events: Option<Vec<&'a RawValue>>,
    #[serde(borrow)]
    end: Option<RawEnd<'a>>,
}

#[derive(Deserialize)]
struct RawEnd<'a> {
    #[serde(borrow)]
    reason: Option<Cow<'a, str>>,
    #[serde(borrow)]
    detail: Option<Cow<'a, str>>,
    duration_ms: Option<f64>,
}

#[derive(Deserialize)]
struct RawEvent<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    turn: Option<u64>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    message: Option<Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    success: Option<bool>,
    #[serde(borrow, default, deserialize_with = "present")]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    result_truncated: Option<bool>,
    loop_fired: Option<bool>,
    duration_ms: Option<f64>,
    duration_us: Option<f64>,
    usage: Option<RawUsage>,
    #[serde(borrow)]
    tool_calls: Option<Vec<RawCall<'a>>>,
}

#[derive(Deserialize)]
struct RawUsage {
    prompt_tokens: Option<f64>,
    cached_tokens: Option<f64>,
    output_tokens: Option<f64>,
}

#[derive(Deserialize)]
struct RawCall<'a> {
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    arguments: Option<&'a RawValue>,
}

/// A field that is there, `null` included (which `Option` would read as
/// absent), as the `Value` reading sees it.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// The view read straight into the fields it shows, several times faster
/// than through a `Value`. `None` when a field has another type than ours
/// (or a key repeats): [`value_view`] then reads it, so both always give
/// the same view (a test compares them on every transcript of our evidence).
fn typed_view(bytes: &[u8]) -> Option<TranscriptView> {
    let raw: RawTranscript = serde_json::from_slice(bytes).ok()?;
    let events_in = raw.events.unwrap_or_default();
    let events = events_in.iter().take(MAX_EVENTS).map(|e| typed_event(e)).collect::<Option<Vec<_>>>()?;
    let end = raw.end.unwrap_or(RawEnd { reason: None, detail: None, duration_ms: None });
    Some(TranscriptView {
        digest: 0,
        problem: None,
        system_prompt: Folded::new(raw.system_prompt.as_deref().unwrap_or_default()),
        tools: raw.tools.unwrap_or_default().iter().take(200).map(|s| Shown::new(s, 100).text).collect(),
        events,
        events_omitted: events_in.len().saturating_sub(MAX_EVENTS),
        end: EndView {
            reason: Shown::new(end.reason.as_deref().unwrap_or_default(), 100).text,
            detail: Folded::new(end.detail.as_deref().unwrap_or_default()),
            duration: end.duration_ms.map(seconds).unwrap_or_default(),
        },
    })
}

/// A JSON text as [`Folded::json`] shows it.
fn folded_raw(raw: &RawValue) -> Option<Folded> {
    if raw.get().starts_with('"') {
        let text: Cow<str> = serde_json::from_str(raw.get()).ok()?;
        return Some(Folded::new(&text));
    }
    Some(Folded::json(&serde_json::from_str(raw.get()).ok()?))
}

fn typed_event(raw: &RawValue) -> Option<EventView> {
    let e: RawEvent = serde_json::from_str(raw.get()).ok()?;
    let usage = e.usage.unwrap_or(RawUsage { prompt_tokens: None, cached_tokens: None, output_tokens: None });
    let fields = EventFields {
        kind: e.kind.as_deref().unwrap_or(""),
        turn: e.turn,
        text: e.text.as_deref(),
        message: e.message.as_deref(),
        name: e.name.as_deref(),
        success: e.success,
        arguments: e.arguments,
        result: e.result,
        result_truncated: e.result_truncated,
        loop_fired: e.loop_fired,
        duration_ms: e.duration_ms,
        duration_us: e.duration_us,
        tokens: [usage.prompt_tokens, usage.cached_tokens, usage.output_tokens],
        calls: e.tool_calls.iter().flatten().map(|c| (c.name.as_deref(), c.arguments)).collect(),
        whole: raw,
    };
    event_view(fields, folded_raw)
}

/// An event's fields, however the event was read: `J` holds its JSON
/// values (arguments, results, the whole event), which `event_view` folds.
struct EventFields<'a, J> {
    kind: &'a str,
    turn: Option<u64>,
    text: Option<&'a str>,
    message: Option<&'a str>,
    name: Option<&'a str>,
    success: Option<bool>,
    arguments: Option<J>,
    result: Option<J>,
    result_truncated: Option<bool>,
    loop_fired: Option<bool>,
    duration_ms: Option<f64>,
    duration_us: Option<f64>,
    /// Prompt, cached and output tokens.
    tokens: [Option<f64>; 3],
    /// Each tool call's name and arguments.
    calls: Vec<(Option<&'a str>, Option<J>)>,
    whole: J,
}

/// One step of the conversation as shown; `None` when `fold` cannot read
/// one of its JSON values.
fn event_view<J>(e: EventFields<J>, fold: impl Fn(J) -> Option<Folded>) -> Option<EventView> {
    let mut view = EventView {
        kind: "other",
        turn: e.turn,
        meta: String::new(),
        name: None,
        success: None,
        text: None,
        calls: Vec::new(),
        arguments: None,
        result: None,
        result_truncated: false,
    };
    match e.kind {
        "user_message" => {
            view.kind = "user";
            view.text = Some(Folded::new(e.text.unwrap_or("")));
        }
        "model_call" => {
            view.kind = "model";
            let mut meta = Vec::new();
            if let Some(ms) = e.duration_ms.filter(|x| x.is_finite()) {
                meta.push(seconds(ms));
            }
            for (n, what) in e.tokens.iter().zip(["prompt tokens", "cached", "output tokens"]) {
                if let Some(n) = n {
                    meta.push(format!("{n} {what}"));
                }
            }
            view.meta = meta.join(" · ");
            view.text = e.text.filter(|t| !t.is_empty()).map(Folded::new);
            view.calls = e
                .calls
                .into_iter()
                .take(200)
                .map(|(name, arguments)| {
                    let arguments = match arguments {
                        Some(a) => fold(a)?,
                        None => Folded::default(),
                    };
                    Some(CallView { name: Shown::new(name.unwrap_or("?"), 100).text, arguments })
                })
                .collect::<Option<_>>()?;
        }
        "tool_call" => {
            view.kind = "tool";
            view.name = e.name.map(|n| Shown::new(n, 100).text);
            view.success = e.success;
            view.arguments = match e.arguments {
                Some(a) => Some(fold(a)?),
                None => None,
            };
            view.result = match e.result {
                Some(r) => Some(fold(r)?),
                None => None,
            };
            view.result_truncated = e.result_truncated.unwrap_or(false);
            let mut meta = Vec::new();
            if let Some(us) = e.duration_us.filter(|x| x.is_finite()) {
                meta.push(format!("{} ms", crate::jsnum::to_fixed(us / 1000.0, 1)));
            }
            if e.loop_fired == Some(true) {
                meta.push("loop detector fired".into());
            }
            view.meta = meta.join(" · ");
        }
        "model_error" => {
            view.kind = "error";
            view.text = Some(Folded::new(e.message.unwrap_or("")));
        }
        other => {
            view.meta = format!("event `{}`", Shown::new(other, 60).text);
            view.text = Some(fold(e.whole)?);
        }
    }
    Some(view)
}

/// The view through a `serde_json::Value`: any JSON, every field of an
/// unexpected type read as absent. What [`typed_view`] falls back to.
fn value_view(bytes: &[u8]) -> TranscriptView {
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            return TranscriptView {
                problem: Some(format!("the transcript is not valid JSON: {e}")),
                ..TranscriptView::default()
            };
        }
    };
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    let number = |v: &Value, key: &str| v.get(key).and_then(Value::as_f64);
    let events_in = value.get("events").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let events = events_in.iter().take(MAX_EVENTS).map(event).collect();
    let end = value.get("end").cloned().unwrap_or(Value::Null);
    TranscriptView {
        digest: 0,
        problem: None,
        system_prompt: Folded::new(&text(&value, "system_prompt").unwrap_or_default()),
        tools: value
            .get("tools")
            .and_then(Value::as_array)
            .map(|t| t.iter().take(200).filter_map(Value::as_str).map(|s| Shown::new(s, 100).text).collect())
            .unwrap_or_default(),
        events,
        events_omitted: events_in.len().saturating_sub(MAX_EVENTS),
        end: EndView {
            reason: Shown::new(&text(&end, "reason").unwrap_or_default(), 100).text,
            detail: Folded::new(&text(&end, "detail").unwrap_or_default()),
            duration: number(&end, "duration_ms").map(seconds).unwrap_or_default(),
        },
    }
}

fn event(e: &Value) -> EventView {
    let text = |key: &str| e.get(key).and_then(Value::as_str);
    let flag = |key: &str| e.get(key).and_then(Value::as_bool);
    let number = |key: &str| e.get(key).and_then(Value::as_f64);
    let usage = e.get("usage");
    let tokens = |key: &str| usage.and_then(|u| u.get(key)).and_then(Value::as_f64);
    let calls = e.get("tool_calls").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let fields = EventFields {
        kind: text("type").unwrap_or(""),
        turn: e.get("turn").and_then(Value::as_u64),
        text: text("text"),
        message: text("message"),
        name: text("name"),
        success: flag("success"),
        arguments: e.get("arguments"),
        result: e.get("result"),
        result_truncated: flag("result_truncated"),
        loop_fired: flag("loop_fired"),
        duration_ms: number("duration_ms"),
        duration_us: number("duration_us"),
        tokens: [tokens("prompt_tokens"), tokens("cached_tokens"), tokens("output_tokens")],
        calls: calls.iter().map(|c| (c.get("name").and_then(Value::as_str), c.get("arguments"))).collect(),
        whole: e,
    };
    event_view(fields, |v| Some(Folded::json(v))).expect("a Value always folds")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn archive(entries: &[(&str, &[u8])]) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        let mut tar =
            tar::Builder::new(flate2::write::GzEncoder::new(file.reopen().unwrap(), flate2::Compression::fast()));
        for (name, data) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            tar.append_data(&mut header, name, *data).unwrap();
        }
        tar.into_inner().unwrap().finish().unwrap().flush().unwrap();
        file
    }

    #[test]
    fn a_transcript_reads_as_a_conversation() {
        let t = br#"{"system_prompt": "be good", "tools": ["read_file"], "events": [
            {"type": "user_message", "text": "hi <b>"},
            {"type": "model_call", "turn": 1, "duration_ms": 1500, "usage": {"prompt_tokens": 10, "output_tokens": 2},
             "text": "", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.md"}}]},
            {"type": "tool_call", "turn": 1, "name": "read_file", "arguments": {"path": "a.md"}, "success": true,
             "result": {"data": "x"}, "duration_us": 1500},
            {"type": "model_error", "turn": 2, "message": "boom"},
            {"type": "surprise", "x": 1}],
            "end": {"reason": "answered", "detail": "", "duration_ms": 2000}}"#;
        let file = archive(&[("t-1.json", t), ("t-2.json", b"not json")]);
        let all = load(file.path()).unwrap();
        assert_eq!(all.len(), 2);
        let v = all.of("results/r/t-1.json").unwrap();
        let kinds: Vec<&str> = v.events.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, ["user", "model", "tool", "error", "other"]);
        assert_eq!(v.events[0].text.as_ref().unwrap().head, "hi <b>");
        assert_eq!(v.events[1].meta, "1.5 s · 10 prompt tokens · 2 output tokens");
        assert_eq!(v.events[1].calls[0].name, "read_file");
        assert!(v.events[1].calls[0].arguments.head.contains("\"path\": \"a.md\""));
        assert_eq!(v.events[2].success, Some(true));
        assert_eq!((v.end.reason.as_str(), v.end.duration.as_str()), ("answered", "2.0 s"));
        assert!(all.of("t-2.json").unwrap().problem.as_ref().unwrap().contains("not valid JSON"));
        assert!(all.of("t-3.json").is_none());
    }

    /// The typed reading gives the view the `Value` reading gives, on every
    /// transcript of our evidence and on fields that are null, of other
    /// types, repeated or unknown (those fall back to the `Value` reading).
    #[test]
    fn the_typed_reading_gives_the_same_view() {
        let mut texts: Vec<Vec<u8>> = vec![
            br#"{"events": [{"type": "tool_call", "arguments": null, "result": null, "success": null, "turn": null},
                {"type": "model_call", "tool_calls": [{"name": "x", "arguments": null}, {"arguments": "s"}], "usage": null},
                {"type": "model_call", "usage": {"prompt_tokens": 12345678901234, "output_tokens": 1.5}, "duration_ms": 1e3},
                {"type": "user_message", "text": "esc\u00e9 \"q\""}, {"type": "x", "z": [1, {"a": null}]}],
              "end": null, "tools": null, "unknown": {"deep": [1]}}"#.to_vec(),
            br#"{"events": [{"type": "tool_call", "turn": -1}]}"#.to_vec(),
            br#"{"events": [{"type": "tool_call", "turn": 1.5, "success": "yes"}]}"#.to_vec(),
            br#"{"tools": ["a", 1, "b"], "end": "over"}"#.to_vec(),
            br#"{"events": [{"type": "model_call", "text": "a", "text": "b"}]}"#.to_vec(),
            br#"{"events": [{"type": "model_call", "usage": 3, "tool_calls": {"name": "x"}}]}"#.to_vec(),
            br#"{"system_prompt": 1, "events": "none"}"#.to_vec(),
            br#"[1, 2]"#.to_vec(),
        ];
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        for entry in std::fs::read_dir(root.join("evals/baselines/evidence")).unwrap().filter_map(Result::ok) {
            for archive in std::fs::read_dir(entry.path()).unwrap().filter_map(Result::ok) {
                evidence::for_each_entry(&archive.path(), |_, _, data| {
                    let mut bytes = Vec::new();
                    data.read_to_end(&mut bytes)?;
                    texts.push(bytes);
                    Ok(())
                })
                .unwrap();
            }
        }
        assert!(texts.len() > 100, "our evidence holds the transcripts of a baseline");
        let mut typed = 0;
        for text in &texts {
            let by_value = value_view(text);
            if let Some(view) = typed_view(text) {
                assert_eq!(view, by_value, "{}", String::from_utf8_lossy(text));
                typed += 1;
            }
        }
        assert!(typed > 100, "the typed reading reads our transcripts: {typed}");
        assert!(typed_view(&texts[0]).is_some(), "null fields are read, not a reason to fall back");
        assert!(typed_view(&texts[1]).is_none() && typed_view(&texts[4]).is_none());
    }

    #[test]
    fn long_texts_fold_and_hostile_transcripts_say_why() {
        let f = Folded::new(&"é".repeat(TEXT_CHARS + 5));
        assert_eq!((f.head.chars().count(), f.rest.chars().count()), (HEAD_CHARS, TEXT_CHARS - HEAD_CHARS));
        assert_eq!((f.chars, f.omitted), (TEXT_CHARS + 5, 5));
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(view(deep.as_bytes()).problem.is_some(), "deep nesting is an error, not a crash");
        let file = archive(&[("big.json", &vec![b' '; MAX_ENTRY_BYTES as usize + 1])]);
        assert!(load(file.path()).unwrap().of("big.json").unwrap().problem.as_ref().unwrap().contains("too large"));
    }
}
