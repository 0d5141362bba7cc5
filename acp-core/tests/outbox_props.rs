//! Properties of the outbox: however lines are pushed and however much of the pending bytes
//! the caller writes out between pushes, the outbox hands out exactly the bytes of the lines
//! it accepted, in order, and accepts a line exactly when it fits under its limit (the
//! lesser of the configured limit and the storage's size), as R-TURN-7 requires.

use acp_core::conn::transport::Outbox;
use acp_core::machine::UsageError;
use acp_core::wire::encode::{EncodeError, Sink};
use acp_core::wire::frame::ByteStorage;
use quickcheck::{Arbitrary, Gen, QuickCheck};

/// What the caller does next.
#[derive(Clone, Debug)]
enum Op {
    /// Pushes one line, written in these pieces (a `\n` follows the last). With `refuse`, the
    /// writer gives up after that many pieces, as an encoder refusing a value does.
    Push {
        pieces: Vec<Vec<u8>>,
        refuse: Option<usize>,
    },
    /// Writes out this share (in 1/256ths) of the pending bytes: `consume`.
    Transmit(u8),
    /// Sends the first pending line as a message: `consume_message`.
    Message,
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Self {
        match u8::arbitrary(g) % 8 {
            0..=3 => {
                let count = usize::arbitrary(g) % 5;
                let pieces = (0..count)
                    .map(|_| {
                        let len = usize::arbitrary(g) % 90;
                        let fill = b'a' + u8::arbitrary(g) % 26;
                        vec![fill; len]
                    })
                    .collect();
                let refuse = (u8::arbitrary(g) % 10 == 0).then(|| usize::arbitrary(g) % 5);
                Op::Push { pieces, refuse }
            }
            4..=6 => Op::Transmit(u8::arbitrary(g)),
            _ => Op::Message,
        }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        match self {
            Op::Push { pieces, refuse } => {
                let refuse = *refuse;
                Box::new(
                    pieces
                        .shrink()
                        .map(move |pieces| Op::Push { pieces, refuse }),
                )
            }
            Op::Transmit(share) => Box::new(share.shrink().map(Op::Transmit)),
            Op::Message => Box::new(core::iter::empty()),
        }
    }
}

/// Runs `ops` on `outbox` and on a plain model (a vector of pending bytes), checking after
/// every step that both agree. `held` is the most bytes the outbox may hold.
fn agrees<S: ByteStorage>(mut outbox: Outbox<S>, held: usize, ops: &[Op]) -> Result<(), String> {
    let mut model: Vec<u8> = Vec::new();
    for (step, op) in ops.iter().enumerate() {
        match op {
            Op::Push { pieces, refuse } => {
                let line_len = pieces.iter().map(Vec::len).sum::<usize>() + 1;
                let result = outbox.push_line(|sink| {
                    for (i, piece) in pieces.iter().enumerate() {
                        if *refuse == Some(i) {
                            return Err(EncodeError::Sink(UsageError::WouldBlock));
                        }
                        sink.write_bytes(piece).map_err(EncodeError::Sink)?;
                    }
                    if refuse.is_some_and(|at| at >= pieces.len()) {
                        return Err(EncodeError::Sink(UsageError::WouldBlock));
                    }
                    sink.write_bytes(b"\n").map_err(EncodeError::Sink)
                });
                let fits = model.len() + line_len <= held;
                let expected = if refuse.is_none() && fits {
                    Ok(())
                } else {
                    Err(UsageError::WouldBlock)
                };
                if result != expected {
                    return Err(format!(
                        "step {step}: push of {line_len} bytes onto {} pending (limit {held}) gave {result:?}",
                        model.len()
                    ));
                }
                if result.is_ok() {
                    for piece in pieces {
                        model.extend_from_slice(piece);
                    }
                    model.push(b'\n');
                }
            }
            Op::Transmit(share) => {
                let n = model.len() * usize::from(*share) / 256;
                outbox.consume(n);
                model.drain(..n);
            }
            Op::Message => {
                let expected = model
                    .iter()
                    .position(|&b| b == b'\n')
                    .map(|at| model[..at].to_vec());
                let got = outbox.next_message().map(<[u8]>::to_vec);
                if got != expected {
                    return Err(format!(
                        "step {step}: next message {got:?}, expected {expected:?}"
                    ));
                }
                outbox.consume_message();
                if let Some(message) = expected {
                    model.drain(..=message.len());
                }
            }
        }
        if outbox.pending() != &model[..] {
            return Err(format!(
                "step {step} ({op:?}): pending {:?}, expected {:?}",
                String::from_utf8_lossy(outbox.pending()),
                String::from_utf8_lossy(&model)
            ));
        }
        if outbox.len() != model.len() || outbox.is_empty() != model.is_empty() {
            return Err(format!(
                "step {step}: len {} for {}",
                outbox.len(),
                model.len()
            ));
        }
    }
    Ok(())
}

fn quickcheck<A: quickcheck::Testable>(property: A) {
    QuickCheck::new().tests(500).quickcheck(property);
}

/// R-TURN-7: over fixed storage, every accepted line comes out whole and in order, and a line
/// is accepted exactly when the bytes pending plus the line fit the storage and the limit.
#[test]
fn fixed_storage_hands_out_exactly_the_lines_pushed() {
    fn property(limit: u16, ops: Vec<Op>) -> Result<(), String> {
        let limit = 64 + usize::from(limit) % 1024;
        let held = limit.min(512);
        agrees(Outbox::new([0u8; 512], limit, limit), held, &ops)
    }
    quickcheck(property as fn(u16, Vec<Op>) -> Result<(), String>);
}

/// R-TURN-7: over growable storage, the same, with the configured limit the only bound.
#[cfg(feature = "alloc")]
#[test]
fn growable_storage_hands_out_exactly_the_lines_pushed() {
    fn property(limit: u16, ops: Vec<Op>) -> Result<(), String> {
        let limit = 64 + usize::from(limit) % 2048;
        agrees(Outbox::new(Vec::new(), limit, limit), limit, &ops)
    }
    quickcheck(property as fn(u16, Vec<Op>) -> Result<(), String>);
}

/// R-TURN-7: a steady stream (push a line, write out part of what is pending, repeat), the
/// pattern of a pump refilling after every partial write, keeps every byte in order and never
/// holds more than the limit.
#[cfg(feature = "alloc")]
#[test]
fn a_stream_of_partial_writes_keeps_every_byte_in_order() {
    let mut outbox = Outbox::new(Vec::new(), 4096, 2048);
    let mut sent = Vec::new();
    let mut pushed = Vec::new();
    for i in 0..10_000u32 {
        let line = format!("line {i} {}\n", "x".repeat((i % 97) as usize));
        while !outbox.has_room_for(line.len()) {
            let n = outbox.len() / 3 + 1;
            sent.extend_from_slice(&outbox.pending()[..n]);
            outbox.consume(n);
        }
        outbox
            .push_line(|sink| sink.write_bytes(line.as_bytes()).map_err(EncodeError::Sink))
            .expect("room was made");
        pushed.extend_from_slice(line.as_bytes());
        assert!(outbox.len() <= 4096);
        if i % 7 == 0 {
            let n = outbox.len() / 2;
            sent.extend_from_slice(&outbox.pending()[..n]);
            outbox.consume(n);
        }
    }
    sent.extend_from_slice(outbox.pending());
    assert_eq!(sent, pushed);
}
