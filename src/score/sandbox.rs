//! Regex work under a deadline. A pattern from a model or a task can
//! backtrack for longer than the universe will last (`(a+)+$` on thirty
//! `a`s and a `!`), and `regress` has no step limit, no cancellation and no
//! way to interrupt a match (a request for one is open upstream, #140, and a
//! pull request adding a limit was closed unmerged). Input-size bounds alone do not help:
//! the blow-up is exponential in a line of a few dozen characters.
//!
//! So the work runs where it can be stopped: in a worker process (this same
//! executable, `vaultbench regex-worker`, see [`serve`]) that the caller
//! kills when the deadline passes. Killing frees the CPU at once, which a
//! thread could never do: an abandoned thread would spin until the process
//! ends, and a hostile model could start one per tool call. Workers are kept
//! in a pool and reused, so a match costs a round trip through a pipe (tens
//! of microseconds), not a process start. A worker also enforces the budget
//! it was given on itself, so one orphaned by a killed parent exits soon.
//! Workers run in their own process group: Ctrl-C at the terminal reaches the
//! sweep, which stops cleanly, not the workers in the middle of a match.
//!
//! The command line installs the worker with [`use_worker_process`]. A
//! library user that does not gets the in-process fallback: a thread per job,
//! waited for until the deadline and abandoned after it (the caller still
//! gets its answer in time; the thread's CPU is only reclaimed when it ends).
//!
//! In scoring, a pattern's budget is the worker's CPU time, where the system
//! tells it (Linux, through `/proc`): a worker that a loaded machine leaves
//! waiting for a core has not used its budget, so the same answer gets the
//! same verdict on a busy machine as on an idle one. The wall-clock deadline
//! of the run (`until`) still bounds every wait. A tool's search is timed on
//! the clock, like the rest of the run it belongs to (`on_cpu`), and so is
//! every pattern without `/proc` or in the in-process fallback.
//!
//! Every failure fails closed: a timeout, a pattern that does not compile, a
//! worker that dies, each is an error naming the pattern, and the caller
//! counts it as no match.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::jsregex::{JsRegex, RegexError, shown};
use crate::limits::deadline_after;

/// The hidden subcommand that turns the executable into a worker.
pub const WORKER_SUBCOMMAND: &str = "regex-worker";

/// Idle workers kept for reuse; more may run at once, the rest exit when done.
const POOL_SIZE: usize = 16;

/// How long past its budget a worker waits for its own match before it
/// exits; the caller has normally killed it by then.
const WORKER_SLACK: Duration = Duration::from_secs(2);

/// However starved a worker is, a wait for one match ends after this many
/// budgets (and never past the run's deadline): the bound on a wait when the
/// machine gives the worker no core at all.
const STARVED_BUDGETS: u32 = 30;

/// What to compute with a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Op {
    /// `RegExp.prototype.test` on the whole text.
    Test,
    /// The 0-based numbers of the matching lines.
    Lines,
}

#[derive(Debug, Serialize, Deserialize)]
struct Job {
    pattern: String,
    flags: Option<String>,
    op: Op,
    text: String,
    /// The worker's own deadline for this job, from when it reads it.
    budget_ms: u64,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Answer {
    Test(bool),
    Lines(Vec<usize>),
    /// The pattern or its flags did not compile.
    Invalid(String),
}

/// How long regex work may take: each pattern at most `per_pattern` (on one
/// text), and none past `until` (the run's deadline, plus its grace when
/// scoring).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegexBudget {
    pub per_pattern: Duration,
    pub until: Option<Instant>,
    /// Whether `per_pattern` is the worker's CPU time (scoring: a verdict
    /// must not depend on how busy the machine is) or time on the clock (a
    /// tool call, which the run's clock governs like the rest of the run).
    pub on_cpu: bool,
}

impl RegexBudget {
    /// A budget of `per_pattern` for each pattern, with no overall deadline.
    pub const fn per_pattern(per_pattern: Duration) -> RegexBudget {
        RegexBudget { per_pattern, until: None, on_cpu: true }
    }

