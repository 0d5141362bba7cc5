//! Delegation parsing (R-HOST-11): a table of lines, matching and not.

use acp_host::supervisor::routing::{
    Route, Shape, Syntax, detect_route, empty_task_message, shape,
};

const NAMES: &[&str] = &["qa", "qa.bot", "planner", "Reviewer", "代码"];

fn route(text: &str) -> Option<(&str, &str, Syntax)> {
    detect_route(text, NAMES).map(
        |Route {
             server,
             task,
             syntax,
         }| (server, task, syntax),
    )
}

#[test]
fn matching_forms() {
    use Syntax::*;
    let table: &[(&str, (&str, &str, Syntax))] = &[
        (
            "@planner write the plan",
            ("planner", "write the plan", AtMention),
        ),
        (
            "   @planner   write the plan  ",
            ("planner", "write the plan", AtMention),
        ),
        ("@planner\twrite", ("planner", "write", AtMention)),
        ("@qa.bot run tests", ("qa.bot", "run tests", AtMention)),
        ("@qa run tests", ("qa", "run tests", AtMention)),
        (
            "planner: write the plan",
            ("planner", "write the plan", Colon),
        ),
        ("planner:write", ("planner", "write", Colon)),
        ("planner  :  write", ("planner", "write", Colon)),
        ("planner：写计划", ("planner", "写计划", Colon)),
        ("planner ： 写计划", ("planner", "写计划", Colon)),
        ("qa.bot: check", ("qa.bot", "check", Colon)),
        ("让 planner 写计划", ("planner", "写计划", ZhExplicit)),
        ("请 qa 跑测试", ("qa", "跑测试", ZhExplicit)),
        ("请\u{3000}qa 跑测试", ("qa", "跑测试", ZhExplicit)),
        ("让  代码 看看", ("代码", "看看", ZhExplicit)),
        ("@代码 看看", ("代码", "看看", AtMention)),
        ("@Reviewer look", ("Reviewer", "look", AtMention)),
    ];
    for (text, expected) in table {
        assert_eq!(route(text), Some(*expected), "{text:?}");
    }
}

#[test]
fn non_matching_forms() {
    let table = [
        "请问 planner 是什么", // 请问 is "may I ask"
        "让我 planner 想想",   // 让我 is "let me"
        "请planner 写计划",    // no whitespace after 请
        "让planner写",
        "@unknown do it", // unknown name
        "unknown: do it",
        "请 unknown 做",
        "@reviewer look", // case-sensitive
        "REVIEWER: look",
        "@plannerx go", // name must end at whitespace
        "@planner: go", // @ form needs whitespace after the name
        "plannerx: go",
        "qa.bots: go",
        "the planner: go", // the name must start the line
        "hello @planner go",
        "planner go", // no colon, no @
        "",
        "   ",
        "@ planner go",
        "@",
    ];
    for text in table {
        assert_eq!(route(text), None, "{text:?}");
    }
}

#[test]
fn longest_name_wins_over_its_prefix() {
    assert_eq!(route("@qa.bot x").map(|r| r.0), Some("qa.bot"));
    // Whatever the order the names are given in.
    assert_eq!(
        detect_route("qa.bot: x", &["qa", "qa.bot"]).map(|r| r.server),
        Some("qa.bot")
    );
    assert_eq!(
        detect_route("qa.bot: x", &["qa.bot", "qa"]).map(|r| r.server),
        Some("qa.bot")
    );
}

#[test]
fn earlier_form_wins_even_over_a_longer_name() {
    // "@a b: c" is `@a` + "b: c" under the @ form, and server "@a b" + "c" under the colon
    // form. Forms are tried in order, so the @ form wins although "@a b" is longer.
    let names = ["@a b", "a"];
    let r = detect_route("@a b: c", &names).unwrap();
    assert_eq!(
        (r.server, r.task, r.syntax),
        ("a", "b: c", Syntax::AtMention)
    );
    // Without "a", the colon form is the only reading.
    let r = detect_route("@a b: c", &["@a b"]).unwrap();
    assert_eq!((r.server, r.task, r.syntax), ("@a b", "c", Syntax::Colon));
}

#[test]
fn empty_task_is_a_route_with_an_empty_task() {
    for text in [
        "@planner",
        "@planner   ",
        "planner:",
        "planner：  ",
        "让 planner",
        "请 planner  ",
    ] {
        let r = detect_route(text, NAMES).unwrap_or_else(|| panic!("{text:?}"));
        assert_eq!((r.server, r.task), ("planner", ""), "{text:?}");
    }
    assert_eq!(
        empty_task_message("planner"),
        "ACP route detected → planner, but no task text was provided.\nTry: '@planner review the latest diff'"
    );
}

#[test]
fn empty_names_never_match() {
    assert_eq!(detect_route(": x", &[""]), None);
    assert_eq!(detect_route("@ x", &[""]), None);
}

#[test]
fn syntax_names_are_agentaos() {
    assert_eq!(Syntax::AtMention.as_str(), "at_mention");
    assert_eq!(Syntax::Colon.as_str(), "colon");
    assert_eq!(Syntax::ZhExplicit.as_str(), "zh_explicit");
}

#[test]
fn shape_table() {
    let table = [
        ("@planner go", Shape::HighConfidence),
        ("  @x", Shape::HighConfidence),
        ("让 x 做", Shape::HighConfidence),
        ("请  x", Shape::HighConfidence),
        ("请问 x", Shape::Plain),
        ("让我想想", Shape::Plain),
        ("请 ", Shape::Plain),
        ("@ x", Shape::Plain),
        ("planner: go", Shape::Colon),
        ("planner : go", Shape::Colon),
        ("planner：go", Shape::Colon),
        ("Note: this is prose", Shape::Colon),
        ("http://example", Shape::Colon),
        (": leading colon", Shape::Plain),
        ("two words: x", Shape::Plain),
        ("hello world", Shape::Plain),
        ("", Shape::Plain),
    ];
    for (text, expected) in table {
        assert_eq!(shape(text), expected, "{text:?}");
    }
}
