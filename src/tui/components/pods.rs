//! Pods in scheduling-queue order, with state and a short reason.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Row};

use super::super::action::{Action, Focus};
use super::super::format;
use super::super::view::{PodQuery, PodRow, PodState, pod_reason, pod_rows};
use super::super::waiting::countdown;
use super::super::widgets::{block, centered_note};
use super::table::SortTable;
use super::{Component, Ctx, Effect, Handled, Hit, Hits, nav};
use crate::engine::queue::QueueName;
use crate::theme::Theme;

/// The reason column's least width when names are long.
const REASON_MIN: u16 = 10;

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

/// Pods in queue order (a [`SortTable`] whose filter is the `/` text), pending or
/// all, in one namespace or all.
#[derive(Clone, Debug, Default)]
pub struct PodsPane {
    pub rows: Vec<PodRow>,
    pub table: SortTable,
    pub show_all: bool,
    pub namespace: Option<String>,
    pub pending_count: usize,
}

impl PodsPane {
    /// The key of the pod under the cursor.
    pub fn row_key(&self) -> Option<String> {
        self.table
            .selected()
            .and_then(|i| self.rows.get(i))
            .map(|r| r.key())
    }

    /// List the pods again, keeping the cursor on the selected pod when it is listed.
    pub fn rebuild(&mut self, ctx: &Ctx) {
        let q = PodQuery {
            all: self.show_all,
            namespace: self.namespace.as_deref(),
            filter: &self.table.filter,
            keep: ctx.sim.map(|s| s.tracked()),
            profiles: ctx.profiles,
        };
        self.rows = pod_rows(ctx.cluster, ctx.waiting, &q);
        self.pending_count = ctx.cluster.pending_pods().count();
        let at = ctx
            .selected_pod
            .and_then(|k| self.rows.iter().position(|r| r.is(k)));
        self.table
            .set_order((0..self.rows.len() as u32).collect(), 0);
        if let Some(i) = at {
            self.table.cursor.selected = i;
        }
    }

    /// Show `key`'s pod: all pods if it is bound (and not a simulation's), its
    /// namespace, no filter.
    pub fn reveal(&mut self, ctx: &Ctx, key: &str) -> bool {
        let Some(pod) = ctx.cluster.pod(key) else {
            return false;
        };
        let kept = ctx.sim.is_some_and(|s| s.tracked().contains(key));
        if pod.is_bound() && !self.show_all && !kept {
            self.show_all = true;
        }
        if self
            .namespace
            .as_deref()
            .is_some_and(|ns| ns != pod.namespace)
        {
            self.namespace = None;
        }
        self.table.filter.clear();
        true
    }

    /// The selection moved off the selected pod.
    fn moved(&self, ctx: &Ctx) -> Handled {
        if self.row_key().as_deref() == ctx.selected_pod {
            Handled::Yes
        } else {
            Handled::Then(Effect::PodMoved)
        }
    }
}

impl Component for PodsPane {
    fn handle(&mut self, ctx: &Ctx, action: &Action) -> Handled {
        if let Some(d) = nav(action, self.page()) {
            self.table.move_by(d);
            return self.moved(ctx);
        }
        match action {
            Action::Enter => Handled::Then(Effect::OpenDetail),
            // esc drops the filter, then the namespace.
            Action::Back if !self.table.filter.is_empty() => {
                self.table.filter.clear();
                Handled::Then(Effect::PodsChanged)
            }
            Action::Back if self.namespace.is_some() => {
                self.namespace = None;
                Handled::Then(Effect::PodsChanged)
            }
            _ => Handled::No,
        }
    }

    fn page(&self) -> usize {
        self.table.cursor.page()
    }

    fn scroll(&mut self, ctx: &Ctx, delta: isize) -> Handled {
        self.table.cursor.scroll(delta, self.rows.len());
        self.moved(ctx)
    }

    fn click_row(&mut self, ctx: &Ctx, i: usize) -> Option<Handled> {
        super::click_cursor(&mut self.table.cursor, i, self.rows.len())?;
        Some(self.moved(ctx))
    }

    fn cursor(&self) -> Option<usize> {
        Some(self.table.cursor.selected)
    }

    fn start_filter(&mut self) -> Option<String> {
        Some(self.table.filter.clone())
    }

    /// A new filter lists the pods again from the top (the app rebuilds).
    fn set_filter(&mut self, _ctx: &Ctx, text: String) {
        if self.table.filter != text {
            self.table.set_filter(text);
        }
    }

    fn draw(&mut self, ctx: &Ctx, f: &mut Frame, area: Rect, hits: &mut Hits) {
        draw(self, ctx, f, area, hits)
    }
}

