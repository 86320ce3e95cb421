//! The scheduling queue for `simulate` (upstream:
//! pkg/scheduler/backend/queue/scheduling_queue.go): activeQ ordered by the profile's
//! QueueSort plugin, backoffQ, unschedulable pods, and gated pods (PreEnqueue
//! rejected them).
//!
//! Faithful:
//! * activeQ and backoffQ are Go `container/heap`s (same sift order, so equal keys
//!   pop in upstream's order); backoffQ is ordered by backoff expiry, ties by activeQ
//!   order.
//! * Backoff `min(initial·2^(count−1), max)`, `count` = consecutive errors if any,
//!   else unschedulable attempts; expiry = requeue time + backoff, truncated to the
//!   second; completed backoffs move to activeQ before every pop; with activeQ empty
//!   the scheduler pops the head of backoffQ (`SchedulerPopFromBackoffQ`, on).
//! * A rejected pod goes to unschedulable pods unless an event that concerns one of
//!   its rejector plugins happened while it was being scheduled (then to backoffQ,
//!   or activeQ when its backoff is over); Pending-only rejections skip backoff.
//! * `Activate` (PodsToActivate) moves unschedulable or backing-off pods to activeQ.
//!
//! * `Update` of a queued pod (live mode): replaced in place; a parked pod moves when
//!   one of its rejectors registers the change to the pod itself; a gated pod whose
//!   gates changed re-runs PreEnqueue. `Delete` takes it out of every sub-queue.
//!
//! Simplified (say so when it matters):
//! * Queueing hints are a static table ([`plugin_cares`]): which plugin registers
//!   which event (an assigned pod added, updated or deleted, a node added, updated or
//!   deleted, a storage object or PodGroup changed); no hint function looks at the
//!   objects. Plugins not in the table are concerned by everything.
//! * A cycle that ended in an Error parks the pod with the unschedulable ones, to be
//!   retried (after backoff) on the next cluster event; upstream retries it on error
//!   backoff forever, which in a model where nothing else changes gives the same error.
//! * The 5-minute flush of unschedulable pods is not modelled (it retries pods whose
//!   answer cannot have changed), so a simulation can settle.
//! * Gated pods stay gated until their own update changes their gates (nothing in a
//!   simulation does); PreEnqueue is not re-run on moves from backoff/unschedulable
//!   to activeQ.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use super::framework::{Ctx, Framework, QueuedPodInfo};
use super::status::Status;
use crate::model::Pod;

/// The cluster events the queue reacts to. A simulation produces only the two
/// assigned-pod events; the others come from a live cluster (the acting scheduler
/// mirrors its informers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClusterEvent {
    /// A pod was bound (`AssignedPodAdd`).
    AssignedPodAdd,
    /// An assigned pod went away: a preemption victim was deleted, or an assumed pod
    /// was forgotten after a binding failure (`AssignedPodDelete`).
    AssignedPodDelete,
    /// A node appeared (`NodeAdd`).
    NodeAdd,
    /// A node's labels, taints or allocatable changed, or it became schedulable
    /// (upstream's `UpdateNodeLabel|UpdateNodeTaint|UpdateNodeAllocatable`, one
    /// coarse event here).
    NodeUpdate,
    /// A node went away (`NodeDelete`).
    NodeDelete,
    /// A bound pod's labels changed or its requests went down (upstream's
    /// `UpdatePodLabel|UpdatePodScaleDown` on an assigned pod).
    AssignedPodUpdate,
    /// The pod itself was updated while queued (`UnscheduledPodUpdate`); which
    /// rejectors care is decided by [`plugin_cares_pod_update`] from its change.
    UnscheduledPodUpdate,
    /// A non-pod, non-node object some plugin registers changed: PV, PVC,
    /// StorageClass, CSINode, CSIDriver, CSIStorageCapacity, VolumeAttachment,
    /// PodGroup (one coarse event for all of them).
    ObjectChange,
}

