//! The server in this process, to read its queue figures: a client that stops reading its
//! SSE stream during `/flood 1000000` fills that stream's bounded queue and no more (R-NET-6).

mod serve_support;

use std::io::Write;
use std::net::TcpStream;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use acp_cli::agent::logging::LogSink;
use acp_cli::agent::sessions::SessionTable;
use acp_cli::serve::{self, ListenArgs, STREAM_QUEUE, Stats};
use serve_support::*;

/// R-NET-6: a stalled SSE reader during a flood: its stream queue fills to its bound and
/// stops there; the turn is still cancelled and answered once the client reads again.
#[test]
fn stalled_sse_reader_keeps_the_queue_bounded() {
    let cwd = scratch("stall");
    let stats = Arc::new(Stats::default());
    let (bound, addr) = std::sync::mpsc::channel();
    let (stop, stopped) = smol::channel::bounded::<()>(1);
    let server_stats = Arc::clone(&stats);
    let server = std::thread::spawn(move || {
        let args = ListenArgs {
            listen: Some("127.0.0.1:0".parse().unwrap()),
            max_body: serve::DEFAULT_MAX_BODY,
            idle_timeout: serve::DEFAULT_IDLE_SECS,
            ..ListenArgs::default()
        };
        let prepared = serve::prepare(&args).expect("prepared");
        let make = || (acp_cli::demo::DemoBackend::new(), SessionTable::default());
        let spawner =
            serve::agent_spawner(make, Rc::new(acp_cli::model::NoModel), LogSink::default());
        serve::run_until(
            prepared,
            server_stats,
            spawner,
            move |a| bound.send(a).unwrap(),
            async move {
                let _ = stopped.recv().await;
            },
        )
    });
    let addr = addr.recv().unwrap();

    let init = post(addr, &[], INITIALIZE);
    let id = init.header("acp-connection-id").unwrap().to_owned();
    let connection = Sse::open(addr, &id, None);
    let conn = [("Acp-Connection-Id", id.as_str())];
    post(addr, &conn, &new_session(2, &cwd));
    let sid = connection.until_answer(2)[0]["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();

    // The session stream, opened and never read.
    let mut stalled = TcpStream::connect(addr).unwrap();
    write!(
        stalled,
        "GET /acp HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAcp-Connection-Id: {id}\r\nAcp-Session-Id: {sid}\r\n\r\n"
    )
    .unwrap();
    let scoped = [
        ("Acp-Connection-Id", id.as_str()),
        ("Acp-Session-Id", sid.as_str()),
    ];
    assert_eq!(
        post(addr, &scoped, &prompt(3, &sid, "/flood 1000000")).status,
        202
    );

    // The socket's buffers fill, then the queue: wait for it (a guard, not a timing).
    let start = Instant::now();
    while stats.stream_queue_peak.load(Ordering::Relaxed) < STREAM_QUEUE {
        assert!(start.elapsed() < GUARD, "the queue never filled");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(
        stats.stream_queue_peak.load(Ordering::Relaxed),
        STREAM_QUEUE
    );

    // The client cancels, reads again, and gets the turn's answer.
    let cancel = format!(
        r#"{{"jsonrpc":"2.0","method":"session/cancel","params":{{"sessionId":"{sid}"}}}}"#
    );
    assert_eq!(post(addr, &scoped, &cancel).status, 202);
    stalled.set_read_timeout(Some(GUARD)).unwrap();
    let mut answer = None;
    for line in std::io::BufRead::lines(std::io::BufReader::new(stalled)) {
        let line = line.expect("the stream goes on");
        let Some(data) = line.strip_prefix("data: ") else {
            continue;
        };
        let event: serde_json::Value = serde_json::from_str(data).unwrap();
        if event["id"] == 3 && event.get("method").is_none() {
            answer = Some(event);
            break;
        }
    }
    assert_eq!(
        answer.expect("the prompt's answer")["result"]["stopReason"],
        "cancelled"
    );
    assert_eq!(
        stats.stream_queue_peak.load(Ordering::Relaxed),
        STREAM_QUEUE
    );

    stop.try_send(()).unwrap();
    server.join().unwrap().unwrap();
}
