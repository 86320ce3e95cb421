//! `explain -o markdown`: one pod's answer as GitHub-flavoured Markdown to paste into
//! an issue or a chat: the verdict, the snapshot's record, the pod's needs, the
//! rejection groups with their causes, the top scores and preemption. Drawn from the
//! same [`Answer`] the table draws; every name and message is escaped ([`md`]), so a
//! hostile name cannot add markup, links, HTML or table columns.

use std::fmt::Write;

use crate::engine::status::Code;
use crate::engine::trace::Trace;
use crate::report::{Answer, GroupKind};

/// The answer as Markdown; `top` is how many top-scoring nodes are listed.
pub fn render(t: &Trace, answer: &Answer, top: usize) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "### {} · {}\n", md(&t.pod), md(&answer.headline.short()));
    for (label, text) in facts(t, answer) {
        let label = if label.is_empty() {
            String::new()
        } else {
            format!("**{label}:** ")
        };
        let _ = writeln!(o, "- {label}{}", md(&text));
    }
    needs(&mut o, answer);
    rejections(&mut o, answer);
    scores(&mut o, t, answer, top);
    preemption(&mut o, t);
    o
}

/// The answer's headline facts, labelled (an empty label continues the line
/// before): verdict, priority, profile, FitError, release, the snapshot's record.
pub(super) fn facts(t: &Trace, answer: &Answer) -> Vec<(&'static str, String)> {
    let mut facts = vec![
        ("Verdict", answer.headline.sentence()),
        ("Priority", t.priority.to_string()),
        ("Profile", t.profile.clone()),
    ];
    if let Some(fe) = &t.fit_error {
        facts.push(("FitError", fe.clone()));
    }
    if let Some(r) = &answer.release {
        facts.push(("Release", r.line()));
    }
    if let Some(r) = answer.recorded.as_ref().filter(|r| r.worth_showing()) {
        if let Some(w) = &r.word {
            facts.push(("Recorded", w.line()));
            if let Some(c) = w.causes_line() {
                facts.push(("", c));
            }
        }
        facts.push(("Snapshot", r.completeness.line()));
    }
    facts
}

fn needs(o: &mut String, answer: &Answer) {
    let Some(n) = &answer.needs else { return };
    let lines = n.lines();
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(o, "\n#### Needs\n\n| Need | Value |\n|---|---|");
    for l in &lines {
        let entries: Vec<String> = l.entries.iter().map(|e| md(e)).collect();
        let _ = writeln!(o, "| {} | {} |", md(l.label), entries.join("<br>"));
    }
}

/// The rejection groups (each rejected node in one), with their causes.
fn rejections(o: &mut String, answer: &Answer) {
    let view = &answer.view;
    let groups: Vec<(usize, &crate::report::Group)> = view
        .summary
        .iter()
        .enumerate()
        .filter(|(_, g)| g.kind != GroupKind::Feasible)
        .collect();
    if groups.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\n#### Rejected nodes\n\n{}\n\n| Nodes | Plugin | Code | Reason | Causes | Examples |\n|---:|---|---|---|---|---|",
        md(&view.headline)
    );
    for (i, g) in groups {
        let nodes = view.group_nodes(g);
        let causes: Vec<String> = view.cause_lines(i).iter().map(|c| md(c)).collect();
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} |",
            nodes.len(),
            md(g.plugin.as_deref().unwrap_or("(PreFilter)")),
            g.code.map(Code::as_str).unwrap_or("-"),
            md(&g.reason),
            causes.join("<br>"),
            md(&examples(&nodes))
        );
    }
}

/// The first few node names, then how many more.
pub(super) fn examples(nodes: &[&str]) -> String {
    const SHOWN: usize = 5;
    let mut s = nodes[..nodes.len().min(SHOWN)].join(", ");
    if nodes.len() > SHOWN {
        let _ = write!(s, ", … (+{} more)", nodes.len() - SHOWN);
    }
    s
}

