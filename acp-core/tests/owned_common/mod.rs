//! Shared helpers of the `view_owned*` tests: the agreement check and generators of the JSON
//! the fast paths read, with fields drawn from valid, lenient-invalid and strictly invalid
//! values, in any order, sometimes duplicated.
#![allow(dead_code)]

use std::fmt::Debug;

use acp_core::schema::DecodeError;
use acp_core::wire::RawValue;
use acp_core::wire::json::parse_value;
use pretty_assertions::assert_eq;
use quickcheck::{Arbitrary, Gen};

/// Runs both paths on `json` (the fast one given the validated span) and checks they agree:
/// the same value, or the same error message.
pub fn agree_on<T: Debug + PartialEq>(
    json: &str,
    decode: impl FnOnce(Option<RawValue<'_>>) -> (Result<T, DecodeError>, Result<T, DecodeError>),
) {
    let raw = parse_value(json).unwrap_or_else(|e| panic!("not JSON ({e}): {json}"));
    let (fast, slow) = decode(Some(raw));
    match (&fast, &slow) {
        (Ok(fast), Ok(slow)) => assert_eq!(fast, slow, "{json}"),
        (Err(fast), Err(slow)) => assert_eq!(fast.message(), slow.message(), "{json}"),
        _ => panic!("paths disagree on {json}:\nfast: {fast:?}\nslow: {slow:?}"),
    }
}

pub fn pick<'a>(g: &mut Gen, items: &[&'a str]) -> &'a str {
    g.choose(items).copied().unwrap_or("null")
}

pub fn text_value(g: &mut Gen) -> String {
    pick(
        g,
        &[
            r#""plain""#,
            r#""esc\"aped\\ \n\t""#,
            r#""\u00e9\ud83d\ude80""#,
            r#""""#,
            "5",
            "null",
            "{}",
            "[]",
        ],
    )
    .to_owned()
}

