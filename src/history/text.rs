//! `vaultbench history` in words: each model's blessings with their figures
//! and intervals, each step's verdict, and the tasks flagged across them;
//! and the choice of models by name. Text only: `main` prints it.

use std::fmt::Write;

use super::trend::{Definition, FigureMove, FlagKind, History, ModelHistory, Movement, Step, StepVerdict};
use crate::stats;

impl History {
    /// The models named by `name`: a model id, `provider/model`, or a file
    /// name it has or had (with or without `.json`). `Err` lists the names known.
    pub fn select(&self, name: &str) -> Result<Vec<&ModelHistory>, String> {
        let file = format!("{}.json", name.trim_end_matches(".json"));
        let chosen: Vec<&ModelHistory> = self
            .models
            .iter()
            .filter(|m| m.model == name || format!("{}/{}", m.provider, m.model) == name || m.files.contains(&file))
            .collect();
        if chosen.is_empty() {
            let known: Vec<String> = self.models.iter().map(|m| format!("{}/{}", m.provider, m.model)).collect();
            return Err(if known.is_empty() {
                format!("no baseline history for `{name}`: there is none at all")
            } else {
                format!("no baseline history for `{name}`; the models with one: {}", known.join(", "))
            });
        }
        Ok(chosen)
    }

    /// The notes that concern `chosen`: those about the history as a whole,
    /// and those naming a file of theirs; not those naming only another
    /// model's files.
    pub fn notes_about(&self, chosen: &[&ModelHistory]) -> Vec<String> {
        let mine: Vec<&str> = chosen.iter().flat_map(|m| m.files.iter().map(String::as_str)).collect();
        let others: Vec<&str> = self
            .models
            .iter()
            .filter(|m| !chosen.iter().any(|c| std::ptr::eq(*c, *m)))
            .flat_map(|m| m.files.iter().map(String::as_str))
            .filter(|f| !mine.contains(f))
            .collect();
        self.notes
            .iter()
            .filter(|n| mine.iter().any(|f| n.contains(f)) || !others.iter().any(|f| n.contains(f)))
            .cloned()
            .collect()
    }
}

/// `vaultbench history --json`.
#[derive(serde::Serialize)]
pub struct Json<'a> {
    pub baselines: &'a str,
    pub alpha: f64,
    pub notes: &'a [String],
    pub models: Vec<&'a ModelHistory>,
}

/// A figure with its interval: `57.4% [44.4, 70.4]`.
fn with_interval(i: &stats::Interval) -> String {
    stats::percent(i)
}

/// `-7.1 pts [-21.4, +0.0]`.
pub fn change_text(i: &stats::Interval) -> String {
    format!("{} pts [{}, {}]", stats::signed1(i.estimate), stats::signed1(i.low), stats::signed1(i.high))
}

/// The whole history of `models`, with `notes`.
pub fn render(history: &History, models: &[&ModelHistory], notes: &[String], dir: &str) -> String {
    let mut s = String::new();
    let blessings: usize = models.iter().map(|m| m.blessings.len()).sum();
    let _ = writeln!(
        s,
        "History of the baselines in {dir}: {} model{}, {blessings} blessing{}.",
        models.len(),
        if models.len() == 1 { "" } else { "s" },
        if blessings == 1 { "" } else { "s" }
    );
    for note in notes {
        let _ = writeln!(s, "Note: {note}.");
    }
    let _ = writeln!(
        s,
        "Intervals: 95%, bootstrap over tasks. Steps are judged as `compare` judges a result against its baseline \
         (paired bootstrap and exact tests, alpha {}), in both directions.",
        crate::jsnum::to_string(history.alpha)
    );
    for m in models {
        let _ = writeln!(s);
        s.push_str(&model(m));
    }
    s
}

