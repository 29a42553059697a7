//! Internal links between docs pages: `other.md`, `guide/x.md#anchor`,
//! `../index.md`, `/guide/x` are resolved against the docs tree and rewritten
//! to the generated `.html` pages; links to assets and generated pages are
//! checked to exist. A link that leads nowhere is reported (a warning, or an
//! error with `--strict`, decided by the caller).
//!
//! Every internal link is written relative to the page it is on, so the
//! built site works under any base path and opened from disk (`file://`);
//! the URL itself is made by `url`.
//!
//! External links (`https:`, `mailto:`, `//host`) are left alone. Anchors are
//! checked once every page is rendered (`Resolved::anchor`).

use std::collections::HashSet;

use percent_encoding::percent_decode_str;

use crate::publish::render::url::{href, href_path, output_path, page_html, relative_from};

/// What exists on the site, for resolving links.
#[derive(Debug, Default)]
pub struct SiteIndex {
    /// Docs pages by path relative to the docs folder (`guide/x.md`).
    pub pages: HashSet<String>,
    /// Every output path (`guide/x.html`, `static/style.css`, `results.html`).
    pub outputs: HashSet<String>,
    /// The site's base path (`/` or `/sub/`), for absolute links.
    pub base_path: String,
    /// Pages are folders (`guide/x/`).
    pub clean_urls: bool,
}

/// A resolved internal link.
#[derive(Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The destination to write instead, when it changes.
    pub rewritten: Option<String>,
    /// (page `rel`, anchor) to check once that page's headings are known.
    pub anchor: Option<(String, String)>,
}

/// Resolve `dest`, written in the page `from` (a `rel` path). `Err` says why
/// the link is broken.
pub fn resolve(from: &str, dest: &str, index: &SiteIndex) -> Result<Resolved, String> {
    let keep = Resolved { rewritten: None, anchor: None };
    if dest.is_empty() || is_external(dest) {
        return Ok(keep);
    }
    let (path_and_query, fragment) = match dest.split_once('#') {
        Some((p, f)) => (p, Some(f)),
        None => (dest, None),
    };
    let (path, query) = match path_and_query.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (path_and_query, None),
    };
    let anchor_of = |page: &str| fragment.filter(|f| !f.is_empty()).map(|f| (page.to_string(), decode(f)));
    if path.is_empty() {
        return Ok(Resolved { rewritten: None, anchor: anchor_of(from) });
    }
    let decoded = decode(path);
    let absolute = decoded.starts_with('/');
    let joined = if absolute {
        let within = decoded.strip_prefix(index.base_path.as_str()).unwrap_or(&decoded[1..]);
        normalize("", within)
    } else {
        normalize(from.rsplit_once('/').map_or("", |(dir, _)| dir), &decoded)
    }
    .ok_or_else(|| format!("`{dest}` points outside the docs folder"))?;

    let dir_like = decoded.ends_with('/') || joined.is_empty();
    let candidates: Vec<String> = if dir_like {
        vec![join(&joined, "index.md")]
    } else if joined.ends_with(".md") {
        vec![joined.clone()]
    } else if extension(&joined).is_none() {
        vec![format!("{joined}.md"), join(&joined, "index.md")]
    } else {
        Vec::new()
    };
    let from_out = output_path(&page_html(from), index.clean_urls);
    let link_to = |target: &str| {
        let mut rewritten = href(&relative_from(&from_out, &href_path(target, index.clean_urls)));
        if let Some(q) = query {
            rewritten = format!("{rewritten}?{q}");
        }
        if let Some(f) = fragment {
            rewritten = format!("{rewritten}#{f}");
        }
        rewritten
    };
    if let Some(page) = candidates.iter().find(|c| index.pages.contains(*c)) {
        return Ok(Resolved { rewritten: Some(link_to(&page_html(page))), anchor: anchor_of(page) });
    }
    if !candidates.is_empty() {
        return Err(format!("`{dest}`: there is no page {} in the docs folder", candidates[0]));
    }
    if index.outputs.contains(&joined) {
        return Ok(Resolved { rewritten: Some(link_to(&joined)), anchor: None });
    }
    Err(format!("`{dest}`: nothing is published at {joined}"))
}

fn is_external(dest: &str) -> bool {
    if dest.starts_with("//") {
        return true;
    }
    // A scheme: letters, digits, `+`, `-`, `.` before the first `:`, and no `/` before it.
    match dest.find(':') {
        Some(i) => dest[..i].chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) && i > 0,
        None => false,
    }
}

fn decode(s: &str) -> String {
    percent_decode_str(s).decode_utf8_lossy().into_owned()
}

fn extension(path: &str) -> Option<&str> {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map(|(_, e)| e).filter(|e| !e.is_empty())
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() { name.to_string() } else { format!("{dir}/{name}") }
}

