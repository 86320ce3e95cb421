//! Applying [`Edit`]s to an owned copy of the model and of the pod. Every change goes
//! through the model's own upsert/delete, so its indexes (node positions, pods on
//! nodes, the label index, image summaries, node-derived caches) stay consistent.

use std::sync::Arc;

use k8s_openapi::api::core::v1 as core;

use super::closest::closest;
use super::edit::{Edit, EditError};
use super::requests::set_effective_request;
use crate::model::{Cluster, Node, Pod, Sym};

/// The edited model and pod, with what each edit has to say (in edit order).
#[derive(Clone, Debug)]
pub struct Edited {
    pub cluster: Cluster,
    /// The edited pod; `None` when none was given.
    pub pod: Option<Pod>,
    /// `(edit as written, note)` for the edits that have something to say.
    pub notes: Vec<(String, String)>,
}

impl Edited {
    /// Each note as a person reads it: `edit: note`.
    pub fn note_lines(&self) -> Vec<String> {
        self.notes
            .iter()
            .map(|(e, n)| format!("{e}: {n}"))
            .collect()
    }
}

/// The taint the node lifecycle controller keeps on cordoned nodes.
pub const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

/// Apply `edits` in order to a copy of `cluster` and of `pod`. When `pod` is in the
/// cluster (same key), the copy in the edited cluster is replaced too, so a replay
/// finds the edited pod. The caller's model is never changed.
pub fn apply(cluster: &Cluster, pod: Option<&Pod>, edits: &[Edit]) -> Result<Edited, EditError> {
    let mut out = Edited {
        cluster: cluster.clone(),
        pod: pod.cloned(),
        notes: Vec::new(),
    };
    for e in edits {
        let note = apply_one(&mut out, e)?;
        if let Some(n) = note {
            out.notes.push((e.to_string(), n));
        }
    }
    if let Some(p) = &out.pod
        && out.cluster.pod(&p.key()).is_some()
        && edits.iter().any(Edit::is_pod_edit)
    {
        out.cluster.upsert_pod(p.clone());
    }
    Ok(out)
}

fn not_applicable(e: &Edit, reason: impl Into<String>) -> EditError {
    EditError::NotApplicable {
        edit: e.to_string(),
        reason: reason.into(),
    }
}

fn unknown<'a>(
    e: &Edit,
    what: &'static str,
    name: &str,
    names: impl IntoIterator<Item = &'a str>,
) -> EditError {
    EditError::Unknown {
        edit: e.to_string(),
        what,
        name: name.to_string(),
        suggestion: closest(name, names),
    }
}

fn apply_one(out: &mut Edited, e: &Edit) -> Result<Option<String>, EditError> {
    if e.is_pod_edit() {
        let cluster = &out.cluster;
        let Some(pod) = out.pod.as_mut() else {
            return Err(not_applicable(e, "a pod edit needs a pod to edit"));
        };
        return edit_pod(cluster, pod, e);
    }
    edit_cluster(&mut out.cluster, e)
}

/// The node `name`, or an error with the nearest node name.
fn node<'c>(cluster: &'c Cluster, e: &Edit, name: &str) -> Result<&'c Node, EditError> {
    cluster
        .node(name)
        .map(|n| &*n.node)
        .ok_or_else(|| unknown(e, "node", name, cluster.nodes().iter().map(|n| n.name())))
}