    /// The wall-clock deadline of a pattern started now, were its budget
    /// wall-clock time.
    pub fn deadline(&self) -> Instant {
        let own = Instant::now() + self.per_pattern;
        self.until.map_or(own, |until| until.min(own))
    }

    /// The latest a wait for a pattern started now may end, however little
    /// CPU the worker was given: the run's deadline, or [`STARVED_BUDGETS`]
    /// budgets; on the clock, the deadline itself.
    fn hard_deadline(&self) -> Instant {
        if !self.on_cpu {
            return self.deadline();
        }
        let own = deadline_after(Instant::now(), self.per_pattern.saturating_mul(STARVED_BUDGETS));
        self.until.map_or(own, |until| until.min(own))
    }
}

/// `new RegExp(pattern, flags).test(text)`, within `budget`.
pub fn test(pattern: &str, flags: Option<&str>, text: &str, budget: &RegexBudget) -> Result<bool, RegexError> {
    match run(pattern, flags, Op::Test, text, budget)? {
        Answer::Test(verdict) => Ok(verdict),
        other => Err(protocol_error(pattern, flags, &other)),
    }
}

/// The 0-based numbers of the lines of `text` the pattern matches, within
/// `budget`.
pub fn matching_lines(
    pattern: &str,
    flags: Option<&str>,
    text: &str,
    budget: &RegexBudget,
) -> Result<Vec<usize>, RegexError> {
    match run(pattern, flags, Op::Lines, text, budget)? {
        Answer::Lines(lines) => Ok(lines),
        other => Err(protocol_error(pattern, flags, &other)),
    }
}

fn protocol_error(pattern: &str, flags: Option<&str>, answer: &Answer) -> RegexError {
    RegexError(format!("regular expression {}: the regex worker answered {answer:?}", shown(pattern, flags)))
}

/// Run regex work in worker processes of `exe` (the command line passes
/// its own executable). Later calls are ignored.
pub fn use_worker_process(exe: PathBuf) {
    let _ = WORKER_EXE.set(exe);
}

static WORKER_EXE: OnceLock<PathBuf> = OnceLock::new();
static IDLE: Mutex<Vec<Worker>> = Mutex::new(Vec::new());

fn run(pattern: &str, flags: Option<&str>, op: Op, text: &str, limits: &RegexBudget) -> Result<Answer, RegexError> {
    let deadline = limits.deadline();
    let budget = deadline.saturating_duration_since(Instant::now());
    let timed_out = || {
        RegexError(format!(
            "regular expression {} did not finish within {} ms and counts as no match \
             (nested quantifiers such as (a+)+ backtrack exponentially)",
            shown(pattern, flags),
            budget.as_millis()
        ))
    };
    if budget.is_zero() {
        return Err(timed_out());
    }
    let job = Job {
        pattern: pattern.to_string(),
        flags: flags.map(str::to_string),
        op,
        text: text.to_string(),
        budget_ms: budget.as_millis().try_into().unwrap_or(u64::MAX),
    };
    let hard_deadline = limits.hard_deadline();
    let answer = crate::blocking::run(|| match WORKER_EXE.get() {
        Some(exe) => in_worker(exe, &job, Wait { budget, deadline, hard_deadline }),
        None => in_thread(job, deadline),
    });
    match answer {
        Ok(Answer::Invalid(message)) => Err(RegexError(message)),
        Ok(answer) => Ok(answer),
        Err(Failure::TimedOut) => Err(timed_out()),
        Err(Failure::Broken(why)) => Err(RegexError(format!(
            "regular expression {} could not be evaluated ({why}) and counts as no match",
            shown(pattern, flags)
        ))),
    }
}

enum Failure {
    TimedOut,
    /// The worker could not be started, or died, or answered nonsense.
    Broken(String),
}

