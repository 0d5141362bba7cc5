//! Streamable HTTP on `/acp` (R-NET-2, R-NET-3): `POST` a message, `GET` an SSE stream,
//! `DELETE` the connection.

use std::io;
use std::rc::Rc;

use smol::io::{AsyncRead, AsyncWrite};

use super::head::{self as wire, Head};
use super::registry::{HttpConnection, Server, StreamRefused};
use super::route::{self, SESSION_SCOPED};
use super::socket::{self, refusal};

/// Whether the socket may carry another request.
pub(crate) type KeepAlive = bool;

const CONNECTION_ID: &str = "acp-connection-id";
const SESSION_ID: &str = "acp-session-id";

/// The connection a request names: 400 without the header, 404 for an unknown id.
fn named_connection(server: &Server, head: &Head) -> Result<Rc<HttpConnection>, Vec<u8>> {
    let Some(id) = head.header(CONNECTION_ID) else {
        return Err(refusal(400, "Acp-Connection-Id header required"));
    };
    server
        .connection(id)
        .ok_or_else(|| refusal(404, "unknown Acp-Connection-Id"))
}

/// `POST /acp`: `initialize` opens a connection (200 with its answer); anything else goes to
/// the named connection's agent (202), its answer later on a stream.
pub(crate) async fn post<S: AsyncRead + AsyncWrite + Unpin>(
    server: &Rc<Server>,
    head: &Head,
    io: &mut S,
    buf: &mut Vec<u8>,
) -> io::Result<KeepAlive> {
    if !head.header("content-type").is_some_and(|t| {
        t.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .eq_ignore_ascii_case("application/json")
    }) {
        socket::send(io, &refusal(415, "Content-Type must be application/json")).await?;
        return Ok(false);
    }
    if head.header("transfer-encoding").is_some() {
        socket::send(
            io,
            &refusal(
                411,
                "a POST needs Content-Length (chunked bodies are not taken)",
            ),
        )
        .await?;
        return Ok(false);
    }
    let length = match head.header("content-length").map(str::parse::<usize>) {
        None => 0,
        Some(Ok(length)) => length,
        Some(Err(_)) => {
            socket::send(io, &refusal(400, "Content-Length is not a number")).await?;
            return Ok(false);
        }
    };
    if length > server.limits.max_body {
        let message = format!("the body is larger than {} bytes", server.limits.max_body);
        socket::send(io, &refusal(413, &message)).await?;
        return Ok(false);
    }
    if head
        .header("expect")
        .is_some_and(|e| e.eq_ignore_ascii_case("100-continue"))
    {
        socket::send(io, b"HTTP/1.1 100 Continue\r\n\r\n").await?;
    }
    let body = socket::read_body(io, buf, length).await?;
    let peek = route::peek(&body);
    if peek.batch {
        socket::send(io, &refusal(501, "batches are not supported")).await?;
        return Ok(true);
    }
    if head.header(CONNECTION_ID).is_none() && peek.method.as_deref() == Some("initialize") {
        return initialize(server, io, &body, peek.id.as_deref()).await;
    }
    let connection = match named_connection(server, head) {
        Ok(connection) => connection,
        Err(response) => {
            socket::send(io, &response).await?;
            return Ok(true);
        }
    };
    let header = head.header(SESSION_ID);
    let scoped = peek
        .method
        .as_deref()
        .is_some_and(|m| SESSION_SCOPED.contains(&m));
    let session = match (header, peek.params_session.as_deref()) {
        (Some(h), Some(p)) if scoped && h != p => {
            let response = refusal(400, "Acp-Session-Id does not match params.sessionId");
            socket::send(io, &response).await?;
            return Ok(true);
        }
        (Some(h), _) => Some(h),
        (None, Some(p)) if scoped => Some(p),
        (None, _) if scoped => {
            let message = format!(
                "{} needs Acp-Session-Id (or params.sessionId)",
                peek.method.as_deref().unwrap_or_default()
            );
            socket::send(io, &refusal(400, &message)).await?;
            return Ok(true);
        }
        (None, _) => None,
    };
    if !connection.send(&body, &peek, session).await {
        socket::send(io, &refusal(404, "unknown Acp-Connection-Id")).await?;
        return Ok(true);
    }
    socket::send(io, &wire::response(202, &[], b"")).await?;
    Ok(true)
}

