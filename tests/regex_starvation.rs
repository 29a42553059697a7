//! A regex verdict does not depend on how busy the machine is: a worker that
//! waits for a core has not used its budget. The worker that will take the
//! next job is stopped (SIGSTOP) for longer than the pattern's budget, then
//! let go; the match is waited for and answers, where a wall-clock budget
//! counted the stop as the pattern's and failed it. The run's own deadline
//! still bounds the wait, and a tool's search stays on the run's clock. Linux only (the CPU time is read from /proc); its
//! own test binary, so no other test takes the stopped worker from the pool.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use vaultbench::score::sandbox::{self, RegexBudget};

/// The regex workers this process started (their parent is this process).
fn my_workers() -> Vec<u32> {
    let me = std::process::id();
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        let Some(after_name) = stat.rfind(')').map(|i| &stat[i + 1..]) else { continue };
        let ppid: Option<u32> = after_name.split_whitespace().nth(1).and_then(|p| p.parse().ok());
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if ppid == Some(me) && String::from_utf8_lossy(&cmdline).contains(sandbox::WORKER_SUBCOMMAND) {
            out.push(pid);
        }
    }
    out
}

/// Sends a signal; false when the process is gone.
fn signal(name: &str, pid: u32) -> bool {
    Command::new("kill").args([name, &pid.to_string()]).status().unwrap().success()
}

#[test]
fn a_worker_starved_of_a_core_is_not_a_slow_pattern() {
    if !Path::new("/proc/self/stat").exists() {
        eprintln!("skipping: the CPU time of a worker is read from /proc, which this system lacks");
        return;
    }
    sandbox::use_worker_process(PathBuf::from(env!("CARGO_BIN_EXE_vaultbench")));
    let budget = RegexBudget::per_pattern(Duration::from_millis(500));
    // One match leaves one idle worker in the pool: the next job goes to it.
    assert_eq!(sandbox::test("b", None, "abc", &budget), Ok(true));
    let workers = my_workers();
    assert_eq!(workers.len(), 1, "one idle worker: {workers:?}");
    let worker = workers[0];

    // Stopped for three budgets, then let go.
    assert!(signal("-STOP", worker));
    let resume = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1_500));
        assert!(signal("-CONT", worker));
    });
    let started = Instant::now();
    let verdict = sandbox::test("b", None, "abc", &budget);
    let waited = started.elapsed();
    resume.join().unwrap();
    assert_eq!(verdict, Ok(true), "after {waited:?}");
    assert!(waited >= Duration::from_millis(1_400), "the worker was stopped, yet it answered in {waited:?}");

    // The run's deadline bounds the wait however starved the worker is.
    assert_eq!(sandbox::test("b", None, "abc", &budget), Ok(true));
    let worker = my_workers()[0];
    assert!(signal("-STOP", worker));
    let until = Instant::now() + Duration::from_millis(800);
    let bounded = RegexBudget { per_pattern: Duration::from_millis(500), until: Some(until), on_cpu: true };
    let started = Instant::now();
    let e = sandbox::test("b", None, "abc", &bounded).unwrap_err().0;
    let waited = started.elapsed();
    // Killed at the deadline; had it survived, it would go on.
    signal("-CONT", worker);
    assert!(e.contains("did not finish within"), "{e}");
    assert!(waited >= Duration::from_millis(750) && waited < Duration::from_secs(3), "waited {waited:?}");

    // A tool's search is timed on the run's clock: a stopped worker times out
    // at the pattern's budget, as the run's other waits do.
    assert_eq!(sandbox::test("b", None, "abc", &budget), Ok(true));
    let worker = my_workers()[0];
    assert!(signal("-STOP", worker));
    let on_the_clock = RegexBudget { per_pattern: Duration::from_millis(500), until: None, on_cpu: false };
    let started = Instant::now();
    let e = sandbox::test("b", None, "abc", &on_the_clock).unwrap_err().0;
    let waited = started.elapsed();
    signal("-CONT", worker);
    assert!(e.contains("did not finish within"), "{e}");
    assert!(waited < Duration::from_millis(1_400), "waited {waited:?}");
}
