//! NodeResourcesFit: for each resource the plugin named, what the pod requests, what
//! is free (allocatable minus what the node's pods request) and the allocatable.

use crate::format::amount;
use schedscope_engine::model::{NodeInfo, Pod};

pub fn causes(pod: &Pod, node: &NodeInfo, reasons: &[String]) -> Vec<String> {
    let alloc = &node.node.allocatable;
    let used = &node.requested;
    // The plugin's reasons already say which resources fell short (after its ignored
    // resources and groups); only the numbers are added.
    reasons
        .iter()
        .filter_map(|r| {
            if r == "Too many pods" {
                return Some(format!(
                    "pods: {} already on the node, {} allowed",
                    node.pods.len(),
                    alloc.allowed_pod_number
                ));
            }
            let name = r.strip_prefix("Insufficient ")?;
            let (want, have) = (pod.requests.get(name), alloc.get(name));
            let free = have.wrapping_sub(used.get(name));
            Some(format!(
                "{name}: needs {}, free {} of {}",
                amount(name, want),
                amount(name, free),
                amount(name, have)
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::testing::on_node;
    use super::*;
    use schedscope_engine::model::testing::{simple_node, simple_pod};

    #[test]
    fn the_numbers_of_each_short_resource() {
        let cases: Vec<(&str, Vec<&str>, Vec<&str>)> = vec![
            (
                "cpu",
                vec!["Insufficient cpu"],
                vec!["cpu: needs 3, free 2750m of 4"],
            ),
            (
                "cpu and memory",
                vec!["Insufficient cpu", "Insufficient memory"],
                vec![
                    "cpu: needs 3, free 2750m of 4",
                    "memory: needs 7Gi, free 6Gi of 8Gi",
                ],
            ),
            (
                "pods",
                vec!["Too many pods"],
                vec!["pods: 1 already on the node, 110 allowed"],
            ),
            ("other reasons ignored", vec!["something else"], vec![]),
        ];
        for (name, reasons, want) in cases {
            let (p, n) = on_node(
                simple_node("n1", "4", "8Gi"),
                vec![simple_pod("old", "1250m", "2Gi", Some("n1"))],
                simple_pod("new", "3", "7Gi", None),
            );
            let reasons: Vec<String> = reasons.into_iter().map(String::from).collect();
            assert_eq!(causes(&p, &n, &reasons), want, "{name}");
        }
    }
}
