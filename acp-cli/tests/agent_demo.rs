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
        "agent exited: exit status: 0",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in:\n{stdout}"
        );
    }
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
