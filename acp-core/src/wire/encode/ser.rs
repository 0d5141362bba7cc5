//! The compact serde [`Serializer`]: serde_json's output, written into any [`Sink`].
//!
//! Two private names make borrowed JSON pass through verbatim:
//! - a struct named [`RAW_VALUE_TOKEN`] with one `&str` field is raw JSON text. The name and the
//!   protocol are serde_json's own `RawValue` ones, so serde_json's `RawValue` also passes through
//!   here, and ours passes through serde_json when its `raw_value` feature is on;
//! - a newtype struct named [`JSON_STR_TOKEN`] holds the still-escaped contents of a string.

use core::fmt::{self, Write as _};

use serde::ser::{self, Impossible, Serialize};

use super::error::{EncodeError, ValueError};
use super::escape::{EscapingWriter, VerbatimWriter, write_quoted};
use super::number::{write_f32, write_f64, write_i64, write_i128, write_u64, write_u128};
use super::sink::Sink;

/// The struct name serde_json uses for its `RawValue`; its single field holds the JSON text.
pub(crate) const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";
/// The newtype struct name of an escaped string's contents (see `JsonStr`'s `Serialize`).
pub(crate) const JSON_STR_TOKEN: &str = "$acp_core::private::JsonStr";

type Result<T, S> = core::result::Result<T, EncodeError<<S as Sink>::Error>>;

/// Writes `value` as compact JSON into `sink`. No newline is added.
///
/// The output is byte-identical to `serde_json::to_vec(value)`: the same key order, number
/// formatting and string escapes (control characters, `"` and `\` only; non-ASCII stays raw).
pub fn to_sink<S, T>(sink: &mut S, value: &T) -> Result<(), S>
where
    S: Sink + ?Sized,
    T: Serialize + ?Sized,
{
    value.serialize(&mut Serializer::new(sink))
}

/// Writes `value` as compact JSON at the start of `buf` and returns its length.
///
/// On an error the contents of `buf` are a partial value and meaningless.
pub fn to_slice<T>(
    buf: &mut [u8],
    value: &T,
) -> core::result::Result<usize, EncodeError<super::BufferFull>>
where
    T: Serialize + ?Sized,
{
    super::encode_line(buf, |sink| to_sink(sink, value))
}

/// Writes `value` as compact JSON into a new `Vec`.
#[cfg(feature = "alloc")]
pub fn to_vec<T>(value: &T) -> core::result::Result<alloc::vec::Vec<u8>, ValueError>
where
    T: Serialize + ?Sized,
{
    let mut out = alloc::vec::Vec::with_capacity(128);
    match to_sink(&mut out, value) {
        Ok(()) => Ok(out),
        Err(EncodeError::Value(e)) => Err(e),
        Err(EncodeError::Sink(never)) => match never {},
    }
}

/// A serde serializer writing compact JSON into a [`Sink`]. Most callers want [`to_sink`].
pub struct Serializer<'s, S: ?Sized> {
    sink: &'s mut S,
}

impl<'s, S: Sink + ?Sized> Serializer<'s, S> {
    /// A serializer appending to `sink`.
    pub fn new(sink: &'s mut S) -> Self {
        Self { sink }
    }

    #[inline]
    fn put(&mut self, bytes: &[u8]) -> Result<(), S> {
        self.sink.write_bytes(bytes).map_err(EncodeError::Sink)
    }

    #[inline]
    fn put_byte(&mut self, byte: u8) -> Result<(), S> {
        self.sink.write_byte(byte).map_err(EncodeError::Sink)
    }

    #[inline]
    fn put_quoted(&mut self, text: &str) -> Result<(), S> {
        write_quoted(self.sink, text).map_err(EncodeError::Sink)
    }

    /// Writes `{"variant":`, the opening of every externally tagged variant with data.
    #[inline]
    fn open_variant(&mut self, variant: &str) -> Result<(), S> {
        self.put_byte(b'{')?;
        self.put_quoted(variant)?;
        self.put_byte(b':')
    }

