//! Token prices (`evals/pricing.toml`) and the cost of a run: the sum over
//! its model calls of uncached input, cached input and output tokens at the
//! model's prices — what the provider bills. (The reference harness priced
//! only the largest prompt of a run, which undercounts multi-turn runs.)
//!
//! It does not know how runs happen; the agent reports each call's usage.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Result, bail};
use serde::Deserialize;

use crate::provider::Usage;
use crate::{fsio, jsnum};

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub cached_input: f64,
    pub output: f64,
}

/// The pricing file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceTable {
    /// `YYYY-MM-DD`: when the prices were read from the source.
    pub read_on: String,
    /// Where they were read.
    pub source: String,
    #[serde(default)]
    pub notes: Option<String>,
    /// Keyed by model id.
    #[serde(default)]
    pub models: BTreeMap<String, Price>,
}

impl PriceTable {
    pub fn load(path: &Path) -> Result<PriceTable> {
        let text = fsio::read_text(path)?;
        let table: PriceTable =
            toml::from_str(&text).map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
        for (model, p) in &table.models {
            for (field, v) in [("input", p.input), ("cached_input", p.cached_input), ("output", p.output)] {
                if !v.is_finite() || v < 0.0 {
                    bail!(
                        "reading {}: models.\"{model}\".{field} is {v}: prices are dollars per 1M tokens, 0 or more",
                        path.display()
                    );
                }
            }
        }
        Ok(table)
    }

    pub fn get(&self, model: &str) -> Option<Price> {
        self.models.get(model).copied()
    }

    /// The priced model ids nearest to `model` (a typo's likely meaning).
    pub fn nearest(&self, model: &str) -> Vec<&str> {
        let ids: Vec<&str> = self.models.keys().map(String::as_str).collect();
        crate::suite::diagnostics::nearest(model, &ids, 3)
    }
}

/// Providers that bill per token: a model of theirs without a price is an
/// error before a sweep starts (unless allowed), never a silent $0.
pub fn bills_tokens(provider: &str) -> bool {
    provider == "gemini"
}

/// How a sweep prices its runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Pricing {
    Priced(Price),
    /// Costs are 0: a local provider, or an unpriced model allowed with a warning.
    Free,
}

/// The pricing for (provider, model), or an error naming the fix.
pub fn for_model(
    table: Option<&PriceTable>,
    table_path: &Path,
    provider: &str,
    model: &str,
    allow_unpriced: bool,
) -> Result<(Pricing, Option<String>)> {
    if let Some(price) = table.and_then(|t| t.get(model)) {
        return Ok((Pricing::Priced(price), None));
    }
    if !bills_tokens(provider) {
        return Ok((Pricing::Free, None));
    }
    let why = match table {
        None => format!("there is no pricing file at {}", table_path.display()),
        Some(t) => {
            let near = t.nearest(model);
            let mut why = format!("{} has no [models.\"{model}\"] entry", table_path.display());
            if !near.is_empty() {
                why.push_str(&format!(" (did you mean {}?)", near.join(" or ")));
            }
            why
        }
    };
    if allow_unpriced {
        Ok((
            Pricing::Free,
            Some(format!("{provider} model `{model}` is unpriced ({why}): its costs are recorded as $0")),
        ))
    } else {
        bail!(
            "{provider} model `{model}` has no price: {why}. Add its $/1M-token prices (input, cached_input, output) \
             with the date you read them, or pass --allow-unpriced to record $0"
        )
    }
}

/// Dollars for one run's model calls, rounded to 6 decimals like the reference harness.
pub fn cost(pricing: &Pricing, calls: &[Usage]) -> f64 {
    let Pricing::Priced(p) = pricing else { return 0.0 };
    let dollars: f64 = calls
        .iter()
        .map(|u| {
            let cached = u.cached_tokens.unwrap_or(0).min(u.prompt_tokens);
            let uncached = u.prompt_tokens - cached;
            (uncached as f64 * p.input + cached as f64 * p.cached_input + u.output_tokens as f64 * p.output) / 1e6
        })
        .sum();
    jsnum::round(dollars, 6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_may_start_with_a_byte_order_mark_and_never_nests_without_bound() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pricing.toml");
        let text =
            "read_on = \"2026-11-01\"\nsource = \"s\"\n[models.\"m\"]\ninput = 1.0\ncached_input = 0.5\noutput = 2.0\n";
        std::fs::write(&path, format!("\u{feff}{text}")).unwrap();
        assert_eq!(PriceTable::load(&path).unwrap().get("m").unwrap().output, 2.0);
        std::fs::write(&path, format!("{text}x = {}{}", "[".repeat(100_000), "]".repeat(100_000))).unwrap();
        let err = PriceTable::load(&path).unwrap_err().to_string();
        assert!(err.contains("pricing.toml"), "{err}");
    }

    fn table() -> PriceTable {
        toml::from_str(
            "read_on = \"2026-11-22\"\nsource = \"https://example.test/pricing\"\n\
             [models.\"gemini-2.5-flash\"]\ninput = 0.30\ncached_input = 0.03\noutput = 2.50\n",
        )
        .unwrap()
    }

    #[test]
    fn cost_sums_every_call_at_its_three_rates() {
        let (pricing, warning) =
            for_model(Some(&table()), Path::new("p.toml"), "gemini", "gemini-2.5-flash", false).unwrap();
        assert!(warning.is_none());
        let calls = [
            Usage { prompt_tokens: 10_000, cached_tokens: None, output_tokens: 100 },
            Usage { prompt_tokens: 12_000, cached_tokens: Some(10_000), output_tokens: 200 },
        ];
        // 10000*.3 + 100*2.5 + 2000*.3 + 10000*.03 + 200*2.5 = 3000+250+600+300+500 = 4650 per 1M.
        assert_eq!(cost(&pricing, &calls), 0.00465);
        assert_eq!(cost(&Pricing::Free, &calls), 0.0);
    }

    #[test]
    fn unpriced_gemini_is_an_error_unless_allowed_local_is_free() {
        let t = table();
        let err = for_model(Some(&t), Path::new("p.toml"), "gemini", "gemini-9", false).unwrap_err().to_string();
        assert!(err.contains("gemini-9") && err.contains("--allow-unpriced"), "{err}");
        let (p, w) = for_model(Some(&t), Path::new("p.toml"), "gemini", "gemini-9", true).unwrap();
        assert_eq!(p, Pricing::Free);
        assert!(w.unwrap().contains("$0"));
        assert_eq!(for_model(None, Path::new("p.toml"), "ollama", "gemma", false).unwrap().0, Pricing::Free);
        assert!(
            for_model(None, Path::new("p.toml"), "gemini", "x", false)
                .unwrap_err()
                .to_string()
                .contains("no pricing file")
        );
        // A local model listed in the file is priced.
        assert!(matches!(
            for_model(Some(&t), Path::new("p.toml"), "openai", "gemini-2.5-flash", false).unwrap().0,
            Pricing::Priced(_)
        ));
    }

    #[test]
    fn the_committed_pricing_file_loads() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("evals/pricing.toml");
        let t = PriceTable::load(&path).unwrap();
        assert!(t.source.starts_with("https://"));
        assert_eq!(t.read_on.len(), 10);
        assert!(t.get("gemini-2.5-flash").is_some());
    }
}
