//! Every rule a conformance case checks: `docs/protocol.md` writes beside the rule the
//! tiers of the cases whose first rule it is (`Conform: MANDATORY.`, or for a rule whose cases
//! differ, each tier with its cases), and the suite's cases say the same.

use std::collections::BTreeMap;

use acp_conform::Tier;
use acp_conform::cases::all;

/// The tag each rule's row must end with, from the cases.
fn expected() -> BTreeMap<String, String> {
    let mut by_rule: BTreeMap<String, Vec<(Tier, String)>> = BTreeMap::new();
    for case in all() {
        let first = case.rule.split(',').next().unwrap().trim().to_string();
        by_rule
            .entry(first)
            .or_default()
            .push((case.tier, case.id()));
    }
    by_rule
        .into_iter()
        .map(|(rule, cases)| {
            let tiers: Vec<Tier> = Tier::ALL
                .into_iter()
                .filter(|t| cases.iter().any(|(c, _)| c == t))
                .collect();
            let tag = if tiers.len() == 1 {
                format!("Conform: {}.", tiers[0].word())
            } else {
                let parts: Vec<String> = tiers
                    .iter()
                    .map(|t| {
                        let ids: Vec<&str> = cases
                            .iter()
                            .filter(|(c, _)| c == t)
                            .map(|(_, id)| id.as_str())
                            .collect();
                        format!("{} ({})", t.word(), ids.join(", "))
                    })
                    .collect();
                format!("Conform: {}.", parts.join(", "))
            };
            (rule, tag)
        })
        .collect()
}

/// Each rule row's `Conform: …` tag, by rule id.
fn documented() -> BTreeMap<String, String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/protocol.md");
    let text = std::fs::read_to_string(path).expect("docs/protocol.md");
    text.lines()
        .filter_map(|line| {
            let row = line.strip_prefix("| R-")?;
            let (id, rest) = row.split_once(" | ")?;
            let at = rest.find(" Conform: ")?;
            let tag = rest[at + 1..].trim_end_matches(" |").to_string();
            Some((format!("R-{id}"), tag))
        })
        .collect()
}

#[test]
fn every_checked_rule_carries_the_tiers_of_its_cases() {
    let (expected, documented) = (expected(), documented());
    let wrong: Vec<String> = expected
        .iter()
        .filter(|(rule, tag)| documented.get(*rule) != Some(tag))
        .map(|(rule, tag)| format!("{rule}: {tag}"))
        .collect();
    assert!(
        wrong.is_empty(),
        "docs/protocol.md should say:\n{}",
        wrong.join("\n")
    );
    let stray: Vec<&String> = documented
        .keys()
        .filter(|rule| !expected.contains_key(*rule))
        .collect();
    assert!(
        stray.is_empty(),
        "a Conform tag on a rule no case checks first: {stray:?}"
    );
}

#[test]
fn latency_is_informational_and_only_latency() {
    for case in all() {
        assert_eq!(
            case.capability == "latency",
            case.tier == Tier::Informational,
            "{}",
            case.id()
        );
    }
}
