//! Remedies: the what-if edits that would make an unschedulable pod schedulable (or
//! land a schedulable one on a given node), each verified by a full replay of the
//! edited model, never inferred from the FitError.
//!
//! Candidates come from the actual rejections of the trace: each nodeSelector entry
//! and the required node affinity (drop it, or label a node to match), each
//! untolerated taint (tolerate it, or remove it from a node carrying it), each
//! cordoned node (uncordon), each resource shortfall (the largest request that fits
//! on some node), each spread or required (anti-)affinity term (drop it), each
//! scheduling gate, evicting the fewest lowest-priority pods on one node, and adding
//! one node like the best rejected candidate. Single edits are replayed first; when
//! none is enough, pairs of them. Replays stop at `limit` (default 64), and the
//! answer says so.
//!
//! Ranking, smallest change first:
//! 1. one edit before two;
//! 2. then by kind: pod edits that keep the pod's intent (a toleration, a priority)
//!    come first; then cluster edits, smallest first (uncordon, label, untaint,
//!    evict, add a node); pod edits that weaken the pod's intent (a lower request,
//!    a dropped selector, affinity, spread term or gate) come last, since they
//!    change what the workload asked for;
//! 3. then in the order the candidates were derived (node order, term order).

use std::collections::BTreeSet;

use schedscope_engine::engine::Framework;
use schedscope_engine::engine::cycle::CycleOptions;
use schedscope_engine::engine::plugins::taint_toleration::find_untolerated_do_not_schedule_taint;
use schedscope_engine::engine::trace::{Outcome, Trace};
use schedscope_engine::model::{Cluster, Pod};
use schedscope_engine::whatif::{Edit, Qty, UNSCHEDULABLE_TAINT, apply, replay, show};
use serde::Serialize;

pub const DEFAULT_LIMIT: usize = 64;

/// One verified remedy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Suggestion {
    /// In the `--what-if` spelling, ready to paste.
    pub edits: Vec<String>,
    /// Feasible nodes after the edits.
    pub feasible: usize,
    pub selected_node: Option<String>,
    pub total: Option<i64>,
    pub note: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Remedies {
    pub suggestions: Vec<Suggestion>,
    /// Replays run.
    pub replays: usize,
    pub limit: usize,
    /// The limit stopped the search before every candidate was tried.
    pub stopped_early: bool,
    /// When DefaultPreemption would already make room: the node and its victims.
    pub preemption: Option<String>,
}

/// What success means: any node, or the given one.
#[derive(Clone, Copy, Debug)]
pub enum Goal<'a> {
    Schedulable,
    Target(&'a str),
}

struct Candidate {
    edit: Edit,
    rank: u8,
    note: Option<String>,
}

fn rank(e: &Edit) -> u8 {
    match e {
        Edit::Tolerate { .. } | Edit::Priority(_) => 0,
        Edit::Uncordon(_) => 1,
        Edit::Label { .. } => 2,
        Edit::Untaint { .. } => 3,
        Edit::Evict(_) => 4,
        Edit::AddNodes { .. } | Edit::Cordon(_) => 5,
        _ => 6,
    }
}

