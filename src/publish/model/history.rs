//! The history of the blessings as the site shows it (see `crate::history`,
//! which reads and judges it): on each model's page a chart and a table of
//! its figures at each blessing with their intervals and each step's
//! verdict, and a strip of every task's solved counts across blessings with
//! its flags; the "What changed" page, each model's latest blessing against
//! the one before, linked to the runs; and the results table's mark of the
//! change since the previous blessing.
//!
//! Plain data: no I/O, no HTML. Every link is a logical path for the `url`
//! filter (`render::url`); every name came from a baseline or from git and
//! is escaped by the templates.

use std::collections::HashMap;

use serde::Serialize;

use crate::history::text::{change_text, move_text};
use crate::history::trend::{
    BlessingFigures, Cell, Definition, FlagKind, History, ModelHistory, Movement, Step, StepVerdict, TaskState,
};
use crate::publish::load::config::SiteConfig;
use crate::publish::model::baseline::BaselineView;
use crate::publish::model::charts::{self, LineChart, Series};
use crate::publish::model::display::MISSING;
use crate::publish::model::table::{Commit, Row, commit};
use crate::stats::{self, Interval};

/// The logical path of the "What changed" page.
pub const CHANGES_PAGE: &str = "changes.html";
/// Blessings a model's page shows (the latest); `vaultbench history` shows every one.
pub const SHOWN_BLESSINGS: usize = 100;
/// Blessings a task's strip shows (the latest).
pub const STRIP_BLESSINGS: usize = 20;

/// Everything the site shows of the history.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HistoryView {
    /// Each current baseline's section, by its page stem.
    #[serde(skip)]
    pub sections: HashMap<String, ModelSection>,
    pub changes: ChangesView,
}

