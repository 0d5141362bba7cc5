//! Exact bytes of the message writers, ids, escaping and every kind of sink.
#![cfg(feature = "std")]

use acp_core::wire::encode::{
    BufferFull, EncodeError, IoSink, IoSinkError, Sink, SliceSink, append_line, encode_line,
    to_sink, to_slice, write_error, write_notification, write_request, write_result,
};
use acp_core::wire::{ErrorCode, Id};
use pretty_assertions::assert_eq;
use serde::Serialize;

fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap()
}

#[derive(Serialize)]
struct Params<'a> {
    #[serde(rename = "sessionId")]
    session_id: &'a str,
    count: u32,
}

#[test]
fn request_with_a_counter_id_and_params() {
    let mut out = Vec::new();
    let params = Params {
        session_id: "sess_01",
        count: 2,
    };
    write_request(&mut out, 7, "session/prompt", Some(&params)).unwrap();
    assert_eq!(
        text(&out),
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"sess_01\",\"count\":2}}\n"
    );
}

#[test]
fn request_without_params_omits_the_member() {
    let mut out = Vec::new();
    write_request(&mut out, 0, "logout", None::<&()>).unwrap();
    assert_eq!(
        text(&out),
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"logout\"}\n"
    );
}

#[test]
fn request_with_a_wire_id_echoes_it() {
    let mut out = Vec::new();
    write_request(&mut out, Id::Int("-1"), "x", Some(&[1, 2])).unwrap();
    assert_eq!(
        text(&out),
        "{\"jsonrpc\":\"2.0\",\"id\":-1,\"method\":\"x\",\"params\":[1,2]}\n"
    );
}

#[test]
fn request_with_the_largest_counter() {
    let mut out = Vec::new();
    write_request(&mut out, u64::MAX, "m", None::<&()>).unwrap();
    assert_eq!(
        text(&out),
        "{\"jsonrpc\":\"2.0\",\"id\":18446744073709551615,\"method\":\"m\"}\n"
    );
}

#[test]
fn notification_with_and_without_params() {
    let mut out = Vec::new();
    write_notification(
        &mut out,
        "session/cancel",
        Some(&Params {
            session_id: "s",
            count: 0,
        }),
    )
    .unwrap();
    write_notification(&mut out, "ping", None::<&()>).unwrap();
    assert_eq!(
        text(&out),
        "{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"s\",\"count\":0}}\n\
         {\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n"
    );
}

#[test]
fn method_names_are_escaped() {
    let mut out = Vec::new();
    write_notification(&mut out, "a\"b\\c\nd", None::<&()>).unwrap();
    assert_eq!(
        text(&out),
        "{\"jsonrpc\":\"2.0\",\"method\":\"a\\\"b\\\\c\\nd\"}\n"
    );
}

#[test]
fn result_lines_for_every_id_shape() {
    let cases = [
        (Id::Int("0"), "0"),
        (Id::Int("-1"), "-1"),
        (Id::Int("9007199254740993"), "9007199254740993"),
        (Id::Int("-9223372036854775809"), "-9223372036854775809"),
        (
            Id::Int("123456789012345678901234567890123456789012345678901234567890"),
            "123456789012345678901234567890123456789012345678901234567890",
        ),
        (Id::Int("-0"), "-0"),
        (Id::Null, "null"),
    ];
    for (id, expected) in cases {
        let mut out = Vec::new();
        write_result(&mut out, id, &serde_json::json!({"ok": true})).unwrap();
        assert_eq!(
            text(&out),
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{expected},\"result\":{{\"ok\":true}}}}\n")
        );
    }
}

#[test]
fn a_null_result_is_written_as_null() {
    let mut out = Vec::new();
    write_result(&mut out, Id::Int("3"), &()).unwrap();
    write_result(&mut out, Id::Int("4"), &None::<u8>).unwrap();
    assert_eq!(
        text(&out),
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":null}\n{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":null}\n"
    );
}