/// The library fallback: a thread, abandoned if it overruns `deadline`.
fn in_thread(job: Job, deadline: Instant) -> Result<Answer, Failure> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("regex".into())
        .spawn(move || {
            let _ = tx.send(compute(&job));
        })
        .map_err(|e| Failure::Broken(format!("cannot start a thread: {e}")))?;
    match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok(answer) => Ok(answer),
        Err(RecvTimeoutError::Timeout) => Err(Failure::TimedOut),
        Err(RecvTimeoutError::Disconnected) => Err(Failure::Broken("the matching thread panicked".into())),
    }
}

/// How long to wait for a worker's answer: until it has used `budget` of
/// CPU time, which it cannot have before `deadline` (the wall-clock one);
/// never past `hard_deadline`. Without a reading of the worker's CPU time,
/// until `deadline`.
#[derive(Debug, Clone, Copy)]
struct Wait {
    budget: Duration,
    deadline: Instant,
    hard_deadline: Instant,
}

impl Wait {
    /// When the wall-clock `deadline` has passed: how much longer to wait,
    /// given the CPU time the worker has used on the job (`None`: unknown),
    /// or `None` to give up now.
    fn more(&self, used: Option<Duration>, now: Instant) -> Option<Duration> {
        let left = self.budget.checked_sub(used?).filter(|d| !d.is_zero())?;
        let room = self.hard_deadline.checked_duration_since(now).filter(|d| !d.is_zero())?;
        Some(left.min(room))
    }

    /// An answer from `answers`, computed by process `pid` (which had used
    /// `cpu_at_start` when the job began): waited for until `deadline`, then
    /// for as long as [`Wait::more`] says.
    fn recv<T>(&self, answers: &Receiver<T>, pid: u32, cpu_at_start: Option<Duration>) -> Result<T, RecvTimeoutError> {
        let mut waiting = self.deadline.saturating_duration_since(Instant::now());
        loop {
            match answers.recv_timeout(waiting) {
                Err(RecvTimeoutError::Timeout) => {
                    // Slow, or only starved of a core? Wait while its CPU time is under budget.
                    let used = cpu_at_start.zip(cpu_time(pid)).map(|(start, now)| now.saturating_sub(start));
                    match self.more(used, Instant::now()) {
                        Some(more) => waiting = more,
                        None => return Err(RecvTimeoutError::Timeout),
                    }
                }
                other => return other,
            }
        }
    }
}

/// The CPU time, user and system, a process has used so far: from
/// `/proc/<pid>/stat` (in the kernel's USER_HZ ticks: 100 a second on x86
/// and Arm, the machines vaultbench is built for), or `None` where there is none.
fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name, which is in brackets and may hold anything:
    // the state is field 3; utime and stime are fields 14 and 15.
    let rest = stat.get(stat.rfind(')')? + 1..)?;
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(Duration::from_millis(utime.saturating_add(stime).saturating_mul(10)))
}

/// One job in a pooled worker process; a worker that overruns is killed.
fn in_worker(exe: &PathBuf, job: &Job, wait: Wait) -> Result<Answer, Failure> {
    let line = serde_json::to_string(job).map_err(|e| Failure::Broken(e.to_string()))?;
    let pooled = IDLE.lock().unwrap_or_else(|p| p.into_inner()).pop();
    // One that died while idle (killed from outside) is replaced.
    let pooled =
        pooled.and_then(|mut w| if matches!(w.child.try_wait(), Ok(None)) { Some(w) } else { w.kill_quietly() });
    let worker = match pooled {
        Some(mut worker) => match worker.send(&line) {
            Ok(()) => worker,
            // It died while idle (killed from outside): start a fresh one.
            Err(_) => {
                worker.kill();
                start_and_send(exe, &line)?
            }
        },
        None => start_and_send(exe, &line)?,
    };
    let pid = worker.child.id();
    match wait.recv(&worker.answers, pid, cpu_time(pid)) {
        Ok(reply) => {
            let answer = serde_json::from_str(&reply)
                .map_err(|e| Failure::Broken(format!("unreadable answer from the regex worker: {e}")));
            let mut idle = IDLE.lock().unwrap_or_else(|p| p.into_inner());
            if answer.is_ok() && idle.len() < POOL_SIZE {
                idle.push(worker);
            } else {
                drop(idle);
                worker.kill();
            }
            answer
        }
        Err(RecvTimeoutError::Timeout) => {
            worker.kill();
            Err(Failure::TimedOut)
        }
        Err(RecvTimeoutError::Disconnected) => {
            let status = worker.kill();
            Err(Failure::Broken(format!("the regex worker exited ({status})")))
        }
    }
}

