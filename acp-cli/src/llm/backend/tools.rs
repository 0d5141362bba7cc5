//! The nine tools offered to the model, with Agentao's names and arguments, and a model's
//! call read into a [`ToolRequest`]: the one place that knows each tool's JSON schema, its
//! ACP kind, its human title and whether it asks in `workspace-write`.

use acp_core::schema::{PlanEntry, PlanEntryPriority, PlanEntryStatus, ToolKind};
use serde_json::{Map, Value, json};

use crate::model::chat::ToolSpec;

/// Longest tool call title, in characters (a long shell command is cut with `…`).
const TITLE_MAX: usize = 80;

/// A model's tool call, its arguments read and checked.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ToolRequest {
    /// A tool of one of the session's MCP servers (R-MCP-6).
    Mcp {
        /// `mcp__<server>__<tool>`: what the model called, and what `*_always` is kept under.
        model_name: String,
        /// The server's name.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// The arguments, a JSON object.
        arguments: serde_json::Value,
        /// The server annotated the tool read-only.
        read_only: bool,
    },
    /// `read_file`: `offset` is the first line (0-based), `limit` the number of lines.
    ReadFile {
        /// As the model wrote it.
        path: String,
        /// First line to return, 0-based.
        offset: Option<usize>,
        /// How many lines.
        limit: Option<usize>,
    },
    /// `list_directory`.
    ListDirectory {
        /// As the model wrote it.
        path: String,
    },
    /// `glob`.
    Glob {
        /// The glob.
        pattern: String,
        /// The directory searched (default: the cwd).
        path: Option<String>,
    },
    /// `search_file_content`.
    SearchFileContent {
        /// A regular expression.
        pattern: String,
        /// The directory searched (default: the cwd).
        path: Option<String>,
        /// A glob the files must match.
        include: Option<String>,
    },
    /// `write_file`.
    WriteFile {
        /// As the model wrote it.
        path: String,
        /// The whole new content.
        content: String,
    },
    /// `replace`: `old_string` must occur exactly once.
    Replace {
        /// As the model wrote it.
        path: String,
        /// The text to replace.
        old_string: String,
        /// Its replacement.
        new_string: String,
    },
    /// `run_shell_command`.
    RunShellCommand {
        /// The command line.
        command: String,
        /// How long it may run.
        timeout_ms: Option<u64>,
    },
    /// `ask_user`.
    AskUser {
        /// The question.
        question: String,
    },
    /// `todo_write`: the whole plan, every entry with its status (R-LLM-8).
    TodoWrite {
        /// The entries, in order, priority `medium` (the model gives none, as in Agentao).
        entries: Vec<PlanEntry>,
    },
}

/// Every tool name, in the order they are offered.
pub(crate) const TOOL_NAMES: [&str; 9] = [
    "read_file",
    "list_directory",
    "glob",
    "search_file_content",
    "write_file",
    "replace",
    "run_shell_command",
    "ask_user",
    "todo_write",
];

/// What the model is told when its `todo_write` is shown (Agentao's words).
pub(crate) const TODO_DONE: &str = "Todo list updated.";

