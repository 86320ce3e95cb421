//! Scores of the feasible nodes: total, rank and bar per node, each plugin's weighted
//! score, and the selected node's breakdown (raw → normalized × weight).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use super::super::action::{Action, Focus};
use super::super::format;
use super::super::traces::Current;
use super::super::widgets::centered_note;
use super::table::SortTable;
use super::{Component, Effect, Handled, Hit, Hits, PaneCtx, nav};
use crate::engine::framework::MAX_NODE_SCORE;
use crate::engine::trace::PluginScores;
use crate::theme::Theme;

/// Scores of the feasible nodes: a [`SortTable`] over the feasible nodes (column 0 is
/// rank/total, 1 the node, 2.. a score plugin).
#[derive(Clone, Debug, Default)]
pub struct ScoresPane {
    pub table: SortTable,
}

impl ScoresPane {
    pub fn selected_node(&self, ctx: &PaneCtx) -> Option<String> {
        ctx.current?
            .trace
            .feasible
            .get(self.table.selected()?)
            .cloned()
    }

    /// The feasible nodes in rank order, filtered, sorted.
    pub fn refresh_order(&mut self, ctx: &PaneCtx) {
        let Some(c) = ctx.current else {
            self.table.order.clear();
            return;
        };
        let t = &c.trace;
        let needle = self.table.needle();
        let mut order: Vec<u32> = c.view.rank_order.iter().map(|&i| i as u32).collect();
        if !needle.is_empty() {
            order.retain(|&i| t.feasible[i as usize].to_lowercase().contains(&needle));
        }
        self.table.apply_sort(&mut order, |col, order| match col {
            0 => {}
            1 => order.sort_by(|a, b| t.feasible[*a as usize].cmp(&t.feasible[*b as usize])),
            c => {
                if let Some(s) = t.scores.get(c - 2) {
                    order.sort_by_key(|&i| {
                        let w = s.normalized.get(i as usize).copied().unwrap_or(0) * s.weight;
                        (std::cmp::Reverse(w), i)
                    });
                }
            }
        });
        self.table.set_order(order, t.scores.len() + 1);
    }

    pub fn trace_changed(&mut self, ctx: &PaneCtx, same_pod: bool) {
        if !same_pod {
            self.table.cursor.reset();
        }
        self.refresh_order(ctx);
    }
}

impl Component for ScoresPane {
    fn handle(&mut self, ctx: &PaneCtx, action: &Action) -> Handled {
        if let Some(d) = nav(action, self.page()) {
            self.table.move_by(d);
            return Handled::Yes;
        }
        let Some(c) = ctx.current else {
            return Handled::No;
        };
        match action {
            Action::Left => self.table.column_by(-1, c.trace.scores.len() + 1),
            Action::Right => self.table.column_by(1, c.trace.scores.len() + 1),
            Action::Sort => {
                self.table.toggle_sort();
                self.refresh_order(ctx);
            }
            Action::Enter => {
                if let Some(n) = self.selected_node(ctx) {
                    return Handled::Then(Effect::OpenNode(n));
                }
            }
            Action::Back if !self.table.filter.is_empty() => {
                self.table.filter.clear();
                self.refresh_order(ctx);
            }
            _ => return Handled::No,
        }
        Handled::Yes
    }

    fn page(&self) -> usize {
        self.table.cursor.page()
    }

    fn scroll(&mut self, _ctx: &PaneCtx, delta: isize) -> Handled {
        let n = self.table.order.len();
        self.table.cursor.scroll(delta, n);
        Handled::Yes
    }

    fn cursor(&self) -> Option<usize> {
        Some(self.table.cursor.selected)
    }

    fn click_row(&mut self, _ctx: &PaneCtx, i: usize) -> Option<Handled> {
        let n = self.table.order.len();
        super::click_cursor(&mut self.table.cursor, i, n)
    }

    fn start_filter(&mut self) -> Option<String> {
        Some(self.table.filter.clone())
    }

    fn set_filter(&mut self, ctx: &PaneCtx, text: String) {
        self.table.set_filter(text);
        self.refresh_order(ctx);
    }

