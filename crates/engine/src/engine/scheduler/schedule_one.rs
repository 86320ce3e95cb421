//! The scheduling loop and the scheduling cycle around the algorithm (upstream:
//! pkg/scheduler/schedule_one.go, `ScheduleOne`, `schedulingCycle`, `assume`,
//! `handleSchedulingFailure`): pop, run the cycle ([`crate::engine::cycle`] is
//! `schedulePod` and below), assume, Reserve, Permit, and the failure handler. The
//! binding cycle of the same upstream file is [`super::binding_cycle`].

use std::sync::Arc;

use super::results::{Attempt, SimEventKind, StopReason, WaitInfo};
use super::{Binding, Scheduler, add, make_less, ms_between, rejection, rejectors};
use crate::engine::binding::{self, PermitOutcome};
use crate::engine::cycle::{CycleOptions, Verdicts, run_scheduling_cycle};
use crate::engine::framework::{Ctx, CycleState, Framework};
use crate::engine::queue::{ClusterEvent, Failure, Gate, QueuedPod};
use crate::engine::status::{Code, Status};
use crate::engine::trace::{Outcome, PhaseTrace, Trace};
use crate::model::{Pod, Sym};

impl Scheduler {
    pub(super) fn attempt_limit_reached(&mut self) -> bool {
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
        // The whole run on one of the cycle pool's threads: each cycle's node chunks
        // are then split from inside the pool, without a hand-over per phase.
        let workers = self.cycle_options().workers(self.cluster.nodes().len());
        crate::engine::cycle::in_workers(workers, || self.run_on_this_thread())
    }

    /// How this run's cycles run: at the simulated time, on its workers.
    fn cycle_options(&self) -> CycleOptions {
        CycleOptions {
            all_filters: false,
            now: self.now,
            parallelism: self.opts.parallelism,
            min_nodes_per_worker: self.opts.min_nodes_per_worker,
            verdicts: if self.opts.keep_traces {
                Verdicts::Always
            } else {
                Verdicts::WhenNoneFits
            },
            ..Default::default()
        }
    }

    fn run_on_this_thread(&mut self) -> StopReason {
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
        let opts = self.cycle_options();
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
                // DynamicResources' PostFilter deallocated an unreserved claim (upstream
                // writes it through the API, and the claim's update event requeues the
                // pod). The acting scheduler does not write it, so its model, which
                // follows the cluster, is left as the cluster is.
                if !self.opts.victims_terminate
                    && crate::engine::plugins::dynamic_resources::apply_deallocation(
                        &mut self.cluster,
                        &state,
                    )
                {
                    self.move_all(ClusterEvent::ObjectChange, None);
                }
            }
            Outcome::Scheduled { node } => {
                self.assume_reserve_permit(qp, pod, pi, node, trace, state, attempt);
            }
        }
        self.apply_activations();
        self.process_signals();
        true
    }

    pub(super) fn finish_attempt(&mut self, attempt: usize, trace: Trace) {
        if let Some(a) = self.attempts.get_mut(attempt) {
            a.outcome = trace.outcome.clone();
            if self.opts.keep_traces {
                a.trace = Some(trace);
            }
        }
    }

    pub(super) fn push_phases(
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
    pub(super) fn fail(&mut self, qp: QueuedPod, failure: Failure, message: String) {
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
    pub(super) fn preempt(&mut self, qp: &mut QueuedPod, node: &str, victims: &[String]) {
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
            let vnode = vp.node_name.as_deref().unwrap_or_default().to_string();
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

    /// The pod as it was before assume, without a nomination (`clearNominatedNode`).
    pub(super) fn forget(&mut self, original: &Arc<Pod>) {
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

    pub(super) fn fw(&self, profile: usize) -> &Framework {
        &self.config.profiles[profile]
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn assume_reserve_permit(
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
        assumed.node_name = Some(Sym::new(&host));
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
            PermitOutcome::Allowed | PermitOutcome::Wait(_) => {
                trace.outcome = Outcome::Scheduled { node: host.clone() };
                self.finish_attempt(attempt, trace);
                // PreBind's pre-flight runs before the wait, as upstream's binding
                // cycle starts with it; its error fails the binding either way.
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
                let PermitOutcome::Wait(waits) = pout else {
                    // Allowed: the binding cycle runs now (it would run concurrently
                    // upstream; nothing delays it here).
                    self.bind(b);
                    return;
                };
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
    pub(super) fn scheduling_cycle_failure(
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
}