impl ToolRequest {
    /// Reads a call of `name` with `arguments` (the model's JSON text). `Err` is the text
    /// the model is told.
    pub(crate) fn parse(name: &str, arguments: &str) -> Result<Self, String> {
        let value: Value = if arguments.trim().is_empty() {
            Value::Object(Map::new())
        } else {
            serde_json::from_str(arguments)
                .map_err(|e| format!("Error: the arguments of {name} are not valid JSON: {e}"))?
        };
        let Value::Object(args) = value else {
            return Err(format!(
                "Error: the arguments of {name} must be a JSON object"
            ));
        };
        let args = Args { name, args: &args };
        Ok(match name {
            "read_file" => Self::ReadFile {
                path: args.string("path")?,
                offset: args.count("offset")?,
                limit: args.count("limit")?,
            },
            "list_directory" => Self::ListDirectory {
                path: args.string("path")?,
            },
            "glob" => Self::Glob {
                pattern: args.string("pattern")?,
                path: args.optional_string("path")?,
            },
            "search_file_content" => Self::SearchFileContent {
                pattern: args.string("pattern")?,
                path: args.optional_string("path")?,
                include: args.optional_string("include")?,
            },
            "write_file" => Self::WriteFile {
                path: args.string("path")?,
                content: args.text("content")?,
            },
            "replace" => Self::Replace {
                path: args.string("path")?,
                old_string: args.text("old_string")?,
                new_string: args.text("new_string")?,
            },
            "run_shell_command" => Self::RunShellCommand {
                command: args.string("command")?,
                timeout_ms: args.count("timeout_ms")?.map(|ms| ms as u64),
            },
            "ask_user" => Self::AskUser {
                question: args.string("question")?,
            },
            "todo_write" => Self::TodoWrite {
                entries: args.todos()?,
            },
            other => {
                return Err(format!(
                    "Error: unknown tool '{other}'; the tools are {}",
                    TOOL_NAMES.join(", ")
                ));
            }
        })
    }

    /// A call of a session's MCP tool: its arguments must be a JSON object.
    pub(crate) fn mcp(tool: &crate::mcp::McpTool, arguments: &str) -> Result<Self, String> {
        let model_name = tool.model_name();
        let arguments = if arguments.trim().is_empty() {
            serde_json::json!({})
        } else {
            match serde_json::from_str::<serde_json::Value>(arguments) {
                Ok(value @ serde_json::Value::Object(_)) => value,
                _ => {
                    return Err(format!(
                        "Error: the arguments of '{model_name}' must be a JSON object"
                    ));
                }
            }
        };
        Ok(Self::Mcp {
            model_name,
            server: tool.server.clone(),
            tool: tool.tool.name.clone(),
            arguments,
            read_only: tool.tool.is_read_only(),
        })
    }

    /// Agentao's tool name (an MCP tool's `mcp__<server>__<tool>`).
    pub(crate) fn name(&self) -> &str {
        match self {
            Self::Mcp { model_name, .. } => model_name,
            Self::ReadFile { .. } => "read_file",
            Self::ListDirectory { .. } => "list_directory",
            Self::Glob { .. } => "glob",
            Self::SearchFileContent { .. } => "search_file_content",
            Self::WriteFile { .. } => "write_file",
            Self::Replace { .. } => "replace",
            Self::RunShellCommand { .. } => "run_shell_command",
            Self::AskUser { .. } => "ask_user",
            Self::TodoWrite { .. } => "todo_write",
        }
    }

    /// The ACP kind.
    pub(crate) fn kind(&self) -> ToolKind {
        match self {
            Self::Mcp {
                read_only: true, ..
            } => ToolKind::Read,
            Self::Mcp { .. } => ToolKind::Other,
            Self::ReadFile { .. } | Self::ListDirectory { .. } => ToolKind::Read,
            Self::Glob { .. } | Self::SearchFileContent { .. } => ToolKind::Search,
            Self::WriteFile { .. } | Self::Replace { .. } => ToolKind::Edit,
            Self::RunShellCommand { .. } => ToolKind::Execute,
            Self::AskUser { .. } => ToolKind::Other,
            Self::TodoWrite { .. } => ToolKind::Think,
        }
    }

    /// The title the user sees: `Read src/main.rs`, `Edit src/lib.rs`, `Run cargo test`.
    pub(crate) fn title(&self) -> String {
        let title = match self {
            Self::ReadFile { path, .. } => format!("Read {path}"),
            Self::ListDirectory { path } => format!("List {path}"),
            Self::Glob { pattern, path } => in_path(format!("Find {pattern}"), path),
            Self::SearchFileContent { pattern, path, .. } => {
                in_path(format!("Search {pattern}"), path)
            }
            Self::WriteFile { path, .. } => format!("Write {path}"),
            Self::Replace { path, .. } => format!("Edit {path}"),
            Self::RunShellCommand { command, .. } => {
                format!("Run {}", command.lines().next().unwrap_or_default())
            }
            Self::AskUser { question } => format!("Ask: {question}"),
            Self::Mcp { server, tool, .. } => format!("MCP {server}: {tool}"),
            Self::TodoWrite { entries } => format!("Plan ({} steps)", entries.len()),
        };
        shorten(&title, TITLE_MAX)
    }
}

