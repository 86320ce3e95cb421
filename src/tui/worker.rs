//! The TUI's only door to the scheduling engine: a [`TraceJob`] asks
//! [`crate::explain::explain_with`] for a pod's answer (the CLI's `explain` path: the
//! same profile choice, a bound pod replayed as pending), with a [`CycleRunner`] as the
//! cycle. Views never call it; the app hands the job to the runner loop, which runs it
//! off the UI thread with its view ([`TraceJob::run_with_view`], causes included) and
//! sends both back as [`Done::Trace`]. Tests take the same path ([`super::app::App::
//! take_job_sync`]) with a runner returning hand-made traces.

use std::collections::VecDeque;
use std::sync::Arc;

use k8s_openapi::jiff::Timestamp;

use crate::engine::Framework;
use crate::engine::cycle::{CycleOptions, run_cycle};
use crate::engine::trace::Trace;
use crate::explain::{explain_with, pod_verdict};
use crate::model::{Cluster, Pod};
use crate::report::PodVerdict;

use crate::report::TraceView;

pub trait CycleRunner: Send + Sync {
    fn run(&self, fw: &Framework, cluster: &Cluster, pod: &Pod, now: Timestamp) -> Trace;

    /// The cycle behind a pods-list verdict: only its outcome and first rejections
    /// are read, so a runner may skip what the detail panes alone need.
    fn run_for_verdict(
        &self,
        fw: &Framework,
        cluster: &Cluster,
        pod: &Pod,
        now: Timestamp,
    ) -> Trace {
        self.run(fw, cluster, pod, now)
    }
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
/// shows each plugin's answer, not only the first rejection. A verdict needs only
/// the first rejections, as kube-scheduler stops at them: it skips the second pass.
pub fn engine_runner() -> Arc<dyn CycleRunner> {
    Arc::new(EngineRunner)
}

struct EngineRunner;

impl EngineRunner {
    fn cycle(fw: &Framework, cluster: &Cluster, pod: &Pod, now: Timestamp, all: bool) -> Trace {
        run_cycle(
            fw,
            cluster,
            pod,
            &CycleOptions {
                all_filters: all,
                now,
                ..Default::default()
            },
        )
    }
}

impl CycleRunner for EngineRunner {
    fn run(&self, fw: &Framework, cluster: &Cluster, pod: &Pod, now: Timestamp) -> Trace {
        Self::cycle(fw, cluster, pod, now, true)
    }

    fn run_for_verdict(
        &self,
        fw: &Framework,
        cluster: &Cluster,
        pod: &Pod,
        now: Timestamp,
    ) -> Trace {
        Self::cycle(fw, cluster, pod, now, false)
    }
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

    /// Run the cycle and derive its view, both off the UI thread.
    pub fn run_with_view(self) -> (TraceKey, Arc<Trace>, Arc<TraceView>) {
        let cluster = self.cluster.clone();
        let profiles = self.profiles.clone();
        let (key, trace) = self.compute();
        // The rejections' exact causes, from the cluster and the profile the cycle ran
        // with.
        let view = TraceView::of_replay(&trace, &cluster, &profiles);
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

/// What a pods-list verdict depends on: the pod, the cluster version and the profile
/// override (each pod otherwise replays with its own profile, as `explain` does).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VerdictKey {
    pub pod: String,
    pub generation: u64,
    pub profile_override: Option<usize>,
}

/// Every pending pod's verdict still to compute for one cluster version, newest pod
/// first; the worker takes one pod at a time, so a trace the user asks for never
/// waits for more than one cycle.
pub struct VerdictBatch {
    pub generation: u64,
    pub profile_override: Option<usize>,
    pub pods: VecDeque<String>,
    pub cluster: Arc<Cluster>,
    pub profiles: Arc<Vec<Framework>>,
    pub now: Timestamp,
    pub runner: Arc<dyn CycleRunner>,
}

impl VerdictBatch {
    /// The next pod's verdict, through `explain` as the detail panes' traces are.
    pub fn next_verdict(&mut self) -> Option<(VerdictKey, PodVerdict)> {
        let pod = self.pods.pop_front()?;
        let cycle =
            |fw: &Framework, c: &Cluster, p: &Pod| self.runner.run_for_verdict(fw, c, p, self.now);
        let verdict = pod_verdict(
            &self.cluster,
            &self.profiles,
            &pod,
            self.profile_override,
            &cycle,
        );
        let key = VerdictKey {
            pod,
            generation: self.generation,
            profile_override: self.profile_override,
        };
        Some((key, verdict))
    }
}

/// What the worker is asked to do.
pub enum Work {
    Trace(TraceJob),
    Verdicts(VerdictBatch),
}

/// What the worker did, sent back to the app as an owned message.
pub enum Done {
    Trace(TraceKey, Arc<Trace>, Arc<TraceView>),
    Verdict(VerdictKey, PodVerdict),
}

/// The worker's to-do list: the latest trace request first (the user moved on from
/// older ones), then the latest verdict batch, one pod per step. The worker thread
/// pushes every message already queued before each step; tests step it inline.
#[derive(Default)]
pub struct WorkQueue {
    trace: Option<TraceJob>,
    verdicts: Option<VerdictBatch>,
}

impl WorkQueue {
    pub fn push(&mut self, work: Work) {
        match work {
            Work::Trace(job) => self.trace = Some(job),
            // A newer batch (a new cluster version or profile) replaces the old one.
            Work::Verdicts(batch) => self.verdicts = Some(batch),
        }
    }

    pub fn is_idle(&self) -> bool {
        self.trace.is_none() && self.verdicts.as_ref().is_none_or(|b| b.pods.is_empty())
    }

    /// One unit of work: the trace asked for, else one verdict.
    pub fn step(&mut self) -> Option<Done> {
        if let Some(job) = self.trace.take() {
            let (key, trace, view) = job.run_with_view();
            return Some(Done::Trace(key, trace, view));
        }
        let batch = self.verdicts.as_mut()?;
        match batch.next_verdict() {
            Some((key, verdict)) => Some(Done::Verdict(key, verdict)),
            None => {
                self.verdicts = None;
                None
            }
        }
    }
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
