//! Our own suite (evals/) against its alternative-answer corpus, through the
//! real binary: every reference and every correct alternative solves its
//! task, every wrong alternative and both adversaries fail it on the literal
//! checks alone, and the committed judge gold set is the one the corpus
//! gives.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::*;
use vaultbench::format::alternative::{Alternative, Label, Source};
use vaultbench::format::calibration::CalibrationFile;
use vaultbench::fsio;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn task_ids() -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(repo().join("evals/tasks"))
        .unwrap()
        .map(|e| e.unwrap().path().file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    ids.sort();
    ids
}

/// A line of the report that starts with `prefix`.
fn line<'a>(text: &'a str, prefix: &str) -> &'a str {
    text.lines().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no line `{prefix}` in:\n{text}"))
}

#[test]
fn suite_check_passes_with_the_corpus_and_prints_the_rates() {
    let out = vaultbench(&["suite", "check"], &repo());
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{text}");
    let n = task_ids().len();
    assert!(n >= 60, "{n} tasks");
    // The tier gradient: the references solve everything, the adversaries nothing.
    assert!(text.contains(&format!("{n}/{n} solve their task")), "{text}");
    assert!(text.contains(&format!("silent solves 0/{n}, dump solves 0/{n}")), "{text}");
    // Zero false negatives and false positives, printed with their rates, for
    // the whole corpus, for each source and for each round of blind answers
    // (wrong answers left to the judge are counted apart, see below).
    for source in ["all", "blind", "blind round 1", "blind round 2", "blind round 3", "reviewer", "reviewer round 2"] {
        let l = line(&text, &format!("  {source}: "));
        assert!(l.contains("false negatives 0/") && l.contains("(0.0%) (correct answers not solved)"), "{l}");
        assert!(l.contains("false positives 0/") && l.contains("(0.0%) (wrong answers solved)"), "{l}");
    }
    // Every task where only the judge can reject some wrong answer says why
    // in its check source; the report lists each with that reason.
    let listed: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("tasks where only the judge separates them"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert!(!listed.is_empty(), "{text}");
    for l in &listed {
        assert!(!l.contains("no reason given"), "{l}");
        assert!(l.ends_with(')'), "{l}");
    }
    assert!(!text.lines().any(|l| l.starts_with("FAIL")), "{text}");
}

#[test]
fn every_round_of_blind_answers_covers_every_task_with_both_labels() {
    let dir = repo().join("evals/alternatives");
    let ids = task_ids();
    // (round, task) -> (correct, wrong)
    let mut counts: BTreeMap<(u32, String), (usize, usize)> = BTreeMap::new();
    for task in std::fs::read_dir(&dir).unwrap() {
        let task = task.unwrap().path();
        let id = task.file_name().unwrap().to_string_lossy().into_owned();
        assert!(ids.contains(&id), "{} names no task", task.display());
        for file in std::fs::read_dir(&task).unwrap() {
            let file = file.unwrap().path();
            let alt: Alternative = fsio::read_json(&file).unwrap();
            if let Some(round) = alt.origin().round.filter(|_| alt.source == Source::Blind) {
                let c = counts.entry((round, id.clone())).or_default();
                match alt.label {
                    Label::Correct => c.0 += 1,
                    Label::Wrong => c.1 += 1,
                }
            }
        }
    }
    let rounds: std::collections::BTreeSet<u32> = counts.keys().map(|(r, _)| *r).collect();
    // Every round from the first, each held out once (see docs/evals.md).
    let last = rounds.iter().copied().max().unwrap_or(0);
    assert!(last >= 3, "rounds of blind answers: {rounds:?}");
    assert_eq!(rounds.iter().copied().collect::<Vec<_>>(), (1..=last).collect::<Vec<_>>(), "rounds of blind answers");
    for round in rounds {
        let short: Vec<&String> =
            ids.iter().filter(|id| counts.get(&(round, (*id).clone())).is_none_or(|(c, w)| *c < 1 || *w < 2)).collect();
        assert!(
            short.is_empty(),
            "round {round}: tasks without one blind correct and two blind wrong answers: {short:?}"
        );
    }
}

fn gold(path: &Path) -> CalibrationFile {
    fsio::read_json(path).unwrap()
}

#[test]
fn the_committed_gold_set_is_the_one_the_corpus_gives() {
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("gold.json");
    let evals = repo().join("evals");
    let out = vaultbench(
        &["calibrate", "corpus", "--suite", evals.to_str().unwrap(), "--out", fresh.to_str().unwrap()],
        dir.path(),
    );
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    // The same set again leaves the file as it was, its time included: a
    // change that touches no judged task leaves no diff.
    let first = std::fs::read(&fresh).unwrap();
    let again = vaultbench(
        &["calibrate", "corpus", "--suite", evals.to_str().unwrap(), "--out", fresh.to_str().unwrap()],
        dir.path(),
    );
    assert!(again.status.success(), "{}{}", stdout(&again), stderr(&again));
    assert!(stdout(&again).starts_with("Unchanged: "), "{}", stdout(&again));
    assert_eq!(std::fs::read(&fresh).unwrap(), first, "rewritten with nothing changed");
    let committed = gold(&evals.join("calibration/judge-calibration.json"));
    let fresh = gold(&fresh);
    assert!(
        committed.tuples == fresh.tuples,
        "evals/calibration/judge-calibration.json is out of date: run `vaultbench calibrate corpus`"
    );
    // One tuple per judge matcher and per answer: the reference and every alternative of the task.
    let judged = committed.tuples.iter().filter(|t| t.id.contains("::reference::")).count();
    assert!(judged >= 20, "{judged} tasks with a judge matcher");
    assert!(committed.tuples.iter().all(|t| t.human_label.is_some() && t.automated_verdict.is_none()));
    let yes = committed.tuples.iter().filter(|t| t.human_label.unwrap().is_yes()).count();
    assert!(yes > judged && committed.tuples.len() - yes > judged, "{yes} YES of {}", committed.tuples.len());
}

/// Every measured round kept in `evals/open-rounds/` still loads and replays
/// on today's checks (docs/evals.md tells readers to measure them again), and
/// no wrong answer of a blind round gets past them: a rule change that lets
/// one through is a regression of what the rounds measured, even though the
/// rounds are no longer held out.
#[test]
fn every_kept_round_replays_and_no_blind_wrong_answer_is_accepted() {
    let rounds = repo().join("evals/open-rounds");
    let mut dirs: Vec<PathBuf> =
        std::fs::read_dir(&rounds).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    assert!(dirs.iter().filter(|d| d.file_name().unwrap().to_string_lossy().starts_with("blind-")).count() >= 6);
    for dir in dirs {
        let out = vaultbench(&["suite", "check", "--alternatives", dir.to_str().unwrap()], &repo());
        let text = format!("{}{}", stdout(&out), stderr(&out));
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        assert!(!text.contains("errors in the suite"), "{name} no longer loads:\n{text}");
        let all = line(&text, "  all: ");
        if name.starts_with("blind-") {
            assert!(all.contains("false positives 0/120 (0.0%)"), "{name}: {all}");
        } else {
            assert!(all.contains("false negatives ") && all.contains("false positives "), "{name}: {all}");
        }
    }
}
