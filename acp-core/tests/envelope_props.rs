//! Properties of the JSON scanner and the envelope scanner, checked against serde_json.
//!
//! Known, intended differences from `serde_json::from_str::<serde_json::Value>`, excluded from
//! the verdict comparisons below:
//! - numbers beyond `f64` (`1e400`): valid JSON, so the scanner accepts them; serde_json's
//!   `Value` refuses them ("number out of range").
//! - nesting: the scanner accepts 128 levels, serde_json 127. The generators stay far below.
//!
//! Lone surrogates are rejected by both.

#![cfg(feature = "alloc")]

use std::borrow::Cow;

use acp_core::wire::envelope::{Message, Outcome, scan};
use acp_core::wire::json::{ValueKind, parse_value};
use acp_core::wire::{Id, RawValue};
use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};
use serde_json::{Map, Value};

const TESTS: u64 = 2_000;

fn check<P: quickcheck::Testable>(property: P) {
    check_n(TESTS, property);
}

fn check_n<P: quickcheck::Testable>(tests: u64, property: P) {
    QuickCheck::new()
        .tests(tests)
        .max_tests(tests * 10)
        .quickcheck(property);
}

/// serde_json's verdict, or `None` when it refuses for one of the documented differences.
fn serde_verdict(text: &str) -> Option<bool> {
    match serde_json::from_str::<Value>(text) {
        Ok(_) => Some(true),
        Err(e) if e.to_string().starts_with("number out of range") => None,
        Err(_) => Some(false),
    }
}

/// Rebuilds a serde_json `Value` from a validated span through the accessors only.
fn to_value(raw: RawValue<'_>) -> Value {
    match raw.kind() {
        ValueKind::Object => {
            let mut map = Map::new();
            for (key, value) in raw.fields() {
                map.insert(key.to_cow().into_owned(), to_value(value));
            }
            Value::Object(map)
        }
        ValueKind::Array => Value::Array(raw.elements().map(to_value).collect()),
        ValueKind::String => Value::String(raw.as_str().expect("a string").to_cow().into_owned()),
        ValueKind::Number => serde_json::from_str(raw.get()).expect("a number serde_json reads"),
        ValueKind::Bool => Value::Bool(raw.as_bool().expect("a bool")),
        ValueKind::Null => {
            assert!(raw.is_null());
            Value::Null
        }
    }
}

fn pick<'a, T>(g: &mut Gen, items: &'a [T]) -> &'a T {
    g.choose(items).expect("non-empty")
}

fn below(g: &mut Gen, n: usize) -> usize {
    usize::arbitrary(g) % n.max(1)
}

/// A character for a generated string, biased toward what needs escaping or is multi-byte.
fn string_char(g: &mut Gen) -> char {
    match below(g, 6) {
        0 => *pick(
            g,
            &[
                '"', '\\', '/', '\n', '\t', '\r', '\u{8}', '\u{c}', '\u{0}', '\u{1f}',
            ],
        ),
        1 => *pick(
            g,
            &[
                'é',
                '中',
                '🚀',
                '—',
                '\u{7f}',
                '\u{2028}',
                '\u{ffff}',
                '\u{10ffff}',
            ],
        ),
        2 => char::arbitrary(g),
        _ => *pick(g, &['a', 'b', 'z', ' ', '0', '{', '}', '[', ']', ',', ':']),
    }
}

fn gen_string(g: &mut Gen) -> String {
    // Long enough, with escapes, to cross the 64-byte chunks of the string scans.
    let len = below(g, 120);
    (0..len).map(|_| string_char(g)).collect()
}