impl ClusterEvent {
    pub fn as_str(self) -> &'static str {
        match self {
            ClusterEvent::AssignedPodAdd => "AssignedPodAdd",
            ClusterEvent::AssignedPodDelete => "AssignedPodDelete",
            ClusterEvent::NodeAdd => "NodeAdd",
            ClusterEvent::NodeUpdate => "NodeUpdate",
            ClusterEvent::NodeDelete => "NodeDelete",
            ClusterEvent::AssignedPodUpdate => "AssignedPodUpdate",
            ClusterEvent::UnscheduledPodUpdate => "UnscheduledPodUpdate",
            ClusterEvent::ObjectChange => "ObjectChange",
        }
    }
}

/// Whether a rejection by `plugin` may be resolved by `event`: the plugin's
/// `EventsToRegister` in 1.35 (queueing hints on, so no preCheck-driven extra node
/// events), reduced to the events above. Where a coarse event stands for several
/// upstream ones, a plugin registering any of them cares. Hint functions are not
/// run. Plugins not in the table (out of tree) care about everything.
pub fn plugin_cares(plugin: &str, event: ClusterEvent) -> bool {
    use ClusterEvent::*;
    match plugin {
        // Pod/Delete|UpdatePodScaleDown, Node/Add|UpdateNodeAllocatable.
        "NodeResourcesFit" => matches!(
            event,
            AssignedPodDelete | AssignedPodUpdate | UnscheduledPodUpdate | NodeAdd | NodeUpdate
        ),
        // Pod/Delete, Node/Add.
        "NodePorts" => matches!(event, AssignedPodDelete | NodeAdd),
        // Pod/Delete, Node/Add, PVC/Add.
        "VolumeRestrictions" => matches!(event, AssignedPodDelete | NodeAdd | ObjectChange),
        // Pod/Delete, CSINode/Add, PVC/Add (and VolumeAttachment/Delete).
        "NodeVolumeLimits" => matches!(event, AssignedPodDelete | ObjectChange),
        // Pod/Add|UpdatePodLabel|Delete (its hint skips unscheduled pods),
        // Node/Add|UpdateNodeLabel|UpdateNodeTaint.
        "InterPodAffinity" => matches!(
            event,
            AssignedPodAdd | AssignedPodDelete | AssignedPodUpdate | NodeAdd | NodeUpdate
        ),
        // Pod/Add|UpdatePodLabel|UpdatePodToleration|Delete,
        // Node/Add|Delete|UpdateNodeLabel|UpdateNodeTaint.
        "PodTopologySpread" => event != ObjectChange,
        // scheduler-plugins Coscheduling: Pod/Add, PodGroup/Add|Update.
        "Coscheduling" => matches!(event, AssignedPodAdd | ObjectChange),
        // Node/Add|UpdateNodeTaint (spec.unschedulable cleared counts as a taint
        // update), Pod/UpdatePodToleration.
        "NodeUnschedulable" | "TaintToleration" => {
            matches!(event, NodeAdd | NodeUpdate | UnscheduledPodUpdate)
        }
        // Node/Add.
        "NodeName" => event == NodeAdd,
        // Node/Add|UpdateNodeLabel.
        "NodeAffinity" => matches!(event, NodeAdd | NodeUpdate),
        // Node/Add|UpdateNodeLabel and storage objects.
        "VolumeBinding" | "VolumeZone" => matches!(event, NodeAdd | NodeUpdate | ObjectChange),
        // Pod/UpdatePodSchedulingGatesEliminated.
        "SchedulingGates" => event == UnscheduledPodUpdate,
        // Pod/UpdatePodGeneratedResourceClaim; ResourceClaim, ResourceSlice and
        // DeviceClass Add|Update (a claim PostFilter deallocated among them).
        "DynamicResources" => matches!(event, UnscheduledPodUpdate | ObjectChange),
        _ => true,
    }
}

/// What changed when a pod object was updated (upstream
/// `PodSchedulingPropertiesChange`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PodChange {
    pub labels: bool,
    /// Some request went down or away (`UpdatePodScaleDown`).
    pub scale_down: bool,
    /// The scheduling gates changed (upstream's event is for all of them removed;
    /// any change is reported so that PreEnqueue's message stays current).
    pub gates: bool,
    pub tolerations: bool,
}