/// The history section of a model's page.
#[derive(Debug, Clone, Serialize)]
pub struct ModelSection {
    /// Oldest first.
    pub blessings: Vec<BlessingRow>,
    /// Blessings older than those shown.
    pub omitted: usize,
    /// solve^k and the mean solve rate at each blessing, with their intervals.
    pub chart: Option<LineChart>,
    /// The names the file had before.
    pub earlier_files: Vec<String>,
    /// The tasks flagged at some blessing first, then the others, by id.
    pub tasks: Vec<TaskStrip>,
    /// The strip's column heads (`#3`...), for the latest blessings.
    pub strip_heads: Vec<String>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct BlessingRow {
    /// 1-based.
    pub n: usize,
    pub commit: Option<Commit>,
    /// Committed (false: the working tree's file, not committed yet).
    pub committed: bool,
    /// At a shallow clone's oldest commit: made there or before.
    pub at_or_before: bool,
    pub date: String,
    pub run_id: String,
    /// The harness commit the result records.
    pub harness: Option<Commit>,
    pub k: u32,
    pub tasks: usize,
    pub pass_k: String,
    pub solve_k: String,
    pub mean_pass_rate: String,
    pub mean_solve_rate: String,
    /// The step from the blessing before, none for the first.
    pub step: Option<StepView>,
    /// `git show <commit>:<baselines>/<path>` gives the archive.
    pub evidence: Option<String>,
}

/// A step's verdict with what moved.
#[derive(Debug, Clone, Serialize)]
pub struct StepView {
    /// `significant change`, `within noise`, `no change`, `not comparable`.
    pub label: &'static str,
    /// `significant`, `noise`, `same`, `none`: for the mark's style.
    pub class: &'static str,
    /// The figures that moved: `solve^5 92.3% → 76.9% (-15.4 pts [-30.8, +0.0], within noise)`.
    pub moves: Vec<String>,
    /// Tasks whose counts moved by more than noise.
    pub significant_tasks: Vec<String>,
    /// Tasks whose definition changed, added and removed.
    pub changed: Vec<String>,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// Tasks compared without knowing whether they were edited.
    pub unknown: usize,
}

/// One task across the latest blessings.
#[derive(Debug, Clone, Serialize)]
pub struct TaskStrip {
    pub id: String,
    /// The task's page under the current baseline (its runs), if it has one.
    pub page: Option<String>,
    pub cells: Vec<StripCell>,
    pub flags: Vec<FlagView>,
}

#[derive(Debug, Clone, Serialize)]
pub struct StripCell {
    /// `4/5`, or `—` where the blessing did not run the task.
    pub text: String,
    /// `stable`, `flaky`, `failing` or `absent`.
    pub state: &'static str,
    /// The task matrix's cell class for that state (`cell-all`...).
    pub class: &'static str,
    /// Its definition changed since the blessing before.
    pub changed: bool,
    /// It cannot be told whether it changed.
    pub unknown: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct FlagView {
    /// 1-based blessing.
    pub at: usize,
    /// `stable → flaky`, `task changed`.
    pub text: String,
    /// `more than noise`, `within noise`, `not a model change`.
    pub verdict: &'static str,
    /// `drifted`, `recovered` or `task_changed`, with `significant` when the gate says so.
    pub class: String,
    /// `Fisher exact p 0.024, adjusted 0.048`.
    pub test: Option<String>,
    pub definition_unknown: bool,
}

/// The "What changed" page.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ChangesView {
    /// Models with two blessings or more, significant changes first.
    pub models: Vec<ModelChange>,
    /// Models blessed once: nothing to compare yet.
    pub single: Vec<ModelLink>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ModelLink {
    /// The baseline's page name (its file without `.json`).
    pub stem: String,
    pub model: String,
    pub provider: String,
    /// The model's page.
    pub page: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ModelChange {
    pub link: ModelLink,
    pub from: BlessingRow,
    pub to: BlessingRow,
    pub step: StepView,
    /// Every gated figure, before and after on the tasks compared.
    pub figures: Vec<FigureRow>,
    /// The tasks flagged at the latest blessing.
    pub tasks: Vec<TaskMove>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FigureRow {
    pub label: String,
    pub before: String,
    pub after: String,
    pub change: String,
    pub movement: &'static str,
    pub moved: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct TaskMove {
    pub id: String,
    /// Its page under the current baseline: its runs.
    pub page: Option<String>,
    /// `5/5 → 1/5`.
    pub counts: String,
    pub flag: FlagView,
}

/// `57.4% [44.4, 70.4]`, or `—`.
fn figure(i: Option<&Interval>) -> String {
    i.map_or_else(|| MISSING.into(), stats::percent)
}

fn step_view(step: &Step) -> StepView {
    StepView {
        label: step.verdict.label(),
        class: match step.verdict {
            StepVerdict::SignificantChange => "significant",
            StepVerdict::WithinNoise => "noise",
            StepVerdict::NoChange => "same",
            StepVerdict::NotComparable => "none",
        },
        moves: step.figures.iter().filter(|f| f.movement != Movement::NoChange).map(move_text).collect(),
        significant_tasks: step.significant_tasks.clone(),
        changed: step.changed.clone(),
        added: step.added.clone(),
        removed: step.removed.clone(),
        unknown: step.unknown.len(),
    }
}

fn blessing_row(m: &ModelHistory, i: usize, config: &SiteConfig) -> BlessingRow {
    let b: &BlessingFigures = &m.blessings[i];
    let f = b.figures.as_ref();
    BlessingRow {
        n: i + 1,
        commit: b.blessing.commit.as_deref().and_then(|c| commit(Some(c), config)),
        committed: b.blessing.commit.is_some(),
        at_or_before: b.blessing.at_or_before,
        date: b.blessing.day(),
        run_id: b.blessing.run_id.clone(),
        harness: commit(Some(&b.blessing.git_sha), config),
        k: b.k,
        tasks: b.tasks,
        pass_k: figure(f.map(|f| &f.pass_k)),
        solve_k: figure(f.map(|f| &f.solve_k)),
        mean_pass_rate: figure(f.map(|f| &f.mean_pass_rate)),
        mean_solve_rate: figure(f.map(|f| &f.mean_solve_rate)),
        step: i.checked_sub(1).and_then(|p| m.steps.get(p)).map(step_view),
        evidence: b.blessing.evidence.clone(),
    }
}

fn flag_view(flag: &crate::history::trend::TaskFlag) -> FlagView {
    let test = match (flag.p, flag.p_adjusted) {
        (Some(p), Some(q)) => Some(format!("Fisher exact p {}, adjusted {}", stats::format_p(p), stats::format_p(q))),
        (Some(p), None) => Some(format!("Fisher exact p {}", stats::format_p(p))),
        _ => None,
    };
    let kind = match flag.kind {
        FlagKind::Drifted => "drifted",
        FlagKind::Recovered => "recovered",
        FlagKind::TaskChanged => "task_changed",
    };
    FlagView {
        at: flag.at + 1,
        text: flag.describe(),
        verdict: flag.verdict(),
        class: if flag.significant { format!("{kind} significant") } else { kind.to_string() },
        test,
        definition_unknown: flag.definition_unknown,
    }
}

fn strip_cell(cell: &Option<Cell>) -> StripCell {
    match cell {
        None => {
            StripCell { text: MISSING.into(), state: "absent", class: "cell-absent", changed: false, unknown: false }
        }
        Some(c) => StripCell {
            text: format!("{}/{}", c.solved, c.runs),
            state: c.state.label(),
            class: match c.state {
                TaskState::Stable => "cell-all",
                TaskState::Flaky => "cell-some",
                TaskState::Failing => "cell-none",
            },
            changed: c.definition == Definition::Changed,
            unknown: c.definition == Definition::Unknown,
        },
    }
}

/// The section of one model's page; `pages` maps a task id to its page
/// under the current baseline.
fn section(m: &ModelHistory, config: &SiteConfig, pages: &HashMap<String, String>, notes: &[String]) -> ModelSection {
    let total = m.blessings.len();
    let first = total.saturating_sub(SHOWN_BLESSINGS);
    let blessings: Vec<BlessingRow> = (first..total).map(|i| blessing_row(m, i, config)).collect();
    let series = |name: &str, pick: fn(&crate::history::trend::Figures) -> Interval| Series {
        name: name.into(),
        points: (first..total)
            .filter_map(|i| Some(((i + 1) as f64, pick(m.blessings[i].figures.as_ref()?).estimate)))
            .collect(),
        intervals: (first..total)
            .filter_map(|i| {
                let f = pick(m.blessings[i].figures.as_ref()?);
                Some((f.low, f.high))
            })
            .collect(),
    };
    let lines = [series("solve^k", |f| f.solve_k), series("mean solve rate", |f| f.mean_solve_rate)];
    let chart = (total > 1 && !lines[0].points.is_empty()).then(|| charts::curve(&lines, "blessing"));
    let strip_from = total.saturating_sub(STRIP_BLESSINGS);
    let mut tasks: Vec<TaskStrip> = m
        .tasks
        .iter()
        .map(|t| TaskStrip {
            id: t.id.clone(),
            page: pages.get(&t.id).cloned(),
            cells: t.cells[strip_from..].iter().map(strip_cell).collect(),
            flags: t.flags.iter().filter(|f| f.at >= strip_from).map(flag_view).collect(),
        })
        .collect();
    // Flagged first, the latest flag first; then by id (the order they came in).
    tasks.sort_by_key(|t| std::cmp::Reverse(t.flags.iter().map(|f| f.at).max()));
    ModelSection {
        blessings,
        omitted: first,
        chart,
        earlier_files: m.files.iter().filter(|f| Some(*f) != m.file.as_ref()).cloned().collect(),
        tasks,
        strip_heads: (strip_from..total).map(|i| format!("#{}", i + 1)).collect(),
        notes: notes.to_vec(),
    }
}

/// The site's view of `history`, for the baselines of the results pages
/// (`pages`, one per current baseline file); marks `rows` with the change
/// since the previous blessing.
pub fn view(history: &History, pages: &[BaselineView], rows: &mut [Row], config: &SiteConfig) -> HistoryView {
    let by_file: HashMap<&str, &ModelHistory> =
        history.models.iter().filter_map(|m| Some((m.file.as_deref()?, m))).collect();
    let mut out = HistoryView {
        changes: ChangesView { notes: history.notes.clone(), ..ChangesView::default() },
        ..HistoryView::default()
    };
    for (page, row) in pages.iter().zip(rows.iter_mut()) {
        let Some(m) = by_file.get(row.file.as_str()) else { continue };
        let stem = row.page.trim_start_matches("baselines/").trim_end_matches(".html").to_string();
        let task_pages: HashMap<String, String> =
            page.tasks.iter().filter_map(|t| Some((t.id.clone(), t.page.clone()?))).collect();
        let link = ModelLink {
            stem: stem.clone(),
            model: row.model.clone(),
            provider: row.provider.clone(),
            page: row.page.clone(),
        };
        row.since = since(m);
        if let Some(step) = m.last_step() {
            let at = step.to;
            let tasks = m
                .flags_at(at)
                .map(|(t, f)| {
                    let count =
                        |c: Option<Cell>| c.map_or_else(|| MISSING.into(), |c| format!("{}/{}", c.solved, c.runs));
                    TaskMove {
                        id: t.id.clone(),
                        page: task_pages.get(&t.id).cloned(),
                        counts: format!("{} → {}", count(t.cells[step.from]), count(t.cells[at])),
                        flag: flag_view(f),
                    }
                })
                .collect();
            let figures = step
                .figures
                .iter()
                .map(|f| FigureRow {
                    label: f.label.clone(),
                    before: format!("{}%", stats::fixed1(f.before)),
                    after: format!("{}%", stats::fixed1(f.after)),
                    change: change_text(&f.change),
                    movement: f.movement.label(),
                    moved: f.movement != Movement::NoChange,
                })
                .collect();
            out.changes.models.push(ModelChange {
                link,
                from: blessing_row(m, step.from, config),
                to: blessing_row(m, at, config),
                step: step_view(step),
                figures,
                tasks,
            });
        } else {
            out.changes.single.push(link);
        }
        out.sections.insert(stem, section(m, config, &task_pages, &history.notes));
    }
    let rank = |c: &ModelChange| match c.step.class {
        "significant" => 0,
        "noise" => 1,
        _ => 2,
    };
    out.changes.models.sort_by_key(rank);
    out
}

/// The results table's mark of a model's change since its previous blessing.
#[derive(Debug, Clone, Serialize)]
pub struct Since {
    /// `-15.4 pts` (solve^k on the tasks both ran), `first blessing`.
    pub text: String,
    /// `significant`, `noise`, `same`, `none` or `first`.
    pub class: &'static str,
    /// The verdict in words, for the cell's title.
    pub title: String,
}

/// `None` when no blessing of the model is committed (no history to speak of).
fn since(m: &ModelHistory) -> Option<Since> {
    if m.blessings.iter().all(|b| b.blessing.commit.is_none()) {
        return None;
    }
    let Some(step) = m.last_step() else {
        // At a shallow clone's boundary, earlier blessings may exist unfetched.
        if m.blessings.first().is_some_and(|b| b.blessing.at_or_before) {
            return Some(Since {
                text: "earlier not fetched".into(),
                class: "first",
                title: "a shallow clone: blessings before its oldest commit were not fetched (git fetch --unshallow)"
                    .into(),
            });
        }
        return Some(Since {
            text: "first blessing".into(),
            class: "first",
            title: "blessed once: nothing to compare yet".into(),
        });
    };
    let view = step_view(step);
    let text = match step.figure("solve_k_rate") {
        Some(f) => format!("{} pts", stats::signed1(f.change.estimate)),
        None => MISSING.into(),
    };
    let title =
        format!("blessing {} against {}: {}", step.to + 1, step.from + 1, crate::history::text::step_text(step));
    Some(Since { text, class: view.class, title })
}
