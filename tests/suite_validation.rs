//! Task files: every validation error names the file, position, field and a fix.

use std::path::Path;

use vaultbench::suite::Suite;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

const GOOD: &str = r#"{
  "id": "good",
  "description": "d",
  "userMessage": "What is in notes.md?",
  "difficulty": "T1",
  "category": "retrieval",
  "fixture": "world",
  "expectedTools": ["read_file"],
  "outputMatchers": [{ "type": "regex", "value": "(?=.*apple)", "flags": "is" }],
  "vaultAssertions": [{ "type": "fileUnchanged", "path": "eval-scratch/notes.md", "fixture": "notes.md" }]
}"#;

fn suite_with(extra: &[(&str, &str)]) -> (tempfile::TempDir, Result<Suite, String>) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "fixtures/world/notes.md", "apple\n");
    write(dir.path(), "tasks/good.json", GOOD);
    for (rel, text) in extra {
        write(dir.path(), rel, text);
    }
    let loaded = Suite::load(dir.path()).map_err(|e| e.to_string());
    (dir, loaded)
}

fn errors_for(name: &str, text: &str) -> String {
    let (_dir, loaded) = suite_with(&[(&format!("tasks/{name}.json"), text)]);
    loaded.expect_err("the suite must be rejected")
}

#[test]
fn a_good_task_loads_with_defaults() {
    let (_dir, loaded) = suite_with(&[]);
    let suite = loaded.unwrap();
    assert_eq!(suite.tasks.len(), 1);
    assert_eq!(suite.tasks[0].max_turns, 15);
    assert_eq!(suite.tasks[0].timeout_ms, 300_000);
}

#[test]
fn unknown_field_with_did_you_mean_and_position() {
    let text = GOOD.replace("\"expectedTools\"", "\"expectTools\"").replace("\"good\"", "\"typo\"");
    let err = errors_for("typo", &text);
    assert!(err.contains("tasks/typo.json:8:"), "{err}");
    assert!(err.contains("unknown field `expectTools`"), "{err}");
    assert!(err.contains("did you mean `expectedTools`?"), "{err}");
}

#[test]
fn unknown_matcher_field_and_type() {
    let text = GOOD.replace("\"flags\"", "\"flag\"").replace("\"good\"", "\"m\"");
    let err = errors_for("m", &text);
    assert!(err.contains("unknown field `flag`") && err.contains("did you mean `flags`?"), "{err}");
    let text = GOOD.replace("\"regex\"", "\"regexp\"").replace("\"good\"", "\"m\"");
    let err = errors_for("m", &text);
    assert!(err.contains("unknown variant `regexp`") && err.contains("did you mean `regex`?"), "{err}");
}

#[test]
fn bad_tier() {
    let err = errors_for("t", &GOOD.replace("\"T1\"", "\"T5\"").replace("\"good\"", "\"t\""));
    assert!(err.contains("at `difficulty`") && err.contains("`T1`, `T2`, `T3`, `T4`"), "{err}");
}

#[test]
fn regex_that_does_not_compile_with_its_flags() {
    let text = GOOD.replace("(?=.*apple)", "(?<=unclosed").replace("\"good\"", "\"r\"");
    let err = errors_for("r", &text);
    assert!(err.contains("tasks/r.json:9:") && err.contains("outputMatchers[0].value"), "{err}");
    assert!(err.contains("invalid regular expression"), "{err}");
    let err = errors_for("f", &GOOD.replace("\"is\"", "\"iz\"").replace("\"good\"", "\"f\""));
    assert!(err.contains("invalid regular expression flags 'iz'"), "{err}");
}

#[test]
fn missing_fixtures_are_named() {
    let err = errors_for("x", &GOOD.replace("\"world\"", "\"nowhere\"").replace("\"good\"", "\"x\""));
    assert!(err.contains("fixture folder: `nowhere` not found"), "{err}");
    let err = errors_for(
        "y",
        &GOOD.replace("\"fixture\": \"notes.md\"", "\"fixture\": \"gone.md\"").replace("\"good\"", "\"y\""),
    );
    assert!(err.contains("fixture file: `gone.md` not found"), "{err}");
}

#[test]
fn id_must_match_the_file_name_and_be_unique() {
    let err = errors_for("other", GOOD);
    assert!(err.contains("id `good` differs from the file name `other.json`"), "{err}");
    assert!(err.contains("duplicate task id `good`"), "{err}");
}

