//! How many more copies of a pod fit: the question of kubernetes-sigs/cluster-capacity,
//! answered by the full scheduling cycle. Each copy gets PreEnqueue and one cycle
//! (`schedulePod`, with `nextStartNodeIndex` carried over as kube-scheduler does); a
//! copy that fits is assumed on its node (`Cache.AssumePod`) and the Reserve plugins
//! run (VolumeBinding and DynamicResources keep their in-flight state there, so a
//! shared claim is allocated once), then the next copy's cycle sees it. Permit,
//! PreBind and Bind do not run; PostFilter (preemption) never runs: capacity counts
//! free room. Mirrors the oracle's capacity mode (`shared/reference/oracle/capacity.go`)
//! over upstream `schedule_one.go`.

use std::collections::BTreeMap;

use crate::engine::Framework;
use crate::engine::binding;
use crate::engine::cycle::{CycleOptions, in_workers, run_scheduling_cycle};
use crate::engine::framework::{Ctx, CycleState};
use crate::engine::handle::Handle;
use crate::engine::plugins::dynamic_resources::assume_allocations;
use crate::engine::profile::{NoProfile, profile_for};
use crate::engine::trace::{Outcome, Trace};
use crate::model::{Cluster, Pod, Sym};

/// What stopped the copies.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StoppedBy {
    /// The next copy fits nowhere (`stop_fit_error` says why).
    FitError,
    /// `max` copies were placed.
    Max,
    /// A PreEnqueue plugin holds the pod (scheduling gates, say).
    PreEnqueue,
    /// A Reserve plugin refused the chosen node.
    Reserve,
    /// The cycle ended on an Error status.
    Error,
}

/// The answer: how many copies fit, where, and what stopped the next one.
#[derive(Clone, Debug)]
pub struct Capacity {
    pub pod: String,
    pub max: usize,
    pub count: usize,
    /// Copies placed per node, by node name.
    pub per_node: BTreeMap<String, usize>,
    pub stopped_by: StoppedBy,
    /// The FitError text when `stopped_by` is `FitError`.
    pub stop_fit_error: Option<String>,
    /// Why, for PreEnqueue, Reserve and Error stops.
    pub stop_message: Option<String>,
    /// The cycle of the copy that did not fit (its causes can be shown from it).
    pub stop_trace: Option<Trace>,
    /// Placements where several nodes shared the best total: kube-scheduler picks
    /// among them by the order its parallel Filter filled the list, so the per-node
    /// split may differ from run to run (the count did not in any scenario tried).
    pub tied_placements: usize,
    /// Placements that searched only part of the nodes (`percentageOfNodesToScore`):
    /// which nodes are searched depends on the node order, so the split may too.
    pub sampled_placements: usize,
}

