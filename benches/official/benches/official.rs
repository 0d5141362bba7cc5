//! The official schema types (`agent-client-protocol-schema`) side by side with acp-core, in
//! one process and the same rounds: c1 (the official types' best path) beside o2 (our envelope
//! scan), o3 (our owned types) and o4 (our borrowed views), plus encoding an
//! `agent_message_chunk` with our encoder (o5) and with serde_json on the official types (f3).
//! Besides criterion it prints the ratio table, and then each of ours as a multiple of the
//! official path (the issue's targets: o3 ≥ 2× c1, o4 ≥ 4× c1, o5 ≥ 1.2× f3).
//!
//! ```text
//! cargo bench --manifest-path benches/official/Cargo.toml
//! ```
//!
//! Note: this binary's serde_json has `preserve_order` (the schema crate forces it), for both
//! sides: it does not touch a1, b2 or the views, which build no maps, but it slows any
//! `serde_json::Value` decode (the official types' and our owned `_meta`/`rawInput`).

#[path = "../../common/mod.rs"]
mod common;

use std::borrow::Cow;
use std::collections::HashMap;
use std::hint::black_box;
use std::sync::{Arc, OnceLock};

use agent_client_protocol_schema::v1 as acp;
use criterion::{Criterion, SamplingMode, Throughput};
use serde::Deserialize;
use serde_json::value::RawValue;

use acp_core::schema::{AgentNotification, SessionNotification};
use acp_core::wire::encode::write_notification;
use common::paths::{
    A1_MEMCHR, B2_SERDE_ENVELOPE, O2_FRAMER_ENVELOPE, O3_OWNED, O4_VIEWS, split_lines,
};
use common::ratio::{Row, Schedule, median};
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

// ---------------------------------------------------------------------------------------------
// Encoding an agent_message_chunk: each small-corpus line decoded once (outside the timing)
// into our owned types and into the official ones, then written back into a reused buffer.
// ---------------------------------------------------------------------------------------------

/// o5: our encoder (`wire::encode::write_notification`) on our owned `SessionNotification`.
const O5_ENCODE: DecodePath = DecodePath {
    id: "o5",
    label: "encode agent_message_chunk: acp-core write_notification(owned SessionNotification)",
    run: o5_encode,
};

/// f3: serde_json on the official types, as perf-anchors' f3.
const F3_ENCODE_OFFICIAL: DecodePath = DecodePath {
    id: "f3",
    label: "encode agent_message_chunk: serde_json::to_writer(JsonRpcMessage<Notification<&official>>)",
    run: f3_encode,
};

static OURS: OnceLock<Vec<SessionNotification>> = OnceLock::new();
static THEIRS: OnceLock<Vec<acp::AgentNotification>> = OnceLock::new();

/// The small corpus's notifications in our owned types (built on first use).
fn ours(corpus: &[u8]) -> &'static [SessionNotification] {
    OURS.get_or_init(|| {
        split_lines(corpus)
            .map(|line| {
                let line = std::str::from_utf8(line).expect("corpus is UTF-8");
                let params = acp_core::wire::envelope::scan(line)
                    .ok()
                    .and_then(|m| match m {
                        acp_core::wire::envelope::Message::Notification(n) => n.params,
                        _ => None,
                    })
                    .expect("small corpus lines are notifications");
                match AgentNotification::decode("session/update", Some(params.get())) {
                    Ok(AgentNotification::SessionUpdate(n)) => n,
                    other => panic!("not a session/update: {other:?}"),
                }
            })
            .collect()
    })
}

/// The same notifications in the official types.
fn theirs(corpus: &[u8]) -> &'static [acp::AgentNotification] {
    THEIRS.get_or_init(|| {
        split_lines(corpus)
            .map(|line| {
                let envelope: OfficialEnvelope<'_> =
                    serde_json::from_slice(line).expect("corpus line");
                let params = envelope.params.expect("params");
                acp::AgentNotification::SessionNotification(
                    serde_json::from_str(params.get()).expect("official SessionNotification"),
                )
            })
            .collect()
    })
}

fn o5_encode(corpus: &[u8]) -> Outcome {
    let mut out = Vec::with_capacity(8192);
    let mut outcome = Outcome::default();
    for notification in ours(corpus) {
        out.clear();
        write_notification(&mut out, "session/update", Some(notification)).expect("encodes");
        outcome.messages += 1;
        outcome.checksum += black_box(&out).len() as u64;
    }
    outcome
}

fn f3_encode(corpus: &[u8]) -> Outcome {
    let method: Arc<str> = Arc::from("session/update");
    let mut out = Vec::with_capacity(8192);
    let mut outcome = Outcome::default();
    for notification in theirs(corpus) {
        out.clear();
        let message = acp::JsonRpcMessage::wrap(acp::Notification {
            method: method.clone(),
            params: Some(notification),
        });
        serde_json::to_writer(&mut out, &message).expect("encodes");
        out.push(b'\n');
        outcome.messages += 1;
        outcome.checksum += black_box(&out).len() as u64;
    }
    outcome
}

