//! `calibrate extract`, `calibrate judge` and `rescore --judge` through the
//! real binary, with the judge served by a loopback fake Gemini endpoint.

mod common;
#[path = "providers/fake.rs"]
mod fake;

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::process::Output;
use std::sync::Mutex;

use serde_json::{Value, json};

use common::*;
use fake::{Fake, Recorded, Reply};
use vaultbench::format::OneOrMany;
use vaultbench::format::calibration::{CalibrationFile, CalibrationSource, CalibrationTuple, HumanLabel};
use vaultbench::format::result::MatcherDetail;
use vaultbench::{fsio, jsnum};

const KEY: &str = "judge-key-0123456789abcdefghij";

/// Run the binary with only the given provider settings in its environment.
fn run(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = common::command();
    cmd.args(args).current_dir(cwd);
    cmd.env("VAULTBENCH_RETRY_BASE_MS", "1").env("VAULTBENCH_RETRY_ATTEMPTS", "2");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("the vaultbench binary runs")
}

/// The prompt text of a recorded Gemini request.
fn prompt_of(r: &Recorded) -> String {
    r.body["contents"][0]["parts"][0]["text"].as_str().unwrap_or_default().to_string()
}

/// The JSON string literal that follows `label` in a judge prompt, decoded.
fn quoted_after(prompt: &str, label: &str) -> Option<String> {
    let start = prompt.find(label)? + label.len();
    serde_json::Deserializer::from_str(&prompt[start..]).into_iter::<String>().next()?.ok()
}

fn gemini_says(text: &str) -> Reply {
    Reply::json(json!({
        "candidates": [{ "content": { "role": "model", "parts": [{ "text": text }] }, "finishReason": "STOP" }],
        "usageMetadata": { "promptTokenCount": 200, "candidatesTokenCount": 1 }
    }))
}

