//! Filter verdicts: nodes × filter plugins, or nodes grouped by rejection reason.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row};

use super::super::action::{Action, Focus};
use super::super::format;
use super::super::traces::Current;
use super::super::widgets::{Cursor, virtual_table, wrap, wrap_cell};
use super::table::SortTable;
use super::{
    Component, Effect, Handled, Hit, Hits, PaneCtx, legend, mark_span, mark_style, move_cursor, nav,
};
use crate::report::TraceView;
use crate::report::{GroupKind, Mark};
use crate::theme::Theme;

/// Width of the "first rejection" column at least.
const REASON_MIN: u16 = 14;

/// Filter verdicts: the matrix (a [`SortTable`] over the view's rows; column 0 is
/// the node, 1..=P a filter plugin, P+1 the first rejection) or the summary groups.
#[derive(Clone, Debug, Default)]
pub struct FiltersPane {
    pub summary: bool,
    pub table: SortTable,
    pub group_cursor: Cursor,
    /// Restrict the matrix to one summary group.
    pub group: Option<usize>,
    /// First plugin column shown (horizontal scroll).
    pub col_offset: usize,
    /// Cells of the summary's cause lines at the last draw (they wrap to it).
    pub cause_width: usize,
}

impl FiltersPane {
    /// The node under the cursor (matrix mode) in `cur`'s view.
    pub fn selected_node(&self, cur: Option<&Current>) -> Option<String> {
        let row = self.table.selected()?;
        cur?.view.rows.get(row).map(|r| r.node.clone())
    }

    fn select_node(&mut self, view: &TraceView, node: &str) {
        if let Some(&row) = view.row_of.get(node) {
            self.table.select(row);
        }
    }

    /// The matrix rows: the group's (or all), filtered, sorted.
    pub fn refresh_order(&mut self, ctx: &PaneCtx) {
        let Some(c) = ctx.current else {
            self.table.order.clear();
            return;
        };
        let v = &c.view;
        let needle = self.table.needle();
        let group_rows = self.group.and_then(|g| v.summary.get(g)).map(|g| &g.rows);
        let mut order: Vec<u32> = match group_rows {
            Some(rows) => rows.clone(),
            None => (0..v.rows.len() as u32).collect(),
        };
        if !needle.is_empty() {
            order.retain(|&i| {
                let r = &v.rows[i as usize];
                r.node.to_lowercase().contains(&needle)
                    || r.reasons.to_lowercase().contains(&needle)
                    || r.plugin
                        .as_deref()
                        .is_some_and(|p| p.to_lowercase().contains(&needle))
            });
        }
        let np = v.plugins.len();
        self.table.apply_sort(&mut order, |col, order| match col {
            0 => order.sort_by(|a, b| v.rows[*a as usize].node.cmp(&v.rows[*b as usize].node)),
            c if c <= np => order.sort_by_key(|&i| (v.cell(i as usize, c - 1), i)),
            _ => order.sort_by_key(|&i| {
                let r = &v.rows[i as usize];
                let pos = r
                    .plugin
                    .as_ref()
                    .and_then(|p| v.plugins.iter().position(|x| x == p))
                    .unwrap_or(usize::MAX);
                (r.feasible, pos, r.reasons.clone(), i)
            }),
        });
        self.table.set_order(order, np + 1);
    }

    /// A new trace: start over on another pod; on the same pod keep the node.
    pub fn trace_changed(&mut self, ctx: &PaneCtx, old: Option<&Current>, same_pod: bool) {
        let keep = self.selected_node(old);
        if !same_pod {
            self.table.cursor.reset();
            self.group_cursor.reset();
            self.group = None;
        }
        self.refresh_order(ctx);
        if same_pod && let (Some(n), Some(c)) = (keep, ctx.current) {
            self.select_node(&c.view, &n);
        }
    }

    /// Lines of the summary: each group, then its cause lines.
    fn groups(&self, ctx: &PaneCtx) -> usize {
        ctx.current
            .map_or(0, |c| summary_lines(&c.view, self.cause_width).len())
    }
}

