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

/// A baseline from its text, as it is read wherever it is shown (the site,
/// the history of blessings): parsed by the reader [`load_result`] uses,
/// refused when its judge verdicts were replayed offline (a self-check of
/// the harness, never a measurement), and its stored figures checked
/// against its runs (`aggregate::check_figures`). The error says why, for a
/// caller that names the file.
pub fn parse_checked(text: &str) -> Result<ResultFile, String> {
    let mut result: ResultFile = fsio::parse_json(text).map_err(|e| format!("not a result file: {e}"))?;
    if result.offline_judge {
        return Err("its judge verdicts come from the offline reference judge, a self-check of the harness, not \
                    a measurement of the model; it is never a published row"
            .into());
    }
    let diffs = aggregate::check_figures(&mut result);
    if !diffs.is_empty() {
        let shown: Vec<String> = diffs.iter().take(3).map(ToString::to_string).collect();
        let more = if diffs.len() > 3 { format!(" and {} more", diffs.len() - 3) } else { String::new() };
        return Err(format!(
            "its stored figures are not those its runs give ({}{more}; `vaultbench report` on the file lists each)",
            shown.join("; ")
        ));
    }
    Ok(result)
}

/// Write a result file atomically, in the reference harness's layout.
pub fn write_result(path: &Path, result: &ResultFile) -> Result<()> {
    let bytes = jsnum::to_json_bytes(result)?;
    fsio::write_atomic(path, &bytes)
}

/// `n` and the words for it: `one` when `n` is 1, `many` otherwise
/// ("1 task", "2 verdicts flip").
pub fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The first five of `items` joined by commas, with `, ...` when there are
/// more: how a message names the runs or tuples it is about.
pub fn first_few(items: &[String]) -> String {
    let shown: Vec<&str> = items.iter().take(5).map(String::as_str).collect();
    let more = if items.len() > shown.len() { ", ..." } else { "" };
    format!("{}{more}", shown.join(", "))
}
