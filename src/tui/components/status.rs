//! The status bar (source, counts, profile, theme, last update) and the prompt line.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use std::sync::Arc;

use super::super::action::{Action, Focus, Tab};
use super::super::format;
use super::PaneCtx;
use crate::source::live::KindHealth;
use crate::source::observed::STALE_AFTER_SECONDS;
use crate::source::{SchedulingEvents, SourceStatus};
use k8s_openapi::jiff::Timestamp;

/// Where the data comes from and how it is doing (the status bar, the connection).
#[derive(Clone, Debug)]
pub struct SourceInfo {
    /// `snapshot cluster.yaml`.
    pub source: String,
    /// When the cluster last changed.
    pub updated: Timestamp,
    /// A live source's connection state.
    pub live_status: Option<SourceStatus>,
    /// The real scheduler's latest FailedScheduling event per pod (live only).
    pub sched_events: Arc<SchedulingEvents>,
    /// Each watched kind's state, as of the last update.
    pub live_kinds: Vec<KindHealth>,
    /// Whether `R` can make the source retry.
    pub can_retry: bool,
}

impl SourceInfo {
    pub fn new(source: String, updated: Timestamp) -> Self {
        SourceInfo {
            source,
            updated,
            live_status: None,
            sched_events: Arc::default(),
            live_kinds: Vec::new(),
            can_retry: false,
        }
    }

