//! The JSON-RPC envelope rules (R-ENV-1 … R-ENV-8, R-ID-1 … R-ID-4): one test per rule, with
//! the exact code, id and message of every rejection.

use acp_core::wire::envelope::{
    ErrorObject, LineRejection, MalformedResponse, Message, Notification, Outcome, Reason, Request,
    Response, scan,
};
use acp_core::wire::frame::FrameError;
use acp_core::wire::{ErrorCode, Id, RawValue};
use pretty_assertions::assert_eq;

/// The id as it would be written in the reply.
fn id_json(id: Id<'_>) -> String {
    match id {
        Id::Int(digits) => digits.to_owned(),
        Id::Str(s) => format!("\"{}\"", s.raw()),
        Id::Null => "null".to_owned(),
    }
}

/// (code, id as JSON, message) of the reply a rejected line gets.
fn rejection(line: &str) -> (i32, String, String) {
    match scan(line) {
        Ok(message) => panic!("{line} was accepted as {message:?}"),
        Err(rejection) => (
            rejection.code.0,
            id_json(rejection.id),
            rejection.to_string(),
        ),
    }
}

fn accept(line: &str) -> Message<'_> {
    scan(line).unwrap_or_else(|r| panic!("{line} was rejected: {r}"))
}

fn request(line: &str) -> Request<'_> {
    match accept(line) {
        Message::Request(request) => request,
        other => panic!("{line} is not a request: {other:?}"),
    }
}

fn notification(line: &str) -> Notification<'_> {
    match accept(line) {
        Message::Notification(notification) => notification,
        other => panic!("{line} is not a notification: {other:?}"),
    }
}

fn response(line: &str) -> Response<'_> {
    match accept(line) {
        Message::Response(response) => response,
        other => panic!("{line} is not a response: {other:?}"),
    }
}

fn rejected(code: i32, id: &str, message: &str) -> (i32, String, String) {
    (code, id.to_owned(), message.to_owned())
}

