//! The site configuration: `vaultbench.toml` at the repository root, section
//! `[site]`. Every key is optional and the file itself may be absent, so a
//! fresh clone publishes with the defaults.
//!
//! It owns only reading and checking that file; where the values are used is
//! up to the templates, `publish::site` (URLs, sitemap, edit links) and
//! `publish::results` (commit links).

use std::path::Path;

use anyhow::{Result, bail};
use serde::Deserialize;

/// The default configuration file name, looked up in the current folder.
pub const DEFAULT_FILE: &str = "vaultbench.toml";

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SiteConfig {
    /// Shown in the header and in every page's `<title>`.
    pub title: String,
    /// Web address of the repository, without a trailing `/`; commit cells
    /// link to `<repository>/commit/<git_sha>`. `None`: commits are plain text.
    pub repository: Option<String>,
    /// The path the site is served under, with leading and trailing `/`
    /// (`/` at a domain's root, `/vaultbench/` under a sub-path).
    pub base_path: String,
    /// The meta and Open Graph description of pages that have none of their own.
    pub description: Option<String>,
    /// The site's public address, ending in `/` (`https://o.github.io/vaultbench/`):
    /// the sitemap and Open Graph URLs. Its path is the base path.
    pub url: Option<String>,
    /// "Edit this page" links: a web address with `{path}`, the page's path
    /// in the docs folder (`https://github.com/o/r/edit/main/docs/{path}`).
    pub edit_url: Option<String>,
    /// Pages as folders (`guide/setup/`, written as `guide/setup/index.html`)
    /// instead of `guide/setup.html`.
    pub clean_urls: bool,
    /// "Last updated" on docs pages, from the git history when there is one.
    pub last_updated: bool,
    /// The pages' language (`<html lang>`).
    pub lang: String,
    /// The site is `vaultbench view`'s (one result and its baseline, no
    /// history), not a published one; set by the program, never by the file.
    pub view: bool,
}

