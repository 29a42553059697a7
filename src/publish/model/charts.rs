//! Geometry of the site's line and scatter charts, drawn by the templates as
//! inline SVG that shrinks with its container (readable without JavaScript;
//! each comes with a table or a list as its text alternative): the pass^k /
//! solve^k curve over k, one line per model, and the mean cost per run
//! against solve^k. Names are not drawn inside the plot, where a long one
//! would be cut: each chart has a legend (a line's style, a point's number)
//! with the whole names, which wrap, and a description of every series for
//! its text alternative.
//!
//! Pure functions of figures already computed (`stats`, the baselines'
//! aggregates); nothing here decides what a figure is.

use serde::Serialize;

use crate::jsnum;

/// Lines drawn in one curve chart; later rows are left to the table.
pub const MAX_SERIES: usize = 8;
const WIDTH: f64 = 560.0;
const HEIGHT: f64 = 280.0;
const LEFT: f64 = 48.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 40.0;
/// Points of the cost chart this close (in pixels) share one number label.
const SAME_SPOT: f64 = 9.0;

/// One line: a name and (x, y) values, y in percent.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Each point's interval (low, high), drawn as a bar through it; empty
    /// for none.
    pub intervals: Vec<(f64, f64)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LineChart {
    pub width: f64,
    pub height: f64,
    pub plot: Plot,
    pub y_ticks: Vec<Tick>,
    pub x_ticks: Vec<Tick>,
    pub lines: Vec<Line>,
    /// The points' intervals, drawn under the lines.
    pub whiskers: Vec<Whisker>,
    /// Every line's figures in words: the chart's text alternative.
    pub description: String,
}

