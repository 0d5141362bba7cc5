//! `acp-cli bridge`: ACP between stdio and the network, both ways.
//!
//! - [`listen`]: `bridge --listen ADDR -- AGENT…` serves `/acp` as `--acp --listen` does,
//!   each connection relayed to its own child agent process (R-NET-10).
//! - [`connect`]: `bridge --connect URL` is a stdio agent for an editor that forwards every
//!   message to a remote agent and back (R-NETC-7).

pub mod connect;
pub mod listen;

use std::process::ExitCode;

/// `acp-cli bridge --help`.
pub const ABOUT: &str = "\
Put ACP between stdio and the network, either way.

`acp-cli bridge --listen ADDR -- AGENT [ARGS...]` puts a stdio agent on the network: it serves
/acp at ADDR (WebSocket and Streamable HTTP, as `acp-cli --acp --listen` does, with the same
network flags) and starts one AGENT process per connection, relaying every message both ways
byte for byte. Loopback by default; any other address needs --token-file.

`acp-cli bridge --connect URL` is a stdio ACP agent for an editor: every line it reads on stdin
goes to the remote agent at URL as one message (ws:// or wss://: a WebSocket text frame; http://
or https://: Streamable HTTP), and every message the remote agent sends is written to stdout as
one line, byte for byte. The token for the remote agent comes from --token-file or the ACP_TOKEN
environment variable and is sent as `Authorization: Bearer`; it is never logged. It ends when
stdin ends (closing the remote connection; exit 0), or when the remote agent ends the connection
or cannot be reached (a one-line message on stderr; exit 1). SIGTERM and SIGINT close the remote
connection too (exit 128 + the signal). A bad URL or token file exits 2.";

/// `acp-cli bridge`'s arguments: `--listen` with the server's flags and an agent, or
/// `--connect` (which shares `--token-file`: the token clients must send, or the one to send).
#[derive(Debug, clap::Args)]
pub struct BridgeArgs {
    /// The flags of `--acp --listen`.
    #[command(flatten)]
    pub net: crate::serve::ListenArgs,
    /// Forward stdio to the remote agent at URL (ws://, wss://, http://, https://)
    #[arg(long, value_name = "URL", conflicts_with_all = ["listen", "allow_origin", "tls_cert", "tls_key", "agent"])]
    pub connect: Option<String>,
    /// With --listen: the stdio agent each connection starts, with its arguments
    #[arg(last = true, value_name = "AGENT")]
    pub agent: Vec<String>,
}

/// Runs the bridge; the exit status (2 for a usage error).
pub fn run(args: BridgeArgs) -> ExitCode {
    if let Some(url) = &args.connect {
        let code = connect::run(url, args.net.token_file.as_deref());
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    if args.net.listen.is_none() || args.agent.is_empty() {
        eprintln!(
            "acp-cli bridge: nothing to do; give --listen ADDR -- AGENT [ARGS...] or --connect URL"
        );
        return ExitCode::from(2);
    }
    listen::run(&args.net, args.agent)
}
