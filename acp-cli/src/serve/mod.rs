//! `acp-cli --acp --listen ADDR`: the agent over the network (docs/network.md), WebSocket
//! and Streamable HTTP on `/acp`, HTTP/1.1, optionally under TLS.
//!
//! Each network connection gets its own agent application on the same pump as `--stdio`,
//! through an in-memory pipe of lines ([`link`]); sessions are saved as under `--stdio`, so
//! a session outlives its connection and another connection can `session/load` it.
//!
//! - [`listener`]: bind, TLS, the requests of one socket in turn.
//! - [`head`]: HTTP/1.1 request heads (sans-IO) and response heads; [`socket`]: their I/O.
//! - [`websocket`]: the upgrade and the frames.
//! - [`streamable`]: `POST`, SSE `GET` and `DELETE`.
//! - [`registry`]: connections by id, their streams, and the router of agent messages;
//!   [`route`]: which stream a message belongs on.
//! - [`auth`]: token, Origin, and which binds need a token.
//! - [`link`]: messages ↔ lines, bounded both ways.
//! - [`task`]: the one executor every task runs on.

pub(crate) mod auth;
pub mod head;
pub mod link;
pub(crate) mod listener;
pub(crate) mod registry;
pub(crate) mod route;
pub(crate) mod socket;
pub(crate) mod streamable;
pub(crate) mod task;
pub(crate) mod websocket;

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use smol::stream::StreamExt;

use registry::{Limits, Server};

/// Starts an agent on a pipe's agent side (an application, or a child process for the
/// bridge). The task runs detached; it ends when its input ends.
pub type SpawnAgent = Rc<dyn Fn(link::LineReader, link::MessageWriter)>;

/// Figures a test reads: the bound is asserted on these (R-NET-6).
#[derive(Debug, Default)]
pub struct Stats {
    /// The most messages any stream queue has held at once.
    pub stream_queue_peak: std::sync::atomic::AtomicUsize,
    /// Agents running now.
    pub agents: std::sync::atomic::AtomicUsize,
}

/// Messages one SSE stream holds for its client before the router waits (R-NET-6).
pub const STREAM_QUEUE: usize = 64;

/// Default `--max-body`: 16 MiB (R-NET-7).
pub const DEFAULT_MAX_BODY: usize = 16 * 1024 * 1024;

/// Default `--idle-timeout`, in seconds (R-NET-8).
pub const DEFAULT_IDLE_SECS: u64 = 600;

/// The SSE keepalive comment's period (R-NET-4).
pub const KEEPALIVE: Duration = Duration::from_secs(15);

/// How long agents get to save their sessions at SIGINT/SIGTERM.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The network flags of `--acp --listen` (and of `bridge --listen`).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ListenArgs {
    /// Serve ACP over the network at ADDR (with --acp): WebSocket and Streamable HTTP on /acp
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<SocketAddr>,
    /// With --listen: the bearer token clients must send (required off loopback)
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// With --listen: an Origin allowed to open a WebSocket (repeatable; default: loopback only)
    #[arg(long, value_name = "ORIGIN")]
    pub allow_origin: Vec<String>,
    /// With --listen: serve TLS with this certificate chain (PEM), with --tls-key
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// With --listen: the private key (PEM) of --tls-cert
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// With --listen: the largest request body or WebSocket message, in bytes
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BODY)]
    pub max_body: usize,
    /// With --listen: close a connection after this many seconds without a request or message
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_IDLE_SECS)]
    pub idle_timeout: u64,
}

impl ListenArgs {
    /// Whether a flag that needs --listen was given without it.
    pub fn stray_flag(&self) -> Option<&'static str> {
        if self.listen.is_some() {
            return None;
        }
        if self.token_file.is_some() {
            Some("--token-file")
        } else if !self.allow_origin.is_empty() {
            Some("--allow-origin")
        } else if self.tls_cert.is_some() {
            Some("--tls-cert")
        } else if self.max_body != DEFAULT_MAX_BODY {
            Some("--max-body")
        } else if self.idle_timeout != DEFAULT_IDLE_SECS {
            Some("--idle-timeout")
        } else {
            None
        }
    }
}

/// A server ready to bind: everything checked that can fail before it starts.
pub struct Prepared {
    addr: SocketAddr,
    gate: auth::Gate,
    limits: Limits,
    tls: Option<futures_rustls::TlsAcceptor>,
}

