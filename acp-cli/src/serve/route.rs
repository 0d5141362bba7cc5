//! Which Streamable HTTP stream carries an agent's message (R-NET-3), from a peek at its
//! envelope: the method, the id, and a `sessionId` in params or result.

use serde::Deserialize;
use serde_json::value::RawValue;

/// The methods whose messages belong to one session: a POST of one needs its session id
/// (R-NET-3), in `Acp-Session-Id` or in `params.sessionId`.
pub(crate) const SESSION_SCOPED: &[&str] = &[
    "session/prompt",
    "session/cancel",
    "session/close",
    "session/delete",
    "session/fork",
    "session/load",
    "session/resume",
    "session/set_config_option",
    "session/set_mode",
    "session/set_model",
];

/// The requests whose answer names or opens a session: answered on the connection stream,
/// as the RFD says for `session/new` and `session/load` (R-NET-3).
pub(crate) const SESSION_OPENING: &[&str] = &[
    "session/new",
    "session/load",
    "session/resume",
    "session/fork",
];

/// What the router needs of one message.
#[derive(Debug, Default)]
pub(crate) struct Peek {
    /// The id's JSON text, as a key (requests and responses).
    pub(crate) id: Option<String>,
    pub(crate) method: Option<String>,
    /// `params.sessionId`.
    pub(crate) params_session: Option<String>,
    /// `result.sessionId` (a `session/new` or `session/fork` answer).
    pub(crate) result_session: Option<String>,
    /// The message is a JSON array: a batch (R-NET-4).
    pub(crate) batch: bool,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<WithSession>,
    #[serde(default)]
    result: Option<WithSession>,
}

/// Any JSON value; `sessionId` when it is an object that has a string one.
#[derive(Default)]
struct WithSession(Option<String>);

impl<'de> Deserialize<'de> for WithSession {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Fields {
            #[serde(rename = "sessionId", default)]
            session_id: Option<serde_json::Value>,
        }
        let value = serde_json::Value::deserialize(d)?;
        let session = match value {
            serde_json::Value::Object(_) => serde_json::from_value::<Fields>(value)
                .ok()
                .and_then(|f| f.session_id)
                .and_then(|v| v.as_str().map(str::to_owned)),
            _ => None,
        };
        Ok(Self(session))
    }
}

/// Peeks at one message.
pub(crate) fn peek(message: &[u8]) -> Peek {
    let first = message.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        return Peek {
            batch: true,
            ..Peek::default()
        };
    }
    match serde_json::from_slice::<Envelope<'_>>(message) {
        Ok(envelope) => Peek {
            id: envelope.id.map(|id| id.get().to_owned()),
            method: envelope.method,
            params_session: envelope.params.and_then(|p| p.0),
            result_session: envelope.result.and_then(|r| r.0),
            batch: false,
        },
        // Not a message: the agent answers it (R-MSG-1); it goes nowhere special.
        Err(_) => Peek::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R-NET-3: the router reads the id, the method and either sessionId.
    #[test]
    fn peeks() {
        let p = peek(br#"{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#);
        assert_eq!(p.id.as_deref(), Some("7"));
        assert_eq!(p.method.as_deref(), Some("session/prompt"));
        assert_eq!(p.params_session.as_deref(), Some("s1"));
        let p = peek(br#"{"jsonrpc":"2.0","id":"a","result":{"sessionId":"s2"}}"#);
        assert_eq!(p.id.as_deref(), Some("\"a\""));
        assert_eq!(p.result_session.as_deref(), Some("s2"));
        let p = peek(br#"{"jsonrpc":"2.0","id":1,"result":null}"#);
        assert!(p.result_session.is_none());
        assert!(peek(b" [{}]").batch);
        assert!(peek(b"{nope").method.is_none());
    }
}
