//! The inspector's one sanitizer: every cell passes through [`InertBackend`] on its
//! way to the terminal, so no text from a cluster, a snapshot or an error message
//! (names, reasons, API errors) can write a control character, a bidi control or a
//! zero-width character there. ratatui already drops graphemes holding a control
//! character and zero-width ones; a joiner or a bidi mark attached to a letter is one
//! grapheme with it and reached the terminal whole.

use std::borrow::Cow;

use ratatui::backend::{Backend, ClearType, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};

use crate::render::escape::is_spoofing;

/// A backend that draws through `B` with every cell made [`inert`].
pub struct InertBackend<B>(pub B);

/// The cell with control, bidi and zero-width characters removed from its symbol
/// (a blank when nothing is left); a cell without any, as it is.
pub fn inert(cell: &Cell) -> Cow<'_, Cell> {
    let bad = |c: char| c.is_control() || is_spoofing(c);
    let symbol = cell.symbol();
    if !symbol.contains(bad) {
        return Cow::Borrowed(cell);
    }
    let kept: String = symbol.chars().filter(|&c| !bad(c)).collect();
    let mut cell = cell.clone();
    cell.set_symbol(if kept.is_empty() { " " } else { &kept });
    Cow::Owned(cell)
}

impl<B: Backend> Backend for InertBackend<B> {
    type Error = B::Error;

    fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        let cells: Vec<(u16, u16, Cow<'a, Cell>)> =
            content.map(|(x, y, c)| (x, y, inert(c))).collect();
        self.0
            .draw(cells.iter().map(|(x, y, c)| (*x, *y, c.as_ref())))
    }

    fn append_lines(&mut self, n: u16) -> Result<(), Self::Error> {
        self.0.append_lines(n)
    }

    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.0.hide_cursor()
    }

    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.0.show_cursor()
    }

    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        self.0.get_cursor_position()
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> Result<(), Self::Error> {
        self.0.set_cursor_position(position)
    }

    fn clear(&mut self) -> Result<(), Self::Error> {
        self.0.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> Result<(), Self::Error> {
        self.0.clear_region(clear_type)
    }

    fn size(&self) -> Result<Size, Self::Error> {
        self.0.size()
    }

    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.0.window_size()
    }

    fn flush(&mut self) -> Result<(), Self::Error> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::widgets::Paragraph;

    #[test]
    fn spoofing_characters_never_reach_the_backend() {
        let mut t = Terminal::new(InertBackend(TestBackend::new(40, 3))).unwrap();
        let text = "a\u{200d}b\u{202e}c\u{200b}d\u{2066}e\u{feff}f\u{61c}g\u{200f}h\x1b[2J";
        t.draw(|f| f.render_widget(Paragraph::new(text), f.area()))
            .unwrap();
        let drawn: String = t
            .backend()
            .0
            .buffer()
            .content()
            .iter()
            .map(Cell::symbol)
            .collect();
        assert!(
            !drawn.contains(|c: char| c.is_control() || is_spoofing(c)),
            "{drawn:?}"
        );
        assert!(drawn.starts_with("abcdefgh[2J"), "{drawn:?}");
    }
}
