//! The TUI's only door to the scheduling engine: a [`TraceJob`] asks
//! [`crate::explain::explain_with`] for a pod's answer (the CLI's `explain` path: the
//! same profile choice, a bound pod replayed as pending), with a [`CycleRunner`] as the
//! cycle. Views never call it; the app hands the job to the runner loop, which runs it
//! off the UI thread and sends the result back as [`Action::TraceReady`]. Tests inject
//! a runner returning hand-made traces.

use std::collections::VecDeque;
use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;

use crate::engine::Framework;
use crate::engine::cycle::{CycleOptions, run_cycle};
use crate::engine::trace::Trace;
use crate::explain::explain_with;
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

/// One pod to explain, with owned inputs so it can run on another thread.
pub struct TraceJob {
    /// The pod, and the profile the app chose for it with
    /// [`crate::explain::choose_profile`] (passed on as the override).
    pub key: TraceKey,
    pub cluster: Arc<Cluster>,
    pub profiles: Arc<Vec<Framework>>,
    pub now: Timestamp,
    pub runner: Arc<dyn CycleRunner>,
}

impl TraceJob {
    fn compute(self) -> (TraceKey, Arc<Trace>) {
        let cycle = |fw: &Framework, c: &Cluster, p: &Pod| self.runner.run(fw, c, p, self.now);
        let trace = explain_with(
            &self.cluster,
            &self.profiles,
            &self.key.pod,
            Some(self.key.profile),
            &cycle,
        )
        // The app asks only for pods it found with a profile; should the pod be gone
        // the panes say what `explain` would.
        .unwrap_or_else(|e| explain_error(&self.cluster, &self.key, &e));
        (self.key, Arc::new(trace))
    }

    pub fn run(self) -> Action {
        let (key, trace) = self.compute();
        Action::TraceReady(key, trace)
    }

    /// Run the cycle and derive its view, both off the UI thread.
    pub fn run_with_view(self) -> (TraceKey, Arc<Trace>, Arc<TraceView>) {
        let cluster = self.cluster.clone();
        let profiles = self.profiles.clone();
        let (key, trace) = self.compute();
        // The rejections' exact causes, from the cluster and the profile the cycle ran
        // with.
        let profile = profiles.iter().find(|f| f.profile_name == trace.profile);
        let view = match cluster.pod(&trace.pod) {
            Some(pod) => TraceView::with_causes(&trace, &cluster, pod, profile),
            None => TraceView::new(&trace),
        };
        (key, trace, Arc::new(view))
    }
}

fn explain_error(cluster: &Cluster, key: &TraceKey, e: &crate::explain::ExplainError) -> Trace {
    Trace::empty(
        key.pod.clone(),
        cluster.pod(&key.pod).map_or(0, |p| p.priority),
        crate::engine::trace::Outcome::Error {
            message: e.to_string(),
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
