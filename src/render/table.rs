//! Human-readable `explain` output: the verdict first, then rejected nodes grouped by
//! reason (readable at 5,000 nodes), then the score breakdown of the top nodes.

use std::fmt::Write;

use crate::engine::status::Code;
use crate::engine::trace::{Outcome, Trace};
use crate::report::answer::some_nodes;
use crate::report::format::{CELL_MAX, clip, column_width, pad, pad_left, width as text_width};
use crate::report::needs::PodNeeds;
use crate::report::{Answer, Causes, Group, GroupKind, Headline, Recorded, TraceView, legend};

pub struct TableOptions {
    /// How many top-scoring nodes to show.
    pub top: usize,
    /// How many example node names to list per rejection group.
    pub examples: usize,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            top: 10,
            examples: 3,
        }
    }
}

pub fn render(t: &Trace, opts: &TableOptions) -> String {
    render_view(t, &TraceView::new(t), opts)
}

/// [`render`] from a view already built (with the rejections' causes, when it has
/// them: each group then gets its cause lines under it).
pub fn render_view(t: &Trace, view: &TraceView, opts: &TableOptions) -> String {
    render_parts(t, view, &Headline::of(t, view), None, "", opts)
}

/// The table of an [`Answer`]: its headline, its needs under it, its groups and
/// causes.
pub fn render_answer(t: &Trace, answer: &Answer, opts: &TableOptions) -> String {
    let mut out = render_parts(
        t,
        &answer.view,
        &answer.headline,
        answer.needs.as_ref(),
        &recorded_lines(answer.recorded.as_ref()),
        opts,
    );
    // The release replayed, when the cluster names one: under the pod line.
    if let Some(r) = &answer.release {
        let at = out.find('\n').map_or(out.len(), |i| i + 1);
        out.insert_str(at, &format!("Release    {}\n", r.line()));
    }
    out
}

fn render_parts(
    t: &Trace,
    view: &TraceView,
    headline: &Headline,
    needs: Option<&PodNeeds>,
    under_verdict: &str,
    opts: &TableOptions,
) -> String {
    let mut out = String::new();
    let o = &mut out;
    verdict_section(o, t, headline, needs, under_verdict);
    if matches!(t.outcome, Outcome::Gated { .. }) {
        return out;
    }
    pre_filter_section(o, t);
    filter_section(o, t, view, opts);
    all_filters_section(o, t, view, opts);
    claims_section(o, view, opts);
    scores_section(o, t, view, opts);
    post_filter_section(o, t);
    binding_section(o, t);
    search_note(o, t);
    out
}

/// A snapshot's record under the verdict: the real scheduler's recorded word beside
/// the replay (with the likely causes when they differ) and what the snapshot lacks
/// for the pod. Nothing for a complete snapshot that records no word.
fn recorded_lines(recorded: Option<&Recorded>) -> String {
    let Some(r) = recorded.filter(|r| r.worth_showing()) else {
        return String::new();
    };
    let mut o = String::new();
    if let Some(w) = &r.word {
        let _ = writeln!(o, "Recorded   {}", w.line());
        if let Some(c) = w.causes_line() {
            let _ = writeln!(o, "           {c}");
        }
    }
    let _ = writeln!(o, "Snapshot   {}", r.completeness.line());
    o
}

/// Pod, verdict, FitError, the snapshot's record, the pod's needs, what is not
/// modelled.
fn verdict_section(
    o: &mut String,
    t: &Trace,
    headline: &Headline,
    needs: Option<&PodNeeds>,
    under_verdict: &str,
) {
    put_line!(
        o,
        "Pod        {}  (priority {}, profile {})",
        t.pod,
        t.priority,
        t.profile
    );
    if let Some(node) = &t.bound_to {
        put_line!(
            o,
            "Bound      to {node} now; replayed as if it were pending again"
        );
    }
    put_line!(o, "Verdict    {}", headline.sentence());
    if let Some(fe) = &t.fit_error {
        put_line!(o, "FitError   {fe}");
    }
    o.push_str(under_verdict);
    if let Some(n) = needs {
        needs_section(o, n);
    }
    if !t.not_modelled.is_empty() {
        put_line!(
            o,
            "\nNot modelled (this answer may differ from kube-scheduler's):"
        );
        for n in &t.not_modelled {
            put_line!(o, "  {:<32} {}", n.plugin, n.what);
        }
    }
    for n in &t.upstream_behaviour {
        put_line!(o, "Upstream   {}: {}", n.plugin, n.what);
    }
}

