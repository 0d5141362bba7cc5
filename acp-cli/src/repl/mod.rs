//! `acp-cli repl`.

/// The arguments of `acp-cli repl`.
#[derive(Clone, Debug, clap::Args)]
pub struct ReplArgs {
    /// The main agent's command line.
    #[arg(last = true, value_name = "AGENT")]
    pub agent: Vec<String>,
}

/// Runs the REPL; returns the exit status.
pub fn run(_args: ReplArgs) -> i32 {
    0
}
