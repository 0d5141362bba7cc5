//! `acp-cli bridge --listen ADDR -- AGENT…`: the server of `--acp --listen` (R-NET-*), but
//! each connection gets its own child agent process instead of an application, and its
//! messages are relayed byte for byte: a frame becomes a line on the child's stdin
//! (R-MSG-1's transform, which leaves a one-line message as it is) and each line of the
//! child's stdout becomes a frame (R-NET-10). The child's exit ends the connection; the
//! connection's end closes the child's stdin, and a child still running when the network
//! side is gone is killed.

use std::process::ExitCode;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use smol::io::AsyncWriteExt;
use smol::process::{Command, Stdio};

use crate::serve::link::{LineReader, MessageWriter};
use crate::serve::{self, ListenArgs, SpawnAgent, Stats};

/// Serves until SIGINT/SIGTERM.
pub fn run(net: &ListenArgs, agent: Vec<String>) -> ExitCode {
    let prepared = match serve::prepare(net) {
        Ok(prepared) => prepared,
        Err(message) => {
            eprintln!("acp-cli: {message}");
            return ExitCode::from(2);
        }
    };
    let agent = Rc::new(agent);
    let spawner = move |stats: Arc<Stats>| -> SpawnAgent {
        Rc::new(move |reader, writer| {
            let agent = Rc::clone(&agent);
            let stats = Arc::clone(&stats);
            stats.agents.fetch_add(1, Ordering::Relaxed);
            serve::task::spawn_local(async move {
                relay(&agent, reader, writer).await;
                stats.agents.fetch_sub(1, Ordering::Relaxed);
            });
        })
    };
    match serve::run(prepared, Arc::default(), spawner) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("acp-cli: {message}");
            ExitCode::FAILURE
        }
    }
}

/// One connection's child: lines in, lines out, until its stdout ends.
async fn relay(agent: &[String], mut reader: LineReader, mut writer: MessageWriter) {
    let Some((program, args)) = agent.split_first() else {
        return;
    };
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(error) => {
            tracing::warn!(%error, program, "cannot start the agent");
            return;
        }
    };
    let (Some(mut stdin), Some(mut stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return;
    };
    let to_child = async move {
        let _ = smol::io::copy(&mut reader, &mut stdin).await;
        // The connection ended: EOF on the child's stdin.
        let _ = stdin.close().await;
        std::future::pending::<std::io::Result<u64>>().await
    };
    let from_child = async {
        let copied = smol::io::copy(&mut stdout, &mut writer).await;
        let _ = writer.close().await;
        copied
    };
    match smol::future::or(from_child, to_child).await {
        Ok(_) => {
            let status = child.status().await;
            tracing::info!(?status, "agent exited");
        }
        // The network side is gone: the child is killed on drop.
        Err(error) => tracing::info!(%error, "connection gone; stopping the agent"),
    }
}