impl Component for FiltersPane {
    fn handle(&mut self, ctx: &PaneCtx, action: &Action) -> Handled {
        if let Some(d) = nav(action, self.page()) {
            if self.summary {
                let n = self.groups(ctx);
                move_cursor(&mut self.group_cursor, d, n);
            } else {
                self.table.move_by(d);
            }
            return Handled::Yes;
        }
        if matches!(action, Action::ToggleView) {
            self.summary = !self.summary;
            return Handled::Yes;
        }
        let Some(c) = ctx.current else {
            return Handled::No;
        };
        match action {
            Action::Left | Action::Right if !self.summary => {
                let d = if matches!(action, Action::Left) {
                    -1
                } else {
                    1
                };
                self.table.column_by(d, c.view.plugins.len() + 1);
            }
            Action::Sort if !self.summary => {
                self.table.toggle_sort();
                let node = self.selected_node(Some(c));
                self.refresh_order(ctx);
                if let Some(n) = node {
                    self.select_node(&c.view, &n);
                }
            }
            Action::Enter if self.summary => {
                // A cause line opens the group it belongs to.
                let line = summary_lines(&c.view, self.cause_width)
                    .get(self.group_cursor.selected)
                    .map(|l| l.0);
                if let Some(g) = line {
                    self.group = Some(g);
                    self.summary = false;
                    self.table.cursor.reset();
                    self.refresh_order(ctx);
                }
            }
            Action::Enter => {
                if let Some(n) = self.node(ctx) {
                    return Handled::Then(Effect::OpenNode(n));
                }
            }
            // esc drops the filter and the group first (a group goes back to the summary).
            Action::Back if !self.table.filter.is_empty() || self.group.is_some() => {
                let was_group = self.group.is_some();
                self.table.filter.clear();
                self.group = None;
                self.refresh_order(ctx);
                if was_group {
                    self.summary = true;
                }
            }
            _ => return Handled::No,
        }
        Handled::Yes
    }

    fn page(&self) -> usize {
        if self.summary {
            self.group_cursor.page()
        } else {
            self.table.cursor.page()
        }
    }

    fn scroll(&mut self, ctx: &PaneCtx, delta: isize) -> Handled {
        if self.summary {
            self.group_cursor.scroll(delta, self.groups(ctx));
        } else {
            let n = self.table.order.len();
            self.table.cursor.scroll(delta, n);
        }
        Handled::Yes
    }

    fn cursor(&self) -> Option<usize> {
        Some(if self.summary {
            self.group_cursor.selected
        } else {
            self.table.cursor.selected
        })
    }

    fn click_row(&mut self, ctx: &PaneCtx, i: usize) -> Option<Handled> {
        if self.summary {
            let n = self.groups(ctx);
            super::click_cursor(&mut self.group_cursor, i, n)
        } else {
            let n = self.table.order.len();
            super::click_cursor(&mut self.table.cursor, i, n)
        }
    }

    fn start_filter(&mut self) -> Option<String> {
        self.summary = false;
        Some(self.table.filter.clone())
    }

    fn set_filter(&mut self, ctx: &PaneCtx, text: String) {
        self.table.set_filter(text);
        self.refresh_order(ctx);
    }

    fn node(&self, ctx: &PaneCtx) -> Option<String> {
        (!self.summary)
            .then(|| self.selected_node(ctx.current))
            .flatten()
    }

    fn draw(&mut self, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
        draw(self, ctx, f, area, hits)
    }
}

/// The summary's lines: `(group, None)` for a group, `(group, Some(text))` for a
/// line of its causes, drawn under it; a cause longer than `width` cells wraps onto
/// more lines (a cut cause can hide what it names: a label key, a taint).
fn summary_lines(view: &TraceView, width: usize) -> Vec<(usize, Option<String>)> {
    let mut out = Vec::with_capacity(view.summary.len());
    for g in 0..view.summary.len() {
        out.push((g, None));
        for cause in view.cause_lines(g) {
            let mut first = true;
            // Past the indent of a continuation line.
            let w = if width == 0 {
                0
            } else {
                width.saturating_sub(4).max(8)
            };
            for part in wrap_cell(cause, w) {
                let indent = if first { "  " } else { "    " };
                first = false;
                out.push((g, Some(format!("{indent}{part}"))));
            }
        }
    }
    out
}

