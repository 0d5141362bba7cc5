//! The three ways a run is reported: text lines (one per case, a summary per capability, the
//! totals, the verdict last), one JSON document (`--json`, its format in docs/conform.md),
//! and JUnit XML (`--junit FILE`).

use serde_json::{Value, json};

use super::runner::{CaseReport, Report, SUITE_VERSION};
use super::tier::Tier;
use super::verdict::Status;

/// The `format` member of the `--json` document; raised when a member changes meaning or
/// goes away (new members may come without it).
pub const JSON_FORMAT: u64 = 2;

/// `PASS framing/crlf-line-endings [MANDATORY] — <detail>`.
pub fn case_line(case: &CaseReport) -> String {
    format!(
        "{} {} [{}] — {}",
        case.status.word(),
        case.id,
        case.tier.word(),
        case.detail
    )
}

/// The summary after the case lines: one line per capability (in the suite's order), then
/// `N passed, M failed, K skipped`, then the verdict line (`verdict: conformant (…)`).
pub fn summary(report: &Report) -> String {
    let mut out = String::new();
    for capability in capabilities(report) {
        let count = |status| {
            report
                .cases
                .iter()
                .filter(|c| c.capability == capability && c.status == status)
                .count()
        };
        out.push_str(&format!(
            "{capability}: {} passed, {} failed, {} skipped\n",
            count(Status::Pass),
            count(Status::Fail),
            count(Status::Skip)
        ));
    }
    out.push_str(&totals(report));
    out.push('\n');
    out.push_str(&report.conformance().line());
    out.push('\n');
    out
}

/// `N passed, M failed, K skipped`.
pub fn totals(report: &Report) -> String {
    format!(
        "{} passed, {} failed, {} skipped",
        report.count(Status::Pass),
        report.count(Status::Fail),
        report.count(Status::Skip)
    )
}

/// The capabilities in the order their first case ran.
pub fn capabilities(report: &Report) -> Vec<&'static str> {
    let mut seen: Vec<&'static str> = Vec::new();
    for case in &report.cases {
        if !seen.contains(&case.capability) {
            seen.push(case.capability);
        }
    }
    seen
}

/// The `--json` document; docs/conform.md describes every member.
pub fn to_json(report: &Report) -> Value {
    let cases: Vec<_> = report
        .cases
        .iter()
        .map(|c| {
            let mut case = json!({
                "id": c.id,
                "capability": c.capability,
                "tier": c.tier.word(),
                "rule": c.rule,
                "status": c.status.json(),
                "detail": c.detail,
                "ms": c.ms as u64,
            });
            if c.status == Status::Fail {
                case["exchange"] = json!(c.exchange);
                case["stderr"] = json!(c.stderr);
            }
            case
        })
        .collect();
    let verdict = report.conformance();
    let tiers: serde_json::Map<String, Value> = verdict
        .tiers
        .iter()
        .map(|(tier, n)| {
            (
                tier.word().to_string(),
                json!({"passed": n.passed, "failed": n.failed, "skipped": n.skipped}),
            )
        })
        .collect();
    let untested: Vec<&str> = report
        .cases
        .iter()
        .filter(|c| c.tier == Tier::Mandatory && c.status == Status::Skip)
        .map(|c| c.id.as_str())
        .collect();
    let blocking: Vec<&str> = report
        .cases
        .iter()
        .filter(|c| c.tier.blocks(c.status) && c.status == Status::Fail)
        .map(|c| c.id.as_str())
        .collect();
    let init = &report.init;
    json!({
        "format": JSON_FORMAT,
        "suite": {"name": "acp-conform", "version": SUITE_VERSION, "cases": report.cases.len()},
        "agent": report.agent,
        "advertised": {
            "protocolVersion": init.get("protocolVersion").cloned().unwrap_or(Value::Null),
            "agentInfo": init.get("agentInfo").cloned().unwrap_or(Value::Null),
            "agentCapabilities": init.get("agentCapabilities").cloned().unwrap_or(Value::Null),
            "authMethods": init.get("authMethods").cloned().unwrap_or(Value::Null),
            "commands": report.commands,
        },
        "cases": cases,
        "passed": report.count(Status::Pass),
        "failed": report.count(Status::Fail),
        "skipped": report.count(Status::Skip),
        "verdict": {
            "conformant": verdict.conformant,
            "tiers": tiers,
            "failed": blocking,
            "untested": untested,
        },
    })
}

/// JUnit XML: one `testsuite` per capability, one `testcase` per case.
pub fn to_junit(report: &Report) -> String {
    let cases: Vec<JunitCase<'_>> = report
        .cases
        .iter()
        .map(|c| JunitCase {
            group: c.capability,
            id: &c.id,
            rule: c.rule,
            tier: c.tier,
            status: c.status,
            detail: &c.detail,
            ms: c.ms,
        })
        .collect();
    junit("acp-cli conform", &cases)
}

/// One case as JUnit XML shows it; the agent and the client suites both write through
/// [`junit`].
#[derive(Clone, Copy, Debug)]
pub struct JunitCase<'a> {
    /// The group it is reported under (a `testsuite`).
    pub group: &'a str,
    /// `group/name`.
    pub id: &'a str,
    /// The rule it checks.
    pub rule: &'a str,
    /// Its tier.
    pub tier: Tier,
    /// How it ended.
    pub status: Status,
    /// What was observed, or why it failed or was skipped.
    pub detail: &'a str,
    /// How long it took, in milliseconds.
    pub ms: u128,
}