/// `dir` joined with `rel`, `.` and `..` resolved; `None` when it climbs
/// above the root.
fn normalize(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> SiteIndex {
        SiteIndex {
            pages: ["index.md", "evals.md", "guide/setup.md", "guide/index.md"].map(String::from).into(),
            outputs: ["results.html", "img/logo.png", "static/style.css"].map(String::from).into(),
            base_path: "/sub/".into(),
            clean_urls: false,
        }
    }

    fn rewritten(from: &str, dest: &str) -> String {
        resolve(from, dest, &index()).unwrap().rewritten.unwrap_or_else(|| dest.to_string())
    }

    #[test]
    fn md_links_become_html_links() {
        assert_eq!(rewritten("index.md", "evals.md"), "evals.html");
        assert_eq!(rewritten("index.md", "guide/setup.md#install"), "guide/setup.html#install");
        assert_eq!(rewritten("guide/setup.md", "../evals.md"), "../evals.html");
        assert_eq!(rewritten("guide/setup.md", "../guide/index.md"), "index.html");
        assert_eq!(rewritten("guide/setup.md", "./"), "index.html");
        assert_eq!(rewritten("evals.md", "/guide/setup"), "guide/setup.html");
        assert_eq!(rewritten("guide/setup.md", "/sub/guide/"), "index.html");
        assert_eq!(rewritten("guide/setup.md", "/evals"), "../evals.html");
        assert_eq!(rewritten("evals.md", "guide"), "guide/index.html");
        assert_eq!(rewritten("guide/setup.md", "/img/logo.png"), "../img/logo.png");
    }

    #[test]
    fn clean_urls_link_folders_relative_to_where_pages_are_written() {
        let index = SiteIndex { clean_urls: true, ..index() };
        let rewritten = |from: &str, dest: &str| resolve(from, dest, &index).unwrap().rewritten.unwrap();
        assert_eq!(rewritten("index.md", "guide/setup.md#a"), "guide/setup/#a");
        assert_eq!(rewritten("guide/setup.md", "../evals.md"), "../../evals/");
        assert_eq!(rewritten("guide/setup.md", "index.md"), "../");
        assert_eq!(rewritten("guide/index.md", "../index.md"), "../");
        assert_eq!(rewritten("evals.md", "results.html"), "../results/");
        assert_eq!(rewritten("guide/setup.md", "../img/logo.png"), "../../img/logo.png");
        assert_eq!(rewritten("index.md", "evals.md"), "evals/");
        assert_eq!(output_path("guide/setup.html", true), "guide/setup/index.html");
        assert_eq!(output_path("guide/index.html", true), "guide/index.html");
        assert_eq!(output_path("static/style.css", true), "static/style.css");
        assert_eq!(href_path("index.html", true), "");
        assert_eq!(relative_from("index.html", ""), "./");
    }

    #[test]
    fn rewritten_links_to_hostile_page_names_are_encoded() {
        let index = SiteIndex {
            pages: ["index.md", "javascript:alert(1).md", "g/a b#c.md"].map(String::from).into(),
            outputs: HashSet::new(),
            base_path: "/".into(),
            clean_urls: false,
        };
        let r = resolve("index.md", "./javascript:alert(1).md", &index).unwrap();
        assert_eq!(r.rewritten.as_deref(), Some("javascript%3Aalert%281%29.html"));
        let r = resolve("index.md", "g/a%20b%23c.md#top", &index).unwrap();
        assert_eq!(r.rewritten.as_deref(), Some("g/a%20b%23c.html#top"));
        let r = resolve("g/x.md", "/javascript:alert(1).md", &index).unwrap();
        assert_eq!(r.rewritten.as_deref(), Some("../javascript%3Aalert%281%29.html"));
        let clean = SiteIndex { clean_urls: true, ..index };
        let r = resolve("g/x.md", "/javascript:alert(1).md", &clean).unwrap();
        assert_eq!(r.rewritten.as_deref(), Some("../../javascript%3Aalert%281%29/"));
    }

    #[test]
    fn anchors_are_handed_back_for_checking() {
        let r = resolve("index.md", "guide/setup.md#a%20b", &index()).unwrap();
        assert_eq!(r.anchor, Some(("guide/setup.md".into(), "a b".into())));
        let r = resolve("evals.md", "#top", &index()).unwrap();
        assert_eq!(r, Resolved { rewritten: None, anchor: Some(("evals.md".into(), "top".into())) });
    }

    #[test]
    fn external_links_are_kept_and_internal_ones_checked() {
        for dest in ["https://x.org/a.md", "mailto:a@b.c", "//cdn/x.js"] {
            assert_eq!(resolve("index.md", dest, &index()).unwrap().rewritten, None, "{dest}");
        }
        assert_eq!(rewritten("index.md", "results.html"), "results.html");
        assert_eq!(rewritten("guide/setup.md", "../img/logo.png"), "../img/logo.png");
    }

    #[test]
    fn broken_links_say_what_is_missing() {
        let e = resolve("index.md", "nope.md", &index()).unwrap_err();
        assert!(e.contains("no page nope.md"), "{e}");
        let e = resolve("index.md", "img/missing.png", &index()).unwrap_err();
        assert!(e.contains("img/missing.png"), "{e}");
        let e = resolve("index.md", "../../etc/passwd", &index()).unwrap_err();
        assert!(e.contains("outside"), "{e}");
        let e = resolve("index.md", "guide/absent", &index()).unwrap_err();
        assert!(e.contains("guide/absent.md"), "{e}");
    }
}
