//! Filter verdicts: nodes × filter plugins, or nodes grouped by rejection reason.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row};

use super::super::action::Focus;
use super::super::app::{App, Hit};
use super::super::format;
use super::super::view::{GroupKind, Mark};
use super::super::widgets::{virtual_table, wrap};
use super::{legend, mark_span, mark_style};

/// Width of the "first rejection" column at least.
const REASON_MIN: u16 = 14;

pub fn draw(app: &mut App, f: &mut Frame, area: Rect) {
    let Some(cur) = app.current.clone() else {
        return;
    };
    let t = app.theme.clone();
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
    head.push(mode_line(app, view));
    let head_h = head.len() as u16;
    let footer_h: u16 = if area.height > head_h + 6 { 2 } else { 0 };
    let [head_area, table_area, foot_area] = Layout::vertical([
        Constraint::Length(head_h),
        Constraint::Min(1),
        Constraint::Length(footer_h),
    ])
    .areas(area);
    f.render_widget(Paragraph::new(head), head_area);
    let focused = app.focus == Focus::Detail;

    if app.filters.summary {
        let total = view.rows.len().max(1) as i64;
        let count_w = format::thousands(view.rows.len()).len().max(5) as u16;
        let plugin_w = view
            .summary
            .iter()
            .filter_map(|g| g.plugin.as_ref().map(|p| p.len()))
            .max()
            .unwrap_or(6)
            .clamp(6, 28) as u16;
        let widths = [
            Constraint::Length(count_w),
            Constraint::Length(12),
            Constraint::Length(plugin_w),
            Constraint::Fill(1),
        ];
        let rows_area = virtual_table(
            f,
            table_area,
            &t,
            Some(Row::new(["nodes", "share", "plugin", "reason"])),
            &widths,
            view.summary.len(),
            &mut app.filters.group_cursor,
            focused,
            |i| {
                let g = &view.summary[i];
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
                        mark_span(&t, mark),
                        Span::raw(" "),
                        Span::styled(g.reason.clone(), rstyle),
                    ])),
                ])
            },
        );
        app.hits.push((rows_area, Hit::DetailRows));
        app.hit_offsets
            .push((Hit::DetailRows, app.filters.group_cursor.offset));
        if footer_h > 0 {
            let hint = Line::from(Span::styled(
                "a node with several reasons counts once per reason, as in the FitError message · enter: these nodes · v: matrix",
                t.dim,
            ));
            f.render_widget(Paragraph::new(vec![hint, legend(&t)]), foot_area);
        }
        return;
    }

    // Matrix: node | plugin columns (windowed to fit) | first rejection.
    let np = view.plugins.len();
    let col = app.filters.column;
    let node_w = app
        .filters
        .order
        .iter()
        .skip(app.filters.cursor.offset)
        .take(table_area.height as usize)
        .map(|&r| format::width(&view.rows[r as usize].node))
        .max()
        .unwrap_or(4)
        .clamp(4, 28) as u16;
    // 2 cells of selection gutter, 1 scrollbar, 1 spacing per column.
    let avail = table_area.width.saturating_sub(3 + node_w + 1 + REASON_MIN);
    let col_w: Vec<u16> = view
        .abbrevs
        .iter()
        .map(|a| format::width(a).max(1) as u16)
        .collect();
    // Horizontal window over plugin columns, keeping the current one visible.
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
    let mut start = app.filters.col_offset.min(np.saturating_sub(1));
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
    app.filters.col_offset = start;
    let plugins_shown = start..start + shown;

    let mut widths = vec![Constraint::Length(node_w)];
    widths.extend(plugins_shown.clone().map(|j| Constraint::Length(col_w[j])));
    widths.push(Constraint::Fill(1));

    let hdr_style = |c: usize| {
        if c == col { t.tab_active } else { t.header }
    };
    let sort_mark = |c: usize| match app.filters.sort {
        Some((s, rev)) if s == c => {
            if rev {
                "↑"
            } else {
                "↓"
            }
        }
        _ => "",
    };
    let mut hcells = vec![Cell::from(Span::styled(
        format!("node{}", sort_mark(0)),
        hdr_style(0),
    ))];
    for j in plugins_shown.clone() {
        hcells.push(Cell::from(Span::styled(
            view.abbrevs[j].clone(),
            hdr_style(j + 1),
        )));
    }
    let more_left = if start > 0 { "‹ " } else { "" };
    let more_right = if start + shown < np { " ›" } else { "" };
    hcells.push(Cell::from(Span::styled(
        format!(
            "{more_left}first rejection{}{more_right}",
            sort_mark(np + 1)
        ),
        hdr_style(np + 1),
    )));
    let header = Row::new(hcells);

    let order = &app.filters.order;
    let rows_area = virtual_table(
        f,
        table_area,
        &t,
        Some(header),
        &widths,
        order.len(),
        &mut app.filters.cursor,
        focused,
        |i| {
            let ri = order[i] as usize;
            let r = &view.rows[ri];
            let mut cells = vec![Cell::from(r.node.clone())];
            for j in plugins_shown.clone() {
                cells.push(Cell::from(mark_span(&t, view.cell(ri, j))));
            }
            let reason = if r.feasible {
                Line::from(vec![
                    mark_span(&t, Mark::Pass),
                    Span::styled(" feasible", t.pass),
                ])
            } else if r.excluded {
                Line::from(vec![
                    mark_span(&t, Mark::NotRun),
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
        },
    );
    app.hits.push((rows_area, Hit::DetailRows));
    app.hit_offsets
        .push((Hit::DetailRows, app.filters.cursor.offset));

    if footer_h > 0 {
        let info = column_info(app, &cur);
        f.render_widget(Paragraph::new(vec![info, legend(&t)]), foot_area);
    }
}

fn mode_line(app: &App, view: &super::super::view::TraceView) -> Line<'static> {
    let t = &app.theme;
    let mut spans = Vec::new();
    let (m, s) = if app.filters.summary {
        (t.tab, t.tab_active)
    } else {
        (t.tab_active, t.tab)
    };
    spans.push(Span::styled("matrix", m));
    spans.push(Span::styled(" | ", t.dim));
    spans.push(Span::styled("summary", s));
    spans.push(Span::styled(" (v)", t.dim));
    if app.filters.summary {
        spans.push(Span::styled(
            format!(
                "  {} group{} over {} node{}",
                view.summary.len(),
                super::super::view::plural(view.summary.len()),
                format::thousands(view.rows.len()),
                super::super::view::plural(view.rows.len())
            ),
            t.dim,
        ));
        return Line::from(spans);
    }
    if let Some(g) = app.filters.group.and_then(|g| view.summary.get(g)) {
        spans.push(Span::styled("  group: ", t.dim));
        spans.push(Span::styled(
            match &g.plugin {
                Some(p) => format!("{p}: {}", g.reason),
                None => g.reason.clone(),
            },
            t.key,
        ));
    }
    if !app.filters.filter.is_empty() {
        spans.push(Span::styled(format!("  /{}", app.filters.filter), t.prompt));
    }
    let n = app.filters.order.len();
    let first = if n == 0 {
        0
    } else {
        app.filters.cursor.selected + 1
    };
    spans.push(Span::styled(
        format!(
            "  {} of {} node{}",
            format::thousands(first),
            format::thousands(n),
            super::super::view::plural(n)
        ),
        t.dim,
    ));
    if view.rows.len() < app.cluster.nodes().len() {
        spans.push(Span::styled(
            format!(
                "  ({} not evaluated)",
                app.cluster.nodes().len() - view.rows.len()
            ),
            t.warning,
        ));
    }
    Line::from(spans)
}

/// The current column's full name and the selected node's answer in it.
fn column_info(app: &App, cur: &super::super::app::Current) -> Line<'static> {
    let t = &app.theme;
    let view = &cur.view;
    let np = view.plugins.len();
    let col = app.filters.column;
    let row = app
        .filters
        .order
        .get(app.filters.cursor.selected)
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
