//! An ACP agent with one tool call, on smol: it announces the call, asks the client for
//! permission, "runs" it for a moment, and reports the result — honestly cancelled when the
//! client cancels during the permission request or the run.
//!
//! Try it: `acp-cli client --approve allow --prompt "save notes" -- target/debug/examples/tool_agent`
//! (`--approve reject` shows the refusal).

use std::time::Duration;

use acp_async::acp_core::prelude::{AgentConfig, AgentInfo, PermissionDecision, StopReason};
use acp_async::acp_core::schema::{
    ContentBlock, PromptRequest, ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate,
    ToolContent, ToolKind,
};
use acp_async::{Agent, Error, Turn};

/// How long the pretend tool runs: long enough to cancel it by hand.
const RUN: Duration = Duration::from_millis(300);

struct Tools;

fn update(id: &str, status: ToolCallStatus, text: &str) -> ToolCallUpdate {
    let mut update = ToolCallUpdate::new(id);
    update.status = Some(status);
    update.content = Some(vec![ToolCallContent::Content(ToolContent::new(
        ContentBlock::text(text),
    ))]);
    update
}

impl Agent for Tools {
    async fn prompt(&self, request: PromptRequest, turn: Turn) -> Result<StopReason, Error> {
        let what = request.prompt.iter().find_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.clone()),
            _ => None,
        });
        let id = "call-1";
        let mut call = ToolCall::new(id, format!("Write notes: {}", what.unwrap_or_default()));
        call.kind = Some(ToolKind::Edit);
        turn.tool_call(call.clone()).await?;

        // The permission request names the call just announced (acp-core checks it).
        let mut asked = ToolCallUpdate::new(id);
        (asked.title, asked.kind) = (Some(call.title.clone()), call.kind.clone());
        match turn.request_permission(asked).await? {
            PermissionDecision::Allowed(_) => {}
            PermissionDecision::Cancelled => {
                turn.tool_call_update(update(id, ToolCallStatus::Failed, "cancelled"))
                    .await?;
                return Ok(StopReason::Cancelled);
            }
            PermissionDecision::Rejected(why) => {
                let text = format!("not allowed ({why:?})");
                turn.tool_call_update(update(id, ToolCallStatus::Failed, &text))
                    .await?;
                return Ok(StopReason::EndTurn);
            }
        }

        turn.tool_call_update(update(id, ToolCallStatus::InProgress, "writing"))
            .await?;
        // The run races the turn's cancellation: a cancel stops it at once.
        let finished = smol::future::or(
            async {
                smol::Timer::after(RUN).await;
                true
            },
            async {
                turn.cancelled().await;
                false
            },
        )
        .await;
        if !finished {
            turn.tool_call_update(update(id, ToolCallStatus::Failed, "cancelled"))
                .await?;
            return Ok(StopReason::Cancelled);
        }
        turn.tool_call_update(update(id, ToolCallStatus::Completed, "notes written"))
            .await?;
        turn.message("done").await?;
        Ok(StopReason::EndTurn)
    }
}

fn main() -> std::io::Result<()> {
    let config = AgentConfig::new(AgentInfo::new("tools", "Tool agent (smol)", "0.1.0"));
    smol::block_on(acp_async::smol::serve_stdio(config, Tools))
}
