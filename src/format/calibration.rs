//! The judge calibration set (`evals/calibration/judge-calibration.json`):
//! answers to tasks, each with a judge criterion and a human YES/NO label.
//! Tuples come either from a sweep (with the verdict its judge recorded) or
//! from the suite's alternative-answer corpus (no judge ran, so no recorded
//! verdict; the label is known from how the answer was written).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationFile {
    pub version: u32,
    pub generated_at: String,
    pub source: CalibrationSource,
    pub tuples: Vec<CalibrationTuple>,
}

/// The sweep the tuples were extracted from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationSource {
    pub run_id: Option<String>,
    pub git_sha: Option<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationTuple {
    /// `<task_id>::<run number from 1>::<matcher index from 0>` from a sweep;
    /// `<task_id>::<alternative name or "reference">::<matcher index>` from the corpus.
    pub id: String,
    pub task_id: String,
    pub user_message: String,
    pub criteria: String,
    pub response: String,
    /// The verdict the sweep's judge recorded; `None` (null) for a tuple
    /// that no judge has seen, such as one built from the corpus.
    #[serde(default)]
    pub automated_verdict: Option<bool>,
    /// Set when the recorded judge did not really judge (no key, API error).
    pub judge_error: Option<String>,
    pub human_label: Option<HumanLabel>,
}

/// A yes or no, written `YES`/`NO` (what the format writes) or in any
/// other case (`yes`, `No`): what a person labelling answers types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HumanLabel {
    #[serde(rename = "YES", alias = "yes", alias = "Yes")]
    Yes,
    #[serde(rename = "NO", alias = "no", alias = "No")]
    No,
}

impl HumanLabel {
    pub fn is_yes(self) -> bool {
        self == HumanLabel::Yes
    }
}
