//! The app: all state, changed only by [`App::update`] with an [`Action`], drawn by
//! [`App::draw`]. No terminal, thread or clock of its own, so tests drive it directly.

use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;
use ratatui::Frame;
use ratatui::layout::Rect;

use crate::engine::Framework;
use crate::engine::trace::Trace;
use crate::model::{Cluster, Pod};
use crate::theme::{BUILTIN, Theme, ThemeError};

use super::action::{Action, DataUpdate, Focus, MouseKind, Tab};
use super::engine::{CycleRunner, TraceCache, TraceJob, TraceKey};
use super::keymap;
use super::simulation::{Simulation, Step};
use super::view::{PodQuery, PodRow, TraceView, pod_rows};
use super::waiting::{Clock, WaitingEvent, WaitingPod, WaitingPods};
use super::widgets::{Cursor, Scroll};
use crate::source::live::{KindHealth, LiveControl};
use crate::source::{SchedulerWord, SchedulingEvents, SourceStatus};

/// Loads a theme by name or path (the runner reads the environment; tests do not).
pub type ThemeLoader = Box<dyn Fn(&str) -> Result<Theme, ThemeError> + Send>;

/// What the app is built from.
pub struct AppInit {
    pub cluster: Arc<Cluster>,
    pub profiles: Vec<Framework>,
    pub runner: Arc<dyn CycleRunner>,
    pub clock: Arc<dyn Clock>,
    pub waiting: Box<dyn WaitingPods>,
    pub theme: Theme,
    pub theme_loader: ThemeLoader,
    /// Where the data comes from, for the status bar (`snapshot cluster.yaml`).
    pub source: String,
    /// Pod to select first (`namespace/name`).
    pub pod: Option<String>,
    /// Simulation mode: the simulator replaces `cluster` and `waiting`.
    pub simulation: Option<Simulation>,
}

/// Where waiting pods come from: a list (a snapshot, tests) or the running simulation,
/// which the app owns like any other state.
pub enum WaitingSource {
    List(Box<dyn WaitingPods>),
    Sim(Box<Simulation>),
}