impl PodChange {
    pub fn between(old: &Pod, new: &Pod) -> Self {
        let (o, n) = (&old.requests, &new.requests);
        let scale_down = n.milli_cpu < o.milli_cpu
            || n.memory < o.memory
            || n.ephemeral_storage < o.ephemeral_storage
            || o.scalar
                .iter()
                .any(|(k, v)| n.scalar.get(k).is_none_or(|nv| nv < v));
        PodChange {
            labels: old.labels != new.labels,
            scale_down,
            gates: old.scheduling_gates != new.scheduling_gates,
            tolerations: old.tolerations != new.tolerations,
        }
    }

    pub fn gates_eliminated(&self, new: &Pod) -> bool {
        self.gates && new.scheduling_gates.is_empty()
    }
}

/// Whether a rejection by `plugin` may be resolved by the rejected pod's own update
/// (the plugins registering a Pod/Update action whose hint accepts the pod itself).
/// Unknown plugins care, as do plugins whose trigger this model cannot see.
pub fn plugin_cares_pod_update(plugin: &str, change: &PodChange, new: &Pod) -> bool {
    match plugin {
        "TaintToleration" | "NodeUnschedulable" => change.tolerations,
        "PodTopologySpread" => change.labels || change.tolerations,
        "NodeResourcesFit" => change.scale_down,
        "SchedulingGates" => change.gates_eliminated(new),
        // Its trigger is the pod's claim statuses, which the model does not keep.
        "DynamicResources" => true,
        "InterPodAffinity" | "NodePorts" | "VolumeRestrictions" | "NodeVolumeLimits"
        | "Coscheduling" | "NodeName" | "NodeAffinity" | "VolumeBinding" | "VolumeZone" => false,
        _ => true,
    }
}

/// Why a gated pod is held.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gate {
    pub plugin: String,
    pub message: String,
}

/// A pod in the queue with upstream's bookkeeping (`framework.QueuedPodInfo`).
#[derive(Clone, Debug)]
pub struct QueuedPod {
    pub info: QueuedPodInfo,
    pub unschedulable_count: u32,
    pub consecutive_errors: u32,
    /// Plugins that rejected the pod in its last attempt.
    pub unschedulable_plugins: BTreeSet<String>,
    /// Plugins that returned Pending in its last attempt.
    pub pending_plugins: BTreeSet<String>,
    pub backoff_expiration: Option<Timestamp>,
    pub gate: Option<Gate>,
}

impl QueuedPod {
    pub fn new(pod: Arc<Pod>, added: Timestamp) -> Self {
        QueuedPod {
            info: QueuedPodInfo {
                pod,
                timestamp: added,
                initial_attempt_timestamp: None,
                attempts: 0,
            },
            unschedulable_count: 0,
            consecutive_errors: 0,
            unschedulable_plugins: BTreeSet::new(),
            pending_plugins: BTreeSet::new(),
            backoff_expiration: None,
            gate: None,
        }
    }
    pub fn uid(&self) -> &str {
        &self.info.pod.uid
    }
    pub fn key(&self) -> String {
        self.info.pod.key()
    }
}

/// How the last attempt failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Rejected by these plugins (Unschedulable/UU), or Pending from these.
    Rejected {
        unschedulable: BTreeSet<String>,
        pending: BTreeSet<String>,
    },
    /// An Error status.
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum QueueName {
    #[serde(rename = "activeQ")]
    Active,
    #[serde(rename = "backoffQ")]
    Backoff,
    Unschedulable,
    Gated,
}

impl QueueName {
    pub fn as_str(self) -> &'static str {
        match self {
            QueueName::Active => "activeQ",
            QueueName::Backoff => "backoffQ",
            QueueName::Unschedulable => "unschedulablePods",
            QueueName::Gated => "gated",
        }
    }
}

/// `a` pops before `b`.
pub type Less<'a> = &'a dyn Fn(&QueuedPodInfo, &QueuedPodInfo) -> bool;

