//! `vaultbench history` and the site's history pages on a real git
//! repository (the git command line in a temporary folder): several
//! blessings of two models, stable tasks, a task that drifts from stable to
//! flaky, a task whose definition changes (its content hash), a baseline
//! renamed by its file, a model recorded under another id in the same file,
//! a version that is not a result; then a shallow clone, a folder outside
//! any repository and a blessing not committed yet.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{command, result_file, run_record, stderr, stdout, vaultbench};
use serde_json::Value;
use vaultbench::format::Tier;
use vaultbench::format::result::{ResultFile, RunId, TaskResult};
use vaultbench::report::aggregate;

/// A task of a result: id, content hash, solved runs, runs.
type T<'a> = (&'a str, Option<&'a str>, u32, u32);

fn result(provider: &str, model: &str, run_id: &str, git_sha: &str, tasks: &[T]) -> ResultFile {
    let tasks: Vec<TaskResult> = tasks
        .iter()
        .map(|&(id, hash, solved, k)| {
            let runs = (0..k).map(|i| run_record(id, true, i < solved)).collect();
            TaskResult {
                content_hash: hash.map(str::to_string),
                ..aggregate::task_result(id.to_string(), Some(Tier::T2), Some("retrieval".into()), runs)
            }
        })
        .collect();
    result_file(provider, model, run_id, git_sha, tasks)
}

/// The first model's blessings: ten stable tasks, `drift` (5/5, 5/5, 1/5),
/// `edited` (5/5, 5/5, then edited and 0/5), `flaky` (2/5, 3/5, 3/5).
fn flash(n: usize) -> ResultFile {
    let stable: Vec<(String, String)> = (1..=10).map(|i| (format!("s{i:02}"), format!("sha256:s{i:02}"))).collect();
    let mut tasks: Vec<T> = stable.iter().map(|(id, h)| (id.as_str(), Some(h.as_str()), 5, 5)).collect();
    let (drift, edited, flaky) = match n {
        1 => ((5, "sha256:d"), (5, "sha256:e1"), 2),
        2 => ((5, "sha256:d"), (5, "sha256:e1"), 3),
        _ => ((1, "sha256:d"), (0, "sha256:e2"), 3),
    };
    tasks.push(("drift", Some(drift.1), drift.0, 5));
    tasks.push(("edited", Some(edited.1), edited.0, 5));
    tasks.push(("flaky", Some("sha256:f"), flaky, 5));
    result("gemini", "gemini-2.5-flash", &format!("2026-0{n}-01T10:00:00.000Z"), &format!("{n}{n}{n}{n}abc"), &tasks)
}

/// The second model's, from an older vaultbench (no content hashes): `slip` 3/3 then 1/3.
fn gemma(n: usize, model: &str) -> ResultFile {
    let ids: Vec<String> = (1..=10).map(|i| format!("t{i:02}")).collect();
    let mut tasks: Vec<T> = ids.iter().map(|id| (id.as_str(), None, 3, 3)).collect();
    tasks.push(("slip", None, if n == 1 { 3 } else { 1 }, 3));
    result("ollama", model, &format!("2026-0{n}-02T10:00:00.000Z"), "feed123", &tasks)
}

