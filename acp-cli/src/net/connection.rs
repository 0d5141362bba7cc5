//! One HTTP/1.1 exchange on smol's TCP, wrapped in TLS (rustls, ring, the webpki roots) for
//! `https://`: the connection, the request head, the response head read within an idle limit.
//! Each request has its own connection (`Connection: close`); the body is framed by
//! [`super::response`] and, for event streams, parsed by [`super::sse`].

use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures_rustls::TlsConnector;
use futures_rustls::client::TlsStream;
use futures_rustls::rustls::pki_types::pem::{self, PemObject};
use futures_rustls::rustls::pki_types::{CertificateDer, ServerName};
use futures_rustls::rustls::{self, ClientConfig, RootCertStore};
use smol::io::{AsyncReadExt, AsyncWriteExt};
use smol::net::TcpStream;

use super::endpoint::Endpoint;
use super::response::{self, ResponseHead};

/// How many bytes one socket read asks for.
pub(crate) const READ_SIZE: usize = 16 << 10;

/// An HTTP/1.1 request head: the request line, `Host`, `headers` in order, `Content-Length`
/// (when there is a body), our `User-Agent`, and `Connection: close` (one request per
/// connection). Callers check header names and values first (no line breaks).
pub(crate) fn write_request_head(
    method: &str,
    target: &str,
    host: &str,
    headers: &[(&str, &str)],
    body_length: Option<usize>,
) -> Vec<u8> {
    let mut head = format!("{method} {target} HTTP/1.1\r\nHost: {host}\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(length) = body_length {
        head.push_str(&format!("Content-Length: {length}\r\n"));
    }
    head.push_str(&format!(
        "User-Agent: acp-cli/{}\r\nConnection: close\r\n\r\n",
        env!("CARGO_PKG_VERSION")
    ));
    head.into_bytes()
}

/// Why a response head could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum HeadError {
    /// The server closed (or the read failed) before the head was complete.
    Closed(String),
    /// The bytes are not an HTTP/1.1 response head.
    Malformed(String),
    /// The server sent nothing for this long (the idle limit the caller gave).
    Idle(Duration),
}

/// Reads until a whole response head is in: the head and the body bytes read with it. With
/// `idle`, a wait that long for the next byte gives up.
pub(crate) async fn read_head(
    connection: &mut Connection,
    idle: Option<Duration>,
) -> Result<(ResponseHead, Vec<u8>), HeadError> {
    let mut buffer = Vec::with_capacity(READ_SIZE);
    let (head, used) = loop {
        if let Some(parsed) = response::parse_head(&buffer).map_err(HeadError::Malformed)? {
            break parsed;
        }
        let read = within(idle, connection.read_more(&mut buffer))
            .await
            .ok_or(HeadError::Idle(idle.unwrap_or_default()))?;
        if read.map_err(HeadError::Closed)? == 0 {
            return Err(HeadError::Closed(if buffer.is_empty() {
                "the server closed the connection without answering".to_owned()
            } else {
                "the server closed the connection in the middle of the response head".to_owned()
            }));
        }
    };
    Ok((head, buffer.split_off(used)))
}

/// `work`, or `None` when `limit` runs out first (no limit: always `work`).
pub(crate) async fn within<T>(limit: Option<Duration>, work: impl Future<Output = T>) -> Option<T> {
    let Some(limit) = limit else {
        return Some(work.await);
    };
    smol::future::or(async { Some(work.await) }, async {
        smol::Timer::after(limit).await;
        None
    })
    .await
}

/// Why a connection could not be opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ConnectError {
    /// The TLS settings cannot be used (`SSL_CERT_FILE`).
    Config(String),
    /// The server could not be reached (refused, DNS, TLS handshake).
    Unreachable(String),
    /// Connecting (TCP and the TLS handshake) took longer than the limit: where, how long.
    TimedOut {
        /// `host:port`.
        place: String,
        /// The limit.
        limit: Duration,
    },
}

