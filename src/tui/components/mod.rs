//! The panes. Each is a [`Component`]: a struct owning its cursor, scroll, sort and
//! filter, drawn from a read-only [`PaneCtx`] (what the app shares: cluster, current
//! trace, theme, time, waiting pods, profiles) and handling the actions of the keys
//! it has the focus for. A pane never reaches the app: what it cannot do itself
//! (open a tab or a node, select a pod, flash a message) it returns as an [`Effect`]
//! for the app to carry out. None decides anything about scheduling.

/// The keys of a pane that is one scrolled text (its `scroll: Scroll` field): moves
/// scroll it, a page is its height, the wheel scrolls. `page_and_wheel` when the pane
/// handles its own keys first.
macro_rules! scroll_keys {
    () => {
        fn handle(&mut self, _ctx: &PaneCtx, action: &Action) -> Handled {
            scroll_by(&mut self.scroll, action)
        }
        scroll_keys!(page_and_wheel);
    };
    (page_and_wheel) => {
        fn page(&self) -> usize {
            self.scroll.page.max(1)
        }

        fn scroll(&mut self, _ctx: &PaneCtx, delta: isize) -> Handled {
            self.scroll.by(delta);
            Handled::Yes
        }
    };
}

mod compare;
mod connection;
mod filters;
mod help;
mod history;
mod needs;
mod node;
mod pipeline;
mod pods;
mod preemption;
mod profile;
mod remedies;
mod scores;
mod status;
pub mod table;
mod waiting;

use k8s_openapi::jiff::Timestamp;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};

pub use compare::ComparePane;
pub use connection::ConnectionPane;
pub use filters::FiltersPane;
pub use help::HelpPane;
pub use history::HistoryPane;
pub use needs::NeedsPane;
pub use node::NodePane;
pub use pipeline::PipelinePane;
pub use pods::PodsPane;
pub use preemption::PreemptionPane;
pub use profile::ProfilePane;
pub use remedies::RemediesPane;
pub use scores::ScoresPane;
pub use status::{Message, Prompt, PromptKind, SourceInfo};
pub use waiting::WaitingPane;

use super::action::{Action, Focus, MouseKind, Tab};
use super::format;
use super::playback::Simulation;
use super::traces::{Current, TraceStatus};
use super::verdicts::Verdicts;
use super::whatif::WhatIf;
use super::widgets::{Cursor, Scroll, block, centered_note};
use crate::engine::Framework;
use crate::model::Cluster;
use crate::report::HeldPod;
use crate::report::Mark;
use crate::theme::Theme;

/// Below this the layout cannot show a list and a status line.
pub const MIN_WIDTH: u16 = 30;
pub const MIN_HEIGHT: u16 = 8;
/// From this width the pods list and the detail pane sit side by side.
pub const SPLIT_WIDTH: u16 = 110;

/// What the panes read and never change: the app's shared state at one moment.
pub struct PaneCtx<'a> {
    pub cluster: &'a Cluster,
    pub profiles: &'a [Framework],
    /// The trace the detail panes show, and why there is none.
    pub current: Option<&'a Current>,
    pub status: &'a TraceStatus,
    pub theme: &'a Theme,
    /// The time countdowns use (the simulator's in simulation mode).
    pub now: Timestamp,
    pub waiting: &'a [HeldPod],
    pub sim: Option<&'a Simulation>,
    pub selected_pod: Option<&'a str>,
    /// The attempt picked in History (`None`: the latest).
    pub pin: Option<usize>,
    pub profile_override: Option<usize>,
    pub focus: Focus,
    pub tab: Tab,
    pub source: &'a SourceInfo,
    /// Pending pods in the cluster (counted when the pods list is rebuilt).
    pub pending_count: usize,
    pub prompt: Option<&'a Prompt>,
    pub message: Option<&'a Message>,
    /// The pending pods' verdicts known so far.
    pub verdicts: &'a Verdicts,
    /// The what-if edits (the banner; `cluster` is already the edited model).
    pub whatif: &'a WhatIf,
}

