//! What the app shares with every pane (read through [`PaneCtx`]) and changes itself:
//! the cluster and its version, the profiles, the theme, the data source, focus and
//! tab, the prompt and the message, the selected pod, its trace, and the waiting
//! pods (or the simulation keeping them).

use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;

use crate::engine::Framework;
use crate::model::Cluster;
use crate::source::SourceStatus;
use crate::source::live::LiveControl;
use crate::theme::{BUILTIN, Theme, ThemeError};

use super::action::{DataUpdate, Focus, Tab};
use super::components::{Message, PaneCtx, Prompt, SourceInfo};
use super::playback::Simulation;
use super::session::{Session, WaitingSource};
use super::traces::{Traces, Want};
use super::verdicts::{Verdicts, VerdictsWant};
use super::waiting::{Clock, PermitGate};
use super::whatif::WhatIf;
use super::worker::CycleRunner;

/// Loads a theme by name or path (the runner reads the environment; tests do not).
pub type ThemeLoader = Box<dyn Fn(&str) -> Result<Theme, ThemeError> + Send>;

/// What the app is built from.
pub struct AppInit {
    pub cluster: Arc<Cluster>,
    pub profiles: Vec<Framework>,
    pub runner: Arc<dyn CycleRunner>,
    pub clock: Arc<dyn Clock>,
    pub waiting: Box<dyn PermitGate>,
    pub theme: Theme,
    pub theme_loader: ThemeLoader,
    /// Where the data comes from, for the status bar (`snapshot cluster.yaml`).
    pub source: String,
    /// Pod to select first (`namespace/name`).
    pub pod: Option<String>,
    /// Simulation mode: the simulator replaces `cluster` and `waiting`.
    pub simulation: Option<Simulation>,
}

pub struct Shared {
    /// The model every pane shows: `base` with the what-if edits applied (`base`
    /// itself without any).
    pub cluster: Arc<Cluster>,
    /// The real model, as the data source sent it.
    pub base: Arc<Cluster>,
    /// The what-if edits (the state; `cluster` is derived from them).
    pub whatif: WhatIf,
    /// Why some of them do not apply to the current model.
    not_applied: Vec<String>,
    /// The cluster's version (a new model or other edits): traces of older ones are
    /// dropped.
    pub generation: u64,
    pub profiles: Arc<Vec<Framework>>,
    pub theme: Theme,
    theme_loader: ThemeLoader,
    pub source: SourceInfo,
    /// A live source's per-kind state and retry.
    live: Option<LiveControl>,
    pub focus: Focus,
    pub tab: Tab,
    tab_history: Vec<Tab>,
    pub prompt: Option<Prompt>,
    pub message: Option<Message>,
    pub profile_override: Option<usize>,
    pub selected_pod: Option<String>,
    pub traces: Traces,
    /// Every pending pod's verdict, for the pods list.
    pub verdicts: Verdicts,
    pub session: Session,
    /// A Remedies search for the worker.
    pub remedies_job: Option<super::remedies::RemediesJob>,
}

impl Shared {
    /// `init` without its pod and simulation (the app takes those).
    pub fn new(init: AppInit, sim: Option<Simulation>) -> Self {
        let (cluster, src) = match sim {
            Some(sim) => (sim.cluster(), WaitingSource::Sim(Box::new(sim))),
            None => (init.cluster, WaitingSource::List(init.waiting)),
        };
        let session = Session::new(src, init.clock);
        Shared {
            base: cluster.clone(),
            cluster,
            whatif: WhatIf::default(),
            not_applied: Vec::new(),
            generation: 0,
            profiles: Arc::new(init.profiles),
            theme: init.theme,
            theme_loader: init.theme_loader,
            source: SourceInfo::new(init.source, session.wall()),
            live: None,
            focus: Focus::Pods,
            tab: Tab::Pipeline,
            tab_history: Vec::new(),
            prompt: None,
            message: None,
            profile_override: None,
            selected_pod: init.pod,
            verdicts: Verdicts::new(init.runner.clone()),
            traces: Traces::new(init.runner),
            session,
            remedies_job: None,
        }
    }

