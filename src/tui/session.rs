//! The pods waiting at Permit and, in simulation mode, the simulation that keeps
//! them: the app owns one [`Session`], and every operator signal (allow, reject, a
//! tick, a simulation step) goes through it and comes back as a [`SessionChange`]:
//! what to show and what changed.

use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;

use super::action::DataUpdate;
use super::playback::{Simulation, Step};
use super::waiting::{Clock, PermitGate, WaitingEvent};
use crate::report::HeldPod;

/// Where waiting pods come from: a list (a snapshot, tests, the acting scheduler) or
/// the running simulation.
pub enum WaitingSource {
    List(Box<dyn PermitGate>),
    Sim(Box<Simulation>),
}

/// What an operator signal or a tick did.
#[derive(Default)]
pub struct SessionChange {
    /// The status-bar message, and whether it is bad news.
    pub flash: Option<(String, bool)>,
    /// The simulation's new model.
    pub update: Option<DataUpdate>,
    /// The waiting pods changed without a new model: list the pods again.
    pub rebuild: bool,
    /// Show this pod (the one a simulation cycle ran for).
    pub select: Option<String>,
}

pub struct Session {
    src: WaitingSource,
    pub waiting: Vec<HeldPod>,
    clock: Arc<dyn Clock>,
}

impl Session {
    pub fn new(src: WaitingSource, clock: Arc<dyn Clock>) -> Self {
        let mut s = Session {
            src,
            waiting: Vec::new(),
            clock,
        };
        s.waiting = s.gate().list();
        s
    }

    fn gate(&mut self) -> &mut dyn PermitGate {
        match &mut self.src {
            WaitingSource::List(l) => l.as_mut(),
            WaitingSource::Sim(s) => s.as_mut(),
        }
    }

    pub fn sim(&self) -> Option<&Simulation> {
        match &self.src {
            WaitingSource::Sim(s) => Some(s),
            WaitingSource::List(_) => None,
        }
    }

    fn sim_mut(&mut self) -> Option<&mut Simulation> {
        match &mut self.src {
            WaitingSource::Sim(s) => Some(s),
            WaitingSource::List(_) => None,
        }
    }

    /// The wall clock.
    pub fn wall(&self) -> Timestamp {
        self.clock.now()
    }

    /// The time countdowns and replays use: the simulator's in simulation mode.
    pub fn now(&self) -> Timestamp {
        match self.sim() {
            Some(s) => s.now(),
            None => self.clock.now(),
        }
    }

    /// Countdowns move only while a pod waits; a simulation's time only while it plays.
    pub fn active(&self) -> bool {
        match self.sim() {
            Some(s) => s.is_playing(),
            None => !self.waiting.is_empty(),
        }
    }

    /// A source that keeps its own waiting pods (the acting scheduler) changes them
    /// beside its model: whether they moved.
    pub fn refresh(&mut self) -> bool {
        match &self.src {
            WaitingSource::List(l) => {
                let now = l.list();
                let moved = now != self.waiting;
                self.waiting = now;
                moved
            }
            WaitingSource::Sim(_) => false,
        }
    }

    /// After the waiting pods (or the simulation) changed: the list, then the model
    /// the simulation sends (or, without one, a rebuild).
    fn changed(&mut self, mut r: SessionChange) -> SessionChange {
        self.waiting = self.gate().list();
        match &mut self.src {
            // Nothing happened in the simulation: nothing to rebuild.
            WaitingSource::Sim(s) => r.update = s.take_update(),
            WaitingSource::List(_) => r.rebuild = true,
        }
        r
    }

    fn events(&mut self, events: Vec<WaitingEvent>, seq: Option<usize>) -> SessionChange {
        let mut r = SessionChange::default();
        if let Some(ev) = events.last() {
            let error = matches!(ev, WaitingEvent::Rejected { .. });
            let text = events
                .iter()
                .map(|e| e.describe())
                .collect::<Vec<_>>()
                .join("; ");
            r.flash = Some((text, error));
        }
        let mut r = self.changed(r);
        // In simulation mode, say everything the signal caused (a gang plugin's
        // Unreserve rejecting siblings, bindings).
        if let Some(seq) = seq
            && let Some(s) = self.sim().and_then(|s| s.summary_since(seq))
        {
            r.flash = Some(s);
        }
        r
    }

