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

/// The hidden subcommand that turns the executable into a worker.
pub const WORKER_SUBCOMMAND: &str = "regex-worker";

/// Idle workers kept for reuse; more may run at once, the rest exit when done.
const POOL_SIZE: usize = 16;

/// How long past its budget a worker waits for its own match before it
/// exits; the caller has normally killed it by then.
const WORKER_SLACK: Duration = Duration::from_secs(2);

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
}

impl RegexBudget {
    /// A budget of `per_pattern` for each pattern, with no overall deadline.
    pub fn per_pattern(per_pattern: Duration) -> RegexBudget {
        RegexBudget { per_pattern, until: None }
    }

    /// The deadline of a pattern started now.
    pub fn deadline(&self) -> Instant {
        let own = Instant::now() + self.per_pattern;
        self.until.map_or(own, |until| until.min(own))
    }
}

/// `new RegExp(pattern, flags).test(text)`, given until `deadline`.
pub fn test(pattern: &str, flags: Option<&str>, text: &str, deadline: Instant) -> Result<bool, RegexError> {
    match run(pattern, flags, Op::Test, text, deadline)? {
        Answer::Test(verdict) => Ok(verdict),
        other => Err(protocol_error(pattern, flags, &other)),
    }
}

/// The 0-based numbers of the lines of `text` the pattern matches, given
/// until `deadline`.
pub fn matching_lines(
    pattern: &str,
    flags: Option<&str>,
    text: &str,
    deadline: Instant,
) -> Result<Vec<usize>, RegexError> {
    match run(pattern, flags, Op::Lines, text, deadline)? {
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

fn run(pattern: &str, flags: Option<&str>, op: Op, text: &str, deadline: Instant) -> Result<Answer, RegexError> {
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
    let answer = crate::blocking::run(|| match WORKER_EXE.get() {
        Some(exe) => in_worker(exe, &job, deadline),
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

/// One job in a pooled worker process; a worker that overruns is killed.
fn in_worker(exe: &PathBuf, job: &Job, deadline: Instant) -> Result<Answer, Failure> {
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
    match worker.answers.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
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
        let budget = Duration::from_millis(job.budget_ms).saturating_add(WORKER_SLACK);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(compute(&job));
        });
        let answer = match rx.recv_timeout(budget) {
            Ok(answer) => answer,
            Err(_) => std::process::exit(3),
        };
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

    fn soon(ms: u64) -> Instant {
        Instant::now() + Duration::from_millis(ms)
    }

    // These run the in-process fallback (a unit test has no worker
    // executable); tests/hostile.rs runs the worker processes.

    #[test]
    fn answers_like_the_engine() {
        assert_eq!(test("^b", Some("m"), "a\nb", soon(5_000)), Ok(true));
        assert_eq!(test("^b", None, "a\nb", soon(5_000)), Ok(false));
        assert_eq!(matching_lines("x", Some("i"), "X\ny\nax", soon(5_000)), Ok(vec![0, 2]));
        let e = test("(", None, "", soon(5_000)).unwrap_err().0;
        assert!(e.starts_with("invalid regular expression /(/"), "{e}");
    }

    #[test]
    fn a_catastrophic_match_is_cut_at_the_deadline_naming_the_pattern() {
        // Short enough that the abandoned thread ends within a few seconds.
        let text = format!("{}!", "a".repeat(22));
        let started = Instant::now();
        let e = test("(a+)+$", None, &text, soon(100)).unwrap_err().0;
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
        assert!(e.contains("/(a+)+$/") && e.contains("did not finish within"), "{e}");
        let e = test("x", None, "x", Instant::now()).unwrap_err().0;
        assert!(e.contains("did not finish within 0 ms"), "{e}");
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
    }
}
