//! The message-transport entry points (`handle_message`, `poll_transmit_message`): a frame is
//! one message whatever newlines it holds, it is taken whole or not at all, and what goes out
//! is one message per frame (R-MSG-1, R-MSG-2). The vectors (`vectors/*/message_*.jsonl`) hold
//! the wire-level cases; these are the ones a vector cannot state: every placement of a
//! newline, backpressure, bytes that are not UTF-8.
#![cfg(feature = "std")]

use acp_core::Instant;
use acp_core::conn::agent::{AgentConfig, AgentConnection, AgentEvent, AgentInfo, Growable};
use acp_core::machine::turn::StopReason;
use acp_core::schema::{ContentBlock, ContentChunk, SessionUpdate};
use acp_core::wire::frame::Framer;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}}}}"#;
const NEW_SESSION: &str = r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/home/user/p","mcpServers":[]}}"#;
const PROMPT: &str = r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"a \"quoted\" [text], {with: punctuation}"}]}}"#;

fn agent(config: AgentConfig) -> AgentConnection<Growable> {
    AgentConnection::new(config)
}

fn plain() -> AgentConfig {
    AgentConfig::new(AgentInfo::new("t", "T", "1"))
}

/// Answers `session/new` as `s1`, ends every turn at once; returns what was written, one
/// message per entry, taken through the message API.
fn serve_messages(conn: &mut AgentConnection<Growable>, frames: &[&[u8]]) -> Vec<String> {
    let mut out = Vec::new();
    for frame in frames {
        let mut taken = false;
        for _ in 0..100 {
            taken = conn.handle_message(Instant(0), frame);
            answer(conn);
            while let Some(message) = conn.poll_transmit_message() {
                out.push(String::from_utf8(message.to_vec()).unwrap());
                conn.transmitted_message();
            }
            if taken {
                break;
            }
        }
        assert!(taken, "the message was never taken");
    }
    out
}

fn answer(conn: &mut AgentConnection<Growable>) {
    while let Some(event) = conn.poll_event() {
        match event {
            AgentEvent::NewSession { ticket, .. } => {
                conn.accept_new_session_id(ticket, "s1").unwrap()
            }
            AgentEvent::Prompt { session, .. } => {
                conn.end_turn(session.as_str(), StopReason::EndTurn)
                    .unwrap();
            }
            _ => {}
        }
    }
}

/// Byte offsets where JSON whitespace may go: after `{ [ , :` and before `} ]`, outside strings.
fn token_gaps(message: &str) -> Vec<usize> {
    let mut gaps = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    for (at, byte) in message.bytes().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' | b',' | b':' => gaps.push(at + 1),
            b'}' | b']' => gaps.push(at),
            _ => {}
        }
    }
    gaps
}

/// R-MSG-1: a newline between any two tokens, alone, as CRLF or as a lone CR, leaves the
/// message what it was: the answers are those of the compact message, byte for byte.
#[test]
fn a_newline_between_any_two_tokens_is_whitespace() {
    let compact = serve_messages(
        &mut agent(plain()),
        &[
            INITIALIZE.as_bytes(),
            NEW_SESSION.as_bytes(),
            PROMPT.as_bytes(),
        ],
    );
    assert_eq!(compact.len(), 3, "{compact:?}");
    let mut variants = 0;
    for (index, message) in [INITIALIZE, NEW_SESSION, PROMPT].into_iter().enumerate() {
        for gap in token_gaps(message) {
            for newline in ["\n", "\r\n", "\r", "\n\n  "] {
                let framed = format!("{}{newline}{}", &message[..gap], &message[gap..]);
                let mut frames = [
                    INITIALIZE.as_bytes(),
                    NEW_SESSION.as_bytes(),
                    PROMPT.as_bytes(),
                ];
                frames[index] = framed.as_bytes();
                let answers = serve_messages(&mut agent(plain()), &frames);
                assert_eq!(
                    answers, compact,
                    "newline {newline:?} at byte {gap} of {message}"
                );
                variants += 1;
            }
        }
    }
    assert!(variants > 100, "only {variants} variants tried");
}

