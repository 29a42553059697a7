//! The solve^k-by-tier chart: a row per model, a cell per tier with a bar
//! as wide as the tier's rate. The template draws it in HTML, not SVG, so
//! it reflows with its container: at a phone's width the model's name goes
//! above its tiers and every tier stays in view. Names are shown whole
//! (they wrap); each cell says its figure in words on hover.

use serde::Serialize;

use crate::jsnum;
use crate::publish::load::baselines::Baseline;
use crate::publish::model::display::MISSING;
use crate::publish::model::table::*;

#[derive(Debug, Clone, Serialize)]
pub struct Chart {
    pub tiers: &'static [&'static str],
    pub rows: Vec<ChartRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChartRow {
    /// `model (provider)`, whole.
    pub label: String,
    pub bars: Vec<ChartBar>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChartBar {
    pub tier: &'static str,
    /// The bar's width: the tier's solve^k rate, in percent (one decimal).
    pub percent: f64,
    /// `19/29`, or `—`.
    pub text: String,
    /// The figure in words, for the hover text.
    pub title: String,
    pub present: bool,
}

pub fn chart(sorted: &[&Baseline], rows: &[Row]) -> Chart {
    let chart_rows = sorted
        .iter()
        .zip(rows)
        .map(|(b, r)| {
            let label = format!("{} ({})", r.model, r.provider);
            let bars = TIERS
                .iter()
                .map(|&tier| {
                    let t = b.headline.aggregate.by_difficulty.get(tier).filter(|t| t.total_tasks.unwrap_or(0) > 0);
                    match t {
                        Some(t) => {
                            let total = t.total_tasks.unwrap_or(0);
                            let solved = t.solve_k_count.unwrap_or(0).min(total);
                            let percent = jsnum::round(f64::from(solved) / f64::from(total) * 100.0, 1);
                            ChartBar {
                                tier,
                                percent,
                                text: format!("{solved}/{total}"),
                                title: format!(
                                    "{label}, {tier}: {solved} of {total} tasks solved in all k runs ({percent}%)"
                                ),
                                present: true,
                            }
                        }
                        None => ChartBar {
                            tier,
                            percent: 0.0,
                            text: MISSING.into(),
                            title: format!("{label}, {tier}: no tasks of this tier"),
                            present: false,
                        },
                    }
                })
                .collect();
            ChartRow { label, bars }
        })
        .collect();
    Chart { tiers: &TIERS, rows: chart_rows }
}
