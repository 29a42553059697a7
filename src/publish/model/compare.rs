//! The compare pages: two baselines side by side, task by task, with the
//! paired comparison of `stats` (a paired bootstrap over their common tasks
//! for pass^k, solve^k and the mean rates; Fisher's exact test per task,
//! Benjamini–Hochberg corrected), as `vaultbench compare` computes it.
//!
//! A page per pair, `compare/<stem-a>/<stem-b>.html`, `a` the higher row of
//! the results table. With up to [`ALL_PAIRS_UP_TO`] baselines every pair
//! has a page; above that (a pair's bootstrap costs milliseconds, and pairs
//! grow with the square), each baseline is paired with its neighbours in
//! the table and with the top row. `compare.html` lists them and, with
//! JavaScript, lets a reader pick two from menus.

use rayon::prelude::*;
use serde::Serialize;

use crate::publish::model::table::Row;
use crate::stats::{self, Paired, Settings, TaskCounts};

pub const INDEX_PAGE: &str = "compare.html";
/// Every pair gets a page up to this many baselines.
pub const ALL_PAIRS_UP_TO: usize = 12;

/// `compare.html`: the pairs that have a page.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CompareIndex {
    pub models: Vec<Model>,
    pub pairs: Vec<PairLink>,
    /// Whether every pair has a page.
    pub all_pairs: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Model {
    /// The baseline's file stem, the key of the menus.
    pub stem: String,
    pub label: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct PairLink {
    pub a: String,
    pub b: String,
    pub label: String,
    pub url: String,
}

/// One pair's page.
#[derive(Debug, Clone, Serialize)]
pub struct PairPage {
    pub url: String,
    pub a: Side,
    pub b: Side,
    /// Set when they share too few tasks for the paired comparison.
    pub no_test: Option<String>,
    pub common_tasks: usize,
    pub k: u32,
    pub different_k: bool,
    pub figures: Vec<FigureChange>,
    /// Common tasks whose solved counts differ, largest difference first.
    pub differing: Vec<TaskDiff>,
    /// Common tasks with the same solved count.
    pub same: usize,
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
    pub resamples: u32,
    pub family_size: usize,
    pub significant: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Side {
    pub model: String,
    pub provider: String,
    /// The baseline's page, logical path.
    pub page: String,
    pub solve_k: String,
    pub k: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct FigureChange {
    pub label: &'static str,
    pub a: String,
    pub b: String,
    /// `b - a` in points with its 95% interval: `-16.7 [-29.6, -3.7]`.
    pub change: String,
    pub p: String,
    /// The interval excludes zero.
    pub clear: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct TaskDiff {
    pub id: String,
    pub tier: String,
    /// `4/5`.
    pub a: String,
    pub b: String,
    /// The task's pages under each baseline (logical paths), when they exist.
    pub a_page: Option<String>,
    pub b_page: Option<String>,
    pub p: String,
    /// After the Benjamini–Hochberg correction; `—` when not informative.
    pub p_adjusted: String,
    pub significant: bool,
    /// `a` or `b`: which solved more.
    pub better: &'static str,
}

/// What a pair needs of one baseline.
pub struct Entry<'a> {
    pub row: &'a Row,
    pub stem: &'a str,
    pub counts: &'a [TaskCounts],
    /// Task id -> its page.
    pub pages: &'a std::collections::HashMap<String, String>,
}

/// The pairs (indexes into the table's order, `a < b`) that get a page.
pub fn chosen_pairs(n: usize) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    for a in 0..n {
        for b in a + 1..n {
            if n <= ALL_PAIRS_UP_TO || b == a + 1 || a == 0 {
                pairs.push((a, b));
            }
        }
    }
    pairs
}

/// The index and the page of every chosen pair, the statistics computed on
/// several threads.
pub fn pages(entries: &[Entry], settings: &Settings) -> (CompareIndex, Vec<PairPage>) {
    let pairs = chosen_pairs(entries.len());
    let pages: Vec<PairPage> = pairs.par_iter().map(|&(a, b)| page(&entries[a], &entries[b], settings)).collect();
    let index = CompareIndex {
        models: entries.iter().map(|e| Model { stem: e.stem.to_string(), label: label(e.row) }).collect(),
        pairs: pages
            .iter()
            .zip(&pairs)
            .map(|(p, &(a, b))| PairLink {
                a: entries[a].stem.to_string(),
                b: entries[b].stem.to_string(),
                label: format!("{} vs {}", label(entries[a].row), label(entries[b].row)),
                url: p.url.clone(),
            })
            .collect(),
        all_pairs: entries.len() <= ALL_PAIRS_UP_TO,
    };
    (index, pages)
}

fn label(r: &Row) -> String {
    format!("{} ({})", r.model, r.provider)
}

fn side(e: &Entry) -> Side {
    Side {
        model: e.row.model.clone(),
        provider: e.row.provider.clone(),
        page: e.row.page.clone(),
        solve_k: e.row.solve_k.clone(),
        k: e.row.k.clone(),
    }
}

fn page(a: &Entry, b: &Entry, settings: &Settings) -> PairPage {
    let url = format!("compare/{}/{}.html", a.stem, b.stem);
    let paired = Paired::of(a.counts, b.counts, settings);
    let ids = |c: &[TaskCounts]| -> std::collections::BTreeSet<String> {
        c.iter().filter(|t| t.runs > 0).map(|t| t.id.clone()).collect()
    };
    let (ids_a, ids_b) = (ids(a.counts), ids(b.counts));
    let mut out = PairPage {
        url,
        a: side(a),
        b: side(b),
        no_test: None,
        common_tasks: 0,
        k: 0,
        different_k: false,
        figures: Vec::new(),
        differing: Vec::new(),
        same: 0,
        only_a: ids_a.difference(&ids_b).cloned().collect(),
        only_b: ids_b.difference(&ids_a).cloned().collect(),
        resamples: settings.resamples,
        family_size: 0,
        significant: 0,
    };
    let Some(p) = paired else {
        out.no_test = Some("they have no task in common".into());
        return out;
    };
    out.common_tasks = p.common_tasks;
    out.k = p.k;
    out.different_k = p.different_k();
    out.family_size = p.family_size;
    out.only_a = p.only_before.clone();
    out.only_b = p.only_after.clone();
    for (label, d) in [
        ("pass^k", &p.pass_k),
        ("solve^k", &p.solve_k),
        ("Mean pass rate", &p.mean_pass_rate),
        ("Mean solve rate", &p.mean_solve_rate),
    ] {
        let c = &d.change;
        out.figures.push(FigureChange {
            label,
            a: format!("{}%", stats::fixed1(d.before)),
            b: format!("{}%", stats::fixed1(d.after)),
            change: format!("{} [{}, {}]", stats::signed1(c.estimate), stats::signed1(c.low), stats::signed1(c.high)),
            p: stats::format_p(d.p_value),
            clear: d.drop_excludes_zero() || d.rise_excludes_zero(),
        });
    }
    let mut differing: Vec<(f64, TaskDiff)> = Vec::new();
    for t in &p.tasks {
        let s = &t.solved;
        if !s.changed() {
            out.same += 1;
            continue;
        }
        let significant = s.significant_difference(settings.alpha);
        out.significant += usize::from(significant);
        let gap = s.after.fraction() - s.before.fraction();
        differing.push((
            gap.abs(),
            TaskDiff {
                id: t.id.clone(),
                tier: t.tier.clone(),
                a: format!("{}/{}", s.before.count, s.before.runs),
                b: format!("{}/{}", s.after.count, s.after.runs),
                a_page: a.pages.get(&t.id).cloned(),
                b_page: b.pages.get(&t.id).cloned(),
                p: stats::format_p(s.p_two_sided),
                p_adjusted: s
                    .p_two_sided_adjusted
                    .map_or_else(|| crate::publish::model::display::MISSING.into(), stats::format_p),
                significant,
                better: if gap > 0.0 { "b" } else { "a" },
            },
        ));
    }
    differing.sort_by(|x, y| y.0.total_cmp(&x.0).then_with(|| x.1.id.cmp(&y.1.id)));
    out.differing = differing.into_iter().map(|(_, d)| d).collect();
    if p.common_tasks < stats::gate::MIN_TASKS {
        out.no_test = Some(format!(
            "they share {} task{}, fewer than the {} a paired interval needs; the counts are shown without a verdict",
            p.common_tasks,
            if p.common_tasks == 1 { "" } else { "s" },
            stats::gate::MIN_TASKS
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_up_to_the_cap_then_neighbours_and_the_top_row() {
        assert_eq!(chosen_pairs(3), [(0, 1), (0, 2), (1, 2)]);
        assert_eq!(chosen_pairs(ALL_PAIRS_UP_TO).len(), ALL_PAIRS_UP_TO * (ALL_PAIRS_UP_TO - 1) / 2);
        let many = chosen_pairs(20);
        assert_eq!(many.len(), 19 + 18, "the top row with each, and each with the next");
        assert!(many.contains(&(7, 8)) && many.contains(&(0, 19)) && !many.contains(&(3, 5)));
    }
}
