//! Pages written for VitePress: the parts of its Markdown dialect that
//! CommonMark does not know, turned into what our renderer understands, so
//! that a VitePress docs folder publishes with no literal syntax left.
//!
//! - Custom containers (`::: tip Title` ... `:::`, nestable with longer
//!   markers) become block quotes whose opening line is recorded in
//!   `Prepared::containers`; `publish::markdown` renders those quotes as
//!   callouts. Every other line keeps its place, so line numbers in
//!   warnings stay those of the file.
//! - Vue single-file-component blocks: `<script setup>` (or any `<script>`
//!   holding ES module code) is dropped, `<style>` is moved to the page's
//!   `<head>` (`Prepared::styles`).
//! - Vue template elements (`v-for`, `v-if`, `:attr`, `@event`...) render
//!   data that only exists in the browser app VitePress builds. A static
//!   build cannot evaluate them: each such element is replaced by a visible
//!   notice and reported as a warning (an error with `--strict`).
//!
//! Fenced code is never touched. It works on the page text after template
//! expansion and before Markdown.

use std::collections::HashMap;

use crate::publish::render::escape::escape_html;

/// What a container renders as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CalloutKind {
    Note,
    Info,
    Tip,
    Important,
    Warning,
    Caution,
    Danger,
    Details,
    /// A known wrapper with no callout look (`code-group`, `v-pre`, `raw`).
    Plain,
    /// An unknown container name: kept, styled neutrally, and warned about.
    Other,
}

impl CalloutKind {
    /// The kind of a container name, case-insensitive.
    pub fn from_name(name: &str) -> CalloutKind {
        match name.to_ascii_lowercase().as_str() {
            "note" => CalloutKind::Note,
            "info" => CalloutKind::Info,
            "tip" | "hint" => CalloutKind::Tip,
            "important" => CalloutKind::Important,
            "warning" => CalloutKind::Warning,
            "caution" => CalloutKind::Caution,
            "danger" => CalloutKind::Danger,
            "details" => CalloutKind::Details,
            "code-group" | "v-pre" | "raw" => CalloutKind::Plain,
            _ => CalloutKind::Other,
        }
    }

    /// The CSS class suffix (`callout-tip`).
    pub fn class(self) -> &'static str {
        match self {
            CalloutKind::Note => "note",
            CalloutKind::Info => "info",
            CalloutKind::Tip => "tip",
            CalloutKind::Important => "important",
            CalloutKind::Warning => "warning",
            CalloutKind::Caution => "caution",
            CalloutKind::Danger => "danger",
            CalloutKind::Details => "details",
            CalloutKind::Plain => "plain",
            CalloutKind::Other => "other",
        }
    }

    /// The title shown when the page gives none.
    pub fn default_title(self) -> &'static str {
        match self {
            CalloutKind::Note => "Note",
            CalloutKind::Info => "Info",
            CalloutKind::Tip => "Tip",
            CalloutKind::Important => "Important",
            CalloutKind::Warning => "Warning",
            CalloutKind::Caution => "Caution",
            CalloutKind::Danger => "Danger",
            CalloutKind::Details => "Details",
            CalloutKind::Plain | CalloutKind::Other => "",
        }
    }
}

/// The container names a page may use, for messages.
pub const KNOWN_CONTAINERS: &str =
    "info, note, tip, important, warning, caution, danger, details, code-group, v-pre, raw";

/// A container found in the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Container {
    pub kind: CalloutKind,
    /// The name as written (`tip`, `code-group`).
    pub name: String,
    /// The title after the name, or the kind's default.
    pub title: String,
}

/// A page's text made ready for Markdown.
#[derive(Debug, Default)]
pub struct Prepared {
    pub text: String,
    /// Containers by the 1-based line of their opening marker.
    pub containers: HashMap<usize, Container>,
    /// `<style>` contents to put in the page's head.
    pub styles: Vec<String>,
    /// (1-based line, message) for the caller to turn into warnings.
    pub warnings: Vec<(usize, String)>,
}

/// Whether `text` may hold anything this module changes (a cheap test that
/// lets most pages skip the line scan).
pub fn applies(text: &str) -> bool {
    text.contains(":::") || text.contains("<script") || text.contains("<style") || has_vue_attribute(text)
}

/// Prepare `text` (a page after template expansion).
pub fn prepare(text: &str) -> Prepared {
    let mut prepared = Prepared::default();
    if !applies(text) {
        prepared.text = text.to_string();
        return prepared;
    }
    let mut lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    let code = fenced_lines(&lines);
    remove_vue_blocks(&mut lines, &code, &mut prepared);
    rewrite_containers(&mut lines, &code, &mut prepared);
    prepared.text = lines.join("\n");
    prepared
}

