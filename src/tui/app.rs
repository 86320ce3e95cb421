//! The app: routes every [`Action`] to the pane with the focus (or, for what is
//! shared, to [`Shared`]: focus, tabs, prompts, the trace, the waiting pods, the
//! theme, a live source). Each pane owns its state and keys (`components`) and
//! answers with an [`Effect`] the app carries out. No terminal, thread or clock of
//! its own, so tests drive it directly.

use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;
use ratatui::Frame;

use crate::engine::trace::Trace;
use crate::source::live::LiveControl;

use super::action::{Action, DataUpdate, Focus, Tab};
use super::command::{self, PromptCommand};
use super::components::{
    Component, ConnectionPane, Effect, Handled, HelpPane, Hits, PaneCtx, Panes, Prompt, PromptKind,
};
use super::keymap;
use super::playback::Simulation;
use super::session::SessionChange;
use super::worker::{Replayed, TraceJob, TraceKey, VerdictBatch, VerdictKey};
use crate::report::PodVerdict;
use crate::report::TraceView;

pub use super::shared::{AppInit, Shared, ThemeLoader};

pub struct App {
    pub shared: Shared,
    pub panes: Panes,
    /// Where the last frame put what, for the mouse.
    pub hits: Hits,
    pub(super) dirty: bool,
    quit: bool,
}

impl App {
    pub fn new(mut init: AppInit) -> App {
        let pod = init.pod.clone();
        let sim = init.simulation.take();
        let mut app = App {
            shared: Shared::new(init, sim),
            panes: Panes::default(),
            hits: Hits::default(),
            dirty: true,
            quit: false,
        };
        if let Some(key) = &pod
            && app.shared.cluster.pod(key).is_some_and(|p| p.is_bound())
        {
            app.panes.pods.show_all = true;
        }
        app.rebuild_pods();
        if pod.is_some() && app.shared.selected_pod.is_some() {
            app.shared.focus = Focus::Detail;
        }
        app
    }

    /// A live source's per-kind state and its retry.
    pub fn set_live(&mut self, control: LiveControl) {
        self.shared.set_live(control);
        self.dirty = true;
    }

    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// Draw again even though nothing changed (the screen was lost: a suspend).
    pub fn mark_dirty(&mut self) {
        self.dirty = true;
    }

    /// Whether something changed since the last call (then the runner redraws).
    pub fn take_dirty(&mut self) -> bool {
        std::mem::take(&mut self.dirty)
    }

    /// A cycle the runner should compute (off the UI thread) and send back.
    pub fn take_job(&mut self) -> Option<TraceJob> {
        self.shared.traces.take_job()
    }

    /// The pending pods' verdicts for the worker to compute, one pod at a time.
    pub fn take_verdict_job(&mut self) -> Option<VerdictBatch> {
        self.shared.verdicts.take_job()
    }

    /// A pending pod's verdict from the worker.
    pub fn verdict_ready(&mut self, key: VerdictKey, verdict: PodVerdict) {
        let pod = key.pod.clone();
        if !self.shared.verdicts.ready(key, verdict) {
            return;
        }
        let (known, total) = self.shared.verdicts.progress();
        let pods = &mut self.panes.pods;
        // On 5,000 nodes a verdict comes every few milliseconds: a redraw only when
        // it shows (the title's count catches up with the next one).
        if pods.grouped || known >= total || pods.shows(&pod) {
            self.dirty = true;
        }
        if !pods.grouped {
            return;
        }
        pods.verdicts_changed(&self.shared.ctx(pods.pending_count));
        // The cursor was on a header that is gone (every verdict known): it is on a
        // pod now.
        let key = pods.row_key();
        if key != self.shared.selected_pod {
            self.shared.selected_pod = key;
            self.sync_trace();
        }
    }

    /// Run every pending verdict inline (tests).
    pub fn take_verdicts_sync(&mut self) {
        if let Some(mut batch) = self.take_verdict_job() {
            while let Some((key, verdict)) = batch.next_verdict() {
                self.verdict_ready(key, verdict);
            }
        }
    }

