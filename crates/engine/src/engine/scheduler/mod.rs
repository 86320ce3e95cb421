//! A deterministic kube-scheduler loop over an owned cluster model and configuration,
//! in simulated time (upstream: pkg/scheduler/scheduler.go, `Scheduler`, `New`, `Run`;
//! used by `schedscope simulate`, the TUI's step-through and the acting scheduler).
//!
//! Each step pops a pod (queue order of the profile's QueueSort), runs the scheduling
//! cycle ([`run_scheduling_cycle`]), then acts like kube-scheduler:
//! * assume: the pod is put on the host in the model (resources, ports, volumes
//!   counted), so the next cycle sees it; Reserve; Permit;
//! * Permit Wait: a waiting pod with one deadline per plugin; its binding cycle
//!   resumes when every plugin allowed, or fails on a rejection or timeout — events
//!   in simulated time, interleaved with later scheduling cycles as upstream runs
//!   binding concurrently;
//! * PreBindPreFlight, WaitOnPermit, PreBind, Bind (first non-Skip binder), PostBind;
//! * any failure after Reserve: Unreserve (reverse order), the pod is forgotten (the
//!   model restored) and requeued;
//! * a PostFilter nomination: the pod's `nominatedNodeName` is set, the victims are
//!   deleted from the model (victims waiting at Permit are rejected with `preempted`),
//!   and lower-priority pods nominated to that node lose their nomination.
//!
//! Cycles and bindings take no simulated time; time moves only to the next deadline
//! (a Permit timeout or an error backoff) when nothing can be scheduled. The run
//! ends when the queue is settled (only unschedulable or gated pods, no waiting
//! pods, no backoff), or at a limit (attempts, simulated time): a gang that never
//! fits retries forever upstream too. Same snapshot and configuration, same result.
//!
//! The node search is kube-scheduler's with `parallelism: 1`: from
//! `nextStartNodeIndex`, stopping at `numNodesToFind` feasible nodes (upstream's
//! parallel search finds a racy subset; this is its deterministic order).
//!
//! Live mode (the acting scheduler) mirrors the informer events kube-scheduler
//! reacts to: [`Scheduler::add_pod`], [`Scheduler::update_pod`],
//! [`Scheduler::remove_pending_pod`], [`Scheduler::remove_bound_pod`],
//! [`Scheduler::upsert_node`], [`Scheduler::delete_node`],
//! [`Scheduler::sync_objects`], and [`Scheduler::binding_refused`] when the API
//! server refuses a Bind made here. A simulation never calls them.
//!
//! Queue simplifications are listed in [`super::queue`]. Not modelled: PV/PVC binding
//! by VolumeBinding's PreBind (claims stay as in the snapshot), extenders,
//! controllers recreating evicted pods.
//!
//! [`run_scheduling_cycle`]: super::cycle::run_scheduling_cycle

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::resource::v1::ResourceClaimStatus;
use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::framework::{Ctx, CycleState, Framework, Plugin, QueuedPodInfo};
use super::handle::Handle;
use super::queue::{Failure, Gate, QueueName, QueuedPod, SchedulingQueue};
use super::status::{Code, Status};
use super::waiting::WaitingPodView;
use crate::engine::SchedulerConfig;
use crate::engine::trace::Trace;
use crate::model::{Cluster, Pod, PodKey};

mod binding_cycle;
mod eventhandlers;
mod results;
mod schedule_one;
#[cfg(test)]
mod tests;

pub use results::*;

/// A binding cycle blocked at WaitOnPermit.
struct Binding {
    qp: QueuedPod,
    original: Arc<Pod>,
    assumed: Arc<Pod>,
    host: String,
    profile: usize,
    state: CycleState,
    attempt: usize,
    skip_pre_bind: BTreeSet<String>,
}

