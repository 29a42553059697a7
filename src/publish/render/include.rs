//! Includes: other files' text placed into a page before anything else reads
//! it (templates, containers, Markdown), in the spellings docs folders use.
//!
//! - VitePress: `<!--@include: ./part.md-->`, with a line range (`{3,}`,
//!   `{,10}`, `{2,10}`: 1-based, inclusive), a region (`#name`: the lines
//!   between `#region name` and `#endregion name` comment markers, in any
//!   comment style) or, when the file has no such region, the section under
//!   the heading whose id is `name`; a range after a region counts within
//!   it (`#name{2,}`). `@/part.md` starts from the docs folder. A Markdown
//!   file included whole loses its frontmatter. An include inside fenced
//!   code or a code span stays as written, so a page can show the syntax.
//! - VitePress code snippets: a line `<<< ./file.ts#region{1,2 ts} [title]`
//!   becomes a fenced code block of the file (or region), in the language
//!   its extension (or the braces) names, titled by the file name.
//! - mdBook: `{{#include file}}`, `{{#include file:2}}` (line 2 only),
//!   `file:2:` (from line 2), `file::10` (up to line 10), `file:2:10`, and
//!   `file:name` (the lines between `ANCHOR: name` and `ANCHOR_END: name`,
//!   marker lines left out); `{{#rustdoc_include}}` alike. As in mdBook they
//!   are expanded anywhere, code included; `\{{#include file}}` is the text
//!   itself. Other mdBook directives (`{{#playground}}`, `{{#title}}`,
//!   `{{#template}}`...) are not supported: each is a warning and stays as
//!   text.
//!
//! Every problem is a warning naming the file and line of the directive,
//! and the directive gives no text: a missing file, a path that leaves the
//! docs folder (`..` past its top, an absolute path, a link pointing out),
//! an include of a file already being included (a cycle), nesting deeper
//! than [`MAX_DEPTH`], and a page grown past its budget ([`budget`]), which
//! keeps the work linear in the input. Nothing here can fail the build.
//!
//! It reads files only through the caller's reader, with paths it has
//! checked: relative to the docs folder, `/`-separated, no `.`, `..` or
//! empty parts. [`DocsFolder`] is that reader for a folder on disk.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::publish::Warning;
use crate::publish::render::markdown::{unique_slug, vitepress_slug};

/// Includes nested deeper than this are left out, with a warning.
pub const MAX_DEPTH: usize = 8;
/// A file larger than this is not included.
pub const MAX_FILE_BYTES: u64 = 8 << 20;
/// What a page may grow to by includes: this much ...
const BUDGET_FLOOR: usize = 8 << 20;
/// ... plus this many times its own size.
const BUDGET_FACTOR: usize = 16;

/// The most text includes may give a page of `page_len` bytes. An include
/// past it is left out with a warning; since one include adds at most one
/// file, a page never exceeds it by more than [`MAX_FILE_BYTES`].
pub fn budget(page_len: usize) -> usize {
    BUDGET_FLOOR.saturating_add(page_len.saturating_mul(BUDGET_FACTOR))
}

/// Whether `text` may hold a directive (a cheap test that lets most pages
/// skip the line scan).
pub fn applies(text: &str) -> bool {
    text.contains("@include") || text.contains("{{") || text.contains("<<<")
}

/// Where a line of the expanded text came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin<'a> {
    /// The included file (relative to the docs folder), or `None` for the page.
    pub file: Option<&'a str>,
    /// 1-based.
    pub line: usize,
}

/// A problem found while expanding, at its directive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// The included file holding the directive, or `None` for the page.
    pub file: Option<String>,
    pub line: usize,
    pub message: String,
}

/// A page with its includes expanded.
#[derive(Debug)]
pub struct Expanded<'a> {
    pub text: Cow<'a, str>,
    pub notes: Vec<Note>,
    /// Origin files: index 0 is the page.
    files: Vec<String>,
    /// (first line of the expanded text, origin file, its line there), by
    /// the first; each later line of a run counts up from it.
    runs: Vec<(usize, usize, usize)>,
}

impl Expanded<'_> {
    /// A warning about line `line` of the expanded text of the page `page`
    /// (a file of the docs folder `docs`): at that line of the page, or of
    /// the included file it came from.
    pub fn warning(&self, page: &Path, docs: &Path, line: usize, message: String) -> Warning {
        let origin = self.origin(line);
        located(page, docs, origin.file, origin.line, message)
    }

    /// The problems found while expanding, as warnings.
    pub fn note_warnings<'s>(&'s self, page: &'s Path, docs: &'s Path) -> impl Iterator<Item = Warning> + 's {
        self.notes.iter().map(move |n| located(page, docs, n.file.as_deref(), n.line, n.message.clone()))
    }

    /// Where line `line` (1-based) of the expanded text came from.
    pub fn origin(&self, line: usize) -> Origin<'_> {
        let at = self.runs.partition_point(|r| r.0 <= line);
        match at.checked_sub(1).map(|i| self.runs[i]) {
            Some((start, file, from)) => {
                Origin { file: (file > 0).then(|| self.files[file].as_str()), line: from + (line - start) }
            }
            None => Origin { file: None, line },
        }
    }
}

/// A warning at `line` of the page, or of the included file `file`
/// (relative to `docs`), naming the page it was included in.
fn located(page: &Path, docs: &Path, file: Option<&str>, line: usize, message: String) -> Warning {
    match file {
        None => Warning { file: page.to_path_buf(), line: Some(line), message },
        Some(rel) => Warning {
            file: docs.join(rel),
            line: Some(line),
            message: format!("{message} (included in {})", page.display()),
        },
    }
}

/// Expand the includes of `text`, the body of the page `page_rel` (relative
/// to the docs folder), reading files with `read`.
pub fn expand<'a>(text: &'a str, page_rel: &str, read: &mut dyn FnMut(&str) -> Result<String, String>) -> Expanded<'a> {
    if !applies(text) {
        return Expanded { text: Cow::Borrowed(text), notes: Vec::new(), files: vec![String::new()], runs: Vec::new() };
    }
    let mut expander = Expander {
        read,
        cache: HashMap::new(),
        files: vec![page_rel.to_string()],
        out: String::with_capacity(text.len()),
        out_line: 1,
        runs: Vec::new(),
        notes: Vec::new(),
        noted: HashSet::new(),
        budget: budget(text.len()),
        over_budget: false,
        stack: vec![page_rel.to_string()],
    };
    expander.process(text, 0, 1, parent(page_rel));
    let Expander { out, notes, files, runs, .. } = expander;
    let text = if out == text { Cow::Borrowed(text) } else { Cow::Owned(out) };
    Expanded { text, notes, files, runs }
}

