//! A deterministic generator of realistic ACP traffic, for benchmarks and tests.
//!
//! Two corpora, as the perf-anchors study that set our performance targets describes them
//! ("Corpora"), so our numbers can be set beside the ones measured there:
//!
//! - [`mixed`]: both directions of several connections, each `initialize` → `session/new` →
//!   3–20 prompt turns with streamed chunks, tool calls, tool call updates, permission requests
//!   and every response. Most messages are small chunks; most bytes are tool output and diffs.
//! - [`small`]: nothing but token-sized `agent_message_chunk` notifications, the shape that
//!   dominates a streaming turn and stresses the per-message cost.
//!
//! The output is one `Vec<u8>` of NDJSON: compact JSON lines, each ending in `\n`, written by
//! serde_json from structs with the official wire field names, in the field order the official
//! SDKs write (`jsonrpc`, `id`, `method`, `params`; `sessionUpdate` first inside `update`).
//! Structs rather than `serde_json::Value` keep the key order independent of serde_json's
//! `preserve_order` feature, which some dependencies switch on.
//!
//! Everything is drawn from a [`SplitMix64`] with a fixed seed ([`SEED`]), so the same call
//! gives the same bytes on every machine and every run. [`Mix`] classifies a corpus line by line
//! (the counts and bytes per message kind), for tests and for bench reports.

use std::collections::HashMap;
use std::fmt;

use serde::Serialize;

/// The seed both corpora use unless told otherwise (perf-anchors used seed 1 too).
pub const SEED: u64 = 1;

/// The `sessionId` of every message in the [`small`] corpus.
pub const SMALL_SESSION_ID: &str = "sess_01";

/// A mixed corpus of about `target_bytes` (it stops at the first prompt-turn boundary past
/// the target, so it overshoots by at most one turn), generated from [`SEED`].
pub fn mixed(target_bytes: usize) -> Vec<u8> {
    mixed_with_seed(target_bytes, SEED)
}

/// A small-message corpus of about `target_bytes` (it stops at the first line past the
/// target), generated from [`SEED`].
pub fn small(target_bytes: usize) -> Vec<u8> {
    small_with_seed(target_bytes, SEED)
}

/// [`mixed`] with another seed.
pub fn mixed_with_seed(target_bytes: usize, seed: u64) -> Vec<u8> {
    let mut generator = Generator::new(seed, target_bytes);
    let mut connection = 0;
    while generator.out.len() < target_bytes {
        generator.connection(connection);
        connection += 1;
    }
    generator.out
}

/// [`small`] with another seed.
pub fn small_with_seed(target_bytes: usize, seed: u64) -> Vec<u8> {
    let mut generator = Generator::new(seed, target_bytes);
    while generator.out.len() < target_bytes {
        let text = generator.token_text();
        generator.notify(&session_update(
            SMALL_SESSION_ID,
            SessionUpdate::AgentMessageChunk {
                content: TextContent::new(&text),
            },
        ));
    }
    generator.out
}

/// The lines of an NDJSON corpus, without their `\n`.
pub fn lines(corpus: &[u8]) -> impl Iterator<Item = &[u8]> {
    corpus
        .split(|&byte| byte == b'\n')
        .filter(|line| !line.is_empty())
}

// ---------------------------------------------------------------------------------------------
// Randomness
// ---------------------------------------------------------------------------------------------

/// The splitmix64 generator: tiny, fast, and the same on every platform.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub const fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform float in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        // The top 53 bits fill an f64 mantissa exactly.
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A uniform integer in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        debug_assert!(lo <= hi);
        let span = (hi - lo) as u64 + 1;
        lo + (self.next_u64() % span) as usize
    }

    /// An integer in `lo..=hi` skewed towards `lo`: the smallest of `draws` uniform draws
    /// (2 draws: mean a third of the way up). Integer-only, so no platform's `libm` rounding
    /// can change a corpus.
    pub fn skewed(&mut self, lo: usize, hi: usize, draws: u32) -> usize {
        (0..draws.max(1))
            .map(|_| self.range(lo, hi))
            .min()
            .unwrap_or(lo)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// A uniformly chosen element of a non-empty slice.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.range(0, items.len() - 1)]
    }
}

// ---------------------------------------------------------------------------------------------
// Wire shapes (official field names, official field order)
// ---------------------------------------------------------------------------------------------

const JSONRPC: &str = "2.0";

/// A JSON-RPC id: integers for the client's requests, `"perm_…"` strings for the agent's.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
enum Id {
    Int(u64),
    Str(String),
}

#[derive(Serialize)]
struct Request<'a, P> {
    jsonrpc: &'static str,
    id: &'a Id,
    method: &'a str,
    params: P,
}

#[derive(Serialize)]
struct Notification<'a, P> {
    jsonrpc: &'static str,
    method: &'a str,
    params: P,
}

