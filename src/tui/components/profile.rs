//! The active profile: plugins per extension point with weights, and their args.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::super::action::Action;
use super::super::widgets::{Scroll, centered_note, scroll_text, wrap};
use super::{Component, Handled, Hit, Hits, PaneCtx, scroll_by};
use crate::engine::Framework;
use crate::theme::Theme;

/// The active profile, scrolled.
#[derive(Clone, Debug, Default)]
pub struct ProfilePane {
    pub scroll: Scroll,
}

impl Component for ProfilePane {
    scroll_keys!();

    fn draw(&mut self, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
        draw(self, ctx, f, area, hits)
    }
}

fn draw(pane: &mut ProfilePane, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
    let t = ctx.theme.clone();
    let Some(fw) = ctx.active_profile().cloned() else {
        centered_note(f, area, t.dim, "no profiles configured");
        return;
    };
    hits.rects.push((area, Hit::DetailPane));
    let others: Vec<String> = ctx
        .profiles
        .iter()
        .map(|p| p.profile_name.clone())
        .filter(|n| *n != fw.profile_name)
        .collect();
    let mut lines = release_lines(&t, ctx.cluster.kube_version.as_ref(), area.width as usize);
    lines.extend(profile_lines(&t, &fw, &others, area.width as usize));
    scroll_text(f, area, &t, lines, &mut pane.scroll);
}

/// The kube-scheduler release replayed, where that came from, and its default
/// feature gates (on first), wrapped to `width`.
pub fn release_lines(
    t: &Theme,
    release: Option<&crate::version::Release>,
    width: usize,
) -> Vec<Line<'static>> {
    let (version, said) = match release {
        Some(r) => (r.version, r.to_string()),
        None => {
            let v = crate::version::KubeVersion::default();
            (
                v,
                format!("{v} (the default; --kube-version chooses another)"),
            )
        }
    };
    let mut out = vec![Line::from(vec![
        Span::styled("Release ", t.header),
        Span::styled(said, t.title),
    ])];
    let gates = version.features().gates();
    let list = |on: bool| -> String {
        gates
            .iter()
            .filter(|(_, g)| *g == on)
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (label, on) in [("gates on: ", true), ("gates off: ", false)] {
        let names = list(on);
        if names.is_empty() {
            continue;
        }
        for (i, l) in wrap(&format!("{label}{names}"), width.saturating_sub(2).max(10))
            .into_iter()
            .enumerate()
        {
            let indent = if i == 0 { "" } else { "  " };
            out.push(Line::from(Span::styled(format!("{indent}{l}"), t.dim)));
        }
    }
    out.push(Line::default());
    out
}

pub fn profile_lines(
    t: &Theme,
    fw: &Framework,
    others: &[String],
    width: usize,
) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    out.push(Line::from(vec![
        Span::styled("Profile ", t.header),
        Span::styled(fw.profile_name.clone(), t.title),
        Span::styled(
            format!(
                "  percentageOfNodesToScore: {}",
                match fw.percentage_of_nodes_to_score {
                    None => "default (adaptive)".to_string(),
                    // 0 asks for the same adaptive percentage as leaving it unset.
                    Some(0) => "0 (adaptive)".to_string(),
                    Some(p) => format!("{p}%"),
                }
            ),
            t.dim,
        ),
    ]));
    if !others.is_empty() {
        out.push(Line::from(Span::styled(
            format!("other profiles: {} (p cycles)", others.join(", ")),
            t.dim,
        )));
    }
    out.push(Line::default());
    let names = |list: &[std::sync::Arc<dyn crate::engine::framework::Plugin>]| -> Vec<String> {
        list.iter().map(|p| p.name().to_string()).collect()
    };
    let points: Vec<(&str, Vec<String>)> = vec![
        ("PreEnqueue", names(&fw.pre_enqueue)),
        ("QueueSort", names(&fw.queue_sort)),
        ("PreFilter", names(&fw.pre_filter)),
        ("Filter", names(&fw.filter)),
        ("PostFilter", names(&fw.post_filter)),
        ("PreScore", names(&fw.pre_score)),
        (
            "Score",
            fw.score
                .iter()
                .map(|w| format!("{} ×{}", w.plugin.name(), w.weight))
                .collect(),
        ),
        ("Reserve", names(&fw.reserve)),
        ("Permit", names(&fw.permit)),
        ("PreBind", names(&fw.pre_bind)),
        ("Bind", names(&fw.bind)),
        ("PostBind", names(&fw.post_bind)),
    ];
    let indent = 13;
    for (point, plugins) in points {
        let text = if plugins.is_empty() {
            "—".to_string()
        } else {
            plugins.join(", ")
        };
        let wrapped = wrap(&text, width.saturating_sub(indent).max(10));
        for (i, l) in wrapped.into_iter().enumerate() {
            let label = if i == 0 { point } else { "" };
            out.push(Line::from(vec![
                Span::styled(crate::report::format::pad(label, indent), t.key),
                Span::styled(l, if plugins.is_empty() { t.dim } else { t.text }),
            ]));
        }
    }
    out.push(Line::default());
    out.push(Line::from(Span::styled("Plugin args", t.header)));
    if fw.plugin_args.is_empty() {
        out.push(Line::from(Span::styled("  none", t.dim)));
    }
    for (name, args) in &fw.plugin_args {
        out.push(Line::from(Span::styled(format!("  {name}"), t.title)));
        let yaml = serde_saphyr::to_string(args).unwrap_or_else(|_| args.to_string());
        for l in yaml.lines() {
            out.push(Line::from(Span::styled(format!("    {l}"), t.text)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::profile_lines;
    use crate::theme::Theme;

    /// Paper cut 6: 0 asks for the adaptive percentage, as leaving it unset does, and
    /// the Profile tab says so.
    #[test]
    fn percentage_of_nodes_to_score_says_when_it_is_adaptive() {
        let t = Theme::builtin("dark").expect("dark");
        for (set, shown) in [
            (None, "percentageOfNodesToScore: default (adaptive)"),
            (Some(0), "percentageOfNodesToScore: 0 (adaptive)"),
            (Some(50), "percentageOfNodesToScore: 50%"),
        ] {
            let mut fw = crate::tui::fixtures::profile("default-scheduler");
            fw.percentage_of_nodes_to_score = set;
            let first: String = profile_lines(&t, &fw, &[], 120)[0]
                .spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect();
            assert!(first.contains(shown), "{set:?}: {first}");
        }
    }
}
