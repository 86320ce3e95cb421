//! Simulation mode: the selected pod's scheduling attempts, newest first, with time,
//! outcome and what happened; the selected attempt's trace fills the other tabs.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row};

use super::super::action::{Action, Focus, Tab};
use super::super::format;
use super::super::playback::{AttemptOutcome, HistoryEntry, offset};
use super::super::widgets::{Cursor, centered_note, virtual_table, wrap_cell};
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

/// The selected pod's attempts, newest first; the row picked pins its trace. A long
/// message wraps onto more lines under its attempt (a cut one can hide the cause), and
/// every line of an attempt picks it.
#[derive(Clone, Debug, Default)]
pub struct HistoryPane {
    pub cursor: Cursor,
    /// Cells of the message column at the last draw (messages wrap to it).
    pub message_width: usize,
}

impl HistoryPane {
    /// The selected pod's attempts, newest first.
    pub fn rows(ctx: &PaneCtx) -> Vec<HistoryEntry> {
        let (Some(sim), Some(key)) = (ctx.sim, ctx.selected_pod) else {
            return Vec::new();
        };
        sim.history(key).iter().rev().cloned().collect()
    }

    /// The table's lines at the last draw's width.
    fn lines(&self, ctx: &PaneCtx) -> Vec<HistoryLine> {
        history_lines(&Self::rows(ctx), self.message_width)
    }

    /// The cursor moved: show the attempt of its line (the first attempt's lines
    /// follow the latest).
    fn pin(&self, ctx: &PaneCtx) -> Handled {
        let rows = Self::rows(ctx);
        let row = history_lines(&rows, self.message_width)
            .get(self.cursor.selected)
            .map_or(0, |l| l.row);
        let pin = match row {
            0 => None,
            i => rows.get(i).map(|h| h.attempt),
        };
        Handled::Then(Effect::Pin(pin))
    }
}

/// A line of the History table: the attempt (`row`, newest first) and a line of its
/// message, the first of which carries the attempt's other columns.
struct HistoryLine {
    row: usize,
    first: bool,
    message: String,
}

/// Each attempt's message wrapped to `width` cells, as the Filters summary wraps its
/// causes ([`wrap_cell`]).
fn history_lines(rows: &[HistoryEntry], width: usize) -> Vec<HistoryLine> {
    let mut out = Vec::with_capacity(rows.len());
    for (row, h) in rows.iter().enumerate() {
        for (k, message) in wrap_cell(&h.message, width).into_iter().enumerate() {
            out.push(HistoryLine {
                row,
                first: k == 0,
                message,
            });
        }
    }
    out
}

impl Component for HistoryPane {
    fn handle(&mut self, ctx: &PaneCtx, action: &Action) -> Handled {
        let len = self.lines(ctx).len();
        if let Some(d) = nav(action, self.page()) {
            move_cursor(&mut self.cursor, d, len);
            return self.pin(ctx);
        }
        match action {
            Action::Enter if len > 0 => Handled::Then(Effect::OpenTab(Tab::Pipeline)),
            Action::Enter => Handled::Yes,
            _ => Handled::No,
        }
    }

    fn page(&self) -> usize {
        self.cursor.page()
    }

    fn scroll(&mut self, ctx: &PaneCtx, delta: isize) -> Handled {
        let len = self.lines(ctx).len();
        self.cursor.scroll(delta, len);
        self.pin(ctx)
    }

    fn cursor(&self) -> Option<usize> {
        Some(self.cursor.selected)
    }

    fn click_row(&mut self, ctx: &PaneCtx, i: usize) -> Option<Handled> {
        let len = self.lines(ctx).len();
        super::click_cursor(&mut self.cursor, i, len)?;
        Some(self.pin(ctx))
    }

    fn draw(&mut self, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
        draw(self, ctx, f, area, hits)
    }
}

