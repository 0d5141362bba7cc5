//! The demo turn's script: the prompt's text blocks read line by line (R-DEMO-1).
//!
//! A line starting with `/` is a command; runs of other lines are plain text, echoed back.
//! Parsing never fails: a command with bad arguments becomes [`Command::BadArguments`], an unknown
//! one [`Command::Unknown`], and both are answered with a message when the turn reaches them.
//!
//! Arguments are taken verbatim: the command name ends at the first space, and everything
//! after that one space is the argument (`/write PATH TEXT` splits once more at the next
//! space). So `/echo  two` echoes ` two` and `/write a.txt x ` writes `x `.

use acp_core::machine::turn::StopReason;
use acp_core::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, ContentBlock, NoticeSeverity,
    SessionUpdate, ToolKind,
};

/// One demo command as the user is told about it: in the unknown-command answer and in the
/// `available_commands_update` editors show when the user types `/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommandSpec {
    /// The name, without the slash.
    pub name: &'static str,
    /// The arguments it takes (empty: none); also the input hint.
    pub args: &'static str,
    /// What it does, in one line.
    pub description: &'static str,
}

impl CommandSpec {
    /// The command as typed: `/name ARGS`.
    pub(crate) fn usage(&self) -> String {
        if self.args.is_empty() {
            format!("/{}", self.name)
        } else {
            format!("/{} {}", self.name, self.args)
        }
    }
}

/// Every command, in the order it is listed to the user.
pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        name: "echo",
        args: "TEXT",
        description: "Send TEXT back as one message chunk",
    },
    CommandSpec {
        name: "think",
        args: "TEXT",
        description: "Send TEXT as one thought chunk",
    },
    CommandSpec {
        name: "plan",
        args: "A | B | C",
        description: "Send a plan with these entries, all pending",
    },
    CommandSpec {
        name: "tool",
        args: "KIND TITLE",
        description: "A pretend tool call that asks for permission first",
    },
    CommandSpec {
        name: "read",
        args: "PATH",
        description: "Read a file inside the session and report its size",
    },
    CommandSpec {
        name: "write",
        args: "PATH TEXT",
        description: "Write exactly TEXT to a file inside the session, after asking",
    },
    CommandSpec {
        name: "ask",
        args: "QUESTION",
        description: "Ask the user a question and echo the answer",
    },
    CommandSpec {
        name: "sleep",
        args: "MS",
        description: "Wait MS milliseconds; a cancel ends the wait at once",
    },
    CommandSpec {
        name: "flood",
        args: "N [BYTES]",
        description: "Stream N message chunks of BYTES bytes each (default 32)",
    },
    CommandSpec {
        name: "stop",
        args: "REASON",
        description: "End the turn with end_turn, max_tokens, max_turn_requests or refusal",
    },
    CommandSpec {
        name: "error",
        args: "TEXT",
        description: "Fail the prompt with -32603 and TEXT",
    },
    CommandSpec {
        name: "history",
        args: "",
        description: "Say how many turns this session has completed",
    },
    CommandSpec {
        name: "notice",
        args: "SEVERITY TITLE",
        description: "Send a notice: info, warning or error",
    },
    CommandSpec {
        name: "usage",
        args: "USED SIZE [AMOUNT CURRENCY]",
        description: "Report context window use, and optionally the cost so far",
    },
    CommandSpec {
        name: "title",
        args: "TEXT",
        description: "Set the session's title",
    },
    CommandSpec {
        name: "plan2",
        args: "A | B",
        description: "Send a plan_update with these entries under a fresh plan id",
    },
    CommandSpec {
        name: "unplan",
        args: "",
        description: "Remove the last /plan2 plan of this session",
    },
    CommandSpec {
        name: "subagent",
        args: "NAME TEXT",
        description: "Start a subagent named NAME and relay TEXT from it",
    },
    CommandSpec {
        name: "mcp",
        args: "SERVER TOOL [JSON]",
        description: "Call TOOL of the session's MCP server SERVER with these arguments",
    },
];

