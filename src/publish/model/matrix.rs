//! The task x model matrix: a row per task of any baseline or of the
//! suite, a cell per baseline.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use crate::publish::load::baselines::Baseline;
use crate::publish::model::baseline::*;
use crate::publish::model::catalog::*;
use crate::publish::model::display::MISSING;
use crate::publish::model::table::*;

/// Task x model: one row per task of any baseline or of the suite.
#[derive(Debug, Clone, Serialize)]
pub struct Matrix {
    /// Column heads, in table order.
    pub columns: Vec<Column>,
    pub rows: Vec<MatrixRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Column {
    pub model: String,
    pub provider: String,
    /// The baseline's page, from the site root (`baselines/x.html`), for the
    /// templates' `url` filter.
    pub page: String,
    /// The baseline's page, as a URL relative to the site root.
    pub href: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    /// `solved/k`.
    pub text: String,
    /// `all`, `some` or `none` solved.
    pub class: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct MatrixRow {
    pub id: String,
    pub tier: String,
    pub in_suite: bool,
    /// One per column; `None` where that baseline did not run the task.
    pub cells: Vec<Option<Cell>>,
}

pub fn matrix(sorted: &[&Baseline], rows: &[Row], suite: &SuiteView) -> Matrix {
    let columns = rows
        .iter()
        .map(|r| Column {
            model: r.model.clone(),
            provider: r.provider.clone(),
            page: r.page.clone(),
            href: r.href.clone(),
        })
        .collect();
    let mut tiers: BTreeMap<String, String> = BTreeMap::new();
    let in_suite: BTreeSet<&str> = suite.tasks.iter().map(|t| t.id.as_str()).collect();
    for t in &suite.tasks {
        tiers.insert(t.id.clone(), t.tier.clone());
    }
    let lookups: Vec<HashMap<&str, (u32, u32)>> = sorted
        .iter()
        .map(|b| {
            b.headline
                .tasks
                .iter()
                .filter_map(|t| {
                    let id = t.id.as_deref()?;
                    Some((id, (t.solved_count.unwrap_or(0), t.n_runs.unwrap_or(0))))
                })
                .collect()
        })
        .collect();
    for b in sorted {
        for t in &b.headline.tasks {
            if let Some(id) = &t.id {
                tiers.entry(id.clone()).or_insert_with(|| t.difficulty.clone().unwrap_or_else(|| MISSING.into()));
            }
        }
    }
    let mut ids: Vec<(String, String)> = tiers.into_iter().collect();
    ids.sort_by(|(a, ta), (b, tb)| tier_key(ta).cmp(&tier_key(tb)).then_with(|| a.cmp(b)));
    let rows = ids
        .into_iter()
        .map(|(id, tier)| {
            let cells = lookups
                .iter()
                .map(|l| {
                    l.get(id.as_str()).map(|&(solved, k)| {
                        let class = if k > 0 && solved == k {
                            "all"
                        } else if solved > 0 {
                            "some"
                        } else {
                            "none"
                        };
                        Cell { text: format!("{solved}/{k}"), class }
                    })
                })
                .collect();
            MatrixRow { in_suite: in_suite.contains(id.as_str()), id, tier, cells }
        })
        .collect();
    Matrix { columns, rows }
}
