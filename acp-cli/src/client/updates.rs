//! What a person is shown of `session/update` notifications, one update at a time, by its
//! `sessionUpdate` tag (wire shapes: ACP v1 as the official schema crate 1.20.0 has them).
//!
//! The view keeps what later updates refer to: the plans shown (a `plan_update` replaces
//! the plan with its `planId`, a `plan_removed` removes it), the subagents announced
//! (their messages are prefixed by their title) and which message came from which
//! subagent (a `session_message_chunk` only names its message). Every piece of agent
//! text goes through [`sanitize`]. An update kind this client does not know is shown as
//! its tag only ([`Shown::Unknown`]), never as an error.

use std::collections::{BTreeMap, BTreeSet};

use acp_host::sanitize::sanitize;
use serde_json::Value;

use super::render::{PERMISSION_TEXT_CHARS, PERMISSION_TEXTS, content_text, content_texts, cut};

/// What one update shows.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Shown {
    /// A chunk of the agent's answer (sanitized).
    Text(String),
    /// Lines beside the answer: a thought, a plan, a tool call, a notice… (sanitized, no
    /// trailing newline).
    Aside(String),
    /// An update kind this client does not know: its tag (sanitized), to be shown dimmed.
    Unknown(String),
    /// The agent's slash commands (`available_commands_update`), in its order.
    Commands(Vec<AgentCommand>),
}

/// A slash command an agent advertised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AgentCommand {
    /// The name, without the `/` (sanitized).
    pub name: String,
    /// What it does (sanitized).
    pub description: String,
    /// The hint for its input, when it takes some (sanitized).
    pub hint: Option<String>,
}

/// The line that lists an agent's commands: `commands: /a /b …`.
pub(crate) fn commands_line(commands: &[AgentCommand]) -> String {
    let mut out = String::from("commands:");
    for command in commands {
        out.push_str(" /");
        out.push_str(&command.name);
    }
    if commands.is_empty() {
        out.push_str(" (none)");
    }
    out
}

/// The line for an update kind this client does not know.
pub(crate) fn unknown_line(tag: &str) -> String {
    format!("(update: {tag})")
}

/// See the module docs.
#[derive(Clone, Debug, Default)]
pub(crate) struct UpdateView {
    /// The `planId`s shown and not removed.
    plans: BTreeSet<String>,
    /// Subagent session id → its name (title, else the session id).
    subagents: BTreeMap<String, String>,
    /// Message id → the label of the subagent it came from or went to.
    messages: BTreeMap<String, String>,
}

impl UpdateView {
    /// Nothing seen yet.
    pub(crate) fn new() -> UpdateView {
        UpdateView::default()
    }