    /// Writes `"` + the `Display` of `value`, escaped + `"`.
    fn put_display<T: fmt::Display + ?Sized>(&mut self, value: &T) -> Result<(), S> {
        self.put_byte(b'"')?;
        let mut writer = EscapingWriter::new(&mut *self.sink);
        if write!(writer, "{value}").is_err() {
            return Err(match writer.error.take() {
                Some(e) => EncodeError::Sink(e),
                None => EncodeError::Value(ValueError::DISPLAY_FAILED),
            });
        }
        self.put_byte(b'"')
    }
}

impl<'a, 's, S: Sink + ?Sized> ser::Serializer for &'a mut Serializer<'s, S> {
    type Ok = ();
    type Error = EncodeError<S::Error>;
    type SerializeSeq = Compound<'a, 's, S>;
    type SerializeTuple = Compound<'a, 's, S>;
    type SerializeTupleStruct = Compound<'a, 's, S>;
    type SerializeTupleVariant = Compound<'a, 's, S>;
    type SerializeMap = Compound<'a, 's, S>;
    type SerializeStruct = StructCompound<'a, 's, S>;
    type SerializeStructVariant = Compound<'a, 's, S>;

    #[inline]
    fn serialize_bool(self, v: bool) -> Result<(), S> {
        self.put(if v { b"true" } else { b"false" })
    }

    #[inline]
    fn serialize_i8(self, v: i8) -> Result<(), S> {
        self.serialize_i64(i64::from(v))
    }

    #[inline]
    fn serialize_i16(self, v: i16) -> Result<(), S> {
        self.serialize_i64(i64::from(v))
    }

    #[inline]
    fn serialize_i32(self, v: i32) -> Result<(), S> {
        self.serialize_i64(i64::from(v))
    }

    #[inline]
    fn serialize_i64(self, v: i64) -> Result<(), S> {
        write_i64(self.sink, v).map_err(EncodeError::Sink)
    }

    fn serialize_i128(self, v: i128) -> Result<(), S> {
        write_i128(self.sink, v).map_err(EncodeError::Sink)
    }

    #[inline]
    fn serialize_u8(self, v: u8) -> Result<(), S> {
        self.serialize_u64(u64::from(v))
    }

    #[inline]
    fn serialize_u16(self, v: u16) -> Result<(), S> {
        self.serialize_u64(u64::from(v))
    }

    #[inline]
    fn serialize_u32(self, v: u32) -> Result<(), S> {
        self.serialize_u64(u64::from(v))
    }

    #[inline]
    fn serialize_u64(self, v: u64) -> Result<(), S> {
        write_u64(self.sink, v).map_err(EncodeError::Sink)
    }

    fn serialize_u128(self, v: u128) -> Result<(), S> {
        write_u128(self.sink, v).map_err(EncodeError::Sink)
    }

    fn serialize_f32(self, v: f32) -> Result<(), S> {
        write_f32(self.sink, v).map_err(EncodeError::Sink)
    }

    fn serialize_f64(self, v: f64) -> Result<(), S> {
        write_f64(self.sink, v).map_err(EncodeError::Sink)
    }

    fn serialize_char(self, v: char) -> Result<(), S> {
        self.put_quoted(v.encode_utf8(&mut [0u8; 4]))
    }

    #[inline]
    fn serialize_str(self, v: &str) -> Result<(), S> {
        self.put_quoted(v)
    }

    /// Bytes are an array of numbers, as in serde_json.
    fn serialize_bytes(self, v: &[u8]) -> Result<(), S> {
        self.put_byte(b'[')?;
        for (i, &byte) in v.iter().enumerate() {
            if i > 0 {
                self.put_byte(b',')?;
            }
            write_u64(self.sink, u64::from(byte)).map_err(EncodeError::Sink)?;
        }
        self.put_byte(b']')
    }

    #[inline]
    fn serialize_none(self) -> Result<(), S> {
        self.put(b"null")
    }

