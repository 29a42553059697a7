//! The last pass over every rendered page, Markdown and generated alike:
//! inside `<main>`, each heading with an `id` gets its `#` anchor link, the
//! headings make the "On this page" outline (put where the template left the
//! `OUTLINE_MARKER`), and the text is cut into sections for the search
//! index. Doing it on the final HTML means a page added later, or a
//! template overridden on disk, gets the same anchors, outline and search
//! without further work.
//!
//! Templates steer it with three attributes: `data-search-skip` on an
//! element keeps its text out of the index (big tables that repeat what
//! other pages say), `data-search-title="..."` with an `id` makes the
//! element its own search entry (a results row, found by its model's name),
//! and `data-search-text="..."` gives such an entry its text (a sentence,
//! instead of the row's cells run together).
//!
//! The scanner reads HTML that this program wrote (templates, pulldown-cmark
//! output, the raw HTML of docs pages) and needs byte offsets to insert the
//! anchors; it knows tags, quoted attributes, comments and the raw-text
//! elements (`script`, `style`, `textarea`, `title`), which is all that
//! matters for text and headings. Malformed input yields imperfect text,
//! never a panic. It does not know what a page is; `publish::site` calls it.

use std::borrow::Cow;

use crate::publish::render::escape::escape_html;

/// Where a template wants the outline.
pub const OUTLINE_MARKER: &str = "<!--vaultbench:outline-->";

/// A heading of the page, with an id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    pub level: u8,
    pub id: String,
    pub text: String,
}

/// A run of page text under one heading (or one entry element).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Section {
    /// The fragment to link to; `None` for text before the first heading.
    pub anchor: Option<String>,
    pub title: String,
    pub text: String,
}

/// A finished page.
#[derive(Debug, Default)]
pub struct Finished {
    pub html: String,
    pub headings: Vec<Heading>,
    pub sections: Vec<Section>,
}

/// The heading levels shown in the outline, inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutlineLevels {
    pub min: u8,
    pub max: u8,
}

impl Default for OutlineLevels {
    fn default() -> Self {
        OutlineLevels { min: 2, max: 3 }
    }
}

/// An outline needs at least this many entries; shorter pages need none.
const MIN_OUTLINE_ENTRIES: usize = 3;

const RAW_TEXT: &[&str] = &["script", "style", "textarea", "title"];
/// Elements whose text is never searched (besides `data-search-skip`).
const NOT_TEXT: &[&str] = &["svg", "template", "button", "noscript"];
/// Elements that do not break a word when they start or end.
const INLINE: &[&str] =
    &["a", "abbr", "b", "code", "em", "i", "kbd", "mark", "s", "small", "span", "strong", "sub", "sup", "u", "del"];
const VOID: &[&str] =
    &["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"];

/// One tag as scanned.
struct Tag<'a> {
    /// Lowercase; borrowed from the page when it is already (the usual case,
    /// since a page has thousands of tags).
    name: Cow<'a, str>,
    closing: bool,
    self_closing: bool,
    /// The text between the name and `>`.
    attrs: &'a str,
    start: usize,
    end: usize,
}

impl Tag<'_> {
    /// The value of attribute `name`, entities of `&"'<>` decoded.
    fn attr(&self, name: &str) -> Option<String> {
        attribute(self.attrs, name)
    }
}

fn attribute(attrs: &str, name: &str) -> Option<String> {
    let bytes = attrs.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        while i < bytes.len() && (bytes[i].is_ascii_whitespace() || bytes[i] == b'/') {
            i += 1;
        }
        let start = i;
        while i < bytes.len() && !bytes[i].is_ascii_whitespace() && !matches!(bytes[i], b'=' | b'>' | b'/') {
            i += 1;
        }
        let key = &attrs[start..i];
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut value = None;
        if i < bytes.len() && bytes[i] == b'=' {
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            if i < bytes.len() && (bytes[i] == b'"' || bytes[i] == b'\'') {
                let q = bytes[i];
                let vstart = i + 1;
                i = vstart;
                while i < bytes.len() && bytes[i] != q {
                    i += 1;
                }
                value = Some(&attrs[vstart..i.min(bytes.len())]);
                i += 1;
            } else {
                let vstart = i;
                while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
                    i += 1;
                }
                value = Some(&attrs[vstart..i]);
            }
        }
        if key.eq_ignore_ascii_case(name) {
            return Some(decode_entities(value.unwrap_or("")));
        }
        if i == start {
            i += 1; // never stall on a stray character
        }
    }
    None
}

