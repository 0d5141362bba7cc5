//! The scripted agent a client under test launches: `acp-cli conform --scripted-agent
//! TOKEN@ADDR`. It holds no script itself: it connects back to the suite on loopback, says
//! its token, and relays bytes both ways unchanged, so the case running in the suite plays
//! the agent live and sees everything the client writes.
//!
//! Its stdin reaching EOF (the client closed it, or died) shuts the socket's write half, which
//! the suite reads as the client's end, and ends the process with status 0, as an agent ends
//! at stdin EOF; so does the socket closing (the case is over).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};

/// The first line the relay sends: `acp-conform-relay TOKEN`.
pub(crate) const HELLO: &str = "acp-conform-relay";

/// Runs the relay for `target` (`TOKEN@HOST:PORT`); returns the exit status.
pub fn scripted_agent(target: &str) -> i32 {
    let Some((token, addr)) = target.split_once('@') else {
        eprintln!("acp-cli conform: --scripted-agent takes TOKEN@HOST:PORT, got '{target}'");
        return 2;
    };
    let mut socket = match TcpStream::connect(addr) {
        Ok(socket) => socket,
        Err(e) => {
            eprintln!("acp-cli conform: the scripted agent cannot reach the suite at {addr}: {e}");
            return 1;
        }
    };
    let _ = socket.set_nodelay(true);
    if socket
        .write_all(format!("{HELLO} {token}\n").as_bytes())
        .is_err()
    {
        return 1;
    }
    let Ok(mut upstream) = socket.try_clone() else {
        return 1;
    };
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            match stdin.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if upstream.write_all(&buffer[..n]).is_err() {
                        break;
                    }
                }
            }
        }
        // The client is done with its agent: an agent ends at stdin EOF.
        let _ = upstream.shutdown(Shutdown::Write);
        std::process::exit(0);
    });
    let mut stdout = std::io::stdout().lock();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match socket.read(&mut buffer) {
            Ok(0) | Err(_) => return 0,
            Ok(n) => {
                if stdout
                    .write_all(&buffer[..n])
                    .and_then(|()| stdout.flush())
                    .is_err()
                {
                    return 0;
                }
            }
        }
    }
}
