//! One node: allocatable vs requested, taints, labels, pods, and what each plugin said.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::super::action::Action;
use super::super::format;
use super::super::traces::{Current, TraceStatus};
use super::super::widgets::{Scroll, centered_note, scroll_text};
use super::{
    Component, Effect, Handled, Hit, Hits, PaneCtx, mark_span, mark_style, scroll_by, traced_pod,
};
use crate::engine::plugins::dynamic_resources::diagnose::NodeDevice;
use crate::model::{NodeInfo, Pod};
use crate::report::Causes;
use crate::report::Mark;
use crate::theme::Theme;

/// One node (`node`), scrolled; what the Node tab and `:node` show.
#[derive(Clone, Debug, Default)]
pub struct NodePane {
    pub node: Option<String>,
    pub scroll: Scroll,
}

impl NodePane {
    pub fn open(&mut self, node: String) {
        self.node = Some(node);
        self.scroll = Scroll::default();
    }

    /// A new trace: keep the node on the same pod if the trace has it, else show the
    /// bound pod's own node, the chosen one, or the first.
    pub fn trace_changed(&mut self, ctx: &PaneCtx, same_pod: bool) {
        let c = ctx.current;
        let node_ok = self
            .node
            .as_ref()
            .is_some_and(|n| c.is_some_and(|c| c.view.row_of.contains_key(n)) && same_pod);
        if !node_ok {
            self.node = c.and_then(|c| {
                c.trace
                    .bound_to
                    .clone()
                    .or_else(|| c.trace.selected_node.clone())
                    .or_else(|| c.view.rows.first().map(|r| r.node.clone()))
            });
        }
    }
}

impl Component for NodePane {
    scroll_keys!(page_and_wheel);

    fn handle(&mut self, ctx: &PaneCtx, action: &Action) -> Handled {
        match node_edit(self.node.as_deref(), ctx, action) {
            Some(e) => Handled::Then(e),
            None => scroll_by(&mut self.scroll, action),
        }
    }

    fn node(&self, _ctx: &PaneCtx) -> Option<String> {
        self.node.clone()
    }

    fn draw(&mut self, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
        draw(self, ctx, f, area, hits)
    }
}

/// The Node tab's what-if keys on the node shown: cordon or uncordon it, remove a
/// taint (the prompt starts with its first), add one like it.
fn node_edit(node: Option<&str>, ctx: &PaneCtx, action: &Action) -> Option<Effect> {
    if !matches!(
        action,
        Action::NodeCordon | Action::NodeUntaint | Action::NodeClone
    ) {
        return None;
    }
    let Some(info) = node.and_then(|n| ctx.cluster.node(n)) else {
        return Some(Effect::Flash("no node shown".into(), true));
    };
    let name = info.name();
    Some(match action {
        Action::NodeCordon if info.node.unschedulable => {
            Effect::Edits(vec![format!("node.uncordon={name}")])
        }
        Action::NodeCordon => Effect::Edits(vec![format!("node.cordon={name}")]),
        Action::NodeUntaint => match info.node.taints.first() {
            Some(taint) => Effect::EditPrompt(format!(
                "node.untaint={name}:{}:{}",
                taint.key, taint.effect
            )),
            None => Effect::Flash(format!("node {name} has no taints"), true),
        },
        _ => Effect::Edits(vec![format!("node.add=1:like={name}")]),
    })
}

