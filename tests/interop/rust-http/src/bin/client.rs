//! ACP client peer over the network on the official Rust crate `agent-client-protocol-http`.
//!
//! Usage: `net-client --url URL [--transport ws|http] [--token-file FILE] [--prompt TEXT]`
//!
//! URL is the agent's endpoint (`http://HOST:PORT/acp` or `ws://HOST:PORT/acp`). `--transport`
//! picks WebSocket or Streamable HTTP (POST + SSE) whatever the URL's scheme says (default: the
//! scheme's); the crate chooses its transport by the scheme, so the scheme is rewritten. With
//! `--token-file` the file's trimmed content goes as `Authorization: Bearer` on every request.
//! Otherwise it is the stdio peer with the network in place of the child process: the scenario
//! (or `--prompt`'s one prompt) is `tests/interop/rust/src/scenario_client.rs`, included here as
//! a module, with the same output and exit codes.

#[path = "../../../rust/src/scenario_client.rs"]
mod scenario_client;

use std::process::ExitCode;

use agent_client_protocol_http::HttpClient;
use scenario_client::{Identity, Mode};

/// The command line: `--url URL [--transport ws|http] [--token-file FILE] [--prompt TEXT]`.
struct Args {
    url: String,
    transport: Option<String>,
    token_file: Option<String>,
    mode: Mode,
}

fn parse_args(args: &[String]) -> Option<Args> {
    let mut parsed = Args {
        url: String::new(),
        transport: None,
        token_file: None,
        mode: Mode::Scenario,
    };
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let value = args.next()?.clone();
        match flag.as_str() {
            "--url" => parsed.url = value,
            "--transport" if value == "ws" || value == "http" => parsed.transport = Some(value),
            "--token-file" => parsed.token_file = Some(value),
            "--prompt" => parsed.mode = Mode::Prompt(value),
            _ => return None,
        }
    }
    (!parsed.url.is_empty()).then_some(parsed)
}

/// The endpoint with the scheme of the chosen transport (`ws` <-> `http`, `wss` <-> `https`).
fn endpoint(url: &str, transport: Option<&str>) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let secure = scheme == "https" || scheme == "wss";
    let scheme = match (transport, secure) {
        (Some("ws"), false) => "ws",
        (Some("ws"), true) => "wss",
        (Some(_), false) => "http",
        (Some(_), true) => "https",
        (None, _) => scheme,
    };
    format!("{scheme}://{rest}")
}

/// The transport: the exact endpoint, direct (no proxy discovery), with the bearer token.
fn transport(args: &Args) -> Result<HttpClient, String> {
    let mut headers = reqwest::header::HeaderMap::new();
    if let Some(file) = &args.token_file {
        let token = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
        let value = format!("Bearer {}", token.trim());
        let mut value = reqwest::header::HeaderValue::from_str(&value)
            .map_err(|_| format!("{file}: the token is not a valid header value"))?;
        value.set_sensitive(true);
        headers.insert(reqwest::header::AUTHORIZATION, value);
    }
    HttpClient::builder_with_endpoint(endpoint(&args.url, args.transport.as_deref()))
        .configure_http(|http| http.no_proxy().default_headers(headers))
        .build()
        .map_err(|e| e.to_string())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(args) = parse_args(&args) else {
        eprintln!(
            "usage: net-client --url URL [--transport ws|http] [--token-file FILE] [--prompt TEXT]"
        );
        return ExitCode::from(2);
    };
    let client = match transport(&args) {
        Ok(client) => client,
        Err(why) => {
            println!("FAIL initialize: {why}");
            return ExitCode::FAILURE;
        }
    };
    let identity = Identity {
        name: "net-client-rust",
        title: "Rust SDK network peer client",
    };
    scenario_client::drive(client, identity, args.mode).await
}
