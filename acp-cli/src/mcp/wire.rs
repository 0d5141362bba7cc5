//! The client side of one MCP connection, sans-IO: requests and notifications out as lines,
//! lines in as responses and events.
//!
//! Framing and the JSON-RPC envelope are acp-core's (`wire::frame`, `wire::envelope`,
//! `wire::encode`): MCP's stdio transport is newline-delimited JSON-RPC like ACP, and the
//! streamable HTTP transport carries the same messages one per body or SSE event. Only what
//! a client needs is answered here: the server's `ping` (R-MCP-4); any other request of the
//! server is refused with `-32601`, since we advertise no client capabilities.

use std::collections::VecDeque;

use acp_core::wire::encode::{
    append_line, write_error, write_notification, write_request, write_result,
};
use acp_core::wire::envelope::{self, Message, Outcome};
use acp_core::wire::frame::Framer;
use acp_core::wire::{ErrorCode, JsonStr};
use serde::Serialize;
use serde_json::Value;

/// Longest line a server may send (a tool result with an image is large).
pub(crate) const MAX_LINE: usize = 16 * 1024 * 1024;

/// A JSON-RPC error the server answered with.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcError {
    /// The code.
    pub code: i32,
    /// The message, unescaped.
    pub message: String,
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.code, self.message)
    }
}

/// What the server told us.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum McpEvent {
    /// The answer to our request `id`.
    Response {
        /// Our request's id.
        id: u64,
        /// Its result, or the error.
        outcome: Result<Value, RpcError>,
    },
    /// `notifications/tools/list_changed`: list the tools again.
    ToolsChanged,
    /// A line that is not a message we can use (logged at debug, never fatal).
    Ignored(String),
}

/// One MCP connection's protocol state.
#[derive(Debug)]
pub(crate) struct McpWire {
    framer: Framer<Vec<u8>>,
    out: Vec<u8>,
    last_id: u64,
    events: VecDeque<McpEvent>,
}

impl Default for McpWire {
    fn default() -> Self {
        Self::new()
    }
}

impl McpWire {
    /// A fresh connection: nothing sent yet.
    pub(crate) fn new() -> Self {
        Self {
            framer: Framer::with_limit(MAX_LINE),
            out: Vec::new(),
            last_id: 0,
            events: VecDeque::new(),
        }
    }

    /// Queues a request line and returns its id.
    pub(crate) fn request<P: Serialize + ?Sized>(&mut self, method: &str, params: &P) -> u64 {
        self.last_id += 1;
        let id = self.last_id;
        // Our own values always encode (no non-string map keys, no failing Display).
        let _ = append_line(&mut self.out, |line| {
            write_request(line, id, method, Some(params))
        });
        id
    }

    /// Queues a notification line.
    pub(crate) fn notify<P: Serialize + ?Sized>(&mut self, method: &str, params: Option<&P>) {
        let _ = append_line(&mut self.out, |line| {
            write_notification(line, method, params)
        });
    }

