//! How much a case weighs, and the run's verdict from them.
//!
//! A case's tier comes from the spec's words for what it checks (docs/conform.md, "Tiers and
//! the verdict"); `docs/protocol.md` writes the tiers of a rule's cases beside the rule. The
//! verdict follows the official test kit's: a run is conformant when no MANDATORY case
//! failed or went untested and no CAPABILITY case failed. A MANDATORY case is *untested* when
//! it skipped: the harness could not make the agent show the behaviour (no `/sleep` to keep a
//! turn running, a prompt refused), so the requirement was neither seen kept nor seen broken.
//! A CAPABILITY case that skipped did not apply (the agent did not advertise or use what it
//! needs). ADVISORY and INFORMATIONAL cases are reported and never change the verdict.

use super::runner::Report;
use super::verdict::Status;

/// A case's tier; see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tier {
    /// The spec says MUST (or MUST NOT), unconditionally: ACP's own words, or JSON-RPC 2.0's,
    /// which ACP is built on.
    Mandatory,
    /// A MUST that applies only when the agent advertises a capability or uses a feature
    /// (asks for permission, reads files, sends modes).
    Capability,
    /// The spec says SHOULD, or says nothing and the case checks one of our rules
    /// (docs/protocol.md) that a careful agent keeps.
    Advisory,
    /// A measurement (latency): reported, never judged.
    Informational,
}

impl Tier {
    /// Every tier, heaviest first (the order of the summary).
    pub const ALL: [Tier; 4] = [
        Tier::Mandatory,
        Tier::Capability,
        Tier::Advisory,
        Tier::Informational,
    ];

    /// `MANDATORY`, `CAPABILITY`, `ADVISORY`, `INFORMATIONAL`: the word of the reports.
    pub fn word(self) -> &'static str {
        match self {
            Tier::Mandatory => "MANDATORY",
            Tier::Capability => "CAPABILITY",
            Tier::Advisory => "ADVISORY",
            Tier::Informational => "INFORMATIONAL",
        }
    }

    /// Whether a failure of this tier fails the run: MANDATORY and CAPABILITY ones do.
    pub fn fails_run(self) -> bool {
        matches!(self, Tier::Mandatory | Tier::Capability)
    }

    /// Whether a case of this tier that ended `status` keeps the run from being conformant.
    pub fn blocks(self, status: Status) -> bool {
        matches!(
            (self, status),
            (Tier::Mandatory, Status::Fail | Status::Skip) | (Tier::Capability, Status::Fail)
        )
    }
}

/// Cases of one tier by how they ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TierCounts {
    /// Passed.
    pub passed: usize,
    /// Failed.
    pub failed: usize,
    /// Skipped (for MANDATORY: untested).
    pub skipped: usize,
}

/// The run's verdict; see the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conformance {
    /// No MANDATORY case failed or went untested, no CAPABILITY case failed.
    pub conformant: bool,
    /// Counts per tier, in [`Tier::ALL`]'s order.
    pub tiers: Vec<(Tier, TierCounts)>,
}

impl Conformance {
    /// The verdict of `report`.
    pub fn of(report: &Report) -> Conformance {
        let tiers: Vec<(Tier, TierCounts)> = Tier::ALL
            .iter()
            .map(|&tier| {
                let mut counts = TierCounts::default();
                for case in report.cases.iter().filter(|c| c.tier == tier) {
                    match case.status {
                        Status::Pass => counts.passed += 1,
                        Status::Fail => counts.failed += 1,
                        Status::Skip => counts.skipped += 1,
                    }
                }
                (tier, counts)
            })
            .collect();
        let conformant = !report.cases.iter().any(|c| c.tier.blocks(c.status));
        Conformance { conformant, tiers }
    }

    /// The counts of `tier`.
    pub fn counts(&self, tier: Tier) -> TierCounts {
        self.tiers
            .iter()
            .find(|(t, _)| *t == tier)
            .map(|(_, c)| *c)
            .unwrap_or_default()
    }

    /// `conformant` or `not conformant`.
    pub fn word(&self) -> &'static str {
        if self.conformant {
            "conformant"
        } else {
            "not conformant"
        }
    }

    /// The last line of the text report: `verdict: not conformant — MANDATORY 80/2 failed/1
    /// untested, CAPABILITY …`.
    pub fn line(&self) -> String {
        let mut parts = Vec::new();
        for (tier, c) in &self.tiers {
            let mut part = format!("{} {} passed", tier.word(), c.passed);
            if c.failed > 0 {
                part.push_str(&format!(", {} failed", c.failed));
            }
            if c.skipped > 0 {
                let word = match tier {
                    Tier::Mandatory => "untested",
                    Tier::Capability => "not applicable",
                    _ => "skipped",
                };
                part.push_str(&format!(", {} {word}", c.skipped));
            }
            parts.push(part);
        }
        format!("verdict: {} ({})", self.word(), parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::CaseReport;

    fn report(cases: &[(Tier, Status)]) -> Report {
        Report {
            agent: Vec::new(),
            init: serde_json::Value::Null,
            commands: Vec::new(),
            cases: cases
                .iter()
                .map(|&(tier, status)| CaseReport {
                    id: String::from("x/y"),
                    capability: "x",
                    rule: "R-FRAME-1",
                    tier,
                    status,
                    detail: String::new(),
                    ms: 0,
                    exchange: Vec::new(),
                    stderr: Vec::new(),
                })
                .collect(),
        }
    }

    #[test]
    fn mandatory_failures_and_untested_mandatory_cases_block() {
        use Status::*;
        use Tier::*;
        let conformant = |cases: &[(Tier, Status)]| Conformance::of(&report(cases)).conformant;
        assert!(conformant(&[(Mandatory, Pass), (Capability, Skip)]));
        assert!(conformant(&[(Advisory, Fail), (Informational, Fail)]));
        assert!(!conformant(&[(Mandatory, Fail)]));
        assert!(!conformant(&[(Mandatory, Skip)]));
        assert!(!conformant(&[(Capability, Fail)]));
        assert!(conformant(&[]));
    }

    #[test]
    fn strict_counts_every_failure_and_no_skip() {
        let advisory = report(&[(Tier::Advisory, Status::Fail)]);
        assert_eq!(
            (advisory.exit_code(false), advisory.exit_code(true)),
            (0, 1)
        );
        let untested = report(&[(Tier::Mandatory, Status::Skip)]);
        assert_eq!(
            (untested.exit_code(false), untested.exit_code(true)),
            (1, 0)
        );
    }

    #[test]
    fn the_verdict_line_names_untested_and_not_applicable_cases() {
        let run = report(&[
            (Tier::Mandatory, Status::Pass),
            (Tier::Mandatory, Status::Skip),
            (Tier::Capability, Status::Skip),
            (Tier::Informational, Status::Pass),
        ]);
        assert_eq!(
            Conformance::of(&run).line(),
            "verdict: not conformant (MANDATORY 1 passed, 1 untested; CAPABILITY 0 passed, \
             1 not applicable; ADVISORY 0 passed; INFORMATIONAL 1 passed)"
        );
    }
}