/// The default size of one `/flood` chunk, in bytes.
pub(crate) const FLOOD_DEFAULT_BYTES: usize = 32;

/// The largest `/flood` chunk: a line stays far below the client's line limit.
pub(crate) const FLOOD_MAX_BYTES: usize = 1 << 20;

/// The tool kinds `/tool` accepts (the schema's `ToolKind` names).
const TOOL_KINDS: &[(&str, ToolKind)] = &[
    ("read", ToolKind::Read),
    ("edit", ToolKind::Edit),
    ("delete", ToolKind::Delete),
    ("move", ToolKind::Move),
    ("search", ToolKind::Search),
    ("execute", ToolKind::Execute),
    ("think", ToolKind::Think),
    ("fetch", ToolKind::Fetch),
    ("switch_mode", ToolKind::SwitchMode),
    ("other", ToolKind::Other),
];

/// The severities `/notice` accepts (the schema's `NoticeSeverity` names).
const SEVERITIES: &[(&str, NoticeSeverity)] = &[
    ("info", NoticeSeverity::Info),
    ("warning", NoticeSeverity::Warning),
    ("error", NoticeSeverity::Error),
];

/// The stop reasons `/stop` accepts (`cancelled` belongs to the client).
const STOP_REASONS: &[StopReason] = &[
    StopReason::EndTurn,
    StopReason::MaxTokens,
    StopReason::MaxTurnRequests,
    StopReason::Refusal,
];

/// One instruction of the script.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Command {
    /// Plain text (consecutive lines joined with `\n`): one `agent_message_chunk`.
    Text(String),
    /// `/echo TEXT`.
    Echo(String),
    /// `/think TEXT`.
    Think(String),
    /// `/plan A | B | C`: the entries, trimmed.
    Plan(Vec<String>),
    /// `/tool KIND TITLE`.
    Tool {
        /// The tool kind.
        kind: ToolKind,
        /// The title (the rest of the line).
        title: String,
    },
    /// `/read PATH`.
    Read(String),
    /// `/write PATH TEXT`.
    Write {
        /// The path as typed.
        path: String,
        /// Exactly the text to write.
        text: String,
    },
    /// `/ask QUESTION`.
    Ask(String),
    /// `/sleep MS`.
    Sleep(u64),
    /// `/flood N [BYTES]`.
    Flood {
        /// How many chunks.
        count: u64,
        /// Bytes of text in each.
        bytes: usize,
    },
    /// `/stop REASON`.
    Stop(StopReason),
    /// `/error TEXT`.
    Error(String),
    /// `/history`: how many turns the session has finished (loaded ones included).
    History,
    /// `/notice SEVERITY TITLE`.
    Notice {
        /// How serious it is.
        severity: NoticeSeverity,
        /// The title (the rest of the line).
        title: String,
    },
    /// `/usage USED SIZE [AMOUNT CURRENCY]`.
    Usage {
        /// Tokens in context.
        used: u64,
        /// The context window's size.
        size: u64,
        /// The cost so far: amount and currency.
        cost: Option<(f64, String)>,
    },
    /// `/title TEXT`.
    Title(String),
    /// `/plan2 A | B`: the entries, trimmed.
    Plan2(Vec<String>),
    /// `/unplan`.
    Unplan,
    /// `/subagent NAME TEXT`.
    Subagent {
        /// The subagent's name (its session title).
        name: String,
        /// What it says.
        text: String,
    },
    /// `/mcp SERVER TOOL [JSON]`.
    Mcp {
        /// The server's name (from `session/new.mcpServers`).
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// The arguments: a JSON object (`{}` when left out).
        arguments: serde_json::Value,
    },
    /// A command with bad arguments: the message to answer with.
    BadArguments(String),
    /// An unknown command (its name, slash included).
    Unknown(String),
}

/// Parses the prompt's text blocks; other blocks carry no script and are skipped. Block
/// boundaries are line boundaries.
pub(crate) fn parse(prompt: &[ContentBlock]) -> Vec<Command> {
    let mut commands = Vec::new();
    for block in prompt {
        if let ContentBlock::Text(text) = block {
            parse_text(&text.text, &mut commands);
        }
    }
    commands
}

