//! VitePress and mdBook syntax beyond containers, Vue blocks and includes
//! (`vitepress`, `include`): what this renderer shows, and a warning for
//! each thing it does not, so that no part of a page is lost or shown
//! wrongly without a word.
//!
//! Shown: a code block's title (`` ```js [config.js] ``, the tab label in a
//! `::: code-group`) and the `<Badge>` component (as a small label).
//! Warned about, once per kind and page, at the first line: `[[toc]]` (left
//! out: the outline beside the page lists the headings), Vue expressions
//! (`{{ $frontmatter.title }}`, shown as written), other Vue components
//! (`<MyWidget />`), emoji shortcodes (`:tada:`, shown as written), code
//! annotations (`// [!code ++]`), line highlighting and line numbers in a
//! fence's info (`{1,3}`, `:line-numbers`: the code is shown without them)
//! and mdBook's hidden lines in Rust code (`# ` lines, shown).
//!
//! A text pass on the page after includes and before templates: every line
//! keeps its place, and code (fenced or in a span) is only read for its own
//! markers, never changed.

use std::borrow::Cow;
use std::collections::HashSet;

use crate::publish::render::escape::escape_html;
use crate::publish::render::include::{Fences, code_spans};

/// The title of a fenced code block from its info string
/// (`` ```ts:line-numbers {1} [config.ts] `` gives `config.ts`).
pub fn code_title(info: &str) -> Option<String> {
    let info = info.trim();
    let open = info.find('[')?;
    let close = info.rfind(']').filter(|&c| c > open)?;
    let title = info[open + 1..close].trim();
    (!title.is_empty()).then(|| title.to_string())
}

/// A page's text with the supported parts rewritten, and the warnings.
#[derive(Debug)]
pub struct Checked<'a> {
    pub text: Cow<'a, str>,
    /// (1-based line, message).
    pub warnings: Vec<(usize, String)>,
}

/// What was found, each kind warned about once.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Toc,
    VueExpression,
    Component,
    Emoji,
    Annotation,
    LineMarks,
    HiddenLines,
}

struct Scan {
    warned: HashSet<Kind>,
    warnings: Vec<(usize, String)>,
    /// (line index, its new text).
    edits: Vec<(usize, String)>,
}

impl Scan {
    fn warn(&mut self, kind: Kind, line: usize, message: impl FnOnce() -> String) {
        if self.warned.insert(kind) {
            self.warnings.push((line + 1, message()));
        }
    }
}

/// Check `text` (a page, includes expanded).
pub fn check(text: &str) -> Checked<'_> {
    let mut scan = Scan { warned: HashSet::new(), warnings: Vec::new(), edits: Vec::new() };
    let mut fences = Fences::default();
    let mut rust = false;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let was_open = fences.is_open();
        if fences.step(line) {
            if !was_open {
                let info = line.trim_start().trim_start_matches(['`', '~']).trim();
                rust = matches!(info.split([' ', '{', ':', '[']).next(), Some("rust" | "rs"));
                fence_info(&mut scan, i, info);
            } else if fences.is_open() {
                code_line(&mut scan, i, line, rust);
            }
            continue;
        }
        prose_line(&mut scan, i, line);
    }
    let Scan { warnings, edits, .. } = scan;
    if edits.is_empty() {
        return Checked { text: Cow::Borrowed(text), warnings };
    }
    let mut out = String::with_capacity(text.len() + 64 * edits.len());
    let mut edits = edits.into_iter().peekable();
    for (i, line) in text.split_inclusive('\n').enumerate() {
        match edits.next_if(|(at, _)| *at == i) {
            Some((_, new)) => out.push_str(&new),
            None => out.push_str(line),
        }
    }
    Checked { text: Cow::Owned(out), warnings }
}

fn fence_info(scan: &mut Scan, i: usize, info: &str) {
    let language = info.split(['[']).next().unwrap_or("");
    let highlights = language.find('{').is_some_and(|b| language[b + 1..].starts_with(|c: char| c.is_ascii_digit()));
    if highlights || language.contains(":line-numbers") {
        scan.warn(Kind::LineMarks, i, || {
            format!(
                "line highlighting and line numbers in a code block (`{}`) are not supported; the code is shown \
                 without them",
                info.trim()
            )
        });
    }
}