fn in_path(title: String, path: &Option<String>) -> String {
    match path {
        Some(path) => format!("{title} in {path}"),
        None => title,
    }
}

/// At most `max` characters, then `…` if anything was cut.
fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// A call's arguments, read with error texts that name the tool and the argument.
struct Args<'a> {
    name: &'a str,
    args: &'a Map<String, Value>,
}

impl Args<'_> {
    /// A required non-empty string.
    fn string(&self, key: &str) -> Result<String, String> {
        match self.optional_string(key)? {
            Some(value) => Ok(value),
            None => Err(format!(
                "Error: {} needs the argument '{key}' (a non-empty string)",
                self.name
            )),
        }
    }

    /// A required string, possibly empty (file content, replacement text).
    fn text(&self, key: &str) -> Result<String, String> {
        match self.args.get(key) {
            Some(Value::String(value)) => Ok(value.clone()),
            _ => Err(format!(
                "Error: {} needs the argument '{key}' (a string)",
                self.name
            )),
        }
    }

    /// An optional string; empty or null counts as absent.
    fn optional_string(&self, key: &str) -> Result<Option<String>, String> {
        match self.args.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(value)) if value.trim().is_empty() => Ok(None),
            Some(Value::String(value)) => Ok(Some(value.clone())),
            Some(_) => Err(format!(
                "Error: the argument '{key}' of {} must be a string",
                self.name
            )),
        }
    }

    /// `todos`: a non-empty list whose every entry has a non-empty string `content` and a
    /// `status` of `pending`, `in_progress` or `completed`; all or nothing, as in Agentao.
    fn todos(&self) -> Result<Vec<PlanEntry>, String> {
        const SHAPE: &str = "Error: todo_write needs 'todos': a non-empty list of {\"content\": \
                             string, \"status\": \"pending\" | \"in_progress\" | \"completed\"}";
        let todos = match self.args.get("todos") {
            Some(Value::Array(todos)) if !todos.is_empty() => todos,
            _ => return Err(SHAPE.to_owned()),
        };
        todos
            .iter()
            .enumerate()
            .map(|(index, todo)| {
                let content = todo.get("content").and_then(Value::as_str).map(str::trim);
                let status = match todo.get("status").and_then(Value::as_str) {
                    Some("pending") => Some(PlanEntryStatus::Pending),
                    Some("in_progress") => Some(PlanEntryStatus::InProgress),
                    Some("completed") => Some(PlanEntryStatus::Completed),
                    _ => None,
                };
                match (content, status) {
                    (Some(content), Some(status)) if !content.is_empty() => {
                        Ok(PlanEntry::new(content, PlanEntryPriority::Medium, status))
                    }
                    _ => Err(format!("{SHAPE}; todos[{index}] is not one")),
                }
            })
            .collect()
    }

    /// An optional non-negative integer (a number written as a string is accepted).
    fn count(&self, key: &str) -> Result<Option<usize>, String> {
        let wrong = || {
            format!(
                "Error: the argument '{key}' of {} must be a non-negative integer",
                self.name
            )
        };
        match self.args.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => n.as_u64().map(|n| Some(n as usize)).ok_or_else(wrong),
            Some(Value::String(s)) => s.trim().parse().map(Some).map_err(|_| wrong()),
            Some(_) => Err(wrong()),
        }
    }
}

