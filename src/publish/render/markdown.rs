//! Markdown to HTML for docs pages, with pulldown-cmark: tables, footnotes,
//! strikethrough, task lists and heading attributes (`## Title {#id}`).
//! Every heading gets an id (its explicit `{#id}`, else a GitHub-style slug
//! of its text); link and image destinations go through a caller-supplied
//! rewrite so internal `.md` links point at the generated pages; code blocks
//! are highlighted at build time; GitHub alerts and VitePress containers
//! become callouts.
//!
//! It also knows which parts of a page template processing must leave as
//! written (`shield_for_templates`): code spans, code blocks, raw HTML blocks
//! and headings with `{#id}` attributes. That is what lets a page show
//! `{{ placeholder }}` in a code sample, or carry another tool's markup, and
//! still pass through Tera unchanged.
//!
//! It does not resolve links (`publish::links`) or know about templates.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use pulldown_cmark::{BlockQuoteKind, CodeBlockKind, CowStr, Event, Options, Parser, Tag, TagEnd};

use crate::publish::render::dialect;
use crate::publish::render::escape::escape_html;
use crate::publish::render::highlight;
use crate::publish::render::vitepress::{CalloutKind, Container};

/// The Markdown dialect of docs pages.
pub fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_GFM
}

/// Whether `text` contains anything Tera would act on.
pub fn has_template_syntax(text: &str) -> bool {
    text.contains("{{") || text.contains("{%") || text.contains("{#")
}

/// `text` with every protected region that contains template delimiters
/// wrapped in `{% raw %}...{% endraw %}`. Tera removes the wrappers, so the
/// region reaches Markdown exactly as written; inserting them on one line adds
/// no lines, so template error line numbers still match the file.
///
/// A region that itself contains `endraw` is left alone (it could not be
/// wrapped); template syntax in it is then evaluated.
pub fn shield_for_templates(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut last = 0;
    for range in protected_ranges(text) {
        let region = &text[range.clone()];
        if !has_template_syntax(region) || region.contains("endraw") {
            continue;
        }
        out.push_str(&text[last..range.start]);
        out.push_str("{% raw %}");
        out.push_str(region);
        out.push_str("{% endraw %}");
        last = range.end;
    }
    out.push_str(&text[last..]);
    out
}

/// Code spans, code blocks, HTML blocks and headings carrying `{#...}`
/// attributes, in source order, not overlapping.
fn protected_ranges(text: &str) -> Vec<Range<usize>> {
    let mut ranges: Vec<Range<usize>> = Vec::new();
    for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
        if ranges.last().is_some_and(|r| range.start < r.end) {
            continue; // inside a block already protected
        }
        let protect = match &event {
            Event::Start(Tag::CodeBlock(_)) | Event::Start(Tag::HtmlBlock) | Event::Code(_) => true,
            Event::Start(Tag::Heading { .. }) => text[range.clone()].contains("{#"),
            _ => false,
        };
        if protect {
            ranges.push(range);
        }
    }
    ranges
}

/// A page rendered to HTML.
#[derive(Debug, Default)]
pub struct Rendered {
    pub html: String,
    /// The text of the first heading, a fallback title.
    pub first_heading: Option<String>,
    /// Every heading id on the page, for anchor checks.
    pub anchors: HashSet<String>,
    /// (byte offset in the text, message): problems the page should fix.
    pub warnings: Vec<(usize, String)>,
    /// The first paragraph's text, shortened: a description for pages
    /// whose frontmatter gives none.
    pub summary: Option<String>,
}

/// The longest summary, in characters.
const SUMMARY_CHARS: usize = 160;

/// `text` cut at a word boundary to at most `SUMMARY_CHARS` characters.
fn shorten(text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() <= SUMMARY_CHARS {
        return text;
    }
    let mut cut: String = text.chars().take(SUMMARY_CHARS - 1).collect();
    if let Some(space) = cut.rfind(' ') {
        cut.truncate(space);
    }
    cut.push('…');
    cut
}

/// The line of any byte offset of a text, found by a binary search over
/// where its lines start: a page with many warnings costs one pass over it,
/// not one per warning.
pub struct LineIndex(Vec<usize>);

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        LineIndex(std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect())
    }

    /// The line (from 1) holding the byte at `offset`.
    pub fn line(&self, offset: usize) -> usize {
        self.0.partition_point(|&start| start <= offset)
    }
}

