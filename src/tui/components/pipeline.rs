//! The selected pod's walk through the extension points, one row per point, with the
//! plugins of the selected point below.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use super::super::action::{Action, Tab};
use super::super::widgets::{Cursor, virtual_table};
use super::{
    Component, Effect, Handled, Hit, Hits, PaneCtx, mark_span, mark_style, move_cursor, nav,
};
use crate::engine::trace::Trace;
use crate::report::whatif::{WhatIfComparison, WhatIfSide};
use crate::report::{Headline, Mark, Recorded, Stage, TraceView, plural};
use crate::theme::Theme;

/// The extension points of the current trace; enter opens a point's tab.
#[derive(Clone, Debug, Default)]
pub struct PipelinePane {
    pub cursor: Cursor,
    /// The snapshot's record beside the trace shown, computed once per trace (keyed
    /// by the trace's address).
    recorded: Option<(usize, Option<std::sync::Arc<Recorded>>)>,
}

impl PipelinePane {
    fn len(ctx: &PaneCtx) -> usize {
        ctx.current.map_or(0, |c| c.view.stages.len())
    }
}

impl Component for PipelinePane {
    fn handle(&mut self, ctx: &PaneCtx, action: &Action) -> Handled {
        if let Some(d) = nav(action, self.page()) {
            move_cursor(&mut self.cursor, d, Self::len(ctx));
            return Handled::Yes;
        }
        if !matches!(action, Action::Enter) {
            return Handled::No;
        }
        let tab: Option<Tab> = ctx
            .current
            .and_then(|c| c.view.stages.get(self.cursor.selected))
            .and_then(|s| s.detail.map(Tab::from));
        tab.map_or(Handled::Yes, |t| Handled::Then(Effect::OpenTab(t)))
    }

    fn page(&self) -> usize {
        self.cursor.page()
    }

    fn scroll(&mut self, ctx: &PaneCtx, delta: isize) -> Handled {
        self.cursor.scroll(delta, Self::len(ctx));
        Handled::Yes
    }

    fn cursor(&self) -> Option<usize> {
        Some(self.cursor.selected)
    }

    fn click_row(&mut self, ctx: &PaneCtx, i: usize) -> Option<Handled> {
        super::click_cursor(&mut self.cursor, i, Self::len(ctx))
    }

    fn draw(&mut self, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
        draw(self, ctx, f, area, hits)
    }
}

fn draw(pane: &mut PipelinePane, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
    let Some(cur) = ctx.current.cloned() else {
        return;
    };
    let t = ctx.theme.clone();
    let view = &cur.view;
    let at = std::sync::Arc::as_ptr(&cur.trace) as usize;
    if pane.recorded.as_ref().is_none_or(|(k, _)| *k != at) {
        let r = ctx
            .recorded_snapshot()
            .and_then(|c| Recorded::of(&cur.trace, c))
            .filter(Recorded::worth_showing)
            .map(std::sync::Arc::new);
        pane.recorded = Some((at, r));
    }
    let recorded = pane.recorded.as_ref().and_then(|(_, r)| r.clone());
    let mut head = head_lines(ctx, &cur.trace, view, &t);
    if let Some(r) = &recorded {
        // Under the headline, as the `explain` table has it under the verdict.
        head.splice(1..1, recorded_lines(r, &t));
    }
    let stages_h =
        (view.stages.len() as u16 + 1).min(area.height.saturating_sub(head.len() as u16));
    let [head_area, stages_area, detail_area] = Layout::vertical([
        Constraint::Length(head.len() as u16),
        Constraint::Length(stages_h),
        Constraint::Min(0),
    ])
    .areas(area);
    f.render_widget(Paragraph::new(head), head_area);
    draw_stages(pane, ctx, view, f, stages_area, hits);
    if detail_area.height < 2 {
        return;
    }
    if let Some(stage) = view.stages.get(pane.cursor.selected) {
        draw_stage_plugins(stage, &t, f, detail_area);
    }
}

/// The answer's headline (as report decides it), the real scheduler's word, and what
/// is not modelled.
fn head_lines<'a>(ctx: &PaneCtx, trace: &Trace, view: &TraceView, t: &Theme) -> Vec<Line<'a>> {
    let headline = Headline::of(trace, view);
    let style = match headline {
        Headline::Schedulable { waits: Some(_), .. } => t.waiting,
        Headline::Schedulable { .. } => t.chosen,
        Headline::Preempting { .. } | Headline::Unschedulable => t.reject,
        Headline::NotReplayed { .. } => t.warning,
        Headline::Gated { .. } => t.gated,
        Headline::Error { .. } => t.error,
    };
    let mut first = vec![
        Span::styled(format!("{} ", headline.symbol()), style),
        Span::styled(headline.short(), style),
    ];
    if let Headline::Schedulable { .. } = headline {
        first.push(Span::styled(format!("  · {}", view.headline), t.dim));
    }
    let mut head = vec![Line::from(first)];
    if let Some(cmp) = ctx.current.and_then(|c| c.whatif.as_deref()) {
        head.push(whatif_line(cmp, t));
    }
    if let Some(w) = ctx.scheduler_word() {
        let style = if w.differs { t.warning } else { t.dim };
        let mark = if w.differs { "≠ " } else { "= " };
        head.push(Line::from(vec![
            Span::styled(mark, style),
            Span::styled(w.line(ctx.now), style),
        ]));
    }
    for nm in trace.not_modelled.iter().take(3) {
        head.push(Line::from(Span::styled(
            format!("⚠ not modelled: {}: {}", nm.plugin, nm.what),
            t.warning,
        )));
    }
    if trace.not_modelled.len() > 3 {
        head.push(Line::from(Span::styled(
            format!("⚠ and {} more not modelled", trace.not_modelled.len() - 3),
            t.warning,
        )));
    }
    head
}

