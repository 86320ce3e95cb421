//! Pods in scheduling-queue order, with state, each pending pod's replay verdict
//! (filled in as the worker computes them) and a short reason; or grouped by the
//! verdicts' main reason.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row};

use super::super::action::{Action, Focus};
use super::super::format;
use super::super::waiting::countdown;
use super::super::widgets::{block, centered_note};
use super::table::SortTable;
use super::{Component, Effect, Handled, Hit, Hits, PaneCtx, nav};
use crate::engine::queue::QueueName;
use crate::report::PodVerdict;
use crate::report::{ListEntry, PodQuery, PodRow, PodState, PodsList, plural, pod_reason};
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
/// all, in one namespace or all; `v` groups them by their verdict's main reason.
#[derive(Clone, Debug, Default)]
pub struct PodsPane {
    pub list: PodsList,
    pub table: SortTable,
    pub show_all: bool,
    pub namespace: Option<String>,
    pub pending_count: usize,
    /// Grouped by main reason: the table's order then indexes `entries`.
    pub grouped: bool,
    pub entries: Vec<ListEntry>,
}

impl PodsPane {
    /// The pod row of the table's row `i` (none on a group's header).
    fn row_of(&self, i: usize) -> Option<&PodRow> {
        if self.grouped {
            match self.entries.get(i)? {
                ListEntry::Pod(r) => self.list.rows.get(*r),
                ListEntry::Group { .. } => None,
            }
        } else {
            self.list.rows.get(i)
        }
    }

    /// The pod rows on the lines drawn last.
    fn visible(&self) -> impl Iterator<Item = &PodRow> {
        let c = &self.table.cursor;
        self.table
            .order
            .iter()
            .skip(c.offset)
            .take(c.page)
            .filter_map(|&i| self.row_of(i as usize))
    }

    /// The pod row under the cursor (none on a group's header).
    fn selected_row(&self) -> Option<&PodRow> {
        self.row_of(self.table.selected()?)
    }

    /// The key of the pod under the cursor.
    pub fn row_key(&self) -> Option<String> {
        self.selected_row().map(|r| r.key())
    }

    /// Lines the list shows.
    fn len(&self) -> usize {
        self.table.order.len()
    }

    /// The reason header under the cursor.
    fn selected_group(&self) -> Option<&str> {
        match self.entries.get(self.table.selected()?)? {
            ListEntry::Group { reason, .. } if self.grouped => Some(reason),
            _ => None,
        }
    }

    /// Whether the pod `key` is on a visible line (as of the last draw).
    pub fn shows(&self, key: &str) -> bool {
        self.visible().any(|r| r.is(key))
    }

    /// New verdicts: regroup, the cursor staying on its pod or header.
    pub fn verdicts_changed(&mut self, ctx: &PaneCtx) {
        if self.grouped {
            self.order_rows(ctx);
        }
    }

    /// The table's order over the rows, or over the groups and their pods; the
    /// cursor keeps the selected pod (or, on a header, the same header).
    fn order_rows(&mut self, ctx: &PaneCtx) {
        let header = self.selected_group().map(str::to_string);
        if !self.grouped {
            self.entries.clear();
            let at = ctx
                .selected_pod
                .and_then(|k| self.list.rows.iter().position(|r| r.is(k)));
            self.table
                .set_order((0..self.list.rows.len() as u32).collect(), 0);
            if let Some(i) = at {
                self.table.cursor.selected = i;
            }
            return;
        }
        self.entries = self.list.grouped(|_, r| ctx.verdicts.get(&r.key()));
        let at = self.entries.iter().position(|e| match e {
            ListEntry::Pod(r) => {
                header.is_none() && ctx.selected_pod.is_some_and(|k| self.list.rows[*r].is(k))
            }
            ListEntry::Group { reason, .. } => header.as_deref() == Some(reason.as_str()),
        });
        self.table
            .set_order((0..self.entries.len() as u32).collect(), 0);
        if let Some(i) = at {
            self.table.cursor.selected = i;
        }
    }

