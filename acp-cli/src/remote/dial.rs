//! Opening one TCP connection to the remote agent, wrapped in TLS for `wss://` and
//! `https://` (the model client's rustls setup, `SSL_CERT_FILE` included), with a refused
//! connection, another connect failure and a failed handshake told apart (R-NETC-4).

use std::io::ErrorKind;

use smol::net::TcpStream;

use super::failure::RemoteError;
use super::target::RemoteUrl;
use crate::net::connection::{Connection, TlsFailure};

/// Connects to `url`'s server (no time limit of our own: the system's connect timeout).
pub(crate) async fn dial(url: &RemoteUrl) -> Result<Connection, RemoteError> {
    let place = url.place();
    let endpoint = &url.endpoint;
    let tcp = TcpStream::connect((endpoint.host.as_str(), endpoint.port))
        .await
        .map_err(|error| match error.kind() {
            ErrorKind::ConnectionRefused => RemoteError::Refused {
                place: place.clone(),
            },
            _ => RemoteError::Unreachable {
                place: place.clone(),
                why: error.to_string(),
            },
        })?;
    // Messages are small writes each; send them at once.
    let _ = tcp.set_nodelay(true);
    if !endpoint.tls {
        return Ok(Connection::Plain(tcp));
    }
    let ca_file = std::env::var("SSL_CERT_FILE").ok();
    Connection::wrap_tls(endpoint, tcp, ca_file.as_deref())
        .await
        .map_err(|failure| match failure {
            TlsFailure::Config(why) | TlsFailure::Name(why) | TlsFailure::Handshake(why) => {
                RemoteError::Tls { place, why }
            }
        })
}