/// The `initialize` POST: a new connection, answered in the body (R-NET-2).
async fn initialize<S: AsyncWrite + Unpin>(
    server: &Rc<Server>,
    io: &mut S,
    body: &[u8],
    id: Option<&str>,
) -> io::Result<KeepAlive> {
    let Some(id) = id else {
        socket::send(
            io,
            &refusal(400, "initialize must be a request (with an id)"),
        )
        .await?;
        return Ok(true);
    };
    let connection = server.open_http();
    tracing::info!(
        connection = connection.id.as_str(),
        "http connection opened"
    );
    let Some(answer) = connection.initialize(body, id).await else {
        socket::send(
            io,
            &refusal(503, "the agent ended before answering initialize"),
        )
        .await?;
        return Ok(true);
    };
    let response = wire::response(
        200,
        &[
            ("Content-Type", "application/json"),
            ("Acp-Connection-Id", &connection.id),
        ],
        &answer,
    );
    socket::send(io, &response).await?;
    Ok(true)
}

/// `GET /acp` for an SSE stream: the connection's, or with `Acp-Session-Id` a session's
/// (R-NET-2). Holds the socket until the connection ends or the client goes away.
pub(crate) async fn get<S: AsyncWrite + Unpin>(
    server: &Rc<Server>,
    head: &Head,
    io: &mut S,
) -> io::Result<KeepAlive> {
    if !head.header_has("accept", "text/event-stream") {
        socket::send(io, &refusal(406, "Accept must include text/event-stream")).await?;
        return Ok(true);
    }
    let connection = match named_connection(server, head) {
        Ok(connection) => connection,
        Err(response) => {
            socket::send(io, &response).await?;
            return Ok(true);
        }
    };
    let attached = match connection.stream(head.header(SESSION_ID)) {
        Ok(attached) => attached,
        Err(StreamRefused::Busy) => {
            socket::send(io, &refusal(409, "this stream already has a listener")).await?;
            return Ok(true);
        }
        Err(StreamRefused::UnknownSession) => {
            socket::send(io, &refusal(404, "unknown Acp-Session-Id")).await?;
            return Ok(true);
        }
    };
    let start = wire::response_head(
        200,
        &[
            ("Content-Type", "text/event-stream"),
            ("Cache-Control", "no-store"),
            ("Transfer-Encoding", "chunked"),
        ],
    );
    socket::send(io, &start).await?;
    let keepalive = server.limits.keepalive;
    loop {
        let next = smol::future::or(async { Some(attached.next().await) }, async {
            smol::Timer::after(keepalive).await;
            None
        })
        .await;
        let event = match next {
            // A comment: keeps proxies from closing a quiet stream, finds a client gone.
            None => b":\n\n".to_vec(),
            Some(None) => break,
            Some(Some(message)) => {
                connection.touch();
                let mut event = Vec::with_capacity(message.len() + 8);
                event.extend_from_slice(b"data: ");
                event.extend_from_slice(&message);
                event.extend_from_slice(b"\n\n");
                event
            }
        };
        socket::send(io, &chunk(&event)).await?;
    }
    socket::send(io, b"0\r\n\r\n").await?;
    Ok(true)
}

/// One chunk of a chunked body.
fn chunk(data: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}

/// `DELETE /acp`: ends the connection (202), its agent sees EOF and saves its sessions.
pub(crate) async fn delete<S: AsyncWrite + Unpin>(
    server: &Rc<Server>,
    head: &Head,
    io: &mut S,
) -> io::Result<KeepAlive> {
    let response = match head.header(CONNECTION_ID) {
        None => refusal(400, "Acp-Connection-Id header required"),
        Some(id) if server.close_http(id) => wire::response(202, &[], b""),
        Some(_) => refusal(404, "unknown Acp-Connection-Id"),
    };
    socket::send(io, &response).await?;
    Ok(true)
}
