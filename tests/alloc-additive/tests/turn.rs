//! The same turn, the same lines, with and without `alloc` in acp-core (run by `.ci/run` both
//! ways): `alloc` adds to the API without changing it.

use acp_alloc_additive::{Seen, tool_turn};

const CLIENT: &[&str] = &[
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":{\"cwd\":\"/w\",\"mcpServers\":[]}}\n",
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"s1\",\"prompt\":[{\"type\":\"text\",\"text\":\"/tool\"}]}}\n",
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"outcome\":{\"outcome\":\"selected\",\"optionId\":\"allow_once\"}}}\n",
];

#[test]
fn a_permission_turn_over_fixed_storage_writes_the_same_lines_in_either_build() {
    let mut lines = Vec::new();
    let seen = tool_turn(CLIENT, &mut |line| lines.push(line.to_owned())).unwrap();
    assert_eq!(
        seen,
        Seen {
            allowed: 1,
            saved: 1,
            closed: true
        }
    );
    assert_eq!(lines.len(), 6, "{lines:#?}");
    assert!(lines[0].starts_with(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"#));
    assert_eq!(
        &lines[1..],
        [
            r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"call-1","title":"write notes.txt","kind":"edit","status":"pending"}}}"#,
            r#"{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"call-1","title":"write notes.txt","kind":"edit","status":"pending"},"options":[{"optionId":"allow_once","name":"Allow once","kind":"allow_once"},{"optionId":"allow_always","name":"Always allow","kind":"allow_always"},{"optionId":"reject_once","name":"Reject once","kind":"reject_once"},{"optionId":"reject_always","name":"Always reject","kind":"reject_always"}]}}"#,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"call-1","status":"completed"}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#,
        ]
    );
}

/// The second run really has `alloc` on in acp-core (the feature reached it): `Growable`
/// exists only then.
#[cfg(feature = "alloc")]
#[test]
fn alloc_is_on_in_acp_core() {
    let _: acp_core::conn::storage::Growable = acp_core::conn::storage::Growable;
}
