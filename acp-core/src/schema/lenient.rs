//! Lenient field readers for the schema's `x-deserialize-default-on-error` and
//! `x-deserialize-skip-invalid-items` hints, plus the string-enum macro.
//!
//! A field marked default-on-error that holds the wrong kind of JSON falls back to its default
//! instead of failing the whole message; an array marked skip-invalid-items drops the entries
//! that do not decode. Leaf types (strings, flags, numbers) are read with a direct visitor that
//! skips anything else without allocating; structured types are buffered into a
//! [`serde_json::Value`] first, because a serde error mid-stream cannot be recovered from.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

/// The free-form `_meta` object that every ACP type may carry.
pub type Meta = serde_json::Map<String, Value>;

/// Any object type: captured as raw JSON text, kept if it decodes, else the default. Arrays are
/// refused up front, because serde's derived structs would otherwise accept them positionally
/// (`[]` as an empty struct).
pub(crate) fn or_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let raw = Box::<RawValue>::deserialize(deserializer)?;
    let text = raw.get();
    if text.starts_with('[') {
        return Ok(T::default());
    }
    Ok(serde_json::from_str(text).unwrap_or_default())
}

/// `_meta`: kept when it is an object, dropped otherwise.
pub(crate) fn meta<'de, D>(deserializer: D) -> Result<Option<Meta>, D::Error>
where
    D: Deserializer<'de>,
{
    match Value::deserialize(deserializer)? {
        Value::Object(map) => Ok(Some(map)),
        _ => Ok(None),
    }
}

/// An array whose malformed items are dropped; anything but an array is the empty list.
pub(crate) fn skip_invalid<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let raw = Box::<RawValue>::deserialize(deserializer)?;
    Ok(valid_items(raw.get()).unwrap_or_default())
}

/// Like [`skip_invalid`] for an optional array: `null` or a non-array is `None`.
pub(crate) fn opt_skip_invalid<'de, D, T>(deserializer: D) -> Result<Option<Vec<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let raw = Box::<RawValue>::deserialize(deserializer)?;
    Ok(valid_items(raw.get()))
}

/// A required array (strict about being an array) whose malformed items are dropped.
pub(crate) fn required_skip_invalid<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let raw = Box::<RawValue>::deserialize(deserializer)?;
    match valid_items(raw.get()) {
        Some(items) => Ok(items),
        None => {
            let value: Value = serde_json::from_str(raw.get()).map_err(de::Error::custom)?;
            Err(de::Error::invalid_type(unexpected(&value), &"a sequence"))
        }
    }
}

/// The items of a JSON array that decode as `T`; `None` when `text` is not an array.
///
/// Optimistic: the whole array is decoded strictly first (one pass, no buffering); only when
/// that fails are the items split and decoded one by one.
fn valid_items<T: DeserializeOwned>(text: &str) -> Option<Vec<T>> {
    if !text.starts_with('[') {
        return None;
    }
    if let Ok(all) = serde_json::from_str::<Vec<T>>(text) {
        return Some(all);
    }
    let items: Vec<&RawValue> = serde_json::from_str(text).ok()?;
    Some(
        items
            .iter()
            .filter_map(|item| serde_json::from_str(item.get()).ok())
            .collect(),
    )
}

/// The serde description of a JSON value, for error messages.
pub(crate) fn unexpected(value: &Value) -> de::Unexpected<'_> {
    match value {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => de::Unexpected::Unsigned(u),
            (_, Some(i), _) => de::Unexpected::Signed(i),
            (_, _, Some(f)) => de::Unexpected::Float(f),
            _ => de::Unexpected::Other("number"),
        },
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

/// A leaf visitor: yields `Some` for the accepted JSON kind and `None` (after skipping the
/// value) for every other kind, without buffering it.
struct Leaf<T>(PhantomData<T>);

/// The JSON kinds a [`Leaf`] accepts.
pub(crate) trait LeafKind: Sized {
    fn from_str(_: &str) -> Option<Self> {
        None
    }
    fn from_bool(_: bool) -> Option<Self> {
        None
    }
    fn from_u64(_: u64) -> Option<Self> {
        None
    }
    fn from_i64(_: i64) -> Option<Self> {
        None
    }
    fn from_f64(_: f64) -> Option<Self> {
        None
    }
}

impl LeafKind for String {
    fn from_str(s: &str) -> Option<Self> {
        Some(String::from(s))
    }
}
impl LeafKind for bool {
    fn from_bool(b: bool) -> Option<Self> {
        Some(b)
    }
}
impl LeafKind for u64 {
    fn from_u64(v: u64) -> Option<Self> {
        Some(v)
    }
    fn from_i64(v: i64) -> Option<Self> {
        u64::try_from(v).ok()
    }
}
impl LeafKind for i64 {
    fn from_u64(v: u64) -> Option<Self> {
        i64::try_from(v).ok()
    }
    fn from_i64(v: i64) -> Option<Self> {
        Some(v)
    }
}
impl LeafKind for u32 {
    fn from_u64(v: u64) -> Option<Self> {
        u32::try_from(v).ok()
    }
    fn from_i64(v: i64) -> Option<Self> {
        u32::try_from(v).ok()
    }
}
impl LeafKind for f64 {
    #[allow(clippy::cast_precision_loss)]
    fn from_u64(v: u64) -> Option<Self> {
        Some(v as f64)
    }
    #[allow(clippy::cast_precision_loss)]
    fn from_i64(v: i64) -> Option<Self> {
        Some(v as f64)
    }
    fn from_f64(v: f64) -> Option<Self> {
        Some(v)
    }
}