    #[inline]
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), S> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), S> {
        self.put(b"null")
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), S> {
        self.put(b"null")
    }

    #[inline]
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), S> {
        self.put_quoted(variant)
    }

    #[inline]
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<(), S> {
        if name == JSON_STR_TOKEN {
            return value.serialize(JsonStrCapture { sink: self.sink });
        }
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), S> {
        self.open_variant(variant)?;
        value.serialize(&mut *self)?;
        self.put_byte(b'}')
    }

    #[inline]
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, S> {
        self.put_byte(b'[')?;
        Ok(Compound::new(self, b']', false))
    }

    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, S> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleStruct, S> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, S> {
        self.open_variant(variant)?;
        self.put_byte(b'[')?;
        Ok(Compound::new(self, b']', true))
    }

    #[inline]
    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, S> {
        self.put_byte(b'{')?;
        Ok(Compound::new(self, b'}', false))
    }

    #[inline]
    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<Self::SerializeStruct, S> {
        if name == RAW_VALUE_TOKEN {
            return Ok(StructCompound(StructKind::Raw(self)));
        }
        self.put_byte(b'{')?;
        Ok(StructCompound(StructKind::Object(Compound::new(
            self, b'}', false,
        ))))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, S> {
        self.open_variant(variant)?;
        self.put_byte(b'{')?;
        Ok(Compound::new(self, b'}', true))
    }

    fn collect_str<T: fmt::Display + ?Sized>(self, value: &T) -> Result<(), S> {
        self.put_display(value)
    }
}

/// An array or object being written: its members are separated by commas.
pub struct Compound<'a, 's, S: ?Sized> {
    ser: &'a mut Serializer<'s, S>,
    first: bool,
    close: u8,
    /// Whether this is the body of an externally tagged variant, closed by one more `}`.
    in_variant: bool,
}

impl<'a, 's, S: Sink + ?Sized> Compound<'a, 's, S> {
    #[inline]
    fn new(ser: &'a mut Serializer<'s, S>, close: u8, in_variant: bool) -> Self {
        Self {
            ser,
            first: true,
            close,
            in_variant,
        }
    }

    #[inline]
    fn separate(&mut self) -> Result<(), S> {
        if self.first {
            self.first = false;
            Ok(())
        } else {
            self.ser.put_byte(b',')
        }
    }

    #[inline]
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), S> {
        self.separate()?;
        value.serialize(&mut *self.ser)
    }

    #[inline(always)]
    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), S> {
        self.separate()?;
        self.ser.put_quoted(key)?;
        self.ser.put_byte(b':')?;
        value.serialize(&mut *self.ser)
    }

    #[inline]
    fn finish(self) -> Result<(), S> {
        self.ser.put_byte(self.close)?;
        if self.in_variant {
            self.ser.put_byte(b'}')?;
        }
        Ok(())
    }
}

impl<S: Sink + ?Sized> ser::SerializeSeq for Compound<'_, '_, S> {
    type Ok = ();
    type Error = EncodeError<S::Error>;

    #[inline]
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), S> {
        self.element(value)
    }

    #[inline]
    fn end(self) -> Result<(), S> {
        self.finish()
    }
}

impl<S: Sink + ?Sized> ser::SerializeTuple for Compound<'_, '_, S> {
    type Ok = ();
    type Error = EncodeError<S::Error>;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), S> {
        self.element(value)
    }

    fn end(self) -> Result<(), S> {
        self.finish()
    }
}

impl<S: Sink + ?Sized> ser::SerializeTupleStruct for Compound<'_, '_, S> {
    type Ok = ();
    type Error = EncodeError<S::Error>;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), S> {
        self.element(value)
    }

    fn end(self) -> Result<(), S> {
        self.finish()
    }
}

impl<S: Sink + ?Sized> ser::SerializeTupleVariant for Compound<'_, '_, S> {
    type Ok = ();
    type Error = EncodeError<S::Error>;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), S> {
        self.element(value)
    }

    fn end(self) -> Result<(), S> {
        self.finish()
    }
}

