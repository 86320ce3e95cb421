//! The exact cause of each node rejection: which label, taint, port or resource made
//! a Filter plugin say no on one node. Upstream reasons ("node(s) had untolerated
//! taint(s)") name none of it; these lines are computed from the model the way the
//! plugin decides (through the plugin's own helpers), one file per plugin, and are
//! shown *beside* the upstream reasons, never instead of them.
//!
//! Pure and UI-free: the `explain` table, its JSON (`details` of each rejection
//! group) and the inspector's Filters summary all draw from [`Causes`].

mod dynamic_resources;
mod inter_pod_affinity;
mod node_affinity;
mod node_ports;
mod node_resources_fit;
mod node_unschedulable;
mod pod_topology_spread;
mod taint_toleration;
mod volume;

use std::collections::BTreeMap;

use schedscope_engine::engine::Framework;
use schedscope_engine::engine::framework::nominated_pods_for;
use schedscope_engine::engine::plugins;
use schedscope_engine::engine::status::Code;
use schedscope_engine::engine::trace::Trace;
use schedscope_engine::model::{Cluster, NodeInfo, Pod};

use super::claims::ClaimView;
use super::trace::{Group, TraceView};

/// Cause lines per rejected node: of its first rejecting plugin (by node name), and,
/// with all-filters data, of every plugin that rejected it (by node and plugin).
/// DynamicResources' causes are those of the pod's claims, kept whole for the
/// outputs' claims section.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Causes {
    by_node: BTreeMap<String, Vec<String>>,
    by_node_plugin: BTreeMap<(String, String), Vec<String>>,
    claims: Vec<ClaimView>,
}

/// One distinct cause within a rejection group, with the nodes it applies to (in
/// the group's order). Serialized as the JSON answer's `details` entries.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CauseLine {
    pub cause: String,
    pub nodes: Vec<String>,
}

/// The causes of every node the trace's Filter phase rejected (and of every other
/// rejection its all-filters data records). `pod` is the pod the trace is about;
/// when it is bound (a replay of a bound pod), it is taken off its node first, as
/// the replay did. `profile` is the profile the cycle ran with: its plugin
/// arguments (default spread constraints, `addedAffinity`) are causes too.
pub fn for_trace(
    trace: &Trace,
    cluster: &Cluster,
    pod: &Pod,
    profile: Option<&Framework>,
) -> Causes {
    let claims = super::claims::of_trace(trace, cluster, pod);
    let mut ex = Explainer {
        trace,
        cluster,
        pod,
        profile,
        claims: &claims,
        spread: None,
        affinity: None,
        attachments: None,
    };
    let mut by_node = BTreeMap::new();
    for v in trace.filter.iter().filter(|v| !v.feasible) {
        let lines = match &v.plugin {
            Some(plugin) => ex.explain(plugin, &v.node, &v.reasons),
            // Left out by a PreFilter node subset.
            None => node_affinity::prefilter_causes(&trace.pre_filter.subsets, &v.node, |n| {
                cluster.node(n).is_some()
            }),
        };
        if !lines.is_empty() {
            by_node.insert(v.node.to_string(), lines);
        }
    }
    // Each node's first rejection, looked up once per node (a search of the verdicts
    // per node was quadratic in the nodes).
    let first_rejection: std::collections::HashMap<&str, &str> = trace
        .filter
        .iter()
        .filter_map(|v| Some((v.node.as_str(), v.plugin.as_deref()?)))
        .collect();
    let mut by_node_plugin = BTreeMap::new();
    for n in trace.filter_all.iter().flatten() {
        let first = first_rejection.get(&*n.node).copied();
        for r in n
            .results
            .iter()
            .filter(|r| !matches!(r.code, Code::Success | Code::Skip))
        {
            let lines = if first == Some(r.plugin.as_str()) {
                by_node.get(&*n.node).cloned().unwrap_or_default()
            } else {
                ex.explain(&r.plugin, &n.node, &r.reasons)
            };
            if !lines.is_empty() {
                by_node_plugin.insert((n.node.to_string(), r.plugin.to_string()), lines);
            }
        }
    }
    Causes {
        by_node,
        by_node_plugin,
        claims,
    }
}

