//! The client's own table row: each request of ours and its method (storage itself is
//! [`Buffers`](crate::conn::Buffers), shared with the agent).

use crate::machine::RequestId;

use super::event::ClientMethod;

/// One request of ours and its method, to decode the answer by the method that asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OurRequest {
    /// Our id.
    pub id: RequestId,
    /// The method.
    pub method: ClientMethod,
    /// Its result is an object with only optional members, so a `null` answer reads as `{}`
    /// (see [`empty_result`](super::empty_result)).
    pub empty_result: bool,
}
