//! `acp-cli bridge`: a stdio agent on the network.
//!
//! - [`listen`]: `bridge --listen ADDR -- AGENT…` serves `/acp` as `--acp --listen` does,
//!   each connection relayed to its own child agent process.

pub mod listen;

use std::process::ExitCode;

/// `acp-cli bridge --listen ADDR [network flags] -- AGENT [ARGS…]`.
#[derive(Debug, clap::Args)]
pub struct BridgeArgs {
    /// The flags of `--acp --listen`.
    #[command(flatten)]
    pub net: crate::serve::ListenArgs,
    /// The stdio agent each connection starts, with its arguments
    #[arg(last = true, required = true, value_name = "AGENT")]
    pub agent: Vec<String>,
}

/// Runs the bridge; the exit status (2 for a usage error).
pub fn run(args: BridgeArgs) -> ExitCode {
    if args.net.listen.is_none() {
        eprintln!("acp-cli: bridge needs --listen ADDR");
        return ExitCode::from(2);
    }
    listen::run(&args.net, args.agent)
}
