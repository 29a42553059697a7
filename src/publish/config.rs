//! The site configuration: `vaultbench.toml` at the repository root, section
//! `[site]`. Every key is optional and the file itself may be absent, so a
//! fresh clone publishes with the defaults.
//!
//! It owns only reading and checking that file; where the values are used is
//! up to the templates and `publish::results` (commit links).

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
}

impl Default for SiteConfig {
    fn default() -> Self {
        SiteConfig { title: "vaultbench".into(), repository: None, base_path: "/".into() }
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
        let repo = repo.trim().trim_end_matches('/').to_string();
        if !(repo.starts_with("https://") || repo.starts_with("http://")) {
            bail!(
                "`site.repository` is {repo:?}: it must be a web address starting with https:// \
                 (e.g. \"https://github.com/OWNER/REPO\"), or be left out to show commits as plain text"
            );
        }
        if repo.chars().any(|c| c.is_whitespace() || matches!(c, '"' | '<' | '>')) {
            bail!("`site.repository` is {repo:?}: a web address has no spaces, quotes or angle brackets");
        }
        config.repository = Some(repo);
    }
    if let Some(base) = file.site.base_path {
        config.base_path = normalize_base_path(&base)?;
    }
    Ok(config)
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
    }
}
