//! URLs: the one place a link is made from a path. The site's URL scheme
//! (a page's logical path `guide/x.html`, where it is written,
//! `guide/x/index.html` with clean URLs, and how it is linked, `guide/x/`),
//! relative links between written files, and [`href`], which encodes every
//! segment of a path. Every link the site writes from a name it does not
//! control (a docs page's or asset's path, a baseline's file name, a task
//! id) goes through here: HTML, the search index, the sitemap and the
//! redirects (templates reach it through the `url` filter).

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// What [`href`] percent-encodes: everything but the unreserved characters
/// of RFC 3986 (letters, digits, `-`, `.`, `_`, `~`).
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// The URL of the output path `rel` (`/`-separated, relative to the site root
/// or to a page's folder), safe whatever the names in it: each segment is
/// percent-encoded, so no `:` can make a scheme (`javascript:`), no `?`, `#`
/// or `%` changes the meaning, and no quote, space or angle bracket breaks
/// out of an attribute; empty and `.` segments are dropped, so the result
/// never starts with `/` or `//`. It is always a relative path. (`..`
/// segments, which only generated relative links contain, are kept: no file
/// or folder name is `..`.)
pub fn href(rel: &str) -> String {
    let segments: Vec<String> = rel
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .map(|s| utf8_percent_encode(s, SEGMENT).to_string())
        .collect();
    if segments.is_empty() {
        return "./".to_string();
    }
    // A folder link (`guide/`, clean URLs) keeps its final `/`.
    let slash = if rel.ends_with('/') { "/" } else { "" };
    format!("{}{slash}", segments.join("/"))
}

/// The logical output of a docs page: `guide/x.md` -> `guide/x.html`.
pub fn page_html(rel: &str) -> String {
    format!("{}.html", rel.strip_suffix(".md").unwrap_or(rel))
}

/// Where a logical path is written: with clean URLs, `guide/x.html` goes
/// to `guide/x/index.html` (an `index.html` stays where it is).
pub fn output_path(logical: &str, clean_urls: bool) -> String {
    match logical.strip_suffix(".html") {
        Some(stem) if clean_urls && !(stem == "index" || stem.ends_with("/index")) => format!("{stem}/index.html"),
        _ => logical.to_string(),
    }
}

/// How a logical path is linked, from the site root: with clean URLs,
/// `guide/x.html` is `guide/x/` and `guide/index.html` is `guide/`.
pub fn href_path(logical: &str, clean_urls: bool) -> String {
    if !clean_urls {
        return logical.to_string();
    }
    match logical.strip_suffix(".html") {
        Some("index") => String::new(),
        Some(stem) => format!("{}/", stem.strip_suffix("/index").unwrap_or(stem)),
        None => logical.to_string(),
    }
}

/// The way up from a written file to the site root: `` or `../../`.
pub fn root_of(out: &str) -> String {
    "../".repeat(out.matches('/').count())
}

/// The relative link from the file written at `from` to `to` (both from
/// the site root; `to` may be a folder, `guide/`, or the root, ``).
pub fn relative_from(from: &str, to: &str) -> String {
    let from_dirs: Vec<&str> = from.split('/').collect::<Vec<_>>()[..from.matches('/').count()].to_vec();
    let to_parts: Vec<&str> = if to.is_empty() { vec![""] } else { to.split('/').collect() };
    let common = from_dirs.iter().zip(&to_parts[..to_parts.len() - 1]).take_while(|(a, b)| a == b).count();
    let mut out: Vec<&str> = vec![".."; from_dirs.len() - common];
    out.extend(&to_parts[common..]);
    let link = out.join("/");
    // The page's own folder: `./`, never an empty link (which is the page itself).
    if link.is_empty() { "./".into() } else { link }
}

/// The link from the file written at `from_out` to the logical path `to`,
/// encoded: the one function a page uses to link another.
pub fn link(from_out: &str, to: &str, clean_urls: bool) -> String {
    href(&relative_from(from_out, &href_path(to, clean_urls)))
}

/// The link to the logical path `to` from the site root, encoded: what the
/// search index, the sitemap and the canonical address append to the site's
/// root. The home page with clean URLs is the empty path.
pub fn from_root(to: &str, clean_urls: bool) -> String {
    let path = href_path(to, clean_urls);
    if path.is_empty() { path } else { href(&path) }
}

/// A fragment (`#...` without the `#`), encoded as [`href`] encodes a
/// segment: what follows the `#` of a link to a heading or a run.
pub fn fragment(id: &str) -> String {
    utf8_percent_encode(id, SEGMENT).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hrefs_are_relative_and_encoded_whatever_the_name() {
        assert_eq!(href("baselines/ollama-gemma4-e4b.html"), "baselines/ollama-gemma4-e4b.html");
        assert_eq!(href("javascript:alert(1).evidence.tar.gz"), "javascript%3Aalert%281%29.evidence.tar.gz");
        assert_eq!(href("baselines/a b\"<x>?#%.html"), "baselines/a%20b%22%3Cx%3E%3F%23%25.html");
        assert_eq!(href("/evil//./x.html"), "evil/x.html");
        assert_eq!(href("//host/x"), "host/x");
        assert_eq!(href("../guide/é.html"), "../guide/%C3%A9.html");
        assert_eq!(href(""), "./");
        assert_eq!(href("guide/a b/"), "guide/a%20b/");
        assert_eq!(href("../"), "../");
        for name in ["javascript:x", "data:text/html,x", "vbscript:x", "JaVaScRiPt:x", "\u{0}:x", " javascript:x"] {
            let h = href(name);
            assert!(!h.contains(':') && !h.starts_with('/'), "{name} -> {h}");
        }
    }

    #[test]
    fn fragments_are_encoded_like_segments() {
        assert_eq!(fragment("run-3"), "run-3");
        assert_eq!(fragment("a b#\"c"), "a%20b%23%22c");
    }

    #[test]
    fn the_scheme_and_relative_links() {
        assert_eq!(output_path("guide/setup.html", true), "guide/setup/index.html");
        assert_eq!(output_path("guide/index.html", true), "guide/index.html");
        assert_eq!(href_path("index.html", true), "");
        assert_eq!(relative_from("index.html", ""), "./");
        assert_eq!(root_of("guide/setup/index.html"), "../../");
        assert_eq!(link("guide/setup.html", "results.html", false), "../results.html");
        assert_eq!(link("guide/setup/index.html", "x y.html", true), "../../x%20y/");
        assert_eq!(from_root("index.html", true), "");
        assert_eq!(from_root("javascript:alert(1).html", false), "javascript%3Aalert%281%29.html");
        assert_eq!(from_root("a#b?c.html", true), "a%23b%3Fc/");
    }
}
