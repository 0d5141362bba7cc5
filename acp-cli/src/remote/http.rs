//! The Streamable HTTP transport (R-NETC-5), on the agent's one HTTP/1.1 client
//! (`crate::net`, one request per TCP connection):
//!
//! - each message we send is one `POST` to the URL (`Content-Type: application/json`), in
//!   order; the first, `initialize`, is answered in the body with the connection's
//!   `Acp-Connection-Id`, which every later request carries; later POSTs are answered `202`
//!   and their answers come on a stream;
//! - after `initialize`, one `GET` (`Accept: text/event-stream`) opens the connection's event
//!   stream; each session gets its own (`Acp-Session-Id`), opened before the first
//!   session-scoped POST for it and when an answer names a session (`session/new`'s result, the
//!   answer to `session/load`), before that answer is handed on, so nothing the agent sends
//!   on it is missed;
//! - session-scoped messages (the methods both SDKs scope, and our answers to the agent's
//!   requests that came on a session's stream) carry `Acp-Session-Id`;
//! - cookies are kept for the connection (`cookies`), the token goes on every request as
//!   `Authorization: Bearer`, and the end of our side sends `DELETE`.
//!
//! A POST answered with an error status and a JSON body hands the body on (a JSON-RPC error
//! for that message); 401, 403, 404 and other failures end the connection with their message.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use smol::channel::{Receiver, Sender};

use super::Incoming;
use super::cookies::Jar;
use super::dial::dial;
use super::failure::RemoteError;
use super::target::{RemoteUrl, Token};
use crate::net::connection::{Connection, HeadError, read_head, write_request_head};
use crate::net::response::ResponseHead;
use crate::net::sse::{SseEvent, SseParser};

/// The largest message (a JSON body, an event's data) we take: the stdio line limit
/// (R-FRAME-5).
const MAX_MESSAGE: usize = 16 << 20;

// The methods whose POST carries `Acp-Session-Id` (their `params.sessionId`): the list both
// SDKs use, which our server routes by too.
use crate::serve::route::SESSION_SCOPED;

/// Starts the transport: nothing is sent until the first message.
pub(super) fn start(
    url: &RemoteUrl,
    token: Option<&Token>,
    outgoing: Receiver<String>,
    incoming: Sender<Incoming>,
) -> smol::Task<()> {
    let shared = Arc::new(Shared {
        url: url.clone(),
        token: token.cloned(),
        jar: Mutex::new(Jar::default()),
        connection: Mutex::new(None),
        streams: smol::lock::Mutex::new(BTreeSet::new()),
        asked_in: Mutex::new(BTreeMap::new()),
        posted_for: Mutex::new(BTreeMap::new()),
        incoming,
        readers: Mutex::new(Vec::new()),
    });
    smol::spawn(async move {
        let mut failed = false;
        // Notifications and answers that come before the connection is open (no request
        // has opened it yet) wait for it, in order.
        let mut held: Vec<String> = Vec::new();
        while let Ok(message) = outgoing.recv().await {
            let open = lock(&shared.connection).is_some();
            if !open && !is_request(&message) {
                held.push(message);
                continue;
            }
            let mut sent = shared.post(&message).await;
            if sent.is_ok() && !held.is_empty() && lock(&shared.connection).is_some() {
                for message in std::mem::take(&mut held) {
                    sent = shared.post(&message).await;
                    if sent.is_err() {
                        break;
                    }
                }
            }
            if let Err(error) = sent {
                let _ = shared.incoming.send(Incoming::Ended(Some(error))).await;
                failed = true;
                break;
            }
        }
        if !failed {
            shared.delete().await;
        }
        // Dropping the readers closes their streams.
        lock(&shared.readers).clear();
    })
}

/// What the poster and the stream readers share.
struct Shared {
    url: RemoteUrl,
    token: Option<Token>,
    jar: Mutex<Jar>,
    /// `Acp-Connection-Id`, once `initialize` was answered.
    connection: Mutex<Option<String>>,
    /// The sessions whose stream is open; held while one is being opened.
    streams: smol::lock::Mutex<BTreeSet<String>>,
    /// The session stream each of the agent's requests came on, by id (as JSON text): our
    /// answer goes to that session.
    asked_in: Mutex<BTreeMap<String, String>>,
    /// Our session-scoped requests, by id (as JSON text), with their session.
    posted_for: Mutex<BTreeMap<String, String>>,
    incoming: Sender<Incoming>,
    readers: Mutex<Vec<smol::Task<()>>>,
}