/// Which lines are inside fenced code (fences included).
fn fenced_lines(lines: &[String]) -> Vec<bool> {
    let mut inside = vec![false; lines.len()];
    let mut open: Option<(char, usize)> = None;
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start_matches([' ', '\t', '>']).trim_start();
        let fence = ['`', '~'].into_iter().find_map(|c| {
            let n = trimmed.chars().take_while(|&x| x == c).count();
            (n >= 3).then_some((c, n))
        });
        match (open, fence) {
            (None, Some(f)) => {
                open = Some(f);
                inside[i] = true;
            }
            (Some((c, n)), Some((c2, n2))) if c == c2 && n2 >= n && trimmed[n2..].trim().is_empty() => {
                open = None;
                inside[i] = true;
            }
            (Some(_), _) => inside[i] = true,
            (None, None) => {}
        }
    }
    inside
}

/// An HTML tag name at the start of `s` (after `<`).
fn tag_name(s: &str) -> Option<&str> {
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).unwrap_or(s.len());
    (end > 0 && s.as_bytes()[0].is_ascii_alphabetic()).then(|| &s[..end])
}

/// The first Vue directive in an opening tag's text (`v-for`, `:key`, `@click`).
fn vue_directive(tag: &str) -> Option<String> {
    let bytes = tag.as_bytes();
    for (i, w) in bytes.windows(2).enumerate() {
        if !w[0].is_ascii_whitespace() {
            continue;
        }
        let rest = &tag[i + 1..];
        let name_end = rest.find(|c: char| c.is_whitespace() || c == '=' || c == '>' || c == '/').unwrap_or(rest.len());
        let name = &rest[..name_end];
        let is_directive = (name.starts_with("v-") && name.len() > 2)
            || ((name.starts_with(':') || name.starts_with('@') || name.starts_with('#'))
                && name[1..].starts_with(|c: char| c.is_ascii_alphabetic()));
        if is_directive {
            return Some(name.to_string());
        }
    }
    None
}

fn has_vue_attribute(text: &str) -> bool {
    text.contains(" v-") || text.contains(" :") || text.contains(" @")
}

/// Script and style blocks, and elements with Vue directives, outside code.
fn remove_vue_blocks(lines: &mut [String], code: &[bool], prepared: &mut Prepared) {
    let mut i = 0;
    // The end of the last element left out, to fold an element and its
    // `v-else` sibling into one notice.
    let mut last_omitted: Option<usize> = None;
    while i < lines.len() {
        let indent = lines[i].len() - lines[i].trim_start_matches(' ').len();
        let line = lines[i].trim_start_matches(' ');
        if code[i] || indent > 3 || !line.starts_with('<') {
            i += 1;
            continue;
        }
        let Some(name) = tag_name(&line[1..]).map(str::to_ascii_lowercase) else {
            i += 1;
            continue;
        };
        // The opening tag may span lines: read up to its `>`.
        let (open_tag, open_end) = opening_tag(lines, i);
        if name == "script" || name == "style" {
            let end = closing_line(lines, i, &name).unwrap_or(lines.len() - 1);
            let block: Vec<&str> = lines[i..=end].iter().map(String::as_str).collect();
            let block = block.join("\n");
            if name == "style" {
                let start = block.find('>').map_or(0, |p| p + 1);
                let stop = block.rfind("</style").unwrap_or(block.len()).max(start);
                prepared.styles.push(block[start..stop].trim().to_string());
            } else if !(open_tag.contains("setup") || is_module_code(&block)) {
                i = end + 1;
                continue; // a plain script stays as written
            }
            for l in &mut lines[i..=end] {
                l.clear();
            }
            i = end + 1;
            continue;
        }
        let Some(directive) = vue_directive(&open_tag) else {
            i += 1;
            continue;
        };
        let end = if open_tag.trim_end().ends_with("/>") {
            open_end
        } else {
            matching_close(lines, i, &name).unwrap_or(open_end)
        };
        let follows_omitted = last_omitted.is_some_and(|e| lines[e + 1..i].iter().all(|l| l.trim().is_empty()));
        if !follows_omitted {
            prepared.warnings.push((
                i + 1,
                format!(
                    "a Vue template (`<{name} {directive}=...>`) renders data that only exists in a VitePress \
                     app; a static build cannot show it, so it is left out (the results table is \
                     {{{{ results_table() }}}})"
                ),
            ));
        }
        for l in &mut lines[i..=end] {
            l.clear();
        }
        if !follows_omitted {
            lines[i] = format!(
                "<div class=\"callout callout-warning vue-omitted\" role=\"note\"><p class=\"callout-title\">Not \
                 shown here</p><p>This part of the page is drawn by a Vue component (<code>{}</code>) in the \
                 VitePress app and has no static form.</p></div>",
                escape_html(&directive)
            );
        }
        last_omitted = Some(end);
        i = end + 1;
    }
}

