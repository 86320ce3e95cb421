//! One scheduling cycle of one pod (`schedulingCycle` + `schedulePod`), recorded in a
//! [`Trace`] rather than acted on.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::fit_error::fit_error_message;
use super::framework::{
    Ctx, CycleState, Framework, MAX_NODE_SCORE, MIN_NODE_SCORE, NodeScore, NodeToStatus,
};
use super::status::{Code, Status};
use crate::engine::trace::*;
use crate::model::{Cluster, NodeInfo, Pod, Sym};

mod options;
pub use options::{CycleOptions, Phase, PhaseClock, PhaseTimer, in_workers};
use options::{PhaseGuard, par_chunks, par_map};

/// Everything a cycle produced besides the trace: the state and feasible set, for the
/// binding half to continue from.
pub struct CycleOutput {
    pub trace: Trace,
    pub state: CycleState,
}

pub fn run_cycle(fw: &Framework, cluster: &Cluster, pod: &Pod, opts: &CycleOptions) -> Trace {
    run_cycle_with_state(fw, cluster, pod, opts).trace
}

pub fn run_cycle_with_state(
    fw: &Framework,
    cluster: &Cluster,
    pod: &Pod,
    opts: &CycleOptions,
) -> CycleOutput {
    in_workers(opts.workers(cluster.nodes().len()), || {
        run_and_bind(fw, cluster, pod, opts)
    })
}

/// [`run_cycle_with_state`] on the calling thread.
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

/// What the node search found (upstream `findNodesThatFitPod`'s feasible nodes and
/// diagnosis).
struct Fit {
    /// Feasible nodes, by index in `cluster.nodes()`.
    feasible: Vec<usize>,
    statuses: NodeToStatus,
    /// PreFilter's rejection message; empty when PreFilter passed.
    pre_filter_msg: String,
}