#[derive(Clone, Debug, Default)]
struct Record {
    attempts: u32,
    bound: Option<String>,
    evicted_by: Option<String>,
    skipped: Option<String>,
    last_message: Option<String>,
    /// Queue bookkeeping kept from the binding that bound the pod, so that a Bind
    /// the API server refuses later requeues it as upstream's binding cycle would.
    initial_attempt: Option<Timestamp>,
    unschedulable_count: u32,
    bound_attempt: Option<usize>,
}

pub struct Scheduler {
    cluster: Cluster,
    config: SchedulerConfig,
    queue: SchedulingQueue,
    handle: Handle,
    /// Cycle state the queue sort reads the handle from.
    sort_state: CycleState,
    start: Timestamp,
    now: Timestamp,
    opts: SimOptions,
    max_attempts: usize,
    bindings: BTreeMap<String, Binding>,
    events: Vec<SimEvent>,
    /// Events handed out by [`Scheduler::take_events`] (their `seq` goes on).
    events_taken: usize,
    attempts: Vec<Attempt>,
    records: BTreeMap<PodKey, Record>,
    stop: Option<StopReason>,
    /// Pods queued at the start so far.
    initial_adds: u64,
    /// Where the next cycle's node search starts (`nextStartNodeIndex`).
    next_start_node_index: usize,
    /// Nominations this scheduler decided (set by preemption, or cleared) that the
    /// pod objects it is given may not carry yet, by uid: upstream's nominator keeps
    /// them in memory over informer updates.
    nominations: BTreeMap<String, Option<String>>,
    /// Claims a reserved pod holds devices for (DynamicResources' in-flight
    /// allocations), by pod uid: their statuses before, restored if it is forgotten.
    claims_in_flight: BTreeMap<String, Vec<(String, Option<ResourceClaimStatus>)>>,
    /// Where each pod pending at the start stands in the queue's order
    /// ([`queue_order`]): the result lists pods in that order.
    initial_order: BTreeMap<PodKey, usize>,
}

fn add(t: Timestamp, d: Duration) -> Timestamp {
    SignedDuration::try_from(d)
        .ok()
        .and_then(|sd| t.checked_add(sd).ok())
        .unwrap_or(Timestamp::MAX)
}

/// Milliseconds from `from` to `to` (0 when earlier).
fn ms_between(from: Timestamp, to: Timestamp) -> u64 {
    let d = to.duration_since(from);
    u64::try_from(d.as_millis()).unwrap_or(0)
}

/// PrioritySort's order, for profiles without a QueueSort plugin.
fn priority_less(a: &QueuedPodInfo, b: &QueuedPodInfo) -> bool {
    a.pod.priority > b.pod.priority
        || (a.pod.priority == b.pod.priority && a.timestamp < b.timestamp)
}

/// The queue's order: the first profile's QueueSort plugin (validation makes it the
/// same for all profiles), asked with the scheduler's context.
fn make_less<'a>(
    config: &'a SchedulerConfig,
    cluster: &'a Cluster,
    state: &'a CycleState,
    now: Timestamp,
) -> impl Fn(&QueuedPodInfo, &QueuedPodInfo) -> bool + 'a {
    less_of(&config.profiles, cluster, state, now)
}

fn less_of<'a>(
    profiles: &'a [Framework],
    cluster: &'a Cluster,
    state: &'a CycleState,
    now: Timestamp,
) -> impl Fn(&QueuedPodInfo, &QueuedPodInfo) -> bool + 'a {
    let sort: Option<&'a Arc<dyn Plugin>> = profiles.first().and_then(|p| p.queue_sort.first());
    move |a: &QueuedPodInfo, b: &QueuedPodInfo| match sort.and_then(|p| p.as_queue_sort()) {
        Some(qs) => qs.less_in(&Ctx { cluster, now }, state, a, b),
        None => priority_less(a, b),
    }
}