/// A file read for including, with what selections need, found once.
struct Source {
    text: String,
    /// Byte offset of each line's start (and the text's length at the end).
    lines: Vec<usize>,
    /// Where the frontmatter ends (0 when there is none).
    body: usize,
    /// Region name -> (first line inside, the end marker's line), 0-based.
    regions: HashMap<String, (usize, usize)>,
    /// Heading id -> (the line after it, the next heading of its level or above).
    sections: HashMap<String, (usize, usize)>,
    /// mdBook anchor name -> (first line inside, the end marker's line).
    anchors: HashMap<String, (usize, usize)>,
}

impl Source {
    fn new(text: String) -> Source {
        let mut lines: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        if *lines.last().expect("one line at least") != text.len() {
            lines.push(text.len());
        }
        let body = crate::score::frontmatter::block(&text)
            .map(|yaml| {
                let end = yaml.as_ptr() as usize - text.as_ptr() as usize + yaml.len();
                text[end..].find('\n').map_or(text.len(), |i| end + i + 1)
            })
            .unwrap_or(0);
        let mut source =
            Source { text, lines, body, regions: HashMap::new(), sections: HashMap::new(), anchors: HashMap::new() };
        source.find_marks();
        source
    }

    /// The number of lines.
    fn count(&self) -> usize {
        self.lines.len() - 1
    }

    fn line(&self, i: usize) -> &str {
        &self.text[self.lines[i]..self.lines[i + 1]]
    }

    /// Regions, headings and anchors, in one pass.
    fn find_marks(&mut self) {
        let mut open_regions: HashMap<String, (usize, usize)> = HashMap::new();
        let mut open_anchors: HashMap<String, usize> = HashMap::new();
        // Headings still open: (level, id keys, first line inside).
        let mut open_headings: Vec<(usize, Vec<String>, usize)> = Vec::new();
        let mut fences = Fences::default();
        let mut regions = HashMap::new();
        let mut sections = HashMap::new();
        let mut anchors = HashMap::new();
        for i in 0..self.count() {
            let line = self.line(i);
            if let Some((end, name)) = region_marker(line) {
                if end {
                    if let Some((depth, start)) = open_regions.get_mut(name) {
                        if *depth == 0 {
                            let start = *start;
                            open_regions.remove(name);
                            regions.entry(name.to_string()).or_insert((start, i));
                        } else {
                            *depth -= 1;
                        }
                    }
                } else if let Some((depth, _)) = open_regions.get_mut(name) {
                    *depth += 1;
                } else if !regions.contains_key(name) {
                    open_regions.insert(name.to_string(), (0, i + 1));
                }
            }
            for (end, name) in anchor_markers(line) {
                if end {
                    if let Some(start) = open_anchors.remove(name) {
                        anchors.entry(name.to_string()).or_insert((start, i));
                    }
                } else if !anchors.contains_key(name) {
                    open_anchors.entry(name.to_string()).or_insert(i + 1);
                }
            }
            if fences.step(line) {
                continue;
            }
            if let Some((level, keys)) = heading(line) {
                while open_headings.last().is_some_and(|h| h.0 >= level) {
                    let (_, keys, start) = open_headings.pop().expect("checked");
                    for key in keys {
                        sections.entry(key).or_insert((start, i));
                    }
                }
                open_headings.push((level, keys, i + 1));
            }
        }
        for (_, keys, start) in open_headings {
            for key in keys {
                sections.entry(key).or_insert((start, self.count()));
            }
        }
        (self.regions, self.sections, self.anchors) = (regions, sections, anchors);
    }
}

/// A fenced code block tracker, a line at a time.
#[derive(Default)]
pub(crate) struct Fences {
    /// The open fence: (character, length, indent).
    open: Option<(u8, usize, usize)>,
}

impl Fences {
    /// Whether a block is open (before the next line).
    pub(crate) fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// Whether `line` is part of fenced code (a fence line included).
    pub(crate) fn step(&mut self, line: &str) -> bool {
        let body = line.trim_start_matches(' ');
        let indent = line.len() - body.len();
        let run = |c: u8| body.bytes().take_while(|&b| b == c).count();
        match self.open {
            Some((c, len, at)) => {
                let n = run(c);
                if indent <= at + 3 && n >= len && body[n..].trim().is_empty() {
                    self.open = None;
                }
                true
            }
            None => {
                for c in [b'`', b'~'] {
                    let n = run(c);
                    if n >= 3 && indent <= 3 && !(c == b'`' && body[n..].contains('`')) {
                        self.open = Some((c, n, indent));
                        return true;
                    }
                }
                false
            }
        }
    }
}

/// A `#region name` / `#endregion name` marker line, in any comment style
/// (`<!-- #region x -->`, `// #region x`, `/* #region x */`, `# region x`,
/// `#pragma region x`, `::#region x`): (is the end, name).
fn region_marker(line: &str) -> Option<(bool, &str)> {
    let mut s = line.trim();
    for (open, close) in [("<!--", "-->"), ("/*", "*/")] {
        if let Some(inner) = s.strip_prefix(open).and_then(|x| x.strip_suffix(close)) {
            s = inner.trim();
        }
    }
    for prefix in ["//", "::", "--", "'", ";", "%"] {
        if let Some(rest) = s.strip_prefix(prefix) {
            s = rest.trim_start();
            break;
        }
    }
    s = s.strip_prefix("#pragma").unwrap_or(s).trim_start();
    s = s.strip_prefix('#').unwrap_or(s).trim_start();
    let lower = |n: usize| s.get(..n).map(str::to_ascii_lowercase);
    let (end, rest) = if lower(9).as_deref() == Some("endregion") {
        (true, &s[9..])
    } else if lower(10).as_deref() == Some("end region") {
        (true, &s[10..])
    } else if lower(6).as_deref() == Some("region") {
        (false, &s[6..])
    } else {
        return None;
    };
    let name = rest.strip_prefix([' ', '\t'])?.trim();
    let valid = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '*'));
    valid.then_some((end, name))
}

