//! The serializer against serde_json: byte-identical output for the whole JSON data model.
#![cfg(feature = "std")]

use std::collections::{BTreeMap, HashMap};

use acp_core::wire::encode::{to_sink, to_vec};
use pretty_assertions::assert_eq;
use quickcheck::{Arbitrary, Gen, QuickCheck};
use serde::Serialize;
use serde_json::{Map, Number, Value};

/// Encodes with both serializers and demands the same bytes.
fn assert_same<T: Serialize + ?Sized + std::fmt::Debug>(value: &T) {
    let ours = to_vec(value).unwrap();
    let theirs = serde_json::to_vec(value).unwrap();
    assert_eq!(
        String::from_utf8(ours).unwrap(),
        String::from_utf8(theirs).unwrap(),
        "{value:?}"
    );
}

/// Characters that exercise every escaping rule, mixed into generated strings.
const TRICKY: &[char] = &[
    '\0', '\u{1}', '\u{8}', '\t', '\n', '\u{b}', '\u{c}', '\r', '\u{1f}', '"', '\\', '/', ' ',
    '\u{7f}', 'é', '中', '🚀', '\u{2028}', '\u{fffd}', 'a', 'Z', '0',
];

fn tricky_string(g: &mut Gen) -> String {
    let len = usize::arbitrary(g) % 40;
    (0..len)
        .map(|_| {
            if bool::arbitrary(g) {
                *g.choose(TRICKY).unwrap()
            } else {
                char::arbitrary(g)
            }
        })
        .collect()
}

fn number(g: &mut Gen) -> Number {
    match u8::arbitrary(g) % 4 {
        0 => Number::from(u64::arbitrary(g)),
        1 => Number::from(i64::arbitrary(g)),
        2 => Number::from_f64(f64::from_bits(u64::arbitrary(g))).unwrap_or(Number::from(0)),
        _ => Number::from_f64(f64::from(i32::arbitrary(g)) / 8.0).unwrap(),
    }
}

fn value(g: &mut Gen, depth: u32) -> Value {
    let kinds = if depth == 0 { 5 } else { 7 };
    match u8::arbitrary(g) % kinds {
        0 => Value::Null,
        1 => Value::Bool(bool::arbitrary(g)),
        2 => Value::Number(number(g)),
        3 | 4 => Value::String(tricky_string(g)),
        5 => Value::Array(
            (0..usize::arbitrary(g) % 5)
                .map(|_| value(g, depth - 1))
                .collect(),
        ),
        _ => Value::Object(
            (0..usize::arbitrary(g) % 5)
                .map(|_| (tricky_string(g), value(g, depth - 1)))
                .collect::<Map<_, _>>(),
        ),
    }
}

#[derive(Clone, Debug)]
struct AnyValue(Value);

impl Arbitrary for AnyValue {
    fn arbitrary(g: &mut Gen) -> Self {
        AnyValue(value(g, 4))
    }
}

#[test]
fn generated_json_values_encode_like_serde_json() {
    fn property(v: AnyValue) -> bool {
        to_vec(&v.0).unwrap() == serde_json::to_vec(&v.0).unwrap()
    }
    QuickCheck::new()
        .tests(2000)
        .quickcheck(property as fn(AnyValue) -> bool);
}

#[test]
fn encoded_values_never_hold_a_control_byte_and_parse_back() {
    // Equality after parsing is not asked for: serde_json's default float parser may miss the
    // last bit. The strings, which is what escaping is about, must come back exactly.
    fn strings(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(items) => items.iter().for_each(|i| strings(i, out)),
            Value::Object(map) => map.iter().for_each(|(k, i)| {
                out.push(k.clone());
                strings(i, out)
            }),
            _ => {}
        }
    }
    fn property(v: AnyValue) -> bool {
        let out = to_vec(&v.0).unwrap();
        let back: Value = serde_json::from_slice(&out).unwrap();
        let (mut before, mut after) = (Vec::new(), Vec::new());
        strings(&v.0, &mut before);
        strings(&back, &mut after);
        !out.iter().any(|&b| b < 0x20) && before == after
    }
    QuickCheck::new()
        .tests(1000)
        .quickcheck(property as fn(AnyValue) -> bool);
}

#[test]
fn every_float_bit_pattern_encodes_like_serde_json() {
    fn property(bits: u64, bits32: u32) -> bool {
        let (double, single) = (f64::from_bits(bits), f32::from_bits(bits32));
        to_vec(&double).unwrap() == serde_json::to_vec(&double).unwrap()
            && to_vec(&single).unwrap() == serde_json::to_vec(&single).unwrap()
    }
    QuickCheck::new()
        .tests(20_000)
        .quickcheck(property as fn(u64, u32) -> bool);
}

