//! Text from a cluster, a snapshot or a configuration file (object names, messages,
//! keys) is untrusted: printed raw to a terminal, its control characters could retitle
//! the window, clear the screen or overwrite lines, and its bidi controls and
//! zero-width characters could make it read as something else. Every human-readable
//! output goes through [`terminal_safe`]; single-line fields embedded in a line also go
//! through [`one_line`] (in `report::format`); JSON is escaped by [`super::json`]'s one
//! writer, YAML by its serializer; the inspector's backend neutralises the same
//! characters when it draws.

use std::borrow::Cow;
use std::fmt::Write;

/// Characters that change how the text around them is displayed without being seen:
/// bidi embeddings, overrides, isolates and marks, and zero-width characters (which
/// hide a difference between two names that look the same).
pub fn is_spoofing(c: char) -> bool {
    matches!(
        c,
        '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{061c}'
            | '\u{200b}'..='\u{200d}'
            | '\u{2060}'
            | '\u{feff}'
    )
}

/// `text` with every control character except the line feed spelled out, so it
/// prints as itself: `\t` and `\r`, other C0 controls and DEL as `\x1b`, C1 controls
/// as `\u{9b}`, and the bidi and zero-width characters of [`is_spoofing`] as
/// `\u{202e}`. Text without any of them is returned as is.
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| (c.is_control() && c != '\n') || is_spoofing(c);
    if !text.contains(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if !unsafe_char(c) => out.push(c),
            c if c.is_ascii() => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
        }
    }
    Cow::Owned(out)
}

/// Writes `text` (made [`terminal_safe`]) and a line feed to stderr, ignoring a
/// failure: a warning or an error message to a stderr that is closed or full has
/// nowhere else to go, and must not turn into a panic (`eprintln!` panics).
pub fn to_stderr(text: &str) {
    use std::io::Write as _;
    let mut line = terminal_safe(text).into_owned();
    line.push('\n');
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// Writes `raw` to stderr as it is (a progress line's own escapes), ignoring a failure
/// as [`to_stderr`] does.
pub fn raw_to_stderr(raw: &str) {
    use std::io::Write as _;
    let _ = std::io::stderr().write_all(raw.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::terminal_safe;
    use std::borrow::Cow;

    #[test]
    fn control_characters_are_spelled_out() {
        assert_eq!(
            terminal_safe("a\x1b]0;pwned\x07b\x1b[2J"),
            "a\\x1b]0;pwned\\x07b\\x1b[2J"
        );
        assert_eq!(terminal_safe("x\ry\tz\x7f\0"), "x\\ry\\tz\\x7f\\x00");
        // C1 controls (CSI is U+009B) act like ESC [ on some terminals.
        assert_eq!(terminal_safe("\u{9b}2J\u{85}"), "\\u{9b}2J\\u{85}");
    }

    #[test]
    fn bidi_and_zero_width_characters_are_spelled_out() {
        assert_eq!(
            terminal_safe("evil\u{202e}gnp.exe\u{2066}x\u{200f}\u{61c}"),
            "evil\\u{202e}gnp.exe\\u{2066}x\\u{200f}\\u{61c}"
        );
        assert_eq!(
            terminal_safe("a\u{200b}b\u{200d}c\u{2060}d\u{feff}"),
            "a\\u{200b}b\\u{200d}c\\u{2060}d\\u{feff}"
        );
    }

    #[test]
    fn plain_text_and_line_feeds_pass_unchanged() {
        let text = "Pod default/web-1\n  0/3 nodes are available: café ✓\n";
        assert!(matches!(terminal_safe(text), Cow::Borrowed(t) if t == text));
    }
}
