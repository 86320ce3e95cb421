//! Cursor/scroll state and the drawing helpers every pane shares: a table that builds
//! only its visible rows, scrollable text, bordered blocks.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Block, BorderType, Borders, Paragraph, Row, Scrollbar, ScrollbarOrientation, ScrollbarState,
    Table, TableState,
};

use crate::theme::Theme;

/// Selection in a list of `len` rows, and the first visible row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cursor {
    pub selected: usize,
    pub offset: usize,
    /// Rows visible at the last draw (page size for PgUp/PgDn).
    pub page: usize,
}

impl Cursor {
    pub fn page(&self) -> usize {
        self.page.max(1)
    }
    pub fn up(&mut self, n: usize) {
        self.selected = self.selected.saturating_sub(n);
    }
    pub fn down(&mut self, n: usize, len: usize) {
        self.selected = (self.selected + n).min(len.saturating_sub(1));
    }
    pub fn top(&mut self) {
        self.selected = 0;
    }
    pub fn bottom(&mut self, len: usize) {
        self.selected = len.saturating_sub(1);
    }
    pub fn clamp(&mut self, len: usize) {
        self.selected = self.selected.min(len.saturating_sub(1));
        self.offset = self.offset.min(len.saturating_sub(1));
    }
    pub fn reset(&mut self) {
        self.selected = 0;
        self.offset = 0;
    }
    /// Keep the selection visible in `height` rows.
    pub fn fit(&mut self, height: usize, len: usize) {
        self.page = height;
        self.clamp(len);
        if height == 0 {
            return;
        }
        if self.selected < self.offset {
            self.offset = self.selected;
        }
        if self.selected >= self.offset + height {
            self.offset = self.selected + 1 - height;
        }
        self.offset = self.offset.min(len.saturating_sub(height));
    }
    /// Scroll the view without moving the selection off screen.
    pub fn scroll(&mut self, delta: isize, len: usize) {
        let max = len.saturating_sub(self.page());
        self.offset = self.offset.saturating_add_signed(delta).min(max);
        if self.selected < self.offset {
            self.selected = self.offset;
        }
        if self.selected >= self.offset + self.page() {
            self.selected = self.offset + self.page() - 1;
        }
        self.clamp(len);
    }
}

/// Scroll position of a text pane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scroll {
    pub offset: usize,
    pub page: usize,
    /// Lines at the last draw.
    pub content: usize,
}

impl Scroll {
    pub fn by(&mut self, delta: isize) {
        let max = self.content.saturating_sub(self.page.max(1));
        self.offset = self.offset.saturating_add_signed(delta).min(max);
    }
    pub fn top(&mut self) {
        self.offset = 0;
    }
    pub fn bottom(&mut self) {
        self.offset = self.content.saturating_sub(self.page.max(1));
    }
    pub fn page_size(&self) -> isize {
        self.page.max(1) as isize
    }
}

pub fn block<'a>(theme: &Theme, title: impl Into<Line<'a>>, focused: bool) -> Block<'a> {
    Block::default()
        .borders(Borders::ALL)
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Plain
        })
        .border_style(if focused {
            theme.border_focused
        } else {
            theme.border
        })
        .title(title.into().style(theme.title))
}

/// A table that builds rows only for the visible window. Returns the area of the rows
/// (for mouse hits). `row` is called with absolute row indices.
#[allow(clippy::too_many_arguments)]
pub fn virtual_table<'a>(
    f: &mut Frame,
    area: Rect,
    theme: &Theme,
    header: Option<Row<'a>>,
    widths: &[Constraint],
    len: usize,
    cursor: &mut Cursor,
    focused: bool,
    mut row: impl FnMut(usize) -> Row<'a>,
) -> Rect {
    let header_h = u16::from(header.is_some());
    let body_h = area.height.saturating_sub(header_h) as usize;
    cursor.fit(body_h, len);
    let end = (cursor.offset + body_h).min(len);
    let rows: Vec<Row> = (cursor.offset..end).map(&mut row).collect();
    let sel_style = if focused {
        theme.selected
    } else {
        theme.selected_inactive
    };
    let needs_bar = len > body_h && area.width > 2;
    let table_area = if needs_bar {
        Rect {
            width: area.width - 1,
            ..area
        }
    } else {
        area
    };
    let mut table = Table::new(rows, widths.to_vec())
        .column_spacing(1)
        .row_highlight_style(sel_style)
        .highlight_symbol(Line::from("›"))
        .highlight_spacing(ratatui::widgets::HighlightSpacing::Always);
    if let Some(h) = header {
        table = table.header(h.style(theme.header));
    }
    let mut state = TableState::default();
    if len > 0 {
        state.select(Some(cursor.selected - cursor.offset));
    }
    f.render_stateful_widget(table, table_area, &mut state);
    if needs_bar {
        let mut sb = ScrollbarState::new(len.saturating_sub(body_h))
            .position(cursor.offset)
            .viewport_content_length(body_h);
        f.render_stateful_widget(
            Scrollbar::new(ScrollbarOrientation::VerticalRight)
                .begin_symbol(None)
                .end_symbol(None)
                .style(theme.border),
            Rect {
                y: area.y + header_h,
                height: area.height.saturating_sub(header_h),
                ..area
            },
            &mut sb,
        );
    }
    Rect {
        y: area.y + header_h,
        height: area.height.saturating_sub(header_h),
        ..table_area
    }
}

