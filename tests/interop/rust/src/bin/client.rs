//! ACP client peer on the official Rust SDK (`agent-client-protocol` 5).
//!
//! Usage: `peer-client -- AGENT [ARGS...]`
//!        `peer-client --prompt TEXT -- AGENT [ARGS...]`
//!
//! Runs AGENT as a child process and drives it over stdio through the scenario of
//! `src/scenario_client.rs` (shared with the network peer): `ok <step>` per step,
//! `FAIL <step>: <why>` on the first failure (exit 1), and `N passed, 0 failed` at the end.
//! A global 30 s timeout exits 1.
//!
//! With `--prompt TEXT` it sends that one prompt instead, in a session whose cwd is
//! the current directory, for any backend (the llm backend's tests): see
//! tests/interop/README.md, "One prompt".

#[path = "../scenario_client.rs"]
mod scenario_client;

use std::process::ExitCode;

use agent_client_protocol::{AcpAgent, AcpAgentConfig, LineDirection};
use scenario_client::{Identity, Mode};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut mode = Mode::Scenario;
    if args.len() >= 2 && args[0] == "--prompt" {
        mode = Mode::Prompt(args[1].clone());
        args.drain(..2);
    }
    if args.first().map(String::as_str) == Some("--") {
        args.remove(0);
    }
    if args.is_empty() {
        eprintln!("usage: peer-client [--prompt TEXT] -- AGENT [ARGS...]");
        return ExitCode::from(2);
    }
    let config = AcpAgentConfig::new(&args[0]).args(args[1..].iter().cloned());
    // The SDK pipes the agent's stderr; pass it through so failures are visible.
    let transport = AcpAgent::new(config).with_debug(|line, direction| {
        if direction == LineDirection::Stderr {
            eprintln!("{line}");
        }
    });
    let identity = Identity {
        name: "peer-client-rust",
        title: "Rust SDK peer client",
    };
    scenario_client::drive(transport, identity, mode).await
}