fn code_line(scan: &mut Scan, i: usize, line: &str, rust: bool) {
    if line.contains("[!code ") {
        scan.warn(Kind::Annotation, i, || {
            "code annotations (`// [!code ++]`, `[!code focus]`...) are not supported; they are shown as written".into()
        });
    }
    let trimmed = line.trim();
    if rust && (trimmed == "#" || trimmed.starts_with("# ")) {
        scan.warn(Kind::HiddenLines, i, || {
            "lines starting with `# ` in Rust code (hidden by mdBook) are not supported; they are shown".into()
        });
    }
}

fn prose_line(scan: &mut Scan, i: usize, line: &str) {
    if line.trim() == "[[toc]]" {
        scan.warn(Kind::Toc, i, || {
            "`[[toc]]` is not supported; it is left out (the outline beside the page lists its headings)".into()
        });
        scan.edits.push((i, line[line.trim_end().len()..].to_string()));
        return;
    }
    let interesting = line.contains("{{") || line.contains('<') || line.contains(':');
    if !interesting {
        return;
    }
    let spans = code_spans(line);
    let mut span = 0;
    // The next `}}` from where the scan is, searched for again only once
    // passed: a line full of openers is read once.
    let mut close_braces = Next::default();
    let bytes = line.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut at = 0;
    while at < bytes.len() {
        while spans.get(span).is_some_and(|&(_, end)| end <= at) {
            span += 1;
        }
        if spans.get(span).is_some_and(|&(start, _)| start <= at) || !matches!(bytes[at], b'{' | b'<' | b':') {
            at += 1;
            continue;
        }
        let rest = &line[at..];
        if rest.starts_with("{{")
            && rest[2..].trim_start().starts_with('$')
            && let Some(close) = close_braces.find(line, at, "}}")
        {
            {
                let expr = &line[at..close + 2];
                scan.warn(Kind::VueExpression, i, || {
                    format!("the Vue expression `{expr}` has no value in a static build; it is shown as written")
                });
                let out = out.get_or_insert_with(String::new);
                out.push_str(&line[copied..at]);
                out.push_str("{% raw %}");
                out.push_str(expr);
                out.push_str("{% endraw %}");
                at = close + 2;
                copied = at;
                continue;
            }
        }
        if let Some(name) = component_name(rest) {
            match badge(name, rest) {
                Some((html, len)) => {
                    let out = out.get_or_insert_with(String::new);
                    out.push_str(&line[copied..at]);
                    out.push_str(&html);
                    at += len;
                    copied = at;
                    continue;
                }
                None => scan.warn(Kind::Component, i, || {
                    format!(
                        "the Vue component `<{name}>` is not supported (a static build has no Vue); its tag is left \
                         as written and shows nothing"
                    )
                }),
            }
        }
        if let Some(code) = emoji(line, at) {
            scan.warn(Kind::Emoji, i, || format!("emoji shortcodes (`{code}`) are not supported; shown as written"));
            at += code.len();
            continue;
        }
        at += 1;
    }
    if let Some(mut out) = out {
        out.push_str(&line[copied..]);
        scan.edits.push((i, out));
    }
}

/// The next occurrence of a pattern at or after a position that only grows.
#[derive(Default)]
struct Next(Option<Option<usize>>);

impl Next {
    fn find(&mut self, line: &str, from: usize, pattern: &str) -> Option<usize> {
        if self.0.is_none_or(|found| found.is_some_and(|p| p < from)) {
            self.0 = Some(line[from..].find(pattern).map(|p| from + p));
        }
        self.0.flatten()
    }
}

/// The name of a component tag (`<Name`, `</Name`, capitalized) at the start of `s`.
fn component_name(s: &str) -> Option<&str> {
    let rest = s.strip_prefix('<')?;
    let rest = rest.strip_prefix('/').unwrap_or(rest);
    if !rest.starts_with(|c: char| c.is_ascii_uppercase()) {
        return None;
    }
    let len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).unwrap_or(rest.len());
    Some(&rest[..len])
}

/// VitePress's `<Badge type="tip" text="new" />` at the start of `s` as a
/// static label, with the tag's length. Only a short tag is read (a
/// badge's is), so a line of openers stays linear.
fn badge(name: &str, s: &str) -> Option<(String, usize)> {
    if name != "Badge" {
        return None;
    }
    let mut quote = None;
    let end = s.char_indices().take(512).find_map(|(i, c)| {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '"' | '\'') => quote = Some(c),
            (None, '>') => return Some(i + 1),
            _ => {}
        }
        None
    })?;
    let tag = &s[..end];
    if !tag.ends_with("/>") {
        return None;
    }
    let attr = |key: &str| {
        let at = tag.find(&format!(" {key}=\""))? + key.len() + 3;
        tag[at..].find('"').map(|e| &tag[at..at + e])
    };
    let kind = attr("type").filter(|t| matches!(*t, "info" | "tip" | "warning" | "danger")).unwrap_or("tip");
    let text = attr("text").unwrap_or("");
    Some((format!("<span class=\"badge badge-{kind}\">{}</span>", escape_html(text)), end))
}

