//! Our client drives our agent, both the real binaries: every demo command, with the client's
//! `fs` capabilities on and off (`--no-fs`), every line each side writes recorded on the way
//! (a `tee` on each pipe). Every tool call must end `completed` unless the command is meant to
//! fail, and every result either side sends must validate against the official JSON Schema's
//! type for its method; the methods our client never sends are driven straight into the agent
//! so that, walking the method table, every result we can send has been checked.

mod agent_support;
mod client_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use acp_cli::demo::script::COMMANDS;
use acp_core::schema::methods::Method;
use serde_json::{Value, json};

/// The official schema and method tables, generated from the pinned official crate: acp-core's
/// schema tests' helper (it says so and skips outside CI when it cannot build the generator).
#[path = "../../acp-core/tests/schema_common/mod.rs"]
mod schema_common;

/// Validates results by their method, and remembers which methods' results it saw.
struct Results {
    root: &'static Value,
    validators: BTreeMap<&'static str, jsonschema::Validator>,
    /// Methods whose result was validated against the official schema.
    validated: BTreeSet<&'static str>,
}

impl Results {
    /// `None` when the official schema could not be generated here.
    fn new() -> Option<Results> {
        Some(Results {
            root: schema_common::schema()?,
            validators: BTreeMap::new(),
            validated: BTreeSet::new(),
        })
    }

    /// Every response with a `result` among `answers` is matched to its request among
    /// `requests` (the other side's lines) and validated against the method's result type.
    fn check(&mut self, requests: &[Value], answers: &[Value], who: &str) {
        let methods: BTreeMap<String, &str> = requests
            .iter()
            .filter_map(|r| Some((r.get("id")?.to_string(), r.get("method")?.as_str()?)))
            .collect();
        for answer in answers {
            let (Some(id), Some(result)) = (answer.get("id"), answer.get("result")) else {
                continue;
            };
            let name = methods
                .get(&id.to_string())
                .unwrap_or_else(|| panic!("{who} answered id {id}, which was never asked"));
            let method = Method::from_name(name).unwrap_or_else(|| panic!("unknown {name}"));
            let Some(type_name) = method.result_type() else {
                continue;
            };
            if self.root["$defs"].get(type_name).is_none() {
                // Agentao's extensions have no official type.
                assert!(
                    method.is_agentao_extension(),
                    "{type_name} is not in the schema"
                );
                continue;
            }
            let root = &self.root;
            let validator = self.validators.entry(type_name).or_insert_with(|| {
                let wrapper = json!({
                    "$schema": root["$schema"],
                    "$defs": root["$defs"],
                    "$ref": format!("#/$defs/{type_name}"),
                });
                jsonschema::validator_for(&wrapper).expect("the official schema compiles")
            });
            let errors: Vec<String> = validator
                .iter_errors(result)
                .map(|e| format!("{e} at {}", e.instance_path()))
                .collect();
            assert!(
                errors.is_empty(),
                "{who}'s {name} result {result} is not a {type_name}: {errors:?}"
            );
            self.validated.insert(method.name());
        }
    }
}

/// What one client run recorded.
#[derive(Debug)]
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// Every line the client wrote to the agent.
    client_lines: Vec<Value>,
    /// Every line the agent wrote to the client.
    agent_lines: Vec<Value>,
}

impl Run {
    /// The methods of the requests the agent sent.
    fn agent_requests(&self) -> Vec<&str> {
        self.agent_lines
            .iter()
            .filter(|l| l.get("id").is_some())
            .filter_map(|l| l.get("method")?.as_str())
            .collect()
    }

    /// The last status of every tool call, by id, in the order they were announced.
    fn tool_statuses(&self) -> Vec<(String, String)> {
        let mut order: Vec<String> = Vec::new();
        let mut last: BTreeMap<String, String> = BTreeMap::new();
        for update in self.updates() {
            let kind = update["sessionUpdate"].as_str().unwrap_or_default();
            if kind != "tool_call" && kind != "tool_call_update" {
                continue;
            }
            let id = update["toolCallId"].as_str().unwrap().to_owned();
            if !order.contains(&id) {
                order.push(id.clone());
            }
            if let Some(status) = update["status"].as_str() {
                last.insert(id, status.to_owned());
            }
        }
        order
            .into_iter()
            .map(|id| {
                let status = last.get(&id).cloned().unwrap_or_default();
                (id, status)
            })
            .collect()
    }

    /// The `update` of every `session/update` the agent sent.
    fn updates(&self) -> impl Iterator<Item = &Value> {
        self.agent_lines
            .iter()
            .filter(|l| l["method"] == "session/update")
            .map(|l| &l["params"]["update"])
    }

