//! An ACP agent on stdin/stdout with `std` only: one thread, one `poll(2)` (through `rustix`),
//! no async runtime. It answers every prompt with `echo: TEXT` after a short pretend think
//! time, and shows the four things a real loop must handle:
//!
//! - **timeouts**: `poll`'s timeout is the earlier of the connection's
//!   [`poll_timeout`](AgentConnection::poll_timeout) and the application's own deadline (the
//!   think time); at a deadline, `handle_timeout(now)`;
//! - **EOF**: a read of 0 bytes is `handle_eof(now)`; the loop ends at `AgentEvent::Closed`
//!   once the last bytes are written;
//! - **backpressure**: stdin is not read while bytes taken from it wait (the connection takes
//!   one request line per input) or the connection holds input because its outbox cannot take
//!   another reply; a reply that does not fit (`UsageError::WouldBlock`) waits for its turn;
//! - **non-blocking writes**: stdout is polled for `POLLOUT` only while there is something to
//!   write, and written as far as it takes.
//!
//! Both descriptors are switched to `O_NONBLOCK` for the run and restored at the end.
//!
//! Run it under our client: `acp-cli client --prompt hello -- target/debug/examples/agent_poll_loop`
//! (stdout: `echo: hello`).

use std::collections::VecDeque;
use std::os::fd::{AsFd, BorrowedFd};
use std::time::Instant as Clock;

use acp_core::prelude::*;
use acp_core::schema::ContentBlock;
use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
use rustix::io::Errno;

/// The pretend think time before a prompt is answered, so the loop has a deadline of its own.
const THINK_MS: u64 = 20;

/// A prompt being "worked on": answered at `due`.
struct Reply {
    due: Instant,
    session: SessionId,
    text: String,
}

/// The application: names sessions and echoes prompts.
#[derive(Default)]
struct Echo {
    sessions: u32,
    replies: VecDeque<Reply>,
}

impl Echo {
    fn on_event(&mut self, agent: &mut AgentConnection<Growable>, now: Instant, event: AgentEvent) {
        let done = match event {
            AgentEvent::NewSession { ticket, .. } => {
                self.sessions += 1;
                agent.accept_new_session_id(ticket, &format!("echo-{}", self.sessions))
            }
            AgentEvent::Prompt {
                session, params, ..
            } => {
                // Read while the events of its input are drained: a later read is `None`.
                let Some(blocks) = agent.prompt(params) else {
                    let failed = agent.fail_turn(session.as_str(), &"prompt read too late");
                    return eprintln!("agent_poll_loop: prompt read too late ({failed:?})");
                };
                let text: Vec<String> = blocks
                    .into_iter()
                    .filter_map(|block| match block {
                        ContentBlock::Text(text) => Some(text.text),
                        _ => None,
                    })
                    .collect();
                self.replies.push_back(Reply {
                    due: now.plus_ms(THINK_MS),
                    session,
                    text: text.join(" "),
                });
                Ok(())
            }
            AgentEvent::Cancelled { session } => {
                self.replies.retain(|reply| reply.session != session);
                if agent.is_closed() {
                    // At EOF the connection has answered the turn `cancelled` itself.
                    Ok(())
                } else {
                    agent
                        .end_turn(session.as_str(), StopReason::Cancelled)
                        .map(drop)
                }
            }
            AgentEvent::Request { ticket, method, .. } => agent.respond_error(
                ticket,
                ErrorCode::METHOD_NOT_FOUND,
                &format!("Method not found: {method}"),
            ),
            _ => Ok(()),
        };
        if let Err(error) = done {
            eprintln!("agent_poll_loop: {error:?}");
        }
    }

    /// Sends the replies that are due, in order; one that does not fit waits (backpressure).
    fn send_due(&mut self, agent: &mut AgentConnection<Growable>, now: Instant) {
        while let Some(reply) = self.replies.front() {
            if reply.due > now || !agent.has_room_for_updates() {
                return;
            }
            let update = serde_json::json!({
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": format!("echo: {}", reply.text)},
            })
            .to_string();
            let update = RawUpdate::new(&update).expect("serde_json writes an object");
            match agent.send_update(reply.session.as_str(), &update) {
                Err(UsageError::WouldBlock) => return,
                Err(error) => eprintln!("agent_poll_loop: {error:?}"),
                Ok(()) => {
                    if let Err(error) = agent.end_turn(reply.session.as_str(), StopReason::EndTurn)
                    {
                        eprintln!("agent_poll_loop: {error:?}");
                    }
                }
            }
            self.replies.pop_front();
        }
    }