/// What a block quote turned out to be.
enum Quote {
    Plain,
    /// A callout: its closing tag.
    Callout(&'static str),
}

/// Render `text` (Markdown, frontmatter already removed). `containers` are
/// the VitePress containers found by `publish::vitepress`, by the line of
/// their opening block quote. `rewrite_link` gets each link or image
/// destination and its byte offset in `text`, and returns a replacement, or
/// `None` to keep it.
///
/// Headings get ids (the `#` links are added by `publish::html` on the
/// whole page), code blocks are highlighted (`publish::highlight`), block
/// quotes that are containers or GitHub alerts (`> [!NOTE]`) become callouts.
pub fn render(
    text: &str,
    containers: &HashMap<usize, Container>,
    rewrite_link: &mut dyn FnMut(&str, usize) -> Option<String>,
) -> Rendered {
    let mut events: Vec<Event> = Vec::new();
    let mut anchors = HashSet::new();
    // The next suffix to try for each slug that repeats: a page of n equal
    // headings costs n tries, not n².
    let mut next_suffix: HashMap<String, usize> = HashMap::new();
    let mut first_heading = None;
    let mut warnings = Vec::new();
    // Headings are completed once their text is known: (index of the start event, explicit id).
    let mut open_heading: Option<usize> = None;
    let mut heading_text = String::new();
    // The code block being read: (language, its text, offset).
    let mut code: Option<(String, String, usize)> = None;
    // Its title (`` ```js [config.js] ``: a code group's tab label).
    let mut code_title: Option<String> = None;
    let mut unknown_languages: HashSet<String> = HashSet::new();
    let mut quotes: Vec<Quote> = Vec::new();
    // The first paragraph's text, while it is being read.
    let mut summary: Option<String> = None;
    let mut paragraph: Option<String> = None;
    let lines = if containers.is_empty() { LineIndex(Vec::new()) } else { LineIndex::new(text) };

    for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
        if let Some((lang, body, offset)) = &mut code {
            match event {
                Event::Text(t) => body.push_str(&t),
                Event::End(TagEnd::CodeBlock) => {
                    let (html, highlighted) = code_block(lang, code_title.take().as_deref(), body);
                    if !highlighted && !highlight::is_known(lang) && unknown_languages.insert(lang.clone()) {
                        warnings.push((
                            *offset,
                            format!("no syntax highlighting for the code language `{lang}`; the block is shown plain"),
                        ));
                    }
                    events.push(Event::Html(CowStr::from(html)));
                    code = None;
                }
                _ => {}
            }
            continue;
        }
        match (&event, &mut paragraph) {
            (Event::Start(Tag::Paragraph), None) if summary.is_none() => paragraph = Some(String::new()),
            (Event::Text(t) | Event::Code(t), Some(p)) => p.push_str(t),
            (Event::SoftBreak | Event::HardBreak, Some(p)) => p.push(' '),
            (Event::End(TagEnd::Paragraph), Some(p)) => {
                let text = shorten(p);
                paragraph = None;
                if !text.is_empty() {
                    summary = Some(text);
                }
            }
            _ => {}
        }
        let event = match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => {
                        code_title = dialect::code_title(&info);
                        highlight::language(&info)
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                code = Some((lang, String::new(), range.start));
                continue;
            }
            Event::Start(Tag::BlockQuote(kind)) => {
                let line = lines.line(range.start);
                let (open, quote) = match (containers.get(&line), kind) {
                    (Some(c), _) => callout_open(c.kind, &c.title, &c.name),
                    (None, Some(alert)) => {
                        let kind = match alert {
                            BlockQuoteKind::Note => CalloutKind::Note,
                            BlockQuoteKind::Tip => CalloutKind::Tip,
                            BlockQuoteKind::Important => CalloutKind::Important,
                            BlockQuoteKind::Warning => CalloutKind::Warning,
                            BlockQuoteKind::Caution => CalloutKind::Caution,
                        };
                        callout_open(kind, kind.default_title(), "")
                    }
                    (None, None) => {
                        quotes.push(Quote::Plain);
                        events.push(Event::Start(Tag::BlockQuote(None)));
                        continue;
                    }
                };
                quotes.push(quote);
                Event::Html(CowStr::from(open))
            }
            Event::End(TagEnd::BlockQuote(kind)) => match quotes.pop() {
                Some(Quote::Callout(close)) => Event::Html(CowStr::from(close)),
                _ => Event::End(TagEnd::BlockQuote(kind)),
            },
            Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
                let dest_url = rewrite_link(&dest_url, range.start).map(CowStr::from).unwrap_or(dest_url);
                Event::Start(Tag::Link { link_type, dest_url, title, id })
            }
            Event::Start(Tag::Image { link_type, dest_url, title, id }) => {
                let dest_url = rewrite_link(&dest_url, range.start).map(CowStr::from).unwrap_or(dest_url);
                Event::Start(Tag::Image { link_type, dest_url, title, id })
            }
            Event::Start(Tag::Heading { .. }) => {
                open_heading = Some(events.len());
                heading_text.clear();
                events.push(event);
                // Where the heading's second id goes, if it gets one: filled
                // in at its end, never inserted (an insert moves every event).
                Event::InlineHtml(CowStr::Borrowed(""))
            }
            Event::Text(ref t) | Event::Code(ref t) if open_heading.is_some() => {
                heading_text.push_str(t);
                event
            }
            Event::End(TagEnd::Heading(level)) => {
                if let Some(start) = open_heading.take() {
                    let title = heading_text.trim().to_string();
                    let (id, explicit) = match &mut events[start] {
                        Event::Start(Tag::Heading { id, .. }) => {
                            let explicit = id.is_some();
                            let chosen = match id.take() {
                                Some(explicit) => explicit.to_string(),
                                None => unique_slug(&title, &anchors, &mut next_suffix),
                            };
                            *id = Some(CowStr::from(chosen.clone()));
                            (chosen, explicit)
                        }
                        _ => unreachable!("open_heading indexes a heading start"),
                    };
                    // Pages written for VitePress link to its slugs, which
                    // differ from GitHub's on punctuation (`llama.cpp`):
                    // the heading answers to both.
                    let alias = vitepress_slug(&title);
                    if !explicit && alias != id && !alias.is_empty() && !anchors.contains(&alias) {
                        let span = format!("<span id=\"{}\"></span>", escape_html(&alias));
                        events[start + 1] = Event::InlineHtml(CowStr::from(span));
                        anchors.insert(alias);
                    }
                    anchors.insert(id);
                    if first_heading.is_none() && !title.is_empty() {
                        first_heading = Some(title);
                    }
                }
                Event::End(TagEnd::Heading(level))
            }
            other => other,
        };
        events.push(event);
    }
    let mut html = String::with_capacity(text.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    Rendered { html, first_heading, anchors, warnings, summary }
}

