//! NodeAffinity: the nodeSelector entry or the required affinity expression that the
//! node's labels fail, with the node's actual value; or the term of the profile's
//! `addedAffinity` it fails (the scheduler-enforced affinity).

use schedscope_engine::engine::Framework;
use schedscope_engine::engine::plugins::node_affinity::{
    ERR_REASON_ENFORCED, ERR_REASON_POD, FieldOp, NAME, NodeAffinityArgs, Selector, Term,
    required_node_affinity,
};
use schedscope_engine::model::labels::{Labels, Op, Requirement};
use schedscope_engine::model::{NodeInfo, Pod};

pub fn causes(
    pod: &Pod,
    node: &NodeInfo,
    reasons: &[String],
    profile: Option<&Framework>,
) -> Vec<String> {
    if reasons.iter().any(|r| r == ERR_REASON_ENFORCED) {
        return enforced(node, profile);
    }
    if !reasons.iter().any(|r| r == ERR_REASON_POD) {
        return Vec::new();
    }
    let labels = &node.node.labels;
    let mut out = Vec::new();
    if let Some(sel) = pod.node_selector.as_ref() {
        for (k, v) in sel {
            if labels.get(k).is_none_or(|x| x != v) {
                out.push(format!("nodeSelector {k}={v}: {}", actual(labels, k)));
            }
        }
    }
    if let Some(ns) = required_node_affinity(pod) {
        out.extend(selector_failures(
            &Selector::parse(ns, ""),
            "required affinity",
            node,
        ));
    }
    out
}

/// Why PreFilter left a node out: a plugin's PreFilter result names the only nodes
/// worth filtering (NodeAffinity's, from a `matchFields` field selector on
/// `metadata.name`, as a DaemonSet pod has), and this node is not among them; a named
/// node missing from the snapshot is said.
pub fn prefilter_causes(
    subsets: &[(String, Vec<String>)],
    node: &str,
    known: impl Fn(&str) -> bool,
) -> Vec<String> {
    subsets
        .iter()
        .filter(|(_, nodes)| !nodes.iter().any(|n| n == node))
        .map(|(plugin, nodes)| {
            let what = if plugin == NAME {
                format!(
                    "field selector metadata.name In [{}] (matchFields, as a DaemonSet pod has)",
                    nodes.join(", ")
                )
            } else {
                format!("{plugin} PreFilter keeps only [{}]", nodes.join(", "))
            };
            let missing: Vec<&str> = nodes
                .iter()
                .map(String::as_str)
                .filter(|n| !known(n))
                .collect();
            // One line for every node left out, so they group.
            if missing.is_empty() {
                format!("{what}: not this node")
            } else {
                format!(
                    "{what}: not this node; {} not in the snapshot",
                    missing.join(", ")
                )
            }
        })
        .collect()
}

/// The profile's `addedAffinity` (NodeAffinity's arguments): the scheduler enforces
/// it on every pod of the profile before the pod's own selector.
fn enforced(node: &NodeInfo, profile: Option<&Framework>) -> Vec<String> {
    let Some(fw) = profile else {
        return Vec::new();
    };
    let required = fw
        .plugin_args
        .get(NAME)
        .and_then(|v| serde_json::from_value::<NodeAffinityArgs>(v.clone()).ok())
        .and_then(|a| a.added_affinity)
        .and_then(|a| a.required_during_scheduling_ignored_during_execution);
    let Some(ns) = required else {
        return Vec::new();
    };
    let which = format!(
        "profile {} addedAffinity (NodeAffinity args)",
        fw.profile_name
    );
    selector_failures(&Selector::parse(&ns, ""), &which, node)
}

/// Each term of a required node selector that the node fails (terms are ORed, so
/// all of them when it fails): the first failing expression of each.
fn selector_failures(sel: &Selector, which: &str, node: &NodeInfo) -> Vec<String> {
    let labels = &node.node.labels;
    if sel.terms.is_empty() {
        return vec![format!("{which} has no term with an expression")];
    }
    if sel.terms.iter().any(|t| t.matches(node.name(), labels)) {
        return Vec::new();
    }
    let many = sel.terms.len() > 1;
    sel.terms
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let which = if many {
                format!("{which} term {}", i + 1)
            } else {
                which.to_string()
            };
            format!("{which}: {}", term_failure(t, node.name(), labels))
        })
        .collect()
}