    fn seq(&self) -> Option<usize> {
        self.sim().map(|s| s.events().len())
    }

    /// `a`: allow every plugin the pod waits for.
    pub fn allow(&mut self, w: &HeldPod) -> SessionChange {
        let seq = self.seq();
        let mut events = Vec::new();
        for p in &w.pending {
            if let Some(ev) = self.gate().allow(&w.pod, &p.plugin) {
                events.push(ev);
            }
        }
        self.events(events, seq)
    }

    pub fn reject(&mut self, pod: &str, message: &str) -> SessionChange {
        let seq = self.seq();
        let events = self.gate().reject(pod, "", message).into_iter().collect();
        self.events(events, seq)
    }

    /// The 1 Hz tick: timeouts, or the playing simulation's next cycles.
    pub fn tick(&mut self) -> SessionChange {
        let wall = self.clock.now();
        let Some(sim) = self.sim_mut() else {
            let events = self.gate().expire(wall);
            // Otherwise the countdowns moved: a redraw is all it takes.
            return if events.is_empty() {
                SessionChange::default()
            } else {
                self.events(events, None)
            };
        };
        let seq = sim.events().len();
        sim.tick(wall);
        let summary = sim.summary_since(seq);
        let settled = sim.is_playing() && sim.is_settled();
        if settled {
            sim.pause();
        }
        let elapsed = sim.elapsed();
        let settled = settled.then(|| format!("settled at {elapsed}: paused (n, space)"));
        let flash = match (summary, settled) {
            (Some((s, bad)), None) => Some((s, bad)),
            (Some((s, bad)), Some(end)) => Some((format!("{s} · {end}"), bad)),
            (None, Some(end)) => Some((end, false)),
            (None, None) => None,
        };
        self.changed(SessionChange {
            flash,
            ..SessionChange::default()
        })
    }

    fn no_sim() -> SessionChange {
        SessionChange {
            flash: Some((
                "no simulation: start with --simulate (schedscope tui --simulate)".into(),
                true,
            )),
            ..SessionChange::default()
        }
    }

    /// `space`.
    pub fn play_pause(&mut self) -> SessionChange {
        let wall = self.clock.now();
        let Some(sim) = self.sim_mut() else {
            return Self::no_sim();
        };
        let text = if sim.toggle_play(wall) {
            format!(
                "playing from {}: one cycle per second, time follows the clock (space: pause)",
                sim.elapsed()
            )
        } else {
            format!("paused at {} (n: one cycle, space: play)", sim.elapsed())
        };
        SessionChange {
            flash: Some((text, false)),
            ..SessionChange::default()
        }
    }

    /// `n`: one cycle (or a jump in time).
    pub fn step(&mut self) -> SessionChange {
        let wall = self.clock.now();
        let Some(sim) = self.sim_mut() else {
            return Self::no_sim();
        };
        let seq = sim.events().len();
        let step = sim.step(wall);
        let summary = sim.summary_since(seq);
        let elapsed = sim.elapsed();
        let mut r = SessionChange::default();
        match step {
            Step::Cycle { pod } => {
                // Show what the cycle did: its pod, at its latest attempt.
                r.select = Some(pod);
                r.flash = summary;
            }
            Step::Jumped { .. } => {
                let text = match summary {
                    Some((s, _)) => format!("nothing to schedule; time jumps to {elapsed}: {s}"),
                    None => format!("nothing to schedule; time jumps to {elapsed}"),
                };
                r.flash = Some((text, false));
            }
            Step::Settled => {
                r.flash = Some((
                    format!("settled at {elapsed}: nothing left to schedule, nothing waits"),
                    false,
                ))
            }
        }
        self.changed(r)
    }

    /// `N`: run until nothing is left to do now.
    pub fn run_idle(&mut self) -> SessionChange {
        let Some(sim) = self.sim_mut() else {
            return Self::no_sim();
        };
        let n = sim.run_until_idle();
        let text = format!(
            "{n} cycle{} at {}; {} waiting at Permit",
            crate::report::plural(n),
            sim.elapsed(),
            sim.list().len()
        );
        self.changed(SessionChange {
            flash: Some((text, false)),
            ..SessionChange::default()
        })
    }
}
