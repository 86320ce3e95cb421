//! Small text helpers shared by the panes.

use ratatui::text::Span;

/// Display width in terminal cells (ratatui's own measure, so layout agrees).
pub fn width(s: &str) -> usize {
    Span::raw(s).width()
}

fn char_width(c: char) -> usize {
    let mut buf = [0u8; 4];
    width(c.encode_utf8(&mut buf))
}

/// Millicores as kubectl would write them: `500m`, `2`, `2500m`.
pub fn cpu(milli: i64) -> String {
    if milli % 1000 == 0 {
        format!("{}", milli / 1000)
    } else {
        format!("{milli}m")
    }
}

/// Bytes with a binary suffix when exact enough: `8Gi`, `1.5Gi`, `200Mi`, `123`.
pub fn bytes(v: i64) -> String {
    const UNITS: [(&str, i64); 5] = [
        ("Pi", 1 << 50),
        ("Ti", 1 << 40),
        ("Gi", 1 << 30),
        ("Mi", 1 << 20),
        ("Ki", 1 << 10),
    ];
    for (suffix, size) in UNITS {
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

fn trim_float(x: f64) -> String {
    let s = format!("{x:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// A resource amount by its name.
pub fn amount(resource: &str, v: i64) -> String {
    match resource {
        "cpu" => cpu(v),
        "memory" | "ephemeral-storage" => bytes(v),
        r if r.starts_with("hugepages-") => bytes(v),
        _ => v.to_string(),
    }
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

/// Pad or cut to exactly `width` cells.
pub fn fit(s: &str, width: usize) -> String {
    let t = truncate(s, width);
    let w = self::width(&t);
    format!("{t}{}", " ".repeat(width.saturating_sub(w)))
}

/// Right-align within `width` cells.
pub fn right(s: &str, width: usize) -> String {
    let t = truncate(s, width);
    let w = self::width(&t);
    format!("{}{t}", " ".repeat(width.saturating_sub(w)))
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

/// A priority in at most 5 cells: `1000`, `-10`, `2000M` (system-cluster-critical).
pub fn priority(p: i32) -> String {
    if p.unsigned_abs() >= 1_000_000 && p % 1_000_000 == 0 {
        format!("{}M", p / 1_000_000)
    } else if p.unsigned_abs() >= 100_000 {
        format!("{}k", p / 1000)
    } else {
        p.to_string()
    }
}

/// `+3`, `-5`, `0`.
pub fn signed(n: i64) -> String {
    if n > 0 {
        format!("+{n}")
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(bar(50, 100, 4), "██  ");
        assert_eq!(bar(100, 100, 4), "████");
        assert_eq!(bar(0, 100, 3), "   ");
        assert_eq!(bar(1, 16, 2), "▏ ");
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(fit("ab", 4), "ab  ");
        assert_eq!(right("ab", 4), "  ab");
        assert_eq!(signed(3), "+3");
        assert_eq!(priority(2_000_000_000), "2000M");
        assert_eq!(priority(1000), "1000");
        assert_eq!(priority(123_456), "123k");
    }
}
