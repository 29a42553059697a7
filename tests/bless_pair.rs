//! A baseline and its evidence always come from the same result: `bless`
//! through the real binary, killed with SIGKILL at every step of its
//! protocol, refused space on disk, and run many times at once. After each,
//! the baseline's evidence holds the transcripts of the baseline's own run,
//! `publish` offers that archive and no other, and nothing is left behind
//! once a bless has completed.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;
use vaultbench::format::result::{ResultFile, RunId};
use vaultbench::report::evidence;

const STEPS: [&str; 5] = [
    "bless-locked",
    "bless-evidence-written",
    "bless-evidence-renamed",
    "bless-baseline-written",
    "bless-baseline-renamed",
];

/// A result of `ollama / m` with run id `run_id` and two runs of two tasks,
/// each with its transcript in `results/<stem>/`; `transcript_pad` and
/// `response_pad` bytes of filler make the archive or the baseline large
/// (the transcripts' filler does not compress).
fn result(root: &Path, run_id: &str, transcript_pad: usize, response_pad: usize) -> PathBuf {
    let mut r: ResultFile = sample_result("ollama", "m", &[("alpha", &[true, false]), ("beta", &[true, true])]);
    r.run_id = RunId(run_id.into());
    let stem = r.run_id.file_stem();
    let mut seed = stem.bytes().fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
    for task in &mut r.tasks {
        for (i, run) in task.runs.iter_mut().enumerate() {
            let name = format!("{}-{}.json", task.id, i + 1);
            run.transcript_path = format!("results/{stem}/{name}");
            run.response_text.push_str(&"r".repeat(response_pad));
            let filler: String = (0..transcript_pad)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    char::from(b'a' + (seed >> 59) as u8)
                })
                .collect();
            let transcript = serde_json::json!({"run_id": run_id, "task_id": task.id, "run": i + 1, "filler": filler});
            let path = root.join(&run.transcript_path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, serde_json::to_vec(&transcript).unwrap()).unwrap();
        }
    }
    let path = root.join(format!("results/{stem}.json"));
    write_result(&path, &r);
    path
}

fn bless_cmd(root: &Path, source: &Path) -> Command {
    let mut cmd = command();
    cmd.args(["bless", "--baselines", "baselines"]).arg(source).current_dir(root);
    cmd
}

fn baseline(root: &Path) -> PathBuf {
    root.join("baselines/ollama-m.json")
}

/// The run id of the baseline, after checking that its evidence is the
/// archive of that run, holding exactly that run's transcripts.
fn check_pair(root: &Path) -> String {
    let path = baseline(root);
    let b: ResultFile = vaultbench::report::load_result(&path).unwrap();
    let archive = evidence::archive_path(&path, &b.run_id.0).unwrap();
    let entries = evidence::read(&archive).unwrap_or_else(|e| panic!("no evidence for run {}: {e:#}", b.run_id));
    assert_eq!(entries.len(), 4, "{}", archive.display());
    for (name, bytes) in &entries {
        let t: Value = serde_json::from_slice(bytes).unwrap();
        assert_eq!(t["run_id"], b.run_id.0.as_str(), "{name} in {} is another run's", archive.display());
    }
    b.run_id.0
}