impl PaneCtx<'_> {
    /// The profile the Profile tab shows: the current trace's, else the selected pod's.
    pub fn active_profile(&self) -> Option<&Framework> {
        let i = match self.current {
            Some(c) => Some(c.key.profile),
            None => self
                .selected_pod
                .and_then(|k| self.cluster.pod(k))
                .and_then(|p| {
                    crate::explain::choose_profile(self.profiles, p, self.profile_override)
                })
                .or(self.profile_override)
                .or((!self.profiles.is_empty()).then_some(0)),
        }?;
        self.profiles.get(i)
    }

    /// The real scheduler's word on the selected pod beside the current replay.
    pub fn scheduler_word(&self) -> Option<crate::source::SchedulerWord> {
        self.source.live_status.as_ref()?;
        let cur = self.current?;
        let pod = self.cluster.pod(&cur.key.pod)?;
        crate::source::SchedulerWord::of(
            pod,
            self.source.sched_events.get(&cur.key.pod),
            cur.trace.fit_error.as_deref(),
        )
    }

    /// The snapshot whose recorded words (PodScheduled conditions, FailedScheduling
    /// events) are set beside the replays: a snapshot as loaded, not a live source
    /// (which has its own word), a simulation (which rewrites the conditions) or
    /// edits (the words are about the cluster as it was).
    pub fn recorded_snapshot(&self) -> Option<&Cluster> {
        (self.source.live_status.is_none() && self.sim.is_none() && !self.whatif.is_active())
            .then_some(self.cluster)
    }

    /// The tabs of the tab bar (History only in simulation mode).
    pub fn tabs(&self) -> &'static [Tab] {
        if self.sim.is_some() {
            &Tab::ALL
        } else {
            &Tab::INSPECT
        }
    }
}

/// What a pane asks the app to do after an action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    OpenTab(Tab),
    OpenNode(String),
    /// Select this pod (showing it if the list hides it) and open its Pipeline.
    OpenPod(String),
    /// The pods list's filter or namespace changed: list them again.
    PodsChanged,
    /// The cursor moved to another pod.
    PodMoved,
    /// Focus the detail pane on the selected pod.
    OpenDetail,
    /// Show this attempt of the selected pod (`None`: follow the latest).
    Pin(Option<usize>),
    Flash(String, bool),
    Allow(HeldPod),
    /// Ask for a reason, then reject this waiting pod.
    Reject(String),
    /// Apply these what-if edits (in the `--what-if` spelling).
    Edits(Vec<String>),
    /// Open the what-if prompt with this text to complete (`pod.cpu=`).
    EditPrompt(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Handled {
    /// Not this pane's action: the app goes on with it.
    No,
    Yes,
    Then(Effect),
}

/// A pane: draws itself from the context, handles the actions it has the focus for.
pub trait Component {
    fn draw(&mut self, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits);

    /// An action while this pane has the focus.
    fn handle(&mut self, ctx: &PaneCtx, action: &Action) -> Handled;

    /// Rows a page key moves.
    fn page(&self) -> usize;

    /// The mouse wheel over the pane.
    fn scroll(&mut self, ctx: &PaneCtx, delta: isize) -> Handled;

    /// A click on row `i` of the pane's list: `None` when it has no such row.
    fn click_row(&mut self, _ctx: &PaneCtx, _i: usize) -> Option<Handled> {
        None
    }

    /// The selected row of the pane's list, if it has one.
    fn cursor(&self) -> Option<usize> {
        None
    }

    /// The text of the pane's `/` filter, if it has one (the prompt starts from it).
    fn start_filter(&mut self) -> Option<String> {
        None
    }

    fn set_filter(&mut self, _ctx: &PaneCtx, _text: String) {}

    /// The node the pane points at (for `c`, compare).
    fn node(&self, _ctx: &PaneCtx) -> Option<String> {
        None
    }
}

/// Up/down/page/top/bottom as a move of `page`-sized steps.
pub fn nav(action: &Action, page: usize) -> Option<isize> {
    let p = page.max(1) as isize;
    Some(match action {
        Action::Up => -1,
        Action::Down => 1,
        Action::PageUp => -p,
        Action::PageDown => p,
        Action::Top => isize::MIN / 2,
        Action::Bottom => isize::MAX / 2,
        _ => return None,
    })
}

/// Move a list cursor over `len` rows.
pub fn move_cursor(c: &mut Cursor, delta: isize, len: usize) {
    if delta < 0 {
        c.up(delta.unsigned_abs());
    } else {
        c.down(delta as usize, len);
    }
}

/// Select row `i` of a list of `len` rows, if there is one.
pub fn click_cursor(c: &mut Cursor, i: usize, len: usize) -> Option<Handled> {
    (i < len).then(|| {
        c.selected = i;
        Handled::Yes
    })
}

/// Scroll a text pane: the wheel and the moving keys alike.
pub fn scroll_by(s: &mut Scroll, action: &Action) -> Handled {
    match nav(action, s.page.max(1)) {
        Some(d) => {
            s.by(d);
            Handled::Yes
        }
        None => Handled::No,
    }
}

/// What a mouse event asks of the app: a tab, the focus, the pane's answer, enter.
#[derive(Debug)]
pub struct Mouse {
    pub tab: Option<Tab>,
    pub focus: Option<Focus>,
    pub handled: Handled,
    pub enter: bool,
}

impl Default for Mouse {
    fn default() -> Self {
        Mouse {
            tab: None,
            focus: None,
            handled: Handled::No,
            enter: false,
        }
    }
}

/// What a screen region does under the mouse (recorded at draw time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hit {
    Tab(Tab),
    PodsRows,
    PodsPane,
    /// Rows of the detail pane's list (the tab's own list).
    DetailRows,
    DetailPane,
    Help,
}