    /// Bytes to send, whole lines; taking them empties the queue.
    pub(crate) fn take_transmit(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    /// Bytes the server wrote (the stdio transport's stdout).
    pub(crate) fn handle_bytes(&mut self, mut bytes: &[u8]) {
        loop {
            let taken = self.framer.feed(bytes);
            bytes = &bytes[taken..];
            self.drain_lines();
            if bytes.is_empty() {
                return;
            }
        }
    }

    /// One whole message (an HTTP body or an SSE event's data).
    pub(crate) fn handle_message(&mut self, text: &str) {
        self.handle_line(text);
    }

    /// The server's output ended: a last line without newline still counts.
    pub(crate) fn handle_eof(&mut self) {
        self.framer.finish();
        self.drain_lines();
    }

    /// The next event.
    pub(crate) fn poll_event(&mut self) -> Option<McpEvent> {
        self.events.pop_front()
    }

    fn drain_lines(&mut self) {
        let mut lines = Vec::new();
        while let Some(line) = self.framer.next_line() {
            match line {
                Ok(line) => lines.push(line.to_owned()),
                Err(error) => self.events.push_back(McpEvent::Ignored(error.to_string())),
            }
        }
        for line in lines {
            self.handle_line(&line);
        }
    }

    fn handle_line(&mut self, line: &str) {
        let message = match envelope::scan(line) {
            Ok(message) => message,
            Err(rejection) => {
                self.events
                    .push_back(McpEvent::Ignored(rejection.to_string()));
                return;
            }
        };
        match message {
            Message::Response(response) => {
                let Some(id) = response.id.as_u64() else {
                    self.events.push_back(McpEvent::Ignored(format!(
                        "response to an id we never sent: {:?}",
                        response.id
                    )));
                    return;
                };
                let outcome = match response.outcome {
                    Outcome::Result(raw) => serde_json::from_str(raw.get()).map_err(|e| RpcError {
                        code: ErrorCode::INTERNAL_ERROR.0,
                        message: e.to_string(),
                    }),
                    Outcome::Error(error) => Err(RpcError {
                        code: error.code.0,
                        message: unescape(error.message),
                    }),
                    Outcome::Malformed(why) => Err(RpcError {
                        code: ErrorCode::INTERNAL_ERROR.0,
                        message: why.to_string(),
                    }),
                };
                self.events.push_back(McpEvent::Response { id, outcome });
            }
            Message::Request(request) => {
                let id = request.id;
                let _ = if request.method.eq_str("ping") {
                    append_line(&mut self.out, |line| {
                        write_result(line, id, &serde_json::json!({}))
                    })
                } else {
                    append_line(&mut self.out, |line| {
                        write_error(
                            line,
                            id,
                            ErrorCode::METHOD_NOT_FOUND,
                            "Method not found",
                            None::<&()>,
                        )
                    })
                };
            }
            Message::Notification(notification) => {
                if notification
                    .method
                    .eq_str("notifications/tools/list_changed")
                {
                    self.events.push_back(McpEvent::ToolsChanged);
                }
                // Logging, progress and resource notifications: nothing we act on.
            }
        }
    }
}

fn unescape(text: JsonStr<'_>) -> String {
    text.to_cow().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SERVER_SAYS: &str = concat!(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\"}}\n",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\r\n",
        "not json\n",
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n",
        "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"roots/list\"}\n",
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32602,\"message\":\"bad \\\"tool\\\"\"}}",
    );

    fn events_of(chunks: &[&[u8]]) -> (Vec<McpEvent>, String) {
        let mut wire = McpWire::new();
        for chunk in chunks {
            wire.handle_bytes(chunk);
        }
        wire.handle_eof();
        let events = std::iter::from_fn(|| wire.poll_event()).collect();
        (events, String::from_utf8(wire.take_transmit()).unwrap())
    }

    /// R-MCP-1: requests and notifications are written by acp-core's encoder.
    #[test]
    fn requests_and_notifications_are_acp_cores_lines() {
        let mut wire = McpWire::new();
        assert_eq!(wire.request("tools/list", &json!({})), 1);
        wire.notify("notifications/initialized", None::<&()>);
        assert_eq!(
            String::from_utf8(wire.take_transmit()).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{}}\n\
             {\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
        );
    }

    /// R-MCP-1, R-MCP-4: lines read through acp-core's framing; pings answered, other
    /// requests refused.
    #[test]
    fn responses_news_pings_and_refusals() {
        let (events, answers) = events_of(&[SERVER_SAYS.as_bytes()]);
        assert_eq!(events.len(), 4);
        assert_eq!(
            events[0],
            McpEvent::Response {
                id: 1,
                outcome: Ok(json!({"protocolVersion": "2025-06-18"}))
            }
        );
        assert_eq!(events[1], McpEvent::ToolsChanged);
        assert!(matches!(events[2], McpEvent::Ignored(_)));
        assert_eq!(
            events[3],
            McpEvent::Response {
                id: 2,
                outcome: Err(RpcError {
                    code: -32602,
                    message: "bad \"tool\"".into()
                })
            }
        );
        assert_eq!(
            answers,
            "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\
             {\"jsonrpc\":\"2.0\",\"id\":\"x\",\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n"
        );
    }

    quickcheck::quickcheck! {
        /// However the server's output is cut into reads, the same events and answers come.
        fn any_split_of_the_output_reads_the_same(cuts: Vec<usize>) -> bool {
            let bytes = SERVER_SAYS.as_bytes();
            let mut points: Vec<usize> = cuts.into_iter().map(|c| c % (bytes.len() + 1)).collect();
            points.sort_unstable();
            let mut chunks = Vec::new();
            let mut from = 0;
            for to in points {
                chunks.push(&bytes[from..to]);
                from = to;
            }
            chunks.push(&bytes[from..]);
            events_of(&chunks) == events_of(&[bytes])
        }

        /// Arbitrary bytes never panic, and give at most one event per line.
        fn arbitrary_bytes_are_survived(bytes: Vec<u8>) -> bool {
            let (events, _) = events_of(&[&bytes]);
            events.len() <= bytes.len() + 1
        }
    }
}