/// Whether `attrs` has the attribute `name` (lowercase ASCII); a quick
/// test on the text first, since most tags have none of the few asked for.
fn has_attribute(attrs: &str, name: &str) -> bool {
    find_ignoring_case(attrs, name).is_some() && attribute(attrs, name).is_some()
}

/// Scan the tag starting at `html[at]` (a `<`); `None` if it is not a tag.
fn scan_tag(html: &str, at: usize) -> Option<Tag<'_>> {
    let rest = &html[at + 1..];
    let closing = rest.starts_with('/');
    let name_start = at + 1 + usize::from(closing);
    let name_len = html[name_start..].find(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).unwrap_or(0);
    if name_len == 0 || !html.as_bytes()[name_start].is_ascii_alphabetic() {
        return None;
    }
    let raw = &html[name_start..name_start + name_len];
    let name = if raw.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(raw.to_ascii_lowercase())
    } else {
        Cow::Borrowed(raw)
    };
    // The closing `>`, outside quoted attribute values: from one of `>"'`
    // to the next, and over a quoted value to its closing quote.
    let bytes = html.as_bytes();
    let mut i = name_start + name_len;
    while let Some(p) = memchr::memchr3(b'>', b'"', b'\'', &bytes[i..]) {
        i += p;
        let q = bytes[i];
        if q == b'>' {
            break;
        }
        match memchr::memchr(q, &bytes[i + 1..]) {
            Some(close) => i += close + 2,
            None => {
                i = bytes.len();
                break;
            }
        }
    }
    if i < bytes.len() && bytes[i] != b'>' {
        i = bytes.len();
    }
    let end = (i + 1).min(html.len());
    let attrs = &html[name_start + name_len..i.min(html.len())];
    Some(Tag { self_closing: attrs.ends_with('/'), name, closing, attrs, start: at, end })
}