/// mdBook's `ANCHOR: name` and `ANCHOR_END: name` markers on a line.
fn anchor_markers(line: &str) -> Vec<(bool, &str)> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(p) = rest.find("ANCHOR") {
        let after = &rest[p + 6..];
        let (end, after) = match after.strip_prefix("_END") {
            Some(a) => (true, a),
            None => (false, after),
        };
        let Some(after) = after.strip_prefix(':') else {
            rest = &rest[p + 6..];
            continue;
        };
        let after = after.trim_start();
        let len = after.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-')).unwrap_or(after.len());
        if len > 0 {
            found.push((end, &after[..len]));
        }
        rest = &after[len..];
    }
    found
}

/// An ATX heading line: (level, the ids it answers to).
fn heading(line: &str) -> Option<(usize, Vec<String>)> {
    let body = line.trim_end_matches(['\n', '\r']);
    let trimmed = body.trim_start_matches(' ');
    if body.len() - trimmed.len() > 3 {
        return None;
    }
    let level = trimmed.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &trimmed[level..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let mut title = rest.trim();
    if let Some(open) = title.rfind("{#").filter(|_| title.ends_with('}')) {
        let id = title[open + 2..title.len() - 1].trim().to_string();
        return Some((level, vec![id]));
    }
    title = title.trim_end_matches('#').trim_end();
    let plain: String = title.chars().filter(|c| !matches!(c, '`' | '*' | '_')).collect();
    Some((level, vec![vitepress_slug(&plain), unique_slug(&plain, &HashSet::new(), &mut HashMap::new())]))
}

/// The folder of a docs-relative path, with a trailing `/` (or "").
fn parent(rel: &str) -> &str {
    rel.rfind('/').map_or("", |i| &rel[..=i])
}

/// `target` (as written in a directive) resolved against `dir` (a folder
/// of the docs, "" or ending in `/`), or why it may not be read. `@` or
/// `@/` starts from the docs folder.
pub fn resolve(dir: &str, target: &str) -> Result<String, String> {
    let (base, path) = match target.strip_prefix('@') {
        Some(rest) => ("", rest.strip_prefix('/').unwrap_or(rest)),
        None => (dir, target),
    };
    if path.is_empty() {
        return Err("names no file".into());
    }
    if path.starts_with(['/', '\\']) || path.contains(':') || path.contains('\0') {
        return Err(format!("`{target}` is an absolute path; includes stay inside the docs folder"));
    }
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    for part in path.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(format!("`{target}` leads outside the docs folder"));
                }
            }
            part => parts.push(part),
        }
    }
    if parts.is_empty() {
        return Err(format!("`{target}` names no file"));
    }
    Ok(parts.join("/"))
}

/// What a directive selects of its file.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Select {
    Whole,
    /// VitePress: region or heading id, then 1-based inclusive line range.
    Part {
        name: Option<String>,
        from: Option<usize>,
        to: Option<usize>,
    },
    /// mdBook: an anchor.
    Anchor(String),
}

/// A VitePress include's argument: (path, selection).
fn vitepress_arg(arg: &str) -> (&str, Select) {
    let mut path = arg.trim();
    let mut range = None;
    if let Some(open) = path.rfind('{').filter(|_| path.ends_with('}')) {
        let inner = &path[open + 1..path.len() - 1];
        if let Some((a, b)) = inner.split_once(',') {
            let number = |s: &str| -> Option<Option<usize>> {
                let s = s.trim();
                if s.is_empty() { Some(None) } else { s.parse().ok().map(Some) }
            };
            if let (Some(a), Some(b)) = (number(a), number(b)) {
                range = Some((a, b));
                path = &path[..open];
            }
        }
    }
    let mut name = None;
    if let Some(hash) = path.rfind('#') {
        let candidate = &path[hash + 1..];
        if !candidate.is_empty() && candidate.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-') {
            name = Some(candidate.to_string());
            path = &path[..hash];
        }
    }
    let select = match (name, range) {
        (None, None) => Select::Whole,
        (name, range) => {
            let (from, to) = range.unwrap_or((None, None));
            Select::Part { name, from, to }
        }
    };
    (path.trim(), select)
}

/// An mdBook include's argument: (path, selection).
fn mdbook_arg(arg: &str) -> Result<(&str, Select), String> {
    let target = arg.split_whitespace().next().unwrap_or("");
    let mut parts = target.splitn(3, ':');
    let path = parts.next().unwrap_or("");
    let number = |s: &str| s.parse::<usize>().map_err(|_| format!("`{s}` is not a line number"));
    let select = match (parts.next(), parts.next()) {
        (None, _) => Select::Whole,
        (Some(a), None) if !a.is_empty() && !a.bytes().all(|b| b.is_ascii_digit()) => Select::Anchor(a.to_string()),
        (Some(a), None) => {
            let n = number(a)?;
            Select::Part { name: None, from: Some(n), to: Some(n) }
        }
        (Some(a), Some(b)) => {
            let from = if a.is_empty() { None } else { Some(number(a)?) };
            let to = if b.is_empty() { None } else { Some(number(b)?) };
            Select::Part { name: None, from, to }
        }
    };
    Ok((path, select))
}

/// A VitePress `<<<` snippet line's argument: (path, selection, language, title).
fn snippet_arg(arg: &str) -> (&str, Option<String>, Option<String>, Option<String>) {
    let mut rest = arg.trim();
    let mut title = None;
    if let Some(open) = rest.rfind(" [").filter(|_| rest.ends_with(']')) {
        title = Some(rest[open + 2..rest.len() - 1].trim().to_string()).filter(|t| !t.is_empty());
        rest = rest[..open].trim_end();
    }
    let mut lang = None;
    if let Some(open) = rest.rfind('{').filter(|_| rest.ends_with('}')) {
        let meta = &rest[open + 1..rest.len() - 1];
        lang = meta
            .split_whitespace()
            .map(|w| w.split(':').next().unwrap_or(w))
            .find(|w| !w.is_empty() && !w.bytes().all(|b| b.is_ascii_digit() || b == b',' || b == b'-'))
            .map(str::to_string);
        rest = rest[..open].trim_end();
    }
    let mut region = None;
    if let Some(hash) = rest.rfind('#') {
        let candidate = &rest[hash + 1..];
        if !candidate.is_empty() && candidate.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-') {
            region = Some(candidate.to_string());
            rest = &rest[..hash];
        }
    }
    (rest, region, lang, title)
}

