//! The official schema types (`agent-client-protocol-schema`) on the same corpora and paths as
//! `benches/wire.rs`, with the same ratio table: c1 is measured beside a1 and b2 in one
//! process, so its ratio is comparable with the main package's table.
//!
//! ```text
//! cargo bench --manifest-path benches/official/Cargo.toml
//! ```
//!
//! Note: this binary's serde_json has `preserve_order` (the schema crate forces it). It does
//! not touch a1 or b2, which build no maps, but it does slow any `serde_json::Value` decode.

#[path = "../../common/mod.rs"]
mod common;

use std::borrow::Cow;
use std::collections::HashMap;
use std::hint::black_box;

use agent_client_protocol_schema::v1 as acp;
use criterion::{Criterion, SamplingMode, Throughput};
use serde::Deserialize;
use serde_json::value::RawValue;

use common::paths::{A1_MEMCHR, B2_SERDE_ENVELOPE, split_lines};
use common::{Corpus, DecodePath, Outcome, bench_mode, check_paths};

/// c1: the official types' best path (perf-anchors "c1"). The crate's message enums are
/// untagged and it has no method-keyed decoder, so: a borrowed envelope with the official
/// `RequestId` and raw params, then the params type chosen by method. Responses take their
/// type from the method of the request they answer, found in a pending table filled as
/// requests are decoded, as a real endpoint does.
const C1_OFFICIAL: DecodePath = DecodePath {
    id: "c1",
    label: "official schema types: envelope(&RawValue) + params type by method",
    run: c1_official,
};

#[derive(Deserialize)]
struct OfficialEnvelope<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    #[serde(default)]
    id: Option<acp::RequestId>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

/// Decodes `raw` as `T`, keeps the value observable, and returns its length for the checksum.
fn typed<'a, T: Deserialize<'a>, W>(raw: &'a RawValue, wrap: fn(T) -> W) -> Option<u64> {
    let value = serde_json::from_str::<T>(raw.get()).ok()?;
    black_box(wrap(value));
    Some(raw.get().len() as u64)
}

fn c1_official(corpus: &[u8]) -> Outcome {
    let mut outcome = Outcome::default();
    let mut pending: HashMap<acp::RequestId, &'static str> = HashMap::new();
    for line in split_lines(corpus) {
        let Ok(envelope) = serde_json::from_slice::<OfficialEnvelope<'_>>(line) else {
            continue;
        };
        let decoded = match (envelope.method.as_deref(), envelope.id) {
            (Some(method), id) => envelope.params.and_then(|params| {
                let (name, size) = decode_incoming(method, params)?;
                if let Some(id) = id {
                    pending.insert(id, name);
                }
                Some(size)
            }),
            (None, Some(id)) => {
                pending
                    .remove(&id)
                    .and_then(|method| match (envelope.result, envelope.error) {
                        (Some(result), None) => decode_result(method, result),
                        (None, Some(error)) => typed(error, |error: acp::Error| error),
                        _ => None,
                    })
            }
            (None, None) => None,
        };
        if let Some(size) = decoded {
            outcome.messages += 1;
            outcome.checksum += size + envelope.jsonrpc.len() as u64;
        }
    }
    outcome
}

/// Requests and notifications, by method, as the official enums of their direction.
fn decode_incoming(method: &str, params: &RawValue) -> Option<(&'static str, u64)> {
    Some(match method {
        "session/update" => (
            "session/update",
            typed(params, acp::AgentNotification::SessionNotification)?,
        ),
        "initialize" => (
            "initialize",
            typed(params, acp::ClientRequest::InitializeRequest)?,
        ),
        "session/new" => (
            "session/new",
            typed(params, acp::ClientRequest::NewSessionRequest)?,
        ),
        "session/prompt" => (
            "session/prompt",
            typed(params, acp::ClientRequest::PromptRequest)?,
        ),
        "session/request_permission" => (
            "session/request_permission",
            typed(params, acp::AgentRequest::RequestPermissionRequest)?,
        ),
        _ => return None,
    })
}

/// Results, by the method of the request they answer.
fn decode_result(method: &str, result: &RawValue) -> Option<u64> {
    match method {
        "initialize" => typed(result, acp::AgentResponse::InitializeResponse),
        "session/new" => typed(result, acp::AgentResponse::NewSessionResponse),
        "session/prompt" => typed(result, acp::AgentResponse::PromptResponse),
        "session/request_permission" => {
            typed(result, acp::ClientResponse::RequestPermissionResponse)
        }
        _ => None,
    }
}

fn main() {
    let paths = [A1_MEMCHR, B2_SERDE_ENVELOPE, C1_OFFICIAL];
    let corpora = Corpus::both();
    // Every line of both corpora must decode into the official types (this is also the
    // check under `cargo test --benches`).
    for corpus in &corpora {
        check_paths(corpus, &paths);
    }
    if !bench_mode() {
        println!("official: every corpus line decodes into the official types (test mode)");
        return;
    }

    let mut criterion = Criterion::default().configure_from_args();
    for corpus in &corpora {
        let mut group = criterion.benchmark_group(format!("official/{}", corpus.name));
        group.throughput(Throughput::ElementsAndBytes {
            elements: corpus.messages as u64,
            bytes: corpus.bytes.len() as u64,
        });
        group.sampling_mode(SamplingMode::Flat);
        group.sample_size(20);
        for path in &paths {
            group.bench_function(path.id, |bencher| {
                bencher.iter(|| path.run_once(&corpus.bytes));
            });
        }
        group.finish();
    }
    criterion.final_summary();

    common::ratio::run(&corpora, &paths);
}