/// A response whose body is still to be read.
struct Response {
    head: ResponseHead,
    connection: Connection,
    /// Body bytes read with the head.
    rest: Vec<u8>,
}

impl Response {
    /// `Content-Type`, lower-cased, without parameters.
    fn kind(&self) -> String {
        let kind = self.head.header("content-type").unwrap_or("");
        kind.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    }

    /// Reads the whole body (at most [`MAX_MESSAGE`] bytes).
    async fn body(mut self) -> Result<Vec<u8>, RemoteError> {
        let mut decoder = self.head.body_decoder().map_err(RemoteError::Lost)?;
        let mut body = Vec::new();
        let mut input = std::mem::take(&mut self.rest);
        loop {
            if decoder
                .decode(&input, &mut body)
                .map_err(RemoteError::Lost)?
            {
                return Ok(body);
            }
            if body.len() > MAX_MESSAGE {
                return Err(RemoteError::Lost(format!(
                    "a response body is larger than {MAX_MESSAGE} bytes"
                )));
            }
            input.clear();
            if self
                .connection
                .read_more(&mut input)
                .await
                .map_err(RemoteError::Lost)?
                == 0
            {
                return if decoder.complete_at_close() {
                    Ok(body)
                } else {
                    Err(RemoteError::Lost(
                        "the server closed the connection in the middle of a response".to_owned(),
                    ))
                };
            }
        }
    }
}

