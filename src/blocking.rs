//! Blocking work (a tool call, waiting for a regex worker) from inside a
//! sweep's async tasks. On the multi-threaded runtime the worker thread is
//! handed over to the rest of the sweep while the work runs, so one run's
//! long tool call never holds up another run's model calls or timers; on a
//! single-threaded runtime (tests) or outside any runtime it simply runs.

use tokio::runtime::{Handle, RuntimeFlavor};

pub fn run<T>(work: impl FnOnce() -> T) -> T {
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(work),
        _ => work(),
    }
}