#[test]
fn round_and_edge_floats_encode_like_serde_json() {
    let mut doubles = vec![
        0.0,
        -0.0,
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        f64::EPSILON,
        5e-324,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.1,
        1.0 / 3.0,
        123456.789,
    ];
    for exp in -30..=30 {
        doubles.push(10f64.powi(exp));
        doubles.push(1.5 * 10f64.powi(exp));
        doubles.push(-1234.5678 * 10f64.powi(exp));
    }
    for d in doubles {
        assert_same(&d);
        assert_same(&(d as f32));
    }
}

#[test]
fn integers_of_every_width_encode_like_serde_json() {
    assert_same(&(i8::MIN, i8::MAX, u8::MAX, i16::MIN, u16::MAX));
    assert_same(&(i32::MIN, u32::MAX, i64::MIN, i64::MAX, u64::MAX));
    assert_same(&(i128::MIN, i128::MAX, u128::MAX, 0u128, -1i128));
    fn property(a: i64, b: u64, c: i128, d: u128) -> bool {
        to_vec(&(a, b, c, d)).unwrap() == serde_json::to_vec(&(a, b, c, d)).unwrap()
    }
    QuickCheck::new()
        .tests(5000)
        .quickcheck(property as fn(i64, u64, i128, u128) -> bool);
}

#[derive(Serialize, Clone, Debug)]
struct Unit;

#[derive(Serialize, Clone, Debug)]
struct Wrapper(String);

#[derive(Serialize, Clone, Debug)]
struct Pair(i8, char);

/// Serialized with `serialize_bytes`: an array of numbers in serde_json.
#[derive(Clone, Debug)]
struct Bytes(Vec<u8>);

impl Serialize for Bytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

#[derive(Serialize, Clone, Debug)]
enum Kind {
    Unit,
    Newtype(String),
    Tuple(i32, f64),
    Struct { a: u128, b: Option<String> },
}

#[derive(Serialize, Clone, Debug)]
#[serde(tag = "sessionUpdate", rename_all = "snake_case")]
enum Update {
    AgentMessageChunk {
        content: Content,
    },
    ToolCall {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
}

#[derive(Serialize, Clone, Debug)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Content {
    Text { text: String },
}

#[derive(Serialize, Clone, Debug)]
struct Record {
    #[serde(rename = "na\"me\n")]
    name: String,
    count: Option<u32>,
    tags: Vec<String>,
    kind: Kind,
    kinds: Vec<Kind>,
    attrs: BTreeMap<String, i64>,
    by_number: BTreeMap<i32, bool>,
    by_flag: BTreeMap<bool, u8>,
    by_char: BTreeMap<char, ()>,
    by_wide: BTreeMap<u128, Unit>,
    unit: Unit,
    wrapper: Wrapper,
    pair: Pair,
    bytes: Bytes,
    update: Update,
    #[serde(flatten)]
    extra: BTreeMap<String, Option<Wrapper>>,
    nested: Option<Box<Record>>,
}

fn kind(g: &mut Gen) -> Kind {
    match u8::arbitrary(g) % 4 {
        0 => Kind::Unit,
        1 => Kind::Newtype(tricky_string(g)),
        2 => Kind::Tuple(i32::arbitrary(g), f64::arbitrary(g)),
        _ => Kind::Struct {
            a: u128::arbitrary(g),
            b: Option::<()>::arbitrary(g).map(|()| tricky_string(g)),
        },
    }
}

fn record(g: &mut Gen, depth: u32) -> Record {
    let strings = |g: &mut Gen| -> Vec<String> {
        (0..usize::arbitrary(g) % 4)
            .map(|_| tricky_string(g))
            .collect()
    };
    Record {
        name: tricky_string(g),
        count: Option::arbitrary(g),
        tags: strings(g),
        kind: kind(g),
        kinds: (0..usize::arbitrary(g) % 3).map(|_| kind(g)).collect(),
        attrs: strings(g)
            .into_iter()
            .map(|k| (k, i64::arbitrary(g)))
            .collect(),
        by_number: BTreeMap::arbitrary(g),
        by_flag: BTreeMap::arbitrary(g),
        by_char: BTreeMap::arbitrary(g),
        by_wide: Vec::<u128>::arbitrary(g)
            .into_iter()
            .map(|k| (k, Unit))
            .collect(),
        unit: Unit,
        wrapper: Wrapper(tricky_string(g)),
        pair: Pair(i8::arbitrary(g), char::arbitrary(g)),
        bytes: Bytes(Vec::arbitrary(g)),
        update: if bool::arbitrary(g) {
            Update::AgentMessageChunk {
                content: Content::Text {
                    text: tricky_string(g),
                },
            }
        } else {
            Update::ToolCall {
                tool_call_id: tricky_string(g),
                title: Option::<()>::arbitrary(g).map(|()| tricky_string(g)),
            }
        },
        extra: strings(g)
            .into_iter()
            .map(|k| {
                (
                    format!("x{k}"),
                    Option::<()>::arbitrary(g).map(|()| Wrapper(k)),
                )
            })
            .collect(),
        nested: (depth > 0 && bool::arbitrary(g)).then(|| Box::new(record(g, depth - 1))),
    }
}

