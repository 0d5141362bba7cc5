//! WebSocket on `/acp` (R-NET-2): the upgrade, then one JSON-RPC message per text frame
//! both ways; binary frames are ignored. One agent per WebSocket; the socket's end is the
//! agent's EOF, and the agent's end closes the socket.

use std::cell::Cell;
use std::io;
use std::rc::Rc;
use std::time::Instant;

use async_tungstenite::WebSocketStream;
use async_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use async_tungstenite::tungstenite::{Message, handshake::derive_accept_key};
use smol::io::{AsyncRead, AsyncWrite};
use smol::stream::StreamExt;

use super::auth;
use super::head::{self as wire, Head};
use super::link;
use super::registry::Server;
use super::socket::{self, refusal};

/// The subprotocol the server selects when a client offers it (R-NET-5).
pub(crate) const SUBPROTOCOL: &str = "acp";

/// Whether a GET asks to upgrade to a WebSocket.
pub(crate) fn is_upgrade(head: &Head) -> bool {
    head.header_has("upgrade", "websocket")
}

/// Answers the upgrade and serves the WebSocket until either side ends; `rest` holds bytes
/// the client sent after its head.
pub(crate) async fn serve<S: AsyncRead + AsyncWrite + Unpin>(
    server: &Rc<Server>,
    request: &Head,
    mut io: S,
    rest: Vec<u8>,
) -> io::Result<()> {
    let key = request.header("sec-websocket-key");
    let Some(key) = key.filter(|_| request.header("sec-websocket-version") == Some("13")) else {
        let response = refusal(
            400,
            "a WebSocket upgrade needs Sec-WebSocket-Key and Sec-WebSocket-Version: 13",
        );
        return socket::send(&mut io, &response).await;
    };
    let accept = derive_accept_key(key.as_bytes());
    let id = super::registry::new_id();
    let offered: Vec<&str> = request
        .headers
        .iter()
        .filter(|(n, _)| n == "sec-websocket-protocol")
        .flat_map(|(_, v)| v.split(','))
        .map(str::trim)
        .collect();
    // A client that offered subprotocols needs one back: `acp`, else the token's entry.
    let chosen = if offered.contains(&SUBPROTOCOL) {
        Some(SUBPROTOCOL)
    } else {
        auth::bearer_protocol_entry(request)
    };
    let mut headers = vec![
        ("Upgrade", "websocket"),
        ("Connection", "Upgrade"),
        ("Sec-WebSocket-Accept", accept.as_str()),
        ("Acp-Connection-Id", id.as_str()),
    ];
    if let Some(chosen) = chosen {
        headers.push(("Sec-WebSocket-Protocol", chosen));
    }
    socket::send(&mut io, &wire::response_head(101, &headers)).await?;
    tracing::info!(connection = id.as_str(), "websocket connection opened");

    let config = WebSocketConfig::default()
        .read_buffer_size(16 * 1024)
        .max_message_size(Some(server.limits.max_body))
        .max_frame_size(Some(server.limits.max_body));
    let ws = WebSocketStream::from_partially_read(io, rest, Role::Server, Some(config)).await;
    let (mut sender, mut receiver) = ws.split();
    let link::Link { input, output } = server.start_agent();
    let last_active = Rc::new(Cell::new(Instant::now()));
    let idle = server.limits.idle_timeout;

    // Client → agent, until the client closes, goes idle, or the server shuts down.
    let inbound = {
        let last_active = Rc::clone(&last_active);
        async move {
            loop {
                let due = last_active.get() + idle;
                let next = smol::future::or(async { Some(receiver.next().await) }, async {
                    smol::Timer::at(due).await;
                    None
                });
                let next = smol::future::or(next, async {
                    server.shutting_down().await;
                    Some(None)
                })
                .await;
                match next {
                    None if Instant::now() >= last_active.get() + idle => {
                        tracing::info!("idle websocket closed");
                        break;
                    }
                    None => {}
                    Some(None | Some(Err(_))) | Some(Some(Ok(Message::Close(_)))) => break,
                    Some(Some(Ok(Message::Text(text)))) => {
                        last_active.set(Instant::now());
                        if input
                            .send(link::message_line(text.as_bytes()))
                            .await
                            .is_err()
                        {
                            break;
                        }
                    }
                    // Binary frames are ignored; pings are answered by the protocol layer.
                    Some(Some(Ok(_))) => {}
                }
            }
            // Dropping the input is the agent's EOF.
            drop(input);
            std::future::pending::<()>().await;
        }
    };
    // Agent → client, until the agent ends.
    let outbound = async move {
        while let Ok(message) = output.recv().await {
            last_active.set(Instant::now());
            let text = String::from_utf8(message)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            if sender.send(Message::text(text)).await.is_err() {
                return;
            }
        }
        let _ = sender.close(None).await;
    };
    smol::future::or(outbound, inbound).await;
    Ok(())
}