/// R-MSG-1: a raw newline anywhere inside a string makes the frame one parse error, never
/// two lines, and the connection goes on.
#[test]
fn a_newline_inside_any_string_is_one_parse_error() {
    let mut conn = agent(plain());
    serve_messages(&mut conn, &[INITIALIZE.as_bytes(), NEW_SESSION.as_bytes()]);
    let mut strings = 0;
    let mut in_string = false;
    for (at, byte) in PROMPT.bytes().enumerate() {
        if byte == b'"' && PROMPT.as_bytes()[at - 1] != b'\\' {
            in_string = !in_string;
            continue;
        }
        if !in_string {
            continue;
        }
        for newline in ["\n", "\r"] {
            let framed = format!("{}{newline}{}", &PROMPT[..at], &PROMPT[at..]);
            let answers = serve_messages(&mut conn, &[framed.as_bytes()]);
            assert_eq!(answers.len(), 1, "{framed:?} gave {answers:?}");
            assert!(
                answers[0].starts_with(
                    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: "#
                ),
                "{framed:?} gave {answers:?}"
            );
            strings += 1;
        }
    }
    assert!(strings > 50, "only {strings} positions tried");
    let answers = serve_messages(&mut conn, &[PROMPT.as_bytes()]);
    assert_eq!(
        answers,
        [r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#]
    );
}

/// R-MSG-1 (R-FRAME-6): a frame that is not UTF-8 is answered like such a line.
#[test]
fn a_frame_that_is_not_utf8_gets_the_line_error() {
    let mut conn = agent(plain());
    let mut frame = br#"{"jsonrpc":"2.0","id":1,"method":"a"#.to_vec();
    frame.extend_from_slice(&[0xc3, 0x28]);
    frame.extend_from_slice(br#""}"#);
    let answers = serve_messages(&mut conn, &[&frame]);
    assert_eq!(
        answers,
        [
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: invalid UTF-8 at byte 35"}}"#
        ]
    );
}

/// R-MSG-1: while the outbox lacks room for a reply, a message is refused whole (nothing of
/// it is taken); once the outbox is written out the same message goes in and is answered.
#[test]
fn a_message_waits_whole_while_the_outbox_is_full() {
    let mut config = plain();
    config.limits.outbox_limit = 4096;
    let mut conn = agent(config);
    serve_messages(&mut conn, &[INITIALIZE.as_bytes(), NEW_SESSION.as_bytes()]);
    assert!(conn.handle_message(Instant(0), PROMPT.as_bytes()));
    let mut prompt = None;
    while let Some(event) = conn.poll_event() {
        if let AgentEvent::Prompt { session, .. } = event {
            prompt = Some(session);
        }
    }
    assert!(prompt.is_some(), "the prompt reached the application");
    let chunk = SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::text(
        "x".repeat(800).as_str(),
    )));
    while conn.send_update("s1", &chunk).is_ok() {}
    let ping = br#"{"jsonrpc":"2.0","id":9,"method":"session/cancel","params":{"sessionId":"s1"}}"#;
    let pending = conn.poll_transmit().len();
    assert!(!conn.handle_message(Instant(0), ping), "refused while full");
    assert!(conn.poll_event().is_none(), "nothing of it was taken");
    assert_eq!(conn.poll_transmit().len(), pending, "and nothing answered");
    let mut sent = 0;
    while conn.poll_transmit_message().is_some() {
        conn.transmitted_message();
        sent += 1;
    }
    assert!(sent >= 4, "the chunks went out one message each");
    assert!(
        conn.handle_message(Instant(0), ping),
        "taken once written out"
    );
    let mut cancelled = false;
    while let Some(event) = conn.poll_event() {
        cancelled |= matches!(event, AgentEvent::Cancelled { .. });
    }
    assert!(cancelled, "the cancel reached the application");
}

