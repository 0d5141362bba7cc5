//! `acp-cli bridge`: ACP between stdio and the network.
//!
//! - [`connect`]: `acp-cli bridge --connect URL` is a stdio agent for an editor that forwards
//!   every message to a remote agent and back (R-NETC-7).

pub mod connect;

use std::path::PathBuf;

/// `acp-cli bridge --help`.
pub const ABOUT: &str = "\
Put ACP between stdio and the network.

`acp-cli bridge --connect URL` is a stdio ACP agent for an editor: every line it reads on stdin
goes to the remote agent at URL as one message (ws:// or wss://: a WebSocket text frame; http://
or https://: Streamable HTTP), and every message the remote agent sends is written to stdout as
one line, byte for byte. The token for the remote agent comes from --token-file or the ACP_TOKEN
environment variable and is sent as `Authorization: Bearer`; it is never logged.

It ends when stdin ends (closing the remote connection; exit 0), or when the remote agent ends
the connection or cannot be reached (a one-line message on stderr; exit 1). SIGTERM and SIGINT
close the remote connection too (exit 128 + the signal). A bad URL or token file exits 2.";

/// `acp-cli bridge`'s arguments.
#[derive(Clone, Debug, clap::Args)]
pub struct BridgeArgs {
    /// Forward stdio to the remote agent at URL (ws://, wss://, http://, https://)
    #[arg(long, value_name = "URL")]
    pub connect: Option<String>,
    /// Read the bearer token from FILE (default: the ACP_TOKEN environment variable)
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
}

/// Runs the command; returns the exit status.
pub fn run(args: BridgeArgs) -> i32 {
    match &args.connect {
        Some(url) => connect::run(url, args.token_file.as_deref()),
        None => {
            eprintln!("acp-cli bridge: nothing to do; give --connect URL");
            2
        }
    }
}
