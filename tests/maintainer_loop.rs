//! The maintainer's loop through the real binary: run, look, bless, with
//! what goes wrong on the way (a closed or full standard output, a wrong
//! folder, a mistyped provider or model, a result from the future, an older
//! result blessed over a newer baseline).

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use common::*;
use vaultbench::report;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn task(id: &str) -> String {
    format!(
        r#"{{
  "id": "{id}",
  "description": "read one note and report a figure",
  "userMessage": "What was the apple harvest? Read eval-scratch/notes.md.",
  "difficulty": "T2",
  "category": "retrieval",
  "fixture": "orchard",
  "expectedTools": ["read_file"],
  "outputMatchers": [{{ "type": "contains", "value": "940 kg" }}],
  "toolCallBudget": 3,
  "maxTurns": 5,
  "timeoutMs": 20000
}}"#
    )
}

const REFERENCE: &str = r#"{"steps": [{"tool": "read_file", "args": {"path": "eval-scratch/notes.md"}}], "answer": "The harvest was 940 kg."}"#;

/// A project folder holding `evals/` with one solvable task per id.
fn project(ids: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("evals");
    write(&root, "fixtures/orchard/notes.md", "The apple harvest was 940 kg this quarter.\n");
    for id in ids {
        write(&root, &format!("tasks/{id}.json"), &task(id));
        write(&root, &format!("references/{id}.json"), REFERENCE);
    }
    dir
}

fn results(dir: &Path) -> Vec<PathBuf> {
    json_files(&dir.join("evals/results"))
}

/// Run `args` in `cwd` with standard output a pipe whose reader takes
/// `lines` lines and then closes it.
fn into_closed_pipe(args: &[&str], cwd: &Path, lines: usize) -> (std::process::ExitStatus, String) {
    let mut child =
        command().args(args).current_dir(cwd).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let out = child.stdout.take().unwrap();
    let mut reader = BufReader::new(out);
    for _ in 0..lines {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            break;
        }
    }
    drop(reader);
    let output = child.wait_with_output().unwrap();
    (output.status, stderr(&output))
}

/// `> /dev/full`: every write fails with "no space left".
fn into_full_disk(args: &[&str], cwd: &Path) -> Option<std::process::Output> {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").ok()?;
    Some(command().args(args).current_dir(cwd).stdout(full).output().unwrap())
}

#[test]
fn a_closed_or_full_stdout_never_panics_and_the_sweep_still_saves_its_work() {
    let dir = project(&["alpha", "beta", "gamma"]);
    let (status, err) = into_closed_pipe(&["run", "--provider", "reference", "--repeat", "3"], dir.path(), 2);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(status.code(), Some(0), "{err}");
    let files = results(dir.path());
    assert_eq!(files.len(), 1, "the result is written");
    let result = report::load_result(&files[0]).unwrap();
    assert_eq!(result.aggregate.total_runs, 9);
    let transcripts = report::evidence::transcripts_dir(&files[0]);
    for id in ["alpha", "beta", "gamma"] {
        for n in 1..=3 {
            assert!(transcripts.join(format!("{id}-{n}.json")).is_file(), "the transcript of {id} #{n}");
        }
    }

    let file = files[0].to_str().unwrap();
    std::fs::create_dir_all(dir.path().join("evals/baselines")).unwrap();
    std::fs::copy(&files[0], dir.path().join("evals/baselines/reference-reference.json")).unwrap();
    for args in [
        vec!["report", file],
        vec!["report", file, "--json"],
        vec!["compare", "evals/baselines/reference-reference.json", file],
        vec!["compare", "evals/baselines/reference-reference.json", file, "--json"],
        vec!["run", "--provider", "reference", "--dry-run"],
        vec!["--help"],
    ] {
        let (status, err) = into_closed_pipe(&args, dir.path(), 1);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(status.code(), Some(0), "{args:?}: {err}");
        if let Some(out) = into_full_disk(&args, dir.path()) {
            let err = stderr(&out);
            assert!(!err.contains("panicked"), "{args:?}: {err}");
            // What report and compare print is their work: lost, it fails; a
            // dry run's plan or the help are not.
            let prints_its_work = matches!(args[0], "report" | "compare");
            assert_eq!(out.status.code(), Some(if prints_its_work { 1 } else { 0 }), "{args:?}: {err}");
            if prints_its_work {
                assert!(err.contains("what this command prints was lost"), "{args:?}: {err}");
            }
        }
    }
    // A full disk is worth a word on standard error; a closed pipe is not.
    let out = into_full_disk(&["report", file], dir.path());
    if let Some(out) = out {
        assert!(stderr(&out).contains("standard output could not be written"), "{}", stderr(&out));
    }
    // The exit status is the work's: a report whose figures do not re-derive still fails.
    let mut tampered = result.clone();
    tampered.aggregate.solve_k_rate = 12.5;
    report::write_result(&dir.path().join("tampered.json"), &tampered).unwrap();
    let (status, err) = into_closed_pipe(&["report", "tampered.json"], dir.path(), 0);
    assert_eq!(status.code(), Some(1), "{err}");
}