/// A keyed binary heap with Go `container/heap`'s exact sift order.
#[derive(Clone, Debug, Default)]
struct GoHeap {
    items: Vec<QueuedPod>,
    index: HashMap<String, usize>,
}

impl GoHeap {
    fn len(&self) -> usize {
        self.items.len()
    }
    fn contains(&self, uid: &str) -> bool {
        self.index.contains_key(uid)
    }
    fn swap(&mut self, i: usize, j: usize) {
        self.items.swap(i, j);
        self.index.insert(self.items[i].uid().to_string(), i);
        self.index.insert(self.items[j].uid().to_string(), j);
    }
    fn up(&mut self, mut j: usize, less: &dyn Fn(&QueuedPod, &QueuedPod) -> bool) {
        while j > 0 {
            let i = (j - 1) / 2;
            if !less(&self.items[j], &self.items[i]) {
                break;
            }
            self.swap(i, j);
            j = i;
        }
    }
    fn down(&mut self, i0: usize, n: usize, less: &dyn Fn(&QueuedPod, &QueuedPod) -> bool) -> bool {
        let mut i = i0;
        loop {
            let j1 = 2 * i + 1;
            if j1 >= n {
                break;
            }
            let mut j = j1;
            let j2 = j1 + 1;
            if j2 < n && less(&self.items[j2], &self.items[j1]) {
                j = j2;
            }
            if !less(&self.items[j], &self.items[i]) {
                break;
            }
            self.swap(i, j);
            i = j;
        }
        i > i0
    }
    /// `AddOrUpdate`: push, or replace and fix.
    fn push(&mut self, qp: QueuedPod, less: &dyn Fn(&QueuedPod, &QueuedPod) -> bool) {
        if let Some(&i) = self.index.get(qp.uid()) {
            self.items[i] = qp;
            let n = self.items.len();
            if !self.down(i, n, less) {
                self.up(i, less);
            }
            return;
        }
        let uid = qp.uid().to_string();
        self.items.push(qp);
        let n = self.items.len() - 1;
        self.index.insert(uid, n);
        self.up(n, less);
    }
    fn peek(&self) -> Option<&QueuedPod> {
        self.items.first()
    }
    fn pop(&mut self, less: &dyn Fn(&QueuedPod, &QueuedPod) -> bool) -> Option<QueuedPod> {
        if self.items.is_empty() {
            return None;
        }
        let n = self.items.len() - 1;
        self.swap(0, n);
        self.down(0, n, less);
        let qp = self.items.pop()?;
        self.index.remove(qp.uid());
        Some(qp)
    }
    fn remove(
        &mut self,
        uid: &str,
        less: &dyn Fn(&QueuedPod, &QueuedPod) -> bool,
    ) -> Option<QueuedPod> {
        let i = *self.index.get(uid)?;
        let n = self.items.len() - 1;
        if n != i {
            self.swap(i, n);
            if !self.down(i, n, less) {
                self.up(i, less);
            }
        }
        let qp = self.items.pop()?;
        self.index.remove(qp.uid());
        Some(qp)
    }
    fn get_mut(&mut self, uid: &str) -> Option<&mut QueuedPod> {
        let i = *self.index.get(uid)?;
        self.items.get_mut(i)
    }
}

fn add_duration(t: Timestamp, d: Duration) -> Timestamp {
    SignedDuration::try_from(d)
        .ok()
        .and_then(|sd| t.checked_add(sd).ok())
        .unwrap_or(Timestamp::MAX)
}

fn truncate_to_second(t: Timestamp) -> Timestamp {
    let secs = t.as_second();
    let secs = if t.subsec_nanosecond() < 0 {
        secs - 1
    } else {
        secs
    };
    Timestamp::new(secs, 0).unwrap_or(t)
}

/// PreEnqueue (before the pod may enter activeQ/backoffQ): the first plugin that
/// does not return Success gates the pod.
pub fn run_pre_enqueue(fw: &Framework, cx: &Ctx, pod: &Pod) -> Option<Gate> {
    for p in &fw.pre_enqueue {
        let Some(pe) = p.as_pre_enqueue() else {
            continue;
        };
        let st: Status = pe.pre_enqueue(cx, pod);
        if !st.is_success() {
            return Some(Gate {
                plugin: p.name().to_string(),
                message: st.message(),
            });
        }
    }
    None
}

