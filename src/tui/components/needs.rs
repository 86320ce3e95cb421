//! The selected pod's own needs (the `explain` table's Needs section): requests,
//! selectors, affinity, tolerations, spread, ports, volumes, claims, priority, gates.
//! It needs no replay: the pod's spec and the cluster's objects say it all.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::super::action::Action;
use super::super::widgets::{Scroll, centered_note, scroll_text, wrap};
use super::{Component, Handled, Hit, Hits, PaneCtx, scroll_by};
use crate::report::needs::PodNeeds;
use crate::theme::Theme;

/// The selected pod's needs, scrolled.
#[derive(Clone, Debug, Default)]
pub struct NeedsPane {
    pub scroll: Scroll,
    /// The pod drawn last: another pod starts at the top.
    shown: Option<String>,
}

impl Component for NeedsPane {
    scroll_keys!();

    fn draw(&mut self, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
        let t = ctx.theme;
        let Some(pod) = ctx.selected_pod.and_then(|k| ctx.cluster.pod(k)) else {
            centered_note(f, area, t.dim, "no pod selected");
            return;
        };
        hits.rects.push((area, Hit::DetailPane));
        if self.shown.as_deref() != ctx.selected_pod {
            self.scroll = Scroll::default();
            self.shown = ctx.selected_pod.map(str::to_string);
        }
        let needs = PodNeeds::of(pod, ctx.cluster);
        let lines = needs_lines(t, &needs, area.width as usize);
        scroll_text(f, area, t, lines, &mut self.scroll);
    }
}

/// One row per entry: the need's label in a column, its entries wrapped beside it.
pub fn needs_lines(t: &Theme, needs: &PodNeeds, width: usize) -> Vec<Line<'static>> {
    let needs_lines = needs.lines();
    if needs_lines.is_empty() {
        return vec![Line::from(Span::styled(
            "nothing beyond the defaults: no requests, selectors, affinity, tolerations, spread constraints, ports, volumes or claims",
            t.dim,
        ))];
    }
    let indent = needs_lines
        .iter()
        .map(|l| crate::report::format::width(l.label))
        .max()
        .unwrap_or(0)
        + 2;
    // Narrow panes put the entries under their label instead of beside it.
    let beside = width >= indent + 24;
    let text_width = if beside {
        width.saturating_sub(indent)
    } else {
        width.saturating_sub(2)
    }
    .max(10);
    let mut out = Vec::new();
    for l in &needs_lines {
        if !beside {
            out.push(Line::from(Span::styled(l.label.to_string(), t.key)));
        }
        for (i, entry) in l.entries.iter().enumerate() {
            for (j, part) in wrap(entry, text_width).into_iter().enumerate() {
                let label = if beside && i == 0 && j == 0 {
                    l.label
                } else {
                    ""
                };
                let pad = if beside { indent } else { 2 };
                out.push(Line::from(vec![
                    Span::styled(crate::report::format::pad(label, pad), t.key),
                    Span::styled(part, t.text),
                ]));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use insta::assert_snapshot;

    use crate::model::testing::pod;
    use crate::tui::action::Tab;
    use crate::tui::fixtures::{Fixture, app_with, cluster, rich_pod, screen};

    fn typed(f: &mut Fixture, text: &str) {
        for c in text.chars() {
            f.app
                .handle_key(&KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
            f.settle();
        }
    }

    fn enter(f: &mut Fixture) {
        f.app
            .handle_key(&KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
        f.settle();
    }

    fn rich_fixture() -> Fixture {
        let mut c = cluster();
        c.upsert_pod(pod(rich_pod()));
        let mut f = app_with(c, "dark");
        typed(&mut f, ":pod default/rich");
        enter(&mut f);
        typed(&mut f, "0");
        assert_eq!(f.app.shared.tab, Tab::Needs);
        f
    }

    #[test]
    fn needs_tab_lists_the_pods_own_needs() {
        let mut f = rich_fixture();
        assert_snapshot!("needs_wide", screen(&mut f.app, 200, 24));
        assert_snapshot!("needs_80x24", screen(&mut f.app, 80, 24));
    }

    #[test]
    fn needs_tab_of_a_plain_pod_shows_its_requests_only() {
        let mut f = app_with(cluster(), "dark");
        typed(&mut f, ":pod default/web");
        enter(&mut f);
        typed(&mut f, "0");
        let s = screen(&mut f.app, 200, 24);
        assert!(s.contains("requests  cpu 500m, memory 512Mi"), "{s}");
        assert!(!s.contains("tolerations"), "{s}");
    }

    #[test]
    fn needs_tab_scrolls_when_narrow_and_short() {
        let mut f = rich_fixture();
        // Entries go under their labels when the pane is narrow; nothing is lost.
        let s = screen(&mut f.app, 40, 60);
        assert!(s.contains("pod anti-affinity"), "{s}");
        assert!(s.contains("rich-data"), "{s}");
        screen(&mut f.app, 80, 12);
        typed(&mut f, "G");
        let s = screen(&mut f.app, 80, 12);
        assert!(s.contains("priority"), "{s}");
        assert!(f.app.panes.needs.scroll.offset > 0);
        // Another pod starts at the top.
        typed(&mut f, ":pod default/web");
        enter(&mut f);
        typed(&mut f, "0");
        screen(&mut f.app, 80, 12);
        assert_eq!(f.app.panes.needs.scroll.offset, 0);
    }

    /// `]` and `[` step by place in the bar: Needs follows Profile, then wraps to
    /// Pipeline, though History (left out of the bar without a simulation) sits
    /// between them in `Tab::ALL`.
    #[test]
    fn next_and_previous_tab_reach_needs_and_wrap() {
        let mut f = rich_fixture();
        typed(&mut f, "]");
        assert_eq!(f.app.shared.tab, Tab::Pipeline);
        typed(&mut f, "[");
        assert_eq!(f.app.shared.tab, Tab::Needs);
        typed(&mut f, "[");
        assert_eq!(f.app.shared.tab, Tab::Profile);
        typed(&mut f, "]");
        assert_eq!(f.app.shared.tab, Tab::Needs);
        typed(&mut f, ":needs");
        enter(&mut f);
        assert_eq!(f.app.shared.tab, Tab::Needs);
    }
}
