//! `acp-cli conform --client`: the client suite (`acp_conform::client`) run against the
//! client's command line and printed the way the arguments ask.

use acp_conform::client::runner::{self, ClientOptions};
use acp_conform::client::{ClientRunError, cases};

use super::ConformArgs;

/// Runs the client suite; returns the exit status.
pub(super) fn run(args: &ConformArgs) -> i32 {
    let all = cases::all();
    if args.list {
        for case in all
            .iter()
            .filter(|c| acp_conform::runner::selected(&c.id(), args.only.as_deref()))
        {
            crate::stdout::print(format_args!(
                "{}  [{}] [{}]  {}\n",
                case.id(),
                case.rule,
                case.tier.word(),
                case.doc
            ));
        }
        return 0;
    }
    if args.agent.is_empty() {
        eprintln!(
            "acp-cli conform: no client given; run `acp-cli conform --client -- CLIENT [ARGS...] {{agent}}`"
        );
        return 2;
    }
    if !(args.timeout_scale.is_finite() && args.timeout_scale > 0.0) {
        eprintln!("acp-cli conform: --timeout-scale must be a positive number");
        return 2;
    }
    if args.chaos.is_some() {
        eprintln!("acp-cli conform: --chaos is not available with --client");
        return 2;
    }
    let exe = match std::env::current_exe() {
        Ok(exe) => exe.to_string_lossy().into_owned(),
        Err(e) => {
            eprintln!("acp-cli conform: cannot find this program's path: {e}");
            return 2;
        }
    };
    let relay = vec![
        exe,
        String::from("conform"),
        String::from("--scripted-agent"),
    ];
    let mut options = ClientOptions::new(args.agent.clone(), relay.clone());
    options.only = args.only.clone();
    options.timeout_scale = args.timeout_scale;
    if let Some(jobs) = args.jobs {
        options.jobs = jobs.max(1);
    }
    // A client that cannot take its agent's command is pointed at one fixed command.
    let shared = if runner::has_placeholder(&args.agent) {
        None
    } else {
        match runner::shared_port() {
            Ok(port) => Some(port),
            Err(e) => {
                eprintln!("acp-cli conform: cannot bind a loopback port: {e}");
                return 2;
            }
        }
    };
    if let Some((_, addr)) = &shared {
        let words: Vec<String> = runner::agent_command(&relay, runner::SHARED_TOKEN, addr)
            .iter()
            .map(|w| runner::shell_quote(w))
            .collect();
        eprintln!(
            "acp-cli conform: the client command has no {{agent}}; point the client at this agent command:\n  {}",
            words.join(" ")
        );
    }
    let Ok(mut junit) = super::create_junit(args.junit.as_ref()) else {
        return 2;
    };
    let json = args.json;
    let result = runner::run(
        &all,
        &options,
        shared.as_ref().map(|(l, a)| (l, a.as_str())),
        |case| {
            if !json {
                crate::stdout::print(format_args!("{}\n", runner::case_line(case)));
            }
        },
    );
    let report = match result {
        Ok(report) => report,
        Err(error @ (ClientRunError::Start(_) | ClientRunError::NoCases(_))) => {
            eprintln!("acp-cli conform: {error}");
            return 2;
        }
    };
    if json {
        crate::stdout::print(format_args!("{}\n", runner::to_json(&report)));
    } else {
        crate::stdout::print(format_args!("{}", runner::summary(&report)));
    }
    if let Some((path, file)) = &mut junit
        && let Err(e) = std::io::Write::write_all(file, runner::to_junit(&report).as_bytes())
    {
        eprintln!("acp-cli conform: cannot write {}: {e}", path.display());
        return 2;
    }
    report.exit_code()
}