#[derive(Serialize)]
struct Response<'a, R> {
    jsonrpc: &'static str,
    id: &'a Id,
    result: R,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParams {
    protocol_version: u16,
    client_capabilities: ClientCapabilities,
    client_info: Implementation,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ClientCapabilities {
    fs: FsCapabilities,
    terminal: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FsCapabilities {
    read_text_file: bool,
    write_text_file: bool,
}

#[derive(Serialize)]
struct Implementation {
    name: &'static str,
    title: &'static str,
    version: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InitializeResult {
    protocol_version: u16,
    agent_capabilities: AgentCapabilities,
    auth_methods: [(); 0],
    agent_info: Implementation,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AgentCapabilities {
    load_session: bool,
    prompt_capabilities: PromptCapabilities,
    mcp_capabilities: McpCapabilities,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PromptCapabilities {
    image: bool,
    audio: bool,
    embedded_context: bool,
}

#[derive(Serialize)]
struct McpCapabilities {
    http: bool,
    sse: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NewSessionParams<'a> {
    cwd: &'a str,
    mcp_servers: [(); 0],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NewSessionResult<'a> {
    session_id: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PromptParams<'a> {
    session_id: &'a str,
    prompt: Vec<ContentBlock<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ContentBlock<'a> {
    Text { text: &'a str },
    ResourceLink { uri: &'a str, name: &'a str },
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PromptResult {
    stop_reason: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SessionNotification<'a> {
    session_id: &'a str,
    update: SessionUpdate<'a>,
}

fn session_update<'a>(session_id: &'a str, update: SessionUpdate<'a>) -> SessionNotification<'a> {
    SessionNotification { session_id, update }
}

/// `{"type":"text","text":…}`: the content of a chunk.
#[derive(Serialize)]
struct TextContent<'a> {
    r#type: &'static str,
    text: &'a str,
}

impl<'a> TextContent<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            r#type: "text",
            text,
        }
    }
}

/// The `update` of a `session/update`; `sessionUpdate` is written first, as the SDKs do.
#[derive(Serialize)]
#[serde(tag = "sessionUpdate", rename_all = "snake_case")]
enum SessionUpdate<'a> {
    AgentMessageChunk {
        content: TextContent<'a>,
    },
    AgentThoughtChunk {
        content: TextContent<'a>,
    },
    #[serde(rename_all = "camelCase")]
    ToolCall {
        tool_call_id: &'a str,
        title: &'a str,
        kind: &'static str,
        status: &'static str,
        locations: Vec<Location<'a>>,
        raw_input: RawInput<'a>,
    },
    #[serde(rename_all = "camelCase")]
    ToolCallUpdate {
        tool_call_id: &'a str,
        status: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        content: Option<Vec<ToolCallContent<'a>>>,
    },
}

#[derive(Serialize)]
struct Location<'a> {
    path: &'a str,
}

/// What a tool was called with; the shapes coding agents really send (snake_case keys).
#[derive(Serialize)]
#[serde(untagged)]
enum RawInput<'a> {
    Read {
        file_path: &'a str,
        offset: usize,
        limit: usize,
    },
    Edit {
        file_path: &'a str,
        old_string: &'a str,
        new_string: &'a str,
    },
    Execute {
        command: &'a str,
        description: &'a str,
        timeout: u32,
    },
    Search {
        pattern: &'a str,
        path: &'a str,
        glob: &'static str,
    },
    Fetch {
        url: &'a str,
        prompt: &'a str,
    },
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ToolCallContent<'a> {
    Content {
        content: TextContent<'a>,
    },
    #[serde(rename_all = "camelCase")]
    Diff {
        path: &'a str,
        old_text: &'a str,
        new_text: &'a str,
    },
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PermissionParams<'a> {
    session_id: &'a str,
    tool_call: PermissionToolCall<'a>,
    options: [PermissionOption; 3],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PermissionToolCall<'a> {
    tool_call_id: &'a str,
    title: &'a str,
    kind: &'static str,
    status: &'static str,
    content: [ToolCallContent<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PermissionOption {
    option_id: &'static str,
    name: &'static str,
    kind: &'static str,
}

const PERMISSION_OPTIONS: [PermissionOption; 3] = [
    PermissionOption {
        option_id: "allow_once",
        name: "Allow once",
        kind: "allow_once",
    },
    PermissionOption {
        option_id: "allow_always",
        name: "Always allow",
        kind: "allow_always",
    },
    PermissionOption {
        option_id: "reject_once",
        name: "Reject",
        kind: "reject_once",
    },
];

#[derive(Serialize)]
struct PermissionResult {
    outcome: PermissionOutcome,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PermissionOutcome {
    outcome: &'static str,
    option_id: &'static str,
}

// ---------------------------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------------------------

/// Words of prose, mostly English, with the non-ASCII, quotes, backslashes, newlines and tabs
/// that make JSON escapes frequent.
#[rustfmt::skip]
const PROSE_WORDS: &[&str] = &[
    "the", "file", "function", "returns", "error", "value", "we", "should", "check", "this",
    "because", "buffer", "line", "and", "then", "it", "is", "a", "test", "for", "parser",
    "config", "update", "session", "request", "handler", "in", "of", "to", "with", "résumé",
    "café", "naïve", "中文", "日本語", "Ελληνικά", "русский", "🚀", "—", "\"quoted\"",
    "C:\\Users\\dev", "path\\to\\file", "\n", "\n\n", "\t", "`code`", "**bold**", "x = 1;",
    "don't", "it's", "(see above)", "e.g.", "i.e.", "OK.", "Done.", "Let's", "fix", "it:",
];

/// Tokens of the [`small`] corpus: what a model streams, one or two at a time.
#[rustfmt::skip]
const TOKENS: &[&str] = &[
    " the", " a", " to", " of", " and", " is", " in", " that", " it", " for", " file", " code",
    " error", " function", "ing", "ed", "s", ".", ",", ":", "!", "?", " é", " café", "中文",
    "日本語", " Ελληνικά", " русский", " 🚀", " —", "\"", "\\", "\n", "\n\n", "\t", " \"x\"", "`",
    "```", "rust", " fn", " let", " mut", "()", "{", "}", ";", " =", " //", " OK",
];

/// Identifiers for generated code.
#[rustfmt::skip]
const IDENTS: &[&str] = &[
    "buffer", "line", "parse_envelope", "session", "handler", "config", "reader", "writer",
    "frame", "value", "state", "request_id", "count", "offset", "limit", "result", "cursor",
];

/// Appends words of `vocabulary` to `out` until it holds at least `len` bytes, then trims it
/// back to at most `len` bytes on a char boundary.
fn fill_words(rng: &mut SplitMix64, vocabulary: &[&str], len: usize, out: &mut String) {
    let start = out.len();
    while out.len() - start < len {
        if out.len() > start && !out.ends_with(['\n', '\t']) {
            out.push(' ');
        }
        out.push_str(rng.pick(vocabulary));
    }
    truncate_at_char(out, start + len);
}

/// Shortens `text` to at most `len` bytes without splitting a char.
fn truncate_at_char(text: &mut String, len: usize) {
    let mut end = len.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
}

/// Prose of `len` bytes (or a few less, to end on a char boundary).
fn prose(rng: &mut SplitMix64, len: usize) -> String {
    let mut out = String::with_capacity(len + 8);
    fill_words(rng, PROSE_WORDS, len, &mut out);
    out
}

/// Rust-like source code of about `len` bytes: indentation, string literals with escapes,
/// comments with non-ASCII text.
fn code(rng: &mut SplitMix64, len: usize) -> String {
    let mut out = String::with_capacity(len + 128);
    let mut depth = 0usize;
    while out.len() < len {
        let indent = if rng.chance(0.2) { "\t" } else { "    " };
        for _ in 0..depth {
            out.push_str(indent);
        }
        let a = rng.pick(IDENTS);
        let b = rng.pick(IDENTS);
        match rng.range(0, 7) {
            0 if depth < 4 => {
                out.push_str(&format!("fn {a}(input: &str) -> Result<{b}, Error> {{"));
                depth += 1;
            }
            1 if depth > 0 => {
                out.push('}');
                depth -= 1;
            }
            2 => out.push_str(&format!("let {a} = \"{b}: \\\"{{}}\\\"\\n\";")),
            3 => {
                // A comment ends at the line end, so the prose's newlines and tabs go.
                let len = rng.range(10, 60);
                out.push_str("// ");
                out.push_str(&prose(rng, len).replace(['\n', '\t'], " "));
            }
            4 => out.push_str(&format!("println!(\"{a} = {{:?}}\\t{b}\", {a});")),
            5 => out.push_str(&format!("let {a} = {b}.split('\\\\').collect::<Vec<_>>();")),
            _ => out.push_str(&format!("{a}.{b}({}, \"{}\")?;", rng.range(0, 4096), b)),
        }
        out.push('\n');
    }
    truncate_at_char(&mut out, len);
    out
}

/// Tool output (a command's log, a file's lines) of about `len` bytes.
fn tool_output(rng: &mut SplitMix64, len: usize) -> String {
    if rng.chance(0.5) {
        return code(rng, len);
    }
    let mut out = String::with_capacity(len + 128);
    let mut n = 1;
    while out.len() < len {
        let status = rng.pick(&["ok", "ok", "ok", "FAILED", "ignored"]);
        let a = rng.pick(IDENTS);
        out.push_str(&format!("test {a}::case_{n} ... {status}\n"));
        if status == "FAILED" {
            out.push_str("\tassertion failed: `left == right`\n\t  left: \"é\\n\"\n");
        }
        n += 1;
    }
    truncate_at_char(&mut out, len);
    out
}

// ---------------------------------------------------------------------------------------------
// The generator
// ---------------------------------------------------------------------------------------------

/// Tool kinds with their weights (out of 100): read, edit, execute, search, fetch.
const TOOL_KINDS: &[(&str, usize)] = &[
    ("read", 30),
    ("edit", 27),
    ("execute", 20),
    ("search", 13),
    ("fetch", 10),
];

/// Probability that an edit asks for permission first.
const EDIT_PERMISSION_RATE: f64 = 0.4;

#[rustfmt::skip]
const FILES: &[&str] = &[
    "src/main.rs", "src/lib.rs", "src/wire/frame.rs", "src/parser.rs", "README.md",
    "tests/integration.rs", "docs/设计.md", "config/settings.toml",
];

struct Generator {
    rng: SplitMix64,
    out: Vec<u8>,
    target_bytes: usize,
}

impl Generator {
    fn new(seed: u64, target_bytes: usize) -> Self {
        Self {
            rng: SplitMix64::new(seed),
            out: Vec::with_capacity(target_bytes + (1 << 16)),
            target_bytes,
        }
    }

    fn write_line<T: Serialize>(&mut self, message: &T) {
        serde_json::to_writer(&mut self.out, message).expect("corpus structs always serialize");
        self.out.push(b'\n');
    }

    fn request<P: Serialize>(&mut self, id: &Id, method: &str, params: P) {
        self.write_line(&Request {
            jsonrpc: JSONRPC,
            id,
            method,
            params,
        });
    }

    fn respond<R: Serialize>(&mut self, id: &Id, result: R) {
        self.write_line(&Response {
            jsonrpc: JSONRPC,
            id,
            result,
        });
    }

    fn notify(&mut self, params: &SessionNotification<'_>) {
        self.write_line(&Notification {
            jsonrpc: JSONRPC,
            method: "session/update",
            params,
        });
    }

    /// One connection: handshake, a session, 3–20 turns (fewer if the target is reached).
    fn connection(&mut self, index: usize) {
        let mut next_client_id = 0u64;
        let mut client_id = || {
            let id = Id::Int(next_client_id);
            next_client_id += 1;
            id
        };

        let id = client_id();
        self.request(
            &id,
            "initialize",
            InitializeParams {
                protocol_version: 1,
                client_capabilities: ClientCapabilities {
                    fs: FsCapabilities {
                        read_text_file: true,
                        write_text_file: true,
                    },
                    terminal: true,
                },
                client_info: Implementation {
                    name: "zed",
                    title: "Zed",
                    version: "0.211.4",
                },
            },
        );
        self.respond(
            &id,
            InitializeResult {
                protocol_version: 1,
                agent_capabilities: AgentCapabilities {
                    load_session: true,
                    prompt_capabilities: PromptCapabilities {
                        image: false,
                        audio: false,
                        embedded_context: true,
                    },
                    mcp_capabilities: McpCapabilities {
                        http: false,
                        sse: false,
                    },
                },
                auth_methods: [],
                agent_info: Implementation {
                    name: "agentao",
                    title: "Agentao",
                    version: "0.4.2",
                },
            },
        );

        let cwd = format!("/home/dev/projects/app-{index:02}");
        let id = client_id();
        self.request(
            &id,
            "session/new",
            NewSessionParams {
                cwd: &cwd,
                mcp_servers: [],
            },
        );
        let session_id = format!("sess_{:016x}", self.rng.next_u64());
        self.respond(
            &id,
            NewSessionResult {
                session_id: &session_id,
            },
        );

        let turns = self.rng.range(3, 20);
        let mut next_permission = 0usize;
        for turn in 0..turns {
            let id = client_id();
            self.turn(&session_id, &cwd, &id, turn, &mut next_permission);
            if self.out.len() >= self.target_bytes {
                break;
            }
        }
    }

    /// One prompt turn: the prompt, the streamed answer with tool calls, the response.
    fn turn(
        &mut self,
        session_id: &str,
        cwd: &str,
        prompt_id: &Id,
        turn: usize,
        next_permission: &mut usize,
    ) {
        // The prompt: 75 % short prose, 25 % a pasted block of code; sometimes a link.
        let text = if self.rng.chance(0.75) {
            let len = self.rng.range(20, 800);
            prose(&mut self.rng, len)
        } else {
            let len = self.rng.skewed(1_000, 50_000, 2);
            let mut text = String::from("Why does this fail?\n```rust\n");
            text.push_str(&code(&mut self.rng, len));
            text.push_str("\n```");
            text
        };
        let file = self.rng.pick(FILES);
        let uri = format!("file://{cwd}/{file}");
        let mut prompt = vec![ContentBlock::Text { text: &text }];
        if self.rng.chance(0.2) {
            prompt.push(ContentBlock::ResourceLink {
                uri: &uri,
                name: file.rsplit('/').next().unwrap_or(file),
            });
        }
        self.request(
            prompt_id,
            "session/prompt",
            PromptParams { session_id, prompt },
        );

        // The answer: chunks spread over the gaps between tool calls.
        let tool_calls = self.rng.range(1, 11);
        let mut messages = self.rng.range(40, 376);
        let mut thoughts = self.rng.range(10, 88);
        for step in 0..=tool_calls {
            let gaps_left = tool_calls + 1 - step;
            let these_thoughts = share(&mut self.rng, thoughts, gaps_left);
            let these_messages = share(&mut self.rng, messages, gaps_left);
            thoughts -= these_thoughts;
            messages -= these_messages;
            for _ in 0..these_thoughts {
                let text = self.chunk_text();
                self.notify(&session_update(
                    session_id,
                    SessionUpdate::AgentThoughtChunk {
                        content: TextContent::new(&text),
                    },
                ));
            }
            for _ in 0..these_messages {
                let text = self.chunk_text();
                self.notify(&session_update(
                    session_id,
                    SessionUpdate::AgentMessageChunk {
                        content: TextContent::new(&text),
                    },
                ));
            }
            if step < tool_calls {
                let tool_call_id = format!("call_{turn}_{step}_{:08x}", self.rng.next_u64() >> 32);
                self.tool_call(session_id, cwd, &tool_call_id, next_permission);
            }
        }

        let stop_reason = match self.rng.range(0, 19) {
            0 => "cancelled",
            1 => "max_tokens",
            _ => "end_turn",
        };
        self.respond(prompt_id, PromptResult { stop_reason });
    }

    /// A `tool_call`, perhaps a permission request and its answer, then `in_progress` and
    /// `completed` updates.
    fn tool_call(
        &mut self,
        session_id: &str,
        cwd: &str,
        tool_call_id: &str,
        next_permission: &mut usize,
    ) {
        let kind = self.tool_kind();
        let file = self.rng.pick(FILES);
        let path = format!("{cwd}/{file}");

        // The rawInput strings live here so the borrowed wire structs can point into them.
        let old_string;
        let new_string;
        let command;
        let pattern;
        let url;
        let (title, raw_input) = match kind {
            "read" => (
                format!("Read {file}"),
                RawInput::Read {
                    file_path: &path,
                    offset: self.rng.range(0, 400),
                    limit: 2000,
                },
            ),
            "edit" => {
                let len = self.rng.range(50, 2000);
                old_string = code(&mut self.rng, len);
                let len = self.rng.range(50, 2000);
                new_string = code(&mut self.rng, len);
                (
                    format!("Edit {file}"),
                    RawInput::Edit {
                        file_path: &path,
                        old_string: &old_string,
                        new_string: &new_string,
                    },
                )
            }
            "execute" => {
                command = format!(
                    "cd {cwd} && cargo test --package {} -- --nocapture 2>&1 | tail -n {}",
                    self.rng.pick(IDENTS),
                    self.rng.range(20, 200)
                );
                (
                    "Run the tests".to_owned(),
                    RawInput::Execute {
                        command: &command,
                        description: "Run the test suite — vérifier",
                        timeout: 120_000,
                    },
                )
            }
            "search" => {
                pattern = format!("fn {}\\(.*\\) -> \"", self.rng.pick(IDENTS));
                (
                    format!("Search for {pattern}"),
                    RawInput::Search {
                        pattern: &pattern,
                        path: cwd,
                        glob: "**/*.rs",
                    },
                )
            }
            _ => {
                url = format!(
                    "https://docs.example.org/{}/{}?q=%E4%B8%AD",
                    self.rng.pick(IDENTS),
                    self.rng.range(1, 999)
                );
                (
                    format!("Fetch {url}"),
                    RawInput::Fetch {
                        url: &url,
                        prompt: "Summarise the API — 要点だけ",
                    },
                )
            }
        };
        self.notify(&session_update(
            session_id,
            SessionUpdate::ToolCall {
                tool_call_id,
                title: &title,
                kind,
                status: "pending",
                locations: vec![Location { path: &path }],
                raw_input,
            },
        ));

        // Edits produce a diff; some ask for permission with it first.
        let diff = (kind == "edit").then(|| {
            let old_len = self.rng.range(1_000, 20_000);
            let new_len = self.rng.range(1_000, 20_000);
            (code(&mut self.rng, old_len), code(&mut self.rng, new_len))
        });
        if let Some((old_text, new_text)) = &diff
            && self.rng.chance(EDIT_PERMISSION_RATE)
        {
            let id = Id::Str(format!("perm_{next_permission}"));
            *next_permission += 1;
            self.write_line(&Request {
                jsonrpc: JSONRPC,
                id: &id,
                method: "session/request_permission",
                params: PermissionParams {
                    session_id,
                    tool_call: PermissionToolCall {
                        tool_call_id,
                        title: &title,
                        kind,
                        status: "pending",
                        content: [ToolCallContent::Diff {
                            path: &path,
                            old_text,
                            new_text,
                        }],
                    },
                    options: PERMISSION_OPTIONS,
                },
            });
            let option_id = if self.rng.chance(0.8) {
                "allow_once"
            } else {
                "allow_always"
            };
            self.respond(
                &id,
                PermissionResult {
                    outcome: PermissionOutcome {
                        outcome: "selected",
                        option_id,
                    },
                },
            );
        }

        self.notify(&session_update(
            session_id,
            SessionUpdate::ToolCallUpdate {
                tool_call_id,
                status: "in_progress",
                content: None,
            },
        ));
        let output;
        let content = match &diff {
            Some((old_text, new_text)) => ToolCallContent::Diff {
                path: &path,
                old_text,
                new_text,
            },
            None => {
                let len = self.rng.skewed(50, 8_000, 2);
                output = tool_output(&mut self.rng, len);
                ToolCallContent::Content {
                    content: TextContent::new(&output),
                }
            }
        };
        self.notify(&session_update(
            session_id,
            SessionUpdate::ToolCallUpdate {
                tool_call_id,
                status: "completed",
                content: Some(vec![content]),
            },
        ));
    }

    fn tool_kind(&mut self) -> &'static str {
        let mut roll = self.rng.range(0, 99);
        for &(kind, weight) in TOOL_KINDS {
            if roll < weight {
                return kind;
            }
            roll -= weight;
        }
        TOOL_KINDS[0].0
    }

    /// A streamed chunk: 5–200 bytes of prose, skewed small.
    fn chunk_text(&mut self) -> String {
        let len = self.rng.skewed(5, 200, 2);
        prose(&mut self.rng, len)
    }

    /// A token-sized text of 1–24 bytes: one to three tokens.
    fn token_text(&mut self) -> String {
        let mut text = String::new();
        let count = self.rng.pick(&[1, 1, 1, 2, 2, 3]);
        for _ in 0..count {
            let token = self.rng.pick(TOKENS);
            if text.len() + token.len() > 24 {
                break;
            }
            text.push_str(token);
        }
        text
    }
}

/// How many of `left` items go into the next of `gaps` gaps: all of them for the last gap,
/// otherwise a random share around the even one.
fn share(rng: &mut SplitMix64, left: usize, gaps: usize) -> usize {
    if gaps <= 1 {
        return left;
    }
    let even = left / gaps;
    rng.range(0, (2 * even).min(left))
}

// ---------------------------------------------------------------------------------------------
// Classification
// ---------------------------------------------------------------------------------------------

/// What one line of a corpus is, by direction and method (and update kind for
/// `session/update`). Responses are named after the request they answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// `session/update` with `agent_message_chunk`.
    AgentMessageChunk,
    /// `session/update` with `agent_thought_chunk`.
    AgentThoughtChunk,
    /// `session/update` with `tool_call`.
    ToolCall,
    /// `session/update` with `tool_call_update`.
    ToolCallUpdate,
    /// Any other notification.
    OtherNotification,
    /// A request, by method.
    Request(RequestMethod),
    /// The response to a request, by the request's method.
    Response(RequestMethod),
    /// A response whose id matches no request seen before it.
    UnmatchedResponse,
    /// A line that is not a JSON-RPC message at all.
    Invalid,
}

/// The request methods the mixed corpus uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestMethod {
    /// `initialize`.
    Initialize,
    /// `session/new`.
    SessionNew,
    /// `session/prompt`.
    SessionPrompt,
    /// `session/request_permission`.
    RequestPermission,
    /// Anything else.
    Other,
}