/// A git repository in a temporary folder, with `evals/baselines/`.
struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    fn new() -> Option<Repo> {
        let repo = Repo { dir: tempfile::tempdir().unwrap() };
        if !repo.try_git(&["init", "-q", "-b", "main"]) {
            eprintln!("skipping: git is not installed");
            return None;
        }
        std::fs::create_dir_all(repo.baselines()).unwrap();
        Some(repo)
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn baselines(&self) -> PathBuf {
        self.root().join("evals/baselines")
    }

    fn try_git(&self, args: &[&str]) -> bool {
        self.git_at(args, "2026-01-01T00:00:00Z").status.success()
    }

    fn git_at(&self, args: &[&str], date: &str) -> std::process::Output {
        Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(self.root())
            .env("GIT_COMMITTER_DATE", date)
            .env("GIT_AUTHOR_DATE", date)
            .output()
            .unwrap_or_else(|e| panic!("git {args:?}: {e}"))
    }

    fn git(&self, args: &[&str]) -> String {
        let out = self.git_at(args, "2026-01-01T00:00:00Z");
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    fn write(&self, file: &str, r: &ResultFile) {
        vaultbench::report::write_result(&self.baselines().join(file), r).unwrap();
    }

    fn commit(&self, message: &str, date: &str) -> String {
        self.git(&["add", "-A"]);
        let out = self.git_at(&["commit", "-q", "-m", message], date);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        self.git(&["rev-parse", "HEAD"])
    }
}

/// The history: blessings of both models over four commits, a pure
/// rename, a version that is not a result. The commits' shas, oldest first.
fn history_repo() -> Option<(Repo, Vec<String>)> {
    let repo = Repo::new()?;
    let mut shas = Vec::new();
    repo.write("gemini-gemini-2-5-flash.json", &flash(1));
    let archive = repo.baselines().join("evidence/gemini-gemini-2-5-flash/2026-01-01T10-00-00-000Z.tar.gz");
    std::fs::create_dir_all(archive.parent().unwrap()).unwrap();
    std::fs::write(&archive, b"transcripts").unwrap();
    repo.write("ollama-gemma4-e4b.json", &gemma(1, "gemma4:e4b"));
    std::fs::write(repo.baselines().join("README.md"), "Blessed baselines.\n").unwrap();
    shas.push(repo.commit("bless both", "2026-01-05T12:00:00Z"));
    // A rename git detects (the content is the same).
    repo.git(&["mv", "evals/baselines/gemini-gemini-2-5-flash.json", "evals/baselines/gemini-gemini-2.5-flash.json"]);
    shas.push(repo.commit("rename", "2026-01-20T12:00:00Z"));
    repo.write("gemini-gemini-2.5-flash.json", &flash(2));
    // The same file, the model recorded under its new id.
    repo.write("ollama-gemma4-e4b.json", &gemma(2, "gemma4-e4b"));
    std::fs::write(repo.baselines().join("odd name;$(x) \"q\".json"), "{ not a result").unwrap();
    shas.push(repo.commit("bless again", "2026-02-05T12:00:00Z"));
    repo.write("gemini-gemini-2.5-flash.json", &flash(3));
    std::fs::remove_file(repo.baselines().join("odd name;$(x) \"q\".json")).unwrap();
    shas.push(repo.commit("bless flash", "2026-03-05T12:00:00Z"));
    Some((repo, shas))
}

fn history_json(dir: &Path, args: &[&str]) -> Value {
    let mut all = vec!["history", "--json"];
    all.extend(args);
    let out = vaultbench(&all, dir);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

fn model<'a>(json: &'a Value, name: &str) -> &'a Value {
    json["models"].as_array().unwrap().iter().find(|m| m["model"] == name).unwrap_or_else(|| panic!("{name}: {json}"))
}

fn close(v: &Value, x: f64) -> bool {
    v.as_f64().is_some_and(|v| (v - x).abs() < 1e-9)
}

