//! What the differential tests share: our decoders by tier, the official crate's JSON Schema
//! (generated with its `schemars` feature) and where acp-core's sample messages live.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::fmt::Debug;
use std::path::PathBuf;

use acp_core::schema as ours;
use acp_core::view::{
    AgentNotificationView, AgentRequestView, AgentResponseView, ClientNotificationView,
    ClientRequestView, ClientResponseView, ViewErrorKind,
};
use acp_core::wire::encode::to_vec;
use acp_core::wire::json::parse_value;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Which of our decoders a message goes through: who sends it, and whether it is a request's
/// params, a notification's params or a result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// Client → agent request params.
    ClientRequest,
    /// Agent → client request params.
    AgentRequest,
    /// Client → agent notification params.
    ClientNotification,
    /// Agent → client notification params.
    AgentNotification,
    /// The agent's result for a client request.
    AgentResponse,
    /// The client's result for an agent request.
    ClientResponse,
}

/// Decodes `wire` (params or a result of `method`) with our owned types, checks the owned
/// fast path (`decode_raw`) reads the same value and the borrowed views (where a view exists)
/// decode it too, then re-encodes the owned value with our encoder. Returns that JSON text and
/// whether a view read it.
pub fn ours_round_trip(tier: Tier, method: &str, wire: &str) -> (String, bool) {
    let raw =
        parse_value(wire).unwrap_or_else(|e| panic!("{method}: our scanner refuses {wire}: {e:?}"));
    let fail = |e: ours::DecodeError| -> ! {
        panic!("{method} ({tier:?}): ours refuses what the official crate wrote: {e}\n{wire}")
    };
    macro_rules! owned {
        ($ty:ident, $decode:expr, $fast:expr) => {{
            let decoded: ours::$ty = $decode.unwrap_or_else(|e| fail(e));
            let fast: ours::$ty = $fast.unwrap_or_else(|e| fail(e));
            assert_eq!(
                fast, decoded,
                "{method}: the owned fast path reads another value"
            );
            to_vec(&decoded).expect("our encoder writes it")
        }};
    }
    let encoded = match tier {
        Tier::ClientRequest => owned!(
            ClientRequest,
            ours::ClientRequest::decode(method, Some(wire)),
            ours::ClientRequest::decode_raw(method, Some(raw))
        ),
        Tier::AgentRequest => owned!(
            AgentRequest,
            ours::AgentRequest::decode(method, Some(wire)),
            ours::AgentRequest::decode_raw(method, Some(raw))
        ),
        Tier::ClientNotification => owned!(
            ClientNotification,
            ours::ClientNotification::decode(method, Some(wire)),
            ours::ClientNotification::decode(method, Some(raw.get()))
        ),
        Tier::AgentNotification => owned!(
            AgentNotification,
            ours::AgentNotification::decode(method, Some(wire)),
            ours::AgentNotification::decode_raw(method, Some(raw))
        ),
        Tier::AgentResponse => owned!(
            AgentResponse,
            ours::AgentResponse::decode(method, wire),
            ours::AgentResponse::decode_raw(method, raw)
        ),
        Tier::ClientResponse => owned!(
            ClientResponse,
            ours::ClientResponse::decode(method, wire),
            ours::ClientResponse::decode_raw(method, raw)
        ),
    };
    let view = match tier {
        Tier::ClientRequest => ClientRequestView::decode(method, Some(raw)).map(drop),
        Tier::AgentRequest => AgentRequestView::decode(method, Some(raw)).map(drop),
        Tier::ClientNotification => ClientNotificationView::decode(method, Some(raw)).map(drop),
        Tier::AgentNotification => AgentNotificationView::decode(method, Some(raw)).map(drop),
        Tier::AgentResponse => AgentResponseView::decode(method, raw).map(drop),
        Tier::ClientResponse => ClientResponseView::decode(method, raw).map(drop),
    };
    let viewed = match view {
        Ok(()) => true,
        Err(e) if e.kind() == ViewErrorKind::NoView => false,
        Err(e) => panic!(
            "{method} ({tier:?}): the view refuses what the official crate wrote: {e}\n{wire}"
        ),
    };
    (String::from_utf8(encoded).expect("UTF-8"), viewed)
}

/// The official crate's JSON Schema for `T`.
pub fn official_schema<T: JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).expect("a schema is JSON")
}

/// What `schema` says is wrong with `instance` (empty when it is valid).
pub fn schema_errors(schema: &Value, instance: &Value) -> Vec<String> {
    let validator = jsonschema::validator_for(schema).expect("the schema compiles");
    validator
        .iter_errors(instance)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

/// Requires `instance` to be a valid `T` by the official crate's generated schema.
pub fn assert_valid<T: JsonSchema>(what: &str, instance: &Value) {
    let errors = schema_errors(&official_schema::<T>(), instance);
    assert!(
        errors.is_empty(),
        "{what}: the 1.20.0 schema of {} rejects our {instance}: {errors:?}",
        std::any::type_name::<T>()
    );
}

/// Reads `text` as the official `T`, and requires our encoding of it to validate.
pub fn official_reads<T: DeserializeOwned + JsonSchema>(what: &str, text: &str) -> T {
    let value: T = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("{what}: the official crate refuses our {text}: {e}"));
    assert_valid::<T>(what, &serde_json::from_str(text).expect("JSON"));
    value
}

/// Official value → official JSON → ours (owned, fast path, view) → our JSON → official
/// value: the two official values must be equal, and our JSON valid by the 1.20.0 schema.
/// Returns whether a view read the message.
pub fn differential<T>(tier: Tier, method: &str, sample: &str) -> bool
where
    T: Serialize + DeserializeOwned + PartialEq + Debug + JsonSchema,
{
    let official: T = serde_json::from_str(sample)
        .unwrap_or_else(|e| panic!("{method}: the sample is no official value ({e}): {sample}"));
    let wire = serde_json::to_string(&official).expect("the official crate encodes it");
    let (ours, viewed) = ours_round_trip(tier, method, &wire);
    let back: T = official_reads(method, &ours);
    assert_eq!(
        back, official,
        "{method}: the official value changed through ours\nofficial: {wire}\nours:     {ours}"
    );
    viewed
}

/// acp-core's sample messages (one value of each shape its decode tests cover).
pub fn messages_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../acp-core/tests/messages"))
}

/// The discriminator values or enum names of a union or string enum's schema: `const`s and
/// `enum`s of its variants, or of its variants' `tag` property.
pub fn variant_names(schema: &Value, tag: Option<&str>) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut add = |value: &Value| {
        if let Some(name) = value.get("const").and_then(Value::as_str) {
            names.insert(name.to_owned());
        }
        for name in value
            .get("enum")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(name) = name.as_str() {
                names.insert(name.to_owned());
            }
        }
    };
    add(schema);
    for key in ["oneOf", "anyOf"] {
        for variant in schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            match tag {
                Some(tag) => {
                    if let Some(property) = variant.get("properties").and_then(|p| p.get(tag)) {
                        add(property);
                    }
                }
                None => add(variant),
            }
        }
    }
    names
}

/// Every string anywhere in a JSON value (keys excluded).
pub fn strings(value: &Value, out: &mut BTreeSet<String>) {
    match value {
        Value::String(s) => {
            out.insert(s.clone());
        }
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}