impl RequestMethod {
    fn from_method(method: &str) -> Self {
        match method {
            "initialize" => Self::Initialize,
            "session/new" => Self::SessionNew,
            "session/prompt" => Self::SessionPrompt,
            "session/request_permission" => Self::RequestPermission,
            _ => Self::Other,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Kind::AgentMessageChunk => f.write_str("notif agent_message_chunk"),
            Kind::AgentThoughtChunk => f.write_str("notif agent_thought_chunk"),
            Kind::ToolCall => f.write_str("notif tool_call"),
            Kind::ToolCallUpdate => f.write_str("notif tool_call_update"),
            Kind::OtherNotification => f.write_str("notif other"),
            Kind::Request(method) => write!(f, "req {method:?}"),
            Kind::Response(method) => write!(f, "resp {method:?}"),
            Kind::UnmatchedResponse => f.write_str("resp unmatched"),
            Kind::Invalid => f.write_str("invalid"),
        }
    }
}

/// Messages and bytes of one [`Kind`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Number of lines.
    pub messages: usize,
    /// Their bytes, newlines excluded.
    pub bytes: usize,
}

/// The message mix of a corpus: lines and bytes per [`Kind`], as perf-anchors tabulates it.
///
/// Classification parses every line with `serde_json::Value`; it is meant for tests and
/// reports, not for timed loops.
#[derive(Clone, Debug, Default)]
pub struct Mix {
    /// Lines and bytes per kind.
    pub kinds: HashMap<Kind, Tally>,
    /// All lines.
    pub total: Tally,
}