/// The opening HTML of a callout and how it closes.
fn callout_open(kind: CalloutKind, title: &str, name: &str) -> (String, Quote) {
    let title = escape_html(title);
    match kind {
        CalloutKind::Details => (
            format!("<details class=\"callout callout-details\"><summary>{title}</summary>\n"),
            Quote::Callout("</details>\n"),
        ),
        CalloutKind::Plain => {
            (format!("<div class=\"container-{}\">\n", escape_html(name)), Quote::Callout("</div>\n"))
        }
        _ => {
            let heading =
                if title.is_empty() { String::new() } else { format!("<p class=\"callout-title\">{title}</p>\n") };
            (
                format!("<div class=\"callout callout-{}\" role=\"note\">{heading}", kind.class()),
                Quote::Callout("</div>\n"),
            )
        }
    }
}

/// The fenced and indented code blocks of `text`, as (language, code)
/// pairs in the form `render` highlights them, for `highlight::prepare`.
pub fn code_blocks(text: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut code: Option<(String, String)> = None;
    for event in Parser::new_ext(text, options()) {
        match (event, &mut code) {
            (Event::Start(Tag::CodeBlock(kind)), _) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => highlight::language(&info),
                    CodeBlockKind::Indented => String::new(),
                };
                code = Some((lang, String::new()));
            }
            (Event::Text(t), Some((_, body))) => body.push_str(&t),
            (Event::End(TagEnd::CodeBlock), Some(_)) => blocks.extend(code.take()),
            _ => {}
        }
    }
    blocks
}

