//! The acting scheduler's engine: a [`Scheduler`] on wall-clock time, kept in step
//! with the live model the way kube-scheduler's informers keep its cache, and the
//! writes its decisions call for. Pure and synchronous: the session feeds it live
//! models and the time, and sends what it returns.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;

use crate::engine::SchedulerConfig;
use crate::engine::scheduler::{Scheduler, SimEventKind, SimOptions};
use crate::engine::waiting::WaitingPodView;
use crate::model::{Cluster, Pod};

use super::writes::{CLAIM_FINALIZER, ClaimWrite, PodRef, Write};
use super::{ActError, ActOptions};

/// What the engine did that the live model does not show yet.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Expect {
    /// Bound (the binding POST is on its way): the live pod is still pending.
    Bound(String),
    /// Evicted by preemption: the live pod is still there until its deletion lands.
    Gone,
}

/// The engine, fed from the live model, in wall-clock time.
pub struct Actor {
    sim: Scheduler,
    opts: ActOptions,
    /// The live model last observed (what the informers delivered so far).
    live: Arc<Cluster>,
    expect: BTreeMap<String, Expect>,
}

impl Actor {
    pub fn new(
        cluster: Arc<Cluster>,
        config: SchedulerConfig,
        opts: ActOptions,
        now: Timestamp,
    ) -> Result<Self, ActError> {
        super::check_profile(&config, &opts)?;
        let sim_opts = SimOptions {
            start: Some(now),
            keep_traces: false,
            max_attempts: Some(usize::MAX),
            max_duration: Duration::MAX,
            victims_terminate: true,
            ..SimOptions::default()
        };
        let mut own = (*cluster).clone();
        let foreign: Vec<String> = own
            .pending_pods()
            .filter(|p| !owns(&opts, p))
            .map(|p| p.key())
            .collect();
        // Other schedulers' pending pods take no resources: leaving them out changes
        // no verdict, and keeps them out of the queue.
        for k in foreign {
            own.delete_pod(&k);
        }
        let sim = Scheduler::new(own, config, sim_opts);
        Ok(Actor {
            sim,
            opts,
            live: cluster,
            expect: BTreeMap::new(),
        })
    }

    pub fn scheduler(&self) -> &Scheduler {
        &self.sim
    }

    pub fn scheduler_mut(&mut self) -> &mut Scheduler {
        &mut self.sim
    }

    pub fn options(&self) -> &ActOptions {
        &self.opts
    }

    /// Pods held at Permit, by key.
    pub fn waiting(&self) -> Vec<WaitingPodView> {
        let mut w = self.sim.waiting();
        w.sort_by(|a, b| a.pod.cmp(&b.pod));
        w
    }

    /// The informers' events between the last observed live model and `live`, fed to
    /// the engine: nodes added, changed or deleted; other objects replaced; pods
    /// added, updated (gates lifted, labels, bound by someone else) or deleted. What
    /// the engine itself did and the live model does not show yet (a binding on its
    /// way, a victim being deleted) is kept.
    pub fn observe(&mut self, live: Arc<Cluster>) {
        if Arc::ptr_eq(&self.live, &live) {
            return;
        }
        let prev = std::mem::replace(&mut self.live, live.clone());
        for n in live.nodes() {
            let same = prev
                .node(n.name())
                .is_some_and(|p| Arc::ptr_eq(&p.node, &n.node) || p.node == n.node);
            if !same {
                self.sim.upsert_node((*n.node).clone());
            }
        }
        for n in prev.nodes() {
            if live.node(n.name()).is_none() {
                self.sim.delete_node(n.name());
            }
        }
        self.sim.sync_objects(&live);
        // Both maps are in key order: one merge pass finds adds, updates and deletes.
        let mut old = prev.pod_entries().peekable();
        let mut new = live.pod_entries().peekable();
        loop {
            let order = match (old.peek(), new.peek()) {
                (None, None) => break,
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (Some((a, _)), Some((b, _))) => a.cmp(b),
            };
            match order {
                Ordering::Less => {
                    if let Some((k, _)) = old.next() {
                        self.pod_gone(k);
                    }
                }
                Ordering::Greater => {
                    if let Some((_, b)) = new.next() {
                        self.pod_seen(b);
                    }
                }
                Ordering::Equal => {
                    if let (Some((_, a)), Some((_, b))) = (old.next(), new.next())
                        && !Arc::ptr_eq(a, b)
                        && a != b
                    {
                        self.pod_seen(b);
                    }
                }
            }
        }
    }

