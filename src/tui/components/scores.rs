//! Scores of the feasible nodes: total, rank and bar per node, each plugin's weighted
//! score, and the selected node's breakdown (raw → normalized × weight).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use super::super::action::Focus;
use super::super::app::{App, Hit};
use super::super::format;
use super::super::widgets::{centered_note, virtual_table};
use crate::engine::framework::MAX_NODE_SCORE;

pub fn draw(app: &mut App, f: &mut Frame, area: Rect) {
    let Some(cur) = app.current.clone() else {
        return;
    };
    let t = app.theme.clone();
    let trace = &cur.trace;
    let view = &cur.view;

    let mut head = vec![Span::styled(
        format!(
            "{}/{} nodes feasible",
            trace.feasible.len(),
            trace.nodes_total
        ),
        if trace.feasible.is_empty() {
            t.reject
        } else {
            t.pass
        },
    )];
    if let Some(sel) = &trace.selected_node {
        head.push(Span::styled("  ★ ", t.chosen));
        head.push(Span::styled(
            format!("{sel} chosen with {}", view.max_total),
            t.chosen,
        ));
    }
    let ties: Vec<&String> = trace
        .best_nodes
        .iter()
        .filter(|n| Some(*n) != trace.selected_node.as_ref())
        .collect();
    if !ties.is_empty() {
        head.push(Span::styled("  = tied: ", t.tie));
        let shown: Vec<&str> = ties.iter().take(5).map(|s| s.as_str()).collect();
        let more = if ties.len() > 5 {
            format!(" +{}", ties.len() - 5)
        } else {
            String::new()
        };
        head.push(Span::styled(format!("{}{more}", shown.join(", ")), t.tie));
        head.push(Span::styled(
            " (kube-scheduler picks among ties at random)",
            t.dim,
        ));
    }
    if !app.scores.filter.is_empty() {
        head.push(Span::styled(format!("  /{}", app.scores.filter), t.prompt));
    }
    if trace.feasible.is_empty() {
        let [h, rest] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
        f.render_widget(Paragraph::new(Line::from(head)), h);
        centered_note(
            f,
            rest,
            t.dim,
            "no feasible node: nothing is scored (see Filters and Preemption)",
        );
        return;
    }

    let names: Vec<String> = trace.scores.iter().map(|s| s.plugin.clone()).collect();
    let abbrevs = &view.score_abbrevs;
    let breakdown_h = if area.height >= 16 {
        (trace.scores.len() as u16 + 3).min(area.height / 2)
    } else {
        0
    };
    let [head_area, table_area, detail_area] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(breakdown_h),
    ])
    .areas(area);
    f.render_widget(Paragraph::new(Line::from(head)), head_area);

    let node_w = trace
        .feasible
        .iter()
        .map(|n| format::width(n))
        .max()
        .unwrap_or(4)
        .clamp(4, 28) as u16;
    let total_w = format::width(&view.max_total.to_string()).max(5) as u16;
    let col_w: Vec<u16> = abbrevs
        .iter()
        .zip(&trace.scores)
        .map(|(a, s)| {
            let max = (MAX_NODE_SCORE * s.weight).to_string().len();
            format::width(a).max(max) as u16
        })
        .collect();
    // Plugin columns that fit after rank, node, total and a bar of at least 10.
    let fixed = 3 + 2 + 5 + node_w + 1 + total_w + 1 + 11;
    let mut room = table_area.width.saturating_sub(fixed);
    let mut shown = 0;
    for w in &col_w {
        if w + 1 > room {
            break;
        }
        room -= w + 1;
        shown += 1;
    }
    let col = app.scores.column;
    let hdr = |c: usize, s: String| {
        let sort = match app.scores.sort {
            Some((x, rev)) if x == c => {
                if rev {
                    "↑"
                } else {
                    "↓"
                }
            }
            _ => "",
        };
        Cell::from(Span::styled(
            format!("{s}{sort}"),
            if c == col { t.tab_active } else { t.header },
        ))
    };
    let mut hcells = vec![
        Cell::from(""),
        hdr(0, "rank".into()),
        hdr(1, "node".into()),
        Cell::from(Line::from("total").right_aligned()),
        Cell::from("bar"),
    ];
    for (j, a) in abbrevs.iter().enumerate().take(shown) {
        hcells.push(hdr(j + 2, a.clone()));
    }
    let mut widths = vec![
        Constraint::Length(1),
        Constraint::Length(4),
        Constraint::Length(node_w),
        Constraint::Length(total_w),
        Constraint::Fill(1),
    ];
    widths.extend(col_w.iter().take(shown).map(|w| Constraint::Length(*w)));
    let bar_w = table_area
        .width
        .saturating_sub(fixed - 11)
        .saturating_sub(col_w.iter().take(shown).map(|w| w + 1).sum::<u16>())
        .saturating_sub(1) as usize;

    let order = &app.scores.order;
    let focused = app.focus == Focus::Detail;
    let rows_area = virtual_table(
        f,
        table_area,
        &t,
        Some(Row::new(hcells)),
        &widths,
        order.len(),
        &mut app.scores.cursor,
        focused,
        |i| {
            let fi = order[i] as usize;
            let node = &trace.feasible[fi];
            let total = trace.totals.get(fi).copied().unwrap_or(0);
            let chosen = trace.selected_node.as_ref() == Some(node);
            let tie = !chosen && trace.best_nodes.contains(node);
            let (mark, ms) = if chosen {
                ("★", t.chosen)
            } else if tie {
                ("=", t.tie)
            } else {
                (" ", t.text)
            };
            let bar_style = if chosen || tie {
                t.score_bar_best
            } else {
                t.score_bar
            };
            let mut cells = vec![
                Cell::from(Span::styled(mark, ms)),
                Cell::from(Line::from(view.ranks[fi].to_string()).right_aligned()),
                Cell::from(Span::styled(
                    node.clone(),
                    if chosen { t.chosen } else { t.text },
                )),
                Cell::from(Line::from(total.to_string()).right_aligned()),
                Cell::from(Span::styled(
                    format::bar(total, view.max_total.max(1), bar_w),
                    bar_style,
                )),
            ];
            for s in trace.scores.iter().take(shown) {
                let w = s.normalized.get(fi).copied().unwrap_or(0) * s.weight;
                cells.push(Cell::from(Line::from(w.to_string()).right_aligned()));
            }
            Row::new(cells)
        },
    );
    app.hits.push((rows_area, Hit::DetailRows));
    app.hit_offsets
        .push((Hit::DetailRows, app.scores.cursor.offset));

    if breakdown_h == 0 {
        return;
    }
    let Some(&fi) = order.get(app.scores.cursor.selected) else {
        return;
    };
    let fi = fi as usize;
    let node = &trace.feasible[fi];
    let [title_area, list_area] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(detail_area);
    f.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(format!("─ {node} "), t.header),
            Span::styled(
                format!(
                    "rank {} of {} · total {}",
                    view.ranks[fi],
                    trace.feasible.len(),
                    trace.totals.get(fi).copied().unwrap_or(0)
                ),
                t.dim,
            ),
            Span::styled("  (raw → normalized × weight = weighted)", t.dim),
        ])),
        title_area,
    );
    let pw = names
        .iter()
        .map(|n| n.len())
        .max()
        .unwrap_or(8)
        .clamp(8, 36) as u16;
    let bar_w = list_area.width.saturating_sub(pw + 6 * 4 + 8).clamp(0, 30) as usize;
    let mut rows: Vec<Row> = trace
        .scores
        .iter()
        .map(|s| {
            let raw = s.raw.get(fi).copied().unwrap_or(0);
            let norm = s.normalized.get(fi).copied().unwrap_or(0);
            let w = norm * s.weight;
            Row::new(vec![
                Cell::from(s.plugin.clone()),
                Cell::from(Line::from(raw.to_string()).right_aligned()),
                Cell::from(Line::from(norm.to_string()).right_aligned()),
                Cell::from(Line::from(format!("×{}", s.weight)).right_aligned()),
                Cell::from(Line::from(format!("={w}")).right_aligned()),
                Cell::from(Span::styled(
                    format::bar(w, MAX_NODE_SCORE * s.weight, bar_w),
                    t.score_bar,
                )),
            ])
        })
        .collect();
    let r = |s: &'static str| Cell::from(Line::from(s).right_aligned());
    rows.insert(
        0,
        Row::new(vec![
            Cell::from("plugin"),
            r("raw"),
            r("norm"),
            r("weight"),
            r("score"),
            Cell::from("of max"),
        ])
        .style(t.header),
    );
    f.render_widget(
        Table::new(
            rows,
            [
                Constraint::Length(pw),
                Constraint::Length(6),
                Constraint::Length(6),
                Constraint::Length(6),
                Constraint::Length(6),
                Constraint::Fill(1),
            ],
        ),
        list_area,
    );
}