#[test]
fn every_commands_help_shows_an_example() {
    let dir = tempfile::tempdir().unwrap();
    for path in [
        &[][..],
        &["run"],
        &["merge"],
        &["report"],
        &["compare"],
        &["bless"],
        &["rescore"],
        &["suite"],
        &["suite", "check"],
        &["calibrate"],
        &["calibrate", "report"],
        &["calibrate", "extract"],
        &["calibrate", "corpus"],
        &["calibrate", "judge"],
        &["publish"],
        &["history"],
        &["view"],
        &["suite", "compile"],
        &["suite", "new"],
    ] {
        for flag in ["--help", "-h"] {
            let mut args = path.to_vec();
            args.push(flag);
            let out = vaultbench(&args, dir.path());
            let text = stdout(&out);
            assert!(out.status.success(), "{args:?}");
            assert!(text.contains("Example:\n  vaultbench "), "{args:?}: {text}");
        }
    }
}

#[test]
fn run_help_names_the_providers_and_their_environment() {
    let dir = tempfile::tempdir().unwrap();
    let text = stdout(&vaultbench(&["run", "--help"], dir.path()));
    for word in [
        "gemini",
        "ollama",
        "openai",
        "reference",
        "GEMINI_API_KEY",
        "GEMINI_BASE_URL",
        "OLLAMA_HOST",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
        "EVAL_JUDGE_PROVIDER",
        "EVAL_JUDGE_MODEL",
        "EVAL_JUDGE_API_KEY",
        "EVAL_JUDGE_BASE_URL",
    ] {
        assert!(text.contains(word), "{word}: {text}");
    }
    let text = stdout(&vaultbench(&["compare", "--help"], dir.path()));
    assert!(text.contains("[BASELINE]\n          The baseline file"), "{text}");
    assert!(text.contains("[RESULT]\n          The result file"), "{text}");
    let text = stdout(&vaultbench(&["rescore", "--help"], dir.path()));
    assert!(text.contains("<RESULT>\n          The result or baseline file"), "{text}");
}

#[test]
fn usage_mistakes_are_named_first_and_plainly() {
    let dir = project(&["alpha"]);
    // The provider before the model it would need.
    let out = vaultbench(&["run", "--provider", "foo"], dir.path());
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("invalid value 'foo' for '--provider <P>'") && err.contains("gemini, ollama, openai, reference")
    );
    assert!(!err.contains("--model"), "{err}");
    // The wrong folder.
    let elsewhere = tempfile::tempdir().unwrap();
    let out = vaultbench(&["run", "--provider", "reference"], elsewhere.path());
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("no evals/tasks here") && err.contains("pass --suite"), "{err}");
    assert!(!err.contains("error: evals/tasks: error:"), "one kind of message, said once: {err}");
    // Every command that reads the project's folders says where to run it from, once.
    for args in [
        &["run", "--provider", "reference"][..],
        &["bless"],
        &["compare"],
        &["view", "--out", "site"],
        &["publish"],
        &["history"],
        &["suite", "check"],
    ] {
        let out = vaultbench(args, elsewhere.path());
        let err = stderr(&out);
        assert_ne!(out.status.code(), Some(0), "{args:?}: {err}");
        assert_eq!(err.matches("run vaultbench from the project root").count(), 1, "{args:?}: {err}");
    }
    // A fatal error is not preceded by the paragraph about judge matchers.
    let judged = task("alpha").replace(
        r#"[{ "type": "contains", "value": "940 kg" }]"#,
        r#"[{ "type": "judge", "criteria": "Says 940 kg." }]"#,
    );
    write(&dir.path().join("evals"), "tasks/alpha.json", &judged);
    let out = vaultbench(&["run", "--provider", "openai", "--model", "m"], dir.path());
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("OPENAI_BASE_URL"), "{err}");
    assert!(!err.contains("[judge unavailable]"), "{err}");
}

