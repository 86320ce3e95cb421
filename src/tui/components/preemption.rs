//! PostFilter: whether it ran, each plugin's answer, the nominated node and the victims.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::super::action::Action;
use super::super::format;
use super::super::widgets::{Scroll, scroll_text, wrap};
use super::{Component, Effect, Handled, Hit, Hits, PaneCtx, mark_span, scroll_by};
use crate::report::{Mark, plural};

/// PostFilter's answer, scrolled.
#[derive(Clone, Debug, Default)]
pub struct PreemptionPane {
    pub scroll: Scroll,
}

impl Component for PreemptionPane {
    fn handle(&mut self, ctx: &PaneCtx, action: &Action) -> Handled {
        if matches!(action, Action::Enter) {
            return match self.node(ctx) {
                Some(n) => Handled::Then(Effect::OpenNode(n)),
                None => Handled::Yes,
            };
        }
        scroll_by(&mut self.scroll, action)
    }

    scroll_keys!(page_and_wheel);

    /// The nominated node.
    fn node(&self, ctx: &PaneCtx) -> Option<String> {
        ctx.current?
            .trace
            .post_filter
            .as_ref()?
            .nominated_node
            .clone()
    }

    fn draw(&mut self, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
        draw(self, ctx, f, area, hits)
    }
}

fn draw(pane: &mut PreemptionPane, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
    let Some(cur) = ctx.current.cloned() else {
        return;
    };
    let t = ctx.theme.clone();
    let trace = &cur.trace;
    let width = area.width as usize;
    let mut lines: Vec<Line> = Vec::new();
    hits.rects.push((area, Hit::DetailPane));

    let Some(pf) = &trace.post_filter else {
        let why = if trace.feasible.is_empty() {
            "PostFilter did not run in this cycle."
        } else {
            "PostFilter did not run: PostFilter (preemption) runs only when no node is feasible."
        };
        lines.push(Line::from(vec![
            mark_span(&t, Mark::NotRun),
            Span::styled(format!(" {why}"), t.dim),
        ]));
        lines.push(Line::from(Span::styled(
            format!(
                "  {}/{} nodes are feasible for {}.",
                trace.feasible.len(),
                trace.nodes_total,
                trace.pod
            ),
            t.dim,
        )));
        scroll_text(f, area, &t, lines, &mut pane.scroll);
        return;
    };

    lines.push(Line::from(Span::styled(
        "PostFilter ran because no node is feasible",
        t.header,
    )));
    if let Some(fe) = &trace.fit_error {
        for l in wrap(fe, width.saturating_sub(2)) {
            lines.push(Line::from(Span::styled(format!("  {l}"), t.reject)));
        }
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled("Plugins", t.header)));
    for p in &pf.plugins {
        let m = Mark::of_code(p.code);
        let msg = p.reasons.join(", ");
        let mut spans = vec![
            Span::raw("  "),
            mark_span(&t, m),
            Span::styled(format!(" {:<24} ", p.plugin), t.text),
            Span::styled(p.code.as_str(), super::mark_style(&t, m)),
        ];
        if !msg.is_empty() {
            spans.push(Span::styled(format!(": {msg}"), t.dim));
        }
        lines.push(Line::from(spans));
    }
    lines.push(Line::default());
    match &pf.nominated_node {
        Some(n) => {
            lines.push(Line::from(vec![
                Span::styled("Nominated node: ", t.header),
                Span::styled(n.clone(), t.chosen),
                Span::styled("  (enter: node detail)", t.dim),
            ]));
            lines.push(Line::default());
            lines.push(Line::from(Span::styled(
                format!(
                    "Victims ({}): evicted so the pod fits on {n}",
                    pf.victims.len()
                ),
                t.header,
            )));
            let victims: Vec<(&String, String, String)> = pf
                .victims
                .iter()
                .map(|v| match ctx.cluster.pod(v) {
                    Some(p) => (
                        v,
                        p.priority.to_string(),
                        format!(
                            "cpu {} mem {}",
                            format::cpu(p.requests.milli_cpu),
                            format::bytes(p.requests.memory)
                        ),
                    ),
                    None => (v, "?".into(), String::new()),
                })
                .collect();
            // Names and priorities as wide as the widest (system-node-critical is
            // 2000001000), so the columns after them line up.
            let name_w = format::column_width("", victims.iter().map(|v| v.0));
            let prio_w = format::column_width("", victims.iter().map(|v| &v.1));
            for (v, prio, res) in victims {
                lines.push(Line::from(vec![
                    Span::styled("  ✗ ", t.reject),
                    Span::styled(format!("{} ", format::pad(v, name_w)), t.text),
                    Span::styled(
                        format!("priority {}  {res}", format::pad_left(&prio, prio_w)),
                        t.dim,
                    ),
                ]));
            }
            if pf.victims.is_empty() {
                lines.push(Line::from(Span::styled("  none", t.dim)));
            }
        }
        None => {
            lines.push(Line::from(vec![
                mark_span(&t, Mark::Reject),
                Span::styled(" no node nominated: preemption cannot help", t.reject),
            ]));
        }
    }
    if !pf.message.is_empty() {
        lines.push(Line::default());
        lines.push(Line::from(Span::styled("Message", t.header)));
        for l in wrap(&pf.message, width.saturating_sub(2)) {
            lines.push(Line::from(Span::styled(format!("  {l}"), t.text)));
        }
    }
    if pf.nominated_node.is_some() {
        let n = pf.victims.len();
        lines.push(Line::default());
        lines.push(Line::from(Span::styled(
        format!(
            "kube-scheduler would evict {n} pod{} and retry the pod later; this replay only shows the plan.",
            plural(n)
        ),
        t.dim,
    )));
    }
    scroll_text(f, area, &t, lines, &mut pane.scroll);
}
