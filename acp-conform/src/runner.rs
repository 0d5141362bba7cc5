//! Runs the cases: a first handshake to learn what the agent advertises (its profile),
//! then every selected case against its own fresh agent process in its own fresh temporary
//! directory, a few at a time, results handed out in the suite's order.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::case::Case;
use super::chaos::Chaos;
use super::cx::{ANSWER, Cx, TURN};
use super::profile::Profile;
use super::subject::{Subject, scaled};
use super::tier::{Conformance, Tier};
use super::verdict::{Status, Verdict, fail};
use crate::rules::Finding;

/// How a run is made.
#[derive(Clone, Debug)]
pub struct Options {
    /// The agent's command line.
    pub agent: Vec<String>,
    /// Comma-separated patterns; a case runs when its id matches one (`*` is a wildcard,
    /// otherwise a substring). `None` runs all.
    pub only: Option<String>,
    /// Every timeout is multiplied by this.
    pub timeout_scale: f64,
    /// `--chaos SEED`.
    pub chaos: Option<u64>,
    /// Cases run at the same time.
    pub jobs: usize,
}

impl Options {
    /// Defaults for `agent`: all cases, scale 1, no chaos, up to four cases at a time.
    pub fn new(agent: Vec<String>) -> Options {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Options {
            agent,
            only: None,
            timeout_scale: 1.0,
            chaos: None,
            jobs: cores.clamp(1, 4),
        }
    }
}

/// The result of one case.
#[derive(Clone, Debug)]
pub struct CaseReport {
    /// `capability/name`.
    pub id: String,
    /// The group it is reported under (`framing`, `initialize`, …).
    pub capability: &'static str,
    /// The rule it checks.
    pub rule: &'static str,
    /// How much it weighs in the verdict.
    pub tier: Tier,
    /// Passed, failed or skipped.
    pub status: Status,
    /// What was observed, or why it failed or was skipped.
    pub detail: String,
    /// How long it took, in milliseconds.
    pub ms: u128,
    /// For a failure: the exchange, both directions, one line per message (`> ` harness →
    /// agent, `< ` agent → harness), the last 200 with long lines cut. Empty otherwise.
    pub exchange: Vec<String>,
    /// For a failure: the last lines the agent wrote on stderr (at most 20). Empty otherwise.
    pub stderr: Vec<String>,
}

/// How many stderr lines a failure's report keeps.
const STDERR_TAIL: usize = 20;

/// A whole run.
#[derive(Clone, Debug)]
pub struct Report {
    /// The agent's command line as given.
    pub agent: Vec<String>,
    /// The agent's `initialize` answer in the run's first handshake (its `agentInfo`,
    /// `agentCapabilities` and `protocolVersion` as advertised).
    pub init: Value,
    /// The commands it advertised after `session/new` in that handshake (names without `/`).
    pub commands: Vec<String>,
    /// Every case run, in the suite's order.
    pub cases: Vec<CaseReport>,
}

/// The suite's version: the `acp-conform` crate's, which the reports name.
pub const SUITE_VERSION: &str = env!("CARGO_PKG_VERSION");

impl Report {
    /// How many cases ended with `status`.
    pub fn count(&self, status: Status) -> usize {
        self.cases.iter().filter(|c| c.status == status).count()
    }

    /// The case with this id.
    pub fn case(&self, id: &str) -> Option<&CaseReport> {
        self.cases.iter().find(|c| c.id == id)
    }

    /// The run's verdict from the cases' tiers.
    pub fn conformance(&self) -> Conformance {
        Conformance::of(self)
    }

    /// The exit status of `acp-cli conform`: 0 when the verdict is conformant, else 1. With
    /// `strict`, 0 only when no case of any tier failed (skips never count).
    pub fn exit_code(&self, strict: bool) -> i32 {
        let ok = if strict {
            self.count(Status::Fail) == 0
        } else {
            self.conformance().conformant
        };
        if ok { 0 } else { 1 }
    }
}

/// Why a run could not happen (exit status 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// The agent could not be started or never answered `initialize`.
    Start(String),
    /// `--only` matched no case.
    NoCases(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Start(why) => write!(f, "the agent did not start: {why}"),
            RunError::NoCases(pattern) => write!(f, "--only {pattern} matches no case"),
        }
    }
}

/// Whether `id` is selected by `only` (see [`Options::only`]).
pub fn selected(id: &str, only: Option<&str>) -> bool {
    let Some(only) = only else {
        return true;
    };
    only.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .any(|pattern| {
            if pattern.contains('*') {
                glob_match(pattern.as_bytes(), id.as_bytes())
            } else {
                id.contains(pattern)
            }
        })
}

fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|skip| glob_match(rest, &text[skip..])),
        Some((c, rest)) => text.first() == Some(c) && glob_match(rest, &text[1..]),
    }
}

