//! A remote agent as an agent command line (R-NETC-8): `client --url`, `repl --url` and
//! `conform --url` run this binary's `bridge --connect URL` as their agent process, so a
//! remote agent goes through the same supervisor, connection and output as a local one, and
//! the bridge's one-line failure (R-NETC-4) is the command's message.

use std::path::Path;

use super::target::{RemoteUrl, TOKEN_VARIABLE, Token};

/// What the bridge's failure lines start with.
pub const BRIDGE_PREFIX: &str = "acp-cli bridge: ";

/// The bridge's command line for `url` (with `--token-file` made absolute, as the agent
/// runs elsewhere), after checking the URL and the token so their errors come at once. The
/// error completes "`acp-cli <command>: …`". `ACP_TOKEN` reaches the bridge through the
/// environment.
pub fn bridge_command(url: &str, token_file: Option<&Path>) -> Result<Vec<String>, String> {
    RemoteUrl::parse(url).map_err(|why| format!("--url '{url}' {why}"))?;
    Token::load(token_file, std::env::var(TOKEN_VARIABLE).ok().as_deref())?;
    let program = std::env::current_exe()
        .map_err(|error| format!("cannot find the acp-cli program for the bridge: {error}"))?;
    let mut argv = vec![
        program.to_string_lossy().into_owned(),
        "bridge".to_owned(),
        "--connect".to_owned(),
        url.to_owned(),
    ];
    if let Some(file) = token_file {
        let file = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
        argv.push("--token-file".to_owned());
        argv.push(file.to_string_lossy().into_owned());
    }
    Ok(argv)
}

/// The name the remote agent goes by: the URL's host.
pub fn remote_name(url: &str) -> String {
    RemoteUrl::parse(url)
        .map(|url| url.endpoint.host)
        .unwrap_or_else(|_| "remote".to_owned())
}

/// The bridge's failure among an agent's stderr lines (the last one it wrote), without its
/// prefix.
pub fn bridge_failure<'a>(stderr: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    stderr
        .filter_map(|line| line.strip_prefix(BRIDGE_PREFIX))
        .last()
}