    /// A live pod added or changed.
    fn pod_seen(&mut self, p: &Arc<Pod>) {
        let key = p.key();
        match self.expect.get(&key) {
            Some(Expect::Gone) => return,
            Some(Expect::Bound(node)) => {
                if !p.is_bound() {
                    // Our binding has not landed yet: the engine's copy stands.
                    return;
                }
                let ours = p.node_name.as_deref() == Some(node.as_str());
                self.expect.remove(&key);
                if ours {
                    return;
                }
                // Someone else bound it first: the live object wins below.
            }
            None => {}
        }
        if self.sim.cluster().pod(&key).is_some() {
            self.sim.update_pod(Pod::clone(p));
        } else if p.is_bound() || owns(&self.opts, p) {
            // Already present (a race with our own binding) is not an error.
            let _ = self.sim.add_pod(Pod::clone(p));
        }
    }

    /// A live pod deleted (or finished).
    fn pod_gone(&mut self, key: &str) {
        self.expect.remove(key);
        if self.sim.cluster().pod(key).is_none() {
            return;
        }
        if !self.sim.remove_bound_pod(key) {
            self.sim.remove_pending_pod(key);
        }
    }

    /// Move the engine's clock to `now`, fire due Permit timeouts, run every
    /// cycle that can run, and return the writes they call for.
    pub fn step(&mut self, now: Timestamp) -> Vec<Write> {
        self.sim.advance_to(now);
        self.sim.run_until_idle();
        self.drain()
    }

    /// Operator's Allow of a waiting pod (at `plugin`, or every plugin it waits on),
    /// with the writes that follow. False when the pod is not waiting.
    pub fn allow(&mut self, pod: &str, plugin: Option<&str>) -> (bool, Vec<Write>) {
        let found = self.sim.allow(pod, plugin);
        self.sim.run_until_idle();
        (found, self.drain())
    }

    /// Operator's Reject (kube-scheduler's `RejectWaitingPod`: plugin "").
    pub fn reject(&mut self, pod: &str, message: &str) -> (bool, Vec<Write>) {
        let found = self.sim.reject(pod, "", message);
        self.sim.run_until_idle();
        (found, self.drain())
    }

    /// A write the API server refused: the engine takes back what it assumed. A
    /// refused binding puts the pod back in the queue (error backoff) and frees the
    /// node; a refused deletion puts the victim back on its node.
    pub fn refused(&mut self, w: &Write, message: &str) {
        match w {
            Write::Bind { pod, .. } => {
                self.expect.remove(&pod.key());
                self.sim
                    .binding_refused(&pod.key(), &format!("binding rejected: {message}"));
            }
            Write::Evict { victim, .. } => {
                let key = victim.key();
                self.expect.remove(&key);
                if let Some(p) = self.live.pod(&key)
                    && self.sim.cluster().pod(&key).is_none()
                {
                    let _ = self.sim.add_pod(Pod::clone(p));
                }
            }
            // Conditions, nominations and events change nothing the engine reads.
            Write::Unschedulable { .. } | Write::ClearNomination { .. } => {}
        }
    }

