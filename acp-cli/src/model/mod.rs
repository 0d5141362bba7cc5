//! The model as the agent sees it: what a backend and a model say to each other ([`chat`]),
//! and something that streams one completion ([`ModelClient`]). The binary plugs in the HTTP
//! client (`llm::http::HttpModel`); tests plug in a scripted one; the demo backend, which
//! never asks, gets [`NoModel`].
//!
//! It stands apart from both `agent` (which drives a model) and `llm` (which implements one)
//! so that neither imports the other's insides: `agent` never depends on `llm`.

use std::future::Future;
use std::pin::Pin;

pub mod chat;

use chat::{ChatRequest, Finished, ModelError, StreamEvent};

/// A boxed future of one completion.
pub(crate) type Completion<'a> = Pin<Box<dyn Future<Output = Result<Finished, ModelError>> + 'a>>;

/// Streams completions. Dropping the returned future abandons the request at once (the
/// HTTP client closes its connection), which is how a cancel reaches the model.
pub trait ModelClient {
    /// Streams `request`: each piece goes to `on_event` as it arrives; the future ends with
    /// the finished answer or the error.
    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_event: &'a mut dyn FnMut(StreamEvent),
    ) -> Completion<'a>;
}

/// No model at all: every request fails (the demo backend never makes one).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoModel;

impl ModelClient for NoModel {
    fn stream<'a>(
        &'a self,
        _request: &'a ChatRequest,
        _on_event: &'a mut dyn FnMut(StreamEvent),
    ) -> Completion<'a> {
        Box::pin(async {
            Err(ModelError::Config(
                "this backend has no model (run with --backend llm)".to_owned(),
            ))
        })
    }
}