impl Shared {
    /// One request: its head (with the token and the cookies) and body sent, the response
    /// head read; cookies set by it are kept.
    async fn request(
        &self,
        method: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<Response, RemoteError> {
        let mut all: Vec<(&str, &str)> = headers.to_vec();
        let authorization = self.token.as_ref().map(Token::header_value);
        if let Some(value) = &authorization {
            all.push(("Authorization", value));
        }
        let cookie = lock(&self.jar).header();
        if let Some(value) = &cookie {
            all.push(("Cookie", value));
        }
        let head = write_request_head(
            method,
            &self.url.request_target,
            &self.url.endpoint.host_header(),
            &all,
            (method == "POST").then_some(body.len()),
        );
        let mut connection = dial(&self.url).await?;
        connection
            .send(&head, body)
            .await
            .map_err(|error| RemoteError::Lost(format!("sending a request failed: {error}")))?;
        let (head, rest) = read_head(&mut connection, None)
            .await
            .map_err(|error| match error {
                HeadError::Malformed(why) => RemoteError::NotAcp {
                    url: self.url.shown.clone(),
                    why,
                },
                HeadError::Closed(why) => RemoteError::Lost(why),
                HeadError::Idle(_) => RemoteError::Lost("the server went silent".to_owned()),
            })?;
        {
            let mut jar = lock(&self.jar);
            for (name, value) in &head.headers {
                if name == "set-cookie" {
                    jar.set(value);
                }
            }
        }
        Ok(Response {
            head,
            connection,
            rest,
        })
    }

    /// The error for an unexpected status.
    fn status_error(&self, head: &ResponseHead) -> RemoteError {
        RemoteError::from_status(
            head.status,
            &head.reason,
            &self.url.shown,
            self.token.is_some(),
        )
    }

    fn not_acp(&self, why: String) -> RemoteError {
        RemoteError::NotAcp {
            url: self.url.shown.clone(),
            why,
        }
    }

    /// POSTs one message and hands on what its response carries.
    async fn post(self: &Arc<Self>, message: &str) -> Result<(), RemoteError> {
        let value: Option<Value> = serde_json::from_str(message).ok();
        let connection = lock(&self.connection).clone();
        let session = value.as_ref().and_then(|v| self.session_of(v));
        if let (Some(session), Some(_)) = (&session, &connection) {
            // A 404 here is no failure: a session is known to the connection only once
            // `session/load` is answered; its stream is opened then.
            self.ensure_stream(session, true).await?;
            if let Some(id) = value.as_ref().and_then(request_id) {
                lock(&self.posted_for).insert(id, session.clone());
            }
        }
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        if let Some(id) = &connection {
            headers.push(("Acp-Connection-Id", id));
        }
        if let Some(session) = &session {
            headers.push(("Acp-Session-Id", session));
        }
        let response = self.request("POST", &headers, message.as_bytes()).await?;
        let opening = connection.is_none();
        let status = response.head.status;
        let kind = response.kind();
        if opening && (400..500).contains(&status) && kind == "application/json" {
            // The server refused the request that was to open the connection, with a JSON-RPC
            // error: that is the answer; the next request tries again.
            if ![401, 403, 404].contains(&status) {
                let body = response.body().await?;
                self.take_incoming(body, None).await;
                return Ok(());
            }
        }
        if opening && ![200, 401, 403, 404].contains(&status) {
            return Err(self.not_acp(format!(
                "it answered the initialize POST with {status} {}",
                response.head.reason
            )));
        }
        if matches!(status, 401 | 403 | 404) {
            return Err(self.status_error(&response.head));
        }
        let new_connection = response.head.header("acp-connection-id").map(str::to_owned);
        match (status, kind.as_str()) {
            (202 | 204, _) => {}
            (_, "text/event-stream") if (200..300).contains(&status) => {
                let reader = Arc::clone(self).read_stream(None, response, false);
                lock(&self.readers).push(smol::spawn(reader));
            }
            (_, "application/json") => {
                let body = response.body().await?;
                if !body.iter().all(u8::is_ascii_whitespace) {
                    self.take_incoming(body, None).await;
                }
            }
            (200..300, _) if opening => {
                return Err(self.not_acp(format!(
                    "it answered initialize with {}, not JSON",
                    if kind.is_empty() {
                        "no content type"
                    } else {
                        &kind
                    }
                )));
            }
            (200..300, _) => {}
            _ => return Err(self.status_error(&response.head)),
        }
        if opening {
            let Some(id) = new_connection else {
                return Err(self.not_acp(
                    "its answer to initialize has no Acp-Connection-Id header".to_owned(),
                ));
            };
            *lock(&self.connection) = Some(id);
            self.open_connection_stream().await?;
        }
        Ok(())
    }

    /// The session a message we send is scoped to.
    fn session_of(&self, message: &Value) -> Option<String> {
        match message.get("method").and_then(Value::as_str) {
            Some(method) if SESSION_SCOPED.contains(&method) => message
                .get("params")
                .and_then(|p| p.get("sessionId"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            Some(_) => None,
            None => {
                let id = message.get("id").map(Value::to_string)?;
                lock(&self.asked_in).remove(&id)
            }
        }
    }

    /// The headers of a GET for an event stream.
    async fn get_stream(&self, session: Option<&str>) -> Result<Response, RemoteError> {
        let connection = lock(&self.connection).clone().unwrap_or_default();
        let mut headers = vec![
            ("Accept", "text/event-stream"),
            ("Acp-Connection-Id", connection.as_str()),
        ];
        if let Some(session) = session {
            headers.push(("Acp-Session-Id", session));
        }
        self.request("GET", &headers, b"").await
    }

    /// Opens the connection's event stream; its end is the connection's end.
    async fn open_connection_stream(self: &Arc<Self>) -> Result<(), RemoteError> {
        let response = self.get_stream(None).await?;
        if response.head.status != 200 {
            return Err(self.status_error(&response.head));
        }
        if response.kind() != "text/event-stream" {
            return Err(self.not_acp(format!(
                "its connection stream is {}, not an event stream",
                response.kind()
            )));
        }
        let reader = Arc::clone(self).read_stream(None, response, true);
        lock(&self.readers).push(smol::spawn(reader));
        Ok(())
    }

    /// Opens `session`'s event stream unless it is open. With `tolerate_unknown`, a 404 (the
    /// session is not the connection's yet) leaves it closed without an error; a 409 (a
    /// stream is already attached) counts as open.
    ///
    /// Boxed, with `Send` said: the readers it starts may call it again.
    fn ensure_stream<'a>(
        self: &'a Arc<Self>,
        session: &'a str,
        tolerate_unknown: bool,
    ) -> Pin<Box<dyn Future<Output = Result<(), RemoteError>> + Send + 'a>> {
        Box::pin(self.ensure_stream_now(session, tolerate_unknown))
    }

    async fn ensure_stream_now(
        self: &Arc<Self>,
        session: &str,
        tolerate_unknown: bool,
    ) -> Result<(), RemoteError> {
        let mut streams = self.streams.lock().await;
        if streams.contains(session) {
            return Ok(());
        }
        let response = self.get_stream(Some(session)).await?;
        match response.head.status {
            200 if response.kind() == "text/event-stream" => {
                streams.insert(session.to_owned());
                let reader =
                    Arc::clone(self).read_stream(Some(session.to_owned()), response, false);
                lock(&self.readers).push(smol::spawn(reader));
                Ok(())
            }
            200 => Err(self.not_acp(format!(
                "its session stream is {}, not an event stream",
                response.kind()
            ))),
            409 => {
                streams.insert(session.to_owned());
                Ok(())
            }
            404 if tolerate_unknown => Ok(()),
            _ => Err(self.status_error(&response.head)),
        }
    }

    /// Reads an event stream (the connection's, a session's, or a POST's), handing on each
    /// event's data as one message. The end of the connection's stream ends the connection.
    async fn read_stream(
        self: Arc<Self>,
        session: Option<String>,
        mut response: Response,
        ends_connection: bool,
    ) {
        let end = self.pump_events(session.as_deref(), &mut response).await;
        if let Some(session) = &session {
            self.streams.lock().await.remove(session);
        }
        if ends_connection {
            let _ = self.incoming.send(Incoming::Ended(end.err())).await;
        }
    }

    /// Feeds the stream's body to the SSE parser until it ends.
    async fn pump_events(
        self: &Arc<Self>,
        session: Option<&str>,
        response: &mut Response,
    ) -> Result<(), RemoteError> {
        let mut decoder = response.head.body_decoder().map_err(RemoteError::Lost)?;
        let mut parser = SseParser::with_limit(MAX_MESSAGE);
        let mut input = std::mem::take(&mut response.rest);
        let mut body = Vec::new();
        let mut events: Vec<SseEvent> = Vec::new();
        loop {
            body.clear();
            let done = decoder
                .decode(&input, &mut body)
                .map_err(RemoteError::Lost)?;
            parser
                .feed(&body, &mut events)
                .map_err(|error| RemoteError::Lost(error.to_string()))?;
            for event in events.drain(..) {
                if !event.data.is_empty() {
                    self.take_incoming(event.data.into_bytes(), session).await;
                }
            }
            if done {
                return Ok(());
            }
            input.clear();
            if response
                .connection
                .read_more(&mut input)
                .await
                .map_err(RemoteError::Lost)?
                == 0
            {
                return Ok(());
            }
        }
    }

    /// Hands on one message from the agent, after noting what routing needs: the session of
    /// a request that came on a session's stream, and the stream of a session an answer
    /// names (opened before the answer is handed on).
    async fn take_incoming(self: &Arc<Self>, bytes: Vec<u8>, via: Option<&str>) {
        if let Ok(message) = serde_json::from_slice::<Value>(&bytes) {
            let id = message.get("id").map(Value::to_string);
            let is_request = message.get("method").is_some();
            if let (true, Some(id)) = (is_request, &id) {
                let session = via.map(str::to_owned).or_else(|| {
                    message
                        .get("params")
                        .and_then(|p| p.get("sessionId"))
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                });
                if let Some(session) = session {
                    lock(&self.asked_in).insert(id.clone(), session);
                }
            } else if let Some(id) = &id {
                let posted = lock(&self.posted_for).remove(id);
                let named = message
                    .get("result")
                    .and_then(|r| r.get("sessionId"))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                if let Some(session) = named.or(posted) {
                    // A failure shows on the next POST for the session; the answer is still
                    // handed on.
                    let _ = self.ensure_stream(&session, true).await;
                }
            }
        }
        let _ = self.incoming.send(Incoming::Message(bytes)).await;
    }

    /// Ends the connection on the server (its answer does not matter).
    async fn delete(&self) {
        let Some(id) = lock(&self.connection).clone() else {
            return;
        };
        if let Ok(response) = self
            .request("DELETE", &[("Acp-Connection-Id", &id)], b"")
            .await
        {
            tracing::debug!(status = response.head.status, "remote connection deleted");
        }
    }
}

/// Whether a message we send is a request (a `method` and an `id`); text that is not JSON
/// counts as one, so the server answers it.
fn is_request(message: &str) -> bool {
    match serde_json::from_str::<Value>(message) {
        Ok(value) => request_id(&value).is_some(),
        Err(_) => true,
    }
}

/// The id of a request (a message with `method` and `id`), as JSON text.
fn request_id(message: &Value) -> Option<String> {
    message.get("method")?;
    message.get("id").map(Value::to_string)
}

/// A lock that a panic elsewhere does not poison for us.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R-NETC-5: the scoped methods both SDKs list, nothing else.
    #[test]
    fn the_session_scoped_methods_are_the_sdks() {
        assert_eq!(SESSION_SCOPED.len(), 10);
        assert!(!SESSION_SCOPED.contains(&"session/new"));
        assert!(!SESSION_SCOPED.contains(&"session/list"));
        assert_eq!(
            request_id(&serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "x"})),
            Some("3".to_owned())
        );
        assert_eq!(
            request_id(&serde_json::json!({"id": 3, "result": {}})),
            None
        );
    }
}
