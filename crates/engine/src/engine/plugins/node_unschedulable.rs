//! NodeUnschedulable (Filter): cordoned nodes (`spec.unschedulable`) reject pods that
//! do not tolerate `node.kubernetes.io/unschedulable:NoSchedule`.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Taint;

use super::taint_toleration::{EFFECT_NO_SCHEDULE, tolerations_tolerate_taint};
use crate::engine::framework::{Ctx, CycleState, FilterPlugin, Plugin};
use crate::engine::status::Status;
use crate::model::{NodeInfo, Pod};

pub const NAME: &str = "NodeUnschedulable";
pub const ERR_REASON_UNSCHEDULABLE: &str = "node(s) were unschedulable";
pub const TAINT_NODE_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

pub struct NodeUnschedulable {
    taint: Taint,
}

pub fn new(
    _args: &serde_json::Value,
    _fts: &crate::version::Features,
) -> Result<Arc<dyn Plugin>, String> {
    Ok(Arc::new(NodeUnschedulable {
        taint: Taint {
            key: TAINT_NODE_UNSCHEDULABLE.into(),
            effect: EFFECT_NO_SCHEDULE.into(),
            ..Default::default()
        },
    }))
}

impl Plugin for NodeUnschedulable {
    fn name(&self) -> &str {
        NAME
    }
    fn as_filter(&self) -> Option<&dyn FilterPlugin> {
        Some(self)
    }
}

impl FilterPlugin for NodeUnschedulable {
    fn filter(&self, _cx: &Ctx, _state: &CycleState, pod: &Pod, node: &NodeInfo) -> Status {
        if !node.node.unschedulable || tolerations_tolerate_taint(&pod.tolerations, &self.taint) {
            return Status::success();
        }
        Status::unresolvable(ERR_REASON_UNSCHEDULABLE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::status::Code;
    use crate::model::testing::{cluster, pod};
    use k8s_openapi::jiff::Timestamp;
    use serde_json::json;

    #[test]
    fn cordoned_nodes_reject_unless_tolerated() {
        let node = |name: &str, unsched: bool| {
            json!({"metadata": {"name": name}, "spec": {"unschedulable": unsched},
                   "status": {"allocatable": {"cpu": "1", "pods": "10"}}})
        };
        let c = cluster(vec![node("cordoned", true), node("open", false)], vec![]);
        let cx = Ctx {
            cluster: &c,
            now: Timestamp::UNIX_EPOCH,
        };
        let pl = new(&serde_json::Value::Null, &Default::default()).unwrap();
        let f = pl.as_filter().unwrap();
        let p = |tols: serde_json::Value| {
            pod(json!({"metadata": {"name": "p"},
                       "spec": {"containers": [{"name": "c"}], "tolerations": tols}}))
        };
        let cases = [
            ("cordoned", json!([]), Code::UnschedulableAndUnresolvable),
            ("open", json!([]), Code::Success),
            // h03
            (
                "cordoned",
                json!([{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                        "effect": "NoSchedule"}]),
                Code::Success,
            ),
            ("cordoned", json!([{"operator": "Exists"}]), Code::Success),
            (
                "cordoned",
                json!([{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                        "effect": "NoExecute"}]),
                Code::UnschedulableAndUnresolvable,
            ),
        ];
        for (node_name, tols, code) in cases {
            let st = f.filter(
                &cx,
                &CycleState::default(),
                &p(tols.clone()),
                c.node(node_name).unwrap(),
            );
            assert_eq!(st.code, code, "{node_name} {tols}");
            if code != Code::Success {
                assert_eq!(st.message(), ERR_REASON_UNSCHEDULABLE);
            }
        }
    }
}