impl Mix {
    /// Classifies every line of `corpus`. Responses are matched to requests by id (ids are
    /// reused across connections, so the latest request with that id wins, as it does on a
    /// real connection where an id is unique while pending).
    pub fn of(corpus: &[u8]) -> Self {
        let mut mix = Mix::default();
        let mut pending: HashMap<String, RequestMethod> = HashMap::new();
        for line in lines(corpus) {
            let kind = classify(line, &mut pending);
            let tally = mix.kinds.entry(kind).or_default();
            tally.messages += 1;
            tally.bytes += line.len();
            mix.total.messages += 1;
            mix.total.bytes += line.len();
        }
        mix
    }

    /// The tally of one kind (zero if absent).
    pub fn get(&self, kind: Kind) -> Tally {
        self.kinds.get(&kind).copied().unwrap_or_default()
    }

    /// The share of messages of `kind`, in percent.
    pub fn message_percent(&self, kind: Kind) -> f64 {
        100.0 * self.get(kind).messages as f64 / self.total.messages.max(1) as f64
    }

    /// The share of bytes of `kind`, in percent.
    pub fn byte_percent(&self, kind: Kind) -> f64 {
        100.0 * self.get(kind).bytes as f64 / self.total.bytes.max(1) as f64
    }

    /// The mean line length of `kind` in bytes (0 if absent).
    pub fn mean_bytes(&self, kind: Kind) -> f64 {
        let tally = self.get(kind);
        tally.bytes as f64 / tally.messages.max(1) as f64
    }
}

