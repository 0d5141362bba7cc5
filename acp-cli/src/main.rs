//! `acp-cli`: the Agent Client Protocol on real pipes.
//!
//! This binary is the I/O shell around `acp-core`; all protocol decisions live in the core.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The Agent Client Protocol (ACP v1) from the command line.
#[derive(Debug, Parser)]
#[command(name = "acp-cli", version, about, long_about = None, after_help = AFTER_HELP)]
struct Cli {
    /// Run as an ACP agent that editors launch (with --stdio)
    #[arg(long)]
    acp: bool,
    /// Speak ACP over stdin/stdout (with --acp)
    #[arg(long)]
    stdio: bool,
    #[command(flatten)]
    net: acp_cli::serve::ListenArgs,
    /// Resume a saved session with the first session/new: the latest in its cwd, or ID
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    resume: Option<String>,
    /// Log level or filter (error, warn, info, debug, trace, or RUST_LOG syntax); default: RUST_LOG, else info
    #[arg(long, value_name = "LEVEL")]
    log_level: Option<String>,
    /// Who answers prompts (with --acp --stdio): the scripted demo, or an OpenAI-compatible model
    #[arg(long, value_enum, value_name = "BACKEND")]
    backend: Option<BackendChoice>,
    /// The model for --backend llm: PROVIDER/MODEL or MODEL (default: <PROVIDER>_MODEL)
    #[arg(long, value_name = "PROVIDER/MODEL")]
    model: Option<String>,
    /// With --backend llm: most model answers with tool calls per prompt (then max_turn_requests)
    #[arg(long, value_name = "N")]
    max_tool_rounds: Option<u32>,
    /// Log the llm backend in: ask provider, base URL, model and key, check the key, store them
    #[arg(long, conflicts_with = "logout")]
    login: bool,
    /// Remove the llm backend's stored login
    #[arg(long)]
    logout: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

/// The agent backends `--backend` chooses from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum BackendChoice {
    /// Deterministic, driven by the prompt's text; needs no model (the default)
    Demo,
    /// An OpenAI-compatible Chat Completions server, configured from the environment
    Llm,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a scripted client against `acp-cli --acp --stdio` and print the exchange
    Demo,
    /// Drive one ACP agent through one prompt: `acp-cli client --prompt TEXT -- AGENT [ARGS...]`
    Client(acp_cli::client::command::ClientArgs),
    /// Run the conformance suite against any ACP agent: `acp-cli conform -- AGENT [ARGS...]`
    #[command(long_about = acp_cli::conform::ABOUT)]
    Conform(acp_cli::conform::ConformArgs),
    /// An interactive loop: a main agent, and the project agents of .agentao/acp.json
    Repl(acp_cli::repl::ReplArgs),
    /// Put ACP between stdio and the network: `bridge --listen ADDR -- AGENT…` or `bridge --connect URL`
    #[command(long_about = acp_cli::bridge::ABOUT)]
    Bridge(acp_cli::bridge::BridgeArgs),
    /// Record an editor ↔ agent exchange: `acp-cli trace --out FILE -- AGENT [ARGS...]`
    #[command(long_about = acp_cli::trace::TRACE_ABOUT)]
    Trace(acp_cli::trace::TraceArgs),
    /// Check a trace against the protocol: `LINE: RULE — SIDE: detail` per finding
    #[command(long_about = acp_cli::lint::ABOUT)]
    Lint(acp_cli::lint::LintArgs),
    /// Draw a trace as a self-contained HTML sequence diagram: `acp-cli view FILE [-o HTML]`
    #[command(long_about = acp_cli::view::ABOUT)]
    View(acp_cli::view::ViewArgs),
    /// Measure NDJSON decode throughput of a capture.
    #[command(long_about = BENCH_ABOUT)]
    Bench {
        /// The NDJSON capture: one JSON-RPC message per line.
        file: PathBuf,
        /// Print exactly one JSON object on stdout instead of the table.
        #[arg(long)]
        json: bool,
        /// Timed passes per path; each path is reported at its median pass.
        #[arg(long, default_value_t = acp_cli::bench::DEFAULT_PASSES)]
        passes: usize,
    },
}

