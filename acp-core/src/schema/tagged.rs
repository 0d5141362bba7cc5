//! Internally tagged unions (`{"type": "text", …}`, `{"sessionUpdate": "plan", …}`) without
//! serde's `Content` buffering.
//!
//! Decoding reads the first key; when it is the tag (the common case on the wire), the rest of
//! the object streams straight into the variant's struct. Otherwise the object is buffered into
//! a [`serde_json::Map`] once and decoded from there. Encoding writes the tag as the first field
//! of the variant's struct through a thin serializer adapter.

use alloc::string::String;
use core::fmt;
use core::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{self, Impossible, Serialize, SerializeStruct, Serializer};
use serde_json::Value;

use super::lenient::{Meta, unexpected};

/// A union discriminated by one string field.
pub(crate) trait Tagged: Sized {
    /// The discriminator's key, e.g. `type`.
    const TAG: &'static str;
    /// The tag values this version decodes into typed variants.
    const KNOWN: &'static [&'static str];

    /// Decodes the variant named `tag` from the object's other fields; tags outside
    /// [`Tagged::KNOWN`] go to [`Tagged::unknown_fields`].
    fn variant<'de, D: Deserializer<'de>>(tag: &str, fields: D) -> Result<Self, D::Error>;

    /// What an object with an unknown tag becomes: kept (forward compatible unions) or
    /// refused (closed ones). `object` still holds the tag.
    fn unknown<E: de::Error>(tag: &str, object: Meta) -> Result<Self, E> {
        let _ = object;
        Err(E::unknown_variant(tag, Self::KNOWN))
    }

    /// Reads the fields of an object with an unknown tag and hands it to [`Tagged::unknown`].
    fn unknown_fields<'de, D: Deserializer<'de>>(tag: &str, fields: D) -> Result<Self, D::Error> {
        let mut object = Meta::deserialize(fields)?;
        object.insert(String::from(Self::TAG), Value::String(String::from(tag)));
        Self::unknown(tag, object)
    }
}

/// Decodes a [`Tagged`] union; used by the unions' `Deserialize` impls.
pub(crate) fn deserialize<'de, D: Deserializer<'de>, T: Tagged>(d: D) -> Result<T, D::Error> {
    d.deserialize_map(TaggedVisitor::<T>(PhantomData))
}

struct TaggedVisitor<T>(PhantomData<T>);

impl<'de, T: Tagged> Visitor<'de> for TaggedVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let Some(first) = map.next_key::<Key<'de>>()? else {
            return Err(de::Error::missing_field(T::TAG));
        };
        if first.as_str() == T::TAG {
            let tag = map.next_value::<Key<'de>>()?;
            return T::variant(tag.as_str(), MapAccessDeserializer::new(map));
        }
        // The tag is not first: buffer the object once.
        let mut object = Meta::new();
        object.insert(first.into_string(), map.next_value::<Value>()?);
        while let Some((key, value)) = map.next_entry::<String, Value>()? {
            object.insert(key, value);
        }
        let tag = match object.get(T::TAG) {
            Some(Value::String(tag)) => tag.clone(),
            Some(other) => {
                return Err(de::Error::invalid_type(unexpected(other), &"a string"));
            }
            None => return Err(de::Error::missing_field(T::TAG)),
        };
        if T::KNOWN.contains(&tag.as_str()) {
            T::variant(&tag, Value::Object(object)).map_err(de::Error::custom)
        } else {
            // Keeps the error type (and so the wording) of `unknown` for closed unions.
            T::unknown(&tag, object)
        }
    }
}

/// An object key or tag value, borrowed from the input when it can be.
pub(crate) enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Key<'_> {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Key::Borrowed(s) => s,
            Key::Owned(s) => s,
        }
    }

    fn into_string(self) -> String {
        match self {
            Key::Borrowed(s) => String::from(s),
            Key::Owned(s) => s,
        }
    }
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key::Borrowed(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key::Owned(String::from(v)))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v))
            }
        }
        d.deserialize_str(V)
    }
}

/// Serializes `value` (a struct) with `tag: name` written as its first field.
pub(crate) fn serialize_tagged<S: Serializer, T: Serialize + ?Sized>(
    s: S,
    tag: &'static str,
    name: &'static str,
    value: &T,
) -> Result<S::Ok, S::Error> {
    value.serialize(TagFirst {
        inner: s,
        tag,
        name,
    })
}

/// A serializer adapter that accepts exactly one struct and prepends the tag field to it.
struct TagFirst<S> {
    inner: S,
    tag: &'static str,
    name: &'static str,
}

fn not_a_struct<E: ser::Error>() -> E {
    E::custom("a tagged union variant must serialize as a struct")
}

macro_rules! refuse {
    ($($method:ident($($arg:ty),*);)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<S::Ok, S::Error> { Err(not_a_struct()) })*
    };
}

impl<S: Serializer> Serializer for TagFirst<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Impossible<S::Ok, S::Error>;
    type SerializeTuple = Impossible<S::Ok, S::Error>;
    type SerializeTupleStruct = Impossible<S::Ok, S::Error>;
    type SerializeTupleVariant = Impossible<S::Ok, S::Error>;
    type SerializeMap = Impossible<S::Ok, S::Error>;
    type SerializeStruct = S::SerializeStruct;
    type SerializeStructVariant = Impossible<S::Ok, S::Error>;

    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<S::SerializeStruct, S::Error> {
        let _ = name;
        let mut out = self.inner.serialize_struct(self.name, len + 1)?;
        out.serialize_field(self.tag, self.name)?;
        Ok(out)
    }

    refuse! {
        serialize_bool(bool);
        serialize_i8(i8);
        serialize_i16(i16);
        serialize_i32(i32);
        serialize_i64(i64);
        serialize_u8(u8);
        serialize_u16(u16);
        serialize_u32(u32);
        serialize_u64(u64);
        serialize_f32(f32);
        serialize_f64(f64);
        serialize_char(char);
        serialize_str(&str);
        serialize_bytes(&[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(&'static str);
        serialize_unit_variant(&'static str, u32, &'static str);
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<S::Ok, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        Err(not_a_struct())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        Err(not_a_struct())
    }
}

/// Implements `Serialize` and `Deserialize` for a tagged union whose variants each wrap one
/// struct, plus (for open unions) an `Unknown(Meta)` variant that re-encodes as received.
macro_rules! tagged_union {
    ($name:ident, $tag:literal, { $($variant:ident($ty:ty) = $wire:literal,)* } $(, unknown = $unknown:ident)?) => {
        impl $crate::schema::tagged::Tagged for $name {
            const TAG: &'static str = $tag;
            const KNOWN: &'static [&'static str] = &[$($wire),*];

            fn variant<'de, D: serde::Deserializer<'de>>(tag: &str, fields: D) -> Result<Self, D::Error> {
                match tag {
                    $( $wire => <$ty as serde::Deserialize>::deserialize(fields).map(Self::$variant), )*
                    _ => Self::unknown_fields(tag, fields),
                }
            }

            $(
            fn unknown<E: serde::de::Error>(_tag: &str, object: $crate::schema::Meta) -> Result<Self, E> {
                Ok(Self::$unknown(object))
            }
            )?
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::schema::tagged::deserialize(d)
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( Self::$variant(inner) => $crate::schema::tagged::serialize_tagged(s, $tag, $wire, inner), )*
                    $( Self::$unknown(object) => serde::Serialize::serialize(object, s), )?
                }
            }
        }
    };
}
pub(crate) use tagged_union;