fn edit_cluster(cluster: &mut Cluster, e: &Edit) -> Result<Option<String>, EditError> {
    match e {
        Edit::Cordon(name) | Edit::Uncordon(name) => {
            let cordon = matches!(e, Edit::Cordon(_));
            let mut n = node(cluster, e, name)?.clone();
            if n.unschedulable == cordon {
                let state = if cordon { "already" } else { "not" };
                return Err(not_applicable(
                    e,
                    format!("node {name} is {state} cordoned"),
                ));
            }
            n.unschedulable = cordon;
            // What the node lifecycle controller does with the taint that follows
            // spec.unschedulable.
            n.taints.retain(|t| t.key != UNSCHEDULABLE_TAINT);
            if cordon {
                n.taints.push(core::Taint {
                    key: UNSCHEDULABLE_TAINT.into(),
                    effect: "NoSchedule".into(),
                    ..Default::default()
                });
            }
            cluster.upsert_node(n);
            Ok(None)
        }
        Edit::Untaint {
            node: name,
            key,
            effect,
        } => {
            let mut n = node(cluster, e, name)?.clone();
            let matches =
                |t: &core::Taint| t.key == *key && effect.as_ref().is_none_or(|ef| *ef == t.effect);
            if !n.taints.iter().any(matches) {
                let keys: Vec<&str> = n.taints.iter().map(|t| t.key.as_str()).collect();
                if n.taints.iter().any(|t| t.key == *key) {
                    return Err(not_applicable(
                        e,
                        format!("node {name} has taint {key} with another effect"),
                    ));
                }
                return Err(unknown(e, "taint", key, keys));
            }
            let before = n.taints.len();
            n.taints.retain(|t| !matches(t));
            let removed = before - n.taints.len();
            cluster.upsert_node(n);
            Ok((removed > 1).then(|| format!("{removed} taints with key {key} removed")))
        }
        Edit::Label {
            node: name,
            key,
            value,
        } => {
            let mut n = node(cluster, e, name)?.clone();
            let old = n.labels.insert(key.clone(), value.clone());
            cluster.upsert_node(n);
            Ok(old.map(|o| format!("{key} was {o}")))
        }
        Edit::AddNodes { count, like } => add_nodes(cluster, e, *count, like).map(Some),
        Edit::Evict(key) => {
            let Some(p) = cluster.pod(key) else {
                let keys: Vec<String> = cluster.pods().map(|p| p.key()).collect();
                return Err(unknown(e, "pod", key, keys.iter().map(String::as_str)));
            };
            let Some(on) = p.node_name.clone() else {
                return Err(not_applicable(
                    e,
                    format!("pod {key} is not running on a node"),
                ));
            };
            cluster.delete_pod(key);
            Ok(Some(format!("{key} removed from {on}")))
        }
        _ => Ok(None),
    }
}

