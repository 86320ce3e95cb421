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
    /// Cells the widest name on screen overflows its column by (as last drawn).
    pub overflow: usize,
    /// How far `←/→` scrolled the names sideways.
    pub name_scroll: usize,
}

/// Cells one `←/→` scrolls the names by.
const NAME_STEP: usize = 8;

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
        self.shown(self.table.cursor.page)
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
            // Long names scroll sideways, only when one overflows its column.
            Action::Right if self.overflow > 0 => {
                self.name_scroll = (self.name_scroll + NAME_STEP).min(self.overflow + 1);
                Handled::Yes
            }
            Action::Left if self.name_scroll > 0 => {
                self.name_scroll = self.name_scroll.saturating_sub(NAME_STEP);
                Handled::Yes
            }
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
    let inner = block(&t, "", focused).inner(area);
    let cols = columns(pane, ctx, inner);
    pane.overflow = cols.overflow;
    // One past the overflow: the last window, which shows the end after a `…`.
    pane.name_scroll = pane.name_scroll.min(cols.overflow + 1);
    let b = block(&t, block_title(pane, ctx, &t), focused);
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
    let header = Row::new(cols.header.clone());
    let scroll = pane.name_scroll;
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
            pod_row(&pods[i], ctx, &t, &cols, scroll)
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
    if pane.overflow > 0 {
        title.push(Span::styled("←/→ long names ", t.dim));
    }
    Line::from(title)
}

/// The list's columns at this width, by content: the name (with its namespace, or
/// the namespace in a column of its own) whole and the verdict are kept; priority,
/// queue, reason and state columns follow while they fit, and a column no shown row
/// fills (a reason, a state other than pending) collapses. The verdict takes what is
/// left. Only when the name alone does not fit is it cut, and `←/→` scrolls it.
pub(super) struct Columns {
    /// The namespace in a column of its own (else `ns/name` in one).
    split_ns: bool,
    name_w: usize,
    prio: bool,
    state: bool,
    reason: bool,
    /// The queue column (a simulation's), and whether its labels are long.
    queue: Option<bool>,
    /// Cells of the widest name past its column (0: every name shows whole).
    pub overflow: usize,
    widths: Vec<Constraint>,
    header: Vec<&'static str>,
}

/// The verdict column's least width beside a long name.
const VERDICT_MIN: usize = 12;

/// Natural widths of the rows on screen.
#[derive(Default)]
struct Natural {
    ns: usize,
    name: usize,
    key: usize,
    prio: usize,
    state: usize,
    reason: usize,
    verdict: usize,
}

fn natural<'a>(rows: impl Iterator<Item = &'a PodRow>, ctx: &PaneCtx) -> Natural {
    let mut n = Natural::default();
    // A state column only when some state is not `pending` (the symbol says it).
    let mut others = false;
    for r in rows {
        let ns = format::width(&r.pod.namespace);
        let name = format::width(&r.pod.name);
        n.ns = n.ns.max(ns);
        n.name = n.name.max(name);
        n.key = n.key.max(ns + 1 + name);
        n.prio = n.prio.max(format::width(&format::priority(r.pod.priority)));
        n.state = n.state.max(format::width(r.state.label()));
        others |= r.state != PodState::Pending;
        // A countdown at Permit adds ` 1m0s`; a gate's reason is its verdict.
        let countdown = if r.state == PodState::Waiting { 7 } else { 0 };
        if r.state != PodState::Gated {
            let reason = format::width(&pod_reason(&r.pod, r.state, ctx.waiting));
            if reason > 0 {
                n.reason = n.reason.max(reason + countdown);
            }
        }
        let verdict = match ctx.verdicts.get(&r.key()) {
            Some(v) if r.state != PodState::Bound => 2 + format::width(&v.short()),
            _ => 1,
        };
        n.verdict = n.verdict.max(verdict);
    }
    if !others {
        n.state = 0;
    }
    n
}

impl PodsPane {
    /// The cells a list needs to show every shown row's name and priority whole
    /// beside a verdict of `VERDICT_MIN` cells, for the split with the detail pane.
    pub fn natural_width(&self, ctx: &PaneCtx, rows: usize) -> u16 {
        let rows = self.shown(rows);
        let n = natural(rows, ctx);
        // Border, cursor mark, symbol and the spaces between the columns.
        let w = 2 + 1 + 2 + n.key + 1 + n.prio.max(4) + 1 + n.verdict.min(VERDICT_MIN);
        w.min(u16::MAX as usize) as u16
    }

    /// The pod rows from the first line on screen, `rows` of them.
    fn shown(&self, rows: usize) -> impl Iterator<Item = &PodRow> {
        self.table
            .order
            .iter()
            .skip(self.table.cursor.offset)
            .take(rows)
            .filter_map(|&i| self.row_of(i as usize))
    }
}