fn parse_text(text: &str, out: &mut Vec<Command>) {
    let mut plain: Vec<&str> = Vec::new();
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.starts_with('/') {
            flush_plain(&mut plain, out);
            out.push(parse_command(line));
        } else {
            plain.push(line);
        }
    }
    flush_plain(&mut plain, out);
}

/// Emits a run of plain lines as one text command, unless it is only blank lines.
fn flush_plain(plain: &mut Vec<&str>, out: &mut Vec<Command>) {
    if plain.iter().any(|line| !line.trim().is_empty()) {
        let joined = plain.join("\n");
        out.push(Command::Text(joined.trim_matches('\n').to_owned()));
    }
    plain.clear();
}

/// Parses one `/…` line.
pub(crate) fn parse_command(line: &str) -> Command {
    let (name, arg) = match line.split_once(' ') {
        Some((name, arg)) => (name, arg),
        None => (line, ""),
    };
    let usage = |form: &str, why: &str| Command::BadArguments(format!("{why}; usage: {form}"));
    match name {
        "/echo" if arg.is_empty() => usage("/echo TEXT", "/echo needs a text"),
        "/echo" => Command::Echo(arg.to_owned()),
        "/think" if arg.is_empty() => usage("/think TEXT", "/think needs a text"),
        "/think" => Command::Think(arg.to_owned()),
        "/plan" => match plan_entries(arg) {
            Some(entries) => Command::Plan(entries),
            None => usage("/plan A | B | C", "/plan needs at least one entry"),
        },
        "/plan2" => match plan_entries(arg) {
            Some(entries) => Command::Plan2(entries),
            None => usage("/plan2 A | B", "/plan2 needs at least one entry"),
        },
        "/unplan" => Command::Unplan,
        "/subagent" => match arg.split_once(' ') {
            Some((name, text)) if !name.is_empty() && !text.trim().is_empty() => {
                Command::Subagent {
                    name: name.to_owned(),
                    text: text.to_owned(),
                }
            }
            _ => usage("/subagent NAME TEXT", "/subagent needs a name and a text"),
        },
        "/tool" => match arg.split_once(' ') {
            Some((kind, title)) if !title.trim().is_empty() => {
                match TOOL_KINDS.iter().find(|(k, _)| *k == kind) {
                    Some((_, kind)) => Command::Tool {
                        kind: kind.clone(),
                        title: title.to_owned(),
                    },
                    None => Command::BadArguments(format!(
                        "unknown tool kind '{kind}'; expected one of: {}",
                        TOOL_KINDS
                            .iter()
                            .map(|(k, _)| *k)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                }
            }
            _ => usage("/tool KIND TITLE", "/tool needs a kind and a title"),
        },
        "/mcp" => parse_mcp(arg),
        "/read" if arg.is_empty() => usage("/read PATH", "/read needs a path"),
        "/read" => Command::Read(arg.to_owned()),
        "/write" => match arg.split_once(' ') {
            Some((path, text)) if !path.is_empty() => Command::Write {
                path: path.to_owned(),
                text: text.to_owned(),
            },
            _ => usage("/write PATH TEXT", "/write needs a path and a text"),
        },
        "/ask" if arg.is_empty() => usage("/ask QUESTION", "/ask needs a question"),
        "/ask" => Command::Ask(arg.to_owned()),
        "/sleep" => match arg.trim().parse::<u64>() {
            Ok(ms) => Command::Sleep(ms),
            Err(_) => usage(
                "/sleep MS",
                &format!("/sleep needs a whole number of milliseconds, got '{arg}'"),
            ),
        },
        "/flood" => parse_flood(arg),
        "/stop" => match STOP_REASONS.iter().find(|r| r.as_str() == arg.trim()) {
            Some(reason) => Command::Stop(*reason),
            None => Command::BadArguments(format!(
                "/stop needs one of end_turn, max_tokens, max_turn_requests, refusal, got '{arg}'; usage: /stop REASON"
            )),
        },
        "/error" if arg.is_empty() => usage("/error TEXT", "/error needs a text"),
        "/error" => Command::Error(arg.to_owned()),
        "/history" => Command::History,
        "/notice" => parse_notice(arg),
        "/usage" => parse_usage(arg),
        "/title" if arg.trim().is_empty() => usage("/title TEXT", "/title needs a text"),
        "/title" => Command::Title(arg.to_owned()),
        _ => Command::Unknown(name.to_owned()),
    }
}

/// `/mcp SERVER TOOL [JSON]`: the arguments must be a JSON object.
fn parse_mcp(arg: &str) -> Command {
    let usage =
        |why: String| Command::BadArguments(format!("{why}; usage: /mcp SERVER TOOL [JSON]"));
    let mut parts = arg.splitn(3, ' ');
    let (Some(server), Some(tool)) = (parts.next(), parts.next()) else {
        return usage("/mcp needs a server and a tool".into());
    };
    if server.is_empty() || tool.is_empty() {
        return usage("/mcp needs a server and a tool".into());
    }
    let json = parts.next().unwrap_or("").trim();
    let arguments = if json.is_empty() {
        serde_json::json!({})
    } else {
        match serde_json::from_str::<serde_json::Value>(json) {
            Ok(value @ serde_json::Value::Object(_)) => value,
            Ok(_) => return usage("/mcp arguments must be a JSON object".into()),
            Err(error) => return usage(format!("/mcp arguments are not JSON: {error}")),
        }
    };
    Command::Mcp {
        server: server.to_owned(),
        tool: tool.to_owned(),
        arguments,
    }
}

fn parse_flood(arg: &str) -> Command {
    let usage = |why: String| Command::BadArguments(format!("{why}; usage: /flood N [BYTES]"));
    let mut words = arg.split_whitespace();
    let count = match words.next().map(str::parse::<u64>) {
        Some(Ok(count)) => count,
        _ => {
            return usage(format!(
                "/flood needs a whole number of chunks, got '{arg}'"
            ));
        }
    };
    let bytes = match words.next().map(str::parse::<usize>) {
        None => FLOOD_DEFAULT_BYTES,
        Some(Ok(bytes)) if bytes <= FLOOD_MAX_BYTES => bytes,
        Some(_) => {
            return usage(format!(
                "/flood chunk size must be a whole number of bytes up to {FLOOD_MAX_BYTES}"
            ));
        }
    };
    if words.next().is_some() {
        return usage(format!("/flood takes at most two numbers, got '{arg}'"));
    }
    Command::Flood { count, bytes }
}

/// The entries of `/plan` and `/plan2`: split on `|`, trimmed, empty ones dropped; `None`
/// when none is left.
fn plan_entries(arg: &str) -> Option<Vec<String>> {
    let entries: Vec<String> = arg
        .split('|')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(str::to_owned)
        .collect();
    (!entries.is_empty()).then_some(entries)
}

fn parse_notice(arg: &str) -> Command {
    let Some((severity, title)) = arg.split_once(' ').filter(|(_, t)| !t.trim().is_empty()) else {
        return Command::BadArguments(
            "/notice needs a severity and a title; usage: /notice SEVERITY TITLE".to_owned(),
        );
    };
    match SEVERITIES.iter().find(|(name, _)| *name == severity) {
        Some((_, severity)) => Command::Notice {
            severity: severity.clone(),
            title: title.to_owned(),
        },
        None => Command::BadArguments(format!(
            "unknown notice severity '{severity}'; expected one of: info, warning, error"
        )),
    }
}

fn parse_usage(arg: &str) -> Command {
    let usage = |why: String| {
        Command::BadArguments(format!("{why}; usage: /usage USED SIZE [AMOUNT CURRENCY]"))
    };
    let words: Vec<&str> = arg.split_whitespace().collect();
    if words.len() != 2 && words.len() != 4 {
        return usage(format!(
            "/usage takes two numbers, then optionally an amount and a currency, got '{arg}'"
        ));
    }
    let (Ok(used), Ok(size)) = (words[0].parse::<u64>(), words[1].parse::<u64>()) else {
        return usage(format!(
            "/usage needs whole numbers of tokens used and in the window, got '{arg}'"
        ));
    };
    let cost = match words.get(2..4) {
        Some([amount, currency]) => match amount.parse::<f64>() {
            Ok(amount) if amount.is_finite() => Some((amount, (*currency).to_owned())),
            _ => {
                return usage(format!(
                    "/usage needs the amount as a number, got '{amount}'"
                ));
            }
        },
        _ => None,
    };
    Command::Usage { used, size, cost }
}

/// The answer to an unknown command: what it was and every command there is.
pub(crate) fn unknown_command_message(name: &str) -> String {
    format!(
        "unknown command '{name}'. Commands: {}; any other text is echoed.",
        COMMANDS
            .iter()
            .map(CommandSpec::usage)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// `available_commands_update` with every demo command: its name, a one-line description
/// and, for a command that takes arguments, those arguments as the input hint.
pub(crate) fn available_commands() -> SessionUpdate {
    let mut update = AvailableCommandsUpdate::default();
    update.available_commands = COMMANDS
        .iter()
        .map(|spec| {
            let mut command = AvailableCommand::default();
            command.name = spec.name.to_owned();
            command.description = spec.description.to_owned();
            if !spec.args.is_empty() {
                let mut input = AvailableCommandInput::default();
                input.hint = spec.args.to_owned();
                command.input = Some(input);
            }
            command
        })
        .collect();
    SessionUpdate::AvailableCommandsUpdate(update)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_is_offered_with_a_description_and_args_as_the_hint() {
        let SessionUpdate::AvailableCommandsUpdate(update) = available_commands() else {
            panic!("an available_commands_update");
        };
        let names: Vec<&str> = update
            .available_commands
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        let expected: Vec<&str> = COMMANDS.iter().map(|c| c.name).collect();
        assert_eq!(names, expected);
        assert!(names.contains(&"notice") && names.contains(&"title"));
        for command in &update.available_commands {
            assert!(!command.description.is_empty(), "{}", command.name);
            assert!(!command.name.starts_with('/'), "names go without the slash");
        }
        let echo = &update.available_commands[0];
        assert_eq!(echo.description, "Send TEXT back as one message chunk");
        assert_eq!(echo.input.as_ref().map(|i| i.hint.as_str()), Some("TEXT"));
        let history = update
            .available_commands
            .iter()
            .find(|c| c.name == "history")
            .expect("history");
        assert_eq!(
            history.input, None,
            "a command without arguments has no hint"
        );
    }

    fn text(s: &str) -> Vec<Command> {
        parse(&[ContentBlock::text(s)])
    }

    #[test]
    fn plain_lines_are_grouped_and_commands_split_them() {
        assert_eq!(
            text("hello\nworld\n/echo x\n\nbye\r\n"),
            vec![
                Command::Text("hello\nworld".into()),
                Command::Echo("x".into()),
                Command::Text("bye".into()),
            ]
        );
        assert_eq!(text("\n  \n"), vec![]);
    }

    #[test]
    fn block_boundaries_are_line_boundaries_and_other_blocks_are_skipped() {
        let mut link = acp_core::schema::ResourceLink::default();
        link.uri = "file:///x".into();
        link.name = "x".into();
        let prompt = [
            ContentBlock::text("/echo a"),
            ContentBlock::ResourceLink(link),
            ContentBlock::text("/echo b"),
        ];
        assert_eq!(
            parse(&prompt),
            vec![Command::Echo("a".into()), Command::Echo("b".into())]
        );
    }

    #[test]
    fn arguments_are_verbatim_after_one_space() {
        assert_eq!(parse_command("/echo  two "), Command::Echo(" two ".into()));
        assert_eq!(
            parse_command("/write a.txt hello world "),
            Command::Write {
                path: "a.txt".into(),
                text: "hello world ".into()
            }
        );
        assert_eq!(
            parse_command("/write a.txt "),
            Command::Write {
                path: "a.txt".into(),
                text: "".into()
            }
        );
        assert_eq!(
            parse_command("/tool execute Run the tests"),
            Command::Tool {
                kind: ToolKind::Execute,
                title: "Run the tests".into()
            }
        );
    }

    #[test]
    fn plan_entries_are_split_on_bars_and_trimmed() {
        assert_eq!(
            parse_command("/plan A | B |C|"),
            Command::Plan(vec!["A".into(), "B".into(), "C".into()])
        );
        assert_eq!(
            parse_command("/plan | "),
            Command::BadArguments("/plan needs at least one entry; usage: /plan A | B | C".into())
        );
    }

    #[test]
    fn flood_takes_a_count_and_an_optional_size() {
        assert_eq!(
            parse_command("/flood 3"),
            Command::Flood {
                count: 3,
                bytes: 32
            }
        );
        assert_eq!(
            parse_command("/flood 3 100"),
            Command::Flood {
                count: 3,
                bytes: 100
            }
        );
        assert_eq!(
            parse_command("/flood x"),
            Command::BadArguments(
                "/flood needs a whole number of chunks, got 'x'; usage: /flood N [BYTES]".into()
            )
        );
        assert_eq!(
            parse_command("/flood 1 2000000"),
            Command::BadArguments(
                "/flood chunk size must be a whole number of bytes up to 1048576; usage: /flood N [BYTES]"
                    .into()
            )
        );
        assert_eq!(
            parse_command("/flood 1 2 3"),
            Command::BadArguments(
                "/flood takes at most two numbers, got '1 2 3'; usage: /flood N [BYTES]".into()
            )
        );
    }

    #[test]
    fn bad_arguments_become_usage_messages() {
        let cases = [
            ("/echo", "/echo needs a text; usage: /echo TEXT"),
            ("/think", "/think needs a text; usage: /think TEXT"),
            (
                "/tool",
                "/tool needs a kind and a title; usage: /tool KIND TITLE",
            ),
            (
                "/tool read",
                "/tool needs a kind and a title; usage: /tool KIND TITLE",
            ),
            (
                "/tool bake Bread",
                "unknown tool kind 'bake'; expected one of: read, edit, delete, move, search, execute, think, fetch, switch_mode, other",
            ),
            ("/read", "/read needs a path; usage: /read PATH"),
            (
                "/write",
                "/write needs a path and a text; usage: /write PATH TEXT",
            ),
            (
                "/write a.txt",
                "/write needs a path and a text; usage: /write PATH TEXT",
            ),
            ("/ask", "/ask needs a question; usage: /ask QUESTION"),
            (
                "/sleep soon",
                "/sleep needs a whole number of milliseconds, got 'soon'; usage: /sleep MS",
            ),
            (
                "/stop cancelled",
                "/stop needs one of end_turn, max_tokens, max_turn_requests, refusal, got 'cancelled'; usage: /stop REASON",
            ),
            ("/error", "/error needs a text; usage: /error TEXT"),
        ];
        for (line, message) in cases {
            assert_eq!(
                parse_command(line),
                Command::BadArguments(message.into()),
                "{line}"
            );
        }
    }

    #[test]
    fn notice_usage_and_title_parse_their_arguments() {
        assert_eq!(
            parse_command("/notice warning Disk almost full"),
            Command::Notice {
                severity: NoticeSeverity::Warning,
                title: "Disk almost full".into()
            }
        );
        assert_eq!(
            parse_command("/usage 1200 200000"),
            Command::Usage {
                used: 1200,
                size: 200000,
                cost: None
            }
        );
        assert_eq!(
            parse_command("/usage 1200 200000 0.42 USD"),
            Command::Usage {
                used: 1200,
                size: 200000,
                cost: Some((0.42, "USD".into()))
            }
        );
        assert_eq!(
            parse_command("/title  Fix the build "),
            Command::Title(" Fix the build ".into())
        );
        assert_eq!(
            parse_command("/plan2 Draft |Review| "),
            Command::Plan2(vec!["Draft".into(), "Review".into()])
        );
        assert_eq!(parse_command("/unplan"), Command::Unplan);
        assert_eq!(
            parse_command("/subagent scout Found 3 files"),
            Command::Subagent {
                name: "scout".into(),
                text: "Found 3 files".into()
            }
        );
    }

    #[test]
    fn notice_usage_and_title_refuse_bad_arguments_with_their_usage() {
        let cases = [
            (
                "/notice",
                "/notice needs a severity and a title; usage: /notice SEVERITY TITLE",
            ),
            (
                "/notice info",
                "/notice needs a severity and a title; usage: /notice SEVERITY TITLE",
            ),
            (
                "/notice info  ",
                "/notice needs a severity and a title; usage: /notice SEVERITY TITLE",
            ),
            (
                "/notice fatal Boom",
                "unknown notice severity 'fatal'; expected one of: info, warning, error",
            ),
            (
                "/usage",
                "/usage takes two numbers, then optionally an amount and a currency, got ''; usage: /usage USED SIZE [AMOUNT CURRENCY]",
            ),
            (
                "/usage 1 2 3",
                "/usage takes two numbers, then optionally an amount and a currency, got '1 2 3'; usage: /usage USED SIZE [AMOUNT CURRENCY]",
            ),
            (
                "/usage many 10",
                "/usage needs whole numbers of tokens used and in the window, got 'many 10'; usage: /usage USED SIZE [AMOUNT CURRENCY]",
            ),
            (
                "/usage -1 10",
                "/usage needs whole numbers of tokens used and in the window, got '-1 10'; usage: /usage USED SIZE [AMOUNT CURRENCY]",
            ),
            (
                "/usage 1 10 cheap EUR",
                "/usage needs the amount as a number, got 'cheap'; usage: /usage USED SIZE [AMOUNT CURRENCY]",
            ),
            (
                "/usage 1 10 inf EUR",
                "/usage needs the amount as a number, got 'inf'; usage: /usage USED SIZE [AMOUNT CURRENCY]",
            ),
            ("/title", "/title needs a text; usage: /title TEXT"),
            (
                "/plan2 | ",
                "/plan2 needs at least one entry; usage: /plan2 A | B",
            ),
            (
                "/plan2",
                "/plan2 needs at least one entry; usage: /plan2 A | B",
            ),
            (
                "/subagent",
                "/subagent needs a name and a text; usage: /subagent NAME TEXT",
            ),
            (
                "/subagent scout",
                "/subagent needs a name and a text; usage: /subagent NAME TEXT",
            ),
            (
                "/subagent scout  ",
                "/subagent needs a name and a text; usage: /subagent NAME TEXT",
            ),
            ("/title   ", "/title needs a text; usage: /title TEXT"),
        ];
        for (line, message) in cases {
            assert_eq!(
                parse_command(line),
                Command::BadArguments(message.into()),
                "{line}"
            );
        }
    }

    #[test]
    fn every_stop_reason_but_cancelled_parses() {
        for (word, reason) in [
            ("end_turn", StopReason::EndTurn),
            ("max_tokens", StopReason::MaxTokens),
            ("max_turn_requests", StopReason::MaxTurnRequests),
            ("refusal", StopReason::Refusal),
        ] {
            assert_eq!(
                parse_command(&format!("/stop {word}")),
                Command::Stop(reason)
            );
        }
    }

    #[test]
    fn unknown_commands_are_kept_by_name_and_answered_with_the_list() {
        assert_eq!(
            parse_command("/dance now"),
            Command::Unknown("/dance".into())
        );
        assert_eq!(parse_command("/"), Command::Unknown("/".into()));
        assert_eq!(
            unknown_command_message("/dance"),
            "unknown command '/dance'. Commands: /echo TEXT, /think TEXT, /plan A | B | C, \
             /tool KIND TITLE, /read PATH, /write PATH TEXT, /ask QUESTION, /sleep MS, \
             /flood N [BYTES], /stop REASON, /error TEXT, /history, /notice SEVERITY TITLE, \
             /usage USED SIZE [AMOUNT CURRENCY], /title TEXT, /plan2 A | B, /unplan, \
             /subagent NAME TEXT, /mcp SERVER TOOL [JSON]; any other text is echoed."
        );
    }
}