fn draw(pane: &mut FiltersPane, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
    let Some(cur) = ctx.current.cloned() else {
        return;
    };
    let t = ctx.theme;
    let view = &cur.view;
    let trace = &cur.trace;

    // Headline: the FitError line (or k/N available), wrapped to at most 3 lines.
    let style = if trace.feasible.is_empty() {
        t.reject
    } else {
        t.pass
    };
    let mut head: Vec<Line> = wrap(&view.headline, area.width as usize)
        .into_iter()
        .take(3)
        .map(|l| Line::from(Span::styled(l, style)))
        .collect();
    head.push(mode_line(pane, ctx, view));
    let head_h = head.len() as u16;
    let footer_h: u16 = if area.height > head_h + 6 { 2 } else { 0 };
    let [head_area, table_area, foot_area] = Layout::vertical([
        Constraint::Length(head_h),
        Constraint::Min(1),
        Constraint::Length(footer_h),
    ])
    .areas(area);
    f.render_widget(Paragraph::new(head), head_area);

    if pane.summary {
        draw_summary(pane, ctx, view, f, table_area, hits);
    } else {
        draw_matrix(pane, ctx, view, f, table_area, hits);
    }
    if footer_h > 0 {
        let info = if pane.summary {
            Line::from(Span::styled(
                "a node with several reasons counts once per reason, as in the FitError message · enter: these nodes · v: matrix",
                t.dim,
            ))
        } else {
            column_info(pane, ctx, &cur)
        };
        f.render_widget(Paragraph::new(vec![info, legend(t)]), foot_area);
    }
}

/// The summary: each group of nodes (count, share, plugin, reason), its causes under it.
fn draw_summary(
    pane: &mut FiltersPane,
    ctx: &PaneCtx,
    view: &TraceView,
    f: &mut Frame,
    area: Rect,
    hits: &mut Hits,
) {
    let t = ctx.theme;
    let count_w = format::thousands(view.rows.len()).len().max(5) as u16;
    let plugin_w = view
        .summary
        .iter()
        .filter_map(|g| g.plugin.as_ref().map(|p| p.len()))
        .max()
        .unwrap_or(6)
        .clamp(6, 28) as u16;
    // The reason column: past the cursor mark, the count, bar and plugin columns and
    // their spaces, and a scrollbar's cell.
    let reason_w =
        (area.width as usize).saturating_sub(1 + count_w as usize + 12 + plugin_w as usize + 4);
    pane.cause_width = reason_w;
    let lines = summary_lines(view, reason_w);
    let widths = [
        Constraint::Length(count_w),
        Constraint::Length(12),
        Constraint::Length(plugin_w),
        Constraint::Fill(1),
    ];
    let rows_area = virtual_table(
        f,
        area,
        t,
        Some(Row::new(["nodes", "share", "plugin", "reason"])),
        &widths,
        lines.len(),
        &mut pane.group_cursor,
        ctx.focus == Focus::Detail,
        |i| summary_row(t, view, &lines[i]),
    );
    hits.rects.push((rows_area, Hit::DetailRows));
    hits.offsets
        .push((Hit::DetailRows, pane.group_cursor.offset));
}

/// A summary line: a group, or (`cause` = `Some(k)`) its `k`th cause line.
fn summary_row(t: &Theme, view: &TraceView, (gi, cause): &(usize, Option<String>)) -> Row<'static> {
    let gi = *gi;
    if let Some(text) = cause {
        return Row::new(vec![
            Cell::from(""),
            Cell::from(""),
            Cell::from(""),
            Cell::from(Span::styled(text.clone(), t.dim)),
        ]);
    }
    let total = view.rows.len().max(1) as i64;
    let g = &view.summary[gi];
    let n = g.rows.len();
    let (mark, rstyle) = match g.kind {
        GroupKind::Feasible => (Mark::Pass, t.pass),
        GroupKind::Rejected => (Mark::Reject, t.reject),
        GroupKind::Excluded => (Mark::NotRun, t.not_run),
    };
    Row::new(vec![
        Cell::from(Line::from(format::thousands(n)).right_aligned()),
        Cell::from(Span::styled(
            format::bar(n as i64, total, 12),
            if g.kind == GroupKind::Feasible {
                t.score_bar_best
            } else {
                t.score_bar
            },
        )),
        Cell::from(g.plugin.clone().unwrap_or_default()),
        Cell::from(Line::from(vec![
            mark_span(t, mark),
            Span::raw(" "),
            Span::styled(g.reason.clone(), rstyle),
        ])),
    ])
}