/// PreFilter, the nominated node's fast path, then Filter over the nodes searched
/// (upstream `findNodesThatFitPod`); the verdicts and the feasible nodes are written
/// to `trace`. `None` when the cycle ends here with an error (`trace.outcome` set).
#[allow(clippy::too_many_arguments)]
fn find_nodes_that_fit_pod(
    fw: &Framework,
    cx: &Ctx,
    opts: &CycleOptions,
    cluster: &Cluster,
    state: &mut CycleState,
    pod: &Pod,
    trace: &mut Trace,
    next_start_node_index: Option<&mut usize>,
) -> Option<Fit> {
    let nodes = cluster.nodes();
    // PreFilter.
    let fresh = state.is_empty();
    let pre = opts.timed(Phase::PreFilter, || run_pre_filter(fw, cx, state, pod));
    trace.pre_filter = pre.trace;
    // Normal mode's verdict on each node, when all-filters mode's pass gave them.
    let mut derived: Option<Vec<Status>> = None;
    if opts.all_filters {
        // Every PreFilter ran, on a state that started empty: that is the state and
        // the statuses all-filters mode computes on its own, so they are reused.
        trace.filter_all = Some(if fresh && pre.complete {
            let own = trace
                .pre_filter
                .plugins
                .iter()
                .map(|r| {
                    let st = Status::new(r.code, r.reasons.iter().map(String::as_str));
                    (r.plugin.to_string(), st)
                })
                .collect();
            let want_first = pre.status.is_success() && next_start_node_index.is_none();
            let (all, first) = all_filters_on(fw, cx, pod, opts, state, &own, want_first);
            derived = first;
            all
        } else {
            all_filters(fw, cx, pod, opts)
        });
    }
    let mut statuses = NodeToStatus {
        statuses: vec![None; nodes.len()],
        absent: Status::success(),
    };
    let mut pre_filter_msg = String::new();
    match pre.status.code {
        Code::Success => {}
        _ if pre.status.is_rejected() => {
            statuses.absent = pre.status.clone();
            pre_filter_msg = pre.status.message();
        }
        _ => {
            trace.outcome = Outcome::Error {
                message: pre.status.message(),
            };
            return None;
        }
    }

    let _filter_timer = opts
        .timer
        .as_ref()
        .map(|t| PhaseGuard::start(t, Phase::Filter));
    let mut feasible: Vec<usize> = Vec::new();
    // Nodes the sampled search processed (None: every node, or not sampled).
    let mut processed: Option<BTreeSet<usize>> = None;
    if pre_filter_msg.is_empty() {
        // Nominated node fast path.
        let mut took_nominated = false;
        if let Some(nn) = pod.nominated_node_name.as_deref()
            && let Some(idx) = cluster.node_position(nn)
        {
            let st = fw.run_filter_plugins_with_nominated_pods(cx, state, pod, &nodes[idx]);
            let passed = st.is_success();
            trace.nominated_node = Some((nn.to_string(), passed));
            if passed {
                feasible.push(idx);
                took_nominated = true;
            } else if !st.is_rejected() {
                trace.outcome = Outcome::Error {
                    message: st.message(),
                };
                return None;
            }
        } else if let Some(nn) = pod.nominated_node_name.as_deref() {
            trace.nominated_node = Some((nn.to_string(), false));
        }

        if !took_nominated {
            let candidates: Vec<usize> = match &pre.subset {
                None => (0..nodes.len()).collect(),
                Some(names) => {
                    let mut sorted: Vec<String> = pre.plugins_with_nodes.clone();
                    sorted.sort();
                    statuses.absent = Status::unresolvable(format!(
                        "node(s) didn't satisfy plugin(s) [{}]",
                        sorted.join(" ")
                    ));
                    names
                        .iter()
                        .filter_map(|n| cluster.node_position(n))
                        .collect::<BTreeSet<usize>>()
                        .into_iter()
                        .collect()
                }
            };
            trace.num_nodes_to_find = num_feasible_nodes_to_find(fw, candidates.len());
            let n = candidates.len();
            let (start, limit) = match &next_start_node_index {
                Some(i) if n > 0 => (**i % n, trace.num_nodes_to_find),
                _ => (0, usize::MAX),
            };
            let mut visited: Vec<usize> = Vec::with_capacity(n.min(limit.saturating_add(64)));
            let workers = opts.workers(n);
            let shared: &CycleState = state;
            let filters = fw.active_filters(shared);
            // Batches of nodes are filtered in parallel, then walked in search order
            // as the sequential search would: verdicts past the cut are dropped
            // (filters are pure, so evaluating them changed nothing).
            let mut k = 0;
            'search: while k < n {
                let batch = if limit == usize::MAX {
                    n - k
                } else {
                    // One success past `limit` ends the search.
                    (limit + 1 - feasible.len().min(limit)).max(16 * workers)
                }
                .min(n - k);
                let results = match &mut derived {
                    // Every node was filtered already: the same verdicts, not run twice
                    // (moved out: the search visits each node once).
                    Some(first) => (k..k + batch)
                        .map(|j| std::mem::take(&mut first[candidates[(start + j) % n]]))
                        .collect(),
                    None => par_map(workers, opts.min_chunk(), batch, |j| {
                        let idx = candidates[(start + k + j) % n];
                        fw.run_filters_with_nominated_pods(&filters, cx, shared, pod, &nodes[idx])
                    }),
                };
                for (j, st) in results.into_iter().enumerate() {
                    let idx = candidates[(start + k + j) % n];
                    if st.is_success() {
                        // Enough found: the search is cancelled and this node dropped.
                        if feasible.len() >= limit {
                            break 'search;
                        }
                        feasible.push(idx);
                    } else if st.is_rejected() {
                        statuses.statuses[idx] = Some(st);
                    } else {
                        // The error ends the search: the verdicts are those of the
                        // nodes evaluated so far and the error itself, on its node.
                        trace.outcome = Outcome::Error {
                            message: st.message(),
                        };
                        statuses.statuses[idx] = Some(st);
                        visited.push(idx);
                        trace.filter = verdicts(
                            nodes,
                            &mut statuses,
                            &feasible,
                            Some(visited.into_iter().collect()),
                            true,
                        );
                        return None;
                    }
                    visited.push(idx);
                }
                k += batch;
            }
            if let Some(i) = next_start_node_index {
                if !nodes.is_empty() {
                    *i = (*i + visited.len()) % nodes.len();
                }
                processed = Some(visited.into_iter().collect());
            }
        }
    }

    let only = if pre_filter_msg.is_empty() && trace.nominated_node.as_ref().is_some_and(|n| n.1) {
        feasible.first().map(|&i| BTreeSet::from([i]))
    } else {
        processed
    };
    // The statuses are read again (PostFilter, the fit error) only when no node fits.
    let take = !feasible.is_empty();
    trace.filter = verdicts(nodes, &mut statuses, &feasible, only, take);
    trace.feasible = feasible
        .iter()
        .map(|&i| nodes[i].name().to_string())
        .collect();
    Some(Fit {
        feasible,
        statuses,
        pre_filter_msg,
    })
}