    /// The live model as kube-scheduler's cache sees it: with the pods this engine
    /// has assumed (waiting at Permit, or bound with the binding on its way) on their
    /// nodes, and its preemption victims terminating. `None` when that is the live
    /// model itself.
    pub fn overlay(&self) -> Option<Cluster> {
        let mut changes: Vec<Arc<Pod>> = Vec::new();
        for w in self.sim.waiting() {
            if let Some(p) = self.sim.cluster().pod(&w.pod) {
                changes.push(p.clone());
            }
        }
        for key in self.expect.keys() {
            // Bound with the binding on its way, or a victim terminating.
            if let Some(p) = self.sim.cluster().pod(key) {
                changes.push(p.clone());
            }
        }
        if changes.is_empty() {
            return None;
        }
        let mut c = (*self.live).clone();
        for p in changes {
            c.upsert_pod(Pod::clone(&p));
        }
        Some(c)
    }

    /// The claim writes of a pod the engine bound: each claim whose status the
    /// engine changed (allocated, or the pod added to `reservedFor`), against the
    /// claim as the server last showed it.
    fn claim_writes(&self, pod: &Pod) -> Vec<ClaimWrite> {
        use crate::engine::plugins::dynamic_resources::pod_claims;
        let Ok(claims) = pod_claims(self.sim.cluster(), pod) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for claim in claims {
            let namespace = claim.metadata.namespace.clone().unwrap_or_default();
            let name = claim.metadata.name.clone().unwrap_or_default();
            let live = self.live.resource_claim(&namespace, &name);
            let old_status = live.and_then(|c| c.status.as_ref());
            if old_status == claim.status.as_ref() {
                continue;
            }
            let allocated_now = old_status.is_none_or(|s| s.allocation.is_none())
                && claim
                    .status
                    .as_ref()
                    .is_some_and(|s| s.allocation.is_some());
            let finalizers = allocated_now.then(|| {
                let mut f = live
                    .and_then(|c| c.metadata.finalizers.clone())
                    .unwrap_or_default();
                if !f.iter().any(|x| x == CLAIM_FINALIZER) {
                    f.push(CLAIM_FINALIZER.to_string());
                }
                f
            });
            let status = claim.status.as_ref().map_or(serde_json::Value::Null, |s| {
                serde_json::json!({
                    "allocation": s.allocation,
                    "reservedFor": s.reserved_for,
                })
            });
            out.push(ClaimWrite {
                namespace,
                name,
                resource_version: live.and_then(|c| c.metadata.resource_version.clone()),
                finalizers,
                status,
            });
        }
        out
    }

    fn drain(&mut self) -> Vec<Write> {
        let events = self.sim.take_events();
        let mut out = Vec::new();
        for e in events {
            // A victim has left the engine's model; the live model still has it.
            let Some(pod) = self
                .sim
                .cluster()
                .pod(&e.pod)
                .or_else(|| self.live.pod(&e.pod))
                .cloned()
            else {
                continue;
            };
            let r = PodRef::of(&pod);
            match e.kind {
                SimEventKind::Bound { node } => {
                    self.expect
                        .insert(e.pod.clone(), Expect::Bound(node.clone()));
                    let claims = self.claim_writes(&pod);
                    out.push(Write::Bind {
                        pod: r,
                        node,
                        claims,
                    });
                }
                SimEventKind::Failed { message, .. } => out.push(Write::Unschedulable {
                    pod: r,
                    message,
                    nominated_node: pod.nominated_node_name.clone(),
                }),
                SimEventKind::Evicted { by, node } => {
                    self.expect.insert(e.pod.clone(), Expect::Gone);
                    let preemptor = self
                        .sim
                        .cluster()
                        .pod(&by)
                        .map(|p| PodRef::of(p))
                        .unwrap_or_else(|| PodRef::named(&by));
                    out.push(Write::Evict {
                        victim: r,
                        by: preemptor,
                        node,
                        scheduler_name: self.opts.scheduler_name.clone(),
                    });
                }
                SimEventKind::NominationCleared { .. } => {
                    out.push(Write::ClearNomination { pod: r })
                }
                _ => {}
            }
        }
        out
    }
}

/// Whether this scheduler schedules `pod` when it is pending.
fn owns(opts: &ActOptions, pod: &Pod) -> bool {
    pod.scheduler_name == opts.scheduler_name
        && opts
            .namespace
            .as_deref()
            .is_none_or(|ns| ns == pod.namespace)
}
