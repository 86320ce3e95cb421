//! The status bar (source, counts, profile, theme, last update) and the prompt line.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::super::app::{App, PromptKind};
use super::super::format;
use crate::source::SourceStatus;
use crate::source::live::KindHealth;
use crate::source::observed::STALE_AFTER_SECONDS;
use k8s_openapi::jiff::Timestamp;

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
            // The state is short and comes first; its error comes last, so that a long
            // one is what the width cuts, never the counts.
            let mut source = app.source.clone();
            let mut error = None;
            if let Some(st) = &app.live_status {
                let (state, e) = live_state(st, &app.live_kinds, app.now());
                source.push_str(&format!(" ({state})"));
                error = e;
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
            if app.connecting() {
                parts.push("no data yet".into());
            } else {
                parts.push(format!(
                    "updated {:02}:{:02}:{:02}Z",
                    secs / 3600,
                    (secs % 3600) / 60,
                    secs % 60
                ));
            }
            parts.push(format!("theme {}", t.name));
            parts.extend(error);
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

/// A live source's state in a few words (`connected`, `reconnecting (data 5s old)`,
/// `stale: data 2m10s old`), and its error apart. The data's age counts from when
/// the model stopped being known current.
fn live_state(st: &SourceStatus, kinds: &[KindHealth], now: Timestamp) -> (String, Option<String>) {
    match st {
        SourceStatus::Connecting { error } => ("connecting".into(), error.clone()),
        SourceStatus::Connected => {
            let n = super::connection::unreadable(kinds);
            let state = if n == 0 {
                "connected".into()
            } else {
                format!(
                    "connected · {n} kind{} not readable (C)",
                    if n == 1 { "" } else { "s" }
                )
            };
            (state, None)
        }
        SourceStatus::Reconnecting { since, error } => {
            let age = (now.as_second() - since.as_second()).max(0);
            let state = if age < STALE_AFTER_SECONDS {
                format!("reconnecting (data {} old)", format_age(age))
            } else {
                format!("stale: data {} old", format_age(age))
            };
            (state, Some(error.clone()))
        }
    }
}

fn format_age(secs: i64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        s => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
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
