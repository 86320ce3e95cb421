//! The panes. Each draws from the app's state (and its cached trace view) and records
//! where its rows are for the mouse; none decides anything about scheduling.

mod compare;
mod connection;
mod filters;
mod help;
mod history;
mod node;
mod pipeline;
mod pods;
mod preemption;
mod profile;
mod scores;
mod status;
mod waiting;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

use super::action::{Focus, Tab};
use super::app::{App, Hit, TraceStatus};
use super::format;
use super::view::Mark;
use super::widgets::{block, centered_note};
use crate::theme::Theme;

/// Below this the layout cannot show a list and a status line.
pub const MIN_WIDTH: u16 = 30;
pub const MIN_HEIGHT: u16 = 8;
/// From this width the pods list and the detail pane sit side by side.
pub const SPLIT_WIDTH: u16 = 110;

pub fn draw(app: &mut App, f: &mut Frame) {
    let area = f.area();
    app.hits.clear();
    app.hit_offsets.clear();
    f.render_widget(Block::default().style(app.theme.text), area);
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let text = format!(
            "terminal too small ({}x{}); schedscope needs {MIN_WIDTH}x{MIN_HEIGHT}",
            area.width, area.height
        );
        let lines: Vec<Line> = super::widgets::wrap(&text, area.width.max(1) as usize)
            .into_iter()
            .map(|l| Line::from(Span::styled(l, app.theme.warning)))
            .collect();
        f.render_widget(Paragraph::new(lines), area);
        return;
    }
    let prompt_h = u16::from(app.prompt.is_some());
    let [body, prompt_area, status_area] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(prompt_h),
        Constraint::Length(1),
    ])
    .areas(area);

    if app.connecting() {
        connection::draw_screen(app, f, body);
    } else if body.width >= SPLIT_WIDTH {
        // A simulation adds the queue column.
        let share = if app.sim().is_some() { 42 } else { 36 };
        let pods_w = (body.width * share / 100).clamp(40, 80);
        let [left, right] =
            Layout::horizontal([Constraint::Length(pods_w), Constraint::Min(1)]).areas(body);
        pods::draw(app, f, left);
        draw_detail(app, f, right);
    } else if app.focus == Focus::Pods {
        pods::draw(app, f, body);
    } else {
        draw_detail(app, f, body);
    }
    if prompt_h > 0 {
        status::draw_prompt(app, f, prompt_area);
    }
    status::draw(app, f, status_area);
    if app.connection.is_some() {
        connection::draw_overlay(app, f, body);
    }
    if app.help.is_some() {
        help::draw(app, f, area);
    }
}

fn draw_detail(app: &mut App, f: &mut Frame, area: Rect) {
    let focused = app.focus == Focus::Detail;
    let title = detail_title(app);
    let b = block(&app.theme, title, focused);
    let inner = b.inner(area);
    f.render_widget(b, area);
    app.hits.push((area, Hit::DetailPane));
    if inner.height < 2 || inner.width < 4 {
        return;
    }
    let [tabs_area, content] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(inner);
    draw_tabs(app, f, tabs_area);

    let needs_trace = matches!(
        app.tab,
        Tab::Pipeline | Tab::Filters | Tab::Scores | Tab::Compare | Tab::Preemption
    );
    if needs_trace && app.current.is_none() {
        let note = status_note(app);
        centered_note(f, content, app.theme.dim, &note);
        return;
    }
    match app.tab {
        Tab::Pipeline => pipeline::draw(app, f, content),
        Tab::Filters => filters::draw(app, f, content),
        Tab::Scores => scores::draw(app, f, content),
        Tab::Node => node::draw(app, f, content),
        Tab::Compare => compare::draw(app, f, content),
        Tab::Preemption => preemption::draw(app, f, content),
        Tab::Waiting => waiting::draw(app, f, content),
        Tab::Profile => profile::draw(app, f, content),
        Tab::History => history::draw(app, f, content),
    }
}

fn status_note(app: &App) -> String {
    match &app.status {
        TraceStatus::NoPod => "no pod selected".into(),
        TraceStatus::NoProfile(s) => no_profile_note(app, s),
        TraceStatus::Computing => "replaying the scheduling cycle…".into(),
        TraceStatus::Ready => String::new(),
    }
}

