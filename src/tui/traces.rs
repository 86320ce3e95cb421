//! Which trace the detail panes show, and where it comes from: the cache, the
//! simulator's attempt, or a [`TraceJob`] for the worker (which asks `explain`).

use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;

use crate::engine::Framework;
use crate::engine::trace::Trace;
use crate::model::Cluster;

use super::playback::Simulation;
use super::whatif::WhatIf;
use super::worker::{CycleRunner, JobEdits, Replayed, TraceCache, TraceJob, TraceKey};
use crate::report::TraceView;
use crate::report::whatif::WhatIfComparison;

/// Why the detail pane has (or has not) a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TraceStatus {
    NoPod,
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
    /// Under what-if edits: before (the real model) and after (the edited one).
    pub whatif: Option<Arc<WhatIfComparison>>,
}

/// What the wanted trace depends on.
pub struct Want<'a> {
    pub pod: Option<&'a str>,
    pub cluster: &'a Arc<Cluster>,
    pub profiles: &'a Arc<Vec<Framework>>,
    pub profile_override: Option<usize>,
    pub sim: Option<&'a Simulation>,
    pub generation: u64,
    pub now: Timestamp,
    /// The what-if edits, and the real model they edit (`cluster` is the edited one).
    pub whatif: &'a WhatIf,
    pub base: &'a Arc<Cluster>,
}

pub struct Traces {
    runner: Arc<dyn CycleRunner>,
    cache: TraceCache,
    job: Option<TraceJob>,
    pub current: Option<Current>,
    pub status: TraceStatus,
    /// The attempt the user picked (index into the simulator's attempts); `None`
    /// follows the latest.
    pub pin: Option<usize>,
    pin_pod: Option<String>,
}

/// What [`Traces::sync`] changed.
#[derive(Default)]
pub struct Synced {
    /// Another pod: its History starts at the top.
    pub new_pod: bool,
    /// The trace shown changed; this one was shown before.
    pub replaced: Option<Option<Current>>,
}

impl Traces {
    pub fn new(runner: Arc<dyn CycleRunner>) -> Self {
        Traces {
            runner,
            cache: TraceCache::new(8),
            job: None,
            current: None,
            status: TraceStatus::NoPod,
            pin: None,
            pin_pod: None,
        }
    }

    pub fn take_job(&mut self) -> Option<TraceJob> {
        self.job.take()
    }

    /// Drop traces of older cluster versions.
    pub fn retain_generation(&mut self, generation: u64) {
        self.cache.retain_generation(generation);
    }

    /// In simulation mode, the attempt whose trace the panes show: the picked one,
    /// else the latest with a trace. A profile override asks for a fresh replay.
    fn sim_attempt(&self, w: &Want, key: &str) -> Option<usize> {
        // Edits ask for a replay of the edited model, as an override does.
        if w.profile_override.is_some() || w.whatif.is_active() {
            return None;
        }
        let sim = w.sim?;
        let has_trace = |i: usize| sim.attempts().get(i).is_some_and(|a| a.trace.is_some());
        let hist = sim.history(key);
        if let Some(pin) = self.pin
            && hist.iter().any(|h| h.attempt == pin)
            && has_trace(pin)
        {
            return Some(pin);
        }
        hist.iter().rev().map(|h| h.attempt).find(|&i| has_trace(i))
    }

    fn wanted_key(&self, w: &Want) -> Option<TraceKey> {
        let key = w.pod?;
        let pod = w.cluster.pod(key)?;
        if let Some(i) = self.sim_attempt(w, key) {
            let name = &w.sim?.attempts().get(i)?.profile;
            return Some(TraceKey {
                pod: key.to_string(),
                profile: w
                    .profiles
                    .iter()
                    .position(|f| &f.profile_name == name)
                    .unwrap_or(0),
                generation: w.generation,
                attempt: Some(i),
            });
        }
        // The same choice `explain` makes.
        Some(TraceKey {
            pod: key.to_string(),
            profile: crate::explain::choose_profile(w.profiles, pod, w.profile_override)?,
            generation: w.generation,
            attempt: None,
        })
    }

    /// Make the current trace match the selected pod, profile and cluster: from the
    /// cache, the simulator, or by leaving a job for the worker. A bound pod is
    /// replayed as pending, as `schedscope explain` does.
    pub fn sync(&mut self, w: &Want) -> Synced {
        let mut out = Synced::default();
        if self.pin_pod.as_deref() != w.pod {
            self.pin_pod = w.pod.map(str::to_string);
            self.pin = None;
            out.new_pod = true;
        }
        let Some(pod) = w.pod.and_then(|k| w.cluster.pod(k)) else {
            self.current = None;
            self.status = TraceStatus::NoPod;
            return out;
        };
        let Some(want) = self.wanted_key(w) else {
            self.current = None;
            self.status = TraceStatus::NoProfile(pod.scheduler_name.clone());
            return out;
        };
        if self.current.as_ref().is_some_and(|c| c.key == want) {
            return out;
        }
        if let Some((_, trace, view, whatif)) = self.cache.get(&want) {
            out.replaced = Some(self.set_current(Current {
                key: want,
                trace,
                view,
                whatif,
            }));
            return out;
        }
        // An attempt's trace is already there: only its view is derived (here, once).
        if let Some(i) = want.attempt
            && let Some(t) = w
                .sim
                .and_then(|s| s.attempts().get(i))
                .and_then(|a| a.trace.clone())
        {
            let trace = Arc::new(t);
            let view = Arc::new(TraceView::new(&trace));
            self.cache
                .insert((want.clone(), trace.clone(), view.clone(), None));
            out.replaced = Some(self.set_current(Current {
                key: want,
                trace,
                view,
                whatif: None,
            }));
            return out;
        }
        self.status = TraceStatus::Computing;
        let edits = w.whatif.is_active().then(|| {
            Arc::new(JobEdits {
                base: w.base.clone(),
                pod: w.whatif.for_pod(&want.pod),
            })
        });
        self.job = Some(TraceJob {
            key: want,
            cluster: w.cluster.clone(),
            profiles: w.profiles.clone(),
            now: w.now,
            runner: self.runner.clone(),
            edits,
        });
        out
    }

    /// A computed trace: cached, and shown if it is the one wanted. Returns the trace
    /// shown before when it replaced it.
    pub fn ready(&mut self, w: &Want, r: Replayed) -> Option<Option<Current>> {
        if r.key.generation != w.generation {
            return None;
        }
        let cur = Current {
            key: r.key,
            trace: r.trace,
            view: r.view,
            whatif: r.whatif,
        };
        self.cache.insert((
            cur.key.clone(),
            cur.trace.clone(),
            cur.view.clone(),
            cur.whatif.clone(),
        ));
        (self.wanted_key(w).as_ref() == Some(&cur.key)).then(|| self.set_current(cur))
    }

    fn set_current(&mut self, cur: Current) -> Option<Current> {
        self.status = TraceStatus::Ready;
        self.current.replace(cur)
    }
}
