//! Progress of a sweep on stderr: a bar (indicatif) on a terminal, one plain
//! line per finished run otherwise (CI logs), or nothing.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::errln;
use crate::format::result::RunRecord;
use crate::provider::quota::QuotaStatus;

pub trait Progress: Send + Sync {
    /// `total` cells, of which `already` were finished by an earlier attempt.
    fn start(&self, total: usize, already: usize);
    fn finished(&self, task: &str, n: u32, record: &RunRecord);
    fn done(&self);
    /// What the model server's quota is doing (a few times a second, while
    /// the sweep runs).
    fn quota(&self, _status: &QuotaStatus) {}
}

/// How a quota's state reads on the console: `None` when nothing waits.
pub fn quota_line(status: &QuotaStatus) -> Option<String> {
    if status.holding == 0 {
        return None;
    }
    let held = if status.holding == 1 { "1 request".to_string() } else { format!("{} requests", status.holding) };
    Some(match status.paused_for {
        Some(d) => format!(
            "waiting on the quota: the server refused a request (HTTP 429), {held} held for {:.1} s",
            d.as_secs_f64()
        ),
        None => format!("waiting on the quota: {held} held"),
    })
}

/// Lines about the quota in a log are at most this frequent.
const QUOTA_LINE_EVERY: Duration = Duration::from_secs(10);

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
    /// Whether the bar shows the quota now; when a log line about it was last written.
    quota_shown: Mutex<(bool, Option<Instant>)>,
}

impl Console {
    pub fn new(label: impl Into<String>) -> Console {
        Console { label: label.into(), bar: None, counts: Mutex::new((0, 0)), quota_shown: Mutex::new((false, None)) }
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
                errln!(
                    "{}: {already} of {total} runs already finished; running the other {}",
                    self.label,
                    total - already
                )
            }
            None => errln!("{}: {total} runs", self.label),
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
            None => errln!(
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

    fn quota(&self, status: &QuotaStatus) {
        let line = quota_line(status);
        let mut shown = self.quota_shown.lock().expect("progress lock");
        match (&self.bar, line) {
            (Some(bar), Some(line)) => {
                bar.set_message(line);
                shown.0 = true;
            }
            (Some(bar), None) if shown.0 => {
                bar.set_message("");
                shown.0 = false;
            }
            (None, Some(line)) if shown.1.is_none_or(|at| at.elapsed() >= QUOTA_LINE_EVERY) => {
                errln!("{}: {line}", self.label);
                shown.1 = Some(Instant::now());
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::provider::quota::Tally;

    #[test]
    fn the_quota_line_says_what_waits_and_why() {
        let status = |holding, paused_for| QuotaStatus { holding, paused_for, rate: None, tally: Tally::default() };
        assert_eq!(quota_line(&status(0, None)), None);
        assert_eq!(quota_line(&status(1, None)).as_deref(), Some("waiting on the quota: 1 request held"));
        assert_eq!(
            quota_line(&status(6, Some(Duration::from_millis(12_040)))).as_deref(),
            Some("waiting on the quota: the server refused a request (HTTP 429), 6 requests held for 12.0 s")
        );
    }
}
