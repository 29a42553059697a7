//! A check in words, for people reading a verdict (`suite check`, the
//! results explorer): the rule and the value it looked for, never the
//! compiled pattern.
//!
//! Given the task's compiled source, a matcher or assertion is explained by
//! the rule that wrote it. Without a source (an upstream task, a result
//! recorded before the source changed), a pattern of one of the legacy
//! templates is read back into its values; any other check is described by
//! its type and, when short, its value.

use super::compile::{Compiled, SCRATCH};
use super::legacy;
use crate::format::result::MatcherDetail;
use crate::format::task::{Matcher, VaultAssertion};

/// Patterns longer than this are described, not quoted.
const QUOTE_LIMIT: usize = 80;

/// Explains the checks of one task.
#[derive(Debug, Clone, Default)]
pub struct Explainer {
    compiled: Option<Compiled>,
}

impl Explainer {
    /// `compiled`: the task's source as compiled now, if it has one.
    pub fn new(compiled: Option<Compiled>) -> Explainer {
        Explainer { compiled }
    }

    /// An output matcher in words.
    pub fn matcher(&self, m: &Matcher) -> String {
        if let Some(c) = &self.compiled
            && let Some(i) = c.output_matchers.iter().position(|x| x == m)
        {
            return c.matcher_notes[i].clone();
        }
        match m {
            Matcher::Contains { value } => format!("the answer contains {}", any_of(value.as_slice())),
            Matcher::Regex { value, flags } => {
                let described: Vec<String> = value.as_slice().iter().map(|p| pattern(p, flags.as_deref())).collect();
                described.join(", or ")
            }
            Matcher::Judge { criteria } => format!("the judge is asked: {criteria}"),
        }
    }

    /// A matcher as a result file records it.
    pub fn detail(&self, d: &MatcherDetail) -> String {
        self.matcher(&match d {
            MatcherDetail::Contains { value, .. } => Matcher::Contains { value: value.clone() },
            MatcherDetail::Regex { value, flags, .. } => Matcher::Regex { value: value.clone(), flags: flags.clone() },
            MatcherDetail::Judge { criteria, .. } => Matcher::Judge { criteria: criteria.clone() },
        })
    }

    /// A vault assertion in words.
    pub fn assertion(&self, a: &VaultAssertion) -> String {
        if let Some(c) = &self.compiled
            && let Some(i) = c.vault_assertions.iter().position(|x| x == a)
        {
            return c.assertion_notes[i].clone();
        }
        match a {
            VaultAssertion::FileExists { path } => format!("{path} exists"),
            VaultAssertion::FileAbsent { path } => format!("{path} is not there"),
            VaultAssertion::FileContains { path, value } => format!("{path} contains {}", any_of(value.as_slice())),
            VaultAssertion::FileLacks { path, value } => {
                format!(
                    "{path} contains none of {}",
                    value.as_slice().iter().map(|v| format!("\"{v}\"")).collect::<Vec<_>>().join(", ")
                )
            }
            VaultAssertion::FileMatches { path, value, flags } => {
                let described: Vec<String> = value.as_slice().iter().map(|p| pattern(p, flags.as_deref())).collect();
                format!("{path}: {}", described.join(", or "))
            }
            VaultAssertion::FrontmatterEquals { path, key, value } => format!("{path}: frontmatter `{key}` is {value}"),
            VaultAssertion::FileUnchanged { path, fixture } if *path == format!("{SCRATCH}/{fixture}") => {
                format!("{path} is byte for byte as in the fixture")
            }
            VaultAssertion::FileUnchanged { path, fixture } => {
                format!("{path} holds the fixture's {fixture} byte for byte")
            }
            VaultAssertion::NothingElseChanged { except } if except.is_empty() => {
                "nothing in the vault changed and no file was added".into()
            }
            VaultAssertion::NothingElseChanged { except } => {
                format!("nothing in the vault changed but {} and no other file was added", except.join(", "))
            }
        }
    }
}

fn any_of(values: &[String]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| format!("\"{v}\"")).collect();
    match quoted.len() {
        1 => quoted[0].clone(),
        _ => format!("one of {}", quoted.join(", ")),
    }
}

/// A pattern without a source: a legacy template's values, or the pattern
/// itself when short enough to read.
fn pattern(p: &str, flags: Option<&str>) -> String {
    if let Some(d) = legacy::decompile(p) {
        return legacy::explain(&d);
    }
    let n = p.chars().count();
    if n <= QUOTE_LIMIT {
        format!("the text matches /{p}/{}", flags.unwrap_or_default())
    } else {
        format!("the text matches a pattern written by hand ({n} characters)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::compile::{Context, compile, parse};
    use crate::format::OneOrMany;

    fn compiled() -> Compiled {
        let source = parse("[[line]]\nlabel = \"Toll\"\nnumber = 9\n\n[vault]\nnothing_else_changes = true\n").unwrap();
        let cx = Context { user_message: "A line `Toll: <amount>`.", fixture: &|p| Err(p.to_string()) };
        compile(&source, &cx).unwrap()
    }

    #[test]
    fn a_compiled_check_is_explained_by_its_rule_not_its_pattern() {
        let c = compiled();
        let e = Explainer::new(Some(c.clone()));
        let Matcher::Regex { value, flags } = &c.output_matchers[1] else { panic!() };
        let detail = MatcherDetail::Regex { value: value.clone(), flags: flags.clone(), verdict: false, error: None };
        let words = e.detail(&detail);
        assert_eq!(words, "the first line \"Toll: ...\" gives no other number (a second value there is a hedge)");
        assert!(!words.contains('\\'));
        assert_eq!(e.assertion(&c.vault_assertions[0]), "nothing in the vault changed and no file was added");
        assert_eq!(e.matcher(&c.output_matchers[0]), "the answer has a line \"Toll: ...\" giving 9");
    }

    #[test]
    fn without_a_source_legacy_and_short_patterns_are_still_read() {
        let e = Explainer::default();
        let legacy = r"(?:^|[.;!?\n(,])(?=(?:[^.;!?\n(,]|[.,]\d){0,200}?(?:\bfog))(?:(?!drill)(?:[^.;!?\n(,]|[.,]\d)){0,200}?(?:\bfog)";
        let m = Matcher::Regex { value: OneOrMany::One(legacy.into()), flags: Some("i".into()) };
        assert_eq!(e.matcher(&m), r"some clause states /\bfog/ without any of the words /drill/ before it");
        let m = Matcher::Regex { value: OneOrMany::One(r"\bC-?14\b".into()), flags: None };
        assert_eq!(e.matcher(&m), r"the text matches /\bC-?14\b/");
        let long = Matcher::Regex { value: OneOrMany::One("x".repeat(300)), flags: None };
        assert_eq!(e.matcher(&long), "the text matches a pattern written by hand (300 characters)");
        let m = Matcher::Contains { value: OneOrMany::Many(vec!["a".into(), "b".into()]) };
        assert_eq!(e.matcher(&m), "the answer contains one of \"a\", \"b\"");
        // A stale source explains nothing it did not write.
        let stale = Explainer::new(Some(compiled()));
        assert_eq!(stale.matcher(&Matcher::Judge { criteria: "Says 9.".into() }), "the judge is asked: Says 9.");
        let moved = VaultAssertion::FileUnchanged { path: "eval-scratch/old/a.md".into(), fixture: "a.md".into() };
        assert_eq!(e.assertion(&moved), "eval-scratch/old/a.md holds the fixture's a.md byte for byte");
    }
}