fn pre_filter_section(o: &mut String, t: &Trace) {
    // PreFilter.
    put_line!(o, "\nPreFilter  {}", pre_filter_line(t));
    let skipped: Vec<&str> = t
        .pre_filter
        .plugins
        .iter()
        .filter(|r| r.code == Code::Skip)
        .map(|r| r.plugin.as_str())
        .collect();
    if !skipped.is_empty() {
        put_line!(
            o,
            "           skipped (nothing to check): {}",
            skipped.join(", ")
        );
    }
    if let Some((node, passed)) = &t.nominated_node {
        put_line!(
            o,
            "Nominated  {node}: {}",
            if *passed {
                "passes every filter, so it is the only node evaluated"
            } else {
                "does not pass; every node is evaluated"
            }
        );
    }
}

/// How many nodes are feasible, and the groups every output shows: one per (plugin,
/// code, joined reasons), each rejected node in exactly one.
fn filter_section(o: &mut String, t: &Trace, view: &TraceView, opts: &TableOptions) {
    // Filter summary.
    let feasible = t.filter.iter().filter(|v| v.feasible).count();
    put_line!(
        o,
        "\nFilter     {feasible} of {} evaluated node{} feasible ({} node{} in the cluster)",
        t.filter.len(),
        crate::report::plural(t.filter.len()),
        t.nodes_total,
        crate::report::plural(t.nodes_total)
    );
    // The groups every output shows: one per (plugin, code, joined reasons), each
    // rejected node in exactly one.
    let groups: Vec<GroupLine> = view
        .summary
        .iter()
        .enumerate()
        .filter(|(_, g)| g.kind != GroupKind::Feasible)
        .map(|(i, g)| group_line(view, g, "(PreFilter)", view.cause_lines(i)))
        .collect();
    rejection_groups(o, &groups, opts);
}

/// The top nodes' scores, plugin by plugin, and the tie for the best total.
fn scores_section(o: &mut String, t: &Trace, view: &TraceView, opts: &TableOptions) {
    // Scores. A Score plugin that failed (an Error outcome) leaves no totals; the
    // verdict line already carries its message.
    if !t.feasible.is_empty() && !t.scores.is_empty() && t.totals.len() == t.feasible.len() {
        let order = &view.rank_order;
        let shown = order.len().min(opts.top);
        put_line!(
            o,
            "\nScores     top {shown} of {} feasible nodes; each cell is raw→normalized, total = Σ normalized × weight",
            t.feasible.len()
        );
        let abbrevs = &view.score_abbrevs;
        let rows = &order[..shown];
        let cell = |s: &crate::engine::trace::PluginScores, k: usize| match (
            s.raw.get(k),
            s.normalized.get(k),
        ) {
            (Some(raw), Some(normalized)) => format!("{raw}→{normalized}"),
            _ => "-".to_string(),
        };
        // Columns as wide as their widest shown value (at least the widths short
        // names and totals always had), so long node names and large totals stay
        // aligned.
        let node_width =
            column_width("NODE", rows.iter().map(|&k| clip(&t.feasible[k], CELL_MAX))).max(24);
        let total_width =
            column_width("TOTAL", rows.iter().map(|&k| t.totals[k].to_string())).max(6);
        let headers: Vec<String> = t
            .scores
            .iter()
            .enumerate()
            .map(|(j, s)| format!("{}×{}", abbrevs[j], s.weight))
            .collect();
        let widths: Vec<usize> = t
            .scores
            .iter()
            .enumerate()
            .map(|(j, s)| {
                column_width(&headers[j], rows.iter().map(|&k| cell(s, k)))
                    .max(text_width(&abbrevs[j]) + 3)
                    .max(9)
            })
            .collect();
        let mut header = format!(
            "  {:>4}  {} {}",
            "RANK",
            pad("NODE", node_width),
            pad_left("TOTAL", total_width)
        );
        for (j, h) in headers.iter().enumerate() {
            let _ = write!(header, "  {}", pad_left(h, widths[j]));
        }
        put_line!(o, "{header}");
        for &k in rows {
            let mark = if t.selected_node.as_deref() == Some(&t.feasible[k]) {
                "*"
            } else if view.ranks[k] == 1 {
                "="
            } else {
                " "
            };
            let mut line = format!(
                "{mark} {:>4}  {} {}",
                view.ranks[k],
                pad(&clip(&t.feasible[k], CELL_MAX), node_width),
                pad_left(&t.totals[k].to_string(), total_width)
            );
            for (j, s) in t.scores.iter().enumerate() {
                let _ = write!(line, "  {}", pad_left(&cell(s, k), widths[j]));
            }
            put_line!(o, "{line}");
        }
        let names: Vec<String> = t.scores.iter().map(|s| s.plugin.clone()).collect();
        put_line!(o, "  {}", legend(&names, abbrevs));
        if view.ties.len() > 1 {
            let ties: Vec<String> = view.ties.iter().map(|&i| t.feasible[i].clone()).collect();
            put_line!(
                o,
                "  = tie for the best total: {}. kube-scheduler breaks such ties by goroutine completion order, effectively at random; * marks the node its heap picks in this replay's order.",
                some_nodes(&ties)
            );
        }
    }
}