/// One model: its blessings, its steps and its flagged tasks.
pub fn model(m: &ModelHistory) -> String {
    let mut s = String::new();
    let file = match &m.file {
        Some(f) => format!("file {f}"),
        None => "no longer a baseline".into(),
    };
    let earlier: Vec<&str> = m.files.iter().map(String::as_str).filter(|f| Some(*f) != m.file.as_deref()).collect();
    let earlier = if earlier.is_empty() { String::new() } else { format!(" (earlier {})", earlier.join(", ")) };
    let _ = writeln!(
        s,
        "{}: {} blessing{}, {file}{earlier}",
        m.name(),
        m.blessings.len(),
        if m.blessings.len() == 1 { "" } else { "s" }
    );
    let _ = writeln!(
        s,
        "  {:>3}  {:<12}  {:<10}  {:<24}  {:<8}  {:>2}  {:>5}  {:<22}  {:<22}  {:<22}  {:<22}  evidence",
        "#", "commit", "date", "run", "harness", "k", "tasks", "pass^k", "solve^k", "mean pass rate", "mean solve rate"
    );
    for (i, b) in m.blessings.iter().enumerate() {
        let f = b.figures.as_ref();
        let cell = |x: Option<&stats::Interval>| x.map_or_else(|| "—".to_string(), with_interval);
        let _ = writeln!(
            s,
            "  {:>3}  {:<12}  {:<10}  {:<24}  {:<8}  {:>2}  {:>5}  {:<22}  {:<22}  {:<22}  {:<22}  {}",
            i + 1,
            b.blessing.short_commit(),
            b.blessing.day(),
            b.blessing.run_id,
            b.blessing.git_sha.chars().take(7).collect::<String>(),
            b.k,
            b.tasks,
            cell(f.map(|f| &f.pass_k)),
            cell(f.map(|f| &f.solve_k)),
            cell(f.map(|f| &f.mean_pass_rate)),
            cell(f.map(|f| &f.mean_solve_rate)),
            if b.blessing.evidence.is_some() { "kept" } else { "—" }
        );
    }
    if !m.steps.is_empty() {
        let _ = writeln!(s, "  Steps:");
        for step in &m.steps {
            let _ = writeln!(s, "    {} → {}  {}", step.from + 1, step.to + 1, step_text(step));
        }
    }
    let flagged: Vec<_> = m.tasks.iter().filter(|t| !t.flags.is_empty()).collect();
    if !flagged.is_empty() {
        let _ = writeln!(s, "  Tasks flagged (solved runs at each blessing):");
        let width = flagged.iter().map(|t| t.id.chars().count()).max().unwrap_or(0).min(40);
        for t in flagged {
            let strip: Vec<String> = t
                .cells
                .iter()
                .map(|c| c.map_or_else(|| "—".to_string(), |c| format!("{}/{}", c.solved, c.runs)))
                .collect();
            for f in &t.flags {
                let test = match (f.kind, f.p, f.p_adjusted) {
                    (FlagKind::TaskChanged, _, _) => {
                        " (its definition, fixture or setup files were edited)".to_string()
                    }
                    (_, Some(p), Some(q)) => {
                        format!(", Fisher exact p {} (adjusted {})", stats::format_p(p), stats::format_p(q))
                    }
                    (_, Some(p), None) => format!(", Fisher exact p {}", stats::format_p(p)),
                    _ => String::new(),
                };
                let unknown = if f.definition_unknown {
                    "; definition unknown (no content hash recorded): an edited task cannot be ruled out"
                } else {
                    ""
                };
                let _ = writeln!(
                    s,
                    "    {:<width$}  {}  at #{}: {}{test}: {}{unknown}",
                    t.id,
                    strip.join(" "),
                    f.at + 1,
                    f.describe(),
                    f.verdict()
                );
            }
        }
    }
    for (i, _) in m.blessings.iter().enumerate().skip(1) {
        let unknown =
            m.tasks.iter().filter(|t| t.cells[i].is_some_and(|c| c.definition == Definition::Unknown)).count();
        if unknown > 0 {
            let _ = writeln!(
                s,
                "  Definition unknown at #{}: {unknown} task{} without a content hash on one side (results of an \
                 older vaultbench or the reference harness): a changed task cannot be told from a changed model.",
                i + 1,
                if unknown == 1 { "" } else { "s" }
            );
        }
    }
    s
}

/// A figure's move in a step: `solve^5 92.3% → 76.9% (-15.4 pts [-30.8, +0.0], within noise)`.
pub fn move_text(f: &FigureMove) -> String {
    format!(
        "{} {}% → {}% ({}, {})",
        f.label,
        stats::fixed1(f.before),
        stats::fixed1(f.after),
        change_text(&f.change),
        f.movement.label()
    )
}

/// A step in a line: its verdict, the figures that moved, the tasks that changed.
pub fn step_text(step: &Step) -> String {
    let mut parts: Vec<String> =
        step.figures.iter().filter(|f| f.movement != Movement::NoChange).map(move_text).collect();
    let named = |what: &str, ids: &[String]| format!("{what}: {}", crate::report::first_few(ids));
    if !step.significant_tasks.is_empty() {
        parts.push(named("tasks that moved beyond noise", &step.significant_tasks));
    }
    if !step.changed.is_empty() {
        parts.push(named("tasks changed (left out of the comparison)", &step.changed));
    }
    if !step.added.is_empty() {
        parts.push(named("tasks added", &step.added));
    }
    if !step.removed.is_empty() {
        parts.push(named("tasks removed", &step.removed));
    }
    let head = match step.verdict {
        StepVerdict::NotComparable => "not comparable (no task in common with the same definition)".to_string(),
        v => v.label().to_string(),
    };
    if parts.is_empty() { head } else { format!("{head}: {}", parts.join("; ")) }
}