    /// The text content of every tool call update, joined.
    fn tool_text(&self) -> String {
        self.updates()
            .filter(|u| u["sessionUpdate"] == "tool_call_update")
            .flat_map(|u| u["content"].as_array().cloned().unwrap_or_default())
            .filter_map(|c| c["content"]["text"].as_str().map(str::to_owned))
            .collect()
    }

    /// The text of the agent's message chunks, joined.
    fn message_text(&self) -> String {
        self.updates()
            .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
            .filter_map(|u| u["content"]["text"].as_str())
            .collect()
    }
}

fn read_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// `acp-cli client --approve allow [--no-fs] --prompt PROMPT -- sh -c 'tee | acp-cli --acp
/// --stdio | tee'` in `cwd`, with both pipes recorded beside `cwd`.
fn run(cwd: &Path, fs: bool, prompt: &str) -> Run {
    let logs = cwd.parent().unwrap();
    let (to_agent, from_agent) = (logs.join("client.jsonl"), logs.join("agent.jsonl"));
    for log in [&to_agent, &from_agent] {
        let _ = std::fs::remove_file(log);
    }
    let mut options = vec!["--approve", "allow", "--timeout", "60"];
    if !fs {
        options.push("--no-fs");
    }
    options.extend(["--prompt", prompt]);
    let agent = [
        "sh",
        "-c",
        r#"tee "$1" | "$0" --acp --stdio | tee "$2""#,
        client_support::acp_cli(),
        to_agent.to_str().unwrap(),
        from_agent.to_str().unwrap(),
    ]
    .map(String::from);
    let finished = client_support::client(&options, &agent, cwd, "");
    Run {
        code: finished.code,
        stdout: finished.stdout,
        stderr: finished.stderr,
        client_lines: read_lines(&to_agent),
        agent_lines: read_lines(&from_agent),
    }
}

/// One demo command and what must come of it.
struct Case {
    /// The command's name as `COMMANDS` lists it.
    command: &'static str,
    /// The prompt sent.
    prompt: &'static str,
    /// The exit status of `acp-cli client`.
    code: i32,
    /// The final status of each tool call, in order.
    tools: &'static [&'static str],
    /// The `fs/*` request the agent sends when the client offers `fs`.
    fs_request: Option<&'static str>,
    /// More checks on the run.
    check: fn(&Run, &Path),
}

fn nothing(_: &Run, _: &Path) {}

