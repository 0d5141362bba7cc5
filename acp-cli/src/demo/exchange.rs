//! `acp-cli demo`: a scripted client talks to `acp-cli --acp --stdio` and prints both
//! directions, so a newcomer sees a whole ACP exchange with one command.
//!
//! The client is deliberately plain (a thread reading lines, blocking writes): it is a
//! readable script, not a reference client. It starts the agent from this very binary in a
//! fresh scratch directory, runs the handshake, a session, one prompt per feature of the demo
//! backend, a mode change and a cancel, then closes stdin and waits for a clean exit.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use acp_conform::process::LineSplitter;
use acp_core::schema::{
    AskUserResponse, CancelNotification, ContentBlock, Implementation, InitializeRequest,
    NewSessionRequest, PromptRequest, ProtocolVersion, RequestPermissionOutcome,
    RequestPermissionResponse, SetSessionModeRequest,
};
use acp_core::wire::encode::{write_notification, write_request, write_result};
use acp_core::wire::envelope::{Message, scan};
use acp_core::wire::{Id, JsonStr};

/// Writes a request with the next id and evaluates to that id (a macro, because the params
/// are any serde type and acp-cli does not name serde itself).
macro_rules! send_request {
    ($demo:expr, $method:expr, $params:expr) => {{
        $demo.next_id += 1;
        let mut line = Vec::new();
        write_request(&mut line, $demo.next_id, $method, Some($params))
            .map_err(|e| format!("cannot encode {}: {e:?}", $method))?;
        $demo.write(line)?;
        $demo.next_id
    }};
}

/// How long the client waits for any one line before it gives up on the agent.
const LINE_TIMEOUT: Duration = Duration::from_secs(20);

/// The prompts of the script: what each shows, its text, and how the client answers the
/// agent's permission requests during it.
const SCRIPT: &[(&str, &str, &str)] = &[
    (
        "The first prompt names the session (session_info_update); plain text is echoed; /think, /plan and /echo send one update each; every turn ends with a usage_update",
        "Hello, agent!\n/think The user said hello.\n/plan Greet | Show a tool | Finish\n/echo Hi! Try the commands below.",
        "allow_once",
    ),
    (
        "/tool: a tool call, a permission request (answered allow_once), then in_progress and completed",
        "/tool execute Run the test suite",
        "allow_once",
    ),
    (
        "/tool again, answered reject_once: the tool call fails and the turn goes on",
        "/tool delete Remove the build directory\n/echo The turn goes on after a refusal.",
        "reject_once",
    ),
    (
        "/write asks with a diff and writes inside the session cwd; /read reports the byte count",
        "/write hello.txt Hello from the demo agent\n/read hello.txt",
        "allow_once",
    ),
    (
        "A path outside the session cwd is a failed tool call",
        "/read ../../etc/passwd",
        "allow_once",
    ),
    (
        "/ask sends _agentao.cn/ask_user and echoes the answer",
        "/ask What should I call you?",
        "allow_once",
    ),
    (
        "/flood N BYTES streams N chunks",
        "/flood 3 12",
        "allow_once",
    ),
    (
        "/stop ends the turn with another stop reason",
        "/stop max_tokens\n/echo (never sent)",
        "allow_once",
    ),
    (
        "/error fails the prompt with -32603",
        "/error the demo failed on purpose",
        "allow_once",
    ),
    (
        "An unknown command answers with the list of commands",
        "/help",
        "allow_once",
    ),
    (
        "/notice, /usage and /title: a warning, usage figures with a cost, a new title",
        "/notice warning Disk almost full\n/usage 1200 200000 0.42 USD\n/title Demo tour",
        "allow_once",
    ),
    (
        "/plan2 sends a plan by id (plan_update); /unplan removes it (plan_removed)",
        "/plan2 Draft | Review\n/unplan",
        "allow_once",
    ),
    (
        "/subagent: a subagent session (subagent_update), then its message (session_message)",
        "/subagent scout Found 3 files worth a look",
        "allow_once",
    ),
];

/// Runs the demo; the exit code says whether the exchange completed. A closed stdout ends it
/// early and quietly (the status is then [`crate::stdout::exit_code`]'s).
pub fn run() -> ExitCode {
    match Demo::start().and_then(|mut demo| demo.play()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            if crate::stdout::is_open() {
                eprintln!("acp-cli demo: {message}");
            }
            ExitCode::FAILURE
        }
    }
}

