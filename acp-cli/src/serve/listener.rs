//! The listening socket: bind, the one line on stdout, TLS, and per socket the requests in
//! turn (HTTP/1.1 keep-alive) until one becomes a WebSocket or an SSE stream ends it.

use std::io;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;

use smol::io::{AsyncRead, AsyncWrite};
use smol::net::{TcpListener, TcpStream};

use super::auth::Verdict;
use super::head::HeadError;
use super::registry::Server;
use super::socket::{self, Read, refusal};
use super::{streamable, task, websocket};

/// The path every transport is served on.
pub(crate) const PATH: &str = "/acp";

/// Accepts sockets until the future is dropped; each is served on its own task.
pub(crate) async fn accept_all(
    server: Rc<Server>,
    listener: TcpListener,
    tls: Option<futures_rustls::TlsAcceptor>,
) {
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of descriptors and the like: keep serving the sockets already open.
                tracing::warn!(%error, "accept failed");
                smol::Timer::after(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let server = Rc::clone(&server);
        let tls = tls.clone();
        task::spawn_local(async move {
            let served = match tls {
                None => serve_socket(&server, stream).await,
                Some(acceptor) => match handshake(&server, &acceptor, stream).await {
                    Ok(stream) => serve_socket(&server, stream).await,
                    Err(error) => Err(error),
                },
            };
            if let Err(error) = served {
                tracing::debug!(%peer, %error, "socket ended");
            }
        });
    }
}

async fn handshake(
    server: &Server,
    acceptor: &futures_rustls::TlsAcceptor,
    stream: TcpStream,
) -> io::Result<futures_rustls::server::TlsStream<TcpStream>> {
    let timeout = server.limits.idle_timeout;
    smol::future::or(acceptor.accept(stream), async {
        smol::Timer::after(timeout).await;
        Err(io::ErrorKind::TimedOut.into())
    })
    .await
}

/// Requests on one socket, in turn.
async fn serve_socket<S: AsyncRead + AsyncWrite + Unpin>(
    server: &Rc<Server>,
    mut io: S,
) -> io::Result<()> {
    let mut buf = Vec::new();
    let idle = server.limits.idle_timeout;
    loop {
        // A socket that sends no request for the idle timeout is closed (R-NET-8).
        let read = smol::future::or(socket::read_head(&mut io, &mut buf), async {
            smol::Timer::after(idle).await;
            Ok(Read::Closed)
        })
        .await?;
        let head = match read {
            Read::Head(head) => head,
            Read::Closed => return Ok(()),
            Read::Refused(HeadError::TooLarge) => {
                return socket::send(&mut io, &refusal(431, "the request head is too large")).await;
            }
            Read::Refused(HeadError::Malformed) => {
                return socket::send(&mut io, &refusal(400, "not an HTTP/1.1 request")).await;
            }
        };
        if head.path != PATH {
            socket::send(&mut io, &refusal(404, "not found: the endpoint is /acp")).await?;
            continue;
        }
        let upgrade = head.method == "GET" && websocket::is_upgrade(&head);
        match server.gate.check(&head, upgrade) {
            Verdict::Pass => {}
            Verdict::Unauthorized => {
                // The token is never logged, not even in part (R-NET-5).
                tracing::info!(method = head.method.as_str(), "401: missing or wrong token");
                let response = refusal(401, "missing or wrong token");
                return socket::send(&mut io, &response).await;
            }
            Verdict::ForbiddenOrigin => {
                tracing::info!(origin = head.header("origin"), "403: Origin not allowed");
                let response = refusal(403, "Origin not allowed");
                return socket::send(&mut io, &response).await;
            }
        }
        let keep = match head.method.as_str() {
            "GET" if upgrade => {
                let rest = std::mem::take(&mut buf);
                return websocket::serve(server, &head, io, rest).await;
            }
            "POST" => streamable::post(server, &head, &mut io, &mut buf).await?,
            "GET" => streamable::get(server, &head, &mut io).await?,
            "DELETE" => streamable::delete(server, &head, &mut io).await?,
            _ => {
                let response = refusal(405, "the methods of /acp are GET, POST and DELETE");
                socket::send(&mut io, &response).await?;
                true
            }
        };
        if !keep || head.header_has("connection", "close") || head.version == 0 {
            return Ok(());
        }
    }
}

/// Binds `addr`; the error names the address.
pub(crate) async fn bind(addr: SocketAddr) -> Result<TcpListener, String> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| format!("--listen {addr}: {e}"))
}

/// The TLS acceptor from `--tls-cert` and `--tls-key` (PEM).
pub(crate) fn tls_acceptor(
    cert: &std::path::Path,
    key: &std::path::Path,
) -> Result<futures_rustls::TlsAcceptor, String> {
    use futures_rustls::rustls;
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs = CertificateDer::pem_file_iter(cert)
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .map_err(|e| format!("--tls-cert {}: {e}", cert.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "--tls-cert {}: no certificate in the file",
            cert.display()
        ));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| format!("--tls-key {}: {e}", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_no_client_auth().with_single_cert(certs, key))
        .map_err(|e| format!("--tls-cert/--tls-key: {e}"))?;
    Ok(futures_rustls::TlsAcceptor::from(Arc::new(config)))
}