fn cases() -> Vec<Case> {
    vec![
        Case {
            command: "/echo",
            prompt: "/echo hello there",
            code: 0,
            tools: &[],
            fs_request: None,
            check: |run, _| assert_eq!(run.stdout, "hello there\n"),
        },
        Case {
            command: "/think",
            prompt: "/think pondering",
            code: 0,
            tools: &[],
            fs_request: None,
            check: |run, _| {
                assert!(
                    run.updates()
                        .any(|u| u["sessionUpdate"] == "agent_thought_chunk"
                            && u["content"]["text"] == "pondering")
                );
            },
        },
        Case {
            command: "/plan",
            prompt: "/plan look | fix | test",
            code: 0,
            tools: &[],
            fs_request: None,
            check: |run, _| {
                let plan = run
                    .updates()
                    .find(|u| u["sessionUpdate"] == "plan")
                    .unwrap();
                assert_eq!(plan["entries"].as_array().unwrap().len(), 3);
            },
        },
        Case {
            command: "/tool",
            prompt: "/tool execute Deploy it",
            code: 0,
            tools: &["completed"],
            fs_request: None,
            check: |run, _| {
                assert!(run.agent_requests().contains(&"session/request_permission"));
            },
        },
        Case {
            command: "/read",
            prompt: "/read notes.txt",
            code: 0,
            tools: &["completed"],
            fs_request: Some("fs/read_text_file"),
            check: |run, _| assert!(run.tool_text().contains("Read 5 bytes from"), "{run:?}"),
        },
        Case {
            command: "/read",
            prompt: "/read ../outside.txt",
            code: 0,
            tools: &["failed"],
            fs_request: None,
            check: nothing,
        },
        Case {
            command: "/write",
            prompt: "/write out.txt hello world",
            code: 0,
            tools: &["completed"],
            fs_request: Some("fs/write_text_file"),
            check: |_, cwd| {
                assert_eq!(
                    std::fs::read_to_string(cwd.join("out.txt")).unwrap(),
                    "hello world"
                );
            },
        },
        Case {
            command: "/write",
            prompt: "/write ../escape.txt nope",
            code: 0,
            tools: &["failed"],
            fs_request: None,
            check: |_, cwd| assert!(!cwd.parent().unwrap().join("escape.txt").exists()),
        },
        Case {
            command: "/ask",
            prompt: "/ask favourite colour?",
            code: 0,
            tools: &[],
            fs_request: None,
            check: |run, _| {
                assert!(run.agent_requests().contains(&"_agentao.cn/ask_user"));
                assert!(
                    run.message_text()
                        .contains(acp_core::schema::agentao::USER_UNAVAILABLE)
                );
            },
        },
        Case {
            command: "/sleep",
            prompt: "/sleep 5\n/echo awake",
            code: 0,
            tools: &[],
            fs_request: None,
            check: |run, _| assert_eq!(run.stdout, "awake\n"),
        },
        Case {
            command: "/flood",
            prompt: "/flood 5 8",
            code: 0,
            tools: &[],
            fs_request: None,
            check: |run, _| assert_eq!(run.message_text().len(), 40),
        },
        Case {
            command: "/stop",
            prompt: "/stop max_tokens",
            code: 0,
            tools: &[],
            fs_request: None,
            check: |run, _| {
                let answer = run.agent_lines.iter().find(|l| l["id"] == 2).unwrap();
                assert_eq!(answer["result"], json!({"stopReason": "max_tokens"}));
            },
        },
        Case {
            command: "/error",
            prompt: "/error boom",
            code: 1,
            tools: &[],
            fs_request: None,
            check: |run, _| {
                let answer = run.agent_lines.iter().find(|l| l["id"] == 2).unwrap();
                assert_eq!(answer["error"]["code"], -32603);
                assert!(
                    answer["error"]["message"]
                        .as_str()
                        .unwrap()
                        .contains("boom")
                );
                assert!(
                    run.stderr.contains("acp-cli client: the prompt failed:"),
                    "{run:?}"
                );
            },
        },
        // The newer demo commands (README): each case runs once `COMMANDS` lists its command.
        Case {
            command: "/notice",
            prompt: "/notice warning Disk almost full",
            code: 0,
            tools: &[],
            fs_request: None,
            check: nothing,
        },
        // `acp-cli client` hands the agent no MCP servers: the command says so (R-DEMO-5);
        // the tool call itself is tested with a real server in agent_mcp.rs.
        Case {
            command: "/mcp",
            prompt: "/mcp files read_text_file {\"path\": \"a.txt\"}",
            code: 0,
            tools: &[],
            fs_request: None,
            check: |run, _| {
                assert_eq!(
                    run.stdout,
                    "/mcp: no tool 'read_text_file' on an MCP server 'files' of this session; \
                     this session has no MCP tools\n"
                )
            },
        },
        Case {
            command: "/usage",
            prompt: "/usage 1200 200000 0.5 USD",
            code: 0,
            tools: &[],
            fs_request: None,
            check: nothing,
        },
        Case {
            command: "/title",
            prompt: "/title Fixing the build",
            code: 0,
            tools: &[],
            fs_request: None,
            check: nothing,
        },
        Case {
            command: "/plan2",
            prompt: "/plan2 look | fix",
            code: 0,
            tools: &[],
            fs_request: None,
            check: nothing,
        },
        Case {
            command: "/unplan",
            prompt: "/plan2 look | fix\n/unplan",
            code: 0,
            tools: &[],
            fs_request: None,
            check: nothing,
        },
        Case {
            command: "/subagent",
            prompt: "/subagent helper hello from below",
            code: 0,
            tools: &[],
            fs_request: None,
            check: nothing,
        },
        Case {
            command: "/history",
            prompt: "/history",
            code: 0,
            tools: &[],
            fs_request: None,
            check: |run, _| {
                assert_eq!(
                    run.message_text(),
                    acp_cli::demo::turn::history_text(0, false)
                );
            },
        },
    ]
}

