//! `S`: the Remedies view, an overlay over the detail pane: the what-if edits that
//! would make the explained pod schedulable (or land it on the chosen node), each
//! verified by a replay, as `explain --suggest` lists them. Enter applies the
//! selected one as what-if edits.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Clear;

use super::super::action::Action;
use super::super::remedies::RemediesKey;
use super::super::widgets::{Cursor, Scroll, block, scroll_text, wrap};
use super::{Component, Effect, Handled, Hit, Hits, PaneCtx, move_cursor, nav};
use crate::report::remedies::{Remedies, Suggestion};
use crate::theme::Theme;

/// The search for one pod: running (`found` empty), or its answer.
#[derive(Clone, Debug)]
pub struct RemediesPane {
    pub key: RemediesKey,
    pub found: Option<Result<Remedies, String>>,
    pub cursor: Cursor,
    scroll: Scroll,
}

impl RemediesPane {
    pub fn new(key: RemediesKey) -> Self {
        RemediesPane {
            key,
            found: None,
            cursor: Cursor::default(),
            scroll: Scroll::default(),
        }
    }

    fn suggestions(&self) -> &[Suggestion] {
        match &self.found {
            Some(Ok(r)) => &r.suggestions,
            _ => &[],
        }
    }

    /// The selected suggestion's edits.
    pub fn selected(&self) -> Option<&Suggestion> {
        self.suggestions().get(self.cursor.selected)
    }
}

impl Component for RemediesPane {
    fn handle(&mut self, _ctx: &PaneCtx, action: &Action) -> Handled {
        let n = self.suggestions().len();
        if let Some(d) = nav(action, self.page()) {
            move_cursor(&mut self.cursor, d, n);
            return Handled::Yes;
        }
        match action {
            Action::Enter => match self.selected() {
                Some(s) => Handled::Then(Effect::Edits(s.edits.clone())),
                None => Handled::Yes,
            },
            _ => Handled::No,
        }
    }

    fn page(&self) -> usize {
        self.scroll.page.max(1)
    }

    fn scroll(&mut self, _ctx: &PaneCtx, delta: isize) -> Handled {
        self.scroll.by(delta);
        Handled::Yes
    }

    fn cursor(&self) -> Option<usize> {
        Some(self.cursor.selected)
    }

    fn draw(&mut self, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
        let t = ctx.theme;
        let w = area.width.saturating_sub(4).clamp(20, 110);
        let text_w = (w as usize).saturating_sub(4).max(10);
        let (lines, at) = self.lines(t, text_w);
        let rect = crate::tui::widgets::overlay_rect(area, w, lines.len());
        f.render_widget(Clear, rect);
        let title = format!(" Remedies · {} · enter applies · esc closes ", self.key.pod);
        let b = block(t, title, true).style(t.text);
        let inner = b.inner(rect);
        f.render_widget(b, rect);
        hits.rects.push((rect, Hit::Help));
        // The selected suggestion in view.
        let page = inner.height as usize;
        if let Some(&(first, last)) = at.get(self.cursor.selected)
            && page > 0
        {
            if first < self.scroll.offset {
                self.scroll.offset = first;
            } else if last >= self.scroll.offset + page {
                self.scroll.offset = (last + 1).saturating_sub(page);
            }
        }
        scroll_text(f, inner, t, lines, &mut self.scroll);
    }
}

impl RemediesPane {
    /// The overlay's lines, and the first and last line of each suggestion.
    fn lines(&self, t: &Theme, width: usize) -> (Vec<Line<'static>>, Vec<(usize, usize)>) {
        let mut out = Vec::new();
        let mut at = Vec::new();
        let goal = match &self.key.target {
            Some(n) => format!("edits that land it on {n}"),
            None => "edits that make it schedulable".into(),
        };
        out.push(Line::from(Span::styled(
            format!("{goal}, smallest first, each verified by a replay"),
            t.dim,
        )));
        let r = match &self.found {
            None => {
                out.push(Line::from(Span::styled("searching…", t.warning)));
                return (out, at);
            }
            Some(Err(e)) => {
                out.push(Line::from(Span::styled(e.clone(), t.error)));
                return (out, at);
            }
            Some(Ok(r)) => r,
        };
        if r.suggestions.is_empty() {
            out.push(Line::from(Span::styled(
                "no edit (nor two together) found that makes it fit",
                t.warning,
            )));
        }
        for (i, s) in r.suggestions.iter().enumerate() {
            let first = out.len();
            let selected = i == self.cursor.selected;
            let style = if selected { t.selected } else { t.key };
            let mark = if selected { "› " } else { "  " };
            out.push(Line::from(vec![
                Span::styled(mark, style),
                Span::styled(s.edits.join(" "), style),
            ]));
            for part in wrap(&suggestion_result(s), width) {
                out.push(Line::from(Span::styled(format!("    {part}"), t.text)));
            }
            at.push((first, out.len() - 1));
        }
        out.push(Line::default());
        if let Some(p) = &r.preemption {
            for part in wrap(p, width) {
                out.push(Line::from(Span::styled(part, t.warning)));
            }
        }
        let replays = if r.stopped_early {
            format!(
                "stopped early after {} replays (limit {}): more remedies may exist",
                r.replays, r.limit
            )
        } else {
            format!("{} replays", r.replays)
        };
        out.push(Line::from(Span::styled(replays, t.dim)));
        (out, at)
    }
}

/// `fits 3 nodes · lands on gen-b1 (total 187) · note`.
fn suggestion_result(s: &Suggestion) -> String {
    let mut parts = vec![format!(
        "fits {} node{}",
        s.feasible,
        if s.feasible == 1 { "" } else { "s" }
    )];
    if let Some(n) = &s.selected_node {
        match s.total {
            Some(total) => parts.push(format!("lands on {n} (total {total})")),
            None => parts.push(format!("lands on {n}")),
        }
    }
    if let Some(note) = &s.note {
        parts.push(note.clone());
    }
    parts.join(" · ")
}
