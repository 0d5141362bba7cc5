//! Every demo command end to end through `acp-cli --acp --stdio` (R-DEMO-*): the exact
//! lines on the wire, the client's answers, the files on disk.

mod agent_support;

use agent_support::{Agent, OPTIONS, choose, message, request_id, s, stop, title, update, usage};

#[test]
fn plain_text_echo_think_and_plan() {
    let mut agent = Agent::start("cmd-basic", &[]);
    let sid = agent.handshake();
    let lines = agent.prompt(
        3,
        &sid,
        "Hello there\n/echo Hi!\n/think hmm\n/plan Read | Edit the code | Test",
    );
    assert_eq!(
        lines,
        [
            title(&sid, "Hello there"),
            message(&sid, "Hello there"),
            message(&sid, "Hi!"),
            update(
                &sid,
                r#"{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}"#
            ),
            update(
                &sid,
                r#"{"sessionUpdate":"plan","entries":[{"content":"Read","priority":"medium","status":"pending"},{"content":"Edit the code","priority":"medium","status":"pending"},{"content":"Test","priority":"medium","status":"pending"}]}"#
            ),
            // 66 bytes of prompt; 11 + 3 + 3 of message and thought text.
            usage(&sid, 83),
            stop(3, "end_turn"),
        ]
    );
}

/// R-DEMO-4: `*_always` is remembered for the tool.
#[test]
fn tool_allowed_then_rejected_then_remembered() {
    let mut agent = Agent::start("cmd-tool", &[]);
    let sid = agent.handshake();
    agent.send(&Agent::prompt_line(3, &sid, "/tool execute Run tests"));
    assert_eq!(agent.recv(), title(&sid, "/tool execute Run tests"));
    assert_eq!(
        agent.recv(),
        update(
            &sid,
            r#"{"sessionUpdate":"tool_call","toolCallId":"tool-1","title":"Run tests","kind":"execute","status":"pending"}"#
        )
    );
    let ask = agent.recv();
    let rid = request_id(&ask);
    assert_eq!(
        ask,
        format!(
            r#"{{"jsonrpc":"2.0","id":{rid},"method":"session/request_permission","params":{{"sessionId":"{sid}","toolCall":{{"toolCallId":"tool-1","kind":"execute","status":"pending","title":"Run tests"}},"options":{OPTIONS}}}}}"#
        )
    );
    agent.send(&choose(&rid, "allow_once"));
    assert_eq!(
        agent.until_response(3),
        [
            update(
                &sid,
                r#"{"sessionUpdate":"tool_call_update","toolCallId":"tool-1","status":"in_progress"}"#
            ),
            update(
                &sid,
                r#"{"sessionUpdate":"tool_call_update","toolCallId":"tool-1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"Done: Run tests"}}]}"#
            ),
            usage(&sid, 23),
            stop(3, "end_turn"),
        ]
    );

    // Rejected: failed, and the turn goes on.
    agent.send(&Agent::prompt_line(
        4,
        &sid,
        "/tool delete Clean\n/echo after",
    ));
    agent.recv();
    let rid = request_id(&agent.recv());
    agent.send(&choose(&rid, "reject_once"));
    assert_eq!(
        agent.until_response(4),
        [
            update(
                &sid,
                r#"{"sessionUpdate":"tool_call_update","toolCallId":"tool-2","status":"failed","content":[{"type":"content","content":{"type":"text","text":"Error: rejected by the user (reject_once)"}}]}"#
            ),
            message(&sid, "after"),
            // 23 so far, 30 of prompt and 5 echoed.
            usage(&sid, 58),
            stop(4, "end_turn"),
        ]
    );

    // allow_always: the same tool runs without asking next time.
    agent.send(&Agent::prompt_line(5, &sid, "/tool fetch Weather"));
    agent.recv();
    let rid = request_id(&agent.recv());
    agent.send(&choose(&rid, "allow_always"));
    assert_eq!(agent.until_response(5).len(), 4);
    assert_eq!(
        agent.prompt(6, &sid, "/tool fetch Weather"),
        [
            update(
                &sid,
                r#"{"sessionUpdate":"tool_call","toolCallId":"tool-4","title":"Weather","kind":"fetch","status":"pending"}"#
            ),
            update(
                &sid,
                r#"{"sessionUpdate":"tool_call_update","toolCallId":"tool-4","status":"in_progress"}"#
            ),
            update(
                &sid,
                r#"{"sessionUpdate":"tool_call_update","toolCallId":"tool-4","status":"completed","content":[{"type":"content","content":{"type":"text","text":"Done: Weather"}}]}"#
            ),
            usage(&sid, 58 + 19 + 19),
            stop(6, "end_turn"),
        ]
    );
}