/// JUnit XML named `name`: one `testsuite` per group in order of first appearance, one
/// `testcase` per case.
pub fn junit(name: &str, cases: &[JunitCase<'_>]) -> String {
    let count = |cases: &[&JunitCase<'_>], s| cases.iter().filter(|c| c.status == s).count();
    let all: Vec<&JunitCase<'_>> = cases.iter().collect();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out.push_str(&format!(
        "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n",
        xml(name),
        cases.len(),
        count(&all, Status::Fail),
        count(&all, Status::Skip)
    ));
    let mut groups: Vec<&str> = Vec::new();
    for case in cases {
        if !groups.contains(&case.group) {
            groups.push(case.group);
        }
    }
    for group in groups {
        let cases: Vec<&JunitCase<'_>> = cases.iter().filter(|c| c.group == group).collect();
        let seconds: u128 = cases.iter().map(|c| c.ms).sum();
        out.push_str(&format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{}\">\n",
            xml(group),
            cases.len(),
            count(&cases, Status::Fail),
            count(&cases, Status::Skip),
            millis(seconds)
        ));
        for case in cases {
            let name = case.id.split_once('/').map_or(case.id, |(_, n)| n);
            out.push_str(&format!(
                "    <testcase classname=\"conform.{}\" name=\"{}\" time=\"{}\"",
                xml(group),
                xml(name),
                millis(case.ms)
            ));
            match case.status {
                Status::Pass => out.push_str(&format!(
                    ">\n      <system-out>{} [{}]: {}</system-out>\n    </testcase>\n",
                    xml(case.rule),
                    case.tier.word(),
                    xml(case.detail)
                )),
                Status::Fail => out.push_str(&format!(
                    ">\n      <failure message=\"{}\" type=\"{}\">{}: {}</failure>\n    </testcase>\n",
                    xml(case.detail),
                    case.tier.word(),
                    xml(case.rule),
                    xml(case.detail)
                )),
                Status::Skip => out.push_str(&format!(
                    ">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                    xml(case.detail)
                )),
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

fn millis(ms: u128) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// Text escaped for XML attributes and content; characters XML 1.0 forbids are replaced.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> Report {
        let case = |id: &str, capability, tier, status| CaseReport {
            id: id.to_string(),
            capability,
            rule: "R-FRAME-1",
            tier,
            status,
            detail: String::from("a <b> & \"c\"\u{1}"),
            ms: 1234,
            exchange: if status == Status::Fail {
                vec![String::from("> {}"), String::from("< {}")]
            } else {
                Vec::new()
            },
            stderr: Vec::new(),
        };
        Report {
            agent: vec![String::from("agent")],
            init: json!({"protocolVersion": 1, "agentInfo": {"name": "a"}}),
            commands: vec![String::from("sleep")],
            cases: vec![
                case("framing/a", "framing", Tier::Mandatory, Status::Pass),
                case("framing/b", "framing", Tier::Advisory, Status::Fail),
                case("ids/c", "ids", Tier::Capability, Status::Skip),
            ],
        }
    }

    #[test]
    fn text_summary_counts_per_capability() {
        assert_eq!(
            summary(&report()),
            "framing: 1 passed, 1 failed, 0 skipped\nids: 0 passed, 0 failed, 1 skipped\n\
             1 passed, 1 failed, 1 skipped\nverdict: conformant (MANDATORY 1 passed; \
             CAPABILITY 0 passed, 1 not applicable; ADVISORY 0 passed, 1 failed; \
             INFORMATIONAL 0 passed)\n"
        );
        assert_eq!(
            case_line(&report().cases[1]),
            "FAIL framing/b [ADVISORY] — a <b> & \"c\"\u{1}"
        );
    }

    #[test]
    fn json_has_tiers_evidence_for_failures_and_the_verdict() {
        let doc = to_json(&report());
        assert_eq!(doc["advertised"]["protocolVersion"], 1);
        assert_eq!(doc["advertised"]["agentInfo"]["name"], "a");
        assert_eq!(doc["advertised"]["commands"], json!(["sleep"]));
        assert_eq!(doc["cases"][0]["tier"], "MANDATORY");
        assert!(doc["cases"][0].get("exchange").is_none());
        assert_eq!(doc["cases"][1]["exchange"], json!(["> {}", "< {}"]));
        assert_eq!(doc["cases"][1]["stderr"], json!([]));
        assert_eq!(doc["verdict"]["conformant"], true);
        assert_eq!(
            doc["verdict"]["tiers"]["ADVISORY"],
            json!({"passed": 0, "failed": 1, "skipped": 0})
        );
        assert_eq!(doc["verdict"]["failed"], json!([]));
    }

    #[test]
    fn junit_escapes_and_counts() {
        let xml = to_junit(&report());
        assert!(xml.contains("tests=\"3\" failures=\"1\" skipped=\"1\""));
        assert!(xml.contains(
            "<failure message=\"a &lt;b&gt; &amp; &quot;c&quot;\u{fffd}\" type=\"ADVISORY\">"
        ));
        assert!(xml.contains("time=\"1.234\""));
        assert!(!xml.contains('\u{1}'));
    }
}
