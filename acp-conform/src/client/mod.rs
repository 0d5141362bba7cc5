//! `acp-cli conform --client`: the suite that checks a client. The suite plays the agent:
//! the client's command line names its agent with the placeholder `{agent}`, which each case
//! replaces with the command of a scripted agent ([`relay`]: `acp-cli conform
//! --scripted-agent TOKEN@ADDR`) that connects back to the suite on loopback, so the case
//! plays the agent live. The client is started once per case, in a fresh temporary
//! directory.
//!
//! What a client owes an agent is the `R-CLIENT-*` section of docs/protocol.md, plus the
//! JSON-RPC rules both sides share; every case names its rule and its [`case::Tier`]. The
//! exchange monitor ([`crate::rules`]) watches every case's traffic: what it blames on the
//! client fails the case.
//!
//! - [`case`]: a case and its tier; [`cases`]: the cases, one module per group.
//! - [`runner`]: the baseline turn, one fresh client per case, the report.
//! - [`relay`]: the scripted agent's process.
//! - Internal: `cx` (what a case works with: the client process and the agent's connection).

pub mod case;
pub mod cases;
mod cx;
pub mod relay;
pub mod runner;

pub use case::{ClientCase, Tier};
pub use runner::{ClientCaseReport, ClientOptions, ClientReport, ClientRunError};