/// Search the remedies of `pod` (its replayed `trace` on `cluster`).
pub fn suggest(
    cluster: &Cluster,
    profiles: &[Framework],
    pod: &Pod,
    trace: &Trace,
    goal: Goal,
    limit: usize,
    opts: &CycleOptions,
) -> Remedies {
    let candidates = candidates(cluster, pod, trace, goal);
    let mut out = Remedies {
        suggestions: Vec::new(),
        replays: 0,
        limit,
        stopped_early: false,
        preemption: preemption_note(trace),
    };
    let mut failed: Vec<&Candidate> = Vec::new();
    for c in &candidates {
        if out.replays >= limit {
            out.stopped_early = true;
            break;
        }
        match verify(
            cluster,
            profiles,
            pod,
            &[&c.edit],
            goal,
            opts,
            &mut out.replays,
        ) {
            Some(s) => out.suggestions.push(Suggestion {
                note: c.note.clone().or(s.note.clone()),
                ..s
            }),
            None => failed.push(c),
        }
    }
    if out.suggestions.is_empty() && !out.stopped_early {
        'pairs: for (i, a) in failed.iter().enumerate() {
            for b in &failed[i + 1..] {
                if !a.edit.is_pod_edit() && !b.edit.is_pod_edit() && same_target(&a.edit, &b.edit) {
                    continue;
                }
                if out.replays >= limit {
                    out.stopped_early = true;
                    break 'pairs;
                }
                let edits = [&a.edit, &b.edit];
                if let Some(s) =
                    verify(cluster, profiles, pod, &edits, goal, opts, &mut out.replays)
                {
                    let note = [&a.note, &b.note]
                        .into_iter()
                        .flatten()
                        .cloned()
                        .collect::<Vec<_>>();
                    out.suggestions.push(Suggestion {
                        note: (!note.is_empty()).then(|| note.join("; ")),
                        ..s
                    });
                }
            }
        }
    }
    // Stable: derivation order breaks ties.
    let rank_of = |s: &Suggestion| -> (usize, u8) {
        let r = s
            .edits
            .iter()
            .filter_map(|e| e.parse::<Edit>().ok())
            .map(|e| rank(&e))
            .max()
            .unwrap_or(0);
        (s.edits.len(), r)
    };
    out.suggestions.sort_by_key(rank_of);
    out
}

/// Two cluster edits of the same kind on the same object add nothing together.
fn same_target(a: &Edit, b: &Edit) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b) && matches!(a, Edit::AddNodes { .. })
}

fn verify(
    cluster: &Cluster,
    profiles: &[Framework],
    pod: &Pod,
    edits: &[&Edit],
    goal: Goal,
    opts: &CycleOptions,
    replays: &mut usize,
) -> Option<Suggestion> {
    let owned: Vec<Edit> = edits.iter().map(|e| (*e).clone()).collect();
    let edited = apply(cluster, Some(pod), &owned).ok()?;
    let p = edited.pod.as_ref()?;
    *replays += 1;
    let trace = replay(&edited.cluster, profiles, p, opts)?;
    let Outcome::Scheduled { node } = &trace.outcome else {
        return None;
    };
    if let Goal::Target(t) = goal
        && node != t
    {
        return None;
    }
    let notes: Vec<String> = edited.notes.iter().map(|(_, n)| n.clone()).collect();
    Some(Suggestion {
        edits: owned.iter().map(Edit::to_string).collect(),
        feasible: trace.feasible.len(),
        total: trace.total(node),
        selected_node: Some(node.clone()),
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    })
}

fn preemption_note(trace: &Trace) -> Option<String> {
    let pf = trace.post_filter.as_ref()?;
    let node = pf.nominated_node.as_ref()?;
    Some(format!(
        "DefaultPreemption would already make room on {node} by evicting {}",
        pf.victims.join(", ")
    ))
}

/// Nodes to derive from: every rejected node, or the target alone. With a target
/// that is feasible but not chosen, the nodes that beat it.
fn rejected<'t>(trace: &'t Trace, goal: Goal) -> Vec<(&'t str, &'t str)> {
    trace
        .filter
        .iter()
        .filter(|v| !v.feasible)
        .filter(|v| {
            matches!(goal, Goal::Schedulable) || matches!(goal, Goal::Target(t) if *v.node == *t)
        })
        .map(|v| (&*v.node, v.plugin.as_deref().unwrap_or("")))
        .collect()
}