    /// The panes' view (`pending_count` is the pods list's).
    pub fn ctx(&self, pending_count: usize) -> PaneCtx<'_> {
        PaneCtx {
            cluster: &self.cluster,
            profiles: &self.profiles,
            current: self.traces.current.as_ref(),
            status: &self.traces.status,
            theme: &self.theme,
            now: self.session.now(),
            waiting: &self.session.waiting,
            sim: self.session.sim(),
            selected_pod: self.selected_pod.as_deref(),
            pin: self.traces.pin,
            profile_override: self.profile_override,
            focus: self.focus,
            tab: self.tab,
            source: &self.source,
            pending_count,
            prompt: self.prompt.as_ref(),
            message: self.message.as_ref(),
            verdicts: &self.verdicts,
            whatif: &self.whatif,
        }
    }

    /// The trace store, and what the panes want shown from it: the selected pod under
    /// the chosen profile, now.
    fn traces_and_want(&mut self) -> (&mut super::traces::Traces, Want<'_>) {
        let want = Want {
            pod: self.selected_pod.as_deref(),
            cluster: &self.cluster,
            profiles: &self.profiles,
            profile_override: self.profile_override,
            sim: self.session.sim(),
            generation: self.generation,
            now: self.session.now(),
            whatif: &self.whatif,
            base: &self.base,
        };
        (&mut self.traces, want)
    }

    /// Make the current trace match the selected pod, profile and cluster.
    pub fn sync_trace(&mut self) -> super::traces::Synced {
        let (traces, want) = self.traces_and_want();
        traces.sync(&want)
    }

    /// Ask for every pending pod's verdict, unless already asked for this cluster
    /// version and profile override.
    pub fn want_verdicts(&mut self) {
        let want = VerdictsWant {
            cluster: &self.cluster,
            profiles: &self.profiles,
            profile_override: self.profile_override,
            generation: self.generation,
            now: self.session.now(),
            whatif: &self.whatif,
        };
        self.verdicts.want(&want);
    }

    /// The verdict a fresh replay's trace also answers: a pending pod's, of this
    /// version, with the profile its verdict uses.
    pub fn verdict_key_of(
        &self,
        key: &super::worker::TraceKey,
    ) -> Option<super::worker::VerdictKey> {
        let pod = self.cluster.pod(&key.pod)?;
        let profile = crate::explain::choose_profile(&self.profiles, pod, self.profile_override)?;
        (key.attempt.is_none()
            && key.generation == self.generation
            && key.profile == profile
            && !pod.is_bound())
        .then(|| super::worker::VerdictKey {
            pod: key.pod.clone(),
            generation: key.generation,
            profile_override: self.profile_override,
        })
    }

    /// A computed trace: the trace it replaced, when it is the one wanted.
    pub fn trace_ready(
        &mut self,
        r: super::worker::Replayed,
    ) -> Option<Option<super::traces::Current>> {
        let (traces, want) = self.traces_and_want();
        traces.ready(&want, r)
    }

    /// The tabs of the tab bar (History only in simulation mode).
    pub fn tabs(&self) -> &'static [Tab] {
        if self.session.sim().is_some() {
            &Tab::ALL
        } else {
            &Tab::INSPECT
        }
    }

    pub fn flash(&mut self, text: &str, error: bool) {
        self.message = Some(Message {
            text: text.to_string(),
            error,
        });
    }

    /// A tab (remembered for esc), with the focus on it.
    pub fn set_tab(&mut self, t: Tab) {
        if !self.tabs().contains(&t) {
            let text = "the History tab lists a simulation's attempts: start with --simulate";
            return self.flash(text, true);
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

    /// esc past the panes: the previous tab, else the pods list.
    pub fn back(&mut self) {
        match self.tab_history.pop() {
            Some(t) => self.tab = t,
            None => self.focus = Focus::Pods,
        }
    }

    pub fn load_theme(&mut self, spec: &str) {
        match (self.theme_loader)(spec) {
            Ok(t) => {
                self.flash(&format!("theme {}", t.name), false);
                self.theme = t;
            }
            Err(e) => self.flash(&e.to_string(), true),
        }
    }

    /// The next built-in theme.
    pub fn cycle_theme(&mut self) {
        let i = BUILTIN
            .iter()
            .position(|(n, _)| *n == self.theme.name)
            .map_or(0, |i| (i + 1) % BUILTIN.len());
        self.load_theme(BUILTIN[i].0);
    }

    /// `p`: the next profile, then each pod's own. Whether the override changed.
    pub fn cycle_profile(&mut self) -> bool {
        let n = self.profiles.len();
        if n == 0 {
            self.flash("no profiles configured", true);
            return false;
        }
        self.profile_override = match self.profile_override {
            None => Some(0),
            Some(i) if i + 1 < n => Some(i + 1),
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
        true
    }

    /// `:profile [NAME]`. Whether the override changed.
    pub fn set_profile(&mut self, name: Option<&str>) -> bool {
        let Some(name) = name else {
            self.profile_override = None;
            return true;
        };
        let Some(i) = self.profiles.iter().position(|f| f.profile_name == name) else {
            let names: Vec<&str> = self
                .profiles
                .iter()
                .map(|f| f.profile_name.as_str())
                .collect();
            let text = format!("no profile {name:?} (profiles: {})", names.join(", "));
            self.flash(&text, true);
            return false;
        };
        self.profile_override = Some(i);
        true
    }

    /// A live source's per-kind state and its retry.
    pub fn set_live(&mut self, control: LiveControl) {
        // Connecting until the source says otherwise: never "no pending pods" first.
        self.source
            .live_status
            .get_or_insert(SourceStatus::Connecting { error: None });
        self.source.live_kinds = control.kinds();
        self.source.can_retry = true;
        self.live = Some(control);
    }

    /// `R`.
    pub fn retry(&mut self) {
        match &self.live {
            Some(c) => {
                c.retry();
                self.flash("listing every failed kind again now", false);
            }
            None => self.flash("nothing to retry: not a live source", true),
        }
    }

    /// Everything of a data update but its cluster: source, status, events, notice.
    pub fn source_update(&mut self, d: &mut DataUpdate) {
        let src = &mut self.source;
        if let Some(s) = d.source.take() {
            src.source = s;
        }
        if let Some(st) = d.status.take() {
            src.live_status = Some(st);
        }
        if let Some(c) = &self.live {
            src.live_kinds = c.kinds();
        }
        if let Some(e) = d.events.take() {
            src.sched_events = e;
        }
        if let Some(n) = d.notice.take() {
            self.flash(&n.text, n.error);
        }
    }

    /// A new cluster: the edits applied to it again (those that no longer apply
    /// are dropped, and the status line says so), a new version, and traces of
    /// older ones dropped.
    pub fn new_cluster(&mut self, cluster: Arc<Cluster>) {
        self.base = cluster;
        self.source.updated = self.session.wall();
        let before = self.not_applied.clone();
        self.rederive();
        // Said once when it changes, not on every update of a live model.
        if self.not_applied != before {
            let text = match self.not_applied.as_slice() {
                [] => "every what-if edit applies to the new model".to_string(),
                errors => format!("not applied to this model: {}", errors.join("; ")),
            };
            self.flash(&text, !self.not_applied.is_empty());
        }
    }

    /// The edited cluster from the real one and the edits, as a new version; the
    /// errors of the edits that do not apply to it.
    pub fn rederive(&mut self) -> Vec<String> {
        let (cluster, errors) = self.whatif.derive(&self.base);
        self.cluster = cluster;
        self.not_applied = errors.clone();
        self.new_version();
        errors
    }

    /// The model changed (new data or other edits): traces of older versions go.
    pub fn new_version(&mut self) {
        self.generation += 1;
        self.traces.retain_generation(self.generation);
    }

    /// A 1 Hz tick while a countdown or a playing simulation moves, or a
    /// reconnecting source's data ages (and the connection view's).
    pub fn needs_tick(&self, connection_open: bool) -> bool {
        let st = &self.source.live_status;
        self.session.active()
            || matches!(st, Some(SourceStatus::Reconnecting { .. }))
            || (st.is_some() && (connection_open || self.source.connecting()))
    }

    pub fn now(&self) -> Timestamp {
        self.session.now()
    }
}