const BENCH_ABOUT: &str = "\
Measure NDJSON decode throughput of a capture.

The file is read into memory once, then decoded several times (--passes) along three paths,
each reported at its median pass in MB/s (10^6 bytes) and messages/s:

  envelope  framing (lines out of 64 KiB reads, UTF-8 checked) + the JSON-RPC envelope scan,
            which validates the whole line and classifies it
  borrowed  the same + the borrowed, allocation-free view picked by the method (responses by
            the method of the request they answer), reading the text each message carries
  owned     the same + the owned typed decode picked by the method; a text chunk line in
            the form SDKs write it is checked and decoded in one pass instead

Also prints how many messages each method has (requests and notifications by method,
responses under \"(response)\"). Lines that are not JSON-RPC messages, or whose params or
result do not fit the method's type, are counted as invalid, never fatal.

With --json, prints exactly one JSON object: {\"file\", \"bytes\", \"messages\", \"invalid\",
\"passes\", \"paths\": {\"envelope\": {\"mb_per_s\", \"msg_per_s\"}, \"borrowed\": {...},
\"owned\": {...}}, \"methods\": {\"session/update\": N, ...}}.";

const AFTER_HELP: &str = "\
When stdout's reader goes away (`acp-cli demo | head`), any command stops quietly with exit
status 0; any other failed write to stdout prints `acp-cli: cannot write to stdout: <error>` and
exits 1.";

/// A process exit code from a subcommand's `i32` status.
fn exit_code(status: i32) -> ExitCode {
    ExitCode::from(u8::try_from(status).unwrap_or(1))
}

/// Refuses a bad combination of arguments the way Agentao does: a line on stderr, exit 2.
fn usage_error(message: &str) -> ExitCode {
    eprintln!("acp-cli: {message}");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    // One place decides how a failed write to stdout ends every command.
    acp_cli::stdout::exit_code(run())
}

fn run() -> ExitCode {
    let cli = Cli::parse();
    if cli.stdio && !cli.acp {
        return usage_error("--stdio requires --acp (no other transport mode uses stdio)");
    }
    let listening = cli.net.listen.is_some();
    if listening && !cli.acp {
        return usage_error("--listen requires --acp (`acp-cli --acp --listen ADDR`)");
    }
    if cli.acp && cli.stdio && listening {
        return usage_error("--stdio and --listen are two transports: choose one");
    }
    if cli.acp && !cli.stdio && !listening {
        return usage_error("--acp requires --stdio or --listen ADDR");
    }
    if let Some(flag) = cli.net.stray_flag() {
        return usage_error(&format!("{flag} requires --acp --listen ADDR"));
    }
    if cli.resume.is_some() && listening {
        return usage_error(
            "--resume requires --acp --stdio (each network connection starts fresh)",
        );
    }
    if cli.resume.is_some() && !cli.acp && !cli.login && !cli.logout {
        return usage_error("--resume requires --acp --stdio");
    }
    let flag = if cli.login { "--login" } else { "--logout" };
    if (cli.login || cli.logout) && cli.backend == Some(BackendChoice::Demo) {
        return usage_error(&format!(
            "{flag} is for --backend llm (the demo backend needs no login)"
        ));
    }
    if (cli.login || cli.logout) && (cli.resume.is_some() || cli.command.is_some()) {
        return usage_error(&format!(
            "{flag} runs alone or after the agent's own arguments (`acp-cli --acp --stdio --backend llm {flag}`)"
        ));
    }
    let llm = cli.backend == Some(BackendChoice::Llm) || cli.login || cli.logout;
    if cli.backend.is_some() && !cli.acp && !cli.login && !cli.logout {
        return usage_error("--backend requires --acp --stdio");
    }
    if cli.model.is_some() && !llm {
        return usage_error("--model requires --acp --stdio --backend llm");
    }
    if cli.max_tool_rounds.is_some() && !llm {
        return usage_error("--max-tool-rounds requires --acp --stdio --backend llm");
    }
    if cli.acp && cli.command.is_some() {
        return usage_error("--acp --stdio cannot be combined with a subcommand");
    }
    if cli.login || cli.logout {
        return login(&cli);
    }
    let filter = match acp_cli::agent::logging::filter(cli.log_level.as_deref()) {
        Ok(filter) => filter,
        Err(message) => return usage_error(&message),
    };
    if cli.acp {
        return agent(&cli, filter);
    }
    match cli.command {
        Some(Command::Demo) => acp_cli::demo::exchange::run(),
        Some(Command::Client(args)) => exit_code(acp_cli::client::command::run(args)),
        Some(Command::Conform(args)) => exit_code(acp_cli::conform::run(args)),
        Some(Command::Repl(args)) => exit_code(acp_cli::repl::run(args)),
        Some(Command::Bridge(args)) => acp_cli::bridge::run(args),
        Some(Command::Trace(args)) => exit_code(acp_cli::trace::run(args)),
        Some(Command::Lint(args)) => exit_code(acp_cli::lint::run(&args)),
        Some(Command::View(args)) => exit_code(acp_cli::view::run(&args)),
        Some(Command::Bench { file, json, passes }) => bench(&file, json, passes),
        None => usage_error("nothing to do; run `acp-cli --acp --stdio` or `acp-cli --help`"),
    }
}

/// `acp-cli [--acp --stdio --backend llm …] --login` or `--logout`: the llm backend's
/// terminal login (the `terminal` auth method's command) or its removal. Messages on stderr;
/// exit 0 on success, 1 with the reason otherwise.
fn login(cli: &Cli) -> ExitCode {
    use acp_cli::llm::login;
    let env: std::collections::HashMap<String, String> = std::env::vars().collect();
    let lookup = |name: &str| env.get(name).cloned();
    let file = acp_cli::llm::credentials::path(lookup);
    let done = if cli.login {
        login::login(&mut login::StdioPrompter, &lookup, file.as_deref()).map(drop)
    } else {
        login::logout(file.as_deref()).map(|text| eprintln!("{text}"))
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!(
                "acp-cli: {} failed: {message}",
                if cli.login { "login" } else { "logout" }
            );
            ExitCode::FAILURE
        }
    }
}

/// `acp-cli --acp --stdio [--backend demo|llm]`: the backend chosen, then the driver.
fn agent(cli: &Cli, filter: tracing_subscriber::EnvFilter) -> ExitCode {
    use acp_cli::agent::driver::{AgentOptions, run};
    use acp_cli::agent::sessions::SessionTable;
    use acp_cli::llm::credentials::{ConfigSource, SourcedModel, StoredLogin};
    use acp_cli::model::NoModel;
    use std::rc::Rc;

    // R-LLM-USAGE-2: a window that is not a number of tokens stops the agent at once.
    let window = match cli.backend {
        Some(BackendChoice::Llm) => {
            use acp_cli::llm::window::{WINDOW_VARIABLE, window_from_env};
            match window_from_env(std::env::var(WINDOW_VARIABLE).ok().as_deref()) {
                Ok(window) => window,
                Err(message) => return usage_error(&message),
            }
        }
        _ => None,
    };
    let config = match cli.backend {
        Some(BackendChoice::Llm) => {
            // The environment now, the credentials file at each look (R-AUTH-8).
            let source = ConfigSource::from_process(cli.model.clone());
            let config = match source.resolve() {
                Ok(config) => config,
                Err(message) => return usage_error(&format!("--model: {message}")),
            };
            let lookup = |name: &str| std::env::var(name).ok();
            match acp_cli::llm::images::from_env(lookup, &config.provider) {
                Ok(images) => Some((source, config, images)),
                Err(message) => return usage_error(&message),
            }
        }
        _ => None,
    };
    let log = acp_cli::agent::logging::init(filter);
    if cli.net.listen.is_some() {
        return listen(cli, config, window, log);
    }
    let options = AgentOptions {
        resume: cli.resume.clone(),
    };
    let ran = match config {
        Some((source, config, images)) => {
            tracing::info!(
                provider = config.provider.as_str(),
                model = config.model.as_str(),
                base_url = config.base_url.as_str(),
                key = config.api_key.is_some(),
                images,
                "llm backend"
            );
            let rounds = cli
                .max_tool_rounds
                .unwrap_or(acp_cli::llm::backend::DEFAULT_MAX_TOOL_ROUNDS);
            let backend = acp_cli::llm::backend::LlmBackend::new(config.model.clone(), rounds)
                .with_images(images)
                .with_login(StoredLogin::new(source.clone()))
                .with_context_window(window);
            let sessions = SessionTable::default().with_model(&config.provider, &config.model);
            run(
                backend,
                sessions,
                Rc::new(SourcedModel::new(source)),
                &options,
                &log,
            )
        }
        None => {
            let backend = acp_cli::demo::DemoBackend::new();
            run(
                backend,
                SessionTable::default(),
                Rc::new(NoModel),
                &options,
                &log,
            )
        }
    };
    match ran {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "agent failed");
            ExitCode::FAILURE
        }
    }
}