/// Every file under `dir`, relative, sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| !e.file_type().is_dir())
        .map(|e| e.path().strip_prefix(dir).unwrap().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// After a completed bless: the baseline, its one archive, nothing else.
fn check_no_leftovers(root: &Path, run_id: &str) {
    let key = RunId(run_id.into()).file_stem();
    assert_eq!(
        tree(&root.join("baselines")),
        ["evidence/ollama-m/".to_string() + &key + ".tar.gz", "ollama-m.json".into()]
    );
}

/// Start a bless paused at `step` (the test-only hook) and wait until it is there.
fn paused_at(root: &Path, source: &Path, step: &str) -> Child {
    let mut child = bless_cmd(root, source)
        .env("VAULTBENCH_TEST_PAUSE_AT", step)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let reached = lines.map_while(Result::ok).any(|line| line.contains(&format!("paused at {step}")));
    if !reached {
        let status = child.wait().unwrap();
        panic!("bless ended ({status}) before {step}");
    }
    child
}

fn publish_evidence(root: &Path) -> Option<Vec<u8>> {
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::write(root.join("docs/index.md"), "# Results\n").unwrap();
    let out = command()
        .args(["publish", "--docs", "docs", "--baselines", "baselines", "--out", "site", "--suite", "nosuite"])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::read(root.join("site/baselines/ollama-m.evidence.tar.gz")).ok()
}

#[test]
fn a_kill_at_any_step_of_bless_leaves_a_matching_pair() {
    for step in STEPS {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let first = result(root, "2026-11-20T10:00:00.000Z", 300, 0);
        let second = result(root, "2026-11-21T10:00:00.000Z", 300, 0);
        let third = result(root, "2026-11-22T10:00:00.000Z", 300, 0);
        assert!(bless_cmd(root, &first).status().unwrap().success());

        let mut child = paused_at(root, &second, step);
        // The window is real: what this step has written is on disk.
        let files = tree(&root.join("baselines"));
        let temps = files.iter().filter(|f| f.rsplit('/').next().unwrap().starts_with('.')).count();
        let archives = files.iter().filter(|f| f.ends_with(".tar.gz")).count();
        let expected = match step {
            "bless-locked" => (0, 1),
            "bless-evidence-written" => (1, 1),
            "bless-baseline-written" => (1, 2),
            _ => (0, 2),
        };
        assert_eq!((temps, archives), expected, "{step}: {files:?}");
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();

        let expected =
            if step == "bless-baseline-renamed" { "2026-11-21T10:00:00.000Z" } else { "2026-11-20T10:00:00.000Z" };
        assert_eq!(check_pair(root), expected, "killed at {step}");
        // The site offers the baseline's own archive, never a leftover.
        let archive = evidence::archive_path(&baseline(root), expected).unwrap();
        assert_eq!(publish_evidence(root), Some(std::fs::read(&archive).unwrap()), "killed at {step}");

        // The next bless completes and cleans up after the killed one.
        let out = bless_cmd(root, &third).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(check_pair(root), "2026-11-22T10:00:00.000Z");
        check_no_leftovers(root, "2026-11-22T10:00:00.000Z");
    }
}

/// Run `bless` with writes past `limit_kib` failing (RLIMIT_FSIZE, its
/// signal ignored, so the write returns EFBIG as a full disk returns ENOSPC).
fn bless_with_file_limit(root: &Path, source: &Path, limit_kib: u64) -> std::process::Output {
    let script = format!("trap '' XFSZ; ulimit -f {limit_kib}; exec \"$0\" bless --baselines baselines \"$1\"");
    let mut cmd = Command::new("bash");
    for var in PROVIDER_ENV {
        cmd.env_remove(var);
    }
    cmd.args(["-c", &script, env!("CARGO_BIN_EXE_vaultbench")]).arg(source).current_dir(root).output().unwrap()
}

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    tree(dir).into_iter().map(|rel| (rel.clone(), std::fs::read(dir.join(&rel)).unwrap())).collect()
}

/// A first result blessed, the baselines folder as it then is, and a second
/// result (padded as asked) ready to bless.
fn blessed_then_another(root: &Path, transcript_pad: usize, response_pad: usize) -> (Vec<(String, Vec<u8>)>, PathBuf) {
    let first = result(root, "2026-11-20T10:00:00.000Z", 100, 0);
    assert!(bless_cmd(root, &first).status().unwrap().success());
    let before = snapshot(&root.join("baselines"));
    (before, result(root, "2026-11-21T10:00:00.000Z", transcript_pad, response_pad))
}

