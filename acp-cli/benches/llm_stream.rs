//! The model client's cost per streamed chunk, no I/O: one Chat Completions chunk's bytes in
//! (as the socket would hand them over), the [`StreamEvent`] out. Each iteration is one
//! chunk, so criterion's estimates are per chunk (its median is the middle figure).
//!
//! - `text`: `data: {…"delta":{"content":"…"}…}\n\n` through the SSE parser and the chunk
//!   assembler, out as `StreamEvent::Text`.
//! - `text_chunked`: the same inside HTTP chunked framing (`<hex>\r\n…\r\n`), decoded first.
//! - `tool_arguments`: a `delta.tool_calls` arguments fragment, appended to its call.
//!
//! Run: `cargo bench -p acp-rs-cli --bench llm_stream`.

use std::hint::black_box;

use acp_cli::llm::openai::StreamAssembler;
use acp_cli::model::chat::StreamEvent;
use acp_cli::net::response::ChunkedDecoder;
use acp_cli::net::sse::SseParser;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// A typical OpenAI text chunk: one token of the answer.
const TEXT_CHUNK: &[u8] = b"data: {\"id\":\"chatcmpl-AbCdEf0123456789\",\"object\":\"chat.completion.chunk\",\"created\":1764000000,\"model\":\"gpt-4o-mini-2024-07-18\",\"system_fingerprint\":\"fp_0123456789\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" streamed\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n";

/// A tool-call arguments fragment.
const TOOL_CHUNK: &[u8] = b"data: {\"id\":\"chatcmpl-AbCdEf0123456789\",\"object\":\"chat.completion.chunk\",\"created\":1764000000,\"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"src/ma\"}}]},\"logprobs\":null,\"finish_reason\":null}]}\n\n";

/// The first piece of the tool call the fragments extend.
const TOOL_START: &[u8] = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"\"}}]}}]}\n\n";

/// Feeds one SSE chunk and hands every event to the assembler.
fn feed(
    parser: &mut SseParser,
    assembler: &mut StreamAssembler,
    events: &mut Vec<acp_cli::net::sse::SseEvent>,
    bytes: &[u8],
    out: &mut Option<StreamEvent>,
) {
    events.clear();
    parser.feed(bytes, events).expect("valid SSE");
    for event in events.iter() {
        assembler
            .on_event(event, &mut |e| *out = Some(e))
            .expect("a valid chunk");
    }
}

fn per_chunk(c: &mut Criterion) {
    let mut group = c.benchmark_group("llm_chunk");
    group.throughput(Throughput::Elements(1));

    group.bench_function("text", |b| {
        let mut parser = SseParser::new();
        let mut assembler = StreamAssembler::new();
        let mut events = Vec::new();
        b.iter(|| {
            let mut out = None;
            feed(
                &mut parser,
                &mut assembler,
                &mut events,
                black_box(TEXT_CHUNK),
                &mut out,
            );
            black_box(out.expect("a text event"))
        });
    });

    let mut framed = format!("{:x}\r\n", TEXT_CHUNK.len()).into_bytes();
    framed.extend_from_slice(TEXT_CHUNK);
    framed.extend_from_slice(b"\r\n");
    group.bench_function("text_chunked", |b| {
        let mut decoder = ChunkedDecoder::default();
        let mut parser = SseParser::new();
        let mut assembler = StreamAssembler::new();
        let mut events = Vec::new();
        let mut body = Vec::with_capacity(1024);
        b.iter(|| {
            body.clear();
            decoder
                .decode(black_box(&framed), &mut body)
                .expect("valid framing");
            let mut out = None;
            feed(&mut parser, &mut assembler, &mut events, &body, &mut out);
            black_box(out.expect("a text event"))
        });
    });

    group.bench_function("tool_arguments", |b| {
        let mut parser = SseParser::new();
        let mut events = Vec::new();
        // A fresh call every 10,000 fragments, so the arguments stay a realistic size.
        let mut assembler = StreamAssembler::new();
        let mut fed = 0u32;
        b.iter(|| {
            if fed.is_multiple_of(10_000) {
                assembler = StreamAssembler::new();
                feed(
                    &mut parser,
                    &mut assembler,
                    &mut events,
                    TOOL_START,
                    &mut None,
                );
            }
            fed += 1;
            let mut out = None;
            feed(
                &mut parser,
                &mut assembler,
                &mut events,
                black_box(TOOL_CHUNK),
                &mut out,
            );
            black_box(out)
        });
    });
    group.finish();
}

criterion_group!(benches, per_chunk);
criterion_main!(benches);
