//! The quotas file (`evals/quotas.toml` by default, `run --quotas FILE`):
//! the rates a model server allows, per provider and model, that a sweep
//! paces its requests to. Flags (`--rpm`, `--tpm`, and `--judge-rpm`,
//! `--judge-tpm` for the judge) win over an entry.
//!
//! ```toml
//! read_on = "2026-11-23"
//! source = "https://ai.google.dev/gemini-api/docs/rate-limits"
//!
//! [gemini."gemini-2.5-flash"]
//! requests_per_minute = 10
//! tokens_per_minute = 250000
//! requests_per_day = 250
//! ```
//!
//! A model without an entry is not paced in advance: its quota is learned
//! from the server (see `provider::quota`). `requests_per_day` paces
//! nothing (a sweep does not wait for midnight); `run --dry-run` compares a
//! sweep's requests with it. It owns reading and checking the file only.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Result, bail};
use serde::Deserialize;

use crate::fsio;
use crate::limits::QuotaRates;

/// One model's limits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuotaEntry {
    pub requests_per_minute: Option<f64>,
    pub tokens_per_minute: Option<f64>,
    pub requests_per_day: Option<f64>,
}

impl QuotaEntry {
    pub fn rates(&self) -> QuotaRates {
        QuotaRates { requests_per_minute: self.requests_per_minute, tokens_per_minute: self.tokens_per_minute }
    }
}

/// The quotas file: entries by provider, then model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QuotaTable {
    pub read_on: Option<String>,
    pub source: Option<String>,
    pub entries: BTreeMap<String, BTreeMap<String, QuotaEntry>>,
}

/// Keys of the file that are not providers.
const META: [&str; 3] = ["read_on", "source", "notes"];

impl QuotaTable {
    /// The file at `path`; a missing file is an empty table.
    pub fn load_optional(path: &Path) -> Result<QuotaTable> {
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(QuotaTable::default()),
            _ => QuotaTable::parse(&fsio::read_text(path)?)
                .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display())),
        }
    }

    /// The file's text; errors name the key.
    pub fn parse(text: &str) -> Result<QuotaTable> {
        let doc: toml::Table = toml::from_str(text).map_err(|e| anyhow::anyhow!("{}", e.to_string().trim_end()))?;
        let mut table = QuotaTable::default();
        for (key, value) in doc {
            if META.contains(&key.as_str()) {
                let Some(text) = value.as_str() else { bail!("`{key}` must be a string") };
                match key.as_str() {
                    "read_on" => table.read_on = Some(text.to_string()),
                    "source" => table.source = Some(text.to_string()),
                    _ => {}
                }
                continue;
            }
            let Some(models) = value.as_table() else {
                bail!(
                    "`{key}` is not a table of models: write entries as [PROVIDER.\"MODEL\"] with \
                     requests_per_minute, tokens_per_minute, requests_per_day"
                )
            };
            let mut by_model = BTreeMap::new();
            for (model, entry) in models {
                let entry: QuotaEntry = entry
                    .clone()
                    .try_into()
                    .map_err(|e| anyhow::anyhow!("[{key}.\"{model}\"]: {}", e.to_string().trim_end()))?;
                for (field, v) in [
                    ("requests_per_minute", entry.requests_per_minute),
                    ("tokens_per_minute", entry.tokens_per_minute),
                    ("requests_per_day", entry.requests_per_day),
                ] {
                    if let Some(v) = v
                        && !(v.is_finite() && v > 0.0)
                    {
                        bail!("[{key}.\"{model}\"] {field} is {v}: a rate is a number above 0");
                    }
                }
                by_model.insert(model.clone(), entry);
            }
            table.entries.insert(key, by_model);
        }
        Ok(table)
    }

    /// The entry for (`provider`, `model`), if any.
    pub fn get(&self, provider: &str, model: &str) -> Option<QuotaEntry> {
        self.entries.get(provider).and_then(|m| m.get(model)).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_read_by_provider_and_model() {
        let t = QuotaTable::parse(
            r#"read_on = "2026-11-23"
source = "https://example.org"
[gemini."gemini-2.5-flash"]
requests_per_minute = 10
tokens_per_minute = 250000
requests_per_day = 250
[openai."qwen3:8b"]
requests_per_minute = 600
"#,
        )
        .unwrap();
        let e = t.get("gemini", "gemini-2.5-flash").unwrap();
        assert_eq!(e.rates(), QuotaRates { requests_per_minute: Some(10.0), tokens_per_minute: Some(250000.0) });
        assert_eq!(e.requests_per_day, Some(250.0));
        assert_eq!(t.get("openai", "qwen3:8b").unwrap().requests_per_minute, Some(600.0));
        assert_eq!(t.get("gemini", "other"), None);
        assert_eq!(t.read_on.as_deref(), Some("2026-11-23"));
    }

    #[test]
    fn mistakes_name_the_entry_and_field() {
        let err = |text: &str| QuotaTable::parse(text).unwrap_err().to_string();
        assert!(err("[gemini.m]\nrequests_per_minut = 3\n").contains("[gemini.\"m\"]"));
        assert!(err("[gemini.m]\nrequests_per_minute = 0\n").contains("requests_per_minute is 0"));
        assert!(err("[gemini.m]\nrequests_per_minute = nan\n").contains("a rate is a number above 0"));
        assert!(err("gemini = 3\n").contains("not a table of models"));
        assert!(err("read_on = 3\n").contains("`read_on` must be a string"));
    }

    #[test]
    fn the_projects_file_and_its_commented_examples_parse() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("evals/quotas.toml");
        let text = std::fs::read_to_string(&path).unwrap();
        QuotaTable::parse(&text).unwrap();
        // The tier examples are commented out; uncommented, each is a valid entry.
        let uncommented: String = text
            .lines()
            .map(|l| {
                l.strip_prefix("# ")
                    .filter(|r| {
                        r.starts_with(|c: char| c == '[' || c.is_ascii_lowercase())
                            && (r.starts_with('[') || r.contains(" = "))
                    })
                    .unwrap_or(l)
            })
            .collect::<Vec<_>>()
            .join("\n");
        let examples = QuotaTable::parse(&uncommented).unwrap();
        assert!(examples.get("gemini", "gemini-2.5-flash").is_some(), "{uncommented}");
    }
}
