//! Small text helpers shared by the panes.

/// Number formats are the presentation model's (the same in every output); only
/// what measures terminal cells lives here.
pub use crate::report::format::{
    amount, bytes, column_width, cpu, pad_left, priority, signed, thousands, width,
};

fn char_width(c: char) -> usize {
    let mut buf = [0u8; 4];
    width(c.encode_utf8(&mut buf))
}

/// A horizontal bar of `width` cells for `value / max`, with eighth-cell precision.
pub fn bar(value: i64, max: i64, width: usize) -> String {
    if width == 0 {
        return String::new();
    }
    if max <= 0 || value <= 0 {
        return " ".repeat(width);
    }
    let eighths = ((value.min(max) as i128 * width as i128 * 8) / max as i128) as usize;
    let full = eighths / 8;
    let rem = eighths % 8;
    const PARTS: [&str; 8] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];
    let mut s = "█".repeat(full);
    let mut used = full;
    if rem > 0 && used < width {
        s.push_str(PARTS[rem]);
        used += 1;
    }
    s.push_str(&" ".repeat(width.saturating_sub(used)));
    s
}

/// Cut `s` to `width` display cells, ending with `…` when cut.
pub fn truncate(s: &str, width: usize) -> String {
    if self::width(s) <= width {
        return s.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = char_width(c);
        if w + cw + 1 > width {
            break;
        }
        out.push(c);
        w += cw;
    }
    out.push('…');
    out
}

/// Cut `s` to `width` display cells by taking out its middle (`gke-pool-…-00c1`),
/// so names that differ only at the end (node and pod names usually do) stay
/// distinct. The end keeps the larger half.
pub fn middle(s: &str, width: usize) -> String {
    if self::width(s) <= width {
        return s.to_string();
    }
    if width <= 1 {
        return truncate(s, width);
    }
    let room = width - 1;
    let head_w = room / 2;
    let tail_w = room - head_w;
    let mut head = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = char_width(c);
        if w + cw > head_w {
            break;
        }
        head.push(c);
        w += cw;
    }
    let mut tail: Vec<char> = Vec::new();
    let mut w = 0;
    for c in s.chars().rev() {
        let cw = char_width(c);
        if w + cw > tail_w {
            break;
        }
        tail.push(c);
        w += cw;
    }
    head.push('…');
    head.extend(tail.into_iter().rev());
    head
}

/// The `width` cells of `s` from cell `from` on (a name scrolled sideways): `…`
/// marks a cut end; the window stops at the end of `s`, so it stays `width` wide.
pub fn window(s: &str, from: usize, width: usize) -> String {
    let total = self::width(s);
    if total <= width || width < 3 {
        return middle(s, width);
    }
    // The last window shows the end, with one `…` before it.
    let from = from.min(total - (width - 1));
    let chars: Vec<(usize, char)> = s
        .chars()
        .scan(0, |at, c| {
            let start = *at;
            *at += char_width(c);
            Some((start, c))
        })
        .collect();
    let head = from > 0;
    let first = from;
    let mut out = String::new();
    if head {
        out.push('…');
    }
    let mut w = usize::from(head);
    let mut cut = false;
    for &(at, c) in chars.iter().filter(|(at, _)| *at >= first) {
        let cw = char_width(c);
        let tail_room = if at + cw < total { 1 } else { 0 };
        if w + cw + tail_room > width {
            cut = true;
            break;
        }
        out.push(c);
        w += cw;
    }
    if cut {
        out.push('…');
    }
    out
}

/// Pad or cut to exactly `width` cells.
pub fn fit(s: &str, width: usize) -> String {
    let t = truncate(s, width);
    let w = self::width(&t);
    format!("{t}{}", " ".repeat(width.saturating_sub(w)))
}

/// Pad `s` with spaces to `width` cells (never cut).
pub fn pad(s: &str, width: usize) -> String {
    format!("{s}{}", " ".repeat(width.saturating_sub(self::width(s))))
}

/// Right-align within `width` cells.
pub fn right(s: &str, width: usize) -> String {
    let t = truncate(s, width);
    let w = self::width(&t);
    format!("{}{t}", " ".repeat(width.saturating_sub(w)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(bar(50, 100, 4), "██  ");
        assert_eq!(bar(100, 100, 4), "████");
        assert_eq!(bar(0, 100, 3), "   ");
        assert_eq!(bar(1, 16, 2), "▏ ");
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(fit("ab", 4), "ab  ");
        assert_eq!(right("ab", 4), "  ab");
    }

    #[test]
    fn window_scrolls_a_long_name() {
        let name = "observability-opentelemetry-collector-gateway-75f9c8d6b5d-x2kqz";
        assert_eq!(window(name, 0, 20), "observability-opent…");
        assert_eq!(window(name, 14, 20), "…opentelemetry-coll…");
        // Past the end: the last window, which shows the end whole.
        assert_eq!(window(name, 999, 20), "…y-75f9c8d6b5d-x2kqz");
        assert_eq!(width(&window(name, 999, 20)), 20);
        assert_eq!(window("short", 3, 20), "short");
    }

    #[test]
    fn middle_keeps_both_ends() {
        let cases = [
            ("short", 10, "short"),
            ("gke-prod-general-2265b1f5-00c1", 16, "gke-pro…1f5-00c1"),
            ("gke-prod-general-2265b1f5-00c2", 16, "gke-pro…1f5-00c2"),
            ("abcdef", 5, "ab…ef"),
            ("abcdef", 1, "…"),
            ("abcdef", 0, ""),
            // Wide characters count two cells.
            ("日本語のノード名", 7, "日…名"),
        ];
        for (s, w, want) in cases {
            let got = middle(s, w);
            assert_eq!(got, want, "{s} in {w}");
            assert!(width(&got) <= w, "{got} fits {w}");
        }
    }
}
