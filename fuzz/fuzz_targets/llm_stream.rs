//! The model client's readers over arbitrary server bytes: the HTTP chunked decoder, the SSE
//! parser and the Chat Completions chunk assembler. The first byte picks where the input is
//! split. Asserts only what must hold for any input: no panic, and the same events, errors
//! and end whether the bytes come in one piece or two.
#![no_main]

use acp_cli::model::chat::StreamEvent;
use acp_cli::llm::openai::StreamAssembler;
use acp_cli::llm::response::ChunkedDecoder;
use acp_cli::llm::sse::SseParser;
use libfuzzer_sys::fuzz_target;

/// Everything the pieces produce: stream events, then the end (or the first error) as text.
fn run(pieces: &[&[u8]]) -> (Vec<StreamEvent>, String) {
    let mut parser = SseParser::with_limit(4096);
    let mut assembler = StreamAssembler::new();
    let mut produced = Vec::new();
    let mut events = Vec::new();
    for piece in pieces {
        events.clear();
        let parsed = parser.feed(piece, &mut events);
        for event in &events {
            if let Err(error) = assembler.on_event(event, &mut |e| produced.push(e)) {
                return (produced, error.to_string());
            }
        }
        if let Err(error) = parsed {
            return (produced, error.to_string());
        }
    }
    let end = format!("{:?}", assembler.finish());
    (produced, end)
}

/// The chunked decoding of the pieces: the body and the verdict.
fn dechunk(pieces: &[&[u8]]) -> (Vec<u8>, Result<bool, String>) {
    let mut decoder = ChunkedDecoder::default();
    let mut body = Vec::new();
    let mut verdict = Ok(false);
    for piece in pieces {
        verdict = decoder.decode(piece, &mut body);
        if verdict.is_err() {
            break;
        }
    }
    (body, verdict)
}

fuzz_target!(|data: &[u8]| {
    let [cut, bytes @ ..] = data else {
        return;
    };
    let cut = usize::from(*cut).min(bytes.len());
    let (head, tail) = bytes.split_at(cut);
    assert_eq!(run(&[bytes]), run(&[head, tail]));
    assert_eq!(dechunk(&[bytes]), dechunk(&[head, tail]));
});