/// A snapshot's record: the real scheduler's recorded word beside the replay (with
/// the likely causes when they differ) and what the snapshot lacks for the pod.
fn recorded_lines(r: &Recorded, t: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    if let Some(w) = &r.word {
        let (mark, style) = if w.word.differs {
            ("≠ ", t.warning)
        } else {
            ("= ", t.dim)
        };
        out.push(Line::from(vec![
            Span::styled(mark, style),
            Span::styled(format!("recorded: {} · {}", w.verdict(), w.source()), style),
        ]));
        out.push(Line::from(Span::styled(
            format!("  {}", crate::report::format::one_line(&w.word.message)),
            style,
        )));
        if w.word.differs {
            out.push(Line::from(Span::styled("  likely causes:", t.warning)));
            for c in &w.causes {
                out.push(Line::from(Span::styled(format!("  · {c}"), t.warning)));
            }
        }
    }
    let style = if r.completeness.is_complete() {
        t.dim
    } else {
        t.warning
    };
    out.push(Line::from(Span::styled(
        format!("snapshot {}", r.completeness.line()),
        style,
    )));
    out
}

/// `what-if: Unschedulable, 0 feasible → Scheduled, 3 feasible, on gen-b1 (total
/// 187)`: the real model's answer beside the edited one's.
fn whatif_line(cmp: &WhatIfComparison, t: &Theme) -> Line<'static> {
    let side = |s: &WhatIfSide| {
        let mut text = format!("{}, {} feasible", s.verdict, s.feasible);
        if let Some(n) = &s.selected_node {
            text.push_str(&format!(", on {n}"));
            if let Some(total) = s.total {
                text.push_str(&format!(" (total {total})"));
            }
        }
        text
    };
    let changed = cmp.before != cmp.after;
    let mut spans = vec![
        Span::styled("what-if: ", t.warning),
        Span::styled(format!("real {}", side(&cmp.before)), t.dim),
        Span::styled(" → ", t.warning),
        Span::styled(
            format!("edited {}", side(&cmp.after)),
            if changed { t.warning } else { t.dim },
        ),
    ];
    if !changed {
        spans.push(Span::styled(" (no change)", t.dim));
    }
    Line::from(spans)
}

/// One row per extension point: its mark, how many plugins ran, its summary.
fn draw_stages(
    pane: &mut PipelinePane,
    ctx: &PaneCtx,
    view: &TraceView,
    f: &mut Frame,
    area: Rect,
    hits: &mut Hits,
) {
    let t = ctx.theme;
    let focused = ctx.focus == super::super::action::Focus::Detail;
    let widths = [
        Constraint::Length(1),
        Constraint::Length(10),
        Constraint::Length(11),
        Constraint::Fill(1),
    ];
    let rows_area = virtual_table(
        f,
        area,
        t,
        Some(Row::new(["", "point", "plugins", "result"])),
        &widths,
        view.stages.len(),
        &mut pane.cursor,
        focused,
        |i| {
            let s = &view.stages[i];
            let ran = s.plugins.iter().filter(|p| p.mark != Mark::NotRun).count();
            let count = if s.plugins.is_empty() {
                String::new()
            } else {
                format!("{ran} plugin{}", plural(ran))
            };
            let summary_style = match s.mark {
                Mark::NotRun | Mark::Skip => t.dim,
                m => mark_style(t, m),
            };
            Row::new(vec![
                Cell::from(mark_span(t, s.mark)),
                Cell::from(Span::styled(s.name, mark_style(t, s.mark).patch(t.text))),
                Cell::from(Span::styled(count, t.dim)),
                Cell::from(Span::styled(s.summary.clone(), summary_style)),
            ])
        },
    );
    hits.rects.push((rows_area, Hit::DetailRows));
    hits.offsets.push((Hit::DetailRows, pane.cursor.offset));
}

/// The selected point's plugins, each with its mark and detail, under a title.
fn draw_stage_plugins(stage: &Stage, t: &Theme, f: &mut Frame, area: Rect) {
    let [title_area, list_area] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    // Plugins sit under the point names.
    let list_area = Rect {
        x: list_area.x + 2,
        width: list_area.width.saturating_sub(2),
        ..list_area
    };
    let mut title = vec![
        Span::styled(format!("─ {} ", stage.name), t.header),
        Span::styled(
            if stage.plugins.is_empty() {
                "(no plugin results)".to_string()
            } else {
                format!(
                    "{} plugin{}",
                    stage.plugins.len(),
                    plural(stage.plugins.len())
                )
            },
            t.dim,
        ),
    ];
    if let Some(tab) = stage.detail.map(super::super::action::Tab::from) {
        title.push(Span::styled(format!("  enter: {} tab", tab.title()), t.dim));
    }
    f.render_widget(Paragraph::new(Line::from(title)), title_area);
    let rows: Vec<Row> = stage
        .plugins
        .iter()
        .take(list_area.height as usize)
        .map(|p| {
            Row::new(vec![
                Cell::from(mark_span(t, p.mark)),
                Cell::from(p.name.clone()),
                Cell::from(Span::styled(p.mark.label(), mark_style(t, p.mark))),
                Cell::from(Span::styled(p.detail.clone(), t.dim)),
            ])
        })
        .collect();
    let name_w = stage
        .plugins
        .iter()
        .map(|p| crate::report::format::width(&p.name))
        .max()
        .unwrap_or(8)
        .clamp(8, 32) as u16;
    f.render_widget(
        Table::new(
            rows,
            [
                Constraint::Length(1),
                Constraint::Length(name_w),
                Constraint::Length(15),
                Constraint::Fill(1),
            ],
        ),
        list_area,
    );
}