#[test]
fn the_cli_follows_each_model_across_its_blessings() {
    let Some((repo, shas)) = history_repo() else { return };
    let json = history_json(repo.root(), &[]);
    assert_eq!(json["models"].as_array().unwrap().len(), 2, "{json}");
    let flash = model(&json, "gemini-2.5-flash");
    // Renamed by its file: one history, three blessings (the rename alone is none).
    assert_eq!(flash["file"], "gemini-gemini-2.5-flash.json");
    assert_eq!(flash["files"], serde_json::json!(["gemini-gemini-2-5-flash.json", "gemini-gemini-2.5-flash.json"]));
    let blessings = flash["blessings"].as_array().unwrap();
    assert_eq!(blessings.len(), 3);
    let commits: Vec<&str> = blessings.iter().map(|b| b["commit"].as_str().unwrap()).collect();
    assert_eq!(commits, [&shas[0], &shas[2], &shas[3]]);
    assert_eq!(blessings[0]["date"], "2026-01-05T12:00:00Z");
    assert_eq!(blessings[1]["git_sha"], "2222abc");
    assert_eq!(blessings[0]["evidence"], "evidence/gemini-gemini-2-5-flash/2026-01-01T10-00-00-000Z.tar.gz");
    assert!(blessings[2]["evidence"].is_null());
    // solve^5: 12 of 13 tasks solved in every run, then 10 of 13.
    assert!(close(&blessings[0]["figures"]["solve_k"]["estimate"], 92.3), "{}", blessings[0]);
    assert!(close(&blessings[2]["figures"]["solve_k"]["estimate"], 76.9), "{}", blessings[2]);
    let steps = flash["steps"].as_array().unwrap();
    assert_eq!(steps[0]["verdict"], "within_noise");
    assert_eq!(steps[1]["verdict"], "significant_change");
    assert_eq!(steps[1]["changed"], serde_json::json!(["edited"]));
    assert_eq!(steps[1]["common_tasks"], 12);
    let task = |id: &str| flash["tasks"].as_array().unwrap().iter().find(|t| t["id"] == id).unwrap().clone();
    let drift = task("drift");
    let flag = &drift["flags"][0];
    assert_eq!(
        (flag["kind"].as_str(), flag["from"].as_str(), flag["to"].as_str()),
        (Some("drifted"), Some("stable"), Some("flaky"))
    );
    // One-sided Fisher: 5/5 then 1/5 is the least likely table of its
    // margins, C(5,1)C(5,5)/C(10,6) = 5/210; with flaky's 3/5 vs 3/5
    // (P(X <= 3) = 155/210) in the family, Benjamini-Hochberg gives 10/210.
    assert!(close(&flag["p"], 5.0 / 210.0), "{flag}");
    assert!(close(&flag["p_adjusted"], 10.0 / 210.0), "{flag}");
    assert_eq!(flag["significant"], true);
    let edited = task("edited");
    assert_eq!(edited["flags"][0]["kind"], "task_changed");
    assert_eq!(edited["cells"][2]["definition"], "changed");
    assert!(task("flaky")["flags"].as_array().unwrap().is_empty());

    // The same file under a new model id is one history, named as it is now.
    let gemma = model(&json, "gemma4-e4b");
    assert_eq!(gemma["blessings"].as_array().unwrap().len(), 2);
    let slip = gemma["tasks"].as_array().unwrap().iter().find(|t| t["id"] == "slip").unwrap();
    let flag = &slip["flags"][0];
    // 3/3 then 1/3: C(3,1)C(3,3)/C(6,4) = 3/15, alone in its family.
    assert!(close(&flag["p"], 0.2) && close(&flag["p_adjusted"], 0.2), "{flag}");
    assert_eq!((flag["significant"].as_bool(), flag["definition_unknown"].as_bool()), (Some(false), Some(true)));
    assert_eq!(gemma["steps"][0]["unknown"].as_array().unwrap().len(), 11);
    // The version that is not a result is left out, with a note naming it.
    let notes = json["notes"].to_string();
    assert!(notes.contains("odd name;$(x) \\\"q\\\".json") && notes.contains("not a result file"), "{notes}");

    let out = vaultbench(&["history"], repo.root());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for want in [
        "History of the baselines in evals/baselines: 2 models, 5 blessings.",
        "gemini / gemini-2.5-flash: 3 blessings, file gemini-gemini-2.5-flash.json (earlier gemini-gemini-2-5-flash.json)",
        "2 → 3  significant change",
        "tasks that moved beyond noise: drift",
        "tasks changed (left out of the comparison): edited",
        "drift   5/5 5/5 1/5  at #3: stable → flaky, Fisher exact p 0.024 (adjusted 0.048): more than noise",
        "edited  5/5 5/5 0/5  at #3: task changed (its definition, fixture or setup files were edited): not a model change",
        "slip  3/3 1/3  at #2: stable → flaky, Fisher exact p 0.20 (adjusted 0.20): within noise; definition unknown",
        "Definition unknown at #2: 11 tasks without a content hash",
        "Note: 1 version does not read as a result and is left out: odd name",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
    let first = &shas[0][..7];
    assert!(
        text.lines()
            .any(|l| l.contains(first) && l.contains("2026-01-05") && l.contains("1111abc") && l.ends_with("kept")),
        "{text}"
    );
}

#[test]
fn one_model_by_name_and_an_unknown_name_says_which_there_are() {
    let Some((repo, _)) = history_repo() else { return };
    for name in
        ["gemini-2.5-flash", "gemini/gemini-2.5-flash", "gemini-gemini-2-5-flash.json", "gemini-gemini-2.5-flash"]
    {
        let json = history_json(repo.root(), &[name]);
        let models = json["models"].as_array().unwrap();
        assert_eq!(models.len(), 1, "{name}");
        assert_eq!(models[0]["model"], "gemini-2.5-flash");
    }
    let out = vaultbench(&["history", "nope"], repo.root());
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(
            "no baseline history for `nope`; the models with one: gemini/gemini-2.5-flash, ollama/gemma4-e4b"
        ),
        "{}",
        stderr(&out)
    );
    let out = vaultbench(&["history", "--baselines", "missing"], repo.root());
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("the baselines folder missing does not exist"), "{}", stderr(&out));
    let help = stdout(&vaultbench(&["history", "--help"], repo.root()));
    assert!(help.contains("Example:\n  vaultbench history gemini/gemini-2.5-flash --json"), "{help}");
}