/// A directive found on a line.
enum Directive<'l> {
    /// `<!--@include: arg-->`.
    VitePress(&'l str),
    /// `{{#name arg}}`.
    MdBook { name: &'l str, arg: &'l str },
    /// `\{{#name arg}}`: the text without its backslash.
    Escaped(&'l str),
}

struct Expander<'r> {
    read: &'r mut dyn FnMut(&str) -> Result<String, String>,
    /// Files read, by docs-relative path.
    cache: HashMap<String, Result<Rc<Source>, String>>,
    files: Vec<String>,
    out: String,
    /// The line `out` ends on, 1-based.
    out_line: usize,
    runs: Vec<(usize, usize, usize)>,
    notes: Vec<Note>,
    noted: HashSet<(usize, usize, String)>,
    budget: usize,
    over_budget: bool,
    /// The page and the files being included, outermost first.
    stack: Vec<String>,
}

impl Expander<'_> {
    /// Append `text`, which starts at line `line` of origin file `file`.
    fn emit(&mut self, text: &str, file: usize, line: usize) {
        if text.is_empty() {
            return;
        }
        // Without runs, a line is the page's line of the same number.
        let expected = match self.runs.last() {
            Some(&(start, f, from)) => (f, from + (self.out_line - start)),
            None => (0, self.out_line),
        };
        if expected != (file, line) {
            self.runs.push((self.out_line, file, line));
        }
        self.out.push_str(text);
        self.out_line += text.bytes().filter(|&b| b == b'\n').count();
    }

    /// A problem at a directive; the same one again at the same place (a
    /// line of a thousand broken includes, a file included many times) is
    /// told once.
    fn note(&mut self, file: usize, line: usize, message: String) {
        if self.noted.insert((file, line, message.clone())) {
            let file = (file > 0).then(|| self.files[file].clone());
            self.notes.push(Note { file, line, message });
        }
    }

    /// Expand `text`, which is origin file `file` from its line `first`; its
    /// relative paths start from `dir`.
    fn process(&mut self, text: &str, file: usize, first: usize, dir: &str) {
        let mut fences = Fences::default();
        for (i, line) in text.split_inclusive('\n').enumerate() {
            let number = first + i;
            let in_code = fences.step(line);
            if !in_code && self.snippet(line, file, number, dir) {
                continue;
            }
            self.line(line, file, number, dir, in_code);
        }
    }

    /// One line: its directives expanded, the rest copied.
    fn line(&mut self, line: &str, file: usize, number: usize, dir: &str, in_code: bool) {
        let mut copied = 0;
        let mut at = 0;
        let mut vitepress = !in_code && line.contains("@include");
        let mut mdbook = line.contains("{{#") || line.contains("{{ ");
        // The next `-->` and `}` at or after the candidate being read: each
        // is searched for again only once passed, so a line full of
        // openers is read once, not once per opener.
        let mut close_comment: Option<Option<usize>> = None;
        let mut close_brace: Option<Option<usize>> = None;
        let mut spans: Option<Vec<(usize, usize)>> = None;
        while vitepress || mdbook {
            let next_vp = if vitepress { line[at..].find("<!--").map(|p| at + p) } else { None };
            let next_md = if mdbook { line[at..].find("{{").map(|p| at + p) } else { None };
            let (start, directive, end) = match (next_vp, next_md) {
                (None, None) => break,
                (Some(v), m) if m.is_none_or(|m| v < m) => {
                    at = v + 4;
                    let Some(arg_at) = include_argument(&line[v..]).map(|a| v + a) else { continue };
                    if close_comment.is_none_or(|c| c.is_some_and(|c| c < arg_at)) {
                        close_comment = Some(line[arg_at..].find("-->").map(|c| arg_at + c));
                    }
                    let Some(Some(close)) = close_comment else {
                        vitepress = false; // no `-->` left on the line
                        continue;
                    };
                    let arg = line[arg_at..close].trim();
                    let spans = spans.get_or_insert_with(|| code_spans(line));
                    if arg.is_empty() || spans.iter().any(|&(s, e)| s <= v && v < e) {
                        continue;
                    }
                    (v, Directive::VitePress(arg), close + 3)
                }
                (_, Some(m)) => {
                    at = m + 2;
                    let Some((name, arg_at)) = directive_name(&line[m..]).map(|(n, a)| (n, m + a)) else { continue };
                    if close_brace.is_none_or(|c| c.is_some_and(|c| c < arg_at)) {
                        close_brace = Some(line[arg_at..].find('}').map(|c| arg_at + c));
                    }
                    let Some(Some(close)) = close_brace else {
                        mdbook = false; // no `}` left on the line
                        continue;
                    };
                    let arg = line[arg_at..close].trim();
                    if !line[close..].starts_with("}}") || arg.is_empty() {
                        continue;
                    }
                    if m > 0 && line.as_bytes()[m - 1] == b'\\' {
                        (m - 1, Directive::Escaped(&line[m..close + 2]), close + 2)
                    } else {
                        (m, Directive::MdBook { name, arg }, close + 2)
                    }
                }
                (Some(_), None) => unreachable!("the first arm takes it"),
            };
            self.emit(&line[copied..start], file, number);
            match directive {
                Directive::VitePress(arg) => {
                    let (path, select) = vitepress_arg(arg);
                    self.include(path, select, file, number, dir, true);
                }
                Directive::MdBook { name: "include" | "rustdoc_include", arg } => match mdbook_arg(arg) {
                    Ok((path, select)) => self.include(path, select, file, number, dir, false),
                    Err(why) => self.note(file, number, format!("`{{{{#include {arg}}}}}`: {why}")),
                },
                Directive::MdBook { name, arg } => {
                    self.note(
                        file,
                        number,
                        format!(
                            "the mdBook directive `{{{{#{name} {arg}}}}}` is not supported (only `{{{{#include}}}}` and \
                             `{{{{#rustdoc_include}}}}` are); it is shown as text"
                        ),
                    );
                    self.literal(&line[start..end], file, number);
                }
                Directive::Escaped(text) => self.literal(text, file, number),
            }
            copied = end;
            at = end;
        }
        self.emit(&line[copied..], file, number);
    }

    /// `{{#...}}` text shown as written: templates must not read it (`{#`
    /// opens a template comment).
    /// (A directive holds no `}` before its end, so no `{% endraw %}`.)
    fn literal(&mut self, text: &str, file: usize, number: usize) {
        self.emit(&format!("{{% raw %}}{text}{{% endraw %}}"), file, number);
    }

    /// A `<<<` snippet line: a fenced code block of the file. False when
    /// the line is not one.
    fn snippet(&mut self, line: &str, file: usize, number: usize, dir: &str) -> bool {
        let body = line.trim_start_matches(' ');
        let opens = body.strip_prefix("<<<").is_some_and(|r| r.starts_with([' ', '\t', '@', '.']));
        if line.len() - body.len() > 3 || !opens {
            return false;
        }
        let (path, region, lang, title) = snippet_arg(body[3..].trim_end_matches(['\n', '\r']));
        let Some((source, rel, index)) = self.open(path, file, number, dir) else {
            return true;
        };
        let (from, to) = match &region {
            Some(name) => match source.regions.get(name) {
                Some(&(a, b)) => (a, b),
                None => {
                    self.note(file, number, format!("`{path}` has no region `{name}`; the whole file is shown"));
                    (0, source.count())
                }
            },
            None => (0, source.count()),
        };
        let mut code = String::new();
        for i in from..to {
            let l = source.line(i);
            if region_marker(l).is_none() {
                code.push_str(l);
            }
        }
        let code = dedent(&code);
        let lang = lang.unwrap_or_else(|| rel.rsplit_once('.').map(|(_, ext)| ext.to_string()).unwrap_or_default());
        let title = title.unwrap_or_else(|| rel.rsplit('/').next().unwrap_or(&rel).to_string());
        let longest = code.split(|c| c != '`').map(str::len).max().unwrap_or(0);
        let fence = "`".repeat((longest + 1).max(3));
        let title = title.replace(['[', ']', '\n'], "");
        self.emit(&format!("{fence}{lang} [{title}]\n"), file, number);
        let trailing = if code.is_empty() || code.ends_with('\n') { "" } else { "\n" };
        self.emit(&code, index, from + 1);
        self.emit(&format!("{trailing}{fence}\n"), file, number);
        self.stack.pop();
        true
    }

    /// Read the file a directive names and enter it: (its text, its path,
    /// its origin index). `None` (with a note) when it may not be included;
    /// on `Some`, the caller pops the stack when done.
    fn open(&mut self, target: &str, file: usize, number: usize, dir: &str) -> Option<(Rc<Source>, String, usize)> {
        let rel = match resolve(dir, target) {
            Ok(rel) => rel,
            Err(why) => {
                self.note(file, number, format!("include not expanded: {why}"));
                return None;
            }
        };
        if self.out.len() >= self.budget {
            if !self.over_budget {
                self.over_budget = true;
                self.note(
                    file,
                    number,
                    format!(
                        "includes made this page larger than {} MiB: `{target}` and later includes are left out",
                        self.budget >> 20
                    ),
                );
            }
            return None;
        }
        if self.stack.contains(&rel) {
            let chain = self.stack.join(" → ");
            self.note(file, number, format!("`{target}` includes itself ({chain} → {rel}); left out"));
            return None;
        }
        if self.stack.len() > MAX_DEPTH {
            self.note(file, number, format!("includes nested deeper than {MAX_DEPTH}: `{target}` is left out"));
            return None;
        }
        let read = &mut self.read;
        let source = self.cache.entry(rel.clone()).or_insert_with(|| read(&rel).map(|t| Rc::new(Source::new(t))));
        let source = match source {
            Ok(s) => Rc::clone(s),
            Err(why) => {
                let why = why.clone();
                self.note(file, number, format!("cannot include `{target}`: {why}"));
                return None;
            }
        };
        let index = match self.files.iter().position(|f| *f == rel) {
            Some(i) => i,
            None => {
                self.files.push(rel.clone());
                self.files.len() - 1
            }
        };
        self.stack.push(rel.clone());
        Some((source, rel, index))
    }

    /// Expand one include directive.
    fn include(&mut self, target: &str, select: Select, file: usize, number: usize, dir: &str, vitepress: bool) {
        let Some((source, rel, index)) = self.open(target, file, number, dir) else {
            return;
        };
        let count = source.count();
        let (mut from, mut to) = (0, count);
        let mut whole = false;
        match &select {
            Select::Whole => whole = true,
            Select::Part { name, from: a, to: b } => {
                if let Some(name) = name {
                    match source.regions.get(name).or_else(|| source.sections.get(name)) {
                        Some(&(x, y)) => (from, to) = (x, y),
                        None => self.note(
                            file,
                            number,
                            format!("`{target}` has no region or heading `{name}`; the whole file is included"),
                        ),
                    }
                }
                let span = to - from;
                let start = a.map_or(0, |a| a.saturating_sub(1)).min(span);
                let end = b.map_or(span, |b| b.min(span)).max(start);
                (from, to) = (from + start, from + end);
            }
            Select::Anchor(name) => match source.anchors.get(name) {
                Some(&(x, y)) => (from, to) = (x, y),
                None => {
                    self.note(file, number, format!("`{target}` has no anchor `{name}` (ANCHOR: {name}); left out"));
                    (from, to) = (0, 0);
                }
            },
        }
        let child_dir = parent(&rel).to_string();
        let mut start = source.lines[from];
        if whole && vitepress && rel.ends_with(".md") {
            start = start.max(source.body);
        }
        let first = source.text[..start].bytes().filter(|&b| b == b'\n').count() + 1;
        let end = source.lines[to];
        let mut text = Cow::Borrowed(&source.text[start..end.max(start)]);
        if let Select::Anchor(_) = select {
            text = Cow::Owned(text.split_inclusive('\n').filter(|l| anchor_markers(l).is_empty()).collect());
        }
        let mut text = text.as_ref();
        if !whole {
            // A part ends where its last line does, as VitePress and mdBook join lines.
            text = text.strip_suffix('\n').map_or(text, |t| t.strip_suffix('\r').unwrap_or(t));
        }
        self.process(text, index, first, &child_dir);
        self.stack.pop();
    }
}

