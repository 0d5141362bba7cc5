//! ACP agent peer served over the network by the official Rust crate
//! `agent-client-protocol-http` (Streamable HTTP with SSE, and WebSocket, on `/acp`).
//!
//! Usage: `net-agent [--listen HOST:PORT] [--tcp-nodelay]` (default `127.0.0.1:0`). Once it accepts
//! connections it prints one stdout line `listening http://HOST:PORT/acp`, as
//! `acp-cli --acp --listen` does; the WebSocket is at `ws://HOST:PORT/acp`. It runs until
//! killed. Every connection gets its own agent (the crate's factory) with the logic of the stdio
//! peer, `tests/interop/rust/src/demo_agent.rs` (included here as a module): a subset of the
//! demo backend, with `/flood`, the notification-rate workload of `benches/net/`.

#[path = "../../../rust/src/demo_agent.rs"]
mod demo_agent;

use agent_client_protocol_http::AcpHttpServer;
use axum::serve::ListenerExt;
use demo_agent::Identity;

const IDENTITY: Identity = Identity {
    name: "net-agent-rust",
    title: "Rust SDK network peer agent",
    session_prefix: "rust-net-session-",
};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    // `--tcp-nodelay`: set TCP_NODELAY on accepted sockets. The crate's documented
    // `axum::serve(listener, router)` leaves Nagle's algorithm on, which costs a WebSocket
    // turn a delayed ACK (tens of ms); benches/net measures both.
    let nodelay = args.iter().any(|a| a == "--tcp-nodelay");
    args.retain(|a| a != "--tcp-nodelay");
    let listen = match args.as_slice() {
        [] => "127.0.0.1:0",
        [flag, addr] if flag == "--listen" => addr.as_str(),
        _ => {
            eprintln!("usage: net-agent [--listen HOST:PORT] [--tcp-nodelay]");
            return std::process::ExitCode::from(2);
        }
    };
    let listener = match tokio::net::TcpListener::bind(listen).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("net-agent: cannot listen on {listen}: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let address = listener
        .local_addr()
        .map_or_else(|_| listen.to_owned(), |a| a.to_string());
    println!("listening http://{address}/acp");
    let router = AcpHttpServer::new(|| demo_agent::agent(IDENTITY, false)).into_router();
    let served = if nodelay {
        let listener = listener.tap_io(|tcp| {
            // A socket that refuses the option is still served, with Nagle on.
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, router).await
    } else {
        axum::serve(listener, router).await
    };
    match served {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("net-agent: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
