//! Pods held at Permit, with a live countdown per plugin; `a` allows, `r` rejects.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row};

use super::super::action::Focus;
use super::super::app::{App, Hit};
use super::super::waiting::countdown;
use super::super::widgets::{centered_note, virtual_table};

/// Countdowns under this many seconds use the urgent style.
pub const URGENT_SECS: i64 = 10;

pub fn draw(app: &mut App, f: &mut Frame, area: Rect) {
    let t = app.theme.clone();
    let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
    let n = app.waiting.len();
    f.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(
                format!("{n} pod{} waiting at Permit", super::super::view::plural(n)),
                t.waiting,
            ),
            Span::styled("  · a allow · r reject · enter open", t.dim),
        ])),
        head,
    );
    if n == 0 {
        centered_note(f, body, t.dim, "no pod is waiting at Permit");
        return;
    }
    let now = app.now();
    let pod_w = app
        .waiting
        .iter()
        .map(|w| w.pod.len())
        .max()
        .unwrap_or(10)
        .clamp(10, 40) as u16;
    let node_w = app
        .waiting
        .iter()
        .map(|w| w.node.len())
        .max()
        .unwrap_or(4)
        .clamp(4, 24) as u16;
    let widths = [
        Constraint::Length(pod_w),
        Constraint::Length(node_w),
        Constraint::Length(7),
        Constraint::Fill(1),
    ];
    let waiting = &app.waiting;
    let focused = app.focus == Focus::Detail;
    let rows_area = virtual_table(
        f,
        body,
        &t,
        Some(Row::new([
            "pod",
            "node",
            "next",
            "plugins (time left / timeout)",
        ])),
        &widths,
        waiting.len(),
        &mut app.waiting_cur,
        focused,
        |i| {
            let w = &waiting[i];
            let next = w.next_deadline().map(|d| countdown(d, now));
            let next_cell = match next {
                Some((txt, secs)) => Span::styled(
                    txt,
                    if secs < URGENT_SECS {
                        t.countdown_urgent
                    } else {
                        t.countdown
                    },
                ),
                None => Span::styled("-", t.dim),
            };
            let mut plugins = Vec::new();
            for (k, p) in w.pending.iter().enumerate() {
                if k > 0 {
                    plugins.push(Span::styled(" · ", t.dim));
                }
                let (txt, secs) = countdown(p.deadline, now);
                plugins.push(Span::styled(format!("{} ", p.plugin), t.waiting));
                plugins.push(Span::styled(
                    txt,
                    if secs < URGENT_SECS {
                        t.countdown_urgent
                    } else {
                        t.countdown
                    },
                ));
                plugins.push(Span::styled(
                    format!("/{}", super::super::waiting::go_duration(p.timeout)),
                    t.dim,
                ));
            }
            Row::new(vec![
                Cell::from(Span::styled(w.pod.clone(), t.text)),
                Cell::from(w.node.clone()),
                Cell::from(Line::from(next_cell).right_aligned()),
                Cell::from(Line::from(plugins)),
            ])
        },
    );
    app.hits.push((rows_area, Hit::DetailRows));
    app.hit_offsets
        .push((Hit::DetailRows, app.waiting_cur.offset));
}