/// The order in which a scheduler started on `cluster` with these profiles pops
/// `pods` (given in key order, as the API server lists them): each is queued as
/// [`Scheduler::new`] queues it, a moment after the previous one from
/// [`default_start`], and sorted by the first profile's QueueSort plugin with the
/// same comparison the running queue uses. `pods`, `simulate` and the inspector's
/// pod list all take their order from here.
pub fn queue_order(
    profiles: &[Framework],
    cluster: &Cluster,
    pods: Vec<Arc<Pod>>,
) -> Vec<Arc<Pod>> {
    let start = default_start(cluster);
    let handle = Handle::new();
    let mut state = CycleState::default();
    handle.attach(&mut state);
    let less = less_of(profiles, cluster, &state, start);
    let mut queued: Vec<QueuedPodInfo> = pods
        .into_iter()
        .enumerate()
        .map(|(i, pod)| QueuedPodInfo {
            pod,
            timestamp: add(start, Duration::from_nanos(i as u64)),
            initial_attempt_timestamp: None,
            attempts: 0,
        })
        .collect();
    // Stable, so pods the plugin cannot tell apart keep their list order.
    queued.sort_by(|a, b| {
        if less(a, b) {
            std::cmp::Ordering::Less
        } else if less(b, a) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    });
    queued.into_iter().map(|q| q.pod).collect()
}

/// Plugins the pod's last attempt was rejected by, and those that returned Pending
/// (`UnschedulablePlugins`, `PendingPlugins`).
fn rejectors(trace: &Trace) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut unsched = BTreeSet::new();
    let mut pending = BTreeSet::new();
    let mut put = |plugin: &Option<String>, code: Code| {
        if let Some(p) = plugin {
            if code == Code::Pending {
                pending.insert(p.clone());
            } else if matches!(
                code,
                Code::Unschedulable | Code::UnschedulableAndUnresolvable
            ) {
                unsched.insert(p.clone());
            }
        }
    };
    if let Some(code) = trace.pre_filter.code {
        put(&trace.pre_filter.plugin, code);
    }
    for v in &trace.filter {
        if !v.feasible {
            put(&v.plugin, v.code);
        }
    }
    if trace.pre_filter.node_subset.is_some() && trace.feasible.is_empty() {
        for (p, _) in &trace.pre_filter.subsets {
            unsched.insert(p.clone());
        }
    }
    (unsched, pending)
}

impl Scheduler {
    /// Queue every pending pod of `cluster` (in key order) for the profile its
    /// `schedulerName` names.
    pub fn new(cluster: Cluster, config: SchedulerConfig, opts: SimOptions) -> Self {
        let start = opts.start.unwrap_or_else(|| default_start(&cluster));
        let queue = SchedulingQueue::new(
            Duration::from_secs(u64::try_from(config.pod_initial_backoff_seconds).unwrap_or(1)),
            Duration::from_secs(u64::try_from(config.pod_max_backoff_seconds).unwrap_or(10)),
        );
        let handle = Handle::new();
        let mut sort_state = CycleState::default();
        handle.attach(&mut sort_state);
        let pending: Vec<Arc<Pod>> = cluster.pending_pods().cloned().collect();
        let initial_order = queue_order(&config.profiles, &cluster, pending.clone())
            .iter()
            .enumerate()
            .map(|(i, p)| (p.key(), i))
            .collect();
        let max_attempts = opts.max_attempts.unwrap_or(20 * pending.len() + 100);
        let mut sim = Scheduler {
            cluster,
            config,
            queue,
            handle,
            sort_state,
            start,
            now: start,
            opts,
            max_attempts,
            bindings: BTreeMap::new(),
            events: Vec::new(),
            events_taken: 0,
            attempts: Vec::new(),
            records: BTreeMap::new(),
            stop: None,
            initial_adds: 0,
            next_start_node_index: 0,
            nominations: BTreeMap::new(),
            claims_in_flight: BTreeMap::new(),
            initial_order,
        };
        for pod in pending {
            sim.enqueue_initial(pod);
        }
        sim
    }