/// ES module code (`import` / `export` at the start of a line) cannot run as
/// a classic script: it is Vue component code.
fn is_module_code(block: &str) -> bool {
    block.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("import ") || l.starts_with("export ")
    })
}

/// The opening tag starting on line `start` (joined across lines) and the
/// line where it ends.
fn opening_tag(lines: &[String], start: usize) -> (String, usize) {
    let mut tag = String::new();
    let mut quote: Option<char> = None;
    for (i, line) in lines.iter().enumerate().skip(start) {
        for c in line.chars() {
            tag.push(c);
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (None, '"' | '\'') => quote = Some(c),
                (None, '>') => return (tag, i),
                _ => {}
            }
        }
        tag.push('\n');
        if i - start > 50 {
            break;
        }
    }
    (tag, start)
}

/// The line holding the first `</name` at or after line `start`.
fn closing_line(lines: &[String], start: usize, name: &str) -> Option<usize> {
    let close = format!("</{name}");
    (start..lines.len()).find(|&i| lines[i].to_ascii_lowercase().contains(&close))
}

/// The line of the tag closing the `name` element opened on line `start`,
/// counting nested elements of the same name.
fn matching_close(lines: &[String], start: usize, name: &str) -> Option<usize> {
    let open = format!("<{name}");
    let close = format!("</{name}");
    let mut depth = 0usize;
    for (i, line) in lines.iter().enumerate().skip(start) {
        let lower = line.to_ascii_lowercase();
        let mut at = 0;
        while let Some(p) = lower[at..].find('<') {
            let rest = &lower[at + p..];
            let boundary = |s: &str, prefix: &str| {
                s.starts_with(prefix)
                    && s[prefix.len()..].chars().next().is_none_or(|c| c.is_whitespace() || c == '>' || c == '/')
            };
            if boundary(rest, &close) {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i);
                }
            } else if boundary(rest, &open) {
                depth += 1;
            }
            at += p + 1;
        }
    }
    None
}

/// `::: name title` ... `:::` to block quotes, recording each container.
/// The deepest nesting of `:::` containers made into boxes.
pub const MAX_CONTAINER_DEPTH: usize = 8;

fn rewrite_containers(lines: &mut [String], code: &[bool], prepared: &mut Prepared) {
    // Open containers: the length of their marker.
    let mut open: Vec<usize> = Vec::new();
    let mut too_deep_warned = false;
    // Openers past the cap, still open: their closers are text too.
    let mut too_deep = 0usize;
    for i in 0..lines.len() {
        let depth = open.len();
        let marker = if code[i] { None } else { container_marker(&lines[i]) };
        match marker {
            // Each level quotes every line inside it once more: past the
            // cap, a page of nested containers would grow with the square
            // of its length. The marker stays as text.
            Some((_, Some(_))) if depth >= MAX_CONTAINER_DEPTH => {
                if !too_deep_warned {
                    too_deep_warned = true;
                    prepared.warnings.push((
                        i + 1,
                        format!(
                            "containers nested more than {MAX_CONTAINER_DEPTH} deep: this `:::` line and the deeper \
                             ones are shown as text"
                        ),
                    ));
                }
                too_deep += 1;
                lines[i] = "> ".repeat(depth) + &lines[i];
            }
            Some((_, None)) if too_deep > 0 => {
                too_deep -= 1;
                lines[i] = "> ".repeat(depth) + &lines[i];
            }
            Some((len, Some((name, title)))) => {
                let kind = CalloutKind::from_name(&name);
                if kind == CalloutKind::Other {
                    prepared.warnings.push((
                        i + 1,
                        format!("unknown container `::: {name}` (known: {KNOWN_CONTAINERS}); shown as a plain box"),
                    ));
                }
                let title = if title.is_empty() { kind.default_title().to_string() } else { title };
                prepared.containers.insert(i + 1, Container { kind, name, title });
                lines[i] = "> ".repeat(depth) + ">";
                open.push(len);
            }
            Some((len, None)) if open.last().is_some_and(|&n| len >= n) => {
                open.pop();
                lines[i] = "> ".repeat(depth - 1).trim_end().to_string();
            }
            _ if depth > 0 => lines[i] = "> ".repeat(depth) + &lines[i],
            _ => {}
        }
    }
    if !open.is_empty() {
        let line = prepared.containers.keys().max().copied().unwrap_or(1);
        prepared.warnings.push((line, "a `:::` container is not closed; it runs to the end of the page".into()));
    }
}

