//! Checks on a parsed task that the type system cannot make: the id matches
//! the file, patterns compile with their flags, referenced fixtures exist,
//! paths stay inside the vault, and the rubric is satisfiable at all.

use std::path::{Component, Path};

use crate::format::OneOrMany;
use crate::format::task::{Matcher, Task, VaultAssertion};
use crate::score::jsregex::JsRegex;

use super::diagnostics::{Diagnostic, did_you_mean};
use super::fixtures::{self, Kind};
use super::{Patterns, TOOL_NAMES};

/// Where `needle` (as it appears JSON-encoded) first occurs in `text`, 1-based.
fn locate(text: &str, needle: &str) -> Option<(usize, usize)> {
    let encoded = serde_json::to_string(needle).ok()?;
    let offset = text.find(&encoded)?;
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    Some((line, column))
}

/// A vault-relative path that cannot leave the vault.
fn is_vault_relative(path: &str) -> bool {
    let p = Path::new(path);
    !path.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

pub(super) fn task(root: &Path, file: &Path, text: &str, task: &Task, compile: Patterns, out: &mut Vec<Diagnostic>) {
    let err =
        |message: String, help: &str| Diagnostic::error(file, message, (!help.is_empty()).then(|| help.to_string()));

    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    if task.id != stem {
        out.push(
            err(
                format!("id `{}` differs from the file name `{stem}.json`", task.id),
                &format!("rename the file to `{}.json` or set the id to `{stem}`", task.id),
            )
            .field("id")
            .at(locate(text, &task.id)),
        );
    }
    if task.max_turns == 0 {
        out.push(
            err("maxTurns is 0: the model could never answer".into(), "use at least 1 (default 15)").field("maxTurns"),
        );
    }
    if task.timeout_ms < 1000 {
        out.push(
            err(
                format!("timeoutMs is {} ms, too short for any model call", task.timeout_ms),
                "use at least 1000 (default 300000)",
            )
            .field("timeoutMs"),
        );
    }

    // Tools.
    for (i, tool) in task.expected_tools.iter().enumerate() {
        if !TOOL_NAMES.contains(&tool.as_str()) {
            let help = did_you_mean(tool, TOOL_NAMES)
                .map_or_else(|| format!("known tools: {}", TOOL_NAMES.join(", ")), |m| format!("did you mean `{m}`?"));
            out.push(
                err(format!("unknown tool `{tool}`: no run could ever call it, so the task is unsolvable"), &help)
                    .field(format!("expectedTools[{i}]"))
                    .at(locate(text, tool)),
            );
        }
        if task.forbidden_tools.contains(tool) {
            out.push(
                err(
                    format!("`{tool}` is both expected and forbidden: the task is unsolvable"),
                    "remove it from one list",
                )
                .field(format!("expectedTools[{i}]")),
            );
        }
    }
    for (i, tool) in task.forbidden_tools.iter().enumerate() {
        if !TOOL_NAMES.contains(&tool.as_str()) {
            let help = did_you_mean(tool, TOOL_NAMES).map(|m| format!("did you mean `{m}`?")).unwrap_or_default();
            out.push(
                Diagnostic::warning(
                    file,
                    format!("unknown tool `{tool}`: vaultbench has no such tool, so forbidding it has no effect"),
                    (!help.is_empty()).then_some(help),
                )
                .field(format!("forbiddenTools[{i}]")),
            );
        }
    }
    let distinct_expected = {
        let mut v: Vec<&String> = task.expected_tools.iter().collect();
        v.sort();
        v.dedup();
        v.len()
    };
    if let Some(budget) = task.tool_call_budget
        && (budget as usize) < distinct_expected
    {
        out.push(err(format!("toolCallBudget {budget} is below the {distinct_expected} distinct expected tools: the task is unsolvable"), "raise the budget or expect fewer tools").field("toolCallBudget"));
    }

    // Output matchers.
    for (i, m) in task.output_matchers.iter().enumerate() {
        let field = format!("outputMatchers[{i}]");
        match m {
            Matcher::Contains { value } => values(file, text, &field, value, out),
            Matcher::Regex { value, flags } => {
                values(file, text, &field, value, out);
                if compile == Patterns::Compile {
                    patterns(file, text, &field, value, flags.as_deref(), out);
                }
            }
            Matcher::Judge { criteria } => {
                if criteria.trim().is_empty() {
                    out.push(
                        err("empty judge criteria".into(), "say what a YES answer must contain")
                            .field(format!("{field}.criteria")),
                    );
                }
            }
        }
    }

    // Fixtures and the files seeded from them.
    let fixtures = root.join("fixtures");
    let fixture_dir = task.fixture.as_ref().map(|f| fixtures.join(f));
    if let Some(name) = &task.fixture {
        let problem = match fixtures::resolve(&fixtures, name, Kind::Folder) {
            Err(why) => Some(why),
            Ok(dir) => fixtures::first_special(&dir)
                .map(|p| format!("{} is not a plain file or folder (a symbolic link?)", p.display())),
        };
        if let Some(why) = problem {
            out.push(
                err(format!("fixture folder: {why}"), "name a folder of plain files under fixtures/")
                    .field("fixture")
                    .at(locate(text, name)),
            );
        }
    }
    for (i, s) in task.setup.iter().enumerate() {
        if !is_vault_relative(&s.path) {
            out.push(
                err(
                    format!("setup path `{}` is not inside the vault", s.path),
                    "use a vault-relative path without `..`",
                )
                .field(format!("setup[{i}].path")),
            );
        }
        if let Err(why) = fixtures::resolve(&fixtures, &s.from, Kind::File) {
            out.push(
                err(
                    format!("setup source: {why}"),
                    "`from` names a plain file under fixtures/, without `..` or symbolic links",
                )
                .field(format!("setup[{i}].from"))
                .at(locate(text, &s.from)),
            );
        }
    }
    for (i, c) in task.context_files.iter().enumerate() {
        let seeded = c
            .strip_prefix("eval-scratch/")
            .zip(fixture_dir.as_ref())
            .is_some_and(|(rest, dir)| dir.join(rest).is_file())
            || task.setup.iter().any(|s| &s.path == c);
        if !is_vault_relative(c) || !seeded {
            out.push(
                err(
                    format!("context file `{c}` is not seeded into the vault"),
                    "list a file of the fixture as `eval-scratch/<name>`, or a setup path",
                )
                .field(format!("contextFiles[{i}]"))
                .at(locate(text, c)),
            );
        }
    }

    // Vault assertions.
    for (i, a) in task.vault_assertions.iter().enumerate() {
        let field = format!("vaultAssertions[{i}]");
        if let VaultAssertion::NothingElseChanged { except } = a {
            for (j, p) in except.iter().enumerate().filter(|(_, p)| !is_vault_relative(p)) {
                out.push(
                    err(format!("path `{p}` is not inside the vault"), "use a vault-relative path without `..`")
                        .field(format!("{field}.except[{j}]")),
                );
            }
            continue;
        }
        if !is_vault_relative(a.path()) {
            out.push(
                err(
                    format!("assertion path `{}` is not inside the vault", a.path()),
                    "use a vault-relative path without `..`",
                )
                .field(format!("{field}.path")),
            );
        }
        match a {
            VaultAssertion::FileContains { value, .. } | VaultAssertion::FileLacks { value, .. } => {
                values(file, text, &field, value, out)
            }
            VaultAssertion::FileMatches { value, flags, .. } => {
                values(file, text, &field, value, out);
                if compile == Patterns::Compile {
                    patterns(file, text, &field, value, flags.as_deref(), out);
                }
            }
            VaultAssertion::FrontmatterEquals { key, .. } if key.is_empty() => {
                out.push(
                    err("empty frontmatter key".into(), "name the frontmatter property to compare")
                        .field(format!("{field}.key")),
                );
            }
            VaultAssertion::FileUnchanged { fixture, .. } => match &fixture_dir {
                None => out.push(
                    err("fileUnchanged needs the task to have a `fixture` folder".into(), "set `fixture`").field(field),
                ),
                Some(dir) => {
                    if let Err(why) = fixtures::resolve(dir, fixture, Kind::File) {
                        out.push(
                            err(format!("fixture file: {why}"), "name a file inside the task's fixture folder")
                                .field(format!("{field}.fixture"))
                                .at(locate(text, fixture)),
                        );
                    }
                }
            },
            _ => {}
        }
    }
}

/// Any-of lists must not be empty, and an empty string would match everything.
fn values(file: &Path, text: &str, field: &str, value: &OneOrMany, out: &mut Vec<Diagnostic>) {
    if value.as_slice().is_empty() {
        out.push(
            Diagnostic::error(
                file,
                "empty any-of list: it can never match".into(),
                Some("give at least one value".into()),
            )
            .field(format!("{field}.value")),
        );
    }
    if value.as_slice().iter().any(String::is_empty) {
        out.push(
            Diagnostic::error(
                file,
                "empty string value: it matches any text".into(),
                Some("give the text that must (or must not) appear".into()),
            )
            .field(format!("{field}.value"))
            .at(locate(text, "")),
        );
    }
}

/// Every pattern must compile with the matcher's flags under JavaScript rules.
fn patterns(file: &Path, text: &str, field: &str, value: &OneOrMany, flags: Option<&str>, out: &mut Vec<Diagnostic>) {
    for pattern in value.as_slice() {
        if let Err(e) = JsRegex::new(pattern, flags) {
            out.push(
                Diagnostic::error(
                    file,
                    e.to_string(),
                    Some("fix the pattern; it is compiled as a JavaScript RegExp".into()),
                )
                .field(format!("{field}.value"))
                .at(locate(text, pattern)),
            );
        }
    }
}
