//! One scheduling cycle of one pod, recorded in a [`Trace`] rather than acted on
//! (upstream: pkg/scheduler/schedule_one.go, `schedulePod`, and for `explain` the
//! binding half as a dry run). One file per phase: `pre_filter` and the node
//! search in `find_nodes`, `post_filter` when nothing fits, `score`, `select`;
//! `dry_run` for the binding half. The loop that acts on a cycle's result (assume,
//! Reserve, Permit, the binding cycle, the failure handler) is [`super::scheduler`].

use super::fit_error::fit_error_message;
use super::framework::{Ctx, CycleState, Framework};
use crate::engine::trace::*;
use crate::model::{Cluster, Pod};

mod all_filters;
mod dry_run;
mod find_nodes;
mod not_modelled;
mod options;
mod post_filter;
mod pre_filter;
mod score;
mod select;

use dry_run::{binding_outcome, dry_run_binding};
use find_nodes::{Fit, find_nodes_that_fit_pod};
use not_modelled::not_modelled;
pub use options::{CycleOptions, Phase, PhaseClock, PhaseTimer, Verdicts, in_workers};
use post_filter::run_post_filter;
use score::prioritize_nodes;
use select::choose_host;

/// Everything a cycle produced besides the trace: the state and feasible set, for the
/// binding half to continue from.
pub struct CycleOutput {
    pub trace: Trace,
    pub state: CycleState,
}

/// Runs `cycle` for `pod` as a pending pod: a bound pod (or one whose copy in the
/// cluster is bound) is taken off its node first, so the replay places it anew, and
/// the trace records where it was bound. Explain and what-if replays share this rule.
pub fn replay_as_pending(
    cluster: &Cluster,
    pod: &Pod,
    cycle: impl FnOnce(&Cluster, &Pod) -> Trace,
) -> Trace {
    let key = pod.key();
    if !pod.is_bound() && !cluster.pod(&key).is_some_and(|p| p.is_bound()) {
        return cycle(cluster, pod);
    }
    let mut c = cluster.clone();
    c.delete_pod(&key);
    let mut pending = pod.clone();
    let bound_to = pending.node_name.take();
    c.upsert_pod(pending.clone());
    let mut trace = cycle(&c, &pending);
    trace.bound_to = bound_to.map(String::from);
    trace
}

/// `explain`'s cycle: the scheduling cycle over every node, then the binding half as a
/// dry run on the selected node, on the worker pool entered once.
///
/// A cluster that names its kube-scheduler release (`Cluster::kube_version`) is
/// replayed by that release: the profile re-built with its features, pods counted as
/// its gates count them.
pub fn run_cycle(fw: &Framework, cluster: &Cluster, pod: &Pod, opts: &CycleOptions) -> Trace {
    let Some(release) = &cluster.kube_version else {
        return run_cycle_as_built(fw, cluster, pod, opts);
    };
    let fts = release.version.features();
    let fw = crate::engine::profile::at_release(fw, &fts, &crate::engine::plugins::registry());
    let accounted = cluster.accounted_for(&fts);
    let cluster = accounted.as_ref().unwrap_or(cluster);
    let pod_accounted =
        pod.accounted_as(fts.pod_level_resources, fts.in_place_pod_vertical_scaling);
    let pod = pod_accounted.as_ref().unwrap_or(pod);
    run_cycle_as_built(&fw, cluster, pod, opts)
}

/// [`run_cycle`] with `fw` as it is.
fn run_cycle_as_built(fw: &Framework, cluster: &Cluster, pod: &Pod, opts: &CycleOptions) -> Trace {
    in_workers(opts.workers(cluster.nodes().len()), || {
        run_and_bind(fw, cluster, pod, opts)
    })
    .trace
}

/// [`run_cycle`] on the calling thread.
fn run_and_bind(fw: &Framework, cluster: &Cluster, pod: &Pod, opts: &CycleOptions) -> CycleOutput {
    let mut out = run_scheduling_cycle(fw, cluster, pod, opts, CycleState::default(), None);
    if let Outcome::Scheduled { node: host } = &out.trace.outcome {
        let host = host.clone();
        let cx = Ctx {
            cluster,
            now: opts.now,
        };
        out.trace.binding = dry_run_binding(fw, &cx, &mut out.state, pod, &host);
        let (outcome, fit_error) = binding_outcome(&out.trace.binding, &host);
        out.trace.outcome = outcome;
        if fit_error.is_some() {
            out.trace.fit_error = fit_error;
        }
    }
    // An aborted cycle's FailedScheduling message is the error itself.
    if let Outcome::Error { message } = &out.trace.outcome
        && out.trace.fit_error.is_none()
    {
        out.trace.fit_error = Some(message.clone());
    }
    out.trace.reserved_devices =
        crate::engine::plugins::dynamic_resources::reserved_devices(&out.state);
    out
}

