//! An ACP agent in 40 lines, on smol: it echoes each prompt back, streamed word by word.
//!
//! Try it: `acp-cli client --prompt hello -- target/debug/examples/echo_agent_smol`
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

fn main() -> std::io::Result<()> {
    let config = AgentConfig::new(AgentInfo::new("echo", "Echo (smol)", "0.1.0"));
    smol::block_on(acp_async::smol::serve_stdio(config, Echo))
}