/// The functions offered to the model.
pub(crate) fn specs() -> Vec<ToolSpec> {
    let path = |what: &str| json!({"type": "string", "description": what});
    vec![
        ToolSpec {
            name: "read_file".into(),
            description: "Read a text file. Relative paths are resolved against the working directory.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": path("The file to read."),
                    "offset": {"type": "integer", "description": "First line to read, 0-based."},
                    "limit": {"type": "integer", "description": "How many lines to read."}
                },
                "required": ["path"]
            }),
        },
        ToolSpec {
            name: "list_directory".into(),
            description: "List the entries of a directory (directories end with '/').".into(),
            parameters: json!({
                "type": "object",
                "properties": {"path": path("The directory to list.")},
                "required": ["path"]
            }),
        },
        ToolSpec {
            name: "glob".into(),
            description: "Find files whose path matches a glob pattern such as '**/*.rs'. Files ignored by .gitignore are skipped.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "The glob pattern."},
                    "path": path("The directory to search (default: the working directory).")
                },
                "required": ["pattern"]
            }),
        },
        ToolSpec {
            name: "search_file_content".into(),
            description: "Search file contents for a regular expression; answers 'path:line: text' for each matching line.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "The regular expression."},
                    "path": path("The directory to search (default: the working directory)."),
                    "include": {"type": "string", "description": "Only files matching this glob, e.g. '*.rs'."}
                },
                "required": ["pattern"]
            }),
        },
        ToolSpec {
            name: "write_file".into(),
            description: "Write a whole file (created if missing, replaced otherwise). Asks the user first.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": path("The file to write."),
                    "content": {"type": "string", "description": "The complete new content."}
                },
                "required": ["path", "content"]
            }),
        },
        ToolSpec {
            name: "replace".into(),
            description: "Replace one exact occurrence of old_string with new_string in a file. old_string must occur exactly once; include enough context. Asks the user first.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": path("The file to edit."),
                    "old_string": {"type": "string", "description": "The exact text to replace."},
                    "new_string": {"type": "string", "description": "The text to put instead."}
                },
                "required": ["path", "old_string", "new_string"]
            }),
        },
        ToolSpec {
            name: "run_shell_command".into(),
            description: "Run a command with /bin/sh in the working directory; answers its exit code and output. Asks the user first.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The command line."},
                    "timeout_ms": {"type": "integer", "description": "Kill it after this many milliseconds (default 120000)."}
                },
                "required": ["command"]
            }),
        },
        ToolSpec {
            name: "ask_user".into(),
            description: "Ask the user a question and wait for the answer.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"question": {"type": "string", "description": "The question."}},
                "required": ["question"]
            }),
        },
        ToolSpec {
            name: "todo_write".into(),
            description: "Keep a plan for work of several steps: send the whole list each time, every step with its status (at most one in_progress). The user sees it in the editor.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "todos": {
                        "type": "array",
                        "description": "Every step of the plan, in order.",
                        "items": {
                            "type": "object",
                            "properties": {
                                "content": {"type": "string", "description": "What the step is."},
                                "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}
                            },
                            "required": ["content", "status"]
                        }
                    }
                },
                "required": ["todos"]
            }),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_specs_offer_agentaos_nine_tools_with_their_required_arguments() {
        let specs = specs();
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_ref()).collect();
        assert_eq!(names, TOOL_NAMES);
        let required = |name: &str| {
            specs.iter().find(|s| s.name == name).unwrap().parameters["required"].clone()
        };
        assert_eq!(
            required("replace"),
            json!(["path", "old_string", "new_string"])
        );
        assert_eq!(required("search_file_content"), json!(["pattern"]));
        assert_eq!(required("write_file"), json!(["path", "content"]));
        assert_eq!(required("todo_write"), json!(["todos"]));
    }

    /// R-LLM-8: a todo list is read all or nothing, each entry medium priority.
    #[test]
    fn todo_write_reads_every_entry_or_none() {
        let plan = ToolRequest::parse(
            "todo_write",
            r#"{"todos":[{"content":"Read","status":"completed"},{"content":"Fix","status":"in_progress"}]}"#,
        )
        .unwrap();
        assert_eq!(
            plan,
            ToolRequest::TodoWrite {
                entries: vec![
                    PlanEntry::new(
                        "Read",
                        PlanEntryPriority::Medium,
                        PlanEntryStatus::Completed
                    ),
                    PlanEntry::new(
                        "Fix",
                        PlanEntryPriority::Medium,
                        PlanEntryStatus::InProgress
                    ),
                ]
            }
        );
        assert_eq!(
            (plan.title(), plan.kind()),
            ("Plan (2 steps)".into(), ToolKind::Think)
        );
        let shape = "Error: todo_write needs 'todos': a non-empty list of {\"content\": string, \
                     \"status\": \"pending\" | \"in_progress\" | \"completed\"}";
        assert_eq!(
            ToolRequest::parse("todo_write", r#"{"todos":[]}"#),
            Err(shape.into())
        );
        assert_eq!(ToolRequest::parse("todo_write", "{}"), Err(shape.into()));
        assert_eq!(
            ToolRequest::parse(
                "todo_write",
                r#"{"todos":[{"content":"a","status":"pending"},{"content":"b","status":"done"}]}"#
            ),
            Err(format!("{shape}; todos[1] is not one"))
        );
    }

    #[test]
    fn calls_are_read_with_kinds_titles_and_permission_needs() {
        let call = ToolRequest::parse("read_file", r#"{"path":"src/main.rs","offset":"2"}"#);
        assert_eq!(
            call,
            Ok(ToolRequest::ReadFile {
                path: "src/main.rs".into(),
                offset: Some(2),
                limit: None
            })
        );
        let call = call.unwrap();
        assert_eq!(
            (call.title(), call.kind()),
            ("Read src/main.rs".into(), ToolKind::Read)
        );
        let edit = ToolRequest::parse(
            "replace",
            r#"{"path":"src/lib.rs","old_string":"a","new_string":""}"#,
        )
        .unwrap();
        assert_eq!(
            (edit.title(), edit.kind()),
            ("Edit src/lib.rs".into(), ToolKind::Edit)
        );
        let run =
            ToolRequest::parse("run_shell_command", r#"{"command":"cargo test\necho"}"#).unwrap();
        assert_eq!(
            (run.title(), run.kind()),
            ("Run cargo test".into(), ToolKind::Execute)
        );
        let search = ToolRequest::parse(
            "search_file_content",
            r#"{"pattern":"fn main","path":"src"}"#,
        )
        .unwrap();
        assert_eq!(
            (search.title(), search.kind()),
            ("Search fn main in src".into(), ToolKind::Search)
        );
    }

    #[test]
    fn bad_calls_are_explained_to_the_model() {
        assert_eq!(
            ToolRequest::parse("read_file", "{}"),
            Err("Error: read_file needs the argument 'path' (a non-empty string)".into())
        );
        assert_eq!(
            ToolRequest::parse("write_file", r#"{"path":"a"}"#),
            Err("Error: write_file needs the argument 'content' (a string)".into())
        );
        assert_eq!(
            ToolRequest::parse("read_file", r#"{"path":"a","limit":-1}"#),
            Err("Error: the argument 'limit' of read_file must be a non-negative integer".into())
        );
        assert_eq!(
            ToolRequest::parse("read_file", "[1]"),
            Err("Error: the arguments of read_file must be a JSON object".into())
        );
        assert!(
            ToolRequest::parse("read_file", "{\"path\":")
                .unwrap_err()
                .starts_with("Error: the arguments of read_file are not valid JSON: ")
        );
        assert_eq!(
            ToolRequest::parse("delete_everything", "{}"),
            Err("Error: unknown tool 'delete_everything'; the tools are read_file, list_directory, glob, search_file_content, write_file, replace, run_shell_command, ask_user, todo_write".into())
        );
    }
}