fn draw(pane: &mut NodePane, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
    let t = ctx.theme.clone();
    let Some(name) = pane.node.clone() else {
        centered_note(
            f,
            area,
            t.dim,
            "no node selected: enter on a node in Filters or Scores, or :node NAME",
        );
        return;
    };
    let Some(info) = ctx.cluster.node(&name) else {
        centered_note(
            f,
            area,
            t.warning,
            &format!("node {name} is not in the cluster"),
        );
        return;
    };
    // A bound pod is already counted on its node; only a pending one adds its request.
    let pod = traced_pod(ctx)
        .or_else(|| ctx.selected_pod.and_then(|k| ctx.cluster.pod(k)).cloned())
        .filter(|p| !p.is_bound());
    let cur = ctx.current.cloned();
    let no_replay = match ctx.status {
        TraceStatus::NoProfile(s) => super::no_profile_note(ctx, s),
        // Bound pods are replayed too (as `explain` does): no replay is no pod yet,
        // or one on its way.
        TraceStatus::Computing => "replaying the scheduling cycle…".into(),
        _ => "no replay: no pod selected".into(),
    };
    let devices = crate::engine::plugins::dynamic_resources::diagnose::node_devices(
        ctx.cluster,
        &name,
        &info.node.labels,
    );
    let (left, right) = node_lines(
        &t,
        info,
        pod.as_deref(),
        cur.as_ref(),
        &no_replay,
        area.width,
        &devices,
    );
    hits.rects.push((area, Hit::DetailPane));
    if area.width >= 100 {
        let [l, r] = Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)])
            .areas(area);
        // Pad both columns to the same length so they scroll together.
        let n = left.len().max(right.len());
        let (mut left, mut right) = (left, right);
        left.resize(n, Line::default());
        right.resize(n, Line::default());
        let mut s2 = pane.scroll;
        scroll_text(f, l, &t, left, &mut pane.scroll);
        scroll_text(f, r, &t, right, &mut s2);
    } else {
        let mut all = left;
        all.push(Line::default());
        all.extend(right);
        scroll_text(f, area, &t, all, &mut pane.scroll);
    }
}

/// `no_replay`: what to say when the selected pod has no replay, and why.
pub fn verdict_line(
    t: &Theme,
    cur: Option<&Current>,
    node: &str,
    no_replay: &str,
) -> Line<'static> {
    let Some(c) = cur else {
        return Line::from(Span::styled(no_replay.to_string(), t.dim));
    };
    let Some(&row) = c.view.row_of.get(node) else {
        return Line::from(Span::styled("· not evaluated in this cycle", t.not_run));
    };
    let r = &c.view.rows[row];
    if r.feasible {
        let fi = c.view.feasible_of.get(node).copied();
        let mut spans = vec![mark_span(t, Mark::Pass), Span::styled(" feasible", t.pass)];
        if let Some(fi) = fi {
            spans.push(Span::styled(
                format!(
                    " · total {} · rank {} of {}",
                    c.trace.totals.get(fi).copied().unwrap_or(0),
                    c.view.ranks[fi],
                    c.trace.feasible.len()
                ),
                t.text,
            ));
        }
        if c.trace.selected_node.as_deref() == Some(node) {
            spans.push(Span::styled(" ★ chosen", t.chosen));
        } else if c.trace.best_nodes.iter().any(|n| n == node) {
            spans.push(Span::styled(" = tied for best", t.tie));
        }
        Line::from(spans)
    } else if r.excluded {
        Line::from(vec![
            mark_span(t, Mark::NotRun),
            Span::styled(" excluded before Filter (PreFilter node subset)", t.not_run),
        ])
    } else {
        Line::from(vec![
            mark_span(t, Mark::RejectFirst),
            Span::styled(
                format!(" rejected by {}: ", r.plugin.as_deref().unwrap_or("?")),
                t.reject,
            ),
            Span::styled(r.reasons.clone(), t.reject),
        ])
    }
}

/// A gauge: requested, then the incoming pod's request, then free space.
pub fn gauge(t: &Theme, requested: i64, pod: i64, alloc: i64, width: usize) -> Vec<Span<'static>> {
    if alloc <= 0 {
        let style = if requested + pod > 0 {
            t.gauge_over
        } else {
            t.dim
        };
        return vec![Span::styled(
            crate::report::format::pad("none allocatable", width),
            style,
        )];
    }
    let cells =
        |v: i64| ((v.max(0) as i128 * width as i128 + alloc as i128 - 1) / alloc as i128) as usize;
    let req_c = cells(requested).min(width);
    let pod_c = cells(requested + pod).min(width).saturating_sub(req_c);
    let free_c = width.saturating_sub(req_c + pod_c);
    let over = requested + pod > alloc;
    vec![
        Span::styled("█".repeat(req_c), if over { t.gauge_over } else { t.gauge }),
        Span::styled(
            "▒".repeat(pod_c),
            if over { t.gauge_over } else { t.gauge_pod },
        ),
        Span::styled("░".repeat(free_c), t.not_run),
    ]
}