#[test]
fn an_integer_id_that_is_not_an_integer_is_refused() {
    let mut out = Vec::new();
    let error = write_result(&mut out, Id::Int("1x"), &()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "cannot encode value as JSON: integer id is not a JSON integer: \"1x\""
    );
    for bad in ["", "-", "01", "+1", "1.5", "1e3"] {
        assert!(
            write_result(&mut Vec::new(), Id::Int(bad), &()).is_err(),
            "{bad:?}"
        );
    }
}

#[test]
fn error_line_with_a_formatted_message_and_no_data() {
    let mut out = Vec::new();
    let method = "session/prompt";
    write_error(
        &mut out,
        Id::Int("5"),
        ErrorCode::RESOURCE_NOT_FOUND,
        &format_args!("{method} called before initialize handshake"),
        None::<&()>,
    )
    .unwrap();
    assert_eq!(
        text(&out),
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32002,\"message\":\"session/prompt called before initialize handshake\"}}\n"
    );
}

#[test]
fn error_line_escapes_the_message_and_carries_data() {
    let mut out = Vec::new();
    write_error(
        &mut out,
        Id::Null,
        ErrorCode::PARSE_ERROR,
        "Parse error: \"é\"\n\t中文🚀",
        Some(&serde_json::json!({"line": 1})),
    )
    .unwrap();
    assert_eq!(
        text(&out),
        "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: \\\"é\\\"\\n\\t中文🚀\",\"data\":{\"line\":1}}}\n"
    );
}

#[test]
fn error_codes_outside_the_known_set_are_written_as_is() {
    let mut out = Vec::new();
    write_error(
        &mut out,
        Id::Int("1"),
        ErrorCode(i32::MIN),
        "m",
        None::<&()>,
    )
    .unwrap();
    assert_eq!(
        text(&out),
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-2147483648,\"message\":\"m\"}}\n"
    );
}

struct FailingDisplay;

impl std::fmt::Display for FailingDisplay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("partial")?;
        Err(std::fmt::Error)
    }
}

#[test]
fn a_failing_display_in_an_error_message_is_reported() {
    let mut out = Vec::new();
    let error = write_error(
        &mut out,
        Id::Null,
        ErrorCode(1),
        &FailingDisplay,
        None::<&()>,
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "cannot encode value as JSON: a Display implementation returned an error"
    );
}

#[test]
fn every_control_character_is_escaped_in_messages() {
    let controls: String = (0u8..0x20).map(char::from).collect();
    let mut out = Vec::new();
    write_error(&mut out, Id::Null, ErrorCode(1), &controls, None::<&()>).unwrap();
    let expected = "\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f\
                    \\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f";
    assert_eq!(
        text(&out),
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{{\"code\":1,\"message\":\"{expected}\"}}}}\n"
        )
    );
    // The same characters through the serializer (strings, keys, chars).
    let mut out = Vec::new();
    to_sink(&mut out, &controls).unwrap();
    assert_eq!(text(&out), format!("\"{expected}\""));
}

#[test]
fn non_ascii_text_is_written_raw() {
    let mut out = Vec::new();
    write_notification(&mut out, "é", Some(&"中文 🚀 é\u{7f}\u{2028}")).unwrap();
    assert_eq!(
        text(&out),
        "{\"jsonrpc\":\"2.0\",\"method\":\"é\",\"params\":\"中文 🚀 é\u{7f}\u{2028}\"}\n"
    );
}

#[test]
fn slice_sink_reports_overflow_at_every_size_and_fits_exactly() {
    let expected =
        b"{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"m\\n\",\"params\":[\"\\u0001\"]}\n";
    for size in 0..expected.len() {
        let mut buf = vec![0u8; size];
        let result = encode_line(&mut buf, |sink| {
            write_request(sink, 12, "m\n", Some(&["\u{1}"]))
        });
        assert!(
            matches!(result, Err(EncodeError::Sink(BufferFull))),
            "size {size}: {result:?}"
        );
    }
    let mut buf = vec![0u8; expected.len()];
    let n = encode_line(&mut buf, |sink| {
        write_request(sink, 12, "m\n", Some(&["\u{1}"]))
    })
    .unwrap();
    assert_eq!(text(&buf[..n]), text(expected));
}

#[test]
fn slice_sink_overflow_message() {
    let mut buf = [0u8; 4];
    let error = to_slice(&mut buf, "too long").unwrap_err();
    assert_eq!(
        error.to_string(),
        "cannot write encoded JSON: output buffer full"
    );
}

#[test]
fn slice_sink_writes_nothing_of_a_write_that_does_not_fit() {
    let mut buf = [0u8; 4];
    let mut sink = SliceSink::new(&mut buf);
    sink.write_bytes(b"ab").unwrap();
    assert_eq!(sink.write_bytes(b"cde"), Err(BufferFull));
    assert_eq!(sink.written(), b"ab");
    assert_eq!(sink.remaining(), 2);
    sink.write_byte(b'c').unwrap();
    sink.write_byte(b'd').unwrap();
    assert_eq!(sink.write_byte(b'e'), Err(BufferFull));
    assert_eq!(sink.len(), 4);
}

#[test]
fn to_slice_returns_the_length() {
    let mut buf = [0u8; 32];
    let n = to_slice(&mut buf, &(1, "é", None::<u8>)).unwrap();
    assert_eq!(text(&buf[..n]), "[1,\"é\",null]");
}

#[test]
fn heapless_vec_sink_fills_and_overflows() {
    let mut out: heapless::Vec<u8, 64> = heapless::Vec::new();
    write_notification(&mut out, "ping", None::<&()>).unwrap();
    assert_eq!(text(&out), "{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n");

    let mut small: heapless::Vec<u8, 16> = heapless::Vec::new();
    let error = write_notification(&mut small, "ping", None::<&()>).unwrap_err();
    assert!(matches!(error, EncodeError::Sink(BufferFull)));
}

/// An embedded-io writer that takes at most three bytes per call.
struct Trickle {
    out: Vec<u8>,
    capacity: usize,
    zero_when_full: bool,
}

#[derive(Debug, PartialEq)]
struct Full;

impl std::fmt::Display for Full {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the trickle is full")
    }
}