impl<S: Sink + ?Sized> ser::SerializeMap for Compound<'_, '_, S> {
    type Ok = ();
    type Error = EncodeError<S::Error>;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), S> {
        self.separate()?;
        key.serialize(MapKeySerializer {
            ser: &mut *self.ser,
        })
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), S> {
        self.ser.put_byte(b':')?;
        value.serialize(&mut *self.ser)
    }

    fn end(self) -> Result<(), S> {
        self.finish()
    }
}

impl<S: Sink + ?Sized> ser::SerializeStructVariant for Compound<'_, '_, S> {
    type Ok = ();
    type Error = EncodeError<S::Error>;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), S> {
        self.field(key, value)
    }

    fn end(self) -> Result<(), S> {
        self.finish()
    }
}

/// A struct being written: an ordinary object, or raw JSON text passed through verbatim.
pub struct StructCompound<'a, 's, S: ?Sized>(StructKind<'a, 's, S>);

enum StructKind<'a, 's, S: ?Sized> {
    /// An ordinary struct, written as an object.
    Object(Compound<'a, 's, S>),
    /// The raw-value protocol: the one field's string is JSON text.
    Raw(&'a mut Serializer<'s, S>),
}

impl<S: Sink + ?Sized> ser::SerializeStruct for StructCompound<'_, '_, S> {
    type Ok = ();
    type Error = EncodeError<S::Error>;

    #[inline(always)]
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), S> {
        match &mut self.0 {
            StructKind::Object(compound) => compound.field(key, value),
            StructKind::Raw(ser) => value.serialize(RawCapture {
                sink: &mut *ser.sink,
            }),
        }
    }

    #[inline]
    fn end(self) -> Result<(), S> {
        match self.0 {
            StructKind::Object(compound) => compound.finish(),
            StructKind::Raw(_) => Ok(()),
        }
    }
}

/// Implements every `Serializer` method not listed by returning `$error`.
macro_rules! refuse_the_rest {
    ($error:expr; $($method:ident($($arg:ty),*)),* $(,)?) => {
        $(
            fn $method(self, $(_: $arg),*) -> Result<(), S> {
                Err(EncodeError::Value($error))
            }
        )*
    };
}

/// Implements the compound-starting `Serializer` methods by returning `$error`.
macro_rules! refuse_compounds {
    ($error:expr) => {
        fn serialize_newtype_variant<T: Serialize + ?Sized>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> Result<(), S> {
            Err(EncodeError::Value($error))
        }
        fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, S> {
            Err(EncodeError::Value($error))
        }
        fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, S> {
            Err(EncodeError::Value($error))
        }
        fn serialize_tuple_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleStruct, S> {
            Err(EncodeError::Value($error))
        }
        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleVariant, S> {
            Err(EncodeError::Value($error))
        }
        fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, S> {
            Err(EncodeError::Value($error))
        }
        fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, S> {
            Err(EncodeError::Value($error))
        }
        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStructVariant, S> {
            Err(EncodeError::Value($error))
        }
    };
}

/// Serializes a map key: strings as they are; integers, bools, chars and finite floats as
/// strings holding their JSON text, exactly like serde_json.
struct MapKeySerializer<'a, 's, S: ?Sized> {
    ser: &'a mut Serializer<'s, S>,
}

impl<S: Sink + ?Sized> MapKeySerializer<'_, '_, S> {
    /// Writes `"` + what `write` writes + `"`.
    fn quoted(
        self,
        write: impl FnOnce(&mut S) -> core::result::Result<(), S::Error>,
    ) -> Result<(), S> {
        self.ser.put_byte(b'"')?;
        write(&mut *self.ser.sink).map_err(EncodeError::Sink)?;
        self.ser.put_byte(b'"')
    }
}

impl<S: Sink + ?Sized> ser::Serializer for MapKeySerializer<'_, '_, S> {
    type Ok = ();
    type Error = EncodeError<S::Error>;
    type SerializeSeq = Impossible<(), Self::Error>;
    type SerializeTuple = Impossible<(), Self::Error>;
    type SerializeTupleStruct = Impossible<(), Self::Error>;
    type SerializeTupleVariant = Impossible<(), Self::Error>;
    type SerializeMap = Impossible<(), Self::Error>;
    type SerializeStruct = Impossible<(), Self::Error>;
    type SerializeStructVariant = Impossible<(), Self::Error>;