pub fn resources(info: &NodeInfo, pod: Option<&Pod>) -> Vec<(String, i64, i64, i64)> {
    let node = &info.node;
    let mut out = Vec::new();
    let pod_req = |r: &str| pod.map_or(0, |p| p.requests.get(r));
    for r in ["cpu", "memory", "ephemeral-storage"] {
        let a = node.allocatable.get(r);
        let q = info.requested.get(r);
        if a > 0 || q > 0 || pod_req(r) > 0 {
            out.push((r.to_string(), q, pod_req(r), a));
        }
    }
    out.push((
        "pods".into(),
        info.pods.len() as i64,
        i64::from(pod.is_some()),
        node.allocatable.allowed_pod_number,
    ));
    let mut scalars: Vec<&String> = node
        .allocatable
        .scalar
        .keys()
        .chain(info.requested.scalar.keys())
        .collect();
    if let Some(p) = pod {
        scalars.extend(p.requests.scalar.keys());
    }
    scalars.sort();
    scalars.dedup();
    for r in scalars {
        out.push((
            r.clone(),
            info.requested.get(r),
            pod_req(r),
            node.allocatable.get(r),
        ));
    }
    out
}

fn header(t: &Theme, s: String) -> Line<'static> {
    Line::from(Span::styled(s, t.header))
}

fn node_lines(
    t: &Theme,
    info: &NodeInfo,
    pod: Option<&Pod>,
    cur: Option<&Current>,
    no_replay: &str,
    width: u16,
    devices: &[NodeDevice],
) -> (Vec<Line<'static>>, Vec<Line<'static>>) {
    let node = &info.node;
    let mut left = Vec::new();
    let mut title = vec![Span::styled(format!("Node {}", node.name), t.title)];
    if node.unschedulable {
        title.push(Span::styled(" · cordoned", t.warning));
    }
    if node.ready == Some(false) {
        title.push(Span::styled(" · NotReady", t.warning));
    }
    left.push(Line::from(title));
    left.push(verdict_line(t, cur, &node.name, no_replay));
    left.push(Line::default());
    resource_lines(&mut left, t, info, pod, width);
    if let Some(c) = cur
        && let Some(&row) = c.view.row_of.get(&*node.name)
    {
        filter_lines(&mut left, t, c, row);
        claim_lines(&mut left, t, c, &node.name);
        if let Some(&fi) = c.view.feasible_of.get(&*node.name) {
            score_lines(&mut left, t, c, fi);
        }
    }

    let mut right = Vec::new();
    device_lines(&mut right, t, devices);
    taint_and_label_lines(&mut right, t, info);
    pod_lines(&mut right, t, info);
    (left, right)
}

/// A gauge per resource: requested (+ the pending pod's request) / allocatable.
fn resource_lines(
    out: &mut Vec<Line<'static>>,
    t: &Theme,
    info: &NodeInfo,
    pod: Option<&Pod>,
    width: u16,
) {
    let gauge_w = if width >= 100 { 20 } else { 16 };
    out.push(header(
        t,
        match pod {
            Some(p) => format!("Resources: requested ▒ +{} / allocatable", p.name),
            None => "Resources: requested / allocatable".into(),
        },
    ));
    let rows = resources(info, pod);
    let pct_of = |q: i64, p: i64, a: i64| if a > 0 { (q + p) * 100 / a } else { 0 };
    // As wide as the widest share (at least `100`): an overcommitted node's run past it.
    let pct_w = format::column_width(
        "100",
        rows.iter()
            .map(|(_, q, p, a)| pct_of(*q, *p, *a).to_string()),
    );
    for (r, q, p, a) in rows {
        let pct = pct_of(q, p, a);
        let mut spans = vec![Span::styled(format!("  {}", format::fit(&r, 12)), t.text)];
        spans.extend(gauge(t, q, p, a, gauge_w));
        let pct_style: Style = if q + p > a { t.gauge_over } else { t.text };
        spans.push(Span::styled(
            format!(" {}% ", format::pad_left(&pct.to_string(), pct_w)),
            pct_style,
        ));
        let amounts = if p > 0 {
            format!(
                "{} + {} / {}",
                format::amount(&r, q),
                format::amount(&r, p),
                format::amount(&r, a)
            )
        } else {
            format!("{} / {}", format::amount(&r, q), format::amount(&r, a))
        };
        spans.push(Span::styled(amounts, t.dim));
        out.push(Line::from(spans));
    }
}