    /// List the pods again, keeping the cursor on the selected pod when it is listed.
    pub fn rebuild(&mut self, ctx: &PaneCtx) {
        let q = PodQuery {
            all: self.show_all,
            namespace: self.namespace.as_deref(),
            filter: &self.table.filter,
            keep: ctx.sim.map(|s| s.tracked()),
            profiles: ctx.profiles,
        };
        self.list = PodsList::new(ctx.cluster, ctx.waiting, &q);
        self.pending_count = ctx.cluster.pending_pods().count();
        self.order_rows(ctx);
    }

    /// Show `key`'s pod: all pods if it is bound (and not a simulation's), its
    /// namespace, no filter.
    pub fn reveal(&mut self, ctx: &PaneCtx, key: &str) -> bool {
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
    fn moved(&self, ctx: &PaneCtx) -> Handled {
        if self.row_key().as_deref() == ctx.selected_pod {
            Handled::Yes
        } else {
            Handled::Then(Effect::PodMoved)
        }
    }
}

impl Component for PodsPane {
    fn handle(&mut self, ctx: &PaneCtx, action: &Action) -> Handled {
        if let Some(d) = nav(action, self.page()) {
            self.table.move_by(d);
            return self.moved(ctx);
        }
        match action {
            Action::ToggleView => {
                self.grouped = !self.grouped;
                self.order_rows(ctx);
                self.moved(ctx)
            }
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

    fn scroll(&mut self, ctx: &PaneCtx, delta: isize) -> Handled {
        let n = self.len();
        self.table.cursor.scroll(delta, n);
        self.moved(ctx)
    }

    fn click_row(&mut self, ctx: &PaneCtx, i: usize) -> Option<Handled> {
        let n = self.len();
        super::click_cursor(&mut self.table.cursor, i, n)?;
        Some(self.moved(ctx))
    }

    fn cursor(&self) -> Option<usize> {
        Some(self.table.cursor.selected)
    }

    fn start_filter(&mut self) -> Option<String> {
        Some(self.table.filter.clone())
    }

    /// A new filter lists the pods again from the top (the app rebuilds).
    fn set_filter(&mut self, _ctx: &PaneCtx, text: String) {
        if self.table.filter != text {
            self.table.set_filter(text);
        }
    }

    fn draw(&mut self, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
        draw(self, ctx, f, area, hits)
    }
}

fn draw(pane: &mut PodsPane, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
    let focused = ctx.focus == Focus::Pods;
    let t = ctx.theme.clone();
    let b = block(&t, block_title(pane, ctx, &t), focused);
    let inner = b.inner(area);
    f.render_widget(b, area);
    hits.rects.push((area, Hit::PodsPane));
    if pane.list.rows.is_empty() {
        let note = if pane.show_all {
            "no pods"
        } else {
            "no pending pods (A: show all pods)"
        };
        centered_note(f, inner, t.dim, note);
        return;
    }
    let cols = columns(pane, ctx.sim.is_some(), inner);
    let header = Row::new(cols.header.clone());
    let pods = &pane.list.rows;
    let entries = &pane.entries;
    let grouped = pane.grouped;
    let rows_area = pane.table.draw(
        f,
        inner,
        &t,
        Some(header),
        &cols.widths,
        focused,
        hits,
        Hit::PodsRows,
        |i| {
            let i = match (grouped, entries.get(i)) {
                (false, _) => i,
                (true, Some(ListEntry::Pod(r))) => *r,
                // Drawn over the whole line below (a default Row is 0 lines high).
                (true, _) => return Row::new(Vec::<Cell>::new()),
            };
            pod_row(&pods[i], ctx, &t, &cols)
        },
    );
    if grouped {
        draw_group_headers(pane, f, rows_area, &t);
    }
}

/// The pane's title: the count, the view, the verdicts' progress, the namespace and
/// the filter.
fn block_title<'a>(pane: &PodsPane, ctx: &PaneCtx, t: &Theme) -> Line<'a> {
    let mut title = vec![Span::styled(pods_title(pane), t.title)];
    if pane.grouped {
        title.push(Span::styled("by reason ", t.key));
    }
    // How far the background verdicts have come.
    let (known, total) = ctx.verdicts.progress();
    if known < total {
        title.push(Span::styled(format!("verdicts {known}/{total} "), t.dim));
    }
    if let Some(ns) = &pane.namespace {
        title.push(Span::styled(format!("ns:{ns} "), t.key));
    }
    if !pane.table.filter.is_empty() {
        title.push(Span::styled(format!("/{} ", pane.table.filter), t.prompt));
    }
    Line::from(title)
}

/// The list's columns at this width: wide (namespace, name, state, verdict and
/// reason apart) or narrow (the key, then the verdict), with a queue column in a
/// simulation.
struct Columns {
    wide: bool,
    name_w: usize,
    widths: Vec<Constraint>,
    header: Vec<&'static str>,
}

fn columns(pane: &PodsPane, sim: bool, inner: Rect) -> Columns {
    // The queue column needs room of its own.
    let wide = inner.width >= if sim { 78 } else { 60 };
    let visible = || {
        pane.table
            .order
            .iter()
            .skip(pane.table.cursor.offset)
            .take(inner.height as usize)
            .filter_map(|&i| pane.row_of(i as usize))
    };
    let ns_w = visible()
        .map(|r| format::width(&r.pod.namespace))
        .max()
        .unwrap_or(9)
        .clamp(9, 18) as u16;
    // Names get the room they need (the reason column gives way, down to
    // REASON_MIN), and are cut in the middle when they must be: pods of one
    // workload differ only at the end.
    let queue_w: u16 = match (sim, wide) {
        (false, _) => 0,
        (true, true) => 17 + 1,
        (true, false) => 9 + 1,
    };
    // The rows on screen, which size the columns.
    let shown = || {
        let rows = pane.list.rows.iter().skip(pane.table.cursor.offset);
        rows.take(inner.height as usize)
    };
    // The priority column is as wide as its widest shown value (a number is
    // never cut: `2000001k`, system-node-critical, needs 8).
    let prio_w = shown()
        .map(|r| format::width(&format::priority(r.pod.priority)))
        .max()
        .unwrap_or(0)
        .max(5) as u16;
    // Symbol, priority and state columns, one space between columns.
    // Wide, the verdict and the reason columns each keep REASON_MIN.
    let fixed = if wide {
        1 + 1 + ns_w + 1 + 1 + prio_w + 1 + 13 + 1 + REASON_MIN + 1
    } else {
        1 + 1 + 1 + prio_w + 1
    } + queue_w;
    let name_room = inner.width.saturating_sub(fixed + REASON_MIN).max(8);
    let name_w = shown()
        .map(|r| {
            if wide {
                format::width(&r.pod.name)
            } else {
                format::width(&r.pod.namespace) + 1 + format::width(&r.pod.name)
            }
        })
        .max()
        .unwrap_or(4)
        .clamp(4, name_room as usize);
    let (mut widths, mut header) = if wide {
        (
            vec![
                Constraint::Length(1),
                Constraint::Length(ns_w),
                Constraint::Length(name_w as u16),
                Constraint::Length(prio_w),
                Constraint::Length(13),
                Constraint::Fill(4),
                Constraint::Fill(3),
            ],
            vec![
                "",
                "namespace",
                "name",
                "prio",
                "state",
                "verdict",
                "reason",
            ],
        )
    } else {
        // The verdict is what the list is read for: as wide as the pod.
        (
            vec![
                Constraint::Length(1),
                Constraint::Length(name_w as u16),
                Constraint::Length(prio_w),
                Constraint::Fill(1),
            ],
            vec!["", "pod", "prio", "verdict"],
        )
    };
    // A simulation shows where each pod is in the scheduling queue.
    if sim {
        let at = if wide {
            widths.len() - 2
        } else {
            widths.len() - 1
        };
        widths.insert(at, Constraint::Length(if wide { 17 } else { 9 }));
        header.insert(at, "queue");
    }
    Columns {
        wide,
        name_w,
        widths,
        header,
    }
}

/// A pod's line: state, name, priority, the queue in a simulation, its verdict and
/// its reason (with a countdown at Permit).
fn pod_row<'a>(r: &PodRow, ctx: &PaneCtx, t: &Theme, cols: &Columns) -> Row<'a> {
    let wide = cols.wide;
    let st = state_style(t, r.state);
    let reason = pod_reason(&r.pod, r.state, ctx.waiting);
    let mut line = Line::from(Span::styled(reason, reason_style(t, r.state)));
    if r.state == PodState::Waiting
        && let Some(d) = ctx
            .waiting
            .iter()
            .find(|w| r.is(&w.pod))
            .and_then(|w| w.next_deadline())
    {
        let (txt, secs) = countdown(d, ctx.now);
        let style = if secs < super::waiting::URGENT_SECS {
            t.countdown_urgent
        } else {
            t.countdown
        };
        line.spans.push(Span::styled(format!(" {txt}"), style));
    }
    let verdict = verdict_line(r, ctx, t);
    let queue = ctx.sim.map(|s| {
        let q = s.queue_of(&r.key());
        Cell::from(Span::styled(queue_label(q, wide), queue_style(t, q)))
    });
    // Narrow: one column, the verdict, unless the reason says more now (a
    // countdown at Permit, the node of a bound pod).
    let last = if wide {
        vec![verdict, line]
    } else if matches!(r.state, PodState::Waiting | PodState::Bound) {
        vec![line]
    } else {
        vec![verdict]
    };
    row(wide, r, st, last, queue, cols.name_w, t)
}

/// Each visible group header across the whole line (past the cursor mark), so a
/// long reason is not cut at a column: `▾ 2 pods · Insufficient cpu`. Spaces pad it
/// so nothing of the empty row shows through; the selection's style stays.
fn draw_group_headers(pane: &PodsPane, f: &mut Frame, area: Rect, t: &Theme) {
    let offset = pane.table.cursor.offset;
    let width = area.width.saturating_sub(1);
    for (line, &i) in pane
        .table
        .order
        .iter()
        .skip(offset)
        .take(area.height as usize)
        .enumerate()
    {
        let Some(ListEntry::Group { reason, pods }) = pane.entries.get(i as usize) else {
            continue;
        };
        let text = format!("▾ {pods} pod{} · {reason}", plural(*pods));
        let pad = (width as usize).saturating_sub(format::width(&text));
        let at = Rect {
            x: area.x + 1,
            y: area.y + line as u16,
            width,
            height: 1,
        };
        f.render_widget(
            Paragraph::new(Line::from(vec![
                Span::styled(text, t.title),
                Span::raw(" ".repeat(pad)),
            ])),
            at,
        );
    }
}

/// The verdict cell: symbol and short text, `…` while it is computed, nothing for a
/// bound pod.
fn verdict_line<'a>(r: &PodRow, ctx: &PaneCtx, t: &Theme) -> Line<'a> {
    if r.state == PodState::Bound {
        return Line::default();
    }
    match ctx.verdicts.get(&r.key()) {
        Some(v) => {
            let style = verdict_style(t, v);
            let mut line = Line::from(vec![
                Span::styled(v.symbol(), style),
                Span::raw(" "),
                Span::styled(v.short(), style),
            ]);
            // A snapshot's recorded word that the replay contradicts: marked first,
            // so a narrow column still shows it.
            if ctx
                .recorded_snapshot()
                .is_some_and(|c| crate::report::recorded::verdict_differs(c, &r.pod, v))
            {
                line.spans.insert(0, Span::styled("≠", t.warning));
            }
            line
        }
        None => Line::from(Span::styled("…", t.dim)),
    }
}

pub fn verdict_style(t: &Theme, v: &PodVerdict) -> Style {
    match v {
        PodVerdict::Schedulable { .. } => t.pass,
        PodVerdict::Unschedulable { .. } => t.reject,
        PodVerdict::Gated { .. } => t.gated,
        PodVerdict::NotReplayed { .. } => t.warning,
        PodVerdict::NotServed { .. } => t.dim,
        PodVerdict::Error { .. } => t.error,
    }
}

/// " Pods · 6 pending " — or, when a simulation keeps the pods it bound listed,
/// " Pods · 3 pending · 3 bound ", so the count stays true as pods bind.
fn pods_title(pane: &PodsPane) -> String {
    let n = pane.list.rows.len();
    if pane.show_all {
        return format!(" Pods · {} all ", format::thousands(n));
    }
    let bound = pane
        .list
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
    r: &PodRow,
    st: Style,
    last: Vec<Line<'a>>,
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
    cells.extend(last.into_iter().map(Cell::from));
    Row::new(cells)
}