fn post_filter_section(o: &mut String, t: &Trace) {
    // PostFilter.
    if let Some(p) = &t.post_filter {
        put_line!(
            o,
            "\nPostFilter {}",
            p.code.map(Code::as_str).unwrap_or("-")
        );
        for r in &p.plugins {
            put_line!(
                o,
                "  {:<28} {:<30} {}",
                r.plugin,
                r.code.as_str(),
                r.reasons.join(", ")
            );
        }
        if let Some(n) = &p.nominated_node {
            put_line!(o, "  nominated node: {n}");
            put_line!(
                o,
                "  victims (dry run, nothing evicted): {}",
                p.victims.join(", ")
            );
        }
    }
}

/// The binding half of the cycle, dry run on the picked node.
fn binding_section(o: &mut String, t: &Trace) {
    // Binding half.
    if !t.binding.is_empty() {
        put_line!(
            o,
            "\nBinding    (dry run on {})",
            t.selected_node.as_deref().unwrap_or("-")
        );
        for ph in &t.binding {
            let plugins: Vec<String> = ph
                .plugins
                .iter()
                .map(|r| {
                    if r.reasons.is_empty() {
                        format!("{} {}", r.plugin, r.code.as_str())
                    } else {
                        format!(
                            "{} {} ({})",
                            r.plugin,
                            r.code.as_str(),
                            r.reasons.join(", ")
                        )
                    }
                })
                .collect();
            put_line!(
                o,
                "  {:<10} {}",
                ph.point,
                if plugins.is_empty() {
                    "-".to_string()
                } else {
                    plugins.join("; ")
                }
            );
        }
    }
}

fn search_note(o: &mut String, t: &Trace) {
    // Only when more nodes are feasible than kube-scheduler looks for can its pick
    // differ (a DaemonSet pod's single feasible node is found either way).
    if t.num_nodes_to_find > 0 && t.feasible.len() > t.num_nodes_to_find {
        put_line!(
            o,
            "\nNote       kube-scheduler stops after {} feasible nodes (percentageOfNodesToScore), starting where its previous cycle left off; this replay evaluates every node, so the real pick may be another high-scoring node.",
            t.num_nodes_to_find
        );
    }
}

/// The pod's needs, one labelled line each (only what the pod sets), the entries of
/// a need one under another.
fn needs_section(o: &mut String, needs: &PodNeeds) {
    let lines = needs.lines();
    let width = lines.iter().map(|l| text_width(l.label)).max().unwrap_or(0);
    let mut first = true;
    for l in &lines {
        for (i, entry) in l.entries.iter().enumerate() {
            let head = if first { "Needs" } else { "" };
            let label = if i == 0 { l.label } else { "" };
            put_line!(o, "{head:<10} {}  {entry}", pad(label, width));
            first = false;
        }
    }
}

