//! Where a remote agent is and what proves who we are: a `ws://`, `wss://`, `http://` or
//! `https://` URL (R-NETC-1) and the bearer token from `--token-file` or `ACP_TOKEN`
//! (R-NETC-2). Both are read from the user's input, so every malformed value is an error with
//! a message, never a panic, and the token never appears in one.

use std::path::Path;

use crate::net::endpoint::Endpoint;

/// The environment variable a token is read from when no `--token-file` is given.
pub const TOKEN_VARIABLE: &str = "ACP_TOKEN";

/// Which transport a URL's scheme picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// `ws://`, `wss://`: one WebSocket, JSON-RPC in text frames.
    WebSocket,
    /// `http://`, `https://`: Streamable HTTP (POST, GET event streams, DELETE).
    StreamableHttp,
}

/// A parsed remote agent URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteUrl {
    /// The transport its scheme names.
    pub transport: Transport,
    /// The server: TLS or not, host, port, path.
    pub(crate) endpoint: Endpoint,
    /// The request target: the path (`/` when empty) and the query, as written.
    pub request_target: String,
    /// The URL as shown in messages: without its query, which may carry a secret.
    pub shown: String,
}

impl RemoteUrl {
    /// Parses `scheme://host[:port][/path][?query]`. The error completes "`--url '<url>' …`".
    pub fn parse(url: &str) -> Result<Self, String> {
        let schemes = [
            ("ws://", Transport::WebSocket, "http://"),
            ("wss://", Transport::WebSocket, "https://"),
            ("http://", Transport::StreamableHttp, "http://"),
            ("https://", Transport::StreamableHttp, "https://"),
        ];
        let Some((scheme, transport, http_scheme)) = schemes.iter().find(|(scheme, _, _)| {
            url.get(..scheme.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(scheme))
        }) else {
            return Err("is not a ws://, wss://, http:// or https:// URL".to_owned());
        };
        let (scheme, transport) = (*scheme, *transport);
        let rest = url[scheme.len()..].split('#').next().unwrap_or("");
        let (base, query) = match rest.split_once('?') {
            Some((base, query)) => (base, Some(query)),
            None => (rest, None),
        };
        let authority = base.split('/').next().unwrap_or("");
        if authority.contains('@') {
            return Err(format!(
                "must not carry credentials (use --token-file or {TOKEN_VARIABLE})"
            ));
        }
        if base.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err("has a space or a control character".to_owned());
        }
        if query.is_some_and(|q| q.chars().any(|c| c.is_whitespace() || c.is_control())) {
            return Err("has a space or a control character".to_owned());
        }
        let endpoint = Endpoint::parse(&format!("{http_scheme}{base}"))?;
        let request_target = endpoint.request_target(query);
        let shown = format!("{scheme}{}{}", endpoint.host_header(), endpoint.path);
        Ok(Self {
            transport,
            endpoint,
            request_target,
            shown,
        })
    }

    /// `host:port`, as connection errors name the place.
    pub fn place(&self) -> String {
        if self.endpoint.host.contains(':') {
            format!("[{}]:{}", self.endpoint.host, self.endpoint.port)
        } else {
            format!("{}:{}", self.endpoint.host, self.endpoint.port)
        }
    }
}

/// A bearer token. Its `Debug` hides it, so no log or panic message shows it (R-NETC-2).
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<hidden>)")
    }
}

impl Token {
    /// The `Authorization` header value.
    pub(crate) fn header_value(&self) -> String {
        format!("Bearer {}", self.0)
    }

    /// Checks a token's text: leading and trailing whitespace (a file's final newline) is
    /// dropped; what is left must be non-empty visible ASCII, as a header value needs.
    /// `source` names where it came from, for the error.
    pub fn from_text(text: &str, source: &str) -> Result<Token, String> {
        let token = text.trim();
        if token.is_empty() {
            return Err(format!("{source} is empty"));
        }
        if !token.bytes().all(|b| b.is_ascii_graphic() || b == b' ') {
            return Err(format!(
                "{source} holds characters a header cannot carry (one line of visible ASCII)"
            ));
        }
        Ok(Token(token.to_owned()))
    }

