//! A whole trace checked against the protocol: every message through one [`Monitor`], the
//! findings in line order (what `acp-cli lint` prints).

use crate::rules::{Finding, Monitor, MonitorOptions};
use crate::trace::Trace;

/// Runs every message of `trace` through a monitor; findings sorted by line.
pub fn check(trace: &Trace, options: MonitorOptions) -> Vec<Finding> {
    let mut monitor = Monitor::new(options);
    let mut findings = Vec::new();
    for entry in &trace.entries {
        findings.extend(monitor.observe(entry.from, entry.line, entry.ts, &entry.text));
    }
    findings.extend(monitor.finish());
    findings.sort_by_key(|f| f.line);
    findings
}
