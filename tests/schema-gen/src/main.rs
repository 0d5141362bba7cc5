//! Writes to stdout one JSON object: `schema`, the official JSON Schema (draft 2020-12, every
//! type of ACP v1's stable surface under `$defs`, as the official `schema.json` has them), and
//! `meta`, the official method-name tables (the official `meta.json`).

use agent_client_protocol_schema::v1;
use schemars::JsonSchema;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Value, json};

/// Adds `T`'s schema to the definitions under `name`: the message unions are `inline` types,
/// so the generator does not put them there itself.
fn root<T: JsonSchema>(
    generator: &mut SchemaGenerator,
    roots: &mut Vec<(&'static str, Value)>,
    name: &'static str,
) {
    let schema = generator.subschema_for::<T>();
    roots.push((name, schema.to_value()));
}

fn main() {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let mut roots = Vec::new();
    root::<v1::AgentRequest>(&mut generator, &mut roots, "AgentRequest");
    root::<v1::AgentResponse>(&mut generator, &mut roots, "AgentResponse");
    root::<v1::AgentNotification>(&mut generator, &mut roots, "AgentNotification");
    root::<v1::ClientRequest>(&mut generator, &mut roots, "ClientRequest");
    root::<v1::ClientResponse>(&mut generator, &mut roots, "ClientResponse");
    root::<v1::ClientNotification>(&mut generator, &mut roots, "ClientNotification");
    root::<v1::ProtocolLevelNotification>(&mut generator, &mut roots, "ProtocolLevelNotification");
    let mut defs = generator.take_definitions(true);
    for (name, schema) in roots {
        defs.entry(name).or_insert(schema);
    }
    let out = json!({
        "schema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Agent Client Protocol",
            "$defs": defs,
        },
        "meta": {
            "version": 1,
            "agentMethods": v1::AGENT_METHOD_NAMES,
            "clientMethods": v1::CLIENT_METHOD_NAMES,
            "protocolMethods": v1::PROTOCOL_LEVEL_METHOD_NAMES,
        },
    });
    println!("{out}");
}