#[test]
fn unsolvable_rubrics_are_errors() {
    let text = GOOD
        .replace("\"read_file\"]", "\"read_file\"], \"forbiddenTools\": [\"read_file\"]")
        .replace("\"good\"", "\"u\"");
    let err = errors_for("u", &text);
    assert!(err.contains("both expected and forbidden"), "{err}");
    let err = errors_for("v", &GOOD.replace("\"read_file\"", "\"read_fil\"").replace("\"good\"", "\"v\""));
    assert!(err.contains("unknown tool `read_fil`") && err.contains("did you mean `read_file`?"), "{err}");
    let text = GOOD.replace("\"(?=.*apple)\"", "[]").replace("\"good\"", "\"w\"");
    assert!(errors_for("w", &text).contains("empty any-of list"));
}

#[test]
fn every_error_is_reported_at_once() {
    let (_dir, loaded) = suite_with(&[
        ("tasks/a.json", "{ not json"),
        ("tasks/b.json", &GOOD.replace("\"good\"", "\"b\"").replace("\"T1\"", "\"T9\"")),
    ]);
    let err = loaded.unwrap_err();
    assert!(
        err.contains("tasks/a.json") && err.contains("tasks/b.json") && err.ends_with("2 errors in the suite"),
        "{err}"
    );
}

/// Fixtures are plain files under fixtures/: a `setup[].from`, a fixture
/// folder or a `fileUnchanged` original that is a symbolic link, passes
/// through one or climbs out is refused like a link inside a fixture folder.
#[cfg(unix)]
#[test]
fn fixture_paths_through_links_or_out_of_fixtures_are_refused() {
    use std::os::unix::fs::symlink;
    let setup = |from: &str| {
        GOOD.replace("\"good\"", "\"s\"").replace(
            "\"fixture\": \"world\",",
            &format!("\"fixture\": \"world\", \"setup\": [{{\"path\": \"x.md\", \"from\": \"{from}\"}}],"),
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    write(&outside, "secret.md", "secret\n");
    let fixtures = dir.path().join("suite/fixtures");
    write(&fixtures, "world/notes.md", "apple\n");
    write(&fixtures, "plain/a.md", "a\n");
    symlink(outside.join("secret.md"), fixtures.join("link.md")).unwrap();
    symlink(&outside, fixtures.join("out")).unwrap();
    symlink(fixtures.join("plain"), fixtures.join("alias")).unwrap();
    let check = |task: &str| -> String {
        let _ = std::fs::remove_dir_all(dir.path().join("suite/tasks"));
        write(&dir.path().join("suite"), "tasks/s.json", task);
        Suite::load(&dir.path().join("suite")).map(|_| String::new()).unwrap_or_else(|e| e.to_string())
    };
    assert_eq!(check(&setup("plain/a.md")), "", "a plain setup source loads");
    for from in ["link.md", "out/secret.md", "alias/a.md"] {
        let err = check(&setup(from));
        assert!(err.contains("setup source:") && err.contains("is a symbolic link"), "{from}: {err}");
        assert!(err.contains("setup[0].from"), "{err}");
    }
    let err = check(&setup("../outside/secret.md"));
    assert!(err.contains("leaves the fixtures folder"), "{err}");
    // A fixture folder that is a link, or holds one.
    let err = check(&GOOD.replace("\"good\"", "\"s\"").replace("\"world\"", "\"alias\"").replace("notes.md", "a.md"));
    assert!(err.contains("fixture folder:") && err.contains("is a symbolic link"), "{err}");
    symlink(outside.join("secret.md"), fixtures.join("world/leak.md")).unwrap();
    let err = check(&GOOD.replace("\"good\"", "\"s\""));
    assert!(err.contains("world/leak.md is not a plain file or folder"), "{err}");
}

#[test]
fn text_after_the_task_is_an_error_and_a_byte_order_mark_is_not() {
    let err = errors_for("g", &(GOOD.replace("\"good\"", "\"g\"") + "\ngarbage}"));
    assert!(err.contains("tasks/g.json:12:1") && err.contains("more text after the JSON value"), "{err}");
    let err = errors_for("h", &(GOOD.replace("\"good\"", "\"h\"") + GOOD));
    assert!(err.contains("tasks/h.json:11:2") && err.contains("more text after the JSON value"), "{err}");
    let (_dir, loaded) = suite_with(&[("tasks/bom.json", &format!("\u{feff}{}", GOOD.replace("\"good\"", "\"bom\"")))]);
    let suite = loaded.unwrap();
    assert_eq!(suite.tasks.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["bom", "good"]);
}
