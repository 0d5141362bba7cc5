//! `.agentao/acp.json` (R-HOST-1): every validation error with its exact message, every default,
//! every expansion rule.

use std::collections::BTreeMap;

use acp_host::supervisor::config::{
    AcpConfig, ConfigError, DEFAULT_MAX_RECOVERABLE_RESTARTS, DEFAULT_REQUEST_TIMEOUT_MS,
    DEFAULT_STARTUP_TIMEOUT_MS, InteractionPolicy, JsonKind, ServerConfig, expand_vars,
};

const PATH: &str = "/p/.agentao/acp.json";

fn parse(text: &str) -> Result<AcpConfig, ConfigError> {
    AcpConfig::parse(text, PATH, |_| None)
}

/// A valid entry with `extra` fields merged in (a JSON object body without braces).
fn entry(extra: &str) -> String {
    let base = r#""command": "node", "args": ["a.js"], "env": {}, "cwd": ".""#;
    if extra.is_empty() {
        format!("{{{base}}}")
    } else {
        format!("{{{base}, {extra}}}")
    }
}

/// The one error message produced for server `a` with these extra fields.
fn error_for(extra: &str) -> String {
    rejection(&format!(r#"{{"servers": {{"a": {}}}}}"#, entry(extra)))
}

/// The one rejection message of a document with exactly one bad server.
fn rejection(doc: &str) -> String {
    let config = parse(doc).expect("document-level parse");
    assert!(config.servers().is_empty(), "the bad server must not load");
    assert_eq!(config.rejected().len(), 1);
    config.rejected()[0].to_string()
}

fn only_server(extra: &str) -> ServerConfig {
    let config = parse(&format!(r#"{{"servers": {{"a": {}}}}}"#, entry(extra))).unwrap();
    assert!(config.rejected().is_empty(), "{:?}", config.rejected());
    config.servers()[0].clone()
}

// ---- document-level errors ----

#[test]
fn invalid_json_names_the_path() {
    let err = parse("{not json").unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid JSON in /p/.agentao/acp.json: key must be a string at line 1 column 2"
    );
}

#[test]
fn top_level_not_an_object() {
    assert_eq!(
        parse("[]").unwrap_err().to_string(),
        "expected a JSON object at top level, got list"
    );
    assert_eq!(
        parse("3").unwrap_err().to_string(),
        "expected a JSON object at top level, got int"
    );
    assert_eq!(
        parse("null").unwrap_err().to_string(),
        "expected a JSON object at top level, got NoneType"
    );
}

#[test]
fn servers_not_an_object() {
    assert_eq!(
        parse(r#"{"servers": []}"#).unwrap_err().to_string(),
        "'servers' must be an object, got list"
    );
    assert_eq!(
        parse(r#"{"servers": "x"}"#).unwrap_err().to_string(),
        "'servers' must be an object, got str"
    );
    assert_eq!(
        parse(r#"{"servers": null}"#).unwrap_err().to_string(),
        "'servers' must be an object, got NoneType"
    );
}

#[test]
fn missing_or_empty_servers_is_an_empty_config() {
    assert_eq!(parse("{}").unwrap(), AcpConfig::default());
    assert_eq!(parse(r#"{"servers": {}}"#).unwrap(), AcpConfig::default());
    assert_eq!(parse(r#"{"other": 1}"#).unwrap(), AcpConfig::default());
}

// ---- per-server errors, one test each ----

#[test]
fn server_entry_not_an_object() {
    assert_eq!(
        rejection(r#"{"servers": {"a": 1}}"#),
        "server 'a': expected a config object, got int"
    );
    assert_eq!(
        rejection(r#"{"servers": {"a": 1.5}}"#),
        "server 'a': expected a config object, got float"
    );
    assert_eq!(
        rejection(r#"{"servers": {"a": true}}"#),
        "server 'a': expected a config object, got bool"
    );
}

#[test]
fn missing_required_fields_are_listed_together() {
    assert_eq!(
        rejection(r#"{"servers": {"a": {}}}"#),
        "server 'a': missing required field(s): command, args, env, cwd"
    );
    assert_eq!(
        rejection(r#"{"servers": {"a": {"command": "x", "args": []}}}"#),
        "server 'a': missing required field(s): env, cwd"
    );
}

/// R-HOST-1: every field is type-checked, the errors name server and field.
#[test]
fn wrong_types_of_required_fields_are_listed_together() {
    assert_eq!(
        rejection(r#"{"servers": {"a": {"command": 1, "args": "x", "env": [], "cwd": 2}}}"#),
        "server 'a': 'command' must be str, got int; 'args' must be list, got str; \
         'env' must be dict, got list; 'cwd' must be str, got int"
    );
}

#[test]
fn missing_and_wrong_types_are_reported_together() {
    assert_eq!(
        rejection(r#"{"servers": {"a": {"command": 1, "args": []}}}"#),
        "server 'a': missing required field(s): env, cwd; 'command' must be str, got int"
    );
}

#[test]
fn empty_command() {
    // The later duplicate key wins, so this entry's command is "".
    assert_eq!(
        error_for(r#""command": """#),
        "server 'a': 'command' must not be empty"
    );
}

#[test]
fn args_elements_must_be_strings() {
    assert_eq!(
        rejection(
            r#"{"servers": {"a": {"command": "x", "args": ["ok", 1, null], "env": {}, "cwd": "."}}}"#
        ),
        "server 'a': 'args[1]' must be str, got int; 'args[2]' must be str, got NoneType"
    );
}

#[test]
fn env_values_must_be_strings() {
    assert_eq!(
        rejection(
            r#"{"servers": {"a": {"command": "x", "args": [], "env": {"N": 1, "B": false}, "cwd": "."}}}"#
        ),
        "server 'a': 'env.B' must be str, got bool; 'env.N' must be str, got int"
    );
}

#[test]
fn env_names_must_be_usable() {
    assert_eq!(
        rejection(
            r#"{"servers": {"a": {"command": "x", "args": [], "env": {"A=B": "1"}, "cwd": "."}}}"#
        ),
        "server 'a': 'env' key 'A=B' is not a valid variable name"
    );
    assert_eq!(
        rejection(
            r#"{"servers": {"a": {"command": "x", "args": [], "env": {"": "1"}, "cwd": "."}}}"#
        ),
        "server 'a': 'env' key '' is not a valid variable name"
    );
}

#[test]
fn auto_start_must_be_bool() {
    assert_eq!(
        error_for(r#""autoStart": "yes""#),
        "server 'a': 'autoStart' must be bool, got str"
    );
    assert_eq!(
        error_for(r#""autoStart": 1"#),
        "server 'a': 'autoStart' must be bool, got int"
    );
}

#[test]
fn timeouts_must_be_positive_integers() {
    assert_eq!(
        error_for(r#""startupTimeoutMs": "abc""#),
        "server 'a': 'startupTimeoutMs' must be int, got str"
    );
    assert_eq!(
        error_for(r#""requestTimeoutMs": "abc""#),
        "server 'a': 'requestTimeoutMs' must be int, got str"
    );
    assert_eq!(
        error_for(r#""requestTimeoutMs": 1.5"#),
        "server 'a': 'requestTimeoutMs' must be int, got float"
    );
    assert_eq!(
        error_for(r#""requestTimeoutMs": true"#),
        "server 'a': 'requestTimeoutMs' must be int, got bool"
    );
    assert_eq!(
        error_for(r#""startupTimeoutMs": 0"#),
        "server 'a': 'startupTimeoutMs' must be > 0, got 0"
    );
    assert_eq!(
        error_for(r#""requestTimeoutMs": -5"#),
        "server 'a': 'requestTimeoutMs' must be > 0, got -5"
    );
}

#[test]
fn capabilities_must_be_an_object() {
    assert_eq!(
        error_for(r#""capabilities": []"#),
        "server 'a': 'capabilities' must be dict, got list"
    );
}

#[test]
fn description_must_be_a_string() {
    assert_eq!(
        error_for(r#""description": 7"#),
        "server 'a': 'description' must be str, got int"
    );
}

#[test]
fn policy_as_a_bare_string_gets_the_migration_hint() {
    assert_eq!(
        error_for(r#""nonInteractivePolicy": "accept_all""#),
        "server 'a': 'nonInteractivePolicy' as a bare string ('accept_all') is no longer supported. \
         Migrate to the structured object form:\n  \"nonInteractivePolicy\": {\"mode\": \"accept_all\"}\n\
         See developer-guide/*/appendix/e-migration for the full migration example."
    );
}

#[test]
fn policy_object_without_mode() {
    assert_eq!(
        error_for(r#""nonInteractivePolicy": {}"#),
        "server 'a': 'nonInteractivePolicy' object is missing required field 'mode'"
    );
}

#[test]
fn policy_with_an_unknown_mode() {
    assert_eq!(
        error_for(r#""nonInteractivePolicy": {"mode": "maybe"}"#),
        "server 'a': 'nonInteractivePolicy.mode' must be one of ['accept_all', 'reject_all'], got 'maybe'"
    );
}

#[test]
fn policy_mode_not_a_string() {
    assert_eq!(
        error_for(r#""nonInteractivePolicy": {"mode": 1}"#),
        "server 'a': 'nonInteractivePolicy.mode' must be str, got int"
    );
}

#[test]
fn policy_of_another_type() {
    assert_eq!(
        error_for(r#""nonInteractivePolicy": 3"#),
        "server 'a': 'nonInteractivePolicy' must be an object with a 'mode' field, got int"
    );
}

#[test]
fn max_restarts_checks() {
    assert_eq!(
        error_for(r#""maxRecoverableRestarts": -1"#),
        "server 'a': 'maxRecoverableRestarts' must be >= 0, got -1"
    );
    assert_eq!(
        error_for(r#""maxRecoverableRestarts": true"#),
        "server 'a': 'maxRecoverableRestarts' must be int, got bool"
    );
    assert_eq!(
        error_for(r#""maxRecoverableRestarts": 2.0"#),
        "server 'a': 'maxRecoverableRestarts' must be int, got float"
    );
    assert_eq!(
        error_for(r#""maxRecoverableRestarts": 4294967296"#),
        "server 'a': 'maxRecoverableRestarts' must be <= 4294967295, got 4294967296"
    );
}

#[test]
fn every_problem_of_a_server_is_reported_in_field_order() {
    assert_eq!(
        error_for(r#""description": 1, "autoStart": null, "maxRecoverableRestarts": -2"#),
        "server 'a': 'autoStart' must be bool, got NoneType; 'description' must be str, got int; \
         'maxRecoverableRestarts' must be >= 0, got -2"
    );
}

// ---- collection across servers ----

#[test]
fn one_bad_server_neither_hides_others_errors_nor_blocks_valid_servers() {
    let doc = format!(
        r#"{{"servers": {{"zeta": {}, "bad1": 5, "alpha": {}, "bad2": {{"command": "x"}}}}}}"#,
        entry(""),
        entry(r#""description": "A""#)
    );
    let config = parse(&doc).unwrap();
    // Valid servers load, in file order (not sorted).
    assert_eq!(config.names().collect::<Vec<_>>(), ["zeta", "alpha"]);
    let rejected: Vec<String> = config.rejected().iter().map(ToString::to_string).collect();
    assert_eq!(
        rejected,
        [
            "server 'bad1': expected a config object, got int",
            "server 'bad2': missing required field(s): args, env, cwd",
        ]
    );
    assert_eq!(config.server("alpha").unwrap().description, "A");
    assert!(config.server("bad1").is_none());
}

#[test]
fn strict_mode_fails_with_every_rejection() {
    let doc = r#"{"servers": {"a": 1, "b": {"command": "x", "args": [], "env": {}, "cwd": 3}}}"#;
    let err = parse(doc).unwrap().into_strict().unwrap_err();
    assert_eq!(
        err.to_string(),
        "server 'a': expected a config object, got int\nserver 'b': 'cwd' must be str, got int"
    );
    let ok = parse(&format!(r#"{{"servers": {{"a": {}}}}}"#, entry(""))).unwrap();
    assert_eq!(ok.clone().into_strict().unwrap(), ok);
}

#[test]
fn a_duplicated_server_key_keeps_the_last_entry_once() {
    let doc = r#"{"servers": {"a": 1, "b": {"command": "b", "args": [], "env": {}, "cwd": "."},
                              "a": {"command": "second", "args": [], "env": {}, "cwd": "."}}}"#;
    let config = parse(doc).unwrap();
    assert_eq!(config.names().collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(config.server("a").unwrap().command, "second");
}

// ---- defaults ----

#[test]
fn required_fields_are_kept_as_written() {
    let s = only_server("");
    assert_eq!(
        (s.name.as_str(), s.command.as_str(), s.cwd.as_str()),
        ("a", "node", ".")
    );
    assert_eq!(s.args, ["a.js"]);
    assert!(s.env.is_empty());
}

#[test]
fn auto_start_defaults_to_true() {
    assert!(only_server("").auto_start);
}

#[test]
fn startup_timeout_defaults_to_ten_seconds() {
    assert_eq!(only_server("").startup_timeout_ms, 10_000);
    assert_eq!(DEFAULT_STARTUP_TIMEOUT_MS, 10_000);
}

#[test]
fn request_timeout_defaults_to_sixty_seconds() {
    assert_eq!(only_server("").request_timeout_ms, 60_000);
    assert_eq!(DEFAULT_REQUEST_TIMEOUT_MS, 60_000);
}

#[test]
fn capabilities_default_to_an_empty_object() {
    assert!(only_server("").capabilities.is_empty());
}

#[test]
fn description_defaults_to_empty() {
    assert_eq!(only_server("").description, "");
}

#[test]
fn non_interactive_policy_defaults_to_reject_all() {
    assert_eq!(
        only_server("").non_interactive_policy,
        InteractionPolicy::RejectAll
    );
    assert_eq!(InteractionPolicy::default(), InteractionPolicy::RejectAll);
}

#[test]
fn max_recoverable_restarts_defaults_to_three() {
    assert_eq!(only_server("").max_recoverable_restarts, 3);
    assert_eq!(DEFAULT_MAX_RECOVERABLE_RESTARTS, 3);
}

#[test]
fn every_optional_field_overrides_its_default() {
    let s = only_server(
        r#""autoStart": false, "startupTimeoutMs": 2500, "requestTimeoutMs": 120000,
           "capabilities": {"x": [1]}, "description": "Code review agent",
           "nonInteractivePolicy": {"mode": "accept_all"}, "maxRecoverableRestarts": 0,
           "unknownKey": "ignored""#,
    );
    assert!(!s.auto_start);
    assert_eq!(s.startup_timeout_ms, 2500);
    assert_eq!(s.request_timeout_ms, 120_000);
    assert_eq!(s.capabilities["x"], serde_json::json!([1]));
    assert_eq!(s.description, "Code review agent");
    assert_eq!(s.non_interactive_policy, InteractionPolicy::AcceptAll);
    assert_eq!(s.max_recoverable_restarts, 0);
}

#[test]
fn policy_reject_all_spelled_out() {
    assert_eq!(
        only_server(r#""nonInteractivePolicy": {"mode": "reject_all"}"#).non_interactive_policy,
        InteractionPolicy::RejectAll
    );
    assert_eq!(InteractionPolicy::AcceptAll.as_str(), "accept_all");
    assert_eq!(InteractionPolicy::from_mode("nope"), None);
}

#[test]
fn the_seed_example_loads() {
    let doc = r#"{
"servers": {
"planner": {"command": "node", "args": ["./agents/planner/index.js"], "env": { "LOG_LEVEL": "info" },
            "cwd": ".", "description": "Planning agent", "autoStart": true},
"reviewer": {"command": "python", "args": ["-m", "review_agent"], "env": {}, "cwd": "./agents/reviewer",
             "description": "Code review agent", "autoStart": false, "requestTimeoutMs": 120000}
}
}"#;
    let config = parse(doc).unwrap();
    assert!(config.rejected().is_empty());
    let names: Vec<_> = config.names().collect();
    assert_eq!(names, ["planner", "reviewer"]);
    let reviewer = config.server("reviewer").unwrap();
    assert_eq!(reviewer.args, ["-m", "review_agent"]);
    assert_eq!(reviewer.request_timeout_ms, 120_000);
    assert_eq!(reviewer.resolve_cwd("/proj"), "/proj/agents/reviewer");
    assert_eq!(config.server("planner").unwrap().env["LOG_LEVEL"], "info");
}

// ---- cwd ----

#[test]
fn cwd_resolution() {
    let with_cwd = |cwd: &str| ServerConfig {
        cwd: cwd.to_string(),
        ..only_server("")
    };
    assert_eq!(with_cwd(".").resolve_cwd("/home/u/proj"), "/home/u/proj");
    assert_eq!(
        with_cwd("./agents/x").resolve_cwd("/home/u/proj"),
        "/home/u/proj/agents/x"
    );
    assert_eq!(
        with_cwd("agents/../tools").resolve_cwd("/home/u/proj/"),
        "/home/u/proj/tools"
    );
    assert_eq!(with_cwd("..").resolve_cwd("/home/u/proj"), "/home/u");
    assert_eq!(with_cwd("/abs/./x").resolve_cwd("/home/u/proj"), "/abs/./x");
    assert_eq!(with_cwd("C:\\work").resolve_cwd("/home/u/proj"), "C:\\work");
    assert_eq!(with_cwd("sub").resolve_cwd("rel/root"), "rel/root/sub");
    assert_eq!(with_cwd("../..").resolve_cwd("/a"), "/");
}

// ---- $VAR expansion ----

fn vars() -> BTreeMap<&'static str, &'static str> {
    BTreeMap::from([
        ("HOME", "/home/u"),
        ("KEY", "s3cret"),
        ("A_1", "x"),
        ("EMPTY", ""),
        ("DOLLAR", "$HOME"),
    ])
}

fn expand(text: &str) -> String {
    let vars = vars();
    expand_vars(text, |name| vars.get(name).map(|v| v.to_string()))
}

#[test]
fn dollar_name_expands() {
    assert_eq!(expand("$HOME/bin"), "/home/u/bin");
    assert_eq!(expand("k=$KEY"), "k=s3cret");
    assert_eq!(expand("$A_1"), "x");
}

#[test]
fn braced_name_expands() {
    assert_eq!(expand("${HOME}bin"), "/home/ubin");
    assert_eq!(expand("${KEY}${KEY}"), "s3crets3cret");
}

#[test]
fn bare_name_is_the_longest_word_run() {
    // $HOMEX is the variable HOMEX, which is unset.
    assert_eq!(expand("$HOMEX"), "$HOMEX");
    assert_eq!(expand("$HOME-x"), "/home/u-x");
    assert_eq!(expand("$HOME.x"), "/home/u.x");
}

#[test]
fn unset_variables_stay_verbatim() {
    assert_eq!(expand("${NOPE_UNSET}"), "${NOPE_UNSET}");
    assert_eq!(expand("$NOPE and $HOME"), "$NOPE and /home/u");
}

#[test]
fn set_but_empty_expands_to_nothing() {
    assert_eq!(expand("[$EMPTY]"), "[]");
}

#[test]
fn lone_and_unterminated_dollars_stay() {
    assert_eq!(expand("cost: 5$"), "cost: 5$");
    assert_eq!(expand("$ HOME"), "$ HOME");
    assert_eq!(expand("${HOME"), "${HOME");
    assert_eq!(expand("${}"), "${}");
    assert_eq!(expand("$$HOME"), "$/home/u");
}

#[test]
fn no_default_syntax_and_no_recursion() {
    assert_eq!(expand("${HOME:-/tmp}"), "${HOME:-/tmp}");
    assert_eq!(expand("$DOLLAR"), "$HOME");
}

#[test]
fn non_ascii_text_around_variables_is_kept() {
    // `ü` is not an ASCII word character, so it ends the name.
    assert_eq!(expand("ü$HOMEü"), "ü/home/uü");
    assert_eq!(expand("日本$KEY語"), "日本s3cret語");
}

#[test]
fn expansion_applies_to_env_values_only() {
    let vars = vars();
    let doc = r#"{"servers": {"a": {"command": "$HOME/bin/x", "args": ["$KEY"],
                 "env": {"K": "${KEY}", "P": "$HOME:$NOPE"}, "cwd": "$HOME"}}}"#;
    let config = AcpConfig::parse(doc, PATH, |n| vars.get(n).map(|v| v.to_string())).unwrap();
    let s = &config.servers()[0];
    assert_eq!(s.command, "$HOME/bin/x");
    assert_eq!(s.args, ["$KEY"]);
    assert_eq!(s.cwd, "$HOME");
    assert_eq!(s.env["K"], "s3cret");
    assert_eq!(s.env["P"], "/home/u:$NOPE");
}

#[test]
fn json_kind_names() {
    let names: Vec<&str> = [
        JsonKind::Null,
        JsonKind::Bool,
        JsonKind::Int,
        JsonKind::Float,
        JsonKind::Str,
        JsonKind::List,
        JsonKind::Dict,
    ]
    .iter()
    .map(|k| k.name())
    .collect();
    assert_eq!(
        names,
        ["NoneType", "bool", "int", "float", "str", "list", "dict"]
    );
}