/// Widths of the History table's columns before the message: each as wide as its
/// widest value or its header (numbers are never cut).
struct Columns {
    attempt: u16,
    cycle: u16,
    time: u16,
    from: u16,
    outcome: u16,
}

impl Columns {
    fn of(rows: &[HistoryEntry]) -> Columns {
        let w = |head: &str, values: Vec<String>| format::column_width(head, values) as u16;
        Columns {
            attempt: w(
                "#",
                rows.iter().map(|h| h.pod_attempt.to_string()).collect(),
            ),
            cycle: w("cycle", rows.iter().map(cycle).collect()),
            time: w("time", rows.iter().map(|h| offset(h.at_ms)).collect()),
            from: w(
                "from",
                rows.iter().map(|h| h.from.as_str().into()).collect(),
            ),
            outcome: w(
                "outcome",
                rows.iter().map(|h| h.outcome.label().into()).collect(),
            ),
        }
    }

    fn widths(&self) -> [Constraint; 7] {
        [
            Constraint::Length(1),
            Constraint::Length(self.attempt),
            Constraint::Length(self.cycle),
            Constraint::Length(self.time),
            Constraint::Length(self.from),
            Constraint::Length(self.outcome),
            Constraint::Fill(1),
        ]
    }

    /// Cells left for the message in a pane `width` wide: past the selection mark, the
    /// columns and their spaces, and a scrollbar's cell.
    fn message_width(&self, width: u16) -> usize {
        let used = 1 + 1 + self.attempt + self.cycle + self.time + self.from + self.outcome + 6 + 1;
        width.saturating_sub(used).max(8) as usize
    }
}

/// An attempt's scheduling cycle, as the status bar numbers them: `#7`.
fn cycle(h: &HistoryEntry) -> String {
    format!("#{}", h.attempt + 1)
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
    let cols = Columns::of(&rows);
    pane.message_width = cols.message_width(area.width);
    let lines = history_lines(&rows, pane.message_width);
    // The picked attempt keeps its row as newer attempts arrive above it; a line of
    // its message stays picked.
    let picked = ctx
        .pin
        .and_then(|pin| rows.iter().position(|h| h.attempt == pin))
        .unwrap_or(0);
    if lines.get(pane.cursor.selected).map(|l| l.row) != Some(picked) {
        pane.cursor.selected = lines.iter().position(|l| l.row == picked).unwrap_or(0);
    }
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
    let right = |s: &'static str| Cell::from(Line::from(s).right_aligned());
    let focused = ctx.focus == Focus::Detail;
    let rows_area = virtual_table(
        f,
        body,
        &t,
        Some(Row::new([
            Cell::from(""),
            right("#"),
            right("cycle"),
            right("time"),
            Cell::from("from"),
            Cell::from("outcome"),
            Cell::from("message"),
        ])),
        &cols.widths(),
        lines.len(),
        &mut pane.cursor,
        focused,
        |i| {
            let l = &lines[i];
            let message = Cell::from(l.message.clone());
            if !l.first {
                let mut cells = vec![Cell::from(""); 6];
                cells.push(message);
                return Row::new(cells);
            }
            let h = &rows[l.row];
            let mark = if shown == Some(h.attempt) { "▸" } else { "" };
            Row::new(vec![
                Cell::from(Span::styled(mark, t.key)),
                Cell::from(Line::from(h.pod_attempt.to_string()).right_aligned()),
                Cell::from(Line::from(cycle(h)).right_aligned()),
                Cell::from(Line::from(Span::styled(offset(h.at_ms), t.dim)).right_aligned()),
                Cell::from(Span::styled(h.from.as_str(), t.dim)),
                Cell::from(Span::styled(
                    h.outcome.label(),
                    outcome_style(&t, h.outcome),
                )),
                message,
            ])
        },
    );
    hits.rects.push((rows_area, Hit::DetailRows));
    hits.offsets.push((Hit::DetailRows, pane.cursor.offset));
}
