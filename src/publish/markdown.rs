//! Markdown to HTML for docs pages, with pulldown-cmark: tables, footnotes,
//! strikethrough, task lists and heading attributes (`## Title {#id}`).
//! Every heading gets an id (its explicit `{#id}`, else a GitHub-style slug
//! of its text) and a `#` anchor link; link and image destinations go through
//! a caller-supplied rewrite so internal `.md` links point at the generated
//! pages.
//!
//! It also knows which parts of a page template processing must leave as
//! written (`shield_for_templates`): code spans, code blocks, raw HTML blocks
//! and headings with `{#id}` attributes. That is what lets a page show
//! `{{ placeholder }}` in a code sample, or carry another tool's markup, and
//! still pass through Tera unchanged.
//!
//! It does not resolve links (`publish::links`) or know about templates.

use std::collections::HashSet;
use std::ops::Range;

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};

/// The Markdown dialect of docs pages.
pub fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_HEADING_ATTRIBUTES
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
}

/// Render `text` (Markdown, frontmatter already removed). `rewrite_link`
/// gets each link or image destination and its byte offset in `text`, and
/// returns a replacement, or `None` to keep it.
pub fn render(text: &str, rewrite_link: &mut dyn FnMut(&str, usize) -> Option<String>) -> Rendered {
    let mut events: Vec<Event> = Vec::new();
    let mut anchors = HashSet::new();
    let mut first_heading = None;
    // Headings are completed once their text is known: (index of the start event, explicit id).
    let mut open_heading: Option<usize> = None;
    let mut heading_text = String::new();

    for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
        let event = match event {
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
                event
            }
            Event::Text(ref t) | Event::Code(ref t) if open_heading.is_some() => {
                heading_text.push_str(t);
                event
            }
            Event::End(TagEnd::Heading(level)) => {
                if let Some(start) = open_heading.take() {
                    let title = heading_text.trim().to_string();
                    let id = match &mut events[start] {
                        Event::Start(Tag::Heading { id, .. }) => {
                            let chosen = match id.take() {
                                Some(explicit) => explicit.to_string(),
                                None => unique_slug(&title, &anchors),
                            };
                            *id = Some(CowStr::from(chosen.clone()));
                            chosen
                        }
                        _ => unreachable!("open_heading indexes a heading start"),
                    };
                    events.push(Event::InlineHtml(CowStr::from(format!(
                        " <a class=\"anchor\" href=\"#{}\" aria-hidden=\"true\">#</a>",
                        escape_html(&id)
                    ))));
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
    Rendered { html, first_heading, anchors }
}

/// GitHub's heading slug: lower case, letters, digits, `-` and `_` kept,
/// spaces to `-`, everything else dropped; `-1`, `-2`... on repeats.
pub fn unique_slug(title: &str, taken: &HashSet<String>) -> String {
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
    (1..).map(|n| format!("{slug}-{n}")).find(|s| !taken.contains(s)).expect("an unused suffix exists")
}

/// Escape text for HTML element content and quoted attribute values.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str) -> Rendered {
        render(text, &mut |_, _| None)
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
        assert!(r.html.contains("href=\"#custom\""), "{}", r.html);
        assert!(r.anchors.contains("custom") && r.anchors.contains("hello-vault-world-1"));
    }

    #[test]
    fn links_and_images_go_through_the_rewrite() {
        let mut seen = Vec::new();
        let r = render("See [x](other.md#a) and ![i](img/p.png).\n", &mut |d, off| {
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
    fn unknown_constructs_pass_through() {
        let r = plain("::: tip\nA tip.\n:::\n\n<script setup>\nimport x from 'y';\n\nconst a = 1;\n</script>\n");
        assert!(r.html.contains("::: tip"), "{}", r.html);
        assert!(r.html.contains("<script setup>\nimport x from 'y';\n\nconst a = 1;\n</script>"), "{}", r.html);
    }
}