/// R-DEMO-3: `/write` writes exactly its text; `/read` asks for nothing.
#[test]
fn read_and_write_locally_inside_the_cwd() {
    let mut agent = Agent::start("cmd-fs-local", &[]);
    let sid = agent.handshake();
    let file = agent.cwd.join("notes.txt");
    let path = s(&file).to_owned();
    agent.send(&Agent::prompt_line(
        3,
        &sid,
        "/write notes.txt two words \n/read notes.txt",
    ));
    let diff = format!(r#"{{"type":"diff","path":"{path}","newText":"two words "}}"#);
    assert_eq!(agent.recv(), title(&sid, "/write notes.txt two words"));
    assert_eq!(
        agent.recv(),
        update(
            &sid,
            &format!(
                r#"{{"sessionUpdate":"tool_call","toolCallId":"tool-1","title":"Write notes.txt","kind":"edit","status":"pending","content":[{diff}],"locations":[{{"path":"{path}"}}]}}"#
            )
        )
    );
    let ask = agent.recv();
    let rid = request_id(&ask);
    assert_eq!(
        ask,
        format!(
            r#"{{"jsonrpc":"2.0","id":{rid},"method":"session/request_permission","params":{{"sessionId":"{sid}","toolCall":{{"toolCallId":"tool-1","kind":"edit","status":"pending","title":"Write notes.txt","content":[{diff}]}},"options":{OPTIONS}}}}}"#
        )
    );
    agent.send(&choose(&rid, "allow_once"));
    assert_eq!(
        agent.until_response(3),
        [
            update(
                &sid,
                r#"{"sessionUpdate":"tool_call_update","toolCallId":"tool-1","status":"in_progress"}"#
            ),
            update(
                &sid,
                &format!(
                    r#"{{"sessionUpdate":"tool_call_update","toolCallId":"tool-1","status":"completed","content":[{diff},{{"type":"content","content":{{"type":"text","text":"Wrote 10 bytes to {path}"}}}}]}}"#
                )
            ),
            update(
                &sid,
                &format!(
                    r#"{{"sessionUpdate":"tool_call","toolCallId":"tool-2","title":"Read notes.txt","kind":"read","status":"pending","locations":[{{"path":"{path}"}}]}}"#
                )
            ),
            update(
                &sid,
                r#"{"sessionUpdate":"tool_call_update","toolCallId":"tool-2","status":"in_progress"}"#
            ),
            update(
                &sid,
                &format!(
                    r#"{{"sessionUpdate":"tool_call_update","toolCallId":"tool-2","status":"completed","content":[{{"type":"content","content":{{"type":"text","text":"Read 10 bytes from {path}"}}}}]}}"#
                )
            ),
            usage(&sid, 43),
            stop(3, "end_turn"),
        ]
    );
    assert_eq!(
        std::fs::read(&file).unwrap(),
        b"two words ",
        "exactly TEXT, no newline"
    );
}

/// R-DEMO-2: paths outside the cwd fail, symlinks resolved.
#[test]
fn paths_outside_the_cwd_fail_including_through_symlinks() {
    let mut agent = Agent::start("cmd-fs-outside", &[]);
    let sid = agent.handshake();
    let cwd = s(&agent.cwd.clone()).to_owned();
    assert_eq!(
        agent.prompt(3, &sid, "/read ../secret.txt"),
        [
            title(&sid, "/read ../secret.txt"),
            update(
                &sid,
                r#"{"sessionUpdate":"tool_call","toolCallId":"tool-1","title":"Read ../secret.txt","kind":"read","status":"pending"}"#
            ),
            update(
                &sid,
                &format!(
                    r#"{{"sessionUpdate":"tool_call_update","toolCallId":"tool-1","status":"failed","content":[{{"type":"content","content":{{"type":"text","text":"Error: '../secret.txt' is outside the session cwd '{cwd}'"}}}}]}}"#
                )
            ),
            usage(&sid, 19),
            stop(3, "end_turn"),
        ]
    );
    let outside = agent.cwd.parent().unwrap().join("agent-outside-secret.txt");
    std::fs::write(&outside, "secret").unwrap();
    std::os::unix::fs::symlink(&outside, agent.cwd.join("link.txt")).unwrap();
    let link = format!("{cwd}/link.txt");
    let lines = agent.prompt(4, &sid, "/read link.txt");
    assert_eq!(
        lines[2],
        update(
            &sid,
            &format!(
                r#"{{"sessionUpdate":"tool_call_update","toolCallId":"tool-2","status":"failed","content":[{{"type":"content","content":{{"type":"text","text":"Error: '{link}' is outside the session cwd '{cwd}' (after resolving symlinks)"}}}}]}}"#
            )
        )
    );
}

#[test]
fn read_and_write_through_the_client_when_it_offers_fs() {
    let mut agent = Agent::start("cmd-fs-client", &[]);
    let sid = agent.handshake_with(r#"{"fs":{"readTextFile":true,"writeTextFile":true}}"#);
    let path = format!("{}/doc.md", s(&agent.cwd.clone()));
    agent.send(&Agent::prompt_line(3, &sid, "/read doc.md"));
    assert_eq!(agent.recv(), title(&sid, "/read doc.md"));
    assert_eq!(agent.recv_n(2).len(), 2);
    let read = agent.recv();
    let rid = request_id(&read);
    assert_eq!(
        read,
        format!(
            r#"{{"jsonrpc":"2.0","id":{rid},"method":"fs/read_text_file","params":{{"sessionId":"{sid}","path":"{path}"}}}}"#
        )
    );
    agent.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{rid},"result":{{"content":"héllo"}}}}"#
    ));
    assert_eq!(
        agent.until_response(3),
        [
            update(
                &sid,
                &format!(
                    r#"{{"sessionUpdate":"tool_call_update","toolCallId":"tool-1","status":"completed","content":[{{"type":"content","content":{{"type":"text","text":"Read 6 bytes from {path}"}}}}]}}"#
                )
            ),
            usage(&sid, 12),
            stop(3, "end_turn"),
        ]
    );

    agent.send(&Agent::prompt_line(4, &sid, "/write doc.md new text"));
    agent.recv();
    let rid = request_id(&agent.recv());
    agent.send(&choose(&rid, "allow_once"));
    agent.recv();
    let write = agent.recv();
    let wid = request_id(&write);
    assert_eq!(
        write,
        format!(
            r#"{{"jsonrpc":"2.0","id":{wid},"method":"fs/write_text_file","params":{{"sessionId":"{sid}","path":"{path}","content":"new text"}}}}"#
        )
    );
    // The client refuses: the tool call fails with its error.
    agent.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{wid},"error":{{"code":-32000,"message":"read-only buffer"}}}}"#
    ));
    let lines = agent.until_response(4);
    assert_eq!(
        lines,
        [
            update(
                &sid,
                &format!(
                    r#"{{"sessionUpdate":"tool_call_update","toolCallId":"tool-2","status":"failed","content":[{{"type":"diff","path":"{path}","newText":"new text"}},{{"type":"content","content":{{"type":"text","text":"Error: the client answered -32000 read-only buffer"}}}}]}}"#
                )
            ),
            usage(&sid, 12 + 22),
            stop(4, "end_turn"),
        ]
    );
    assert!(
        !agent.cwd.join("doc.md").exists(),
        "nothing written locally"
    );
}