/// With `--all-filters`: every Filter plugin's own answer on every node, grouped as
/// the first rejections are (with their causes), so a node rejected for several
/// reasons shows them all; then the nodes more than one plugin rejects, each with
/// its rejecting plugins. Everything comes from the view's all-filters groups.
fn all_filters_section(o: &mut String, t: &Trace, view: &TraceView, opts: &TableOptions) {
    if t.filter_all.is_none() {
        return;
    }
    let (total, extra) = view.all_rejection_counts();
    let groups: Vec<GroupLine> = view
        .all_groups
        .iter()
        .enumerate()
        .map(|(i, g)| group_line(view, g, "-", view.all_cause_lines(i)))
        .collect();
    put_line!(
        o,
        "\nAll filters  every plugin's own answer on every node ({total} rejection{}, {extra} beyond each node's first)",
        if total == 1 { "" } else { "s" }
    );
    rejection_groups(o, &groups, opts);
    let multi = view.multiply_rejected();
    if multi.is_empty() {
        return;
    }
    let shown = multi.len().min(opts.top);
    put_line!(
        o,
        "  rejected by more than one plugin ({} node{}; the first rejection first):",
        multi.len(),
        if multi.len() == 1 { "" } else { "s" }
    );
    let width = multi[..shown]
        .iter()
        .map(|(r, _)| text_width(&view.rows[*r].node))
        .max()
        .unwrap_or(0);
    for (r, plugins) in &multi[..shown] {
        put_line!(
            o,
            "    {}  {}",
            pad(&view.rows[*r].node, width),
            plugins.join(", ")
        );
    }
    if multi.len() > shown {
        put_line!(
            o,
            "    ... and {} more (all in -o json)",
            multi.len() - shown
        );
    }
}

/// A rejection group as printed: plugin, code, reason, its nodes and its cause lines.
type GroupLine<'a> = (&'a str, &'a str, &'a str, Vec<&'a str>, Vec<String>);

/// A group's row: plugin (`no_plugin` when none rejected), code, reason, nodes, and
/// its cause lines.
fn group_line<'a>(
    view: &'a TraceView,
    g: &'a Group,
    no_plugin: &'a str,
    causes: &[String],
) -> GroupLine<'a> {
    (
        g.plugin.as_deref().unwrap_or(no_plugin),
        g.code.map(Code::as_str).unwrap_or("-"),
        g.reason.as_str(),
        view.group_nodes(g),
        causes.to_vec(),
    )
}

/// Indent of a group's cause lines: under the PLUGIN column.
pub const CAUSE_INDENT: &str = "          ";

/// Rejection groups as given (largest first): a few example nodes each, and the
/// group's causes on indented lines under it.
fn rejection_groups(o: &mut String, groups: &[GroupLine], opts: &TableOptions) {
    if groups.is_empty() {
        return;
    }
    put_line!(
        o,
        "  {:>6}  {:<28} {:<30} REASON",
        "NODES",
        "PLUGIN",
        "CODE"
    );
    for (plugin, code, reason, nodes, causes) in groups {
        let mut ex: Vec<&str> = nodes.iter().take(opts.examples).copied().collect();
        if nodes.len() > opts.examples {
            ex.push("…");
        }
        put_line!(
            o,
            "  {:>6}  {plugin:<28} {code:<30} {reason}  [{}]",
            nodes.len(),
            ex.join(", ")
        );
        for c in causes {
            put_line!(o, "{CAUSE_INDENT}{c}");
        }
    }
}

/// The pod's ResourceClaims: what each asks for, its allocation, and why the nodes
/// DynamicResources rejected fall short (the first `opts.top` of them). A view
/// without causes has none.
fn claims_section(o: &mut String, view: &TraceView, opts: &TableOptions) {
    for c in view.causes.as_ref().map(Causes::claims).unwrap_or_default() {
        let from = c
            .template
            .as_ref()
            .map(|tpl| format!(", from template {tpl}"))
            .unwrap_or_default();
        put_line!(
            o,
            "
Claim      {} ({}{from})",
            c.name,
            c.claim
        );
        for r in &c.requests {
            put_line!(o, "  request    {r}");
        }
        for k in &c.constraints {
            put_line!(o, "  constraint {k}");
        }
        if !c.allocation.is_empty() {
            put_line!(o, "  allocated  {}", c.allocation.join(", "));
        }
        if let Some(node) = &c.allocates_on {
            put_line!(
                o,
                "  allocates  {} (on {node}, at Reserve)",
                c.allocates.join(", ")
            );
        }
        if !c.reserved_for.is_empty() {
            put_line!(o, "  reserved   for {}", c.reserved_for.join(", "));
        }
        let shown = c.nodes.len().min(opts.top);
        for n in &c.nodes[..shown] {
            let width = c.nodes[..shown]
                .iter()
                .map(|n| text_width(&clip(&n.node, CELL_MAX)))
                .max()
                .unwrap_or(0);
            for (i, reason) in n.reasons.iter().enumerate() {
                let node = if i == 0 {
                    clip(&n.node, CELL_MAX)
                } else {
                    "".into()
                };
                put_line!(o, "  {}  {reason}", pad(&node, width));
            }
        }
        let more = c.nodes.len() - shown + c.nodes_not_diagnosed;
        if more > 0 {
            put_line!(
                o,
                "  ... and {more} more rejected node{} (all in -o json)",
                if more == 1 { "" } else { "s" }
            );
        }
    }
}

