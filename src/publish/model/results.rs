//! What the site shows about baselines and the suite, as plain data for the
//! templates: the results table rows (exactly the columns of the published
//! table, formatted, then the interval column and the marks), a page per
//! baseline, the task x model matrix, the solve^k-by-tier chart geometry,
//! and the task catalog.
//!
//! The statistics (intervals, the pass^k curve, ties between neighbouring
//! rows, the noise floor) come from `stats`, computed from each baseline's
//! task counts when the site is built; judge marks from `report::judge_skips`.
//!
//! Every string here that came from a baseline is untrusted text; it is
//! escaped by the templates (Tera autoescaping), never marked safe.
//! Formatting follows the reference harness's table: rates with one decimal
//! and `%` (`jsnum::to_fixed`), tiers as `solve_k_count/total_tasks`, the
//! run id's UTC date, the commit's first 7 characters.

use std::collections::HashMap;
use std::sync::Arc;

use rayon::prelude::*;
use serde::Serialize;

use crate::publish::digest::Digest;
use crate::publish::load::baselines::{Baseline, Headline};
use crate::publish::load::config::SiteConfig;
use crate::publish::model::baseline::*;
pub use crate::publish::model::catalog::{CatalogTask, SuiteView};
use crate::publish::model::charts::{self, CostPoint, LineChart, Scatter, Series};
use crate::publish::model::compare::{self, CompareIndex, PairPage};
use crate::publish::model::matrix::*;
use crate::publish::model::runs::{self, TaskPage};
use crate::publish::model::table::*;
use crate::publish::model::tierchart::*;
use crate::publish::model::transcripts::Transcripts;
use crate::stats::{self, Settings, Summary, TaskCounts};

/// Everything the results pages show.
#[derive(Debug, Clone, Serialize)]
pub struct ResultsView {
    /// Sorted by solve^k descending, then provider, then model.
    pub rows: Vec<Row>,
    /// How many rows carry a suite mark.
    pub differing: usize,
    /// The median half-width of the rows' solve^k intervals (`±13.0`), the
    /// smallest difference the table can show; `None` without intervals.
    pub noise_floor: Option<String>,
    /// How many rows are marked as tied with the row above, and as judged without a judge.
    pub tied: usize,
    pub unjudged: usize,
    /// Each baseline's page data (not for templates' global data: each
    /// baseline page gets its own as `baseline`, and serializing every one
    /// for every build was a tenth of a `--watch` rebuild).
    #[serde(skip)]
    pub pages: Vec<BaselineView>,
    pub matrix: Matrix,
    pub chart: Chart,
    /// solve^k over k = 1..n, a line per model (the first rows).
    pub curve_chart: LineChart,
    /// Models past the curve chart's lines, left to the tables.
    pub curve_chart_omitted: usize,
    pub cost_chart: Scatter,
    pub compare: CompareIndex,
    /// The task pages of every baseline, in table order (not for templates'
    /// global data: they are rendered one by one).
    #[serde(skip)]
    pub task_pages: Vec<Arc<TaskPage>>,
    #[serde(skip)]
    pub pairs: Vec<PairPage>,
}

/// What [`view`] derived from each baseline alone (its statistics, its
/// paired test with the row above, its run pages), kept between builds by
/// `--watch` and keyed by digests of the inputs: after one baseline
/// changed, the others' are reused. Only the last build's are kept.
#[derive(Default)]
pub struct Derived {
    keep: bool,
    summaries: HashMap<u64, Option<Summary>>,
    ties: HashMap<(u64, u64), Option<Tie>>,
    runs: HashMap<u64, runs::BaselineRuns>,
}

impl Derived {
    /// A store that keeps what each build derived for the next.
    pub fn keeping() -> Derived {
        Derived { keep: true, ..Derived::default() }
    }
}