/// What each filter plugin said about the node (view row `row`).
fn filter_lines(out: &mut Vec<Line<'static>>, t: &Theme, c: &Current, row: usize) {
    out.push(Line::default());
    out.push(header(t, "Filter plugins".into()));
    for (j, p) in c.view.plugins.iter().enumerate() {
        let m = c.view.cell(row, j);
        let reasons = c
            .view
            .cell_reasons(&c.trace, row, j)
            .map(|r| r.reasons.join(", "))
            .filter(|s| !s.is_empty())
            .or_else(|| {
                (c.view.rows[row].plugin.as_deref() == Some(p.as_str()))
                    .then(|| c.view.rows[row].reasons.clone())
            })
            .unwrap_or_default();
        out.push(Line::from(vec![
            Span::raw("  "),
            mark_span(t, m),
            Span::styled(format!(" {p:<28} "), t.text),
            Span::styled(
                if reasons.is_empty() {
                    m.label().to_string()
                } else {
                    reasons
                },
                mark_style(t, m),
            ),
        ]));
    }
}

/// Why the pod's claims cannot be allocated on `node`, when DynamicResources said so.
fn claim_lines(out: &mut Vec<Line<'static>>, t: &Theme, c: &Current, node: &str) {
    let claims: Vec<(&str, &[String])> = c
        .view
        .causes
        .as_ref()
        .map(Causes::claims)
        .unwrap_or_default()
        .iter()
        .flat_map(|cl| {
            cl.nodes
                .iter()
                .filter(|n| n.node == node)
                .map(move |n| (cl.name.as_str(), n.reasons.as_slice()))
        })
        .collect();
    if claims.is_empty() {
        return;
    }
    out.push(Line::default());
    out.push(header(t, "Claims that do not fit here".into()));
    for (claim, reasons) in claims {
        for r in reasons {
            out.push(Line::from(vec![
                Span::styled(format!("  {claim}: "), t.text),
                Span::styled(r.clone(), t.warning),
            ]));
        }
    }
}

/// Each score plugin's raw → normalized × weight for the `fi`th feasible node, and the
/// total under the weighted scores; each number as wide as the widest of its column.
fn score_lines(out: &mut Vec<Line<'static>>, t: &Theme, c: &Current, fi: usize) {
    out.push(Line::default());
    out.push(header(t, "Score plugins: raw → normalized × weight".into()));
    let total = c.trace.totals.get(fi).copied().unwrap_or(0).to_string();
    let rows: Vec<[String; 5]> = c
        .trace
        .scores
        .iter()
        .map(|s| {
            let raw = s.raw.get(fi).copied().unwrap_or(0);
            let norm = s.normalized.get(fi).copied().unwrap_or(0);
            [
                s.plugin.clone(),
                raw.to_string(),
                norm.to_string(),
                s.weight.to_string(),
                (norm * s.weight).to_string(),
            ]
        })
        .collect();
    let w = |k: usize, extra: &str| format::column_width(extra, rows.iter().map(|r| &r[k]));
    let (name_w, raw_w, norm_w, weight_w) = (w(0, "total"), w(1, ""), w(2, ""), w(3, ""));
    let score_w = w(4, &total);
    for [plugin, raw, norm, weight, score] in &rows {
        out.push(Line::from(vec![
            Span::styled(format!("  {} ", format::pad(plugin, name_w)), t.text),
            Span::styled(
                format!(
                    "{} → {} × {} = {}",
                    format::pad_left(raw, raw_w),
                    format::pad_left(norm, norm_w),
                    format::pad(weight, weight_w),
                    format::pad_left(score, score_w)
                ),
                t.text,
            ),
        ]));
    }
    // The total ends under the weighted scores.
    let numbers_w = raw_w + norm_w + weight_w + score_w + 9;
    out.push(Line::from(Span::styled(
        format!(
            "  {} {}",
            format::pad("total", name_w),
            format::pad_left(&total, numbers_w)
        ),
        t.title,
    )));
}