impl ConnectError {
    /// The error's text for the user: what failed, without the model's wording.
    pub(crate) fn text(&self) -> String {
        match self {
            Self::Config(why) | Self::Unreachable(why) => why.clone(),
            Self::TimedOut { place, limit } => format!(
                "connect timeout: no connection to {place} within {} s",
                super::seconds(*limit)
            ),
        }
    }
}

/// An open connection to an HTTP server (the model's, or an MCP server's).
pub(crate) enum Connection {
    /// `http://`.
    Plain(TcpStream),
    /// `https://`.
    Tls(Box<TlsStream<TcpStream>>),
}

impl Connection {
    /// Connects (and shakes hands, for TLS, trusting `ca_file`'s certificates too), all of it
    /// within `limit` when one is given.
    pub(crate) async fn open(
        endpoint: &Endpoint,
        ca_file: Option<&str>,
        limit: Option<Duration>,
    ) -> Result<Self, ConnectError> {
        let place = format!("{}:{}", endpoint.host, endpoint.port);
        within(limit, Self::connect(endpoint, ca_file, &place))
            .await
            .unwrap_or_else(|| {
                Err(ConnectError::TimedOut {
                    place: place.clone(),
                    limit: limit.unwrap_or_default(),
                })
            })
    }

    /// Connects and shakes hands, without a limit.
    async fn connect(
        endpoint: &Endpoint,
        ca_file: Option<&str>,
        place: &str,
    ) -> Result<Self, ConnectError> {
        let tcp = TcpStream::connect((endpoint.host.as_str(), endpoint.port))
            .await
            .map_err(|error| ConnectError::Unreachable(format!("{place}: {error}")))?;
        // Streamed tokens are small writes from the server; our request is one write.
        let _ = tcp.set_nodelay(true);
        if !endpoint.tls {
            return Ok(Self::Plain(tcp));
        }
        Self::wrap_tls(endpoint, tcp, ca_file)
            .await
            .map_err(|error| match error {
                TlsFailure::Config(why) => ConnectError::Config(why),
                TlsFailure::Name(why) => ConnectError::Unreachable(why),
                TlsFailure::Handshake(why) => {
                    ConnectError::Unreachable(format!("TLS handshake with {place} failed: {why}"))
                }
            })
    }

    /// Shakes hands over `tcp` with `endpoint.host` (the remote agent client opens the TCP
    /// connection itself, to tell a refused connection from a failed handshake).
    pub(crate) async fn wrap_tls(
        endpoint: &Endpoint,
        tcp: TcpStream,
        ca_file: Option<&str>,
    ) -> Result<Self, TlsFailure> {
        let name = ServerName::try_from(endpoint.host.clone()).map_err(|_| {
            TlsFailure::Name(format!(
                "'{}' is not a valid TLS server name",
                endpoint.host
            ))
        })?;
        let config = tls_config(ca_file).map_err(|error| TlsFailure::Config(error.text()))?;
        let tls = TlsConnector::from(config)
            .connect(name, tcp)
            .await
            .map_err(|error| TlsFailure::Handshake(error.to_string()))?;
        Ok(Self::Tls(Box::new(tls)))
    }

    /// Writes the request head and body, then flushes.
    pub(crate) async fn send(&mut self, head: &[u8], body: &[u8]) -> std::io::Result<()> {
        match self {
            Self::Plain(stream) => {
                stream.write_all(head).await?;
                stream.write_all(body).await?;
                stream.flush().await
            }
            Self::Tls(stream) => {
                stream.write_all(head).await?;
                stream.write_all(body).await?;
                stream.flush().await
            }
        }
    }