/// A vertical bar through a point, from its interval's low to its high.
#[derive(Debug, Clone, Serialize)]
pub struct Whisker {
    pub x: f64,
    pub y1: f64,
    pub y2: f64,
    /// Its line's colour class.
    pub class: String,
    /// `solve^k: 1: 57.4% [44.4, 70.4]`.
    pub title: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Plot {
    pub left: f64,
    pub top: f64,
    pub right: f64,
    pub bottom: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Tick {
    pub at: f64,
    pub label: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Line {
    /// `x,y x,y ...` for `<polyline points>`.
    pub points: String,
    pub dots: Vec<Dot>,
    /// The colour's class, `series-0`.. (cycling through eight).
    pub class: String,
    /// The series' whole name, for the legend and the hover text.
    pub label: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Dot {
    pub x: f64,
    pub y: f64,
    /// `k = 3: 57.4%`.
    pub title: String,
}

fn px(x: f64) -> f64 {
    jsnum::round(x, 1)
}

/// Grid lines at 0, 25, 50, 75 and 100%.
fn percent_ticks(y_of: impl Fn(f64) -> f64) -> Vec<Tick> {
    [0.0, 25.0, 50.0, 75.0, 100.0].iter().map(|&v| Tick { at: px(y_of(v)), label: format!("{v}%") }).collect()
}

/// A line chart of `series` over integer x from 1 to the largest x, y from 0
/// to 100%. `x_name` names x in the dots' titles (`k`).
pub fn curve(series: &[Series], x_name: &str) -> LineChart {
    let max_x = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).fold(1.0f64, f64::max);
    let plot = Plot { left: LEFT, top: TOP, right: WIDTH - RIGHT, bottom: HEIGHT - BOTTOM };
    let x_of = |x: f64| {
        if max_x <= 1.0 {
            (plot.left + plot.right) / 2.0
        } else {
            plot.left + (x - 1.0) / (max_x - 1.0) * (plot.right - plot.left)
        }
    };
    let y_of = |y: f64| plot.top + (100.0 - y.clamp(0.0, 100.0)) / 100.0 * (plot.bottom - plot.top);
    let y_ticks = percent_ticks(y_of);
    let step = (max_x / 10.0).ceil().max(1.0);
    let mut x_ticks = Vec::new();
    let mut x = 1.0;
    while x <= max_x {
        x_ticks.push(Tick { at: px(x_of(x)), label: format!("{x}") });
        x += step;
    }
    let lines: Vec<Line> = series
        .iter()
        .take(MAX_SERIES)
        .enumerate()
        .filter(|(_, s)| !s.points.is_empty())
        .map(|(i, s)| {
            let dots: Vec<Dot> = s
                .points
                .iter()
                .map(|&(x, y)| Dot {
                    x: px(x_of(x)),
                    y: px(y_of(y)),
                    title: format!("{}: {x_name} = {x}: {}%", s.name, crate::stats::fixed1(y)),
                })
                .collect();
            Line {
                points: dots.iter().map(|d| format!("{},{}", d.x, d.y)).collect::<Vec<_>>().join(" "),
                class: format!("series-{}", i % 8),
                label: s.name.clone(),
                dots,
            }
        })
        .collect();
    let whiskers = series
        .iter()
        .take(MAX_SERIES)
        .enumerate()
        .filter(|(_, s)| s.intervals.len() == s.points.len())
        .flat_map(|(i, s)| {
            // Side by side, a few pixels apart, where several series share an x.
            s.points.iter().zip(&s.intervals).map(move |(&(x, y), &(low, high))| Whisker {
                x: px(x_of(x) + 3.0 * i as f64),
                y1: px(y_of(low)),
                y2: px(y_of(high)),
                class: format!("series-{}", i % 8),
                title: format!(
                    "{}: {x_name} = {x}: {}% [{}, {}]",
                    s.name,
                    crate::stats::fixed1(y),
                    crate::stats::fixed1(low),
                    crate::stats::fixed1(high)
                ),
            })
        })
        .collect();
    let description = series
        .iter()
        .take(MAX_SERIES)
        .filter_map(|s| {
            let (first, last) = (s.points.first()?, s.points.last()?);
            let at = |p: &(f64, f64)| format!("{}% at {x_name} = {}", crate::stats::fixed1(p.1), p.0);
            Some(if s.points.len() == 1 {
                format!("{}: {}", s.name, at(first))
            } else {
                format!("{}: from {} to {}", s.name, at(first), at(last))
            })
        })
        .collect::<Vec<_>>()
        .join("; ");
    LineChart { width: WIDTH, height: HEIGHT, plot, y_ticks, x_ticks, lines, whiskers, description }
}

/// One model in the cost chart.
pub struct CostPoint {
    pub name: String,
    pub cost_usd: f64,
    pub solve_k: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Scatter {
    pub width: f64,
    pub height: f64,
    pub plot: Plot,
    pub y_ticks: Vec<Tick>,
    pub x_ticks: Vec<Tick>,
    pub points: Vec<ScatterPoint>,
    /// Number labels, one per spot: points (nearly) on one spot share one
    /// label (`2, 3`) instead of drawing over each other.
    pub labels: Vec<SpotLabel>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SpotLabel {
    pub text: String,
    pub x: f64,
    pub y: f64,
    /// Where the label goes: right of the spot, or left near the right edge.
    pub anchor: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct ScatterPoint {
    pub x: f64,
    pub y: f64,
    /// Its number in the legend, from 1.
    pub number: usize,
    pub name: String,
    /// The figures: `$0.0012 per run, solve^k 57.4%`.
    pub figures: String,
}

/// Mean cost per run (x, USD, from 0 to a round maximum) against solve^k
/// (y, 0..100%).
pub fn cost(points: &[CostPoint]) -> Scatter {
    let plot = Plot { left: LEFT + 12.0, top: TOP, right: WIDTH - 24.0, bottom: HEIGHT - BOTTOM };
    let max = points.iter().map(|p| p.cost_usd).filter(|c| c.is_finite()).fold(0.0f64, f64::max);
    let top = nice_ceiling(max);
    let x_of = |x: f64| plot.left + x.clamp(0.0, top) / top * (plot.right - plot.left);
    let y_of = |y: f64| plot.top + (100.0 - y.clamp(0.0, 100.0)) / 100.0 * (plot.bottom - plot.top);
    let y_ticks = percent_ticks(y_of);
    let x_ticks = (0..=4)
        .map(|i| {
            let v = top * f64::from(i) / 4.0;
            Tick { at: px(x_of(v)), label: format!("${}", trim_zeros(&format!("{v:.6}"))) }
        })
        .collect();
    let points: Vec<ScatterPoint> = points
        .iter()
        .filter(|p| p.cost_usd.is_finite() && p.solve_k.is_finite())
        .enumerate()
        .map(|(i, p)| ScatterPoint {
            x: px(x_of(p.cost_usd)),
            y: px(y_of(p.solve_k)),
            number: i + 1,
            name: p.name.clone(),
            figures: format!(
                "${} per run, solve^k {}%",
                trim_zeros(&format!("{:.6}", p.cost_usd)),
                crate::stats::fixed1(p.solve_k)
            ),
        })
        .collect();
    let mut labels: Vec<(f64, f64, Vec<usize>)> = Vec::new();
    for p in &points {
        match labels.iter_mut().find(|(x, y, _)| (x - p.x).abs() < SAME_SPOT && (y - p.y).abs() < SAME_SPOT) {
            Some((_, _, numbers)) => numbers.push(p.number),
            None => labels.push((p.x, p.y, vec![p.number])),
        }
    }
    let labels = labels
        .into_iter()
        .map(|(x, y, numbers)| {
            let right_half = x > (plot.left + plot.right) / 2.0;
            SpotLabel {
                text: numbers.iter().map(usize::to_string).collect::<Vec<_>>().join(", "),
                x: if right_half { px(x - 8.0) } else { px(x + 8.0) },
                y: px(y + 4.0),
                anchor: if right_half { "end" } else { "start" },
            }
        })
        .collect();
    Scatter { width: WIDTH, height: HEIGHT, plot, y_ticks, x_ticks, points, labels }
}

/// The smallest of 1, 2, 2.5 or 5 times a power of ten at or above `x`
/// (a cost of zero gives an axis up to 0.001).
fn nice_ceiling(x: f64) -> f64 {
    if x <= 0.0 {
        return 0.001;
    }
    let power = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * power).find(|v| *v >= x * (1.0 - 1e-12)).unwrap_or(10.0 * power)
}

fn trim_zeros(s: &str) -> String {
    if !s.contains('.') {
        return s.to_string();
    }
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_curve_spans_the_plot_and_its_description_names_every_line_whole() {
        let long = "a-model-name-of-forty-characters-exactly";
        let s =
            |name: &str, y: f64| Series { name: name.into(), points: vec![(1.0, 100.0), (5.0, y)], intervals: vec![] };
        let chart = curve(&[s(long, 50.0), s("b", 50.0), s("c", 0.0)], "k");
        let a = &chart.lines[0];
        assert_eq!(a.dots[0].x, LEFT);
        assert_eq!(a.dots[0].y, TOP);
        assert_eq!(a.dots[1].x, WIDTH - RIGHT);
        assert_eq!(a.dots[1].title, format!("{long}: k = 5: 50.0%"));
        assert_eq!(a.label, long, "whole, for the legend");
        assert_eq!(
            chart.description,
            format!(
                "{long}: from 100.0% at k = 1 to 50.0% at k = 5; b: from 100.0% at k = 1 to 50.0% at k = 5; c: from 100.0% at k = 1 to 0.0% at k = 5"
            )
        );
        assert_eq!(chart.x_ticks.iter().map(|t| t.label.as_str()).collect::<Vec<_>>(), ["1", "2", "3", "4", "5"]);
        assert!(chart.whiskers.is_empty());
    }

    #[test]
    fn intervals_are_bars_through_their_points() {
        let s = Series {
            name: "solve^k".into(),
            points: vec![(1.0, 50.0), (2.0, 75.0)],
            intervals: vec![(25.0, 75.0), (50.0, 100.0)],
        };
        let chart = curve(&[s], "blessing");
        assert_eq!(chart.whiskers.len(), 2);
        let w = &chart.whiskers[0];
        assert_eq!((w.x, w.class.as_str()), (chart.lines[0].dots[0].x, "series-0"));
        // 75% is a quarter of the plot's height below its top, 25% three quarters.
        let height = HEIGHT - BOTTOM - TOP;
        assert_eq!((w.y2, w.y1), (px(TOP + height / 4.0), px(TOP + height * 3.0 / 4.0)));
        assert_eq!(w.title, "solve^k: blessing = 1: 50.0% [25.0, 75.0]");
    }

    #[test]
    fn the_cost_axis_ends_on_a_round_figure() {
        assert_eq!(nice_ceiling(0.0), 0.001);
        assert_eq!(nice_ceiling(0.0037), 0.005);
        assert_eq!(nice_ceiling(0.002), 0.002);
        assert_eq!(nice_ceiling(12.0), 20.0);
        let chart = cost(&[
            CostPoint { name: "a".into(), cost_usd: 0.002, solve_k: 50.0 },
            CostPoint { name: "b".into(), cost_usd: f64::NAN, solve_k: 10.0 },
        ]);
        assert_eq!(chart.points.len(), 1);
        assert_eq!(chart.points[0].x, WIDTH - 24.0);
        assert_eq!(chart.x_ticks.last().unwrap().label, "$0.002");
        assert_eq!(chart.labels[0].anchor, "end");
        assert_eq!(chart.points[0].figures, "$0.002 per run, solve^k 50.0%");
    }

    #[test]
    fn points_on_one_spot_share_one_label() {
        let p = |name: &str, cost_usd: f64, solve_k: f64| CostPoint { name: name.into(), cost_usd, solve_k };
        let chart = cost(&[p("a", 0.001, 80.0), p("b", 0.0, 0.0), p("c", 0.0, 0.5), p("d", 0.0004, 0.0)]);
        let labels: Vec<&str> = chart.labels.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(labels, ["1", "2, 3", "4"]);
        assert_eq!(chart.points.iter().map(|p| p.number).collect::<Vec<_>>(), [1, 2, 3, 4]);
    }
}