    /// A live source that has not listed everything yet: the body shows the
    /// connection (why not, and a retry) instead of empty panes.
    pub fn connecting(&self) -> bool {
        matches!(self.live_status, Some(SourceStatus::Connecting { .. }))
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptKind {
    /// `/` on the pane with this focus and tab.
    Filter(Focus, Tab),
    Command,
    Reject {
        pod: String,
    },
    /// `w`: a what-if edit to apply.
    WhatIf,
}

#[derive(Clone, Debug)]
pub struct Prompt {
    pub kind: PromptKind,
    pub text: String,
    /// The filter before the prompt opened (restored on esc).
    pub before: String,
}

impl Prompt {
    pub fn new(kind: PromptKind, text: String) -> Self {
        Prompt {
            kind,
            before: text.clone(),
            text,
        }
    }

    /// Typing: a character, backspace or clear. A filter prompt returns its pane and
    /// the new text, which filters as it is typed.
    pub fn edit(&mut self, action: &Action) -> Option<(Focus, Tab, String)> {
        match action {
            Action::InputChar(c) => self.text.push(*c),
            Action::InputBackspace => drop(self.text.pop()),
            _ => self.text.clear(),
        }
        match self.kind {
            PromptKind::Filter(focus, tab) => Some((focus, tab, self.text.clone())),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub text: String,
    pub error: bool,
}

pub fn draw(ctx: &PaneCtx, f: &mut Frame, area: Rect) {
    let t = ctx.theme;
    let bar = t.status_bar;
    let mut right = Vec::new();
    if let Some(sim) = ctx.sim {
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
    let left_text = match ctx.message {
        Some(m) => format!(" {}", m.text),
        None => {
            let (pending, total) = (ctx.pending_count, ctx.cluster.pod_count());
            let secs = ctx.source.updated.as_second().rem_euclid(86_400);
            // The state is short and comes first; its error comes last, so that a long
            // one is what the width cuts, never the counts.
            let mut source = ctx.source.source.clone();
            let mut error = None;
            if let Some(st) = &ctx.source.live_status {
                let (state, e) = live_state(st, &ctx.source.live_kinds, ctx.now);
                source.push_str(&format!(" ({state})"));
                error = e;
            }
            // Each part with how much it matters: when the bar is too narrow, whole
            // parts give way (least first) instead of the last one being cut mid-word.
            let mut parts = Vec::new();
            // Always first (the first part never gives way): the model is not the real one.
            let n = ctx.whatif.edits().len();
            if n > 0 {
                let s = if n == 1 { "" } else { "s" };
                parts.push((format!("WHAT-IF {n} edit{s} · u undo"), 10));
            }
            parts.push((source, 9));
            if let Some(sim) = ctx.sim {
                let c = sim.counts();
                parts.push((
                    format!(
                        "{} {} · cycle {}",
                        if sim.is_playing() { "▶" } else { "⏸" },
                        sim.elapsed(),
                        sim.attempts().len()
                    ),
                    8,
                ));
                // The queues holding pods (the pods list says which is where).
                let queues: Vec<String> = [
                    ("activeQ", c.active),
                    ("backoffQ", c.backoff),
                    ("unschedulable", c.unschedulable),
                    ("gated", c.gated),
                ]
                .iter()
                .filter(|(_, n)| *n > 0)
                .map(|(q, n)| format!("{q} {n}"))
                .collect();
                parts.push((
                    if queues.is_empty() {
                        "queues empty".to_string()
                    } else {
                        queues.join(" ")
                    },
                    7,
                ));
            }
            parts.extend([
                (
                    format!(
                        "pods {} · {} pending",
                        format::thousands(total),
                        format::thousands(pending)
                    ),
                    8,
                ),
                (
                    format!("nodes {}", format::thousands(ctx.cluster.nodes().len())),
                    6,
                ),
            ]);
            if !ctx.waiting.is_empty() {
                parts.push((format!("waiting {}", ctx.waiting.len()), 5));
            }
            if ctx.source.connecting() {
                parts.push(("no data yet".into(), 8));
            } else {
                parts.push((
                    format!(
                        "updated {:02}:{:02}:{:02}Z",
                        secs / 3600,
                        (secs % 3600) / 60,
                        secs % 60
                    ),
                    2,
                ));
            }
            parts.push((format!("theme {}", t.name), 1));
            let room = if width > right_w + 10 {
                width - right_w
            } else {
                width
            };
            let mut text = whole_parts(parts, room);
            if let Some(e) = error {
                text.push_str(" │ ");
                text.push_str(&e);
            }
            text
        }
    };
    let left_style = match ctx.message {
        Some(m) if m.error => t.error.patch(bar),
        Some(_) => t.warning.patch(bar),
        None if ctx.whatif.is_active() => t.warning.patch(bar),
        None if ctx
            .source
            .live_status
            .as_ref()
            .is_some_and(|s| !s.is_healthy()) =>
        {
            t.warning.patch(bar)
        }
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

/// ` a │ b │ c` from the parts that fit in `room` cells: the most important first,
/// each whole or not at all, shown in their own order (the first part always stays,
/// cut by the caller if it must be).
fn whole_parts(parts: Vec<(String, u8)>, room: usize) -> String {
    let Some(first) = parts.first() else {
        return String::new();
    };
    let mut keep = vec![false; parts.len()];
    keep[0] = true;
    let mut used = 1 + format::width(&first.0);
    let mut by_importance: Vec<usize> = (1..parts.len()).collect();
    by_importance.sort_by_key(|&i| (std::cmp::Reverse(parts[i].1), i));
    for i in by_importance {
        let w = 3 + format::width(&parts[i].0);
        if used + w <= room {
            keep[i] = true;
            used += w;
        }
    }
    let texts: Vec<&str> = parts
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(p, _)| p.0.as_str())
        .collect();
    format!(" {}", texts.join(" │ "))
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

pub fn draw_prompt(ctx: &PaneCtx, f: &mut Frame, area: Rect) {
    let Some(p) = ctx.prompt else { return };
    let t = ctx.theme;
    let label = match &p.kind {
        PromptKind::Filter(..) => "/".to_string(),
        PromptKind::Command => ":".to_string(),
        PromptKind::Reject { pod } => format!("reject {pod}, reason: "),
        PromptKind::WhatIf => "what-if edit: ".to_string(),
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

#[cfg(test)]
mod whole_parts_tests {
    use super::whole_parts;

    #[test]
    fn least_important_parts_give_way_whole() {
        let parts = || {
            vec![
                ("snapshot testdata/cluster.yaml".to_string(), 9),
                ("pods 11 · 7 pending".to_string(), 8),
                ("nodes 5".to_string(), 6),
                ("updated 12:00:00Z".to_string(), 2),
                ("theme dark".to_string(), 1),
            ]
        };
        assert_eq!(
            whole_parts(parts(), 200),
            " snapshot testdata/cluster.yaml │ pods 11 · 7 pending │ nodes 5 │ updated 12:00:00Z │ theme dark"
        );
        // An 80-column bar less its keys: the theme and the time go, the counts stay whole.
        assert_eq!(
            whole_parts(parts(), 64),
            " snapshot testdata/cluster.yaml │ pods 11 · 7 pending │ nodes 5"
        );
        assert_eq!(whole_parts(parts(), 40), " snapshot testdata/cluster.yaml");
        // The source stays even when nothing fits (the caller cuts it).
        assert_eq!(whole_parts(parts(), 5), " snapshot testdata/cluster.yaml");
    }
}