/// Where the argument of `<!--@include:` at the start of `s` begins, if
/// `s` opens an include.
fn include_argument(s: &str) -> Option<usize> {
    let rest = s.strip_prefix("<!--")?.trim_start();
    let rest = rest.strip_prefix("@include:")?;
    Some(s.len() - rest.len())
}

/// `{{#name ` at the start of `s`: (name, where its argument begins).
fn directive_name(s: &str) -> Option<(&str, usize)> {
    let rest = s.strip_prefix("{{")?.trim_start();
    let rest = rest.strip_prefix('#')?;
    let name_len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
    let after = &rest[name_len..];
    if name_len == 0 || !after.starts_with(char::is_whitespace) {
        return None;
    }
    Some((&rest[..name_len], s.len() - after.len()))
}

/// The code spans of a line, as byte ranges (a span that does not close on
/// the line is not one).
pub(crate) fn code_spans(line: &str) -> Vec<(usize, usize)> {
    let bytes = line.as_bytes();
    let mut spans = Vec::new();
    let mut open: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i] == b'`' {
            i += 1;
        }
        let run = i - start;
        match open {
            Some((s, n)) if n == run => {
                spans.push((s, i));
                open = None;
            }
            Some(_) => {}
            None => open = Some((start, run)),
        }
    }
    spans
}