    /// What the `session/update` with these `params` shows; `None` for updates that show
    /// nothing (a removal of an unknown plan, a timestamp-only session info update, an
    /// update without a readable body).
    pub(crate) fn show(&mut self, params: &Value) -> Option<Shown> {
        let update = params.get("update")?;
        let session = str_at(params, "sessionId").unwrap_or("");
        let Some(tag) = str_at(update, "sessionUpdate") else {
            return Some(Shown::Unknown(String::from("?")));
        };
        // Updates of a subagent's own session come on the same connection: prefixed by
        // its name so they do not mix with the main answer.
        let child = self.subagents.get(session).cloned();
        let aside = |text: String| Some(Shown::Aside(text));
        match tag {
            "agent_message_chunk" => {
                let text = sanitize(&content_text(update.get("content")?)?);
                match child {
                    Some(name) => aside(format!("[{name}] {text}")),
                    None => Some(Shown::Text(text)),
                }
            }
            "agent_thought_chunk" => {
                let text = sanitize(&content_text(update.get("content")?)?);
                match child {
                    Some(name) => aside(format!("[{name}] thought: {text}")),
                    None => aside(format!("thought: {text}")),
                }
            }
            "user_message_chunk" => {
                let text = sanitize(&content_text(update.get("content")?)?);
                aside(format!("you: {text}"))
            }
            "plan" => aside(format!("plan:{}", entries(update.get("entries")?))),
            "plan_update" => self.plan_update(update.get("plan")?),
            "plan_removed" => {
                let id = str_at(update, "planId")?;
                // The protocol: a removal of an unknown plan is ignored.
                self.plans
                    .remove(id)
                    .then(|| Shown::Aside(format!("plan {} removed", sanitize(id))))
            }
            "tool_call" => {
                // `name` (the tool's own name) stands in for a missing title.
                let title = str_at(update, "title")
                    .or_else(|| str_at(update, "name"))
                    .unwrap_or("tool");
                let kind = str_at(update, "kind").unwrap_or("other");
                let status = str_at(update, "status").unwrap_or("pending");
                aside(format!(
                    "tool: {} ({}) [{}]",
                    sanitize(title),
                    sanitize(kind),
                    sanitize(status)
                ))
            }
            "tool_call_update" => {
                let id: String = str_at(update, "toolCallId")
                    .unwrap_or("?")
                    .chars()
                    .take(8)
                    .collect();
                let status = str_at(update, "status")?;
                let mut out = format!("tool {} — {}", sanitize(&id), sanitize(status));
                for text in content_texts(update).take(PERMISSION_TEXTS) {
                    out.push_str(&format!(
                        "\n  {}",
                        sanitize(&cut(&text, PERMISSION_TEXT_CHARS))
                    ));
                }
                aside(out)
            }
            "notice" => {
                let severity = match str_at(update, "severity").unwrap_or("info") {
                    known @ ("info" | "warning" | "error") => known.to_owned(),
                    other => sanitize(other),
                };
                let mut out = format!(
                    "{severity}: {}",
                    sanitize(str_at(update, "title").unwrap_or(""))
                );
                if let Some(description) = str_at(update, "description") {
                    out.push_str(&format!("\n  {}", sanitize(description)));
                }
                aside(out)
            }
            "session_info_update" => match update.get("title") {
                Some(Value::String(title)) => aside(format!("title: {}", sanitize(title))),
                Some(Value::Null) => aside(String::from("title cleared")),
                _ => None,
            },
            "usage_update" => {
                let used = update.get("used")?.as_u64()?;
                let size = update.get("size")?.as_u64()?;
                let mut out = format!("usage: {used}/{size} tokens");
                if let Some(cost) = update.get("cost").filter(|c| !c.is_null()) {
                    let amount = cost.get("amount").and_then(Value::as_f64).unwrap_or(0.0);
                    let currency = str_at(cost, "currency").unwrap_or("");
                    out.push_str(&format!(", cost {amount} {}", sanitize(currency)));
                }
                aside(out)
            }
            "compaction_update" => {
                let id = sanitize(str_at(update, "compactionId").unwrap_or("?"));
                let status = match str_at(update, "status").unwrap_or("in_progress") {
                    "in_progress" => String::from("in progress"),
                    other => sanitize(other),
                };
                let mut out = format!("compaction {id}: {status}");
                if let Some(error) = str_at(update, "error") {
                    out.push_str(&format!(" — {}", sanitize(error)));
                }
                let summary: Vec<String> = update
                    .get("summary")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(content_text)
                    .collect();
                if !summary.is_empty() {
                    out.push_str(&format!("\n  summary: {}", sanitize(&summary.concat())));
                }
                aside(out)
            }
            "compaction_summary_chunk" => {
                let id = sanitize(str_at(update, "compactionId").unwrap_or("?"));
                let text = sanitize(&content_text(update.get("content")?)?);
                aside(format!("compaction {id} summary: {text}"))
            }
            "subagent_update" => self.subagent_update(update),
            "session_message" => {
                let label = self.message_label(session, update);
                let texts: Vec<String> = update
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(content_text)
                    .collect();
                if texts.is_empty() {
                    return None;
                }
                aside(format!("[{label}] {}", sanitize(&texts.concat())))
            }
            "session_message_chunk" => {
                let id = str_at(update, "messageId").unwrap_or("");
                let label = match self.messages.get(id) {
                    Some(label) => label.clone(),
                    None => child.unwrap_or_else(|| String::from("message")),
                };
                let text = sanitize(&content_text(update.get("content")?)?);
                aside(format!("[{label}] {text}"))
            }
            "config_option_update" => {
                let options = update.get("configOptions")?.as_array()?;
                let shown: Vec<String> = options.iter().map(config_option).collect();
                aside(format!("config: {}", shown.join(", ")))
            }
            "current_mode_update" => aside(format!(
                "mode: {}",
                sanitize(str_at(update, "currentModeId")?)
            )),
            "available_commands_update" => {
                let commands = update
                    .get("availableCommands")?
                    .as_array()?
                    .iter()
                    .filter_map(|c| {
                        Some(AgentCommand {
                            name: sanitize(str_at(c, "name")?),
                            description: sanitize(str_at(c, "description").unwrap_or("")),
                            hint: c.get("input").and_then(|i| str_at(i, "hint")).map(sanitize),
                        })
                    })
                    .collect();
                Some(Shown::Commands(commands))
            }
            other => Some(Shown::Unknown(sanitize(other))),
        }
    }

