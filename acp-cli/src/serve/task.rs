//! The server's one executor: every socket, agent and router is a task on it, on one thread
//! (the agent application is single-threaded, as under `--stdio`).

use std::cell::Cell;
use std::future::Future;

thread_local! {
    static EXECUTOR: Cell<Option<&'static smol::LocalExecutor<'static>>> = const { Cell::new(None) };
}

/// Sets the executor [`spawn_local`] uses on this thread.
pub(crate) fn set_executor(executor: &'static smol::LocalExecutor<'static>) {
    EXECUTOR.with(|e| e.set(Some(executor)));
}

/// The executor set on this thread.
///
/// # Panics
///
/// When none is set: the server sets it before it serves.
pub(crate) fn executor() -> &'static smol::LocalExecutor<'static> {
    EXECUTOR
        .with(Cell::get)
        .expect("the server's executor is set")
}

/// Runs `future` detached on the server's executor.
pub(crate) fn spawn_local(future: impl Future<Output = ()> + 'static) {
    executor().spawn(future).detach();
}