#[derive(Clone, Debug)]
pub struct SchedulingQueue {
    active: GoHeap,
    /// Pods that were rejected by plugins, backing off.
    backoff: GoHeap,
    /// Pods that failed with an error, backing off (`podErrorBackoffQ`).
    error_backoff: GoHeap,
    /// Unschedulable and gated pods, by uid.
    unschedulable: BTreeMap<String, QueuedPod>,
    /// Pods popped and not yet done, with the events seen meanwhile.
    in_flight: BTreeMap<String, Vec<ClusterEvent>>,
    initial_backoff: Duration,
    max_backoff: Duration,
}

impl SchedulingQueue {
    /// Backoffs from the config (`podInitialBackoffSeconds`, `podMaxBackoffSeconds`).
    pub fn new(initial_backoff: Duration, max_backoff: Duration) -> Self {
        SchedulingQueue {
            active: GoHeap::default(),
            backoff: GoHeap::default(),
            error_backoff: GoHeap::default(),
            unschedulable: BTreeMap::new(),
            in_flight: BTreeMap::new(),
            initial_backoff,
            max_backoff,
        }
    }

    /// `calculateBackoffDuration`.
    pub fn backoff_duration(&self, qp: &QueuedPod) -> Duration {
        let count = if qp.consecutive_errors > 0 {
            qp.consecutive_errors
        } else {
            qp.unschedulable_count
        };
        if count == 0 || self.max_backoff.is_zero() {
            return Duration::ZERO;
        }
        let mut d = self.initial_backoff;
        for _ in 1..count {
            if d > self.max_backoff.saturating_sub(d) {
                return self.max_backoff;
            }
            d += d;
        }
        d.min(self.max_backoff)
    }

    fn backoff_time(&self, qp: &QueuedPod) -> Timestamp {
        qp.backoff_expiration.unwrap_or_else(|| {
            truncate_to_second(add_duration(qp.info.timestamp, self.backoff_duration(qp)))
        })
    }

    /// `isPodBackingoff`.
    pub fn is_backing_off(&self, qp: &QueuedPod, now: Timestamp) -> bool {
        self.backoff_time(qp) > now
    }