fn candidates(cluster: &Cluster, pod: &Pod, trace: &Trace, goal: Goal) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    let mut seen = BTreeSet::new();
    let mut push = |edit: Edit, note: Option<String>| {
        if seen.insert(edit.to_string()) {
            out.push(Candidate {
                rank: rank(&edit),
                edit,
                note,
            });
        }
    };
    if let Outcome::Gated { .. } = trace.outcome {
        for g in &pod.scheduling_gates {
            push(Edit::DropGate(g.clone()), None);
        }
    }
    let rejected = rejected(trace, goal);
    let plugins: BTreeSet<&str> = rejected
        .iter()
        .map(|(_, p)| *p)
        .chain(trace.pre_filter.plugin.as_deref())
        .collect();
    if let Goal::Target(t) = goal
        && trace.feasible.iter().any(|n| n == t)
    {
        for n in trace.best_nodes.iter().filter(|n| *n != t).take(4) {
            push(Edit::Cordon(n.clone()), Some(format!("{n} outscored {t}")));
        }
    }
    node_candidates(cluster, pod, &rejected, &mut push);
    if plugins.contains("NodeAffinity") {
        for k in pod.node_selector.iter().flatten().map(|(k, _)| k) {
            push(Edit::DropNodeSelector(k.clone()), None);
        }
        let required = pod
            .affinity
            .as_ref()
            .and_then(|a| a.node_affinity.as_ref())
            .is_some_and(|n| {
                n.required_during_scheduling_ignored_during_execution
                    .is_some()
            });
        if required {
            push(Edit::DropNodeAffinity, None);
        }
    }
    if plugins.contains("NodeResourcesFit") {
        resource_candidates(cluster, pod, &rejected, &mut push);
    }
    if plugins.contains("PodTopologySpread") {
        for (i, c) in pod.topology_spread_constraints.iter().enumerate() {
            if c.when_unsatisfiable == "DoNotSchedule" {
                push(Edit::DropSpread(i), None);
            }
        }
    }
    if plugins.contains("InterPodAffinity") {
        let aff = pod.affinity.as_ref();
        let count = |anti: bool| {
            aff.and_then(|a| {
                if anti {
                    a.pod_anti_affinity
                        .as_ref()?
                        .required_during_scheduling_ignored_during_execution
                        .as_ref()
                } else {
                    a.pod_affinity
                        .as_ref()?
                        .required_during_scheduling_ignored_during_execution
                        .as_ref()
                }
            })
            .map_or(0, Vec::len)
        };
        for i in 0..count(false) {
            push(Edit::DropPodAffinity(i), None);
        }
        for i in 0..count(true) {
            push(Edit::DropPodAntiAffinity(i), None);
        }
    }
    let room: BTreeSet<&str> = [
        "NodeResourcesFit",
        "NodePorts",
        "InterPodAffinity",
        "PodTopologySpread",
    ]
    .into_iter()
    .collect();
    if let Some((like, _)) = rejected
        .iter()
        .filter(|(_, p)| room.contains(p))
        .max_by_key(|(n, _)| cluster.node(n).map_or(0, |i| i.node.allocatable.milli_cpu))
        .filter(|_| matches!(goal, Goal::Schedulable))
    {
        push(
            Edit::AddNodes {
                count: 1,
                like: like.to_string(),
            },
            None,
        );
    }
    out.sort_by_key(|c| c.rank);
    out
}

/// What each rejected node's own plugin points at: uncordon it, tolerate or remove
/// its taint, give it the label the pod selects.
fn node_candidates(
    cluster: &Cluster,
    pod: &Pod,
    rejected: &[(&str, &str)],
    push: &mut impl FnMut(Edit, Option<String>),
) {
    for (node, plugin) in rejected {
        let Some(info) = cluster.node(node) else {
            continue;
        };
        match *plugin {
            "NodeUnschedulable" => {
                push(Edit::Uncordon(node.to_string()), None);
            }
            "TaintToleration" => {
                if let Some(t) =
                    find_untolerated_do_not_schedule_taint(&info.node.taints, &pod.tolerations)
                {
                    if t.key != UNSCHEDULABLE_TAINT {
                        push(
                            Edit::Tolerate {
                                key: t.key.clone(),
                                value: t.value.clone().filter(|v| !v.is_empty()),
                                effect: t.effect.clone(),
                            },
                            None,
                        );
                    }
                    push(
                        Edit::Untaint {
                            node: node.to_string(),
                            key: t.key.clone(),
                            effect: Some(t.effect.clone()),
                        },
                        None,
                    );
                }
            }
            "NodeAffinity" => {
                for (k, v) in pod.node_selector.iter().flatten() {
                    if info.node.labels.get(k).map(|s| &**s) != Some(v.as_str()) {
                        push(
                            Edit::Label {
                                node: node.to_string(),
                                key: k.clone(),
                                value: v.clone(),
                            },
                            None,
                        );
                    }
                }
            }
            _ => {}
        }
    }
}