/// PreScore, Score and NormalizeScore over the feasible nodes (upstream
/// `prioritizeNodes`), totals written to `trace`. False when a plugin failed (the
/// cycle ends with `trace.outcome` an error).
#[allow(clippy::too_many_arguments)]
fn prioritize_nodes(
    fw: &Framework,
    cx: &Ctx,
    opts: &CycleOptions,
    state: &mut CycleState,
    pod: &Pod,
    nodes: &[NodeInfo],
    feasible: &[usize],
    trace: &mut Trace,
) -> bool {
    let feasible_infos: Vec<&NodeInfo> = feasible.iter().map(|&i| &nodes[i]).collect();
    match prioritize(fw, cx, opts, state, pod, feasible, &feasible_infos, trace) {
        Ok(totals) => trace.totals = totals,
        Err(message) => {
            trace.upstream_behaviour = fw
                .score
                .iter()
                .filter_map(|w| {
                    w.plugin
                        .upstream_behaviour(&message)
                        .map(|what| NotModelled {
                            plugin: w.plugin.name().to_string(),
                            what,
                        })
                })
                .collect();
            trace.outcome = Outcome::Error { message };
            return false;
        }
    }
    true
}

/// The best nodes and the one chosen among them (upstream `selectHost`).
fn choose_host(trace: &mut Trace) {
    let max = trace.totals.iter().copied().max().unwrap_or(0);
    let mut best: Vec<String> = trace
        .feasible
        .iter()
        .zip(&trace.totals)
        .filter(|(_, t)| **t == max)
        .map(|(n, _)| n.clone())
        .collect();
    best.sort();
    trace.best_nodes = best;
    let host = select_host(&trace.totals).map(|i| trace.feasible[i].clone());
    trace.selected_node = host.clone();
    if let Some(node) = host {
        trace.outcome = Outcome::Scheduled { node };
    }
}

/// Plugins that read a kind a live source may be refused (RBAC), and what they do
/// without it.
const OPTIONAL_KIND_READERS: &[(&str, &str, &str)] = &[
    (
        "VolumeAttachment",
        "NodeVolumeLimits",
        "attached volumes counted without VolumeAttachments",
    ),
    (
        "CSIStorageCapacity",
        "VolumeBinding",
        "storage capacity checked without CSIStorageCapacities",
    ),
    ("PodGroup", "Coscheduling", "gangs formed without PodGroups"),
    (
        "DeviceClass",
        "DynamicResources",
        "claims allocated without DeviceClasses",
    ),
    (
        "ResourceSlice",
        "DynamicResources",
        "claims allocated without ResourceSlices",
    ),
    (
        "ResourceClaim",
        "DynamicResources",
        "claims resolved without ResourceClaims",
    ),
    (
        "ResourceClaimTemplate",
        "DynamicResources",
        "claims resolved without ResourceClaimTemplates",
    ),
];

fn not_modelled(fw: &Framework, cluster: &Cluster, pod: &Pod) -> Vec<NotModelled> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    let all = fw
        .pre_enqueue
        .iter()
        .chain(&fw.queue_sort)
        .chain(&fw.pre_filter)
        .chain(&fw.filter)
        .chain(&fw.post_filter)
        .chain(&fw.pre_score)
        .chain(fw.score.iter().map(|w| &w.plugin))
        .chain(&fw.reserve)
        .chain(&fw.permit)
        .chain(&fw.pre_bind)
        .chain(&fw.bind)
        .chain(&fw.post_bind);
    for p in all {
        if !seen.insert(p.name().to_string()) {
            continue;
        }
        if let Some(what) = p.not_modelled(pod) {
            out.push(NotModelled {
                plugin: p.name().to_string(),
                what,
            });
        }
        for (kind, plugin, what) in OPTIONAL_KIND_READERS {
            if p.name() == *plugin
                && let Some(why) = cluster.unreadable_kinds.get(*kind)
            {
                out.push(NotModelled {
                    plugin: plugin.to_string(),
                    what: format!("{what} (not readable: {why})"),
                });
            }
        }
    }
    out.sort_by(|a, b| a.plugin.cmp(&b.plugin));
    out
}

struct PreFilterOutcome {
    /// Every PreFilter plugin ran (none stopped the phase).
    complete: bool,
    status: Status,
    subset: Option<BTreeSet<String>>,
    plugins_with_nodes: Vec<String>,
    trace: PreFilterTrace,
}

