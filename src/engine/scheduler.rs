//! A deterministic kube-scheduler loop over an owned cluster model and configuration,
//! in simulated time (`schedscope simulate`, and the TUI's step-through).
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
//! Queue simplifications are listed in [`super::queue`]. Not modelled: PV/PVC binding
//! by VolumeBinding's PreBind (claims stay as in the snapshot), extenders,
//! controllers recreating evicted pods.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use super::binding::{self, PermitOutcome};
use super::cycle::{CycleOptions, run_scheduling_cycle};
use super::framework::{Ctx, CycleState, Framework, Plugin, QueuedPodInfo};
use super::handle::Handle;
use super::queue::{self, ClusterEvent, Failure, Gate, QueueName, QueuedPod, SchedulingQueue};
use super::status::{Code, Status};
use super::waiting::{Signal, SignalEvent, WaitingPodView};
use crate::config::SchedulerConfig;
use crate::model::{Cluster, Pod, PodKey};
use crate::trace::{Outcome, PhaseTrace, Trace};

/// How a simulation runs.
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// Simulated start time; default: the latest creation or start time in the
    /// snapshot (pods and PodGroups), else the Unix epoch.
    pub start: Option<Timestamp>,
    /// Keep every attempt's full [`Trace`] (memory grows with nodes × attempts).
    pub keep_traces: bool,
    /// Stop after this many scheduling attempts; default 20 per pending pod + 100.
    pub max_attempts: Option<usize>,
    /// Stop when simulated time would pass this far beyond the start.
    pub max_duration: Duration,
    /// Preemption victims stay on their node as terminating pods (deletionTimestamp
    /// and DisruptionTarget set) until [`Simulator::remove_bound_pod`] says their
    /// deletion landed, as on a real cluster (the acting scheduler). Off: they
    /// vanish at once.
    pub victims_terminate: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            start: None,
            keep_traces: true,
            max_attempts: None,
            max_duration: Duration::from_secs(3600),
            victims_terminate: false,
        }
    }
}

/// Why the run ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StopReason {
    /// Only unschedulable or gated pods left, no waiting pods, nothing backing off.
    Settled,
    /// The attempt limit was reached (e.g. a gang that keeps failing).
    AttemptLimit { attempts: usize },
    /// The next event lies beyond the simulated-time limit.
    TimeLimit { limit: String },
}