/// The fenced code blocks of a page, (language, code) as [`code_blocks`]
/// gives them, found line by line without parsing the Markdown: a fence
/// opens with three or more backticks or tildes at any indent, closes with
/// as many of the same at most as indented, and the lines between lose that
/// indent. A quarter of the time of a parse; for `highlight::prepare`, which
/// only starts early what each block's render would do anyway, so a block
/// it misses (one in a block quote) is simply highlighted when rendered.
pub fn fenced_blocks(text: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    // (indent, fence character, fence length, language, code) of the open block.
    let mut open: Option<(usize, u8, usize, String, String)> = None;
    for line in text.split_inclusive('\n') {
        let body = line.trim_start_matches(' ');
        let indent = line.len() - body.len();
        let fence = |c: u8| body.bytes().take_while(|&b| b == c).count();
        match &mut open {
            Some((at, c, len, _, code)) => {
                let n = fence(*c);
                if indent <= *at + 3 && n >= *len && body[n..].trim().is_empty() {
                    let (_, _, _, lang, code) = open.take().expect("a block is open");
                    blocks.push((lang, code));
                } else {
                    let strip = indent.min(*at);
                    code.push_str(&line[strip..]);
                }
            }
            None => {
                for c in [b'`', b'~'] {
                    let n = fence(c);
                    let info = body[n..].trim();
                    if n >= 3 && !(c == b'`' && info.contains('`')) {
                        open = Some((indent, c, n, highlight::language(info), String::new()));
                        break;
                    }
                }
            }
        }
    }
    // A block left open runs to the end of the page.
    blocks.extend(open.map(|(_, _, _, lang, code)| (lang, code)));
    blocks
}

/// A code block: highlighted when its language has a grammar (class
/// `highlighted`), escaped and plain otherwise, under its title when it
/// has one. The stylesheet shows the language; the page script adds the
/// copy button, and makes the blocks of a code group tabs labelled by
/// their titles. The block scrolls sideways, so it takes the keyboard
/// focus (`tabindex`) to scroll by keys. Also says whether it was highlighted.
pub fn code_block(lang: &str, title: Option<&str>, code: &str) -> (String, bool) {
    let (class, body, is_highlighted) = code_body(lang, code);
    let lang_attr = escape_html(lang);
    let (lang_attr, code_class) = if lang.is_empty() {
        (String::new(), String::new())
    } else {
        (format!(" data-lang=\"{lang_attr}\""), format!(" class=\"language-{lang_attr}\""))
    };
    let title = title.map_or(String::new(), |t| format!("<p class=\"code-title\">{}</p>", escape_html(t)));
    let html = format!(
        "<div class=\"{class}\"{lang_attr}>{title}<pre tabindex=\"0\"><code{code_class}>{body}</code></pre></div>\n"
    );
    (html, is_highlighted)
}

/// A block's class and HTML body, and whether it was highlighted.
fn code_body(lang: &str, code: &str) -> (&'static str, String, bool) {
    match highlight::highlight(lang, code) {
        Some(html) => ("code highlighted", html, true),
        None => ("code", escape_html(code), false),
    }
}

/// GitHub's heading slug: lower case, letters, digits, `-` and `_` kept,
/// spaces to `-`, everything else dropped; `-1`, `-2`... on repeats, the
/// search for a free one resumed from `next_suffix` (the page's own).
pub fn unique_slug(title: &str, taken: &HashSet<String>, next_suffix: &mut HashMap<String, usize>) -> String {
    let mut slug: String = title
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            c if c.is_whitespace() => Some('-'),
            _ => None,
        })
        .collect();
    if slug.is_empty() {
        slug = "section".into();
    }
    if !taken.contains(&slug) {
        return slug;
    }
    let next = next_suffix.entry(slug.clone()).or_insert(1);
    loop {
        let candidate = format!("{slug}-{next}");
        *next += 1;
        if !taken.contains(&candidate) {
            return candidate;
        }
    }
}