pub fn object(members: Vec<(&str, String)>, g: &mut Gen) -> String {
    let mut members: Vec<(&str, String)> = members
        .into_iter()
        .filter(|_| u8::arbitrary(g) % 8 != 0)
        .collect();
    if bool::arbitrary(g) && members.len() > 1 {
        let i = usize::arbitrary(g) % members.len();
        let j = usize::arbitrary(g) % members.len();
        members.swap(i, j);
    }
    if u8::arbitrary(g) % 10 == 0
        && let Some(first) = members.first().cloned()
    {
        members.push(first);
    }
    let body: Vec<String> = members
        .iter()
        .map(|(k, v)| format!(r#""{k}":{v}"#))
        .collect();
    format!("{{{}}}", body.join(","))
}

pub fn block(g: &mut Gen) -> String {
    let kind = pick(
        g,
        &[
            r#""text""#,
            r#""text""#,
            r#""image""#,
            r#""audio""#,
            r#""resource_link""#,
            r#""resource""#,
            r#""re\u0073ource""#,
            r#""weird""#,
            "3",
        ],
    )
    .to_owned();
    let meta = pick(g, &["{}", r#"{"a":[1]}"#, "7", "1e400", "[1e400]"]).to_owned();
    let annotations = pick(g, &[r#"{"priority":1}"#, "[]", r#"{"audience":["user"]}"#]).to_owned();
    let mut members = vec![("type", kind.clone())];
    match kind.as_str() {
        r#""image""# | r#""audio""# => members.extend([
            ("data", text_value(g)),
            ("mimeType", text_value(g)),
            ("uri", text_value(g)),
        ]),
        r#""resource_link""# => {
            let size = pick(
                g,
                &["1024", "0", "-0", "-5", "1.5", "1e3", r#""3""#, "null"],
            );
            members.extend([
                ("uri", text_value(g)),
                ("name", text_value(g)),
                ("title", text_value(g)),
                ("description", text_value(g)),
                ("mimeType", text_value(g)),
                ("size", size.to_owned()),
            ]);
        }
        r#""resource""# | r#""re\u0073ource""# => {
            let contents = if u8::arbitrary(g) % 8 == 0 {
                pick(g, &["null", "[]", r#""x""#]).to_owned()
            } else {
                let contents_meta = pick(g, &["{}", r#"{"b":2}"#, "true"]).to_owned();
                object(
                    vec![
                        ("uri", text_value(g)),
                        ("text", text_value(g)),
                        ("blob", text_value(g)),
                        ("mimeType", text_value(g)),
                        ("_meta", contents_meta),
                    ],
                    g,
                )
            };
            members.push(("resource", contents));
        }
        _ => members.push(("text", text_value(g))),
    }
    members.extend([("annotations", annotations), ("_meta", meta)]);
    object(members, g)
}

pub fn tool_item(g: &mut Gen) -> String {
    match u8::arbitrary(g) % 4 {
        0 => object(
            vec![("type", r#""content""#.into()), ("content", block(g))],
            g,
        ),
        1 => object(
            vec![
                ("type", r#""diff""#.into()),
                ("path", text_value(g)),
                ("oldText", text_value(g)),
                ("newText", text_value(g)),
            ],
            g,
        ),
        2 => object(
            vec![
                ("type", r#""terminal""#.into()),
                ("terminalId", text_value(g)),
            ],
            g,
        ),
        _ => pick(g, &["5", "null", r#"{"type":"x"}"#]).to_owned(),
    }
}

pub fn list(g: &mut Gen, item: fn(&mut Gen) -> String) -> String {
    if u8::arbitrary(g) % 6 == 0 {
        return pick(g, &["null", "{}", "7"]).to_owned();
    }
    let items: Vec<String> = (0..usize::arbitrary(g) % 4).map(|_| item(g)).collect();
    format!("[{}]", items.join(","))
}

pub fn location(g: &mut Gen) -> String {
    let line = pick(
        g,
        &["1", "0", "-0", "-1", "1.5", "4294967296", r#""3""#, "1e400"],
    )
    .to_owned();
    let meta = pick(g, &["{}", "[1e400]", "[1]"]).to_owned();
    object(
        vec![("path", text_value(g)), ("line", line), ("_meta", meta)],
        g,
    )
}

/// The members of a `tool_call`, a `tool_call_update` or a permission request's `toolCall`.
pub fn tool_call_members(g: &mut Gen) -> Vec<(&'static str, String)> {
    let kind = pick(g, &[r#""read""#, r#""edit""#, r#""custom""#, "1", "null"]).to_owned();
    let status = pick(g, &[r#""pending""#, r#""completed""#, r#""weird""#, "0"]).to_owned();
    let raw = pick(g, &[r#"{"a":1,"b":[true,null]}"#, "null", r#""s""#, "2.5"]);
    vec![
        ("toolCallId", text_value(g)),
        ("title", text_value(g)),
        ("kind", kind),
        ("status", status),
        ("content", list(g, tool_item)),
        ("locations", list(g, location)),
        ("rawInput", raw.to_owned()),
        ("rawOutput", raw.to_owned()),
    ]
}

/// A string (escaped, non-ASCII, or plain).
pub fn string_value(g: &mut Gen) -> String {
    pick(
        g,
        &[
            r#""plain""#,
            r#""esc\"aped\\ \n\t""#,
            r#""\u00e9\ud83d\ude80 中文""#,
            r#""a:1 b: 2.5""#,
        ],
    )
    .to_owned()
}

/// `members` in an order of their own, the first one (a tag) kept first three times in four;
/// nothing dropped, nothing repeated.
pub fn reordered(mut members: Vec<(&str, String)>, g: &mut Gen) -> String {
    let keep = if u8::arbitrary(g) % 4 == 0 { 0 } else { 1 };
    for i in (keep + 1..members.len()).rev() {
        let j = keep + usize::arbitrary(g) % (i + 1 - keep);
        members.swap(i, j);
    }
    let body: Vec<String> = members
        .iter()
        .map(|(k, v)| format!(r#""{k}":{v}"#))
        .collect();
    format!("{{{}}}", body.join(","))
}

/// A block of a known type whose required fields decode; the optional ones may be
/// lenient-invalid.
pub fn valid_block(g: &mut Gen) -> String {
    let kind = pick(
        g,
        &[
            "text",
            "text",
            "image",
            "audio",
            "resource_link",
            "resource",
        ],
    );
    let mut members = vec![("type", format!(r#""{kind}""#))];
    match kind {
        "image" | "audio" => members.extend([
            ("data", string_value(g)),
            ("mimeType", string_value(g)),
            ("uri", text_value(g)),
        ]),
        "resource_link" => {
            let size = pick(g, &["1024", "0", "-0", "-5", "1.5", r#""3""#, "null"]);
            members.extend([
                ("uri", string_value(g)),
                ("name", string_value(g)),
                ("title", text_value(g)),
                ("description", text_value(g)),
                ("mimeType", text_value(g)),
                ("size", size.to_owned()),
            ]);
        }
        "resource" => {
            let contents = pick(g, &["text", "blob"]);
            let contents_meta = pick(g, &["{}", r#"{"b":2}"#, "true"]).to_owned();
            let resource = reordered(
                vec![
                    ("uri", string_value(g)),
                    (contents, string_value(g)),
                    ("mimeType", text_value(g)),
                    ("_meta", contents_meta),
                ],
                g,
            );
            members.push(("resource", resource));
        }
        _ => members.push(("text", string_value(g))),
    }
    let annotations = pick(
        g,
        &[r#"{"priority":1}"#, "[]", r#"{"audience":["user",3]}"#],
    );
    let meta = pick(g, &["{}", r#"{"a":[1]}"#, "7"]);
    members.extend([
        ("annotations", annotations.to_owned()),
        ("_meta", meta.to_owned()),
    ]);
    reordered(members, g)
}

/// A tool call content item that decodes.
pub fn valid_tool_item(g: &mut Gen) -> String {
    match u8::arbitrary(g) % 3 {
        0 => reordered(
            vec![("type", r#""content""#.into()), ("content", valid_block(g))],
            g,
        ),
        1 => reordered(
            vec![
                ("type", r#""diff""#.into()),
                ("path", string_value(g)),
                ("oldText", text_value(g)),
                ("newText", string_value(g)),
            ],
            g,
        ),
        _ => reordered(
            vec![
                ("type", r#""terminal""#.into()),
                ("terminalId", string_value(g)),
            ],
            g,
        ),
    }
}

/// A list of `item`s, never anything but a list.
pub fn valid_list(g: &mut Gen, item: fn(&mut Gen) -> String) -> String {
    let items: Vec<String> = (0..1 + usize::arbitrary(g) % 3).map(|_| item(g)).collect();
    format!("[{}]", items.join(","))
}

/// The members of a tool call whose content and locations all decode.
pub fn valid_tool_call_members(g: &mut Gen) -> Vec<(&'static str, String)> {
    let mut members = tool_call_members(g);
    for (key, value) in &mut members {
        match *key {
            "toolCallId" => *value = string_value(g),
            "content" => *value = valid_list(g, valid_tool_item),
            "locations" => {
                let path = string_value(g);
                *value = format!(r#"[{{"path":{path},"line":7}}]"#);
            }
            _ => {}
        }
    }
    members
}