    pub fn needs_tick(&self) -> bool {
        self.shared.needs_tick(self.panes.connection.is_some())
    }

    pub fn connecting(&self) -> bool {
        self.shared.source.connecting()
    }

    /// The time countdowns and replays use: the simulator's in simulation mode.
    pub fn now(&self) -> Timestamp {
        self.shared.now()
    }

    pub fn sim(&self) -> Option<&Simulation> {
        self.shared.session.sim()
    }

    pub fn tabs(&self) -> &'static [Tab] {
        self.shared.tabs()
    }

    pub fn selected_pod_key(&self) -> Option<&str> {
        self.shared.selected_pod.as_deref()
    }

    /// What the panes see now.
    pub fn ctx(&self) -> PaneCtx<'_> {
        self.shared.ctx(self.panes.pods.pending_count)
    }

    pub fn draw(&mut self, f: &mut Frame) {
        let ctx = self.shared.ctx(self.panes.pods.pending_count);
        self.panes.draw(&ctx, f, &mut self.hits);
    }

    pub fn handle_key(&mut self, e: &crossterm::event::KeyEvent) {
        let action = if self.shared.prompt.is_some() {
            keymap::map_input_key(e)
        } else if self.panes.help.is_some() {
            keymap::map_help_key(e)
        } else if self.panes.connection.is_some() {
            keymap::map_connection_key(e)
        } else if self.panes.remedies.is_some() {
            keymap::map_remedies_key(e)
        } else {
            keymap::map_key(self.shared.focus, self.shared.tab, e)
        };
        if let Some(a) = action {
            self.update(a);
        }
    }

    pub fn update(&mut self, action: Action) {
        let sh = &mut self.shared;
        // A transient message lasts until the next key.
        if !matches!(action, Action::Tick | Action::Resize(..) | Action::Data(..)) {
            sh.message = None;
        }
        self.dirty = true;
        match action {
            Action::Quit => self.quit = true,
            Action::ToggleHelp => {
                let open = self.panes.help.is_none();
                self.panes.help = open.then(HelpPane::default);
            }
            Action::Back => self.back(),
            Action::ToggleConnection => match self.panes.connection {
                Some(_) => self.panes.connection = None,
                None if sh.source.live_status.is_some() => {
                    self.panes.connection = Some(ConnectionPane::default())
                }
                None => sh.flash(
                    "no live source: the connection view is for live clusters",
                    true,
                ),
            },
            Action::RetryConnection => sh.retry(),
            Action::FocusNext | Action::FocusPrev => {
                sh.focus = match sh.focus {
                    Focus::Pods => Focus::Detail,
                    Focus::Detail => Focus::Pods,
                }
            }
            Action::SelectTab(t) => sh.set_tab(t),
            Action::NextTab | Action::PrevTab => {
                let tabs = sh.tabs();
                let step = match action {
                    Action::NextTab => 1,
                    _ => tabs.len() - 1,
                };
                // By place in this bar (History may be left out of it).
                let at = tabs.iter().position(|t| *t == sh.tab).unwrap_or(0);
                sh.set_tab(tabs[(at + step) % tabs.len()]);
            }
            Action::StartFilter => self.start_filter(),
            Action::StartCommand => sh.prompt = Some(Prompt::new(PromptKind::Command, "".into())),
            Action::InputChar(_) | Action::InputBackspace | Action::InputClear => {
                if let Some((focus, tab, text)) = sh.prompt.as_mut().and_then(|p| p.edit(&action)) {
                    self.set_filter(focus, tab, text);
                }
            }
            Action::InputSubmit => self.submit(),
            Action::InputCancel => {
                if let Some(p) = sh.prompt.take()
                    && let PromptKind::Filter(focus, tab) = p.kind
                {
                    self.set_filter(focus, tab, p.before);
                }
            }
            Action::ToggleAllPods => {
                self.panes.pods.show_all = !self.panes.pods.show_all;
                self.rebuild_pods();
            }
            Action::CycleProfile => {
                if sh.cycle_profile() {
                    self.sync_trace();
                }
            }
            Action::CycleTheme => sh.cycle_theme(),
            Action::MarkCompare => {
                let ctx = self.shared.ctx(self.panes.pods.pending_count);
                let h = match self.panes.tab_mut(ctx.tab).node(&ctx) {
                    Some(n) => self.panes.compare.mark(n),
                    None => Handled::Then(Effect::Flash("no node selected".into(), true)),
                };
                self.effect(h);
            }
            Action::SimPlayPause => self.report(|s| s.play_pause()),
            Action::SimStep => self.report(|s| s.step()),
            Action::SimRunIdle => self.report(|s| s.run_idle()),
            Action::Tick => self.report(|s| s.tick()),
            Action::Mouse { kind, column, row } => {
                let ctx = self.shared.ctx(self.panes.pods.pending_count);
                let m = self.panes.mouse(&ctx, &self.hits, kind, column, row);
                if let Some(t) = m.tab {
                    self.shared.set_tab(t);
                }
                if let Some(f) = m.focus {
                    self.shared.focus = f;
                }
                self.effect(m.handled);
                if m.enter {
                    self.route(&Action::Enter);
                }
            }
            Action::Resize(..) => {}
            Action::Data(d) => self.data(d),
            Action::UndoEdit => self.undo_edit(),
            Action::ClearEdits => self.clear_edits(),
            Action::StartWhatIf => self.prompt_edit(String::new()),
            Action::ToggleRemedies => self.toggle_remedies(),
            // Moves, columns, enter, sort, views, compare swap, allow/reject: the pane's.
            other => self.route(&other),
        }
    }

    /// An action for the focused pane (an open overlay first).
    fn route(&mut self, action: &Action) {
        let ctx = self.shared.ctx(self.panes.pods.pending_count);
        let h = self.panes.focused(ctx.focus, ctx.tab).handle(&ctx, action);
        self.effect(h);
    }

    fn effect(&mut self, h: Handled) {
        let Handled::Then(e) = h else { return };
        match e {
            Effect::OpenTab(t) => self.shared.set_tab(t),
            Effect::OpenNode(n) => {
                self.panes.node.open(n);
                self.shared.set_tab(Tab::Node);
            }
            Effect::OpenPod(key) => {
                self.select_pod_key(&key);
                self.shared.set_tab(Tab::Pipeline);
            }
            Effect::PodsChanged => self.rebuild_pods(),
            Effect::PodMoved => {
                self.shared.selected_pod = self.panes.pods.row_key();
                self.sync_trace();
            }
            Effect::OpenDetail if self.shared.selected_pod.is_some() => {
                self.shared.focus = Focus::Detail;
                if matches!(self.shared.tab, Tab::Waiting | Tab::Profile) {
                    self.shared.set_tab(Tab::Pipeline);
                }
            }
            Effect::OpenDetail => {}
            Effect::Pin(p) => {
                self.shared.traces.pin = p;
                self.sync_trace();
            }
            Effect::Flash(text, error) => self.shared.flash(&text, error),
            Effect::Allow(w) => self.report(|s| s.allow(&w)),
            Effect::Reject(pod) => {
                self.shared.prompt = Some(Prompt::new(PromptKind::Reject { pod }, "".into()))
            }
            Effect::Edits(edits) => {
                if self.apply_edits(&edits) {
                    self.panes.remedies = None;
                }
            }
            Effect::EditPrompt(text) => self.prompt_edit(text),
        }
    }

    /// A computed trace (with its view, when the worker built it).
    pub fn trace_ready(&mut self, key: TraceKey, trace: Arc<Trace>, view: Arc<TraceView>) {
        self.replay_ready(Replayed {
            key,
            trace,
            view,
            whatif: None,
        });
    }

    /// A computed trace with its view and, under what-if edits, its comparison.
    pub fn replay_ready(&mut self, r: Replayed) {
        self.dirty = true;
        // The selected pod's own replay answers for its verdict too, ahead of the
        // background batch.
        if let Some(vk) = self.shared.verdict_key_of(&r.key) {
            let v = PodVerdict::of(&r.trace, &r.view);
            let v = match self.shared.cluster.pod(&r.trace.pod) {
                Some(pod) => v.of_pod(pod),
                None => v,
            };
            self.verdict_ready(vk, v);
        }
        if let Some(old) = self.shared.trace_ready(r) {
            let ctx = self.shared.ctx(self.panes.pods.pending_count);
            self.panes.trace_changed(&ctx, old.as_ref());
        }
    }

    /// Make the current trace match the selected pod, profile and cluster: from the
    /// cache, the simulator, or a job for the worker.
    pub fn sync_trace(&mut self) {
        self.shared.want_verdicts();
        let out = self.shared.sync_trace();
        if out.new_pod {
            self.panes.history.cursor.reset();
        }
        if let Some(old) = out.replaced {
            let ctx = self.shared.ctx(self.panes.pods.pending_count);
            self.panes.trace_changed(&ctx, old.as_ref());
        }
    }

    /// Run the pending job inline (tests, tiny clusters), delivered as the worker
    /// delivers it: the trace with its view built by [`TraceJob::run_with_view`]
    /// (causes included), so tests see what users see.
    pub fn take_job_sync(&mut self) {
        if let Some(job) = self.take_job() {
            self.replay_ready(job.run());
        }
    }

    fn data(&mut self, mut d: DataUpdate) {
        self.dirty = true;
        self.shared.source_update(&mut d);
        let moved = self.shared.session.refresh();
        let n = self.shared.session.waiting.len();
        self.panes.waiting.cursor.clamp(n);
        // A status-only update carries the same cluster: traces stay valid.
        if Arc::ptr_eq(&self.shared.base, &d.cluster) {
            if moved {
                self.rebuild_pods();
            }
            return;
        }
        self.shared.new_cluster(d.cluster);
        self.rebuild_pods();
    }

    /// An operator signal or a tick through the session, then what it did: the
    /// model, the pod, the message.
    fn report(&mut self, f: impl FnOnce(&mut super::session::Session) -> SessionChange) {
        let r = f(&mut self.shared.session);
        let n = self.shared.session.waiting.len();
        self.panes.waiting.cursor.clamp(n);
        match r.update {
            Some(u) => self.data(u),
            None if r.rebuild => self.rebuild_pods(),
            None => {}
        }
        if let Some(pod) = r.select {
            self.select_pod_key(&pod);
        }
        if let Some((text, error)) = r.flash {
            self.shared.flash(&text, error);
        }
    }

    /// List the pods again; the selection follows the cursor, the trace the selection.
    pub fn rebuild_pods(&mut self) {
        let ctx = self.shared.ctx(self.panes.pods.pending_count);
        self.panes.pods.rebuild(&ctx);
        self.shared.selected_pod = self.panes.pods.row_key();
        self.sync_trace();
    }

    fn select_pod_key(&mut self, key: &str) -> bool {
        let ctx = self.shared.ctx(self.panes.pods.pending_count);
        if !self.panes.pods.reveal(&ctx, key) {
            return false;
        }
        self.shared.selected_pod = Some(key.to_string());
        self.rebuild_pods();
        true
    }

    /// esc: close an overlay, else the pane's own back (a filter, a group), else the
    /// previous tab, else the pods list.
    fn back(&mut self) {
        if self.panes.help.take().is_some()
            || self.panes.connection.take().is_some()
            || self.panes.remedies.take().is_some()
        {
            return;
        }
        let ctx = self.shared.ctx(self.panes.pods.pending_count);
        let h = self
            .panes
            .focused(ctx.focus, ctx.tab)
            .handle(&ctx, &Action::Back);
        if h != Handled::No || self.shared.focus == Focus::Pods {
            return self.effect(h);
        }
        self.shared.back();
    }

    /// `/` filters the focused pane; panes without a filter filter the pods.
    fn start_filter(&mut self) {
        let (focus, tab) = (self.shared.focus, self.shared.tab);
        let own = match focus {
            Focus::Detail => self.panes.tab_mut(tab).start_filter(),
            Focus::Pods => None,
        };
        let (focus, text) = match own {
            Some(text) => (focus, text),
            None => (Focus::Pods, self.panes.pods.table.filter.clone()),
        };
        self.shared.focus = focus;
        self.shared.prompt = Some(Prompt::new(PromptKind::Filter(focus, tab), text));
    }

    fn set_filter(&mut self, focus: Focus, tab: Tab, text: String) {
        let ctx = self.shared.ctx(self.panes.pods.pending_count);
        match focus {
            Focus::Detail => self.panes.tab_mut(tab).set_filter(&ctx, text),
            Focus::Pods if self.panes.pods.table.filter != text => {
                self.panes.pods.set_filter(&ctx, text);
                self.rebuild_pods();
            }
            Focus::Pods => {}
        }
    }

    fn submit(&mut self) {
        let Some(p) = self.shared.prompt.take() else {
            return;
        };
        match p.kind {
            PromptKind::Filter(..) => {}
            PromptKind::Command => match command::parse(p.text.trim(), self.tabs()) {
                Some(Ok(c)) => self.command(c),
                Some(Err(e)) => self.shared.flash(&e, true),
                None => {}
            },
            PromptKind::WhatIf => {
                let text = p.text.trim();
                if !text.is_empty() {
                    self.apply_edits(&[text.to_string()]);
                }
            }
            PromptKind::Reject { pod } => {
                let msg = match p.text.trim() {
                    "" => "rejected from schedscope",
                    m => m,
                };
                self.report(|s| s.reject(&pod, msg));
            }
        }
    }

    fn command(&mut self, c: PromptCommand) {
        let (sh, pods) = (&mut self.shared, &mut self.panes.pods);
        match c {
            PromptCommand::Quit => self.quit = true,
            PromptCommand::Help => self.panes.help = Some(HelpPane::default()),
            PromptCommand::Namespace(ns) => {
                let known = ns.as_deref().is_none_or(|ns| {
                    let c = &sh.cluster;
                    c.namespaces.contains_key(ns) || c.pods().any(|p| p.namespace == ns)
                });
                if ns.is_some() {
                    pods.table.cursor.reset();
                }
                pods.namespace = ns.clone();
                self.rebuild_pods();
                self.shared.focus = Focus::Pods;
                let flash = match ns {
                    Some(ns) if !known => (
                        format!("namespace {ns:?} has no pods in this cluster"),
                        true,
                    ),
                    Some(ns) if self.panes.pods.list.rows.is_empty() => {
                        (format!("no pending pods in {ns}; A shows all pods"), false)
                    }
                    _ => return,
                };
                self.shared.flash(&flash.0, flash.1);
            }
            PromptCommand::Pod(p) => {
                let key = crate::explain::pod_key(&p, pods.namespace.as_deref());
                match self.select_pod_key(&key) {
                    true => self.shared.set_tab(Tab::Pipeline),
                    false => self.shared.flash(&format!("no pod {key}"), true),
                }
            }
            PromptCommand::Node(n) if sh.cluster.node(&n).is_some() => {
                self.effect(Handled::Then(Effect::OpenNode(n)))
            }
            PromptCommand::Node(n) => sh.flash(&format!("no node {n}"), true),
            PromptCommand::Theme(t) => sh.load_theme(&t),
            PromptCommand::Profile(name) => {
                if sh.set_profile(name.as_deref()) {
                    self.sync_trace();
                }
            }
            PromptCommand::All | PromptCommand::Pending => {
                pods.show_all = c == PromptCommand::All;
                self.rebuild_pods();
            }
            PromptCommand::Tab(t) => sh.set_tab(t),
            PromptCommand::WhatIf(edits) => {
                self.apply_edits(&edits);
            }
        }
    }

    pub fn flash(&mut self, text: &str, error: bool) {
        self.shared.flash(text, error);
    }
}