#[test]
fn ask_echoes_the_answer_or_the_sentinel() {
    let mut agent = Agent::start("cmd-ask", &[]);
    let sid = agent.handshake();
    agent.send(&Agent::prompt_line(3, &sid, "/ask Your name?\n/ask Again?"));
    assert_eq!(agent.recv(), title(&sid, "/ask Your name?"));
    let ask = agent.recv();
    let rid = request_id(&ask);
    assert_eq!(
        ask,
        format!(
            r#"{{"jsonrpc":"2.0","id":{rid},"method":"_agentao.cn/ask_user","params":{{"sessionId":"{sid}","question":"Your name?"}}}}"#
        )
    );
    agent.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{rid},"result":{{"outcome":"answered","text":"Ada"}}}}"#
    ));
    assert_eq!(agent.recv(), message(&sid, "Ada"));
    let rid = request_id(&agent.recv());
    agent.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{rid},"result":{{"outcome":"cancelled"}}}}"#
    ));
    assert_eq!(
        agent.until_response(3),
        [
            message(&sid, "(user unavailable)"),
            // 27 bytes of prompt, 3 + 18 of answers.
            usage(&sid, 48),
            stop(3, "end_turn")
        ]
    );
}

#[test]
fn sleep_then_the_rest() {
    let mut agent = Agent::start("cmd-sleep", &[]);
    let sid = agent.handshake();
    assert_eq!(
        agent.prompt(3, &sid, "/sleep 5\n/echo awake"),
        [
            title(&sid, "/sleep 5"),
            message(&sid, "awake"),
            usage(&sid, 20 + 5),
            stop(3, "end_turn")
        ]
    );
}

