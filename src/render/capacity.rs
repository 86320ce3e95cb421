//! `schedscope capacity` as text, from [`CapacityAnswer`].

use std::fmt::Write;

use crate::report::capacity::CapacityAnswer;
use crate::report::format::{CELL_MAX, clip, pad, width};

/// The count, what stops the next copy, and the `top` nodes with the most copies.
pub fn render(a: &CapacityAnswer, top: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} (each copy placed by a full scheduling cycle on top of the previous ones, \
         as kube-scheduler would; no preemption)",
        a.headline()
    );
    let _ = writeln!(out, "Stopped    {}", a.stop);
    if let Some(f) = &a.fit_error {
        let _ = writeln!(out, "FitError   {f}");
    }
    if !a.stop_groups.is_empty() {
        let plugin_w = a.stop_groups.iter().map(|g| width(&g.plugin)).max();
        let plugin_w = plugin_w.unwrap_or(0);
        let _ = writeln!(out, "\n   NODES  {}  REASON", pad("PLUGIN", plugin_w));
        for g in &a.stop_groups {
            let _ = writeln!(
                out,
                "  {:>6}  {}  {}",
                g.nodes,
                pad(&g.plugin, plugin_w),
                g.reason
            );
        }
    }
    if a.per_node.is_empty() {
        return out;
    }
    let shown = &a.per_node[..a.per_node.len().min(top.max(1))];
    let node_w = shown
        .iter()
        .map(|n| width(&n.node))
        .max()
        .unwrap_or(0)
        .max(4);
    let _ = writeln!(
        out,
        "\nCopies per node ({} node{}):",
        a.per_node.len(),
        if a.per_node.len() == 1 { "" } else { "s" }
    );
    let _ = writeln!(out, "  {}  COPIES", pad("NODE", node_w));
    for n in shown {
        let node = clip(&n.node, CELL_MAX);
        let _ = writeln!(out, "  {}  {:>6}", pad(&node, node_w), n.copies);
    }
    if a.per_node.len() > shown.len() {
        let _ = writeln!(
            out,
            "  … and {} more nodes (--top N shows more; -o json lists all)",
            a.per_node.len() - shown.len()
        );
    }
    if let Some(n) = &a.split_note {
        let _ = writeln!(out, "\nNote: {n}.");
    }
    out
}