impl Default for SiteConfig {
    fn default() -> Self {
        SiteConfig {
            title: "vaultbench".into(),
            repository: None,
            base_path: "/".into(),
            description: None,
            url: None,
            edit_url: None,
            clean_urls: false,
            last_updated: true,
            lang: "en".into(),
            view: false,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    site: SiteSection,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct SiteSection {
    title: Option<String>,
    repository: Option<String>,
    base_path: Option<String>,
    description: Option<String>,
    url: Option<String>,
    edit_url: Option<String>,
    clean_urls: Option<bool>,
    last_updated: Option<bool>,
    lang: Option<String>,
}

/// Read the configuration at `path`; a missing file gives the defaults.
pub fn load(path: &Path) -> Result<SiteConfig> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(SiteConfig::default()),
        _ => {}
    }
    let text = crate::fsio::read_text(path)?;
    parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// Parse configuration text; errors name the key and say what would be valid.
pub fn parse(text: &str) -> Result<SiteConfig> {
    let file: ConfigFile = toml::from_str(text).map_err(|e| anyhow::anyhow!("{}", e.to_string().trim_end()))?;
    let mut config = SiteConfig::default();
    if let Some(title) = file.site.title {
        config.title = title;
    }
    if let Some(repo) = file.site.repository {
        let repo = web_address(
            "repository",
            &repo,
            "\"https://github.com/OWNER/REPO\" (or leave it out to show commits as plain text)",
        )?;
        config.repository = Some(repo.trim_end_matches('/').to_string());
    }
    if let Some(base) = &file.site.base_path {
        config.base_path = normalize_base_path(base)?;
    }
    if let Some(url) = file.site.url {
        let url = web_address("url", &url, "\"https://OWNER.github.io/REPO/\"")?;
        let url = if url.ends_with('/') { url } else { format!("{url}/") };
        let after_scheme = url.split_once("://").map_or("", |(_, rest)| rest);
        let path = after_scheme.find('/').map_or("/", |i| &after_scheme[i..]);
        let path = normalize_base_path(path).map_err(|_| {
            anyhow::anyhow!("`site.url` is {url:?}: its path must be a plain URL path such as /vaultbench/")
        })?;
        match &file.site.base_path {
            Some(_) if path != config.base_path => bail!(
                "`site.url` ({url}) is served under {path} but `site.base_path` is {}: leave base_path out \
                 (it follows the url) or make them agree",
                config.base_path
            ),
            _ => config.base_path = path,
        }
        config.url = Some(url);
    }
    if let Some(edit) = file.site.edit_url {
        let edit = web_address("edit_url", &edit, "\"https://github.com/OWNER/REPO/edit/main/docs/{path}\"")?;
        if !edit.contains("{path}") {
            bail!(
                "`site.edit_url` is {edit:?}: it needs `{{path}}` where the page's path in the docs folder goes, \
                 e.g. \"https://github.com/OWNER/REPO/edit/main/docs/{{path}}\""
            );
        }
        config.edit_url = Some(edit);
    }
    config.description = file.site.description.map(|d| d.trim().to_string()).filter(|d| !d.is_empty());
    config.clean_urls = file.site.clean_urls.unwrap_or(false);
    config.last_updated = file.site.last_updated.unwrap_or(true);
    if let Some(lang) = file.site.lang {
        if lang.is_empty() || !lang.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            bail!("`site.lang` is {lang:?}: use a language tag such as \"en\" or \"pt-BR\"");
        }
        config.lang = lang;
    }
    Ok(config)
}

/// A configured web address: http(s), no spaces, quotes or angle brackets.
fn web_address(key: &str, raw: &str, example: &str) -> Result<String> {
    let value = raw.trim().to_string();
    if !(value.starts_with("https://") || value.starts_with("http://")) {
        bail!("`site.{key}` is {value:?}: it must be a web address starting with https://, e.g. {example}");
    }
    if value.chars().any(|c| c.is_whitespace() || matches!(c, '"' | '<' | '>')) {
        bail!("`site.{key}` is {value:?}: a web address has no spaces, quotes or angle brackets");
    }
    Ok(value)
}

/// `docs` -> `/docs/`; `/` stays `/`.
fn normalize_base_path(raw: &str) -> Result<String> {
    let trimmed = raw.trim().trim_matches('/');
    if trimmed.is_empty() {
        return Ok("/".into());
    }
    let ok_segment = |s: &str| {
        !s.is_empty() && s != "." && s != ".." && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_.~".contains(c))
    };
    if !trimmed.split('/').all(ok_segment) {
        bail!(
            "`site.base_path` is {raw:?}: use a URL path such as \"/vaultbench/\" \
             (letters, digits, `-`, `_`, `.`, `~` between slashes)"
        );
    }
    Ok(format!("/{trimmed}/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_order_mark_deep_nesting_and_special_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("vaultbench.toml");
        std::fs::write(&path, "\u{feff}[site]\ntitle = \"T\"\n").unwrap();
        assert_eq!(load(&path).unwrap().title, "T");
        // Nesting past the parser's depth limit is an error, not a stack overflow.
        let deep = format!("x = {}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse(&deep).is_err());
        std::fs::remove_file(&path).unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
            let err = load(&path).unwrap_err().to_string();
            assert!(err.contains("vaultbench.toml") && err.contains("a device"), "{err}");
        }
    }

    #[test]
    fn absent_keys_take_defaults() {
        assert_eq!(parse("").unwrap(), SiteConfig::default());
        assert_eq!(parse("[site]\n").unwrap(), SiteConfig::default());
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(&dir.path().join("none.toml")).unwrap(), SiteConfig::default());
    }

    #[test]
    fn values_are_normalized() {
        let c = parse("[site]\ntitle = \"T\"\nrepository = \"https://example.org/a/b/\"\nbase_path = \"docs/v1\"\n")
            .unwrap();
        assert_eq!(c.title, "T");
        assert_eq!(c.repository.as_deref(), Some("https://example.org/a/b"));
        assert_eq!(c.base_path, "/docs/v1/");
        assert_eq!(parse("[site]\nbase_path = \"/\"").unwrap().base_path, "/");
    }

    #[test]
    fn bad_values_name_the_key_and_the_fix() {
        let e = parse("[site]\ntitel = \"x\"").unwrap_err().to_string();
        assert!(e.contains("titel") && e.contains("title"), "{e}");
        let e = parse("[site]\nrepository = \"javascript:alert(1)\"").unwrap_err().to_string();
        assert!(e.contains("site.repository") && e.contains("https://"), "{e}");
        let e = parse("[site]\nbase_path = \"../up\"").unwrap_err().to_string();
        assert!(e.contains("site.base_path"), "{e}");
        let e = parse("[site]\nedit_url = \"https://x.org/edit\"").unwrap_err().to_string();
        assert!(e.contains("{path}"), "{e}");
        let e = parse("[site]\nurl = \"https://x.org/a/\"\nbase_path = \"/b/\"").unwrap_err().to_string();
        assert!(e.contains("site.base_path") && e.contains("/a/"), "{e}");
        let e = parse("[site]\nlang = \"en\\\"x\"").unwrap_err().to_string();
        assert!(e.contains("site.lang"), "{e}");
    }

    #[test]
    fn the_url_gives_the_base_path() {
        let c =
            parse("[site]\nurl = \"https://o.github.io/vaultbench\"\ndescription = \" Evals \"\nclean_urls = true\n")
                .unwrap();
        assert_eq!(c.url.as_deref(), Some("https://o.github.io/vaultbench/"));
        assert_eq!(c.base_path, "/vaultbench/");
        assert_eq!(c.description.as_deref(), Some("Evals"));
        assert!(c.clean_urls && c.last_updated);
        assert_eq!(parse("[site]\nurl = \"https://x.org\"").unwrap().base_path, "/");
    }
}
