//! The README and the pages of `docs/`: every relative link leads to a file of the
//! repository and every `#anchor` to a heading of its page, each page links back to
//! the README and the README to each page, and no path leads out of the repository.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md, then every `docs/*.md` in name order.
fn pages() -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    assert!(docs.len() >= 5, "docs pages: {docs:?}");
    [vec![root().join("README.md")], docs].concat()
}

/// The lines outside fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|l| {
            if l.starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// GitHub's anchor for a heading: lowercase, spaces to `-`, punctuation other than
/// `-` and `_` dropped; a repeated heading gets `-1`, `-2`, ...
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in prose(text) {
        let Some(title) = line.strip_prefix('#') else {
            continue;
        };
        let title = title.trim_start_matches('#').trim();
        let slug: String = title
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let mut unique = slug.clone();
        let mut n = 0;
        while out.contains(&unique) {
            n += 1;
            unique = format!("{slug}-{n}");
        }
        out.insert(unique);
    }
    out
}

/// The targets of the page's Markdown links `[text](target)`, outside code blocks.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose(text) {
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let end = after.find(')').expect("a link ends on its line");
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    out
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn anchors_follow_github_rules() {
    let a = anchors(
        "# schedscope\n### `explain` output\n## Acting as a scheduler (`--act`, explicit opt-in)\n\
         ```sh\n# not a heading\n```\n## Usage\n## Usage\n",
    );
    let want = [
        "schedscope",
        "explain-output",
        "acting-as-a-scheduler---act-explicit-opt-in",
        "usage",
        "usage-1",
    ];
    assert_eq!(a, want.iter().map(|s| s.to_string()).collect());
}

#[test]
fn relative_links_lead_to_files_and_headings() {
    let mut checked = 0;
    for page in pages() {
        let text = read(&page);
        for target in links(&text) {
            if target.starts_with("http://") || target.starts_with("https://") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let file = if path.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(path)
            };
            let shown = format!("{}: link `{target}`", page.display());
            assert!(file.exists(), "{shown}: no {}", file.display());
            let file = file.canonicalize().unwrap();
            assert!(
                file.starts_with(root().canonicalize().unwrap()),
                "{shown} leads out of the repository"
            );
            if let Some(anchor) = anchor {
                let headings = anchors(&read(&file));
                assert!(
                    headings.contains(anchor),
                    "{shown}: no heading #{anchor} in {}; it has {headings:?}",
                    file.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 20, "links checked: {checked}");
}

/// Each page of `docs/` says what it covers and links back in its first paragraph,
/// and the README links every page.
#[test]
fn pages_and_readme_link_each_other() {
    let all = pages();
    let readme = read(&all[0]);
    let linked = links(&readme);
    for page in &all[1..] {
        let name = page.file_name().unwrap().to_str().unwrap();
        assert!(
            linked.iter().any(|l| l == &format!("docs/{name}")),
            "the README does not link docs/{name}"
        );
        let text = read(page);
        let first = text
            .split("\n\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{name}: no first paragraph"));
        assert!(
            first.starts_with("This page covers ") && first.contains("](../README.md)"),
            "{name}: the first paragraph says what the page covers and links back: {first}"
        );
    }
}

/// A reader has only the repository: no page names a file beside it (`../shared/...`).
#[test]
fn no_page_names_a_path_outside_the_repository() {
    for page in pages() {
        for (n, line) in read(&page).lines().enumerate() {
            assert!(
                !line.contains("../shared") && !line.contains("`shared/"),
                "{}:{}: {line}",
                page.display(),
                n + 1
            );
        }
    }
}
