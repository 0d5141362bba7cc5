//! The `/acp` commands of the REPL: parsing, and the texts they print, as pure functions over
//! the [`Supervisor`] state (R-HOST-12).
//!
//! Texts are Agentao's where it documents them. Where it only names the parts of a line
//! (the server lines of `/acp list`, the fields of `/acp status <name>`), the layout is ours,
//! chosen to read well in plain text; colour is left to the terminal layer. Everything a server
//! wrote (descriptions come from the project, but errors, stderr and questions come from the
//! agent) is passed through [`sanitize`] before it is shown.
//!
//! Decisions where Agentao has a bug (R-HOST-8): `/acp cancel` names an unknown server as
//! unknown and reports a cancel with no turn running as a failure, instead of printing
//! success for both.

use std::fmt::{self, Write as _};

use acp_host::sanitize::sanitize;
use acp_host::supervisor::interaction::InteractionKind;
use acp_host::supervisor::{Instant, Supervisor, SupervisorError};

/// `/acp logs <name>` without a count shows this many lines.
pub(crate) const DEFAULT_LOG_LINES: usize = 50;

/// `/acp status <name>` shows at most this many stderr lines.
pub(crate) const STATUS_STDERR_LINES: usize = 5;

/// `/acp status <name>` cuts each question to this many characters.
pub(crate) const STATUS_PROMPT_CHARS: usize = 60;

/// The subcommands, in the order `Unknown subcommand` lists them.
pub(crate) const SUBCOMMANDS: [&str; 8] = [
    "list", "start", "stop", "restart", "send", "cancel", "status", "logs",
];

