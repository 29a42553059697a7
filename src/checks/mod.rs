//! Task checks: what a maintainer writes about a task's answer and vault
//! (`evals/checks/<id>.toml`) and the matchers and assertions it compiles
//! to, in the task format the reference harness reads.
//!
//! This module owns the rules (how a number, a date or a name may be
//! spelled, what an answer line is) and their explanation in words. It does
//! no I/O: reading and writing the suite's files is `suite::compile`'s job,
//! and scoring a run against the compiled matchers is `score`'s.

pub mod compile;
pub mod explain;
pub mod legacy;
pub mod source;
pub mod spell;