fn start_and_send(exe: &PathBuf, line: &str) -> Result<Worker, Failure> {
    let mut worker = Worker::start(exe)
        .map_err(|e| Failure::Broken(format!("cannot start the regex worker {}: {e}", exe.display())))?;
    if let Err(e) = worker.send(line) {
        let status = worker.kill();
        return Err(Failure::Broken(format!("cannot reach the regex worker ({e}; {status})")));
    }
    Ok(worker)
}

/// A running worker process and the lines it answers.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    answers: Receiver<String>,
}

impl Worker {
    fn start(exe: &PathBuf) -> std::io::Result<Worker> {
        let mut command = Command::new(exe);
        command.arg(WORKER_SUBCOMMAND).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command.spawn()?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, answers) = mpsc::channel();
        // A pipe has no read timeout: a thread reads, the caller waits on the channel.
        std::thread::Builder::new().name("regex-worker-reader".into()).spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        })?;
        Ok(Worker { child, stdin, answers })
    }

    fn send(&mut self, line: &str) -> std::io::Result<()> {
        self.stdin.write_all(line.as_bytes())?;
        self.stdin.write_all(b"\n")?;
        self.stdin.flush()
    }

    fn kill_quietly(self) -> Option<Worker> {
        self.kill();
        None
    }

    /// Kill and reap it; says how it ended.
    fn kill(mut self) -> String {
        let _ = self.child.kill();
        match self.child.wait() {
            Ok(status) => status.to_string(),
            Err(e) => format!("not reaped: {e}"),
        }
    }
}

/// The worker's side: answer one job per line of `input` until it ends. A
/// job that overruns its own budget (plus some slack) ends the process, so
/// a worker whose parent died cannot spin for long.
pub fn serve(input: impl BufRead, mut output: impl Write) -> std::io::Result<()> {
    for line in input.lines() {
        let line = line?;
        let job: Job = serde_json::from_str(&line)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("bad job: {e}")))?;
        let own = Duration::from_millis(job.budget_ms);
        let budget = own.saturating_add(WORKER_SLACK);
        let started = Instant::now();
        // (A budget read from the pipe saturates rather than overflow an Instant.)
        let hard_deadline = deadline_after(started, own.saturating_mul(STARVED_BUDGETS).saturating_add(WORKER_SLACK));
        let wait = Wait { budget, deadline: deadline_after(started, budget), hard_deadline };
        let me = std::process::id();
        let cpu_at_start = cpu_time(me);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(compute(&job));
        });
        // Its budget spent (or the matching thread gone): the process ends.
        let Ok(answer) = wait.recv(&rx, me, cpu_at_start) else { std::process::exit(3) };
        let text = serde_json::to_string(&answer)?;
        output.write_all(text.as_bytes())?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
    Ok(())
}