    fn serialize_str(self, v: &str) -> Result<(), S> {
        self.ser.put_quoted(v)
    }

    fn serialize_char(self, v: char) -> Result<(), S> {
        self.ser.put_quoted(v.encode_utf8(&mut [0u8; 4]))
    }

    fn serialize_bool(self, v: bool) -> Result<(), S> {
        self.ser.put(if v { b"\"true\"" } else { b"\"false\"" })
    }

    fn serialize_i8(self, v: i8) -> Result<(), S> {
        self.serialize_i64(i64::from(v))
    }

    fn serialize_i16(self, v: i16) -> Result<(), S> {
        self.serialize_i64(i64::from(v))
    }

    fn serialize_i32(self, v: i32) -> Result<(), S> {
        self.serialize_i64(i64::from(v))
    }

    fn serialize_i64(self, v: i64) -> Result<(), S> {
        self.quoted(|sink| write_i64(sink, v))
    }

    fn serialize_i128(self, v: i128) -> Result<(), S> {
        self.quoted(|sink| write_i128(sink, v))
    }

    fn serialize_u8(self, v: u8) -> Result<(), S> {
        self.serialize_u64(u64::from(v))
    }

    fn serialize_u16(self, v: u16) -> Result<(), S> {
        self.serialize_u64(u64::from(v))
    }

    fn serialize_u32(self, v: u32) -> Result<(), S> {
        self.serialize_u64(u64::from(v))
    }

    fn serialize_u64(self, v: u64) -> Result<(), S> {
        self.quoted(|sink| write_u64(sink, v))
    }

    fn serialize_u128(self, v: u128) -> Result<(), S> {
        self.quoted(|sink| write_u128(sink, v))
    }

    fn serialize_f32(self, v: f32) -> Result<(), S> {
        if !v.is_finite() {
            return Err(EncodeError::Value(ValueError::FLOAT_KEY_MUST_BE_FINITE));
        }
        self.quoted(|sink| write_f32(sink, v))
    }

    fn serialize_f64(self, v: f64) -> Result<(), S> {
        if !v.is_finite() {
            return Err(EncodeError::Value(ValueError::FLOAT_KEY_MUST_BE_FINITE));
        }
        self.quoted(|sink| write_f64(sink, v))
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), S> {
        value.serialize(self)
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), S> {
        self.ser.put_quoted(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<(), S> {
        if name == JSON_STR_TOKEN {
            return value.serialize(JsonStrCapture {
                sink: &mut *self.ser.sink,
            });
        }
        value.serialize(self)
    }

    fn collect_str<T: fmt::Display + ?Sized>(self, value: &T) -> Result<(), S> {
        self.ser.put_display(value)
    }

    refuse_the_rest!(ValueError::KEY_MUST_BE_A_STRING;
        serialize_bytes(&[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str),
    );
    refuse_compounds!(ValueError::KEY_MUST_BE_A_STRING);
}

/// Receives the text of a raw value and copies it verbatim.
struct RawCapture<'a, S: ?Sized> {
    sink: &'a mut S,
}

/// The error for a raw-value protocol message that is not one string.
const NOT_RAW_TEXT: ValueError = ValueError::NOT_RAW_TEXT;

impl<S: Sink + ?Sized> ser::Serializer for RawCapture<'_, S> {
    type Ok = ();
    type Error = EncodeError<S::Error>;
    type SerializeSeq = Impossible<(), Self::Error>;
    type SerializeTuple = Impossible<(), Self::Error>;
    type SerializeTupleStruct = Impossible<(), Self::Error>;
    type SerializeTupleVariant = Impossible<(), Self::Error>;
    type SerializeMap = Impossible<(), Self::Error>;
    type SerializeStruct = Impossible<(), Self::Error>;
    type SerializeStructVariant = Impossible<(), Self::Error>;

    #[inline]
    fn serialize_str(self, v: &str) -> Result<(), S> {
        self.sink
            .write_bytes(v.as_bytes())
            .map_err(EncodeError::Sink)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), S> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), S> {
        value.serialize(self)
    }

