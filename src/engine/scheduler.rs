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

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::resource::v1::ResourceClaimStatus;
use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use super::binding::{self, PermitOutcome};
use super::cycle::{CycleOptions, run_scheduling_cycle};
use super::framework::{Ctx, CycleState, Framework, Plugin, QueuedPodInfo};
use super::handle::Handle;
use super::queue::{
    self, ClusterEvent, Failure, Gate, PodChange, QueueName, QueuedPod, SchedulingQueue,
};
use super::status::{Code, Status};
use super::waiting::{Signal, SignalEvent, WaitingPodView};
use crate::config::SchedulerConfig;
use crate::model::{Cluster, Node, Pod, PodKey};
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
    /// and DisruptionTarget set) until [`Scheduler::remove_bound_pod`] says their
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

    /// An informer Node Add or Update: the node is added or replaced (its bound pods
    /// stay), then parked pods move as upstream's handlers move them: `NodeAdd` for a
    /// new node; `NodeUpdate` when labels, taints or allocatable changed or the node
    /// became schedulable (`NodeSchedulingPropertiesChange`; other changes, e.g.
    /// images or conditions, which no plugin registers, move nothing).
    pub fn upsert_node(&mut self, node: Node) {
        let event = match self.cluster.node(&node.name) {
            None => Some(ClusterEvent::NodeAdd),
            Some(old) if *old.node == node => return,
            Some(old) => {
                let old = &old.node;
                let changed = old.labels != node.labels
                    || old.taints != node.taints
                    || old.allocatable != node.allocatable
                    || (old.unschedulable && !node.unschedulable);
                changed.then_some(ClusterEvent::NodeUpdate)
            }
        };
        self.cluster.upsert_node(node);
        if let Some(e) = event {
            self.move_all(e, None);
        }
    }

    /// An informer Node Delete: the node leaves the model (pods bound to it stay
    /// until their own deletion, as in the scheduler cache) and parked pods concerned
    /// by `NodeDelete` move. False when the node is unknown.
    pub fn delete_node(&mut self, name: &str) -> bool {
        if !self.cluster.delete_node(name) {
            return false;
        }
        self.move_all(ClusterEvent::NodeDelete, None);
        true
    }

    /// Copy the non-pod, non-node objects (volumes, claims, classes, CSI objects,
    /// namespaces, PDBs, priority classes, workloads, PodGroups) from `from` where
    /// they differ. Returns whether anything changed. Parked pods move
    /// (`ObjectChange`) only when a kind some plugin registers changed; upstream has
    /// no handler for the others (namespaces, PDBs, priority classes, services,
    /// replica sets, stateful sets, replication controllers).
    pub fn sync_objects(&mut self, from: &Cluster) -> bool {
        const REGISTERED: [&str; 8] = [
            "persistent_volumes",
            "persistent_volume_claims",
            "storage_classes",
            "csi_nodes",
            "csi_drivers",
            "volume_attachments",
            "csi_storage_capacities",
            "pod_groups",
        ];
        let changed = self.cluster.copy_changed_objects_from(from);
        if changed.iter().any(|c| REGISTERED.contains(c)) {
            self.move_all(ClusterEvent::ObjectChange, None);
        }
        !changed.is_empty()
    }

    /// An informer Pod Update for a pod the engine knows (false otherwise; use
    /// [`add_pod`](Scheduler::add_pod)). Terminal pods leave as deleted ones do; an
    /// object with another uid replaces a deleted namesake.
    ///
    /// * pending → pending: the model and queued copies are replaced. A gated pod
    ///   whose gates changed re-runs PreEnqueue and, admitted, is queued; a parked
    ///   pod moves when a plugin that rejected it registers the change
    ///   (`PriorityQueue.Update` with queueing hints). A nomination this scheduler
    ///   made outlives objects that do not carry it yet; a nomination that changed
    ///   moves lower-or-equal priority pods (`AssignedPodDelete`).
    /// * pending → bound (bound by someone else): it leaves the queue, takes its
    ///   node's room, and `AssignedPodAdd` moves others.
    /// * bound → bound: replaced; a label change or a scale-down is an
    ///   `AssignedPodUpdate`; a different node frees the old one and fills the new.
    /// * bound → pending is no real transition: the pod leaves its node and is
    ///   queued as a new pod.
    /// * waiting at Permit (assumed): upstream ignores updates of assumed pods, so
    ///   the binding goes on with the object it has; the update is kept for a
    ///   requeue should the binding fail. A pod bound elsewhere, deleted (deletion
    ///   timestamp) or terminal is rejected first (`removed`), then handled as
    ///   pending.
    pub fn update_pod(&mut self, pod: Pod) -> bool {
        let key = pod.key();
        let Some(old) = self.cluster.pod(&key).cloned() else {
            return false;
        };
        if old.uid != pod.uid {
            // The informer missed a delete: the old object is gone.
            if !self.remove_bound_pod(&key) {
                self.remove_pending_pod(&key);
            }
            let _ = self.add_pod(pod);
            return true;
        }
        if let Some(b) = self.bindings.get_mut(&old.uid) {
            let leaves = pod.is_terminal()
                || pod.is_bound()
                || (pod.deletion_timestamp.is_some() && b.original.deletion_timestamp.is_none());
            if !leaves {
                let mut p = pod;
                p.nominated_node_name = None;
                b.original = Arc::new(p);
                return true;
            }
            self.handle.waiting().reject(&old.uid, "", "removed");
            self.process_signals();
            let Some(cur) = self.cluster.pod(&key).cloned() else {
                return true;
            };
            self.update_pending_pod(cur, pod);
            return true;
        }
        if old.is_bound() {
            self.update_bound_pod(old, pod);
        } else {
            self.update_pending_pod(old, pod);
        }
        true
    }

    fn update_bound_pod(&mut self, old: Arc<Pod>, new: Pod) {
        let key = new.key();
        if new.is_terminal() {
            self.remove_bound_pod(&key);
            return;
        }
        if !new.is_bound() {
            self.cluster.delete_pod(&key);
            if let Some(rec) = self.records.get_mut(&key) {
                rec.bound = None;
            }
            self.move_all(ClusterEvent::AssignedPodDelete, None);
            self.cluster.upsert_pod(new);
            if let Some(p) = self.cluster.pod(&key).cloned() {
                self.enqueue_initial(p);
            }
            return;
        }
        if *old == new {
            return;
        }
        let change = PodChange::between(&old, &new);
        let moved = old.node_name != new.node_name;
        let node = new.node_name.clone();
        self.cluster.upsert_pod(new);
        if let Some(rec) = self.records.get_mut(&key)
            && rec.bound.is_some()
        {
            rec.bound = node;
        }
        if moved {
            // nodeName never changes in the API; should it here, the old node is
            // freed and the new one filled.
            self.move_all(ClusterEvent::AssignedPodDelete, None);
            self.move_all(ClusterEvent::AssignedPodAdd, None);
        }
        if change.labels || change.scale_down {
            self.move_all(ClusterEvent::AssignedPodUpdate, None);
        }
    }

    fn update_pending_pod(&mut self, old: Arc<Pod>, mut new: Pod) {
        let key = new.key();
        let uid = new.uid.clone();
        if new.is_terminal() {
            self.remove_pending_pod(&key);
            return;
        }
        if new.is_bound() {
            {
                let less = make_less(&self.config, &self.cluster, &self.sort_state, self.now);
                self.queue.delete(&uid, &less);
            }
            self.nominations.remove(&uid);
            let node = new.node_name.clone();
            self.cluster.upsert_pod(new);
            self.records.entry(key).or_default().bound = node;
            self.move_all(ClusterEvent::AssignedPodAdd, None);
            return;
        }
        // This scheduler's own nomination decision wins until the object agrees.
        if let Some(decided) = self.nominations.get(&uid) {
            if *decided == new.nominated_node_name {
                self.nominations.remove(&uid);
            } else {
                new.nominated_node_name = decided.clone();
            }
        }
        if *old == new {
            return;
        }
        let change = PodChange::between(&old, &new);
        self.cluster.upsert_pod(new);
        let Some(cur) = self.cluster.pod(&key).cloned() else {
            return;
        };
        let profile = self.profile_of(&cur);
        let moved = {
            let (config, cluster, now) = (&self.config, &self.cluster, self.now);
            let mut regate = |p: &Pod| {
                profile.and_then(|pi| {
                    queue::run_pre_enqueue(&config.profiles[pi], &Ctx { cluster, now }, p)
                })
            };
            let less = make_less(config, cluster, &self.sort_state, now);
            self.queue
                .update(cur.clone(), &change, &mut regate, now, &less)
        };
        if let Some(to) = moved {
            self.event(
                &key,
                SimEventKind::Moved {
                    to,
                    event: ClusterEvent::UnscheduledPodUpdate,
                },
            );
        }
        if old.nominated_node_name.is_some() && old.nominated_node_name != cur.nominated_node_name {
            // Lower or equal priority pods counted the nominated pod as if assigned
            // there.
            self.move_all_where(ClusterEvent::AssignedPodDelete, old.priority);
        }
    }

    /// An informer Delete of an unbound pod: a pod waiting at Permit is rejected
    /// first (`RejectWaitingPod`: its binding fails and Unreserve runs, which frees
    /// what its siblings reserved); then it leaves the queue and the model, and a
    /// nomination it held moves lower-or-equal priority pods. False when the pod is
    /// unknown or bound.
    pub fn remove_pending_pod(&mut self, key: &str) -> bool {
        let Some(pod) = self.cluster.pod(key).cloned() else {
            return false;
        };
        let uid = pod.uid.clone();
        if self.bindings.contains_key(&uid) {
            self.handle.waiting().reject(&uid, "", "removed");
            self.process_signals();
        } else if pod.is_bound() {
            return false;
        }
        let Some(pod) = self.cluster.delete_pod(key) else {
            return true;
        };
        {
            let less = make_less(&self.config, &self.cluster, &self.sort_state, self.now);
            self.queue.delete(&uid, &less);
        }
        self.nominations.remove(&uid);
        if !pod.is_bound() && pod.nominated_node_name.is_some() {
            self.move_all_where(ClusterEvent::AssignedPodDelete, pod.priority);
        }
        true
    }

    /// The API server refused a Bind this engine already made (the acting
    /// scheduler's binding POST failed): as upstream's `handleBindingCycleError`
    /// with an Error status, Unreserve runs (with a fresh cycle state: the binding
    /// cycle's is gone; the plugins that act there keep what they need in the
    /// handle), the pod is forgotten, `AssignedPodDelete` moves others, and the pod
    /// goes to the error backoff queue with `message` as its last failure. False
    /// when the pod is unknown, not bound, or was not bound by this engine.
    pub fn binding_refused(&mut self, key: &str, message: &str) -> bool {
        let Some(pod) = self.cluster.pod(key).cloned() else {
            return false;
        };
        if !pod.is_bound() || self.bindings.contains_key(&pod.uid) {
            return false;
        }
        let Some(rec) = self.records.get(key).cloned() else {
            return false;
        };
        let (Some(host), Some(pi)) = (rec.bound.clone(), self.profile_of(&pod)) else {
            return false;
        };
        let fw = self.fw(pi).clone();
        let mut state = CycleState::default();
        self.handle.attach(&mut state);
        let un = {
            let cx = Ctx {
                cluster: &self.cluster,
                now: self.now,
            };
            binding::unreserve(&fw, &cx, &mut state, &pod, &host)
        };
        self.forget(&pod);
        self.event(key, SimEventKind::Unreserved { node: host });
        if let Some(a) = rec.bound_attempt {
            self.push_phases(
                a,
                vec![un],
                Outcome::Error {
                    message: message.to_string(),
                },
                None,
            );
        }
        self.move_all(ClusterEvent::AssignedPodDelete, None);
        let Some(cur) = self.cluster.pod(key).cloned() else {
            return true;
        };
        let mut qp = QueuedPod::new(cur, self.now);
        qp.info.attempts = rec.attempts;
        qp.info.initial_attempt_timestamp = rec.initial_attempt;
        qp.unschedulable_count = rec.unschedulable_count;
        let to = {
            let less = make_less(&self.config, &self.cluster, &self.sort_state, self.now);
            self.queue.requeue_error(qp, self.now, &less)
        };
        let rec = self.records.entry(key.to_string()).or_default();
        rec.bound = None;
        rec.last_message = Some(message.to_string());
        self.event(
            key,
            SimEventKind::Failed {
                message: message.to_string(),
                plugins: Vec::new(),
                queue: to,
            },
        );
        self.process_signals();
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
        // `skipPodSchedule`: a pod being deleted (its deletion seen while queued) is
        // dropped.
        if pod.is_bound() || pod.deletion_timestamp.is_some() {
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
            self.nominations.insert(p.uid.clone(), None);
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
        self.nominations
            .insert(me.uid.clone(), Some(node.to_string()));
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

    /// `move_all` for parked pods of priority at most `priority` (upstream's
    /// `getLEPriorityPreCheck`).
    fn move_all_where(&mut self, event: ClusterEvent, priority: i32) {
        let moved = {
            let less = make_less(&self.config, &self.cluster, &self.sort_state, self.now);
            self.queue.move_all_where(
                event,
                self.now,
                &|qp| qp.info.pod.priority <= priority,
                &less,
            )
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
        if let Some(saved) = self.claims_in_flight.remove(&original.uid) {
            crate::engine::plugins::dynamic_resources::restore_claims(&mut self.cluster, saved);
        }
        let mut p = (**original).clone();
        if p.nominated_node_name.is_some() {
            self.nominations.insert(p.uid.clone(), None);
        }
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
        // Upstream holds the devices it allocated from Reserve on (its in-flight
        // claims), so a pod waiting at Permit keeps them from the next pods.
        let saved = crate::engine::plugins::dynamic_resources::assume_allocations(
            &mut self.cluster,
            &state,
            &host,
        );
        if !saved.is_empty() {
            self.claims_in_flight.insert(pod.uid.clone(), saved);
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
        self.nominations.remove(b.qp.uid());
        let rec = self.records.entry(key.clone()).or_default();
        rec.bound = Some(b.host.clone());
        rec.initial_attempt = b.qp.info.initial_attempt_timestamp;
        rec.unschedulable_count = b.qp.unschedulable_count;
        rec.bound_attempt = Some(b.attempt);
        self.claims_in_flight.remove(&b.assumed.uid);
        crate::engine::plugins::dynamic_resources::record_binding(
            &mut self.cluster,
            &b.state,
            &b.assumed,
            &b.host,
        );
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
    let mut sim = Scheduler::new(cluster, config, opts);
    sim.run();
    sim.result()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::plugins::coscheduling::POD_GROUP_LABEL;
    use crate::model::PodGroup;
    use crate::model::testing::{cluster, node, pod, simple_node, simple_pod};
    use serde_json::{Value, json};

    fn t(s: i64) -> Timestamp {
        Timestamp::new(1_767_225_600 + s, 0).unwrap()
    }

    fn opts() -> SimOptions {
        SimOptions {
            start: Some(t(0)),
            ..Default::default()
        }
    }

    fn sim(nodes: Vec<Value>, pods: Vec<Value>) -> Scheduler {
        Scheduler::new(cluster(nodes, pods), SchedulerConfig::defaults(), opts())
    }

    #[test]
    fn taken_events_leave_the_log_and_numbering_goes_on() {
        let mut s = sim(
            vec![simple_node("n1", "4", "8Gi")],
            vec![
                simple_pod("a", "1", "1Gi", None),
                simple_pod("b", "1", "1Gi", None),
            ],
        );
        assert!(s.schedule_one());
        let first = s.take_events();
        assert!(!first.is_empty());
        assert!(s.events().is_empty());
        assert!(s.schedule_one());
        let next = s.events();
        assert!(!next.is_empty());
        let last = first.last().expect("events").seq;
        assert_eq!(next[0].seq, last + 1, "seq numbers go on");
        assert!(next.iter().all(|e| e.pod == "default/b"), "{next:?}");
    }

    fn placement(sim: &Scheduler, key: &str) -> Placement {
        sim.result()
            .pods
            .into_iter()
            .find(|p| p.pod == key)
            .unwrap_or_else(|| panic!("{key} not in the result"))
            .placement
    }

    fn moves(sim: &Scheduler, key: &str) -> Vec<(QueueName, ClusterEvent)> {
        sim.events()
            .iter()
            .filter(|e| e.pod == key)
            .filter_map(|e| match e.kind {
                SimEventKind::Moved { to, event } => Some((to, event)),
                _ => None,
            })
            .collect()
    }

    fn requested_cpu(sim: &Scheduler, node: &str) -> i64 {
        sim.cluster().node(node).unwrap().requested.milli_cpu
    }

    fn tainted(name: &str) -> Value {
        let mut n = simple_node(name, "4", "8Gi");
        n["spec"] = json!({"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]});
        n
    }

    fn bound(name: &str, cpu: &str, node: &str) -> Pod {
        pod(simple_pod(name, cpu, "1Gi", Some(node)))
    }

    /// The pod was attempted once and parked with `rejector` among its rejectors.
    fn assert_parked(sim: &Scheduler, key: &str, rejector: &str) {
        assert_eq!(
            sim.queue_position(key),
            Some(QueueName::Unschedulable),
            "{key}"
        );
        let uid = &sim.cluster().pod(key).unwrap().uid;
        let qp = sim.queue.parked().find(|q| q.uid() == uid).unwrap();
        assert!(qp.unschedulable_plugins.contains(rejector), "{qp:?}");
    }

    #[test]
    fn a_bigger_node_added_moves_a_pod_rejected_for_resources() {
        let mut s = sim(
            vec![simple_node("small", "2", "8Gi")],
            vec![simple_pod("p", "3", "1Gi", None)],
        );
        s.run_until_idle();
        assert_parked(&s, "default/p", "NodeResourcesFit");
        s.upsert_node(node(simple_node("big", "4", "8Gi")));
        assert_eq!(
            moves(&s, "default/p"),
            [(QueueName::Backoff, ClusterEvent::NodeAdd)]
        );
        s.run_until_idle();
        assert_eq!(
            placement(&s, "default/p"),
            Placement::Bound { node: "big".into() }
        );
    }

    #[test]
    fn a_taint_removed_by_a_node_update_moves_the_pod() {
        let mut s = sim(vec![tainted("n1")], vec![simple_pod("p", "1", "1Gi", None)]);
        s.run_until_idle();
        assert_parked(&s, "default/p", "TaintToleration");
        // Re-listing the same node is no event.
        s.upsert_node(node(tainted("n1")));
        assert!(moves(&s, "default/p").is_empty());
        s.upsert_node(node(simple_node("n1", "4", "8Gi")));
        assert_eq!(
            moves(&s, "default/p"),
            [(QueueName::Backoff, ClusterEvent::NodeUpdate)]
        );
        s.run_until_idle();
        assert_eq!(
            placement(&s, "default/p"),
            Placement::Bound { node: "n1".into() }
        );
    }

    #[test]
    fn events_the_rejectors_do_not_register_move_nothing() {
        type Act = fn(&mut Scheduler);
        let image_only: Act = |s| {
            let mut n = simple_node("n1", "2", "8Gi");
            n["status"]["images"] = json!([{"names": ["img:1"], "sizeBytes": 10}]);
            s.upsert_node(node(n));
        };
        let node_deleted: Act = |s| {
            assert!(s.delete_node("other"));
        };
        let service_added: Act = |s| {
            let mut c = Cluster::new();
            c.services.insert(
                "default/svc".into(),
                serde_json::from_value(json!({"metadata": {"name": "svc"}})).unwrap(),
            );
            assert!(s.sync_objects(&c));
        };
        let pvc_added: Act = |s| {
            let mut c = Cluster::new();
            c.persistent_volume_claims.insert(
                "default/c".into(),
                serde_json::from_value(json!({"metadata": {"name": "c"}})).unwrap(),
            );
            assert!(s.sync_objects(&c));
        };
        let bound_pod_added: Act = |s| s.add_pod(bound("q", "1", "other")).unwrap();
        let bound_pod_deleted: Act = |s| assert!(s.remove_bound_pod("default/r"));
        // (what rejects p, what happens, rejector)
        let cases: [(&str, Act, &str); 7] = [
            // No plugin registers image changes: no event at all.
            ("resources", image_only, "NodeResourcesFit"),
            // Only PodTopologySpread registers Node/Delete.
            ("resources", node_deleted, "NodeResourcesFit"),
            // Nothing registers Services.
            ("resources", service_added, "NodeResourcesFit"),
            ("resources", pvc_added, "NodeResourcesFit"),
            // NodeResourcesFit registers Pod/Delete, not Add.
            ("resources", bound_pod_added, "NodeResourcesFit"),
            ("taint", bound_pod_deleted, "TaintToleration"),
            ("taint", pvc_added, "TaintToleration"),
        ];
        for (i, (kind, act, rejector)) in cases.into_iter().enumerate() {
            let n1 = match kind {
                "taint" => {
                    let mut n = tainted("n1");
                    n["status"]["allocatable"]["cpu"] = json!("2");
                    n
                }
                _ => simple_node("n1", "2", "8Gi"),
            };
            let mut other = tainted("other");
            other["metadata"]["labels"] = json!({"x": "y"});
            let p_cpu = if kind == "resources" { "3" } else { "1" };
            let mut s = sim(
                vec![n1, other],
                vec![
                    simple_pod("p", p_cpu, "1Gi", None),
                    simple_pod("r", "1", "1Gi", Some("other")),
                ],
            );
            s.run_until_idle();
            assert_parked(&s, "default/p", rejector);
            act(&mut s);
            assert!(moves(&s, "default/p").is_empty(), "case {i}: {kind}");
            assert_eq!(
                s.queue_position("default/p"),
                Some(QueueName::Unschedulable),
                "case {i}"
            );
        }
    }

    #[test]
    fn removing_the_gates_lets_the_pod_schedule() {
        let mut g = simple_pod("g", "1", "1Gi", None);
        g["spec"]["schedulingGates"] = json!([{"name": "a"}, {"name": "b"}]);
        let mut s = sim(vec![simple_node("n1", "4", "8Gi")], vec![g.clone()]);
        s.run_until_idle();
        assert_eq!(s.queue_position("default/g"), Some(QueueName::Gated));

        // One gate left: still gated, with the current message.
        g["spec"]["schedulingGates"] = json!([{"name": "b"}]);
        assert!(s.update_pod(pod(g.clone())));
        assert_eq!(
            placement(&s, "default/g"),
            Placement::Gated {
                plugin: "SchedulingGates".into(),
                message: "waiting for scheduling gates: [b]".into()
            }
        );
        assert!(moves(&s, "default/g").is_empty());

        g["spec"]["schedulingGates"] = json!([]);
        assert!(s.update_pod(pod(g)));
        assert_eq!(
            moves(&s, "default/g"),
            [(QueueName::Active, ClusterEvent::UnscheduledPodUpdate)]
        );
        s.run_until_idle();
        assert_eq!(
            placement(&s, "default/g"),
            Placement::Bound { node: "n1".into() }
        );
    }

    #[test]
    fn a_parked_pod_moves_on_its_own_update_only_when_a_rejector_cares() {
        let mut s = sim(vec![tainted("n1")], vec![simple_pod("p", "1", "1Gi", None)]);
        s.run_until_idle();
        assert_parked(&s, "default/p", "TaintToleration");
        let mut p = simple_pod("p", "1", "1Gi", None);
        p["metadata"]["labels"] = json!({"a": "b"});
        assert!(s.update_pod(pod(p.clone())));
        assert!(moves(&s, "default/p").is_empty());
        assert_eq!(
            s.cluster().pod("default/p").unwrap().labels.get("a"),
            Some(&"b".to_string())
        );
        p["spec"]["tolerations"] = json!([{"key": "k", "operator": "Exists"}]);
        assert!(s.update_pod(pod(p)));
        assert_eq!(
            moves(&s, "default/p"),
            [(QueueName::Backoff, ClusterEvent::UnscheduledPodUpdate)]
        );
        s.advance(Duration::from_secs(1));
        s.run_until_idle();
        assert_eq!(
            placement(&s, "default/p"),
            Placement::Bound { node: "n1".into() }
        );
        // Unknown pods are not updated.
        assert!(!s.update_pod(pod(simple_pod("nope", "1", "1Gi", None))));
    }

    #[test]
    fn bound_elsewhere_leaves_the_queue_and_takes_room() {
        // w waits for room; p is bound by someone else while queued.
        let mut s = sim(
            vec![simple_node("n1", "4", "8Gi")],
            vec![
                simple_pod("big", "4", "1Gi", Some("n1")),
                simple_pod("p", "1", "1Gi", None),
            ],
        );
        s.run_until_idle();
        assert_parked(&s, "default/p", "NodeResourcesFit");
        assert!(s.remove_bound_pod("default/big"));
        assert_eq!(s.queue_position("default/p"), Some(QueueName::Backoff));
        assert!(s.update_pod(bound("p", "1", "n1")));
        assert_eq!(s.queue_position("default/p"), None);
        assert_eq!(requested_cpu(&s, "n1"), 1000);
        let attempts = s.attempts().len();
        s.advance(Duration::from_secs(10));
        s.run_until_idle();
        assert_eq!(s.attempts().len(), attempts);
        assert_eq!(
            placement(&s, "default/p"),
            Placement::Bound { node: "n1".into() }
        );
        // A label update of a bound pod is an assigned-pod update.
        let mut b = simple_pod("p", "1", "1Gi", Some("n1"));
        b["metadata"]["labels"] = json!({"app": "x"});
        s.add_pod(pod(simple_pod("q", "8", "1Gi", None))).unwrap();
        s.run_until_idle();
        assert_parked(&s, "default/q", "NodeResourcesFit");
        assert!(s.update_pod(pod(b)));
        assert_eq!(
            moves(&s, "default/q"),
            [(QueueName::Backoff, ClusterEvent::AssignedPodUpdate)]
        );
        // Finished: it leaves its node.
        let mut done = simple_pod("p", "1", "1Gi", Some("n1"));
        done["status"] = json!({"phase": "Succeeded"});
        assert!(s.update_pod(pod(done)));
        assert!(s.cluster().pod("default/p").is_none());
        assert_eq!(requested_cpu(&s, "n1"), 0);
    }

    /// Coscheduling as scheduler-plugins documents it, PostFilter preemption off.
    fn gang_config(args: Value) -> SchedulerConfig {
        let cfg = json!({
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{
                "schedulerName": "default-scheduler",
                "plugins": {
                    "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                    "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
                    "postFilter": {"disabled": [{"name": "DefaultPreemption"}]}
                },
                "pluginConfig": [{"name": "Coscheduling", "args": args}]
            }]
        });
        SchedulerConfig::from_str(&cfg.to_string(), "test-config").expect("config builds")
    }

    fn member(name: &str) -> Value {
        let mut v = simple_pod(name, "3", "1Gi", None);
        v["metadata"]["labels"] = json!({ POD_GROUP_LABEL: "gang" });
        v["metadata"]["creationTimestamp"] = json!("2025-12-31T23:00:00Z");
        v
    }

    /// Two 4-cpu nodes, three 3-cpu members, minMember 3: a and b wait at Permit.
    fn waiting_gang() -> Scheduler {
        let mut c = cluster(
            vec![
                simple_node("n1", "4", "16Gi"),
                simple_node("n2", "4", "16Gi"),
            ],
            vec![member("a"), member("b"), member("c")],
        );
        c.pod_groups.insert(
            "default/gang".into(),
            PodGroup {
                namespace: "default".into(),
                name: "gang".into(),
                min_member: 3,
                ..Default::default()
            },
        );
        let mut s = Scheduler::new(
            c,
            gang_config(json!({"permitWaitingTimeSeconds": 10, "podGroupRejectPercentage": 50})),
            opts(),
        );
        s.run_until_idle();
        let keys: Vec<String> = s.waiting().into_iter().map(|w| w.pod).collect();
        assert_eq!(keys, ["default/a", "default/b"]);
        s
    }

    #[test]
    fn deleting_a_waiting_gang_member_rejects_it_and_its_siblings() {
        let mut s = waiting_gang();
        assert!(s.remove_pending_pod("default/a"));
        assert!(s.waiting().is_empty());
        assert!(s.cluster().pod("default/a").is_none());
        assert_eq!(s.queue_position("default/a"), None);
        let rejected = |key: &str| {
            s.events().iter().find_map(|e| match &e.kind {
                SimEventKind::Rejected {
                    plugin, message, ..
                } if e.pod == key => Some((plugin.clone(), message.clone())),
                _ => None,
            })
        };
        assert_eq!(
            rejected("default/a"),
            Some((String::new(), "removed".into()))
        );
        assert_eq!(
            rejected("default/b"),
            Some(("Coscheduling".into(), "rejection in Unreserve".into()))
        );
        assert_eq!(requested_cpu(&s, "n1") + requested_cpu(&s, "n2"), 0);
        assert!(s.queue_position("default/b").is_some());
        // Bound or unknown pods are not removed here.
        assert!(!s.remove_pending_pod("default/a"));
        let mut s = sim(
            vec![simple_node("n1", "4", "8Gi")],
            vec![simple_pod("r", "1", "1Gi", Some("n1"))],
        );
        assert!(!s.remove_pending_pod("default/r"));
    }

    #[test]
    fn a_refused_binding_requeues_with_backoff_and_frees_the_node() {
        let mut s = sim(
            vec![simple_node("n1", "4", "8Gi")],
            vec![simple_pod("p", "1", "1Gi", None)],
        );
        s.run_until_idle();
        assert_eq!(requested_cpu(&s, "n1"), 1000);
        let msg = "Operation cannot be fulfilled on pods/binding \"p\": pod p is already assigned to node \"x\"";
        assert!(s.binding_refused("default/p", msg));
        assert_eq!(requested_cpu(&s, "n1"), 0);
        assert_eq!(s.queue_position("default/p"), Some(QueueName::Backoff));
        assert_eq!(
            placement(&s, "default/p"),
            Placement::Unschedulable {
                message: msg.into(),
                nominated_node: None,
                queue: QueueName::Backoff
            }
        );
        let last = &s.events().last().unwrap().kind;
        assert_eq!(
            last,
            &SimEventKind::Failed {
                message: msg.into(),
                plugins: vec![],
                queue: QueueName::Backoff
            }
        );
        assert!(matches!(
            s.attempts()[0].outcome,
            Outcome::Error { ref message } if message == msg
        ));
        // Not bound any more; unknown.
        assert!(!s.binding_refused("default/p", msg));
        assert!(!s.binding_refused("default/nope", msg));
        // Error backoff is waited out (1 s), then it binds again.
        s.run_until_idle();
        assert_eq!(s.queue_position("default/p"), Some(QueueName::Backoff));
        s.advance(Duration::from_secs(1));
        s.run_until_idle();
        assert_eq!(
            placement(&s, "default/p"),
            Placement::Bound { node: "n1".into() }
        );
        // A pod this engine did not bind is not its to requeue.
        let mut s = sim(
            vec![simple_node("n1", "4", "8Gi")],
            vec![simple_pod("r", "1", "1Gi", Some("n1"))],
        );
        assert!(!s.binding_refused("default/r", msg));
    }

    fn object<T: serde::de::DeserializeOwned>(v: Value) -> T {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn storage_objects_changing_move_a_pod_rejected_by_volume_binding() {
        let claim = |class: &str, volume: Option<&str>| -> Value {
            let mut c = json!({"metadata": {"name": "data", "namespace": "default"},
                "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": class,
                    "resources": {"requests": {"storage": "1Gi"}}},
                "status": {"phase": "Pending"}});
            if let Some(v) = volume {
                c["spec"]["volumeName"] = json!(v);
                c["metadata"]["annotations"] = json!({"pv.kubernetes.io/bind-completed": "yes"});
                c["status"]["phase"] = json!("Bound");
            }
            c
        };
        let pv = json!({"metadata": {"name": "pv1"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                "storageClassName": "fast", "hostPath": {"path": "/mnt"}},
            "status": {"phase": "Bound"}});
        let class = json!({"metadata": {"name": "fast"}, "provisioner": "example.com/csi",
            "volumeBindingMode": "WaitForFirstConsumer"});
        type Fix = fn(&mut Cluster, Value, Value, Value);
        // The claim gets bound to a PV; or its (missing, so Immediate) class appears
        // as WaitForFirstConsumer.
        let bind_claim: Fix = |c, claim_bound, pv, _| {
            c.persistent_volume_claims
                .insert("default/data".into(), object(claim_bound));
            c.persistent_volumes.insert("pv1".into(), object(pv));
        };
        let add_class: Fix = |c, _, _, class| {
            c.storage_classes.insert("fast".into(), object(class));
        };
        for (i, fix) in [bind_claim, add_class].into_iter().enumerate() {
            let mut p = simple_pod("p", "1", "1Gi", None);
            p["spec"]["volumes"] =
                json!([{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}]);
            let mut c = cluster(vec![simple_node("n1", "4", "8Gi")], vec![p]);
            c.persistent_volume_claims
                .insert("default/data".into(), object(claim("fast", None)));
            let mut s = Scheduler::new(c.clone(), SchedulerConfig::defaults(), opts());
            s.run_until_idle();
            assert_parked(&s, "default/p", "VolumeBinding");
            // Nothing changed: nothing to do.
            assert!(!s.sync_objects(&c));
            fix(
                &mut c,
                claim("fast", Some("pv1")),
                pv.clone(),
                class.clone(),
            );
            assert!(s.sync_objects(&c), "case {i}");
            assert_eq!(
                moves(&s, "default/p"),
                [(QueueName::Backoff, ClusterEvent::ObjectChange)],
                "case {i}"
            );
            s.advance(Duration::from_secs(1));
            s.run_until_idle();
            assert_eq!(
                placement(&s, "default/p"),
                Placement::Bound { node: "n1".into() },
                "case {i}"
            );
        }
    }

    #[test]
    fn the_engines_nomination_outlives_updates_without_it() {
        let mut low = simple_pod("low", "3", "1Gi", Some("n1"));
        low["spec"]["priority"] = json!(0);
        let mut high = simple_pod("high", "3", "1Gi", None);
        high["spec"]["priority"] = json!(100);
        let mut s = sim(vec![simple_node("n1", "4", "8Gi")], vec![low, high.clone()]);
        // One cycle: preemption nominates n1 and evicts low.
        assert!(s.schedule_one());
        let nominated = |s: &Scheduler| {
            s.cluster()
                .pod("default/high")
                .unwrap()
                .nominated_node_name
                .clone()
        };
        assert_eq!(nominated(&s), Some("n1".into()));
        assert_eq!(
            s.cluster().nominated_pods("n1").count(),
            1,
            "indexed as nominated"
        );
        // An update without the nomination (the status write has not landed) keeps it.
        high["metadata"]["labels"] = json!({"v": "2"});
        assert!(s.update_pod(pod(high.clone())));
        assert_eq!(nominated(&s), Some("n1".into()));
        assert_eq!(
            s.cluster().pod("default/high").unwrap().labels.get("v"),
            Some(&"2".to_string())
        );
        // Once an object carries it, the object rules: a later clear is honoured.
        high["status"] = json!({"nominatedNodeName": "n1"});
        assert!(s.update_pod(pod(high.clone())));
        high["status"] = json!({});
        assert!(s.update_pod(pod(high)));
        assert_eq!(nominated(&s), None);
        assert_eq!(s.cluster().nominated_pods("n1").count(), 0);
    }

    #[test]
    fn a_deleted_node_moves_a_pod_rejected_by_topology_spread() {
        let zoned = |name: &str, zone: &str, cpu: &str| {
            let mut n = simple_node(name, cpu, "8Gi");
            n["metadata"]["labels"]["zone"] = json!(zone);
            n
        };
        let labelled = |name: &str, node: Option<&str>, cpu: &str| {
            let mut p = simple_pod(name, cpu, "100Mi", node);
            p["metadata"]["labels"] = json!({"app": "x"});
            p
        };
        let mut p = labelled("p", None, "2");
        p["spec"]["topologySpreadConstraints"] = json!([{"maxSkew": 1, "topologyKey": "zone",
            "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "x"}}}]);
        // Zone a holds two matching pods; zone b's only node is too small for p.
        let mut s = sim(
            vec![zoned("n1", "a", "8"), zoned("n2", "b", "1")],
            vec![
                labelled("x1", Some("n1"), "100m"),
                labelled("x2", Some("n1"), "100m"),
                p,
            ],
        );
        s.run_until_idle();
        assert_parked(&s, "default/p", "PodTopologySpread");
        assert!(!s.delete_node("nope"));
        assert!(s.delete_node("n2"));
        assert!(s.cluster().node("n2").is_none());
        assert_eq!(
            moves(&s, "default/p"),
            [(QueueName::Backoff, ClusterEvent::NodeDelete)]
        );
        // Zone b is gone: the skew is counted over zone a alone.
        s.advance(Duration::from_secs(1));
        s.run_until_idle();
        assert_eq!(
            placement(&s, "default/p"),
            Placement::Bound { node: "n1".into() }
        );
    }
}