/// The matrix: node | plugin columns (windowed to fit) | first rejection.
fn draw_matrix(
    pane: &mut FiltersPane,
    ctx: &PaneCtx,
    view: &TraceView,
    f: &mut Frame,
    area: Rect,
    hits: &mut Hits,
) {
    let t = ctx.theme;
    let node_w = pane
        .table
        .order
        .iter()
        .skip(pane.table.cursor.offset)
        .take(area.height as usize)
        .map(|&r| format::width(&view.rows[r as usize].node))
        .max()
        .unwrap_or(4)
        // Room for long generated names (cloud node names run to 40–60 cells), but
        // the plugin columns and the reason keep most of a narrow pane.
        .clamp(4, (area.width as usize / 3).max(12)) as u16;
    // 2 cells of selection gutter, 1 scrollbar, 1 spacing per column.
    let avail = area.width.saturating_sub(3 + node_w + 1 + REASON_MIN);
    let col_w: Vec<u16> = view
        .abbrevs
        .iter()
        .map(|a| format::width(a).max(1) as u16)
        .collect();
    let plugins_shown = pane.plugin_window(&col_w, avail);

    let mut widths = vec![Constraint::Length(node_w)];
    widths.extend(plugins_shown.clone().map(|j| Constraint::Length(col_w[j])));
    widths.push(Constraint::Fill(1));
    let header = matrix_header(pane, t, view, plugins_shown.clone());

    pane.table.draw(
        f,
        area,
        t,
        Some(header),
        &widths,
        ctx.focus == Focus::Detail,
        hits,
        Hit::DetailRows,
        |ri| matrix_row(t, view, ri, node_w, plugins_shown.clone()),
    );
}

impl FiltersPane {
    /// The plugin columns shown: a horizontal window over them that fits in `avail`
    /// cells (each column `col_w` wide plus a space), keeping the current one visible.
    fn plugin_window(&mut self, col_w: &[u16], avail: u16) -> std::ops::Range<usize> {
        let np = col_w.len();
        let col = self.table.column;
        let fits_from = |start: usize| -> usize {
            let mut used = 0u16;
            let mut n = 0;
            for w in &col_w[start.min(np)..] {
                if used + w + 1 > avail {
                    break;
                }
                used += w + 1;
                n += 1;
            }
            n
        };
        let mut start = self.col_offset.min(np.saturating_sub(1));
        if col >= 1 && col <= np {
            let p = col - 1;
            if p < start {
                start = p;
            }
            while start < p && start + fits_from(start) <= p {
                start += 1;
            }
        }
        let shown = fits_from(start);
        self.col_offset = start;
        start..start + shown
    }
}

/// The matrix's header: node, the plugins shown (‹ › when more lie either side), the
/// first rejection; the current column highlighted, the sorted one marked.
fn matrix_header(
    pane: &FiltersPane,
    t: &Theme,
    view: &TraceView,
    plugins_shown: std::ops::Range<usize>,
) -> Row<'static> {
    let np = view.plugins.len();
    let col = pane.table.column;
    let hdr_style = |c: usize| {
        if c == col { t.tab_active } else { t.header }
    };
    let sort_mark = |c: usize| pane.table.sort_mark(c);
    let mut hcells = vec![Cell::from(Span::styled(
        format!("node{}", sort_mark(0)),
        hdr_style(0),
    ))];
    let more_left = if plugins_shown.start > 0 { "‹ " } else { "" };
    let more_right = if plugins_shown.end < np { " ›" } else { "" };
    for j in plugins_shown {
        hcells.push(Cell::from(Span::styled(
            view.abbrevs[j].clone(),
            hdr_style(j + 1),
        )));
    }
    hcells.push(Cell::from(Span::styled(
        format!(
            "{more_left}first rejection{}{more_right}",
            sort_mark(np + 1)
        ),
        hdr_style(np + 1),
    )));
    Row::new(hcells)
}

