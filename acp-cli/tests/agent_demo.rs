//! `acp-cli demo`: the one command a newcomer runs shows a whole exchange and exits 0.

mod agent_support;

#[test]
fn the_demo_plays_the_whole_script_and_exits_0() {
    let out = agent_support::binary()
        .arg("demo")
        .env_remove("RUST_LOG")
        .output()
        .expect("run acp-cli demo");
    let stdout = String::from_utf8(out.stdout).expect("utf-8");
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for expected in [
        "→ {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"",
        "\"method\":\"session/request_permission\"",
        "\"optionId\":\"reject_once\"",
        "Wrote 25 bytes to ",
        "Read 25 bytes from ",
        "\"method\":\"_agentao.cn/ask_user\"",
        "{\"stopReason\":\"max_tokens\"}",
        "\"message\":\"Internal error: the demo failed on purpose\"",
        "\"currentModeId\":\"plan\"",
        "{\"stopReason\":\"cancelled\"}",
        "\"sessionUpdate\":\"session_info_update\",\"title\":\"Hello, agent!\"",
        "\"sessionUpdate\":\"usage_update\",\"used\":",
        "\"sessionUpdate\":\"notice\",\"severity\":\"warning\",\"title\":\"Disk almost full\"",
        "\"sessionUpdate\":\"usage_update\",\"used\":1200,\"size\":200000,\"cost\":{\"amount\":0.42,\"currency\":\"USD\"}",
        "\"sessionUpdate\":\"session_info_update\",\"title\":\"Demo tour\"",
        "\"sessionUpdate\":\"plan_update\",\"plan\":{\"type\":\"items\",\"planId\":\"plan-1\"",
        "\"sessionUpdate\":\"plan_removed\",\"planId\":\"plan-1\"",
        "\"sessionUpdate\":\"subagent_update\",\"sessionId\":\"subagent-2\",\"title\":\"scout\"",
        "\"sessionUpdate\":\"session_message\",\"messageId\":\"message-3\",\"senderSessionId\":\"subagent-2\"",
        "agent exited: exit status: 0",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in:\n{stdout}"
        );
    }
    // The commands come right after the session/new answer, in that section.
    let new_section = stdout
        .split("\n# ")
        .find(|s| s.starts_with("A session in the scratch directory"))
        .expect("the session/new section");
    let lines: Vec<&str> = new_section.lines().filter(|l| l.starts_with('←')).collect();
    assert_eq!(lines.len(), 2, "{new_section}");
    assert!(
        lines[0].contains("\"id\":2,\"result\":{\"sessionId\""),
        "{new_section}"
    );
    assert!(
        lines[1].contains("\"sessionUpdate\":\"available_commands_update\""),
        "{new_section}"
    );
    // Every exchanged line is one JSON object, marked with its direction.
    for line in stdout
        .lines()
        .filter(|l| l.starts_with('→') || l.starts_with('←'))
    {
        let json = line.split_once(' ').map(|(_, j)| j).unwrap_or("");
        assert!(
            json.starts_with("{\"jsonrpc\":\"2.0\"") && json.ends_with('}'),
            "{line}"
        );
    }
}
