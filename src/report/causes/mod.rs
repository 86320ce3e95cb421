//! The exact cause of each node rejection: which label, taint, port or resource made
//! a Filter plugin say no on one node. Upstream reasons ("node(s) had untolerated
//! taint(s)") name none of it; these lines are computed from the model the way the
//! plugin decides (through the plugin's own helpers), one file per plugin, and are
//! shown *beside* the upstream reasons, never instead of them.
//!
//! Pure and UI-free: the `explain` table, its JSON (`details` of each rejection
//! group) and the inspector's Filters summary all draw from [`Causes`].

mod node_affinity;
mod node_ports;
mod node_resources_fit;
mod node_unschedulable;
mod pod_topology_spread;
mod taint_toleration;

use std::collections::BTreeMap;

use crate::engine::framework::nominated_pods_for;
use crate::engine::plugins;
use crate::engine::trace::Trace;
use crate::model::{Cluster, NodeInfo, Pod};

use super::trace::{Group, TraceView};

/// Cause lines per rejected node (first rejecting plugin only), by node name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Causes {
    by_node: BTreeMap<String, Vec<String>>,
}

/// One distinct cause within a rejection group, with the nodes it applies to (in
/// the group's order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CauseLine {
    pub cause: String,
    pub nodes: Vec<String>,
}

/// The causes of every node the trace's Filter phase rejected. `pod` is the pod the
/// trace is about; when it is bound (a replay of a bound pod), it is taken off its
/// node first, as the replay did.
pub fn for_trace(trace: &Trace, cluster: &Cluster, pod: &Pod) -> Causes {
    let mut by_node = BTreeMap::new();
    // PodTopologySpread's counts over the whole cluster, once per trace. Not for a
    // bound pod: the counts would include the pod itself.
    let mut spread = None;
    for v in trace.filter.iter().filter(|v| !v.feasible) {
        let (Some(plugin), Some(info)) = (&v.plugin, cluster.node(&v.node)) else {
            continue;
        };
        // Filter ran with the pending pods nominated to the node (priority at least the
        // pod's) added, and its verdict is that run's when it failed.
        let nominated = nominated_pods_for(cluster, pod, &v.node);
        let lines = if plugin == plugins::pod_topology_spread::NAME {
            // Its counts would need the bound pod taken off and the nominated pods
            // added through the plugin's AddPod: not explained then.
            if trace.bound_to.is_some() || !nominated.is_empty() {
                continue;
            }
            match spread.get_or_insert_with(|| pod_topology_spread::state(cluster, pod)) {
                Some(s) => pod_topology_spread::causes(s, info),
                None => Vec::new(),
            }
        } else if trace.bound_to.as_deref() == Some(v.node.as_str()) || !nominated.is_empty() {
            let mut info = info.clone();
            info.remove_pod(&pod.uid);
            for p in &nominated {
                info.add_pod((*p).clone());
            }
            let mut lines = of_node(plugin, pod, &info, &v.reasons);
            if !lines.is_empty()
                && !nominated.is_empty()
                && plugin == plugins::node_resources_fit::NAME
            {
                let names: Vec<String> = nominated.iter().map(|p| p.key().to_string()).collect();
                lines.push(format!(
                    "counting pods nominated to the node: {}",
                    names.join(", ")
                ));
            }
            lines
        } else {
            of_node(plugin, pod, info, &v.reasons)
        };
        if !lines.is_empty() {
            by_node.insert(v.node.clone(), lines);
        }
    }
    Causes { by_node }
}

/// Why `plugin` rejected `pod` on `node`, given the plugin's reasons: the plugins
/// that need only the node (PodTopologySpread needs the cluster: see
/// [`for_trace`]). Empty for plugins not explained yet (their upstream reasons stand
/// alone).
pub fn of_node(plugin: &str, pod: &Pod, node: &NodeInfo, reasons: &[String]) -> Vec<String> {
    match plugin {
        plugins::node_affinity::NAME => node_affinity::causes(pod, node, reasons),
        plugins::taint_toleration::NAME => taint_toleration::causes(pod, node),
        plugins::node_unschedulable::NAME => node_unschedulable::causes(pod, node),
        plugins::node_ports::NAME => node_ports::causes(pod, node),
        plugins::node_resources_fit::NAME => node_resources_fit::causes(pod, node, reasons),
        _ => Vec::new(),
    }
}

