//! Two nodes side by side: every filter verdict, every weighted score with the
//! difference, resources, and one sentence on why A beat B (or did not).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::super::action::{Action, Tab};
use super::super::format;
use super::super::traces::Current;
use super::super::widgets::{Scroll, centered_note, scroll_text};
use super::node::resources;
use super::{
    Component, Effect, Handled, Hit, Hits, PaneCtx, mark_span, mark_style, scroll_by, traced_pod,
};
use crate::model::NodeInfo;
use crate::report::Mark;
use crate::theme::Theme;

/// Two nodes, A and B, side by side.
#[derive(Clone, Debug, Default)]
pub struct ComparePane {
    pub a: Option<String>,
    pub b: Option<String>,
    pub scroll: Scroll,
}

impl ComparePane {
    /// `c` on `node`: it becomes B when A waits for a partner, else a new A.
    pub fn mark(&mut self, node: String) -> Handled {
        match &self.a {
            Some(a) if *a != node && self.b.is_none() => {
                self.b = Some(node);
                self.scroll = Scroll::default();
                Handled::Then(Effect::OpenTab(Tab::Compare))
            }
            _ => {
                self.a = Some(node.clone());
                self.b = None;
                Handled::Then(Effect::Flash(
                    format!("{node} marked for comparison; press c on another node"),
                    false,
                ))
            }
        }
    }
}

impl Component for ComparePane {
    fn handle(&mut self, _ctx: &PaneCtx, action: &Action) -> Handled {
        if matches!(action, Action::SwapCompare) {
            std::mem::swap(&mut self.a, &mut self.b);
            return Handled::Yes;
        }
        scroll_by(&mut self.scroll, action)
    }

    scroll_keys!(page_and_wheel);

    fn draw(&mut self, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
        draw(self, ctx, f, area, hits)
    }
}

fn draw(pane: &mut ComparePane, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
    let t = ctx.theme.clone();
    let Some(cur) = ctx.current.cloned() else {
        return;
    };
    let (a, b) = match (&pane.a, &pane.b) {
        (Some(a), Some(b)) => (a.clone(), b.clone()),
        _ => {
            centered_note(
                f,
                area,
                t.dim,
                "c marks a node in Filters, Scores or Node; c on a second node compares them",
            );
            return;
        }
    };
    hits.rects.push((area, Hit::DetailPane));
    let pod = traced_pod(ctx);
    // A cell for the scrollbar, which would cover the Δ column's last digit.
    let width = area.width.saturating_sub(1) as usize;
    let lines = compare_lines(&t, ctx, &cur, pod.as_deref(), &a, &b, width);
    scroll_text(f, area, &t, lines, &mut pane.scroll);
}

struct Cols {
    label: usize,
    side: usize,
    /// The Δ column: as wide as its widest difference or its header.
    delta: usize,
}

fn row(
    c: &Cols,
    label: &str,
    a: (String, Style),
    b: (String, Style),
    delta: Option<(String, Style)>,
    t: &Theme,
) -> Line<'static> {
    let mut spans = vec![
        Span::styled(format!("  {} ", format::fit(label, c.label)), t.text),
        Span::styled(format::fit(&a.0, c.side), a.1),
        Span::raw(" "),
        Span::styled(format::fit(&b.0, c.side), b.1),
    ];
    if let Some((d, s)) = delta {
        spans.push(Span::styled(format::pad_left(&d, c.delta), s));
    }
    Line::from(spans)
}

fn verdict_text(cur: &Current, node: &str, plugin: usize) -> (Mark, String) {
    let Some(&r) = cur.view.row_of.get(node) else {
        return (Mark::NotRun, String::new());
    };
    let m = cur.view.cell(r, plugin);
    let reasons = cur
        .view
        .cell_reasons(&cur.trace, r, plugin)
        .map(|x| x.reasons.join(", "))
        .filter(|s| !s.is_empty())
        .or_else(|| {
            (cur.view.rows[r].plugin.as_deref() == Some(cur.view.plugins[plugin].as_str()))
                .then(|| cur.view.rows[r].reasons.clone())
        })
        .unwrap_or_else(|| m.label().to_string());
    (m, reasons)
}