    fn plan_update(&mut self, plan: &Value) -> Option<Shown> {
        let id = str_at(plan, "planId")?;
        let header = if self.plans.insert(id.to_owned()) {
            format!("plan {}:", sanitize(id))
        } else {
            format!("plan {} (replaced):", sanitize(id))
        };
        let body = match str_at(plan, "type") {
            Some("markdown") => {
                let mut out = String::new();
                for line in str_at(plan, "content").unwrap_or("").lines() {
                    out.push_str(&format!("\n  {}", sanitize(line)));
                }
                if let Some(path) = str_at(plan, "path") {
                    out.push_str(&format!("\n  (file: {})", sanitize(path)));
                }
                out
            }
            _ => entries(plan.get("entries").unwrap_or(&Value::Null)),
        };
        Some(Shown::Aside(format!("{header}{body}")))
    }

    fn subagent_update(&mut self, update: &Value) -> Option<Shown> {
        let session = str_at(update, "sessionId")?;
        match update.get("title") {
            Some(Value::String(title)) => {
                self.subagents.insert(session.to_owned(), sanitize(title));
            }
            // Cleared or never given: the session id stands in.
            Some(Value::Null) => {
                self.subagents.insert(session.to_owned(), sanitize(session));
            }
            _ => {
                self.subagents
                    .entry(session.to_owned())
                    .or_insert_with(|| sanitize(session));
            }
        }
        let name = self.subagents.get(session).cloned().unwrap_or_default();
        let mut out = format!("subagent {name}");
        if let Some(state) = update.get("state").filter(|s| !s.is_null()) {
            let text = match str_at(state, "state").unwrap_or("unknown") {
                "idle" => match str_at(state, "stopReason") {
                    Some(reason) => format!("idle ({})", sanitize(reason)),
                    None => String::from("idle"),
                },
                "requires_action" => String::from("needs action"),
                other => sanitize(other),
            };
            out.push_str(&format!(" [{text}]"));
        }
        if let Some(description) = str_at(update, "description") {
            out.push_str(&format!("\n  {}", sanitize(description)));
        }
        Some(Shown::Aside(out))
    }

    /// Who a `session_message` is from or to: the subagent that sent it, `→ name` for one
    /// sent to a subagent, else the subagent whose session carries it; remembered for its
    /// chunks.
    fn message_label(&mut self, session: &str, update: &Value) -> String {
        let id = str_at(update, "messageId").unwrap_or("");
        let known = |key: &str| str_at(update, key).and_then(|s| self.subagents.get(s));
        let label = if let Some(name) = known("senderSessionId") {
            name.clone()
        } else if let Some(name) = known("recipientSessionId") {
            format!("→ {name}")
        } else if let Some(label) = self.messages.get(id) {
            label.clone()
        } else if let Some(name) = self.subagents.get(session) {
            name.clone()
        } else {
            String::from("message")
        };
        self.messages.insert(id.to_owned(), label.clone());
        label
    }
}

/// A plan's entries, one `\n  [status] content` each.
fn entries(entries: &Value) -> String {
    let mut out = String::new();
    for entry in entries.as_array().into_iter().flatten() {
        let status = str_at(entry, "status").unwrap_or("pending");
        let content = str_at(entry, "content").unwrap_or("");
        out.push_str(&format!("\n  [{}] {}", sanitize(status), sanitize(content)));
    }
    out
}

/// One config option as `name = value`: a select's current value by its name, a boolean
/// as `on` / `off`.
fn config_option(option: &Value) -> String {
    let name = sanitize(
        str_at(option, "name")
            .or_else(|| str_at(option, "id"))
            .unwrap_or("?"),
    );
    let value = match option.get("currentValue") {
        Some(Value::Bool(true)) => String::from("on"),
        Some(Value::Bool(false)) => String::from("off"),
        Some(Value::String(current)) => {
            // Grouped options hold their choices one level down.
            let choices = option
                .get("options")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .flat_map(|o| match o.get("options").and_then(Value::as_array) {
                    Some(group) => group.iter().collect::<Vec<_>>(),
                    None => vec![o],
                });
            let shown = choices
                .into_iter()
                .find(|c| str_at(c, "value") == Some(current))
                .and_then(|c| str_at(c, "name"))
                .unwrap_or(current);
            sanitize(shown)
        }
        Some(other) => sanitize(&other.to_string()),
        None => String::from("?"),
    };
    format!("{name} = {value}")
}