/// Scrollable text: only the visible lines are passed to the paragraph.
pub fn scroll_text(
    f: &mut Frame,
    area: Rect,
    theme: &Theme,
    lines: Vec<Line<'_>>,
    scroll: &mut Scroll,
) {
    scroll.page = area.height as usize;
    scroll.content = lines.len();
    scroll.by(0);
    let needs_bar = lines.len() > area.height as usize && area.width > 2;
    let text_area = if needs_bar {
        Rect {
            width: area.width - 1,
            ..area
        }
    } else {
        area
    };
    let total = lines.len();
    let visible: Vec<Line> = lines
        .into_iter()
        .skip(scroll.offset)
        .take(area.height as usize)
        .collect();
    f.render_widget(Paragraph::new(visible).style(theme.text), text_area);
    if needs_bar {
        let mut sb = ScrollbarState::new(total.saturating_sub(area.height as usize))
            .position(scroll.offset)
            .viewport_content_length(area.height as usize);
        f.render_stateful_widget(
            Scrollbar::new(ScrollbarOrientation::VerticalRight)
                .begin_symbol(None)
                .end_symbol(None)
                .style(theme.border),
            area,
            &mut sb,
        );
    }
}

/// Where an overlay of `width` cells and `lines` lines of text (plus its border)
/// goes: centred in `area`, as tall as its text, leaving a line above and below.
pub fn overlay_rect(area: Rect, width: u16, lines: usize) -> Rect {
    let h = (lines as u16 + 2).min(area.height.saturating_sub(2).max(3));
    Rect {
        x: area.x + (area.width.saturating_sub(width)) / 2,
        y: area.y + (area.height.saturating_sub(h)) / 2,
        width: width.min(area.width),
        height: h.min(area.height),
    }
}

/// A message centred in `area`, wrapped to its width.
pub fn centered_note(f: &mut Frame, area: Rect, style: Style, text: &str) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let width = (area.width as usize).saturating_sub(2).max(1);
    let lines: Vec<Line> = wrap(text, width)
        .into_iter()
        .take(area.height as usize)
        .map(|l| Line::from(Span::styled(l, style)).centered())
        .collect();
    let h = lines.len() as u16;
    let y = area.y + (area.height - h) / 2;
    f.render_widget(
        Paragraph::new(lines),
        Rect {
            y,
            height: h,
            ..area
        },
    );
}

/// A table cell's `text` wrapped to its column, `width` cells wide at the pane's last
/// draw (one line before the first draw, `width` 0): the Filters summary's causes and
/// History's messages wrap so instead of being cut at the pane's edge.
pub fn wrap_cell(text: &str, width: usize) -> Vec<String> {
    if width == 0 {
        return vec![text.to_string()];
    }
    wrap(text, width)
}

/// Wrap `text` into lines of at most `width` cells, on spaces.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        let ww = super::format::width(word);
        let cw = super::format::width(&cur);
        if cw > 0 && cw + 1 + ww > width {
            out.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
        while super::format::width(&cur) > width {
            // A single word longer than the line: hard-cut it.
            let cut: String = cur.chars().take(width).collect();
            let rest: String = cur.chars().skip(width).collect();
            out.push(cut);
            cur = rest;
        }
    }
    if !cur.is_empty() || out.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_keeps_selection_visible() {
        let mut c = Cursor::default();
        c.down(15, 100);
        c.fit(10, 100);
        assert_eq!((c.selected, c.offset), (15, 6));
        c.up(10);
        c.fit(10, 100);
        assert_eq!((c.selected, c.offset), (5, 5));
        c.bottom(100);
        c.fit(10, 100);
        assert_eq!((c.selected, c.offset), (99, 90));
        c.fit(10, 20);
        assert_eq!((c.selected, c.offset), (19, 10));
        c.scroll(-5, 20);
        assert_eq!((c.selected, c.offset), (14, 5));
    }

    #[test]
    fn wraps_on_spaces() {
        assert_eq!(wrap("aa bb cc", 5), ["aa bb", "cc"]);
        assert_eq!(wrap("abcdefgh", 3), ["abc", "def", "gh"]);
        assert_eq!(wrap("", 3), [""]);
    }
}
