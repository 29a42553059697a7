//! The committed baselines are honest: each one is blessable as it stands
//! (a real provider, whole suite, no harness errors, figures that re-derive
//! from its runs) and carries the transcripts of every run, which agree with
//! what the baseline records about that run (`common::evidence`).

mod common;

use std::path::{Path, PathBuf};

fn committed_baselines() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("evals/baselines");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn committed_baselines_are_blessable_and_backed_by_their_transcripts() {
    let files = committed_baselines();
    if files.is_empty() {
        eprintln!("skipping: no baseline is committed in evals/baselines yet");
        return;
    }
    for path in files {
        let runs = common::evidence::assert_backed_by_transcripts(&path);
        eprintln!("{}: {runs} runs, each backed by its transcript", path.display());
    }
}
