//! The status bar (source, counts, profile, theme, last update) and the prompt line.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::super::app::{App, PromptKind};
use super::super::format;

pub fn draw(app: &mut App, f: &mut Frame, area: Rect) {
    let t = &app.theme;
    let bar = t.status_bar;
    let mut right = Vec::new();
    if let Some(sim) = app.sim() {
        right.extend([
            Span::styled(" space ", t.key.patch(bar)),
            Span::styled(if sim.is_playing() { "pause " } else { "play " }, bar),
            Span::styled(" n ", t.key.patch(bar)),
            Span::styled("step ", bar),
        ]);
    }
    right.extend([
        Span::styled(" ? ", t.key.patch(bar)),
        Span::styled("help ", bar),
        Span::styled(" q ", t.key.patch(bar)),
        Span::styled("quit ", bar),
    ]);
    let right_w: usize = right.iter().map(|s| s.width()).sum();
    let width = area.width as usize;
    let left_text = match &app.message {
        Some(m) => format!(" {}", m.text),
        None => {
            let (pending, total) = (app.pending_count, app.cluster.pod_count());
            let secs = app.updated.as_second().rem_euclid(86_400);
            let mut source = app.source.clone();
            if let Some(st) = &app.live_status {
                source.push_str(&format!(" ({})", st.describe(app.now())));
            }
            let mut parts = vec![source];
            if let Some(sim) = app.sim() {
                let c = sim.counts();
                parts.push(format!(
                    "{} {} · cycle {}",
                    if sim.is_playing() { "▶" } else { "⏸" },
                    sim.elapsed(),
                    sim.attempts().len()
                ));
                parts.push(format!(
                    "activeQ {} backoffQ {} unschedulable {} gated {}",
                    c.active, c.backoff, c.unschedulable, c.gated
                ));
            }
            parts.extend([
                format!(
                    "pods {} · {} pending",
                    format::thousands(total),
                    format::thousands(pending)
                ),
                format!("nodes {}", format::thousands(app.cluster.nodes().len())),
            ]);
            if !app.waiting.is_empty() {
                parts.push(format!("waiting {}", app.waiting.len()));
            }
            parts.push(format!(
                "updated {:02}:{:02}:{:02}Z",
                secs / 3600,
                (secs % 3600) / 60,
                secs % 60
            ));
            parts.push(format!("theme {}", t.name));
            format!(" {}", parts.join(" │ "))
        }
    };
    let left_style = match &app.message {
        Some(m) if m.error => t.error.patch(bar),
        Some(_) => t.warning.patch(bar),
        None if app.live_status.as_ref().is_some_and(|s| !s.is_healthy()) => t.warning.patch(bar),
        None => bar,
    };
    let (left, right) = if width > right_w + 10 {
        (format::fit(&left_text, width - right_w), right)
    } else {
        (format::fit(&left_text, width), Vec::new())
    };
    let mut spans = vec![Span::styled(left, left_style)];
    spans.extend(right);
    f.render_widget(Paragraph::new(Line::from(spans)).style(bar), area);
}

pub fn draw_prompt(app: &mut App, f: &mut Frame, area: Rect) {
    let Some(p) = &app.prompt else { return };
    let t = &app.theme;
    let label = match &p.kind {
        PromptKind::Filter(_) => "/".to_string(),
        PromptKind::Command => ":".to_string(),
        PromptKind::Reject { pod } => format!("reject {pod}, reason: "),
    };
    let width = area.width as usize;
    let text = &p.text;
    // Keep the end of long input visible.
    let room = width.saturating_sub(format::width(&label) + 1);
    let shown: String = if format::width(text) > room {
        let skip = text.chars().count().saturating_sub(room);
        text.chars().skip(skip).collect()
    } else {
        text.clone()
    };
    let line = Line::from(vec![
        Span::styled(label, t.prompt),
        Span::styled(shown, t.text),
        Span::styled("█", t.prompt),
    ]);
    f.render_widget(Paragraph::new(line), area);
}