impl fmt::Display for Mix {
    /// A table like perf-anchors' "Corpora" one.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut kinds: Vec<_> = self.kinds.keys().copied().collect();
        kinds.sort();
        writeln!(
            f,
            "{:<34} {:>9} {:>7} {:>12} {:>7} {:>8}",
            "kind", "messages", "% msgs", "bytes", "% bytes", "mean B"
        )?;
        for kind in kinds {
            let tally = self.get(kind);
            writeln!(
                f,
                "{:<34} {:>9} {:>7.2} {:>12} {:>7.2} {:>8.0}",
                kind.to_string(),
                tally.messages,
                self.message_percent(kind),
                tally.bytes,
                self.byte_percent(kind),
                self.mean_bytes(kind)
            )?;
        }
        write!(
            f,
            "{:<34} {:>9} {:>7} {:>12} {:>7} {:>8.0}",
            "total",
            self.total.messages,
            "",
            self.total.bytes,
            "",
            self.total.bytes as f64 / self.total.messages.max(1) as f64
        )
    }
}

fn classify(line: &[u8], pending: &mut HashMap<String, RequestMethod>) -> Kind {
    let Ok(serde_json::Value::Object(message)) = serde_json::from_slice(line) else {
        return Kind::Invalid;
    };
    let id = message.get("id").filter(|id| !id.is_null());
    match (message.get("method").and_then(|m| m.as_str()), id) {
        (Some("session/update"), None) => {
            let update = message
                .get("params")
                .and_then(|p| p.get("update"))
                .and_then(|u| u.get("sessionUpdate"))
                .and_then(|k| k.as_str());
            match update {
                Some("agent_message_chunk") => Kind::AgentMessageChunk,
                Some("agent_thought_chunk") => Kind::AgentThoughtChunk,
                Some("tool_call") => Kind::ToolCall,
                Some("tool_call_update") => Kind::ToolCallUpdate,
                _ => Kind::OtherNotification,
            }
        }
        (Some(_), None) => Kind::OtherNotification,
        (Some(method), Some(id)) => {
            let method = RequestMethod::from_method(method);
            pending.insert(id.to_string(), method);
            Kind::Request(method)
        }
        (None, Some(id)) => match pending.remove(&id.to_string()) {
            Some(method) => Kind::Response(method),
            None => Kind::UnmatchedResponse,
        },
        (None, None) => Kind::Invalid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIXED_BYTES: usize = 6 << 20;

    fn mixed_sample() -> &'static [u8] {
        static CORPUS: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
        CORPUS.get_or_init(|| mixed(MIXED_BYTES))
    }

    fn parse(line: &[u8]) -> serde_json::Value {
        serde_json::from_slice(line).unwrap_or_else(|e| {
            panic!(
                "line does not parse ({e}): {}",
                String::from_utf8_lossy(line)
            )
        })
    }

    #[test]
    fn splitmix64_matches_the_reference_sequence() {
        // First outputs of splitmix64 seeded with 0 (Vigna's reference implementation).
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(rng.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn same_seed_gives_same_bytes() {
        assert_eq!(mixed(1 << 20), mixed(1 << 20));
        assert_eq!(small(1 << 16), small(1 << 16));
        assert_eq!(mixed(1 << 20), mixed_with_seed(1 << 20, SEED));
    }

    #[test]
    fn other_seed_gives_other_bytes() {
        assert_ne!(mixed(1 << 18), mixed_with_seed(1 << 18, SEED + 1));
        assert_ne!(small(1 << 14), small_with_seed(1 << 14, SEED + 1));
    }

    #[test]
    fn corpora_reach_their_target_and_end_with_a_newline() {
        let corpus = mixed_sample();
        assert!(corpus.len() >= MIXED_BYTES);
        // At most one turn past the target: a turn is well under 2 MB.
        assert!(corpus.len() < MIXED_BYTES + (2 << 20), "{}", corpus.len());
        assert_eq!(corpus.last(), Some(&b'\n'));

        let corpus = small(1 << 20);
        assert!(corpus.len() >= 1 << 20 && corpus.len() < (1 << 20) + 256);
        assert_eq!(corpus.last(), Some(&b'\n'));
    }

    #[test]
    fn every_mixed_line_is_a_compact_jsonrpc_object() {
        for line in lines(mixed_sample()) {
            let value = parse(line);
            assert_eq!(value["jsonrpc"], "2.0");
            assert!(line.starts_with(br#"{"jsonrpc":"2.0","#));
            // Compact and canonical: serde_json writes the same bytes back (key order kept by
            // comparing against the struct order, which the prefix check above pins).
            assert!(!line.contains(&b'\n') && !line.contains(&b'\r'));
        }
    }

    #[test]
    fn mixed_message_mix_is_close_to_perf_anchors() {
        let mix = Mix::of(mixed_sample());
        println!("{mix}");
        let pct = |kind| mix.message_percent(kind);
        let bytes_pct = |kind| mix.byte_percent(kind);

        assert_eq!(mix.get(Kind::Invalid).messages, 0);
        assert_eq!(mix.get(Kind::OtherNotification).messages, 0);
        assert_eq!(mix.get(Kind::UnmatchedResponse).messages, 0);

        // perf-anchors: 74.8 % / 17.6 % / 2.1 % / 4.2 % of messages.
        assert!((68.0..82.0).contains(&pct(Kind::AgentMessageChunk)));
        assert!((13.0..22.0).contains(&pct(Kind::AgentThoughtChunk)));
        assert!((1.2..3.5).contains(&pct(Kind::ToolCall)));
        // Each tool call gets exactly two updates.
        assert_eq!(
            mix.get(Kind::ToolCallUpdate).messages,
            2 * mix.get(Kind::ToolCall).messages
        );

        // perf-anchors: chunks ~40 % + ~9 % of bytes, updates ~34 %, permissions ~9 %,
        // prompts ~4 %.
        assert!((28.0..50.0).contains(&bytes_pct(Kind::AgentMessageChunk)));
        assert!((5.0..15.0).contains(&bytes_pct(Kind::AgentThoughtChunk)));
        assert!((22.0..45.0).contains(&bytes_pct(Kind::ToolCallUpdate)));
        assert!((4.0..16.0).contains(&bytes_pct(Kind::Request(RequestMethod::RequestPermission))));
        assert!((1.5..9.0).contains(&bytes_pct(Kind::Request(RequestMethod::SessionPrompt))));

        // Mean sizes: chunks ~260 B, tool calls ~875 B, permission requests ~20 KB.
        assert!((180.0..340.0).contains(&mix.mean_bytes(Kind::AgentMessageChunk)));
        assert!((500.0..1300.0).contains(&mix.mean_bytes(Kind::ToolCall)));
        let permission = mix.mean_bytes(Kind::Request(RequestMethod::RequestPermission));
        assert!((12_000.0..30_000.0).contains(&permission), "{permission}");
        let prompt = mix.mean_bytes(Kind::Request(RequestMethod::SessionPrompt));
        assert!((2_500.0..9_000.0).contains(&prompt), "{prompt}");

        // Permissions: 40 % of edits, edits ~27 % of tool calls.
        let permissions = mix
            .get(Kind::Request(RequestMethod::RequestPermission))
            .messages;
        let ratio = permissions as f64 / mix.get(Kind::ToolCall).messages as f64;
        assert!((0.05..0.2).contains(&ratio), "{ratio}");
    }

    #[test]
    fn every_request_is_answered() {
        let mix = Mix::of(mixed_sample());
        for method in [
            RequestMethod::Initialize,
            RequestMethod::SessionNew,
            RequestMethod::SessionPrompt,
            RequestMethod::RequestPermission,
        ] {
            let requests = mix.get(Kind::Request(method)).messages;
            assert!(requests > 0, "{method:?}");
            assert_eq!(
                requests,
                mix.get(Kind::Response(method)).messages,
                "{method:?}"
            );
        }
        // Each connection has one initialize and one session/new and 3–20 prompts (the last
        // connection may stop early, at the target).
        let connections = mix.get(Kind::Request(RequestMethod::Initialize)).messages;
        let prompts = mix
            .get(Kind::Request(RequestMethod::SessionPrompt))
            .messages;
        assert_eq!(
            connections,
            mix.get(Kind::Request(RequestMethod::SessionNew)).messages
        );
        assert!(prompts > 3 * (connections - 1) && prompts <= 20 * connections);
    }

    #[test]
    fn ids_are_integers_from_the_client_and_perm_strings_from_the_agent() {
        for line in lines(mixed_sample()) {
            let value = parse(line);
            match value["method"].as_str() {
                Some("session/request_permission") => {
                    assert!(
                        value["id"]
                            .as_str()
                            .is_some_and(|id| id.starts_with("perm_"))
                    );
                }
                Some("initialize" | "session/new" | "session/prompt") => {
                    assert!(value["id"].is_u64());
                }
                _ => {}
            }
        }
    }

    #[test]
    fn mixed_text_is_full_of_escapes_and_non_ascii() {
        let corpus = mixed_sample();
        let text = std::str::from_utf8(corpus).expect("corpus is UTF-8");
        for needle in ["é", "中文", "日本語", "Ελληνικά", "русский", "🚀", "—"]
        {
            assert!(text.contains(needle), "{needle}");
        }
        // Escaped quote, backslash, newline and tab all appear on the wire.
        for escape in [r#"\""#, r"\\", r"\n", r"\t"] {
            assert!(text.contains(escape), "{escape}");
        }
        // And they are frequent: a good share of chunk lines carries at least one escape.
        let chunks: Vec<&[u8]> = lines(corpus)
            .filter(|line| line.windows(19).any(|w| w == b"agent_message_chunk"))
            .collect();
        let escaped = chunks.iter().filter(|line| line.contains(&b'\\')).count();
        let share = escaped as f64 / chunks.len() as f64;
        assert!((0.2..0.95).contains(&share), "{share}");
    }

    #[test]
    fn mixed_shapes_carry_the_official_fields() {
        let mut seen_diff_update = false;
        let mut seen_resource_link = false;
        let mut seen_kinds = std::collections::BTreeSet::new();
        for line in lines(mixed_sample()) {
            let value = parse(line);
            let params = &value["params"];
            match value["method"].as_str() {
                Some("session/request_permission") => {
                    let diff = &params["toolCall"]["content"][0];
                    assert_eq!(diff["type"], "diff");
                    assert!(diff["oldText"].is_string() && diff["newText"].is_string());
                    assert_eq!(params["options"].as_array().map(Vec::len), Some(3));
                }
                Some("session/prompt") => {
                    assert_eq!(params["prompt"][0]["type"], "text");
                    seen_resource_link |= params["prompt"][1]["type"] == "resource_link";
                }
                Some("session/update") => {
                    let update = &params["update"];
                    if update["sessionUpdate"] == "tool_call" {
                        assert!(update["rawInput"].is_object());
                        seen_kinds.insert(update["kind"].as_str().unwrap_or("").to_owned());
                    }
                    if update["status"] == "completed" {
                        seen_diff_update |= update["content"][0]["type"] == "diff";
                    }
                }
                _ => {}
            }
        }
        assert!(seen_diff_update && seen_resource_link);
        let kinds: Vec<_> = seen_kinds.iter().map(String::as_str).collect();
        assert_eq!(kinds, ["edit", "execute", "fetch", "read", "search"]);
    }

    #[test]
    fn small_corpus_is_token_sized_message_chunks() {
        let corpus = small(1 << 20);
        let mut total = 0usize;
        let mut count = 0usize;
        let mut escaped = 0usize;
        for line in lines(&corpus) {
            let value = parse(line);
            assert_eq!(value["method"], "session/update");
            assert_eq!(value["params"]["sessionId"], SMALL_SESSION_ID);
            let update = &value["params"]["update"];
            assert_eq!(update["sessionUpdate"], "agent_message_chunk");
            let text = update["content"]["text"].as_str().expect("text");
            assert!((1..=24).contains(&text.len()), "{text:?}");
            escaped += usize::from(line.contains(&b'\\'));
            total += line.len() + 1;
            count += 1;
        }
        // perf-anchors: 173 B per line on average.
        let mean = total as f64 / count as f64;
        assert!((160.0..185.0).contains(&mean), "{mean}");
        let share = escaped as f64 / count as f64;
        assert!((0.1..0.6).contains(&share), "{share}");
    }
}
