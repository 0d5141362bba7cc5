//! Delegation: a line the user typed that names a configured server goes to that server.
//!
//! Three forms, tried in this order (the first that matches wins), each with the server names
//! tried longest first so `qa.bot` beats `qa`. Names match exactly and case-sensitively.
//!
//! 1. `@name task`: `@`, the name, then whitespace or the end. ([`Syntax::AtMention`])
//! 2. `name: task`: the name, optional whitespace, an ASCII `:` or full-width `：`, optional
//!    whitespace. ([`Syntax::Colon`])
//! 3. `让 name task` / `请 name task`: the character, **at least one** whitespace, the name, then
//!    whitespace or the end. ([`Syntax::ZhExplicit`]) So `请问…` and `让我…`, ordinary
//!    Chinese, never match.
//!
//! Leading whitespace is ignored and the task is trimmed. An unknown name is no route: the line
//! goes to the main agent. A known name with nothing after it is a route with an empty task,
//! which the host reports with [`empty_task_message`] instead of sending.
//!
//! [`shape`] is the cheap check a host runs before even loading the config.

/// Which form matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Syntax {
    /// `@name task`.
    AtMention,
    /// `name: task` or `name：task`.
    Colon,
    /// `让 name task` or `请 name task`.
    ZhExplicit,
}

impl Syntax {
    /// Agentao's name for the form (`at_mention`, `colon`, `zh_explicit`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Syntax::AtMention => "at_mention",
            Syntax::Colon => "colon",
            Syntax::ZhExplicit => "zh_explicit",
        }
    }
}

/// A line addressed to a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route<'a> {
    /// The server's name, as configured.
    pub server: &'a str,
    /// The task, trimmed; may be empty.
    pub task: &'a str,
    /// The form used.
    pub syntax: Syntax,
}

/// The route `text` names among `names`, if any; see the module docs for the rules.
pub fn detect_route<'a, 'n>(text: &'a str, names: &[&'n str]) -> Option<Route<'a>>
where
    'n: 'a,
{
    let text = text.trim_start();
    // Longest first; equal lengths keep the caller's order. Empty names never match.
    let mut by_length: alloc::vec::Vec<&'n str> =
        names.iter().copied().filter(|n| !n.is_empty()).collect();
    by_length.sort_by_key(|n| core::cmp::Reverse(n.chars().count()));

    let forms: [(Syntax, Form<'a>); 3] = [
        (Syntax::AtMention, at_mention),
        (Syntax::Colon, colon),
        (Syntax::ZhExplicit, zh_explicit),
    ];
    for (syntax, form) in forms {
        for &name in &by_length {
            if let Some(task) = form(text, name) {
                return Some(Route {
                    server: name,
                    task: task.trim(),
                    syntax,
                });
            }
        }
    }
    None
}

/// A form's matcher: the text after the name and its separator, if `text` has the form.
type Form<'a> = fn(&'a str, &str) -> Option<&'a str>;

/// `@name` then whitespace or the end.
fn at_mention<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    name_then_break(text.strip_prefix('@')?, name)
}

/// `name`, optional whitespace, `:` or `：`.
fn colon<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let rest = text.strip_prefix(name)?.trim_start();
    rest.strip_prefix(':').or_else(|| rest.strip_prefix('：'))
}

/// `让` or `请`, at least one whitespace, `name`, whitespace or the end.
fn zh_explicit<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let rest = text
        .strip_prefix('让')
        .or_else(|| text.strip_prefix('请'))?;
    let after_space = rest.trim_start();
    if after_space.len() == rest.len() {
        return None;
    }
    name_then_break(after_space, name)
}

fn name_then_break<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let rest = text.strip_prefix(name)?;
    match rest.chars().next() {
        None => Some(rest),
        Some(c) if c.is_whitespace() => Some(rest),
        Some(_) => None,
    }
}

/// What a line looks like before any server name is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// No delegation form: the line goes to the main agent without loading the config.
    Plain,
    /// `@x`, `让 x`, `请 x`: clearly meant for a server, so a config that fails to load is
    /// reported and the line is not given to the main agent.
    HighConfidence,
    /// A first word followed by a colon (`x:`), which ordinary text also has (`Note: …`,
    /// `http://…`): if the config cannot be loaded the line goes to the main agent.
    Colon,
}

/// Classifies `text` without server names: [`Shape::HighConfidence`] for `@` followed by a
/// non-space, or `让`/`请`, whitespace, a non-space; [`Shape::Colon`] when a `:` or `：` ends
/// the first word (after at least one character) or follows it after whitespace.
pub fn shape(text: &str) -> Shape {
    let text = text.trim_start();
    let mut chars = text.chars();
    match chars.next() {
        Some('@') if chars.next().is_some_and(|c| !c.is_whitespace()) => {
            return Shape::HighConfidence;
        }
        Some('让' | '请') => {
            let rest = chars.as_str();
            let after = rest.trim_start();
            if after.len() < rest.len() && !after.is_empty() {
                return Shape::HighConfidence;
            }
        }
        _ => {}
    }
    let word_end = text.find(char::is_whitespace).unwrap_or(text.len());
    let word = &text[..word_end];
    let is_colon = |c: char| c == ':' || c == '：';
    let colon_inside = word.char_indices().skip(1).any(|(_, c)| is_colon(c));
    let colon_after = !word.is_empty() && text[word_end..].trim_start().starts_with(is_colon);
    if colon_inside || colon_after {
        Shape::Colon
    } else {
        Shape::Plain
    }
}

/// What the host prints for a route with an empty task (Agentao's text, hint included).
pub fn empty_task_message(server: &str) -> alloc::string::String {
    alloc::format!(
        "ACP route detected → {server}, but no task text was provided.\nTry: '@{server} review the latest diff'"
    )
}
