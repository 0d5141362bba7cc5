use core::fmt;

/// A JSON-RPC error code. Any `i32` is valid on the wire and round-trips unchanged; the
/// associated constants are the codes JSON-RPC 2.0 and ACP v1 give a meaning to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// The line was not valid JSON (or not valid UTF-8, or longer than the limit).
    pub const PARSE_ERROR: Self = Self(-32700);
    /// The JSON was not a valid JSON-RPC request object.
    pub const INVALID_REQUEST: Self = Self(-32600);
    /// The method does not exist or is not served.
    pub const METHOD_NOT_FOUND: Self = Self(-32601);
    /// The method exists but its parameters are wrong.
    pub const INVALID_PARAMS: Self = Self(-32602);
    /// The receiver failed while handling a valid request.
    pub const INTERNAL_ERROR: Self = Self(-32603);
    /// ACP: the request was cancelled (`$/cancel_request`, shutdown); borrowed from LSP.
    pub const REQUEST_CANCELLED: Self = Self(-32800);
    /// ACP: the operation needs `authenticate` first.
    pub const AUTH_REQUIRED: Self = Self(-32000);
    /// ACP: a session or file was not found. Agentao also uses it for calls made before
    /// `initialize`.
    pub const RESOURCE_NOT_FOUND: Self = Self(-32002);

    /// The standard name of a known code, `None` for any other.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            -32700 => "Parse error",
            -32600 => "Invalid Request",
            -32601 => "Method not found",
            -32602 => "Invalid params",
            -32603 => "Internal error",
            -32800 => "Request cancelled",
            -32000 => "Authentication required",
            -32002 => "Resource not found",
            _ => return None,
        })
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{} ({name})", self.0),
            None => write!(f, "{}", self.0),
        }
    }
}
