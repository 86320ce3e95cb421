//! The selected pod's own needs (the `explain` table's Needs section): requests,
//! selectors, affinity, tolerations, spread, ports, volumes, claims, priority, gates.
//! It needs no replay: the pod's spec and the cluster's objects say it all.

use std::collections::BTreeSet;
use std::sync::Arc;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::super::action::Action;
use super::super::whatif::ActiveEdit;
use super::super::widgets::{Scroll, centered_note, scroll_text, wrap};
use super::{Component, Effect, Handled, Hit, Hits, PaneCtx, scroll_by};
use crate::engine::plugins::taint_toleration::find_untolerated_do_not_schedule_taint;
use crate::model::Pod;
use crate::report::needs::PodNeeds;
use crate::theme::Theme;
use crate::whatif::{UNSCHEDULABLE_TAINT, apply};

/// The selected pod's needs, scrolled, and below them the what-if edits that turn
/// one off (a cursor picks one; enter applies it).
#[derive(Clone, Debug, Default)]
pub struct NeedsPane {
    pub scroll: Scroll,
    /// The pod drawn last: another pod starts at the top.
    shown: Option<String>,
    /// The selected what-if edit.
    pub selected: usize,
    /// The edits offered at the last draw.
    offered: Vec<NeedEdit>,
    /// j/k moved the selection: the next draw scrolls it into view.
    follow: bool,
    /// The pod as its what-if edits left it, for the edits it was made with.
    edited: Option<EditedPod>,
}

#[derive(Clone, Debug)]
struct EditedPod {
    pod: String,
    cluster: usize,
    edits: Vec<ActiveEdit>,
    shown: Arc<Pod>,
}

/// A what-if edit that turns a need off: applied at once, or a prompt to complete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NeedEdit {
    /// The need, as the lines above write it.
    pub need: String,
    /// The edit (complete), or the prompt's start (`pod.cpu=`).
    pub edit: String,
    pub prompt: bool,
}

impl Component for NeedsPane {
    scroll_keys!(page_and_wheel);

    fn handle(&mut self, _ctx: &PaneCtx, action: &Action) -> Handled {
        let n = self.offered.len();
        match action {
            Action::Up | Action::Down if n > 0 => {
                self.selected = match action {
                    Action::Up => self.selected.saturating_sub(1),
                    _ => (self.selected + 1).min(n - 1),
                };
                self.follow = true;
                Handled::Yes
            }
            Action::Enter => match self.offered.get(self.selected) {
                Some(e) if e.prompt => Handled::Then(Effect::EditPrompt(e.edit.clone())),
                Some(e) => Handled::Then(Effect::Edits(vec![e.edit.clone()])),
                None => Handled::Then(Effect::Flash(
                    "no need of this pod can be turned off".into(),
                    true,
                )),
            },
            _ => scroll_by(&mut self.scroll, action),
        }
    }

    fn draw(&mut self, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
        let t = ctx.theme;
        let Some(real) = ctx.selected_pod.and_then(|k| ctx.cluster.pod(k)) else {
            centered_note(f, area, t.dim, "no pod selected");
            return;
        };
        hits.rects.push((area, Hit::DetailPane));
        if self.shown.as_deref() != ctx.selected_pod {
            self.scroll = Scroll::default();
            self.selected = 0;
            self.shown = ctx.selected_pod.map(str::to_string);
        }
        let (pod, edits) = self.edited_pod(ctx, real);
        let needs = PodNeeds::of(&pod, ctx.cluster);
        let mut lines = Vec::new();
        if !edits.is_empty() {
            lines.push(Line::from(Span::styled(
                format!("what-if: the pod as edited ({})", edits.join(" · ")),
                t.warning,
            )));
        }
        lines.extend(needs_lines(t, &needs, area.width as usize));
        self.offered = need_edits(ctx, &pod, &needs);
        self.selected = self.selected.min(self.offered.len().saturating_sub(1));
        if !self.offered.is_empty() {
            lines.push(Line::default());
            lines.push(Line::from(Span::styled(
                "what-if: enter turns the selected need off (nothing is written)",
                t.header,
            )));
            let at = lines.len() + self.selected;
            for (i, e) in self.offered.iter().enumerate() {
                let sel = i == self.selected;
                let style = if sel { t.selected } else { t.key };
                let edit = if e.prompt {
                    format!("{}…", e.edit)
                } else {
                    e.edit.clone()
                };
                lines.push(Line::from(vec![
                    Span::styled(if sel { "› " } else { "  " }, style),
                    Span::styled(edit, style),
                    Span::styled(format!("  {}", e.need), t.dim),
                ]));
            }
            let page = area.height as usize;
            if std::mem::take(&mut self.follow) && page > 0 {
                if at < self.scroll.offset {
                    self.scroll.offset = at;
                } else if at >= self.scroll.offset + page {
                    self.scroll.offset = at + 1 - page;
                }
            }
        }
        scroll_text(f, area, t, lines, &mut self.scroll);
    }
}