/// Computes causes one (plugin, node) at a time, building the cluster-wide states
/// (spread counts, affinity counts) once per trace.
struct Explainer<'a> {
    trace: &'a Trace,
    cluster: &'a Cluster,
    pod: &'a Pod,
    profile: Option<&'a Framework>,
    claims: &'a [ClaimView],
    spread: Option<Option<pod_topology_spread::State>>,
    affinity: Option<Option<inter_pod_affinity::State>>,
    /// NodeVolumeLimits' VolumeAttachments by node.
    attachments: Option<volume::Attachments>,
}

impl Explainer<'_> {
    fn explain(&mut self, plugin: &str, node: &str, reasons: &[String]) -> Vec<String> {
        let (cluster, pod) = (self.cluster, self.pod);
        let Some(info) = cluster.node(node) else {
            return Vec::new();
        };
        if plugin == plugins::dynamic_resources::NAME {
            return dynamic_resources::causes(self.claims, node);
        }
        // Filter ran with the pending pods nominated to the node (priority at least the
        // pod's) added, and its verdict is that run's when it failed.
        let nominated = nominated_pods_for(cluster, pod, node);
        let replayed_bound = self.trace.bound_to.is_some();
        if plugin == plugins::pod_topology_spread::NAME
            || plugin == plugins::inter_pod_affinity::NAME
        {
            // Their counts would need the bound pod taken off and the nominated pods
            // added through the plugin's AddPod: not explained then.
            if replayed_bound || !nominated.is_empty() {
                return Vec::new();
            }
            if plugin == plugins::pod_topology_spread::NAME {
                let profile = self.profile;
                return match self
                    .spread
                    .get_or_insert_with(|| pod_topology_spread::state(cluster, pod, profile))
                {
                    Some(s) => pod_topology_spread::causes(s, info),
                    None => Vec::new(),
                };
            }
            return match self
                .affinity
                .get_or_insert_with(|| inter_pod_affinity::state(cluster, pod))
            {
                Some(s) => inter_pod_affinity::causes(s, info),
                None => Vec::new(),
            };
        }
        if self.trace.bound_to.as_deref() == Some(node) || !nominated.is_empty() {
            let mut info = info.clone();
            info.remove_pod(&pod.uid);
            for p in &nominated {
                info.add_pod((*p).clone());
            }
            let mut lines = self.of_node(plugin, &info, reasons);
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
            self.of_node(plugin, info, reasons)
        }
    }

    fn of_node(&mut self, plugin: &str, node: &NodeInfo, reasons: &[String]) -> Vec<String> {
        match plugin {
            plugins::node_affinity::NAME => {
                node_affinity::causes(self.pod, node, reasons, self.profile)
            }
            plugins::volume_binding::NAME => volume::binding(self.cluster, self.pod, node),
            plugins::volume_zone::NAME => volume::zone(self.cluster, self.pod, node),
            plugins::volume_restrictions::NAME => {
                volume::restrictions(self.cluster, self.pod, node)
            }
            plugins::node_volume_limits::NAME => {
                let cluster = self.cluster;
                let attachments = self
                    .attachments
                    .get_or_insert_with(|| volume::attachments(cluster));
                volume::limits(cluster, self.pod, node, Some(attachments))
            }
            _ => of_node(plugin, self.pod, node, reasons),
        }
    }
}

