//! Text shown to a person: every stripped class, every kept class, and the three adapters.

use acp_host::sanitize::{Sanitized, SanitizingWriter, is_stripped, needs_sanitizing, safe_chars};
use core::fmt::Write;

/// Runs the text through the no-alloc `Display` adapter.
fn shown(text: &str) -> String {
    format!("{}", Sanitized(text))
}

#[test]
fn c0_controls_are_removed_except_newline_and_tab() {
    for c in (0u32..0x20).filter_map(char::from_u32) {
        let text = format!("a{c}b");
        let expected = if c == '\n' || c == '\t' {
            text.clone()
        } else {
            "ab".to_string()
        };
        assert_eq!(shown(&text), expected, "U+{:04X}", c as u32);
    }
}

#[test]
fn carriage_return_is_removed_because_it_overwrites_the_line() {
    assert_eq!(shown("safe\rEVIL"), "safeEVIL");
}

#[test]
fn delete_is_removed() {
    assert_eq!(shown("a\u{7f}b"), "ab");
}

#[test]
fn c1_controls_are_removed() {
    for c in (0x80u32..=0x9f).filter_map(char::from_u32) {
        assert_eq!(shown(&format!("x{c}y")), "xy", "U+{:04X}", c as u32);
    }
    // U+00A0 (no-break space) is the first character after C1 and is kept.
    assert_eq!(shown("x\u{a0}y"), "x\u{a0}y");
}

#[test]
fn bidi_embeddings_and_overrides_are_removed() {
    for c in ['\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}'] {
        assert_eq!(shown(&format!("rm -rf{c} /tmp")), "rm -rf /tmp");
    }
}

#[test]
fn bidi_isolates_are_removed() {
    for c in ['\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}'] {
        assert_eq!(shown(&format!("a{c}b")), "ab");
    }
}

#[test]
fn implicit_direction_marks_and_joiners_are_kept() {
    // Documented decision: LRM, RLM and ALM have no scope, so they stay.
    for c in ['\u{200e}', '\u{200f}', '\u{061c}', '\u{200d}', '\u{200c}'] {
        let text = format!("a{c}b");
        assert_eq!(shown(&text), text);
        assert!(!is_stripped(c));
    }
    // An emoji ZWJ sequence survives whole.
    let family = "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}";
    assert_eq!(shown(family), family);
}

#[test]
fn the_characters_next_to_each_stripped_range_are_kept() {
    for c in [
        ' ', '~', '\u{a0}', '\u{2029}', '\u{202f}', '\u{2065}', '\u{206a}',
    ] {
        assert!(!is_stripped(c), "U+{:04X}", c as u32);
    }
}

#[test]
fn escape_sequences_lose_their_escape_character() {
    assert_eq!(shown("\u{1b}[31mred\u{1b}[0m"), "[31mred[0m");
    // OSC 52 (clipboard write) terminated by BEL.
    assert_eq!(shown("\u{1b}]52;c;ZXZpbA==\u{7}ok"), "]52;c;ZXZpbA==ok");
    // The one-byte C1 CSI.
    assert_eq!(shown("\u{9b}2J"), "2J");
}

#[test]
fn plain_text_passes_unchanged() {
    let text = "Hello, 世界!\n\tindented — ok ✓";
    assert_eq!(shown(text), text);
    assert!(!needs_sanitizing(text));
    assert!(needs_sanitizing("bell\u{7}"));
}

#[test]
fn the_iterator_writer_and_string_forms_agree() {
    let text = "\u{1b}[1mbold\u{1b}[0m\r\n\u{202e}gnp.exe\u{2066}x\u{9f}";
    let expected = "[1mbold[0m\ngnp.exex";
    assert_eq!(safe_chars(text).collect::<String>(), expected);
    assert_eq!(shown(text), expected);
    let mut writer = SanitizingWriter::new(String::new());
    // Written in pieces, split inside the text.
    for piece in [&text[..5], &text[5..], ""] {
        writer.write_str(piece).unwrap();
    }
    assert_eq!(writer.into_inner(), expected);
    assert_eq!(acp_host::sanitize::sanitize(text), expected);
}

#[test]
fn empty_and_all_stripped_inputs_give_empty_output() {
    assert_eq!(shown(""), "");
    assert_eq!(shown("\u{0}\u{1b}\u{7f}\u{85}\u{202e}\u{2069}"), "");
}