impl std::error::Error for Full {}

impl embedded_io::Error for Full {
    fn kind(&self) -> embedded_io::ErrorKind {
        embedded_io::ErrorKind::WriteZero
    }
}

impl embedded_io::ErrorType for Trickle {
    type Error = Full;
}

impl embedded_io::Write for Trickle {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Self::Error> {
        let room = self.capacity - self.out.len();
        if room == 0 && !buf.is_empty() {
            return if self.zero_when_full {
                Ok(0)
            } else {
                Err(Full)
            };
        }
        let n = buf.len().min(3).min(room);
        self.out.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

#[test]
fn embedded_io_adapter_writes_whole_lines_through_short_writes() {
    let mut sink = IoSink(Trickle {
        out: Vec::new(),
        capacity: 1000,
        zero_when_full: false,
    });
    write_result(&mut sink, Id::Int("9"), &["a\tb", "中文"]).unwrap();
    assert_eq!(
        text(&sink.0.out),
        "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":[\"a\\tb\",\"中文\"]}\n"
    );
}

#[test]
fn embedded_io_adapter_reports_writer_errors_and_zero_writes() {
    let mut sink = IoSink(Trickle {
        out: Vec::new(),
        capacity: 10,
        zero_when_full: false,
    });
    let error = write_notification(&mut sink, "ping", None::<&()>).unwrap_err();
    assert!(matches!(error, EncodeError::Sink(IoSinkError::Io(Full))));
    assert_eq!(
        error.to_string(),
        "cannot write encoded JSON: write failed: the trickle is full"
    );

    let mut sink = IoSink(Trickle {
        out: Vec::new(),
        capacity: 10,
        zero_when_full: true,
    });
    let error = write_notification(&mut sink, "ping", None::<&()>).unwrap_err();
    assert!(matches!(error, EncodeError::Sink(IoSinkError::WriteZero)));
    assert_eq!(
        error.to_string(),
        "cannot write encoded JSON: writer accepted no bytes"
    );
}

/// Whatever the strings, every writer emits exactly one line that parses back to them.
#[test]
fn every_writer_emits_exactly_one_line_holding_the_same_strings() {
    fn property(method: String, message: String, text: String, id: u64) -> bool {
        let mut out = Vec::new();
        write_request(&mut out, id, &method, Some(&[&text])).unwrap();
        write_notification(&mut out, &method, Some(&text)).unwrap();
        write_result(&mut out, Id::Int("1"), &text).unwrap();
        write_error(&mut out, Id::Null, ErrorCode(2), &message, Some(&text)).unwrap();
        let lines: Vec<&[u8]> = out.split_inclusive(|&b| b == b'\n').collect();
        if lines.len() != 4
            || lines
                .iter()
                .any(|l| l.iter().any(|&b| b < 0x20 && b != b'\n'))
        {
            return false;
        }
        let parsed: Vec<serde_json::Value> = lines
            .iter()
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        parsed[0]["id"] == id
            && parsed[0]["method"] == method.as_str()
            && parsed[0]["params"][0] == text.as_str()
            && parsed[1]["method"] == method.as_str()
            && parsed[1]["params"] == text.as_str()
            && parsed[2]["result"] == text.as_str()
            && parsed[3]["error"]["message"] == message.as_str()
            && parsed[3]["error"]["data"] == text.as_str()
    }
    quickcheck::QuickCheck::new()
        .tests(2000)
        .quickcheck(property as fn(String, String, String, u64) -> bool);
}

/// A `Serialize` that fails after part of the line is out.
struct FailsMidway;

impl Serialize for FailsMidway {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut seq = s.serialize_seq(None)?;
        seq.serialize_element(&1)?;
        Err(S::Error::custom("gave up"))
    }
}

#[test]
fn append_line_keeps_only_whole_lines() {
    let mut out = Vec::new();
    append_line(&mut out, |line| write_notification(line, "a", None::<&()>)).unwrap();
    let error = append_line(&mut out, |line| {
        write_notification(line, "b", Some(&FailsMidway))
    })
    .unwrap_err();
    assert_eq!(error.to_string(), "gave up");
    assert_eq!(text(&out), "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n");
}

/// R-STORE-7: a text chunk written by `write_text_chunk` is byte for byte the notification of
/// the typed update (escapes, control characters, non-ASCII text, an escaped session id), the
/// span it returns is the text's escaped contents within that line, and `escape_into` appends
/// the same contents.
#[test]
fn a_text_chunk_line_is_the_typed_updates_line_and_spans_the_escaped_text() {
    use acp_core::schema::{ContentBlock, ContentChunk, SessionUpdate};
    use acp_core::wire::encode::{TextChunkKind, write_text_chunk};

    #[derive(Serialize)]
    struct UpdateParams<'a> {
        #[serde(rename = "sessionId")]
        session_id: &'a str,
        update: &'a SessionUpdate,
    }