/// The regions of the last frame, with the first row of each list drawn.
#[derive(Clone, Debug, Default)]
pub struct Hits {
    pub rects: Vec<(Rect, Hit)>,
    pub offsets: Vec<(Hit, usize)>,
}

impl Hits {
    pub fn clear(&mut self) {
        self.rects.clear();
        self.offsets.clear();
    }

    /// The topmost region at a position.
    pub fn at(&self, column: u16, row: u16) -> Option<(Rect, Hit)> {
        let pos = ratatui::layout::Position { x: column, y: row };
        self.rects
            .iter()
            .rev()
            .find(|(r, _)| r.contains(pos))
            .copied()
    }

    pub fn offset_of(&self, hit: Hit) -> usize {
        self.offsets
            .iter()
            .find(|(h, _)| *h == hit)
            .map_or(0, |(_, o)| *o)
    }
}

/// Every pane, each with its own state; the app routes to them.
#[derive(Default)]
pub struct Panes {
    pub pods: PodsPane,
    pub pipeline: PipelinePane,
    pub filters: FiltersPane,
    pub scores: ScoresPane,
    pub node: NodePane,
    pub compare: ComparePane,
    pub preemption: PreemptionPane,
    pub waiting: WaitingPane,
    pub profile: ProfilePane,
    pub history: HistoryPane,
    pub needs: NeedsPane,
    /// `?`, open.
    pub help: Option<HelpPane>,
    /// `C`, open.
    pub connection: Option<ConnectionPane>,
    /// `S`, open.
    pub remedies: Option<RemediesPane>,
}

impl Panes {
    pub fn tab_mut(&mut self, t: Tab) -> &mut dyn Component {
        match t {
            Tab::Pipeline => &mut self.pipeline,
            Tab::Filters => &mut self.filters,
            Tab::Scores => &mut self.scores,
            Tab::Node => &mut self.node,
            Tab::Compare => &mut self.compare,
            Tab::Preemption => &mut self.preemption,
            Tab::Waiting => &mut self.waiting,
            Tab::Profile => &mut self.profile,
            Tab::History => &mut self.history,
            Tab::Needs => &mut self.needs,
        }
    }

    /// The focused pane (an open overlay first).
    pub fn focused(&mut self, focus: Focus, tab: Tab) -> &mut dyn Component {
        if self.help.is_none() && self.connection.is_none() && self.remedies.is_none() {
            return match focus {
                Focus::Pods => &mut self.pods,
                Focus::Detail => self.tab_mut(tab),
            };
        }
        match (&mut self.help, &mut self.connection, &mut self.remedies) {
            (Some(h), _, _) => h,
            (None, Some(c), _) => c,
            (None, None, Some(r)) => r,
            // Not reached: one of them is open.
            (None, None, None) => &mut self.pods,
        }
    }

