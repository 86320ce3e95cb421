//! NodeUnschedulable: the node is cordoned and the pod lacks the toleration.

use schedscope_engine::engine::plugins::node_unschedulable::TAINT_NODE_UNSCHEDULABLE;
use schedscope_engine::model::{NodeInfo, Pod};

pub fn causes(_pod: &Pod, node: &NodeInfo) -> Vec<String> {
    if !node.node.unschedulable {
        return Vec::new();
    }
    vec![format!(
        "node cordoned (spec.unschedulable); no toleration for {TAINT_NODE_UNSCHEDULABLE}"
    )]
}

#[cfg(test)]
mod tests {
    use super::super::testing::on_node;
    use super::*;
    use serde_json::json;

    #[test]
    fn cordoned_node() {
        let pod = json!({"metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "i"}]}});
        for (unsched, want) in [(true, 1), (false, 0)] {
            let (p, n) = on_node(
                json!({"metadata": {"name": "n1"}, "spec": {"unschedulable": unsched}}),
                vec![],
                pod.clone(),
            );
            let got = causes(&p, &n);
            assert_eq!(got.len(), want);
            if want == 1 {
                assert!(got[0].contains("cordoned"), "{got:?}");
            }
        }
    }
}