/// Writes `s` as a JSON string literal, escaping each character in one of the ways JSON
/// allows, at random.
fn write_string(g: &mut Gen, s: &str, out: &mut String) {
    out.push('"');
    for ch in s.chars() {
        let short = match ch {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '\n' => Some("\\n"),
            '\t' => Some("\\t"),
            '\r' => Some("\\r"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            '/' if bool::arbitrary(g) => Some("\\/"),
            _ => None,
        };
        let must_escape = ch < ' ' || ch == '"' || ch == '\\';
        match below(g, 3) {
            0 if !must_escape => out.push(ch),
            1 if short.is_some() => out.push_str(short.unwrap_or_default()),
            _ => {
                let mut units = [0u16; 2];
                for unit in ch.encode_utf16(&mut units) {
                    if bool::arbitrary(g) {
                        out.push_str(&format!("\\u{unit:04x}"));
                    } else {
                        out.push_str(&format!("\\u{unit:04X}"));
                    }
                }
            }
        }
    }
    out.push('"');
}

fn write_ws(g: &mut Gen, out: &mut String) {
    if below(g, 4) == 0 {
        for _ in 0..=below(g, 3) {
            out.push(*pick(g, &[' ', '\t', '\n', '\r']));
        }
    }
}

fn write_digits(g: &mut Gen, out: &mut String, first_nonzero: bool) {
    let len = 1 + below(g, 25);
    for i in 0..len {
        let lo = if i == 0 && first_nonzero { 1 } else { 0 };
        out.push(char::from(b'0' + lo + below(g, 10 - lo as usize) as u8));
    }
}

fn write_number(g: &mut Gen, out: &mut String) {
    if bool::arbitrary(g) {
        out.push('-');
    }
    if below(g, 3) == 0 {
        out.push('0');
    } else {
        write_digits(g, out, true);
    }
    if bool::arbitrary(g) {
        out.push('.');
        write_digits(g, out, false);
    }
    if below(g, 3) == 0 {
        out.push(*pick(g, &['e', 'E']));
        out.push_str(pick::<&str>(g, &["", "+", "-"]));
        out.push_str(&below(g, 280).to_string());
    }
}

/// Writes a random valid JSON value of at most `depth` more levels.
fn write_value(g: &mut Gen, depth: usize, out: &mut String) {
    let choice = if depth == 0 { below(g, 4) } else { below(g, 6) };
    match choice {
        0 => out.push_str(pick::<&str>(g, &["null", "true", "false"])),
        1 => write_number(g, out),
        2 | 3 => {
            let s = gen_string(g);
            write_string(g, &s, out);
        }
        4 => {
            out.push('[');
            for i in 0..below(g, 5) {
                if i > 0 {
                    out.push(',');
                }
                write_ws(g, out);
                write_value(g, depth - 1, out);
                write_ws(g, out);
            }
            out.push(']');
        }
        _ => {
            out.push('{');
            for i in 0..below(g, 5) {
                if i > 0 {
                    out.push(',');
                }
                write_ws(g, out);
                let key = gen_string(g);
                write_string(g, &key, out);
                write_ws(g, out);
                out.push(':');
                write_ws(g, out);
                write_value(g, depth - 1, out);
                write_ws(g, out);
            }
            out.push('}');
        }
    }
}

/// A valid JSON text, with random whitespace around it.
#[derive(Clone, Debug)]
struct Doc(String);

impl Arbitrary for Doc {
    fn arbitrary(g: &mut Gen) -> Self {
        let mut text = String::new();
        write_ws(g, &mut text);
        let depth = below(g, 5);
        write_value(g, depth, &mut text);
        write_ws(g, &mut text);
        Doc(text)
    }
}

/// Edits at char boundaries, biased toward bytes that matter to JSON.
#[derive(Clone, Debug)]
struct Mutation {
    at: usize,
    op: u8,
    insert: &'static str,
}

impl Arbitrary for Mutation {
    fn arbitrary(g: &mut Gen) -> Self {
        const PIECES: &[&str] = &[
            "{", "}", "[", "]", ",", ":", "\"", "\\", "0", "1", "-", "+", ".", "e", "E", "t", "n",
            "u", "x", " ", "\n", "\u{1}", "é", "\\u", "\\ud800", "\\udc00", "tru", "nul", "00",
        ];
        Mutation {
            at: usize::arbitrary(g),
            op: u8::arbitrary(g) % 3,
            insert: pick::<&str>(g, PIECES),
        }
    }
}

fn mutate(text: &str, mutations: &[Mutation]) -> String {
    let mut text = text.to_owned();
    for m in mutations {
        let boundaries: Vec<usize> = text
            .char_indices()
            .map(|(i, _)| i)
            .chain([text.len()])
            .collect();
        let at = boundaries[m.at % boundaries.len()];
        let next = boundaries.iter().copied().find(|&b| b > at);
        match (m.op, next) {
            (0, Some(next)) => text.replace_range(at..next, ""),
            (1, Some(next)) => text.replace_range(at..next, m.insert),
            _ => text.insert_str(at, m.insert),
        }
    }
    text
}

fn json_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

#[test]
fn generated_documents_are_accepted_and_read_back_like_serde_json() {
    fn property(doc: Doc) -> TestResult {
        let expected: Value = match serde_json::from_str(&doc.0) {
            Ok(value) => value,
            Err(e) if e.to_string().starts_with("number out of range") => {
                return TestResult::discard();
            }
            Err(e) => panic!("the generator wrote invalid JSON {:?}: {e}", doc.0),
        };
        let raw = match parse_value(&doc.0) {
            Ok(raw) => raw,
            Err(e) => return TestResult::error(format!("{:?} rejected: {e}", doc.0)),
        };
        assert_eq!(raw.get(), doc.0.trim_matches(json_ws));
        assert_eq!(to_value(raw), expected, "{:?}", doc.0);
        TestResult::passed()
    }
    check(property as fn(Doc) -> TestResult);
}

#[test]
fn mutated_documents_get_the_verdict_of_serde_json() {
    fn property(doc: Doc, mutations: Vec<Mutation>) -> TestResult {
        let text = mutate(&doc.0, &mutations[..mutations.len().min(3)]);
        let Some(expected) = serde_verdict(&text) else {
            return TestResult::discard();
        };
        let verdict = parse_value(&text);
        if verdict.is_ok() != expected {
            return TestResult::error(format!(
                "{text:?}: scanner {verdict:?}, serde_json {expected}"
            ));
        }
        if let Ok(raw) = verdict {
            assert_eq!(
                to_value(raw),
                serde_json::from_str::<Value>(&text).expect("accepted")
            );
        }
        TestResult::passed()
    }
    // Most mutations land in strings; enough runs to hit numbers and literals often.
    check_n(20_000, property as fn(Doc, Vec<Mutation>) -> TestResult);
}

fn never_panics(text: &str) -> TestResult {
    let verdict = parse_value(text);
    let _ = scan(text);
    let Some(expected) = serde_verdict(text) else {
        return TestResult::discard();
    };
    if verdict.is_ok() != expected {
        return TestResult::error(format!(
            "{text:?}: scanner {verdict:?}, serde_json {expected}"
        ));
    }
    if let Ok(raw) = verdict {
        to_value(raw);
    }
    TestResult::passed()
}

#[test]
fn arbitrary_strings_never_panic_and_match_serde_json() {
    fn property(text: String) -> TestResult {
        never_panics(&text)
    }
    check(property as fn(String) -> TestResult);
}

#[test]
fn arbitrary_bytes_never_panic_and_match_serde_json() {
    fn property(bytes: Vec<u8>, prefix: bool) -> TestResult {
        let text = String::from_utf8_lossy(&bytes);
        let text = if prefix {
            format!(r#"{{"jsonrpc":"2.0","id":1,{text}"#)
        } else {
            text.into_owned()
        };
        never_panics(&text)
    }
    check(property as fn(Vec<u8>, bool) -> TestResult);
}

#[test]
fn strings_decode_like_serde_json() {
    fn property(s: String, tail: Vec<u8>) -> bool {
        // Any string, with a few characters that need escaping mixed in.
        let s: String = s
            .chars()
            .chain(tail.iter().map(|&b| char::from(b % 0x30)))
            .collect();
        let mut g = Gen::new(8);
        let mut randomly_escaped = String::new();
        write_string(&mut g, &s, &mut randomly_escaped);
        for literal in [
            serde_json::to_string(&s).expect("serialises"),
            randomly_escaped,
        ] {
            let raw = parse_value(&literal).expect("valid");
            let decoded: String = serde_json::from_str(&literal).expect("serde_json reads it");
            assert_eq!(decoded, s);
            let js = raw.as_str().expect("a string");
            assert_eq!(js.to_cow(), Cow::Borrowed(s.as_str()), "{literal}");
            assert!(js.eq_str(&s));
            assert!(!js.eq_str(&format!("{s}x")));
            assert_eq!(js.chars().collect::<String>(), s);
            assert_eq!(js.decoded_len(), s.len());
            let mut buf = vec![0u8; s.len()];
            assert_eq!(js.unescape_into(&mut buf), Ok(s.as_str()));
            if !s.is_empty() {
                let mut short = vec![0u8; s.len() - 1];
                assert!(js.unescape_into(&mut short).is_err());
            }
        }
        true
    }
    check(property as fn(String, Vec<u8>) -> bool);
}

/// One envelope member as written, or absent.
#[derive(Clone, Debug)]
struct Envelope {
    members: Vec<(&'static str, String)>,
}

impl Arbitrary for Envelope {
    fn arbitrary(g: &mut Gen) -> Self {
        let any = |g: &mut Gen| {
            let mut text = String::new();
            write_value(g, 2, &mut text);
            text
        };
        let params = any(g);
        let result = any(g);
        let data = any(g);
        let choices: [(&'static str, Vec<String>); 5] = [
            (
                "jsonrpc",
                ["\"2.0\"", "\"2.0\"", "\"2.0\"", "\"1.0\"", "2.0", "null"]
                    .map(String::from)
                    .into(),
            ),
            (
                "id",
                [
                    "1",
                    "0",
                    "-7",
                    "123456789012345678901234567890",
                    "\"a\\\"b\"",
                    "\"\"",
                    "null",
                    "1.5",
                    "1e2",
                    "true",
                    "[]",
                    "{}",
                ]
                .map(String::from)
                .into(),
            ),
            (
                "method",
                ["\"m\"", "\"session/new\"", "\"\"", "5", "null"]
                    .map(String::from)
                    .into(),
            ),
            ("params", vec![params]),
            ("result", vec![result]),
        ];
        let mut members = Vec::new();
        for (key, values) in choices {
            if below(g, 4) != 0 {
                members.push((key, pick(g, &values).clone()));
            }
        }
        if below(g, 3) == 0 {
            let error = pick(
                g,
                &[
                    format!(r#"{{"code":-32601,"message":"no","data":{data}}}"#),
                    r#"{"code":1.5,"message":"no"}"#.to_owned(),
                    r#"{"code":-32000}"#.to_owned(),
                    r#""oops""#.to_owned(),
                ],
            )
            .clone();
            members.push(("error", error));
        }
        members.push(("extra", any(g)));
        // Member order does not matter.
        for i in (1..members.len()).rev() {
            members.swap(i, below(g, i + 1));
        }
        Envelope { members }
    }
}

/// What the envelope rules (R-ENV-*, R-ID-*) say about a line, computed from serde_json's `Value`:
/// `Ok(kind and id)` for accepted messages, `Err((code, id))` for rejections.
fn model(line: &str) -> Result<(&'static str, String), (i32, String)> {
    let Ok(value) = serde_json::from_str::<Value>(line) else {
        return Err((-32700, "null".into()));
    };
    let Value::Object(object) = value else {
        return Err((-32600, "null".into()));
    };
    let id = match object.get("id") {
        None | Some(Value::Null) => "null".to_owned(),
        Some(Value::String(_)) => serde_json::to_string(&object["id"]).expect("serialises"),
        Some(Value::Number(_)) => {
            // Integers only, as written (serde_json's Value loses big ones, so re-read the line).
            let digits = serde_json::to_string(&object["id"]).expect("serialises");
            if digits.contains(['.', 'e', 'E']) {
                return Err((-32600, "null".into()));
            }
            digits
        }
        Some(_) => return Err((-32600, "null".into())),
    };
    if object.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return Err((-32600, id));
    }
    match object.get("method") {
        Some(Value::String(m)) if !m.is_empty() => Ok((
            if id == "null" {
                "notification"
            } else {
                "request"
            },
            id,
        )),
        Some(_) => Err((-32600, id)),
        None if object.contains_key("result") || object.contains_key("error") => {
            Ok(("response", id))
        }
        None => Err((-32600, id)),
    }
}

#[test]
fn envelopes_are_classified_by_the_rules() {
    fn property(envelope: Envelope) -> TestResult {
        let body: Vec<String> = envelope
            .members
            .iter()
            .map(|(k, v)| format!("\"{k}\":{v}"))
            .collect();
        let line = format!("{{{}}}", body.join(","));
        // serde_json reads big integers as floats, so compare ids only where it keeps them.
        if line.contains("123456789012345678901234567890") {
            return TestResult::discard();
        }
        let id_text = |id: Id<'_>| match id {
            Id::Int(d) => d.to_owned(),
            Id::Str(s) => serde_json::to_string(&s.to_cow()).expect("serialises"),
            Id::Null => "null".to_owned(),
        };
        let got = match scan(&line) {
            Ok(Message::Request(r)) => Ok(("request", id_text(r.id))),
            Ok(Message::Notification(_)) => Ok(("notification", "null".to_owned())),
            Ok(Message::Response(r)) => {
                // Only an `error` member (alone or next to `result`) can be malformed.
                if let Outcome::Malformed(_) = r.outcome {
                    let has_error = envelope.members.iter().any(|(k, _)| *k == "error");
                    assert!(has_error, "{line}: malformed without an error member");
                }
                Ok(("response", id_text(r.id)))
            }
            Err(rejection) => Err((rejection.code.0, id_text(rejection.id))),
        };
        let expected = model(&line);
        if got != expected {
            return TestResult::error(format!("{line}: scan {got:?}, rules {expected:?}"));
        }
        TestResult::passed()
    }
    check(property as fn(Envelope) -> TestResult);
}
