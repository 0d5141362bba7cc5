//! One `session/update` agent message chunk (the most common message of a turn), read into
//! borrowed fields by serde-json-core (a derived struct, as a no_std user would write it) and by
//! acp-core (`envelope::scan`, then the view), both without an allocator. Prints ns per message
//! for each (best of 25 alternating rounds) and their ratio.
//!
//! Not equal work, and the difference favours serde-json-core: it reads only the members of
//! its struct and refuses escaped strings (they need `from_str_escaped` and a buffer), while
//! acp-core also checks the envelope (`jsonrpc`, duplicate members, id) and hands escaped
//! strings over as they are.

use std::hint::black_box;
use std::time::Instant;

use acp_core::view::{AgentNotificationView, SessionUpdateView};
use acp_core::wire::envelope::{self, Message};
use serde::Deserialize;

#[derive(Deserialize)]
struct Envelope<'a> {
    jsonrpc: &'a str,
    method: &'a str,
    #[serde(borrow)]
    params: Params<'a>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(rename = "sessionId")]
    session_id: &'a str,
    #[serde(borrow)]
    update: Update<'a>,
}

/// Flat, not an internally tagged enum: that needs serde's buffering, which needs `alloc`.
#[derive(Deserialize)]
struct Update<'a> {
    #[serde(rename = "sessionUpdate")]
    kind: &'a str,
    #[serde(borrow)]
    content: Content<'a>,
}

#[derive(Deserialize)]
struct Content<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    text: &'a str,
}

const LINE: &str = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_7f3a91c2","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"The assertion expects 3, but sum(1, 1) returns 2: fix the test"}}}}"#;

/// The session id's and the text's lengths, through serde-json-core.
fn serde_json_core(line: &str) -> usize {
    let (message, _): (Envelope, usize) = serde_json_core::from_str(line).expect("it reads");
    let update = &message.params.update;
    assert!(message.jsonrpc == "2.0" && message.method == "session/update");
    assert!(update.kind == "agent_message_chunk" && update.content.kind == "text");
    message.params.session_id.len() + update.content.text.len()
}

/// The same, through acp-core's scanner and view.
fn acp_core(line: &str) -> usize {
    let Ok(Message::Notification(n)) = envelope::scan(line) else {
        panic!("not a notification")
    };
    let method = n.method.as_plain().expect("no escapes");
    let Ok(AgentNotificationView::SessionUpdate(update)) =
        AgentNotificationView::decode(method, n.params)
    else {
        panic!("not a session/update")
    };
    let SessionUpdateView::AgentMessageChunk(chunk) = update.update else {
        panic!("not a chunk")
    };
    let text = chunk.content.as_text().and_then(|t| t.as_plain());
    update.session_id.as_plain().expect("plain").len() + text.expect("plain text").len()
}

/// ns per message of one round of `N` messages through `read`.
fn round(read: fn(&str) -> usize) -> f64 {
    const N: u32 = 200_000;
    let start = Instant::now();
    let mut sum = 0;
    for _ in 0..N {
        sum += read(black_box(LINE));
    }
    black_box(sum);
    start.elapsed().as_nanos() as f64 / f64::from(N)
}

fn main() {
    assert_eq!(
        serde_json_core(LINE),
        acp_core(LINE),
        "both read the same fields"
    );
    // Rounds alternate between the two, so a busy machine slows both alike; best of 25 each.
    let (mut theirs, mut ours) = (f64::MAX, f64::MAX);
    for _ in 0..25 {
        theirs = theirs.min(round(serde_json_core));
        ours = ours.min(round(acp_core));
    }
    for (name, ns) in [("serde-json-core", theirs), ("acp-core", ours)] {
        let mb_s = LINE.len() as f64 / ns * 1e3;
        println!(
            "{name:>16}: {ns:6.1} ns/message ({} bytes, {mb_s:.0} MB/s)",
            LINE.len()
        );
    }
    println!(
        "serde-json-core takes {:.1}x acp-core's time",
        theirs / ours
    );
}