    fn node(&self, ctx: &PaneCtx) -> Option<String> {
        self.selected_node(ctx)
    }

    fn draw(&mut self, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
        draw(self, ctx, f, area, hits)
    }
}

fn draw(pane: &mut ScoresPane, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
    let Some(cur) = ctx.current.cloned() else {
        return;
    };
    let t = ctx.theme.clone();
    let trace = &cur.trace;

    let head = headline(pane, &t, &cur);
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
    draw_table(pane, ctx, &cur, f, table_area, hits);

    if breakdown_h == 0 {
        return;
    }
    let Some(fi) = pane.table.selected() else {
        return;
    };
    draw_breakdown(f, &t, &cur, fi, detail_area);
}

/// How many nodes are feasible, the chosen one, the ties, and the filter.
fn headline(pane: &ScoresPane, t: &Theme, cur: &Current) -> Vec<Span<'static>> {
    let trace = &cur.trace;
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
            format!("{sel} chosen with {}", cur.view.max_total),
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
    if !pane.table.filter.is_empty() {
        head.push(Span::styled(format!("  /{}", pane.table.filter), t.prompt));
    }
    head
}

/// The table's column widths: the rank, node and total columns, each plugin's, how
/// many plugins fit, and the bar's width. Numbers are as wide as their widest value
/// or header (with its sort mark), never cut.
struct Columns {
    rank_w: u16,
    node_w: u16,
    total_w: u16,
    plugin_w: Vec<u16>,
    shown: usize,
    bar_w: usize,
}

impl Columns {
    fn fit(cur: &Current, table: &SortTable, width: u16) -> Columns {
        let (trace, view) = (&cur.trace, &cur.view);
        let head = |c: usize, s: &str| format!("{s}{}", table.sort_mark(c));
        let node_w = trace
            .feasible
            .iter()
            .map(|n| format::width(n))
            .max()
            .unwrap_or(4)
            // Up to half the width: nodes of one pool can differ in the middle
            // (`ip-10-0-20-143.ec2.internal`); the bar and plugin columns give way.
            .clamp(4, (width as usize / 2).max(12)) as u16;
        let rank_w =
            format::column_width(&head(0, "rank"), view.ranks.iter().map(|r| r.to_string())) as u16;
        let total_w =
            format::column_width("total", trace.totals.iter().map(|t| t.to_string())) as u16;
        let plugin_w: Vec<u16> = view
            .score_abbrevs
            .iter()
            .zip(&trace.scores)
            .enumerate()
            .map(|(j, (a, s))| {
                // The plugin's largest score, so the column keeps its width from
                // pod to pod; and every value shown.
                let values = s.normalized.iter().map(|n| (n * s.weight).to_string());
                let max = (MAX_NODE_SCORE * s.weight).to_string();
                format::column_width(&head(j + 2, a), values.chain([max])) as u16
            })
            .collect();
        // Plugin columns that fit after mark, rank, node, total and a bar of at least 10.
        let fixed = 3 + 2 + rank_w + 1 + node_w + 1 + total_w + 1 + 11;
        let mut room = width.saturating_sub(fixed);
        let mut shown = 0;
        for w in &plugin_w {
            if w + 1 > room {
                break;
            }
            room -= w + 1;
            shown += 1;
        }
        let bar_w = width
            .saturating_sub(fixed - 11)
            .saturating_sub(plugin_w.iter().take(shown).map(|w| w + 1).sum::<u16>())
            .saturating_sub(1) as usize;
        Columns {
            rank_w,
            node_w,
            total_w,
            plugin_w,
            shown,
            bar_w,
        }
    }

    fn widths(&self) -> Vec<Constraint> {
        let mut widths = vec![
            Constraint::Length(1),
            Constraint::Length(self.rank_w),
            Constraint::Length(self.node_w),
            Constraint::Length(self.total_w),
            Constraint::Fill(1),
        ];
        widths.extend(
            self.plugin_w
                .iter()
                .take(self.shown)
                .map(|w| Constraint::Length(*w)),
        );
        widths
    }
}

