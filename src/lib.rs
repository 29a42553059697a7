//! vaultbench: agentic evaluation of LLMs working inside a notes vault.
//!
//! Data flows one way: task (`suite`) -> run evidence -> verdicts (`score`)
//! -> task results and aggregate (`report`) -> result file (`format`) ->
//! baseline -> published table. `main.rs` only parses arguments and prints.

pub mod agent;
pub mod blocking;
pub mod checks;
pub mod env;
pub mod format;
pub mod fsio;
pub mod history;
pub mod jsnum;
pub mod judge;
pub mod limits;
pub mod output;
pub mod pricing;
pub mod provider;
pub mod publish;
pub mod quotas;
pub mod report;
pub mod score;
pub mod stats;
pub mod suite;
pub mod sweep;
pub mod vault;
