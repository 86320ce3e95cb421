//! Informer-event handling (upstream `eventhandlers.go`): pods and nodes added,
//! updated or deleted outside the simulation, other objects synced, a Bind the API
//! server refused, and the queue moves these events cause.

use std::sync::Arc;

use std::time::Duration;

use super::results::SimEventKind;
use super::{Scheduler, add, make_less};
use crate::engine::binding::{self};
use crate::engine::framework::{Ctx, CycleState};
use crate::engine::queue::{self, ClusterEvent, PodChange, QueuedPod};
use crate::engine::trace::Outcome;
use crate::model::{Cluster, Node, Pod};

impl Scheduler {
    pub(super) fn enqueue_initial(&mut self, pod: Arc<Pod>) {
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

    pub(super) fn update_bound_pod(&mut self, old: Arc<Pod>, new: Pod) {
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
        let node = new.node_name.as_deref().map(str::to_string);
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

    pub(super) fn update_pending_pod(&mut self, old: Arc<Pod>, mut new: Pod) {
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
            let node = new.node_name.as_deref().map(str::to_string);
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

    pub(super) fn move_all(&mut self, event: ClusterEvent, except: Option<&str>) {
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
    pub(super) fn move_all_where(&mut self, event: ClusterEvent, priority: i32) {
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

    pub(super) fn apply_activations(&mut self) {
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
}
