//! `?`: every key, from the same table the keymap uses.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Clear;

use super::super::action::Action;
use super::super::format;
use super::super::keymap::{BINDINGS, MOUSE_HELP, Scope};
use super::super::widgets::Scroll;
use super::super::widgets::{block, scroll_text, wrap};
use super::{Component, Handled, Hit, Hits, PaneCtx, mark_span, scroll_by};
use crate::report::Mark;

/// `?`: every key, scrolled.
#[derive(Clone, Debug, Default)]
pub struct HelpPane {
    pub scroll: Scroll,
}

impl Component for HelpPane {
    scroll_keys!();

    fn draw(&mut self, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
        draw(self, ctx, f, area, hits)
    }
}

fn draw(pane: &mut HelpPane, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
    let t = ctx.theme.clone();
    let w = (area.width.saturating_sub(4)).clamp(20, 100);
    let key_w = BINDINGS
        .iter()
        .map(|b| format::width(b.label))
        .max()
        .unwrap_or(8)
        + 2;
    let mut lines = Vec::new();
    let mut scopes: Vec<Scope> = Vec::new();
    for bd in BINDINGS {
        if !scopes.contains(&bd.scope) {
            scopes.push(bd.scope);
        }
    }
    for scope in scopes {
        lines.push(Line::from(Span::styled(scope.title(), t.header)));
        let text_w = (w as usize).saturating_sub(2 + key_w + 3).max(10);
        for bd in BINDINGS.iter().filter(|b| b.scope == scope) {
            for (i, part) in wrap(bd.help, text_w).into_iter().enumerate() {
                let label = if i == 0 { bd.label } else { "" };
                lines.push(Line::from(vec![
                    Span::styled(format!("  {}", format::fit(label, key_w)), t.key),
                    Span::styled(part, t.text),
                ]));
            }
        }
        lines.push(Line::default());
    }
    lines.push(Line::from(Span::styled("Prompts (/ and :)", t.header)));
    for (k, h) in [
        ("enter", "apply"),
        ("esc", "cancel (the filter goes back to what it was)"),
        ("ctrl-u", "clear"),
    ] {
        lines.push(Line::from(vec![
            Span::styled(format!("  {}", format::fit(k, key_w)), t.key),
            Span::styled(h, t.text),
        ]));
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled("Mouse", t.header)));
    lines.push(Line::from(Span::styled(format!("  {MOUSE_HELP}"), t.text)));
    lines.push(Line::default());
    lines.push(Line::from(Span::styled("Symbols", t.header)));
    let mut sym = vec![Span::raw("  ")];
    for m in [
        Mark::Pass,
        Mark::RejectFirst,
        Mark::Reject,
        Mark::Skip,
        Mark::NotRun,
        Mark::Error,
        Mark::Wait,
    ] {
        sym.push(mark_span(&t, m));
        sym.push(Span::styled(format!(" {}  ", m.label()), t.text));
    }
    lines.push(Line::from(sym));
    lines.push(Line::from(Span::styled(
        "  ★ chosen node  = tied for best  › selected row",
        t.text,
    )));
    lines.push(Line::from(Span::styled(
        "  pods: ○ pending  ⊘ gated  ✗ unschedulable  → nominated  ◷ waiting  ● bound",
        t.text,
    )));
    // The Filters and Scores column headers of the shown trace, spelled out.
    if let Some(cur) = ctx.current {
        let v = &cur.view;
        let score_names: Vec<String> = cur.trace.scores.iter().map(|s| s.plugin.clone()).collect();
        let text_w = (w as usize).saturating_sub(4).max(10);
        for (title, names, abbrevs) in [
            ("Filters columns", &v.plugins, &v.abbrevs),
            ("Scores columns", &score_names, &v.score_abbrevs),
        ] {
            if names.is_empty() {
                continue;
            }
            lines.push(Line::default());
            lines.push(Line::from(Span::styled(title, t.header)));
            for part in wrap(&crate::report::legend(names, abbrevs), text_w) {
                lines.push(Line::from(Span::styled(format!("  {part}"), t.text)));
            }
        }
    }
    let rect = crate::tui::widgets::overlay_rect(area, w, lines.len());
    f.render_widget(Clear, rect);
    let b = block(&t, " Help · esc closes · j/k scroll ", true).style(t.text);
    let inner = b.inner(rect);
    f.render_widget(b, rect);
    hits.rects.push((rect, Hit::Help));
    scroll_text(f, inner, &t, lines, &mut pane.scroll);
}