impl Causes {
    /// The cause lines of one node (empty when none is known).
    pub fn of(&self, node: &str) -> &[String] {
        self.by_node
            .get(node)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    pub fn is_empty(&self) -> bool {
        self.by_node.is_empty()
    }

    /// A group's distinct causes, the most shared first (then by text); a node with
    /// several causes counts under each.
    pub fn group(&self, view: &TraceView, g: &Group) -> Vec<CauseLine> {
        let mut lines: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for &r in &g.rows {
            let node = &view.rows[r as usize].node;
            for c in self.of(node) {
                lines.entry(c).or_default().push(node.clone());
            }
        }
        let mut out: Vec<CauseLine> = lines
            .into_iter()
            .map(|(cause, nodes)| CauseLine {
                cause: cause.to_string(),
                nodes,
            })
            .collect();
        // BTreeMap order is the text order; a stable sort keeps it among equals.
        out.sort_by_key(|l| std::cmp::Reverse(l.nodes.len()));
        out
    }

    /// The lines drawn under a group in the table and the inspector: at most `max`
    /// causes, each with its node count, then `(+N more)` for the rest.
    pub fn summary_lines(&self, view: &TraceView, g: &Group, max: usize) -> Vec<String> {
        let all = self.group(view, g);
        let mut out: Vec<String> = all
            .iter()
            .take(max)
            .map(|l| {
                format!(
                    "{}  ({} node{})",
                    l.cause,
                    l.nodes.len(),
                    super::plural(l.nodes.len())
                )
            })
            .collect();
        if all.len() > max {
            out.push(format!("(+{} more)", all.len() - max));
        }
        out
    }
}

/// How many cause lines the table and the inspector show per group.
pub const SHOWN: usize = 3;

/// `key=value` or `key` (no value), as taints and labels are written by kubectl.
fn key_value(key: &str, value: Option<&str>) -> String {
    match value {
        Some(v) if !v.is_empty() => format!("{key}={v}"),
        _ => key.to_string(),
    }
}

#[cfg(test)]
mod testing {
    use crate::model::testing::cluster;
    use crate::model::{NodeInfo, Pod};
    use serde_json::Value;

    /// The pod and the one node of a small cluster, ready for `of_node`.
    pub fn on_node(node: Value, others: Vec<Value>, pod: Value) -> (Pod, NodeInfo) {
        let c = cluster(vec![node], others);
        (crate::model::testing::pod(pod), c.nodes()[0].clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::status::Code;
    use crate::engine::trace::{NodeVerdict, Outcome};
    use crate::model::testing::{cluster, simple_node, simple_pod};

    fn rejected(node: &str, reason: &str) -> NodeVerdict {
        NodeVerdict {
            node: node.into(),
            feasible: false,
            plugin: Some(plugins::node_resources_fit::NAME.into()),
            code: Code::Unschedulable,
            reasons: vec![reason.into()],
        }
    }

    /// The numbers are those Filter saw: with the higher-priority pods nominated to
    /// the node, and without the replayed bound pod itself.
    #[test]
    fn nominated_pods_count_and_a_bound_pod_does_not() {
        let mut nominated = simple_pod("nom", "2", "1Gi", None);
        nominated["spec"]["priority"] = serde_json::json!(10);
        nominated["status"] = serde_json::json!({"nominatedNodeName": "n1"});
        let c = cluster(
            vec![simple_node("n1", "4", "8Gi"), simple_node("n2", "4", "8Gi")],
            vec![
                nominated,
                simple_pod("new", "3", "1Gi", None),
                simple_pod("bound", "3", "1Gi", Some("n2")),
            ],
        );
        let mut t = Trace::empty(
            "default/new".into(),
            0,
            Outcome::Unschedulable {
                nominated_node: None,
            },
        );
        t.filter = vec![rejected("n1", "Insufficient cpu")];
        let pod = c.pod("default/new").unwrap();
        assert_eq!(
            for_trace(&t, &c, pod).of("n1"),
            [
                "cpu: needs 3, free 2 of 4",
                "counting pods nominated to the node: default/nom"
            ]
        );

        let mut t = Trace::empty(
            "default/bound".into(),
            0,
            Outcome::Unschedulable {
                nominated_node: None,
            },
        );
        t.bound_to = Some("n2".into());
        t.filter = vec![rejected("n2", "Insufficient cpu")];
        let pod = c.pod("default/bound").unwrap();
        assert_eq!(
            for_trace(&t, &c, pod).of("n2"),
            ["cpu: needs 3, free 4 of 4"]
        );
    }
}
