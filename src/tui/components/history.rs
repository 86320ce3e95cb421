//! Simulation mode: the selected pod's scheduling attempts, newest first, with time,
//! outcome and what happened; the selected attempt's trace fills the other tabs.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row};

use super::super::action::Focus;
use super::super::app::{App, Hit};
use super::super::playback::{AttemptOutcome, offset};
use super::super::widgets::{centered_note, virtual_table};
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

pub fn draw(app: &mut App, f: &mut Frame, area: Rect) {
    let t = app.theme.clone();
    if app.sim().is_none() {
        centered_note(
            f,
            area,
            t.dim,
            "the History tab lists a simulation's attempts: start with --simulate",
        );
        return;
    }
    let rows = app.history_rows();
    // The picked attempt keeps its row as newer attempts arrive above it.
    app.history_cur.selected = app
        .history_pin
        .and_then(|pin| rows.iter().position(|h| h.attempt == pin))
        .unwrap_or(0);
    let shown = app.current.as_ref().and_then(|c| c.key.attempt);
    let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
    let n = rows.len();
    f.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(
                format!("{n} attempt{}", super::super::view::plural(n)),
                t.title,
            ),
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
    let focused = app.focus == Focus::Detail;
    let rows_area = virtual_table(
        f,
        body,
        &t,
        Some(Row::new([
            "", "#", "cycle", "time", "from", "outcome", "message",
        ])),
        &widths,
        n,
        &mut app.history_cur,
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
    app.hits.push((rows_area, Hit::DetailRows));
    app.hit_offsets
        .push((Hit::DetailRows, app.history_cur.offset));
}