/// Row `ri` of the matrix: the node, its mark per plugin shown, its first rejection.
fn matrix_row(
    t: &Theme,
    view: &TraceView,
    ri: usize,
    node_w: u16,
    plugins_shown: std::ops::Range<usize>,
) -> Row<'static> {
    let r = &view.rows[ri];
    // Cut in the middle: nodes of one pool differ only at the end.
    let mut cells = vec![Cell::from(format::middle(&r.node, node_w as usize))];
    for j in plugins_shown {
        cells.push(Cell::from(mark_span(t, view.cell(ri, j))));
    }
    let reason = if r.feasible {
        Line::from(vec![
            mark_span(t, Mark::Pass),
            Span::styled(" feasible", t.pass),
        ])
    } else if r.excluded {
        Line::from(vec![
            mark_span(t, Mark::NotRun),
            Span::styled(
                if r.reasons.is_empty() {
                    " not evaluated (PreFilter node subset)".to_string()
                } else {
                    format!(" {}", r.reasons)
                },
                t.not_run,
            ),
        ])
    } else {
        Line::from(vec![
            Span::styled(format!("{}: ", r.plugin.as_deref().unwrap_or("?")), t.dim),
            Span::styled(r.reasons.clone(), t.reject),
        ])
    };
    cells.push(Cell::from(reason));
    Row::new(cells)
}

fn mode_line(pane: &FiltersPane, ctx: &PaneCtx, view: &TraceView) -> Line<'static> {
    let t = ctx.theme;
    let mut spans = Vec::new();
    let (m, s) = if pane.summary {
        (t.tab, t.tab_active)
    } else {
        (t.tab_active, t.tab)
    };
    spans.push(Span::styled("matrix", m));
    spans.push(Span::styled(" | ", t.dim));
    spans.push(Span::styled("summary", s));
    spans.push(Span::styled(" (v)", t.dim));
    if pane.summary {
        spans.push(Span::styled(
            format!(
                "  {} group{} over {} node{}",
                view.summary.len(),
                crate::report::plural(view.summary.len()),
                format::thousands(view.rows.len()),
                crate::report::plural(view.rows.len())
            ),
            t.dim,
        ));
        return Line::from(spans);
    }
    if let Some(g) = pane.group.and_then(|g| view.summary.get(g)) {
        spans.push(Span::styled("  group: ", t.dim));
        spans.push(Span::styled(
            match &g.plugin {
                Some(p) => format!("{p}: {}", g.reason),
                None => g.reason.clone(),
            },
            t.key,
        ));
    }
    if !pane.table.filter.is_empty() {
        spans.push(Span::styled(format!("  /{}", pane.table.filter), t.prompt));
    }
    let n = pane.table.order.len();
    let first = if n == 0 {
        0
    } else {
        pane.table.cursor.selected + 1
    };
    spans.push(Span::styled(
        format!(
            "  row {}/{}",
            format::thousands(first),
            format::thousands(n),
        ),
        t.dim,
    ));
    if view.rows.len() < ctx.cluster.nodes().len() {
        spans.push(Span::styled(
            format!(
                "  ({} not evaluated)",
                ctx.cluster.nodes().len() - view.rows.len()
            ),
            t.warning,
        ));
    }
    Line::from(spans)
}

/// The current column's full name and the selected node's answer in it.
fn column_info(pane: &FiltersPane, ctx: &PaneCtx, cur: &Current) -> Line<'static> {
    let t = ctx.theme;
    let view = &cur.view;
    let np = view.plugins.len();
    let col = pane.table.column;
    let row = pane
        .table
        .order
        .get(pane.table.cursor.selected)
        .map(|&r| r as usize);
    let mut spans = Vec::new();
    match col {
        0 => spans.push(Span::styled(
            "column: node name · h/l: columns · s: sort · enter: node detail · c: compare",
            t.dim,
        )),
        c if c <= np => {
            let j = c - 1;
            spans.push(Span::styled(
                format!("{} = {}", view.abbrevs[j], view.plugins[j]),
                t.header,
            ));
            if let Some(ri) = row {
                let m = view.cell(ri, j);
                spans.push(Span::styled(format!(" · {}: ", view.rows[ri].node), t.dim));
                spans.push(mark_span(t, m));
                spans.push(Span::styled(format!(" {}", m.label()), mark_style(t, m)));
                let reasons = view
                    .cell_reasons(&cur.trace, ri, j)
                    .map(|r| r.reasons.join(", "))
                    .filter(|s| !s.is_empty())
                    .or_else(|| {
                        (view.rows[ri].plugin.as_deref() == Some(view.plugins[j].as_str()))
                            .then(|| view.rows[ri].reasons.clone())
                    });
                if let Some(r) = reasons {
                    spans.push(Span::styled(format!(": {r}"), mark_style(t, m)));
                }
            }
        }
        _ => spans.push(Span::styled(
            "column: first rejecting plugin and its reasons (what kube-scheduler reports)",
            t.dim,
        )),
    }
    Line::from(spans)
}
