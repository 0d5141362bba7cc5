//! Decode errors that name the method and the path of the bad field, e.g.
//! `session/new.mcpServers[2].env[0].value must be a string`.

use alloc::string::String;
use core::fmt;

use crate::wire::ErrorCode;

/// Why a message could not be decoded into its typed form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// No method of that name is known in that direction (`-32601`).
    UnknownMethod,
    /// The params (or result) do not fit the method's type (`-32602`).
    InvalidParams,
}

/// Which part of a message was being decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Part {
    Params,
    Result,
}

/// A typed-decode failure, with a message fit for a JSON-RPC error reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    kind: DecodeErrorKind,
    method: String,
    path: String,
    message: String,
}

impl DecodeError {
    /// The method is not known.
    pub(crate) fn unknown_method(method: &str) -> Self {
        Self {
            kind: DecodeErrorKind::UnknownMethod,
            method: String::from(method),
            path: String::new(),
            message: String::from("Method not found"),
        }
    }

    /// The field at `path` (empty: the whole params/result) is wrong; `detail` says how,
    /// e.g. `must be a string`.
    pub(crate) fn invalid(method: &str, part: Part, path: String, detail: &str) -> Self {
        let mut message = String::from(method);
        match (part, path.is_empty()) {
            (Part::Params, true) => message.push_str(" params"),
            (Part::Params, false) => {}
            (Part::Result, _) => message.push_str(" result"),
        }
        if !path.is_empty() {
            if !path.starts_with('[') {
                message.push('.');
            }
            message.push_str(&path);
        }
        message.push(' ');
        message.push_str(detail);
        Self {
            kind: DecodeErrorKind::InvalidParams,
            method: String::from(method),
            path,
            message,
        }
    }

    /// Invalid params with a message that is used as is.
    pub(crate) fn verbatim(method: &str, message: &str) -> Self {
        Self {
            kind: DecodeErrorKind::InvalidParams,
            method: String::from(method),
            path: String::new(),
            message: String::from(message),
        }
    }

    /// What went wrong, as a category.
    pub fn kind(&self) -> DecodeErrorKind {
        self.kind
    }

    /// The method whose message failed.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The path of the offending field inside params/result, like `mcpServers[2].env[0].value`;
    /// empty when the whole value is at fault.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The full message, e.g. `session/new.cwd must be a string`.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The JSON-RPC error code a reply to this failure carries.
    pub fn code(&self) -> ErrorCode {
        match self.kind {
            DecodeErrorKind::UnknownMethod => ErrorCode::METHOD_NOT_FOUND,
            DecodeErrorKind::InvalidParams => ErrorCode::INVALID_PARAMS,
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl core::error::Error for DecodeError {}
