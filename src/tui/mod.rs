//! The terminal UI: pods in queue order, the selected pod's pipeline, filter verdicts,
//! scores, node detail and comparison, preemption, waiting pods and the profile.
//!
//! Shape (ratatui's component template, gitui, k9s): each pane is a component owning
//! its cursor, scroll, sort and filter and handling its keys (`components`); they
//! read the shared state through a read-only context and answer with effects.
//! [`App`] routes each [`Action`] to the focused pane and owns what is shared
//! (`shared`: cluster, trace, theme, focus, tab, prompt, waiting pods); [`App::draw`]
//! renders it. Input, the trace worker and data sources are threads sending owned
//! messages to the thin loop in `runner`; the loop redraws only when something
//! changed and ticks at 1 Hz only while a Permit countdown runs (or a simulation
//! plays). In simulation mode (`--simulate`) the app owns a [`Simulation`] that steps
//! the engine's scheduler loop and feeds the panes its model. A pod's answer comes
//! from `explain`, as on the CLI, through the worker's [`CycleRunner`] seam, so
//! tests inject hand-made traces.

pub mod acting;
pub mod action;
pub mod app;
pub mod command;
pub mod components;
mod edits;
pub mod format;
pub mod inert;
pub mod keymap;
pub mod loading;
pub mod playback;
pub mod remedies;
pub mod runner;
pub mod session;
pub mod shared;
pub mod terminal;
pub mod traces;
pub mod verdicts;
pub mod view;
pub mod waiting;
pub mod whatif;
pub mod widgets;
pub mod worker;

#[cfg(test)]
mod consistency_tests;
#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod names_tests;
#[cfg(test)]
mod recorded_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod whatif_tests;

use std::sync::Arc;
use std::sync::mpsc::Receiver;

pub use action::{Action, DataUpdate, Focus, Tab};
pub use app::{App, AppInit};
pub use playback::Simulation;
pub use waiting::{Clock, PermitGate, SystemClock, WaitingEvent, WaitingList};
pub use worker::{CycleRunner, TraceJob, TraceKey, engine_runner};

use crate::engine::Framework;
use crate::model::Cluster;
use crate::theme::Theme;

/// What the binary hands the TUI.
pub struct TuiOptions {
    pub cluster: Cluster,
    /// Built profiles (from the scheduler configuration, or the defaults).
    pub profiles: Vec<Framework>,
    pub runner: Arc<dyn CycleRunner>,
    /// Shown in the status bar, e.g. `snapshot cluster.yaml`.
    pub source: String,
    /// `--theme NAME|PATH`.
    pub theme: Option<String>,
    /// Pod to open first (`namespace/name`).
    pub pod: Option<String>,
    /// Pods waiting at Permit, when the source has them.
    pub waiting: Option<Box<dyn PermitGate>>,
    /// Cluster replacements from a data source (reload, live watch).
    pub updates: Option<Receiver<DataUpdate>>,
    /// A live source's per-kind state and retry (the connection view).
    pub live: Option<crate::source::live::LiveControl>,
    /// `--simulate`: step through the scheduler loop over `cluster` (its model and
    /// waiting pods replace `cluster` and `waiting`).
    pub simulation: Option<Simulation>,
    /// `--what-if`: edits of the model shown, active from the first frame (the
    /// model itself, and under `--act` what is scheduled, stay the real ones).
    pub what_if: Vec<crate::whatif::Edit>,
}

impl TuiOptions {
    /// A snapshot in the TUI with the engine's cycle and the default theme.
    pub fn new(cluster: Cluster, profiles: Vec<Framework>, source: impl Into<String>) -> Self {
        TuiOptions {
            cluster,
            profiles,
            runner: engine_runner(),
            source: source.into(),
            theme: None,
            pod: None,
            waiting: None,
            updates: None,
            live: None,
            simulation: None,
            what_if: Vec::new(),
        }
    }
}

fn env_var(k: &str) -> Option<String> {
    std::env::var(k).ok()
}

/// Run the TUI until the user quits. The theme is resolved before the terminal is
/// touched, so a broken theme file is a plain error message.
pub fn run(opts: TuiOptions) -> anyhow::Result<()> {
    let theme = Theme::resolve(opts.theme.as_deref(), &env_var)?;
    let mut tui = terminal::Tui::enter()?;
    let events = runner::Events::new()?;
    let res = inspect(&mut tui, opts, theme, events);
    drop(tui);
    res
}

/// The inspector on a terminal already taken over, until the user quits.
fn inspect(
    tui: &mut terminal::Tui,
    opts: TuiOptions,
    theme: Theme,
    events: runner::Events,
) -> anyhow::Result<()> {
    let (mut app, updates) = app_of(opts, theme, Arc::new(SystemClock));
    runner::run_loop(tui, &mut app, updates, events)
}

/// The app for `opts`, and the data source's updates for the loop.
fn app_of(
    opts: TuiOptions,
    theme: Theme,
    clock: Arc<dyn Clock>,
) -> (App, Option<Receiver<DataUpdate>>) {
    let mut app = App::new(AppInit {
        cluster: Arc::new(opts.cluster),
        profiles: opts.profiles,
        runner: opts.runner,
        clock,
        waiting: opts
            .waiting
            .unwrap_or_else(|| Box::new(WaitingList::default())),
        theme,
        theme_loader: Box::new(|spec| Theme::resolve(Some(spec), &env_var)),
        source: opts.source,
        pod: opts.pod,
        simulation: opts.simulation,
    });
    if let Some(control) = opts.live {
        app.set_live(control);
    }
    app.start_with_edits(opts.what_if);
    (app, opts.updates)
}
