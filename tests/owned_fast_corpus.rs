//! The owned decode's fast paths (`decode_raw`) against the serde paths (`decode`) on every
//! message of the bench corpora: the same value, or the same error message, line by line
//! (responses decoded by the method of the request they answer).

use std::collections::HashMap;
use std::fmt::Debug;

use acp_core::schema::{
    AgentNotification, AgentRequest, AgentResponse, ClientRequest, ClientResponse, DecodeError,
    Direction, Method,
};
use acp_core::wire::envelope::{self, Message, Outcome};
use acp_testkit::corpus;
use pretty_assertions::assert_eq;

fn same<T: Debug + PartialEq>(
    line: &str,
    fast: Result<T, DecodeError>,
    slow: Result<T, DecodeError>,
) {
    match (&fast, &slow) {
        (Ok(fast), Ok(slow)) => assert_eq!(fast, slow, "{line}"),
        (Err(fast), Err(slow)) => assert_eq!(fast.message(), slow.message(), "{line}"),
        _ => panic!("paths disagree on {line}:\nfast: {fast:?}\nslow: {slow:?}"),
    }
}

/// Checks every line of `bytes`; returns how many requests, notifications and results of each
/// method were compared.
fn check(bytes: &[u8]) -> HashMap<(&'static str, &'static str), usize> {
    let mut pending: HashMap<String, Method> = HashMap::new();
    let mut seen = HashMap::new();
    for line in corpus::lines(bytes) {
        let line = std::str::from_utf8(line).expect("corpus lines are UTF-8");
        let message = envelope::scan(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        match message {
            Message::Request(request) => {
                let method = Method::from_name(request.method.as_plain().unwrap()).unwrap();
                let (name, params) = (method.name(), request.params);
                let text = params.map(|p| p.get());
                match method.direction() {
                    Direction::ClientToAgent => same(
                        line,
                        ClientRequest::decode_raw(name, params),
                        ClientRequest::decode(name, text),
                    ),
                    _ => same(
                        line,
                        AgentRequest::decode_raw(name, params),
                        AgentRequest::decode(name, text),
                    ),
                }
                pending.insert(format!("{:?}", request.id), method);
                *seen.entry(("request", name)).or_default() += 1;
            }
            Message::Notification(notification) => {
                let method = Method::from_name(notification.method.as_plain().unwrap()).unwrap();
                let name = method.name();
                if method.direction() == Direction::AgentToClient {
                    let params = notification.params;
                    same(
                        line,
                        AgentNotification::decode_raw(name, params),
                        AgentNotification::decode(name, params.map(|p| p.get())),
                    );
                    *seen.entry(("notification", name)).or_default() += 1;
                }
            }
            Message::Response(response) => {
                let method = pending
                    .remove(&format!("{:?}", response.id))
                    .unwrap_or_else(|| panic!("answers no request: {line}"));
                let Outcome::Result(result) = response.outcome else {
                    continue;
                };
                let name = method.name();
                match method.direction() {
                    Direction::ClientToAgent => same(
                        line,
                        AgentResponse::decode_raw(name, result),
                        AgentResponse::decode(name, result.get()),
                    ),
                    _ => same(
                        line,
                        ClientResponse::decode_raw(name, result),
                        ClientResponse::decode(name, result.get()),
                    ),
                }
                *seen.entry(("result", name)).or_default() += 1;
            }
        }
    }
    seen
}

#[test]
fn every_corpus_message_decodes_the_same_on_both_paths() {
    let seen = check(&corpus::mixed(4 << 20));
    // The corpus holds the prompts and permission requests and their answers, not only
    // updates.
    for part in ["request", "result"] {
        for method in ["session/prompt", "session/request_permission"] {
            let count = seen.get(&(part, method)).copied().unwrap_or(0);
            assert!(count >= 10, "{part} {method}: {count}");
        }
    }
    check(&corpus::mixed_with_seed(2 << 20, 7));
    let seen = check(&corpus::small(1 << 20));
    assert!(seen[&("notification", "session/update")] > 1_000);
}