/// Where `needle` (lowercase ASCII) first occurs in `hay`, whatever the
/// case of the letters there.
fn find_ignoring_case(hay: &str, needle: &str) -> Option<usize> {
    let first = needle.as_bytes()[0];
    let bytes = hay.as_bytes();
    let mut from = 0;
    while let Some(p) = bytes[from..].iter().position(|&b| b.eq_ignore_ascii_case(&first)) {
        let at = from + p;
        if bytes.len() - at >= needle.len() && bytes[at..at + needle.len()].eq_ignore_ascii_case(needle.as_bytes()) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// Decode the entities our own escaping and pulldown-cmark produce, and
/// numeric ones; others stay as written.
pub fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(p) = rest.find('&') {
        out.push_str(&rest[..p]);
        rest = &rest[p..];
        // `;` is ASCII, so its byte position is a character boundary.
        let end = rest.as_bytes()[..rest.len().min(12)].iter().position(|&b| b == b';');
        let decoded = end.and_then(|e| {
            let entity = &rest[1..e];
            let c = match entity {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some(' '),
                _ => entity
                    .strip_prefix("#x")
                    .or_else(|| entity.strip_prefix("#X"))
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .or_else(|| entity.strip_prefix('#').and_then(|d| d.parse().ok()))
                    .and_then(char::from_u32),
            };
            c.map(|c| (c, e))
        });
        match decoded {
            Some((c, e)) => {
                out.push(c);
                rest = &rest[e + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Text being gathered, with whitespace collapsed; table cells and rows
/// (and the terms of a list of figures) are kept apart by ` · ` and `; `,
/// so a snippet reads as text, not as a row of figures run together.
#[derive(Default)]
struct TextBuf {
    text: String,
    /// A separator to put before the next word.
    pending: Option<&'static str>,
}

/// Between the cells of a table row, and between rows.
const CELL_BREAK: &str = " · ";
const ROW_BREAK: &str = "; ";

impl TextBuf {
    fn push(&mut self, text: &str) {
        for c in text.chars() {
            if c.is_whitespace() {
                self.space();
            } else {
                if let Some(sep) = self.pending.take() {
                    if self.text.ends_with(' ') {
                        self.text.pop();
                    }
                    self.text.push_str(sep);
                }
                self.text.push(c);
            }
        }
    }

    fn space(&mut self) {
        if !self.text.is_empty() && !self.text.ends_with(' ') {
            self.text.push(' ');
        }
    }

    /// A cell or row ends: the next word, if any, comes after `sep`.
    fn separate(&mut self, sep: &'static str) {
        if !self.text.is_empty() && self.pending != Some(ROW_BREAK) {
            self.pending = Some(sep);
        }
    }

    fn take(&mut self) -> String {
        self.pending = None;
        std::mem::take(&mut self.text).trim().to_string()
    }
}

/// An element being tracked until its end tag: (name, nesting of the same name).
struct Open {
    name: String,
    depth: usize,
}

impl Open {
    /// Whether `tag` ends this element (and count nesting on the way).
    fn ends_with(&mut self, tag: &Tag) -> bool {
        if *tag.name != *self.name || tag.self_closing || VOID.contains(&&*tag.name) {
            return false;
        }
        if tag.closing {
            if self.depth == 0 {
                return true;
            }
            self.depth -= 1;
        } else {
            self.depth += 1;
        }
        false
    }
}

/// Whether the pass cuts the page's text into search sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Text {
    /// Gather the text for the search index.
    Search,
    /// The page is not searched: only the headings are read (the HTML and
    /// headings come out the same, with no sections, in a fraction of the time).
    Skip,
}

/// A heading being read until its end tag.
struct OpenHeading {
    open: Open,
    level: u8,
    id: String,
    text: TextBuf,
    /// An anchor link is already in it (the page made its own).
    has_anchor: bool,
    /// It began inside a skipped element: linked and outlined, not searched.
    in_skip: bool,
}

/// Run the pass over a rendered page.
pub fn finish(html: &str, levels: OutlineLevels, mode: Text) -> Finished {
    let Some(main_open) = html.find("<main").and_then(|p| scan_tag(html, p)).filter(|t| t.name == "main") else {
        return Finished { html: html.replace(OUTLINE_MARKER, ""), ..Finished::default() };
    };
    let main_end = html.rfind("</main>").filter(|&e| e >= main_open.end).unwrap_or(html.len());

    let mut headings = Vec::new();
    let mut sections: Vec<Section> = Vec::new();
    let mut current = Section::default();
    let mut text = TextBuf::default();
    let mut insertions: Vec<(usize, String)> = Vec::new();
    // Elements whose text is skipped, the heading being read, the entry being read.
    let mut skipping: Option<Open> = None;
    let mut heading: Option<OpenHeading> = None;
    let mut entry: Option<(Open, Section, TextBuf)> = None;

    let mut at = main_open.end;
    while at < main_end {
        let Some(p) = memchr::memchr(b'<', &html.as_bytes()[at..main_end]) else {
            gather(&html[at..main_end], mode, &skipping, &mut heading, &mut entry, &mut text);
            break;
        };
        gather(&html[at..at + p], mode, &skipping, &mut heading, &mut entry, &mut text);
        at += p;
        let rest = &html[at..main_end];
        if rest.starts_with("<!--") {
            at += rest.find("-->").map_or(rest.len(), |e| e + 3);
            continue;
        }
        if rest.starts_with("<!") || rest.starts_with("<?") {
            at += rest.find('>').map_or(rest.len(), |e| e + 1);
            continue;
        }
        let Some(tag) = scan_tag(html, at) else {
            gather("<", mode, &skipping, &mut heading, &mut entry, &mut text);
            at += 1;
            continue;
        };
        at = tag.end;
        if !tag.closing && RAW_TEXT.contains(&&*tag.name) {
            let close = format!("</{}", tag.name);
            at = find_ignoring_case(&html[at..main_end], &close).map_or(main_end, |e| {
                let end_tag = at + e;
                html[end_tag..main_end].find('>').map_or(main_end, |g| end_tag + g + 1)
            });
            continue;
        }
        // A skipped element ends; inside one, only headings matter.
        if let Some(open) = &mut skipping {
            if open.ends_with(&tag) {
                skipping = None;
                continue;
            }
            if heading.is_none() && heading_level(&tag.name).is_none() {
                continue;
            }
        } else if !tag.closing
            && !tag.self_closing
            && (NOT_TEXT.contains(&&*tag.name) || has_attribute(tag.attrs, "data-search-skip"))
            && !VOID.contains(&&*tag.name)
        {
            skipping = Some(Open { name: tag.name.to_string(), depth: 0 });
            continue;
        }
        let breaks_word = !INLINE.contains(&&*tag.name);
        // A heading ends.
        if let Some(mut h) = heading.take() {
            if h.open.ends_with(&tag) {
                let (id, level) = (h.id, h.level);
                let title = h.text.take();
                if !h.has_anchor {
                    insertions.push((tag.start, anchor_link(&id, &title)));
                }
                // A heading in a skipped element is linked and outlined, not searched.
                if entry.is_none() && skipping.is_none() {
                    finish_section(&mut sections, &mut current, &mut text);
                    current = Section { anchor: Some(id.clone()), title: title.clone(), text: String::new() };
                }
                headings.push(Heading { level, id, text: title });
                continue;
            }
            h.has_anchor |= tag.name == "a" && tag.attr("class").is_some_and(|c| c.contains("anchor"));
            if breaks_word && (skipping.is_none() || h.in_skip) {
                h.text.space();
            }
            heading = Some(h);
            continue;
        }
        // An entry ends.
        if let Some((open, _, _)) = &mut entry
            && open.ends_with(&tag)
        {
            let (_, section, mut entry_text) = entry.take().expect("checked above");
            sections.push(entry_section(section, &mut entry_text));
            continue;
        }
        if !tag.closing {
            if let Some(level) = heading_level(&tag.name)
                && let Some(id) = tag.attr("id").filter(|id| !id.is_empty())
            {
                heading = Some(OpenHeading {
                    open: Open { name: tag.name.to_string(), depth: 0 },
                    level,
                    id,
                    text: TextBuf::default(),
                    has_anchor: false,
                    in_skip: skipping.is_some(),
                });
                continue;
            }
            if entry.is_none()
                && mode == Text::Search
                && skipping.is_none()
                && has_attribute(tag.attrs, "data-search-title")
                && let (Some(title), Some(id)) = (tag.attr("data-search-title"), tag.attr("id"))
            {
                // `data-search-text` is the entry's text, when it gives one.
                let text = tag.attr("data-search-text").unwrap_or_default();
                let section = Section { anchor: Some(id), title, text };
                entry = Some((Open { name: tag.name.to_string(), depth: 0 }, section, TextBuf::default()));
                continue;
            }
        }
        if breaks_word && skipping.is_none() {
            let buffer = match &mut entry {
                Some((_, _, t)) => t,
                None => &mut text,
            };
            buffer.space();
            match (tag.closing, &*tag.name) {
                (true, "td" | "th" | "dd") => buffer.separate(CELL_BREAK),
                (true, "tr") => buffer.separate(ROW_BREAK),
                (true, "table") => buffer.pending = None,
                _ => {}
            }
        }
    }
    if let Some((_, section, mut entry_text)) = entry.take() {
        sections.push(entry_section(section, &mut entry_text));
    }
    finish_section(&mut sections, &mut current, &mut text);

    // The anchors go in, and the outline in place of its marker (a comment,
    // which the scan skipped, so no anchor falls inside it), in one copy.
    let outline = outline_html(&headings, levels);
    let mut out = String::with_capacity(html.len() + insertions.len() * 64 + outline.len());
    let mut last = 0;
    let mut marker = html.find(OUTLINE_MARKER);
    for (pos, insert) in insertions.iter().map(|(p, i)| (*p, i.as_str())) {
        if let Some(m) = marker.filter(|&m| m < pos) {
            out.push_str(&html[last..m]);
            out.push_str(&outline);
            last = m + OUTLINE_MARKER.len();
            marker = None;
        }
        out.push_str(&html[last..pos]);
        out.push_str(insert);
        last = pos;
    }
    if let Some(m) = marker {
        out.push_str(&html[last..m]);
        out.push_str(&outline);
        last = m + OUTLINE_MARKER.len();
    }
    out.push_str(&html[last..]);
    if mode == Text::Skip {
        sections.clear();
    }
    Finished { html: out, headings, sections }
}

fn gather(
    raw: &str,
    mode: Text,
    skipping: &Option<Open>,
    heading: &mut Option<OpenHeading>,
    entry: &mut Option<(Open, Section, TextBuf)>,
    text: &mut TextBuf,
) {
    let in_skip = skipping.is_some();
    match heading {
        // Text of an element skipped inside the heading (a button, an svg).
        Some(h) if in_skip && !h.in_skip => return,
        None if in_skip || mode == Text::Skip => return,
        _ if raw.is_empty() => return,
        _ => {}
    }
    let decoded = if raw.contains('&') { Cow::Owned(decode_entities(raw)) } else { Cow::Borrowed(raw) };
    match (heading, entry) {
        (Some(h), _) => {
            // The `#` of an anchor link already in the heading is not its text.
            if !(h.has_anchor && decoded.trim() == "#") {
                h.text.push(&decoded);
            }
        }
        (None, Some((_, _, t))) => t.push(&decoded),
        (None, None) => text.push(&decoded),
    }
}

/// An entry's section: its own `data-search-text`, else the text gathered in it.
fn entry_section(mut section: Section, gathered: &mut TextBuf) -> Section {
    let gathered = gathered.take();
    if section.text.is_empty() {
        section.text = gathered;
    }
    section
}

fn finish_section(sections: &mut Vec<Section>, current: &mut Section, text: &mut TextBuf) {
    let mut section = std::mem::take(current);
    section.text = text.take();
    if section.anchor.is_some() || !section.text.is_empty() {
        sections.push(section);
    }
}

fn heading_level(name: &str) -> Option<u8> {
    match name.as_bytes() {
        [b'h', d @ b'1'..=b'6'] => Some(d - b'0'),
        _ => None,
    }
}

/// The `#` link after a heading's text.
pub fn anchor_link(id: &str, title: &str) -> String {
    format!(
        " <a class=\"anchor\" href=\"#{}\" aria-label=\"Link to the section {}\">#</a>",
        escape_html(id),
        escape_html(title)
    )
}

/// The outline of `headings` within `levels`, or nothing for a short page.
pub fn outline_html(headings: &[Heading], levels: OutlineLevels) -> String {
    let entries: Vec<&Heading> = headings.iter().filter(|h| h.level >= levels.min && h.level <= levels.max).collect();
    if entries.len() < MIN_OUTLINE_ENTRIES {
        return String::new();
    }
    let mut html =
        String::from("<nav class=\"outline\" aria-label=\"On this page\"><details><summary>On this page</summary><ul>");
    for h in entries {
        html.push_str(&format!(
            "<li class=\"outline-{}\"><a href=\"#{}\">{}</a></li>",
            h.level - levels.min + 1,
            escape_html(&h.id),
            escape_html(&h.text)
        ));
    }
    html.push_str("</ul></details></nav>");
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(main: &str) -> String {
        format!(
            "<html><head><title>T</title></head><body><nav><h2 id=\"nav\">Nav</h2></nav>{OUTLINE_MARKER}<main class=\"content\">{main}</main><footer>f</footer></body></html>"
        )
    }

    #[test]
    fn headings_get_anchors_and_make_the_outline() {
        let f = finish(
            &page(
                "<h1 id=\"top\">Title</h1><p>Intro &amp; more</p><h2 id=\"a\">First <code>x</code></h2><p>one</p><h3 id=\"b\">Sub</h3><p>two</p><h2>No id</h2><h2 id=\"c\">Third</h2>",
            ),
            OutlineLevels::default(),
            Text::Search,
        );
        assert!(f.html.contains("<h2 id=\"a\">First <code>x</code> <a class=\"anchor\" href=\"#a\""), "{}", f.html);
        assert!(f.html.contains("<h1 id=\"top\">Title <a class=\"anchor\" href=\"#top\""), "{}", f.html);
        assert!(!f.html.contains("href=\"#nav\""), "outside main is left alone");
        assert_eq!(
            f.headings.iter().map(|h| (h.level, h.id.as_str(), h.text.as_str())).collect::<Vec<_>>(),
            [(1, "top", "Title"), (2, "a", "First x"), (3, "b", "Sub"), (2, "c", "Third")]
        );
        assert!(f.html.contains("<li class=\"outline-1\"><a href=\"#a\">First x</a></li><li class=\"outline-2\"><a href=\"#b\">Sub</a></li>"), "{}", f.html);
        assert!(!f.html.contains(OUTLINE_MARKER));
        let titles: Vec<_> = f.sections.iter().map(|s| (s.title.as_str(), s.text.as_str())).collect();
        assert_eq!(titles, [("Title", "Intro & more"), ("First x", "one"), ("Sub", "two No id"), ("Third", "")]);
    }

    #[test]
    fn a_short_page_has_no_outline_and_existing_anchors_are_kept() {
        let f = finish(
            &page("<h2 id=\"a\">A <a class=\"anchor\" href=\"#a\">#</a></h2><h2 id=\"b\">B</h2>"),
            OutlineLevels::default(),
            Text::Search,
        );
        assert_eq!(f.html.matches("class=\"anchor\"").count(), 2);
        assert!(!f.html.contains("<nav class=\"outline\""));
        assert_eq!(f.headings[0].text, "A");
    }

    #[test]
    fn skipped_text_entries_scripts_and_comments() {
        let f = finish(
            &page(
                "<h2 id=\"t\">Table</h2><p>before</p><table data-search-skip><tr><td>hidden <table><tr><td>x</td></tr></table> still</td></tr></table><p>after</p>\
                   <table><tr id=\"row-m\" data-search-title=\"model-x (ollama)\"><td>model-x</td><td>50%</td></tr><tr><td>plain</td></tr></table>\
                   <script>if (a < b) { document.write('<h2 id=\"no\">') }</script><!-- <h2 id=\"c\">c</h2> --><svg><text>chart</text></svg>",
            ),
            OutlineLevels::default(),
            Text::Search,
        );
        let sections: Vec<_> =
            f.sections.iter().map(|s| (s.anchor.as_deref(), s.title.as_str(), s.text.as_str())).collect();
        assert_eq!(
            sections,
            [(Some("row-m"), "model-x (ollama)", "model-x · 50%"), (Some("t"), "Table", "before after plain")]
        );
        assert_eq!(f.headings.len(), 1);
    }

    #[test]
    fn tables_read_as_text_and_an_entry_may_give_its_own() {
        let f = finish(
            &page(
                "<h2 id=\"t\">T</h2><table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td><code>x</code> y</td></tr></table><p>after</p>\
                 <table><tr id=\"r\" data-search-title=\"R\" data-search-text=\"clean &amp; short\"><td>raw</td><td>cells</td></tr></table>",
            ),
            OutlineLevels::default(),
            Text::Search,
        );
        let sections: Vec<_> =
            f.sections.iter().map(|s| (s.anchor.as_deref(), s.title.as_str(), s.text.as_str())).collect();
        assert_eq!(sections, [(Some("r"), "R", "clean & short"), (Some("t"), "T", "a · b; 1 · x y after")]);
    }

    #[test]
    fn a_heading_in_a_skipped_element_is_linked_and_outlined_not_searched() {
        let f = finish(
            &page(
                "<h2 id=\"a\">A</h2><p>one</p><div data-search-skip><h2 id=\"run-1\">Run 1 <span>solved</span></h2><p>hidden</p><h3 id=\"c\">Checks</h3></div><p>two</p>",
            ),
            OutlineLevels::default(),
            Text::Search,
        );
        assert!(
            f.html.contains("<h2 id=\"run-1\">Run 1 <span>solved</span> <a class=\"anchor\" href=\"#run-1\""),
            "{}",
            f.html
        );
        assert!(f.html.contains("href=\"#c\""), "{}", f.html);
        let outlined: Vec<_> = f.headings.iter().map(|h| (h.id.as_str(), h.text.as_str())).collect();
        assert_eq!(outlined, [("a", "A"), ("run-1", "Run 1 solved"), ("c", "Checks")]);
        assert!(f.html.contains("<nav class=\"outline\""));
        let sections: Vec<_> = f.sections.iter().map(|s| (s.title.as_str(), s.text.as_str())).collect();
        assert_eq!(sections, [("A", "one two")]);
    }

    /// The pages of the tests above, and malformed ones.
    fn samples() -> Vec<String> {
        let mut pages: Vec<String> = [
            "<h1 id=\"top\">Title</h1><p>Intro &amp; more</p><h2 id=\"a\">First <code>x</code></h2><p>one</p><h3 id=\"b\">Sub</h3><p>two</p><h2>No id</h2><h2 id=\"c\">Third</h2>",
            "<h2 id=\"a\">A <a class=\"anchor\" href=\"#a\">#</a></h2><h2 id=\"b\">B</h2>",
            "<div data-search-skip><h2 id=\"in\">Inside</h2></div><tr id=\"r\" data-search-title=\"R\"><td><h3 id=\"e\">In an entry</h3></td></tr>",
            "<script><h2 id=\"no\"></script><!-- <h2 id=\"c\">c</h2> --><h4 id=\"d\">&lt;deep&gt;</h4>",
        ]
        .iter()
        .map(|main| page(main))
        .collect();
        pages.extend(
            ["<main><h2 id=\"x\">unclosed", "<main>< <> </ </main>", "<main><div data-search-skip>"].map(String::from),
        );
        pages
    }

    #[test]
    fn a_page_not_searched_comes_out_the_same_without_sections() {
        for html in samples() {
            let searched = finish(&html, OutlineLevels::default(), Text::Search);
            let skipped = finish(&html, OutlineLevels::default(), Text::Skip);
            assert_eq!(skipped.html, searched.html, "{html}");
            assert_eq!(skipped.headings, searched.headings, "{html}");
            assert!(skipped.sections.is_empty());
        }
    }

    proptest::proptest! {
        /// Any mix of the constructs the pass knows: both modes give the same page.
        #[test]
        fn both_modes_give_the_same_page(parts in proptest::collection::vec(proptest::sample::select(vec![
            "<h2 id=\"a\">", "</h2>", "<h3 id='b'>", "</h3>", "<H2 ID=\"c\">", "<div data-search-skip>", "</div>",
            "<tr id=\"r\" data-search-title=\"R\">", "</tr>", "<script>", "</script>", "<!--", "-->", "text ",
            "&amp;", "<a class=\"anchor\" href=\"#a\">#</a>", "<code>", "</code>", "<", ">", "<br/>", "é",
        ]), 0..40)) {
            let html = page(&parts.concat());
            let searched = finish(&html, OutlineLevels::default(), Text::Search);
            let skipped = finish(&html, OutlineLevels::default(), Text::Skip);
            proptest::prop_assert_eq!(skipped.html, searched.html);
            proptest::prop_assert_eq!(skipped.headings, searched.headings);
        }
    }

    #[test]
    fn malformed_html_does_not_panic() {
        for html in [
            "<main",
            "<main>",
            "<main><h2 id=\"x\">unclosed",
            "<main><a href=\"x>",
            "<main>< <> </ </main>",
            "<main><h2 id='é'>é &#xZZ; &#1114112; &amp</h2></main>",
            "<main><script>",
            "<main><div data-search-skip>",
        ] {
            let _ = finish(html, OutlineLevels::default(), Text::Search);
        }
        assert_eq!(decode_entities("a &lt;b&gt; &#65;&#x42; &unknown; &"), "a <b> AB &unknown; &");
        assert_eq!(decode_entities("&quot;  ⚠️ x"), "\"  ⚠️ x");
        assert_eq!(decode_entities("&⚠️⚠️⚠️;"), "&⚠️⚠️⚠️;");
    }
}
