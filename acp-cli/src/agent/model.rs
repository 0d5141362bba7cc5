//! The model as the driver sees it: something that streams one completion. The binary plugs
//! in the HTTP client ([`HttpModel`]); tests plug in a scripted one; the demo backend, which
//! never asks, gets [`NoModel`].

use std::future::Future;
use std::pin::Pin;

use crate::llm::chat::{ChatRequest, Finished, ModelError, StreamEvent};
use crate::llm::config::ModelConfig;

/// A boxed future of one completion.
pub type Completion<'a> = Pin<Box<dyn Future<Output = Result<Finished, ModelError>> + 'a>>;

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

/// The OpenAI-compatible server of the configuration, over HTTP(S).
#[derive(Clone, Debug)]
pub struct HttpModel {
    config: ModelConfig,
}

impl HttpModel {
    /// A client for the server, key and model of `config` (the request names its model).
    pub fn new(config: ModelConfig) -> Self {
        Self { config }
    }
}

impl ModelClient for HttpModel {
    fn stream<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_event: &'a mut dyn FnMut(StreamEvent),
    ) -> Completion<'a> {
        Box::pin(crate::llm::http::stream_chat(
            &self.config,
            request,
            on_event,
        ))
    }
}