#[path = "providers/fake.rs"]
mod fake;

use fake::{Fake, Reply};
use serde_json::json;

const BAD_KEY: &str = "sk-bad-secret-4242";

#[test]
fn a_bad_key_stops_the_sweep_after_a_few_identical_refusals() {
    let dir = project(&["t01", "t02", "t03", "t04", "t05", "t06", "t07", "t08"]);
    // OpenAI's documented 401 body; this server repeats the key it was sent.
    let fake = Fake::start(|req, _| {
        let key = req.header("authorization").unwrap_or_default().trim_start_matches("Bearer ").to_string();
        Reply::json(json!({"error": {"message": format!("Incorrect API key provided: {key}."),
            "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}))
        .with_status(401)
    });
    let out = command()
        .args(["run", "--provider", "openai", "--model", "gpt-x", "--repeat", "3", "--jobs", "1"])
        .env("OPENAI_BASE_URL", &fake.url)
        .env("OPENAI_API_KEY", BAD_KEY)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let (text, err) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(1), "{text}{err}");
    assert_eq!(fake.requests().len(), 3, "three refusals, then nothing more is sent");
    assert!(err.contains("stopped after 3 runs ended on the same error, which no retry can fix"), "{err}");
    assert!(err.contains("HTTP 401 Unauthorized: Incorrect API key provided: [REDACTED]"), "{err}");
    assert!(err.contains("What to do: check OPENAI_API_KEY"), "{err}");
    assert!(err.contains("--resume") && err.contains("--retry-errors"), "{err}");
    let files = results(dir.path());
    assert_eq!(files.len(), 1, "what finished is saved");
    let saved = std::fs::read_to_string(&files[0]).unwrap();
    assert!(!saved.contains(BAD_KEY) && !err.contains(BAD_KEY) && !text.contains(BAD_KEY));
    let result = report::load_result(&files[0]).unwrap();
    assert!(result.interrupted);
    assert_eq!(result.aggregate.total_runs, 3);
}

#[test]
fn an_unknown_model_is_named_with_the_servers_near_ids() {
    let dir = project(&["t01", "t02", "t03", "t04"]);
    let fake = Fake::start(|req, _| match req.path.as_str() {
        "/api/tags" => Reply::json(json!({"models": [{"name": "gemma4:e4b"}, {"name": "llama3.2:3b"}]})),
        _ => Reply::status(404, r#"{"error":"model \"gemma4:e4\" not found, try pulling it first"}"#),
    });
    let out = command()
        .args(["run", "--provider", "ollama", "--model", "gemma4:e4"])
        .env("OLLAMA_HOST", &fake.url)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(r#"model "gemma4:e4" not found, try pulling it first"#), "{err}");
    assert!(err.contains("ollama pull"), "{err}");
    assert!(err.contains("Known model ids near `gemma4:e4`: gemma4:e4b"), "{err}");
    assert!(!err.contains("llama3.2"), "only near ids: {err}");
}

#[test]
fn a_sweep_whose_every_run_is_a_harness_error_fails() {
    let dir = project(&["t01", "t02"]);
    // Not a refusal for good (so no early stop), and not retried: each run ends on it.
    let fake = Fake::always(Reply::status(413, "request entity too large"));
    let out = command()
        .args(["run", "--provider", "openai", "--model", "m"])
        .env("OPENAI_BASE_URL", &fake.url)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("every run of openai / m ended on a harness error") && err.contains("HTTP 413"), "{err}");
    assert_eq!(results(dir.path()).len(), 1);
}

#[test]
fn a_mistyped_priced_model_is_caught_before_any_request() {
    let dir = project(&["t01"]);
    write(
        &dir.path().join("evals"),
        "pricing.toml",
        "read_on = \"2026-06-01\"\nsource = \"the provider's page\"\n\n[models.\"gemini-2.5-flash\"]\ninput = 0.3\ncached_input = 0.03\noutput = 2.5\n",
    );
    let fake = Fake::always(Reply::status(500, "never asked"));
    for extra in [&[][..], &["--dry-run"]] {
        let mut args = vec!["run", "--provider", "gemini", "--model", "gemini-2.5-flsh"];
        args.extend_from_slice(extra);
        let out = command()
            .args(&args)
            .env("GEMINI_API_KEY", "k")
            .env("GEMINI_BASE_URL", &fake.url)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("(did you mean gemini-2.5-flash?)"), "{extra:?}: {err}");
    }
    assert!(fake.requests().is_empty());
}

#[test]
fn a_moving_alias_is_warned_about_before_anything_is_spent() {
    let dir = project(&["t01"]);
    let fake = Fake::start(|_, _| {
        Reply::json(
            json!({"choices": [{"message": {"role": "assistant", "content": "940 kg"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2}}),
        )
    });
    for extra in [&["--dry-run"][..], &[]] {
        let mut args = vec!["run", "--provider", "openai", "--model", "qwen-latest"];
        args.extend_from_slice(extra);
        let out = command().args(&args).env("OPENAI_BASE_URL", &fake.url).current_dir(dir.path()).output().unwrap();
        let err = stderr(&out);
        assert!(out.status.success(), "{err}");
        let warning = err.find("warning: `qwen-latest` is a moving alias").expect(&err);
        // At the start: before the first run's progress line.
        assert!(err.find("t01 #1").is_none_or(|run| warning < run), "{err}");
    }
    let out =
        vaultbench(&["run", "--provider", "reference", "--model", "gemini-3-pro-preview", "--dry-run"], dir.path());
    assert!(stderr(&out).contains("`gemini-3-pro-preview` is a moving alias"), "{}", stderr(&out));
    let out = vaultbench(&["run", "--provider", "reference", "--dry-run"], dir.path());
    assert!(!stderr(&out).contains("moving alias"), "{}", stderr(&out));
}

/// Run the reference provider on the project's suite; the new result's path.
fn reference_sweep(dir: &Path) -> PathBuf {
    let before = results(dir);
    let out = vaultbench(&["run", "--provider", "reference"], dir);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    results(dir).into_iter().find(|p| !before.contains(p)).expect("a new result")
}

#[test]
fn compare_and_report_name_the_tasks_added_removed_and_edited_since_the_baseline() {
    let dir = project(&["alpha", "beta", "gamma", "delta"]);
    let first = reference_sweep(dir.path());
    let r = report::load_result(&first).unwrap();
    assert!(r.tasks.iter().all(|t| t.content_hash.as_deref().is_some_and(|h| h.starts_with("sha256:"))));
    std::fs::create_dir_all(dir.path().join("evals/baselines")).unwrap();
    let baseline = dir.path().join("evals/baselines/reference-reference.json");
    std::fs::copy(&first, &baseline).unwrap();
    // Edit one task's message and budget, another's fixture file stays; remove one, add one.
    let evals = dir.path().join("evals");
    write(
        &evals,
        "tasks/beta.json",
        &task("beta")
            .replace("Read eval-scratch/notes.md.", "Read the notes.")
            .replace("\"toolCallBudget\": 3", "\"toolCallBudget\": 4"),
    );
    std::fs::remove_file(evals.join("tasks/delta.json")).unwrap();
    write(&evals, "tasks/epsilon.json", &task("epsilon"));
    write(&evals, "references/epsilon.json", REFERENCE);
    let second = reference_sweep(dir.path());
    let out = vaultbench(&["compare", baseline.to_str().unwrap(), second.to_str().unwrap()], dir.path());
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("Added since the baseline: 1 task (epsilon)."), "{text}");
    assert!(text.contains("Removed since the baseline: 1 task (delta)."), "{text}");
    assert!(text.contains("(definition, fixture or setup files edited; same id): 1 task (beta)."), "{text}");
    assert!(text.contains("Unchanged: 2 tasks."), "{text}");
    assert!(!text.contains("Task set differs"), "{text}");
    let json: serde_json::Value = serde_json::from_slice(
        &vaultbench(&["compare", baseline.to_str().unwrap(), second.to_str().unwrap(), "--json"], dir.path()).stdout,
    )
    .unwrap();
    assert_eq!(json["drift"]["changed"], json!(["beta"]));
    let out = vaultbench(&["report", second.to_str().unwrap()], dir.path());
    let text = stdout(&out);
    assert!(text.contains("Tasks against the baseline") && text.contains("1 task (beta)"), "{text}");
    let json: serde_json::Value =
        serde_json::from_slice(&vaultbench(&["report", second.to_str().unwrap(), "--json"], dir.path()).stdout)
            .unwrap();
    let tasks = &json["against_baseline"]["tasks"];
    assert_eq!(
        (&tasks["added"], &tasks["removed"], &tasks["changed"]),
        (&json!(["epsilon"]), &json!(["delta"]), &json!(["beta"]))
    );
    assert!(json["against_baseline"]["baseline"].as_str().unwrap().ends_with("reference-reference.json"));
    // The baseline itself has nothing to be against.
    let json: serde_json::Value =
        serde_json::from_slice(&vaultbench(&["report", baseline.to_str().unwrap(), "--json"], dir.path()).stdout)
            .unwrap();
    assert!(json.get("against_baseline").is_none(), "{json}");
    // A fixture file edited changes every task that seeds from it.
    write(&evals, "fixtures/orchard/notes.md", "The apple harvest was 940 kg this quarter, and pears 12 kg.\n");
    let third = reference_sweep(dir.path());
    let out = vaultbench(&["compare", second.to_str().unwrap(), third.to_str().unwrap()], dir.path());
    assert!(stdout(&out).contains("same id): 4 tasks (alpha, beta, epsilon, gamma)."), "{}", stdout(&out));

    // Edited after the last run, with no run since: both files ran the old
    // definition, and report and compare say so.
    write(&evals, "tasks/gamma.json", &task("gamma").replace("Read eval-scratch/notes.md.", "Read the note."));
    let third = third.to_str().unwrap();
    let text = stdout(&vaultbench(&["report", third], dir.path()));
    assert!(
        text.contains("Edited in the suite since this result ran (definition, fixture or setup files): 1 task (gamma)"),
        "{text}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&vaultbench(&["report", third, "--json"], dir.path()).stdout).unwrap();
    assert_eq!(json["edited_in_suite"], json!(["gamma"]));
    let text = stdout(&vaultbench(&["compare", second.to_str().unwrap(), third], dir.path()));
    assert!(text.contains("Edited in the suite since the baseline ran"), "{text}");
    assert!(text.contains("Edited in the suite since the result ran"), "{text}");
    assert!(text.contains("solve^k (%)") && !text.contains("solve_k_rate"), "aggregates in words: {text}");
}

#[test]
fn compare_with_one_file_meets_the_same_models_other_side() {
    let dir = project(&["alpha", "beta"]);
    let d = dir.path();
    let first = reference_sweep(d);
    std::fs::create_dir_all(d.join("evals/baselines")).unwrap();
    let baseline = d.join("evals/baselines/reference-reference.json");
    std::fs::copy(&first, &baseline).unwrap();
    let second = reference_sweep(d);
    // Another model's result, made later: never the other side of this model's comparison.
    let mut other = report::load_result(&second).unwrap();
    other.model = "other".into();
    other.run_id.0 = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
    report::write_result(&d.join("evals/results/zz-other.json"), &other).unwrap();
    let files = |text: &str| -> (String, String) {
        let line = |prefix: &str| {
            text.lines().find_map(|l| l.strip_prefix(prefix)).map(|s| s.trim().to_string()).unwrap_or_default()
        };
        (line("Baseline file:"), line("Result file:"))
    };
    // A result alone: against its own baseline.
    let out = vaultbench(&["compare", second.to_str().unwrap()], d);
    let (b, r) = files(&stdout(&out));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(b.ends_with("reference-reference.json") && r == second.to_str().unwrap(), "{b} / {r}");
    // A baseline alone: against the latest result of its own model, not the other model's later one.
    let out = vaultbench(&["compare", "evals/baselines/reference-reference.json"], d);
    let (b, r) = files(&stdout(&out));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        b.ends_with("reference-reference.json") && r.ends_with(second.file_name().unwrap().to_str().unwrap()),
        "{r}"
    );
    // Two files of two models: compared, with a warning.
    let out = vaultbench(&["compare", "evals/baselines/reference-reference.json", "evals/results/zz-other.json"], d);
    assert!(stderr(&out).contains("warning: the two files are of different models"), "{}", stderr(&out));
}

fn git(dir: &Path, args: &[&str]) -> bool {
    std::process::Command::new("git")
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn bless_shows_what_it_replaces_refuses_older_results_and_skips_the_future() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let results = d.join("evals/results");
    let at = |id: &str, solved: &[bool]| {
        let mut r = sample_result("ollama", "m1", &[("alpha", solved), ("beta", &[true, true])]);
        r.run_id = vaultbench::format::result::RunId(id.into());
        r
    };
    // File names that sort the other way round from the runs' times.
    write_result(&results.join("a-newest.json"), &at("2026-06-02T10:00:00.000Z", &[true, true]));
    write_result(&results.join("z-older.json"), &at("2026-06-01T10:00:00.000Z", &[true, false]));
    write_result(&results.join("zz-skewed.json"), &at("2099-01-01T00:00:00.000Z", &[false, false]));
    let out = vaultbench(&["bless"], d);
    let (text, err) = (stdout(&out), stderr(&out));
    assert!(out.status.success(), "{text}{err}");
    assert!(err.contains("passing over") && err.contains("zz-skewed.json") && err.contains("in the future"), "{err}");
    assert!(text.contains("Blessed ollama / m1 (run 2026-06-02T10:00:00.000Z"), "{text}");
    assert!(!text.contains("replaced"), "{text}");
    let baseline = d.join("evals/baselines/ollama-m1.json");
    let blessed = std::fs::read(&baseline).unwrap();
    assert_eq!(blessed, std::fs::read(results.join("a-newest.json")).unwrap());

    // Again: nothing to do, and said so.
    let out = vaultbench(&["bless", "evals/results/a-newest.json"], d);
    assert!(out.status.success());
    assert!(
        stdout(&out).contains("is already the baseline") && stdout(&out).contains("nothing to do"),
        "{}",
        stdout(&out)
    );
    assert!(!stdout(&out).contains("replaced"));

    // An older result does not silently replace a newer baseline.
    let out = vaultbench(&["bless", "evals/results/z-older.json"], d);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("ran later") && err.contains("--force"), "{err}");
    assert_eq!(std::fs::read(&baseline).unwrap(), blessed, "the baseline is untouched");

    // Forced, it shows the comparison with what it replaces; nothing was committed, so no git promise.
    let out = vaultbench(&["bless", "evals/results/z-older.json", "--force"], d);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(text.contains("against the baseline it replaces (run 2026-06-02T10:00:00.000Z)"), "{text}");
    assert!(text.contains("=== Regression check vs baseline") && text.contains("alpha: solved 2/2 → 1/2"), "{text}");
    assert!(text.contains("not committed in git") && !text.contains("recover it with git"), "{text}");
    assert!(stderr(&out).contains("blessed despite: it ran before the baseline it replaces"), "{}", stderr(&out));

    // Committed, the old baseline can be recovered with git, and the message says so.
    if !git(d, &["init", "-q"]) {
        eprintln!("skipping the git part: git is not installed");
        return;
    }
    assert!(git(d, &["add", "evals/baselines"]) && git(d, &["commit", "-q", "-m", "baseline"]));
    let out = vaultbench(&["bless", "evals/results/a-newest.json"], d);
    assert!(stdout(&out).contains("(committed: recover it with git)"), "{}", stdout(&out));
}

#[cfg(unix)]
#[test]
fn a_vault_name_that_is_not_utf8_is_a_clear_tool_error_in_a_real_run() {
    use std::os::unix::ffi::OsStrExt;
    let dir = project(&["alpha"]);
    let fixture = dir.path().join("evals/fixtures/orchard");
    for bytes in [&b"a\xff.md"[..], b"a\xfe.md"] {
        std::fs::write(fixture.join(std::ffi::OsStr::from_bytes(bytes)), "x").unwrap();
    }
    write(
        &dir.path().join("evals"),
        "references/alpha.json",
        r#"{"steps": [{"tool": "list_files", "args": {"path": "eval-scratch"}}, {"tool": "read_file", "args": {"path": "eval-scratch/notes.md"}}], "answer": "The harvest was 940 kg."}"#,
    );
    write(
        &dir.path().join("evals"),
        "tasks/alpha.json",
        &task("alpha").replace("\"toolCallBudget\": 3", "\"toolCallBudget\": 4"),
    );
    let file = reference_sweep(dir.path());
    let transcript = std::fs::read_to_string(report::evidence::transcripts_dir(&file).join("alpha-1.json")).unwrap();
    assert!(transcript.contains("not valid UTF-8"), "{transcript}");
    assert!(
        !transcript.contains("\"eval-scratch/a\\ufffd.md\"") && !transcript.contains("\"eval-scratch/a\u{fffd}.md\""),
        "never listed as one lossy name"
    );
}

/// A fake Ollama holding another model, whose target model is slow to
/// answer its first chat (a cold load); answers the task after that.
fn cold_ollama() -> Fake {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let other_loaded = Arc::new(AtomicBool::new(true));
    let chats = Arc::new(AtomicUsize::new(0));
    Fake::start(move |req, _| match req.path.as_str() {
        "/api/ps" => {
            let mut models = vec![json!({"name": "target:latest", "model": "target:latest"})];
            if other_loaded.load(Ordering::SeqCst) {
                models.push(json!({"name": "big-other:70b", "model": "big-other:70b"}));
            }
            Reply::json(json!({ "models": models }))
        }
        "/api/generate" => {
            assert_eq!(req.body["keep_alive"], 0);
            assert_eq!(req.body["model"], "big-other:70b", "only the other model is unloaded");
            // Gone a little later, as a real unload takes time.
            let flag = other_loaded.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(300));
                flag.store(false, Ordering::SeqCst);
            });
            Reply::json(json!({"model": "big-other:70b", "response": "", "done": true, "done_reason": "unload"}))
        }
        "/api/chat" => {
            let n = chats.fetch_add(1, Ordering::SeqCst);
            let reply = Reply::json(json!({"message": {"role": "assistant", "content": "The harvest was 940 kg."},
                "done": true, "prompt_eval_count": 10, "eval_count": 5}));
            if n == 0 { reply.delayed(std::time::Duration::from_millis(2500)) } else { reply }
        }
        "/api/version" => Reply::json(json!({"version": "0.9.0"})),
        _ => Reply::status(404, "{}"),
    })
}

