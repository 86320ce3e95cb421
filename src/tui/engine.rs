//! The TUI's only door to the scheduling engine: a [`CycleRunner`] turns (profile,
//! cluster, pod, time) into a [`Trace`]. Views never call it; the app hands a
//! [`TraceJob`] to the runner loop, which runs it off the UI thread and sends the
//! result back as [`Action::TraceReady`]. Tests inject a runner returning hand-made
//! traces.

use std::collections::VecDeque;
use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;

use crate::engine::Framework;
use crate::engine::cycle::{CycleOptions, run_cycle};
use crate::engine::trace::Trace;
use crate::model::{Cluster, Pod};

use super::action::Action;
use super::view::TraceView;

pub trait CycleRunner: Send + Sync {
    fn run(&self, fw: &Framework, cluster: &Cluster, pod: &Pod, now: Timestamp) -> Trace;
}

impl<F> CycleRunner for F
where
    F: Fn(&Framework, &Cluster, &Pod, Timestamp) -> Trace + Send + Sync,
{
    fn run(&self, fw: &Framework, cluster: &Cluster, pod: &Pod, now: Timestamp) -> Trace {
        self(fw, cluster, pod, now)
    }
}

/// The engine's own cycle, with every filter run on every node: the Filters matrix
/// shows each plugin's answer, not only the first rejection.
pub fn engine_runner() -> Arc<dyn CycleRunner> {
    Arc::new(
        |fw: &Framework, cluster: &Cluster, pod: &Pod, now: Timestamp| {
            run_cycle(
                fw,
                cluster,
                pod,
                &CycleOptions {
                    all_filters: true,
                    now,
                    ..Default::default()
                },
            )
        },
    )
}

/// What a trace depends on: the pod, the profile it ran with, and the cluster version
/// (or, in simulation mode, the attempt it records).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TraceKey {
    pub pod: String,
    pub profile: usize,
    pub generation: u64,
    /// The simulator's attempt (index into its attempts) whose trace this is; `None`
    /// for a fresh replay.
    pub attempt: Option<usize>,
}

/// One cycle to run, with owned inputs so it can run on another thread.
pub struct TraceJob {
    pub key: TraceKey,
    pub cluster: Arc<Cluster>,
    pub profiles: Arc<Vec<Framework>>,
    pub pod: Arc<Pod>,
    pub now: Timestamp,
    pub runner: Arc<dyn CycleRunner>,
}

impl TraceJob {
    fn compute(self) -> (TraceKey, Arc<Trace>) {
        let trace = match self.profiles.get(self.key.profile) {
            Some(fw) => self.runner.run(fw, &self.cluster, &self.pod, self.now),
            // The app only builds jobs for existing profiles.
            None => missing_profile(&self.key, &self.pod),
        };
        (self.key, Arc::new(trace))
    }

    pub fn run(self) -> Action {
        let (key, trace) = self.compute();
        Action::TraceReady(key, trace)
    }

    /// Run the cycle and derive its view, both off the UI thread.
    pub fn run_with_view(self) -> (TraceKey, Arc<Trace>, Arc<TraceView>) {
        let (key, trace) = self.compute();
        let view = Arc::new(TraceView::new(&trace));
        (key, trace, view)
    }
}

fn missing_profile(key: &TraceKey, pod: &Pod) -> Trace {
    Trace::empty(
        pod.key(),
        pod.priority,
        crate::engine::trace::Outcome::Error {
            message: format!("profile #{} does not exist", key.profile),
        },
    )
}

/// The last few traces with their derived views, so flipping between pods is instant
/// and nothing is recomputed on redraw.
pub struct TraceCache {
    entries: VecDeque<(TraceKey, Arc<Trace>, Arc<TraceView>)>,
    capacity: usize,
}

impl TraceCache {
    pub fn new(capacity: usize) -> Self {
        TraceCache {
            entries: VecDeque::new(),
            capacity: capacity.max(1),
        }
    }

    pub fn get(&mut self, key: &TraceKey) -> Option<(Arc<Trace>, Arc<TraceView>)> {
        let i = self.entries.iter().position(|(k, _, _)| k == key)?;
        let e = self.entries.remove(i)?;
        let out = (e.1.clone(), e.2.clone());
        self.entries.push_front(e);
        Some(out)
    }

    pub fn insert(&mut self, key: TraceKey, trace: Arc<Trace>, view: Arc<TraceView>) {
        self.entries.retain(|(k, _, _)| *k != key);
        self.entries.push_front((key, trace, view));
        self.entries.truncate(self.capacity);
    }

    /// Drop traces of older cluster versions.
    pub fn retain_generation(&mut self, generation: u64) {
        self.entries.retain(|(k, _, _)| k.generation == generation);
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
