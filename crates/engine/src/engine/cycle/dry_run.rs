//! The binding half as `explain` dry-runs it on the selected node: Reserve and Permit
//! as upstream's `schedulingCycle`, then PreBind, Bind and PostBind as its
//! `bindingCycle` (pkg/scheduler/schedule_one.go), without waiting at Permit. Each
//! phase runs through [`crate::engine::binding`], as the simulator's do.

use crate::engine::binding::{self, PermitOutcome};
use crate::engine::framework::{Ctx, CycleState, Framework};
use crate::engine::status::Code;
use crate::engine::trace::{Outcome, PhaseTrace, PluginResult};
use crate::model::Pod;

/// Reserve → Permit → PreBind → Bind → PostBind on the selected node, as a dry run,
/// through the same binding-half functions the scheduler loop uses.
pub(super) fn dry_run_binding(
    fw: &Framework,
    cx: &Ctx,
    state: &mut CycleState,
    pod: &Pod,
    host: &str,
) -> Vec<PhaseTrace> {
    let mut phases = Vec::new();
    let (tr, st) = binding::reserve(fw, cx, state, pod, host);
    phases.push(tr);
    if !st.is_success() {
        phases.push(binding::unreserve(fw, cx, state, pod, host));
        return phases;
    }
    let (tr, outcome) = binding::permit(fw, cx, state, pod, host);
    phases.push(tr);
    match outcome {
        PermitOutcome::Allowed => {}
        // The binding cycle would block in WaitOnPermit until allowed, rejected or
        // timed out; the dry run stops here.
        PermitOutcome::Wait(_) => return phases,
        PermitOutcome::Failed(_) => {
            phases.push(binding::unreserve(fw, cx, state, pod, host));
            return phases;
        }
    }
    let (pre_flight, skip) = binding::pre_bind_pre_flight(fw, cx, state, pod, host);
    if pre_flight.code == Code::Error {
        phases.push(PhaseTrace {
            point: "PreBind".into(),
            plugins: vec![PluginResult::new(
                pre_flight.plugin.as_deref().unwrap_or(""),
                &pre_flight,
            )],
        });
        phases.push(binding::unreserve(fw, cx, state, pod, host));
        return phases;
    }
    let (tr, st) = binding::pre_bind(fw, cx, state, pod, host, &skip);
    phases.push(tr);
    if !st.is_success() {
        phases.push(binding::unreserve(fw, cx, state, pod, host));
        return phases;
    }
    let (tr, st) = binding::bind(fw, cx, state, pod, host);
    phases.push(tr);
    if !st.is_success() {
        phases.push(binding::unreserve(fw, cx, state, pod, host));
        return phases;
    }
    phases.push(binding::post_bind(fw, cx, state, pod, host));
    phases
}

/// Scheduled unless a binding-half plugin rejected or failed; a rejection there is a
/// FitError over one node (`0/1 nodes are available: 1 <reason>.`).
pub(super) fn binding_outcome(phases: &[PhaseTrace], host: &str) -> (Outcome, Option<String>) {
    let failure = phases
        .iter()
        .flat_map(|ph| ph.plugins.iter().map(move |r| (ph, r)))
        .find(|(_, r)| !matches!(r.code, Code::Success | Code::Skip | Code::Wait));
    let unbound = phases
        .iter()
        .find(|ph| ph.point == "Bind")
        .is_some_and(|ph| !ph.plugins.iter().any(|r| r.code == Code::Success));
    if failure.is_none() && unbound {
        return (
            Outcome::Error {
                message: "no Bind plugin bound the pod (all returned Skip)".into(),
            },
            None,
        );
    }
    match failure {
        Some((ph, r)) if r.code == Code::Error => (
            Outcome::Error {
                message: format!(
                    "running {} plugin {:?}: {}",
                    ph.point,
                    r.plugin,
                    r.reasons.join(", ")
                ),
            },
            None,
        ),
        Some((_, r)) => (
            Outcome::Unschedulable {
                nominated_node: None,
            },
            Some(format!(
                "0/1 nodes are available: 1 {}.",
                r.reasons.join(", ")
            )),
        ),
        None => (
            Outcome::Scheduled {
                node: host.to_string(),
            },
            None,
        ),
    }
}
