//! ACP agent peer on the official Rust SDK (`agent-client-protocol` 5): the demo subset of
//! `src/demo_agent.rs` (shared with the network peer), so our client can be tested against a
//! real SDK agent.
//!
//! Run: `peer-agent` (speaks ACP over stdin/stdout). `PEER_AGENT_FAULT=deny` makes every
//! /tool fail even when allowed: the self-check of the client peers (run-peers.sh).

#[path = "../demo_agent.rs"]
mod demo_agent;

use agent_client_protocol::{ConnectTo, Stdio};
use demo_agent::Identity;

#[tokio::main(flavor = "current_thread")]
async fn main() -> agent_client_protocol::Result<()> {
    let identity = Identity {
        name: "peer-agent-rust",
        title: "Rust SDK peer agent",
        session_prefix: "rust-session-",
    };
    let fault_deny = std::env::var("PEER_AGENT_FAULT").is_ok_and(|v| v == "deny");
    demo_agent::agent(identity, fault_deny)
        .connect_to(Stdio::new())
        .await
}
