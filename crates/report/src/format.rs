//! Numbers and durations as every output writes them, and the one measure of text
//! width that lines up columns.

use k8s_openapi::jiff::Timestamp;
use unicode_width::UnicodeWidthStr;

/// Display width in terminal cells: the measure every column uses, the CLI's tables
/// and the inspector alike (ratatui measures the same way), so a wide character or a
/// combining mark takes the cells it does on screen, not one per `char`.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// Cells of a column as wide as its widest value or its header: a number is never
/// cut (a fixed width showed priority `2000001000` as `0001000`) and the columns
/// after it stay aligned.
pub fn column_width<S: AsRef<str>>(header: &str, values: impl IntoIterator<Item = S>) -> usize {
    values
        .into_iter()
        .map(|v| width(v.as_ref()))
        .fold(width(header), usize::max)
}

/// `s` followed by spaces up to `cells` display cells (as `{:<w$}` pads by chars).
pub fn pad(s: &str, cells: usize) -> String {
    let mut out = s.to_string();
    out.push_str(&" ".repeat(cells.saturating_sub(width(s))));
    out
}

/// `s` preceded by spaces up to `cells` display cells (as `{:>w$}` pads by chars).
/// Padding is written out rather than passed to the formatter as a width, which
/// panics past 65,535.
pub fn pad_left(s: &str, cells: usize) -> String {
    let mut out = " ".repeat(cells.saturating_sub(width(s)));
    out.push_str(s);
    out
}

/// `s` with every line feed spelled out (`\n`): a single-line field (a name, a
/// reason, a message, a CEL expression a reason quotes) embedded in a line of human
/// output, which must not add lines of its own. JSON keeps the exact value.
pub fn one_line(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('\n') {
        std::borrow::Cow::Owned(s.replace('\n', "\\n"))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// The most cells one cell of a column shows: more than any name Kubernetes accepts
/// (253), so only hostile or corrupt input is cut.
pub const CELL_MAX: usize = 256;

/// `s` when it is at most `max` cells wide; else its start and its end around an
/// ellipsis, with its length: `aaaa…aaaa (70000 chars)`, at most `max` cells.
/// A cell is one line: its line feeds are spelled out first ([`one_line`]).
pub fn clip(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    let s = match one_line(s) {
        std::borrow::Cow::Borrowed(s) => s,
        std::borrow::Cow::Owned(escaped) => {
            return std::borrow::Cow::Owned(clip(&escaped, max).into_owned());
        }
    };
    if width(s) <= max {
        return std::borrow::Cow::Borrowed(s);
    }
    let note = format!("… ({} chars) …", s.chars().count());
    let keep = max.saturating_sub(width(&note)) / 2;
    let mut head = String::new();
    let mut head_cells = 0;
    for c in s.chars() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if head_cells + w > keep {
            break;
        }
        head_cells += w;
        head.push(c);
    }
    let mut tail: Vec<char> = Vec::new();
    let mut tail_cells = 0;
    for c in s.chars().rev() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if tail_cells + w > keep {
            break;
        }
        tail_cells += w;
        tail.push(c);
    }
    let tail: String = tail.into_iter().rev().collect();
    std::borrow::Cow::Owned(format!("{head}{note}{tail}"))
}

/// The one Go-style duration formatter (Go's `time.Duration.String`: `1m30s`,
/// `250ms`, `1h0m0s`), the engine's, so messages and displays agree.
pub use schedscope_engine::engine::go_duration;

/// A time since the start of a run, in milliseconds: `+1m30s`.
pub fn offset(ms: u64) -> String {
    format!("+{}", go_duration(std::time::Duration::from_millis(ms)))
}

/// The time left until `deadline` at `now` as a Go duration in whole seconds, rounded
/// up so it reaches `0s` exactly at the deadline; with the seconds left.
pub fn countdown(deadline: Timestamp, now: Timestamp) -> (String, i64) {
    let left = deadline.duration_since(now);
    let secs = if left.is_negative() {
        0
    } else {
        left.as_secs() + i64::from(left.subsec_nanos() > 0)
    };
    (
        go_duration(std::time::Duration::from_secs(secs.unsigned_abs())),
        secs,
    )
}

/// Millicores as kubectl would write them: `500m`, `2`, `2500m`.
pub fn cpu(milli: i64) -> String {
    if milli % 1000 == 0 {
        format!("{}", milli / 1000)
    } else {
        format!("{milli}m")
    }
}

/// Binary suffixes, largest first.
const BINARY_UNITS: [(&str, i64); 5] = [
    ("Pi", 1 << 50),
    ("Ti", 1 << 40),
    ("Gi", 1 << 30),
    ("Mi", 1 << 20),
    ("Ki", 1 << 10),
];

