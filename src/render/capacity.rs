//! `schedscope capacity` as text, from [`CapacityAnswer`].

use crate::report::capacity::CapacityAnswer;
use crate::report::format::{CELL_MAX, clip, pad, width};

/// The count, what stops the next copy, and the `top` nodes with the most copies.
pub fn render(a: &CapacityAnswer, top: usize) -> String {
    let mut out = String::new();
    put_line!(
        out,
        "{} (each copy placed by a full scheduling cycle on top of the previous ones, \
         as kube-scheduler would; no preemption)",
        a.headline()
    );
    put_line!(out, "Stopped    {}", a.stop);
    if let Some(f) = &a.fit_error {
        put_line!(out, "FitError   {f}");
    }
    if !a.stop_groups.is_empty() {
        let plugin_w = a.stop_groups.iter().map(|g| width(&g.plugin)).max();
        let plugin_w = plugin_w.unwrap_or(0);
        put_line!(out, "\n   NODES  {}  REASON", pad("PLUGIN", plugin_w));
        for g in &a.stop_groups {
            put_line!(
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
    put_line!(
        out,
        "\nCopies per node ({} node{}):",
        a.per_node.len(),
        if a.per_node.len() == 1 { "" } else { "s" }
    );
    put_line!(out, "  {}  COPIES", pad("NODE", node_w));
    for n in shown {
        let node = clip(&n.node, CELL_MAX);
        put_line!(out, "  {}  {:>6}", pad(&node, node_w), n.copies);
    }
    if a.per_node.len() > shown.len() {
        put_line!(
            out,
            "  … and {} more nodes (--top N shows more; -o json lists all)",
            a.per_node.len() - shown.len()
        );
    }
    if let Some(n) = &a.split_note {
        put_line!(out, "\nNote: {n}.");
    }
    out
}
