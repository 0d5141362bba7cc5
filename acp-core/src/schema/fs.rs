//! The client's file system: `fs/read_text_file`, `fs/write_text_file`.

use alloc::string::String;

use serde::{Deserialize, Serialize};

use super::initialize::empty_message;
use super::lenient::{self, Meta};

/// `fs/read_text_file` params (needs `fs.readTextFile`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ReadTextFileRequest {
    /// The session.
    pub session_id: String,
    /// Absolute path.
    pub path: String,
    /// First line to read, 1-based.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub line: Option<u32>,
    /// How many lines.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::opt"
    )]
    pub limit: Option<u32>,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `fs/read_text_file` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ReadTextFileResponse {
    /// The text read (possibly unsaved editor contents).
    pub content: String,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

/// `fs/write_text_file` params (needs `fs.writeTextFile`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct WriteTextFileRequest {
    /// The session.
    pub session_id: String,
    /// Absolute path.
    pub path: String,
    /// The whole new text.
    pub content: String,
    /// Extension data.
    #[serde(
        rename = "_meta",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient::meta"
    )]
    pub meta: Option<Meta>,
}

empty_message! {
    /// `fs/write_text_file` result.
    WriteTextFileResponse;
}