/// A parsed `/acp` command; names are as typed (checked against the config later).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcpCommand<'a> {
    /// `/acp`, `/acp list`, `/acp status`: the overview.
    List,
    /// `/acp start <name>`.
    Start(&'a str),
    /// `/acp stop <name>`.
    Stop(&'a str),
    /// `/acp restart <name>`.
    Restart(&'a str),
    /// `/acp send <name> <message>`.
    Send {
        /// The server.
        server: &'a str,
        /// The rest of the line, trimmed.
        message: &'a str,
    },
    /// `/acp cancel <name>`.
    Cancel(&'a str),
    /// `/acp status <name>`.
    Status(&'a str),
    /// `/acp logs <name> [lines]`.
    Logs {
        /// The server.
        server: &'a str,
        /// How many lines (default [`DEFAULT_LOG_LINES`]).
        lines: usize,
    },
}

/// A line that starts with `/acp` but is not a valid command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandError<'a> {
    /// A subcommand without its arguments: the usage line to print.
    Usage(&'static str),
    /// `/acp logs <name> <x>` where `x` is not a count of at least 1.
    InvalidLineCount(&'a str),
    /// A subcommand that does not exist.
    UnknownSubcommand(&'a str),
}

impl fmt::Display for CommandError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandError::Usage(usage) => f.write_str(usage),
            CommandError::InvalidLineCount(text) => write!(f, "Invalid line count: {text}"),
            CommandError::UnknownSubcommand(sub) => write!(
                f,
                "Unknown subcommand: {sub}\nAvailable: {}",
                SUBCOMMANDS.join(", ")
            ),
        }
    }
}

impl std::error::Error for CommandError<'_> {}

/// Usage of `/acp start`.
pub(crate) const USAGE_START: &str = "Usage: /acp start <name>";
/// Usage of `/acp stop`.
pub(crate) const USAGE_STOP: &str = "Usage: /acp stop <name>";
/// Usage of `/acp restart`.
pub(crate) const USAGE_RESTART: &str = "Usage: /acp restart <name>";
/// Usage of `/acp send`.
pub(crate) const USAGE_SEND: &str = "Usage: /acp send <name> <message>";
/// Usage of `/acp cancel`.
pub(crate) const USAGE_CANCEL: &str = "Usage: /acp cancel <name>";
/// Usage of `/acp logs`.
pub(crate) const USAGE_LOGS: &str = "Usage: /acp logs <name> [lines]";

/// Parses a REPL line. `None` if it is not an `/acp` command at all (`/acpx`, `/help`).
pub fn parse(line: &str) -> Option<Result<AcpCommand<'_>, CommandError<'_>>> {
    let rest = line.trim().strip_prefix("/acp")?;
    if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let (sub, args) = split_word(rest);
    let (name, tail) = split_word(args);
    Some(match sub {
        "" | "list" => Ok(AcpCommand::List),
        "status" if name.is_empty() => Ok(AcpCommand::List),
        "status" => Ok(AcpCommand::Status(name)),
        "start" => named(name, AcpCommand::Start, USAGE_START),
        "stop" => named(name, AcpCommand::Stop, USAGE_STOP),
        "restart" => named(name, AcpCommand::Restart, USAGE_RESTART),
        "cancel" => named(name, AcpCommand::Cancel, USAGE_CANCEL),
        "send" if name.is_empty() || tail.is_empty() => Err(CommandError::Usage(USAGE_SEND)),
        "send" => Ok(AcpCommand::Send {
            server: name,
            message: tail,
        }),
        "logs" if name.is_empty() => Err(CommandError::Usage(USAGE_LOGS)),
        "logs" => {
            let (count, _) = split_word(tail);
            match count {
                "" => Ok(AcpCommand::Logs {
                    server: name,
                    lines: DEFAULT_LOG_LINES,
                }),
                count => match count.parse::<usize>() {
                    Ok(lines @ 1..) => Ok(AcpCommand::Logs {
                        server: name,
                        lines,
                    }),
                    _ => Err(CommandError::InvalidLineCount(count)),
                },
            }
        }
        other => Err(CommandError::UnknownSubcommand(other)),
    })
}

/// `command(name)`, or the usage error without a name.
fn named<'a>(
    name: &'a str,
    command: impl FnOnce(&'a str) -> AcpCommand<'a>,
    usage: &'static str,
) -> Result<AcpCommand<'a>, CommandError<'a>> {
    if name.is_empty() {
        Err(CommandError::Usage(usage))
    } else {
        Ok(command(name))
    }
}

/// The first whitespace-separated word and the trimmed rest.
fn split_word(text: &str) -> (&str, &str) {
    let text = text.trim_start();
    match text.find(char::is_whitespace) {
        Some(at) => (&text[..at], text[at..].trim()),
        None => (text, ""),
    }
}

/// `Failed to load ACP config: <error>`.
pub fn load_failed(error: &dyn fmt::Display) -> String {
    format!("Failed to load ACP config: {error}")
}

/// `Unknown ACP server: <name>`.
pub(crate) fn unknown_server(name: &str) -> String {
    format!("Unknown ACP server: {}", sanitize(name))
}

/// `ACP server '<name>' started.`
pub(crate) fn started(name: &str) -> String {
    format!("ACP server '{name}' started.")
}

/// `Failed to start '<name>': <error>`.
pub(crate) fn failed_to_start(name: &str, error: &str) -> String {
    format!("Failed to start '{name}': {}", sanitize(error))
}

/// `ACP server '<name>' stopped.`
pub(crate) fn stopped(name: &str) -> String {
    format!("ACP server '{name}' stopped.")
}

/// `ACP server '<name>' restarted.`
pub(crate) fn restarted(name: &str) -> String {
    format!("ACP server '{name}' restarted.")
}

/// What `/acp cancel <name>` prints for the supervisor's answer to `CancelTurn`.
pub(crate) fn cancel_outcome(name: &str, result: &Result<(), SupervisorError>) -> String {
    match result {
        Ok(()) => format!("Cancel sent to '{name}'."),
        Err(SupervisorError::UnknownServer(_)) => unknown_server(name),
        Err(error) => format!("Cancel failed: {error}"),
    }
}

/// `/acp` and `/acp list`: the header, the inbox and question counts when non-zero, and one
/// line per server (`  ● <name>  <state>  pid=<pid>  <description>  ⏳ <n> interaction(s)`,
/// the optional parts left out when empty), each followed by `    last error: <error>` if it
/// has one. Rejected config entries follow, one `  ✗ <problem>` line each.
pub(crate) fn render_list<T>(supervisor: &mut Supervisor<T>, rejected: &[String]) -> String {
    let total = supervisor.servers().count();
    if total == 0 && rejected.is_empty() {
        return String::from("No ACP servers configured.\nAdd servers to .agentao/acp.json");
    }
    let (running, total) = supervisor.running_count();
    let mut out = format!("ACP Servers ({running}/{total} running):");
    let queued = supervisor.inbox().len();
    if queued > 0 {
        let _ = write!(out, "\nInbox: {queued} queued");
    }
    let pending = supervisor.interactions().len();
    if pending > 0 {
        let _ = write!(out, "\nPending interactions: {pending}");
    }
    for (config, lifecycle) in supervisor.servers() {
        let _ = write!(out, "\n  ● {}  {}", config.name, lifecycle.state());
        if let Some(pid) = lifecycle.pid() {
            let _ = write!(out, "  pid={pid}");
        }
        if !config.description.is_empty() {
            let _ = write!(out, "  {}", sanitize(&config.description));
        }
        let questions = supervisor.interactions().pending_for(&config.name).count();
        if questions > 0 {
            let _ = write!(out, "  ⏳ {questions} interaction(s)");
        }
        if let Some(error) = lifecycle.last_error() {
            let _ = write!(out, "\n    last error: {}", sanitize(error));
        }
    }
    for problem in rejected {
        let _ = write!(out, "\n  ✗ {}", sanitize(problem));
    }
    out
}

/// What the connection glue knows about a server's client, for `/acp status <name>`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientView {
    /// The open session.
    pub session_id: Option<String>,
    /// The protocol version the server answered.
    pub protocol_version: u16,
}

/// `/acp status <name>`: `State`, `PID` (`—` without a process), `Description` (`—` if
/// empty), `Last error` and `Last activity: <n>s ago` when known, the client's `Session ID`,
/// `Protocol: v<n>` and `Busy` when a client exists, the pending questions
/// (`  [<id>] <kind>: <first 60 characters>`) and the last stderr lines
/// (`Recent stderr (<k> of last 5):`) when there are any. `Unknown ACP server: <name>` for a
/// name not configured.
pub(crate) fn render_status<T>(
    supervisor: &Supervisor<T>,
    name: &str,
    now: Instant,
    last_activity: Option<Instant>,
    client: Option<&ClientView>,
) -> String {
    let (Some(config), Some(lifecycle)) = (supervisor.config(name), supervisor.server(name)) else {
        return unknown_server(name);
    };
    let mut out = format!("ACP server '{name}'\nState: {}", lifecycle.state());
    match lifecycle.pid() {
        Some(pid) => {
            let _ = write!(out, "\nPID: {pid}");
        }
        None => out.push_str("\nPID: —"),
    }
    if config.description.is_empty() {
        out.push_str("\nDescription: —");
    } else {
        let _ = write!(out, "\nDescription: {}", sanitize(&config.description));
    }
    if let Some(error) = lifecycle.last_error() {
        let _ = write!(out, "\nLast error: {}", sanitize(error));
    }
    if let Some(at) = last_activity {
        let _ = write!(out, "\nLast activity: {}s ago", now.ms_since(at) / 1000);
    }
    if let Some(client) = client {
        let session = client.session_id.as_deref().unwrap_or("—");
        let _ = write!(
            out,
            "\nSession ID: {}\nProtocol: v{}\nBusy: {}",
            sanitize(session),
            client.protocol_version,
            lifecycle.has_active_turn()
        );
    }
    let questions: Vec<_> = supervisor.interactions().pending_for(name).collect();
    if !questions.is_empty() {
        let _ = write!(out, "\nPending interactions ({}):", questions.len());
        for question in questions {
            let kind = match question.kind {
                InteractionKind::Permission => "permission",
                InteractionKind::Input => "input",
            };
            let prompt: String = question.prompt.chars().take(STATUS_PROMPT_CHARS).collect();
            let _ = write!(out, "\n  [{}] {kind}: {}", question.id, sanitize(&prompt));
        }
    }
    let stderr: Vec<&str> = lifecycle.stderr().tail(STATUS_STDERR_LINES).collect();
    if !stderr.is_empty() {
        let _ = write!(
            out,
            "\nRecent stderr ({} of last {STATUS_STDERR_LINES}):",
            stderr.len()
        );
        for line in stderr {
            let _ = write!(out, "\n  {}", sanitize(line));
        }
    }
    out
}

/// `/acp logs <name> [n]`: `Stderr log for '<name>' (last <k> lines):` and the lines (k is
/// how many are shown, at most n), or `No stderr output from '<name>'.`, or
/// `Unknown ACP server: <name>`.
pub(crate) fn render_logs<T>(supervisor: &Supervisor<T>, name: &str, lines: usize) -> String {
    let Some(lifecycle) = supervisor.server(name) else {
        return unknown_server(name);
    };
    let tail: Vec<&str> = lifecycle.stderr().tail(lines).collect();
    if tail.is_empty() {
        return format!("No stderr output from '{name}'.");
    }
    let mut out = format!("Stderr log for '{name}' (last {} lines):", tail.len());
    for line in tail {
        let _ = write!(out, "\n{}", sanitize(line));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use acp_host::supervisor::config::AcpConfig;
    use acp_host::supervisor::interaction::InteractionKind;
    use acp_host::supervisor::lifecycle::{Input, Refusal};

    const CONFIG: &str = r#"{"servers": {
        "planner": {"command": "node", "args": [], "env": {}, "cwd": ".",
                    "description": "Planning agent"},
        "reviewer": {"command": "python", "args": [], "env": {}, "cwd": "."}
    }}"#;

    fn supervisor() -> Supervisor<()> {
        let config = AcpConfig::parse(CONFIG, ".agentao/acp.json", |_| None).unwrap();
        Supervisor::new(&config, 0)
    }

    fn parsed(line: &str) -> Result<AcpCommand<'_>, CommandError<'_>> {
        parse(line).expect("an /acp line")
    }

    fn error_text(line: &str) -> String {
        parsed(line).unwrap_err().to_string()
    }

    /// planner spawned (pid 42) and ready.
    fn ready_planner(s: &mut Supervisor<()>) {
        s.handle(Instant(0), "planner", Input::Start).unwrap();
        s.handle(Instant(0), "planner", Input::Spawned { pid: 42 })
            .unwrap();
        s.handle(Instant(0), "planner", Input::HandshakeOk).unwrap();
        while s.poll_action().is_some() {}
    }

    #[test]
    fn parse_every_subcommand() {
        assert_eq!(parsed("/acp"), Ok(AcpCommand::List));
        assert_eq!(parsed("  /acp list  "), Ok(AcpCommand::List));
        assert_eq!(parsed("/acp status"), Ok(AcpCommand::List));
        assert_eq!(
            parsed("/acp status planner"),
            Ok(AcpCommand::Status("planner"))
        );
        assert_eq!(
            parsed("/acp start planner"),
            Ok(AcpCommand::Start("planner"))
        );
        assert_eq!(parsed("/acp stop planner"), Ok(AcpCommand::Stop("planner")));
        assert_eq!(parsed("/acp restart a"), Ok(AcpCommand::Restart("a")));
        assert_eq!(parsed("/acp cancel a"), Ok(AcpCommand::Cancel("a")));
        assert_eq!(
            parsed("/acp send planner  review  the diff "),
            Ok(AcpCommand::Send {
                server: "planner",
                message: "review  the diff"
            })
        );
        assert_eq!(
            parsed("/acp logs planner"),
            Ok(AcpCommand::Logs {
                server: "planner",
                lines: 50
            })
        );
        assert_eq!(
            parsed("/acp logs planner 100"),
            Ok(AcpCommand::Logs {
                server: "planner",
                lines: 100
            })
        );
    }

    #[test]
    fn not_an_acp_command() {
        assert_eq!(parse("/acpx"), None);
        assert_eq!(parse("/help"), None);
        assert_eq!(parse("hello /acp"), None);
    }

    #[test]
    fn usage_errors_exact_text() {
        assert_eq!(error_text("/acp start"), "Usage: /acp start <name>");
        assert_eq!(error_text("/acp stop"), "Usage: /acp stop <name>");
        assert_eq!(error_text("/acp restart"), "Usage: /acp restart <name>");
        assert_eq!(error_text("/acp cancel"), "Usage: /acp cancel <name>");
        assert_eq!(error_text("/acp send"), "Usage: /acp send <name> <message>");
        assert_eq!(
            error_text("/acp send planner"),
            "Usage: /acp send <name> <message>"
        );
        assert_eq!(error_text("/acp logs"), "Usage: /acp logs <name> [lines]");
    }

    #[test]
    fn invalid_line_count_exact_text() {
        assert_eq!(error_text("/acp logs planner x"), "Invalid line count: x");
        assert_eq!(error_text("/acp logs planner 0"), "Invalid line count: 0");
        assert_eq!(error_text("/acp logs planner -3"), "Invalid line count: -3");
    }

    #[test]
    fn unknown_subcommand_exact_text() {
        assert_eq!(
            error_text("/acp frobnicate x"),
            "Unknown subcommand: frobnicate\nAvailable: list, start, stop, restart, send, cancel, status, logs"
        );
    }

    #[test]
    fn list_with_no_servers() {
        let config = AcpConfig::default();
        let mut s: Supervisor<()> = Supervisor::new(&config, 0);
        assert_eq!(
            render_list(&mut s, &[]),
            "No ACP servers configured.\nAdd servers to .agentao/acp.json"
        );
    }

    #[test]
    fn list_of_configured_servers() {
        let mut s = supervisor();
        assert_eq!(
            render_list(&mut s, &[]),
            "ACP Servers (0/2 running):\n  ● planner  configured  Planning agent\n  ● reviewer  configured"
        );
    }

    #[test]
    fn list_with_pid_questions_inbox_and_error() {
        let mut s = supervisor();
        ready_planner(&mut s);
        s.open_interaction(
            Instant(0),
            "planner",
            None,
            InteractionKind::Permission,
            "Allow x?",
            (),
        )
        .unwrap();
        s.handle(Instant(0), "reviewer", Input::Start).unwrap();
        s.handle(
            Instant(0),
            "reviewer",
            Input::SpawnFailed {
                error: "No such file or directory (os error 2)",
            },
        )
        .unwrap();
        s.inbox().push(acp_host::supervisor::inbox::InboxMessage {
            server: "planner".into(),
            session_id: None,
            kind: acp_host::supervisor::inbox::MessageKind::Notification,
            update_kind: None,
            text: "hi".into(),
            at: Instant(0),
        });
        assert_eq!(
            render_list(&mut s, &[]),
            "ACP Servers (1/2 running):\n\
             Inbox: 1 queued\n\
             Pending interactions: 1\n  \
             ● planner  waiting_for_user  pid=42  Planning agent  ⏳ 1 interaction(s)\n  \
             ● reviewer  failed\n    \
             last error: acp server 'reviewer': failed to start: No such file or directory (os error 2)"
        );
    }

    #[test]
    fn list_shows_rejected_entries() {
        let mut s = supervisor();
        let rejected = [String::from(
            "server 'a': missing required field(s): command",
        )];
        assert_eq!(
            render_list(&mut s, &rejected),
            "ACP Servers (0/2 running):\n  ● planner  configured  Planning agent\n  ● reviewer  configured\n  ✗ server 'a': missing required field(s): command"
        );
    }

    #[test]
    fn status_of_an_idle_server() {
        let s = supervisor();
        assert_eq!(
            render_status(&s, "reviewer", Instant(0), None, None),
            "ACP server 'reviewer'\nState: configured\nPID: —\nDescription: —"
        );
    }

    #[test]
    fn status_of_a_busy_server_with_everything() {
        let mut s = supervisor();
        ready_planner(&mut s);
        s.handle(Instant(0), "planner", Input::StderrLine("booting"))
            .unwrap();
        s.handle(Instant(0), "planner", Input::StderrLine("ready \u{1b}[31m"))
            .unwrap();
        s.handle(Instant(0), "planner", Input::PromptStarted)
            .unwrap();
        let long = "q".repeat(70);
        let id = s
            .open_interaction(
                Instant(0),
                "planner",
                Some("s1"),
                InteractionKind::Input,
                &long,
                (),
            )
            .unwrap();
        let client = ClientView {
            session_id: Some("sess-1".into()),
            protocol_version: 1,
        };
        let expected = format!(
            "ACP server 'planner'\nState: waiting_for_user\nPID: 42\nDescription: Planning agent\n\
             Last activity: 3s ago\nSession ID: sess-1\nProtocol: v1\nBusy: true\n\
             Pending interactions (1):\n  [{id}] input: {}\n\
             Recent stderr (2 of last 5):\n  booting\n  ready [31m",
            "q".repeat(60)
        );
        assert_eq!(
            render_status(
                &s,
                "planner",
                Instant(5_500),
                Some(Instant(2_000)),
                Some(&client)
            ),
            expected
        );
    }

    #[test]
    fn status_shows_last_error_and_only_five_stderr_lines() {
        let mut s = supervisor();
        for i in 0..7 {
            s.handle(
                Instant(0),
                "reviewer",
                Input::StderrLine(&format!("line {i}")),
            )
            .unwrap();
        }
        s.handle(Instant(0), "reviewer", Input::Start).unwrap();
        s.handle(Instant(0), "reviewer", Input::SpawnFailed { error: "bad" })
            .unwrap();
        assert_eq!(
            render_status(&s, "reviewer", Instant(0), None, None),
            "ACP server 'reviewer'\nState: failed\nPID: —\nDescription: —\n\
             Last error: acp server 'reviewer': failed to start: bad\n\
             Recent stderr (5 of last 5):\n  line 2\n  line 3\n  line 4\n  line 5\n  line 6"
        );
    }

    #[test]
    fn status_of_unknown_server() {
        let s = supervisor();
        assert_eq!(
            render_status(&s, "nope", Instant(0), None, None),
            "Unknown ACP server: nope"
        );
    }

    #[test]
    fn logs_texts() {
        let mut s = supervisor();
        assert_eq!(
            render_logs(&s, "planner", 50),
            "No stderr output from 'planner'."
        );
        for line in ["one", "two", "three"] {
            s.handle(Instant(0), "planner", Input::StderrLine(line))
                .unwrap();
        }
        assert_eq!(
            render_logs(&s, "planner", 50),
            "Stderr log for 'planner' (last 3 lines):\none\ntwo\nthree"
        );
        assert_eq!(
            render_logs(&s, "planner", 2),
            "Stderr log for 'planner' (last 2 lines):\ntwo\nthree"
        );
        assert_eq!(render_logs(&s, "nope", 5), "Unknown ACP server: nope");
    }

    #[test]
    fn one_line_outcomes() {
        assert_eq!(started("a"), "ACP server 'a' started.");
        assert_eq!(stopped("a"), "ACP server 'a' stopped.");
        assert_eq!(restarted("a"), "ACP server 'a' restarted.");
        assert_eq!(unknown_server("a"), "Unknown ACP server: a");
        assert_eq!(
            failed_to_start("a", "acp server 'a': failed to start: boom"),
            "Failed to start 'a': acp server 'a': failed to start: boom"
        );
        assert_eq!(
            load_failed(&"invalid JSON in x: EOF"),
            "Failed to load ACP config: invalid JSON in x: EOF"
        );
    }

    #[test]
    fn cancel_texts() {
        assert_eq!(cancel_outcome("a", &Ok(())), "Cancel sent to 'a'.");
        assert_eq!(
            cancel_outcome("x", &Err(SupervisorError::UnknownServer("x".into()))),
            "Unknown ACP server: x"
        );
        assert_eq!(
            cancel_outcome(
                "a",
                &Err(SupervisorError::Refused(Refusal::NoActiveTurn {
                    server: "a".into()
                }))
            ),
            "Cancel failed: server 'a' has no active turn"
        );
    }

    #[test]
    fn cancel_of_an_idle_server_through_the_supervisor() {
        let mut s = supervisor();
        let result = s.handle(Instant(0), "planner", Input::CancelTurn);
        assert_eq!(
            cancel_outcome("planner", &result),
            "Cancel failed: server 'planner' has no active turn"
        );
        let result = s.handle(Instant(0), "ghost", Input::CancelTurn);
        assert_eq!(
            cancel_outcome("ghost", &result),
            "Unknown ACP server: ghost"
        );
    }
}