impl NeedsPane {
    /// The pod with its what-if pod edits (applied once per set of edits), and
    /// those edits.
    fn edited_pod(&mut self, ctx: &PaneCtx, real: &Arc<Pod>) -> (Arc<Pod>, Vec<String>) {
        let key = real.key();
        let mine = ctx.whatif.for_pod(&key).edits;
        if mine.is_empty() {
            return (real.clone(), Vec::new());
        }
        let labels = mine.iter().map(ToString::to_string).collect();
        let cluster = ctx.cluster as *const _ as usize;
        if let Some(e) = &self.edited
            && e.pod == key
            && e.cluster == cluster
            && e.edits == ctx.whatif.edits()
        {
            return (e.shown.clone(), labels);
        }
        let Ok(edited) = apply(ctx.cluster, Some(real), &mine) else {
            return (real.clone(), Vec::new());
        };
        let shown = Arc::new(edited.pod.unwrap_or_else(|| (**real).clone()));
        self.edited = Some(EditedPod {
            pod: key,
            cluster,
            edits: ctx.whatif.edits().to_vec(),
            shown: shown.clone(),
        });
        (shown, labels)
    }
}

/// The edits that turn one of the pod's needs off, in the order the needs are
/// listed; a request or the priority is a prompt for the new value; an untolerated
/// taint of a node the replay rejected for it, a toleration.
pub fn need_edits(ctx: &PaneCtx, pod: &Pod, needs: &PodNeeds) -> Vec<NeedEdit> {
    let mut out = Vec::new();
    let mut push =
        |need: String, edit: String, prompt: bool| out.push(NeedEdit { need, edit, prompt });
    for (r, amount) in &needs.requests {
        let edit = match r.as_str() {
            "pods" => continue,
            "cpu" => "pod.cpu=".to_string(),
            "memory" => "pod.memory=".to_string(),
            r => format!("pod.request.{r}="),
        };
        push(format!("requests {r} {amount}"), edit, true);
    }
    for (k, v) in pod.node_selector.iter().flatten() {
        push(
            format!("nodeSelector {k}={v}"),
            format!("pod.drop-node-selector={k}"),
            false,
        );
    }
    if !needs.required_node_affinity.is_empty() {
        let need = format!(
            "node affinity required: {}",
            needs.required_node_affinity.join(" OR ")
        );
        push(need, "pod.drop-node-affinity".into(), false);
    }
    for (i, term) in needs.required_pod_affinity.iter().enumerate() {
        let edit = format!("pod.drop-pod-affinity={i}");
        push(format!("pod affinity required: {term}"), edit, false);
    }
    for (i, term) in needs.required_pod_anti_affinity.iter().enumerate() {
        let edit = format!("pod.drop-pod-anti-affinity={i}");
        push(format!("pod anti-affinity required: {term}"), edit, false);
    }
    for (i, c) in needs.topology_spread.iter().enumerate() {
        push(
            format!("topology spread {c}"),
            format!("pod.drop-spread={i}"),
            false,
        );
    }
    for (need, edit) in tolerations_wanted(ctx, pod) {
        push(need, edit, false);
    }
    for g in &needs.scheduling_gates {
        push(
            format!("scheduling gate {g}"),
            format!("pod.drop-gate={g}"),
            false,
        );
    }
    push(
        format!("priority {}", needs.priority),
        "pod.priority=".into(),
        true,
    );
    out
}

/// The taints that kept the pod off the nodes the shown replay rejected it from
/// (TaintToleration), each once: tolerating one is the edit.
fn tolerations_wanted(ctx: &PaneCtx, pod: &Pod) -> Vec<(String, String)> {
    let Some(cur) = ctx.current.filter(|c| c.key.pod == pod.key()) else {
        return Vec::new();
    };
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    let rejected = cur
        .trace
        .filter
        .iter()
        .filter(|v| !v.feasible && v.plugin.as_deref() == Some("TaintToleration"));
    for v in rejected {
        let Some(info) = ctx.cluster.node(&v.node) else {
            continue;
        };
        let Some(t) = find_untolerated_do_not_schedule_taint(&info.node.taints, &pod.tolerations)
        else {
            continue;
        };
        if t.key == UNSCHEDULABLE_TAINT {
            continue;
        }
        let edit = match t.value.as_deref().filter(|v| !v.is_empty()) {
            Some(v) => format!("pod.tolerate={}={v}:{}", t.key, t.effect),
            None => format!("pod.tolerate={}:{}", t.key, t.effect),
        };
        if seen.insert(edit.clone()) {
            let taint = edit.trim_start_matches("pod.tolerate=").to_string();
            out.push((format!("untolerated taint {taint} (on {})", v.node), edit));
        }
    }
    out
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