    fn collect_str<T: fmt::Display + ?Sized>(self, _: &T) -> Result<(), S> {
        Err(EncodeError::Value(NOT_RAW_TEXT))
    }

    refuse_the_rest!(NOT_RAW_TEXT;
        serialize_bool(bool), serialize_i8(i8), serialize_i16(i16), serialize_i32(i32),
        serialize_i64(i64), serialize_u8(u8), serialize_u16(u16), serialize_u32(u32),
        serialize_u64(u64), serialize_f32(f32), serialize_f64(f64), serialize_char(char),
        serialize_bytes(&[u8]), serialize_none(), serialize_unit(),
        serialize_unit_struct(&'static str),
    );
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), S> {
        Err(EncodeError::Value(NOT_RAW_TEXT))
    }
    refuse_compounds!(NOT_RAW_TEXT);
}

/// Receives the escaped contents of a string and writes them between quotes, verbatim.
///
/// `JsonStr` hands over plain contents with `serialize_str`, and contents holding escapes with
/// `collect_str` of a `Display` that writes the raw text under the alternate flag (`{:#}`) and
/// the decoded text otherwise; other serializers see the decoded text.
struct JsonStrCapture<'a, S: ?Sized> {
    sink: &'a mut S,
}

impl<S: Sink + ?Sized> ser::Serializer for JsonStrCapture<'_, S> {
    type Ok = ();
    type Error = EncodeError<S::Error>;
    type SerializeSeq = Impossible<(), Self::Error>;
    type SerializeTuple = Impossible<(), Self::Error>;
    type SerializeTupleStruct = Impossible<(), Self::Error>;
    type SerializeTupleVariant = Impossible<(), Self::Error>;
    type SerializeMap = Impossible<(), Self::Error>;
    type SerializeStruct = Impossible<(), Self::Error>;
    type SerializeStructVariant = Impossible<(), Self::Error>;

    #[inline]
    fn serialize_str(self, v: &str) -> Result<(), S> {
        let sink = self.sink;
        sink.write_byte(b'"').map_err(EncodeError::Sink)?;
        sink.write_bytes(v.as_bytes()).map_err(EncodeError::Sink)?;
        sink.write_byte(b'"').map_err(EncodeError::Sink)
    }

    fn collect_str<T: fmt::Display + ?Sized>(self, value: &T) -> Result<(), S> {
        let sink = self.sink;
        sink.write_byte(b'"').map_err(EncodeError::Sink)?;
        let mut writer = VerbatimWriter::new(&mut *sink);
        if write!(writer, "{value:#}").is_err() {
            return Err(match writer.error.take() {
                Some(e) => EncodeError::Sink(e),
                None => EncodeError::Value(ValueError::DISPLAY_FAILED),
            });
        }
        sink.write_byte(b'"').map_err(EncodeError::Sink)
    }

    refuse_the_rest!(NOT_RAW_TEXT;
        serialize_bool(bool), serialize_i8(i8), serialize_i16(i16), serialize_i32(i32),
        serialize_i64(i64), serialize_u8(u8), serialize_u16(u16), serialize_u32(u32),
        serialize_u64(u64), serialize_f32(f32), serialize_f64(f64), serialize_char(char),
        serialize_bytes(&[u8]), serialize_none(), serialize_unit(),
        serialize_unit_struct(&'static str),
    );
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), S> {
        Err(EncodeError::Value(NOT_RAW_TEXT))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<(), S> {
        Err(EncodeError::Value(NOT_RAW_TEXT))
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), S> {
        Err(EncodeError::Value(NOT_RAW_TEXT))
    }
    refuse_compounds!(NOT_RAW_TEXT);
}