/// VitePress's heading slug (`@mdit-vue/shared`'s `slugify`, without its
/// Unicode normalization): runs of spaces and punctuation become one `-`,
/// no `-` at either end, a leading digit gets `_`, lower case.
pub fn vitepress_slug(title: &str) -> String {
    const SPECIAL: &str = "~`!@#$%^&*()-_+=[]{}|\\;:\"'“”‘’<>,.?/";
    let mut slug = String::with_capacity(title.len());
    for c in title.chars().filter(|c| !c.is_control()) {
        if c.is_whitespace() || SPECIAL.contains(c) {
            if !slug.ends_with('-') {
                slug.push('-');
            }
        } else {
            slug.extend(c.to_lowercase());
        }
    }
    let slug = slug.trim_matches('-');
    if slug.starts_with(|c: char| c.is_ascii_digit()) { format!("_{slug}") } else { slug.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str) -> Rendered {
        render(text, &HashMap::new(), &mut |_, _| None)
    }

    #[test]
    fn extensions_are_on() {
        let r = plain("| a | b |\n|---|---|\n| 1 | 2 |\n\n~~gone~~\n\n- [x] done\n\nNote[^1].\n\n[^1]: The note.\n");
        assert!(r.html.contains("<table>"), "{}", r.html);
        assert!(r.html.contains("<del>gone</del>"), "{}", r.html);
        assert!(r.html.contains("checkbox"), "{}", r.html);
        assert!(r.html.contains("footnote-definition"), "{}", r.html);
    }

    #[test]
    fn headings_get_ids_anchors_and_the_first_is_the_title() {
        let r = plain("# Hello, `vault` World!\n\n## Again {#custom}\n\n## Hello, vault World\n");
        assert_eq!(r.first_heading.as_deref(), Some("Hello, vault World!"));
        assert!(r.html.contains("<h1 id=\"hello-vault-world\">"), "{}", r.html);
        assert!(r.html.contains("<h2 id=\"custom\">"), "{}", r.html);
        assert!(r.html.contains("<h2 id=\"hello-vault-world-1\">"), "{}", r.html);
        assert!(r.anchors.contains("custom") && r.anchors.contains("hello-vault-world-1"));
    }

    #[test]
    fn headings_also_answer_to_their_vitepress_slug() {
        let r = plain(
            "### Can I use a local LLM via Ollama or llama.cpp?\n\n## Plain words\n\n## 2.0 -- Release_notes {#own}\n",
        );
        assert!(r.html.contains("<h3 id=\"can-i-use-a-local-llm-via-ollama-or-llamacpp\"><span id=\"can-i-use-a-local-llm-via-ollama-or-llama-cpp\"></span>"), "{}", r.html);
        assert!(r.anchors.contains("can-i-use-a-local-llm-via-ollama-or-llama-cpp"));
        assert!(r.html.contains("<h2 id=\"plain-words\">Plain words</h2>"), "same slug, no alias: {}", r.html);
        assert!(!r.html.contains("_2-0"), "an explicit id has no alias: {}", r.html);
        assert_eq!(vitepress_slug("2.0 -- Release_notes"), "_2-0-release-notes");
        assert_eq!(vitepress_slug("“Quoted” (thing)!"), "quoted-thing");
    }

    #[test]
    fn links_and_images_go_through_the_rewrite() {
        let mut seen = Vec::new();
        let r = render("See [x](other.md#a) and ![i](img/p.png).\n", &HashMap::new(), &mut |d, off| {
            seen.push((d.to_string(), off));
            d.strip_suffix(".md#a").map(|s| format!("{s}.html#a"))
        });
        assert!(r.html.contains("href=\"other.html#a\""), "{}", r.html);
        assert!(r.html.contains("src=\"img/p.png\""), "{}", r.html);
        assert_eq!(seen, vec![("other.md#a".to_string(), 4), ("img/p.png".to_string(), 24)]);
    }

    #[test]
    fn template_syntax_in_code_html_and_heading_attributes_is_shielded() {
        let text = "Text {{ f() }}\n\nInline `{{ x }}` code.\n\n```\n{{ y }}\n```\n\n<div>{{ r.model }}</div>\n\n## T {#id}\n\nplain `no braces`\n";
        let shielded = shield_for_templates(text);
        assert!(shielded.starts_with("Text {{ f() }}"), "{shielded}");
        assert!(shielded.contains("{% raw %}`{{ x }}`{% endraw %}"), "{shielded}");
        assert!(shielded.contains("{% raw %}```\n{{ y }}\n```{% endraw %}"), "{shielded}");
        assert!(shielded.contains("{% raw %}<div>{{ r.model }}</div>\n{% endraw %}"), "{shielded}");
        assert!(shielded.contains("{% raw %}## T {#id}\n{% endraw %}"), "{shielded}");
        assert!(shielded.contains("plain `no braces`"), "{shielded}");
        assert_eq!(shielded.lines().count(), text.lines().count());
        // Tera gives back exactly the original regions.
        let mut tera = tera::Tera::new();
        tera.register_function("f", |_: tera::Kwargs, _: &tera::State| "F");
        let out = tera.render_str(&shielded, &tera::Context::new(), false).unwrap();
        assert_eq!(out, text.replace("{{ f() }}", "F"));
    }

    #[test]
    fn alerts_and_containers_become_callouts() {
        let r = plain("> [!WARNING]\n> Mind the *gap*.\n\n> plain quote\n");
        assert!(
            r.html.contains(
                "<div class=\"callout callout-warning\" role=\"note\"><p class=\"callout-title\">Warning</p>"
            ),
            "{}",
            r.html
        );
        assert!(r.html.contains("<em>gap</em>"), "{}", r.html);
        assert!(r.html.contains("<blockquote>\n<p>plain quote</p>\n</blockquote>"), "{}", r.html);
        let prepared = crate::publish::render::vitepress::prepare(
            "::: details More <info>\nHidden.\n:::\n\n::: tip\n> inner quote\n:::\n",
        );
        let r = render(&prepared.text, &prepared.containers, &mut |_, _| None);
        assert!(r.html.contains("<details class=\"callout callout-details\"><summary>More &lt;info&gt;</summary>\n<p>Hidden.</p>\n</details>"), "{}", r.html);
        assert!(r.html.contains("<div class=\"callout callout-tip\" role=\"note\"><p class=\"callout-title\">Tip</p>\n<blockquote>\n<p>inner quote</p>\n</blockquote>\n</div>"), "{}", r.html);
        assert!(!r.html.contains(":::"), "{}", r.html);
    }

    #[test]
    fn code_blocks_are_highlighted_and_unknown_languages_warned_once() {
        let r =
            plain("```rust\nfn main() {}\n```\n\n```\nplain <text>\n```\n\n```klingon\na\n```\n\n```klingon\nb\n```\n");
        assert!(r.html.contains("<div class=\"code highlighted\" data-lang=\"rust\"><pre tabindex=\"0\"><code class=\"language-rust\"><span class=\"hl-k\">fn</span>"), "{}", r.html);
        assert!(
            r.html.contains("<div class=\"code\"><pre tabindex=\"0\"><code>plain &lt;text&gt;\n</code></pre></div>"),
            "{}",
            r.html
        );
        assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
        assert!(r.warnings[0].1.contains("`klingon`"));
    }

    /// The line scan finds the blocks the parser finds (those with a
    /// language: the ones highlighted), on our docs, the reference corpus
    /// when present, and the awkward cases.
    #[test]
    fn fenced_blocks_match_the_parsed_blocks() {
        let mut pages: Vec<String> = Vec::new();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        for dir in [root.join("docs"), root.join("../shared/upstream/docs")] {
            if !dir.is_dir() {
                println!("{} is absent: its pages are not compared", dir.display());
            }
            for entry in walkdir::WalkDir::new(&dir).into_iter().filter_map(Result::ok) {
                if entry.path().extension().is_some_and(|e| e == "md") {
                    pages.push(std::fs::read_to_string(entry.path()).unwrap());
                }
            }
        }
        pages.push(
            "- item\n\n  ```rust\n  fn a() {}\n    indented\n  ```\n\n~~~~yaml {1}\na: 1\n```\nstill yaml\n~~~~\n\n````md\n```js\nx\n```\n````\n\n```ts\nunclosed"
                .into(),
        );
        let with_language = |blocks: Vec<(String, String)>| -> Vec<(String, String)> {
            blocks.into_iter().filter(|(lang, _)| !lang.is_empty()).collect()
        };
        for page in &pages {
            assert_eq!(with_language(fenced_blocks(page)), with_language(code_blocks(page)), "{page}");
        }
        assert!(pages.len() > 5);
    }

    #[test]
    fn the_first_paragraph_is_the_summary() {
        let r = plain("# T\n\nFirst *para*\nwith `code`.\n\nSecond.\n");
        assert_eq!(r.summary.as_deref(), Some("First para with code."));
        let long = format!("{}\n", "word ".repeat(100));
        let s = plain(&long).summary.unwrap();
        assert!(s.chars().count() <= SUMMARY_CHARS && s.ends_with("word…"), "{s}");
    }

    #[test]
    fn raw_html_passes_through() {
        let r = plain("<div class=\"x\">\n\n*md*\n\n</div>\n");
        assert!(r.html.contains("<div class=\"x\">"), "{}", r.html);
        assert!(r.html.contains("<em>md</em>"), "{}", r.html);
    }
}