/// Prints to stdout; `Err` once stdout is unusable, which ends the demo.
fn show(args: std::fmt::Arguments<'_>) -> Result<(), String> {
    if crate::stdout::print(args) {
        Ok(())
    } else {
        Err(String::from("stdout is closed"))
    }
}

struct Demo {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
    cwd: PathBuf,
    /// How the next permission request is answered.
    permission: &'static str,
}

impl Demo {
    fn start() -> Result<Self, String> {
        let exe =
            std::env::current_exe().map_err(|e| format!("cannot find acp-cli itself: {e}"))?;
        let cwd = std::env::temp_dir().join(format!("acp-cli-demo-{}", std::process::id()));
        std::fs::create_dir_all(&cwd)
            .map_err(|e| format!("cannot create {}: {e}", cwd.display()))?;
        let mut child = Command::new(&exe)
            .args(["--acp", "--stdio", "--log-level", "warn"])
            .current_dir(&cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start {} --acp --stdio: {e}", exe.display()))?;
        let stdout = child.stdout.take().ok_or("no stdout pipe")?;
        let (tx, lines) = channel();
        std::thread::spawn(move || read_lines(stdout, &tx));
        // Built before the first print, so an early end still stops the agent (`Drop`).
        let demo = Self {
            stdin: child.stdin.take(),
            child,
            lines,
            next_id: 0,
            cwd,
            permission: "allow_once",
        };
        show(format_args!(
            "acp-cli demo: a scripted ACP client talking to `acp-cli --acp --stdio`\n  \
             session cwd: {}\n  \
             → client to agent, ← agent to client; one JSON-RPC message per line\n\n",
            demo.cwd.display()
        ))?;
        Ok(demo)
    }

    fn play(&mut self) -> Result<(), String> {
        section("Handshake: initialize")?;
        let mut init = InitializeRequest::default();
        init.protocol_version = ProtocolVersion::V1;
        init.client_info = Some(Implementation::new(
            "acp-cli-demo",
            env!("CARGO_PKG_VERSION"),
        ));
        let id = send_request!(self, "initialize", &init);
        self.wait_for(id)?;

        section(
            "A session in the scratch directory: session/new, then the commands it offers (available_commands_update)",
        )?;
        let cwd = self.cwd.to_string_lossy().into_owned();
        let id = send_request!(self, "session/new", &NewSessionRequest::new(cwd));
        let answer = self.wait_for(id)?;
        let session = session_id(&answer).ok_or("session/new did not answer a sessionId")?;
        // The agent sends its commands right after the answer (R-SESSION-8).
        self.print_next_line()?;

        for (what, text, permission) in SCRIPT {
            section(what)?;
            self.permission = permission;
            self.prompt(&session, text)?;
        }

        section(
            "session/set_mode plan: the agent announces the mode, then every tool fails without asking",
        )?;
        let mut mode = SetSessionModeRequest::default();
        mode.session_id = session.clone();
        mode.mode_id = "plan".into();
        let id = send_request!(self, "session/set_mode", &mode);
        self.wait_for(id)?;
        self.prompt(&session, "/tool edit Refactor everything")?;

        section("/sleep, then session/cancel: the turn ends at once with stopReason cancelled")?;
        let id = self.send_prompt(&session, "/sleep 60000\n/echo (never sent)")?;
        let mut cancel = Vec::new();
        write_notification(
            &mut cancel,
            "session/cancel",
            Some(&CancelNotification::new(session.clone())),
        )
        .map_err(|e| format!("cannot encode session/cancel: {e:?}"))?;
        self.write(cancel)?;
        self.wait_for(id)?;

        section("Closing stdin: the agent exits cleanly")?;
        drop(self.stdin.take());
        while let Ok(line) = self.lines.recv_timeout(LINE_TIMEOUT) {
            show(format_args!("← {line}\n"))?;
        }
        let status = self
            .child
            .wait()
            .map_err(|e| format!("waiting for the agent: {e}"))?;
        show(format_args!("agent exited: {status}\n"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("the agent exited with {status}"))
        }
    }

    /// Prints the agent's next line.
    fn print_next_line(&mut self) -> Result<(), String> {
        match self.lines.recv_timeout(LINE_TIMEOUT) {
            Ok(line) => {
                println!("← {line}");
                Ok(())
            }
            Err(RecvTimeoutError::Timeout) => Err(format!("no line within {LINE_TIMEOUT:?}")),
            Err(RecvTimeoutError::Disconnected) => Err("the agent closed its stdout".into()),
        }
    }

    fn prompt(&mut self, session: &str, text: &str) -> Result<(), String> {
        let id = self.send_prompt(session, text)?;
        self.wait_for(id).map(drop)
    }

    fn send_prompt(&mut self, session: &str, text: &str) -> Result<u64, String> {
        let request = PromptRequest::new(session, vec![ContentBlock::text(text)]);
        Ok(send_request!(self, "session/prompt", &request))
    }

    fn write(&mut self, line: Vec<u8>) -> Result<(), String> {
        show(format_args!("→ {}", String::from_utf8_lossy(&line)))?;
        let stdin = self.stdin.as_mut().ok_or("stdin is closed")?;
        stdin
            .write_all(&line)
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("the agent stopped reading: {e}"))
    }

