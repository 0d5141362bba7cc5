//! Why encoding failed.

use core::fmt;

/// Why a value or message could not be encoded.
///
/// Either way the sink may already hold part of the line, which must be discarded.
#[derive(Debug)]
pub enum EncodeError<E> {
    /// The sink refused bytes (a full buffer, an I/O error).
    Sink(E),
    /// The value cannot be written as JSON.
    Value(ValueError),
}

impl<E: fmt::Display> fmt::Display for EncodeError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::Sink(e) => write!(f, "cannot write encoded JSON: {e}"),
            EncodeError::Value(e) => write!(f, "cannot encode value as JSON: {e}"),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> core::error::Error for EncodeError<E> {}

impl<E: fmt::Debug + fmt::Display> serde::ser::Error for EncodeError<E> {
    fn custom<T: fmt::Display>(message: T) -> Self {
        EncodeError::Value(ValueError::custom(message))
    }
}

impl<E> From<ValueError> for EncodeError<E> {
    fn from(error: ValueError) -> Self {
        EncodeError::Value(error)
    }
}

/// A value that JSON cannot represent, or whose `Serialize` implementation failed.
///
/// Kept to two words so that results carrying it return in registers on the hot path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueError {
    kind: Kind,
    /// A `Serialize` implementation's own message. Without `alloc` it cannot be kept.
    /// Boxed twice so the field is one pointer, keeping the error two words.
    #[cfg(feature = "alloc")]
    #[allow(clippy::box_collection)]
    message: Option<alloc::boxed::Box<alloc::string::String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    KeyMustBeAString,
    FloatKeyMustBeFinite,
    DisplayFailed,
    NotRawText,
    Custom,
}

impl ValueError {
    pub(crate) const KEY_MUST_BE_A_STRING: Self = Self::of(Kind::KeyMustBeAString);
    pub(crate) const FLOAT_KEY_MUST_BE_FINITE: Self = Self::of(Kind::FloatKeyMustBeFinite);
    pub(crate) const DISPLAY_FAILED: Self = Self::of(Kind::DisplayFailed);
    pub(crate) const NOT_RAW_TEXT: Self = Self::of(Kind::NotRawText);

    const fn of(kind: Kind) -> Self {
        Self {
            kind,
            #[cfg(feature = "alloc")]
            message: None,
        }
    }

    #[cfg(feature = "alloc")]
    fn custom<T: fmt::Display>(message: T) -> Self {
        use alloc::string::ToString;
        Self {
            kind: Kind::Custom,
            message: Some(alloc::boxed::Box::new(message.to_string())),
        }
    }

    #[cfg(not(feature = "alloc"))]
    fn custom<T: fmt::Display>(_message: T) -> Self {
        Self::of(Kind::Custom)
    }
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            // The texts of serde_json, so errors read the same whichever encoder ran.
            Kind::KeyMustBeAString => f.write_str("key must be a string"),
            Kind::FloatKeyMustBeFinite => f.write_str("float key must be finite"),
            Kind::DisplayFailed => f.write_str("a Display implementation returned an error"),
            Kind::NotRawText => f.write_str("a raw JSON value must be handed over as one string"),
            Kind::Custom => {
                #[cfg(feature = "alloc")]
                if let Some(message) = &self.message {
                    return f.write_str(message);
                }
                f.write_str(
                    "a Serialize implementation failed (its message is dropped without alloc)",
                )
            }
        }
    }
}

impl core::error::Error for ValueError {}