/// `RunPreFilterPlugins`: Skip is remembered, UU stops, Unschedulable is remembered
/// (the last one wins) and the loop goes on, node subsets are intersected.
fn run_pre_filter(fw: &Framework, cx: &Ctx, state: &mut CycleState, pod: &Pod) -> PreFilterOutcome {
    let mut out = PreFilterOutcome {
        complete: false,
        status: Status::success(),
        subset: None,
        plugins_with_nodes: Vec::new(),
        trace: PreFilterTrace::default(),
    };
    let finish = |mut out: PreFilterOutcome, st: Status| {
        out.trace.code = Some(st.code);
        out.trace.plugin = st.plugin.clone();
        out.trace.reasons = if st.is_success() {
            Vec::new()
        } else {
            st.reasons.clone()
        };
        out.trace.node_subset = out.subset.as_ref().map(|s| s.iter().cloned().collect());
        out.status = st;
        out
    };
    let mut remembered: Option<Status> = None;
    for p in &fw.pre_filter {
        let Some(pf) = p.as_pre_filter() else {
            continue;
        };
        let (result, st) = pf.pre_filter(cx, state, pod);
        out.trace.plugins.push(PluginResult::new(p.name(), &st));
        if st.is_skip() {
            state.skip_filter_plugins.insert(p.name().to_string());
            continue;
        }
        if !st.is_success() {
            let st = st.with_plugin(p.name());
            match st.code {
                Code::UnschedulableAndUnresolvable => return finish(out, st),
                Code::Unschedulable => {
                    remembered = Some(st);
                    continue;
                }
                _ => {
                    let e = Status::error(format!(
                        "running PreFilter plugin {:?}: {}",
                        p.name(),
                        st.message()
                    ))
                    .with_plugin(p.name());
                    return finish(out, e);
                }
            }
        }
        if let Some(names) = result {
            out.plugins_with_nodes.push(p.name().to_string());
            out.trace
                .subsets
                .push((p.name().to_string(), names.iter().cloned().collect()));
            out.subset = Some(match out.subset.take() {
                None => names,
                Some(prev) => prev.intersection(&names).cloned().collect(),
            });
            if out.subset.as_ref().is_some_and(|s| s.is_empty()) {
                let msg = if out.plugins_with_nodes.len() == 1 {
                    format!(
                        "node(s) didn't satisfy plugin {}",
                        out.plugins_with_nodes[0]
                    )
                } else {
                    let mut sorted = out.plugins_with_nodes.clone();
                    sorted.sort();
                    format!(
                        "node(s) didn't satisfy plugin(s) [{}] simultaneously",
                        sorted.join(" ")
                    )
                };
                return finish(out, Status::unresolvable(msg));
            }
        }
    }
    let st = remembered.unwrap_or_default();
    out.complete = true;
    finish(out, st)
}

/// `numFeasibleNodesToFind` with no extenders.
fn num_feasible_nodes_to_find(fw: &Framework, n: usize) -> usize {
    const MIN_FEASIBLE_NODES_TO_FIND: usize = 100;
    const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: i64 = 5;
    if fw.score.is_empty() {
        return n.min(1);
    }
    if n < MIN_FEASIBLE_NODES_TO_FIND {
        return n;
    }
    let mut pct = i64::from(fw.percentage_of_nodes_to_score.unwrap_or(0));
    if pct == 0 {
        pct = 50 - n as i64 / 125;
        if pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND {
            pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND;
        }
    }
    let k = (n as i64 * pct / 100) as usize;
    k.max(MIN_FEASIBLE_NODES_TO_FIND)
}

/// Each node's verdict for the trace. With `take`, the rejections' plugin and reasons
/// are moved out of `statuses` rather than copied (for a caller that reads them no
/// more).
fn verdicts(
    nodes: &[NodeInfo],
    statuses: &mut NodeToStatus,
    feasible: &[usize],
    only: Option<BTreeSet<usize>>,
    take: bool,
) -> Vec<NodeVerdict> {
    // Indexed like `nodes`: a flag per node beats a tree look-up per node.
    let mut is_feasible = vec![false; nodes.len()];
    for &i in feasible {
        is_feasible[i] = true;
    }
    let mut make = |i: usize, n: &NodeInfo| {
        if is_feasible[i] {
            NodeVerdict {
                node: n.node.name.clone(),
                feasible: true,
                plugin: None,
                code: Code::Success,
                reasons: Vec::new(),
            }
        } else if take && let Some(Some(st)) = statuses.statuses.get_mut(i) {
            NodeVerdict {
                node: n.node.name.clone(),
                feasible: false,
                plugin: st.plugin.take(),
                code: st.code,
                reasons: std::mem::take(&mut st.reasons),
            }
        } else {
            let st = statuses.get(i);
            NodeVerdict {
                node: n.node.name.clone(),
                feasible: false,
                plugin: st.plugin.clone(),
                code: st.code,
                reasons: st.reasons.clone(),
            }
        }
    };
    match only {
        Some(set) => set.into_iter().map(|i| make(i, &nodes[i])).collect(),
        None => nodes.iter().enumerate().map(|(i, n)| make(i, n)).collect(),
    }
}