/// The scheduling cycle up to host selection, without the binding half: when a host
/// is selected, `trace.outcome` is `Scheduled` with it and `trace.binding` is empty,
/// for a caller that runs Reserve/Permit/... itself (the simulator). `state` is the
/// cycle state to start from (it may carry a framework handle).
///
/// `next_start_node_index`: `None` filters every node (explain). `Some` searches as
/// kube-scheduler does with `parallelism: 1`: nodes from that index on (wrapping),
/// stopping once `numNodesToFind` feasible nodes are found; the index is advanced by
/// the nodes processed (not when the nominated node was taken), and `trace.filter`
/// lists the processed nodes only.
pub fn run_scheduling_cycle(
    fw: &Framework,
    cluster: &Cluster,
    pod: &Pod,
    opts: &CycleOptions,
    state: CycleState,
    next_start_node_index: Option<&mut usize>,
) -> CycleOutput {
    let mut state = state;
    let cx = Ctx {
        cluster,
        now: opts.now,
    };
    let nodes = cluster.nodes();
    let mut trace = new_trace(fw, cluster, pod);

    // PreEnqueue: a rejected pod never reaches the active queue.
    for p in &fw.pre_enqueue {
        let Some(pe) = p.as_pre_enqueue() else {
            continue;
        };
        let st = pe.pre_enqueue(&cx, pod);
        trace.pre_enqueue.push(PluginResult::new(p.name(), &st));
        if !st.is_success() {
            trace.pre_filter.code = Some(st.code);
            trace.pre_filter.plugin = Some(p.name().to_string());
            trace.pre_filter.reasons = st.reasons.clone();
            trace.outcome = Outcome::Gated {
                plugin: p.name().to_string(),
                message: st.message(),
            };
            return CycleOutput { trace, state };
        }
    }

    if nodes.is_empty() {
        if opts.all_filters {
            trace.filter_all = Some(Vec::new());
        }
        let msg = "no nodes available to schedule pods".to_string();
        trace.fit_error = Some(msg.clone());
        trace.outcome = Outcome::Error { message: msg };
        return CycleOutput { trace, state };
    }

    let Some(Fit {
        feasible,
        statuses,
        pre_filter_msg,
    }) = find_nodes_that_fit_pod(
        fw,
        &cx,
        opts,
        cluster,
        &mut state,
        pod,
        &mut trace,
        next_start_node_index,
    )
    else {
        return CycleOutput { trace, state };
    };

    if feasible.is_empty() {
        let post = run_post_filter(fw, &cx, &state, pod, &statuses);
        let post_msg = post.message.clone();
        trace.fit_error = Some(fit_error_message(
            nodes.len(),
            &statuses,
            &pre_filter_msg,
            &post_msg,
        ));
        trace.outcome = Outcome::Unschedulable {
            nominated_node: post.nominated_node.clone(),
        };
        if !fw.post_filter.is_empty() {
            trace.post_filter = Some(post);
        }
        return CycleOutput { trace, state };
    }

    // PreScore / Score / NormalizeScore.
    if !opts.timed(Phase::Score, || {
        prioritize_nodes(fw, &cx, opts, &mut state, pod, nodes, &feasible, &mut trace)
    }) {
        return CycleOutput { trace, state };
    }
    choose_host(&mut trace);
    CycleOutput { trace, state }
}

/// The trace a cycle starts from: nothing run yet.
fn new_trace(fw: &Framework, cluster: &Cluster, pod: &Pod) -> Trace {
    Trace {
        profile: fw.profile_name.clone(),
        nodes_total: cluster.nodes().len(),
        queue_sort: fw.queue_sort.iter().map(|p| p.name().to_string()).collect(),
        filter_plugins: fw.filter.iter().map(|p| p.name().to_string()).collect(),
        not_modelled: not_modelled(fw, cluster, pod),
        ..Trace::empty(
            pod.key(),
            pod.priority,
            Outcome::Unschedulable {
                nominated_node: None,
            },
        )
    }
}
