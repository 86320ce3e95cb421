//! All-filters mode (`explain --all-filters`): every PreFilter and every filter plugin
//! on every node, where upstream stops at a node's first rejection. schedscope's own;
//! each plugin's answer is the one `RunFilterPlugins` (upstream:
//! pkg/scheduler/framework/runtime/framework.go) would read from it.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::options::{CycleOptions, Phase, PhaseGuard, par_chunks};
use crate::engine::framework::{
    Ctx, CycleState, FilterPlugin, Framework, filter_failure, nominated_pods_for,
};
use crate::engine::status::Status;
use crate::engine::trace::{NodeAllVerdicts, PluginResult, Trace};
use crate::model::{Pod, Sym};

/// All-filters mode's rows into `trace.filter_all`, from the state and PreFilter
/// statuses the cycle computed when `reuse` (every PreFilter ran on a state that
/// started empty: what all-filters mode computes on its own), else from its own
/// PreFilter pass. With `want_first`, also normal mode's verdict on each node.
#[allow(clippy::too_many_arguments)]
pub(super) fn record(
    fw: &Framework,
    cx: &Ctx,
    pod: &Pod,
    opts: &CycleOptions,
    state: &CycleState,
    trace: &mut Trace,
    reuse: bool,
    want_first: bool,
) -> Option<Vec<Status>> {
    let mut derived = None;
    trace.filter_all = Some(if reuse {
        let own = trace
            .pre_filter
            .plugins
            .iter()
            .map(|r| {
                let st = Status::new(r.code, r.reasons.iter().map(String::as_str));
                (r.plugin.to_string(), st)
            })
            .collect();
        let (all, first) = all_filters_on(fw, cx, pod, opts, state, &own, want_first);
        derived = first;
        all
    } else {
        all_filters(fw, cx, pod, opts)
    });
    derived
}

/// All-filters mode: every PreFilter runs on its own (a rejection does not stop the
/// others), then every filter plugin runs on every node.
pub(super) fn all_filters(
    fw: &Framework,
    cx: &Ctx,
    pod: &Pod,
    opts: &CycleOptions,
) -> Vec<NodeAllVerdicts> {
    let pre_filter_timer = opts
        .timer
        .as_ref()
        .map(|t| PhaseGuard::start(t, Phase::PreFilter));
    let mut state = CycleState::default();
    let mut own: BTreeMap<String, Status> = Default::default();
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
pub(super) fn all_filters_on(
    fw: &Framework,
    cx: &Ctx,
    pod: &Pod,
    opts: &CycleOptions,
    state: &CycleState,
    own: &BTreeMap<String, Status>,
    want_first: bool,
) -> (Vec<NodeAllVerdicts>, Option<Vec<Status>>) {
    let _filter_timer = opts
        .timer
        .as_ref()
        .map(|t| PhaseGuard::start(t, Phase::Filter));
    let nodes = cx.cluster.nodes();
    // Each filter plugin with the answer its PreFilter fixed for every node (Skip or
    // a rejection), looked up once rather than per node.
    let plugins: Vec<(Sym, &dyn FilterPlugin, Option<Status>)> = fw
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
                let nominated = nominated_pods_for(cx.cluster, pod, node.name());
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
    plugins: &[(Sym, &dyn FilterPlugin, Option<Status>)],
    own: &mut [Option<Status>],
) -> Status {
    for ((name, _, _), st) in plugins.iter().zip(own) {
        // `None`: skipped by PreFilter, not an active filter.
        if let Some(st) = st
            && !st.is_success()
        {
            return filter_failure(name, std::mem::take(st));
        }
    }
    Status::success()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::cycle::{CycleOptions, run_cycle};
    use crate::engine::status::Code;

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