/// Both encoders must write back exactly the corpus bytes (it was written in the official
/// field order), so they are compared on equal work.
fn check_encoders(corpus: &Corpus) {
    let mut ours_out = Vec::new();
    for notification in ours(&corpus.bytes) {
        write_notification(&mut ours_out, "session/update", Some(notification)).expect("encodes");
    }
    assert!(ours_out == corpus.bytes, "o5 does not reproduce the small corpus");
    let method: Arc<str> = Arc::from("session/update");
    let mut theirs_out = Vec::new();
    for notification in theirs(&corpus.bytes) {
        let message = acp::JsonRpcMessage::wrap(acp::Notification {
            method: method.clone(),
            params: Some(notification),
        });
        serde_json::to_writer(&mut theirs_out, &message).expect("encodes");
        theirs_out.push(b'\n');
    }
    assert!(theirs_out == corpus.bytes, "f3 does not reproduce the small corpus");
}

/// Each of ours as a multiple of the official path, median over the same rounds.
fn print_versus(rows: &[Row], pairs: &[(&str, &str, f64)]) {
    println!("\n| ours vs official (same rounds) | × median | min | max | target |");
    println!("|---|---:|---:|---:|---:|");
    for (ours, theirs, target) in pairs {
        let find = |id: &str| rows.iter().find(|row| row.id == id);
        let (Some(a), Some(b)) = (find(ours), find(theirs)) else {
            continue;
        };
        let per_round: Vec<f64> = a
            .seconds
            .iter()
            .zip(&b.seconds)
            .map(|(ours, theirs)| theirs / ours)
            .collect();
        let min = per_round.iter().copied().fold(f64::INFINITY, f64::min);
        let max = per_round.iter().copied().fold(0.0, f64::max);
        println!(
            "| {ours} / {theirs} | {:.2} | {min:.2} | {max:.2} | ≥ {target} |",
            median(&per_round)
        );
    }
}

fn main() {
    let decode = [
        A1_MEMCHR,
        B2_SERDE_ENVELOPE,
        C1_OFFICIAL,
        O2_FRAMER_ENVELOPE,
        O3_OWNED,
        O4_VIEWS,
    ];
    let encode = [A1_MEMCHR, F3_ENCODE_OFFICIAL, O5_ENCODE];
    let corpora = Corpus::both();
    // Every line of both corpora must decode into the official types and ours, and both
    // encoders must reproduce the small corpus (this is also the check under
    // `cargo test --benches`).
    for corpus in &corpora {
        check_paths(corpus, &decode);
    }
    check_paths(&corpora[1], &encode);
    check_encoders(&corpora[1]);
    if !bench_mode() {
        println!("official: every corpus line decodes into the official types and ours (test mode)");
        return;
    }

    let mut criterion = Criterion::default().configure_from_args();
    for (corpus, paths) in [
        (&corpora[0], &decode[..]),
        (&corpora[1], &decode[..]),
        (&corpora[1], &encode[..]),
    ] {
        let name = if paths.len() == encode.len() { "encode" } else { corpus.name };
        let mut group = criterion.benchmark_group(format!("official/{name}"));
        group.throughput(Throughput::ElementsAndBytes {
            elements: corpus.messages as u64,
            bytes: corpus.bytes.len() as u64,
        });
        group.sampling_mode(SamplingMode::Flat);
        group.sample_size(20);
        for path in paths {
            group.bench_function(path.id, |bencher| {
                bencher.iter(|| path.run_once(&corpus.bytes));
            });
        }
        group.finish();
    }
    criterion.final_summary();

    let schedule = Schedule::from_env();
    println!(
        "\nRatio tables: 1 warm-up round, then {} rounds; every path once per round, each \
         measurement ≥ {} ms; × = median over rounds of (a1 time ÷ path time). Encode rows \
         count the bytes written (the small corpus, byte for byte).",
        schedule.rounds,
        schedule.min_time.as_millis()
    );
    for (corpus, paths, pairs) in [
        (
            &corpora[0],
            &decode[..],
            &[("o3", "c1", 2.0), ("o4", "c1", 4.0)][..],
        ),
        (&corpora[1], &decode[..], &[("o3", "c1", 2.0), ("o4", "c1", 4.0)][..]),
        (&corpora[1], &encode[..], &[("o5", "f3", 1.2)][..]),
    ] {
        let rows = common::ratio::measure(corpus, paths, schedule);
        common::ratio::print_table(corpus, &rows);
        print_versus(&rows, pairs);
    }
}
