//! ACP over the network, the client side: a remote agent reached by URL, as a stream of
//! whole messages both ways (R-NETC-*).
//!
//! - [`target`]: the URL (its scheme picks the transport) and the bearer token.
//! - [`failure`]: why a remote agent cannot be reached or was lost, one line each.
//! - `dial`: TCP and TLS, with refused connections and failed handshakes told apart.
//! - `ws`: the WebSocket transport.
//! - `http`: the Streamable HTTP transport (POST, the connection's and each session's event
//!   stream, DELETE), with `cookies` kept per connection.
//! - [`Remote`]: either transport behind one interface, messages in and out; the bridge
//!   (`acp-cli bridge --connect`) puts it on stdin and stdout.
//! - [`agent`]: `client --url`, `repl --url` and `conform --url` run that bridge as their
//!   agent process.

pub mod agent;
mod cookies;
mod dial;
pub mod failure;
mod http;
pub mod target;
mod ws;

use std::time::Duration;

use smol::channel::{Receiver, Sender};

use failure::RemoteError;
use target::{RemoteUrl, Token, Transport};

/// How many messages wait in either direction before the sender waits (backpressure).
const QUEUE: usize = 64;

/// How long closing (the WebSocket close frame, the HTTP `DELETE`) may take.
pub(crate) const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// What the remote agent sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Incoming {
    /// One JSON-RPC message, as its frame or event carried it.
    Message(Vec<u8>),
    /// The connection ended: cleanly (`None`) or with an error. Nothing follows.
    Ended(Option<RemoteError>),
}

/// A connection to a remote agent; see the module docs.
pub struct Remote {
    outgoing: Option<Sender<String>>,
    incoming: Receiver<Incoming>,
    task: Option<smol::Task<()>>,
    ended: bool,
}

impl Remote {
    /// Connects to `url`. A WebSocket is upgraded here, so its failures come back at once;
    /// Streamable HTTP opens its connection with the first message (`initialize`), so its
    /// failures come as [`Incoming::Ended`].
    pub async fn connect(url: &RemoteUrl, token: Option<&Token>) -> Result<Remote, RemoteError> {
        let (outgoing, outgoing_rx) = smol::channel::bounded(QUEUE);
        let (incoming_tx, incoming) = smol::channel::bounded(QUEUE);
        let task = match url.transport {
            Transport::WebSocket => ws::start(url, token, outgoing_rx, incoming_tx).await?,
            Transport::StreamableHttp => http::start(url, token, outgoing_rx, incoming_tx),
        };
        Ok(Remote {
            outgoing: Some(outgoing),
            incoming,
            task: Some(task),
            ended: false,
        })
    }

    /// Sends one message (waits while the queue is full). `false`: the connection ended.
    pub async fn send(&self, message: String) -> bool {
        match &self.outgoing {
            Some(outgoing) => outgoing.send(message).await.is_ok(),
            None => false,
        }
    }

    /// The next thing the agent sent; after [`Incoming::Ended`], `Ended(None)` for ever.
    pub async fn next(&mut self) -> Incoming {
        if self.ended {
            return Incoming::Ended(None);
        }
        let next = self.incoming.recv().await.unwrap_or(Incoming::Ended(None));
        self.ended = matches!(next, Incoming::Ended(_));
        next
    }

    /// Ends our side: the WebSocket close frame, or the HTTP `DELETE`, within
    /// [`CLOSE_TIMEOUT`] (messages queued before are sent first).
    pub async fn close(mut self) {
        self.outgoing = None;
        if let Some(task) = self.task.take() {
            smol::future::or(task, async {
                smol::Timer::after(CLOSE_TIMEOUT).await;
            })
            .await;
        }
    }
}