/// Tasks that must answer within 1.5 s: less than the cold load.
fn quick_project() -> tempfile::TempDir {
    let dir = project(&["alpha", "beta"]);
    for id in ["alpha", "beta"] {
        let quick = task(id)
            .replace("\"timeoutMs\": 20000", "\"timeoutMs\": 1500")
            .replace("\"expectedTools\": [\"read_file\"],", "");
        write(&dir.path().join("evals"), &format!("tasks/{id}.json"), &quick);
    }
    dir
}

#[test]
fn a_local_model_is_loaded_by_a_throwaway_generation_after_the_others_are_unloaded() {
    let dir = quick_project();
    let fake = cold_ollama();
    let out = command()
        .args(["run", "--provider", "ollama", "--model", "target", "--repeat", "2"])
        .env("OLLAMA_HOST", &fake.url)
        .env("VAULTBENCH_NO_WARM_UP", "0")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{}{err}", stdout(&out));
    assert!(err.contains("ollama / target: unloaded the server's other resident models first: big-other:70b"), "{err}");
    let took: f64 = err.split("loaded the model in ").nth(1).expect(&err).split(' ').next().unwrap().parse().unwrap();
    assert!(took >= 2.4, "the load's time is printed apart: {took}");
    assert!(err.contains("(not counted in any run)"), "{err}");
    let requests = fake.requests();
    let first_chat = requests.iter().position(|r| r.path == "/api/chat").unwrap();
    let unload = requests.iter().position(|r| r.path == "/api/generate").unwrap();
    assert!(unload < first_chat, "unloaded before the target loads");
    let last_ps = requests.iter().rposition(|r| r.path == "/api/ps").unwrap();
    assert!(last_ps < first_chat && requests.iter().filter(|r| r.path == "/api/ps").count() >= 2, "polled until gone");
    let result = report::load_result(&results(dir.path())[0]).unwrap();
    for run in result.tasks.iter().flat_map(|t| &t.runs) {
        assert!(run.passed && run.timed_out.is_none(), "{run:?}");
        assert!(run.metrics.duration_ms < 1500, "the load is in no run: {}", run.metrics.duration_ms);
    }
    assert_eq!(result.aggregate.total_runs, 4);
}

