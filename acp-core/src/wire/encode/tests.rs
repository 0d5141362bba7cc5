//! Verbatim passthrough of the borrowed wire types (their constructors are crate-private, so
//! these tests live inside the crate).

extern crate std;

use std::string::{String, ToString};
use std::vec::Vec;

use serde::Serialize;

use super::*;
use crate::wire::{ErrorCode, Id, JsonStr, RawValue};

fn ours<T: Serialize + ?Sized>(value: &T) -> String {
    String::from_utf8(to_vec(value).unwrap()).unwrap()
}

const RAW: RawValue<'static> = RawValue::new_unchecked("{ \"a\" : [1, 2.50, \"\\u00e9\"] }");
const ESCAPED: JsonStr<'static> = JsonStr::new_unchecked(r"a\u00e9\n\/\ud83d\ude80", true);
const PLAIN: JsonStr<'static> = JsonStr::new_unchecked("plain é", false);

#[derive(Serialize)]
struct Holder<'a> {
    raw: RawValue<'a>,
    text: JsonStr<'a>,
    id: Id<'a>,
}

#[test]
fn raw_values_and_escaped_strings_are_written_verbatim() {
    let holder = Holder {
        raw: RAW,
        text: ESCAPED,
        id: Id::Str(ESCAPED),
    };
    assert_eq!(
        ours(&holder),
        r#"{"raw":{ "a" : [1, 2.50, "\u00e9"] },"text":"a\u00e9\n\/\ud83d\ude80","id":"a\u00e9\n\/\ud83d\ude80"}"#
    );
    assert_eq!(ours(&PLAIN), "\"plain é\"");
}

#[test]
fn raw_values_pass_through_every_message_writer() {
    let mut out = Vec::new();
    write_notification(&mut out, "session/update", Some(&RAW)).unwrap();
    write_request(&mut out, Id::Str(ESCAPED), "m", Some(&RAW)).unwrap();
    write_result(&mut out, Id::Str(PLAIN), &RAW).unwrap();
    write_error(&mut out, Id::Int("1"), ErrorCode(-1), "e", Some(&RAW)).unwrap();
    let raw = RAW.get();
    let expected = std::format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{raw}}}\n\
         {{\"jsonrpc\":\"2.0\",\"id\":\"a\\u00e9\\n\\/\\ud83d\\ude80\",\"method\":\"m\",\"params\":{raw}}}\n\
         {{\"jsonrpc\":\"2.0\",\"id\":\"plain é\",\"result\":{raw}}}\n\
         {{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{{\"code\":-1,\"message\":\"e\",\"data\":{raw}}}}}\n"
    );
    assert_eq!(String::from_utf8(out).unwrap(), expected);
}

#[test]
fn string_ids_are_echoed_exactly() {
    for (raw, escaped) in [
        ("", false),
        ("x", false),
        (r#"\"q\"\\"#, true),
        ("中文", false),
    ] {
        let mut out = Vec::new();
        write_result(&mut out, Id::Str(JsonStr::new_unchecked(raw, escaped)), &()).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            std::format!("{{\"jsonrpc\":\"2.0\",\"id\":\"{raw}\",\"result\":null}}\n")
        );
    }
}

/// Key/value pairs serialized as a map, for keys that are not `Ord`.
struct PairsAsMap<'a, K, V>(&'a [(K, V)]);

impl<K: Serialize, V: Serialize> Serialize for PairsAsMap<'_, K, V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

#[test]
fn an_escaped_string_is_verbatim_as_a_map_key_too() {
    let map = PairsAsMap(&[(ESCAPED, 1), (PLAIN, 2)]);
    let text = ours(&map);
    assert!(text.contains(r#""a\u00e9\n\/\ud83d\ude80":1"#), "{text}");
    assert!(text.contains(r#""plain é":2"#), "{text}");
}

#[test]
fn a_raw_value_cannot_be_a_map_key() {
    let map = PairsAsMap(&[(RAW, 1)]);
    assert_eq!(
        to_vec(&map).unwrap_err().to_string(),
        "key must be a string"
    );
}

#[test]
fn serde_json_with_raw_value_writes_raw_values_verbatim_too() {
    assert_eq!(serde_json::to_string(&RAW).unwrap(), RAW.get());
    assert_eq!(
        serde_json::to_value(RAW).unwrap(),
        serde_json::json!({"a": [1, 2.5, "é"]})
    );
}

#[test]
fn other_serializers_get_decoded_strings() {
    assert_eq!(serde_json::to_string(&ESCAPED).unwrap(), "\"aé\\n/🚀\"");
    assert_eq!(serde_json::to_string(&PLAIN).unwrap(), "\"plain é\"");
    assert_eq!(
        serde_json::to_value(Id::Str(ESCAPED)).unwrap(),
        serde_json::json!("aé\n/🚀")
    );
}

#[test]
fn integer_ids_keep_their_digits_in_any_serializer() {
    let digits = [
        "0",
        "-1",
        "9007199254740993",
        "18446744073709551616",
        "-170141183460469231731687303715884105728",
        "340282366920938463463374607431768211456",
        "123456789012345678901234567890123456789012345678901234567890",
        "-0",
    ];
    for digits in digits {
        assert_eq!(ours(&Id::Int(digits)), digits);
        assert_eq!(serde_json::to_string(&Id::Int(digits)).unwrap(), digits);
    }
    assert_eq!(ours(&Id::Null), "null");
    assert_eq!(serde_json::to_string(&Id::Null).unwrap(), "null");
    // A number a generic serializer can see: an integer, not a string.
    assert_eq!(
        serde_json::to_value(Id::Int("42")).unwrap(),
        serde_json::json!(42)
    );
}

/// Something that uses the raw-value protocol with a field that is not a string.
struct BadRaw;

impl Serialize for BadRaw {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut raw = s.serialize_struct(super::ser::RAW_VALUE_TOKEN, 1)?;
        raw.serialize_field(super::ser::RAW_VALUE_TOKEN, &5)?;
        raw.end()
    }
}

#[test]
fn the_raw_value_protocol_refuses_anything_but_a_string() {
    assert_eq!(
        to_vec(&BadRaw).unwrap_err().to_string(),
        "a raw JSON value must be handed over as one string"
    );
}

#[test]
fn slice_overflow_inside_a_raw_value_is_reported() {
    let mut buf = [0u8; 10];
    assert!(matches!(
        to_slice(&mut buf, &RAW),
        Err(EncodeError::Sink(BufferFull))
    ));
    let mut buf = [0u8; 10];
    assert!(matches!(
        to_slice(&mut buf, &ESCAPED),
        Err(EncodeError::Sink(BufferFull))
    ));
}