/// Bytes with a binary suffix when exact enough: `8Gi`, `1.5Gi`, `200Mi`, `123`.
pub fn bytes(v: i64) -> String {
    for (suffix, size) in BINARY_UNITS {
        if v.abs() >= size {
            if v % size == 0 {
                return format!("{}{suffix}", v / size);
            }
            let x = v as f64 / size as f64;
            return format!("{}{suffix}", trim_float(x));
        }
    }
    v.to_string()
}

/// Bytes exactly, in the largest binary unit that divides them: `1088Mi`, `123`.
pub fn exact_bytes(v: i64) -> String {
    BINARY_UNITS
        .iter()
        .find(|(_, size)| v != 0 && v % size == 0)
        .map_or_else(
            || v.to_string(),
            |(suffix, size)| format!("{}{suffix}", v / size),
        )
}

fn trim_float(x: f64) -> String {
    let s = format!("{x:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// A resource amount by its name.
pub fn amount(resource: &str, v: i64) -> String {
    match resource {
        "cpu" => cpu(v),
        r if counts_bytes(r) => bytes(v),
        _ => v.to_string(),
    }
}

/// An amount as a manifest would write it: exact (`1088Mi`, not the rounded `1.1Gi`
/// of [`amount`]).
pub fn exact_amount(resource: &str, v: i64) -> String {
    if counts_bytes(resource) {
        exact_bytes(v)
    } else {
        amount(resource, v)
    }
}

fn counts_bytes(resource: &str) -> bool {
    matches!(resource, "memory" | "ephemeral-storage") || resource.starts_with("hugepages-")
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A priority as the pod spec and `kubectl` write it, every digit: `1000`, `-10`,
/// `2000001000` (system-node-critical). A short form (`2000001k`) read as another
/// number when a column cut it; the columns size to it instead.
pub fn priority(p: i32) -> String {
    p.to_string()
}

/// `+3`, `-5`, `0`.
pub fn signed(n: i64) -> String {
    if n > 0 {
        format!("+{n}")
    } else {
        n.to_string()
    }
}

pub fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    #[test]
    fn clip_keeps_short_text_and_cuts_long_text_in_the_middle_within_max() {
        assert_eq!(clip("gen-a1", 10), "gen-a1");
        let long = format!("{}{}", "a".repeat(70_000), "z".repeat(10));
        let c = clip(&long, CELL_MAX);
        assert!(width(&c) <= CELL_MAX, "{}", width(&c));
        assert!(c.starts_with("aaa") && c.ends_with("zzz"), "{c}");
        assert!(c.contains("(70010 chars)"), "{c}");
        // Wide characters count by cells.
        let wide = "界".repeat(300);
        assert!(width(&clip(&wide, 100)) <= 100);
        assert_eq!(pad_left("ab", 4), "  ab");
        assert_eq!(pad_left("abcdef", 4), "abcdef");
        // Past the 65,535 a formatter width may be.
        assert_eq!(pad("x", 70_000).len(), 70_000);
    }

    use super::*;
    use k8s_openapi::jiff::SignedDuration;

    #[test]
    fn formats() {
        assert_eq!(cpu(500), "500m");
        assert_eq!(cpu(4000), "4");
        assert_eq!(bytes(8 << 30), "8Gi");
        assert_eq!(bytes(3 << 29), "1.5Gi");
        assert_eq!(bytes(209715200), "200Mi");
        assert_eq!(bytes(1000), "1000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(12), "12");
        assert_eq!(signed(3), "+3");
        assert_eq!(priority(2_000_000_000), "2000000000");
        assert_eq!(priority(2_000_001_000), "2000001000");
        assert_eq!(priority(1000), "1000");
        assert_eq!(priority(-123_456), "-123456");
        assert_eq!(offset(90_000), "+1m30s");
        assert_eq!(offset(250), "+250ms");
        assert_eq!(offset(3_600_000), "+1h0m0s");
    }

    #[test]
    fn countdown_is_a_go_duration_rounded_up() {
        let t0 = Timestamp::new(1_700_000_000, 0).expect("ts");
        let at = |ms| t0.checked_add(SignedDuration::from_millis(ms)).expect("ts");
        assert_eq!(countdown(at(60_000), t0), ("1m0s".into(), 60));
        assert_eq!(countdown(at(59_001), t0), ("1m0s".into(), 60));
        assert_eq!(countdown(at(90_000), t0), ("1m30s".into(), 90));
        assert_eq!(countdown(at(9_000), t0), ("9s".into(), 9));
        assert_eq!(countdown(t0, at(5_000)), ("0s".into(), 0));
        assert_eq!(countdown(at(3_723_000), t0), ("1h2m3s".into(), 3723));
    }
}
