//! The load stage: disk to typed inputs. Every file the site is built from
//! is read here and nowhere else: the configuration, the docs pages and
//! assets, the baselines with their evidence, the suite's catalog and the
//! pages' dates. It owns the caps on what is read and the rule for links in
//! the input folders, and it never writes.

pub mod baselines;
pub mod config;
pub mod content;
pub mod dates;
pub mod inputs;
