//! A server's address as a user configures it: an `http://` or `https://` URL with a host, an
//! optional port and a path (`LLM_BASE_URL`-style variables, MCP servers' `url`).

/// A parsed `http://` or `https://` base URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Endpoint {
    /// `https`: the connection is wrapped in TLS.
    pub tls: bool,
    /// The host name or IP address (an IPv6 address without its brackets).
    pub host: String,
    /// The port (80 or 443 when the URL names none).
    pub port: u16,
    /// The path, without a trailing `/` (may be empty); the model client appends
    /// `/chat/completions`.
    pub path: String,
}

impl Endpoint {
    /// Parses `scheme://host[:port][/path]`. The error completes "`<VAR> '<url>' …`".
    pub(crate) fn parse(url: &str) -> Result<Self, String> {
        let (tls, rest) = if let Some(rest) = url.strip_prefix("https://") {
            (true, rest)
        } else if let Some(rest) = url.strip_prefix("http://") {
            (false, rest)
        } else {
            return Err("is not an http:// or https:// URL".to_owned());
        };
        let (authority, path) = match rest.find(['/', '?', '#']) {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, ""),
        };
        if path.contains(['?', '#']) {
            return Err("must not have a query or fragment".to_owned());
        }
        if authority.contains('@') {
            return Err("must not carry credentials (use the _API_KEY variable)".to_owned());
        }
        let default_port = if tls { 443 } else { 80 };
        let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
            let (host, after) = bracketed
                .split_once(']')
                .ok_or_else(|| "has an unclosed '[' in its host".to_owned())?;
            let port = match after {
                "" => default_port,
                _ => parse_port(after.strip_prefix(':').unwrap_or("x"))?,
            };
            (host, port)
        } else {
            match authority.rsplit_once(':') {
                Some((host, port)) => (host, parse_port(port)?),
                None => (authority, default_port),
            }
        };
        if host.is_empty() {
            return Err("has no host".to_owned());
        }
        Ok(Self {
            tls,
            host: host.to_owned(),
            port,
            path: path.trim_end_matches('/').to_owned(),
        })
    }

    /// The request target of an HTTP request line: the path (`/` when empty), then `?query`
    /// when the URL had one.
    pub(crate) fn request_target(&self, query: Option<&str>) -> String {
        let mut target = if self.path.is_empty() {
            "/".to_owned()
        } else {
            self.path.clone()
        };
        if let Some(query) = query {
            target.push('?');
            target.push_str(query);
        }
        target
    }

    /// The `Host` header value: the host, with the port when it is not the scheme's default.
    pub(crate) fn host_header(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == if self.tls { 443 } else { 80 } {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

/// A port number, or why not.
fn parse_port(text: &str) -> Result<u16, String> {
    text.parse::<u16>()
        .ok()
        .filter(|port| *port != 0)
        .ok_or_else(|| format!("has an invalid port '{text}'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_parse_hosts_ports_and_paths() {
        let cases = [
            (
                "http://localhost:11434/v1",
                false,
                "localhost",
                11434,
                "/v1",
            ),
            ("https://example.test", true, "example.test", 443, ""),
            ("http://[::1]:8080/api/v1/", false, "::1", 8080, "/api/v1"),
            ("http://10.0.0.1", false, "10.0.0.1", 80, ""),
        ];
        for (url, tls, host, port, path) in cases {
            let endpoint = Endpoint::parse(url).unwrap();
            assert_eq!(
                (
                    endpoint.tls,
                    endpoint.host.as_str(),
                    endpoint.port,
                    endpoint.path.as_str()
                ),
                (tls, host, port, path),
                "{url}"
            );
        }
        assert_eq!(
            Endpoint::parse("http://[::1]:8080").unwrap().host_header(),
            "[::1]:8080"
        );
        assert_eq!(
            Endpoint::parse("https://h:443/v1").unwrap().host_header(),
            "h"
        );
    }

    #[test]
    fn endpoint_errors_say_what_is_wrong() {
        let cases = [
            ("localhost:8080", "is not an http:// or https:// URL"),
            ("http://:8080", "has no host"),
            ("http://h:x", "has an invalid port 'x'"),
            ("http://h:0", "has an invalid port '0'"),
            (
                "http://u:p@h",
                "must not carry credentials (use the _API_KEY variable)",
            ),
            ("http://h/v1?x=1", "must not have a query or fragment"),
            ("http://[::1", "has an unclosed '[' in its host"),
        ];
        for (url, why) in cases {
            assert_eq!(Endpoint::parse(url), Err(why.to_owned()), "{url}");
        }
    }
}
