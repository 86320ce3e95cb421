//! NodeName (Filter): a pod naming a node in `spec.nodeName` fits only that node.

use std::sync::Arc;

use crate::engine::framework::{Ctx, CycleState, FilterPlugin, Plugin};
use crate::engine::status::Status;
use crate::model::{NodeInfo, Pod};

pub const NAME: &str = "NodeName";
pub const ERR_REASON: &str = "node(s) didn't match the requested node name";

pub struct NodeName;

pub fn new(
    _args: &serde_json::Value,
    _fts: &crate::version::Features,
) -> Result<Arc<dyn Plugin>, String> {
    Ok(Arc::new(NodeName))
}

impl Plugin for NodeName {
    fn name(&self) -> &str {
        NAME
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
}

impl FilterPlugin for NodeName {
    fn filter(&self, _cx: &Ctx, _state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        match pod.node_name.as_deref() {
            Some(n) if !n.is_empty() && n != node.name() => Status::unresolvable(ERR_REASON),
            _ => Status::success(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::status::Code;
    use crate::model::testing::{cluster, pod, simple_node};
    use k8s_openapi::jiff::Timestamp;
    use serde_json::json;

    #[test]
    fn only_the_named_node_fits() {
        let c = cluster(
            vec![simple_node("a", "1", "1Gi"), simple_node("b", "1", "1Gi")],
            vec![],
        );
        let cx = Ctx {
            cluster: &c,
            now: Timestamp::UNIX_EPOCH,
        };
        let p = |node: Option<&str>| {
            let mut v = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}});
            if let Some(n) = node {
                v["spec"]["nodeName"] = json!(n);
            }
            pod(v)
        };
        let cases = [
            (None, "a", Code::Success),
            (Some(""), "a", Code::Success),
            (Some("a"), "a", Code::Success),
            (Some("a"), "b", Code::UnschedulableAndUnresolvable),
        ];
        for (want_node, node, code) in cases {
            let st = NodeName.filter(
                &cx,
                &CycleState::default(),
                &p(want_node),
                c.node(node).unwrap(),
            );
            assert_eq!(st.code, code, "{want_node:?} on {node}");
            if code != Code::Success {
                assert_eq!(st.message(), ERR_REASON);
            }
        }
    }
}
