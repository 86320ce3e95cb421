//! Pods held at Permit, with a live countdown per plugin; `a` allows, `r` rejects.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row};

use super::super::action::{Action, Focus};
use super::super::format;
use super::super::waiting::countdown;
use super::super::widgets::{Cursor, centered_note, virtual_table};
use super::{Component, Effect, Handled, Hit, Hits, PaneCtx, move_cursor, nav};

/// Countdowns under this many seconds use the urgent style.
pub const URGENT_SECS: i64 = 10;

/// Pods waiting at Permit; `a` allows, `r` rejects, enter opens the pod.
#[derive(Clone, Debug, Default)]
pub struct WaitingPane {
    pub cursor: Cursor,
}

impl Component for WaitingPane {
    fn handle(&mut self, ctx: &PaneCtx, action: &Action) -> Handled {
        if let Some(d) = nav(action, self.page()) {
            move_cursor(&mut self.cursor, d, ctx.waiting.len());
            return Handled::Yes;
        }
        let w = ctx.waiting.get(self.cursor.selected);
        let effect = match (action, w) {
            (Action::Enter, Some(w)) => Effect::OpenPod(w.pod.clone()),
            (Action::Allow, Some(w)) => Effect::Allow(w.clone()),
            (Action::Reject, Some(w)) => Effect::Reject(w.pod.clone()),
            (Action::Allow | Action::Reject, None) => {
                Effect::Flash("no waiting pod selected".into(), true)
            }
            (Action::Enter, None) => return Handled::Yes,
            _ => return Handled::No,
        };
        Handled::Then(effect)
    }

    fn page(&self) -> usize {
        self.cursor.page()
    }

    fn scroll(&mut self, ctx: &PaneCtx, delta: isize) -> Handled {
        self.cursor.scroll(delta, ctx.waiting.len());
        Handled::Yes
    }

    fn cursor(&self) -> Option<usize> {
        Some(self.cursor.selected)
    }

    fn click_row(&mut self, ctx: &PaneCtx, i: usize) -> Option<Handled> {
        super::click_cursor(&mut self.cursor, i, ctx.waiting.len())
    }

    fn draw(&mut self, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
        draw(self, ctx, f, area, hits)
    }
}

fn draw(pane: &mut WaitingPane, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
    let t = ctx.theme.clone();
    let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
    let n = ctx.waiting.len();
    f.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(
                format!("{n} pod{} waiting at Permit", crate::report::plural(n)),
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
    let now = ctx.now;
    let pod_w = ctx
        .waiting
        .iter()
        .map(|w| format::width(&w.pod))
        .max()
        .unwrap_or(10)
        .clamp(10, 48) as u16;
    let node_w = ctx
        .waiting
        .iter()
        .map(|w| format::width(&w.node))
        .max()
        .unwrap_or(4)
        .clamp(4, 40) as u16;
    let widths = [
        Constraint::Length(pod_w),
        Constraint::Length(node_w),
        Constraint::Length(7),
        Constraint::Fill(1),
    ];
    let waiting = ctx.waiting;
    let focused = ctx.focus == Focus::Detail;
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
        &mut pane.cursor,
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
                Cell::from(Span::styled(format::middle(&w.pod, pod_w as usize), t.text)),
                Cell::from(format::middle(&w.node, node_w as usize)),
                Cell::from(Line::from(next_cell).right_aligned()),
                Cell::from(Line::from(plugins)),
            ])
        },
    );
    hits.rects.push((rows_area, Hit::DetailRows));
    hits.offsets.push((Hit::DetailRows, pane.cursor.offset));
}
