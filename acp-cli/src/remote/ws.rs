//! The WebSocket transport (R-NETC-3): one `GET` with `Upgrade: websocket` to the URL (the
//! token as `Authorization: Bearer`), then each message we send is one text frame and each
//! text frame the agent sends is one message; binary frames are ignored, pings answered by
//! the protocol library (async-tungstenite on our TCP or TLS stream). The end of our side
//! sends a close frame.

use async_tungstenite::WebSocketStream;
use async_tungstenite::tungstenite::client::IntoClientRequest;
use async_tungstenite::tungstenite::http::HeaderValue;
use async_tungstenite::tungstenite::protocol::WebSocketConfig;
use async_tungstenite::tungstenite::{Error as WsError, Message};
use smol::channel::{Receiver, Sender};
use smol::stream::StreamExt as _;

use super::Incoming;
use super::dial::dial;
use super::failure::RemoteError;
use super::target::{RemoteUrl, Token};
use crate::net::connection::Connection;

/// The largest message we take from the agent: the stdio transport's line limit
/// (R-FRAME-5).
const MAX_MESSAGE: usize = 16 << 20;

/// Connects and upgrades; the returned task relays `outgoing` to the socket and the socket
/// to `incoming` until either side ends.
pub(super) async fn start(
    url: &RemoteUrl,
    token: Option<&Token>,
    outgoing: Receiver<String>,
    incoming: Sender<Incoming>,
) -> Result<smol::Task<()>, RemoteError> {
    let socket = upgrade(url, token).await?;
    Ok(smol::spawn(relay(socket, outgoing, incoming)))
}

/// The opening handshake.
async fn upgrade(
    url: &RemoteUrl,
    token: Option<&Token>,
) -> Result<WebSocketStream<Connection>, RemoteError> {
    let scheme = if url.endpoint.tls { "wss" } else { "ws" };
    let uri = format!(
        "{scheme}://{}{}",
        url.endpoint.host_header(),
        url.request_target
    );
    let not_acp = |why: String| RemoteError::NotAcp {
        url: url.shown.clone(),
        why,
    };
    let mut request = uri
        .into_client_request()
        .map_err(|error| not_acp(format!("the URL cannot be requested ({error})")))?;
    if let Some(token) = token {
        let value = HeaderValue::from_str(&token.header_value())
            .map_err(|_| not_acp("the token cannot be sent as a header".to_owned()))?;
        request.headers_mut().insert("authorization", value);
    }
    let stream = dial(url).await?;
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE));
    match async_tungstenite::client_async_with_config(request, stream, Some(config)).await {
        Ok((socket, _)) => Ok(socket),
        Err(WsError::Http(response)) => {
            let status = response.status();
            let reason = status.canonical_reason().unwrap_or("");
            Err(match status.as_u16() {
                401 | 403 | 404 => {
                    RemoteError::from_status(status.as_u16(), reason, &url.shown, token.is_some())
                }
                code if code < 500 => not_acp(format!(
                    "it answered the WebSocket upgrade with {code} {reason}"
                )),
                code => RemoteError::Status {
                    status: code,
                    reason: reason.to_owned(),
                },
            })
        }
        Err(WsError::Io(error)) => Err(RemoteError::Lost(error.to_string())),
        Err(WsError::ConnectionClosed | WsError::AlreadyClosed) => Err(not_acp(
            "it closed the connection during the WebSocket upgrade".to_owned(),
        )),
        Err(error) => Err(not_acp(format!(
            "its answer to the WebSocket upgrade is not valid ({error})"
        ))),
    }
}

/// Moves messages both ways until our side ends (a close frame is sent) or the agent's does
/// (reported on `incoming`).
async fn relay(
    socket: WebSocketStream<Connection>,
    outgoing: Receiver<String>,
    incoming: Sender<Incoming>,
) {
    let (mut sender, mut receiver) = socket.split();
    let reading = async {
        let end = loop {
            match receiver.next().await {
                Some(Ok(Message::Text(text))) => {
                    let message = Incoming::Message(text.as_bytes().to_vec());
                    if incoming.send(message).await.is_err() {
                        return;
                    }
                }
                // Binary frames carry no ACP message; pings are answered by the library.
                Some(Ok(Message::Binary(_) | Message::Ping(_) | Message::Pong(_))) => {}
                Some(Ok(Message::Frame(_))) => {}
                Some(Ok(Message::Close(_))) | None => break None,
                Some(Err(WsError::ConnectionClosed | WsError::AlreadyClosed)) => break None,
                Some(Err(error)) => break Some(RemoteError::Lost(error.to_string())),
            }
        };
        let _ = incoming.send(Incoming::Ended(end)).await;
    };
    let writing = async {
        while let Ok(text) = outgoing.recv().await {
            if let Err(error) = sender.send(Message::text(text)).await {
                let lost = RemoteError::Lost(error.to_string());
                let _ = incoming.send(Incoming::Ended(Some(lost))).await;
                return;
            }
        }
        // Our side ended: say goodbye; the agent's answer is not waited for.
        let _ = sender.close(None).await;
    };
    smol::future::or(reading, writing).await;
}