/// All-filters mode: every PreFilter runs on its own (a rejection does not stop the
/// others), then every filter plugin runs on every node.
fn all_filters(fw: &Framework, cx: &Ctx, pod: &Pod, opts: &CycleOptions) -> Vec<NodeAllVerdicts> {
    let pre_filter_timer = opts
        .timer
        .as_ref()
        .map(|t| PhaseGuard::start(t, Phase::PreFilter));
    let mut state = CycleState::default();
    let mut own: std::collections::BTreeMap<String, Status> = Default::default();
    for p in &fw.pre_filter {
        let Some(pf) = p.as_pre_filter() else {
            continue;
        };
        let (_, st) = pf.pre_filter(cx, &mut state, pod);
        if st.is_skip() {
            state.skip_filter_plugins.insert(p.name().to_string());
        }
        own.insert(p.name().to_string(), st);
    }
    drop(pre_filter_timer);
    all_filters_on(fw, cx, pod, opts, &state, &own, false).0
}

/// All-filters mode's Filter half: every filter plugin on every node, given the
/// PreFilter state and each PreFilter plugin's own status. With `want_first` (PreFilter
/// passed, so normal mode filters with this state), also normal mode's verdict on
/// each node (`run_filters_with_nominated_pods`), in node order, so that Filter does
/// not run twice.
fn all_filters_on(
    fw: &Framework,
    cx: &Ctx,
    pod: &Pod,
    opts: &CycleOptions,
    state: &CycleState,
    own: &std::collections::BTreeMap<String, Status>,
    want_first: bool,
) -> (Vec<NodeAllVerdicts>, Option<Vec<Status>>) {
    let _filter_timer = opts
        .timer
        .as_ref()
        .map(|t| PhaseGuard::start(t, Phase::Filter));
    let nodes = cx.cluster.nodes();
    // Each filter plugin with the answer its PreFilter fixed for every node (Skip or
    // a rejection), looked up once rather than per node.
    let plugins: Vec<(Sym, &dyn super::framework::FilterPlugin, Option<Status>)> = fw
        .filter
        .iter()
        .filter_map(|p| {
            let f = p.as_filter()?;
            let fixed = match own.get(p.name()) {
                Some(s) if s.is_skip() => Some(Status::skip()),
                Some(s) if !s.is_success() => Some(s.clone()),
                _ => None,
            };
            Some((Sym::new(p.name()), f, fixed))
        })
        .collect();
    let active = fw.active_filters(state);
    // Per chunk: the nodes where some plugin did not pass, with every plugin's answer
    // there (most nodes pass everywhere and share one row below), and normal mode's
    // verdicts. The workers return bare statuses; the trace is built on the calling
    // thread (memory one thread allocates and another frees is slow to reuse with
    // glibc's allocator, which the library's users may have).
    let chunks = par_chunks(
        opts.workers(nodes.len()),
        opts.min_chunk(),
        nodes.len(),
        |r| {
            // A chunk's distinct rows, and which one each node has: the nodes one plugin
            // rejects for one reason (most rejected nodes) share a row.
            let mut distinct: Vec<Vec<Option<Status>>> = Vec::new();
            let mut rows: Vec<(usize, usize)> = Vec::new();
            let mut firsts: Vec<Status> = Vec::with_capacity(if want_first { r.len() } else { 0 });
            let mut own: Vec<Option<Status>> = Vec::with_capacity(plugins.len());
            for (i, node) in nodes[r.clone()].iter().enumerate() {
                // Nominated pods of higher or equal priority count, as in normal mode.
                let nominated = super::framework::nominated_pods_for(cx.cluster, pod, node.name());
                let with_nominated = if nominated.is_empty() {
                    None
                } else {
                    let mut n = node.clone();
                    let mut s = state.clone();
                    for np in &nominated {
                        n.add_pod((*np).clone());
                        fw.run_pre_filter_add_pod(cx, &mut s, pod, np, &n);
                    }
                    Some((n, s))
                };
                own.clear();
                own.extend(plugins.iter().map(|(_, f, fixed)| {
                    // `None`: the status PreFilter fixed for every node.
                    fixed.is_none().then(|| {
                        let first = with_nominated
                            .as_ref()
                            .map(|(n, s)| f.filter(cx, s, pod, n))
                            .filter(|st| !st.is_success());
                        first.unwrap_or_else(|| f.filter(cx, state, pod, node))
                    })
                }));
                if own.iter().flatten().any(|st| !st.is_success()) {
                    rows.push((r.start + i, row_id(&mut distinct, &own)));
                }
                if want_first {
                    firsts.push(if with_nominated.is_some() {
                        // A plugin's answer above mixes the two passes; normal mode's
                        // is the first rejection of the first pass that has one.
                        fw.run_filters_with_nominated_pods(&active, cx, state, pod, node)
                    } else {
                        first_rejection(&plugins, &mut own)
                    });
                }
            }
            (distinct, rows, firsts)
        },
    );
    // A node's answers, moved out of its statuses (the fixed ones are shared).
    let row = |own: Vec<Option<Status>>| -> Arc<[PluginResult]> {
        plugins
            .iter()
            .zip(own)
            .filter_map(|((name, _, fixed), own)| match own {
                Some(st) => Some(PluginResult {
                    plugin: name.clone(),
                    code: st.code,
                    reasons: st.reasons,
                }),
                None => Some(PluginResult::of(name.clone(), fixed.as_ref()?)),
            })
            .collect()
    };
    let passing = row(plugins
        .iter()
        .map(|(_, _, fixed)| fixed.is_none().then(Status::success))
        .collect());
    // Rows are shared across chunks too: each chunk's distinct rows are matched
    // against the recent ones of the chunks before it, as nodes are within a chunk.
    let mut distinct = Vec::new();
    let mut rows = Vec::new();
    let mut firsts = Vec::with_capacity(if want_first { nodes.len() } else { 0 });
    for (chunk_rows, at, first) in chunks {
        let ids: Vec<usize> = chunk_rows
            .iter()
            .map(|own| row_id(&mut distinct, own))
            .collect();
        rows.extend(at.into_iter().map(|(i, id)| (i, ids[id])));
        firsts.extend(first);
    }
    let shared: Vec<Arc<[PluginResult]>> = distinct.into_iter().map(row).collect();
    let mut rows = rows
        .into_iter()
        .map(|(i, id)| (i, shared[id].clone()))
        .peekable();
    let all = nodes
        .iter()
        .enumerate()
        .map(|(i, node)| NodeAllVerdicts {
            node: node.node.name.clone(),
            results: match rows.next_if(|(at, _)| *at == i) {
                Some((_, shared)) => shared,
                None => passing.clone(),
            },
        })
        .collect();
    (all, want_first.then_some(firsts))
}

