//! The sortable, filterable table the Pods, Filters and Scores panes share: which
//! rows show in which order, the selected row and column, the sort and the `/`
//! filter, and drawing only the visible rows.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::widgets::Row;

use super::{Hit, Hits, move_cursor};
use crate::theme::Theme;
use crate::tui::widgets::{Cursor, virtual_table};

#[derive(Clone, Debug, Default)]
pub struct SortTable {
    pub cursor: Cursor,
    /// The selected column (the pane says what each is).
    pub column: usize,
    /// The column sorted by, and whether reversed.
    pub sort: Option<(usize, bool)>,
    pub filter: String,
    /// Indices of the pane's rows in display order.
    pub order: Vec<u32>,
}

impl SortTable {
    /// The pane's row under the cursor.
    pub fn selected(&self) -> Option<usize> {
        self.order.get(self.cursor.selected).map(|&i| i as usize)
    }

    /// Put the cursor on the pane's row `row`, if it shows.
    pub fn select(&mut self, row: usize) {
        if let Some(pos) = self.order.iter().position(|&r| r as usize == row) {
            self.cursor.selected = pos;
        }
    }

    pub fn move_by(&mut self, delta: isize) {
        move_cursor(&mut self.cursor, delta, self.order.len());
    }

    /// Columns `0..=max`.
    pub fn column_by(&mut self, delta: isize, max: usize) {
        self.column = self.column.saturating_add_signed(delta).min(max);
    }

    /// `s`: sort by the selected column, or reverse the sort on it.
    pub fn toggle_sort(&mut self) {
        self.sort = match self.sort {
            Some((c, rev)) if c == self.column => Some((c, !rev)),
            _ => Some((self.column, false)),
        };
    }

    /// A new filter starts at the top.
    pub fn set_filter(&mut self, text: String) {
        self.filter = text;
        self.cursor.reset();
    }

    /// The lower-cased filter, for case-insensitive matching.
    pub fn needle(&self) -> String {
        self.filter.to_lowercase()
    }

    /// New rows: keep the cursor and the column in range (`columns` is the last).
    pub fn set_order(&mut self, order: Vec<u32>, columns: usize) {
        self.order = order;
        self.cursor.clamp(self.order.len());
        self.column = self.column.min(columns);
    }

    /// Sort `order` as [`Self::sort`] says, `by_column` sorting by a column.
    pub fn apply_sort(&self, order: &mut [u32], by_column: impl FnOnce(usize, &mut [u32])) {
        if let Some((col, rev)) = self.sort {
            by_column(col, order);
            if rev {
                order.reverse();
            }
        }
    }

    /// `↓`/`↑` after the title of the sorted column.
    pub fn sort_mark(&self, c: usize) -> &'static str {
        match self.sort {
            Some((s, rev)) if s == c => {
                if rev {
                    "↑"
                } else {
                    "↓"
                }
            }
            _ => "",
        }
    }

    /// Draw the rows in display order (`row` gets the pane's row index) and record
    /// where they are for the mouse as `hit`.
    #[allow(clippy::too_many_arguments)]
    pub fn draw<'a>(
        &mut self,
        f: &mut Frame,
        area: Rect,
        theme: &Theme,
        header: Option<Row<'a>>,
        widths: &[Constraint],
        focused: bool,
        hits: &mut Hits,
        hit: Hit,
        mut row: impl FnMut(usize) -> Row<'a>,
    ) -> Rect {
        let order = &self.order;
        let rows_area = virtual_table(
            f,
            area,
            theme,
            header,
            widths,
            order.len(),
            &mut self.cursor,
            focused,
            |i| row(order[i] as usize),
        );
        hits.rects.push((rows_area, hit));
        hits.offsets.push((hit, self.cursor.offset));
        rows_area
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorting_toggles_and_keeps_the_selected_row() {
        let mut t = SortTable {
            column: 2,
            ..SortTable::default()
        };
        t.toggle_sort();
        assert_eq!(t.sort, Some((2, false)));
        t.toggle_sort();
        assert_eq!(t.sort, Some((2, true)), "the same column reverses");
        t.column_by(-1, 5);
        t.toggle_sort();
        assert_eq!(t.sort, Some((1, false)), "another column sorts afresh");
        t.set_order(vec![3, 1, 2], 5);
        t.select(2);
        assert_eq!(t.selected(), Some(2));
        t.move_by(-5);
        assert_eq!(t.selected(), Some(3));
        let mut order = vec![3, 1, 2];
        t.apply_sort(&mut order, |_, o| o.sort());
        assert_eq!(order, vec![1, 2, 3]);
    }
}