fn draw(pane: &mut PodsPane, ctx: &Ctx, f: &mut Frame, area: Rect, hits: &mut Hits) {
    let focused = ctx.focus == Focus::Pods;
    let t = ctx.theme.clone();
    let mut title = vec![Span::styled(pods_title(pane), t.title)];
    if let Some(ns) = &pane.namespace {
        title.push(Span::styled(format!("ns:{ns} "), t.key));
    }
    if !pane.table.filter.is_empty() {
        title.push(Span::styled(format!("/{} ", pane.table.filter), t.prompt));
    }
    let b = block(&t, Line::from(title), focused);
    let inner = b.inner(area);
    f.render_widget(b, area);
    hits.rects.push((area, Hit::PodsPane));
    if pane.rows.is_empty() {
        let note = if pane.show_all {
            "no pods"
        } else {
            "no pending pods (A: show all pods)"
        };
        centered_note(f, inner, t.dim, note);
        return;
    }

    let sim = ctx.sim;
    // The queue column needs room of its own.
    let wide = inner.width >= if sim.is_some() { 78 } else { 60 };
    let ns_w = pane
        .rows
        .iter()
        .skip(pane.table.cursor.offset)
        .take(inner.height as usize)
        .map(|r| format::width(&r.pod.namespace))
        .max()
        .unwrap_or(9)
        .clamp(9, 18) as u16;
    // Names get the room they need (the reason column gives way, down to
    // REASON_MIN), and are cut in the middle when they must be: pods of one
    // workload differ only at the end.
    let queue_w: u16 = match (sim.is_some(), wide) {
        (false, _) => 0,
        (true, true) => 17 + 1,
        (true, false) => 9 + 1,
    };
    // Symbol, priority and state columns, one space between columns.
    let fixed = if wide {
        1 + 1 + ns_w + 1 + 1 + 5 + 1 + 13 + 1
    } else {
        1 + 1 + 1 + 5 + 1
    } + queue_w;
    let name_room = inner.width.saturating_sub(fixed + REASON_MIN).max(8);
    let name_w = pane
        .rows
        .iter()
        .skip(pane.table.cursor.offset)
        .take(inner.height as usize)
        .map(|r| {
            if wide {
                format::width(&r.pod.name)
            } else {
                format::width(&r.pod.namespace) + 1 + format::width(&r.pod.name)
            }
        })
        .max()
        .unwrap_or(4)
        .clamp(4, name_room as usize) as u16;
    let mut widths: Vec<Constraint> = if wide {
        vec![
            Constraint::Length(1),
            Constraint::Length(ns_w),
            Constraint::Length(name_w),
            Constraint::Length(5),
            Constraint::Length(13),
            Constraint::Fill(1),
        ]
    } else {
        vec![
            Constraint::Length(1),
            Constraint::Length(name_w),
            Constraint::Length(5),
            Constraint::Fill(1),
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
    let now = ctx.now;
    let pods = &pane.rows;
    let waiting = ctx.waiting;
    pane.table.draw(
        f,
        inner,
        &t,
        Some(header),
        &widths,
        focused,
        hits,
        Hit::PodsRows,
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
            row(wide, r, st, line, queue, name_w as usize, &t)
        },
    );
}

/// " Pods · 6 pending " — or, when a simulation keeps the pods it bound listed,
/// " Pods · 3 pending · 3 bound ", so the count stays true as pods bind.
fn pods_title(pane: &PodsPane) -> String {
    let n = pane.rows.len();
    if pane.show_all {
        return format!(" Pods · {} all ", format::thousands(n));
    }
    let bound = pane
        .rows
        .iter()
        .filter(|r| r.state == PodState::Bound)
        .count();
    if bound == 0 {
        format!(" Pods · {} pending ", format::thousands(n))
    } else {
        format!(
            " Pods · {} pending · {} bound ",
            format::thousands(n - bound),
            format::thousands(bound)
        )
    }
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
    name_w: usize,
    t: &Theme,
) -> Row<'a> {
    let sym = Cell::from(Span::styled(r.state.symbol(), st));
    let prio = Cell::from(Line::from(format::priority(r.pod.priority)).right_aligned());
    let mut cells = if wide {
        vec![
            sym,
            Cell::from(Span::styled(r.pod.namespace.clone(), t.dim)),
            Cell::from(format::middle(&r.pod.name, name_w)),
            prio,
            Cell::from(Span::styled(r.state.label(), st)),
        ]
    } else {
        vec![sym, Cell::from(format::middle(&r.key(), name_w)), prio]
    };
    cells.extend(queue);
    cells.push(Cell::from(reason));
    Row::new(cells)
}
