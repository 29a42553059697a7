//! Progress of a sweep on stderr: a bar (indicatif) on a terminal, one plain
//! line per finished run otherwise (CI logs), or nothing.

use std::io::IsTerminal;
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};

use crate::format::result::RunRecord;

pub trait Progress: Send + Sync {
    /// `total` cells, of which `already` were finished by an earlier attempt.
    fn start(&self, total: usize, already: usize);
    fn finished(&self, task: &str, n: u32, record: &RunRecord);
    fn done(&self);
}

/// No output (tests, benchmarks).
pub struct Quiet;

impl Progress for Quiet {
    fn start(&self, _total: usize, _already: usize) {}
    fn finished(&self, _task: &str, _n: u32, _record: &RunRecord) {}
    fn done(&self) {}
}

fn verdict(record: &RunRecord) -> &'static str {
    match (record.solved, record.passed, record.errors.is_empty()) {
        (true, _, _) => "solved",
        (false, true, _) => "passed, not solved",
        (false, false, false) => "ERROR",
        (false, false, true) => "failed",
    }
}

/// The console: a bar on a terminal, lines elsewhere.
pub struct Console {
    label: String,
    bar: Option<ProgressBar>,
    counts: Mutex<(usize, usize)>,
}

impl Console {
    pub fn new(label: impl Into<String>) -> Console {
        Console { label: label.into(), bar: None, counts: Mutex::new((0, 0)) }
    }

    fn with_bar(mut self) -> Console {
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} runs {elapsed_precise} eta {eta} {msg}")
                    .expect("the template is valid")
                    .progress_chars("=> "),
            );
            bar.set_prefix(self.label.clone());
            self.bar = Some(bar);
        }
        self
    }

    /// A bar when stderr is a terminal, plain lines otherwise.
    pub fn auto(label: impl Into<String>) -> Console {
        Console::new(label).with_bar()
    }
}

impl Progress for Console {
    fn start(&self, total: usize, already: usize) {
        *self.counts.lock().expect("progress lock") = (already, total);
        match &self.bar {
            Some(bar) => {
                bar.set_length(total as u64);
                bar.set_position(already as u64);
            }
            None if already > 0 => {
                eprintln!(
                    "{}: {already} of {total} runs already finished; running the other {}",
                    self.label,
                    total - already
                )
            }
            None => eprintln!("{}: {total} runs", self.label),
        }
    }

    fn finished(&self, task: &str, n: u32, record: &RunRecord) {
        let mut counts = self.counts.lock().expect("progress lock");
        counts.0 += 1;
        match &self.bar {
            Some(bar) => {
                bar.inc(1);
                bar.set_message(format!("{task} #{n} {}", verdict(record)));
            }
            None => eprintln!(
                "[{}/{}] {task} #{n}: {} ({} turns, {} tool calls, {} ms)",
                counts.0,
                counts.1,
                verdict(record),
                record.metrics.turns,
                record.metrics.tool_calls,
                record.metrics.duration_ms
            ),
        }
    }

    fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
