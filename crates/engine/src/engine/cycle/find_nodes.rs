//! The node search (upstream: pkg/scheduler/schedule_one.go, `findNodesThatFitPod`,
//! `evaluateNominatedNode`, `findNodesThatPassFilters`, `numFeasibleNodesToFind`):
//! PreFilter, the nominated node's fast path, then Filter over the nodes searched,
//! with every verdict recorded.

use std::collections::BTreeSet;

use super::all_filters;
use super::options::{CycleOptions, Phase, PhaseGuard, Verdicts, par_map};
use super::pre_filter::run_pre_filter;
use crate::engine::framework::{Ctx, CycleState, Framework, NodeToStatus};
use crate::engine::status::{Code, Status};
use crate::engine::trace::{NodeVerdict, Outcome, Trace};
use crate::model::{Cluster, NodeInfo, Pod};

/// What the node search found (upstream `findNodesThatFitPod`'s feasible nodes and
/// diagnosis).
pub(super) struct Fit {
    /// Feasible nodes, by index in `cluster.nodes()`.
    pub(super) feasible: Vec<usize>,
    pub(super) statuses: NodeToStatus,
    /// PreFilter's rejection message; empty when PreFilter passed.
    pub(super) pre_filter_msg: String,
}

/// PreFilter, the nominated node's fast path, then Filter over the nodes searched
/// (upstream `findNodesThatFitPod`); the verdicts and the feasible nodes are written
/// to `trace`. `None` when the cycle ends here with an error (`trace.outcome` set).
#[allow(clippy::too_many_arguments)]
pub(super) fn find_nodes_that_fit_pod(
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
        let reuse = fresh && pre.complete;
        let want_first = pre.status.is_success() && next_start_node_index.is_none();
        derived = all_filters::record(fw, cx, pod, opts, state, trace, reuse, want_first);
    }
    let mut fit = Fit {
        feasible: Vec::new(),
        statuses: NodeToStatus {
            statuses: vec![None; nodes.len()],
            absent: Status::success(),
        },
        pre_filter_msg: String::new(),
    };
    match pre.status.code {
        Code::Success => {}
        _ if pre.status.is_rejected() => {
            fit.statuses.absent = pre.status.clone();
            fit.pre_filter_msg = pre.status.message();
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
    // Nodes the sampled search processed, ascending (None: every node, or not sampled).
    let mut processed: Option<Vec<usize>> = None;
    if fit.pre_filter_msg.is_empty()
        && !evaluate_nominated_node(fw, cx, state, pod, trace, &mut fit.feasible)?
    {
        let candidates = candidate_nodes(
            cluster,
            pre.subset.as_ref(),
            &pre.plugins_with_nodes,
            &mut fit.statuses,
        );
        processed = find_nodes_that_pass_filters(
            fw,
            cx,
            opts,
            state,
            pod,
            &candidates,
            next_start_node_index,
            &mut derived,
            &mut fit,
            trace,
        )?;
    }

    let only =
        if fit.pre_filter_msg.is_empty() && trace.nominated_node.as_ref().is_some_and(|n| n.1) {
            fit.feasible.first().map(|&i| vec![i])
        } else {
            processed
        };
    // The statuses are read again (PostFilter, the fit error) only when no node fits.
    let take = !fit.feasible.is_empty();
    if !(take && opts.verdicts == Verdicts::WhenNoneFits) {
        trace.filter = verdicts(nodes, &mut fit.statuses, &fit.feasible, only, take);
    }
    trace.feasible = fit
        .feasible
        .iter()
        .map(|&i| nodes[i].name().to_string())
        .collect();
    Some(fit)
}

/// The nominated node's fast path (upstream `evaluateNominatedNode`): `Some(true)`
/// when the pod fits there (then the only feasible node, pushed to `feasible`),
/// `Some(false)` when the search goes on, `None` when Filter failed with an error
/// there (the cycle ends, `trace.outcome` set).
fn evaluate_nominated_node(
    fw: &Framework,
    cx: &Ctx,
    state: &CycleState,
    pod: &Pod,
    trace: &mut Trace,
    feasible: &mut Vec<usize>,
) -> Option<bool> {
    let Some(nn) = pod.nominated_node_name.as_deref() else {
        return Some(false);
    };
    let Some(idx) = cx.cluster.node_position(nn) else {
        trace.nominated_node = Some((nn.to_string(), false));
        return Some(false);
    };
    let st = fw.run_filter_plugins_with_nominated_pods(cx, state, pod, &cx.cluster.nodes()[idx]);
    let passed = st.is_success();
    trace.nominated_node = Some((nn.to_string(), passed));
    if passed {
        feasible.push(idx);
        Some(true)
    } else if !st.is_rejected() {
        trace.outcome = Outcome::Error {
            message: st.message(),
        };
        None
    } else {
        Some(false)
    }
}

/// The nodes to search, by index: every node, or those in PreFilter's node subset
/// (the others are then rejected by the plugins that narrowed it).
fn candidate_nodes(
    cluster: &Cluster,
    subset: Option<&BTreeSet<String>>,
    plugins_with_nodes: &[String],
    statuses: &mut NodeToStatus,
) -> Vec<usize> {
    match subset {
        None => (0..cluster.nodes().len()).collect(),
        Some(names) => {
            let mut sorted: Vec<String> = plugins_with_nodes.to_vec();
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
    }
}

/// Filter over `candidates` in search order (upstream `findNodesThatPassFilters`):
/// feasible nodes into `fit.feasible`, rejections into `fit.statuses`. With
/// `next_start_node_index`, the search starts there, stops at `numNodesToFind`
/// feasible nodes, advances the index and returns the nodes it processed
/// (`Some(None)` without it). `None` when a filter failed with an error: the cycle
/// ends with `trace.outcome` and `trace.filter` set.
#[allow(clippy::too_many_arguments)]
fn find_nodes_that_pass_filters(
    fw: &Framework,
    cx: &Ctx,
    opts: &CycleOptions,
    state: &CycleState,
    pod: &Pod,
    candidates: &[usize],
    next_start_node_index: Option<&mut usize>,
    derived: &mut Option<Vec<Status>>,
    fit: &mut Fit,
    trace: &mut Trace,
) -> Option<Option<Vec<usize>>> {
    let nodes = cx.cluster.nodes();
    trace.num_nodes_to_find = num_feasible_nodes_to_find(fw, candidates.len());
    let n = candidates.len();
    let (start, limit) = match &next_start_node_index {
        Some(i) if n > 0 => (**i % n, trace.num_nodes_to_find),
        _ => (0, usize::MAX),
    };
    let mut visited: Vec<usize> = Vec::with_capacity(n.min(limit.saturating_add(64)));
    let workers = opts.workers(n);
    let filters = fw.active_filters(state);
    // Batches of nodes are filtered in parallel, then walked in search order
    // as the sequential search would: verdicts past the cut are dropped
    // (filters are pure, so evaluating them changed nothing).
    let mut k = 0;
    'search: while k < n {
        let batch = if limit == usize::MAX {
            n - k
        } else {
            // One success past `limit` ends the search.
            (limit + 1 - fit.feasible.len().min(limit)).max(16 * workers)
        }
        .min(n - k);
        let results = match derived {
            // Every node was filtered already: the same verdicts, not run twice
            // (moved out: the search visits each node once).
            Some(first) => (k..k + batch)
                .map(|j| std::mem::take(&mut first[candidates[(start + j) % n]]))
                .collect(),
            None => par_map(workers, opts.min_chunk(), batch, |j| {
                let idx = candidates[(start + k + j) % n];
                fw.run_filters_with_nominated_pods(&filters, cx, state, pod, &nodes[idx])
            }),
        };
        for (j, st) in results.into_iter().enumerate() {
            let idx = candidates[(start + k + j) % n];
            if st.is_success() {
                // Enough found: the search is cancelled and this node dropped.
                if fit.feasible.len() >= limit {
                    break 'search;
                }
                fit.feasible.push(idx);
            } else if st.is_rejected() {
                fit.statuses.statuses[idx] = Some(st);
            } else {
                // The error ends the search: the verdicts are those of the
                // nodes evaluated so far and the error itself, on its node.
                trace.outcome = Outcome::Error {
                    message: st.message(),
                };
                fit.statuses.statuses[idx] = Some(st);
                visited.push(idx);
                trace.filter = verdicts(
                    nodes,
                    &mut fit.statuses,
                    &fit.feasible,
                    Some(ascending(visited)),
                    true,
                );
                return None;
            }
            visited.push(idx);
        }
        k += batch;
    }
    let Some(i) = next_start_node_index else {
        return Some(None);
    };
    if !nodes.is_empty() {
        *i = (*i + visited.len()) % nodes.len();
    }
    Some(Some(ascending(visited)))
}

/// The nodes visited, in node order (as the verdicts list them).
fn ascending(mut visited: Vec<usize>) -> Vec<usize> {
    visited.sort_unstable();
    visited.dedup();
    visited
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
    only: Option<Vec<usize>>,
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

#[cfg(test)]
mod tests {
    use crate::engine::SchedulerConfig;
    use crate::engine::cycle::{CycleOptions, Verdicts, run_cycle};
    use crate::engine::trace::Outcome;
    use crate::model::testing::{cluster, pod, simple_node, simple_pod};

    /// `Verdicts::WhenNoneFits` drops the per-node list only from cycles where some
    /// node fits; the outcome is the same either way, and a pod that fits nowhere
    /// still gets every node's verdict (the scheduler reads its rejectors there).
    #[test]
    fn verdicts_when_none_fits_are_kept_only_where_no_node_fits() {
        let c = cluster(
            vec![
                simple_node("a-small", "1", "4Gi"),
                simple_node("b-big", "8", "16Gi"),
                simple_node("c-small", "1", "4Gi"),
            ],
            vec![],
        );
        let config = SchedulerConfig::defaults();
        let fits = pod(simple_pod("fits", "2", "1Gi", None));
        let too_big = pod(simple_pod("too-big", "16", "1Gi", None));
        // The same cycle with every verdict, then with verdicts only where none fits.
        let both = |pod| {
            let run = |verdicts| {
                let opts = CycleOptions {
                    verdicts,
                    ..Default::default()
                };
                run_cycle(&config.profiles[0], &c, pod, &opts)
            };
            (run(Verdicts::Always), run(Verdicts::WhenNoneFits))
        };
        let (always, lean) = both(&fits);
        assert_eq!(always.filter.len(), 3);
        assert!(lean.filter.is_empty(), "{:?}", lean.filter);
        assert_eq!(lean.outcome, always.outcome);
        assert_eq!(
            lean.outcome,
            Outcome::Scheduled {
                node: "b-big".into()
            }
        );
        assert_eq!(lean.feasible, always.feasible);

        let (always, lean) = both(&too_big);
        assert_eq!(lean.filter, always.filter);
        assert_eq!(lean.filter.len(), 3);
        assert!(
            lean.filter
                .iter()
                .all(|v| v.plugin.as_deref() == Some("NodeResourcesFit")),
            "{:?}",
            lean.filter
        );
        assert_eq!(lean.fit_error, always.fit_error);
    }
}
