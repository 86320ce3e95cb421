//! Simulation mode: the selected pod's scheduling attempts, newest first, with time,
//! outcome and what happened; the selected attempt's trace fills the other tabs.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row};

use super::super::action::{Action, Focus, Tab};
use super::super::playback::{AttemptOutcome, HistoryEntry, offset};
use super::super::widgets::{Cursor, centered_note, virtual_table};
use super::{Component, Effect, Handled, Hit, Hits, PaneCtx, move_cursor, nav};
use crate::theme::Theme;

fn outcome_style(t: &Theme, o: AttemptOutcome) -> Style {
    match o {
        AttemptOutcome::Bound | AttemptOutcome::Allowed => t.bound,
        AttemptOutcome::Waiting => t.waiting,
        AttemptOutcome::Rejected | AttemptOutcome::Failed => t.unschedulable,
        AttemptOutcome::Gated => t.gated,
        AttemptOutcome::Scheduling | AttemptOutcome::Reserved => t.pending,
    }
}

/// The selected pod's attempts, newest first; the row picked pins its trace.
#[derive(Clone, Debug, Default)]
pub struct HistoryPane {
    pub cursor: Cursor,
}

impl HistoryPane {
    /// The selected pod's attempts, newest first.
    pub fn rows(ctx: &PaneCtx) -> Vec<HistoryEntry> {
        let (Some(sim), Some(key)) = (ctx.sim, ctx.selected_pod) else {
            return Vec::new();
        };
        sim.history(key).iter().rev().cloned().collect()
    }

    fn len(ctx: &PaneCtx) -> usize {
        match (ctx.sim, ctx.selected_pod) {
            (Some(sim), Some(key)) => sim.history(key).len(),
            _ => 0,
        }
    }

    /// The cursor moved: show that attempt (the top row follows the latest).
    fn pin(&self, ctx: &PaneCtx) -> Handled {
        let pin = match self.cursor.selected {
            0 => None,
            i => Self::rows(ctx).get(i).map(|h| h.attempt),
        };
        Handled::Then(Effect::Pin(pin))
    }
}

impl Component for HistoryPane {
    fn handle(&mut self, ctx: &PaneCtx, action: &Action) -> Handled {
        if let Some(d) = nav(action, self.page()) {
            move_cursor(&mut self.cursor, d, Self::len(ctx));
            return self.pin(ctx);
        }
        match action {
            Action::Enter if Self::len(ctx) > 0 => Handled::Then(Effect::OpenTab(Tab::Pipeline)),
            Action::Enter => Handled::Yes,
            _ => Handled::No,
        }
    }

    fn page(&self) -> usize {
        self.cursor.page()
    }

    fn scroll(&mut self, ctx: &PaneCtx, delta: isize) -> Handled {
        self.cursor.scroll(delta, Self::len(ctx));
        self.pin(ctx)
    }

    fn cursor(&self) -> Option<usize> {
        Some(self.cursor.selected)
    }

    fn click_row(&mut self, ctx: &PaneCtx, i: usize) -> Option<Handled> {
        super::click_cursor(&mut self.cursor, i, Self::len(ctx))?;
        Some(self.pin(ctx))
    }

    fn draw(&mut self, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
        draw(self, ctx, f, area, hits)
    }
}

fn draw(pane: &mut HistoryPane, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
    let t = ctx.theme.clone();
    if ctx.sim.is_none() {
        centered_note(
            f,
            area,
            t.dim,
            "the History tab lists a simulation's attempts: start with --simulate",
        );
        return;
    }
    let rows = HistoryPane::rows(ctx);
    // The picked attempt keeps its row as newer attempts arrive above it.
    pane.cursor.selected = ctx
        .pin
        .and_then(|pin| rows.iter().position(|h| h.attempt == pin))
        .unwrap_or(0);
    let shown = ctx.current.and_then(|c| c.key.attempt);
    let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
    let n = rows.len();
    f.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(format!("{n} attempt{}", crate::report::plural(n)), t.title),
            Span::styled(
                "  · ↑↓ shows that attempt's trace in every tab · enter: Pipeline",
                t.dim,
            ),
        ])),
        head,
    );
    if n == 0 {
        centered_note(
            f,
            body,
            t.dim,
            "not attempted yet (n runs the next cycle; space plays)",
        );
        return;
    }
    let widths = [
        Constraint::Length(2),
        Constraint::Length(4),
        Constraint::Length(6),
        Constraint::Length(8),
        Constraint::Length(17),
        Constraint::Length(10),
        Constraint::Fill(1),
    ];
    let focused = ctx.focus == Focus::Detail;
    let rows_area = virtual_table(
        f,
        body,
        &t,
        Some(Row::new([
            "", "#", "cycle", "time", "from", "outcome", "message",
        ])),
        &widths,
        n,
        &mut pane.cursor,
        focused,
        |i| {
            let h = &rows[i];
            let mark = if shown == Some(h.attempt) { "▸" } else { "" };
            Row::new(vec![
                Cell::from(Span::styled(mark, t.key)),
                Cell::from(Line::from(h.pod_attempt.to_string()).right_aligned()),
                Cell::from(Line::from(format!("#{}", h.attempt + 1)).right_aligned()),
                Cell::from(Span::styled(offset(h.at_ms), t.dim)),
                Cell::from(Span::styled(h.from.as_str(), t.dim)),
                Cell::from(Span::styled(
                    h.outcome.label(),
                    outcome_style(&t, h.outcome),
                )),
                Cell::from(h.message.clone()),
            ])
        },
    );
    hits.rects.push((rows_area, Hit::DetailRows));
    hits.offsets.push((Hit::DetailRows, pane.cursor.offset));
}