/// The index of `own` among `distinct` rows (a chunk's, then all chunks'), added
/// when it is new. Only the latest few are compared: rows repeat in runs, and a
/// cluster where every node has its own row must not cost a search per node.
fn row_id(distinct: &mut Vec<Vec<Option<Status>>>, own: &[Option<Status>]) -> usize {
    const RECENT: usize = 8;
    let from = distinct.len().saturating_sub(RECENT);
    if let Some(k) = distinct[from..].iter().rposition(|d| d.as_slice() == own) {
        return from + k;
    }
    distinct.push(own.to_vec());
    distinct.len() - 1
}

/// Normal mode's verdict on a node from every plugin's own answer there (no nominated
/// pods): `RunFilterPlugins` over the active filters (those PreFilter did not skip),
/// read off rather than run again.
/// The rejection is moved out of `own`, which the caller reads no more.
fn first_rejection(
    plugins: &[(Sym, &dyn super::framework::FilterPlugin, Option<Status>)],
    own: &mut [Option<Status>],
) -> Status {
    for ((name, _, _), st) in plugins.iter().zip(own) {
        // `None`: skipped by PreFilter, not an active filter.
        if let Some(st) = st
            && !st.is_success()
        {
            return super::framework::filter_failure(name, std::mem::take(st));
        }
    }
    Status::success()
}

/// `RunPostFilterPlugins`: the first Success or UU wins, Errors stop, rejections
/// collect their reasons.
fn run_post_filter(
    fw: &Framework,
    cx: &Ctx,
    state: &CycleState,
    pod: &Pod,
    statuses: &NodeToStatus,
) -> PostFilterTrace {
    let mut trace = PostFilterTrace::default();
    let mut reasons: Vec<String> = Vec::new();
    let mut last_result = None;
    for p in &fw.post_filter {
        let Some(pf) = p.as_post_filter() else {
            continue;
        };
        let (result, st) = pf.post_filter(fw, cx, state, pod, statuses);
        trace.plugins.push(PluginResult::new(p.name(), &st));
        match st.code {
            Code::Success | Code::UnschedulableAndUnresolvable => {
                trace.code = Some(st.code);
                trace.message = st.message();
                if let Some(r) = result {
                    trace.nominated_node = r.nominated_node;
                    trace.victims = r.victims;
                }
                return trace;
            }
            Code::Unschedulable | Code::Pending => {
                if let Some(r) = result
                    && r.nominated_node.is_some()
                {
                    last_result = Some(r);
                }
                reasons.extend(st.reasons);
            }
            _ => {
                trace.code = Some(Code::Error);
                trace.message = st.message();
                return trace;
            }
        }
    }
    trace.code = Some(Code::Unschedulable);
    trace.message = reasons.join(", ");
    if let Some(r) = last_result {
        trace.nominated_node = r.nominated_node;
        trace.victims = r.victims;
    }
    trace
}