/// One timed wait of a waiting pod.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitInfo {
    pub plugin: String,
    /// Go duration, e.g. `1m0s`.
    pub timeout: String,
    /// Offset of the deadline from the simulation start.
    pub deadline_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SimEventKind {
    /// Added to the queue at the start.
    Queued {
        queue: QueueName,
    },
    /// Not scheduled by this simulation.
    Skipped {
        reason: String,
    },
    /// Popped for its `pod_attempt`-th attempt; `attempt` indexes
    /// [`SimulationResult::attempts`] (the scheduling cycle's number, from 0).
    Attempt {
        attempt: usize,
        pod_attempt: u32,
        from: QueueName,
    },
    /// Assumed on the node and reserved.
    Reserved {
        node: String,
    },
    /// Held at Permit.
    Waiting {
        node: String,
        waits: Vec<WaitInfo>,
    },
    /// Every waiting plugin allowed.
    Allowed {
        node: String,
    },
    /// A waiting pod was rejected (a plugin, a timeout, preemption, an operator).
    Rejected {
        node: String,
        plugin: String,
        message: String,
    },
    /// Unreserve ran and the assumed pod was forgotten.
    Unreserved {
        node: String,
    },
    Bound {
        node: String,
    },
    /// The attempt failed; the pod went to `queue`.
    Failed {
        message: String,
        plugins: Vec<String>,
        queue: QueueName,
    },
    /// Preemption nominated the node; the victims are evicted.
    Nominated {
        node: String,
        victims: Vec<String>,
    },
    /// Deleted as a preemption victim.
    Evicted {
        by: String,
        node: String,
    },
    /// A nomination was cleared (a higher-priority pod preempted on that node).
    NominationCleared {
        node: String,
    },
    /// Moved by a cluster event.
    Moved {
        to: QueueName,
        event: ClusterEvent,
    },
    /// Moved to activeQ by a plugin (PodsToActivate).
    Activated,
    /// The pod became gated at its cycle's PreEnqueue.
    Gated {
        plugin: String,
        message: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimEvent {
    pub seq: usize,
    /// Milliseconds since the simulation start.
    pub at_ms: u64,
    pub pod: String,
    #[serde(flatten)]
    pub kind: SimEventKind,
}

/// One scheduling attempt (one cycle, plus its binding half when it got there).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    pub pod: String,
    pub at_ms: u64,
    pub profile: String,
    /// The cycle's full trace (its binding phases as they really ran), when kept.
    pub trace: Option<Trace>,
    pub outcome: Outcome,
}

/// Where a pod ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Placement {
    Bound {
        node: String,
    },
    Unschedulable {
        message: String,
        nominated_node: Option<String>,
        queue: QueueName,
    },
    Gated {
        plugin: String,
        message: String,
    },
    /// Still waiting at Permit when the run stopped.
    Waiting {
        node: String,
    },
    /// Still queued (never attempted, or backing off) when the run stopped.
    Pending {
        queue: QueueName,
    },
    /// Evicted by preemption.
    Evicted {
        by: String,
    },
    Skipped {
        reason: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodResult {
    pub pod: String,
    pub attempts: u32,
    pub placement: Placement,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SimulationResult {
    pub start: Timestamp,
    /// Simulated time at the end, since the start.
    pub end_ms: u64,
    pub stop: StopReason,
    pub events: Vec<SimEvent>,
    pub attempts: Vec<Attempt>,
    /// Every pod pending at the start, and every evicted pod, by key.
    pub pods: Vec<PodResult>,
}

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
}

pub struct Simulator {
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
    attempts: Vec<Attempt>,
    records: BTreeMap<PodKey, Record>,
    stop: Option<StopReason>,
    /// Pods queued at the start so far.
    initial_adds: u64,
    /// Where the next cycle's node search starts (`nextStartNodeIndex`).
    next_start_node_index: usize,
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

/// Whether a pod changed beyond its status (upstream's `isPodUpdated` strips the
/// status, resourceVersion and managed fields before comparing).
fn spec_differs(a: &Pod, b: &Pod) -> bool {
    let strip = |p: &Pod| {
        let mut p = p.clone();
        p.phase.clear();
        p.start_time = None;
        p.nominated_node_name = None;
        p.not_scheduled = None;
        p.preemption_in_progress = false;
        p
    };
    strip(a) != strip(b)
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
    let sort: Option<&'a Arc<dyn Plugin>> =
        config.profiles.first().and_then(|p| p.queue_sort.first());
    move |a: &QueuedPodInfo, b: &QueuedPodInfo| match sort.and_then(|p| p.as_queue_sort()) {
        Some(qs) => qs.less_in(&Ctx { cluster, now }, state, a, b),
        None => priority_less(a, b),
    }
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

impl Simulator {
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
        let max_attempts = opts.max_attempts.unwrap_or(20 * pending.len() + 100);
        let mut sim = Simulator {
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
            attempts: Vec::new(),
            records: BTreeMap::new(),
            stop: None,
            initial_adds: 0,
            next_start_node_index: 0,
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
        let seq = self.events.len();
        self.events.push(SimEvent {
            seq,
            at_ms: ms_between(self.start, self.now),
            pod: pod.to_string(),
            kind,
        });
    }

    fn enqueue_initial(&mut self, pod: Arc<Pod>) {
        // (Also used for pods added later: `initial_adds` keeps their order.)
        let key = pod.key();
        self.records.entry(key.clone()).or_default();
        let Some(pi) = self.profile_of(&pod) else {
            let reason = format!(
                "schedulerName {:?} matches no profile of this configuration",
                pod.scheduler_name
            );
            self.records.entry(key.clone()).or_default().skipped = Some(reason.clone());
            self.event(&key, SimEventKind::Skipped { reason });
            return;
        };
        if pod.deletion_timestamp.is_some() {
            let reason = "being deleted".to_string();
            self.records.entry(key.clone()).or_default().skipped = Some(reason.clone());
            self.event(&key, SimEventKind::Skipped { reason });
            return;
        }
        // At the start, as a freshly started scheduler lists them: in key order (the
        // API server's list order), each added a moment after the previous one.
        let added = add(self.now, Duration::from_nanos(self.initial_adds));
        self.initial_adds += 1;
        let gate = queue::run_pre_enqueue(
            &self.config.profiles[pi],
            &Ctx {
                cluster: &self.cluster,
                now: self.now,
            },
            &pod,
        );
        let qp = QueuedPod::new(pod, added);
        let to = {
            let less = make_less(&self.config, &self.cluster, &self.sort_state, self.now);
            self.queue.add(qp, gate, &less)
        };
        self.event(&key, SimEventKind::Queued { queue: to });
    }

    /// A pod created while the simulation runs (an informer Add): a pending pod is
    /// queued now; a bound one joins its node (an assigned-pod add for the queue).
    pub fn add_pod(&mut self, pod: Pod) -> Result<(), String> {
        let key = pod.key();
        if self.cluster.pod(&key).is_some() {
            return Err(format!("pod {key} already exists"));
        }
        let bound = pod.is_bound();
        self.cluster.upsert_pod(pod);
        let Some(pod) = self.cluster.pod(&key).cloned() else {
            return Err(format!("pod {key} is terminal"));
        };
        if bound {
            self.move_all(ClusterEvent::AssignedPodAdd, None);
        } else {
            self.enqueue_initial(pod);
        }
        Ok(())
    }

    /// A bound pod deleted (or finished) outside the simulation (an informer
    /// Delete): it leaves its node and pods rejected for lack of room are moved.
    /// Pods the simulation itself is binding (waiting at Permit) are left alone.
    pub fn remove_bound_pod(&mut self, key: &str) -> bool {
        let Some(pod) = self.cluster.pod(key) else {
            return false;
        };
        if !pod.is_bound() || self.bindings.contains_key(&pod.uid) {
            return false;
        }
        self.cluster.delete_pod(key);
        self.move_all(ClusterEvent::AssignedPodDelete, None);
        true
    }

    /// A node added or changed outside the simulation (informer Node Add/Update):
    /// replaced in the model (its bound pods stay), then the pods whose rejectors
    /// register node events move.
    pub fn upsert_node(&mut self, node: crate::model::Node) {
        let event = if self.cluster.node(&node.name).is_some() {
            ClusterEvent::NodeUpdate
        } else {
            ClusterEvent::NodeAdd
        };
        self.cluster.upsert_node(node);
        self.move_all(event, None);
    }

    /// A node deleted outside the simulation (informer Node Delete).
    pub fn delete_node(&mut self, name: &str) -> bool {
        if !self.cluster.delete_node(name) {
            return false;
        }
        self.move_all(ClusterEvent::NodeDelete, None);
        true
    }

    /// The other objects the plugins read (volumes, storage, namespaces, PDBs,
    /// PodGroups, ...) taken from `from`; pods concerned move when something changed.
    pub fn sync_objects(&mut self, from: &Cluster) -> bool {
        if !self.cluster.copy_objects_from(from) {
            return false;
        }
        self.move_all(ClusterEvent::ObjectChange, None);
        true
    }

    /// A known pod changed outside the simulation (informer Pod Update). Pending →
    /// pending: the model and queued copies are replaced (a nomination the simulator
    /// set is kept when the new object has none, as upstream's nominator does); a
    /// gated pod re-runs PreEnqueue; an unschedulable pod whose spec or labels
    /// changed moves to backoffQ/activeQ. Pending → bound (someone else bound it):
    /// it leaves the queue and joins its node. Bound → bound: replaced; label or
    /// resource changes move the pods that care. A pod waiting at Permit is left to
    /// its binding cycle. Returns whether the update was taken.
    pub fn update_pod(&mut self, mut pod: Pod) -> bool {
        let key = pod.key();
        let Some(old) = self.cluster.pod(&key).cloned() else {
            return false;
        };
        if self.bindings.contains_key(&old.uid) {
            return false;
        }
        if pod.is_terminal() {
            if !self.remove_bound_pod(&key) {
                self.remove_pending_pod(&key);
            }
            return true;
        }
        let uid = old.uid.clone();
        match (old.is_bound(), pod.is_bound()) {
            (false, false) => {
                if pod.nominated_node_name.is_none() {
                    pod.nominated_node_name = old.nominated_node_name.clone();
                }
                let gates_changed = pod.scheduling_gates != old.scheduling_gates;
                let spec_changed = spec_differs(&old, &pod);
                self.cluster.upsert_pod(pod);
                let Some(cur) = self.cluster.pod(&key).cloned() else {
                    return true;
                };
                self.queue.update_pod(cur.clone());
                if gates_changed && self.queue.position(&uid) == Some(QueueName::Gated) {
                    let qp = {
                        let less =
                            make_less(&self.config, &self.cluster, &self.sort_state, self.now);
                        self.queue.delete(&uid, &less)
                    };
                    if let Some(mut qp) = qp {
                        qp.info.pod = cur.clone();
                        qp.gate = None;
                        let gate = self.profile_of(&cur).and_then(|pi| {
                            queue::run_pre_enqueue(
                                &self.config.profiles[pi],
                                &Ctx {
                                    cluster: &self.cluster,
                                    now: self.now,
                                },
                                &cur,
                            )
                        });
                        let to = {
                            let less =
                                make_less(&self.config, &self.cluster, &self.sort_state, self.now);
                            self.queue.add(qp, gate, &less)
                        };
                        if to != QueueName::Gated {
                            self.event(&key, SimEventKind::Queued { queue: to });
                        }
                    }
                } else if spec_changed {
                    let to = {
                        let less =
                            make_less(&self.config, &self.cluster, &self.sort_state, self.now);
                        self.queue.requeue_updated(&uid, self.now, &less)
                    };
                    if let Some(to) = to {
                        self.event(&key, SimEventKind::Queued { queue: to });
                    }
                }
            }
            (false, true) => {
                {
                    let less = make_less(&self.config, &self.cluster, &self.sort_state, self.now);
                    self.queue.delete(&uid, &less);
                }
                let node = pod.node_name.clone().unwrap_or_default();
                self.records.entry(key.clone()).or_default().bound = Some(node);
                self.cluster.upsert_pod(pod);
                self.move_all(ClusterEvent::AssignedPodAdd, None);
            }
            (true, true) => {
                let moved_node = pod.node_name != old.node_name;
                let changed = spec_differs(&old, &pod);
                self.cluster.upsert_pod(pod);
                if moved_node {
                    self.move_all(ClusterEvent::AssignedPodDelete, None);
                    self.move_all(ClusterEvent::AssignedPodAdd, None);
                } else if changed {
                    self.move_all(ClusterEvent::AssignedPodUpdate, None);
                }
            }
            (true, false) => {
                self.cluster.delete_pod(&key);
                self.move_all(ClusterEvent::AssignedPodDelete, None);
                self.enqueue_initial(Arc::new(pod));
            }
        }
        true
    }

    /// A pending pod deleted outside the simulation (informer Delete of an unbound
    /// pod): one waiting at Permit is rejected first (`RejectWaitingPod`, message
    /// "removed"), so its Unreserve runs; then it leaves the queue and the model.
    pub fn remove_pending_pod(&mut self, key: &str) -> bool {
        let Some(pod) = self.cluster.pod(key).cloned() else {
            return false;
        };
        if self.bindings.contains_key(&pod.uid) {
            self.handle.waiting().reject(&pod.uid, "", "removed");
            self.process_signals();
        } else if pod.is_bound() {
            return false;
        }
        {
            let less = make_less(&self.config, &self.cluster, &self.sort_state, self.now);
            self.queue.delete(&pod.uid, &less);
        }
        self.cluster.delete_pod(key);
        true
    }

    /// The API server refused the Bind the simulation made (the acting scheduler's
    /// `pods/binding` POST failed): as `handleBindingCycleError` with an error, the
    /// pod is forgotten from its node and backs off in the error backoff queue, and
    /// the freed room moves the others.
    pub fn binding_refused(&mut self, key: &str, message: &str) -> bool {
        let Some(pod) = self.cluster.pod(key).cloned() else {
            return false;
        };
        if !pod.is_bound() || self.bindings.contains_key(&pod.uid) {
            return false;
        }
        self.forget(&pod);
        let Some(cur) = self.cluster.pod(key).cloned() else {
            return false;
        };
        self.records.entry(key.to_string()).or_default().bound = None;
        let to = {
            let less = make_less(&self.config, &self.cluster, &self.sort_state, self.now);
            self.queue
                .add_error_backoff(QueuedPod::new(cur, self.now), self.now, &less)
        };
        self.records
            .entry(key.to_string())
            .or_default()
            .last_message = Some(message.to_string());
        self.event(
            key,
            SimEventKind::Failed {
                message: message.to_string(),
                plugins: Vec::new(),
                queue: to,
            },
        );
        self.move_all(ClusterEvent::AssignedPodDelete, Some(&pod.uid));
        true
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

    fn attempt_limit_reached(&mut self) -> bool {
        if self.attempts.len() >= self.max_attempts {
            self.stop = Some(StopReason::AttemptLimit {
                attempts: self.attempts.len(),
            });
            return true;
        }
        false
    }

    /// Run scheduling cycles at the current time until nothing can be popped (or the
    /// attempt limit). Returns how many cycles ran.
    pub fn run_until_idle(&mut self) -> usize {
        let mut n = 0;
        loop {
            if self.stop.is_some() || self.attempt_limit_reached() {
                return n;
            }
            self.advance_to(self.now);
            if !self.schedule_one() {
                return n;
            }
            n += 1;
        }
    }

    /// Run to the end: cycles, then time jumps to the next deadline, until settled or
    /// a limit.
    pub fn run(&mut self) -> StopReason {
        loop {
            if let Some(s) = &self.stop {
                return s.clone();
            }
            self.run_until_idle();
            if let Some(s) = &self.stop {
                return s.clone();
            }
            if self.is_settled() {
                self.stop = Some(StopReason::Settled);
                continue;
            }
            let Some(next) = self.next_deadline() else {
                self.stop = Some(StopReason::Settled);
                continue;
            };
            if next > add(self.start, self.opts.max_duration) {
                self.stop = Some(StopReason::TimeLimit {
                    limit: crate::engine::go_duration(self.opts.max_duration),
                });
                continue;
            }
            self.advance_to(next);
        }
    }

    /// One scheduling cycle (`ScheduleOne`); false when nothing could be popped.
    pub fn schedule_one(&mut self) -> bool {
        let popped = {
            let less = make_less(&self.config, &self.cluster, &self.sort_state, self.now);
            self.queue.pop(self.now, &less)
        };
        let Some((mut qp, from)) = popped else {
            return false;
        };
        let key = qp.key();
        // The current object (its nomination may have changed while queued).
        let Some(pod) = self.cluster.pod(&key).cloned() else {
            self.queue.done(qp.uid());
            return true;
        };
        qp.info.pod = pod.clone();
        if pod.is_bound() {
            self.queue.done(qp.uid());
            return true;
        }
        let Some(pi) = self.profile_of(&pod) else {
            self.queue.done(qp.uid());
            return true;
        };
        let rec = self.records.entry(key.clone()).or_default();
        rec.attempts += 1;
        let pod_attempt = rec.attempts;
        let attempt = self.attempts.len();
        self.event(
            &key,
            SimEventKind::Attempt {
                attempt,
                pod_attempt,
                from,
            },
        );

        let mut state = CycleState::default();
        self.handle.attach(&mut state);
        let opts = CycleOptions {
            all_filters: false,
            now: self.now,
        };
        let out = run_scheduling_cycle(
            &self.config.profiles[pi],
            &self.cluster,
            &pod,
            &opts,
            state,
            Some(&mut self.next_start_node_index),
        );
        let trace = out.trace;
        let state = out.state;
        self.attempts.push(Attempt {
            pod: key.clone(),
            at_ms: ms_between(self.start, self.now),
            profile: self.config.profiles[pi].profile_name.clone(),
            trace: None,
            outcome: trace.outcome.clone(),
        });

        match trace.outcome.clone() {
            Outcome::Gated { plugin, message } => {
                self.queue.done(qp.uid());
                let gate = Gate {
                    plugin: plugin.clone(),
                    message: message.clone(),
                };
                {
                    let less = make_less(&self.config, &self.cluster, &self.sort_state, self.now);
                    self.queue.add(qp, Some(gate), &less);
                }
                self.event(&key, SimEventKind::Gated { plugin, message });
                self.finish_attempt(attempt, trace);
            }
            Outcome::Error { message } => {
                self.finish_attempt(attempt, trace);
                self.fail(qp, Failure::Error, message);
            }
            Outcome::Unschedulable { nominated_node } => {
                let (unsched, pending) = rejectors(&trace);
                let message = trace.fit_error.clone().unwrap_or_default();
                let victims = trace
                    .post_filter
                    .as_ref()
                    .map(|p| p.victims.clone())
                    .unwrap_or_default();
                self.finish_attempt(attempt, trace);
                if let Some(node) = nominated_node {
                    self.preempt(&mut qp, &node, &victims);
                }
                self.fail(
                    qp,
                    Failure::Rejected {
                        unschedulable: unsched,
                        pending,
                    },
                    message,
                );
            }
            Outcome::Scheduled { node } => {
                self.assume_reserve_permit(qp, pod, pi, node, trace, state, attempt);
            }
        }
        self.apply_activations();
        self.process_signals();
        true
    }

    fn finish_attempt(&mut self, attempt: usize, trace: Trace) {
        if let Some(a) = self.attempts.get_mut(attempt) {
            a.outcome = trace.outcome.clone();
            if self.opts.keep_traces {
                a.trace = Some(trace);
            }
        }
    }

    fn push_phases(
        &mut self,
        attempt: usize,
        phases: Vec<PhaseTrace>,
        outcome: Outcome,
        fit_error: Option<String>,
    ) {
        if let Some(a) = self.attempts.get_mut(attempt) {
            a.outcome = outcome.clone();
            if let Some(t) = a.trace.as_mut() {
                t.binding.extend(phases);
                t.outcome = outcome;
                if fit_error.is_some() {
                    t.fit_error = fit_error;
                }
            }
        }
    }

    /// `FailureHandler`: requeue and record.
    fn fail(&mut self, qp: QueuedPod, failure: Failure, message: String) {
        let key = qp.key();
        let plugins: Vec<String> = match &failure {
            Failure::Rejected {
                unschedulable,
                pending,
            } => unschedulable.union(pending).cloned().collect(),
            Failure::Error => Vec::new(),
        };
        let to = {
            let less = make_less(&self.config, &self.cluster, &self.sort_state, self.now);
            self.queue.requeue_failed(qp, failure, self.now, &less)
        };
        self.records.entry(key.clone()).or_default().last_message = Some(message.clone());
        self.event(
            &key,
            SimEventKind::Failed {
                message,
                plugins,
                queue: to,
            },
        );
    }

    /// Preemption's effects: victims evicted (or rejected when waiting at Permit),
    /// lower-priority nominations on the node cleared, the preemptor nominated.
    fn preempt(&mut self, qp: &mut QueuedPod, node: &str, victims: &[String]) {
        let key = qp.key();
        let priority = qp.info.pod.priority;
        self.event(
            &key,
            SimEventKind::Nominated {
                node: node.to_string(),
                victims: victims.to_vec(),
            },
        );
        let mut deleted = false;
        for v in victims {
            let Some(vp) = self.cluster.pod(v).cloned() else {
                continue;
            };
            let waiting = self.handle.waiting().get(&vp.uid).is_some();
            if waiting {
                self.handle
                    .waiting()
                    .reject(&vp.uid, "DefaultPreemption", "preempted");
                continue;
            }
            let vnode = vp.node_name.clone().unwrap_or_default();
            if self.opts.victims_terminate {
                let mut t = (*vp).clone();
                t.deletion_timestamp = Some(self.now);
                t.preemption_in_progress = true;
                self.cluster.upsert_pod(t);
            } else {
                self.cluster.delete_pod(v);
                deleted = true;
            }
            let rec = self.records.entry(v.clone()).or_default();
            rec.evicted_by = Some(key.clone());
            rec.bound = None;
            self.event(
                v,
                SimEventKind::Evicted {
                    by: key.clone(),
                    node: vnode,
                },
            );
        }
        let lower: Vec<Arc<Pod>> = self
            .cluster
            .nominated_pods(node)
            .filter(|p| p.uid != qp.info.pod.uid && p.priority < priority)
            .cloned()
            .collect();
        for p in lower {
            let mut np = (*p).clone();
            np.nominated_node_name = None;
            self.cluster.upsert_pod(np);
            if let Some(cur) = self.cluster.pod(&p.key()).cloned() {
                self.queue.update_pod(cur);
            }
            self.event(
                &p.key(),
                SimEventKind::NominationCleared {
                    node: node.to_string(),
                },
            );
        }
        let mut me = (*qp.info.pod).clone();
        me.nominated_node_name = Some(node.to_string());
        self.cluster.upsert_pod(me);
        if let Some(cur) = self.cluster.pod(&key).cloned() {
            qp.info.pod = cur;
        }
        if deleted {
            self.move_all(ClusterEvent::AssignedPodDelete, None);
        }
    }

    fn move_all(&mut self, event: ClusterEvent, except: Option<&str>) {
        let moved = {
            let less = make_less(&self.config, &self.cluster, &self.sort_state, self.now);
            self.queue.move_all(event, self.now, except, &less)
        };
        for (key, to) in moved {
            self.event(&key, SimEventKind::Moved { to, event });
        }
    }

    fn apply_activations(&mut self) {
        let keys = self.handle.take_activations();
        if keys.is_empty() {
            return;
        }
        let uids: Vec<String> = keys
            .iter()
            .filter_map(|k| self.cluster.pod(k).map(|p| p.uid.clone()))
            .collect();
        let moved = {
            let less = make_less(&self.config, &self.cluster, &self.sort_state, self.now);
            self.queue.activate(&uids, &less)
        };
        for key in moved {
            self.event(&key, SimEventKind::Activated);
        }
    }

    /// The pod as it was before assume, without a nomination (`clearNominatedNode`).
    fn forget(&mut self, original: &Arc<Pod>) {
        let mut p = (**original).clone();
        p.nominated_node_name = None;
        p.node_name = None;
        self.cluster.upsert_pod(p);
    }

    fn fw(&self, profile: usize) -> &Framework {
        &self.config.profiles[profile]
    }

    #[allow(clippy::too_many_arguments)]
    fn assume_reserve_permit(
        &mut self,
        mut qp: QueuedPod,
        pod: Arc<Pod>,
        profile: usize,
        host: String,
        mut trace: Trace,
        mut state: CycleState,
        attempt: usize,
    ) {
        let key = pod.key();
        let mut assumed = (*pod).clone();
        assumed.node_name = Some(host.clone());
        assumed.nominated_node_name = None;
        self.cluster.upsert_pod(assumed);
        let assumed = match self.cluster.pod(&key) {
            Some(p) => p.clone(),
            None => return,
        };
        qp.info.pod = pod.clone();

        let fw = self.config.profiles[profile].clone();
        let (rtrace, st) = {
            let cx = Ctx {
                cluster: &self.cluster,
                now: self.now,
            };
            binding::reserve(&fw, &cx, &mut state, &assumed, &host)
        };
        trace.binding.push(rtrace);
        if !st.is_success() {
            self.scheduling_cycle_failure(
                qp, pod, profile, &host, trace, state, attempt, st, &assumed,
            );
            return;
        }
        self.event(&key, SimEventKind::Reserved { node: host.clone() });

        let (ptrace, pout) = {
            let cx = Ctx {
                cluster: &self.cluster,
                now: self.now,
            };
            binding::permit(&fw, &cx, &mut state, &assumed, &host)
        };
        trace.binding.push(ptrace);
        match pout {
            PermitOutcome::Failed(st) => {
                self.scheduling_cycle_failure(
                    qp, pod, profile, &host, trace, state, attempt, st, &assumed,
                );
            }
            PermitOutcome::Allowed => {
                // The binding cycle runs now (it would run concurrently upstream;
                // nothing delays it here).
                trace.outcome = Outcome::Scheduled { node: host.clone() };
                self.finish_attempt(attempt, trace);
                let (pf, skip) = {
                    let cx = Ctx {
                        cluster: &self.cluster,
                        now: self.now,
                    };
                    binding::pre_bind_pre_flight(&fw, &cx, &state, &assumed, &host)
                };
                let b = Binding {
                    qp,
                    original: pod,
                    assumed,
                    host,
                    profile,
                    state,
                    attempt,
                    skip_pre_bind: skip,
                };
                if pf.code == Code::Error {
                    self.binding_failure(b, pf);
                } else {
                    self.bind(b);
                }
            }
            PermitOutcome::Wait(waits) => {
                trace.outcome = Outcome::Scheduled { node: host.clone() };
                self.finish_attempt(attempt, trace);
                let (pf, skip) = {
                    let cx = Ctx {
                        cluster: &self.cluster,
                        now: self.now,
                    };
                    binding::pre_bind_pre_flight(&fw, &cx, &state, &assumed, &host)
                };
                let b = Binding {
                    qp,
                    original: pod,
                    assumed: assumed.clone(),
                    host: host.clone(),
                    profile,
                    state,
                    attempt,
                    skip_pre_bind: skip,
                };
                if pf.code == Code::Error {
                    self.binding_failure(b, pf);
                    return;
                }
                let uid = assumed.uid.clone();
                self.handle.waiting().add(assumed, &host, &waits, self.now);
                let info: Vec<WaitInfo> = waits
                    .iter()
                    .map(|(p, d)| WaitInfo {
                        plugin: p.clone(),
                        timeout: crate::engine::go_duration(*d),
                        deadline_ms: ms_between(self.start, add(self.now, *d)),
                    })
                    .collect();
                self.event(
                    &key,
                    SimEventKind::Waiting {
                        node: host,
                        waits: info,
                    },
                );
                self.bindings.insert(uid, b);
            }
        }
    }

    /// Reserve or Permit failed in the scheduling cycle: Unreserve, forget, requeue.
    #[allow(clippy::too_many_arguments)]
    fn scheduling_cycle_failure(
        &mut self,
        qp: QueuedPod,
        pod: Arc<Pod>,
        profile: usize,
        host: &str,
        mut trace: Trace,
        mut state: CycleState,
        attempt: usize,
        st: Status,
        assumed: &Arc<Pod>,
    ) {
        let fw = self.fw(profile).clone();
        let un = {
            let cx = Ctx {
                cluster: &self.cluster,
                now: self.now,
            };
            binding::unreserve(&fw, &cx, &mut state, assumed, host)
        };
        trace.binding.push(un);
        self.forget(&pod);
        let message = binding::failure_message(&st);
        let failure = if st.is_rejected() {
            trace.outcome = Outcome::Unschedulable {
                nominated_node: None,
            };
            trace.fit_error = Some(message.clone());
            rejection(&st)
        } else {
            trace.outcome = Outcome::Error {
                message: message.clone(),
            };
            Failure::Error
        };
        self.finish_attempt(attempt, trace);
        self.fail(qp, failure, message);
    }

    /// Signals given to waiting pods resume their binding cycles, in order; each
    /// may give more (Unreserve rejecting siblings).
    pub fn process_signals(&mut self) {
        loop {
            let sigs = self.handle.waiting().take_signals();
            if sigs.is_empty() {
                break;
            }
            for s in sigs {
                self.resume(s);
            }
            self.apply_activations();
        }
    }

    /// WaitOnPermit returned.
    fn resume(&mut self, s: SignalEvent) {
        self.handle.waiting().remove(&s.uid);
        let Some(b) = self.bindings.remove(&s.uid) else {
            return;
        };
        match s.signal {
            Signal::Allowed => {
                self.event(&s.pod, SimEventKind::Allowed { node: s.node });
                self.bind(b);
            }
            Signal::Rejected { plugin, message } => {
                self.event(
                    &s.pod,
                    SimEventKind::Rejected {
                        node: s.node,
                        plugin: plugin.clone(),
                        message: message.clone(),
                    },
                );
                let st = Status::unschedulable(message).with_plugin(&plugin);
                self.binding_failure(b, st);
            }
        }
    }

    /// PreBind, Bind, PostBind.
    fn bind(&mut self, mut b: Binding) {
        let fw = self.fw(b.profile).clone();
        let (pt, st) = {
            let cx = Ctx {
                cluster: &self.cluster,
                now: self.now,
            };
            binding::pre_bind(
                &fw,
                &cx,
                &mut b.state,
                &b.assumed,
                &b.host,
                &b.skip_pre_bind,
            )
        };
        let mut phases = vec![pt];
        if !st.is_success() {
            self.push_phases(
                b.attempt,
                phases,
                Outcome::Scheduled {
                    node: b.host.clone(),
                },
                None,
            );
            self.binding_failure(b, st);
            return;
        }
        let (bt, st) = {
            let cx = Ctx {
                cluster: &self.cluster,
                now: self.now,
            };
            binding::bind(&fw, &cx, &mut b.state, &b.assumed, &b.host)
        };
        phases.push(bt);
        if !st.is_success() {
            self.push_phases(
                b.attempt,
                phases,
                Outcome::Scheduled {
                    node: b.host.clone(),
                },
                None,
            );
            self.binding_failure(b, st);
            return;
        }
        let pbt = {
            let cx = Ctx {
                cluster: &self.cluster,
                now: self.now,
            };
            binding::post_bind(&fw, &cx, &mut b.state, &b.assumed, &b.host)
        };
        phases.push(pbt);
        self.push_phases(
            b.attempt,
            phases,
            Outcome::Scheduled {
                node: b.host.clone(),
            },
            None,
        );
        let key = b.assumed.key();
        self.queue.done(b.qp.uid());
        self.records.entry(key.clone()).or_default().bound = Some(b.host.clone());
        self.event(&key, SimEventKind::Bound { node: b.host });
        self.move_all(ClusterEvent::AssignedPodAdd, None);
        self.apply_activations();
    }

    /// `handleBindingCycleError`: Unreserve, forget, requeue; the forgotten pod is an
    /// assigned-pod deletion for the others (after the requeue for rejections).
    fn binding_failure(&mut self, mut b: Binding, st: Status) {
        let fw = self.fw(b.profile).clone();
        let un = {
            let cx = Ctx {
                cluster: &self.cluster,
                now: self.now,
            };
            binding::unreserve(&fw, &cx, &mut b.state, &b.assumed, &b.host)
        };
        self.forget(&b.original);
        let key = b.assumed.key();
        self.event(
            &key,
            SimEventKind::Unreserved {
                node: b.host.clone(),
            },
        );
        let message = binding::failure_message(&st);
        let (outcome, fit_error) = if st.is_rejected() {
            (
                Outcome::Unschedulable {
                    nominated_node: None,
                },
                Some(message.clone()),
            )
        } else {
            (
                Outcome::Error {
                    message: message.clone(),
                },
                None,
            )
        };
        self.push_phases(b.attempt, vec![un], outcome, fit_error);
        let uid = b.qp.uid().to_string();
        if st.is_rejected() {
            self.fail(b.qp, rejection(&st), message);
            self.move_all(ClusterEvent::AssignedPodDelete, Some(&uid));
        } else {
            self.move_all(ClusterEvent::AssignedPodDelete, None);
            self.fail(b.qp, Failure::Error, message);
        }
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
pub fn simulate(cluster: Cluster, config: SchedulerConfig, opts: SimOptions) -> SimulationResult {
    let mut sim = Simulator::new(cluster, config, opts);
    sim.run();
    sim.result()
}