fn scores(o: &mut String, t: &Trace, answer: &Answer, top: usize) {
    let view = &answer.view;
    if t.feasible.is_empty() || t.scores.is_empty() || t.totals.len() != t.feasible.len() {
        return;
    }
    let shown = view.rank_order.len().min(top);
    let _ = writeln!(
        o,
        "\n#### Top scores ({shown} of {} feasible nodes; raw→normalized, total = Σ normalized × weight)\n",
        t.feasible.len()
    );
    let mut head = "| Rank | Node | Total |".to_string();
    let mut rule = "|---:|---|---:|".to_string();
    for s in &t.scores {
        let _ = write!(head, " {}×{} |", md(&s.plugin), s.weight);
        rule.push_str("---:|");
    }
    let _ = writeln!(o, "{head}\n{rule}");
    for &k in view.rank_order.iter().take(shown) {
        let picked = t.selected_node.as_deref() == Some(t.feasible[k].as_str());
        let node = md(&t.feasible[k]);
        let node = if picked { format!("**{node}**") } else { node };
        let _ = write!(o, "| {} | {node} | {} |", view.ranks[k], t.totals[k]);
        for s in &t.scores {
            match (s.raw.get(k), s.normalized.get(k)) {
                (Some(r), Some(n)) => {
                    let _ = write!(o, " {r}→{n} |");
                }
                _ => o.push_str(" - |"),
            }
        }
        o.push('\n');
    }
}

fn preemption(o: &mut String, t: &Trace) {
    let Some(p) = &t.post_filter else { return };
    let _ = writeln!(
        o,
        "\n#### Preemption\n\n- **PostFilter:** {}",
        p.code.map(Code::as_str).unwrap_or("-")
    );
    for r in &p.plugins {
        let _ = writeln!(
            o,
            "- {}: {} {}",
            md(&r.plugin),
            r.code.as_str(),
            md(&r.reasons.join(", "))
        );
    }
    if let Some(n) = &p.nominated_node {
        let victims: Vec<String> = p.victims.iter().map(|v| md(v)).collect();
        let _ = writeln!(
            o,
            "- **Nominated node:** {}\n- **Victims** (dry run, nothing evicted): {}",
            md(n),
            victims.join(", ")
        );
    }
}

/// `s` as literal Markdown text: control characters spelled out and line feeds as
/// `\n` (so it stays one line, one table cell), `&` and `<` `>` as entities (no HTML
/// gets through), the inline markup characters and `|` backslash-escaped (no
/// emphasis, code, link or table column gets through), and what GitHub would turn
/// into a link (`://`, `www.`, `@`) broken by an escape. Text is never at a line's
/// start, so block markup (`#`, `-`, `1.`) needs no escape.
pub fn md(s: &str) -> String {
    let safe = super::escape::terminal_safe(s);
    let line = crate::report::format::one_line(&safe);
    let mut out = String::with_capacity(line.len() + 8);
    for (i, c) in line.char_indices() {
        let rest = &line[i + c.len_utf8()..];
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '@' => {
                out.push('\\');
                out.push(c);
            }
            ':' if rest.starts_with("//") => out.push_str("\\:"),
            '.' if i >= 3 && line.as_bytes()[i - 3..i].eq_ignore_ascii_case(b"www") => {
                out.push_str("\\.")
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::md;

    #[test]
    fn markup_in_a_name_is_escaped() {
        assert_eq!(md("a|b"), "a\\|b");
        assert_eq!(md("<img src=x>"), "&lt;img src=x&gt;");
        assert_eq!(md("`x` *y* [l](u)"), "\\`x\\` \\*y\\* \\[l\\](u)");
        assert_eq!(
            md("http://e.vil www.e.vil a@b.c"),
            "http\\://e.vil www\\.e.vil a\\@b.c"
        );
        assert_eq!(md("a\nb\x1b"), "a\\\\nb\\\\x1b");
        assert_eq!(md("&lt;"), "&amp;lt;");
    }
}