/// What `explain` says of a pod whose schedulerName no profile serves, what the
/// TUI can do about it, and (live) what the real scheduler said of the pod.
pub fn no_profile_note(app: &App, scheduler: &str) -> String {
    let key = app.selected_pod_key().unwrap_or_default().to_string();
    let profiles = app
        .profiles
        .iter()
        .map(|p| p.profile_name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let said = crate::explain::ExplainError::NoProfile {
        key: key.clone(),
        scheduler: scheduler.to_string(),
        profiles,
    };
    let mut note = format!(
        "{said}; a scheduler with these profiles leaves it alone. p replays it with another profile"
    );
    if app.live_status.is_some()
        && let Some(pod) = app.cluster.pod(&key)
        && let Some(w) = crate::source::SchedulerWord::of(pod, app.sched_events.get(&key), None)
    {
        note.push_str(&format!(" · {}", w.said(app.now())));
    }
    note
}

fn detail_title(app: &App) -> Line<'static> {
    let t = &app.theme;
    let mut spans = vec![Span::styled(" ", t.title)];
    match app.selected_pod() {
        Some(row) => {
            spans.push(Span::styled(row.key(), t.title));
            spans.push(Span::styled(
                format!(" · priority {}", row.pod.priority),
                t.dim,
            ));
            if let Some(c) = &app.current {
                spans.push(Span::styled(
                    format!(" · profile {}", c.trace.profile),
                    t.dim,
                ));
                if let Some(i) = c.key.attempt
                    && let Some(sim) = app.sim()
                    && let Some(h) = sim.history(&c.key.pod).iter().find(|h| h.attempt == i)
                {
                    spans.push(Span::styled(
                        format!(
                            " · attempt {} (cycle #{}, {})",
                            h.pod_attempt,
                            i + 1,
                            super::playback::offset(h.at_ms)
                        ),
                        t.key,
                    ));
                }
                if app.profile_override.is_some() {
                    spans.push(Span::styled(" (override)", t.warning));
                }
            }
        }
        None => spans.push(Span::styled("no pod", t.title)),
    }
    spans.push(Span::styled(" ", t.title));
    Line::from(spans)
}

fn draw_tabs(app: &mut App, f: &mut Frame, area: Rect) {
    let width = area.width as usize;
    // " 1:Pipeline 2:Filters ..." when it fits, else shorter titles, else numbers.
    let tabs = app.tabs();
    let full: usize = tabs.iter().map(|t| t.title().len() + 3).sum::<usize>() + 1;
    let short: usize = tabs
        .iter()
        .map(|t| t.title().len().min(4) + 3)
        .sum::<usize>()
        + 1;
    let label = |t: Tab| -> String {
        let n = t.index() + 1;
        if full <= width {
            format!("{n}:{}", t.title())
        } else if short <= width {
            format!("{n}:{}", &t.title()[..t.title().len().min(4)])
        } else {
            format!("{n}")
        }
    };
    let mut spans = vec![Span::raw(" ")];
    let mut x = area.x + 1;
    for &t in tabs {
        let text = label(t);
        let w = format::width(&text) as u16;
        if x + w > area.x + area.width {
            break;
        }
        let style = if t == app.tab {
            app.theme.tab_active
        } else {
            app.theme.tab
        };
        app.hits.push((
            Rect {
                x,
                y: area.y,
                width: w,
                height: 1,
            },
            Hit::Tab(t),
        ));
        spans.push(Span::styled(text, style));
        spans.push(Span::raw(" "));
        x += w + 1;
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

pub fn mark_style(t: &Theme, m: Mark) -> Style {
    match m {
        Mark::RejectFirst => t.reject_first,
        Mark::Reject => t.reject,
        Mark::Error => t.error,
        Mark::Wait => t.waiting,
        Mark::Skip => t.skip,
        Mark::Pass => t.pass,
        Mark::NotRun => t.not_run,
    }
}

pub fn mark_span(t: &Theme, m: Mark) -> Span<'static> {
    Span::styled(m.symbol(), mark_style(t, m))
}

/// `✓ pass  ✗ reject  ∅ skip  · not run  ! error`
pub fn legend(t: &Theme) -> Line<'static> {
    let mut spans = Vec::new();
    for (m, label) in [
        (Mark::Pass, "pass"),
        (Mark::RejectFirst, "first reject"),
        (Mark::Reject, "reject"),
        (Mark::Skip, "skip"),
        (Mark::NotRun, "not run"),
        (Mark::Error, "error"),
    ] {
        spans.push(mark_span(t, m));
        spans.push(Span::styled(format!(" {label}  "), t.dim));
    }
    Line::from(spans)
}

/// The pod whose trace is shown, if any.
pub fn traced_pod(app: &App) -> Option<std::sync::Arc<crate::model::Pod>> {
    let c = app.current.as_ref()?;
    app.cluster.pod(&c.key.pod).cloned()
}