fn columns(pane: &PodsPane, ctx: &PaneCtx, inner: Rect) -> Columns {
    let sim = ctx.sim.is_some();
    let n = natural(pane.shown(inner.height as usize), ctx);
    // The cursor mark and the symbol column, each followed by a space.
    let room = (inner.width as usize).saturating_sub(2 + 2);
    let verdict_min = n.verdict.clamp(7, VERDICT_MIN);
    // The name whole, and the verdict at its least.
    let name_room = room.saturating_sub(verdict_min + 1);
    let mut left = room.saturating_sub(n.key + 1 + verdict_min);
    let whole = n.key <= name_room;
    let take = |left: &mut usize, w: usize, has: bool| -> bool {
        let fits = has && whole && w < *left;
        if fits {
            *left -= w + 1;
        }
        fits
    };
    let prio_w = n.prio.max(4);
    let prio = take(&mut left, prio_w, true);
    let queue_w = if room >= 90 { 17 } else { 9 };
    let queue = take(&mut left, queue_w, sim);
    let state = take(&mut left, n.state.max(5), n.state > 0);
    // The verdict whole before a reason column or a namespace column (which
    // aligns the names, at the cost of its padding).
    let verdict_rest = n.verdict.saturating_sub(verdict_min);
    let whole_verdict = verdict_rest <= left;
    if whole_verdict {
        left -= verdict_rest;
    }
    let reason = take(&mut left, n.reason.max(6), whole_verdict && n.reason > 0);
    let ns_w = n.ns.max(9);
    let split_ns = take(&mut left, ns_w + 1 + n.name.max(4) - n.key, whole_verdict);
    let name_full = if split_ns {
        n.name.max(4)
    } else {
        n.key.max(3)
    };
    // A name that cannot show whole leaves a third to the verdict.
    let name_w = if split_ns {
        name_full
    } else {
        name_full.min(name_room.min(room * 2 / 3).max(8))
    };
    let mut widths = vec![Constraint::Length(1)];
    let mut header = vec![""];
    if split_ns {
        widths.push(Constraint::Length(ns_w as u16));
        header.push("namespace");
        widths.push(Constraint::Length(name_w as u16));
        header.push("name");
    } else {
        widths.push(Constraint::Length(name_w as u16));
        header.push("pod");
    }
    if prio {
        widths.push(Constraint::Length(prio_w as u16));
        header.push("prio");
    }
    if state {
        widths.push(Constraint::Length(n.state.max(5) as u16));
        header.push("state");
    }
    if queue {
        widths.push(Constraint::Length(queue_w as u16));
        header.push("queue");
    }
    widths.push(Constraint::Fill(1));
    header.push("verdict");
    if reason {
        widths.push(Constraint::Length(n.reason.max(6) as u16));
        header.push("reason");
    }
    Columns {
        split_ns,
        name_w,
        prio,
        state,
        reason,
        queue: queue.then_some(queue_w > 9),
        overflow: name_full.saturating_sub(name_w),
        widths,
        header,
    }
}

/// A pod's line: state, name, priority, the queue in a simulation, its verdict and
/// its reason (with a countdown at Permit).
fn pod_row<'a>(r: &PodRow, ctx: &PaneCtx, t: &Theme, cols: &Columns, scroll: usize) -> Row<'a> {
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
    let mut cells = vec![Cell::from(Span::styled(r.state.symbol(), st))];
    if cols.split_ns {
        cells.push(Cell::from(Span::styled(r.pod.namespace.to_string(), t.dim)));
        cells.push(Cell::from(name_window(&r.pod.name, cols.name_w, scroll)));
    } else {
        cells.push(Cell::from(name_window(&r.key(), cols.name_w, scroll)));
    }
    if cols.prio {
        let prio = format::priority(r.pod.priority);
        cells.push(Cell::from(Line::from(prio).right_aligned()));
    }
    if cols.state {
        cells.push(Cell::from(Span::styled(r.state.label(), st)));
    }
    if let (Some(long), Some(sim)) = (cols.queue, ctx.sim) {
        let q = sim.queue_of(&r.key());
        cells.push(Cell::from(Span::styled(
            queue_label(q, long),
            queue_style(t, q),
        )));
    }
    // Without a reason column the verdict cell says the reason when it says more
    // now (a countdown at Permit, the node of a bound pod).
    if cols.reason {
        cells.push(Cell::from(verdict));
        cells.push(Cell::from(line));
    } else if matches!(r.state, PodState::Waiting | PodState::Bound) {
        cells.push(Cell::from(line));
    } else {
        cells.push(Cell::from(verdict));
    }
    Row::new(cells)
}

/// A name in `width` cells: whole when it fits; else cut in the middle (pods of one
/// workload differ only at the end), or, scrolled by `←/→`, the part from `scroll`.
fn name_window(name: &str, width: usize, scroll: usize) -> String {
    if scroll == 0 || format::width(name) <= width {
        return format::middle(name, width);
    }
    format::window(name, scroll, width)
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
        PodVerdict::WaitsAtPermit { .. } => t.waiting,
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