/// R-MSG-2: the messages out are the lines of `poll_transmit`, in order, without newlines.
#[test]
fn messages_out_are_the_pending_lines_without_newlines() {
    let mut conn = agent(plain());
    serve_messages(&mut conn, &[INITIALIZE.as_bytes(), NEW_SESSION.as_bytes()]);
    assert!(conn.handle_message(Instant(0), PROMPT.as_bytes()));
    while conn.poll_event().is_some() {}
    for text in ["one", "two\nlines", "three"] {
        let chunk = SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::text(text)));
        conn.send_update("s1", &chunk).unwrap();
    }
    let lines: Vec<Vec<u8>> = conn
        .poll_transmit()
        .split_inclusive(|&b| b == b'\n')
        .map(|line| line[..line.len() - 1].to_vec())
        .collect();
    let mut messages = Vec::new();
    while let Some(message) = conn.poll_transmit_message() {
        messages.push(message.to_vec());
        conn.transmitted_message();
    }
    assert_eq!(messages, lines);
    assert_eq!(messages.len(), 3);
    assert!(conn.poll_transmit().is_empty());
}

/// R-MSG-1: the framer refuses a message while it still holds bytes fed earlier, and takes
/// it whole afterwards.
#[test]
fn the_framer_takes_a_message_only_when_idle() {
    let mut framer = Framer::with_limit(1024);
    assert_eq!(framer.feed(b"{\"partial\":"), 11);
    assert!(!framer.feed_message(b"{}"));
    assert_eq!(framer.buffered(), 11, "nothing of the message went in");
    framer.feed(b"1}\n");
    assert_eq!(framer.next_line(), Some(Ok("{\"partial\":1}")));
    assert!(framer.feed_message(b"{\n\"a\":\r\n1}"));
    assert_eq!(framer.next_line(), Some(Ok("{ \"a\":  1}")));
    assert_eq!(framer.next_line(), None);
    assert!(framer.feed_message(b"{}"));
    assert_eq!(framer.next_line(), Some(Ok("{}")));
}

/// The line a frame becomes, or `None` when the framer skipped it (blank) or refused it.
fn as_line(frame: &[u8]) -> Option<Vec<u8>> {
    let mut framer = Framer::with_limit(1 << 20);
    assert!(framer.feed_message(frame));
    let line = framer
        .next_line_bytes()
        .map(|line| line.map(<[u8]>::to_vec));
    assert_eq!(
        framer.next_line_bytes(),
        None,
        "one frame, at most one line"
    );
    line.and_then(Result::ok)
}

fn parses(bytes: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(bytes).is_ok()
}

/// R-MSG-1, at random: a frame of JSON's own characters (newlines, quotes and backslashes
/// among them) is valid JSON exactly when the line it becomes is, and that line holds no
/// newline. (`cargo +nightly fuzz run message` explores the same over any bytes.)
#[test]
fn a_frame_is_valid_json_exactly_when_its_line_is() {
    fn property(picks: Vec<u8>) -> bool {
        const ALPHABET: &[u8] = b"{}[]:,\"\\\n\r ab1-.e";
        let frame: Vec<u8> = picks
            .iter()
            .map(|&pick| ALPHABET[usize::from(pick) % ALPHABET.len()])
            .collect();
        match as_line(&frame) {
            Some(line) => !line.contains(&b'\n') && parses(&line) == parses(&frame),
            None => !parses(&frame),
        }
    }
    quickcheck::QuickCheck::new()
        .tests(20_000)
        .quickcheck(property as fn(Vec<u8>) -> bool);
    // The generator rarely builds valid JSON with newlines by chance: some by hand.
    for frame in [
        &b"{\n\"a\"\r:\r\n[1,\n2]}"[..],
        b"\"x\"\n",
        b"[\"a\\\\\"\n,\"b\"]",
        b"\n\n[]\r",
    ] {
        assert!(parses(frame));
        assert!(
            as_line(frame).is_some_and(|line| parses(&line)),
            "{frame:?}"
        );
    }
}
