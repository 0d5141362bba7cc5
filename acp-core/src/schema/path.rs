//! The slow, precise second pass: re-reads a value that failed to decode and reports where.
//!
//! The fast path (`serde_json::from_str` straight into the types) only says "line 1 column 80".
//! When it fails, the text is parsed into a [`Value`] and decoded again through this
//! deserializer, which records the key or index of every level the error passes through and
//! words the failure the way error replies need it (`must be a string`). Failures are rare, so
//! the cost does not matter; the fast path stays untouched.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt::{self, Write};

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::{Map, Value};

/// One step of a path.
#[derive(Debug)]
enum Segment {
    Key(String),
    Index(usize),
}

/// A decode failure with the path it happened at.
#[derive(Debug)]
pub(crate) struct PathError {
    /// Innermost first while the error bubbles up.
    reversed: Vec<Segment>,
    detail: String,
}

impl PathError {
    fn new(detail: String) -> Self {
        Self {
            reversed: Vec::new(),
            detail,
        }
    }

    fn at(mut self, segment: Segment) -> Self {
        self.reversed.push(segment);
        self
    }

    /// `mcpServers[2].env[0].value`.
    pub(crate) fn path(&self) -> String {
        let mut out = String::new();
        for segment in self.reversed.iter().rev() {
            match segment {
                Segment::Key(key) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(key);
                }
                Segment::Index(index) => {
                    let _ = write!(out, "[{index}]");
                }
            }
        }
        out
    }

    /// `must be a string`.
    pub(crate) fn detail(&self) -> &str {
        &self.detail
    }
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.path(), self.detail)
    }
}

impl core::error::Error for PathError {}

fn is_primitive_integer(name: &str) -> bool {
    matches!(
        name,
        "u8" | "u16"
            | "u32"
            | "u64"
            | "u128"
            | "usize"
            | "i8"
            | "i16"
            | "i32"
            | "i64"
            | "i128"
            | "isize"
    )
}

/// What serde calls a type, in the words of a JSON error message.
fn noun(expected: &dyn de::Expected) -> String {
    let text = expected.to_string();
    let noun = match text.as_str() {
        t if t.starts_with("struct ") || t == "a map" => "a JSON object",
        t if t.starts_with("a sequence") || t.starts_with("tuple") => "a JSON array",
        t if is_primitive_integer(t) => "an integer",
        "f32" | "f64" => "a number",
        "unit" => "null",
        _ => return text,
    };
    String::from(noun)
}

impl de::Error for PathError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self::new(msg.to_string())
    }

    fn invalid_type(_unexpected: de::Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        Self::new(alloc::format!("must be {}", noun(expected)))
    }

    fn invalid_value(unexpected: de::Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        let text = expected.to_string();
        if is_primitive_integer(&text) {
            return Self::new(alloc::format!(
                "is out of range for {text}, got {unexpected}"
            ));
        }
        Self::new(alloc::format!(
            "must be {}, got {}",
            noun(expected),
            unexpected
        ))
    }

    fn invalid_length(len: usize, expected: &dyn de::Expected) -> Self {
        Self::new(alloc::format!("must have {}, got {len}", noun(expected)))
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        let mut detail = String::from("must be one of ");
        for (i, name) in expected.iter().enumerate() {
            if i > 0 {
                detail.push_str(", ");
            }
            let _ = write!(detail, "'{name}'");
        }
        let _ = write!(detail, ", got '{variant}'");
        Self::new(detail)
    }

    fn missing_field(field: &'static str) -> Self {
        Self::new(String::from("is required")).at(Segment::Key(String::from(field)))
    }
}

/// Deserializes from a borrowed [`Value`], tracking the path.
pub(crate) struct ValueDe<'a>(pub(crate) &'a Value);

impl<'de> Deserializer<'de> for ValueDe<'de> {
    type Error = PathError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    visitor.visit_u64(u)
                } else if let Some(i) = n.as_i64() {
                    visitor.visit_i64(i)
                } else {
                    visitor.visit_f64(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => visitor.visit_seq(SeqDe { items, next: 0 }),
            Value::Object(map) => visitor.visit_map(MapDe::new(map)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, PathError> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    /// Newtype structs (in particular serde_json's raw-text capture, which the lenient fields
    /// use) are handed to serde_json's own value deserializer, which knows them.
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, PathError> {
        self.0
            .deserialize_newtype_struct(name, visitor)
            .map_err(de::Error::custom)
    }

    /// Structs are JSON objects only (serde would also take arrays, positionally).
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, PathError> {
        match self.0 {
            Value::Array(_) => Err(de::Error::invalid_type(de::Unexpected::Seq, &visitor)),
            _ => self.deserialize_any(visitor),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

struct SeqDe<'a> {
    items: &'a [Value],
    next: usize,
}

impl<'de> SeqAccess<'de> for SeqDe<'de> {
    type Error = PathError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, PathError> {
        let Some(item) = self.items.get(self.next) else {
            return Ok(None);
        };
        let index = self.next;
        self.next += 1;
        seed.deserialize(ValueDe(item))
            .map(Some)
            .map_err(|e| e.at(Segment::Index(index)))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len() - self.next)
    }
}

/// Keys that discriminate unions come first, so tagged unions stream instead of buffering
/// (and keep their paths). Object key order carries no meaning in JSON.
fn is_discriminator(key: &str) -> bool {
    matches!(key, "type" | "sessionUpdate" | "outcome")
}

struct MapDe<'a> {
    entries: Vec<(&'a str, &'a Value)>,
    next: usize,
}

impl<'a> MapDe<'a> {
    fn new(map: &'a Map<String, Value>) -> Self {
        let mut entries: Vec<(&str, &Value)> = map.iter().map(|(k, v)| (k.as_str(), v)).collect();
        entries.sort_by_key(|(k, _)| !is_discriminator(k));
        Self { entries, next: 0 }
    }
}

impl<'de> MapAccess<'de> for MapDe<'de> {
    type Error = PathError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, PathError> {
        let Some((key, _)) = self.entries.get(self.next) else {
            return Ok(None);
        };
        seed.deserialize(BorrowedStrDeserializer::new(key))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, PathError> {
        let Some((key, value)) = self.entries.get(self.next) else {
            return Err(de::Error::custom("value requested before its key"));
        };
        self.next += 1;
        seed.deserialize(ValueDe(value))
            .map_err(|e| e.at(Segment::Key(String::from(*key))))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len() - self.next)
    }
}