    /// The wheel scrolls the pane under it; a click focuses a pane, picks a tab or a
    /// row, and a second click on the selected row is enter.
    pub fn mouse(
        &mut self,
        ctx: &PaneCtx,
        hits: &Hits,
        kind: MouseKind,
        column: u16,
        row: u16,
    ) -> Mouse {
        let mut out = Mouse::default();
        let Some((rect, hit)) = hits.at(column, row) else {
            return out;
        };
        let (focus, pane): (Focus, &mut dyn Component) = match hit {
            Hit::PodsRows | Hit::PodsPane => (Focus::Pods, &mut self.pods),
            Hit::DetailRows | Hit::DetailPane => (Focus::Detail, self.tab_mut(ctx.tab)),
            Hit::Help if kind != MouseKind::Click => match &mut self.help {
                Some(h) => (ctx.focus, h),
                None => return out,
            },
            Hit::Tab(t) if kind == MouseKind::Click => {
                out.tab = Some(t);
                return out;
            }
            Hit::Tab(_) | Hit::Help => return out,
        };
        match kind {
            MouseKind::ScrollUp => out.handled = pane.scroll(ctx, -3),
            MouseKind::ScrollDown => out.handled = pane.scroll(ctx, 3),
            MouseKind::Click if matches!(hit, Hit::PodsRows | Hit::DetailRows) => {
                out.focus = Some(focus);
                let i = hits.offset_of(hit) + (row - rect.y) as usize;
                let again = ctx.focus == focus && pane.cursor() == Some(i);
                if let Some(h) = pane.click_row(ctx, i) {
                    out.handled = h;
                    out.enter = again;
                }
            }
            MouseKind::Click => out.focus = Some(focus),
        }
        out
    }

    /// The current trace changed (`old` was shown before): panes keep their place on
    /// the same pod and start over on another.
    pub fn trace_changed(&mut self, ctx: &PaneCtx, old: Option<&Current>) {
        let same_pod = match (old, ctx.current) {
            (Some(o), Some(c)) => o.key.pod == c.key.pod,
            _ => false,
        };
        if !same_pod {
            self.pipeline.cursor.reset();
            self.node.scroll = Scroll::default();
            self.preemption.scroll = Scroll::default();
            self.compare = ComparePane::default();
        }
        self.filters.trace_changed(ctx, old, same_pod);
        self.scores.trace_changed(ctx, same_pod);
        self.node.trace_changed(ctx, same_pod);
    }

    /// What the app draws: the pods list and the detail pane (side by side when
    /// wide), the prompt, the status bar, and the overlays.
    pub fn draw(&mut self, ctx: &PaneCtx, f: &mut Frame, hits: &mut Hits) {
        let area = f.area();
        hits.clear();
        f.render_widget(Block::default().style(ctx.theme.text), area);
        if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
            let text = format!(
                "terminal too small ({}x{}); schedscope needs {MIN_WIDTH}x{MIN_HEIGHT}",
                area.width, area.height
            );
            let lines: Vec<Line> = super::widgets::wrap(&text, area.width.max(1) as usize)
                .into_iter()
                .map(|l| Line::from(Span::styled(l, ctx.theme.warning)))
                .collect();
            f.render_widget(Paragraph::new(lines), area);
            return;
        }
        let prompt_h = u16::from(ctx.prompt.is_some());
        let [body, prompt_area, status_area] = Layout::vertical([
            Constraint::Min(1),
            Constraint::Length(prompt_h),
            Constraint::Length(1),
        ])
        .areas(area);