#[test]
fn flood_sends_n_chunks_of_bytes_each() {
    let mut agent = Agent::start("cmd-flood", &[]);
    let sid = agent.handshake();
    let lines = agent.prompt(3, &sid, "/flood 2000 7");
    assert_eq!(lines.len(), 2003);
    assert_eq!(lines[0], title(&sid, "/flood 2000 7"));
    assert!(
        lines[1..2001]
            .iter()
            .all(|l| *l == message(&sid, "abcdefg"))
    );
    assert_eq!(lines[2001], usage(&sid, 13 + 2000 * 7));
    assert_eq!(lines[2002], stop(3, "end_turn"));
    let lines = agent.prompt(4, &sid, "/flood 1");
    assert_eq!(
        lines,
        [
            message(&sid, "abcdefghijklmnopqrstuvwxyzabcdef"),
            usage(&sid, 14013 + 8 + 32),
            stop(4, "end_turn")
        ]
    );
}

#[test]
fn stop_and_error_end_the_turn() {
    let mut agent = Agent::start("cmd-stop", &[]);
    let sid = agent.handshake();
    // Bytes of text exchanged so far: only prompts here, the echo is never reached.
    let mut used = 0;
    for (id, reason) in [
        (3, "end_turn"),
        (4, "max_tokens"),
        (5, "max_turn_requests"),
        (6, "refusal"),
    ] {
        let text = format!("/stop {reason}\n/echo never");
        used += text.len() as u64;
        let mut expected = vec![usage(&sid, used), stop(id, reason)];
        if id == 3 {
            expected.insert(0, title(&sid, "/stop end_turn"));
        }
        assert_eq!(agent.prompt(id, &sid, &text), expected);
    }
    assert_eq!(used, 114);
    assert_eq!(
        agent.prompt(7, &sid, "/echo before\n/error it broke\n/echo never"),
        [
            message(&sid, "before"),
            // A failed turn reports its usage too, before its error.
            usage(&sid, 114 + 40 + 6),
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"Internal error: it broke"}}"#.to_owned(),
        ]
    );
    // The session is usable after a failed turn.
    assert_eq!(
        agent.prompt(8, &sid, "ok"),
        [
            message(&sid, "ok"),
            usage(&sid, 160 + 2 + 2),
            stop(8, "end_turn")
        ]
    );
}