/// Checks the flags (R-NET-5: off loopback a token is required); the error is the usage
/// message (exit 2).
pub fn prepare(args: &ListenArgs) -> Result<Prepared, String> {
    let Some(addr) = args.listen else {
        return Err("--listen ADDR is required".into());
    };
    let token = match &args.token_file {
        Some(path) => Some(auth::read_token(path)?),
        None => None,
    };
    if token.is_none() && !addr.ip().is_loopback() {
        return Err(auth::token_required(&addr));
    }
    if args.idle_timeout == 0 {
        return Err("--idle-timeout must be at least 1 second".into());
    }
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(listener::tls_acceptor(cert, key)?),
        _ => None,
    };
    Ok(Prepared {
        addr,
        gate: auth::Gate {
            token,
            origins: args.allow_origin.clone(),
        },
        limits: Limits {
            max_body: args.max_body,
            idle_timeout: Duration::from_secs(args.idle_timeout),
            keepalive: KEEPALIVE,
        },
        tls,
    })
}

/// Serves until SIGINT or SIGTERM: prints `listening http(s)://ADDR/acp` on stdout once
/// bound, then ends every connection's input (their agents save their sessions) and returns.
/// `spawner` makes the function that starts one connection's agent. A bind that fails
/// returns its message.
pub fn run(
    prepared: Prepared,
    stats: Arc<Stats>,
    spawner: impl FnOnce(Arc<Stats>) -> SpawnAgent,
) -> Result<(), String> {
    let mut signals =
        async_signal::Signals::new([async_signal::Signal::Term, async_signal::Signal::Int])
            .map_err(|e| format!("signals: {e}"))?;
    let scheme = if prepared.tls.is_some() {
        "https"
    } else {
        "http"
    };
    let announce = move |bound: SocketAddr| {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "listening {scheme}://{bound}/acp");
        let _ = stdout.flush();
    };
    let stop = async move {
        signals.next().await;
    };
    run_until(prepared, stats, spawner, announce, stop)
}

/// [`run`] with its own announcement and stop: `bound` gets the address once listening;
/// the server shuts down when `stop` resolves. Runs on the calling thread.
pub fn run_until(
    prepared: Prepared,
    stats: Arc<Stats>,
    spawner: impl FnOnce(Arc<Stats>) -> SpawnAgent,
    bound: impl FnOnce(SocketAddr),
    stop: impl std::future::Future<Output = ()>,
) -> Result<(), String> {
    // Leaked: the executor lives as long as the process, so tasks can borrow it.
    let executor: &'static smol::LocalExecutor<'static> =
        Box::leak(Box::new(smol::LocalExecutor::new()));
    task::set_executor(executor);
    let spawn = spawner(Arc::clone(&stats));
    let Prepared {
        addr,
        gate,
        limits,
        tls,
    } = prepared;
    let server = Server::new(gate, limits, spawn, Arc::clone(&stats));
    smol::block_on(executor.run(async move {
        let listener = listener::bind(addr).await?;
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        tracing::info!(%local, tls = tls.is_some(), "listening");
        bound(local);
        let serving = listener::accept_all(Rc::clone(&server), listener, tls);
        smol::future::or(serving, stop).await;
        tracing::info!("shutting down: closing every connection");
        server.shut_down();
        let deadline = std::time::Instant::now() + SHUTDOWN_GRACE;
        while stats.agents.load(Ordering::Relaxed) > 0 && std::time::Instant::now() < deadline {
            smol::Timer::after(Duration::from_millis(20)).await;
        }
        Ok(())
    }))
}

/// The [`SpawnAgent`] of `--acp --listen`: each connection gets a fresh application made by
/// `make`, on the same driver as `--stdio`.
pub fn agent_spawner<B, F>(
    make: F,
    model: Rc<dyn crate::model::ModelClient>,
    log: crate::agent::logging::LogSink,
) -> impl FnOnce(Arc<Stats>) -> SpawnAgent
where
    B: crate::agent::backend::Backend + 'static,
    F: Fn() -> (B, crate::agent::sessions::SessionTable) + 'static,
{
    move |stats| {
        Rc::new(move |reader, writer| {
            let (backend, sessions) = make();
            let model = Rc::clone(&model);
            let log = log.clone();
            let stats = Arc::clone(&stats);
            stats.agents.fetch_add(1, Ordering::Relaxed);
            task::spawn_local(async move {
                crate::agent::driver::serve_pipe(
                    task::executor(),
                    backend,
                    sessions,
                    model,
                    &log,
                    reader,
                    writer,
                )
                .await;
                stats.agents.fetch_sub(1, Ordering::Relaxed);
            });
        })
    }
}