        if ctx.source.connecting() {
            connection::draw_screen(ctx, f, body);
        } else if body.width >= SPLIT_WIDTH {
            // A simulation adds the queue column.
            // The list widens up to half the screen for long names (the detail pane
            // keeps 100 cells at least).
            let share = if ctx.sim.is_some() { 42 } else { 36 };
            let base = (body.width * share / 100).clamp(40, 80);
            let most = (body.width / 2)
                .min(body.width.saturating_sub(100))
                .max(base);
            let wanted = self.pods.natural_width(ctx, body.height as usize);
            let pods_w = wanted.clamp(base, most);
            let [left, right] =
                Layout::horizontal([Constraint::Length(pods_w), Constraint::Min(1)]).areas(body);
            self.pods.draw(ctx, f, left, hits);
            self.draw_detail(ctx, f, right, hits);
        } else if ctx.focus == Focus::Pods {
            self.pods.draw(ctx, f, body, hits);
        } else {
            self.draw_detail(ctx, f, body, hits);
        }
        if prompt_h > 0 {
            status::draw_prompt(ctx, f, prompt_area);
        }
        status::draw(ctx, f, status_area);
        if let Some(r) = &mut self.remedies {
            r.draw(ctx, f, body, hits);
        }
        if let Some(c) = &mut self.connection {
            c.draw(ctx, f, body, hits);
        }
        if let Some(h) = &mut self.help {
            h.draw(ctx, f, area, hits);
        }
    }

    fn draw_detail(&mut self, ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
        let focused = ctx.focus == Focus::Detail;
        let title = detail_title(ctx);
        let b = block(ctx.theme, title, focused);
        let inner = b.inner(area);
        f.render_widget(b, area);
        hits.rects.push((area, Hit::DetailPane));
        if inner.height < 2 || inner.width < 4 {
            return;
        }
        let banner_h = u16::from(ctx.whatif.is_active() && inner.height > 3);
        let [banner_area, tabs_area, content] = Layout::vertical([
            Constraint::Length(banner_h),
            Constraint::Length(1),
            Constraint::Min(1),
        ])
        .areas(inner);
        if banner_h > 0 {
            f.render_widget(Paragraph::new(whatif_banner(ctx)), banner_area);
        }
        draw_tabs(ctx, f, tabs_area, hits);

        let needs_trace = matches!(
            ctx.tab,
            Tab::Pipeline | Tab::Filters | Tab::Scores | Tab::Compare | Tab::Preemption
        );
        if needs_trace && ctx.current.is_none() {
            let note = status_note(ctx);
            centered_note(f, content, ctx.theme.dim, &note);
            return;
        }
        self.tab_mut(ctx.tab).draw(ctx, f, content, hits);
    }
}

/// `WHAT-IF node.uncordon=gen-a3 · pod.cpu=1 (default/web)  u undo · U clear`: the
/// model shown is not the real one.
fn whatif_banner(ctx: &PaneCtx) -> Line<'static> {
    let t = ctx.theme;
    // An edit that does not apply to this model is listed crossed out (✗).
    let edits: Vec<String> = ctx
        .whatif
        .edits()
        .iter()
        .enumerate()
        .map(|(i, a)| match ctx.whatif.is_applied(i) {
            true => a.label(),
            false => format!("✗ {}", a.label()),
        })
        .collect();
    Line::from(vec![
        Span::styled(
            " WHAT-IF ",
            t.warning.add_modifier(ratatui::style::Modifier::REVERSED),
        ),
        Span::styled(format!(" {} ", edits.join(" · ")), t.warning),
        Span::styled(" u", t.key),
        Span::styled(" undo ", t.dim),
        Span::styled(" U", t.key),
        Span::styled(" clear all ", t.dim),
        Span::styled(" w", t.key),
        Span::styled(" edit", t.dim),
    ])
}

fn status_note(ctx: &PaneCtx) -> String {
    match ctx.status {
        TraceStatus::NoPod => "no pod selected".into(),
        TraceStatus::NoProfile(s) => no_profile_note(ctx, s),
        TraceStatus::Computing => "replaying the scheduling cycle…".into(),
        TraceStatus::Ready => String::new(),
    }
}

/// What `explain` says of a pod whose schedulerName no profile serves, what the
/// TUI can do about it, and (live) what the real scheduler said of the pod.
pub fn no_profile_note(ctx: &PaneCtx, scheduler: &str) -> String {
    let key = ctx.selected_pod.unwrap_or_default().to_string();
    let profiles = ctx
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
    if ctx.source.live_status.is_some()
        && let Some(pod) = ctx.cluster.pod(&key)
        && let Some(w) =
            crate::source::SchedulerWord::of(pod, ctx.source.sched_events.get(&key), None)
    {
        note.push_str(&format!(" · {}", w.said(ctx.now)));
    }
    note
}

