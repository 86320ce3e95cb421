//! Text from a cluster, a snapshot or a configuration file (object names, messages,
//! keys) is untrusted: printed raw to a terminal, its control characters could retitle
//! the window, clear the screen or overwrite lines. Every human-readable output goes
//! through [`terminal_safe`]; JSON and YAML are escaped by their serializers, and the
//! inspector's widgets drop control characters when they draw.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every control character except the line feed spelled out, so it
/// prints as itself: `\t` and `\r`, other C0 controls and DEL as `\x1b`, C1 controls
/// as `\u{9b}`. Text without control characters is returned as is.
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n';
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
    fn plain_text_and_line_feeds_pass_unchanged() {
        let text = "Pod default/web-1\n  0/3 nodes are available: café ✓\n";
        assert!(matches!(terminal_safe(text), Cow::Borrowed(t) if t == text));
    }
}
