//! An ACP agent in 40 lines, on tokio: it echoes each prompt back, streamed word by word.
//!
//! Try it: `acp-cli client --prompt hello -- target/debug/examples/echo_agent_tokio`
//! (prints `echo: hello`, ends with `end_turn`).

use acp_async::acp_core::prelude::{AgentConfig, AgentInfo, StopReason};
use acp_async::acp_core::schema::{ContentBlock, PromptRequest};
use acp_async::{Agent, Error, Turn};

struct Echo;

impl Agent for Echo {
    async fn prompt(&self, request: PromptRequest, turn: Turn) -> Result<StopReason, Error> {
        turn.message("echo: ").await?;
        for block in request.prompt {
            let ContentBlock::Text(text) = block else {
                continue;
            };
            for word in text.text.split_inclusive(' ') {
                if turn.is_cancelled() {
                    return Ok(StopReason::Cancelled);
                }
                turn.message(word).await?;
            }
        }
        Ok(StopReason::EndTurn)
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let config = AgentConfig::new(AgentInfo::new("echo", "Echo (tokio)", "0.1.0"));
    acp_async::tokio::serve_stdio(config, Echo).await
}
