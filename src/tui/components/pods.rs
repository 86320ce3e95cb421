//! Pods in scheduling-queue order, with state and a short reason.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Row};

use super::super::action::Focus;
use super::super::app::{App, Hit};
use super::super::format;
use super::super::view::{PodState, pod_reason};
use super::super::waiting::countdown;
use super::super::widgets::{block, centered_note, virtual_table};
use crate::engine::queue::QueueName;
use crate::theme::Theme;

pub fn state_style(t: &Theme, s: PodState) -> Style {
    match s {
        PodState::Pending => t.pending,
        PodState::Gated => t.gated,
        PodState::Unschedulable => t.unschedulable,
        PodState::Nominated => t.nominated,
        PodState::Waiting => t.waiting,
        PodState::Bound => t.bound,
    }
}

pub fn draw(app: &mut App, f: &mut Frame, area: Rect) {
    let focused = app.focus == Focus::Pods;
    let t = app.theme.clone();
    let mut title = vec![Span::styled(
        format!(
            " Pods · {} {} ",
            format::thousands(app.pods.len()),
            if app.show_all { "all" } else { "pending" }
        ),
        t.title,
    )];
    if let Some(ns) = &app.namespace {
        title.push(Span::styled(format!("ns:{ns} "), t.key));
    }
    if !app.pod_filter.is_empty() {
        title.push(Span::styled(format!("/{} ", app.pod_filter), t.prompt));
    }
    let b = block(&t, Line::from(title), focused);
    let inner = b.inner(area);
    f.render_widget(b, area);
    app.hits.push((area, Hit::PodsPane));
    if app.pods.is_empty() {
        let note = if app.show_all {
            "no pods"
        } else {
            "no pending pods (A: show all pods)"
        };
        centered_note(f, inner, t.dim, note);
        return;
    }

    let sim = app.waiting_src.sim();
    // The queue column needs room of its own.
    let wide = inner.width >= if sim.is_some() { 78 } else { 60 };
    let ns_w = app
        .pods
        .iter()
        .skip(app.pods_cur.offset)
        .take(inner.height as usize)
        .map(|r| format::width(&r.pod.namespace))
        .max()
        .unwrap_or(9)
        .clamp(9, 18) as u16;
    let mut widths: Vec<Constraint> = if wide {
        vec![
            Constraint::Length(1),
            Constraint::Length(ns_w),
            Constraint::Fill(3),
            Constraint::Length(5),
            Constraint::Length(13),
            Constraint::Fill(4),
        ]
    } else {
        vec![
            Constraint::Length(1),
            Constraint::Fill(3),
            Constraint::Length(5),
            Constraint::Fill(2),
        ]
    };
    let mut header: Vec<&str> = if wide {
        vec!["", "namespace", "name", "prio", "state", "reason"]
    } else {
        vec!["", "pod", "prio", "reason"]
    };
    // A simulation shows where each pod is in the scheduling queue.
    if sim.is_some() {
        let at = widths.len() - 1;
        widths.insert(at, Constraint::Length(if wide { 17 } else { 9 }));
        header.insert(at, "queue");
    }
    let header = Row::new(header);
    let now = app.now();
    let pods = &app.pods;
    let waiting = &app.waiting;
    let rows_area = virtual_table(
        f,
        inner,
        &t,
        Some(header),
        &widths,
        pods.len(),
        &mut app.pods_cur,
        focused,
        |i| {
            let r = &pods[i];
            let st = state_style(&t, r.state);
            let reason = pod_reason(&r.pod, r.state, waiting);
            let mut line = Line::from(Span::styled(reason, reason_style(&t, r.state)));
            if r.state == PodState::Waiting
                && let Some(d) = waiting
                    .iter()
                    .find(|w| r.is(&w.pod))
                    .and_then(|w| w.next_deadline())
            {
                let (txt, secs) = countdown(d, now);
                let style = if secs < super::waiting::URGENT_SECS {
                    t.countdown_urgent
                } else {
                    t.countdown
                };
                line.spans.push(Span::styled(format!(" {txt}"), style));
            }
            let queue = sim.map(|s| {
                let q = s.queue_of(&r.key());
                Cell::from(Span::styled(queue_label(q, wide), queue_style(&t, q)))
            });
            row(wide, r, st, line, queue, &t)
        },
    );
    app.hits.push((rows_area, Hit::PodsRows));
    app.hit_offsets.push((Hit::PodsRows, app.pods_cur.offset));
}

fn reason_style(t: &Theme, s: PodState) -> Style {
    match s {
        PodState::Pending | PodState::Bound | PodState::Waiting => t.dim,
        other => state_style(t, other),
    }
}

/// The queue a simulated pod is in (`-`: in a binding cycle, or bound).
fn queue_label(q: Option<QueueName>, wide: bool) -> &'static str {
    match q {
        Some(QueueName::Unschedulable) if !wide => "unschedQ",
        Some(q) => q.as_str(),
        None => "-",
    }
}

fn queue_style(t: &Theme, q: Option<QueueName>) -> Style {
    match q {
        Some(QueueName::Active) => t.pending,
        Some(QueueName::Backoff) => t.nominated,
        Some(QueueName::Unschedulable) => t.unschedulable,
        Some(QueueName::Gated) => t.gated,
        None => t.dim,
    }
}

fn row<'a>(
    wide: bool,
    r: &super::super::view::PodRow,
    st: Style,
    reason: Line<'a>,
    queue: Option<Cell<'a>>,
    t: &Theme,
) -> Row<'a> {
    let sym = Cell::from(Span::styled(r.state.symbol(), st));
    let prio = Cell::from(Line::from(format::priority(r.pod.priority)).right_aligned());
    let mut cells = if wide {
        vec![
            sym,
            Cell::from(Span::styled(r.pod.namespace.clone(), t.dim)),
            Cell::from(r.pod.name.clone()),
            prio,
            Cell::from(Span::styled(r.state.label(), st)),
        ]
    } else {
        vec![sym, Cell::from(r.key()), prio]
    };
    cells.extend(queue);
    cells.push(Cell::from(reason));
    Row::new(cells)
}