/// Lines less their common leading whitespace.
fn dedent(code: &str) -> String {
    let indent = code
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches([' ', '\t']).len())
        .min()
        .unwrap_or(0);
    if indent == 0 {
        return code.to_string();
    }
    code.split_inclusive('\n')
        .map(|l| if l.trim().is_empty() { l.trim_start_matches([' ', '\t']) } else { &l[indent..] })
        .collect()
}

/// Files of a docs folder on disk, for [`expand`]: a path that leads
/// outside the folder through a link, a folder, a file over
/// [`MAX_FILE_BYTES`] or text that is not UTF-8 is refused with the reason.
pub struct DocsFolder {
    root: PathBuf,
    /// The folder with its links resolved.
    real: Option<PathBuf>,
}

impl DocsFolder {
    pub fn new(root: &Path) -> DocsFolder {
        DocsFolder { root: root.to_path_buf(), real: root.canonicalize().ok() }
    }

    /// The text of `rel` (a path [`resolve`] gave).
    pub fn read(&self, rel: &str) -> Result<String, String> {
        let path = self.root.join(rel);
        let real = path.canonicalize().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => "no such file in the docs folder".to_string(),
            _ => e.to_string(),
        })?;
        if !self.real.as_ref().is_some_and(|root| real.starts_with(root)) {
            return Err("it links to a file outside the docs folder".into());
        }
        let meta = std::fs::metadata(&real).map_err(|e| e.to_string())?;
        if !meta.is_file() {
            return Err("it is not a file".into());
        }
        if meta.len() > MAX_FILE_BYTES {
            return Err(format!("it is larger than {} MiB", MAX_FILE_BYTES >> 20));
        }
        let bytes = std::fs::read(&real).map_err(|e| e.to_string())?;
        String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Expand with files from a table; the reader records every path asked for.
    fn run(page: &str, files: &[(&str, &str)]) -> (String, Vec<Note>, Vec<String>) {
        let mut asked = Vec::new();
        let table: HashMap<String, String> = files.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let mut read = |rel: &str| {
            asked.push(rel.to_string());
            table.get(rel).cloned().ok_or_else(|| "no such file".to_string())
        };
        let e = expand(page, "guide/page.md", &mut read);
        let (text, notes) = (e.text.into_owned(), e.notes);
        (text, notes, asked)
    }

    const PART: &str = "Some getting started stuff.\n\n### Configuration\n\nCan be created using `.foorc.json`.\n";

    #[test]
    fn vitepress_includes_whole_files_ranges_and_regions() {
        let files = [("guide/parts/basics.md", PART)];
        let (text, notes, _) = run("# Docs\n\n## Basics\n\n<!--@include: ./parts/basics.md-->\n", &files);
        assert_eq!(text, format!("# Docs\n\n## Basics\n\n{PART}\n"));
        assert!(notes.is_empty(), "{notes:?}");
        let (text, _, _) = run("<!--@include: ./parts/basics.md{3,}-->\nend\n", &files);
        assert_eq!(text, "### Configuration\n\nCan be created using `.foorc.json`.\nend\n");
        let (text, _, _) = run("<!-- @include: @/guide/parts/basics.md{,1} -->\n", &files);
        assert_eq!(text, "Some getting started stuff.\n");
        let (text, _, _) = run("<!--@include: parts/basics.md{3,3}-->\n", &files);
        assert_eq!(text, "### Configuration\n");

        let region = "<!-- #region basic-usage -->\n## Usage Line 1\n\n## Usage Line 2\n\n## Usage Line 3\n<!-- #endregion basic-usage -->\nafter\n";
        let files = [("guide/parts/basics.md", region)];
        let (text, notes, _) = run(
            "<!--@include: ./parts/basics.md#basic-usage{,2}-->\n<!--@include: ./parts/basics.md#basic-usage{5,}-->\n",
            &files,
        );
        assert_eq!(text, "## Usage Line 1\n\n## Usage Line 3\n");
        assert!(notes.is_empty(), "{notes:?}");
        let (text, _, _) = run("<!--@include: ./parts/basics.md#basic-usage-->\n", &files);
        assert_eq!(text, "## Usage Line 1\n\n## Usage Line 2\n\n## Usage Line 3\n");
    }

    #[test]
    fn a_heading_id_selects_its_section_and_frontmatter_is_dropped() {
        let part = "---\ntitle: Part\n---\n## My Base Section\n\nSome content here.\n\n### My Sub Section\n\nMore.\n\n## Another Section {#other}\n\nOutside.\n";
        let files = [("guide/part.md", part)];
        let (text, notes, _) = run("## Mine\n<!--@include: ./part.md#my-base-section-->\n", &files);
        assert_eq!(text, "## Mine\n\nSome content here.\n\n### My Sub Section\n\nMore.\n\n");
        assert!(notes.is_empty(), "{notes:?}");
        let (text, _, _) = run("<!--@include: ./part.md#other-->", &files);
        assert_eq!(text, "\nOutside.");
        let (text, _, _) = run("<!--@include: ./part.md-->", &files);
        assert!(text.starts_with("## My Base Section") && !text.contains("title:"), "{text}");
        let (text, notes, _) = run("<!--@include: ./part.md#nowhere-->", &files);
        assert!(text.contains("title: Part"), "a missing region gives the whole file, as VitePress does: {text}");
        assert!(notes[0].message.contains("no region or heading `nowhere`"), "{notes:?}");
    }

    #[test]
    fn regions_in_other_comment_styles() {
        for (open, close) in [
            ("// #region x", "// #endregion x"),
            ("/* #region x */", "/* #endregion x */"),
            ("# region x", "# endregion x"),
            ("#pragma region x", "#pragma endregion x"),
            ("    // #region x", "  //#endregion x"),
        ] {
            let file = format!("a\n{open}\nb\nc\n{close}\nd\n");
            let (text, notes, _) = run("<!--@include: f.txt#x-->\n", &[("guide/f.txt", &file)]);
            assert_eq!(text, "b\nc\n", "{open}");
            assert!(notes.is_empty(), "{notes:?}");
        }
        assert_eq!(region_marker("<!-- #region basic -->"), Some((false, "basic")));
        assert_eq!(region_marker("// #endregion basic"), Some((true, "basic")));
        assert_eq!(region_marker("a region of text"), None);
        assert_eq!(region_marker("#regional x"), None);
    }

    #[test]
    fn includes_in_code_are_shown_as_written() {
        let files = [("guide/parts/basics.md", PART)];
        let page =
            "```md\n<!--@include: ./parts/basics.md-->\n```\n\nInline `<!--@include: ./parts/basics.md-->` too.\n";
        let (text, notes, asked) = run(page, &files);
        assert_eq!(text, page);
        assert!(notes.is_empty() && asked.is_empty(), "{notes:?} {asked:?}");
    }

    #[test]
    fn mdbook_includes_lines_ranges_and_anchors() {
        let code = "fn one() {}\n// ANCHOR: two\nfn two() {}\n// ANCHOR: inner\nfn inner() {}\n// ANCHOR_END: inner\n// ANCHOR_END: two\nfn three() {}\n";
        let files = [("guide/file.rs", code)];
        let expect = |arg: &str, want: &str| {
            let (text, notes, _) = run(&format!("```rust\n{{{{#include {arg}}}}}\n```\n"), &files);
            assert_eq!(text, format!("```rust\n{want}\n```\n"), "{arg}");
            assert!(notes.is_empty(), "{arg}: {notes:?}");
        };
        expect("file.rs:1", "fn one() {}");
        expect("file.rs::1", "fn one() {}");
        expect("file.rs:8:", "fn three() {}");
        expect("file.rs:3:3", "fn two() {}");
        expect("file.rs:two", "fn two() {}\nfn inner() {}");
        expect("file.rs:inner", "fn inner() {}");
        let (text, _, _) = run("{{#rustdoc_include file.rs:1}}\n", &files);
        assert_eq!(text, "fn one() {}\n");
        let (text, notes, _) = run("{{#include file.rs:nope}}\n", &files);
        assert_eq!(text, "\n");
        assert!(notes[0].message.contains("no anchor `nope`"), "{notes:?}");
    }

    #[test]
    fn escaped_and_unsupported_mdbook_directives_stay_as_text_templates_cannot_read() {
        let (text, notes, asked) = run("A \\{{#include file.rs}} and {{#playground x.rs editable}}.\n", &[]);
        assert_eq!(
            text,
            "A {% raw %}{{#include file.rs}}{% endraw %} and {% raw %}{{#playground x.rs editable}}{% endraw %}.\n"
        );
        assert!(asked.is_empty());
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].message.contains("`{{#playground x.rs editable}}` is not supported"), "{notes:?}");
        // What a template engine makes of it: the text as written.
        let tera = tera::Tera::new();
        let out = tera.render_str(&text, &tera::Context::new(), false).unwrap();
        assert_eq!(out, "A {{#include file.rs}} and {{#playground x.rs editable}}.\n");
        // Template syntax that is not a directive is left to the templates.
        let (text, notes, _) = run("{{ results_table() }} {{x}}\n", &[]);
        assert_eq!(text, "{{ results_table() }} {{x}}\n");
        assert!(notes.is_empty());
    }

    #[test]
    fn snippets_become_fenced_code_titled_by_the_file() {
        let file =
            "const a = 1\n  // #region snippet\n  function f() {\n    return \"```\"\n  }\n  // #endregion snippet\n";
        let files = [("snippets/snippet.js", file)];
        let (text, notes, _) = run("<<< @/snippets/snippet.js#snippet{1 ts} [Main]\nafter\n", &files);
        assert_eq!(text, "````ts [Main]\nfunction f() {\n  return \"```\"\n}\n````\nafter\n");
        assert!(notes.is_empty(), "{notes:?}");
        let (text, _, _) = run("<<< ../snippets/snippet.js\n", &files);
        assert!(text.starts_with("````js [snippet.js]\nconst a = 1\n  function"), "{text}");
    }

    #[test]
    fn paths_stay_inside_the_docs_folder() {
        assert_eq!(resolve("guide/", "../shared/x.md"), Ok("shared/x.md".into()));
        assert_eq!(resolve("guide/", "./a/./b/../c.md"), Ok("guide/a/c.md".into()));
        assert_eq!(resolve("guide/", "@/x.md"), Ok("x.md".into()));
        for bad in ["../../x.md", "/etc/passwd", "@/../x.md", "..\\..\\x", "C:/x.md", "\\\\host\\x", ""] {
            assert!(resolve("guide/", bad).is_err(), "{bad}");
        }
        let (text, notes, asked) = run("<!--@include: ../../secret.md-->\n{{#include /etc/passwd}}\n", &[]);
        assert_eq!(text, "\n\n");
        assert!(asked.is_empty(), "{asked:?}");
        assert_eq!(notes.len(), 2);
        assert!(notes[0].message.contains("leads outside the docs folder"), "{notes:?}");
        assert!(notes[1].message.contains("absolute path"), "{notes:?}");
        assert_eq!((notes[0].file.as_deref(), notes[0].line), (None, 1));
        assert_eq!(notes[1].line, 2);
    }

    #[test]
    fn cycles_and_depth_are_bounded_and_named() {
        let files = [("guide/a.md", "A\n<!--@include: ./b.md-->\n"), ("guide/b.md", "B\n{{#include a.md}}\n")];
        let (text, notes, _) = run("<!--@include: ./a.md-->\n", &files);
        assert_eq!(text, "A\nB\n\n\n\n");
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert_eq!(notes[0].file.as_deref(), Some("guide/b.md"));
        assert_eq!(notes[0].line, 2);
        assert!(notes[0].message.contains("guide/page.md → guide/a.md → guide/b.md → guide/a.md"), "{notes:?}");

        let chain: Vec<(String, String)> =
            (0..20).map(|i| (format!("guide/{i}.md"), format!("{i}\n<!--@include: ./{}.md-->\n", i + 1))).collect();
        let files: Vec<(&str, &str)> = chain.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let (text, notes, _) = run("<!--@include: ./0.md-->\n", &files);
        assert_eq!(text.lines().filter(|l| !l.is_empty()).count(), MAX_DEPTH);
        assert_eq!(notes.len(), 1);
        assert!(notes[0].message.contains("nested deeper than"), "{notes:?}");
    }

    #[test]
    fn doubling_includes_stop_at_the_budget() {
        // Each file includes the next twice: 2^20 copies unless bounded.
        let big = "x".repeat(100_000);
        let mut files: Vec<(String, String)> = (0..7)
            .map(|i| (format!("guide/{i}.md"), format!("{{{{#include {0}.md}}}}{{{{#include {0}.md}}}}\n", i + 1)))
            .collect();
        files.push(("guide/7.md".into(), big));
        let table: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let page = "<!--@include: ./0.md-->\n".repeat(4);
        let (text, notes, _) = run(&page, &table);
        assert!(text.len() <= budget(page.len()) + MAX_FILE_BYTES as usize, "{}", text.len());
        assert!(notes.iter().any(|n| n.message.contains("left out")), "{notes:?}");
    }

    #[test]
    fn lines_map_back_to_the_page_and_the_included_files() {
        let files = [("guide/part.md", "---\nx: 1\n---\np1\np2\n")];
        let page = "one\n<!--@include: ./part.md-->\nthree\n";
        let mut read = |rel: &str| {
            files.iter().find(|(k, _)| *k == rel).map(|(_, v)| v.to_string()).ok_or_else(|| "missing".to_string())
        };
        let e = expand(page, "guide/page.md", &mut read);
        assert_eq!(e.text, "one\np1\np2\n\nthree\n");
        assert_eq!(e.origin(1), Origin { file: None, line: 1 });
        assert_eq!(e.origin(2), Origin { file: Some("guide/part.md"), line: 4 });
        assert_eq!(e.origin(3), Origin { file: Some("guide/part.md"), line: 5 });
        assert_eq!(e.origin(5), Origin { file: None, line: 3 });
        let plain = expand("a\nb\n", "x.md", &mut read);
        assert!(matches!(plain.text, Cow::Borrowed(_)));
        assert_eq!(plain.origin(2), Origin { file: None, line: 2 });
    }

    #[test]
    fn a_link_out_of_the_docs_folder_is_refused_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let docs = dir.path().join("docs");
        std::fs::create_dir_all(docs.join("guide")).unwrap();
        std::fs::write(dir.path().join("secret.md"), "secret").unwrap();
        std::fs::write(docs.join("guide/part.md"), "part").unwrap();
        let folder = DocsFolder::new(&docs);
        assert_eq!(folder.read("guide/part.md").as_deref(), Ok("part"));
        assert!(folder.read("guide/none.md").unwrap_err().contains("no such file"));
        assert!(folder.read("guide").unwrap_err().contains("not a file"));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(dir.path().join("secret.md"), docs.join("guide/link.md")).unwrap();
            assert!(folder.read("guide/link.md").unwrap_err().contains("outside the docs folder"));
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn piece() -> impl Strategy<Value = String> {
            prop_oneof![
                Just("<!--@include: ".to_string()),
                Just("-->".to_string()),
                Just("{{#include ".to_string()),
                Just("{{#title x}}".to_string()),
                Just("}}".to_string()),
                Just("\\{{#".to_string()),
                Just("<<< ".to_string()),
                Just("```".to_string()),
                Just("`".to_string()),
                Just("\n".to_string()),
                Just("../".to_string()),
                Just("/".to_string()),
                Just("@/".to_string()),
                Just("a.md".to_string()),
                Just("b.md".to_string()),
                Just("#r".to_string()),
                Just("{1,2}".to_string()),
                Just(":2:".to_string()),
                Just("// #region r\n".to_string()),
                Just("// #endregion r\n".to_string()),
                Just("ANCHOR: r\n".to_string()),
                Just("## H\n".to_string()),
                "[a-z .:{}#,é]{0,6}",
            ]
        }

        fn text() -> impl Strategy<Value = String> {
            proptest::collection::vec(piece(), 0..40).prop_map(|p| p.concat())
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

            /// Any page and files: no panic, every path read is a clean
            /// path inside the docs folder, and the output is bounded.
            #[test]
            fn never_panics_and_never_reads_outside_the_docs(page in text(), a in text(), b in text()) {
                let files: HashMap<&str, String> = [("a.md", a.clone()), ("b.md", b.clone()), ("sub/a.md", a), ("sub/b.md", b)].into();
                let mut asked = Vec::new();
                let mut read = |rel: &str| {
                    asked.push(rel.to_string());
                    files.get(rel).cloned().ok_or_else(|| "missing".to_string())
                };
                let e = expand(&page, "sub/page.md", &mut read);
                for rel in &asked {
                    prop_assert!(!rel.starts_with('/') && !rel.contains('\\') && !rel.contains(':'), "{rel}");
                    prop_assert!(rel.split('/').all(|p| !p.is_empty() && p != "." && p != ".."), "{rel}");
                }
                prop_assert!(e.text.len() <= budget(page.len()) + MAX_FILE_BYTES as usize);
                let lines = e.text.lines().count().max(1);
                for line in 1..=lines {
                    let _ = e.origin(line);
                }
            }
        }
    }
}