/// PreScore, Score, NormalizeScore and weights; fills `trace.pre_score` and
/// `trace.scores`, returns totals over the feasible nodes.
#[allow(clippy::too_many_arguments)]
fn prioritize(
    fw: &Framework,
    cx: &Ctx,
    opts: &CycleOptions,
    state: &mut CycleState,
    pod: &Pod,
    feasible: &[usize],
    infos: &[&NodeInfo],
    trace: &mut Trace,
) -> Result<Vec<i64>, String> {
    if fw.score.is_empty() {
        return Ok(vec![1; feasible.len()]);
    }
    for p in &fw.pre_score {
        let Some(ps) = p.as_pre_score() else { continue };
        let st = ps.pre_score(cx, state, pod, infos);
        trace.pre_score.push(PluginResult::new(p.name(), &st));
        if st.is_skip() {
            state.skip_score_plugins.insert(p.name().to_string());
        } else if !st.is_success() {
            return Err(format!(
                "running PreScore plugin {:?}: {}",
                p.name(),
                st.message()
            ));
        }
    }
    let mut totals = vec![0i64; feasible.len()];
    // Every Score call of every plugin first, over node chunks in parallel (Score
    // only reads the state); then plugin by plugin in order, as upstream reports
    // them: the first failure (plugin order, then node order) ends the cycle.
    let scorers: Vec<(&str, i64, &dyn super::framework::ScorePlugin)> = fw
        .score
        .iter()
        .filter(|wp| !state.skip_score_plugins.contains(wp.plugin.name()))
        .filter_map(|wp| Some((wp.plugin.name(), wp.weight, wp.plugin.as_score()?)))
        .collect();
    let shared: &CycleState = state;
    let chunks = par_chunks(
        opts.workers(feasible.len()),
        opts.min_chunk(),
        feasible.len(),
        |r| {
            scorers
                .iter()
                .map(|(_, _, sp)| {
                    r.clone()
                        .map(|k| sp.score(cx, shared, pod, infos[k]))
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        },
    );
    let mut chunks: Vec<std::vec::IntoIter<Vec<(i64, Status)>>> =
        chunks.into_iter().map(Vec::into_iter).collect();
    for &(name, weight, sp) in &scorers {
        let mut scores: Vec<NodeScore> = Vec::with_capacity(feasible.len());
        let mut idxs = feasible.iter();
        for chunk in &mut chunks {
            for (s, st) in chunk.next().unwrap_or_default() {
                if !st.is_success() {
                    return Err(format!(
                        "running Score plugins: plugin {name:?} failed with: {}",
                        st.message()
                    ));
                }
                scores.push(NodeScore {
                    node: idxs.next().copied().unwrap_or_default(),
                    score: s,
                });
            }
        }
        let raw: Vec<i64> = scores.iter().map(|s| s.score).collect();
        if sp.has_normalize() {
            let st = sp.normalize_score(cx, state, pod, &mut scores);
            if !st.is_success() {
                return Err(format!(
                    "running Normalize on Score plugins: plugin {name:?} failed with: {}",
                    st.message()
                ));
            }
        }
        for s in &scores {
            if !(MIN_NODE_SCORE..=MAX_NODE_SCORE).contains(&s.score) {
                return Err(format!(
                    "applying score defaultWeights on Score plugins: plugin {name:?} returns an invalid score {}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
                    s.score
                ));
            }
        }
        let normalized: Vec<i64> = scores.iter().map(|s| s.score).collect();
        for (t, s) in totals.iter_mut().zip(&normalized) {
            *t += s * weight;
        }
        trace.scores.push(PluginScores {
            plugin: name.to_string(),
            weight,
            raw,
            normalized,
        });
    }
    Ok(totals)
}

/// kube-scheduler's host selection: heapify the scored list (feasible order) and take
/// the root. Ties go to whichever the heap puts on top; with no extenders the
/// tie-break value is 0 for every node.
pub fn select_host(totals: &[i64]) -> Option<usize> {
    if totals.is_empty() {
        return None;
    }
    let mut heap: Vec<usize> = (0..totals.len()).collect();
    let before = |a: usize, b: usize| totals[a] > totals[b];
    let len = heap.len();
    for start in (0..len / 2).rev() {
        let mut i = start;
        loop {
            let l = 2 * i + 1;
            if l >= len {
                break;
            }
            let mut c = l;
            if l + 1 < len && before(heap[l + 1], heap[l]) {
                c = l + 1;
            }
            if !before(heap[c], heap[i]) {
                break;
            }
            heap.swap(i, c);
            i = c;
        }
    }
    Some(heap[0])
}

/// Reserve → Permit → PreBind → Bind → PostBind on the selected node, as a dry run,
/// through the same binding-half functions the scheduler loop uses.
fn dry_run_binding(
    fw: &Framework,
    cx: &Ctx,
    state: &mut CycleState,
    pod: &Pod,
    host: &str,
) -> Vec<PhaseTrace> {
    use super::binding::{self, PermitOutcome};
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
fn binding_outcome(phases: &[PhaseTrace], host: &str) -> (Outcome, Option<String>) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_selection_matches_go_container_heap() {
        // [5, 9a, 9b] → 9a; [9a, 5, 9b] → 9a (upstream: schedule_one.go, selectHost).
        assert_eq!(select_host(&[5, 9, 9]), Some(1));
        assert_eq!(select_host(&[9, 5, 9]), Some(0));
        assert_eq!(select_host(&[1, 2, 3, 4, 5]), Some(4));
        assert_eq!(select_host(&[]), None);
    }

    fn rejected(reason: &str) -> Vec<Option<Status>> {
        vec![
            None,
            Some(Status::success()),
            Some(Status::unresolvable(reason)),
        ]
    }

    #[test]
    fn equal_rows_get_one_id_and_new_ones_their_own() {
        let mut distinct = Vec::new();
        assert_eq!(row_id(&mut distinct, &rejected("a")), 0);
        assert_eq!(row_id(&mut distinct, &rejected("b")), 1);
        assert_eq!(row_id(&mut distinct, &rejected("a")), 0);
        assert_eq!(row_id(&mut distinct, &rejected("b")), 1);
        assert_eq!(distinct, vec![rejected("a"), rejected("b")]);
        // Past the recent few, an old row is stored again: the answer is the same,
        // only not shared.
        for k in 0..8 {
            row_id(&mut distinct, &rejected(&k.to_string()));
        }
        assert_eq!(row_id(&mut distinct, &rejected("a")), 10);
        assert_eq!(distinct[10], rejected("a"));
    }

    /// Nodes rejected alike share one row of answers; every node still reads its own
    /// plugins' answers, in parallel as in sequence.
    #[test]
    fn all_filters_rows_are_shared_by_nodes_rejected_alike() {
        use crate::model::testing::{cluster, pod};
        use serde_json::json;
        let node = |name: &str, cordoned: bool, cpu: &str| {
            json!({"metadata": {"name": name}, "spec": {"unschedulable": cordoned},
                   "status": {"allocatable": {"cpu": cpu, "memory": "1Gi", "pods": "10"}}})
        };
        let nodes = vec![
            node("a-cordoned", true, "4"),
            node("b-open", false, "4"),
            node("c-cordoned", true, "4"),
            node("d-small", false, "1"),
            node("e-cordoned", true, "4"),
            node("f-small", false, "1"),
        ];
        let c = cluster(nodes, vec![]);
        let p = pod(json!({"metadata": {"name": "p"}, "spec": {"containers": [
            {"name": "c", "resources": {"requests": {"cpu": "2"}}}]}}));
        let config = crate::engine::SchedulerConfig::defaults();
        for parallelism in [1, 2] {
            let opts = CycleOptions {
                all_filters: true,
                parallelism,
                min_nodes_per_worker: 1,
                ..Default::default()
            };
            let trace = run_cycle(&config.profiles[0], &c, &p, &opts);
            let all = trace.filter_all.expect("all-filters rows");
            let answer = |i: usize, plugin: &str| {
                let r = all[i].results.iter().find(|r| r.plugin.as_str() == plugin);
                r.map(|r| (r.code, r.reasons.clone()))
                    .expect("plugin answered")
            };
            for (i, cordoned, small) in [
                (0, true, false),
                (1, false, false),
                (2, true, false),
                (3, false, true),
                (4, true, false),
                (5, false, true),
            ] {
                let unsched = answer(i, "NodeUnschedulable");
                assert_eq!(unsched.0 != Code::Success, cordoned, "node {i}");
                let fit = answer(i, "NodeResourcesFit");
                assert_eq!(fit.0 != Code::Success, small, "node {i}");
            }
            assert_eq!(
                answer(0, "NodeUnschedulable").1,
                vec!["node(s) were unschedulable"]
            );
            assert_eq!(answer(3, "NodeResourcesFit").1, vec!["Insufficient cpu"]);
            let shared = |a: usize, b: usize| Arc::ptr_eq(&all[a].results, &all[b].results);
            assert!(shared(0, 4), "cordoned nodes share a row ({parallelism})");
            assert!(shared(3, 5), "small nodes share a row ({parallelism})");
            assert!(!shared(0, 3) && !shared(0, 1) && !shared(1, 3));
            // Normal mode's verdicts come from the same pass.
            let plugin = |i: usize| trace.filter[i].plugin.clone();
            assert_eq!(plugin(0).as_deref(), Some("NodeUnschedulable"));
            assert_eq!(plugin(1), None);
            assert_eq!(plugin(3).as_deref(), Some("NodeResourcesFit"));
            assert_eq!(trace.filter[3].reasons, vec!["Insufficient cpu"]);
        }
    }
}