impl WaitingSource {
    fn get(&mut self) -> &mut dyn WaitingPods {
        match self {
            WaitingSource::List(l) => l.as_mut(),
            WaitingSource::Sim(s) => s.as_mut(),
        }
    }
    pub fn sim(&self) -> Option<&Simulation> {
        match self {
            WaitingSource::Sim(s) => Some(s),
            WaitingSource::List(_) => None,
        }
    }
    fn sim_mut(&mut self) -> Option<&mut Simulation> {
        match self {
            WaitingSource::Sim(s) => Some(s),
            WaitingSource::List(_) => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptKind {
    Filter(FilterTarget),
    Command,
    Reject { pod: String },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterTarget {
    Pods,
    Nodes,
    Scores,
}

#[derive(Clone, Debug)]
pub struct Prompt {
    pub kind: PromptKind,
    pub text: String,
    /// The filter before the prompt opened (restored on esc).
    pub before: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub text: String,
    pub error: bool,
}

/// Why the detail pane has (or has not) a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceStatus {
    NoPod,
    /// The pod runs already; nothing to replay.
    Bound(String),
    /// `spec.schedulerName` matches no profile.
    NoProfile(String),
    Computing,
    Ready,
}

#[derive(Clone)]
pub struct Current {
    pub key: TraceKey,
    pub trace: Arc<Trace>,
    pub view: Arc<TraceView>,
}

#[derive(Clone, Debug, Default)]
pub struct FiltersState {
    pub summary: bool,
    pub cursor: Cursor,
    pub group_cursor: Cursor,
    /// 0 = node, 1..=P = filter plugin, P+1 = first rejection.
    pub column: usize,
    pub sort: Option<(usize, bool)>,
    pub filter: String,
    /// Restrict the matrix to one summary group.
    pub group: Option<usize>,
    /// Rows of the matrix in display order.
    pub order: Vec<u32>,
    /// First plugin column shown (horizontal scroll).
    pub col_offset: usize,
}

#[derive(Clone, Debug, Default)]
pub struct ScoresState {
    pub cursor: Cursor,
    /// 0 = rank/total, 1 = node, 2.. = score plugin.
    pub column: usize,
    pub sort: Option<(usize, bool)>,
    pub filter: String,
    /// Feasible indices in display order.
    pub order: Vec<u32>,
}

#[derive(Clone, Debug, Default)]
pub struct CompareState {
    pub a: Option<String>,
    pub b: Option<String>,
    pub scroll: Scroll,
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

pub struct App {
    pub cluster: Arc<Cluster>,
    pub generation: u64,
    pub profiles: Arc<Vec<Framework>>,
    runner: Arc<dyn CycleRunner>,
    pub clock: Arc<dyn Clock>,
    pub waiting_src: WaitingSource,
    pub waiting: Vec<WaitingPod>,
    pub theme: Theme,
    theme_loader: ThemeLoader,
    pub source: String,
    pub updated: Timestamp,
    /// A live source's connection state, shown in the status bar.
    pub live_status: Option<SourceStatus>,
    /// The real scheduler's latest FailedScheduling event per pod (live only).
    pub sched_events: Arc<SchedulingEvents>,
    /// A live source's per-kind state and retry.
    live: Option<LiveControl>,
    /// Each watched kind's state, as of the last update.
    pub live_kinds: Vec<KindHealth>,
    /// The connection view (`C`), open.
    pub connection: Option<Scroll>,

    pub pods: Vec<PodRow>,
    pub pending_count: usize,
    pub show_all: bool,
    pub namespace: Option<String>,
    pub pod_filter: String,
    pub pods_cur: Cursor,
    selected_pod: Option<String>,

    pub focus: Focus,
    pub tab: Tab,
    tab_history: Vec<Tab>,
    pub prompt: Option<Prompt>,
    pub help: Option<Scroll>,
    pub message: Option<Message>,
    pub profile_override: Option<usize>,

    cache: TraceCache,
    job: Option<TraceJob>,
    pub current: Option<Current>,
    pub status: TraceStatus,

    pub filters: FiltersState,
    pub scores: ScoresState,
    pub node: Option<String>,
    pub node_scroll: Scroll,
    pub compare: CompareState,
    pub pipeline: Cursor,
    pub preemption: Scroll,
    pub waiting_cur: Cursor,
    pub profile_scroll: Scroll,
    /// History tab: rows are the pod's attempts, newest first.
    pub history_cur: Cursor,
    /// The attempt the user picked (index into the simulator's attempts); `None`
    /// follows the latest.
    pub history_pin: Option<usize>,
    history_pod: Option<String>,

    pub hits: Vec<(Rect, Hit)>,
    /// Rows area and first row of the list under each list hit.
    pub hit_offsets: Vec<(Hit, usize)>,
    dirty: bool,
    quit: bool,
}

impl App {
    pub fn new(init: AppInit) -> App {
        let (cluster, waiting_src, source) = match init.simulation {
            Some(sim) => (
                sim.cluster(),
                WaitingSource::Sim(Box::new(sim)),
                init.source,
            ),
            None => (init.cluster, WaitingSource::List(init.waiting), init.source),
        };
        let waiting = match &waiting_src {
            WaitingSource::List(l) => l.list(),
            WaitingSource::Sim(s) => s.list(),
        };
        let now = init.clock.now();
        let mut app = App {
            cluster,
            generation: 0,
            profiles: Arc::new(init.profiles),
            runner: init.runner,
            clock: init.clock,
            waiting_src,
            waiting,
            theme: init.theme,
            theme_loader: init.theme_loader,
            source,
            updated: now,
            live_status: None,
            sched_events: Arc::default(),
            live: None,
            live_kinds: Vec::new(),
            connection: None,
            pods: Vec::new(),
            pending_count: 0,
            show_all: false,
            namespace: None,
            pod_filter: String::new(),
            pods_cur: Cursor::default(),
            selected_pod: init.pod.clone(),
            focus: Focus::Pods,
            tab: Tab::Pipeline,
            tab_history: Vec::new(),
            prompt: None,
            help: None,
            message: None,
            profile_override: None,
            cache: TraceCache::new(8),
            job: None,
            current: None,
            status: TraceStatus::NoPod,
            filters: FiltersState::default(),
            scores: ScoresState::default(),
            node: None,
            node_scroll: Scroll::default(),
            compare: CompareState::default(),
            pipeline: Cursor::default(),
            preemption: Scroll::default(),
            waiting_cur: Cursor::default(),
            profile_scroll: Scroll::default(),
            history_cur: Cursor::default(),
            history_pin: None,
            history_pod: None,
            hits: Vec::new(),
            hit_offsets: Vec::new(),
            dirty: true,
            quit: false,
        };
        if let Some(key) = &init.pod
            && app.cluster.pod(key).is_some_and(|p| p.is_bound())
        {
            app.show_all = true;
        }
        app.rebuild_pods();
        if init.pod.is_some() && app.selected_pod.is_some() {
            app.focus = Focus::Detail;
        }
        app.sync_trace();
        app
    }

    /// A live source's per-kind state and its retry.
    pub fn set_live(&mut self, control: LiveControl) {
        // Connecting until the source says otherwise: never "no pending pods" first.
        self.live_status
            .get_or_insert(SourceStatus::Connecting { error: None });
        self.live_kinds = control.kinds();
        self.live = Some(control);
        self.dirty = true;
    }

    /// Whether `R` can make the source retry (the acting scheduler's watch cannot).
    pub fn can_retry(&self) -> bool {
        self.live.is_some()
    }

    /// A live source that has not listed everything yet: the body shows the
    /// connection (why not, and a retry) instead of empty panes.
    pub fn connecting(&self) -> bool {
        matches!(self.live_status, Some(SourceStatus::Connecting { .. }))
    }

    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// Whether something changed since the last call (then the runner redraws).
    pub fn take_dirty(&mut self) -> bool {
        std::mem::take(&mut self.dirty)
    }

    /// A cycle the runner should compute (off the UI thread) and send back.
    pub fn take_job(&mut self) -> Option<TraceJob> {
        self.job.take()
    }

    /// Countdowns need a 1 Hz tick only while a pod waits at Permit; a simulation's
    /// time moves only while it plays.
    pub fn needs_tick(&self) -> bool {
        let active = match self.waiting_src.sim() {
            Some(s) => s.is_playing(),
            None => !self.waiting.is_empty(),
        };
        // A reconnecting source's data age moves on, as do the connection view's.
        active
            || matches!(self.live_status, Some(SourceStatus::Reconnecting { .. }))
            || (self.live_status.is_some() && (self.connection.is_some() || self.connecting()))
    }

    /// The real scheduler's word on the selected pod beside the current replay.
    pub fn scheduler_word(&self) -> Option<SchedulerWord> {
        self.live_status.as_ref()?;
        let cur = self.current.as_ref()?;
        let pod = self.cluster.pod(&cur.key.pod)?;
        SchedulerWord::of(
            pod,
            self.sched_events.get(&cur.key.pod),
            cur.trace.fit_error.as_deref(),
        )
    }

    /// The time countdowns and replays use: the simulator's in simulation mode.
    pub fn now(&self) -> Timestamp {
        match self.waiting_src.sim() {
            Some(s) => s.now(),
            None => self.clock.now(),
        }
    }

    pub fn sim(&self) -> Option<&Simulation> {
        self.waiting_src.sim()
    }

    /// The tabs of the tab bar (History only in simulation mode).
    pub fn tabs(&self) -> &'static [Tab] {
        if self.sim().is_some() {
            &Tab::ALL
        } else {
            &Tab::INSPECT
        }
    }

    pub fn draw(&mut self, f: &mut Frame) {
        super::components::draw(self, f);
    }

    pub fn selected_pod(&self) -> Option<&PodRow> {
        self.pods.get(self.pods_cur.selected)
    }

    pub fn selected_pod_key(&self) -> Option<&str> {
        self.selected_pod.as_deref()
    }

    /// The profile a pod replays with: the override, or its schedulerName's.
    pub fn profile_for(&self, pod: &Pod) -> Option<usize> {
        match self.profile_override {
            Some(i) if i < self.profiles.len() => Some(i),
            _ => self
                .profiles
                .iter()
                .position(|f| f.profile_name == pod.scheduler_name),
        }
    }

    /// The profile the Profile tab shows.
    pub fn active_profile(&self) -> Option<&Framework> {
        let i = match &self.current {
            Some(c) => Some(c.key.profile),
            None => self
                .selected_pod()
                .and_then(|r| self.profile_for(&r.pod))
                .or(self.profile_override)
                .or((!self.profiles.is_empty()).then_some(0)),
        }?;
        self.profiles.get(i)
    }

    pub fn handle_key(&mut self, e: &crossterm::event::KeyEvent) {
        let action = if self.prompt.is_some() {
            keymap::map_input_key(e)
        } else if self.help.is_some() {
            keymap::map_help_key(e)
        } else if self.connection.is_some() {
            keymap::map_connection_key(e)
        } else {
            keymap::map_key(self.focus, self.tab, e)
        };
        if let Some(a) = action {
            self.update(a);
        }
    }

    pub fn update(&mut self, action: Action) {
        // A transient message lasts until the next key.
        if !matches!(
            action,
            Action::Tick | Action::TraceReady(..) | Action::Resize(..) | Action::Data(..)
        ) {
            self.message = None;
        }
        self.dirty = true;
        match action {
            Action::Quit => self.quit = true,
            Action::ToggleHelp => {
                self.help = match self.help {
                    Some(_) => None,
                    None => Some(Scroll::default()),
                }
            }
            Action::Back => self.back(),
            Action::ToggleConnection => {
                self.connection = match self.connection {
                    Some(_) => None,
                    None if self.live_status.is_some() => Some(Scroll::default()),
                    None => {
                        self.flash(
                            "no live source: the connection view is for live clusters",
                            true,
                        );
                        None
                    }
                }
            }
            Action::RetryConnection => match &self.live {
                Some(c) => {
                    c.retry();
                    self.flash("listing every failed kind again now", false);
                }
                None => self.flash("nothing to retry: not a live source", true),
            },
            Action::FocusNext | Action::FocusPrev => {
                self.focus = match self.focus {
                    Focus::Pods => Focus::Detail,
                    Focus::Detail => Focus::Pods,
                }
            }
            Action::SelectTab(t) => self.set_tab(t),
            Action::NextTab => {
                let tabs = self.tabs();
                let i = (self.tab.index() + 1) % tabs.len();
                self.set_tab(tabs[i]);
            }
            Action::PrevTab => {
                let tabs = self.tabs();
                let i = (self.tab.index() + tabs.len() - 1) % tabs.len();
                self.set_tab(tabs[i]);
            }
            Action::Up => self.move_by(-1),
            Action::Down => self.move_by(1),
            Action::PageUp => {
                let p = self.page() as isize;
                self.move_by(-p)
            }
            Action::PageDown => {
                let p = self.page() as isize;
                self.move_by(p)
            }
            Action::Top => self.move_by(isize::MIN / 2),
            Action::Bottom => self.move_by(isize::MAX / 2),
            Action::Left => self.column(-1),
            Action::Right => self.column(1),
            Action::Enter => self.enter(),
            Action::StartFilter => self.start_filter(),
            Action::StartCommand => {
                self.prompt = Some(Prompt {
                    kind: PromptKind::Command,
                    text: String::new(),
                    before: String::new(),
                })
            }
            Action::InputChar(c) => {
                if let Some(p) = &mut self.prompt {
                    p.text.push(c);
                }
                self.live_filter();
            }
            Action::InputBackspace => {
                if let Some(p) = &mut self.prompt {
                    p.text.pop();
                }
                self.live_filter();
            }
            Action::InputClear => {
                if let Some(p) = &mut self.prompt {
                    p.text.clear();
                }
                self.live_filter();
            }
            Action::InputSubmit => self.submit(),
            Action::InputCancel => {
                if let Some(p) = self.prompt.take()
                    && let PromptKind::Filter(t) = p.kind
                {
                    self.set_filter(t, p.before);
                }
            }
            Action::ToggleAllPods => {
                self.show_all = !self.show_all;
                self.rebuild_pods();
                self.sync_trace();
            }
            Action::CycleProfile => self.cycle_profile(),
            Action::CycleTheme => {
                let i = BUILTIN
                    .iter()
                    .position(|(n, _)| *n == self.theme.name)
                    .map_or(0, |i| (i + 1) % BUILTIN.len());
                self.load_theme(BUILTIN[i].0);
            }
            Action::Sort => self.sort(),
            Action::ToggleView => {
                if self.tab == Tab::Filters {
                    self.filters.summary = !self.filters.summary;
                }
            }
            Action::MarkCompare => self.mark_compare(),
            Action::SwapCompare => {
                std::mem::swap(&mut self.compare.a, &mut self.compare.b);
            }
            Action::Allow => self.allow(),
            Action::Reject => match self.waiting.get(self.waiting_cur.selected) {
                Some(w) => {
                    self.prompt = Some(Prompt {
                        kind: PromptKind::Reject { pod: w.pod.clone() },
                        text: String::new(),
                        before: String::new(),
                    })
                }
                None => self.flash("no waiting pod selected", true),
            },
            Action::SimPlayPause => self.sim_play_pause(),
            Action::SimStep => self.sim_step(),
            Action::SimRunIdle => self.sim_run_idle(),
            Action::Mouse { kind, column, row } => self.mouse(kind, column, row),
            Action::Resize(..) => {}
            Action::Tick if self.sim().is_some() => self.sim_tick(),
            Action::Tick => {
                let events = self.waiting_src.get().expire(self.clock.now());
                if !events.is_empty() {
                    self.waiting_events(events);
                }
                // Otherwise the countdowns moved: a redraw is all it takes.
            }
            Action::TraceReady(key, trace) => {
                let view = Arc::new(TraceView::new(&trace));
                self.trace_ready(key, trace, view);
            }
            Action::Data(d) => self.data(d),
        }
    }

    /// A computed trace (with its view, when the worker built it).
    pub fn trace_ready(&mut self, key: TraceKey, trace: Arc<Trace>, view: Arc<TraceView>) {
        self.dirty = true;
        if key.generation != self.generation {
            return;
        }
        self.cache.insert(key.clone(), trace.clone(), view.clone());
        if self.wanted_key().as_ref() == Some(&key) {
            self.set_current(Current { key, trace, view });
        }
    }

    fn data(&mut self, d: DataUpdate) {
        self.dirty = true;
        if let Some(s) = d.source {
            self.source = s;
        }
        if let Some(st) = d.status {
            self.live_status = Some(st);
        }
        if let Some(c) = &self.live {
            self.live_kinds = c.kinds();
        }
        if let Some(e) = d.events {
            self.sched_events = e;
        }
        if let Some(n) = d.notice {
            self.flash(&n.text, n.error);
        }
        // A source that keeps its own waiting pods (the acting scheduler) changes
        // them beside its model.
        let waiting_moved = match &mut self.waiting_src {
            WaitingSource::List(l) => {
                let now = l.list();
                let moved = now != self.waiting;
                self.waiting = now;
                self.waiting_cur.clamp(self.waiting.len());
                moved
            }
            WaitingSource::Sim(_) => false,
        };
        // A status-only update carries the same cluster: traces stay valid.
        if Arc::ptr_eq(&self.cluster, &d.cluster) {
            if waiting_moved {
                self.rebuild_pods();
                self.sync_trace();
            }
            return;
        }
        self.cluster = d.cluster;
        self.generation += 1;
        self.updated = self.clock.now();
        self.cache.retain_generation(self.generation);
        self.rebuild_pods();
        self.sync_trace();
    }

    // ----- pods -----

    pub fn rebuild_pods(&mut self) {
        let q = PodQuery {
            all: self.show_all,
            namespace: self.namespace.as_deref(),
            filter: &self.pod_filter,
            keep: self.waiting_src.sim().map(|s| s.tracked()),
            profiles: self.profiles.as_slice(),
        };
        self.pods = pod_rows(&self.cluster, &self.waiting, &q);
        self.pending_count = self.cluster.pending_pods().count();
        let idx = self
            .selected_pod
            .as_ref()
            .and_then(|k| self.pods.iter().position(|r| r.is(k)));
        match idx {
            Some(i) => self.pods_cur.selected = i,
            None => {
                self.pods_cur.clamp(self.pods.len());
            }
        }
        self.pods_cur.clamp(self.pods.len());
        self.selected_pod = self.pods.get(self.pods_cur.selected).map(|r| r.key());
    }

    fn pod_moved(&mut self) {
        let same = match (self.pods.get(self.pods_cur.selected), &self.selected_pod) {
            (Some(r), Some(k)) => r.is(k),
            (None, None) => true,
            _ => false,
        };
        if !same {
            let key = self.pods.get(self.pods_cur.selected).map(|r| r.key());
            self.selected_pod = key;
            self.sync_trace();
        }
    }

    fn select_pod_key(&mut self, key: &str) -> bool {
        let Some(pod) = self.cluster.pod(key) else {
            return false;
        };
        let kept = self.sim().is_some_and(|s| s.tracked().contains(key));
        if pod.is_bound() && !self.show_all && !kept {
            self.show_all = true;
        }
        if self
            .namespace
            .as_deref()
            .is_some_and(|ns| ns != pod.namespace)
        {
            self.namespace = None;
        }
        self.pod_filter.clear();
        self.selected_pod = Some(key.to_string());
        self.rebuild_pods();
        self.sync_trace();
        true
    }

    // ----- traces -----

    /// In simulation mode, the attempt whose trace the panes show: the picked one, else
    /// the latest with a trace. A profile override asks for a fresh replay instead.
    fn sim_attempt(&self, key: &str) -> Option<usize> {
        if self.profile_override.is_some() {
            return None;
        }
        let sim = self.sim()?;
        let has_trace = |i: usize| sim.attempts().get(i).is_some_and(|a| a.trace.is_some());
        let hist = sim.history(key);
        if let Some(pin) = self.history_pin
            && hist.iter().any(|h| h.attempt == pin)
            && has_trace(pin)
        {
            return Some(pin);
        }
        hist.iter().rev().map(|h| h.attempt).find(|&i| has_trace(i))
    }

    fn wanted_key(&self) -> Option<TraceKey> {
        let key = self.selected_pod.as_ref()?;
        let pod = self.cluster.pod(key)?;
        if let Some(i) = self.sim_attempt(key) {
            let name = &self.sim()?.attempts().get(i)?.profile;
            return Some(TraceKey {
                pod: key.clone(),
                profile: self
                    .profiles
                    .iter()
                    .position(|f| &f.profile_name == name)
                    .unwrap_or(0),
                generation: self.generation,
                attempt: Some(i),
            });
        }
        let waiting = self.waiting.iter().any(|w| &w.pod == key);
        if pod.is_bound() && !waiting {
            return None;
        }
        Some(TraceKey {
            pod: key.clone(),
            profile: self.profile_for(pod)?,
            generation: self.generation,
            attempt: None,
        })
    }

    /// Make the current trace match the selected pod, profile and cluster: from the
    /// cache, or by asking the runner for a job.
    pub fn sync_trace(&mut self) {
        if self.history_pod != self.selected_pod {
            self.history_pod = self.selected_pod.clone();
            self.history_pin = None;
            self.history_cur.reset();
        }
        let Some(key) = self.selected_pod.clone() else {
            self.current = None;
            self.status = TraceStatus::NoPod;
            return;
        };
        let Some(pod) = self.cluster.pod(&key).cloned() else {
            self.current = None;
            self.status = TraceStatus::NoPod;
            return;
        };
        let waiting = self.waiting.iter().any(|w| w.pod == key);
        if pod.is_bound() && !waiting && self.sim_attempt(&key).is_none() {
            self.current = None;
            self.status = TraceStatus::Bound(pod.node_name.clone().unwrap_or_default());
            self.node = pod.node_name.clone();
            return;
        }
        let Some(want) = self.wanted_key() else {
            self.current = None;
            self.status = TraceStatus::NoProfile(pod.scheduler_name.clone());
            return;
        };
        if self.current.as_ref().is_some_and(|c| c.key == want) {
            return;
        }
        if let Some((trace, view)) = self.cache.get(&want) {
            self.set_current(Current {
                key: want,
                trace,
                view,
            });
            return;
        }
        // An attempt's trace is already there: only its view is derived (here, once).
        if let Some(i) = want.attempt
            && let Some(t) = self
                .sim()
                .and_then(|s| s.attempts().get(i))
                .and_then(|a| a.trace.clone())
        {
            let trace = Arc::new(t);
            let view = Arc::new(TraceView::new(&trace));
            self.cache.insert(want.clone(), trace.clone(), view.clone());
            self.set_current(Current {
                key: want,
                trace,
                view,
            });
            return;
        }
        self.status = TraceStatus::Computing;
        self.job = Some(TraceJob {
            key: want,
            cluster: self.cluster.clone(),
            profiles: self.profiles.clone(),
            pod,
            now: self.now(),
            runner: self.runner.clone(),
        });
    }

    fn set_current(&mut self, cur: Current) {
        let same_pod = self
            .current
            .as_ref()
            .is_some_and(|c| c.key.pod == cur.key.pod);
        let keep_node = self.filters_selected_node();
        self.current = Some(cur);
        self.status = TraceStatus::Ready;
        if !same_pod {
            self.filters.cursor.reset();
            self.filters.group_cursor.reset();
            self.filters.group = None;
            self.scores.cursor.reset();
            self.pipeline.reset();
            self.node_scroll = Scroll::default();
            self.preemption = Scroll::default();
            self.compare = CompareState::default();
        }
        self.refresh_filter_order();
        self.refresh_score_order();
        if same_pod && let Some(n) = keep_node {
            self.select_filter_node(&n);
        }
        let c = self.current.as_ref();
        let node_ok = self
            .node
            .as_ref()
            .is_some_and(|n| c.is_some_and(|c| c.view.row_of.contains_key(n)) && same_pod);
        if !node_ok {
            self.node = c.and_then(|c| {
                c.trace
                    .selected_node
                    .clone()
                    .or_else(|| c.view.rows.first().map(|r| r.node.clone()))
            });
        }
    }

    pub fn take_job_sync(&mut self) {
        // Tests and tiny clusters: run the pending job inline.
        if let Some(job) = self.take_job() {
            let a = job.run();
            self.update(a);
        }
    }

    fn cycle_profile(&mut self) {
        if self.profiles.is_empty() {
            self.flash("no profiles configured", true);
            return;
        }
        self.profile_override = match self.profile_override {
            None => Some(0),
            Some(i) if i + 1 < self.profiles.len() => Some(i + 1),
            Some(_) => None,
        };
        let text = match self.profile_override {
            Some(i) => format!(
                "replaying with profile {:?} (p: next)",
                self.profiles[i].profile_name
            ),
            None => "replaying with each pod's own profile (schedulerName)".into(),
        };
        self.flash(&text, false);
        self.sync_trace();
    }

    // ----- filters / scores orders -----

    pub fn refresh_filter_order(&mut self) {
        let Some(c) = &self.current else {
            self.filters.order.clear();
            return;
        };
        let v = &c.view;
        let needle = self.filters.filter.to_lowercase();
        let group_rows = self
            .filters
            .group
            .and_then(|g| v.summary.get(g))
            .map(|g| &g.rows);
        let mut order: Vec<u32> = match group_rows {
            Some(rows) => rows.clone(),
            None => (0..v.rows.len() as u32).collect(),
        };
        if !needle.is_empty() {
            order.retain(|&i| {
                let r = &v.rows[i as usize];
                r.node.to_lowercase().contains(&needle)
                    || r.reasons.to_lowercase().contains(&needle)
                    || r.plugin
                        .as_deref()
                        .is_some_and(|p| p.to_lowercase().contains(&needle))
            });
        }
        let np = v.plugins.len();
        if let Some((col, rev)) = self.filters.sort {
            match col {
                0 => order.sort_by(|a, b| v.rows[*a as usize].node.cmp(&v.rows[*b as usize].node)),
                c if c <= np => order.sort_by_key(|&i| (v.cell(i as usize, c - 1), i)),
                _ => order.sort_by_key(|&i| {
                    let r = &v.rows[i as usize];
                    let pos = r
                        .plugin
                        .as_ref()
                        .and_then(|p| v.plugins.iter().position(|x| x == p))
                        .unwrap_or(usize::MAX);
                    (r.feasible, pos, r.reasons.clone(), i)
                }),
            }
            if rev {
                order.reverse();
            }
        }
        self.filters.order = order;
        self.filters.cursor.clamp(self.filters.order.len());
        self.filters.column = self.filters.column.min(np + 1);
    }

    pub fn refresh_score_order(&mut self) {
        let Some(c) = &self.current else {
            self.scores.order.clear();
            return;
        };
        let t = &c.trace;
        let v = &c.view;
        let needle = self.scores.filter.to_lowercase();
        let mut order: Vec<u32> = v.rank_order.iter().map(|&i| i as u32).collect();
        if !needle.is_empty() {
            order.retain(|&i| t.feasible[i as usize].to_lowercase().contains(&needle));
        }
        if let Some((col, rev)) = self.scores.sort {
            match col {
                0 => {}
                1 => order.sort_by(|a, b| t.feasible[*a as usize].cmp(&t.feasible[*b as usize])),
                c => {
                    let p = c - 2;
                    if let Some(s) = t.scores.get(p) {
                        order.sort_by_key(|&i| {
                            let w = s.normalized.get(i as usize).copied().unwrap_or(0) * s.weight;
                            (std::cmp::Reverse(w), i)
                        });
                    }
                }
            }
            if rev {
                order.reverse();
            }
        }
        self.scores.order = order;
        self.scores.cursor.clamp(self.scores.order.len());
        self.scores.column = self.scores.column.min(t.scores.len() + 1);
    }

    /// The node under the cursor of the Filters tab (matrix mode).
    pub fn filters_selected_node(&self) -> Option<String> {
        let c = self.current.as_ref()?;
        let row = *self.filters.order.get(self.filters.cursor.selected)?;
        c.view.rows.get(row as usize).map(|r| r.node.clone())
    }

    pub fn scores_selected_node(&self) -> Option<String> {
        let c = self.current.as_ref()?;
        let i = *self.scores.order.get(self.scores.cursor.selected)?;
        c.trace.feasible.get(i as usize).cloned()
    }

    fn select_filter_node(&mut self, node: &str) {
        let Some(c) = &self.current else { return };
        if let Some(&row) = c.view.row_of.get(node)
            && let Some(pos) = self.filters.order.iter().position(|&r| r as usize == row)
        {
            self.filters.cursor.selected = pos;
        }
    }

    /// The node the current tab points at.
    fn tab_node(&self) -> Option<String> {
        match self.tab {
            Tab::Filters if !self.filters.summary => self.filters_selected_node(),
            Tab::Scores => self.scores_selected_node(),
            Tab::Node => self.node.clone(),
            Tab::Preemption => self
                .current
                .as_ref()
                .and_then(|c| c.trace.post_filter.as_ref())
                .and_then(|p| p.nominated_node.clone()),
            _ => None,
        }
    }

    // ----- navigation -----

    fn set_tab(&mut self, t: Tab) {
        if !self.tabs().contains(&t) {
            self.flash(
                "the History tab lists a simulation's attempts: start with --simulate",
                true,
            );
            return;
        }
        if t != self.tab {
            self.tab_history.push(self.tab);
            if self.tab_history.len() > 32 {
                self.tab_history.remove(0);
            }
            self.tab = t;
        }
        self.focus = Focus::Detail;
    }

    fn back(&mut self) {
        if self.help.is_some() {
            self.help = None;
            return;
        }
        if self.connection.is_some() {
            self.connection = None;
            return;
        }
        if self.focus == Focus::Detail {
            match self.tab {
                Tab::Filters if !self.filters.filter.is_empty() || self.filters.group.is_some() => {
                    let was_group = self.filters.group.is_some();
                    self.filters.filter.clear();
                    self.filters.group = None;
                    self.refresh_filter_order();
                    if was_group {
                        self.filters.summary = true;
                    }
                    return;
                }
                Tab::Scores if !self.scores.filter.is_empty() => {
                    self.scores.filter.clear();
                    self.refresh_score_order();
                    return;
                }
                _ => {}
            }
            if let Some(t) = self.tab_history.pop() {
                self.tab = t;
                return;
            }
            self.focus = Focus::Pods;
            return;
        }
        if !self.pod_filter.is_empty() {
            self.pod_filter.clear();
            self.rebuild_pods();
            self.sync_trace();
        } else if self.namespace.is_some() {
            self.namespace = None;
            self.rebuild_pods();
            self.sync_trace();
        }
    }

    fn page(&self) -> usize {
        match (self.focus, self.tab) {
            _ if self.help.is_some() => self.help.map_or(10, |h| h.page.max(1)),
            _ if self.connection.is_some() => self.connection.map_or(10, |h| h.page.max(1)),
            (Focus::Pods, _) => self.pods_cur.page(),
            (_, Tab::Filters) if self.filters.summary => self.filters.group_cursor.page(),
            (_, Tab::Filters) => self.filters.cursor.page(),
            (_, Tab::Scores) => self.scores.cursor.page(),
            (_, Tab::Pipeline) => self.pipeline.page(),
            (_, Tab::Waiting) => self.waiting_cur.page(),
            (_, Tab::Node) => self.node_scroll.page.max(1),
            (_, Tab::Compare) => self.compare.scroll.page.max(1),
            (_, Tab::Preemption) => self.preemption.page.max(1),
            (_, Tab::Profile) => self.profile_scroll.page.max(1),
            (_, Tab::History) => self.history_cur.page(),
        }
    }

    fn move_by(&mut self, delta: isize) {
        fn mv(c: &mut Cursor, delta: isize, len: usize) {
            if delta < 0 {
                c.up(delta.unsigned_abs());
            } else {
                c.down(delta as usize, len);
            }
        }
        if let Some(h) = &mut self.help {
            h.by(delta);
            return;
        }
        if let Some(h) = &mut self.connection {
            h.by(delta);
            return;
        }
        match (self.focus, self.tab) {
            (Focus::Pods, _) => {
                mv(&mut self.pods_cur, delta, self.pods.len());
                self.pod_moved();
            }
            (_, Tab::Filters) if self.filters.summary => {
                let n = self.current.as_ref().map_or(0, |c| c.view.summary.len());
                mv(&mut self.filters.group_cursor, delta, n);
            }
            (_, Tab::Filters) => {
                let n = self.filters.order.len();
                mv(&mut self.filters.cursor, delta, n);
            }
            (_, Tab::Scores) => {
                let n = self.scores.order.len();
                mv(&mut self.scores.cursor, delta, n);
            }
            (_, Tab::Pipeline) => {
                let n = self.current.as_ref().map_or(0, |c| c.view.stages.len());
                mv(&mut self.pipeline, delta, n);
            }
            (_, Tab::Waiting) => {
                let n = self.waiting.len();
                mv(&mut self.waiting_cur, delta, n);
            }
            (_, Tab::Node) => self.node_scroll.by(delta),
            (_, Tab::Compare) => self.compare.scroll.by(delta),
            (_, Tab::Preemption) => self.preemption.by(delta),
            (_, Tab::Profile) => self.profile_scroll.by(delta),
            (_, Tab::History) => {
                let n = self.history_len();
                mv(&mut self.history_cur, delta, n);
                self.history_moved();
            }
        }
    }

    fn column(&mut self, delta: isize) {
        if self.focus != Focus::Detail {
            return;
        }
        let Some(c) = &self.current else { return };
        match self.tab {
            Tab::Filters if !self.filters.summary => {
                let max = c.view.plugins.len() + 1;
                self.filters.column = self.filters.column.saturating_add_signed(delta).min(max);
            }
            Tab::Scores => {
                let max = c.trace.scores.len() + 1;
                self.scores.column = self.scores.column.saturating_add_signed(delta).min(max);
            }
            _ => {}
        }
    }

    fn sort(&mut self) {
        let toggle = |sort: &mut Option<(usize, bool)>, col: usize| {
            *sort = match *sort {
                Some((c, rev)) if c == col => Some((c, !rev)),
                _ => Some((col, false)),
            };
        };
        match self.tab {
            Tab::Filters if !self.filters.summary => {
                let col = self.filters.column;
                toggle(&mut self.filters.sort, col);
                let node = self.filters_selected_node();
                self.refresh_filter_order();
                if let Some(n) = node {
                    self.select_filter_node(&n);
                }
            }
            Tab::Scores => {
                let col = self.scores.column;
                toggle(&mut self.scores.sort, col);
                self.refresh_score_order();
            }
            _ => {}
        }
    }

    fn enter(&mut self) {
        if self.focus == Focus::Pods {
            if self.selected_pod.is_some() {
                self.focus = Focus::Detail;
                if matches!(self.tab, Tab::Waiting | Tab::Profile) {
                    self.set_tab(Tab::Pipeline);
                }
            }
            return;
        }
        match self.tab {
            Tab::Pipeline => {
                let tab = self
                    .current
                    .as_ref()
                    .and_then(|c| c.view.stages.get(self.pipeline.selected))
                    .and_then(|s| s.detail.map(Tab::from));
                if let Some(t) = tab {
                    self.set_tab(t);
                }
            }
            Tab::Filters if self.filters.summary => {
                let Some(c) = &self.current else { return };
                let g = self.filters.group_cursor.selected;
                if g < c.view.summary.len() {
                    self.filters.group = Some(g);
                    self.filters.summary = false;
                    self.filters.cursor.reset();
                    self.refresh_filter_order();
                }
            }
            Tab::Filters | Tab::Scores | Tab::Preemption => {
                if let Some(n) = self.tab_node() {
                    self.open_node(n);
                }
            }
            Tab::Waiting => {
                if let Some(w) = self.waiting.get(self.waiting_cur.selected) {
                    let key = w.pod.clone();
                    self.select_pod_key(&key);
                    self.set_tab(Tab::Pipeline);
                }
            }
            Tab::History => {
                if self.history_len() > 0 {
                    self.set_tab(Tab::Pipeline);
                }
            }
            Tab::Node | Tab::Compare | Tab::Profile => {}
        }
    }

    fn open_node(&mut self, n: String) {
        self.node = Some(n);
        self.node_scroll = Scroll::default();
        self.set_tab(Tab::Node);
    }

    fn mark_compare(&mut self) {
        let Some(n) = self.tab_node() else {
            self.flash("no node selected", true);
            return;
        };
        match &self.compare.a {
            Some(a) if *a != n && self.compare.b.is_none() => {
                self.compare.b = Some(n);
                self.compare.scroll = Scroll::default();
                self.set_tab(Tab::Compare);
            }
            _ => {
                self.compare.a = Some(n.clone());
                self.compare.b = None;
                self.flash(
                    &format!("{n} marked for comparison; press c on another node"),
                    false,
                );
            }
        }
    }

    // ----- prompts -----

    fn filter_target(&self) -> FilterTarget {
        match (self.focus, self.tab) {
            (Focus::Detail, Tab::Filters) => FilterTarget::Nodes,
            (Focus::Detail, Tab::Scores) => FilterTarget::Scores,
            _ => FilterTarget::Pods,
        }
    }

    fn filter_value(&self, t: FilterTarget) -> String {
        match t {
            FilterTarget::Pods => self.pod_filter.clone(),
            FilterTarget::Nodes => self.filters.filter.clone(),
            FilterTarget::Scores => self.scores.filter.clone(),
        }
    }

    fn start_filter(&mut self) {
        let t = self.filter_target();
        if t == FilterTarget::Pods {
            self.focus = Focus::Pods;
        }
        if t == FilterTarget::Nodes {
            self.filters.summary = false;
        }
        let before = self.filter_value(t);
        self.prompt = Some(Prompt {
            kind: PromptKind::Filter(t),
            text: before.clone(),
            before,
        });
    }

    fn set_filter(&mut self, t: FilterTarget, text: String) {
        match t {
            FilterTarget::Pods => {
                if self.pod_filter != text {
                    self.pod_filter = text;
                    self.pods_cur.reset();
                    self.rebuild_pods();
                    self.sync_trace();
                }
            }
            FilterTarget::Nodes => {
                self.filters.filter = text;
                self.filters.cursor.reset();
                self.refresh_filter_order();
            }
            FilterTarget::Scores => {
                self.scores.filter = text;
                self.scores.cursor.reset();
                self.refresh_score_order();
            }
        }
    }

    fn live_filter(&mut self) {
        if let Some(Prompt {
            kind: PromptKind::Filter(t),
            text,
            ..
        }) = self.prompt.clone()
        {
            self.set_filter(t, text);
        }
    }

    fn submit(&mut self) {
        let Some(p) = self.prompt.take() else { return };
        match p.kind {
            PromptKind::Filter(_) => {}
            PromptKind::Command => self.command(p.text.trim()),
            PromptKind::Reject { pod } => {
                let msg = if p.text.trim().is_empty() {
                    "rejected from schedscope".to_string()
                } else {
                    p.text.trim().to_string()
                };
                let seq = self.sim().map(|s| s.events().len());
                if let Some(ev) = self.waiting_src.get().reject(&pod, "", &msg) {
                    self.waiting_events(vec![ev]);
                }
                self.sim_summary(seq);
            }
        }
    }

    fn command(&mut self, cmd: &str) {
        let mut parts = cmd.split_whitespace();
        let verb = parts.next().unwrap_or("");
        let arg = parts.next();
        match (verb, arg) {
            ("", _) => {}
            ("q" | "q!" | "quit", _) => self.quit = true,
            ("help", _) => self.help = Some(Scroll::default()),
            ("ns" | "namespace", None) | ("ns" | "namespace", Some("all" | "*")) => {
                self.namespace = None;
                self.rebuild_pods();
                self.sync_trace();
                self.focus = Focus::Pods;
            }
            ("ns" | "namespace", Some(ns)) => {
                let known = self.cluster.namespaces.contains_key(ns)
                    || self.cluster.pods().any(|p| p.namespace == ns);
                self.namespace = Some(ns.to_string());
                self.pods_cur.reset();
                self.rebuild_pods();
                self.sync_trace();
                self.focus = Focus::Pods;
                if !known {
                    self.flash(
                        &format!("namespace {ns:?} has no pods in this cluster"),
                        true,
                    );
                } else if self.pods.is_empty() {
                    self.flash(&format!("no pending pods in {ns}; A shows all pods"), false);
                }
            }
            ("pod" | "po", Some(p)) => {
                let key = if p.contains('/') {
                    p.to_string()
                } else {
                    format!("{}/{p}", self.namespace.as_deref().unwrap_or("default"))
                };
                if self.select_pod_key(&key) {
                    self.set_tab(Tab::Pipeline);
                } else {
                    self.flash(&format!("no pod {key}"), true);
                }
            }
            ("node" | "no", Some(n)) => {
                if self.cluster.node(n).is_some() {
                    self.open_node(n.to_string());
                } else {
                    self.flash(&format!("no node {n}"), true);
                }
            }
            ("theme", Some(t)) => self.load_theme(t),
            ("profile", None) => {
                self.profile_override = None;
                self.sync_trace();
            }
            ("profile", Some(name)) => {
                match self.profiles.iter().position(|f| f.profile_name == name) {
                    Some(i) => {
                        self.profile_override = Some(i);
                        self.sync_trace();
                    }
                    None => {
                        let names: Vec<&str> = self
                            .profiles
                            .iter()
                            .map(|f| f.profile_name.as_str())
                            .collect();
                        self.flash(
                            &format!("no profile {name:?} (profiles: {})", names.join(", ")),
                            true,
                        );
                    }
                }
            }
            ("all", _) => {
                self.show_all = true;
                self.rebuild_pods();
            }
            ("pending", _) => {
                self.show_all = false;
                self.rebuild_pods();
                self.sync_trace();
            }
            (v, _) => {
                if let Some(t) = self
                    .tabs()
                    .iter()
                    .find(|t| t.title().eq_ignore_ascii_case(v))
                {
                    self.set_tab(*t);
                } else {
                    self.flash(
                        &format!(
                            "unknown command {cmd:?}; try ns NAME, pod NS/NAME, node NAME, theme NAME, profile NAME, all, pending, q"
                        ),
                        true,
                    );
                }
            }
        }
    }

    fn load_theme(&mut self, spec: &str) {
        match (self.theme_loader)(spec) {
            Ok(t) => {
                self.flash(&format!("theme {}", t.name), false);
                self.theme = t;
            }
            Err(e) => self.flash(&e.to_string(), true),
        }
    }

    pub fn flash(&mut self, text: &str, error: bool) {
        self.message = Some(Message {
            text: text.to_string(),
            error,
        });
    }

    // ----- waiting pods -----

    fn allow(&mut self) {
        let Some(w) = self.waiting.get(self.waiting_cur.selected).cloned() else {
            self.flash("no waiting pod selected", true);
            return;
        };
        let seq = self.sim().map(|s| s.events().len());
        let mut events = Vec::new();
        for p in &w.pending {
            if let Some(ev) = self.waiting_src.get().allow(&w.pod, &p.plugin) {
                events.push(ev);
            }
        }
        self.waiting_events(events);
        self.sim_summary(seq);
    }

    /// In simulation mode, say everything an operator's signal caused (a gang
    /// plugin's Unreserve rejecting siblings, bindings).
    fn sim_summary(&mut self, seq: Option<usize>) {
        if let Some(seq) = seq
            && let Some((text, bad)) = self.sim().and_then(|s| s.summary_since(seq))
        {
            self.flash(&text, bad);
        }
    }

    fn waiting_events(&mut self, events: Vec<WaitingEvent>) {
        if let Some(ev) = events.last() {
            let error = matches!(ev, WaitingEvent::Rejected { .. });
            let text = events
                .iter()
                .map(|e| e.describe())
                .collect::<Vec<_>>()
                .join("; ");
            self.flash(&text, error);
        }
        self.waiting_changed();
    }

    /// After the waiting pods (or the simulation) changed: the list, then the model
    /// the simulation sends, then the pods and the trace.
    fn waiting_changed(&mut self) {
        self.waiting = self.waiting_src.get().list();
        self.waiting_cur.clamp(self.waiting.len());
        match &mut self.waiting_src {
            WaitingSource::Sim(s) => {
                // Nothing happened in the simulation: nothing to rebuild.
                if let Some(u) = s.take_update() {
                    self.data(u);
                }
            }
            WaitingSource::List(_) => {
                self.rebuild_pods();
                self.sync_trace();
            }
        }
    }

    // ----- simulation -----

    fn sim_or_flash(&mut self) -> bool {
        if self.sim().is_some() {
            return true;
        }
        self.flash(
            "no simulation: start with --simulate (schedscope tui --simulate)",
            true,
        );
        false
    }

    fn sim_play_pause(&mut self) {
        if !self.sim_or_flash() {
            return;
        }
        let wall = self.clock.now();
        let Some(sim) = self.waiting_src.sim_mut() else {
            return;
        };
        let text = if sim.toggle_play(wall) {
            format!(
                "playing from {}: one cycle per second, time follows the clock (space: pause)",
                sim.elapsed()
            )
        } else {
            format!("paused at {} (n: one cycle, space: play)", sim.elapsed())
        };
        self.flash(&text, false);
    }

    fn sim_step(&mut self) {
        if !self.sim_or_flash() {
            return;
        }
        let wall = self.clock.now();
        let Some(sim) = self.waiting_src.sim_mut() else {
            return;
        };
        let seq = sim.events().len();
        let step = sim.step(wall);
        let summary = sim.summary_since(seq);
        let elapsed = sim.elapsed();
        self.waiting_changed();
        match step {
            Step::Cycle { pod } => {
                // Show what the cycle did: its pod, at its latest attempt.
                self.select_pod_key(&pod);
                if let Some((text, bad)) = summary {
                    self.flash(&text, bad);
                }
            }
            Step::Jumped { .. } => {
                let text = match summary {
                    Some((s, _)) => format!("nothing to schedule; time jumps to {elapsed}: {s}"),
                    None => format!("nothing to schedule; time jumps to {elapsed}"),
                };
                self.flash(&text, false);
            }
            Step::Settled => self.flash(
                &format!("settled at {elapsed}: nothing left to schedule, nothing waits"),
                false,
            ),
        }
    }

    fn sim_run_idle(&mut self) {
        if !self.sim_or_flash() {
            return;
        }
        let Some(sim) = self.waiting_src.sim_mut() else {
            return;
        };
        let n = sim.run_until_idle();
        let text = format!(
            "{n} cycle{} at {}; {} waiting at Permit",
            super::view::plural(n),
            sim.elapsed(),
            sim.list().len()
        );
        self.waiting_changed();
        self.flash(&text, false);
    }

    fn sim_tick(&mut self) {
        let wall = self.clock.now();
        let Some(sim) = self.waiting_src.sim_mut() else {
            return;
        };
        let seq = sim.events().len();
        sim.tick(wall);
        let summary = sim.summary_since(seq);
        let settled = sim.is_playing() && sim.is_settled();
        if settled {
            sim.pause();
        }
        let elapsed = sim.elapsed();
        self.waiting_changed();
        let settled = settled.then(|| format!("settled at {elapsed}: paused (n, space)"));
        match (summary, settled) {
            (Some((s, bad)), None) => self.flash(&s, bad),
            (Some((s, bad)), Some(end)) => self.flash(&format!("{s} · {end}"), bad),
            (None, Some(end)) => self.flash(&end, false),
            (None, None) => {}
        }
    }

    /// The selected pod's attempts, newest first (the History tab's rows).
    pub fn history_rows(&self) -> Vec<super::simulation::HistoryEntry> {
        let (Some(sim), Some(key)) = (self.sim(), self.selected_pod.as_deref()) else {
            return Vec::new();
        };
        sim.history(key).iter().rev().cloned().collect()
    }

    fn history_len(&self) -> usize {
        match (self.sim(), self.selected_pod.as_deref()) {
            (Some(sim), Some(key)) => sim.history(key).len(),
            _ => 0,
        }
    }

    /// The History cursor moved: show that attempt (the top row follows the latest).
    fn history_moved(&mut self) {
        let rows = self.history_rows();
        self.history_pin = match self.history_cur.selected {
            0 => None,
            i => rows.get(i).map(|h| h.attempt),
        };
        self.sync_trace();
    }

    // ----- mouse -----

    fn mouse(&mut self, kind: MouseKind, column: u16, row: u16) {
        let pos = ratatui::layout::Position { x: column, y: row };
        let Some((rect, hit)) = self
            .hits
            .iter()
            .rev()
            .find(|(r, _)| r.contains(pos))
            .copied()
        else {
            return;
        };
        match kind {
            MouseKind::ScrollUp | MouseKind::ScrollDown => {
                let d: isize = if kind == MouseKind::ScrollUp { -3 } else { 3 };
                match hit {
                    Hit::Help => {
                        if let Some(h) = &mut self.help {
                            h.by(d);
                        }
                    }
                    Hit::PodsRows | Hit::PodsPane => {
                        let len = self.pods.len();
                        self.pods_cur.scroll(d, len);
                        self.pod_moved();
                    }
                    Hit::DetailRows | Hit::DetailPane => {
                        let saved = self.focus;
                        self.focus = Focus::Detail;
                        self.scroll_detail(d);
                        self.focus = saved;
                    }
                    Hit::Tab(_) => {}
                }
            }
            MouseKind::Click => match hit {
                Hit::Help => {}
                Hit::Tab(t) => self.set_tab(t),
                Hit::PodsPane => self.focus = Focus::Pods,
                Hit::DetailPane => self.focus = Focus::Detail,
                Hit::PodsRows => {
                    let offset = self.offset_of(Hit::PodsRows);
                    let i = offset + (row - rect.y) as usize;
                    let was = self.focus == Focus::Pods && i == self.pods_cur.selected;
                    self.focus = Focus::Pods;
                    if i < self.pods.len() {
                        self.pods_cur.selected = i;
                        self.pod_moved();
                        if was {
                            self.enter();
                        }
                    }
                }
                Hit::DetailRows => {
                    let offset = self.offset_of(Hit::DetailRows);
                    let i = offset + (row - rect.y) as usize;
                    let was_focused = self.focus == Focus::Detail;
                    self.focus = Focus::Detail;
                    let len = self.detail_len();
                    if i < len
                        && let Some(c) = self.detail_cursor()
                    {
                        let again = was_focused && c.selected == i;
                        c.selected = i;
                        if self.tab == Tab::History {
                            self.history_moved();
                        }
                        if again {
                            self.enter();
                        }
                    }
                }
            },
        }
    }

    fn offset_of(&self, hit: Hit) -> usize {
        self.hit_offsets
            .iter()
            .find(|(h, _)| *h == hit)
            .map_or(0, |(_, o)| *o)
    }

    fn scroll_detail(&mut self, d: isize) {
        let len = self.detail_len();
        match self.tab {
            Tab::Node => self.node_scroll.by(d),
            Tab::Compare => self.compare.scroll.by(d),
            Tab::Preemption => self.preemption.by(d),
            Tab::Profile => self.profile_scroll.by(d),
            _ => {
                if let Some(c) = self.detail_cursor() {
                    c.scroll(d, len);
                }
                if self.tab == Tab::History {
                    self.history_moved();
                }
            }
        }
    }

    fn detail_cursor(&mut self) -> Option<&mut Cursor> {
        match self.tab {
            Tab::Filters if self.filters.summary => Some(&mut self.filters.group_cursor),
            Tab::Filters => Some(&mut self.filters.cursor),
            Tab::Scores => Some(&mut self.scores.cursor),
            Tab::Pipeline => Some(&mut self.pipeline),
            Tab::Waiting => Some(&mut self.waiting_cur),
            Tab::History => Some(&mut self.history_cur),
            _ => None,
        }
    }

    fn detail_len(&self) -> usize {
        match self.tab {
            Tab::Filters if self.filters.summary => {
                self.current.as_ref().map_or(0, |c| c.view.summary.len())
            }
            Tab::Filters => self.filters.order.len(),
            Tab::Scores => self.scores.order.len(),
            Tab::Pipeline => self.current.as_ref().map_or(0, |c| c.view.stages.len()),
            Tab::Waiting => self.waiting.len(),
            Tab::History => self.history_len(),
            _ => 0,
        }
    }
}
