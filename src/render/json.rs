//! The answer as JSON, in the schema of `tests/fidelity/README.md` (maps keyed by
//! node and plugin name, sorted), plus extra keys that never change the meaning of
//! the listed ones.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::engine::status::Code;
use crate::engine::trace::{PluginResult, Trace};
use crate::report::needs::PodNeeds;
use crate::report::{Answer, CauseLine, Causes, Group, GroupKind, RecordedWord, TraceView};

pub fn to_json(t: &Trace) -> Value {
    to_json_view(t, &TraceView::new(t))
}

/// [`to_json`] from a view already built. A view with causes adds `details` to each
/// rejection group: every distinct cause with the group's nodes it applies to
/// (`[{"cause", "nodes"}]`, the most shared first; a node with several causes is
/// listed under each). The other keys are the same either way. With all-filters
/// data, `all_filter_groups` holds every plugin's rejections grouped the same way.
pub fn to_json_view(t: &Trace, view: &TraceView) -> Value {
    let prefilter = json!({
        "code": t.pre_filter.code.unwrap_or(Code::Success).as_str(),
        "plugin": t.pre_filter.plugin,
        "reasons": t.pre_filter.reasons,
        "node_subset": t.pre_filter.node_subset,
    });
    let filter: BTreeMap<&str, Value> = t
        .filter
        .iter()
        .map(|v| {
            (
                v.node.as_str(),
                json!({
                    "feasible": v.feasible,
                    "plugin": v.plugin,
                    "code": v.code.as_str(),
                    "reasons": v.reasons,
                }),
            )
        })
        .collect();
    let filter_all: BTreeMap<&str, BTreeMap<&str, Value>> = t
        .filter_all
        .iter()
        .flatten()
        .map(|n| {
            (
                n.node.as_str(),
                n.results
                    .iter()
                    .map(|r| (r.plugin.as_str(), code_reasons(r)))
                    .collect(),
            )
        })
        .collect();
    let scores: BTreeMap<&str, Value> = t
        .scores
        .iter()
        .map(|s| {
            let raw: BTreeMap<&str, i64> = t
                .feasible
                .iter()
                .map(String::as_str)
                .zip(s.raw.iter().copied())
                .collect();
            let normalized: BTreeMap<&str, i64> = t
                .feasible
                .iter()
                .map(String::as_str)
                .zip(s.normalized.iter().copied())
                .collect();
            (
                s.plugin.as_str(),
                json!({"weight": s.weight, "raw": raw, "normalized": normalized}),
            )
        })
        .collect();
    let total: BTreeMap<&str, i64> = t
        .feasible
        .iter()
        .map(String::as_str)
        .zip(t.totals.iter().copied())
        .collect();
    let postfilter = t.post_filter.as_ref().map(|p| {
        json!({
            "nominated_node": p.nominated_node,
            "victims": p.victims,
            "message": p.message,
            "code": p.code.map(Code::as_str),
            "plugins": p.plugins.iter().map(plugin_result).collect::<Vec<_>>(),
        })
    });
    let mut v = json!({
        "pod": t.pod,
        "nodes_total": t.nodes_total,
        "prefilter": prefilter,
        "filter": filter,
        "filter_all": filter_all,
        "scores": scores,
        "total": total,
        "best_nodes": t.best_nodes,
        "fit_error": t.fit_error,
        "postfilter": postfilter,
        // Extra keys.
        "profile": t.profile,
        "priority": t.priority,
        "selected_node": t.selected_node,
        "outcome": t.outcome,
        "nominated_node": t.nominated_node.as_ref().map(|(n, passed)| json!({"node": n, "passed_filters": passed})),
        "num_nodes_to_find": t.num_nodes_to_find,
        "prefilter_plugins": t.pre_filter.plugins.iter().map(plugin_result).collect::<Vec<_>>(),
        "prescore": t.pre_score.iter().map(plugin_result).collect::<Vec<_>>(),
        "binding": t.binding.iter().map(|ph| json!({
            "point": ph.point,
            "plugins": ph.plugins.iter().map(plugin_result).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "not_modelled": t.not_modelled,
        "upstream_behaviour": t.upstream_behaviour,
    });
    // What the table and the inspector show, from the same presentation model:
    // competition ranks (equal totals share a rank) and the rejection groups (each
    // rejected node in exactly one, largest first).
    if t.totals.len() == t.feasible.len() {
        let ranks: BTreeMap<&str, usize> = t
            .feasible
            .iter()
            .map(String::as_str)
            .zip(view.ranks.iter().copied())
            .collect();
        v["ranks"] = json!(ranks);
    }
    v["rejection_groups"] = Value::Array(
        view.summary
            .iter()
            .filter(|g| g.kind != GroupKind::Feasible)
            .map(|g| group_json(view, g, view.causes.as_ref().map(|c| c.group(view, g))))
            .collect(),
    );
    // With all-filters data: every plugin's rejections, grouped as the first ones
    // are (a node in several groups), with their causes when the view has them.
    if t.filter_all.is_some() {
        v["all_filter_groups"] = Value::Array(
            view.all_groups
                .iter()
                .map(|g| group_json(view, g, view.causes.as_ref().map(|c| c.all_group(view, g))))
                .collect(),
        );
    }
    // Only a pod with claims gets the key (from a view with causes): every other
    // answer keeps its shape.
    let claims = view.causes.as_ref().map(Causes::claims).unwrap_or_default();
    if !claims.is_empty() {
        v["claims"] = json!(claims);
    }
    if let Some(node) = &t.bound_to {
        v["bound_to"] = json!(node);
    }
    v
}

/// The JSON of an [`Answer`]: [`to_json_view`] of its view, with `needs` when the pod
/// was in the cluster, and `realScheduler` when the source records what the real
/// scheduler said (`null` when it said nothing).
pub fn answer_json(t: &Trace, answer: &Answer) -> Value {
    let mut v = to_json_view(t, &answer.view);
    if let Some(n) = &answer.needs {
        v["needs"] = needs_json(n);
    }
    if let Some(r) = &answer.release {
        v["kube_version"] = json!({
            "version": r.release.version.to_string(),
            "replays": r.release.version.resolved().to_string(),
            "source": r.release.source,
            "notes": r.notes,
        });
    }
    let word = match &answer.word {
        RecordedWord::NotRecorded => return v,
        RecordedWord::Silent => Value::Null,
        RecordedWord::Said(w) => json!({
            "from": w.from, "message": w.message, "differs": w.differs,
            "count": w.count,
            "lastSeen": w.last_seen.map(|t| t.to_string()),
        }),
    };
    if let Some(o) = v.as_object_mut() {
        o.insert("realScheduler".into(), word);
    }
    v
}

/// The pod's own needs (the `needs` key): every field, set or not, so the shape is
/// the same for every pod; the texts are those the table and the inspector print.
pub fn needs_json(n: &PodNeeds) -> Value {
    let amounts =
        |list: &[(String, String)]| -> BTreeMap<String, String> { list.iter().cloned().collect() };
    json!({
        "requests": amounts(&n.requests),
        "overhead": amounts(&n.overhead),
        "node_selector": n.node_selector,
        "node_affinity": {
            "required": n.required_node_affinity,
            "preferred": n.preferred_node_affinity,
        },
        "pod_affinity": {
            "required": n.required_pod_affinity,
            "preferred": n.preferred_pod_affinity,
        },
        "pod_anti_affinity": {
            "required": n.required_pod_anti_affinity,
            "preferred": n.preferred_pod_anti_affinity,
        },
        "tolerations": n.tolerations,
        "topology_spread_constraints": n.topology_spread,
        "host_ports": n.host_ports,
        "volumes": n.volumes,
        "resource_claims": n.resource_claims,
        "priority": n.priority,
        "priority_class": n.priority_class,
        "preemption_policy": n.preemption_policy,
        "scheduling_gates": n.scheduling_gates,
        "scheduler_name": n.scheduler_name,
    })
}

/// One rejection group: its plugin, code, reason and nodes, and its causes as
/// `details` when the view has them.
fn group_json(view: &TraceView, g: &Group, details: Option<Vec<CauseLine>>) -> Value {
    let mut group = json!({
        "plugin": g.plugin,
        "code": g.code.map(Code::as_str),
        "reason": g.reason,
        "nodes": view.group_nodes(g),
    });
    if let Some(lines) = details {
        group["details"] = lines
            .into_iter()
            .map(|l| json!({"cause": l.cause, "nodes": l.nodes}))
            .collect();
    }
    group
}

fn code_reasons(r: &PluginResult) -> Value {
    json!({"code": r.code.as_str(), "reasons": r.reasons})
}

fn plugin_result(r: &PluginResult) -> Value {
    json!({"plugin": r.plugin, "code": r.code.as_str(), "reasons": r.reasons})
}
