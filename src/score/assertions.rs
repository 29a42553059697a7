//! Vault assertions: verdicts on what the run left in the vault. They read a
//! [`VaultState`] snapshot taken after the run, never the disk, so they are
//! pure and the runner decides when to take the snapshot.

use std::collections::{BTreeMap, HashMap};

use crate::format::result::AssertionDetail;
use crate::format::task::VaultAssertion;

use super::sandbox::RegexBudget;
use super::{frontmatter, matchers};

/// The files a task's assertions look at, as they were after the run, and the
/// fixture files they compare against.
#[derive(Debug, Clone, Default)]
pub struct VaultState {
    /// Vault-relative path to bytes; a path that is absent did not exist.
    pub files: HashMap<String, Vec<u8>>,
    /// Fixture file name (relative to the task's fixture folder) to bytes.
    pub fixtures: HashMap<String, Vec<u8>>,
    /// Every file of the vault as the run found it and as it left it, for
    /// `nothingElseChanged`; `None` when no assertion needs it.
    pub tree: Option<Tree>,
}

/// Every file of a vault before and after a run (vault-relative paths).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tree {
    pub before: BTreeMap<String, Vec<u8>>,
    pub after: BTreeMap<String, Vec<u8>>,
}

impl Tree {
    /// Files outside `except` that differ: (changed, added, removed).
    pub fn changes(&self, except: &[String]) -> (Vec<&str>, Vec<&str>, Vec<&str>) {
        let free = |p: &String| !except.contains(p);
        let (mut changed, mut added) = (Vec::new(), Vec::new());
        for (path, bytes) in self.after.iter().filter(|(p, _)| free(p)) {
            match self.before.get(path) {
                None => added.push(path.as_str()),
                Some(b) if b != bytes => changed.push(path.as_str()),
                Some(_) => {}
            }
        }
        let removed =
            self.before.keys().filter(|p| free(p) && !self.after.contains_key(*p)).map(String::as_str).collect();
        (changed, added, removed)
    }
}

/// Evaluate every assertion; all must hold.
pub fn evaluate(
    assertions: &[VaultAssertion],
    state: &VaultState,
    budget: RegexBudget,
) -> (bool, Vec<AssertionDetail>) {
    let details: Vec<AssertionDetail> = assertions
        .iter()
        .map(|a| {
            let (ok, reason) = evaluate_one(a, state, budget);
            AssertionDetail { kind: a.type_name().to_string(), path: a.path().to_string(), ok, reason }
        })
        .collect();
    (details.iter().all(|d| d.ok), details)
}