/// Why `plugin` rejected `pod` on `node`, given the plugin's reasons: the plugins
/// that need only the pod and the node (the others need the cluster or the profile:
/// see [`for_trace`]). Empty for plugins not explained this way (their upstream
/// reasons stand alone).
pub fn of_node(plugin: &str, pod: &Pod, node: &NodeInfo, reasons: &[String]) -> Vec<String> {
    match plugin {
        plugins::node_affinity::NAME => node_affinity::causes(pod, node, reasons, None),
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

    /// The pod's ResourceClaims, and why DynamicResources rejected each node it did
    /// (empty for a pod without claims).
    pub fn claims(&self) -> &[ClaimView] {
        &self.claims
    }

    /// The cause lines of one plugin's rejection of one node (all-filters data).
    pub fn of_plugin(&self, node: &str, plugin: &str) -> &[String] {
        self.by_node_plugin
            .get(&(node.to_string(), plugin.to_string()))
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// A group's distinct causes, the most shared first (then by text); a node with
    /// several causes counts under each.
    pub fn group(&self, view: &TraceView, g: &Group) -> Vec<CauseLine> {
        group_lines(view, g, |node| self.of(node))
    }

    /// An all-filters group's distinct causes (its plugin's causes on each node), as
    /// [`Causes::group`].
    pub fn all_group(&self, view: &TraceView, g: &Group) -> Vec<CauseLine> {
        let plugin = g.plugin.as_deref().unwrap_or_default();
        group_lines(view, g, |node| self.of_plugin(node, plugin))
    }

    /// The lines drawn under a group in the table and the inspector: its causes,
    /// each with its node count, those [`shown`] draws, then `(+N more ...)`.
    pub fn summary_lines(&self, view: &TraceView, g: &Group, all: bool) -> Vec<String> {
        shown_lines(self.group(view, g), g.rows.len(), all)
    }

    /// [`Causes::summary_lines`] of an all-filters group.
    pub fn all_summary_lines(&self, view: &TraceView, g: &Group, all: bool) -> Vec<String> {
        shown_lines(self.all_group(view, g), g.rows.len(), all)
    }
}

fn group_lines<'c>(
    view: &TraceView,
    g: &Group,
    of: impl Fn(&str) -> &'c [String],
) -> Vec<CauseLine> {
    let mut lines: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for &r in &g.rows {
        let node = &view.rows[r as usize].node;
        for c in of(node) {
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

fn shown_lines(all: Vec<CauseLine>, nodes: usize, every: bool) -> Vec<String> {
    let counts: Vec<(&str, usize)> = all
        .iter()
        .map(|l| (l.cause.as_str(), l.nodes.len()))
        .collect();
    let drawn = shown(&counts, nodes, every);
    let mut out: Vec<String> = drawn
        .iter()
        .map(|&i| line_text(&all[i].cause, all[i].nodes.len()))
        .collect();
    if all.len() > drawn.len() {
        out.push(more_line(all.len() - drawn.len()));
    }
    out
}

/// A cause line as drawn under its group: the cause and how many nodes it applies to.
pub fn line_text(cause: &str, nodes: usize) -> String {
    format!("{cause}  ({nodes} node{})", super::plural(nodes))
}

/// The line for the causes a group leaves out, and how to see them.
pub fn more_line(n: usize) -> String {
    format!("(+{n} more; explain --all-filters lists every cause)")
}

/// How many cause lines a big group shows in the table and the inspector, the most
/// shared first (then those [`shown`] keeps as the only ones of their kind).
pub const SHOWN: usize = 3;

/// A group of at most this many nodes shows every cause: one of them can be the only
/// fix (the one node with the label the pod asks for, and a taint it does not
/// tolerate), and there are few.
pub const FEW_NODES: usize = 8;

/// What a cause line is about: its text before the first `": "` (the resource, the
/// nodeSelector entry or affinity term, the spread constraint, the claim, port or
/// volume the node falls short on); a line without one (an untolerated taint, a
/// cordon) is its own subject. Every plugin's lines are written so: what differs from
/// node to node (the numbers, the node's label value, the pods in the way) comes
/// after the colon.
pub fn subject(cause: &str) -> &str {
    cause.split_once(": ").map_or(cause, |(s, _)| s)
}

/// Which of a group's `causes` (`(cause, nodes it applies to)`, most shared first;
/// the group has `nodes` nodes) are drawn, by index: every one in a group of few
/// nodes or with `every` (`--all-filters`); else the first [`SHOWN`], and past them
/// each cause of a single node whose [`subject`] no cause drawn before it has (the
/// only one of its kind, as the one tainted node of a pool can be, is never hidden).
pub fn shown(causes: &[(&str, usize)], nodes: usize, every: bool) -> Vec<usize> {
    if every || nodes <= FEW_NODES {
        return (0..causes.len()).collect();
    }
    let mut drawn: Vec<usize> = (0..causes.len().min(SHOWN)).collect();
    let mut subjects: std::collections::BTreeSet<&str> =
        drawn.iter().map(|&i| subject(causes[i].0)).collect();
    for (i, &(cause, n)) in causes.iter().enumerate().skip(SHOWN) {
        if n == 1 && subjects.insert(subject(cause)) {
            drawn.push(i);
        }
    }
    drawn
}

/// A label selector as kubectl writes one: `app=db, tier in (a, b), !legacy`;
/// `<none>` for a nil selector (matches nothing), `all pods` for an empty one.
fn selector_text(s: &schedscope_engine::model::labels::Selector) -> String {
    use schedscope_engine::model::labels::Op;
    let Some(reqs) = &s.requirements else {
        return "<none>".into();
    };
    if reqs.is_empty() {
        return "all pods".into();
    }
    reqs.iter()
        .map(|r| {
            let k = &r.key;
            match (&r.op, r.values.as_slice()) {
                (Op::In, [v]) => format!("{k}={v}"),
                (Op::NotIn, [v]) => format!("{k}!={v}"),
                (Op::In, vs) => format!("{k} in ({})", vs.join(", ")),
                (Op::NotIn, vs) => format!("{k} notin ({})", vs.join(", ")),
                (Op::Exists, _) => k.clone(),
                (Op::DoesNotExist, _) => format!("!{k}"),
                (Op::Gt, vs) => format!("{k}>{}", vs.join(",")),
                (Op::Lt, vs) => format!("{k}<{}", vs.join(",")),
            }
        })
        // A merged selector can repeat a requirement (a Service's and a ReplicaSet's).
        .fold(Vec::<String>::new(), |mut acc, r| {
            if !acc.contains(&r) {
                acc.push(r);
            }
            acc
        })
        .join(", ")
}

/// `key=value` or `key` (no value), as taints and labels are written by kubectl.
fn key_value(key: &str, value: Option<&str>) -> String {
    match value {
        Some(v) if !v.is_empty() => format!("{key}={v}"),
        _ => key.to_string(),
    }
}

#[cfg(test)]
mod testing {
    use schedscope_engine::model::testing::cluster;
    use schedscope_engine::model::{NodeInfo, Pod};
    use serde_json::Value;

    /// The pod and the one node of a small cluster, ready for `of_node`.
    pub fn on_node(node: Value, others: Vec<Value>, pod: Value) -> (Pod, NodeInfo) {
        let c = cluster(vec![node], others);
        (
            schedscope_engine::model::testing::pod(pod),
            c.nodes()[0].clone(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedscope_engine::engine::trace::{NodeVerdict, Outcome};
    use schedscope_engine::model::testing::{cluster, simple_node, simple_pod};

    fn rejected(node: &str, reason: &str) -> NodeVerdict {
        NodeVerdict {
            node: node.into(),
            feasible: false,
            plugin: Some(plugins::node_resources_fit::NAME.into()),
            code: Code::Unschedulable,
            reasons: vec![reason.into()],
        }
    }

    #[test]
    fn a_cause_is_about_its_text_before_the_first_colon() {
        for (line, want) in [
            ("cpu: needs 3, free 2 of 4", "cpu"),
            (
                "nodeSelector pool=highmem: node has pool=general",
                "nodeSelector pool=highmem",
            ),
            (
                "hostPort 8080/TCP (0.0.0.0): in use by default/web",
                "hostPort 8080/TCP (0.0.0.0)",
            ),
            // A taint is its own subject (its `:Effect` has no space after it).
            (
                "untolerated taint pool=highmem:NoSchedule",
                "untolerated taint pool=highmem:NoSchedule",
            ),
        ] {
            assert_eq!(subject(line), want);
        }
    }

    /// Past the three most shared, a cause of one node is drawn when it is the only
    /// one of its kind (no cause drawn names its subject); one whose subject is drawn,
    /// or of more nodes, is counted in `(+N more)`. A small group or `--all-filters`
    /// draws every cause.
    #[test]
    fn a_big_group_draws_the_most_shared_and_every_one_of_a_kind() {
        let causes = [
            ("nodeSelector pool=highmem: node has pool=general", 6),
            ("nodeSelector pool=highmem: node lacks label pool", 3),
            ("nodeSelector pool=highmem: node has pool=gpu", 2),
            ("nodeSelector zone=a: node has zone=b", 2),
            ("nodeSelector disk=ssd: node has disk=hdd", 1),
            ("nodeSelector disk=ssd: node lacks label disk", 1),
            ("nodeSelector pool=highmem: node has pool=batch", 1),
            ("untolerated taint pool=highmem:NoSchedule", 1),
        ];
        // 17 nodes: 6 + 3 + 2 + 2 + 1 + 1 + 1 + 1.
        assert_eq!(shown(&causes, 17, false), [0, 1, 2, 4, 7]);
        assert_eq!(shown(&causes, 17, true), (0..8).collect::<Vec<_>>());
        assert_eq!(shown(&causes, FEW_NODES, false), (0..8).collect::<Vec<_>>());
        assert_eq!(shown(&causes[..2], 17, false), [0, 1]);
    }

    /// The demo at the size of a real pool: twelve tainted nodes, and the one
    /// `pool=highmem` node's taint is listed though it is past the three most shared.
    #[test]
    fn the_only_node_with_its_taint_is_listed_in_a_big_group() {
        let taints = [
            ("dedicated", "batch", 4),
            ("dedicated", "ml", 3),
            ("dedicated", "infra", 2),
            ("nvidia.com/gpu", "present", 2),
            ("pool", "highmem", 1),
        ];
        let mut nodes = Vec::new();
        for (key, value, n) in taints {
            for i in 0..n {
                let mut node = simple_node(&format!("{value}-{i}"), "4", "8Gi");
                node["spec"] = serde_json::json!({"taints": [
                    {"key": key, "value": value, "effect": "NoSchedule"}]});
                nodes.push(node);
            }
        }
        let c = cluster(nodes, vec![simple_pod("new", "1", "1Gi", None)]);
        let mut t = Trace::empty(
            "default/new".into(),
            0,
            Outcome::Unschedulable {
                nominated_node: None,
            },
        );
        t.filter_plugins = vec![plugins::taint_toleration::NAME.into()];
        t.filter = c
            .nodes()
            .iter()
            .map(|n| NodeVerdict {
                node: n.name().into(),
                feasible: false,
                plugin: Some(plugins::taint_toleration::NAME.into()),
                code: Code::UnschedulableAndUnresolvable,
                reasons: vec!["node(s) had untolerated taint(s)".into()],
            })
            .collect();
        let pod = c.pod("default/new").unwrap();
        let view = TraceView::with_causes(&t, &c, pod, None);
        assert_eq!(
            view.cause_lines(0),
            [
                "untolerated taint dedicated=batch:NoSchedule  (4 nodes)",
                "untolerated taint dedicated=ml:NoSchedule  (3 nodes)",
                "untolerated taint dedicated=infra:NoSchedule  (2 nodes)",
                "untolerated taint pool=highmem:NoSchedule  (1 node)",
                "(+1 more; explain --all-filters lists every cause)",
            ]
        );
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
            for_trace(&t, &c, pod, None).of("n1"),
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
            for_trace(&t, &c, pod, None).of("n2"),
            ["cpu: needs 3, free 4 of 4"]
        );
    }
}
