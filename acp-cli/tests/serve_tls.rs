//! `--tls-cert/--tls-key`: HTTPS and WSS with a self-signed certificate made here (R-NET-11).

mod serve_support;

use std::io::{BufReader, Write};
use std::net::TcpStream;
use std::sync::Arc;

use rustls::pki_types::ServerName;
use serve_support::*;

/// A client config that trusts exactly `cert`.
fn client(cert: &rcgen::Certificate) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert.der().clone()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Arc::new(
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

/// R-NET-11: under TLS the line says https, `initialize` over HTTPS is answered, and a
/// WebSocket over TLS carries a message each way.
#[test]
fn https_and_wss_with_a_self_signed_certificate() {
    let cwd = scratch("tls");
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
    let cert = params.self_signed(&key).unwrap();
    std::fs::write(cwd.join("cert.pem"), cert.pem()).unwrap();
    std::fs::write(cwd.join("key.pem"), key.serialize_pem()).unwrap();
    let server = Server::start_in(
        cwd.clone(),
        &[
            "--tls-cert",
            s(&cwd.join("cert.pem")),
            "--tls-key",
            s(&cwd.join("key.pem")),
        ],
    );
    let config = client(&cert);
    let name = ServerName::try_from("localhost").unwrap();

    let connection = rustls::ClientConnection::new(Arc::clone(&config), name.clone()).unwrap();
    let socket = TcpStream::connect(server.addr).unwrap();
    socket.set_read_timeout(Some(GUARD)).unwrap();
    let mut tls = rustls::StreamOwned::new(connection, socket);
    write!(
        tls,
        "POST /acp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{INITIALIZE}",
        INITIALIZE.len()
    )
    .unwrap();
    let response = read_response(&mut BufReader::new(&mut tls));
    assert_eq!(response.status, 200, "{}", response.text());
    assert!(response.header("acp-connection-id").is_some());

    let connection = rustls::ClientConnection::new(config, name).unwrap();
    let socket = TcpStream::connect(server.addr).unwrap();
    socket.set_read_timeout(Some(GUARD)).unwrap();
    let tls = rustls::StreamOwned::new(connection, socket);
    let request = format!("wss://localhost:{}/acp", server.addr.port());
    let (mut ws, _) = tungstenite::client::client(request, tls).expect("wss upgrade");
    ws.send(tungstenite::Message::text(INITIALIZE)).unwrap();
    match ws.read().unwrap() {
        tungstenite::Message::Text(text) => {
            let answer: serde_json::Value = serde_json::from_str(text.as_str()).unwrap();
            assert_eq!(answer["result"]["protocolVersion"], 1);
        }
        other => panic!("a text frame, got {other:?}"),
    }
}

/// R-NET-11: a certificate file that does not exist refuses to start, exit 2.
#[test]
fn missing_certificate_refuses() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_acp-cli"))
        .args([
            "--acp",
            "--listen",
            "127.0.0.1:0",
            "--tls-cert",
            "/nonexistent/cert.pem",
            "--tls-key",
            "/nonexistent/key.pem",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("acp-cli: --tls-cert /nonexistent/cert.pem: "),
        "{stderr}"
    );
}
