//! The cases, one module per capability, and the helpers they share.

use serde_json::{Value, json};

use super::case::Case;
use super::cx::{Cx, Kind, kind};
use super::verdict::{Outcome, fail};

mod cancel;
mod chaos;
mod client;
mod framing;
mod ids;
mod initialize;
mod latency;
mod mcp;
mod permission;
mod process;
mod prompt;
mod rpc;
mod sessions;
pub mod terminal;

/// Every case, in the order they run and are reported.
pub fn all() -> Vec<Case> {
    [
        framing::cases(),
        ids::cases(),
        initialize::cases(),
        rpc::cases(),
        sessions::cases(),
        prompt::cases(),
        cancel::cases(),
        permission::cases(),
        client::cases(),
        terminal::cases(),
        mcp::cases(),
        process::cases(),
        chaos::cases(),
        latency::cases(),
    ]
    .concat()
}

/// `initialize` params for protocol version 1 and no client capabilities.
pub fn init_params() -> Value {
    json!({"protocolVersion": 1, "clientCapabilities": {}})
}

/// One `initialize` request line with `id`.
pub fn init_line(id: &str) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"initialize\",\"params\":{}}}\n",
        init_params()
    )
}

/// Proves the connection still works: a request for a method nobody has gets answered.
pub async fn still_serving(cx: &mut Cx) -> Result<(), Outcome> {
    let id = cx.request("conform/ping", json!({})).await?;
    cx.response(&id)
        .await
        .map(|_| ())
        .map_err(|o| o.context("the connection did not go on"))
}

/// Sends `bytes` and expects one error response with `code`, whose id is one of `ids`.
pub async fn expect_error_for(
    cx: &mut Cx,
    bytes: &[u8],
    code: i64,
    ids: &[Value],
) -> Result<String, Outcome> {
    cx.send_raw(bytes).await?;
    let wanted: Vec<Value> = ids.to_vec();
    let index = cx
        .wait_for(
            &format!("error response (id {})", show_ids(ids)),
            super::cx::ANSWER,
            |m| kind(m) == Kind::Response && m.get("id").is_some_and(|id| wanted.contains(id)),
        )
        .await?;
    let message = cx.message(index).clone();
    let (got, text) = super::cx::error_of(&message)?;
    if got != code {
        return Err(fail(format!(
            "answered error {got} ({text}), expected {code}"
        )));
    }
    Ok(format!("answered {got} with id {}", message["id"]))
}

fn show_ids(ids: &[Value]) -> String {
    ids.iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join(" or ")
}

/// Error responses with `id: null` received so far.
pub fn null_id_errors(cx: &Cx) -> usize {
    cx.messages()
        .filter(|&i| {
            let m = cx.message(i);
            kind(m) == Kind::Response && m.get("id") == Some(&Value::Null)
        })
        .count()
}
