//! The validating JSON scanner (`wire::json`): every error a peer can trigger, with its exact
//! text, and the accessors over validated values.

use acp_core::wire::json::{
    BufferTooSmall, Fragment, JsonError, JsonErrorKind, MAX_DEPTH, ValueKind, parse_value,
};
use acp_core::wire::{JsonStr, RawValue};
use pretty_assertions::assert_eq;

fn error(text: &str) -> String {
    match parse_value(text) {
        Ok(value) => panic!("{text:?} was accepted as {value:?}"),
        Err(error) => error.to_string(),
    }
}

fn value(text: &str) -> RawValue<'_> {
    parse_value(text).unwrap_or_else(|e| panic!("{text:?} was rejected: {e}"))
}

fn string(text: &str) -> JsonStr<'_> {
    value(text).as_str().expect("a string")
}

#[test]
fn empty_and_blank_input_is_an_unexpected_end() {
    assert_eq!(error(""), "unexpected end of input");
    assert_eq!(error(" \t\r\n"), "unexpected end of input");
}

#[test]
fn a_value_is_required_at_the_start() {
    assert_eq!(error("x"), "expected value at byte 0");
    assert_eq!(error("  }"), "expected value at byte 2");
    assert_eq!(error("True"), "expected value at byte 0");
    assert_eq!(error("'a'"), "expected value at byte 0");
}

