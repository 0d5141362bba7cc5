//! The MCP messages a client needs, typed: the `initialize` exchange with its version
//! negotiation, `tools/list` pages, and `tools/call` results with their content.

use acp_core::schema::{ContentBlock, ToolCallContent, ToolContent};
use serde::Deserialize;
use serde_json::{Value, json};

/// The MCP protocol versions we speak, newest first; the first is the one we ask for.
/// Between them only features we do not use differ (R-MCP-2).
pub(crate) const PROTOCOL_VERSIONS: &[&str] =
    &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// `initialize` params: our newest version, no client capabilities (we serve no roots,
/// sampling or elicitation), our name.
pub(crate) fn initialize_params() -> Value {
    json!({
        "protocolVersion": PROTOCOL_VERSIONS[0],
        "capabilities": {},
        "clientInfo": {"name": "acp-cli", "version": env!("CARGO_PKG_VERSION")},
    })
}

/// The version the server chose, when we speak it (R-MCP-2).
pub(crate) fn negotiated_version(result: &Value) -> Result<String, String> {
    match result.get("protocolVersion").and_then(Value::as_str) {
        Some(version) if PROTOCOL_VERSIONS.contains(&version) => Ok(version.to_owned()),
        Some(version) => Err(format!(
            "the server speaks MCP version '{version}'; acp-cli speaks {}",
            PROTOCOL_VERSIONS.join(", ")
        )),
        None => Err("the server's initialize result has no protocolVersion".into()),
    }
}

/// One tool of a server (`tools/list`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Its name, unique on its server.
    pub name: String,
    /// What it does, for the model.
    #[serde(default)]
    pub description: Option<String>,
    /// A JSON Schema of its arguments.
    #[serde(default = "empty_object_schema")]
    pub input_schema: Value,
    /// Hints about its behaviour.
    #[serde(default)]
    pub annotations: Option<ToolAnnotations>,
}

fn empty_object_schema() -> Value {
    json!({"type": "object"})
}

/// What a server says about a tool's behaviour (hints, not guarantees).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A human title.
    #[serde(default)]
    pub title: Option<String>,
    /// The tool does not change its environment.
    #[serde(default)]
    pub read_only_hint: Option<bool>,
}

impl Tool {
    /// Annotated read-only (R-MCP-6): only then is it a `read` tool that never asks.
    pub fn is_read_only(&self) -> bool {
        self.annotations
            .as_ref()
            .and_then(|a| a.read_only_hint)
            .unwrap_or(false)
    }
}

/// One page of `tools/list`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolsPage {
    /// The tools on this page.
    #[serde(default)]
    pub tools: Vec<Tool>,
    /// Where the next page starts; absent on the last.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// A `tools/call` result.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallResult {
    /// The content blocks (text, image, audio, resource, resource_link), kept as sent.
    #[serde(default)]
    pub content: Vec<Value>,
    /// The tool failed (its content says why).
    #[serde(default)]
    pub is_error: bool,
    /// Structured output, when the tool has an output schema.
    #[serde(default)]
    pub structured_content: Option<Value>,
}

impl CallResult {
    /// The result as text for the model: text blocks as they are, embedded text
    /// resources with their uri, and a short stand-in for binary content.
    pub fn model_text(&self) -> String {
        let mut parts: Vec<String> = self.content.iter().map(block_text).collect();
        if parts.is_empty()
            && let Some(structured) = &self.structured_content
        {
            parts.push(structured.to_string());
        }
        parts.join("\n")
    }

    /// The result as ACP tool call content. MCP's content blocks have ACP's shapes, so each
    /// is read as an ACP block; one that does not read shows as its text stand-in.
    pub(crate) fn tool_content(&self) -> Vec<ToolCallContent> {
        let mut content: Vec<ToolCallContent> = self
            .content
            .iter()
            .map(|block| {
                let block = serde_json::from_value::<ContentBlock>(block.clone())
                    .ok()
                    .filter(|b| !matches!(b, ContentBlock::Unknown(_)))
                    .unwrap_or_else(|| ContentBlock::text(block_text(block)));
                ToolCallContent::Content(ToolContent::new(block))
            })
            .collect();
        if content.is_empty() {
            content.push(ToolCallContent::Content(ToolContent::new(
                ContentBlock::text(self.model_text()),
            )));
        }
        content
    }
}

/// One MCP content block as text.
fn block_text(block: &Value) -> String {
    let field = |name: &str| block.get(name).and_then(Value::as_str).unwrap_or("");
    match block.get("type").and_then(Value::as_str) {
        Some("text") => field("text").to_owned(),
        Some(kind @ ("image" | "audio")) => format!(
            "[{kind} {}, {} bytes of base64]",
            field("mimeType"),
            field("data").len()
        ),
        Some("resource") => {
            let resource = block.get("resource").cloned().unwrap_or(Value::Null);
            let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("");
            match resource.get("text").and_then(Value::as_str) {
                Some(text) => format!("[resource {uri}]\n{text}"),
                None => format!("[resource {uri}, binary]"),
            }
        }
        Some("resource_link") => format!("[resource link {} {}]", field("name"), field("uri")),
        _ => block.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_we_speak_are_accepted_and_others_refused_by_name() {
        assert_eq!(
            negotiated_version(&json!({"protocolVersion": "2025-06-18"})),
            Ok("2025-06-18".into())
        );
        assert_eq!(
            negotiated_version(&json!({"protocolVersion": "1999-01-01"})),
            Err("the server speaks MCP version '1999-01-01'; acp-cli speaks 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05".into())
        );
        assert_eq!(
            negotiated_version(&json!({})),
            Err("the server's initialize result has no protocolVersion".into())
        );
    }

    #[test]
    fn read_only_only_when_annotated_so() {
        let tool: Tool = serde_json::from_value(json!({"name": "a"})).unwrap();
        assert!(!tool.is_read_only());
        assert_eq!(tool.input_schema, json!({"type": "object"}));
        let tool: Tool =
            serde_json::from_value(json!({"name": "a", "annotations": {"readOnlyHint": true}}))
                .unwrap();
        assert!(tool.is_read_only());
    }

    #[test]
    fn results_become_model_text_and_acp_blocks() {
        let result: CallResult = serde_json::from_value(json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a", "text": "body"}},
                {"type": "hologram"},
            ],
            "isError": true,
        }))
        .unwrap();
        assert!(result.is_error);
        assert_eq!(
            result.model_text(),
            "hello\n[image image/png, 4 bytes of base64]\n[resource file:///a]\nbody\n{\"type\":\"hologram\"}"
        );
        let content = result.tool_content();
        assert_eq!(content.len(), 4);
        let ToolCallContent::Content(image) = &content[1] else {
            panic!("not content")
        };
        assert!(matches!(image.content, ContentBlock::Image(_)));
        let ToolCallContent::Content(resource) = &content[2] else {
            panic!("not content")
        };
        assert!(matches!(resource.content, ContentBlock::Resource(_)));
        let ToolCallContent::Content(unknown) = &content[3] else {
            panic!("not content")
        };
        assert_eq!(
            unknown.content,
            ContentBlock::text("{\"type\":\"hologram\"}")
        );
    }

    #[test]
    fn structured_content_stands_in_for_missing_blocks() {
        let result: CallResult =
            serde_json::from_value(json!({"content": [], "structuredContent": {"n": 1}})).unwrap();
        assert_eq!(result.model_text(), "{\"n\":1}");
    }
}