/// An emoji shortcode (`:tada:`) starting at byte `at` of `line`.
fn emoji(line: &str, at: usize) -> Option<&str> {
    let before = line[..at].chars().next_back();
    if before.is_some_and(|c| !(c.is_whitespace() || "([\"'".contains(c))) {
        return None;
    }
    let rest = &line[at + 1..];
    let len = rest.find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || "_+-".contains(c)))?;
    if len == 0 || !rest[len..].starts_with(':') || !rest[..len].bytes().any(|b| b.is_ascii_lowercase()) {
        return None;
    }
    let after = rest[len + 1..].chars().next();
    if after.is_some_and(|c| !(c.is_whitespace() || ".,!?;)]\"'".contains(c))) {
        return None;
    }
    Some(&line[at..at + len + 2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_titles_come_from_the_info_string() {
        assert_eq!(code_title("js [config.js]").as_deref(), Some("config.js"));
        assert_eq!(code_title("ts:line-numbers {1} [.vitepress/config.ts]").as_deref(), Some(".vitepress/config.ts"));
        assert_eq!(code_title("sh"), None);
        assert_eq!(code_title("sh []"), None);
        assert_eq!(code_title("] ["), None);
    }

    #[test]
    fn supported_parts_are_rewritten_in_place() {
        let text = "# T\n\n[[toc]]\n\nNew <Badge type=\"warning\" text=\"beta <2>\" /> here.\n";
        let c = check(text);
        assert_eq!(c.text, "# T\n\n\n\nNew <span class=\"badge badge-warning\">beta &lt;2&gt;</span> here.\n");
        assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
        assert_eq!(c.warnings[0].0, 3);
        assert!(c.warnings[0].1.contains("[[toc]]"), "{:?}", c.warnings);
    }

    #[test]
    fn each_unsupported_kind_is_warned_once_at_its_first_line() {
        let text = "Title: {{ $frontmatter.title }} and {{ $params.x }}\n\n<MyWidget :a=\"b\" />\n\nParty :tada: time :tada:\n\n```js{2}\nx // [!code ++]\n```\n\n```rust\n# fn main() {\nlet x = 1;\n```\n";
        let c = check(text);
        let lines: Vec<usize> = c.warnings.iter().map(|w| w.0).collect();
        assert_eq!(lines, [1, 3, 5, 7, 8, 12], "{:?}", c.warnings);
        for (w, needle) in c.warnings.iter().zip([
            "`{{ $frontmatter.title }}`",
            "`<MyWidget>`",
            "`:tada:`",
            "line highlighting",
            "[!code",
            "hidden by mdBook",
        ]) {
            assert!(w.1.contains(needle), "{needle}: {w:?}");
        }
        assert!(c.text.starts_with(
            "Title: {% raw %}{{ $frontmatter.title }}{% endraw %} and {% raw %}{{ $params.x }}{% endraw %}\n"
        ));
    }

    #[test]
    fn ordinary_text_and_code_are_left_alone() {
        for text in [
            "A ratio of 3:1, 12:30:45, std::fmt::Display, https://x.org/a:b, `:tada:` and `<Badge />`.\n",
            "| a | b |\n|:---:|:--|\n",
            "```html\n<MyWidget /> {{ $x }} :tada:\n[[toc]]\n```\n",
            "<div class=\"x\">{{ results_table() }}</div>\n",
            "Note: this and that: fine.\n",
        ] {
            let c = check(text);
            assert_eq!(c.text, text);
            assert!(c.warnings.is_empty(), "{text}: {:?}", c.warnings);
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            /// Any text: no panic, and every line keeps its place.
            #[test]
            fn never_panics_and_keeps_lines(text in "([<>{}$:`~\\[\\]/!#a-zA-Z \"=\n]|\\{\\{ \\$|<Badge |```|\\[\\[toc\\]\\]){0,80}") {
                let c = check(&text);
                prop_assert_eq!(c.text.matches('\n').count(), text.matches('\n').count());
            }
        }
    }
}
