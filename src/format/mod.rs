//! Every file format vaultbench reads or writes, as serde types that mirror the
//! files exactly: tasks, results and baselines, and the judge calibration set.
//! Format compatibility with the reference harness lives here and nowhere else;
//! the stages that compute with these types are `suite`, `score` and `report`.

pub mod alternative;
pub mod calibration;
pub mod reference;
pub mod result;
pub mod task;

use std::fmt;

use serde::{Deserialize, Serialize};

/// A task's difficulty tier, T1 (canary) to T4 (hardest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Tier {
    T1,
    T2,
    T3,
    T4,
}

impl Tier {
    pub const ALL: [Tier; 4] = [Tier::T1, Tier::T2, Tier::T3, Tier::T4];

    pub fn as_str(self) -> &'static str {
        match self {
            Tier::T1 => "T1",
            Tier::T2 => "T2",
            Tier::T3 => "T3",
            Tier::T4 => "T4",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A matcher value: one string, or an array meaning any-of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    pub fn as_slice(&self) -> &[String] {
        match self {
            OneOrMany::One(s) => std::slice::from_ref(s),
            OneOrMany::Many(v) => v,
        }
    }
}

impl fmt::Display for OneOrMany {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OneOrMany::One(s) => write!(f, "{s:?}"),
            OneOrMany::Many(v) => {
                let parts: Vec<String> = v.iter().map(|s| format!("{s:?}")).collect();
                write!(f, "any of [{}]", parts.join(", "))
            }
        }
    }
}