/// For each short resource: the largest request that fits on some rejected node,
/// and evicting the fewest lowest-priority pods on one node.
fn resource_candidates(
    cluster: &Cluster,
    pod: &Pod,
    rejected: &[(&str, &str)],
    push: &mut impl FnMut(Edit, Option<String>),
) {
    let resources: Vec<String> = ["cpu", "memory", "ephemeral-storage"]
        .into_iter()
        .map(String::from)
        .chain(pod.requests.scalar.keys().cloned())
        .filter(|r| pod.requests.get(r) > 0)
        .collect();
    let fit_nodes: Vec<&str> = rejected
        .iter()
        .filter(|(_, p)| *p == "NodeResourcesFit")
        .map(|(n, _)| *n)
        .collect();
    for r in &resources {
        let want = pod.requests.get(r);
        // The most room left for r on a node short of it, and every node with it.
        let room: Vec<(i64, &str)> = fit_nodes
            .iter()
            .filter_map(|n| cluster.node(n))
            .map(|i| (i.node.allocatable.get(r) - i.requested.get(r), i.name()))
            .filter(|(free, _)| *free < want)
            .collect();
        let Some(free) = room.iter().map(|(f, _)| *f).max() else {
            continue;
        };
        let nodes: Vec<String> = room
            .iter()
            .filter(|(f, _)| *f == free)
            .map(|(_, n)| n.to_string())
            .collect();
        if free <= pod.overhead().get(r) {
            continue;
        }
        let text = show(r, free);
        if let Some(q) = Qty::parse(&text) {
            push(
                Edit::request(r, q),
                Some(format!(
                    "{r} ≤ {text} fits on {}",
                    crate::answer::some_nodes(&nodes)
                )),
            );
        }
    }
    // Evictions: per node short of room, the lowest-priority pods first (larger
    // first among equals), as few as free enough of every short resource.
    let mut best: Option<(usize, i32, Vec<String>, &str)> = None;
    for n in &fit_nodes {
        let Some(info) = cluster.node(n) else {
            continue;
        };
        // DaemonSet pods would come back at once.
        let mut pods: Vec<_> = info
            .pods
            .iter()
            .filter(|p| !p.owner_references.iter().any(|o| o.kind == "DaemonSet"))
            .collect();
        pods.sort_by_key(|p| (p.priority, std::cmp::Reverse(p.requests.milli_cpu)));
        let mut freed = schedscope_engine::model::Resource::default();
        let mut victims = Vec::new();
        for p in pods.iter().take(2) {
            freed.add(&p.requests);
            victims.push(p.key());
            let fits = resources.iter().all(|r| {
                info.node.allocatable.get(r) - info.requested.get(r) + freed.get(r)
                    >= pod.requests.get(r)
            });
            if fits {
                let top = pods
                    .iter()
                    .take(victims.len())
                    .map(|p| p.priority)
                    .max()
                    .unwrap_or(0);
                if best
                    .as_ref()
                    .is_none_or(|(c, pr, _, _)| (victims.len(), top) < (*c, *pr))
                {
                    best = Some((victims.len(), top, victims.clone(), n));
                }
                break;
            }
        }
    }
    if let Some((_, _, victims, node)) = best {
        for v in victims {
            push(Edit::Evict(v), Some(format!("frees room on {node}")));
        }
    }
}