    let texts = [
        "",
        "abcdefghijklmnopqrstuvwxyzabcdef",
        "quote \" backslash \\ slash / done",
        "lines\nand\ttabs\r\u{8}\u{c}\u{0}\u{1f}\u{7f}",
        "déjà vu — 日本語 🎉",
        "\"",
    ];
    for session in ["sess_0123", "odd \"id\"\n"] {
        for sample in texts {
            for kind in [TextChunkKind::AgentMessage, TextChunkKind::AgentThought] {
                let chunk = ContentChunk::new(ContentBlock::text(sample));
                let update = match kind {
                    TextChunkKind::AgentMessage => SessionUpdate::AgentMessageChunk(chunk),
                    TextChunkKind::AgentThought => SessionUpdate::AgentThoughtChunk(chunk),
                };
                let mut typed = Vec::new();
                let params = UpdateParams {
                    session_id: session,
                    update: &update,
                };
                write_notification(&mut typed, "session/update", Some(&params)).unwrap();
                let mut fast = Vec::new();
                let span = write_text_chunk(&mut fast, session, kind, sample).unwrap();
                assert_eq!(text(&fast), text(&typed));
                let quoted = serde_json::to_string(sample).unwrap();
                assert_eq!(text(&fast[span]), &quoted[1..quoted.len() - 1]);
                let mut kept = String::from("kept ");
                acp_core::wire::encode::escape_into(&mut kept, sample);
                assert_eq!(kept, format!("kept {}", &quoted[1..quoted.len() - 1]));
            }
        }
    }
}