fn evaluate_one(assertion: &VaultAssertion, state: &VaultState, budget: RegexBudget) -> (bool, String) {
    let bytes = state.files.get(assertion.path());
    // Text checks read the file as UTF-8; invalid sequences become U+FFFD so a
    // binary file can still be checked (and fail) instead of erroring.
    let text = bytes.map(|b| String::from_utf8_lossy(b));
    let verdict = |ok: bool, yes: &str, no: &str| (ok, if ok { yes } else { no }.to_string());
    match assertion {
        VaultAssertion::FileExists { .. } => verdict(bytes.is_some(), "exists", "file missing"),
        VaultAssertion::FileAbsent { .. } => verdict(bytes.is_none(), "absent", "file still present"),
        VaultAssertion::FileContains { value, .. } => match text {
            None => (false, "file missing".into()),
            Some(t) => verdict(matchers::contains(value, &t), "substring found", "substring not found"),
        },
        VaultAssertion::FileLacks { value, .. } => match text {
            None => (false, "file missing".into()),
            Some(t) => verdict(!matchers::contains(value, &t), "clean", "forbidden substring present"),
        },
        VaultAssertion::FileMatches { value, flags, .. } => match text {
            None => (false, "file missing".into()),
            Some(t) => match matchers::regex(value, flags.as_deref(), &t, budget) {
                (true, _) => (true, "pattern matched".into()),
                (false, Some(error)) => (false, error),
                (false, None) => (false, "pattern not matched".into()),
            },
        },
        VaultAssertion::FrontmatterEquals { key, value, .. } => match text {
            None => (false, "file missing".into()),
            Some(t) => match frontmatter::parse(&t) {
                Err(e) => (false, e),
                Ok(None) => (false, format!("no frontmatter; expected \"{key}\" = {value}")),
                Ok(Some(fm)) => match fm.get(key) {
                    Some(actual) if frontmatter::deep_equal(actual, value) => (true, "frontmatter matches".into()),
                    Some(actual) => (false, format!("frontmatter \"{key}\" = {actual}, expected {value}")),
                    None => (false, format!("frontmatter has no \"{key}\"; expected {value}")),
                },
            },
        },
        VaultAssertion::FileUnchanged { fixture, .. } => match (bytes, state.fixtures.get(fixture)) {
            (None, _) => (false, "file missing".into()),
            (_, None) => (false, format!("no fixture \"{fixture}\" to compare")),
            (Some(now), Some(original)) => verdict(now == original, "unchanged", "content was modified"),
        },
        VaultAssertion::NothingElseChanged { except } => match &state.tree {
            None => (false, "no snapshot of the whole vault to compare".into()),
            Some(tree) => {
                let (changed, added, removed) = tree.changes(except);
                let mut why = Vec::new();
                for (what, paths) in [("changed", changed), ("added", added), ("removed", removed)] {
                    if !paths.is_empty() {
                        why.push(format!("{what}: {}", paths.join(", ")));
                    }
                }
                if why.is_empty() { (true, "nothing else changed".into()) } else { (false, why.join("; ")) }
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::OneOrMany;
    use serde_json::json;

    const BUDGET: RegexBudget = RegexBudget::per_pattern(std::time::Duration::from_secs(5));

    fn state() -> VaultState {
        let mut s = VaultState::default();
        s.files.insert(
            "eval-scratch/config.md".into(),
            b"---\nstatus: active\ncount: 3\n---\n- log_level: debug\n- port: 8080\n".to_vec(),
        );
        s.files.insert("eval-scratch/notes.md".into(), b"original notes\n".to_vec());
        s.files.insert("eval-scratch/bad.md".into(), b"---\nkey: [oops\n---\n".to_vec());
        s.fixtures.insert("notes.md".into(), b"original notes\n".to_vec());
        s.fixtures.insert("config.md".into(), b"something else".to_vec());
        s
    }

    fn check(a: VaultAssertion) -> (bool, String) {
        let (ok, details) = evaluate(&[a], &state(), BUDGET);
        assert_eq!(ok, details[0].ok);
        (details[0].ok, details[0].reason.clone())
    }

    fn path(p: &str) -> String {
        format!("eval-scratch/{p}")
    }

    #[test]
    fn exists_and_absent() {
        assert!(check(VaultAssertion::FileExists { path: path("config.md") }).0);
        assert_eq!(check(VaultAssertion::FileExists { path: path("gone.md") }), (false, "file missing".into()));
        assert!(check(VaultAssertion::FileAbsent { path: path("gone.md") }).0);
        assert!(!check(VaultAssertion::FileAbsent { path: path("notes.md") }).0);
    }

    #[test]
    fn contains_lacks_and_matches() {
        let one = |s: &str| OneOrMany::One(s.into());
        let many = |v: &[&str]| OneOrMany::Many(v.iter().map(|s| s.to_string()).collect());
        assert!(check(VaultAssertion::FileContains { path: path("config.md"), value: one("- port: 8080") }).0);
        assert!(check(VaultAssertion::FileContains { path: path("config.md"), value: many(&["x", "debug"]) }).0);
        assert!(!check(VaultAssertion::FileContains { path: path("config.md"), value: one("info") }).0);
        assert!(check(VaultAssertion::FileLacks { path: path("config.md"), value: one("log_level: info") }).0);
        // Lacks is none-of: any present candidate fails it.
        assert_eq!(
            check(VaultAssertion::FileLacks { path: path("config.md"), value: many(&["info", "debug"]) }),
            (false, "forbidden substring present".into())
        );
        assert!(!check(VaultAssertion::FileLacks { path: path("gone.md"), value: one("x") }).0);
        assert!(
            check(VaultAssertion::FileMatches {
                path: path("config.md"),
                value: one("^- PORT: \\d+$"),
                flags: Some("im".into())
            })
            .0
        );
        assert!(!check(VaultAssertion::FileMatches { path: path("config.md"), value: one("^- port"), flags: None }).0);
    }

    #[test]
    fn frontmatter_equals() {
        let fm =
            |key: &str, value| VaultAssertion::FrontmatterEquals { path: path("config.md"), key: key.into(), value };
        assert!(check(fm("status", json!("active"))).0);
        assert!(check(fm("count", json!(3.0))).0);
        let (ok, reason) = check(fm("count", json!("3")));
        assert!(!ok);
        assert_eq!(reason, "frontmatter \"count\" = 3, expected \"3\"");
        assert!(!check(fm("missing", json!(null))).0);
        let (ok, reason) =
            check(VaultAssertion::FrontmatterEquals { path: path("bad.md"), key: "key".into(), value: json!(1) });
        assert!(!ok);
        assert!(reason.starts_with("malformed frontmatter YAML"), "{reason}");
        let (ok, reason) =
            check(VaultAssertion::FrontmatterEquals { path: path("notes.md"), key: "k".into(), value: json!(1) });
        assert!(!ok && reason.starts_with("no frontmatter"), "{reason}");
    }

    #[test]
    fn frontmatter_equals_on_deep_yaml_fails_with_the_reason() {
        let mut s = VaultState::default();
        s.files.insert(path("deep.md"), frontmatter::nested_note(2_000).into_bytes());
        let a = VaultAssertion::FrontmatterEquals { path: path("deep.md"), key: "k".into(), value: json!(1) };
        let (ok, details) = evaluate(&[a], &s, BUDGET);
        assert!(!ok);
        assert!(details[0].reason.contains("nested deeper than 64 levels"), "{}", details[0].reason);
    }

    #[test]
    fn unchanged_is_byte_equality_with_the_fixture() {
        assert!(check(VaultAssertion::FileUnchanged { path: path("notes.md"), fixture: "notes.md".into() }).0);
        assert_eq!(
            check(VaultAssertion::FileUnchanged { path: path("config.md"), fixture: "config.md".into() }),
            (false, "content was modified".into())
        );
        assert!(!check(VaultAssertion::FileUnchanged { path: path("notes.md"), fixture: "nope.md".into() }).0);
    }

    #[test]
    fn nothing_else_changed_compares_the_whole_vault_outside_its_exceptions() {
        let files = |pairs: &[(&str, &str)]| -> BTreeMap<String, Vec<u8>> {
            pairs.iter().map(|(p, c)| (path(p), c.as_bytes().to_vec())).collect()
        };
        let before = files(&[("a.md", "a"), ("b.md", "b"), ("c.md", "c")]);
        let check = |after: BTreeMap<String, Vec<u8>>, except: &[&str]| {
            let s = VaultState { tree: Some(Tree { before: before.clone(), after }), ..VaultState::default() };
            let a = VaultAssertion::NothingElseChanged { except: except.iter().map(|p| path(p)).collect() };
            let (ok, details) = evaluate(&[a], &s, BUDGET);
            assert_eq!(details[0].kind, "nothingElseChanged");
            (ok, details[0].reason.clone())
        };
        assert_eq!(check(before.clone(), &[]), (true, "nothing else changed".into()));
        let edited = files(&[("a.md", "A"), ("b.md", "b"), ("c.md", "c")]);
        assert!(check(edited.clone(), &["a.md"]).0);
        assert_eq!(check(edited, &["b.md"]), (false, "changed: eval-scratch/a.md".into()));
        let added_and_removed = files(&[("a.md", "a"), ("b.md", "b"), ("new.md", "")]);
        assert_eq!(
            check(added_and_removed.clone(), &[]),
            (false, "added: eval-scratch/new.md; removed: eval-scratch/c.md".into())
        );
        assert!(check(added_and_removed, &["new.md", "c.md"]).0);
        // Without a snapshot it cannot hold.
        let (ok, _) = evaluate(&[VaultAssertion::NothingElseChanged { except: vec![] }], &state(), BUDGET);
        assert!(!ok);
    }

    #[test]
    fn all_must_hold() {
        let (ok, details) = evaluate(
            &[
                VaultAssertion::FileExists { path: path("notes.md") },
                VaultAssertion::FileExists { path: path("gone.md") },
            ],
            &state(),
            BUDGET,
        );
        assert!(!ok);
        assert_eq!(details.len(), 2);
        assert_eq!(details[1].kind, "fileExists");
    }
}
