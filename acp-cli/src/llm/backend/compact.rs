//! Context that fits (R-LLM-CONTEXT-1): how big a request is, when the conversation is
//! compacted, what the model is asked for the summary, and the turn's token sums
//! (R-LLM-USAGE-3).
//!
//! A request's size is the server's own count where there is one (the last answer's
//! `prompt_tokens + completion_tokens`) plus an estimate of what was added since (a token per
//! [`BYTES_PER_TOKEN`] bytes of text); without counts, the whole request is estimated.

use acp_core::schema::Usage;

use crate::model::chat::{ChatMessage, ChatRequest, TokenUsage, ToolSpec, UserPart};

/// A request over this share of the context window, in percent, is compacted first.
pub(crate) const TRIGGER_PERCENT: u64 = 80;

/// Bytes of text per token in an estimate (English prose and code average about four).
pub(crate) const BYTES_PER_TOKEN: u64 = 4;

/// What the model is asked when the conversation is compacted.
pub(crate) const INSTRUCTION: &str = "The conversation is about to be cut to fit your context \
    window. Write a summary of it that lets you continue the work from the summary alone: the \
    user's goals and requests, what was done (files read and changed, commands run and what \
    they showed), decisions taken, and what is left to do. Keep paths, names and figures exact. \
    Answer with the summary only.";

/// Tokens in `bytes` of text, rounded up.
pub(crate) fn tokens_of(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(BYTES_PER_TOKEN)
}

/// The text bytes of one message (its content, tool calls and ids).
pub(crate) fn message_bytes(message: &ChatMessage) -> usize {
    match message {
        ChatMessage::System(text) | ChatMessage::User(text) => text.len(),
        // An image counts as its base64 bytes: what the request carries.
        ChatMessage::UserParts(parts) => parts
            .iter()
            .map(|part| match part {
                UserPart::Text(text) => text.len(),
                UserPart::Image { mime_type, data } => mime_type.len() + data.len(),
            })
            .sum(),
        ChatMessage::Assistant {
            content,
            tool_calls,
        } => {
            content.as_deref().map_or(0, str::len)
                + tool_calls
                    .iter()
                    .map(|call| call.id.len() + call.name.len() + call.arguments.len())
                    .sum::<usize>()
        }
        ChatMessage::Tool {
            tool_call_id,
            content,
        } => tool_call_id.len() + content.len(),
    }
}

/// The text bytes of the tool list (names, descriptions, schemas).
pub(crate) fn tools_bytes(tools: &[ToolSpec]) -> usize {
    tools
        .iter()
        .map(|tool| tool.name.len() + tool.description.len() + tool.parameters.to_string().len())
        .sum()
}

/// Whether a request of `tokens` is over the trigger of a `window`.
pub(crate) fn over_trigger(tokens: u64, window: u64) -> bool {
    tokens.saturating_mul(100) > window.saturating_mul(TRIGGER_PERCENT)
}

/// The request for a summary of `messages`: them, then the instruction; no tools.
pub(crate) fn summary_request(model: &str, messages: &[ChatMessage]) -> ChatRequest {
    let mut messages = messages.to_vec();
    messages.push(ChatMessage::User(INSTRUCTION.to_owned()));
    ChatRequest {
        model: model.to_owned(),
        messages,
        tools: Vec::new(),
    }
}

/// The token counts of a turn's requests, summed (R-LLM-USAGE-3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TurnTokens {
    /// Some request reported counts.
    reported: bool,
    input: u64,
    output: u64,
    thought: Option<u64>,
    cached: Option<u64>,
}

impl TurnTokens {
    /// Adds one request's counts.
    pub(crate) fn add(&mut self, usage: &TokenUsage) {
        self.reported = true;
        self.input = self.input.saturating_add(usage.prompt_tokens);
        self.output = self.output.saturating_add(usage.completion_tokens);
        let sum = |total: Option<u64>, more: Option<u64>| match (total, more) {
            (total, None) => total,
            (total, Some(more)) => Some(total.unwrap_or(0).saturating_add(more)),
        };
        self.thought = sum(self.thought, usage.reasoning_tokens);
        self.cached = sum(self.cached, usage.cached_tokens);
    }

    /// The turn's `usage`, when any request reported counts.
    pub(crate) fn usage(&self) -> Option<Usage> {
        if !self.reported {
            return None;
        }
        let mut usage = Usage::new(self.input, self.output);
        usage.thought_tokens = self.thought;
        usage.cached_read_tokens = self.cached;
        Some(usage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R-LLM-CONTEXT-1: over 80% of the window triggers, 80% exactly does not.
    #[test]
    fn the_trigger_is_eighty_percent_of_the_window() {
        assert!(!over_trigger(800, 1000));
        assert!(over_trigger(801, 1000));
        assert!(!over_trigger(0, 0));
        assert!(over_trigger(u64::MAX, 1000), "no overflow");
        assert_eq!(tokens_of(0), 0);
        assert_eq!(tokens_of(1), 1);
        assert_eq!(tokens_of(8), 2);
    }

    /// R-LLM-USAGE-3: a turn's counts are the sums of its requests'; details only when sent.
    #[test]
    fn turn_tokens_sum_every_request() {
        let mut tokens = TurnTokens::default();
        assert_eq!(tokens.usage(), None);
        tokens.add(&TokenUsage {
            prompt_tokens: 100,
            completion_tokens: 10,
            reasoning_tokens: None,
            cached_tokens: Some(64),
        });
        tokens.add(&TokenUsage {
            prompt_tokens: 150,
            completion_tokens: 5,
            reasoning_tokens: Some(2),
            cached_tokens: None,
        });
        let mut expected = Usage::new(250, 15);
        expected.thought_tokens = Some(2);
        expected.cached_read_tokens = Some(64);
        assert_eq!(tokens.usage(), Some(expected));
        assert_eq!(tokens.usage().unwrap().total_tokens, 265);
    }
}
