//! Reporting: what happens to scored runs. Task results and the aggregate
//! (`aggregate`), baseline comparison (`compare`), blessing (`bless`) with the
//! transcripts kept as evidence (`evidence`) and the baseline and its evidence
//! replaced as one pair (`baseline_dir`),
//! offline rescoring (`rescore`), judge calibration (`calibrate`), runs
//! scored without a judge (`judge_skips`) and the human summary (`summary`).
//! Reads and writes result files; never builds or runs
//! a model itself (a judge, when one is needed, is handed in).

pub mod aggregate;
pub mod baseline_dir;
pub mod bless;
pub mod calibrate;
pub mod compare;
pub mod drift;
pub mod evidence;
pub mod judge_skips;
pub mod rescore;
pub mod summary;

use std::path::Path;

use anyhow::Result;

use crate::format::result::ResultFile;
use crate::{fsio, jsnum};

/// Read a result or baseline file.
pub fn load_result(path: &Path) -> Result<ResultFile> {
    fsio::read_json(path)
}

/// Write a result file atomically, in the reference harness's layout.
pub fn write_result(path: &Path, result: &ResultFile) -> Result<()> {
    let bytes = jsnum::to_json_bytes(result)?;
    fsio::write_atomic(path, &bytes)
}

/// The first five of `items` joined by commas, with `, ...` when there are
/// more: how a message names the runs or tuples it is about.
pub fn first_few(items: &[String]) -> String {
    let shown: Vec<&str> = items.iter().take(5).map(String::as_str).collect();
    let more = if items.len() > shown.len() { ", ..." } else { "" };
    format!("{}{more}", shown.join(", "))
}
