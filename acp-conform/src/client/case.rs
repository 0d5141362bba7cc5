//! One client case: its group, the rule it checks, how much that rule weighs (its tier), and
//! the async function that plays the agent for it.

use std::future::Future;
use std::pin::Pin;

use super::cx::Cx;
use crate::verdict::Verdict;

/// What a case's function returns.
pub(crate) type CaseFuture<'a> = Pin<Box<dyn Future<Output = Verdict> + 'a>>;

/// How much a broken rule weighs: the agent suite's tiers, so both suites judge alike.
pub use crate::tier::Tier;

/// A client case; see the module docs.
#[derive(Clone, Copy)]
pub struct ClientCase {
    /// The group it is reported under (`handshake`, `permission`, …).
    pub group: &'static str,
    /// Its name within the group.
    pub name: &'static str,
    /// The rule it checks: an id of docs/protocol.md.
    pub rule: &'static str,
    /// How much the rule weighs.
    pub tier: Tier,
    /// What it does, in a sentence.
    pub doc: &'static str,
    /// The scripted agent's part, run against a fresh client process.
    pub(crate) run: for<'a> fn(&'a mut Cx) -> CaseFuture<'a>,
}

impl ClientCase {
    /// `group/name`.
    pub fn id(&self) -> String {
        format!("{}/{}", self.group, self.name)
    }
}

impl std::fmt::Debug for ClientCase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.id())
    }
}

/// Declares a [`ClientCase`]: `client_case!("handshake", "initialize-first", "R-CLIENT-1",
/// Mandatory, "doc…", function)`.
macro_rules! client_case {
    ($group:literal, $name:literal, $rule:literal, $tier:ident, $doc:literal, $run:path) => {
        $crate::client::case::ClientCase {
            group: $group,
            name: $name,
            rule: $rule,
            tier: $crate::client::case::Tier::$tier,
            doc: $doc,
            run: |cx| Box::pin($run(cx)),
        }
    };
}
pub(crate) use client_case;
