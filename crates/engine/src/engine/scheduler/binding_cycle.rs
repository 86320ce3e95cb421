//! The binding cycle (upstream: pkg/scheduler/schedule_one.go, `runBindingCycle`,
//! `bindingCycle`, `handleBindingCycleError`): a pod resumed from WaitOnPermit goes
//! through PreBind, Bind and PostBind; each phase runs through
//! [`crate::engine::binding`].

use super::results::SimEventKind;
use super::{Binding, Scheduler, rejection};
use crate::engine::binding::{self};
use crate::engine::framework::Ctx;
use crate::engine::queue::{ClusterEvent, Failure};
use crate::engine::status::Status;
use crate::engine::trace::{Outcome, PhaseTrace};
use crate::engine::waiting::{Signal, SignalEvent};

impl Scheduler {
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
    pub(super) fn resume(&mut self, s: SignalEvent) {
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

    /// The binding phases that ran, added to the trace of the attempt that chose the
    /// node (whose outcome is Scheduled on that node).
    fn record_binding_phases(&mut self, b: &Binding, phases: Vec<PhaseTrace>) {
        let node = b.host.clone();
        self.push_phases(b.attempt, phases, Outcome::Scheduled { node }, None);
    }

    /// PreBind, Bind, PostBind.
    pub(super) fn bind(&mut self, mut b: Binding) {
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
            self.record_binding_phases(&b, phases);
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
            self.record_binding_phases(&b, phases);
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
        self.record_binding_phases(&b, phases);
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
    pub(super) fn binding_failure(&mut self, mut b: Binding, st: Status) {
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
}