#[test]
fn a_shallow_clone_gives_what_it_has_and_says_how_to_get_the_rest() {
    let Some((repo, _)) = history_repo() else { return };
    let clone = tempfile::tempdir().unwrap();
    let url = format!("file://{}", repo.root().display());
    let out = Command::new("git")
        .args(["clone", "-q", "--depth", "1", &url, "c"])
        .current_dir(clone.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json = history_json(&clone.path().join("c"), &[]);
    let notes = json["notes"].to_string();
    assert!(notes.contains("a shallow clone") && notes.contains("git fetch --unshallow"), "{notes}");
    for m in json["models"].as_array().unwrap() {
        assert_eq!(m["blessings"].as_array().unwrap().len(), 1, "{m}");
        assert!(m["steps"].as_array().unwrap().is_empty());
        // gemma's file was last changed before the one commit fetched: said as "at or before".
        assert_eq!(m["blessings"][0]["at_or_before"], true, "{m}");
    }
    let text = stdout(&vaultbench(&["history", "ollama/gemma4-e4b"], &clone.path().join("c")));
    assert!(text.contains("≤ "), "{text}");
    let site = clone.path().join("site");
    let docs = clone.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("index.md"), "# Home\n").unwrap();
    let out = vaultbench(
        &["publish", "--docs", docs.to_str().unwrap(), "--out", site.to_str().unwrap()],
        &clone.path().join("c"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let results = std::fs::read_to_string(site.join("results.html")).unwrap();
    assert!(results.contains("earlier not fetched") && !results.contains(">first blessing"), "{results}");
}

#[test]
fn a_version_committed_again_as_it_was_is_the_same_blessing() {
    let Some((repo, _)) = history_repo() else { return };
    let file = repo.baselines().join("gemini-gemini-2.5-flash.json");
    let good = std::fs::read(&file).unwrap();
    std::fs::write(&file, "{ broken").unwrap();
    repo.commit("a broken bless", "2026-03-10T12:00:00Z");
    std::fs::write(&file, &good).unwrap();
    repo.commit("revert it", "2026-03-11T12:00:00Z");
    let json = history_json(repo.root(), &["gemini-2.5-flash"]);
    let flash = model(&json, "gemini-2.5-flash");
    assert_eq!(flash["blessings"].as_array().unwrap().len(), 3, "{flash}");
    assert_eq!(flash["steps"].as_array().unwrap().len(), 2, "{flash}");
    // The broken version is a note about this model's file, kept when it alone is asked for.
    assert!(json["notes"].to_string().contains("gemini-gemini-2.5-flash.json at commit"), "{json}");
    // Another model asked for alone: the note about this one's file is not its.
    let other = history_json(repo.root(), &["ollama/gemma4-e4b"]);
    assert!(!other["notes"].to_string().contains("gemini-gemini-2.5-flash.json at commit"), "{other}");
}

#[test]
fn no_repository_gives_no_history_with_a_note_and_an_uncommitted_blessing_is_the_latest() {
    let Some((repo, _)) = history_repo() else { return };
    let outside = tempfile::tempdir().unwrap();
    let copy = outside.path().join("baselines");
    std::fs::create_dir_all(&copy).unwrap();
    for name in ["gemini-gemini-2.5-flash.json", "ollama-gemma4-e4b.json"] {
        std::fs::copy(repo.baselines().join(name), copy.join(name)).unwrap();
    }
    let json = history_json(outside.path(), &["--baselines", "baselines"]);
    if !json["notes"].to_string().contains("not in a git repository: no history of the baselines") {
        eprintln!("skipping the no-repository half: the temporary folder is inside a repository");
    } else {
        assert!(json["models"].as_array().unwrap().is_empty(), "{json}");
        let text = stdout(&vaultbench(&["history", "--baselines", "baselines"], outside.path()));
        assert!(text.contains("0 models, 0 blessings") && text.contains("Note: "), "{text}");
        // A model asked for by name: the same note, not an error.
        let out = vaultbench(&["history", "gemini-2.5-flash", "--baselines", "baselines"], outside.path());
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(stdout(&out).contains("no history of the baselines"), "{}", stdout(&out));
    }
    // Blessed and not committed: the fourth blessing, from the working tree.
    let mut fourth = flash(3);
    fourth.run_id = RunId("2026-04-01T10:00:00.000Z".into());
    repo.write("gemini-gemini-2.5-flash.json", &fourth);
    let json = history_json(repo.root(), &["gemini-2.5-flash"]);
    let b = json["models"][0]["blessings"].as_array().unwrap();
    assert_eq!(b.len(), 4);
    assert!(b[3]["commit"].is_null());
    assert_eq!(b[3]["run_id"], "2026-04-01T10:00:00.000Z");
    assert_eq!(json["models"][0]["steps"][2]["verdict"], "no_change");
}

#[test]
fn a_closed_stdout_never_panics() {
    let Some((repo, _)) = history_repo() else { return };
    for args in [&["history"][..], &["history", "--json"]] {
        let mut child = command()
            .args(args)
            .current_dir(repo.root())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut reader = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        drop(reader);
        let out = child.wait_with_output().unwrap();
        assert!(!stderr(&out).contains("panicked"), "{args:?}: {}", stderr(&out));
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn the_pages_show_the_history_the_changes_and_the_mark_in_the_table() {
    let Some((repo, _)) = history_repo() else { return };
    std::fs::create_dir_all(repo.root().join("docs")).unwrap();
    let out = vaultbench(&["publish", "--out", "site", "--suite", "none"], repo.root());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let read = |rel: &str| std::fs::read_to_string(repo.root().join("site").join(rel)).unwrap();

    let page = read("baselines/gemini-gemini-2.5-flash.html");
    let history = &page[page.find("id=\"history\"").expect("a history section")..];
    assert!(history.contains("earlier named <code>gemini-gemini-2-5-flash.json</code>"), "{history}");
    assert!(history.contains("<tr id=\"blessing-3\">"), "{history}");
    assert!(history.contains("class=\"history-mark significant\">significant change</span>"), "{history}");
    // The chart: a bar for each blessing's interval, on both lines.
    assert_eq!(history.matches("style=\"stroke-width:1;stroke-dasharray:none;opacity:0.6\"").count(), 6, "{history}");
    assert!(history.contains("<title>solve^k: blessing = 3: 76.9% [53.8, 100.0]</title>"), "{history}");
    assert!(history.contains("92.3% [") && history.contains("76.9% ["), "{history}");
    assert!(history.contains("tasks changed (left out): <code>edited</code>"), "{history}");
    // The strip: drift first (flagged at the latest blessing), linked to its runs.
    let drift = &history[history.find("id=\"history-task-drift\"").unwrap()..];
    assert!(drift.starts_with("id=\"history-task-drift\"><td><a href=\"../baselines/gemini-gemini-2.5-flash/drift.html\"><code>drift</code></a>"), "{drift}");
    assert!(drift.contains(">5/5</td><td class=\"cell-some\" title=\"flaky\">1/5</td>"), "{drift}");
    assert!(drift.contains("#3 stable → flaky: more than noise"), "{drift}");
    assert!(history.contains("class=\"cell-none changed\" title=\"failing; task changed\">0/5"), "{history}");

    let changes = read("changes.html");
    assert!(changes.contains("<h1 id=\"changes\">What changed"), "{changes}");
    let flash = &changes[changes.find("gemini-2.5-flash</code>").unwrap()..];
    assert!(flash.contains("significant change"), "{flash}");
    assert!(
        flash.contains("<a href=\"baselines/gemini-gemini-2.5-flash/drift.html\"><code>drift</code></a> 5/5 → 1/5: "),
        "{flash}"
    );
    assert!(flash.contains("<code>edited</code></a> 5/5 → 0/5: <span class=\"history-mark task_changed\">task changed, not a model change"), "{flash}");
    assert!(changes.contains("href=\"baselines/ollama-gemma4-e4b.html#history\""), "{changes}");
    assert!(changes.contains("definition unknown (no content hash)"), "{changes}");
    assert!(changes.contains("Note: 1 version does not read as a result and is left out: odd name"), "{changes}");

    let results = read("results.html");
    let header = &results[results.find("<thead>").unwrap()..results.find("</thead>").unwrap()];
    let columns: Vec<&str> = header.split("<th>").skip(1).map(|c| c.split("</th>").next().unwrap()).collect();
    assert_eq!(
        columns,
        [
            "Model",
            "Provider",
            "k",
            "Tasks",
            "pass^k",
            "solve^k",
            "T1",
            "T2",
            "T3",
            "T4",
            "Date (UTC)",
            "Commit",
            "solve^k 95% interval",
            "Cost per run (USD)",
            "Mean turns",
            "Since last blessing"
        ]
    );
    assert!(results.contains("href=\"baselines/gemini-gemini-2.5-flash.html#history\""), "{results}");
    // solve^5 on the 12 tasks both ran with the same definition: 11 of 12, then 10 of 12.
    assert!(results.contains("-8.3 pts · significant</a>"), "{results}");
    assert!(results.contains("<a href=\"changes.html\""), "the navigation leads to What changed");
}

#[test]
fn a_docs_only_rebuild_does_not_read_the_history_again_and_a_baseline_change_does() {
    use std::sync::Arc;
    use vaultbench::publish::{ChangeKind, PublishOptions, Site};
    let Some((repo, _)) = history_repo() else { return };
    // The history's cache stays in this process: nothing in the user's cache folder.
    vaultbench::history::keep_cache_in_memory();
    std::fs::create_dir_all(repo.root().join("docs")).unwrap();
    let options = PublishOptions {
        docs: repo.root().join("docs"),
        baselines: repo.baselines(),
        suite: repo.root().join("none"),
        out: repo.root().join("site"),
        templates: repo.root().join("templates"),
        config: repo.root().join("vaultbench.toml"),
        ..PublishOptions::default()
    };
    let mut site = Site::load(options).unwrap();
    let first = Arc::clone(site.history());
    assert_eq!(first.models.len(), 2);
    // A new blessing committed: only a baseline change reads it.
    let mut fourth = flash(3);
    fourth.run_id = RunId("2026-04-01T10:00:00.000Z".into());
    repo.write("gemini-gemini-2.5-flash.json", &fourth);
    repo.commit("bless flash again", "2026-04-05T12:00:00Z");
    std::fs::write(repo.root().join("docs/page.md"), "# A page\n").unwrap();
    for kind in [ChangeKind::Content, ChangeKind::Static, ChangeKind::Templates, ChangeKind::Tasks] {
        site.reload(kind).unwrap();
        assert!(Arc::ptr_eq(&first, site.history()), "{kind:?} read the history again");
        site.render().unwrap();
    }
    site.reload(ChangeKind::Baselines).unwrap();
    assert!(!Arc::ptr_eq(&first, site.history()));
    let flash = site.history().models.iter().find(|m| m.model == "gemini-2.5-flash").unwrap();
    assert_eq!(flash.blessings.len(), 4);
}

#[test]
fn a_second_read_takes_what_it_has_seen_from_the_cache_and_gives_the_same_history() {
    let Some((repo, _)) = history_repo() else { return };
    let cache = tempfile::tempdir().unwrap();
    let run = || {
        let out = command()
            .args(["history", "--json"])
            .current_dir(repo.root())
            .env("VAULTBENCH_CACHE_DIR", cache.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out)
    };
    let cold = run();
    let file = cache.path().join("history.json");
    assert!(file.is_file(), "the cache is written");
    assert_eq!(run(), cold, "a read from the cache gives the history computed afresh");
    // It is read: an entry changed in the file shows.
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("\"2222abc\""));
    std::fs::write(&file, text.replace("\"2222abc\"", "\"9999abc\"")).unwrap();
    assert!(run().contains("\"git_sha\": \"9999abc\""));
    // A file that does not parse is ignored, and replaced.
    std::fs::write(&file, "{ not a cache").unwrap();
    assert_eq!(run(), cold);
    assert!(std::fs::read_to_string(&file).unwrap().contains("\"2222abc\""));
}

#[test]
fn a_history_past_its_bounds_gives_the_newest_part_with_a_note_and_never_hangs() {
    use std::time::{Duration, Instant};
    use vaultbench::history::{self, Bounds};
    let Some((repo, _)) = history_repo() else { return };
    history::keep_cache_in_memory();
    let dir = repo.baselines();
    // At most two versions: the newest two, one per model here.
    let few = history::read(&dir, &Bounds { max_versions: 2, ..Bounds::default() });
    assert!(few.notes.iter().any(|n| n.contains("older versions are left out")), "{:?}", few.notes);
    assert_eq!(few.models.iter().map(|m| m.blessings.len()).sum::<usize>(), 2, "{:?}", few.models);
    // A log cut at the cap keeps the newest commits.
    let cut = history::read(&dir, &Bounds { max_log_bytes: 700, ..Bounds::default() });
    assert!(cut.notes.iter().any(|n| n.contains("the oldest commits are left out")), "{:?}", cut.notes);
    let flash = cut.models.iter().find(|m| m.model == "gemini-2.5-flash").unwrap();
    assert_eq!(flash.blessings.last().unwrap().run_id, "2026-03-01T10:00:00.000Z");
    assert!(flash.blessings.len() < 3);
    // A deadline git cannot meet: a note, at once.
    let start = Instant::now();
    let late = history::read(&dir, &Bounds { timeout: Duration::ZERO, ..Bounds::default() });
    assert!(late.models.is_empty());
    assert!(late.notes.iter().any(|n| n.contains("did not finish within")), "{:?}", late.notes);
    assert!(start.elapsed() < Duration::from_secs(10));
}