#[test]
fn our_client_drives_our_agent_through_every_demo_command_with_fs_on_and_off() {
    let listed: BTreeSet<String> = COMMANDS.iter().map(|c| format!("/{}", c.name)).collect();
    let cases: Vec<Case> = cases()
        .into_iter()
        .filter(|c| listed.contains(c.command))
        .collect();
    let covered: BTreeSet<&str> = cases.iter().map(|c| c.command).collect();
    for name in &listed {
        assert!(
            covered.contains(name.as_str()),
            "no case for the demo command {name}"
        );
    }

    let mut results = Results::new();
    for fs in [true, false] {
        for case in &cases {
            let root = client_support::scratch_dir("drives");
            let cwd = root.join("work");
            std::fs::create_dir(&cwd).unwrap();
            std::fs::write(cwd.join("notes.txt"), "notes").unwrap();
            std::fs::write(root.join("outside.txt"), "secret").unwrap();
            let what = format!("{} (fs {})", case.prompt, if fs { "on" } else { "off" });
            let run = run(&cwd, fs, case.prompt);
            assert_eq!(run.code, Some(case.code), "{what}: {run:#?}");

            // The client advertised what it was told to, and the agent used it accordingly.
            let caps = &run.client_lines[0]["params"]["clientCapabilities"]["fs"];
            assert_eq!(
                caps,
                &json!({"readTextFile": fs, "writeTextFile": fs}),
                "{what}"
            );
            let fs_requests: Vec<&str> = run
                .agent_requests()
                .into_iter()
                .filter(|m| m.starts_with("fs/"))
                .collect();
            let expected: Vec<&str> = case.fs_request.filter(|_| fs).into_iter().collect();
            assert_eq!(fs_requests, expected, "{what}");

            let statuses: Vec<String> = run.tool_statuses().into_iter().map(|(_, s)| s).collect();
            assert_eq!(statuses, case.tools, "{what}: {run:#?}");
            (case.check)(&run, &cwd);

            if let Some(results) = results.as_mut() {
                results.check(&run.client_lines, &run.agent_lines, "the agent");
                results.check(&run.agent_lines, &run.client_lines, "the client");
            }
        }
    }

    let Some(mut results) = results else {
        return; // no official schema here: schema_common said so
    };
    drive_the_other_methods(&mut results);

    // Walking the method table: every result either side of ours can send was validated.
    // What stays unchecked, and why:
    let never_sent = [
        // Our agent advertises no authMethods and no auth.logout: it answers -32601.
        "authenticate",
        "logout",
        // Our client serves neither terminals nor elicitation: it answers -32601.
        "terminal/create",
        "terminal/output",
        "terminal/wait_for_exit",
        "terminal/kill",
        "terminal/release",
        "elicitation/create",
    ];
    for method in Method::ALL {
        let Some(type_name) = method.result_type() else {
            continue;
        };
        if method.is_agentao_extension() || never_sent.contains(&method.name()) {
            continue;
        }
        assert!(
            results.validated.contains(method.name()),
            "no {type_name} of ours for {} was validated",
            method.name()
        );
    }
}

/// The methods our client does not send, straight into the agent: every answer validated.
fn drive_the_other_methods(results: &mut Results) {
    use agent_support::{Agent, json_string, s};
    let mut agent = Agent::start("drives-methods", &[]);
    let cwd = agent.cwd.clone();
    let mut sent: Vec<Value> = Vec::new();
    let mut received: Vec<Value> = Vec::new();
    let mut call = |agent: &mut Agent, id: u64, method: &str, params: String| {
        let line =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#);
        sent.push(serde_json::from_str(&line).unwrap());
        let lines = agent.call(&line, id);
        let answer: Value = serde_json::from_str(lines.last().unwrap()).unwrap();
        assert!(answer.get("result").is_some(), "{method}: {answer}");
        received.extend(lines.iter().map(|l| serde_json::from_str(l).unwrap()));
        answer
    };
    call(
        &mut agent,
        1,
        "initialize",
        r#"{"protocolVersion":1}"#.into(),
    );
    let opened = call(
        &mut agent,
        2,
        "session/new",
        format!(r#"{{"cwd":"{}","mcpServers":[]}}"#, s(&cwd)),
    );
    let session = json_string(opened["result"]["sessionId"].as_str().unwrap());
    let by_id = format!(r#"{{"sessionId":{session}}}"#);
    let reopen = format!(
        r#"{{"sessionId":{session},"cwd":"{}","mcpServers":[]}}"#,
        s(&cwd)
    );
    call(
        &mut agent,
        3,
        "session/prompt",
        format!(r#"{{"sessionId":{session},"prompt":[{{"type":"text","text":"hi"}}]}}"#),
    );
    call(
        &mut agent,
        4,
        "session/set_mode",
        format!(r#"{{"sessionId":{session},"modeId":"plan"}}"#),
    );
    call(
        &mut agent,
        5,
        "session/set_config_option",
        format!(r#"{{"sessionId":{session},"configId":"model","value":"demo/other"}}"#),
    );
    call(
        &mut agent,
        6,
        "_agentao.cn/set_model",
        format!(r#"{{"sessionId":{session},"model":"tiny"}}"#),
    );
    call(&mut agent, 7, "session/list", "{}".into());
    // `session/cancel` sent as a request (Agentao's form) has no result type; it answers `{}`.
    let cancelled = call(&mut agent, 14, "session/cancel", by_id.clone());
    assert_eq!(cancelled["result"], json!({}));
    call(&mut agent, 8, "session/close", by_id.clone());
    call(&mut agent, 9, "session/load", reopen.clone());
    call(&mut agent, 10, "session/close", by_id.clone());
    call(&mut agent, 11, "session/resume", reopen);
    call(&mut agent, 12, "session/close", by_id.clone());
    call(&mut agent, 13, "session/delete", by_id);
    let _ = agent.finish();
    results.check(&sent, &received, "the agent");
}
