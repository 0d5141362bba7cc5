//! Reading requests off a socket and writing responses on it: the I/O around [`head`].

use std::io;

use smol::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::head::{self, Head, HeadError};

/// Bytes read at once.
const READ_CHUNK: usize = 16 * 1024;

/// What reading a head gave.
pub(crate) enum Read {
    Head(Head),
    /// The peer closed between requests.
    Closed,
    Refused(HeadError),
}

/// Reads one request head; bytes past it stay at the start of `buf`.
pub(crate) async fn read_head<S: AsyncRead + Unpin>(
    io: &mut S,
    buf: &mut Vec<u8>,
) -> io::Result<Read> {
    loop {
        match head::parse(buf) {
            Ok(Some((head, len))) => {
                buf.drain(..len);
                return Ok(Read::Head(head));
            }
            Ok(None) => {}
            Err(error) => return Ok(Read::Refused(error)),
        }
        let at = buf.len();
        buf.resize(at + READ_CHUNK, 0);
        let n = io.read(&mut buf[at..]).await?;
        buf.truncate(at + n);
        if n == 0 {
            return Ok(Read::Closed);
        }
    }
}

/// Reads exactly `len` body bytes, the first of them from `buf`.
pub(crate) async fn read_body<S: AsyncRead + Unpin>(
    io: &mut S,
    buf: &mut Vec<u8>,
    len: usize,
) -> io::Result<Vec<u8>> {
    let have = buf.len().min(len);
    let mut body: Vec<u8> = buf.drain(..have).collect();
    if body.len() < len {
        let at = body.len();
        body.resize(len, 0);
        io.read_exact(&mut body[at..]).await?;
    }
    Ok(body)
}

/// Writes and flushes.
pub(crate) async fn send<S: AsyncWrite + Unpin>(io: &mut S, bytes: &[u8]) -> io::Result<()> {
    io.write_all(bytes).await?;
    io.flush().await
}

/// A refusal: the status and a JSON-RPC error body with `message` (R-NET-2).
pub(crate) fn refusal(status: u16, message: &str) -> Vec<u8> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32600, "message": message},
    });
    head::response(
        status,
        &[("Content-Type", "application/json")],
        body.to_string().as_bytes(),
    )
}