    /// The token of `--token-file` when given, else of `ACP_TOKEN` (`env`) when set and not
    /// empty, else none.
    pub fn load(file: Option<&Path>, env: Option<&str>) -> Result<Option<Token>, String> {
        if let Some(path) = file {
            let text = std::fs::read_to_string(path)
                .map_err(|error| format!("cannot read --token-file {}: {error}", path.display()))?;
            return Token::from_text(&text, &format!("--token-file {}", path.display())).map(Some);
        }
        match env {
            Some(text) if !text.is_empty() => Token::from_text(text, TOKEN_VARIABLE).map(Some),
            _ => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::quickcheck;

    /// R-NETC-1: each scheme picks its transport; the request target keeps the query, the
    /// shown URL does not.
    #[test]
    fn urls_pick_their_transport() {
        let cases = [
            (
                "ws://127.0.0.1:8080/acp",
                Transport::WebSocket,
                false,
                "/acp",
                "ws://127.0.0.1:8080/acp",
            ),
            (
                "wss://agent.example/acp?t=1",
                Transport::WebSocket,
                true,
                "/acp?t=1",
                "wss://agent.example/acp",
            ),
            (
                "http://[::1]:9/acp/",
                Transport::StreamableHttp,
                false,
                "/acp",
                "http://[::1]:9/acp",
            ),
            (
                "HTTPS://h",
                Transport::StreamableHttp,
                true,
                "/",
                "https://h",
            ),
        ];
        for (url, transport, tls, target, shown) in cases {
            let parsed = RemoteUrl::parse(url).unwrap();
            assert_eq!(
                (
                    parsed.transport,
                    parsed.endpoint.tls,
                    parsed.request_target.as_str(),
                    parsed.shown.as_str()
                ),
                (transport, tls, target, shown),
                "{url}"
            );
        }
        assert_eq!(RemoteUrl::parse("wss://h/acp").unwrap().endpoint.port, 443);
        assert_eq!(
            RemoteUrl::parse("ws://[::1]:7/").unwrap().place(),
            "[::1]:7"
        );
    }

    /// R-NETC-1: every malformed URL is refused with its reason.
    #[test]
    fn bad_urls_say_what_is_wrong() {
        let cases = [
            (
                "ftp://h/acp",
                "is not a ws://, wss://, http:// or https:// URL",
            ),
            (
                "127.0.0.1:8080",
                "is not a ws://, wss://, http:// or https:// URL",
            ),
            (
                "ws://u:p@h/acp",
                "must not carry credentials (use --token-file or ACP_TOKEN)",
            ),
            ("ws://:80/acp", "has no host"),
            ("http://h:99999/acp", "has an invalid port '99999'"),
            ("ws://h /acp", "has a space or a control character"),
            ("ws://[::1/acp", "has an unclosed '[' in its host"),
        ];
        for (url, why) in cases {
            assert_eq!(RemoteUrl::parse(url), Err(why.to_owned()), "{url}");
        }
    }

    /// R-NETC-2: a token file's newline is dropped; an empty or multi-line token is refused
    /// without showing it; `--token-file` wins over `ACP_TOKEN`; `Debug` hides the token.
    #[test]
    fn tokens_are_checked_and_hidden() {
        let dir = std::env::temp_dir().join(format!("acp-token-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("token");
        std::fs::write(&file, "s3cret\n").unwrap();
        let token = Token::load(Some(&file), Some("other")).unwrap().unwrap();
        assert_eq!(token.header_value(), "Bearer s3cret");
        assert_eq!(format!("{token:?}"), "Token(<hidden>)");
        assert_eq!(
            Token::load(None, Some("envtoken"))
                .unwrap()
                .unwrap()
                .header_value(),
            "Bearer envtoken"
        );
        assert_eq!(Token::load(None, Some("")), Ok(None));
        assert_eq!(Token::load(None, None), Ok(None));
        std::fs::write(&file, "\n").unwrap();
        assert_eq!(
            Token::load(Some(&file), None),
            Err(format!("--token-file {} is empty", file.display()))
        );
        std::fs::write(&file, "a\nb\n").unwrap();
        assert_eq!(
            Token::load(Some(&file), None),
            Err(format!(
                "--token-file {} holds characters a header cannot carry (one line of visible ASCII)",
                file.display()
            ))
        );
        let missing = dir.join("missing");
        let error = Token::load(Some(&missing), None).unwrap_err();
        assert!(
            error.starts_with(&format!("cannot read --token-file {}: ", missing.display())),
            "{error}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    quickcheck! {
        /// R-NETC-1: any text is parsed or refused, never a panic; what parses has a request
        /// target starting with `/` and a shown URL without the query.
        fn any_text_parses_or_is_refused(text: String) -> bool {
            match RemoteUrl::parse(&text) {
                Ok(url) => url.request_target.starts_with('/') && !url.shown.contains('?'),
                Err(why) => !why.is_empty(),
            }
        }

        /// R-NETC-1: URLs built from parts read back as those parts.
        fn built_urls_read_back(host: u32, port: u16, path: Vec<u8>, query: Option<u8>, tls: bool, ws: bool) -> bool {
            let port = port.max(1);
            let host = format!("h{host}.example");
            let path: String = path.iter().map(|b| char::from(b'a' + b % 26)).collect();
            let scheme = match (ws, tls) {
                (true, true) => "wss",
                (true, false) => "ws",
                (false, true) => "https",
                (false, false) => "http",
            };
            let query = query.map(|q| format!("?q={q}")).unwrap_or_default();
            let url = format!("{scheme}://{host}:{port}/{path}{query}");
            let Ok(parsed) = RemoteUrl::parse(&url) else { return false };
            let want_target = if path.is_empty() { format!("/{query}") } else { format!("/{path}{query}") };
            parsed.endpoint.host == host
                && parsed.endpoint.port == port
                && parsed.endpoint.tls == tls
                && (parsed.transport == Transport::WebSocket) == ws
                && parsed.request_target == want_target
        }
    }
}
