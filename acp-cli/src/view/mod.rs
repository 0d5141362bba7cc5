//! `acp-cli view FILE [-o trace.html]`: a trace as one self-contained HTML page (inline CSS and
//! JS, no network): a sequence diagram between client and agent, one row per message, turns
//! grouped, a turn's run of chunks folded into one row, lint findings marked on their rows,
//! and a message's full JSON on click.
//!
//! The rows are laid out here ([`rows`]); the page's script only draws them, so what a browser
//! shows can be checked against [`Row`]s (tests/view_chromium.rs).

use std::path::PathBuf;

use clap::Args;
use serde_json::{Value, json};

use acp_conform::lint;
use acp_conform::rules::{Finding, MonitorOptions};
use acp_conform::trace::{self as format, Side, Trace};

/// `acp-cli view`.
#[derive(Debug, Args)]
pub struct ViewArgs {
    /// The trace (any form `acp-cli lint` reads)
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Where to write the page (default: FILE with `.html`)
    #[arg(short = 'o', long = "out", value_name = "HTML")]
    pub out: Option<PathBuf>,
}

/// Update kinds folded together when they follow each other in a turn.
const FOLDED: &[&str] = &[
    "agent_message_chunk",
    "agent_thought_chunk",
    "user_message_chunk",
];

/// One row of the diagram: a message, or a run of chunks folded into one.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The trace line of its (first) message.
    pub line: usize,
    /// Who sent it.
    pub from: Side,
    /// What the arrow says: the method, `result #id` or `error #id`.
    pub label: String,
    /// The prompt turn it belongs to (0 = outside any turn), numbered from 1.
    pub turn: usize,
    /// The messages: one, or the folded chunks.
    pub messages: Vec<Value>,
    /// The findings on its lines, as `acp-cli lint` prints them.
    pub findings: Vec<String>,
}

/// Lays out the rows of a trace with its findings.
pub fn rows(trace: &Trace, findings: &[Finding]) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    let mut turn = 0;
    let mut turns_open: Vec<(String, usize)> = Vec::new(); // (prompt id, turn number)
    let mut turn_count = 0;
    for entry in &trace.entries {
        let message: Value = serde_json::from_slice(&entry.text)
            .unwrap_or_else(|_| json!({"not JSON": String::from_utf8_lossy(&entry.text)}));
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let method = method.as_deref();
        let id = message.get("id").map(Value::to_string).unwrap_or_default();
        let mine: Vec<String> = findings
            .iter()
            .filter(|f| f.line == entry.line)
            .map(ToString::to_string)
            .collect();
        if entry.from == Side::Client && method == Some("session/prompt") {
            turn_count += 1;
            turns_open.push((id.clone(), turn_count));
            turn = turn_count;
        }
        let kind = (method == Some("session/update"))
            .then(|| {
                message
                    .pointer("/params/update/sessionUpdate")
                    .and_then(Value::as_str)
            })
            .flatten()
            .map(str::to_owned);
        let kind = kind.as_deref();
        let label = match (method, kind) {
            (Some(_), Some(kind)) => format!("session/update: {kind}"),
            (Some(method), None) => method.to_owned(),
            (None, _) if message.get("error").is_some() => format!("error #{id}"),
            (None, _) if message.get("result").is_some() => format!("result #{id}"),
            (None, _) => String::from("(not JSON-RPC)"),
        };
        let folds = kind.is_some_and(|k| FOLDED.contains(&k))
            && mine.is_empty()
            && rows.last().is_some_and(|last| {
                last.label == label && last.turn == turn && last.findings.is_empty()
            });
        if folds {
            let last = rows.last_mut().expect("checked above");
            last.messages.push(message);
        } else {
            rows.push(Row {
                line: entry.line,
                from: entry.from,
                label,
                turn,
                messages: vec![message.clone()],
                findings: mine,
            });
        }
        // The prompt's answer closes its turn.
        if entry.from == Side::Agent
            && method.is_none()
            && let Some(at) = turns_open.iter().position(|(open, _)| *open == id)
        {
            turns_open.remove(at);
            turn = turns_open.last().map_or(0, |(_, n)| *n);
        }
    }
    rows
}

/// The page for `rows`, titled `title`.
pub(crate) fn page(title: &str, rows: &[Row], errors: usize) -> String {
    let data: Vec<Value> = rows
        .iter()
        .map(|row| {
            json!({
                "line": row.line,
                "from": row.from.name(),
                "label": row.label,
                "turn": row.turn,
                "text": folded_text(row),
                "messages": row.messages,
                "findings": row.findings,
            })
        })
        .collect();
    let data = json!({"title": title, "errors": errors, "rows": data});
    // Inside <script>, `</` must not appear.
    let data = data.to_string().replace("</", "<\\/");
    TEMPLATE
        .replace("{{TITLE}}", &escape(title))
        .replace("{{DATA}}", &data)
}

/// The text of a folded run of chunks, for its summary.
fn folded_text(row: &Row) -> String {
    if row.messages.len() < 2 {
        return String::new();
    }
    row.messages
        .iter()
        .filter_map(|m| {
            m.pointer("/params/update/content/text")
                .and_then(Value::as_str)
        })
        .collect()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `acp-cli view --help`.
pub const ABOUT: &str = "\
Draw a trace as a self-contained HTML page (no network: CSS and JS inline).

The page is a sequence diagram between client and agent: one row per message with its
direction and method, prompt turns grouped, a turn's run of message chunks folded into one
row (click to unfold), `acp-cli lint` findings marked in red on their rows, and the full JSON
of a message on click. Reads every form `acp-cli lint` reads. Exit status: 0 when the page is
written, 2 when the trace cannot be read or the page cannot be written.";

/// Runs `acp-cli view`; returns the exit status.
pub fn run(args: &ViewArgs) -> i32 {
    let bytes = match std::fs::read(&args.file) {
        Ok(bytes) => bytes,
        Err(e) => {
            eprintln!("acp-cli view: cannot read {}: {e}", args.file.display());
            return 2;
        }
    };
    let trace = format::read(&bytes);
    let findings = lint::check(&trace, MonitorOptions::default());
    let errors = findings.len();
    let rows = rows(&trace, &findings);
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.file.with_extension("html"));
    let title = args.file.display().to_string();
    if let Err(e) = std::fs::write(&out, page(&title, &rows, errors)) {
        eprintln!("acp-cli view: cannot write {}: {e}", out.display());
        return 2;
    }
    crate::stdout::print(format_args!(
        "{}: {}, {}\n",
        out.display(),
        counted(rows.len(), "row"),
        counted(errors, "finding")
    ));
    0
}

/// `1 finding`, `2 findings`.
fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

const TEMPLATE: &str = include_str!("page.html");