#[test]
fn without_the_warm_up_the_cold_load_falls_into_the_first_run() {
    let dir = quick_project();
    let fake = cold_ollama();
    let out = command()
        .args(["run", "--provider", "ollama", "--model", "target", "--no-warm-up"])
        .env("OLLAMA_HOST", &fake.url)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("warm-up"));
    let result = report::load_result(&results(dir.path())[0]).unwrap();
    let timed_out = result.tasks.iter().flat_map(|t| &t.runs).filter(|r| r.timed_out == Some(true)).count();
    assert_eq!(timed_out, 1, "the first run carries the load and times out");
    assert!(fake.requests().iter().all(|r| r.path != "/api/ps" && r.path != "/api/generate"));
}

#[test]
fn the_judge_paragraph_is_said_once_when_judge_tasks_will_run_without_a_judge() {
    let dir = project(&["alpha", "beta"]);
    let judged = task("alpha").replace(
        r#"[{ "type": "contains", "value": "940 kg" }]"#,
        r#"[{ "type": "judge", "criteria": "Says 940 kg." }]"#,
    );
    write(&dir.path().join("evals"), "tasks/alpha.json", &judged);
    let fake = Fake::start(|_, _| {
        Reply::json(
            json!({"choices": [{"message": {"role": "assistant", "content": "940 kg"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2}}),
        )
    });
    let out = command()
        .args(["run", "--provider", "openai", "--models", "m1,m2"])
        .env("OPENAI_BASE_URL", &fake.url)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert_eq!(err.matches("[judge unavailable]").count(), 1, "{err}");
    assert!(err.contains("1 of the 2 selected tasks have judge matchers (alpha)"), "{err}");
    for file in results(dir.path()) {
        let r = report::load_result(&file).unwrap();
        assert!(!r.offline_judge, "only the reference provider replays labels");
        assert!(r.tasks.iter().find(|t| t.id == "alpha").unwrap().runs[0].solve_details.judge_skipped);
    }
}

/// OpenAI's documented 401 for any key but `good`; an answer for `good`.
fn keyed_server() -> Fake {
    Fake::start(|req, _| {
        if req.header("authorization") == Some("Bearer good") {
            return Reply::json(json!({"choices": [{"message": {"role": "assistant",
                "content": "The harvest was 940 kg."}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5}}));
        }
        Reply::json(json!({"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error",
            "param": null, "code": "invalid_api_key"}}))
        .with_status(401)
    })
}

#[test]
fn a_bad_key_met_by_the_warm_up_stops_before_any_run_and_the_fixed_sweep_resumes() {
    let dir = project(&["t01", "t02", "t03", "t04"]);
    let fake = keyed_server();
    let run = |key: &str, extra: &[&str], warm: &str| {
        let mut args = vec!["run", "--provider", "openai", "--model", "m", "--repeat", "2", "--jobs", "1"];
        args.extend_from_slice(extra);
        command()
            .args(&args)
            .env("OPENAI_BASE_URL", &fake.url)
            .env("OPENAI_API_KEY", key)
            .env("VAULTBENCH_NO_WARM_UP", warm)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    // With the warm-up, the first request is the warm-up's: refused, so no run is made.
    let out = run("bad", &[], "0");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("stopped before any run: the warm-up met an error, which no retry can fix"), "{err}");
    assert_eq!(fake.requests().len(), 1);
    assert!(results(dir.path()).is_empty(), "no run, no result");

    // Without it: three runs refused alike, then the advice is followed once the key is fixed.
    let out = run("bad", &[], "1");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let resume = err.split("vaultbench run --resume ").nth(1).expect(&err).split(' ').next().unwrap().to_string();
    let out = run("good", &["--resume", &resume, "--retry-errors"], "1");
    assert!(out.status.success(), "{}", stderr(&out));
    let finished: Vec<_> = results(dir.path())
        .into_iter()
        .map(|p| report::load_result(&p).unwrap())
        .filter(|r| r.run_id.0 == resume)
        .collect();
    assert_eq!(finished.len(), 1);
    let r = &finished[0];
    assert!(!r.interrupted && r.aggregate.total_runs == 8, "{:?}", r.aggregate);
    assert!(r.tasks.iter().flat_map(|t| &t.runs).all(|run| run.passed && run.errors.is_empty()));
}