fn term_failure(t: &Term, node_name: &str, labels: &Labels) -> String {
    if let Some(e) = t.errors.first() {
        return format!("invalid ({e})");
    }
    if let Some(r) = t.labels.iter().find(|r| !r.matches(labels)) {
        return format!("{}: {}", requirement(r), actual(labels, &r.key));
    }
    for (key, op, value) in &t.fields {
        let op = match op {
            FieldOp::Equal => "In",
            FieldOp::NotEqual => "NotIn",
        };
        // Only metadata.name is a node field the scheduler reads.
        if !t.matches(node_name, labels) {
            return format!("field selector {key} {op} [{value}]: node is {node_name}");
        }
    }
    "does not match".into()
}

fn requirement(r: &Requirement) -> String {
    let op = match r.op {
        Op::In => "In",
        Op::NotIn => "NotIn",
        Op::Exists => "Exists",
        Op::DoesNotExist => "DoesNotExist",
        Op::Gt => "Gt",
        Op::Lt => "Lt",
    };
    if r.values.is_empty() {
        format!("{} {op}", r.key)
    } else {
        format!("{} {op} [{}]", r.key, r.values.join(", "))
    }
}

fn actual(labels: &Labels, key: &str) -> String {
    match labels.get(key) {
        Some(v) => format!("node has {key}={v}"),
        None => format!("node lacks label {key}"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::on_node;
    use super::*;
    use serde_json::{Value, json};

    fn node(labels: Value) -> Value {
        json!({"metadata": {"name": "n1", "labels": labels}})
    }
    fn pod(spec: Value) -> Value {
        let mut p = json!({"metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i"}]}});
        for (k, v) in spec.as_object().unwrap() {
            p["spec"][k] = v.clone();
        }
        p
    }
    fn affinity(terms: Value) -> Value {
        json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
            {"nodeSelectorTerms": terms}}}})
    }

    #[test]
    fn names_the_failing_selector_entry_or_expression() {
        let cases: Vec<(&str, Value, Value, Vec<&str>)> = vec![
            (
                "selector, wrong value",
                json!({"disk": "hdd"}),
                json!({"nodeSelector": {"disk": "ssd"}}),
                vec!["nodeSelector disk=ssd: node has disk=hdd"],
            ),
            (
                "selector, missing label",
                json!({}),
                json!({"nodeSelector": {"disk": "ssd"}}),
                vec!["nodeSelector disk=ssd: node lacks label disk"],
            ),
            (
                "one term",
                json!({"zone": "b"}),
                affinity(json!([{"matchExpressions": [
                    {"key": "zone", "operator": "In", "values": ["a", "c"]}]}])),
                vec!["required affinity: zone In [a, c]: node has zone=b"],
            ),
            (
                "two terms, each failing",
                json!({"zone": "b"}),
                affinity(json!([
                    {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]},
                    {"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["b"]}]}])),
                vec![
                    "required affinity term 1: gpu Exists: node lacks label gpu",
                    "required affinity term 2: zone NotIn [b]: node has zone=b",
                ],
            ),
            (
                "matching node: nothing",
                json!({"disk": "ssd"}),
                json!({"nodeSelector": {"disk": "ssd"}}),
                vec![],
            ),
        ];
        for (name, labels, spec, want) in cases {
            let (p, n) = on_node(node(labels), vec![], pod(spec));
            let got = causes(&p, &n, &[ERR_REASON_POD.to_string()], None);
            assert_eq!(got, want, "{name}");
        }
    }

    /// The scheduler-enforced affinity is the profile's `addedAffinity`: its failing
    /// term is named as the profile's, whatever the pod asks.
    #[test]
    fn names_the_profiles_added_affinity() {
        let fw = Framework {
            profile_name: "batch".into(),
            plugin_args: [(
                NAME.to_string(),
                json!({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                    {"nodeSelectorTerms": [{"matchExpressions": [
                        {"key": "pool", "operator": "In", "values": ["batch"]}]}]}}}),
            )]
            .into(),
            ..Default::default()
        };
        let enforced = [ERR_REASON_ENFORCED.to_string()];
        let cases: Vec<(&str, Value, Option<&Framework>, Vec<&str>)> = vec![
            (
                "wrong pool",
                json!({"pool": "web"}),
                Some(&fw),
                vec![
                    "profile batch addedAffinity (NodeAffinity args): pool In [batch]: node has pool=web",
                ],
            ),
            (
                "no pool label",
                json!({}),
                Some(&fw),
                vec![
                    "profile batch addedAffinity (NodeAffinity args): pool In [batch]: node lacks label pool",
                ],
            ),
            ("without the profile: unknown", json!({}), None, vec![]),
        ];
        for (name, labels, profile, want) in cases {
            let (p, n) = on_node(node(labels), vec![], pod(json!({})));
            assert_eq!(causes(&p, &n, &enforced, profile), want, "{name}");
        }
    }
}