/// `acp-cli --acp --listen ADDR [--backend demo|llm]`: the same backends, one application
/// per network connection (docs/network.md).
fn listen(
    cli: &Cli,
    config: Option<(
        acp_cli::llm::credentials::ConfigSource,
        acp_cli::llm::config::ModelConfig,
        bool,
    )>,
    window: Option<u64>,
    log: acp_cli::agent::logging::LogSink,
) -> ExitCode {
    use acp_cli::agent::sessions::SessionTable;
    use acp_cli::llm::credentials::{SourcedModel, StoredLogin};
    use acp_cli::serve;
    use std::rc::Rc;

    let prepared = match serve::prepare(&cli.net) {
        Ok(prepared) => prepared,
        Err(message) => return usage_error(&message),
    };
    let stats = std::sync::Arc::default();
    let served = match config {
        Some((source, config, images)) => {
            let rounds = cli
                .max_tool_rounds
                .unwrap_or(acp_cli::llm::backend::DEFAULT_MAX_TOOL_ROUNDS);
            let model = Rc::new(SourcedModel::new(source.clone()));
            let make = move || {
                let backend = acp_cli::llm::backend::LlmBackend::new(config.model.clone(), rounds)
                    .with_images(images)
                    .with_login(StoredLogin::new(source.clone()))
                    .with_context_window(window);
                let sessions = SessionTable::default().with_model(&config.provider, &config.model);
                (backend, sessions)
            };
            serve::run(prepared, stats, serve::agent_spawner(make, model, log))
        }
        None => {
            let make = || (acp_cli::demo::DemoBackend::new(), SessionTable::default());
            let model = Rc::new(acp_cli::model::NoModel);
            serve::run(prepared, stats, serve::agent_spawner(make, model, log))
        }
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("acp-cli: {message}");
            ExitCode::FAILURE
        }
    }
}

fn bench(file: &std::path::Path, json: bool, passes: usize) -> ExitCode {
    let big = std::fs::metadata(file)
        .map(|m| m.len() >= acp_cli::bench::PROGRESS_BYTES as u64)
        .unwrap_or(false);
    let progress = |path: &str, pass: usize, passes: usize| {
        if big {
            eprint!("\racp-cli bench: {path} pass {pass}/{passes}   ");
            let _ = std::io::stderr().flush();
        }
    };
    match acp_cli::bench::run(file, passes, progress) {
        Ok(report) => {
            if big {
                eprintln!();
            }
            if json {
                acp_cli::stdout::print(format_args!("{}\n", report.to_json()));
            } else {
                acp_cli::stdout::print(format_args!("{report}"));
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("acp-cli bench: {error}");
            ExitCode::from(2)
        }
    }
}