#[test]
fn anything_after_the_value_is_trailing() {
    assert_eq!(error("1 2"), "trailing characters at byte 2");
    assert_eq!(error(r#"{"a":1} x"#), "trailing characters at byte 8");
    assert_eq!(error("[]]"), "trailing characters at byte 2");
    assert_eq!(error("null\u{0}"), "trailing characters at byte 4");
}

#[test]
fn surrounding_whitespace_is_trimmed_from_the_span() {
    let raw = value(" \t\r\n {\"a\" : [ 1 , 2 ] } \n");
    assert_eq!(raw.get(), "{\"a\" : [ 1 , 2 ] }");
    assert_eq!(value("  7 ").get(), "7");
}

#[test]
fn error_offsets_are_bytes_of_the_whole_text() {
    let e = parse_value("  [1,x]").unwrap_err();
    assert_eq!(
        e,
        JsonError {
            kind: JsonErrorKind::ExpectedValue,
            offset: 5
        }
    );
}

#[test]
fn escapes_are_checked() {
    assert_eq!(error(r#""ab\qc""#), "invalid escape at byte 3");
    assert_eq!(error(r#""a\u12G4""#), "invalid escape at byte 2");
    assert_eq!(error(r#""a\x41""#), "invalid escape at byte 2");
    assert_eq!(error(r#""a\U0041""#), "invalid escape at byte 2");
    assert_eq!(error(r#""a\"#), "unexpected end of input");
    assert_eq!(error(r#""a\u00"#), "unexpected end of input");
    for ok in [
        r#""\"\\\/\b\f\n\r\t""#,
        r#""\u0041\u00e9\u4E2D""#,
        r#""\ud83d\ude80""#,
    ] {
        value(ok);
    }
}

#[test]
fn lone_surrogates_are_rejected() {
    assert_eq!(error(r#""\ud800""#), "unpaired surrogate escape at byte 1");
    assert_eq!(
        error(r#""x\uD800\u0041""#),
        "unpaired surrogate escape at byte 2"
    );
    assert_eq!(
        error(r#""\ud800\ud800""#),
        "unpaired surrogate escape at byte 1"
    );
    assert_eq!(error(r#""\udc00""#), "unpaired surrogate escape at byte 1");
    assert_eq!(
        error(r#""\ude80\ud83d""#),
        "unpaired surrogate escape at byte 1"
    );
    assert_eq!(
        error(r#""\ud800\n""#),
        "unpaired surrogate escape at byte 1"
    );
    assert_eq!(error(r#""\ud800x""#), "unpaired surrogate escape at byte 1");
    assert_eq!(error(r#""\ud800"#), "unexpected end of input");
    assert_eq!(error(r#""\ud800\u12"#), "unexpected end of input");
    assert_eq!(error(r#""\ud800\u12x4""#), "invalid escape at byte 7");
}

#[test]
fn raw_control_characters_in_strings_are_rejected() {
    assert_eq!(error("\"a\u{1}\""), "control character in string at byte 2");
    assert_eq!(
        error("\"tab\there\""),
        "control character in string at byte 4"
    );
    assert_eq!(
        error("\"line\nbreak\""),
        "control character in string at byte 5"
    );
    assert_eq!(error("\"\u{0}\""), "control character in string at byte 1");
    // Past the first 16-byte block, so the block scanner finds it.
    let long = format!("\"{}\u{1f}\"", "é".repeat(20));
    assert_eq!(error(&long), "control character in string at byte 41");
    // DEL and non-ASCII are fine.
    value("\"\u{7f}é中🚀\"");
}

#[test]
fn unterminated_strings_end_unexpectedly() {
    assert_eq!(error("\"abc"), "unexpected end of input");
    assert_eq!(
        error(&format!("\"{}", "a".repeat(100))),
        "unexpected end of input"
    );
}

#[test]
fn numbers_follow_the_grammar() {
    for ok in [
        "0",
        "-0",
        "7",
        "-12",
        "1.5",
        "1.5e-3",
        "1E+10",
        "0e0",
        "-0.0",
        "123456789012345678901234567890",
    ] {
        assert_eq!(value(ok).kind(), ValueKind::Number, "{ok}");
    }
    assert_eq!(error("01"), "trailing characters at byte 1");
    assert_eq!(error("-01"), "trailing characters at byte 2");
    assert_eq!(error("[01]"), "expected ',' or ']' at byte 2");
    assert_eq!(error("-"), "unexpected end of input");
    assert_eq!(error("-a"), "invalid number at byte 1");
    assert_eq!(error("+1"), "expected value at byte 0");
    assert_eq!(error(".5"), "expected value at byte 0");
    assert_eq!(error("1."), "unexpected end of input");
    assert_eq!(error("[1.]"), "invalid number at byte 3");
    assert_eq!(error("1.e5"), "invalid number at byte 2");
    assert_eq!(error("1e"), "unexpected end of input");
    assert_eq!(error("1e+"), "unexpected end of input");
    assert_eq!(error("1ex"), "invalid number at byte 2");
    assert_eq!(error("NaN"), "expected value at byte 0");
    assert_eq!(error("-Infinity"), "invalid number at byte 1");
}

#[test]
fn literals_are_exact() {
    assert_eq!(value("true").as_bool(), Some(true));
    assert_eq!(value("false").as_bool(), Some(false));
    assert!(value("null").is_null());
    assert_eq!(error("tru"), "unexpected end of input");
    assert_eq!(error("trux"), "invalid literal at byte 0");
    assert_eq!(error("[nulx]"), "invalid literal at byte 1");
    assert_eq!(error("fals"), "unexpected end of input");
    assert_eq!(error("nulll"), "trailing characters at byte 4");
}

#[test]
fn objects_and_arrays_are_checked() {
    assert_eq!(error("{"), "unexpected end of input");
    assert_eq!(error("["), "unexpected end of input");
    assert_eq!(error(r#"{"a""#), "unexpected end of input");
    assert_eq!(error(r#"{"a":"#), "unexpected end of input");
    assert_eq!(error(r#"{"a":1"#), "unexpected end of input");
    assert_eq!(error("[1,"), "unexpected end of input");
    assert_eq!(error("{1:2}"), "expected string key at byte 1");
    assert_eq!(error("{'a':2}"), "expected string key at byte 1");
    assert_eq!(error(r#"{"a" 1}"#), "expected ':' at byte 5");
    assert_eq!(error(r#"{"a":1 "b":2}"#), "expected ',' or '}' at byte 7");
    assert_eq!(error(r#"{"a":1]"#), "expected ',' or '}' at byte 6");
    assert_eq!(error(r#"{"a":1,}"#), "expected string key at byte 7");
    assert_eq!(error(r#"{"a":}"#), "expected value at byte 5");
    assert_eq!(error("[1,]"), "expected value at byte 3");
    assert_eq!(error("[,1]"), "expected value at byte 1");
    assert_eq!(error("[1 2]"), "expected ',' or ']' at byte 3");
    assert_eq!(error("[1}"), "expected ',' or ']' at byte 2");
    for ok in [
        "{}",
        "[]",
        "{ }",
        "[ ]",
        r#"{"":{}}"#,
        "[[],[[]],{}]",
        r#"{"a":[1,{"b":null}]}"#,
    ] {
        value(ok);
    }
}

fn nested(depth: usize, open: &str, close: &str) -> String {
    format!("{}{}", open.repeat(depth), close.repeat(depth))
}

#[test]
fn nesting_is_limited_to_128() {
    assert_eq!(MAX_DEPTH, 128);
    value(&nested(128, "[", "]"));
    value(&nested(128, "{\"a\":", "}").replace("{\"a\":}", "{}"));
    assert_eq!(
        error(&nested(129, "[", "]")),
        "nesting deeper than 128 at byte 128"
    );
    // The innermost container counts even when empty.
    let objects = format!("{}{{}}{}", "{\"a\":".repeat(128), "}".repeat(128));
    assert_eq!(error(&objects), "nesting deeper than 128 at byte 640");
}

#[test]
fn very_deep_input_does_not_overflow_the_stack() {
    let deep = "[".repeat(1_000_000);
    assert_eq!(error(&deep), "nesting deeper than 128 at byte 128");
    let deep = "{\"a\":".repeat(200_000);
    assert_eq!(error(&deep), "nesting deeper than 128 at byte 640");
}

#[test]
fn kinds_come_from_the_first_byte() {
    let kinds = [
        ("{}", ValueKind::Object),
        ("[1]", ValueKind::Array),
        (r#""s""#, ValueKind::String),
        ("-1", ValueKind::Number),
        ("true", ValueKind::Bool),
        ("false", ValueKind::Bool),
        ("null", ValueKind::Null),
    ];
    for (text, kind) in kinds {
        assert_eq!(value(text).kind(), kind, "{text}");
    }
}

#[test]
fn integers_convert_only_when_they_are_integers_that_fit() {
    assert_eq!(value("42").as_i64(), Some(42));
    assert_eq!(value("-1").as_i64(), Some(-1));
    assert_eq!(value("-1").as_u64(), None);
    assert_eq!(value("-0").as_i64(), Some(0));
    assert_eq!(value("9223372036854775807").as_i64(), Some(i64::MAX));
    assert_eq!(value("9223372036854775808").as_i64(), None);
    assert_eq!(value("9223372036854775808").as_u64(), Some(1 << 63));
    assert_eq!(value("18446744073709551616").as_u64(), None);
    assert_eq!(value("1.0").as_i64(), None);
    assert_eq!(value("1e3").as_u64(), None);
    assert_eq!(value(r#""1""#).as_i64(), None);
    assert_eq!(value("true").as_i64(), None);
    assert_eq!(value("1").as_bool(), None);
    assert!(!value("0").is_null());
}

#[test]
fn fields_walk_the_top_level_of_an_object() {
    let object = value(r#"{ "a" : 1 , "b":{"c":[1,"}]"]},"d":"x\"y","e":[],"f":null }"#);
    let fields: Vec<(&str, &str)> = object.fields().map(|(k, v)| (k.raw(), v.get())).collect();
    assert_eq!(
        fields,
        [
            ("a", "1"),
            ("b", r#"{"c":[1,"}]"]}"#),
            ("d", r#""x\"y""#),
            ("e", "[]"),
            ("f", "null")
        ]
    );
    assert_eq!(value("{}").fields().count(), 0);
    assert_eq!(value("[1]").fields().count(), 0);
    assert_eq!(value(r#""{\"a\":1}""#).fields().count(), 0);
}

#[test]
fn get_field_compares_decoded_keys_and_takes_the_first() {
    let object = value(r#"{"\u0061":1,"a":2,"x":{"sessionId":"s"},"k\"":3}"#);
    assert_eq!(object.get_field("a").map(|v| v.get()), Some("1"));
    assert_eq!(object.get_field("k\"").map(|v| v.get()), Some("3"));
    assert_eq!(
        object.get_field("sessionId"),
        None,
        "nested keys are not top-level"
    );
    assert_eq!(object.get_field("b"), None);
    assert_eq!(value("[\"a\"]").get_field("a"), None);
}

#[test]
fn elements_walk_the_top_level_of_an_array() {
    let array = value(r#"[1, "a,]", {"x":[2]} ,[],null,-2.5e3]"#);
    let elements: Vec<&str> = array.elements().map(|v| v.get()).collect();
    assert_eq!(
        elements,
        ["1", r#""a,]""#, r#"{"x":[2]}"#, "[]", "null", "-2.5e3"]
    );
    assert_eq!(value("[]").elements().count(), 0);
    assert_eq!(value("[ ]").elements().count(), 0);
    assert_eq!(value(r#"{"a":1}"#).elements().count(), 0);
}

#[test]
fn plain_strings_borrow_the_line() {
    let s = string(r#""hello é""#);
    assert!(!s.has_escapes());
    assert_eq!(s.as_plain(), Some("hello é"));
    assert!(s.eq_str("hello é"));
    assert_eq!(s.decoded_len(), "hello é".len());
}

#[test]
fn fragments_split_text_and_escapes() {
    let s = string(r#""a\nb\u00e9c\ud83d\ude80\\""#);
    assert!(s.has_escapes());
    let fragments: Vec<Fragment<'_>> = s.fragments().collect();
    assert_eq!(
        fragments,
        [
            Fragment::Text("a"),
            Fragment::Char('\n'),
            Fragment::Text("b"),
            Fragment::Char('é'),
            Fragment::Text("c"),
            Fragment::Char('🚀'),
            Fragment::Char('\\'),
        ]
    );
    assert_eq!(s.chars().collect::<String>(), "a\nbéc🚀\\");
    assert_eq!(s.decoded_len(), "a\nbéc🚀\\".len());
}

#[test]
fn eq_str_compares_decoded_text() {
    let s = string(r#""x\"y\u0041""#);
    assert!(s.eq_str("x\"yA"));
    assert!(!s.eq_str("x\"y"));
    assert!(!s.eq_str("x\"yAz"));
    assert!(!s.eq_str(r#"x\"y\u0041"#));
    assert!(string(r#""""#).eq_str(""));
    assert!(!string(r#""""#).eq_str("a"));
}

#[test]
fn unescape_into_needs_room_for_the_decoded_text() {
    let s = string(r#""tab\there \u4e2d""#);
    let mut exact = [0u8; 12];
    assert_eq!(s.unescape_into(&mut exact), Ok("tab\there 中"));
    let mut short = [0u8; 11];
    assert_eq!(
        s.unescape_into(&mut short),
        Err(BufferTooSmall { needed: 12 })
    );
    assert_eq!(
        BufferTooSmall { needed: 12 }.to_string(),
        "buffer too small: the decoded string needs 12 bytes"
    );
    let plain = string(r#""abc""#);
    assert_eq!(plain.unescape_into(&mut [0u8; 3]), Ok("abc"));
    assert_eq!(
        plain.unescape_into(&mut [0u8; 2]),
        Err(BufferTooSmall { needed: 3 })
    );
}

#[cfg(feature = "alloc")]
#[test]
fn to_cow_borrows_plain_strings_and_owns_decoded_ones() {
    use std::borrow::Cow;
    assert!(matches!(
        string(r#""plain""#).to_cow(),
        Cow::Borrowed("plain")
    ));
    let decoded = string(r#""a\/b\r\n""#).to_cow();
    assert!(matches!(&decoded, Cow::Owned(_)));
    assert_eq!(decoded, "a/b\r\n");
}
