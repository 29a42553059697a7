//! A problem found in a suite file, printed as
//! `evals/tasks/x.json:3:9: error at `outputMatchers[1]`: unknown field `flag` (help: did you mean `flags`?)`.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::fsio::JsonError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Debug, Clone, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    pub file: PathBuf,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub field: Option<String>,
    pub message: String,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn error(file: &Path, message: String, help: Option<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            file: file.to_path_buf(),
            line: None,
            column: None,
            field: None,
            message,
            help,
        }
    }

    pub fn warning(file: &Path, message: String, help: Option<String>) -> Diagnostic {
        Diagnostic { severity: Severity::Warning, ..Diagnostic::error(file, message, help) }
    }

    pub fn field(mut self, field: impl Into<String>) -> Diagnostic {
        self.field = Some(field.into());
        self
    }

    pub fn at(mut self, position: Option<(usize, usize)>) -> Diagnostic {
        if let Some((line, column)) = position {
            self.line = Some(line);
            self.column = Some(column);
        }
        self
    }

    /// A parse error, with a did-you-mean when serde names the alternatives.
    pub fn from_json_error(file: &Path, e: &JsonError) -> Diagnostic {
        let help = suggestion(&e.message);
        let field = (!e.field.is_empty() && e.field != ".").then(|| e.field.clone());
        Diagnostic {
            severity: Severity::Error,
            file: file.to_path_buf(),
            line: Some(e.line),
            column: Some(e.column),
            field,
            message: e.message.clone(),
            help,
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let (Some(l), Some(c)) = (self.line, self.column) {
            write!(f, ":{l}:{c}")?;
        }
        let kind = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, ": {kind}")?;
        if let Some(field) = &self.field {
            write!(f, " at `{field}`")?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(help) = &self.help {
            write!(f, " (help: {help})")?;
        }
        Ok(())
    }
}

/// For serde's "unknown field `x`, expected one of `a`, `b`" and "unknown
/// variant ..." messages: the closest expected name, or the list.
fn suggestion(message: &str) -> Option<String> {
    if !message.starts_with("unknown field") && !message.starts_with("unknown variant") {
        return None;
    }
    let names: Vec<&str> = message.split('`').skip(1).step_by(2).collect();
    let (unknown, expected) = names.split_first()?;
    if expected.is_empty() {
        return Some(format!("remove `{unknown}`"));
    }
    // Without a clear winner the message itself already lists the choices.
    did_you_mean(unknown, expected).map(|best| format!("did you mean `{best}`?"))
}

/// The one candidate clearly closest to `word`, if any is close enough.
pub fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let lower = word.to_lowercase();
    let mut scored: Vec<(f64, &str)> =
        candidates.iter().map(|c| (strsim::jaro_winkler(&lower, &c.to_lowercase()), *c)).collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    match scored.as_slice() {
        [(best, name), rest @ ..] if *best >= 0.8 && rest.first().is_none_or(|(second, _)| second < best) => Some(name),
        _ => None,
    }
}

/// Up to `n` of `candidates` near `word`, nearest first: what to suggest
/// for a mistyped model id (`gemini-2.5-flsh`), where several may fit.
pub fn nearest<'a>(word: &str, candidates: &[&'a str], n: usize) -> Vec<&'a str> {
    let lower = word.to_lowercase();
    let mut scored: Vec<(f64, &str)> = candidates
        .iter()
        .filter(|c| **c != word)
        .map(|c| (strsim::jaro_winkler(&lower, &c.to_lowercase()), *c))
        .filter(|(score, _)| *score >= 0.85)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(n).map(|(_, c)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_model_ids_come_nearest_first() {
        let known = ["gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-2.5-pro", "gpt-4o", "llama3:8b"];
        assert_eq!(
            nearest("gemini-2.5-flsh", &known, 3),
            ["gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-2.5-pro"]
        );
        assert_eq!(nearest("llama3:8", &known, 3), ["llama3:8b"]);
        assert!(nearest("something-else-entirely", &known, 3).is_empty());
        assert!(nearest("gpt-4o", &known, 3).is_empty(), "an exact id is not a suggestion for itself");
    }

    #[test]
    fn suggests_the_closest_field() {
        let m = "unknown field `expectTools`, expected one of `id`, `expectedTools`, `forbiddenTools`";
        assert_eq!(suggestion(m).unwrap(), "did you mean `expectedTools`?");
        let m = "unknown variant `containz`, expected one of `contains`, `regex`, `judge`";
        assert_eq!(suggestion(m).unwrap(), "did you mean `contains`?");
        // No clear winner: serde's message already lists the choices.
        let m = "unknown variant `T5`, expected one of `T1`, `T2`, `T3`, `T4`";
        assert_eq!(suggestion(m), None);
        assert_eq!(suggestion("invalid type: string"), None);
    }
}
