//! "Did you mean": the closest of a model's names to a mistyped one, by edit distance.

/// Levenshtein distance over chars.
pub fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The candidate nearest to `name`, when near enough to be a typo (at most a third
/// of the name's length, and at least 2, edits away); ties go to the first in
/// `candidates`' order, which callers keep sorted.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let limit = (name.chars().count() / 3).max(2);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c == name {
            continue;
        }
        let d = distance(name, c);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_and_suggestions() {
        let cases = [
            ("kitten", "sitting", 3),
            ("gen-a3", "gen-a3", 0),
            ("gen-a9", "gen-a3", 1),
            ("", "abc", 3),
        ];
        for (a, b, d) in cases {
            assert_eq!(distance(a, b), d, "{a} {b}");
        }
        let names = ["gen-a1", "gen-a3", "gpu-b1"];
        let cases: [(&str, Option<&str>); 3] = [
            ("gen-a9", Some("gen-a1")),
            ("gpu-b2", Some("gpu-b1")),
            ("zzzzzzzz", None),
        ];
        for (name, want) in cases {
            assert_eq!(closest(name, names), want.map(String::from), "{name}");
        }
    }
}
