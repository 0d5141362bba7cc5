//! The RAM of a no-allocator connection, buffers included: `size_of` of `AgentConnection` and
//! `ClientConnection` over `Fixed` storage with a 4 KiB line limit, for 1 and 4 sessions
//! (issue 17, item 4). The README's footprint table is this test's output:
//! `cargo test -p acp-core --no-default-features --test footprint -- --nocapture`.

use core::mem::size_of;

use acp_core::conn::Fixed;
use acp_core::conn::agent::{AgentConfig, AgentEvent};
use acp_core::conn::client::{ClientConfig, ClientEvent};
use acp_core::{AgentConnection, ClientConnection};

/// 4 KiB lines, a 4 KiB outbox, one session, 2 requests each way, 4 queued events.
type OneSession = Fixed<4096, 4096, 1, 2, 4>;
/// 4 KiB lines, an 8 KiB outbox, four sessions, 8 requests each way, 10 queued events.
type FourSessions = Fixed<4096, 8192, 4, 8, 10>;

/// The budget issue 17 sets: a one-session agent, buffers included.
const ONE_SESSION_AGENT_BUDGET: usize = 16 * 1024;

#[test]
fn prints_the_footprint_table() {
    let rows = [
        (
            "AgentConnection",
            "1",
            size_of::<AgentConnection<OneSession>>(),
        ),
        (
            "AgentConnection",
            "4",
            size_of::<AgentConnection<FourSessions>>(),
        ),
        (
            "ClientConnection",
            "1",
            size_of::<ClientConnection<OneSession>>(),
        ),
        (
            "ClientConnection",
            "4",
            size_of::<ClientConnection<FourSessions>>(),
        ),
    ];
    println!("| connection | sessions | bytes |");
    println!("|---|---|---|");
    for (name, sessions, bytes) in rows {
        println!("| `{name}` | {sessions} | {bytes} |");
    }
    let agent = size_of::<AgentConnection<OneSession>>();
    println!("one-session agent: {agent} of {ONE_SESSION_AGENT_BUDGET} bytes budgeted");
    println!(
        "parts: AgentEvent {} (x4 queued), AgentConfig {}, ClientEvent {} (x4 per step), ClientConfig {}",
        size_of::<AgentEvent>(),
        size_of::<AgentConfig>(),
        size_of::<ClientEvent>(),
        size_of::<ClientConfig>(),
    );
    // Events carry a handle to the kept request line, not a copy of its params, so the
    // one-session agent fits the budget (the last input's line lives in the framer's buffer).
    assert!(
        agent <= ONE_SESSION_AGENT_BUDGET,
        "one-session agent is {agent} bytes, over the {ONE_SESSION_AGENT_BUDGET}-byte budget"
    );
    // The buffers are inline: a connection holds at least its line and outbox bytes, and more
    // sessions cost more.
    assert!(agent > 4096 + 4096);
    assert!(size_of::<AgentConnection<FourSessions>>() > agent);
    assert!(
        size_of::<ClientConnection<FourSessions>>() > size_of::<ClientConnection<OneSession>>()
    );
}