impl Arbitrary for Record {
    fn arbitrary(g: &mut Gen) -> Self {
        record(g, 2)
    }
}

#[test]
fn derived_structs_with_options_enums_and_maps_encode_like_serde_json() {
    fn property(r: Record) -> bool {
        to_vec(&r).unwrap() == serde_json::to_vec(&r).unwrap()
    }
    QuickCheck::new()
        .tests(500)
        .quickcheck(property as fn(Record) -> bool);
}

#[test]
fn every_data_model_shape_encodes_like_serde_json() {
    assert_same(&Unit);
    assert_same(&Wrapper("w".into()));
    assert_same(&Pair(-1, '"'));
    assert_same(&Bytes(vec![]));
    assert_same(&Bytes(vec![0, 1, 255]));
    assert_same(&Kind::Unit);
    assert_same(&Kind::Newtype("\n".into()));
    assert_same(&Kind::Tuple(-3, 0.5));
    assert_same(&Kind::Struct { a: 1, b: None });
    assert_same(&Vec::<u8>::new());
    assert_same(&BTreeMap::<String, u8>::new());
    assert_same(&((), Some(()), None::<()>, 'é', "é"));
    assert_same(&HashMap::from([(1u64, "one")]));
    assert_same(&BTreeMap::from([(1.5f64.to_bits(), 1)]));
    assert_same(&BTreeMap::from([(Some("k"), 1)]));
    assert_same(&BTreeMap::from([(Key::Alpha, 1)]));
}

/// Enum map keys: a unit variant is its name, a variant with data is refused.
#[derive(Serialize, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Key {
    Alpha,
    Beta(u8),
}

/// A map key that is a float: written as a string, refused when not finite (serde_json does
/// the same, with the same text).
struct FloatKey(f64);

impl Serialize for FloatKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry(&self.0, &0)?;
        map.end()
    }
}

#[test]
fn float_keys_are_strings_when_finite_and_refused_otherwise() {
    assert_eq!(to_vec(&FloatKey(1.5)).unwrap(), br#"{"1.5":0}"#);
    assert_eq!(
        to_vec(&FloatKey(1.5)).unwrap(),
        serde_json::to_vec(&FloatKey(1.5)).unwrap()
    );
    let error = to_vec(&FloatKey(f64::NAN)).unwrap_err();
    assert_eq!(error.to_string(), "float key must be finite");
    assert!(serde_json::to_vec(&FloatKey(f64::NAN)).is_err());
}

#[test]
fn keys_that_are_not_strings_are_refused_with_serde_jsons_text() {
    let error = to_vec(&BTreeMap::from([((1, 2), 3)])).unwrap_err();
    assert_eq!(error.to_string(), "key must be a string");
    assert!(serde_json::to_vec(&BTreeMap::from([((1, 2), 3)])).is_err());
    for refused in [
        to_vec(&BTreeMap::from([((), 1)])),
        to_vec(&BTreeMap::from([(None::<u8>, 1)])),
        to_vec(&BTreeMap::from([(vec![1u8], 1)])),
        to_vec(&BTreeMap::from([(Key::Beta(1), 1)])),
    ] {
        assert_eq!(refused.unwrap_err().to_string(), "key must be a string");
    }
}

/// A `Serialize` that fails with its own message.
struct Refuses;

impl Serialize for Refuses {
    fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom("no thanks"))
    }
}

#[test]
fn a_serialize_error_keeps_its_message() {
    assert_eq!(to_vec(&[Refuses]).unwrap_err().to_string(), "no thanks");
    let mut out = Vec::new();
    let error = to_sink(&mut out, &Refuses).unwrap_err();
    assert_eq!(error.to_string(), "cannot encode value as JSON: no thanks");
}

/// A `Display` written through `collect_str`, escaped on the way.
#[derive(Debug)]
struct Shown(&'static str);

impl Serialize for Shown {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("<{}>", self.0))
    }
}

#[test]
fn collect_str_is_escaped_like_serde_json() {
    assert_same(&[Shown("a\"\n\u{1}é")]);
    let mut map = BTreeMap::new();
    map.insert("k", 1);
    assert_same(&map);
}

#[test]
fn serde_jsons_own_raw_value_passes_through_verbatim() {
    let raw = serde_json::value::RawValue::from_string("{ \"a\" : [1, 2] }".into()).unwrap();
    let out = to_vec(&[&raw]).unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), "[{ \"a\" : [1, 2] }]");
}