#[test]
fn unknown_commands_list_the_commands() {
    let mut agent = Agent::start("cmd-unknown", &[]);
    let sid = agent.handshake();
    let answer = "unknown command '/nope'. Commands: /echo TEXT, /think TEXT, /plan A | B | C, /tool KIND TITLE, /read PATH, /write PATH TEXT, /ask QUESTION, /sleep MS, /flood N [BYTES], /stop REASON, /error TEXT, /history, /notice SEVERITY TITLE, /usage USED SIZE [AMOUNT CURRENCY], /title TEXT, /plan2 A | B, /unplan, /subagent NAME TEXT, /mcp SERVER TOOL [JSON]; any other text is echoed.";
    assert_eq!(
        agent.prompt(3, &sid, "/nope"),
        [
            title(&sid, "/nope"),
            message(&sid, answer),
            usage(&sid, 5 + answer.len() as u64),
            stop(3, "end_turn"),
        ]
    );
}

#[test]
fn additional_directories_are_inside_the_session_for_read_and_write() {
    let mut agent = Agent::start("cmd-roots", &[]);
    let shared = agent.cwd.parent().unwrap().join("agent-cmd-roots-shared");
    let _ = std::fs::remove_dir_all(&shared);
    std::fs::create_dir_all(&shared).unwrap();
    let shared = s(&shared).to_owned();
    agent.call(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#,
        1,
    );
    let relative = agent.call(
        &format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"session/new","params":{{"cwd":"{}","additionalDirectories":["shared"],"mcpServers":[]}}}}"#,
            s(&agent.cwd.clone())
        ),
        2,
    );
    assert_eq!(
        relative,
        [
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params: session/new.additionalDirectories[0] must be an absolute path, got 'shared'"}}"#
        ]
    );
    let answer = agent.call(
        &format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"session/new","params":{{"cwd":"{}","additionalDirectories":["{shared}"],"mcpServers":[]}}}}"#,
            s(&agent.cwd.clone())
        ),
        3,
    );
    let sid = agent_support::session_id(&answer[0]).expect("a session");
    agent.expect_commands(&sid);
    agent.call(
        &format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"session/set_mode","params":{{"sessionId":"{sid}","modeId":"full-access"}}}}"#
        ),
        4,
    );
    let lines = agent.prompt(
        5,
        &sid,
        &format!("/write {shared}/out.txt shared text\n/read {shared}/out.txt"),
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains(&format!("Read 11 bytes from {shared}/out.txt"))),
        "{lines:?}"
    );
    assert_eq!(
        std::fs::read_to_string(format!("{shared}/out.txt")).unwrap(),
        "shared text"
    );
    // A link in the shared directory to somewhere else is still outside.
    let elsewhere = agent
        .cwd
        .parent()
        .unwrap()
        .join("agent-cmd-roots-secret.txt");
    std::fs::write(&elsewhere, "secret").unwrap();
    let link = format!("{shared}/link.txt");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    let lines = agent.prompt(6, &sid, &format!("/read {link}"));
    let cwd = s(&agent.cwd.clone()).to_owned();
    assert!(
        lines.iter().any(|l| l.contains(&format!(
            "Error: '{link}' is outside the session cwd '{cwd}' and its additional directories (after resolving symlinks)"
        ))),
        "{lines:?}"
    );
}