/// Build the view of `baselines` against the current suite, with the
/// transcripts of their evidence (by baseline stem) where loaded; what
/// `derived` holds from the last build is reused.
pub fn view(
    baselines: &[Baseline],
    suite: &SuiteView,
    config: &SiteConfig,
    evidence: &HashMap<String, Result<Transcripts, String>>,
    derived: &mut Derived,
) -> ResultsView {
    let suite_ids = suite.ids();
    let mut order: Vec<usize> = (0..baselines.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&baselines[a].headline, &baselines[b].headline);
        let rate = |h: &Headline| h.aggregate.solve_k_rate.unwrap_or(f64::NEG_INFINITY);
        rate(y)
            .total_cmp(&rate(x))
            .then_with(|| name(&x.provider).cmp(name(&y.provider)))
            .then_with(|| name(&x.model).cmp(name(&y.model)))
            .then_with(|| baselines[a].stem.cmp(&baselines[b].stem))
    });
    let sorted: Vec<&Baseline> = order.into_iter().map(|i| &baselines[i]).collect();
    let settings = Settings::default();
    let counts: Vec<Vec<TaskCounts>> = sorted.iter().map(|b| task_counts(&b.headline)).collect();
    let mut rows: Vec<Row> = sorted.iter().map(|b| row(b, suite_ids.as_ref(), config)).collect();
    // Each baseline's bootstrap, and its paired comparison with the row above.
    let before = &*derived;
    let pair_key = |i: usize| (sorted[i - 1].digest, sorted[i].digest);
    let computed: Vec<(Option<Summary>, Option<Tie>)> = (0..counts.len())
        .into_par_iter()
        .map(|i| {
            let summary = match before.summaries.get(&sorted[i].digest) {
                Some(kept) => kept.clone(),
                None => Summary::of(&counts[i], &settings),
            };
            let tie = match i {
                0 => None,
                _ => match before.ties.get(&pair_key(i)) {
                    Some(kept) => kept.clone(),
                    None => tie(&counts[i - 1], &counts[i], &rows[i - 1].model, &settings),
                },
            };
            (summary, tie)
        })
        .collect();
    let (summaries, ties): (Vec<Option<Summary>>, Vec<Option<Tie>>) = computed.into_iter().unzip();
    if derived.keep {
        derived.summaries = sorted.iter().zip(&summaries).map(|(b, s)| (b.digest, s.clone())).collect();
        derived.ties = (1..sorted.len()).map(|i| (pair_key(i), ties[i].clone())).collect();
    }
    for ((row, summary), tie) in rows.iter_mut().zip(&summaries).zip(ties) {
        row.interval = summary.as_ref().map(|s| RowInterval {
            text: stats::plus_minus(&s.solve_k),
            low: format!("{}%", stats::fixed1(s.solve_k.low)),
            high: format!("{}%", stats::fixed1(s.solve_k.high)),
            tasks: s.tasks,
        });
        row.tie = tie;
    }
    let suite_digest = {
        let mut d = Digest::default();
        d.value(suite);
        d.finish()
    };
    let before = &*derived;
    let below_keyed: Vec<(u64, runs::BaselineRuns)> = sorted
        .par_iter()
        .map(|b| {
            // The run pages are made from the baseline's file, the suite and the
            // evidence archive alone: their digests name them.
            let archive = evidence.get(&b.stem);
            let mut d = Digest::default();
            d.text(&b.stem);
            d.number(b.digest);
            d.number(suite_digest);
            match archive {
                Some(Ok(t)) => d.number(t.digest),
                Some(Err(why)) => d.text(why),
                None => d.text(""),
            }
            let key = d.finish();
            if let Some(kept) = before.runs.get(&key) {
                return (key, kept.clone());
            }
            let mut runs = runs::baseline_runs(b, suite, archive.and_then(|e| e.as_ref().ok()));
            for (i, task) in runs.tasks.iter_mut().enumerate() {
                let task = Arc::get_mut(task).expect("a task page just made is not shared");
                let mut page = Digest::default();
                page.number(key);
                page.number(i as u64);
                task.digest = page.finish();
            }
            (key, runs)
        })
        .collect();
    if derived.keep {
        derived.runs = below_keyed.iter().map(|(key, runs)| (*key, runs.clone())).collect();
    }
    let mut below: Vec<runs::BaselineRuns> = below_keyed.into_iter().map(|(_, runs)| runs).collect();
    let pages = sorted
        .iter()
        .zip(&rows)
        .zip(&summaries)
        .zip(&mut below)
        .map(|(((b, r), s), runs)| {
            let mut view = baseline_view(b, r, s.as_ref(), runs);
            view.evidence_problem = evidence.get(&b.stem).and_then(|e| e.as_ref().err().cloned());
            view
        })
        .collect();
    let matrix = matrix(&sorted, &rows, suite);
    let chart = chart(&sorted, &rows);
    let series: Vec<Series> = rows
        .iter()
        .zip(&summaries)
        .filter_map(|(r, s)| {
            let s = s.as_ref()?;
            let points = s.curve.iter().map(|p| (f64::from(p.k), p.solve.estimate)).collect();
            Some(Series { name: format!("{} ({})", r.model, r.provider), points, intervals: Vec::new() })
        })
        .collect();
    let curve_chart = charts::curve(&series, "k");
    let curve_chart_omitted = series.len().saturating_sub(charts::MAX_SERIES);
    let cost_chart = charts::cost(
        &sorted
            .iter()
            .zip(&rows)
            .filter_map(|(b, r)| {
                let a = &b.headline.aggregate;
                Some(CostPoint {
                    name: format!("{} ({})", r.model, r.provider),
                    cost_usd: a.mean_cost_usd?,
                    solve_k: a.solve_k_rate?,
                })
            })
            .collect::<Vec<_>>(),
    );
    let entries: Vec<compare::Entry> = rows
        .iter()
        .zip(&sorted)
        .zip(&counts)
        .zip(&below)
        .map(|(((row, b), counts), runs)| compare::Entry { row, stem: &b.stem, counts, pages: &runs.pages })
        .collect();
    let (compare, pairs) = compare::pages(&entries, &settings);
    let task_pages = below.into_iter().flat_map(|r| r.tasks).collect();
    let differing = rows.iter().filter(|r| r.suite_diff.is_some()).count();
    let mut half_widths: Vec<f64> = summaries.iter().flatten().map(|s| s.solve_k.half_width()).collect();
    half_widths.sort_by(f64::total_cmp);
    let noise_floor = (!half_widths.is_empty()).then(|| {
        let mid = half_widths.len() / 2;
        let median =
            if half_widths.len() % 2 == 1 { half_widths[mid] } else { (half_widths[mid - 1] + half_widths[mid]) / 2.0 };
        format!("±{}", stats::fixed1(median))
    });
    let tied = rows.iter().filter(|r| r.tie.is_some()).count();
    let unjudged = rows.iter().filter(|r| r.judge.is_some()).count();
    ResultsView {
        rows,
        differing,
        noise_floor,
        tied,
        unjudged,
        pages,
        matrix,
        chart,
        curve_chart,
        curve_chart_omitted,
        cost_chart,
        compare,
        task_pages,
        pairs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::task::Task;
    use crate::publish::load::baselines;
    use crate::publish::model::display::{MISSING, UNKNOWN};
    use std::path::PathBuf;

    fn baseline(stem: &str, json: &str) -> Baseline {
        Baseline {
            path: PathBuf::from(format!("b/{stem}.json")),
            stem: stem.into(),
            headline: baselines::parse_partial(json),
            digest: 0,
        }
    }

    fn config() -> SiteConfig {
        SiteConfig { repository: Some("https://example.org/r".into()), ..SiteConfig::default() }
    }

    #[test]
    fn a_row_formats_like_the_reference_table() {
        let b = baseline(
            "x",
            r#"{"run_id": "2026-05-24T20:48:06.714Z", "git_sha": "36e3495abcdef", "model": "m", "provider": "p",
                "aggregate": {"total_tasks": 54, "n_runs": 5, "pass_k_rate": 100, "solve_k_rate": 74.1,
                "by_difficulty": {"T3": {"total_tasks": 29, "solve_k_count": 19}, "T1": {"total_tasks": 0}}}}"#,
        );
        let v = view(&[b], &SuiteView::empty("t".into()), &config(), &HashMap::new(), &mut Derived::default());
        let r = &v.rows[0];
        assert_eq!(
            (r.k.as_str(), r.tasks.as_str(), r.pass_k.as_str(), r.solve_k.as_str()),
            ("5", "54", "100.0%", "74.1%")
        );
        assert_eq!(r.tiers, ["—", "—", "19/29", "—"]);
        assert_eq!(r.date, "2026-05-24");
        let c = r.commit.as_ref().unwrap();
        assert_eq!(c.short, "36e3495");
        assert_eq!(c.url.as_deref(), Some("https://example.org/r/commit/36e3495abcdef"));
        assert_eq!(r.page, "baselines/x.html");
    }

    #[test]
    fn missing_fields_collapse_to_defaults() {
        let v = view(
            &[baseline("e", "{}")],
            &SuiteView::empty("t".into()),
            &SiteConfig::default(),
            &HashMap::new(),
            &mut Derived::default(),
        );
        let r = &v.rows[0];
        assert_eq!((r.model.as_str(), r.provider.as_str()), (UNKNOWN, UNKNOWN));
        assert_eq!((r.k.as_str(), r.tasks.as_str()), ("0", "0"));
        assert_eq!((r.pass_k.as_str(), r.solve_k.as_str(), r.date.as_str()), (MISSING, MISSING, MISSING));
        assert!(r.commit.is_none());
        assert!(r.tiers.iter().all(|t| t == MISSING));
        // No repository configured: the commit is shown without a link.
        let v = view(
            &[baseline("s", r#"{"git_sha": "abc"}"#)],
            &SuiteView::empty("t".into()),
            &SiteConfig::default(),
            &HashMap::new(),
            &mut Derived::default(),
        );
        assert_eq!(v.rows[0].commit.as_ref().unwrap().url, None);
    }

    #[test]
    fn rows_sort_by_solve_k_then_provider_then_model() {
        let bs = [
            baseline("a", r#"{"model": "b", "provider": "x", "aggregate": {"solve_k_rate": 50}}"#),
            baseline("b", r#"{"model": "a", "provider": "x", "aggregate": {"solve_k_rate": 50}}"#),
            baseline("c", r#"{"model": "z", "provider": "a", "aggregate": {"solve_k_rate": 50}}"#),
            baseline("d", r#"{"model": "top", "provider": "z", "aggregate": {"solve_k_rate": 90.5}}"#),
            baseline("e", r#"{"model": "none"}"#),
        ];
        let v = view(&bs, &SuiteView::empty("t".into()), &config(), &HashMap::new(), &mut Derived::default());
        let models: Vec<_> = v.rows.iter().map(|r| r.model.as_str()).collect();
        assert_eq!(models, ["top", "z", "a", "b", "none"]);
    }

    #[test]
    fn a_baseline_from_another_suite_is_marked_with_the_difference() {
        let task = |id: &str| -> Task {
            serde_json::from_str(&format!(
                r#"{{"id": "{id}", "description": "d", "userMessage": "u", "difficulty": "T2", "category": "c"}}"#
            ))
            .unwrap()
        };
        let mut suite = SuiteView::from_tasks("t".into(), &[task("a"), task("b"), task("c")]);
        for t in &mut suite.tasks {
            t.content_hash = Some(format!("sha256:{}", t.id));
        }
        let bs = [
            baseline("same", r#"{"tasks": [{"id": "a", "content_hash": "sha256:a"}, {"id": "b"}, {"id": "c"}]}"#),
            baseline("old", r#"{"tasks": [{"id": "a"}, {"id": "gone"}]}"#),
            baseline("edited", r#"{"tasks": [{"id": "a", "content_hash": "sha256:a0"}, {"id": "b"}, {"id": "c"}]}"#),
        ];
        let v = view(&bs, &suite, &config(), &HashMap::new(), &mut Derived::default());
        let old = v.rows.iter().find(|r| r.file == "old.json").unwrap();
        assert_eq!(
            old.suite_diff,
            Some(SuiteDiff {
                count: 3,
                not_run: vec!["b".into(), "c".into()],
                not_in_suite: vec!["gone".into()],
                changed: vec![],
                words: "2 added to the suite, 1 removed since this ran".into(),
            })
        );
        // A task with the same id that was edited since: told by its hash, not its id.
        let edited = v.rows.iter().find(|r| r.file == "edited.json").unwrap().suite_diff.as_ref().unwrap();
        assert_eq!(
            (edited.changed.as_slice(), edited.words.as_str()),
            (&["a".to_string()][..], "1 edited since this ran")
        );
        assert!(v.rows.iter().find(|r| r.file == "same.json").unwrap().suite_diff.is_none());
        assert_eq!(v.differing, 2);
        // The matrix lists every task once, suite tasks first known by their tier.
        let ids: Vec<_> = v.matrix.rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c", "gone"]);
    }

    #[test]
    fn chart_bars_scale_with_the_tier_rate() {
        let b = baseline(
            "x",
            r#"{"model": "m", "aggregate": {"by_difficulty": {"T1": {"total_tasks": 4, "solve_k_count": 1}}}}"#,
        );
        let v = view(&[b], &SuiteView::empty("t".into()), &config(), &HashMap::new(), &mut Derived::default());
        let bars = &v.chart.rows[0].bars;
        assert_eq!(bars[0].percent, 25.0);
        assert_eq!(bars[0].text, "1/4");
        assert_eq!(bars[0].title, "m (unknown), T1: 1 of 4 tasks solved in all k runs (25%)");
        assert!(!bars[1].present);
        assert_eq!(v.chart.rows.len(), 1);
    }
}