    /// Reads once, appending to `buffer`; 0 means the server closed.
    pub(crate) async fn read_more(&mut self, buffer: &mut Vec<u8>) -> Result<usize, String> {
        let start = buffer.len();
        buffer.resize(start + READ_SIZE, 0);
        let read = match self {
            Self::Plain(stream) => stream.read(&mut buffer[start..]).await,
            Self::Tls(stream) => stream.read(&mut buffer[start..]).await,
        };
        match read {
            Ok(n) => {
                buffer.truncate(start + n);
                Ok(n)
            }
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => {
                // rustls: the peer closed without close_notify. Treat it as a close.
                buffer.truncate(start);
                Ok(0)
            }
            Err(error) => {
                buffer.truncate(start);
                Err(format!("reading the response failed: {error}"))
            }
        }
    }
}

/// Why [`Connection::wrap_tls`] failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TlsFailure {
    /// `SSL_CERT_FILE` cannot be used.
    Config(String),
    /// The host is no TLS server name.
    Name(String),
    /// The handshake failed: rustls's words.
    Handshake(String),
}

/// The connection as a byte stream (the WebSocket client runs over it).
impl smol::io::AsyncRead for Connection {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut [u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Self::Plain(stream) => std::pin::Pin::new(stream).poll_read(cx, buf),
            Self::Tls(stream) => std::pin::Pin::new(stream.as_mut()).poll_read(cx, buf),
        }
    }
}

impl smol::io::AsyncWrite for Connection {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Self::Plain(stream) => std::pin::Pin::new(stream).poll_write(cx, buf),
            Self::Tls(stream) => std::pin::Pin::new(stream.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match self.get_mut() {
            Self::Plain(stream) => std::pin::Pin::new(stream).poll_flush(cx),
            Self::Tls(stream) => std::pin::Pin::new(stream.as_mut()).poll_flush(cx),
        }
    }

    fn poll_close(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match self.get_mut() {
            Self::Plain(stream) => std::pin::Pin::new(stream).poll_close(cx),
            Self::Tls(stream) => std::pin::Pin::new(stream.as_mut()).poll_close(cx),
        }
    }
}

/// The TLS client configuration: ring's provider, the webpki roots (plus the certificates
/// of `ca_file`, when set), ALPN `http/1.1`. Without `ca_file` it is built once.
fn tls_config(ca_file: Option<&str>) -> Result<Arc<ClientConfig>, ConnectError> {
    static DEFAULT: OnceLock<Arc<ClientConfig>> = OnceLock::new();
    let Some(path) = ca_file else {
        return Ok(DEFAULT.get_or_init(|| build_tls_config(Vec::new())).clone());
    };
    let unreadable = |why: String| ConnectError::Config(format!("SSL_CERT_FILE '{path}' {why}"));
    let certificates = CertificateDer::pem_file_iter(path)
        .map_err(|error| match error {
            pem::Error::Io(error) => unreadable(format!("cannot be read: {error}")),
            error => unreadable(format!("is not a PEM file: {error}")),
        })?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| unreadable(format!("is not a PEM file: {error}")))?;
    if certificates.is_empty() {
        return Err(unreadable("holds no certificate".to_owned()));
    }
    Ok(build_tls_config(certificates))
}

/// A client configuration trusting the webpki roots and `extra`.
fn build_tls_config(extra: Vec<CertificateDer<'static>>) -> Arc<ClientConfig> {
    let mut roots = RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    // A certificate webpki cannot use as a trust anchor is skipped, as browsers do.
    let _ = roots.add_parsable_certificates(extra);
    let mut config =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .expect("ring supports the default TLS versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R-LLM-6: a limit that runs out gives `None`; work that is done in time, or has no
    /// limit, gives its value.
    #[test]
    fn within_gives_up_only_when_its_limit_runs_out() {
        smol::block_on(async {
            let never = smol::future::pending::<()>();
            assert_eq!(within(Some(Duration::ZERO), never).await, None);
            assert_eq!(within(None, async { 7 }).await, Some(7));
            assert_eq!(
                within(Some(Duration::from_secs(600)), async { 7 }).await,
                Some(7)
            );
        });
    }
}