fn pre_filter_line(t: &Trace) -> String {
    let p = &t.pre_filter;
    let code = p.code.unwrap_or(Code::Success);
    let mut s = code.as_str().to_string();
    if let Some(plugin) = &p.plugin {
        let _ = write!(s, " from {plugin}");
    }
    if !p.reasons.is_empty() {
        let _ = write!(s, ": {}", p.reasons.join(", "));
    }
    if let Some(sub) = &p.node_subset {
        let _ = write!(
            s,
            "; restricted to {} node(s): {}",
            sub.len(),
            sub.join(", ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::trace::{PluginScores, PreFilterTrace};

    /// A cycle stopped by a Score plugin's invalid score: the plugins scored before it
    /// are recorded, the totals are not.
    fn score_error_trace() -> Trace {
        let message = "applying score defaultWeights on Score plugins: plugin \"NodeResourcesFit\" returns an invalid score 125, it should in the range of [0, 100] after normalizing";
        Trace {
            pod: "default/pending".into(),
            profile: "default-scheduler".into(),
            priority: 0,
            nodes_total: 2,
            pre_enqueue: vec![],
            queue_sort: vec![],
            pre_filter: PreFilterTrace::default(),
            nominated_node: None,
            filter: vec![],
            filter_all: None,
            filter_plugins: vec![],
            feasible: vec!["n1".into(), "n2".into()],
            num_nodes_to_find: 0,
            pre_score: vec![],
            scores: vec![PluginScores {
                plugin: "TaintToleration".into(),
                weight: 3,
                raw: vec![0, 0],
                normalized: vec![100, 100],
            }],
            totals: vec![],
            best_nodes: vec![],
            selected_node: None,
            fit_error: None,
            post_filter: None,
            binding: vec![],
            not_modelled: vec![],
            upstream_behaviour: vec![],
            outcome: Outcome::Error {
                message: message.into(),
            },
            reserved_devices: None,
            bound_to: None,
        }
    }

    #[test]
    fn score_error_shows_the_error_without_a_score_table() {
        let out = render(&score_error_trace(), &TableOptions::default());
        assert!(
            out.contains("Verdict    scheduling error: applying score defaultWeights on Score plugins: plugin \"NodeResourcesFit\" returns an invalid score 125"),
            "{out}"
        );
        assert!(!out.contains("RANK"), "{out}");
    }

    /// Paper cut 14: the note that kube-scheduler may pick another node (it stops
    /// after numFeasibleNodesToFind) appears only when more nodes are feasible than
    /// it looks for; one feasible node (a DaemonSet pod's) is found either way.
    #[test]
    fn the_search_note_appears_only_when_the_search_can_stop_early() {
        let note = "the real pick may be another high-scoring node";
        let names = |n: usize| (0..n).map(|i| format!("n{i}")).collect::<Vec<_>>();
        for (feasible, to_find, shown) in [
            (1, 100, false),
            (100, 100, false),
            (101, 100, true),
            (2, 0, false),
        ] {
            let mut t = score_error_trace();
            t.outcome = Outcome::Scheduled { node: "n0".into() };
            t.feasible = names(feasible);
            t.num_nodes_to_find = to_find;
            t.scores.clear();
            let out = render(&t, &TableOptions::default());
            assert_eq!(
                out.contains(note),
                shown,
                "{feasible} feasible, {to_find} to find:\n{out}"
            );
        }
    }

    #[test]
    fn short_score_columns_render_as_dashes() {
        let mut t = score_error_trace();
        t.totals = vec![300, 300];
        t.scores[0].raw.truncate(1);
        let out = render(&t, &TableOptions::default());
        assert!(out.contains("RANK"), "{out}");
        assert!(out.contains(" -"), "{out}");
    }
}
