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
use crate::report::whatif::{WhatIfComparison, compare};
use crate::whatif::{Edit, apply};

use super::whatif::{PodEdits, WhatIf};

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
    /// What-if edits are active: `cluster` is the edited one.
    pub edits: Option<Arc<JobEdits>>,
}

/// A replay under what-if edits: the real model (for the comparison's "before") and
/// the edits of the pod explained.
pub struct JobEdits {
    pub base: Arc<Cluster>,
    pub pod: PodEdits,
}

/// A computed trace with its view, and under what-if edits the comparison with the
/// real model.
pub struct Replayed {
    pub key: TraceKey,
    pub trace: Arc<Trace>,
    pub view: Arc<TraceView>,
    pub whatif: Option<Arc<WhatIfComparison>>,
}

/// The pod's edits applied to `cluster` (the pod replaced in it), with their notes;
/// `cluster` itself without any.
pub fn with_pod_edits(
    cluster: &Arc<Cluster>,
    pod: &str,
    edits: &[Edit],
) -> Result<(Arc<Cluster>, Vec<String>), String> {
    if edits.is_empty() {
        return Ok((cluster.clone(), Vec::new()));
    }
    let p = cluster.pod(pod).ok_or_else(|| format!("no pod {pod}"))?;
    let e = apply(cluster, Some(p), edits).map_err(|e| e.to_string())?;
    let notes = e.notes.into_iter().map(|(_, n)| n).collect();
    Ok((Arc::new(e.cluster), notes))
}

impl TraceJob {
    fn explain(&self, cluster: &Cluster) -> Trace {
        let cycle = |fw: &Framework, c: &Cluster, p: &Pod| self.runner.run(fw, c, p, self.now);
        explain_with(
            cluster,
            &self.profiles,
            &self.key.pod,
            Some(self.key.profile),
            &cycle,
        )
        // The app asks only for pods it found with a profile; should the pod be gone
        // the panes say what `explain` would.
        .unwrap_or_else(|e| explain_error(cluster, &self.key, &e.to_string()))
    }

    /// Run the cycle (on the edited model, and on the real one to compare) and
    /// derive its view, all off the UI thread.
    pub fn run(self) -> Replayed {
        let Some(edits) = self.edits.clone() else {
            let trace = Arc::new(self.explain(&self.cluster));
            // The rejections' exact causes, from the cluster and the profile the cycle
            // ran with.
            let view = TraceView::of_replay(&trace, &self.cluster, &self.profiles);
            return Replayed {
                key: self.key,
                trace,
                view: Arc::new(view),
                whatif: None,
            };
        };
        let (trace, cluster, pod_notes) =
            match with_pod_edits(&self.cluster, &self.key.pod, &edits.pod.edits) {
                Ok((c, notes)) => (self.explain(&c), c, notes),
                Err(e) => (
                    explain_error(&self.cluster, &self.key, &e),
                    self.cluster.clone(),
                    Vec::new(),
                ),
            };
        let before = self.explain(&edits.base);
        let notes: Vec<String> = edits.pod.notes.iter().cloned().chain(pod_notes).collect();
        let cmp = compare(&edits.pod.labels, &notes, &before, &trace);
        let view = TraceView::of_replay(&trace, &cluster, &self.profiles);
        Replayed {
            key: self.key,
            trace: Arc::new(trace),
            view: Arc::new(view),
            whatif: Some(Arc::new(cmp)),
        }
    }

    /// [`TraceJob::run`] as a tuple (tests).
    pub fn run_with_view(self) -> (TraceKey, Arc<Trace>, Arc<TraceView>) {
        let r = self.run();
        (r.key, r.trace, r.view)
    }
}

fn explain_error(cluster: &Cluster, key: &TraceKey, message: &str) -> Trace {
    Trace::empty(
        key.pod.clone(),
        cluster.pod(&key.pod).map_or(0, |p| p.priority),
        crate::engine::trace::Outcome::Error {
            message: message.to_string(),
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
    /// The what-if edits, whose pod edits each pod's replay applies (`cluster` has
    /// the cluster edits already).
    pub whatif: Option<Arc<WhatIf>>,
}

impl VerdictBatch {
    /// The next pod's verdict, through `explain` as the detail panes' traces are.
    pub fn next_verdict(&mut self) -> Option<(VerdictKey, PodVerdict)> {
        let pod = self.pods.pop_front()?;
        let cycle =
            |fw: &Framework, c: &Cluster, p: &Pod| self.runner.run_for_verdict(fw, c, p, self.now);
        let edits = self
            .whatif
            .as_ref()
            .map(|w| w.for_pod(&pod).edits)
            .unwrap_or_default();
        // As the trace says: an edit that does not fit the pod is its error.
        let verdict = match with_pod_edits(&self.cluster, &pod, &edits) {
            Ok((cluster, _)) => pod_verdict(
                &cluster,
                &self.profiles,
                &pod,
                self.profile_override,
                &cycle,
            ),
            Err(message) => PodVerdict::Error { message },
        };
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
    Remedies(super::remedies::RemediesJob),
}

/// What the worker did, sent back to the app as an owned message.
pub enum Done {
    Trace(Box<Replayed>),
    Verdict(VerdictKey, PodVerdict),
    Remedies(Box<super::remedies::Found>),
}

/// The worker's to-do list: the latest trace request first (the user moved on from
/// older ones), then the latest verdict batch, one pod per step. The worker thread
/// pushes every message already queued before each step; tests step it inline.
#[derive(Default)]
pub struct WorkQueue {
    trace: Option<TraceJob>,
    remedies: Option<super::remedies::RemediesJob>,
    verdicts: Option<VerdictBatch>,
}

impl WorkQueue {
    pub fn push(&mut self, work: Work) {
        match work {
            Work::Trace(job) => self.trace = Some(job),
            // A newer batch (a new cluster version or profile) replaces the old one.
            Work::Verdicts(batch) => self.verdicts = Some(batch),
            Work::Remedies(job) => self.remedies = Some(job),
        }
    }

    pub fn is_idle(&self) -> bool {
        self.trace.is_none()
            && self.remedies.is_none()
            && self.verdicts.as_ref().is_none_or(|b| b.pods.is_empty())
    }

    /// One unit of work: the trace asked for, else the remedies asked for, else one
    /// verdict.
    pub fn step(&mut self) -> Option<Done> {
        if let Some(job) = self.trace.take() {
            return Some(Done::Trace(Box::new(job.run())));
        }
        if let Some(job) = self.remedies.take() {
            return Some(Done::Remedies(Box::new(job.run())));
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
    entries: VecDeque<Cached>,
    capacity: usize,
}

/// A trace, its view and its what-if comparison.
pub type Cached = (
    TraceKey,
    Arc<Trace>,
    Arc<TraceView>,
    Option<Arc<WhatIfComparison>>,
);

impl TraceCache {
    pub fn new(capacity: usize) -> Self {
        TraceCache {
            entries: VecDeque::new(),
            capacity: capacity.max(1),
        }
    }

    pub fn get(&mut self, key: &TraceKey) -> Option<Cached> {
        let i = self.entries.iter().position(|e| &e.0 == key)?;
        let e = self.entries.remove(i)?;
        self.entries.push_front(e.clone());
        Some(e)
    }

    pub fn insert(&mut self, entry: Cached) {
        self.entries.retain(|e| e.0 != entry.0);
        self.entries.push_front(entry);
        self.entries.truncate(self.capacity);
    }

    /// Drop traces of older cluster versions.
    pub fn retain_generation(&mut self, generation: u64) {
        self.entries.retain(|e| e.0.generation == generation);
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
