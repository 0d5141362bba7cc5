//! The client needs no spawn and no `Send`: the same turn runs under `smol::block_on` and
//! a current-thread tokio runtime, the connection awaited beside the application (`join`,
//! `run_until`). In-memory pipes, no timers, no sleeps.

use acp_async::acp_core::prelude::{AgentConfig, AgentInfo, StopReason};
use acp_async::acp_core::schema::PromptRequest;
use acp_async::client::{Client, ClientError};
use acp_async::duplex::duplex;
use acp_async::{Agent, Error, NoTimers, Turn, serve};

struct Echo;

impl Agent for Echo {
    async fn prompt(&self, request: PromptRequest, turn: Turn) -> Result<StopReason, Error> {
        let text = serde_json::to_value(&request.prompt).unwrap()[0]["text"].clone();
        turn.message(format!("echo: {}", text.as_str().unwrap_or_default()))
            .await?;
        Ok(StopReason::EndTurn)
    }
}

/// One whole exchange: the client's app and the agent on one pipe pair, as one future.
async fn exchange() -> (
    Result<(String, StopReason), ClientError>,
    std::io::Result<()>,
) {
    let (client_end, agent_end) = duplex(1 << 12);
    let (client, connection) = Client::builder("test-client", "0.1.0").connect(
        NoTimers,
        client_end.reader,
        client_end.writer,
    );
    let config = AgentConfig::new(AgentInfo::new("echo", "Echo", "0.1.0"));
    let agent = serve(config, Echo, NoTimers, agent_end.reader, agent_end.writer);
    let app = connection.run_until(async {
        client.initialize().await?;
        let session = client.new_session("/home/user/p").await?.session_id;
        let mut turn = client.prompt(&session, "hi").await?;
        let mut text = String::new();
        while let Some(update) = turn.next().await {
            text.push_str(update.agent_text().unwrap_or_default());
        }
        Ok((text, turn.finish().await?))
    });
    futures_util::future::join(app, agent).await
}

fn check(
    (out, served): (
        Result<(String, StopReason), ClientError>,
        std::io::Result<()>,
    ),
) {
    assert_eq!(out, Ok(("echo: hi".to_owned(), StopReason::EndTurn)));
    served.expect("the agent ends once the client hangs up");
}

/// R-TURN-3: under `smol::block_on` the turn's update and stop reason arrive.
#[test]
fn a_turn_runs_under_smol_block_on() {
    check(smol::block_on(exchange()));
}

/// R-TURN-3: under a current-thread tokio runtime the turn's update and stop reason arrive.
#[test]
fn a_turn_runs_under_a_current_thread_tokio_runtime() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    check(runtime.block_on(exchange()));
}

/// R-RPC-11: a client that closes its output once done ends both sides cleanly: the agent
/// sees EOF and ends, then the client's connection future ends, both without error.
#[test]
fn closing_the_client_ends_both_sides_cleanly() {
    let (client_end, agent_end) = duplex(1 << 12);
    let (client, connection) = Client::builder("test-client", "0.1.0").connect(
        NoTimers,
        client_end.reader,
        client_end.writer,
    );
    let config = AgentConfig::new(AgentInfo::new("echo", "Echo", "0.1.0"));
    let agent = serve(config, Echo, NoTimers, agent_end.reader, agent_end.writer);
    let app = async {
        client.initialize().await?;
        let session = client.new_session("/home/user/p").await?.session_id;
        let stop = client.prompt(&session, "bye").await?.finish().await;
        client.close();
        stop
    };
    let (stop, connected, served) = smol::block_on(async {
        let ((stop, connected), served) =
            futures_util::future::join(futures_util::future::join(app, connection), agent).await;
        (stop, connected, served)
    });
    assert_eq!(stop, Ok(StopReason::EndTurn));
    connected.expect("the client's connection ends cleanly");
    served.expect("the agent ends cleanly");
    assert!(client.is_closed());
}
