//! The gate in front of `/acp`: the bearer token, the WebSocket Origin, and which binds need
//! a token at all (R-NET-5). Nothing here logs a token or any part of one.

use std::net::SocketAddr;

use super::head::Head;

/// The WebSocket subprotocol prefix that carries the token, for browsers, which cannot set
/// `Authorization` on a WebSocket: `Sec-WebSocket-Protocol: acp.bearer.TOKEN` (R-NET-5).
pub(crate) const BEARER_SUBPROTOCOL: &str = "acp.bearer.";

/// The message a non-loopback bind without a token refuses to start with (R-NET-5).
pub(crate) fn token_required(addr: &SocketAddr) -> String {
    format!(
        "--listen {addr} is not a loopback address: it needs --token-file FILE (clients then send Authorization: Bearer TOKEN)"
    )
}

/// What the gate decided about one request.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Pass,
    /// 401: no token, or the wrong one.
    Unauthorized,
    /// 403: a WebSocket from an Origin not allowed.
    ForbiddenOrigin,
}

/// The configured gate.
#[derive(Clone, Debug, Default)]
pub(crate) struct Gate {
    /// The token clients must send, if any.
    pub(crate) token: Option<String>,
    /// `--allow-origin` values; empty: no Origin, or a loopback one, only.
    pub(crate) origins: Vec<String>,
}

impl Gate {
    /// Checks a request's token (either form); for a WebSocket upgrade, its Origin too.
    pub(crate) fn check(&self, head: &Head, websocket: bool) -> Verdict {
        if let Some(token) = &self.token
            && !presented(head)
                .is_some_and(|sent| constant_time_eq(sent.as_bytes(), token.as_bytes()))
        {
            return Verdict::Unauthorized;
        }
        if websocket
            && let Some(origin) = head.header("origin")
            && !self.origin_allowed(origin)
        {
            return Verdict::ForbiddenOrigin;
        }
        Verdict::Pass
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        if self.origins.is_empty() {
            return is_loopback_origin(origin);
        }
        self.origins
            .iter()
            .any(|allowed| allowed == "*" || allowed.eq_ignore_ascii_case(origin))
    }
}

/// The token a request presents: `Authorization: Bearer T`, else a WebSocket subprotocol
/// `acp.bearer.T`.
fn presented(head: &Head) -> Option<&str> {
    if let Some(value) = head.header("authorization") {
        let (scheme, token) = value.split_once(' ')?;
        return scheme.eq_ignore_ascii_case("bearer").then(|| token.trim());
    }
    bearer_subprotocol(head)
}

/// The `acp.bearer.T` entry of `Sec-WebSocket-Protocol`, whole (the 101 echoes it back, as a
/// client that offered only it requires).
pub(crate) fn bearer_protocol_entry(head: &Head) -> Option<&str> {
    head.headers
        .iter()
        .filter(|(n, _)| n == "sec-websocket-protocol")
        .flat_map(|(_, v)| v.split(','))
        .map(str::trim)
        .find(|p| p.starts_with(BEARER_SUBPROTOCOL))
}

fn bearer_subprotocol(head: &Head) -> Option<&str> {
    bearer_protocol_entry(head).map(|p| &p[BEARER_SUBPROTOCOL.len()..])
}

/// `http(s)://localhost`, `127.x.x.x` or `[::1]`, any port.
fn is_loopback_origin(origin: &str) -> bool {
    let Some((_, rest)) = origin.split_once("://") else {
        return false;
    };
    let host = rest.split('/').next().unwrap_or("");
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Equal bytes, in time that depends on the lengths only (R-NET-5).
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = u8::from(a.len() != b.len());
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0xFF);
        diff |= x ^ y;
    }
    std::hint::black_box(diff) == 0
}

/// Reads `--token-file`: its content without surrounding whitespace, never empty.
pub(crate) fn read_token(path: &std::path::Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--token-file {}: {e}", path.display()))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(format!(
            "--token-file {}: the file is empty",
            path.display()
        ));
    }
    if token
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == ',')
    {
        return Err(format!(
            "--token-file {}: the token holds whitespace, a comma or a control character",
            path.display()
        ));
    }
    Ok(token.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(headers: &[(&str, &str)]) -> Head {
        Head {
            method: "GET".into(),
            path: "/acp".into(),
            version: 1,
            headers: headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
        }
    }

    /// R-NET-5: the token in either form passes; a wrong, missing or longer one does not.
    #[test]
    fn token_forms() {
        let gate = Gate {
            token: Some("s3cret".into()),
            origins: vec![],
        };
        assert_eq!(
            gate.check(&head(&[("authorization", "Bearer s3cret")]), false),
            Verdict::Pass
        );
        assert_eq!(
            gate.check(
                &head(&[("sec-websocket-protocol", "acp, acp.bearer.s3cret")]),
                true
            ),
            Verdict::Pass
        );
        for wrong in ["Bearer s3cre", "Bearer s3cret2", "Basic s3cret", "s3cret"] {
            assert_eq!(
                gate.check(&head(&[("authorization", wrong)]), false),
                Verdict::Unauthorized,
                "{wrong}"
            );
        }
        assert_eq!(gate.check(&head(&[]), false), Verdict::Unauthorized);
    }

    /// R-NET-5: without --allow-origin only loopback Origins (or none) may open a WebSocket.
    #[test]
    fn origins() {
        let gate = Gate::default();
        for ok in [
            "http://localhost:3000",
            "http://127.0.0.1",
            "https://[::1]:8",
        ] {
            assert_eq!(
                gate.check(&head(&[("origin", ok)]), true),
                Verdict::Pass,
                "{ok}"
            );
        }
        for bad in [
            "https://evil.example",
            "null",
            "http://localhost.evil.example",
        ] {
            assert_eq!(
                gate.check(&head(&[("origin", bad)]), true),
                Verdict::ForbiddenOrigin,
                "{bad}"
            );
        }
        let listed = Gate {
            token: None,
            origins: vec!["https://app.example".into()],
        };
        assert_eq!(
            listed.check(&head(&[("origin", "https://app.example")]), true),
            Verdict::Pass
        );
        assert_eq!(
            listed.check(&head(&[("origin", "http://localhost")]), true),
            Verdict::ForbiddenOrigin
        );
    }

    /// R-NET-5: the comparison is equality.
    #[test]
    fn constant_time_equality() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
        assert!(!constant_time_eq(b"", b"a"));
        assert!(constant_time_eq(b"", b""));
    }
}