/// The feasible nodes: mark, rank, node, total, bar and the plugins that fit.
fn draw_table(
    pane: &mut ScoresPane,
    ctx: &PaneCtx,
    cur: &Current,
    f: &mut Frame,
    area: Rect,
    hits: &mut Hits,
) {
    let t = ctx.theme;
    let cols = Columns::fit(cur, &pane.table, area.width);
    let header = header_row(pane, t, &cur.view.score_abbrevs, cols.shown);
    let focused = ctx.focus == Focus::Detail;
    pane.table.draw(
        f,
        area,
        t,
        Some(header),
        &cols.widths(),
        focused,
        hits,
        Hit::DetailRows,
        |fi| node_row(t, cur, &cols, fi),
    );
}

fn header_row(pane: &ScoresPane, t: &Theme, abbrevs: &[String], shown: usize) -> Row<'static> {
    let col = pane.table.column;
    let hdr = |c: usize, s: String| {
        let sort = pane.table.sort_mark(c);
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
    Row::new(hcells)
}

/// The row of the `fi`th feasible node.
fn node_row(t: &Theme, cur: &Current, cols: &Columns, fi: usize) -> Row<'static> {
    let (trace, view) = (&cur.trace, &cur.view);
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
            // Cut in the middle: nodes of one pool differ only at the end.
            format::middle(node, cols.node_w as usize),
            if chosen { t.chosen } else { t.text },
        )),
        Cell::from(Line::from(total.to_string()).right_aligned()),
        Cell::from(Span::styled(
            format::bar(total, view.max_total.max(1), cols.bar_w),
            bar_style,
        )),
    ];
    for s in trace.scores.iter().take(cols.shown) {
        let w = s.normalized.get(fi).copied().unwrap_or(0) * s.weight;
        cells.push(Cell::from(Line::from(w.to_string()).right_aligned()));
    }
    Row::new(cells)
}

/// The `fi`th feasible node's scores, plugin by plugin: raw → normalized × weight.
fn draw_breakdown(f: &mut Frame, t: &Theme, cur: &Current, fi: usize, area: Rect) {
    let (trace, view) = (&cur.trace, &cur.view);
    let node = &trace.feasible[fi];
    let [title_area, list_area] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
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
    let pw = trace
        .scores
        .iter()
        .map(|s| s.plugin.len())
        .max()
        .unwrap_or(8)
        .clamp(8, 36) as u16;
    // Each number column as wide as its widest value or header.
    let raw = |s: &PluginScores| s.raw.get(fi).copied().unwrap_or(0);
    let norm = |s: &PluginScores| s.normalized.get(fi).copied().unwrap_or(0);
    let cells: Vec<[String; 4]> = trace
        .scores
        .iter()
        .map(|s| {
            [
                raw(s).to_string(),
                norm(s).to_string(),
                format!("×{}", s.weight),
                format!("={}", norm(s) * s.weight),
            ]
        })
        .collect();
    let num_w: Vec<u16> = ["raw", "norm", "weight", "score"]
        .iter()
        .enumerate()
        .map(|(k, head)| format::column_width(head, cells.iter().map(|c| &c[k])) as u16)
        .collect();
    let nums: u16 = num_w.iter().sum();
    let bar_w = list_area.width.saturating_sub(pw + nums + 8).clamp(0, 30) as usize;
    let mut rows: Vec<Row> = trace
        .scores
        .iter()
        .zip(cells)
        .map(|(s, cells)| {
            let w = norm(s) * s.weight;
            let mut row = vec![Cell::from(s.plugin.clone())];
            row.extend(
                cells
                    .into_iter()
                    .map(|c| Cell::from(Line::from(c).right_aligned())),
            );
            row.push(Cell::from(Span::styled(
                format::bar(w, MAX_NODE_SCORE * s.weight, bar_w),
                t.score_bar,
            )));
            Row::new(row)
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
    let mut widths = vec![Constraint::Length(pw)];
    widths.extend(num_w.iter().map(|w| Constraint::Length(*w)));
    widths.push(Constraint::Fill(1));
    f.render_widget(Table::new(rows, widths), list_area);
}