    fn profile_of(&self, pod: &Pod) -> Option<usize> {
        self.config
            .profiles
            .iter()
            .position(|p| p.profile_name == pod.scheduler_name)
    }

    fn event(&mut self, pod: &str, kind: SimEventKind) {
        let seq = self.events_taken + self.events.len();
        self.events.push(SimEvent {
            seq,
            at_ms: ms_between(self.start, self.now),
            pod: pod.to_string(),
            kind,
        });
    }

    pub fn now(&self) -> Timestamp {
        self.now
    }
    pub fn start(&self) -> Timestamp {
        self.start
    }
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }
    pub fn events(&self) -> &[SimEvent] {
        &self.events
    }
    /// Hand the events so far out and forget them (a long-running consumer, the
    /// acting scheduler, keeps the log from growing); `seq` numbers go on.
    pub fn take_events(&mut self) -> Vec<SimEvent> {
        self.events_taken += self.events.len();
        std::mem::take(&mut self.events)
    }
    pub fn attempts(&self) -> &[Attempt] {
        &self.attempts
    }
    /// Pods waiting at Permit, by key, with their deadlines.
    pub fn waiting(&self) -> Vec<WaitingPodView> {
        self.handle.waiting().view()
    }
    /// Where a pod is in the queue, if queued.
    pub fn queue_position(&self, key: &str) -> Option<QueueName> {
        let uid = &self.cluster.pod(key)?.uid;
        self.queue.position(uid)
    }

    /// Nothing to schedule now and nothing that time could change.
    pub fn is_settled(&self) -> bool {
        self.queue.is_idle()
            && self.handle.waiting().is_empty()
            && self.queue.next_error_backoff().is_none()
    }

    /// The next time something is due (a Permit deadline, an error backoff).
    pub fn next_deadline(&self) -> Option<Timestamp> {
        let w = self.handle.waiting().next_deadline();
        let b = self.queue.next_error_backoff();
        match (w, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Operator's Allow: at `plugin`, or at every pending plugin when `None`. Returns
    /// whether the pod is waiting; its binding resumes at once when allowed.
    pub fn allow(&mut self, pod: &str, plugin: Option<&str>) -> bool {
        let Some(uid) = self.cluster.pod(pod).map(|p| p.uid.clone()) else {
            return false;
        };
        let found = {
            let mut w = self.handle.waiting();
            let found = w.get(&uid).is_some_and(|wp| wp.signal().is_none());
            match plugin {
                Some(p) => {
                    w.allow(&uid, p);
                }
                None => {
                    w.allow_all(&uid);
                }
            }
            found
        };
        self.process_signals();
        found
    }

    /// Operator's Reject (upstream `RejectWaitingPod` uses plugin "" and `removed`).
    pub fn reject(&mut self, pod: &str, plugin: &str, message: &str) -> bool {
        let Some(uid) = self.cluster.pod(pod).map(|p| p.uid.clone()) else {
            return false;
        };
        let found = self
            .handle
            .waiting()
            .reject(&uid, plugin, message)
            .is_some();
        self.process_signals();
        found
    }

    /// Move the clock to `t` (never backwards) and fire what is due then: Permit
    /// timeouts (their binding cycles fail) and completed error backoffs.
    pub fn advance_to(&mut self, t: Timestamp) {
        if t > self.now {
            self.now = t;
        }
        self.handle.waiting().expire(self.now);
        self.process_signals();
    }

    pub fn advance(&mut self, d: Duration) {
        self.advance_to(add(self.now, d));
    }

    /// The result so far (the run may go on).
    pub fn result(&self) -> SimulationResult {
        let mut pods = Vec::new();
        let waiting = self.handle.waiting();
        for (key, rec) in &self.records {
            let placement = if let Some(r) = &rec.skipped {
                Placement::Skipped { reason: r.clone() }
            } else if let Some(by) = &rec.evicted_by
                && self.cluster.pod(key).is_none()
            {
                Placement::Evicted { by: by.clone() }
            } else if let Some(p) = self.cluster.pod(key) {
                if let Some(w) = waiting.get(&p.uid) {
                    Placement::Waiting {
                        node: w.node.clone(),
                    }
                } else if let Some(node) = rec.bound.clone().filter(|_| p.is_bound()) {
                    Placement::Bound { node }
                } else {
                    match self.queue.position(&p.uid) {
                        Some(QueueName::Gated) => {
                            let gate = self
                                .queue
                                .parked()
                                .find(|q| q.uid() == p.uid)
                                .and_then(|q| q.gate.clone())
                                .unwrap_or(Gate {
                                    plugin: String::new(),
                                    message: String::new(),
                                });
                            Placement::Gated {
                                plugin: gate.plugin,
                                message: gate.message,
                            }
                        }
                        Some(QueueName::Unschedulable) => Placement::Unschedulable {
                            message: rec.last_message.clone().unwrap_or_default(),
                            nominated_node: p.nominated_node_name.clone(),
                            queue: QueueName::Unschedulable,
                        },
                        Some(q) if rec.last_message.is_some() => Placement::Unschedulable {
                            message: rec.last_message.clone().unwrap_or_default(),
                            nominated_node: p.nominated_node_name.clone(),
                            queue: q,
                        },
                        Some(q) => Placement::Pending { queue: q },
                        None => Placement::Pending {
                            queue: QueueName::Active,
                        },
                    }
                }
            } else {
                Placement::Skipped {
                    reason: "deleted".into(),
                }
            };
            pods.push(PodResult {
                pod: key.clone(),
                attempts: rec.attempts,
                placement,
            });
        }
        // Queue order first (as `pods` lists them), then pods that came later by key.
        let rank = |p: &PodResult| {
            self.initial_order
                .get(&p.pod)
                .copied()
                .unwrap_or(usize::MAX)
        };
        pods.sort_by(|a, b| rank(a).cmp(&rank(b)).then_with(|| a.pod.cmp(&b.pod)));
        SimulationResult {
            start: self.start,
            end_ms: ms_between(self.start, self.now),
            stop: self.stop.clone().unwrap_or(StopReason::Settled),
            events: self.events.clone(),
            attempts: self.attempts.clone(),
            pods,
        }
    }
}

/// The queue failure of a rejection status (its plugin).
fn rejection(st: &Status) -> Failure {
    let mut unschedulable = BTreeSet::new();
    let mut pending = BTreeSet::new();
    if let Some(p) = &st.plugin {
        if st.code == Code::Pending {
            pending.insert(p.clone());
        } else {
            unschedulable.insert(p.clone());
        }
    }
    Failure::Rejected {
        unschedulable,
        pending,
    }
}

/// The latest creation or start time in the snapshot; the Unix epoch without any.
pub fn default_start(cluster: &Cluster) -> Timestamp {
    let pods = cluster
        .pods()
        .flat_map(|p| [p.creation_timestamp, p.start_time]);
    let groups = cluster.pod_groups.values().map(|g| g.creation_timestamp);
    pods.chain(groups)
        .flatten()
        .max()
        .unwrap_or(Timestamp::UNIX_EPOCH)
}

/// Simulate `cluster` under `config` to the end.
///
/// A cluster that names its kube-scheduler release is simulated by that release.
pub fn simulate(cluster: Cluster, config: SchedulerConfig, opts: SimOptions) -> SimulationResult {
    let (cluster, config) = match cluster.kube_version.as_ref().map(|r| r.version) {
        Some(v) => {
            let fts = v.features();
            (
                cluster.accounted_for(&fts).unwrap_or(cluster),
                config.at_version(v),
            )
        }
        None => (cluster, config),
    };
    let mut sim = Scheduler::new(cluster, config, opts);
    sim.run();
    sim.result()
}