    /// Prints agent lines, answering its requests, until the answer to request `id`.
    fn wait_for(&mut self, id: u64) -> Result<String, String> {
        loop {
            let line = match self.lines.recv_timeout(LINE_TIMEOUT) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!("no answer to request {id} within {LINE_TIMEOUT:?}"));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err("the agent closed its stdout".into());
                }
            };
            show(format_args!("← {line}\n"))?;
            match scan(&line) {
                Ok(Message::Response(response)) if response.id.as_u64() == Some(id) => {
                    return Ok(line);
                }
                Ok(Message::Request(request)) => self.answer(request.id, request.method)?,
                _ => {}
            }
        }
    }

    /// Answers a request of the agent: permission by the script, ask_user with a name.
    fn answer(&mut self, id: Id<'_>, method: JsonStr<'_>) -> Result<(), String> {
        let mut line = Vec::new();
        let written = if method.eq_str("session/request_permission") {
            let answer =
                RequestPermissionResponse::new(RequestPermissionOutcome::selected(self.permission));
            write_result(&mut line, id, &answer)
        } else if method.eq_str("_agentao.cn/ask_user") {
            write_result(
                &mut line,
                id,
                &AskUserResponse::Answered("a newcomer".into()),
            )
        } else {
            acp_core::wire::encode::write_error(
                &mut line,
                id,
                acp_core::wire::ErrorCode::METHOD_NOT_FOUND,
                &"Method not found",
                None::<&()>,
            )
        };
        written.map_err(|e| format!("cannot encode an answer: {e:?}"))?;
        self.write(line)
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        // On an early error the agent may still run: end it, and leave no scratch behind.
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.cwd);
    }
}

/// Sends each line the agent writes (the workspace's one splitter for such streams: a `\r`
/// before the `\n` goes, invalid UTF-8 is replaced, a last line without a newline counts)
/// until its stdout ends or nobody listens.
fn read_lines(mut stdout: impl Read, tx: &std::sync::mpsc::Sender<String>) {
    let mut splitter = LineSplitter::unlimited();
    let mut buf = vec![0u8; 64 * 1024];
    let mut lines = Vec::new();
    // Each pass takes one read; the agent's output is finite or the demo is stopped.
    loop {
        let n = match stdout.read(&mut buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Ok(n) => n,
            Err(_) => 0,
        };
        if n == 0 {
            splitter.finish(&mut lines);
        } else {
            splitter.feed(&buf[..n], &mut lines);
        }
        for line in lines.drain(..) {
            if tx.send(line).is_err() {
                return;
            }
        }
        if n == 0 {
            return;
        }
    }
}

fn section(title: &str) -> Result<(), String> {
    show(format_args!("\n# {title}\n"))
}

/// The `sessionId` of a `session/new` answer line.
fn session_id(line: &str) -> Option<String> {
    let Ok(Message::Response(response)) = scan(line) else {
        return None;
    };
    let acp_core::wire::envelope::Outcome::Result(result) = response.outcome else {
        return None;
    };
    let id = result.get_field("sessionId")?.as_str()?;
    Some(id.to_cow().into_owned())
}
