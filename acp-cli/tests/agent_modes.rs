//! `session/set_mode`, `session/set_config_option` and `_agentao.cn/set_model` through the
//! real agent (R-MODE-1, R-CONFIG-1 … R-CONFIG-3), and what the modes mean for the demo
//! tools (R-MODE-2).

mod agent_support;

use agent_support::{Agent, message, stop, title, update, usage};

fn set_mode(id: u64, sid: &str, mode: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/set_mode","params":{{"sessionId":"{sid}","modeId":"{mode}"}}}}"#
    )
}

#[test]
fn set_mode_announces_then_answers_and_changes_what_tools_do() {
    let mut agent = Agent::start("modes", &[]);
    let sid = agent.handshake();
    assert_eq!(
        agent.call(&set_mode(3, &sid, "full-access"), 3),
        [
            update(
                &sid,
                r#"{"sessionUpdate":"current_mode_update","currentModeId":"full-access"}"#
            ),
            r#"{"jsonrpc":"2.0","id":3,"result":{"modeId":"full-access"}}"#.to_owned(),
        ]
    );
    // full-access: no permission request (title, tool call, two updates, usage, answer).
    assert_eq!(agent.prompt(4, &sid, "/tool execute Deploy").len(), 6);

    agent.call(&set_mode(5, &sid, "read-only"), 5);
    assert_eq!(
        agent.prompt(6, &sid, "/tool execute Deploy"),
        [
            update(
                &sid,
                r#"{"sessionUpdate":"tool_call","toolCallId":"tool-2","title":"Deploy","kind":"execute","status":"pending"}"#
            ),
            update(
                &sid,
                r#"{"sessionUpdate":"tool_call_update","toolCallId":"tool-2","status":"failed","content":[{"type":"content","content":{"type":"text","text":"Error: the session is in read-only mode; a tool of kind 'execute' may not run"}}]}"#
            ),
            usage(&sid, 20 + 20),
            stop(6, "end_turn"),
        ]
    );

    // Another id is stored and echoed; the posture stays read-only.
    assert_eq!(
        agent.call(&set_mode(7, &sid, "code"), 7)[1],
        r#"{"jsonrpc":"2.0","id":7,"result":{"modeId":"code"}}"#
    );
    assert_eq!(
        agent.prompt(8, &sid, "/tool edit X")[1],
        update(
            &sid,
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"tool-3","status":"failed","content":[{"type":"content","content":{"type":"text","text":"Error: the session is in read-only mode; a tool of kind 'edit' may not run"}}]}"#
        )
    );

    agent.call(&set_mode(9, &sid, "plan"), 9);
    assert_eq!(
        agent.prompt(10, &sid, "/tool read Look")[1],
        update(
            &sid,
            r#"{"sessionUpdate":"tool_call_update","toolCallId":"tool-4","status":"failed","content":[{"type":"content","content":{"type":"text","text":"Error: the session is in plan mode; tools do not run"}}]}"#
        )
    );
}

#[test]
fn set_config_option_and_set_model_switch_the_model() {
    let mut agent = Agent::start("models", &[]);
    let sid = agent.handshake();
    let set = |id: u64, body: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"session/set_config_option","params":{{"sessionId":"{sid}",{body}}}}}"#
        )
    };
    assert_eq!(
        agent.call(&set(3, r#""configId":"model","value":"demo/fast""#), 3),
        [
            r#"{"jsonrpc":"2.0","id":3,"result":{"configOptions":[{"id":"model","name":"Model","category":"model","type":"select","currentValue":"demo/fast","options":[{"value":"demo/fast","name":"fast"}]}]}}"#
        ]
    );
    assert_eq!(
        agent.call(&set(4, r#""configId":"temperature","value":"1""#), 4),
        [
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"unknown configId 'temperature'; only 'model' is supported"}}"#
        ]
    );
    assert_eq!(
        agent.call(&set(5, r#""configId":"model","value":"openai/gpt""#), 5),
        [
            r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"cannot resolve provider 'openai'"}}"#
        ]
    );
    assert_eq!(
        agent.call(&set(6, r#""configId":"model","value":"demo/""#), 6),
        [
            r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"Invalid params: session/set_config_option.value 'provider/model' must have a non-empty provider and model"}}"#
        ]
    );
    assert_eq!(
        agent.call(
            &set(
                8,
                r#""configId":"model","value":"demo/x","apiKey":"sk-secret""#
            ),
            8
        ),
        [
            r#"{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"Invalid params: session/set_config_option: unexpected field(s) ['apiKey']; only ['configId', 'sessionId', 'value'] are accepted (credentials resolve server-side and never travel on the wire)"}}"#
        ]
    );
    let model = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"_agentao.cn/set_model","params":{{"sessionId":"{sid}","model":"  tiny "}}}}"#
    );
    assert_eq!(
        agent.call(&model, 7),
        [r#"{"jsonrpc":"2.0","id":7,"result":{"model":"tiny"}}"#]
    );
}

#[test]
fn changes_during_a_turn_are_refused_and_allowed_after_it() {
    let mut agent = Agent::start("modes-busy", &[]);
    let sid = agent.handshake();
    agent.send(&Agent::prompt_line(3, &sid, "/ask Wait?"));
    assert_eq!(agent.recv(), title(&sid, "/ask Wait?"));
    let ask = agent.recv();
    let rid = agent_support::request_id(&ask);
    assert_eq!(
        agent.call(&set_mode(4, &sid, "plan"), 4),
        [format!(
            r#"{{"jsonrpc":"2.0","id":4,"error":{{"code":-32600,"message":"session/set_mode rejected: session {sid} has an active turn; retry after it completes"}}}}"#
        )]
    );
    agent.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{rid},"result":{{"outcome":"answered","text":"yes"}}}}"#
    ));
    assert_eq!(
        agent.until_response(3),
        [
            message(&sid, "yes"),
            usage(&sid, 10 + 3),
            stop(3, "end_turn")
        ]
    );
    assert_eq!(agent.call(&set_mode(5, &sid, "plan"), 5).len(), 2);
}
