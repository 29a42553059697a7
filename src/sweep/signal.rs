//! Ctrl-C and SIGTERM: a sweep stops dispatching, cancels what is in flight
//! and saves what finished. `main` maps the signal to exit 130 or 143.

/// Which signal stopped a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    /// SIGINT (Ctrl-C): exit 130.
    Int,
    /// SIGTERM: exit 143.
    Term,
}

impl Interrupt {
    pub fn exit_code(self) -> u8 {
        match self {
            Interrupt::Int => 130,
            Interrupt::Term => 143,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Interrupt::Int => "SIGINT",
            Interrupt::Term => "SIGTERM",
        }
    }
}

/// Resolves at the first SIGINT or SIGTERM. The handlers are installed when
/// this is called (inside the runtime), not when the future is first polled,
/// so a signal that arrives in between is not lost.
#[cfg(unix)]
pub fn listen() -> impl std::future::Future<Output = Interrupt> + Send {
    use tokio::signal::unix::{SignalKind, signal};
    let int = signal(SignalKind::interrupt()).ok();
    let term = signal(SignalKind::terminate()).ok();
    async move {
        // A handler that could not be installed never fires.
        let wait = |s: Option<tokio::signal::unix::Signal>| async move {
            match s {
                Some(mut s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            () = wait(int) => Interrupt::Int,
            () = wait(term) => Interrupt::Term,
        }
    }
}

#[cfg(not(unix))]
pub fn listen() -> impl std::future::Future<Output = Interrupt> + Send {
    async {
        match tokio::signal::ctrl_c().await {
            Ok(()) => Interrupt::Int,
            Err(_) => std::future::pending().await,
        }
    }
}