/// The agent's command line with relative paths made absolute, since the agent runs in a
/// temporary directory: a program with a `/`, and arguments with a `/` that name something
/// existing relative to the current directory.
pub fn absolute_argv(argv: &[String]) -> Vec<String> {
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    argv.iter()
        .enumerate()
        .map(|(i, arg)| {
            let path = Path::new(arg);
            let relative = arg.contains('/') && path.is_relative();
            if relative && (i == 0 || here.join(path).exists()) {
                here.join(path).to_string_lossy().into_owned()
            } else {
                arg.clone()
            }
        })
        .collect()
}

/// A fresh empty directory for one agent process (symlinks resolved). Numbered across the
/// whole process, so runs side by side (tests calling the library) never share one.
fn scratch_dir() -> std::io::Result<PathBuf> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("acp-conform-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    dir.canonicalize()
}

/// The first handshake: `initialize` (its failure ends the run with exit 2), then
/// `session/new` and whatever commands the agent advertises after it.
pub fn probe(options: &Options) -> Result<Profile, RunError> {
    let argv = absolute_argv(&options.agent);
    let dir = scratch_dir().map_err(|e| RunError::Start(e.to_string()))?;
    let result = smol::block_on(async {
        let subject = Subject::spawn(&argv, &dir, None)
            .map_err(|e| RunError::Start(format!("{}: {e}", argv[0])))?;
        let mut cx = Cx::new(subject, Arc::new(Profile::default()), options.timeout_scale);
        let init = first_answer(&mut cx).await;
        let init_ms = cx.subject.started.elapsed().as_millis();
        let init = init.map_err(|o| RunError::Start(o.detail))?;
        let mut profile = Profile {
            init,
            commands: Vec::new(),
            init_ms,
        };
        if let Ok(session) = cx.new_session().await {
            // The commands come right after the answer; a barrier and a short wait catch them.
            let _ = cx.settle().await;
            cx.drain_for(Duration::from_millis(200)).await;
            profile.commands = advertised_commands(&cx, &session);
        }
        Ok(profile)
    });
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// The probe's `initialize`: any answer counts, even one with a wrong id, so an agent that
/// mangles ids is still run (and fails the `ids` cases) rather than refused with exit 2.
async fn first_answer(cx: &mut Cx) -> Result<Value, super::verdict::Outcome> {
    cx.request("initialize", super::cases::init_params())
        .await?;
    let index = cx
        .wait_for("answer to initialize", ANSWER, |m| {
            super::cx::kind(m) == super::cx::Kind::Response
        })
        .await?;
    super::cx::result_of(cx.message(index)).map_err(|o| o.context("initialize"))
}

fn advertised_commands(cx: &Cx, session: &str) -> Vec<String> {
    cx.updates(session)
        .into_iter()
        .filter(|(_, u)| u.get("sessionUpdate") == Some(&json!("available_commands_update")))
        .flat_map(|(_, u)| {
            u.get("availableCommands")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|c| {
            c.get("name")
                .and_then(Value::as_str)
                .map(|n| n.trim_start_matches('/').to_string())
        })
        .collect()
}

/// Runs the selected cases of `cases`; `each` sees every result in the suite's order as soon
/// as it and all before it are done.
pub fn run(
    cases: &[Case],
    options: &Options,
    mut each: impl FnMut(&CaseReport),
) -> Result<Report, RunError> {
    let chosen: Vec<Case> = cases
        .iter()
        .filter(|c| selected(&c.id(), options.only.as_deref()))
        .copied()
        .collect();
    if chosen.is_empty() {
        return Err(RunError::NoCases(options.only.clone().unwrap_or_default()));
    }
    let profile = Arc::new(probe(options)?);
    let next = AtomicUsize::new(0);
    let (sender, receiver) = std::sync::mpsc::channel();
    let mut reports = Vec::with_capacity(chosen.len());
    std::thread::scope(|scope| {
        for _ in 0..options.jobs.max(1) {
            let sender = sender.clone();
            let (chosen, next, profile) = (&chosen, &next, &profile);
            scope.spawn(move || {
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = chosen.get(n) else { break };
                    let report = run_case(case, profile, options);
                    if sender.send((n, report)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        let mut waiting = BTreeMap::new();
        for (n, report) in receiver {
            waiting.insert(n, report);
            while let Some(report) = waiting.remove(&reports.len()) {
                each(&report);
                reports.push(report);
            }
        }
    });
    Ok(Report {
        agent: options.agent.clone(),
        init: profile.init.clone(),
        commands: profile.commands.clone(),
        cases: reports,
    })
}

/// One case against a fresh agent; always cleans up its process group and directory.
fn run_case(case: &Case, profile: &Arc<Profile>, options: &Options) -> CaseReport {
    let started = Instant::now();
    let id = case.id();
    let argv = absolute_argv(&options.agent);
    let chaos = options.chaos.map(|seed| Chaos::for_case(seed, &id));
    let mut evidence = (Vec::new(), Vec::new());
    let verdict = match scratch_dir() {
        Err(e) => Err(fail(format!("cannot make a scratch directory: {e}"))),
        Ok(dir) => {
            let verdict = smol::block_on(async {
                let subject = Subject::spawn(&argv, &dir, chaos)
                    .map_err(|e| fail(format!("cannot start the agent: {e}")))?;
                let mut cx = Cx::new(subject, profile.clone(), options.timeout_scale);
                cx.rng = Chaos::for_case(options.chaos.unwrap_or(0), &id);
                let limit = scaled(TURN + TURN + ANSWER, options.timeout_scale);
                let timeout = async {
                    smol::Timer::after(limit).await;
                    Err(fail(format!("the case did not finish within {limit:?}")))
                };
                let verdict = smol::future::or((case.run)(&mut cx), timeout).await;
                cx.subject.kill();
                let deadline = Instant::now() + Duration::from_secs(2);
                cx.subject.wait_exit(deadline).await;
                cx.subject.wait_stdout_closed(deadline).await;
                // Everything the agent wrote until it died counts, late lines included.
                cx.observe_agent();
                let verdict = judged(verdict, &cx.violations);
                if matches!(&verdict, Err(o) if o.status == Status::Fail) {
                    let stderr = &cx.subject.stderr;
                    evidence = (
                        cx.exchange.drain(..).collect(),
                        stderr[stderr.len().saturating_sub(STDERR_TAIL)..].to_vec(),
                    );
                }
                verdict
            });
            let _ = std::fs::remove_dir_all(&dir);
            verdict
        }
    };
    let (status, detail) = match verdict {
        Ok(detail) => (Status::Pass, detail),
        Err(outcome) => (outcome.status, outcome.detail),
    };
    let (exchange, stderr) = evidence;
    CaseReport {
        id,
        capability: case.capability,
        rule: case.rule,
        tier: case.tier,
        status,
        detail,
        ms: started.elapsed().as_millis(),
        exchange,
        stderr,
    }
}

/// A case's verdict with the exchange monitor's word added: a protocol error the agent made
/// on the case's traffic fails the case, whatever the case itself concluded, and leads the
/// detail (a case's own failure follows it). A skip stays a skip: it claimed nothing.
pub fn judged(verdict: Verdict, violations: &[Finding]) -> Verdict {
    let Some(first) = violations.first() else {
        return verdict;
    };
    let mut finding = format!(
        "{} — {} (exchange line {})",
        first.rule, first.detail, first.line
    );
    if violations.len() > 1 {
        finding.push_str(&format!(" and {} more", violations.len() - 1));
    }
    match verdict {
        Ok(_) => Err(fail(finding)),
        Err(outcome) if outcome.status == Status::Fail => {
            Err(fail(format!("{finding}; then {}", outcome.detail)))
        }
        Err(skipped) => Err(skipped),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_patterns() {
        assert!(selected("framing/crlf", None));
        assert!(selected("framing/crlf", Some("framing/")));
        assert!(selected("framing/crlf", Some("ids/,framing/*")));
        assert!(selected("ids/zero", Some("*zero")));
        assert!(!selected("ids/zero", Some("framing")));
        assert!(selected("ids/zero", Some("ids/z")));
    }

    fn finding(rule: &'static str) -> Finding {
        Finding {
            line: 7,
            rule,
            blame: crate::trace::Side::Agent,
            severity: crate::rules::Severity::Error,
            detail: String::from("what happened"),
        }
    }

    #[test]
    fn a_violation_fails_a_passing_case() {
        let verdict = judged(Ok(String::from("fine")), &[finding("R-TURN-3")]);
        assert_eq!(
            verdict,
            Err(fail("R-TURN-3 — what happened (exchange line 7)"))
        );
    }

    #[test]
    fn a_violation_leads_a_failure_and_counts_the_rest() {
        let verdict = judged(
            Err(fail("no answer")),
            &[finding("R-RPC-1"), finding("R-ID-6")],
        );
        assert_eq!(
            verdict,
            Err(fail(
                "R-RPC-1 — what happened (exchange line 7) and 1 more; then no answer"
            ))
        );
    }

    #[test]
    fn skips_and_clean_cases_are_unchanged() {
        let skipped = Err(crate::verdict::skip("no /tool"));
        assert_eq!(judged(skipped.clone(), &[finding("R-LINT-1")]), skipped);
        assert_eq!(
            judged(Ok(String::from("fine")), &[]),
            Ok(String::from("fine"))
        );
    }
}