impl Capacity {
    /// Whether the per-node split may depend on tie-breaking or node order.
    pub fn split_may_vary(&self) -> bool {
        self.tied_placements > 0 || self.sampled_placements > 0
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CapacityError {
    #[error(transparent)]
    NoProfile(#[from] NoProfile),
}

/// Copy `i` of `template`, as the oracle makes it: a fresh name and uid, no node, an
/// empty status (phase Pending).
pub fn clone_of(template: &Pod, i: usize) -> Pod {
    let mut p = template.clone();
    p.name = format!("{}-clone-{i}", template.name);
    p.uid = format!("capacity-clone{i}-{}", template.uid);
    p.node_name = None;
    p.nominated_node_name = None;
    p.phase = "Pending".into();
    p.start_time = None;
    p.not_scheduled = None;
    p.preemption_in_progress = false;
    p.resource_claim_statuses = Vec::new();
    p
}

/// Place up to `max` copies of `template` on a copy of `cluster`, one after another,
/// with the profile its schedulerName names. A bound template stays on its node; the
/// copies come on top. `opts.now` is the time the cycles run at.
pub fn capacity(
    cluster: &Cluster,
    profiles: &[Framework],
    template: &Pod,
    max: usize,
    opts: &CycleOptions,
) -> Result<Capacity, CapacityError> {
    let fw = profile_for(profiles, template)?;
    // The cluster's release, when it names one (see `run_cycle`).
    let fts = cluster.kube_version.as_ref().map(|r| r.version.features());
    let mut fw = match &fts {
        Some(fts) => {
            crate::engine::profile::at_release(fw, fts, &crate::engine::plugins::registry())
        }
        None => fw.clone(),
    };
    // Preemption never runs: copies count free room only.
    fw.post_filter.clear();
    let mut cluster = match &fts {
        Some(fts) => cluster
            .accounted_for(fts)
            .unwrap_or_else(|| cluster.clone()),
        None => cluster.clone(),
    };
    let template = &match &fts {
        Some(fts) => template
            .accounted_as(fts.pod_level_resources, fts.in_place_pod_vertical_scaling)
            .unwrap_or_else(|| template.clone()),
        None => template.clone(),
    };
    let workers = opts.workers(cluster.nodes().len());
    Ok(in_workers(workers, || {
        place_copies(&fw, &mut cluster, template, max, opts)
    }))
}

fn place_copies(
    fw: &Framework,
    cluster: &mut Cluster,
    template: &Pod,
    max: usize,
    opts: &CycleOptions,
) -> Capacity {
    let mut out = Capacity {
        pod: template.key(),
        max,
        count: 0,
        per_node: BTreeMap::new(),
        stopped_by: StoppedBy::Max,
        stop_fit_error: None,
        stop_message: None,
        stop_trace: None,
        tied_placements: 0,
        sampled_placements: 0,
    };
    let handle = Handle::new();
    let mut next_start = 0usize;
    for i in 1..=max {
        let copy = clone_of(template, i);
        let mut state = CycleState::default();
        handle.attach(&mut state);
        let cycle = run_scheduling_cycle(fw, cluster, &copy, opts, state, Some(&mut next_start));
        let (trace, mut state) = (cycle.trace, cycle.state);
        let host = match &trace.outcome {
            Outcome::Scheduled { node } => node.clone(),
            Outcome::Gated { plugin, .. } => {
                let why = trace.pre_filter.reasons.join("; ");
                out.stop(
                    StoppedBy::PreEnqueue,
                    format!("PreEnqueue {plugin}: {why}"),
                    trace,
                );
                return out;
            }
            Outcome::Unschedulable { .. } => {
                out.stopped_by = StoppedBy::FitError;
                out.stop_fit_error = trace.fit_error.clone();
                out.stop_trace = Some(trace);
                return out;
            }
            Outcome::Error { message } => {
                let m = message.clone();
                out.stop(StoppedBy::Error, m, trace);
                return out;
            }
        };
        if trace.best_nodes.len() > 1 {
            out.tied_placements += 1;
        }
        if trace.filter.len() < trace.nodes_total {
            out.sampled_placements += 1;
        }
        // Assume, then Reserve, as schedulingCycle does.
        let mut assumed = copy;
        assumed.node_name = Some(Sym::new(&host));
        let key = assumed.key();
        cluster.upsert_pod(assumed);
        let Some(assumed) = cluster.pod(&key).cloned() else {
            continue;
        };
        let cx = Ctx {
            cluster,
            now: opts.now,
        };
        let (_, st) = binding::reserve(fw, &cx, &mut state, &assumed, &host);
        if !st.is_success() {
            binding::unreserve(fw, &cx, &mut state, &assumed, &host);
            cluster.delete_pod(&key);
            let m = format!("Reserve on {host}: {}", st.message());
            out.stop(StoppedBy::Reserve, m, trace);
            return out;
        }
        assume_allocations(cluster, &state, &host);
        out.count += 1;
        *out.per_node.entry(host).or_insert(0) += 1;
    }
    out
}

impl Capacity {
    fn stop(&mut self, by: StoppedBy, message: String, trace: Trace) {
        self.stopped_by = by;
        self.stop_message = Some(message);
        self.stop_trace = Some(trace);
    }
}

#[cfg(test)]
mod tests;