/// `node.add=N:like=NODE`: N nodes named `NODE-whatif-<i>` (the first free numbers),
/// each with NODE's labels (hostname = its own name), taints (but the cordon's),
/// allocatable, capacity and images, not cordoned; with copies of NODE's DaemonSet
/// pods and of its CSINode (attach limits).
fn add_nodes(
    cluster: &mut Cluster,
    e: &Edit,
    count: usize,
    like: &str,
) -> Result<String, EditError> {
    let base = node(cluster, e, like)?.clone();
    let daemons: Vec<Arc<Pod>> = cluster
        .node(like)
        .map(|info| {
            info.pods
                .iter()
                .filter(|p| p.owner_references.iter().any(|o| o.kind == "DaemonSet"))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let csi = cluster.csi_nodes.get(like).cloned();
    let mut names = Vec::with_capacity(count);
    let mut i = 0;
    while names.len() < count {
        i += 1;
        let name = format!("{like}-whatif-{i}");
        if cluster.node(&name).is_none() {
            names.push(name);
        }
    }
    for name in &names {
        let mut n = base.clone();
        n.name = name.as_str().into();
        n.uid = format!("whatif-{name}");
        n.unschedulable = false;
        n.taints.retain(|t| t.key != UNSCHEDULABLE_TAINT);
        n.labels
            .insert("kubernetes.io/hostname".into(), name.clone());
        cluster.upsert_node(n);
        if let Some(mut c) = csi.clone() {
            c.metadata.name = Some(name.clone());
            c.metadata.uid = None;
            cluster.csi_nodes.insert(name.clone(), c);
        }
        for d in &daemons {
            let mut p = (**d).clone();
            p.name = format!("{}-{name}", daemon_base(&p.name));
            p.uid = format!("whatif-{}/{}", p.namespace, p.name);
            p.node_name = Some(Sym::new(name));
            cluster.upsert_pod(p);
        }
    }
    let first = names.first().map(String::as_str).unwrap_or_default();
    let range = match names.last() {
        Some(last) if names.len() > 1 => format!("{first} … {last}"),
        _ => first.to_string(),
    };
    Ok(format!(
        "{count} node(s) like {like}: {range}, with {} DaemonSet pod(s) each",
        daemons.len()
    ))
}

/// A DaemonSet pod's name without the random suffix the controller added
/// (`fluentd-x7k2p` → `fluentd`).
fn daemon_base(name: &str) -> &str {
    name.rsplit_once('-').map_or(name, |(b, _)| b)
}

fn edit_pod(cluster: &Cluster, pod: &mut Pod, e: &Edit) -> Result<Option<String>, EditError> {
    match e {
        Edit::Request { resource, qty, .. } => {
            let known = known_resources(cluster, pod);
            if !known.iter().any(|r| r == resource) {
                return Err(unknown(
                    e,
                    "resource",
                    resource,
                    known.iter().map(String::as_str),
                ));
            }
            set_effective_request(pod, resource, qty.value)
                .map(Some)
                .map_err(|r| not_applicable(e, r))
        }
        Edit::DropNodeSelector(key) => {
            let sel = pod.node_selector.get_or_insert_default();
            if sel.remove(key).is_none() {
                let keys: Vec<&str> = sel.keys().map(String::as_str).collect();
                return Err(unknown(e, "nodeSelector key", key, keys));
            }
            if sel.is_empty() {
                pod.node_selector = None;
            }
            Ok(None)
        }
        Edit::DropNodeAffinity => {
            let na = pod.affinity.as_mut().and_then(|a| a.node_affinity.as_mut());
            match na.and_then(|na| {
                na.required_during_scheduling_ignored_during_execution
                    .take()
            }) {
                Some(_) => Ok(None),
                None => Err(not_applicable(e, "the pod has no required node affinity")),
            }
        }
        Edit::DropPodAffinity(i) | Edit::DropPodAntiAffinity(i) => {
            let anti = matches!(e, Edit::DropPodAntiAffinity(_));
            let terms = pod.affinity.as_mut().and_then(|a| {
                if anti {
                    a.pod_anti_affinity.as_mut().and_then(|x| {
                        x.required_during_scheduling_ignored_during_execution
                            .as_mut()
                    })
                } else {
                    a.pod_affinity.as_mut().and_then(|x| {
                        x.required_during_scheduling_ignored_during_execution
                            .as_mut()
                    })
                }
            });
            let kind = if anti {
                "pod anti-affinity"
            } else {
                "pod affinity"
            };
            match terms {
                Some(t) if *i < t.len() => {
                    t.remove(*i);
                    Ok(None)
                }
                t => Err(not_applicable(
                    e,
                    out_of_range(*i, t.map_or(0, |t| t.len()), &format!("required {kind}")),
                )),
            }
        }
        Edit::DropSpread(i) => {
            let n = pod.topology_spread_constraints.len();
            if *i >= n {
                return Err(not_applicable(e, out_of_range(*i, n, "topology spread")));
            }
            let mut v = pod.topology_spread_constraints.to_vec();
            let c = v.remove(*i);
            pod.topology_spread_constraints = v.into();
            Ok(Some(format!(
                "dropped {} on {} (maxSkew {})",
                c.when_unsatisfiable, c.topology_key, c.max_skew
            )))
        }
        Edit::Tolerate { key, value, effect } => {
            let mut v = pod.tolerations.to_vec();
            v.push(core::Toleration {
                key: Some(key.clone()),
                operator: Some(if value.is_some() { "Equal" } else { "Exists" }.into()),
                value: value.clone(),
                effect: Some(effect.clone()),
                toleration_seconds: None,
            });
            pod.tolerations = v.into();
            Ok(None)
        }
        Edit::Priority(p) => {
            let old = pod.priority;
            pod.priority = *p;
            Ok(Some(format!("priority {old} → {p}")))
        }
        Edit::DropGate(name) => {
            let Some(i) = pod.scheduling_gates.iter().position(|g| g == name) else {
                let gates: Vec<&str> = pod.scheduling_gates.iter().map(String::as_str).collect();
                return Err(unknown(e, "scheduling gate", name, gates));
            };
            pod.scheduling_gates.remove(i);
            Ok(None)
        }
        _ => Ok(None),
    }
}

fn out_of_range(i: usize, n: usize, kind: &str) -> String {
    match n {
        0 => format!("the pod has no {kind} term"),
        1 => format!("the pod has 1 {kind} term (index 0), not {i}"),
        n => format!("the pod has {n} {kind} terms (0..{}), not {i}", n - 1),
    }
}

/// Resource names a request edit may name: the native ones, and every scalar
/// resource the pod requests or a node offers (sorted, deduplicated).
fn known_resources(cluster: &Cluster, pod: &Pod) -> Vec<String> {
    let mut names: std::collections::BTreeSet<String> = ["cpu", "memory", "ephemeral-storage"]
        .into_iter()
        .map(String::from)
        .collect();
    names.extend(pod.requests.scalar.keys().cloned());
    for n in cluster.nodes() {
        names.extend(n.node.allocatable.scalar.keys().cloned());
    }
    names.into_iter().collect()
}
