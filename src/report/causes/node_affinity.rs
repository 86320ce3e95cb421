//! NodeAffinity: the nodeSelector entry or the required affinity expression that the
//! node's labels fail, with the node's actual value.

use crate::engine::plugins::node_affinity::{
    ERR_REASON_POD, FieldOp, Selector, Term, required_node_affinity,
};
use crate::model::labels::{Labels, Op, Requirement};
use crate::model::{NodeInfo, Pod};

pub fn causes(pod: &Pod, node: &NodeInfo, reasons: &[String]) -> Vec<String> {
    // The scheduler-enforced affinity comes from the profile's arguments, not the
    // pod: its reason already says so.
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
        let sel = Selector::parse(ns, "");
        if sel.terms.is_empty() {
            out.push("required node affinity has no term with an expression".into());
        } else if !sel.terms.iter().any(|t| t.matches(node.name(), labels)) {
            // Terms are ORed: each failed; name the first failing expression of each.
            let many = sel.terms.len() > 1;
            for (i, t) in sel.terms.iter().enumerate() {
                let which = if many {
                    format!("required affinity term {}", i + 1)
                } else {
                    "required affinity".to_string()
                };
                out.push(format!("{which}: {}", term_failure(t, node.name(), labels)));
            }
        }
    }
    out
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
            return format!("field {key} {op} [{value}]: node is {node_name}");
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
            let got = causes(&p, &n, &[ERR_REASON_POD.to_string()]);
            assert_eq!(got, want, "{name}");
        }
    }
}
