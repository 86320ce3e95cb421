//! `explain -o html`: one pod's answer as one self-contained HTML page for incident
//! reports and training handouts: the Markdown report's content (the same facts,
//! needs, rejection groups with causes, top scores and preemption, from the same
//! [`Answer`]) plus a chart of the top totals (CSS bars), the node × plugin score
//! matrix and the node × plugin filter matrix. Inline CSS only: no script, no
//! external asset. Every name and message is entity-escaped ([`h`]).

use std::fmt::Write;

use crate::engine::status::Code;
use crate::engine::trace::Trace;
use crate::report::{Answer, GroupKind, Mark};

/// Rows a matrix lists at most (the page stays light at 5,000 nodes; `-o json` has
/// every node).
const MATRIX_ROWS: usize = 300;

const STYLE: &str = "
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;color:#1f2328;background:#fff}
h1{font-size:1.4rem;margin:0 0 .25rem}h2{font-size:1.1rem;margin:1.75rem 0 .5rem;border-bottom:1px solid #d0d7de;padding-bottom:.25rem}
code,td,th,dd{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.verdict{display:inline-block;padding:.15rem .6rem;border-radius:1rem;font-weight:600}
.ok{background:#dafbe1;color:#116329}.no{background:#ffebe9;color:#a40e26}.other{background:#fff8c5;color:#7d4e00}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
table{border-collapse:collapse;margin:.25rem 0}th,td{border:1px solid #d0d7de;padding:.2rem .45rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.n{text-align:right}tr.picked td{font-weight:700}ul{margin:0;padding-left:1.1rem}
.bars{display:grid;grid-template-columns:max-content 1fr max-content;gap:.2rem .6rem;align-items:center}
.bar{height:.9rem;background:#54aeff;border-radius:2px}.bar.picked{background:#1a7f37}
.m-pass{color:#1a7f37}.m-reject{color:#a40e26;font-weight:700}.m-other{color:#6e7781}
.note{color:#57606a}.wide{overflow-x:auto}
";

/// The answer as a whole HTML page; `top` is how many top-scoring nodes the chart
/// and the scores table list.
pub fn render(t: &Trace, answer: &Answer, top: usize) -> String {
    let mut o = String::with_capacity(16 * 1024);
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>schedscope: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        h(&t.pod)
    );
    let class = match answer.headline {
        crate::report::Headline::Schedulable { .. } => "ok",
        crate::report::Headline::Preempting { .. } | crate::report::Headline::Unschedulable => "no",
        _ => "other",
    };
    let _ = writeln!(
        o,
        "<h1>{}</h1>\n<p><span class=\"verdict {class}\">{}</span></p>\n<dl>",
        h(&t.pod),
        h(&answer.headline.short())
    );
    for (label, text) in super::markdown::facts(t, answer) {
        let _ = writeln!(o, "<dt>{}</dt><dd>{}</dd>", h(label), h(&text));
    }
    o.push_str("</dl>\n");
    needs(&mut o, answer);
    rejections(&mut o, answer);
    chart(&mut o, t, answer, top);
    score_matrix(&mut o, t, answer);
    filter_matrix(&mut o, answer);
    preemption(&mut o, t);
    o.push_str(
        "<p class=\"note\">Made by schedscope: a replay of kube-scheduler's framework on a \
         cluster snapshot.</p>\n</body>\n</html>\n",
    );
    o
}

fn needs(o: &mut String, answer: &Answer) {
    let Some(n) = &answer.needs else { return };
    let lines = n.lines();
    if lines.is_empty() {
        return;
    }
    o.push_str("<h2>Needs</h2>\n<table>\n");
    for l in &lines {
        let _ = writeln!(
            o,
            "<tr><th>{}</th><td>{}</td></tr>",
            h(l.label),
            list(&l.entries)
        );
    }
    o.push_str("</table>\n");
}

fn rejections(o: &mut String, answer: &Answer) {
    let view = &answer.view;
    let mut groups = view
        .summary
        .iter()
        .enumerate()
        .filter(|(_, g)| g.kind != GroupKind::Feasible)
        .peekable();
    if groups.peek().is_none() {
        return;
    }
    let _ = writeln!(
        o,
        "<h2>Rejected nodes</h2>\n<p>{}</p>\n<div class=\"wide\"><table>\n<tr><th>Nodes</th><th>Plugin</th>\
         <th>Code</th><th>Reason</th><th>Causes</th><th>Examples</th></tr>",
        h(&view.headline)
    );
    for (i, g) in groups {
        let nodes = view.group_nodes(g);
        let _ = writeln!(
            o,
            "<tr><td class=\"n\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            nodes.len(),
            h(g.plugin.as_deref().unwrap_or("(PreFilter)")),
            g.code.map(Code::as_str).unwrap_or("-"),
            h(&g.reason),
            list(view.cause_lines(i)),
            h(&super::markdown::examples(&nodes))
        );
    }
    o.push_str("</table></div>\n");
}

/// Whether the trace has a total per feasible node (a failed Score plugin leaves
/// none).
fn scored(t: &Trace) -> bool {
    !t.feasible.is_empty() && !t.scores.is_empty() && t.totals.len() == t.feasible.len()
}

/// The top totals as bars, the picked node in green.
fn chart(o: &mut String, t: &Trace, answer: &Answer, top: usize) {
    let view = &answer.view;
    if !scored(t) {
        return;
    }
    let shown = view.rank_order.len().min(top);
    let max = view.max_total.max(1);
    let _ = writeln!(
        o,
        "<h2>Top scores</h2>\n<p>The {shown} best of {} feasible nodes by total score \
         (Σ normalized × weight).</p>\n<div class=\"bars\">",
        t.feasible.len()
    );
    for &k in view.rank_order.iter().take(shown) {
        let picked = t.selected_node.as_deref() == Some(t.feasible[k].as_str());
        let pct = (t.totals[k].max(0) * 100) / max;
        let _ = writeln!(
            o,
            "<span>{}. {}</span><div><div class=\"bar{}\" style=\"width:{pct}%\"></div></div><span>{}</span>",
            view.ranks[k],
            h(&t.feasible[k]),
            if picked { " picked" } else { "" },
            t.totals[k]
        );
    }
    o.push_str("</div>\n");
}

/// Every feasible node (best first, up to [`MATRIX_ROWS`]) × every Score plugin:
/// raw→normalized, shaded by the normalized score.
fn score_matrix(o: &mut String, t: &Trace, answer: &Answer) {
    let view = &answer.view;
    if !scored(t) {
        return;
    }
    o.push_str(
        "<h2>Score matrix</h2>\n<p>Each cell is raw→normalized; the header gives each \
         plugin's weight.</p>\n<div class=\"wide\"><table>\n<tr><th>Rank</th><th>Node</th><th>Total</th>",
    );
    for s in &t.scores {
        let _ = write!(o, "<th>{}<br>×{}</th>", h(&s.plugin), s.weight);
    }
    o.push_str("</tr>\n");
    for &k in view.rank_order.iter().take(MATRIX_ROWS) {
        let picked = t.selected_node.as_deref() == Some(t.feasible[k].as_str());
        let _ = write!(
            o,
            "<tr{}><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td>",
            if picked { " class=\"picked\"" } else { "" },
            view.ranks[k],
            h(&t.feasible[k]),
            t.totals[k]
        );
        for s in &t.scores {
            match (s.raw.get(k), s.normalized.get(k)) {
                (Some(r), Some(n)) => {
                    // Normalized scores are 0..=100: the higher, the bluer.
                    let alpha = (*n).clamp(0, 100) as f64 / 250.0;
                    let _ = write!(
                        o,
                        "<td class=\"n\" style=\"background:rgba(84,174,255,{alpha:.2})\">{r}→{n}</td>"
                    );
                }
                _ => o.push_str("<td class=\"n\">-</td>"),
            }
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</table></div>\n");
    more_rows(o, view.rank_order.len());
}

/// Every evaluated node (up to [`MATRIX_ROWS`]) × every Filter plugin: pass,
/// reject (the first rejection bold), skip, not run.
fn filter_matrix(o: &mut String, answer: &Answer) {
    let view = &answer.view;
    if view.rows.is_empty() || view.plugins.is_empty() {
        return;
    }
    o.push_str(
        "<h2>Filter matrix</h2>\n<p>✓ pass · ✗ rejects (<b>bold</b>: the first rejection, \
         the one kube-scheduler reports) · ∅ skip · · not run.</p>\n<div class=\"wide\"><table>\n<tr><th>Node</th>",
    );
    for p in &view.plugins {
        let _ = write!(o, "<th>{}</th>", h(p));
    }
    o.push_str("</tr>\n");
    let width = view.plugins.len();
    for (r, row) in view.rows.iter().enumerate().take(MATRIX_ROWS) {
        let _ = write!(o, "<tr><td>{}</td>", h(&row.node));
        for (j, m) in view.cells[r * width..(r + 1) * width].iter().enumerate() {
            let class = match m {
                Mark::Pass => "m-pass",
                Mark::RejectFirst | Mark::Reject | Mark::Error => "m-reject",
                _ => "m-other",
            };
            let mark = match m {
                Mark::RejectFirst => format!("<b>{}</b>", m.symbol()),
                m => m.symbol().to_string(),
            };
            let _ = write!(
                o,
                "<td class=\"{class}\" title=\"{} on {}: {}\">{mark}</td>",
                h(&view.plugins[j]),
                h(&row.node),
                m.label()
            );
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</table></div>\n");
    more_rows(o, view.rows.len());
}

fn more_rows(o: &mut String, rows: usize) {
    if rows > MATRIX_ROWS {
        let _ = writeln!(
            o,
            "<p class=\"note\">… and {} more nodes (all in -o json).</p>",
            rows - MATRIX_ROWS
        );
    }
}

fn preemption(o: &mut String, t: &Trace) {
    let Some(p) = &t.post_filter else { return };
    let _ = writeln!(
        o,
        "<h2>Preemption</h2>\n<dl>\n<dt>PostFilter</dt><dd>{}</dd>",
        p.code.map(Code::as_str).unwrap_or("-")
    );
    for r in &p.plugins {
        let _ = writeln!(
            o,
            "<dt>{}</dt><dd>{} {}</dd>",
            h(&r.plugin),
            r.code.as_str(),
            h(&r.reasons.join(", "))
        );
    }
    if let Some(n) = &p.nominated_node {
        let _ = writeln!(
            o,
            "<dt>Nominated node</dt><dd>{}</dd>\n<dt>Victims</dt><dd>{} (dry run, nothing evicted)</dd>",
            h(n),
            h(&p.victims.join(", "))
        );
    }
    o.push_str("</dl>\n");
}

/// Entries as a list (one entry: plain text).
fn list(entries: &[String]) -> String {
    match entries {
        [] => String::new(),
        [one] => h(one),
        many => {
            let items: String = many.iter().map(|e| format!("<li>{}</li>", h(e))).collect();
            format!("<ul>{items}</ul>")
        }
    }
}

/// `s` as HTML text (in an element or a quoted attribute): control characters
/// spelled out as the terminal output has them, and `&`, `<`, `>`, `"`, `'` as
/// entities.
pub fn h(s: &str) -> String {
    let safe = super::escape::terminal_safe(s);
    let mut out = String::with_capacity(safe.len() + 8);
    for c in safe.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::h;

    #[test]
    fn markup_in_a_name_is_entity_escaped() {
        assert_eq!(
            h("<script>alert('x')</script>\"&"),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&amp;"
        );
        assert_eq!(h("a\nb\x1b[2J"), "a\\nb\\x1b[2J");
    }
}
