//! One conformance case: where it belongs, the rule it checks, and the async function that
//! checks it against a fresh agent.

use std::future::Future;
use std::pin::Pin;

use super::cx::Cx;
use super::tier::Tier;
use super::verdict::Verdict;

/// What a case's function returns.
pub(crate) type CaseFuture<'a> = Pin<Box<dyn Future<Output = Verdict> + 'a>>;

/// A case; see the module docs.
#[derive(Clone, Copy)]
pub struct Case {
    /// The group it is reported under (`framing`, `initialize`, …).
    pub capability: &'static str,
    /// Its name within the group.
    pub name: &'static str,
    /// The rule it checks: an id of docs/protocol.md (`R-FRAME-1`), sometimes with the
    /// spec's words after it.
    pub rule: &'static str,
    /// How much it weighs in the verdict, from the spec's words for what it checks.
    pub tier: Tier,
    /// What it does and why, in a sentence.
    pub doc: &'static str,
    /// The check, run against a fresh agent process.
    pub(crate) run: for<'a> fn(&'a mut Cx) -> CaseFuture<'a>,
}

impl Case {
    /// `capability/name`.
    pub fn id(&self) -> String {
        format!("{}/{}", self.capability, self.name)
    }
}

impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.id())
    }
}

/// Declares a [`Case`]: `case!("framing", "crlf", "R-FRAME-1", Mandatory, "doc…", function)`.
macro_rules! conform_case {
    ($capability:literal, $name:literal, $rule:literal, $tier:ident, $doc:literal, $run:path) => {
        $crate::case::Case {
            capability: $capability,
            name: $name,
            rule: $rule,
            tier: $crate::tier::Tier::$tier,
            doc: $doc,
            run: |cx| Box::pin($run(cx)),
        }
    };
}
pub(crate) use conform_case;