/// A judge that answers YES when the response mentions `verdict-good`, NO
/// for `verdict-bad`, and fails with a 400 for `verdict-fail`.
fn marker_judge() -> Fake {
    Fake::start(|r, _| {
        let p = prompt_of(r);
        if p.contains("verdict-fail") {
            Reply::status(400, r#"{"error":{"message":"refused","status":"INVALID_ARGUMENT"}}"#)
        } else if p.contains("verdict-good") {
            gemini_says("YES")
        } else {
            gemini_says("NO")
        }
    })
}

fn tuple(id: &str, response: &str, human: Option<HumanLabel>, judge_error: Option<&str>) -> CalibrationTuple {
    CalibrationTuple {
        id: id.into(),
        task_id: id.split("::").next().unwrap().into(),
        user_message: "What does the note say?".into(),
        criteria: "Answer YES only if the response quotes the note.".into(),
        response: response.into(),
        automated_verdict: Some(false),
        judge_error: judge_error.map(String::from),
        human_label: human,
    }
}

fn write_json<T: serde::Serialize>(path: &Path, value: &T) {
    fsio::write_atomic(path, &jsnum::to_json_bytes(value).unwrap()).unwrap();
}

#[test]
fn calibrate_judge_reproduces_a_known_confusion_matrix() {
    use HumanLabel::{No, Yes};
    let dir = tempfile::tempdir().unwrap();
    let set = CalibrationFile {
        version: 1,
        generated_at: "2026-11-20T10:00:00.000Z".into(),
        source: CalibrationSource {
            run_id: None,
            git_sha: None,
            provider: Some("gemini".into()),
            model: Some("m".into()),
        },
        tuples: vec![
            tuple("a::1::0", "verdict-good", Some(Yes), None), // judge YES, human YES
            tuple("b::1::0", "verdict-good", Some(No), None),  // false positive
            tuple("c::1::0", "verdict-bad", Some(Yes), None),  // false negative
            tuple("d::1::0", "verdict-bad", Some(No), None),   // both NO
            tuple("e::1::0", "verdict-bad \"quoted\"", Some(No), None), // both NO
            tuple("f::1::0", "verdict-good", None, None),      // unlabelled: not asked
            tuple("g::1::0", "verdict-good", Some(Yes), Some("no judge available")), // not comparable
            tuple("h::1::0", "verdict-fail", Some(Yes), None), // the call fails
        ],
    };
    write_json(&dir.path().join("gold.json"), &set);
    let judge = marker_judge();
    let out = run(
        &["calibrate", "judge", "gold.json", "--model", "judge-candidate", "--json"],
        dir.path(),
        &[("GEMINI_BASE_URL", &judge.url), ("EVAL_JUDGE_API_KEY", KEY)],
    );
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let a: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(a["judge"], "gemini / judge-candidate");
    assert_eq!((a["both_yes"].as_u64(), a["false_positives"].as_u64()), (Some(1), Some(1)));
    assert_eq!((a["false_negatives"].as_u64(), a["both_no"].as_u64()), (Some(1), Some(2)));
    assert_eq!((a["evaluated"].as_u64(), a["agreed"].as_u64()), (Some(5), Some(3)));
    assert_eq!(a["skipped_unlabelled"], 1);
    assert_eq!(a["skipped_judge_error"], 1);
    assert_eq!(a["judge_call_errors"], 1);
    let fp: Vec<&str> = a["disagreements"].as_array().unwrap().iter().map(|d| d["id"].as_str().unwrap()).collect();
    assert_eq!(fp, ["b::1::0", "c::1::0"]);
    assert!(stderr(&out).contains("1 judge calls failed") && stderr(&out).contains("refused"), "{}", stderr(&out));
    // Only comparable tuples were asked (the failing one once: a 400 is not retried).
    let requests = judge.requests();
    assert_eq!(requests.len(), 6);
    assert!(requests.iter().all(|r| r.path == "/v1beta/models/judge-candidate:generateContent"));
    assert!(requests.iter().all(|r| r.header("x-goog-api-key") == Some(KEY)));
    assert!(requests.iter().all(|r| r.body["generationConfig"]["temperature"] == 0.0));

    // The human-readable report.
    let judge = marker_judge();
    let out = run(
        &["calibrate", "judge", "gold.json", "--model", "judge-candidate"],
        dir.path(),
        &[("GEMINI_BASE_URL", &judge.url), ("GEMINI_API_KEY", KEY)],
    );
    let text = stdout(&out);
    assert!(text.contains("Agreement with human labels: 3/5 (60.0%)"), "{text}");
    assert!(text.contains("  judge YES           1         1"), "{text}");
    assert!(text.contains("  judge NO            1         2"), "{text}");
}

#[test]
fn any_provider_may_judge() {
    use HumanLabel::{No, Yes};
    let dir = tempfile::tempdir().unwrap();
    let set = CalibrationFile {
        version: 1,
        generated_at: String::new(),
        source: CalibrationSource { run_id: None, git_sha: None, provider: None, model: None },
        tuples: vec![
            tuple("a::1::0", "verdict-good", Some(Yes), None),
            tuple("b::1::0", "verdict-bad", Some(No), None),
        ],
    };
    write_json(&dir.path().join("gold.json"), &set);
    // An OpenAI-compatible judge, configured only through the EVAL_JUDGE_* variables.
    let judge = Fake::start(|r, _| {
        let prompt = r.body["messages"][1]["content"].as_str().unwrap_or_default();
        let answer = if prompt.contains("verdict-good") { "YES" } else { "NO" };
        Reply::json(
            json!({ "choices": [{ "index": 0, "message": { "role": "assistant", "content": answer }, "finish_reason": "stop" }] }),
        )
    });
    let out = run(
        &["calibrate", "judge", "gold.json", "--model", "local-judge"],
        dir.path(),
        &[("EVAL_JUDGE_PROVIDER", "openai"), ("EVAL_JUDGE_BASE_URL", &judge.url), ("EVAL_JUDGE_API_KEY", KEY)],
    );
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("Judge: openai / local-judge"), "{}", stdout(&out));
    assert!(stdout(&out).contains("Agreement with human labels: 2/2 (100.0%)"), "{}", stdout(&out));
    let requests = judge.requests();
    assert_eq!(requests.len(), 2);
    for r in &requests {
        assert_eq!(r.path, "/v1/chat/completions");
        assert_eq!(r.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
        assert_eq!(r.body["temperature"], 0.0);
        assert_eq!(r.body["messages"][0]["role"], "system");
        assert!(r.body.get("tools").is_none());
    }
}

#[test]
fn calibrate_judge_without_a_key_says_the_judge_is_unavailable() {
    let dir = tempfile::tempdir().unwrap();
    let set = CalibrationFile {
        version: 1,
        generated_at: String::new(),
        source: CalibrationSource { run_id: None, git_sha: None, provider: None, model: None },
        tuples: vec![tuple("a::1::0", "x", Some(HumanLabel::Yes), None)],
    };
    write_json(&dir.path().join("gold.json"), &set);
    let out = run(&["calibrate", "judge", "gold.json", "--model", "m"], dir.path(), &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("[judge unavailable]") && err.contains("EVAL_JUDGE_API_KEY") && err.contains("GEMINI_API_KEY"),
        "{err}"
    );
    let out = run(&["calibrate", "judge", "gold.json", "--model", "m", "--provider", "mistral"], dir.path(), &[]);
    assert!(stderr(&out).contains("unknown provider `mistral`"), "{}", stderr(&out));
}

#[test]
fn calibrate_judge_reproduces_the_recorded_agreement_of_the_upstream_gold_set() {
    let Some(up) = upstream() else { return };
    let path = up.join("calibration/judge-calibration.json");
    let set: CalibrationFile = fsio::read_json(&path).unwrap();
    // A judge that answers what the recorded judge answered. The recorded
    // judge was not always consistent (one pair of identical questions got
    // NO and YES), so identical questions get the recorded answers in turn.
    let mut recorded: HashMap<(String, String), VecDeque<bool>> = HashMap::new();
    for t in &set.tuples {
        recorded.entry((t.criteria.clone(), t.response.clone())).or_default().push_back(t.automated_verdict.unwrap());
    }
    let recorded = Mutex::new(recorded);
    let judge = Fake::start(move |r, _| {
        let p = prompt_of(r);
        let key = (
            quoted_after(&p, "Criteria: ").unwrap_or_default(),
            quoted_after(&p, "Assistant's answer: ").unwrap_or_default(),
        );
        match recorded.lock().unwrap().get_mut(&key).and_then(VecDeque::pop_front) {
            Some(true) => gemini_says("YES"),
            Some(false) => gemini_says("NO"),
            None => Reply::status(400, r#"{"error":{"message":"unknown tuple"}}"#),
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &["calibrate", "judge", path.to_str().unwrap(), "--model", "replay", "--jobs", "8"],
        dir.path(),
        &[("GEMINI_BASE_URL", &judge.url), ("EVAL_JUDGE_API_KEY", KEY)],
    );
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(text.contains("Agreement with human labels: 83/90 (92.2%)"), "{text}");
    assert!(text.contains("0 failed judge calls"), "{text}");
    assert_eq!(judge.requests().len(), 90);
}

/// Our suite's gold set (built from its answer corpus by `calibrate corpus`)
/// measures a judge: one that says YES to everything agrees on exactly the
/// YES-labelled tuples, and each NO-labelled one is a false positive.
#[test]
fn calibrate_judge_measures_a_judge_against_our_own_gold_set() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("evals/calibration/judge-calibration.json");
    let set: CalibrationFile = fsio::read_json(&path).unwrap();
    let yes = set.tuples.iter().filter(|t| t.human_label == Some(HumanLabel::Yes)).count();
    let no = set.tuples.iter().filter(|t| t.human_label == Some(HumanLabel::No)).count();
    assert_eq!(yes + no, set.tuples.len());
    let judge = Fake::start(|_, _| gemini_says("YES"));
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        &["calibrate", "judge", path.to_str().unwrap(), "--model", "always-yes", "--jobs", "8", "--json"],
        dir.path(),
        &[("GEMINI_BASE_URL", &judge.url), ("EVAL_JUDGE_API_KEY", KEY)],
    );
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let a: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(a["evaluated"].as_u64(), Some(set.tuples.len() as u64));
    assert_eq!((a["both_yes"].as_u64(), a["false_positives"].as_u64()), (Some(yes as u64), Some(no as u64)));
    assert_eq!((a["false_negatives"].as_u64(), a["both_no"].as_u64()), (Some(0), Some(0)));
    assert_eq!(judge.requests().len(), set.tuples.len());
    // No judge has seen the gold set: nothing recorded to report.
    let out = run(&["calibrate", "report", path.to_str().unwrap()], dir.path(), &[]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains(&format!("{} without a recorded verdict", set.tuples.len())), "{text}");
}

/// A suite with two tasks and a result whose `alpha` runs carry judge verdicts.
fn sweep(dir: &Path) {
    let tasks = dir.join("suite/tasks");
    std::fs::create_dir_all(&tasks).unwrap();
    for (id, message) in [("alpha", "Summarize the alpha note."), ("beta", "List the beta files.")] {
        let task = json!({
            "id": id, "description": "d", "userMessage": message, "difficulty": "T2", "category": "retrieval",
            "outputMatchers": [{ "type": "judge", "criteria": format!("Answer YES if it covers {id}.") }]
        });
        std::fs::write(tasks.join(format!("{id}.json")), task.to_string()).unwrap();
    }
    let mut r = sample_result("gemini", "gemini-test", &[("alpha", &[true, false]), ("beta", &[true])]);
    for (i, run) in r.tasks[0].runs.iter_mut().enumerate() {
        run.response_text = format!("alpha answer {}", i + 1);
        run.solve_details.matcher_details = vec![
            MatcherDetail::Contains { value: OneOrMany::One("alpha".into()), verdict: true, error: None },
            MatcherDetail::Judge {
                criteria: "Answer YES if it covers alpha.".into(),
                verdict: i == 0,
                error: (i == 1).then(|| "judge gemini: HTTP 503".to_string()),
            },
        ];
    }
    write_result(&dir.join("result.json"), &r);
}

#[test]
fn calibrate_extract_builds_tuples_and_keeps_human_labels() {
    let dir = tempfile::tempdir().unwrap();
    sweep(dir.path());
    let out = run(&["calibrate", "extract", "result.json", "--suite", "suite"], dir.path(), &[]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let gold = dir.path().join("evals/calibration/judge-calibration.json");
    let set: CalibrationFile = fsio::read_json(&gold).unwrap();
    assert_eq!(set.version, 1);
    assert_eq!(set.source.model.as_deref(), Some("gemini-test"));
    assert_eq!(set.source.run_id.as_deref(), Some("2026-11-20T10:00:00.000Z"));
    let ids: Vec<&str> = set.tuples.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["alpha::1::1", "alpha::2::1"], "beta has no judge verdicts");
    let t = &set.tuples[1];
    assert_eq!(t.task_id, "alpha");
    assert_eq!(t.user_message, "Summarize the alpha note.");
    assert_eq!(t.criteria, "Answer YES if it covers alpha.");
    assert_eq!(t.response, "alpha answer 2");
    assert_eq!(t.automated_verdict, Some(false));
    assert_eq!(t.judge_error.as_deref(), Some("judge gemini: HTTP 503"));
    assert_eq!(t.human_label, None);
    assert!(std::fs::read_to_string(&gold).unwrap().contains("\t\"human_label\": null"));

    // A human labels the first tuple; extracting again keeps the label.
    let mut labelled = set.clone();
    labelled.tuples[0].human_label = Some(HumanLabel::No);
    write_json(&gold, &labelled);
    let out = run(&["calibrate", "extract", "result.json", "--suite", "suite"], dir.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("human labels kept: 1"), "{}", stdout(&out));
    let again: CalibrationFile = fsio::read_json(&gold).unwrap();
    assert_eq!(again.tuples[0].human_label, Some(HumanLabel::No));

    // A new sweep changes that response: the label would be lost, so the
    // command refuses and leaves the file as it was, unless forced.
    let mut r: vaultbench::format::result::ResultFile = fsio::read_json(&dir.path().join("result.json")).unwrap();
    r.tasks[0].runs[0].response_text = "a different answer".into();
    write_result(&dir.path().join("result.json"), &r);
    let before = std::fs::read(&gold).unwrap();
    let out = run(&["calibrate", "extract", "result.json", "--suite", "suite"], dir.path(), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("1 human label that the new extraction would lose")
            && stderr(&out).contains("alpha::1::1"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read(&gold).unwrap(), before);
    let out = run(&["calibrate", "extract", "result.json", "--suite", "suite", "--force"], dir.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let forced: CalibrationFile = fsio::read_json(&gold).unwrap();
    assert_eq!(forced.tuples[0].human_label, None);
    assert_eq!(forced.tuples[0].response, "a different answer");

    // A result task missing from the suite is an error naming it.
    std::fs::remove_file(dir.path().join("suite/tasks/alpha.json")).unwrap();
    let out = run(&["calibrate", "extract", "result.json", "--suite", "suite", "--out", "other.json"], dir.path(), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("alpha") && stderr(&out).contains("--suite"), "{}", stderr(&out));
    assert!(!dir.path().join("other.json").exists());
}

#[test]
fn rescore_with_judge_asks_the_configured_judge() {
    let dir = tempfile::tempdir().unwrap();
    sweep(dir.path());
    // The judge now says YES to everything; run 2 of alpha was recorded NO.
    let judge = Fake::always(gemini_says("YES"));
    let env = [("GEMINI_BASE_URL", judge.url.as_str()), ("GEMINI_API_KEY", KEY), ("EVAL_JUDGE_MODEL", "judge-pinned")];
    let out = run(&["rescore", "result.json", "--judge", "--suite", "suite"], dir.path(), &env);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "{text}{}", stderr(&out));
    assert!(text.contains("judge: 1/2 agree"), "{text}");
    assert!(text.contains("judge model: judge-pinned"), "{text}");
    assert!(text.contains("alpha run 2: judge matcher 2 recorded false but rescores true"), "{text}");
    let requests = judge.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests.iter().all(|r| r.path == "/v1beta/models/judge-pinned:generateContent"));
    assert!(
        prompt_of(&requests[0]).contains("\"Summarize the alpha note.\""),
        "the judge sees the task's user message"
    );

    // No key: the judge is unavailable, which is an error for --judge.
    let out = run(&["rescore", "result.json", "--judge", "--suite", "suite"], dir.path(), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("[judge unavailable]"), "{}", stderr(&out));
    // Without --judge the judge verdicts are kept as recorded and no key is needed.
    let out = run(&["rescore", "result.json"], dir.path(), &[]);
    assert!(stdout(&out).contains("judge: 2 recorded verdicts kept"), "{}", stdout(&out));
}

#[test]
fn rescore_with_a_repeated_judge_reports_its_flip_rate() {
    let dir = tempfile::tempdir().unwrap();
    sweep(dir.path());
    // Asked about run 1 of alpha, the judge alternates YES, NO, YES...; about
    // run 2 it always says YES.
    let judge = Fake::start(|r, n| {
        if prompt_of(r).contains("alpha answer 1") && n % 2 == 1 { gemini_says("NO") } else { gemini_says("YES") }
    });
    let env = [("GEMINI_BASE_URL", judge.url.as_str()), ("GEMINI_API_KEY", KEY), ("EVAL_JUDGE_MODEL", "judge-pinned")];
    let args = ["rescore", "result.json", "--judge", "--repeat", "3", "--suite", "suite"];
    let out = run(&args, dir.path(), &env);
    let text = stdout(&out);
    assert!(text.contains("judge flip rate: 1/2 verdicts (50.0%)"), "{text}{}", stderr(&out));
    assert!(text.contains("across 3 asks each"), "{text}");
    assert!(text.contains("  alpha: 1/2 flipped (50.0%)"), "{text}");
    assert_eq!(judge.requests().len(), 6, "three asks per judge verdict");
    // The majority of YES, NO, YES is YES: run 1 keeps its recorded YES.
    assert!(!text.contains("alpha run 1: judge matcher"), "{text}");
    let out =
        run(&["rescore", "result.json", "--judge", "--repeat", "3", "--json", "--suite", "suite"], dir.path(), &env);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["judge_stability"]["flipped"], 1);
    assert_eq!(json["judge_stability"]["by_task"]["alpha"]["verdicts"], 2);
    // --repeat needs --judge.
    let out = run(&["rescore", "result.json", "--repeat", "3"], dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn the_upstream_gold_set_reserializes_byte_for_byte() {
    let Some(up) = upstream() else { return };
    let path = up.join("calibration/judge-calibration.json");
    let set: CalibrationFile = fsio::read_json(&path).unwrap();
    assert_eq!(jsnum::to_json_bytes(&set).unwrap(), std::fs::read(&path).unwrap());
}