fn why(cur: &Current, a: &str, b: &str) -> String {
    let v = &cur.view;
    let tr = &cur.trace;
    let rejection = |n: &str| -> Option<String> {
        let r = &v.rows[*v.row_of.get(n)?];
        if r.feasible {
            None
        } else if r.excluded {
            Some(format!("{n} was not evaluated (PreFilter node subset)"))
        } else {
            Some(format!(
                "{n} is rejected by {}: {}",
                r.plugin.as_deref().unwrap_or("?"),
                r.reasons
            ))
        }
    };
    match (rejection(a), rejection(b)) {
        (Some(ra), Some(rb)) => return format!("neither fits: {ra}; {rb}"),
        (None, Some(rb)) => return format!("{a} passes every filter; {rb}"),
        (Some(ra), None) => return format!("{b} passes every filter; {ra}"),
        (None, None) => {}
    }
    let (Some(&fa), Some(&fb)) = (v.feasible_of.get(a), v.feasible_of.get(b)) else {
        return format!("{a} or {b} was not evaluated in this cycle");
    };
    let ta = tr.totals.get(fa).copied().unwrap_or(0);
    let tb = tr.totals.get(fb).copied().unwrap_or(0);
    let mut diffs: Vec<(i64, &str)> = tr
        .scores
        .iter()
        .map(|s| {
            let x = s.normalized.get(fa).copied().unwrap_or(0) * s.weight;
            let y = s.normalized.get(fb).copied().unwrap_or(0) * s.weight;
            (x - y, s.plugin.as_str())
        })
        .filter(|(d, _)| *d != 0)
        .collect();
    diffs.sort_by(|x, y| y.0.abs().cmp(&x.0.abs()).then(x.1.cmp(y.1)));
    let parts: Vec<String> = diffs
        .iter()
        .map(|(d, p)| format!("{p} {}", format::signed(*d)))
        .collect();
    if ta == tb {
        format!(
            "{a} and {b} tie at {ta}{}; kube-scheduler picks among ties at random",
            if parts.is_empty() {
                String::new()
            } else {
                format!(" ({})", parts.join(", "))
            }
        )
    } else {
        let (w, l, d) = if ta > tb {
            (a, b, ta - tb)
        } else {
            (b, a, tb - ta)
        };
        let parts = if ta > tb {
            parts
        } else {
            diffs
                .iter()
                .map(|(d, p)| format!("{p} {}", format::signed(-*d)))
                .collect()
        };
        format!("{w} beats {l} by {d}: {}", parts.join(", "))
    }
}

fn compare_lines(
    t: &Theme,
    ctx: &PaneCtx,
    cur: &Current,
    pod: Option<&crate::model::Pod>,
    a: &str,
    b: &str,
    width: usize,
) -> Vec<Line<'static>> {
    let label = 26.min(width / 3);
    let delta = format::column_width(
        "Δ",
        score_deltas(cur, a, b).iter().map(|d| format::signed(*d)),
    );
    let side = (width.saturating_sub(label + 3 + 1 + delta) / 2).max(6);
    let c = Cols { label, side, delta };
    let mut out = Vec::new();
    out.push(Line::from(vec![
        Span::styled("A ", t.key),
        Span::styled(a.to_string(), t.title),
        Span::styled("  vs  ", t.dim),
        Span::styled("B ", t.key),
        Span::styled(b.to_string(), t.title),
        Span::styled("   (x swaps)", t.dim),
    ]));
    for l in super::super::widgets::wrap(&why(cur, a, b), width.saturating_sub(2)) {
        out.push(Line::from(Span::styled(format!("  {l}"), t.warning)));
    }
    out.push(Line::default());
    out.push(row(
        &c,
        "",
        (format!("A {a}"), t.header),
        (format!("B {b}"), t.header),
        Some(("Δ".into(), t.header)),
        t,
    ));

    out.push(Line::from(Span::styled("Filter", t.header)));
    for (j, p) in cur.view.plugins.iter().enumerate() {
        let (ma, ra) = verdict_text(cur, a, j);
        let (mb, rb) = verdict_text(cur, b, j);
        out.push(row(
            &c,
            p,
            (format!("{} {ra}", ma.symbol()), mark_style(t, ma)),
            (format!("{} {rb}", mb.symbol()), mark_style(t, mb)),
            None,
            t,
        ));
    }
    score_rows(&mut out, t, &c, cur, a, b);
    if let (Some(na), Some(nb)) = (ctx.cluster.node(a), ctx.cluster.node(b)) {
        resource_rows(&mut out, t, &c, pod, na, nb);
    }
    out.push(Line::default());
    out.push(Line::from(vec![
        mark_span(t, Mark::Pass),
        Span::styled(" pass  ", t.dim),
        mark_span(t, Mark::RejectFirst),
        Span::styled(" reject  ", t.dim),
        mark_span(t, Mark::Skip),
        Span::styled(" skip  ", t.dim),
        mark_span(t, Mark::NotRun),
        Span::styled(" not run", t.dim),
    ]));
    out
}

