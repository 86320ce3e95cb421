//! What-if and remedies as text: the edits above the answer, the before/after
//! comparison under it, the verified remedies as a table whose edits can be pasted
//! back as `--what-if` arguments. Drawn from `report::whatif` and `report::remedies`.

use crate::report::format::{pad, width};
use crate::report::remedies::Remedies;
use crate::report::whatif::{WhatIfComparison, WhatIfSide};

/// `what_if: {edits, notes}` beside an answer in JSON, when there are edits (the
/// answers that have no before/after: capacity, simulate).
pub fn add_edits_json(v: &mut serde_json::Value, edits: &[String], notes: &[String]) {
    if let (false, Some(o)) = (edits.is_empty(), v.as_object_mut()) {
        let w = serde_json::json!({"edits": edits, "notes": notes});
        o.insert("what_if".into(), w);
    }
}

/// The lines above the edited answer: which edits, and what they had to say.
pub fn edits_header(edits: &[String], notes: &[String]) -> String {
    let mut out =
        String::from("WHAT-IF (the model in memory only; nothing is written to the cluster):\n");
    for e in edits {
        put_line!(out, "  --what-if {e}");
    }
    for n in notes {
        put_line!(out, "  note: {n}");
    }
    out.push('\n');
    out
}

fn chosen(s: &WhatIfSide) -> String {
    match (&s.selected_node, s.total) {
        (Some(n), Some(t)) => format!("{n} (total {t})"),
        (Some(n), None) => n.clone(),
        _ => "-".into(),
    }
}

/// Before → after: verdict, feasible nodes, chosen node and total, and every
/// rejection group whose node count changed.
pub fn comparison(c: &WhatIfComparison) -> String {
    let mut out = String::from("\nBefore → after the edits:\n");
    let rows = [
        ("verdict", c.before.verdict.clone(), c.after.verdict.clone()),
        (
            "feasible nodes",
            c.before.feasible.to_string(),
            c.after.feasible.to_string(),
        ),
        ("chosen node", chosen(&c.before), chosen(&c.after)),
    ];
    for (what, b, a) in rows {
        let same = if a == b { "  (unchanged)" } else { "" };
        put_line!(out, "  {} {b} → {a}{same}", pad(what, 15));
    }
    if c.changed.is_empty() {
        out.push_str("  rejections: no group changed\n");
        return out;
    }
    out.push_str("  rejections whose node count changed:\n");
    let plugin_w = c
        .changed
        .iter()
        .map(|g| width(&g.plugin))
        .max()
        .unwrap_or(0);
    for g in &c.changed {
        put_line!(
            out,
            "    {}  {} → {}  {}",
            pad(&g.plugin, plugin_w),
            g.before,
            g.after,
            g.reason
        );
    }
    out
}

/// The remedies found, smallest change first, each with what its replay gave.
pub fn remedies(r: &Remedies) -> String {
    let mut out = String::new();
    if let Some(p) = &r.preemption {
        put_line!(out, "\nNote: {p}.");
    }
    let search = format!(
        "{} replay{} of at most {}{}",
        r.replays,
        if r.replays == 1 { "" } else { "s" },
        r.limit,
        if r.stopped_early {
            "; stopped early: raise --suggest-limit to search further"
        } else {
            ""
        }
    );
    if r.suggestions.is_empty() {
        put_line!(
            out,
            "\nRemedies: none found with one or two edits ({search})."
        );
        return out;
    }
    put_line!(
        out,
        "\nRemedies, smallest change first, each verified by a full replay ({search}):"
    );
    let edits: Vec<String> = r
        .suggestions
        .iter()
        .map(|s| {
            s.edits
                .iter()
                .map(|e| format!("--what-if {e}"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let nodes: Vec<String> = r
        .suggestions
        .iter()
        .map(|s| s.selected_node.clone().unwrap_or_else(|| "-".into()))
        .collect();
    let edits_w = edits.iter().map(|e| width(e)).max().unwrap_or(0).max(5);
    let node_w = nodes.iter().map(|n| width(n)).max().unwrap_or(0).max(4);
    put_line!(
        out,
        "  {}  {}  FEASIBLE  {}  TOTAL",
        pad("#", 3),
        pad("EDITS", edits_w),
        pad("NODE", node_w)
    );
    for (i, s) in r.suggestions.iter().enumerate() {
        let total = s.total.map(|t| t.to_string()).unwrap_or_else(|| "-".into());
        put_line!(
            out,
            "  {}  {}  {}  {}  {total}",
            pad(&(i + 1).to_string(), 3),
            pad(&edits[i], edits_w),
            pad(&s.feasible.to_string(), 8),
            pad(&nodes[i], node_w),
        );
        if let Some(n) = &s.note {
            put_line!(out, "       {n}");
        }
    }
    out
}