impl<'de, T: LeafKind> Visitor<'de> for Leaf<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(T::from_str(v))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(T::from_bool(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(T::from_u64(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(T::from_i64(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(T::from_f64(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        // Bounded by the input: each step consumes one element.
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

/// An optional leaf (`Option<String>`, `Option<u64>`, …): the wrong kind reads as `None`.
pub(crate) fn opt<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: LeafKind,
{
    deserializer.deserialize_any(Leaf::<T>(PhantomData))
}

/// A flag with default `false`: the wrong kind reads as `false`.
pub(crate) fn flag<'de, D>(deserializer: D) -> Result<bool, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(opt::<D, bool>(deserializer)?.unwrap_or(false))
}

/// A list of strings with malformed items dropped; a non-array is the empty list.
pub(crate) fn strings<'de, D>(deserializer: D) -> Result<Vec<String>, D::Error>
where
    D: Deserializer<'de>,
{
    struct Strings;
    impl<'de> Visitor<'de> for Strings {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(item) = seq.next_element_seed(LeafSeed::<String>(PhantomData))? {
                out.extend(item);
            }
            Ok(out)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Vec::new())
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(Vec::new())
        }
    }
    deserializer.deserialize_any(Strings)
}

struct LeafSeed<T>(PhantomData<T>);

impl<'de, T: LeafKind> de::DeserializeSeed<'de> for LeafSeed<T> {
    type Value = Option<T>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(Leaf::<T>(PhantomData))
    }
}

/// A patch field where `null` is meaningful: absent is `None`, `null` is `Some(None)`, a
/// value is `Some(Some(v))`. Any other kind of JSON counts as absent.
pub(crate) fn patch<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let raw = Box::<RawValue>::deserialize(deserializer)?;
    match raw.get() {
        "null" => Ok(Some(None)),
        text => Ok(serde_json::from_str(text).ok().map(Some)),
    }
}

/// Declares a string enum whose wire names are listed, with `as_str`, `Display`, `Serialize`
/// and a `Deserialize` that reads borrowed strings without allocating.
///
/// `open` enums keep unknown names in an `Unknown(String)` variant; `closed` ones reject them
/// with serde's `unknown_variant` error (which lists the accepted names).
macro_rules! string_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident (open) {
            $( $(#[$vmeta:meta])* $variant:ident = $wire:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )*
            /// A name this version does not know, kept as sent.
            Unknown(alloc::string::String),
        }

        impl $name {
            /// The wire name.
            pub fn as_str(&self) -> &str {
                match self {
                    $( Self::$variant => $wire, )*
                    Self::Unknown(name) => name.as_str(),
                }
            }

            fn from_wire<E: serde::de::Error>(name: &str) -> Result<Self, E> {
                match name {
                    $( $wire => Ok(Self::$variant), )*
                    _ => Ok(Self::Unknown(alloc::string::String::from(name))),
                }
            }
        }
        $crate::schema::lenient::string_enum!(@common $name [$($wire),*]);
    };
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident (closed) {
            $( $(#[$vmeta:meta])* $variant:ident = $wire:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )*
        }

        #[allow(unreachable_pub)]
        impl $name {
            /// The wire name.
            pub const fn as_str(&self) -> &'static str {
                match self {
                    $( Self::$variant => $wire, )*
                }
            }

            fn from_wire<E: serde::de::Error>(name: &str) -> Result<Self, E> {
                match name {
                    $( $wire => Ok(Self::$variant), )*
                    _ => Err(E::unknown_variant(name, Self::NAMES)),
                }
            }
        }
        $crate::schema::lenient::string_enum!(@common $name [$($wire),*]);
    };
    (@common $name:ident [$($wire:literal),*]) => {
        #[allow(unreachable_pub)]
        impl $name {
            /// Every name this enum knows, in schema order.
            pub const NAMES: &'static [&'static str] = &[$($wire),*];
        }

        /// As a default-on-error field: a known (or, for open enums, any) name, else absent.
        impl $crate::schema::lenient::LeafKind for $name {
            fn from_str(name: &str) -> Option<Self> {
                $name::from_wire::<serde::de::value::Error>(name).ok()
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                        f.write_str("a string")
                    }
                    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        $name::from_wire(v)
                    }
                }
                d.deserialize_str(V)
            }
        }
    };
}
pub(crate) use string_enum;

/// [`patch`] for an array whose malformed items are dropped.
pub(crate) fn patch_skip_invalid<'de, D, T>(
    deserializer: D,
) -> Result<Option<Option<Vec<T>>>, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned,
{
    let raw = Box::<RawValue>::deserialize(deserializer)?;
    match raw.get() {
        "null" => Ok(Some(None)),
        text => Ok(valid_items(text).map(Some)),
    }
}
