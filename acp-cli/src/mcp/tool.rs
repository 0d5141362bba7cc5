//! A session's MCP tool as the backends see it: which server, which tool, and the name the
//! model calls it by.

use super::messages::Tool;

/// One tool of one of the session's MCP servers.
#[derive(Clone, Debug, PartialEq)]
pub struct McpTool {
    /// The server's name (from `session/new`).
    pub server: String,
    /// The tool, as the server listed it.
    pub tool: Tool,
}

impl McpTool {
    /// `mcp__<server>__<tool>` (R-MCP-6), with every character a model's tool name may not
    /// hold (anything but ASCII letters, digits, `_` and `-`) written as `_`.
    pub(crate) fn model_name(&self) -> String {
        let clean = |text: &str| -> String {
            text.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect()
        };
        format!("mcp__{}__{}", clean(&self.server), clean(&self.tool.name))
    }

    /// The tool call title shown to the user.
    pub(crate) fn title(&self) -> String {
        format!("MCP {}: {}", self.server, self.tool.name)
    }
}

/// The tool a session's list has under this server and name.
pub(crate) fn find<'a>(tools: &'a [McpTool], server: &str, name: &str) -> Option<&'a McpTool> {
    tools
        .iter()
        .find(|t| t.server == server && t.tool.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_hold_only_what_models_accept() {
        let tool = McpTool {
            server: "my files".into(),
            tool: serde_json::from_value(serde_json::json!({"name": "read.file"})).unwrap(),
        };
        assert_eq!(tool.model_name(), "mcp__my_files__read_file");
        assert_eq!(tool.title(), "MCP my files: read.file");
    }
}