/// The differences of the Score rows, A − B: each plugin's weighted score, then the
/// totals (0 for a node not scored); none when neither node is feasible.
fn score_deltas(cur: &Current, a: &str, b: &str) -> Vec<i64> {
    let fa = cur.view.feasible_of.get(a).copied();
    let fb = cur.view.feasible_of.get(b).copied();
    if fa.is_none() && fb.is_none() {
        return Vec::new();
    }
    let weighted = |fi: Option<usize>, s: &crate::engine::trace::PluginScores| {
        fi.map_or(0, |i| s.normalized.get(i).copied().unwrap_or(0) * s.weight)
    };
    let total = |fi: Option<usize>| fi.and_then(|i| cur.trace.totals.get(i).copied());
    let mut out: Vec<i64> = cur
        .trace
        .scores
        .iter()
        .map(|s| weighted(fa, s) - weighted(fb, s))
        .collect();
    out.push(total(fa).unwrap_or(0) - total(fb).unwrap_or(0));
    out
}

/// Each score plugin's weighted (and raw) score on A and B with the difference, then
/// the totals and ranks; nothing when neither node is feasible.
fn score_rows(out: &mut Vec<Line<'static>>, t: &Theme, c: &Cols, cur: &Current, a: &str, b: &str) {
    let deltas = score_deltas(cur, a, b);
    if deltas.is_empty() {
        return;
    }
    let fa = cur.view.feasible_of.get(a).copied();
    let fb = cur.view.feasible_of.get(b).copied();
    out.push(Line::default());
    out.push(Line::from(Span::styled(
        "Score (weighted; raw in brackets)",
        t.header,
    )));
    let cell = |fi: Option<usize>, s: &crate::engine::trace::PluginScores| -> String {
        match fi {
            Some(i) => {
                let n = s.normalized.get(i).copied().unwrap_or(0);
                let r = s.raw.get(i).copied().unwrap_or(0);
                format!("{} [{r}]", n * s.weight)
            }
            None => "-".into(),
        }
    };
    for (s, &d) in cur.trace.scores.iter().zip(&deltas) {
        let (ta, tb) = (cell(fa, s), cell(fb, s));
        let ds = if d > 0 {
            t.pass
        } else if d < 0 {
            t.reject
        } else {
            t.dim
        };
        out.push(row(
            c,
            &format!("{} ×{}", s.plugin, s.weight),
            (ta, t.text),
            (tb, t.text),
            Some((format::signed(d), ds)),
            t,
        ));
    }
    let total = |fi: Option<usize>| fi.and_then(|i| cur.trace.totals.get(i).copied());
    let rank = |fi: Option<usize>| {
        fi.map(|i| format!(" (rank {})", cur.view.ranks[i]))
            .unwrap_or_default()
    };
    let (ta, tb) = (total(fa), total(fb));
    out.push(row(
        c,
        "total",
        (
            ta.map(|x| format!("{x}{}", rank(fa))).unwrap_or("-".into()),
            t.title,
        ),
        (
            tb.map(|x| format!("{x}{}", rank(fb))).unwrap_or("-".into()),
            t.title,
        ),
        Some((format::signed(deltas.last().copied().unwrap_or(0)), t.title)),
        t,
    ));
}

/// Each resource's requested (+ the pod's) / allocatable on A and B, then taints and pods.
fn resource_rows(
    out: &mut Vec<Line<'static>>,
    t: &Theme,
    c: &Cols,
    pod: Option<&crate::model::Pod>,
    na: &NodeInfo,
    nb: &NodeInfo,
) {
    out.push(Line::default());
    out.push(Line::from(Span::styled(
        "Resources (requested + pod / allocatable)",
        t.header,
    )));
    let ra = resources(na, pod);
    let rb = resources(nb, pod);
    let mut names: Vec<&String> = ra.iter().chain(&rb).map(|r| &r.0).collect();
    names.sort();
    names.dedup();
    let fmt = |list: &[(String, i64, i64, i64)], n: &str| -> (String, Style) {
        match list.iter().find(|r| r.0 == n) {
            Some((r, q, p, a)) => {
                let pct = if *a > 0 { (q + p) * 100 / a } else { 0 };
                let style = if q + p > *a { t.gauge_over } else { t.text };
                (
                    format!(
                        "{}/{} {pct}%",
                        format::amount(r, q + p),
                        format::amount(r, *a)
                    ),
                    style,
                )
            }
            None => ("-".into(), t.dim),
        }
    };
    for &n in &names {
        out.push(row(c, n, fmt(&ra, n), fmt(&rb, n), None, t));
    }
    out.push(row(
        c,
        "taints",
        (na.node.taints.len().to_string(), t.text),
        (nb.node.taints.len().to_string(), t.text),
        None,
        t,
    ));
    // The pods resource row already counts them (with the node's limit).
    if !names.iter().any(|n| n.as_str() == "pods") {
        out.push(row(
            c,
            "pods",
            (na.pods.len().to_string(), t.text),
            (nb.pods.len().to_string(), t.text),
            None,
            t,
        ));
    }
}