/// A `:::` line: (marker length, Some((name, title)) when it opens).
fn container_marker(line: &str) -> Option<(usize, Option<(String, String)>)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[indent..];
    let len = rest.chars().take_while(|&c| c == ':').count();
    if indent > 3 || len < 3 {
        return None;
    }
    let after = rest[len..].trim();
    if after.is_empty() {
        return Some((len, None));
    }
    let name_end = after.find(char::is_whitespace).unwrap_or(after.len());
    let name = &after[..name_end];
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) || name.contains(':') {
        return None;
    }
    Some((len, Some((name.to_string(), after[name_end..].trim().to_string()))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containers_become_quotes_keeping_every_line() {
        let text = "Intro\n::: tip\nA *tip*.\n:::\n\n::: warning Opt-in\nCareful.\n\n```\n:::\n```\n:::\nAfter\n";
        let p = prepare(text);
        assert_eq!(p.text.lines().count(), text.lines().count());
        assert_eq!(p.text, "Intro\n>\n> A *tip*.\n\n\n>\n> Careful.\n> \n> ```\n> :::\n> ```\n\nAfter\n");
        assert_eq!(p.containers[&2], Container { kind: CalloutKind::Tip, name: "tip".into(), title: "Tip".into() });
        assert_eq!(p.containers[&6].title, "Opt-in");
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    }

    #[test]
    fn nested_and_unknown_containers() {
        let p = prepare(":::: details More\n::: code-group\nx\n:::\n::::\n::: spoiler\ny\n:::\n");
        assert_eq!(p.text, ">\n> >\n> > x\n>\n\n>\n> y\n\n");
        assert_eq!(p.containers[&1].kind, CalloutKind::Details);
        assert_eq!(p.containers[&2].kind, CalloutKind::Plain);
        assert_eq!(p.containers[&6].kind, CalloutKind::Other);
        assert_eq!(p.warnings.len(), 1);
        assert!(p.warnings[0].1.contains("unknown container `::: spoiler`"), "{:?}", p.warnings);
    }

    #[test]
    fn containers_nest_to_a_cap_and_deeper_ones_stay_text() {
        let n = 40;
        let text = "::: tip\n".repeat(n) + "x\n" + &":::\n".repeat(n);
        let p = prepare(&text);
        assert_eq!(p.containers.len(), MAX_CONTAINER_DEPTH);
        assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
        assert!(p.warnings[0].1.contains("nested more than"), "{:?}", p.warnings);
        // Every line is quoted at most the cap's depth: linear in the page.
        assert!(p.text.len() <= text.len() * (2 * MAX_CONTAINER_DEPTH + 1), "{}", p.text.len());
        assert_eq!(p.text.lines().count(), text.lines().count());
        // The deep closers are text; the capped containers all close.
        assert!(!p.warnings.iter().any(|(_, w)| w.contains("not closed")));
    }

    #[test]
    fn vue_blocks_are_dropped_hoisted_or_replaced_by_a_notice() {
        let text = "# T\n\n<script setup>\nimport { data } from './x.data.mts';\n</script>\n\n<table v-if=\"rows.length\">\n<tr v-for=\"r of rows\"><td>{{ r.model }}</td></tr>\n</table>\n\n<p v-else>None yet.</p>\n\n<div class=\"keep\">kept</div>\n\n<style scoped>\n.x { color: red; }\n</style>\n\n```html\n<p v-if=\"x\">code stays</p>\n```\n";
        let p = prepare(text);
        assert_eq!(p.text.lines().count(), text.lines().count());
        assert!(!p.text.contains("import"), "{}", p.text);
        assert!(!p.text.contains("{{ r.model }}") && !p.text.contains("None yet"), "{}", p.text);
        assert_eq!(p.text.matches("vue-omitted").count(), 1, "one notice for v-if and its v-else: {}", p.text);
        assert!(p.text.contains("<div class=\"keep\">kept</div>"));
        assert!(p.text.contains("<p v-if=\"x\">code stays</p>"), "code is left alone");
        assert_eq!(p.styles, [".x { color: red; }"]);
        assert_eq!(p.warnings.len(), 1);
        assert_eq!(p.warnings[0].0, 7);
        assert!(p.warnings[0].1.contains("v-if"), "{:?}", p.warnings);
    }

    #[test]
    fn nested_elements_of_the_same_name_are_counted() {
        let text = "<div v-for=\"x of xs\">\n\n<div>inner</div>\n\n<h2 :id=\"x\">{{ x }}</h2>\n\n</div>\n\nafter\n";
        let p = prepare(text);
        assert!(p.text.ends_with("\n\n\n\n\n\n\n\nafter\n"), "{:?}", p.text);
        assert!(p.text.starts_with("<div class=\"callout"), "{}", p.text);
    }

    #[test]
    fn plain_scripts_and_ordinary_text_are_kept() {
        let text = "<script>console.log(1)</script>\n\nA ratio of 3:1 and an email a@b.c.\n";
        assert_eq!(prepare(text).text, text);
        assert!(!applies("plain text"));
    }
}