fn str_at<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn show(view: &mut UpdateView, update: Value) -> Option<Shown> {
        view.show(&json!({"sessionId": "main", "update": update}))
    }

    fn aside(text: &str) -> Option<Shown> {
        Some(Shown::Aside(text.to_owned()))
    }

    #[test]
    fn the_turn_kinds_render_as_before() {
        let mut view = UpdateView::new();
        let text = show(
            &mut view,
            json!({"sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "hi\u{7}"}}),
        );
        assert_eq!(text, Some(Shown::Text("hi".into())));
        let tool = show(
            &mut view,
            json!({"sessionUpdate": "tool_call", "toolCallId": "call_123456789",
            "title": "Read", "kind": "read", "status": "pending"}),
        );
        assert_eq!(tool, aside("tool: Read (read) [pending]"));
        let named = show(
            &mut view,
            json!({"sessionUpdate": "tool_call", "toolCallId": "call_2",
            "name": "grep", "kind": "search"}),
        );
        assert_eq!(named, aside("tool: grep (search) [pending]"));
        let done = show(
            &mut view,
            json!({"sessionUpdate": "tool_call_update",
            "toolCallId": "call_123456789", "status": "completed"}),
        );
        assert_eq!(done, aside("tool call_123 — completed"));
        let plan = show(
            &mut view,
            json!({"sessionUpdate": "plan", "entries": [
            {"content": "look", "status": "completed", "priority": "high"}]}),
        );
        assert_eq!(plan, aside("plan:\n  [completed] look"));
    }

    #[test]
    fn plans_are_replaced_and_removed_by_id() {
        let mut view = UpdateView::new();
        let items = json!({"sessionUpdate": "plan_update", "plan": {"type": "items",
            "planId": "p1", "entries": [
                {"content": "A", "status": "pending", "priority": "medium"},
                {"content": "B", "status": "in_progress", "priority": "low"}]}});
        assert_eq!(
            show(&mut view, items.clone()),
            aside("plan p1:\n  [pending] A\n  [in_progress] B")
        );
        assert_eq!(
            show(&mut view, items),
            aside("plan p1 (replaced):\n  [pending] A\n  [in_progress] B")
        );
        let markdown = json!({"sessionUpdate": "plan_update", "plan": {"type": "markdown",
            "planId": "p2", "content": "# Steps\n- one", "path": "/tmp/plan.md"}});
        assert_eq!(
            show(&mut view, markdown),
            aside("plan p2:\n  # Steps\n  - one\n  (file: /tmp/plan.md)")
        );
        let removed = json!({"sessionUpdate": "plan_removed", "planId": "p1"});
        assert_eq!(show(&mut view, removed.clone()), aside("plan p1 removed"));
        assert_eq!(show(&mut view, removed), None, "an unknown id is ignored");
    }

    #[test]
    fn notices_show_their_severity_title_and_description() {
        let mut view = UpdateView::new();
        for severity in ["info", "warning", "error"] {
            let notice = json!({"sessionUpdate": "notice", "severity": severity,
                "title": "Disk\u{1b}[2J full"});
            assert_eq!(
                show(&mut view, notice),
                aside(&format!("{severity}: Disk[2J full"))
            );
        }
        let described = json!({"sessionUpdate": "notice", "severity": "_custom",
            "title": "T", "description": "more"});
        assert_eq!(show(&mut view, described), aside("_custom: T\n  more"));
    }

    #[test]
    fn title_usage_mode_and_config_options() {
        let mut view = UpdateView::new();
        let title = json!({"sessionUpdate": "session_info_update", "title": "Fix the bug"});
        assert_eq!(show(&mut view, title), aside("title: Fix the bug"));
        let cleared = json!({"sessionUpdate": "session_info_update", "title": null});
        assert_eq!(show(&mut view, cleared), aside("title cleared"));
        let stamp = json!({"sessionUpdate": "session_info_update", "updatedAt": "2026-11-25"});
        assert_eq!(show(&mut view, stamp), None);
        let usage = json!({"sessionUpdate": "usage_update", "used": 1234, "size": 1000000});
        assert_eq!(show(&mut view, usage), aside("usage: 1234/1000000 tokens"));
        let costly = json!({"sessionUpdate": "usage_update", "used": 5, "size": 10,
            "cost": {"amount": 0.25, "currency": "USD"}});
        assert_eq!(
            show(&mut view, costly),
            aside("usage: 5/10 tokens, cost 0.25 USD")
        );
        let mode = json!({"sessionUpdate": "current_mode_update", "currentModeId": "plan"});
        assert_eq!(show(&mut view, mode), aside("mode: plan"));
        let config = json!({"sessionUpdate": "config_option_update", "configOptions": [
            {"id": "model", "name": "Model", "type": "select", "currentValue": "m2",
             "options": [{"value": "m1", "name": "Small"}, {"value": "m2", "name": "Large"}]},
            {"id": "fast", "name": "Fast", "type": "boolean", "currentValue": true},
            {"id": "effort", "name": "Effort", "type": "select", "currentValue": "hi",
             "options": [{"group": "g", "name": "G", "options": [{"value": "hi", "name": "High"}]}]}
        ]});
        assert_eq!(
            show(&mut view, config),
            aside("config: Model = Large, Fast = on, Effort = High")
        );
    }

    #[test]
    fn compaction_progress_and_summary() {
        let mut view = UpdateView::new();
        let started = json!({"sessionUpdate": "compaction_update", "compactionId": "c1",
            "status": "in_progress"});
        assert_eq!(
            show(&mut view, started),
            aside("compaction c1: in progress")
        );
        let chunk = json!({"sessionUpdate": "compaction_summary_chunk", "compactionId": "c1",
            "content": {"type": "text", "text": "we fixed it"}});
        assert_eq!(
            show(&mut view, chunk),
            aside("compaction c1 summary: we fixed it")
        );
        let done = json!({"sessionUpdate": "compaction_update", "compactionId": "c1",
            "status": "completed", "summary": [{"type": "text", "text": "short"}]});
        assert_eq!(
            show(&mut view, done),
            aside("compaction c1: completed\n  summary: short")
        );
        let failed = json!({"sessionUpdate": "compaction_update", "compactionId": "c2",
            "status": "failed", "error": "no room"});
        assert_eq!(
            show(&mut view, failed),
            aside("compaction c2: failed — no room")
        );
    }

    #[test]
    fn subagents_and_their_messages_carry_their_name() {
        let mut view = UpdateView::new();
        let announce = json!({"sessionUpdate": "subagent_update", "sessionId": "child_1",
            "title": "Researcher", "description": "reads the docs",
            "state": {"state": "running"}});
        assert_eq!(
            show(&mut view, announce),
            aside("subagent Researcher [running]\n  reads the docs")
        );
        let idle = json!({"sessionUpdate": "subagent_update", "sessionId": "child_1",
            "state": {"state": "idle", "stopReason": "end_turn"}});
        assert_eq!(
            show(&mut view, idle),
            aside("subagent Researcher [idle (end_turn)]")
        );
        let from = json!({"sessionUpdate": "session_message", "messageId": "m1",
            "senderSessionId": "child_1", "recipientSessionId": "main",
            "content": [{"type": "text", "text": "found it"}]});
        assert_eq!(show(&mut view, from), aside("[Researcher] found it"));
        let chunk = json!({"sessionUpdate": "session_message_chunk", "messageId": "m1",
            "content": {"type": "text", "text": " twice"}});
        assert_eq!(show(&mut view, chunk), aside("[Researcher]  twice"));
        let to = json!({"sessionUpdate": "session_message", "messageId": "m2",
            "senderSessionId": "main", "recipientSessionId": "child_1",
            "content": [{"type": "text", "text": "go"}]});
        assert_eq!(show(&mut view, to), aside("[→ Researcher] go"));
        let own = view.show(&json!({"sessionId": "child_1", "update": {
            "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hm"}}}));
        assert_eq!(own, aside("[Researcher] hm"));
        let untitled = json!({"sessionUpdate": "subagent_update", "sessionId": "child_2"});
        assert_eq!(show(&mut view, untitled), aside("subagent child_2"));
    }

    #[test]
    fn commands_are_collected_and_unknown_kinds_named() {
        let mut view = UpdateView::new();
        let commands = json!({"sessionUpdate": "available_commands_update",
            "availableCommands": [
                {"name": "web", "description": "Search the web",
                 "input": {"hint": "query"}},
                {"name": "plan", "description": "Make a plan"}]});
        let expected = vec![
            AgentCommand {
                name: "web".into(),
                description: "Search the web".into(),
                hint: Some("query".into()),
            },
            AgentCommand {
                name: "plan".into(),
                description: "Make a plan".into(),
                hint: None,
            },
        ];
        assert_eq!(
            show(&mut view, commands),
            Some(Shown::Commands(expected.clone()))
        );
        assert_eq!(commands_line(&expected), "commands: /web /plan");
        let future = json!({"sessionUpdate": "cursor_update", "cursor": {}});
        assert_eq!(
            show(&mut view, future),
            Some(Shown::Unknown("cursor_update".into()))
        );
        assert_eq!(unknown_line("cursor_update"), "(update: cursor_update)");
        assert_eq!(
            show(&mut view, json!({"content": 1})),
            Some(Shown::Unknown("?".into()))
        );
    }
}
