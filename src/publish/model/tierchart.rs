//! The geometry of the solve^k-by-tier chart, drawn as inline SVG: a row
//! per model, a panel per tier, each bar as wide as the tier's rate.

use serde::Serialize;

use crate::jsnum;
use crate::publish::load::baselines::Baseline;
use crate::publish::model::display::{MISSING, shorten};
use crate::publish::model::table::*;

/// Geometry of the solve^k-by-tier chart: a row per model, a panel per tier,
/// each bar as wide as the tier's solve^k rate. Drawn as inline SVG.
#[derive(Debug, Clone, Serialize)]
pub struct Chart {
    pub width: u32,
    pub height: u32,
    pub label_width: u32,
    pub panel_width: u32,
    pub panels: Vec<ChartPanel>,
    pub rows: Vec<ChartRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChartPanel {
    pub tier: &'static str,
    pub x: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChartRow {
    /// `model (provider)`, shortened to fit the label column.
    pub label: String,
    /// The whole label, shown on hover.
    pub title: String,
    pub y: u32,
    pub bars: Vec<ChartBar>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChartBar {
    pub x: u32,
    pub width: f64,
    /// `19/29 (65.5%)`, or `—`.
    pub text: String,
    pub present: bool,
}

pub const CHART_LABEL_WIDTH: u32 = 230;
pub const CHART_PANEL_WIDTH: u32 = 170;
pub const CHART_BAR_MAX: f64 = 110.0;
pub const CHART_ROW_HEIGHT: u32 = 24;
pub const CHART_HEADER: u32 = 28;
/// What fits in the label column at the chart's font size.
pub const CHART_LABEL_CHARS: usize = 34;

pub fn chart(sorted: &[&Baseline], rows: &[Row]) -> Chart {
    let panels: Vec<ChartPanel> = TIERS
        .iter()
        .enumerate()
        .map(|(i, tier)| ChartPanel { tier, x: CHART_LABEL_WIDTH + i as u32 * CHART_PANEL_WIDTH })
        .collect();
    let chart_rows = sorted
        .iter()
        .zip(rows)
        .enumerate()
        .map(|(i, (b, r))| {
            let bars = panels
                .iter()
                .map(|p| {
                    let t = b.headline.aggregate.by_difficulty.get(p.tier).filter(|t| t.total_tasks.unwrap_or(0) > 0);
                    match t {
                        Some(t) => {
                            let total = t.total_tasks.unwrap_or(0);
                            let solved = t.solve_k_count.unwrap_or(0).min(total);
                            let share = f64::from(solved) / f64::from(total);
                            ChartBar {
                                x: p.x,
                                width: jsnum::round(share * CHART_BAR_MAX, 1),
                                text: format!("{solved}/{total}"),
                                present: true,
                            }
                        }
                        None => ChartBar { x: p.x, width: 0.0, text: MISSING.into(), present: false },
                    }
                })
                .collect();
            let title = format!("{} ({})", r.model, r.provider);
            ChartRow {
                label: shorten(&title, CHART_LABEL_CHARS),
                title,
                y: CHART_HEADER + i as u32 * CHART_ROW_HEIGHT,
                bars,
            }
        })
        .collect::<Vec<_>>();
    Chart {
        width: CHART_LABEL_WIDTH + TIERS.len() as u32 * CHART_PANEL_WIDTH,
        height: CHART_HEADER + chart_rows.len() as u32 * CHART_ROW_HEIGHT + 6,
        label_width: CHART_LABEL_WIDTH,
        panel_width: CHART_PANEL_WIDTH,
        panels,
        rows: chart_rows,
    }
}