    fn active_less<'a>(less: Less<'a>) -> impl Fn(&QueuedPod, &QueuedPod) -> bool + 'a {
        move |a: &QueuedPod, b: &QueuedPod| less(&a.info, &b.info)
    }

    fn backoff_less<'a>(less: Less<'a>) -> impl Fn(&QueuedPod, &QueuedPod) -> bool + 'a {
        move |a: &QueuedPod, b: &QueuedPod| {
            let (x, y) = (a.backoff_expiration, b.backoff_expiration);
            if x != y {
                return x < y;
            }
            less(&a.info, &b.info)
        }
    }

    fn push_active(&mut self, mut qp: QueuedPod, less: Less) {
        qp.backoff_expiration = None;
        self.active.push(qp, &Self::active_less(less));
    }

    fn push_backoff(&mut self, mut qp: QueuedPod, less: Less) {
        qp.backoff_expiration = Some(self.backoff_time(&qp));
        if qp.unschedulable_plugins.is_empty() && qp.pending_plugins.is_empty() {
            self.error_backoff.push(qp, &Self::backoff_less(less));
        } else {
            self.backoff.push(qp, &Self::backoff_less(less));
        }
    }

    /// A new pending pod: gated when PreEnqueue rejected it, else activeQ.
    pub fn add(&mut self, mut qp: QueuedPod, gate: Option<Gate>, less: Less) -> QueueName {
        if let Some(g) = gate {
            qp.gate = Some(g);
            self.unschedulable.insert(qp.uid().to_string(), qp);
            return QueueName::Gated;
        }
        self.push_active(qp, less);
        QueueName::Active
    }

    /// `flushBackoffQCompleted`: pods whose backoff is over move to activeQ.
    pub fn flush_backoff_completed(&mut self, now: Timestamp, less: Less) -> Vec<String> {
        let mut moved = Vec::new();
        for which in 0..2 {
            loop {
                let heap = if which == 0 {
                    &mut self.backoff
                } else {
                    &mut self.error_backoff
                };
                let Some(head) = heap.peek() else { break };
                if head.backoff_expiration.is_some_and(|e| e > now) {
                    break;
                }
                let Some(qp) = heap.pop(&Self::backoff_less(less)) else {
                    break;
                };
                moved.push(qp.key());
                self.push_active(qp, less);
            }
        }
        moved
    }

    /// `Pop`: the head of activeQ (after flushing completed backoffs), else the head
    /// of backoffQ. The attempt is counted and the pod is in flight until [`done`].
    ///
    /// [`done`]: SchedulingQueue::done
    pub fn pop(&mut self, now: Timestamp, less: Less) -> Option<(QueuedPod, QueueName)> {
        self.flush_backoff_completed(now, less);
        let (mut qp, from) = match self.active.pop(&Self::active_less(less)) {
            Some(qp) => (qp, QueueName::Active),
            None => (
                self.backoff.pop(&Self::backoff_less(less))?,
                QueueName::Backoff,
            ),
        };
        qp.info.attempts += 1;
        if qp.info.initial_attempt_timestamp.is_none() {
            qp.info.initial_attempt_timestamp = Some(now);
        }
        qp.backoff_expiration = None;
        self.in_flight.insert(qp.uid().to_string(), Vec::new());
        Some((qp, from))
    }

    /// The pod's scheduling (and binding) is over.
    pub fn done(&mut self, uid: &str) {
        self.in_flight.remove(uid);
    }

    /// `AddUnschedulableIfNotPresent` after a failed attempt; returns where it went.
    pub fn requeue_failed(
        &mut self,
        mut qp: QueuedPod,
        failure: Failure,
        now: Timestamp,
        less: Less,
    ) -> QueueName {
        let events = self.in_flight.remove(qp.uid()).unwrap_or_default();
        qp.info.timestamp = now;
        qp.backoff_expiration = None;
        let (immediately, concerned) = match &failure {
            Failure::Rejected {
                unschedulable,
                pending,
            } => {
                qp.unschedulable_count += 1;
                qp.consecutive_errors = 0;
                qp.unschedulable_plugins = unschedulable.clone();
                qp.pending_plugins = pending.clone();
                let rejectors: BTreeSet<&String> = unschedulable.union(pending).collect();
                let concerned = events
                    .iter()
                    .any(|&e| rejectors.is_empty() || rejectors.iter().any(|p| plugin_cares(p, e)));
                let pending_only = unschedulable.is_empty() && !pending.is_empty();
                (pending_only, concerned)
            }
            Failure::Error => {
                qp.consecutive_errors += 1;
                qp.unschedulable_plugins.clear();
                qp.pending_plugins.clear();
                (false, !events.is_empty())
            }
        };
        if !concerned {
            self.unschedulable.insert(qp.uid().to_string(), qp);
            return QueueName::Unschedulable;
        }
        self.requeue(qp, immediately, now, less)
    }

    fn requeue(
        &mut self,
        qp: QueuedPod,
        immediately: bool,
        now: Timestamp,
        less: Less,
    ) -> QueueName {
        if !immediately && self.is_backing_off(&qp, now) {
            self.push_backoff(qp, less);
            QueueName::Backoff
        } else {
            self.push_active(qp, less);
            QueueName::Active
        }
    }

    /// `MoveAllToActiveOrBackoffQueue`: unschedulable pods concerned by `event` move
    /// to backoffQ (still backing off) or activeQ; in-flight pods remember it. Returns
    /// the moved pods (key, destination), in key order.
    pub fn move_all(
        &mut self,
        event: ClusterEvent,
        now: Timestamp,
        except: Option<&str>,
        less: Less,
    ) -> Vec<(String, QueueName)> {
        self.move_all_where(event, now, &|qp| Some(qp.uid()) != except, less)
    }

    /// [`move_all`](SchedulingQueue::move_all) restricted to the parked pods `pick`
    /// accepts (upstream's `PreEnqueueCheck`, e.g. lower-or-equal priority only).
    pub fn move_all_where(
        &mut self,
        event: ClusterEvent,
        now: Timestamp,
        pick: &dyn Fn(&QueuedPod) -> bool,
        less: Less,
    ) -> Vec<(String, QueueName)> {
        for evs in self.in_flight.values_mut() {
            evs.push(event);
        }
        let mut chosen: Vec<(String, String)> = self
            .unschedulable
            .values()
            .filter(|qp| qp.gate.is_none() && pick(qp))
            .filter(|qp| {
                let rejectors: Vec<&String> = qp
                    .unschedulable_plugins
                    .iter()
                    .chain(&qp.pending_plugins)
                    .collect();
                rejectors.is_empty() || rejectors.iter().any(|p| plugin_cares(p, event))
            })
            .map(|qp| (qp.key(), qp.uid().to_string()))
            .collect();
        chosen.sort();
        let mut out = Vec::new();
        for (key, uid) in chosen {
            let Some(qp) = self.unschedulable.remove(&uid) else {
                continue;
            };
            let immediately = qp.unschedulable_plugins.is_empty() && !qp.pending_plugins.is_empty();
            let to = self.requeue(qp, immediately, now, less);
            out.push((key, to));
        }
        out
    }

    /// `Activate`: unschedulable (not gated) or backing-off pods move to activeQ.
    pub fn activate(&mut self, uids: &[String], less: Less) -> Vec<String> {
        let mut out = Vec::new();
        for uid in uids {
            let qp = if self
                .unschedulable
                .get(uid)
                .is_some_and(|qp| qp.gate.is_none())
            {
                self.unschedulable.remove(uid)
            } else if self.backoff.contains(uid) {
                self.backoff.remove(uid, &Self::backoff_less(less))
            } else if self.error_backoff.contains(uid) {
                self.error_backoff.remove(uid, &Self::backoff_less(less))
            } else {
                None
            };
            if let Some(qp) = qp {
                out.push(qp.key());
                self.push_active(qp, less);
            }
        }
        out
    }

    /// `Delete`: the pod leaves whichever sub-queue holds it, and stops being in
    /// flight. Returns it when it was queued.
    pub fn delete(&mut self, uid: &str, less: Less) -> Option<QueuedPod> {
        self.in_flight.remove(uid);
        if let Some(qp) = self.unschedulable.remove(uid) {
            return Some(qp);
        }
        if self.active.contains(uid) {
            return self.active.remove(uid, &Self::active_less(less));
        }
        if self.backoff.contains(uid) {
            return self.backoff.remove(uid, &Self::backoff_less(less));
        }
        if self.error_backoff.contains(uid) {
            return self.error_backoff.remove(uid, &Self::backoff_less(less));
        }
        None
    }

    /// `PriorityQueue.Update` for a queued pod that is not in flight, with queueing
    /// hints on: the object is replaced where the pod is. A gated pod whose gates
    /// changed re-runs PreEnqueue (`regate`) and, admitted, leaves the gated set; a
    /// parked pod leaves it when a plugin that rejected it cares about the change
    /// ([`plugin_cares_pod_update`]) or nothing rejected it (an error). A pod that
    /// leaves goes to backoffQ while backing off, else activeQ (at once when only
    /// Pending plugins held it). Returns where it went if it moved.
    pub fn update(
        &mut self,
        pod: Arc<Pod>,
        change: &PodChange,
        regate: &mut dyn FnMut(&Pod) -> Option<Gate>,
        now: Timestamp,
        less: Less,
    ) -> Option<QueueName> {
        let uid = pod.uid.clone();
        if let Some(mut qp) = self.unschedulable.remove(&uid) {
            qp.info.pod = pod;
            let leaves = if qp.gate.is_some() {
                if change.gates {
                    qp.gate = regate(&qp.info.pod);
                }
                qp.gate.is_none()
            } else {
                let rejectors: Vec<&String> = qp
                    .unschedulable_plugins
                    .iter()
                    .chain(&qp.pending_plugins)
                    .collect();
                rejectors.is_empty()
                    || rejectors
                        .iter()
                        .any(|p| plugin_cares_pod_update(p, change, &qp.info.pod))
            };
            if !leaves {
                self.unschedulable.insert(uid, qp);
                return None;
            }
            let immediately = qp.unschedulable_plugins.is_empty() && !qp.pending_plugins.is_empty();
            return Some(self.requeue(qp, immediately, now, less));
        }
        // In activeQ or backoffQ the pod stays; re-pushing keeps the heap in order
        // should the new object sort differently.
        for which in 0..3 {
            let heap = match which {
                0 => &mut self.active,
                1 => &mut self.backoff,
                _ => &mut self.error_backoff,
            };
            if let Some(qp) = heap.get_mut(&uid) {
                let mut qp = qp.clone();
                qp.info.pod = pod;
                if which == 0 {
                    heap.push(qp, &Self::active_less(less));
                } else {
                    heap.push(qp, &Self::backoff_less(less));
                }
                return None;
            }
        }
        None
    }

    /// A pod whose binding failed after it had left the queue (the API server
    /// refused the Bind): counted as an error and put on error backoff, or activeQ
    /// when no backoff applies.
    pub fn requeue_error(&mut self, mut qp: QueuedPod, now: Timestamp, less: Less) -> QueueName {
        self.in_flight.remove(qp.uid());
        qp.info.timestamp = now;
        qp.backoff_expiration = None;
        qp.consecutive_errors += 1;
        qp.unschedulable_plugins.clear();
        qp.pending_plugins.clear();
        qp.gate = None;
        self.requeue(qp, false, now, less)
    }

    /// Replace a queued pod's object (e.g. after its nomination changed).
    pub fn update_pod(&mut self, pod: Arc<Pod>) {
        let uid = pod.uid.clone();
        if let Some(qp) = self.unschedulable.get_mut(&uid) {
            qp.info.pod = pod;
        } else if let Some(qp) = self.active.get_mut(&uid) {
            qp.info.pod = pod;
        } else if let Some(qp) = self.backoff.get_mut(&uid) {
            qp.info.pod = pod;
        } else if let Some(qp) = self.error_backoff.get_mut(&uid) {
            qp.info.pod = pod;
        }
    }

    /// Nothing to pop: activeQ and backoffQ are empty (error backoffs are not popped
    /// early, so those count as pending work too).
    pub fn is_idle(&self) -> bool {
        self.active.len() == 0 && self.backoff.len() == 0 && self.error_backoff.len() == 0
    }

    /// The earliest backoff expiry in the error backoff queue (the only queue that
    /// may need time to pass).
    pub fn next_error_backoff(&self) -> Option<Timestamp> {
        self.error_backoff.peek().and_then(|q| q.backoff_expiration)
    }

    pub fn len(&self, q: QueueName) -> usize {
        match q {
            QueueName::Active => self.active.len(),
            QueueName::Backoff => self.backoff.len() + self.error_backoff.len(),
            QueueName::Unschedulable => self
                .unschedulable
                .values()
                .filter(|q| q.gate.is_none())
                .count(),
            QueueName::Gated => self
                .unschedulable
                .values()
                .filter(|q| q.gate.is_some())
                .count(),
        }
    }

    /// Where a pod is, if queued.
    pub fn position(&self, uid: &str) -> Option<QueueName> {
        if let Some(qp) = self.unschedulable.get(uid) {
            return Some(if qp.gate.is_some() {
                QueueName::Gated
            } else {
                QueueName::Unschedulable
            });
        }
        if self.active.contains(uid) {
            return Some(QueueName::Active);
        }
        if self.backoff.contains(uid) || self.error_backoff.contains(uid) {
            return Some(QueueName::Backoff);
        }
        None
    }

    /// Unschedulable and gated pods, by uid.
    pub fn parked(&self) -> impl Iterator<Item = &QueuedPod> {
        self.unschedulable.values()
    }
}

#[cfg(test)]
mod tests;