fn detail_title(ctx: &PaneCtx) -> Line<'static> {
    let t = ctx.theme;
    let mut spans = vec![Span::styled(" ", t.title)];
    match ctx.selected_pod.and_then(|k| ctx.cluster.pod(k)) {
        Some(pod) => {
            spans.push(Span::styled(pod.key(), t.title));
            spans.push(Span::styled(format!(" · priority {}", pod.priority), t.dim));
            if let Some(c) = ctx.current {
                spans.push(Span::styled(
                    format!(" · profile {}", c.trace.profile),
                    t.dim,
                ));
                if let Some(i) = c.key.attempt
                    && let Some(sim) = ctx.sim
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
                if ctx.profile_override.is_some() {
                    spans.push(Span::styled(" (override)", t.warning));
                }
            }
        }
        None => spans.push(Span::styled("no pod", t.title)),
    }
    spans.push(Span::styled(" ", t.title));
    Line::from(spans)
}

fn draw_tabs(ctx: &PaneCtx, f: &mut Frame, area: Rect, hits: &mut Hits) {
    let width = area.width as usize;
    let tabs = ctx.tabs();
    let labels: Vec<String> = tabs
        .iter()
        .map(|t| format!("{}:{}", t.digit(), t.title()))
        .collect();
    let (first, last) = tab_window(&labels, tabs.iter().position(|t| *t == ctx.tab), width);
    // Whole labels only: when they do not all fit, a window around the current tab,
    // with ‹ › saying more are there (their number keys still work).
    let mut spans = vec![Span::styled(
        if first > 0 { "‹" } else { " " },
        ctx.theme.dim,
    )];
    let mut x = area.x + 1;
    for i in first..last {
        let (t, text) = (tabs[i], &labels[i]);
        let w = format::width(text) as u16;
        let style = if t == ctx.tab {
            ctx.theme.tab_active
        } else {
            ctx.theme.tab
        };
        hits.rects.push((
            Rect {
                x,
                y: area.y,
                width: w,
                height: 1,
            },
            Hit::Tab(t),
        ));
        spans.push(Span::styled(text.clone(), style));
        spans.push(Span::raw(" "));
        x += w + 1;
    }
    if last < tabs.len() {
        spans.push(Span::styled("›", ctx.theme.dim));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The tabs `first..last` to show in `width` cells: all when they fit, else whole
/// labels from the first one on, shifted only as far as it takes to show `current`
/// (so the bar stays put while the current tab is in view), beside the ‹ › marks.
fn tab_window(labels: &[String], current: Option<usize>, width: usize) -> (usize, usize) {
    let n = labels.len();
    let cost = |i: usize| format::width(&labels[i]) + 1;
    if n == 0 || (0..n).map(cost).sum::<usize>() < width {
        return (0, n);
    }
    let room = width.saturating_sub(2);
    let fits = |a: usize, b: usize| (a..b).map(cost).sum::<usize>() <= room;
    let cur = current.unwrap_or(0).min(n - 1);
    let (mut first, mut last) = (0, 0);
    while last < n && fits(first, last + 1) {
        last += 1;
    }
    if cur >= last {
        last = cur + 1;
        while first < cur && !fits(first, last) {
            first += 1;
        }
        while last < n && fits(first, last + 1) {
            last += 1;
        }
    }
    (first, last)
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
pub fn traced_pod(ctx: &PaneCtx) -> Option<std::sync::Arc<crate::model::Pod>> {
    let c = ctx.current?;
    ctx.cluster.pod(&c.key.pod).cloned()
}

#[cfg(test)]
mod tests {
    use super::tab_window;

    #[test]
    fn tabs_show_whole_labels_around_the_current_one() {
        let labels: Vec<String> = [
            "1:Pipeline",
            "2:Filters",
            "3:Scores",
            "4:Node",
            "5:Compare",
            "6:Preemption",
            "7:Waiting",
            "8:Profile",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // All fit: all shown.
        assert_eq!(tab_window(&labels, Some(3), 200), (0, 8));
        // 78 cells (an 80-column terminal's pane): one tab gives way, never a cut label.
        assert_eq!(tab_window(&labels, Some(0), 78), (0, 7));
        assert_eq!(tab_window(&labels, Some(7), 78), (1, 8));
        // Narrow: the current tab is always shown.
        let (a, b) = tab_window(&labels, Some(5), 30);
        assert!(a <= 5 && 5 < b, "{a}..{b}");
        let used: usize = (a..b).map(|i| labels[i].len() + 1).sum();
        assert!(used + 2 <= 30);
        // Too narrow for even one label: still the current one.
        assert_eq!(tab_window(&labels, Some(5), 4), (5, 6));
    }
}