/// The node's DRA devices: properties and who holds each.
fn device_lines(out: &mut Vec<Line<'static>>, t: &Theme, devices: &[NodeDevice]) {
    if devices.is_empty() {
        return;
    }
    let free = devices.iter().filter(|d| d.allocated_to.is_none()).count();
    out.push(header(
        t,
        format!("Devices ({}, {free} free)", devices.len()),
    ));
    for d in devices {
        let mut spans = vec![Span::styled(format!("  {}/{} ", d.pool, d.name), t.text)];
        let props: Vec<&str> = d
            .attributes
            .iter()
            .chain(&d.capacity)
            .map(String::as_str)
            .collect();
        spans.push(Span::styled(props.join(" "), t.dim));
        match &d.allocated_to {
            Some(c) => spans.push(Span::styled(format!("  → {c}"), t.warning)),
            None => spans.push(Span::styled("  free".to_string(), t.text)),
        }
        out.push(Line::from(spans));
    }
    out.push(Line::default());
}

fn taint_and_label_lines(out: &mut Vec<Line<'static>>, t: &Theme, info: &NodeInfo) {
    let node = &info.node;
    out.push(header(t, format!("Taints ({})", node.taints.len())));
    if node.taints.is_empty() {
        out.push(Line::from(Span::styled("  none", t.dim)));
    }
    for taint in &node.taints {
        let v = taint
            .value
            .as_deref()
            .filter(|v| !v.is_empty())
            .map(|v| format!("={v}"))
            .unwrap_or_default();
        out.push(Line::from(Span::styled(
            format!("  {}{v}:{}", taint.key, taint.effect),
            t.text,
        )));
    }
    out.push(Line::default());
    out.push(header(t, format!("Labels ({})", node.labels.len())));
    for (k, v) in &node.labels {
        out.push(Line::from(vec![
            Span::styled(format!("  {k}"), t.dim),
            Span::styled(format!("={v}"), t.text),
        ]));
    }
    out.push(Line::default());
}

/// The pods on the node, highest priority first, with their requests.
fn pod_lines(out: &mut Vec<Line<'static>>, t: &Theme, info: &NodeInfo) {
    out.push(header(t, format!("Pods ({})", info.pods.len())));
    let mut pods: Vec<&std::sync::Arc<Pod>> = info.pods.iter().collect();
    pods.sort_by(|a, b| b.priority.cmp(&a.priority).then(a.key().cmp(&b.key())));
    // As wide as the longest name (up to 48 cells), padded by display width so the
    // numbers line up; longer names are cut in the middle, where pods of one
    // workload do not differ.
    let key_w = pods
        .iter()
        .map(|p| format::width(&p.key()))
        .max()
        .unwrap_or(0)
        .min(48);
    // The requests as wide as the widest of their column.
    let cpu_w = format::column_width("", pods.iter().map(|p| format::cpu(p.requests.milli_cpu)));
    let mem_w = format::column_width("", pods.iter().map(|p| format::bytes(p.requests.memory)));
    for p in pods {
        out.push(Line::from(vec![
            Span::styled(
                format!(
                    "  {} ",
                    format::pad(&format::middle(&p.key(), key_w), key_w)
                ),
                t.text,
            ),
            Span::styled(
                format!(
                    "cpu {} mem {} prio {}",
                    format::pad_left(&format::cpu(p.requests.milli_cpu), cpu_w),
                    format::pad_left(&format::bytes(p.requests.memory), mem_w),
                    p.priority
                ),
                t.dim,
            ),
        ]));
    }
}