#[test]
fn a_failed_write_leaves_the_previous_pair_untouched() {
    if Command::new("bash").arg("-c").arg("true").status().is_err() {
        eprintln!("skipping: bash is not installed");
        return;
    }
    // Each limit fails one write: the archive (large transcripts), then the
    // baseline after its archive was written (a large baseline, small archive).
    for (what, transcript_pad, response_pad) in [("the evidence", 40_000, 0), ("the baseline", 0, 20_000)] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let (before, second) = blessed_then_another(root, transcript_pad, response_pad);

        let out = bless_with_file_limit(root, &second, 64);
        assert_eq!(out.status.code(), Some(1), "writing {what} must fail: {}", stderr(&out));
        assert!(stderr(&out).contains("writing"), "{}", stderr(&out));
        assert_eq!(snapshot(&root.join("baselines")), before, "a failed write of {what} changed the folder");
        assert_eq!(check_pair(root), "2026-11-20T10:00:00.000Z");

        // Room again: the same bless goes through.
        assert!(bless_cmd(root, &second).status().unwrap().success());
        assert_eq!(check_pair(root), "2026-11-21T10:00:00.000Z");
        check_no_leftovers(root, "2026-11-21T10:00:00.000Z");
    }
}

/// A real full disk: a small tmpfs in a private mount namespace (`unshare`,
/// no root needed where user namespaces are enabled).
#[test]
fn a_full_disk_leaves_the_previous_pair_untouched() {
    let probe = Command::new("unshare").args(["-rm", "sh", "-c", "mount -t tmpfs -o size=64k none /mnt"]).output();
    if !probe.as_ref().is_ok_and(|o| o.status.success()) {
        eprintln!(
            "skipping: cannot mount a tmpfs in a user namespace here (unshare -rm); the write-limit test covers the failure path"
        );
        return;
    }
    for (what, transcript_pad, response_pad) in [("the evidence", 40_000, 0), ("the baseline", 0, 40_000)] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let (before, second) = blessed_then_another(root, transcript_pad, response_pad);
        // The baselines folder on a tmpfs with 64 KiB free, then copied out.
        let script = r#"set -e
            mkdir disk after
            mount -t tmpfs -o size=256k none disk
            cp -a baselines/. disk/
            used=$(du -sk disk | cut -f1)
            head -c $(( (256 - 64 - used) * 1024 )) /dev/zero > disk/filler || true
            set +e
            "$0" bless --baselines disk "$1" 2> stderr.txt
            echo $? > rc.txt
            rm -f disk/filler
            cp -a disk/. after/"#;
        let status = Command::new("unshare")
            .args(["-rm", "bash", "-c", script, env!("CARGO_BIN_EXE_vaultbench")])
            .arg(&second)
            .current_dir(root)
            .status()
            .unwrap();
        assert!(status.success());
        let err = std::fs::read_to_string(root.join("stderr.txt")).unwrap();
        assert_eq!(std::fs::read_to_string(root.join("rc.txt")).unwrap().trim(), "1", "{what}: {err}");
        assert!(err.contains("No space left on device"), "{what}: {err}");
        assert_eq!(snapshot(&root.join("after")), before, "a full disk while writing {what} changed the folder");
    }
}

#[test]
fn concurrent_blesses_take_turns_and_leave_one_matching_pair() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let sources: Vec<PathBuf> =
        (0..8).map(|i| result(root, &format!("2026-11-2{i}T10:00:00.000Z"), 2_000, 0)).collect();
    let children: Vec<Child> = sources
        .iter()
        .map(|s| bless_cmd(root, s).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap())
        .collect();
    // Whichever comes first, an older result never replaces a newer baseline.
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success() || stderr(&out).contains("ran later"), "{}", stderr(&out));
    }
    let run_id = check_pair(root);
    assert_eq!(run_id, "2026-11-27T10:00:00.000Z", "the newest run is the baseline");
    check_no_leftovers(root, &run_id);
}

#[test]
fn a_bless_waits_for_the_one_holding_the_folder_and_goes_on_when_it_dies() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let first = result(root, "2026-11-20T10:00:00.000Z", 100, 0);
    let second = result(root, "2026-11-21T10:00:00.000Z", 100, 0);
    let mut holder = paused_at(root, &first, "bless-locked");
    let mut waiter = bless_cmd(root, &second).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(700));
    assert!(waiter.try_wait().unwrap().is_none(), "the second bless went ahead while the first held the folder");
    holder.kill().unwrap();
    holder.wait().unwrap();
    let start = Instant::now();
    let status = waiter.wait().unwrap();
    assert!(status.success());
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(check_pair(root), "2026-11-21T10:00:00.000Z");
    check_no_leftovers(root, "2026-11-21T10:00:00.000Z");
}