    fn next_due(&self) -> Option<Instant> {
        self.replies.front().map(|reply| reply.due)
    }
}

/// Sets `O_NONBLOCK` on `fd` and returns its flags before.
fn set_nonblocking(fd: BorrowedFd<'_>) -> rustix::io::Result<OFlags> {
    let flags = fcntl_getfl(fd)?;
    fcntl_setfl(fd, flags | OFlags::NONBLOCK)?;
    Ok(flags)
}

fn main() -> std::io::Result<()> {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let (input, output) = (stdin.as_fd(), stdout.as_fd());
    let input_flags = set_nonblocking(input)?;
    let output_flags = set_nonblocking(output)?;
    let result = run(input, output);
    fcntl_setfl(input, input_flags)?;
    fcntl_setfl(output, output_flags)?;
    result
}

fn run(input: BorrowedFd<'_>, output: BorrowedFd<'_>) -> std::io::Result<()> {
    let start = Clock::now();
    let now = || Instant(u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX));
    let mut agent: AgentConnection<Growable> = AgentConnection::new(AgentConfig::new(
        AgentInfo::new("echo", "Echo (poll loop)", "0.1.0"),
    ));
    let mut app = Echo::default();
    let mut buf = vec![0u8; 64 * 1024];
    let mut held = 0; // bytes read and not yet taken by the connection
    let mut eof = false;

    loop {
        while let Some(event) = agent.poll_event() {
            app.on_event(&mut agent, now(), event);
        }
        app.send_due(&mut agent, now());

        // Bytes already read go in first; one request line is taken per input, so drain its
        // events (top of the loop) before feeding the rest.
        if held > 0 || agent.is_input_held() {
            let taken = agent.handle_bytes(now(), &buf[..held]);
            buf.copy_within(taken..held, 0);
            held -= taken;
            if taken > 0 {
                continue;
            }
        }
        if eof && held == 0 && !agent.is_input_held() && !agent.is_closed() {
            agent.handle_eof(now());
            continue;
        }
        let pending = !agent.poll_transmit().is_empty();
        if agent.is_closed() && !pending {
            return Ok(());
        }

        // Wait for input (unless held back), for room on stdout (only with bytes to write),
        // or for the earliest deadline.
        let read = !eof && held == 0 && !agent.is_input_held();
        let deadline = match (agent.poll_timeout(), app.next_due()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let timeout = deadline.map(|deadline| {
            let ms = deadline.ms_since(now());
            Timespec {
                tv_sec: (ms / 1000) as _,
                tv_nsec: ((ms % 1000) * 1_000_000) as _,
            }
        });
        if !read && !pending && timeout.is_none() {
            // Nothing can move; a bug in this loop rather than a state to wait in.
            return Err(std::io::Error::other("the loop is stuck"));
        }
        let mut fds = Vec::with_capacity(2);
        if read {
            fds.push(PollFd::new(&input, PollFlags::IN));
        }
        if pending {
            fds.push(PollFd::new(&output, PollFlags::OUT));
        }
        match poll(&mut fds, timeout.as_ref()) {
            Ok(_) | Err(Errno::INTR) => {}
            Err(error) => return Err(error.into()),
        }
        let ready: Vec<PollFlags> = fds.iter().map(PollFd::revents).collect();
        drop(fds);
        let mut ready = ready.into_iter();
        let readable = read && ready.next().is_some_and(|r| !r.is_empty());
        let writable = pending && ready.next().is_some_and(|r| !r.is_empty());

        if writable {
            match rustix::io::write(output, agent.poll_transmit()) {
                Ok(n) => agent.transmitted(n),
                Err(Errno::AGAIN | Errno::INTR) => {}
                // The reader went away: nobody can hear the rest.
                Err(error) => return Err(error.into()),
            }
        }
        if readable {
            match rustix::io::read(input, &mut buf[..]) {
                Ok(0) => eof = true,
                Ok(n) => held = n,
                Err(Errno::AGAIN | Errno::INTR) => {}
                Err(error) => return Err(error.into()),
            }
        }
        if deadline.is_some_and(|deadline| deadline <= now()) {
            // The application's deadline is handled at the top of the loop (`send_due`).
            agent.handle_timeout(now());
        }
    }
}