#[test]
fn not_json_is_a_parse_error_with_null_id() {
    assert_eq!(
        rejection("not json"),
        rejected(-32700, "null", "Parse error: invalid literal at byte 0")
    );
    assert_eq!(
        rejection("hello"),
        rejected(-32700, "null", "Parse error: expected value at byte 0")
    );
    assert_eq!(
        rejection(r#"{"jsonrpc":"2.0","id":1,"method":"x""#),
        rejected(-32700, "null", "Parse error: unexpected end of input")
    );
    assert_eq!(
        rejection(r#"{"jsonrpc":"2.0","id":1,"method":"x"} {}"#),
        rejected(
            -32700,
            "null",
            "Parse error: trailing characters at byte 38"
        )
    );
}

#[test]
fn malformed_json_deep_inside_params_is_a_parse_error() {
    let line = r#"{"jsonrpc":"2.0","method":"x","params":{"a":[1,2,{"b":tru}]}}"#;
    assert_eq!(
        rejection(line),
        rejected(-32700, "null", "Parse error: invalid literal at byte 54")
    );
    let line = r#"{"jsonrpc":"2.0","id":5,"method":"x","params":{"t":"\ud800"}}"#;
    assert_eq!(
        rejection(line),
        rejected(
            -32700,
            "null",
            "Parse error: unpaired surrogate escape at byte 52"
        )
    );
}

#[test]
fn json_that_is_not_an_object_is_an_invalid_request_with_null_id() {
    for line in [
        r#"[{"jsonrpc":"2.0","id":1,"method":"initialize"}]"#,
        "[]",
        "42",
        r#""{}""#,
        "null",
        "true",
    ] {
        assert_eq!(
            rejection(line),
            rejected(-32600, "null", "Invalid Request: expected JSON object"),
            "{line}"
        );
    }
}

#[test]
fn jsonrpc_must_be_exactly_2_0_and_the_reply_keeps_the_id() {
    let version = "Invalid Request: jsonrpc must be '2.0'";
    assert_eq!(
        rejection(r#"{"id":7,"method":"x"}"#),
        rejected(-32600, "7", version)
    );
    assert_eq!(
        rejection(r#"{"jsonrpc":"1.0","id":"abc","method":"x"}"#),
        rejected(-32600, "\"abc\"", version)
    );
    assert_eq!(
        rejection(r#"{"jsonrpc":2.0,"id":1,"method":"x"}"#),
        rejected(-32600, "1", version)
    );
    assert_eq!(
        rejection(r#"{"jsonrpc":"2.0 ","id":1,"method":"x"}"#),
        rejected(-32600, "1", version)
    );
    assert_eq!(
        rejection(r#"{"jsonrpc":null,"method":"x"}"#),
        rejected(-32600, "null", version)
    );
    assert_eq!(
        rejection(r#"{"method":"x"}"#),
        rejected(-32600, "null", version)
    );
    // A response with a bad version is rejected too, with its id.
    assert_eq!(
        rejection(r#"{"id":3,"result":{}}"#),
        rejected(-32600, "3", version)
    );
    // Escapes are decoded before comparing.
    notification(r#"{"jsonrpc":"2\u002e0","method":"x"}"#);
}

#[test]
fn no_method_and_no_outcome_is_missing_method() {
    let missing = "Invalid Request: missing method";
    assert_eq!(
        rejection(r#"{"jsonrpc":"2.0","id":3}"#),
        rejected(-32600, "3", missing)
    );
    assert_eq!(
        rejection(r#"{"jsonrpc":"2.0"}"#),
        rejected(-32600, "null", missing)
    );
    assert_eq!(
        rejection(r#"{"jsonrpc":"2.0","id":"q","params":{}}"#),
        rejected(-32600, "\"q\"", missing)
    );
}

#[test]
fn method_must_be_a_non_empty_string() {
    let missing = "Invalid Request: missing method";
    for method in [r#""""#, "5", "null", "[]", r#"{"a":1}"#, "true"] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":3,"method":{method}}}"#);
        assert_eq!(rejection(&line), rejected(-32600, "3", missing), "{line}");
    }
    assert_eq!(
        rejection(r#"{"jsonrpc":"2.0","method":""}"#),
        rejected(-32600, "null", missing)
    );
    // A non-empty name made of escapes is a name.
    assert!(
        request(r#"{"jsonrpc":"2.0","id":1,"method":"\u0078"}"#)
            .method
            .eq_str("x")
    );
}

#[test]
fn ids_must_be_integers_strings_or_null() {
    let invalid = "Invalid Request: id must be an integer, a string or null";
    for id in [
        "1.5",
        "1e3",
        "1.0",
        "-1E2",
        "true",
        "false",
        "{}",
        "[]",
        "[1]",
        r#"{"a":1}"#,
    ] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"x"}}"#);
        assert_eq!(
            rejection(&line),
            rejected(-32600, "null", invalid),
            "{line}"
        );
    }
    // Also on responses.
    assert_eq!(
        rejection(r#"{"jsonrpc":"2.0","id":2.5,"result":null}"#),
        rejected(-32600, "null", invalid)
    );
    // The id check comes before the version check, which could not echo it.
    assert_eq!(
        rejection(r#"{"jsonrpc":"1.0","id":[],"method":"x"}"#),
        rejected(-32600, "null", invalid)
    );
}

#[test]
fn null_or_absent_id_makes_a_notification() {
    let n = notification(r#"{"jsonrpc":"2.0","id":null,"method":"session/cancel","params":{}}"#);
    assert!(n.method.eq_str("session/cancel"));
    assert_eq!(n.params.map(|p| p.get()), Some("{}"));
    let n = notification(r#"{"method":"session/update","jsonrpc":"2.0"}"#);
    assert!(n.method.eq_str("session/update"));
    assert_eq!(n.params, None);
}

#[test]
fn ids_are_echoed_exactly() {
    let cases = [
        ("0", "0"),
        ("-1", "-1"),
        ("-0", "-0"),
        ("9007199254740993", "9007199254740993"),
        (
            "123456789012345678901234567890",
            "123456789012345678901234567890",
        ),
        (r#""x""#, r#""x""#),
        (r#""""#, r#""""#),
        (r#""a\"b\u00e9\\""#, r#""a\"b\u00e9\\""#),
    ];
    for (id, echoed) in cases {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"x"}}"#);
        assert_eq!(id_json(request(&line).id), echoed, "{line}");
        // Rejections echo it the same way.
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":""}}"#);
        assert_eq!(rejection(&line).1, echoed, "{line}");
    }
    let big = request(r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"x"}"#);
    assert_eq!(big.id.as_u64(), Some(9_007_199_254_740_993));
    let s = request(r#"{"jsonrpc":"2.0","id":"a\"b","method":"x"}"#);
    assert!(matches!(s.id, Id::Str(s) if s.eq_str("a\"b")));
}

#[test]
fn duplicate_envelope_members_are_refused() {
    assert_eq!(
        rejection(r#"{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}"#),
        rejected(-32600, "1", r#"Invalid Request: duplicate member "method""#)
    );
    assert_eq!(
        rejection(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"a"}"#),
        rejected(-32600, "null", r#"Invalid Request: duplicate member "id""#)
    );
    // Keys are compared decoded.
    assert_eq!(
        rejection(r#"{"jsonrpc":"2.0","id":1,"method":"a","p\u0061rams":1,"params":2}"#),
        rejected(-32600, "1", r#"Invalid Request: duplicate member "params""#)
    );
    assert_eq!(
        rejection(r#"{"jsonrpc":"2.0","jsonrpc":"2.0","method":"a"}"#),
        rejected(
            -32600,
            "null",
            r#"Invalid Request: duplicate member "jsonrpc""#
        )
    );
    assert_eq!(
        rejection(r#"{"jsonrpc":"2.0","id":4,"result":1,"result":2}"#),
        rejected(-32600, "4", r#"Invalid Request: duplicate member "result""#)
    );
    // Duplicates come before the version check.
    assert_eq!(
        rejection(r#"{"id":4,"error":1,"error":2}"#),
        rejected(-32600, "4", r#"Invalid Request: duplicate member "error""#)
    );
    // Unknown members may repeat: they are ignored.
    request(r#"{"jsonrpc":"2.0","id":1,"method":"a","x":1,"x":2}"#);
}

#[test]
fn unknown_members_are_ignored() {
    let r = request(r#"{"extra":[1,{"id":"no"}],"jsonrpc":"2.0","id":1,"method":"a","_meta":{}}"#);
    assert_eq!(r.id, Id::Int("1"));
    assert!(r.method.eq_str("a"));
}

#[test]
fn params_may_be_any_json_value() {
    for params in ["{}", "[1,2]", r#""s""#, "3", "null", "true"] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{params}}}"#);
        assert_eq!(
            request(&line).params.map(|p| p.get()),
            Some(params),
            "{line}"
        );
    }
}

#[test]
fn whitespace_around_and_inside_the_line_is_allowed() {
    let r = request(
        " \t{ \"jsonrpc\" : \"2.0\" , \"id\" : 1 , \"method\" : \"m\" , \"params\" : [ 1 ] } \r",
    );
    assert_eq!(r.id, Id::Int("1"));
    assert_eq!(r.params.map(|p| p.get()), Some("[ 1 ]"));
}

#[test]
fn a_method_makes_a_request_even_next_to_a_result() {
    let r = request(r#"{"jsonrpc":"2.0","id":1,"method":"m","result":{}}"#);
    assert!(r.method.eq_str("m"));
}

#[test]
fn responses_carry_their_result() {
    let r = response(r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#);
    assert_eq!(r.id, Id::Int("3"));
    assert!(matches!(r.outcome, Outcome::Result(v) if v.get() == r#"{"stopReason":"end_turn"}"#));
    let r = response(r#"{"jsonrpc":"2.0","id":"perm_1","result":null}"#);
    assert!(matches!(r.outcome, Outcome::Result(v) if v.is_null()));
    // A response with a null or missing id is still a response (the connection drops it).
    assert_eq!(
        response(r#"{"jsonrpc":"2.0","id":null,"result":1}"#).id,
        Id::Null
    );
    assert_eq!(response(r#"{"jsonrpc":"2.0","result":1}"#).id, Id::Null);
}

#[test]
fn responses_carry_well_formed_errors() {
    let line = r#"{"jsonrpc":"2.0","id":1,"error":{"message":"No \"x\"","code":-32601,"data":{"m":"x"},"z":0}}"#;
    let Outcome::Error(ErrorObject {
        code,
        message,
        data,
    }) = response(line).outcome
    else {
        panic!("not an error outcome");
    };
    assert_eq!(code, ErrorCode::METHOD_NOT_FOUND);
    assert!(message.eq_str("No \"x\""));
    assert_eq!(data.map(|d| d.get()), Some(r#"{"m":"x"}"#));
    let line = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-2147483648,"message":""}}"#;
    let Outcome::Error(error) = response(line).outcome else {
        panic!("not an error outcome")
    };
    assert_eq!(error.code, ErrorCode(i32::MIN));
    assert_eq!(error.data, None);
}

#[test]
fn malformed_responses_still_settle_the_request() {
    let cases = [
        (
            r#""result":1,"error":{"code":1,"message":"m"}"#,
            MalformedResponse::ResultAndError,
        ),
        (r#""error":"oops""#, MalformedResponse::ErrorNotObject),
        (r#""error":null"#, MalformedResponse::ErrorNotObject),
        (r#""error":[1]"#, MalformedResponse::ErrorNotObject),
        (r#""error":{"message":"m"}"#, MalformedResponse::BadCode),
        (
            r#""error":{"code":"1","message":"m"}"#,
            MalformedResponse::BadCode,
        ),
        (
            r#""error":{"code":1.0,"message":"m"}"#,
            MalformedResponse::BadCode,
        ),
        (
            r#""error":{"code":1e2,"message":"m"}"#,
            MalformedResponse::BadCode,
        ),
        (
            r#""error":{"code":2147483648,"message":"m"}"#,
            MalformedResponse::BadCode,
        ),
        (
            r#""error":{"code":-2147483649,"message":"m"}"#,
            MalformedResponse::BadCode,
        ),
        (r#""error":{"code":1}"#, MalformedResponse::BadMessage),
        (
            r#""error":{"code":1,"message":5}"#,
            MalformedResponse::BadMessage,
        ),
        (
            r#""error":{"code":1,"message":null}"#,
            MalformedResponse::BadMessage,
        ),
    ];
    for (members, problem) in cases {
        let line = format!(r#"{{"jsonrpc":"2.0","id":9,{members}}}"#);
        let r = response(&line);
        assert_eq!(r.id, Id::Int("9"), "{line}");
        assert_eq!(r.outcome, Outcome::Malformed(problem), "{line}");
    }
    let texts = [
        (
            MalformedResponse::ResultAndError,
            "response has both result and error",
        ),
        (
            MalformedResponse::ErrorNotObject,
            "response error is not an object",
        ),
        (
            MalformedResponse::BadCode,
            "response error code is not a 32-bit integer",
        ),
        (
            MalformedResponse::BadMessage,
            "response error message is not a string",
        ),
    ];
    for (problem, text) in texts {
        assert_eq!(problem.to_string(), text);
    }
}

#[test]
fn frame_errors_become_parse_errors_with_null_id() {
    let r = LineRejection::from_frame_error(FrameError::LineTooLong { limit: 1024 });
    assert_eq!(r.code, ErrorCode::PARSE_ERROR);
    assert_eq!(r.id, Id::Null);
    assert_eq!(
        r.to_string(),
        "Parse error: line exceeds the maximum length of 1024 bytes"
    );
    let r = LineRejection::from_frame_error(FrameError::InvalidUtf8 { valid_up_to: 3 });
    assert_eq!((r.code, r.id), (ErrorCode::PARSE_ERROR, Id::Null));
    assert_eq!(
        r.reason,
        Reason::Frame(FrameError::InvalidUtf8 { valid_up_to: 3 })
    );
    assert_eq!(r.to_string(), "Parse error: invalid UTF-8 at byte 3");
}

#[test]
fn session_id_peeks_at_the_top_level_of_params() {
    let session = |line: &str| accept(line).session_id().map(|s| s.raw().to_owned());
    assert_eq!(
        session(
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionId":"no"},"sessionId":"sess_1"}}"#
        ),
        Some("sess_1".to_owned())
    );
    assert_eq!(
        session(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"session\u0049d":"s\"2"}}"#),
        Some(r#"s\"2"#.to_owned())
    );
    assert_eq!(
        session(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":{"sessionId":"s"}}}"#),
        None
    );
    assert_eq!(
        session(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"sessionId":7}}"#),
        None
    );
    assert_eq!(
        session(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":["sessionId"]}"#),
        None
    );
    assert_eq!(session(r#"{"jsonrpc":"2.0","id":1,"method":"m"}"#), None);
    assert_eq!(
        session(r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s"}}"#),
        None
    );
}

#[test]
fn the_method_accessor_names_calls_only() {
    assert!(
        accept(r#"{"jsonrpc":"2.0","id":1,"method":"a"}"#)
            .method()
            .is_some_and(|m| m.eq_str("a"))
    );
    assert!(
        accept(r#"{"jsonrpc":"2.0","method":"b"}"#)
            .method()
            .is_some_and(|m| m.eq_str("b"))
    );
    assert_eq!(
        accept(r#"{"jsonrpc":"2.0","id":1,"result":0}"#).method(),
        None
    );
}

#[test]
fn a_rejection_displays_as_its_reply_message() {
    let r = scan("[1]").unwrap_err();
    assert_eq!(
        r,
        LineRejection {
            code: ErrorCode::INVALID_REQUEST,
            id: Id::Null,
            reason: Reason::NotAnObject
        }
    );
    assert_eq!(r.to_string(), r.reason.to_string());
    // Params stay raw.
    let p: Option<RawValue<'_>> =
        request(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{ "a" :1}}"#).params;
    assert_eq!(p.map(|p| p.get()), Some(r#"{ "a" :1}"#));
}