fn compute(job: &Job) -> Answer {
    match JsRegex::new(&job.pattern, job.flags.as_deref()) {
        Err(e) => Answer::Invalid(e.0),
        Ok(re) => match job.op {
            Op::Test => Answer::Test(re.test(&job.text)),
            Op::Lines => Answer::Lines(re.matching_lines(&job.text)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn soon(ms: u64) -> RegexBudget {
        RegexBudget::per_pattern(Duration::from_millis(ms))
    }

    // These run the in-process fallback (a unit test has no worker
    // executable); tests/hostile.rs runs the worker processes.

    #[test]
    fn answers_like_the_engine() {
        assert_eq!(test("^b", Some("m"), "a\nb", &soon(5_000)), Ok(true));
        assert_eq!(test("^b", None, "a\nb", &soon(5_000)), Ok(false));
        assert_eq!(matching_lines("x", Some("i"), "X\ny\nax", &soon(5_000)), Ok(vec![0, 2]));
        let e = test("(", None, "", &soon(5_000)).unwrap_err().0;
        assert!(e.starts_with("invalid regular expression /(/"), "{e}");
    }

    #[test]
    fn a_catastrophic_match_is_cut_at_the_deadline_naming_the_pattern() {
        // Short enough that the abandoned thread ends within a few seconds.
        let text = format!("{}!", "a".repeat(22));
        let started = Instant::now();
        let e = test("(a+)+$", None, &text, &soon(100)).unwrap_err().0;
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
        assert!(e.contains("/(a+)+$/") && e.contains("did not finish within"), "{e}");
        let e = test("x", None, "x", &RegexBudget::per_pattern(Duration::ZERO)).unwrap_err().0;
        assert!(e.contains("did not finish within 0 ms"), "{e}");
    }

    #[test]
    fn a_starved_worker_is_waited_for_until_it_has_used_its_budget() {
        let now = Instant::now();
        let wait =
            Wait { budget: Duration::from_millis(1000), deadline: now, hard_deadline: now + Duration::from_secs(30) };
        // Given 300 ms of a core in its first second: 700 ms more.
        assert_eq!(wait.more(Some(Duration::from_millis(300)), now), Some(Duration::from_millis(700)));
        // Its budget used: slow, not starved.
        assert_eq!(wait.more(Some(Duration::from_millis(1000)), now), None);
        assert_eq!(wait.more(Some(Duration::from_millis(1500)), now), None);
        // No reading of its CPU time: the wall-clock deadline stands.
        assert_eq!(wait.more(None, now), None);
        // Never past the hard deadline (the run's, or many budgets).
        let late = now + Duration::from_millis(29_900);
        assert_eq!(wait.more(Some(Duration::ZERO), late), Some(Duration::from_millis(100)));
        assert_eq!(wait.more(Some(Duration::ZERO), now + Duration::from_secs(30)), None);
    }

    #[test]
    fn a_process_cpu_time_is_read_where_the_system_tells_it() {
        let me = std::process::id();
        let Some(before) = cpu_time(me) else {
            assert!(!std::path::Path::new("/proc/self/stat").exists(), "/proc is there but unread");
            eprintln!("skipping: no /proc on this system");
            return;
        };
        // Busy for 300 ms of wall time: at least some of it on a core.
        let started = Instant::now();
        let mut x = 0u64;
        while started.elapsed() < Duration::from_millis(300) {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let after = cpu_time(me).unwrap();
        assert!(after > before, "{before:?} then {after:?}");
        assert_eq!(cpu_time(u32::MAX), None, "no such process");
    }

    #[test]
    fn the_worker_side_answers_line_by_line() {
        let jobs: String = [
            Job { pattern: "b".into(), flags: None, op: Op::Test, text: "abc".into(), budget_ms: 1000 },
            Job {
                pattern: "^B".into(),
                flags: Some("i".into()),
                op: Op::Lines,
                text: "b\na\nbb".into(),
                budget_ms: 1000,
            },
            Job { pattern: "(".into(), flags: None, op: Op::Test, text: String::new(), budget_ms: 1000 },
            // A budget no Instant can hold saturates instead of overflowing.
            Job { pattern: "c".into(), flags: None, op: Op::Test, text: "abc".into(), budget_ms: u64::MAX },
        ]
        .iter()
        .map(|j| serde_json::to_string(j).unwrap() + "\n")
        .collect();
        let mut out = Vec::new();
        serve(jobs.as_bytes(), &mut out).unwrap();
        let answers: Vec<Answer> =
            String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert!(matches!(answers[0], Answer::Test(true)));
        assert!(matches!(&answers[1], Answer::Lines(l) if l == &[0, 2]));
        assert!(matches!(&answers[2], Answer::Invalid(e) if e.contains("invalid regular expression")));
        assert!(matches!(answers[3], Answer::Test(true)));
    }
}
